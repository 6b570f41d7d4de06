/* gexp_eval.c -- the gexp functions (gexp.h: gexp_eval), each from its
 * arguments' series sets to a new set (docs/expressions.md section 5).
 *
 * Every function takes its series first. The arithmetic ones join up to
 * 26 series sets with expr.h's union join on tags (variables a..z, a
 * missing series or point counting 0), so points pair by timestamp.
 * timeShift evaluates its argument with a larger shift: the fetch callback
 * reads the earlier window and moves the points forward, so everything
 * above it sees them at the shifted times. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "query/gexp.h"

typedef struct {
    int64_t start_ms, end_ms;
    gexp_fetch_fn fetch;
    void *ctx;
    oct_errbuf_t *eb;
} ev_t;

static int eval_node(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out);

/* A token argument without its single quotes, into buf. */
static const char *unquote(const gexp_node_t *n, char *buf, size_t cap)
{
    size_t len = strlen(n->text);
    const char *s = n->text;
    if (len >= 2 && s[0] == '\'' && s[len - 1] == '\'') {
        s++;
        len -= 2;
    }
    if (len >= cap) len = cap - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

static int want_args(ev_t *v, const gexp_node_t *n, size_t lo, size_t hi)
{
    if (n->n_args < lo || n->n_args > hi) {
        if (lo == hi)
            return oct_err(v->eb, OCT_EINVAL, "%s takes %zu arguments, got %zu", n->text, lo,
                           n->n_args);
        return oct_err(v->eb, OCT_EINVAL, "Must have %zu to %zu series, got %zu instead", lo, hi,
                       n->n_args);
    }
    return 0;
}

static int want_token(ev_t *v, const gexp_node_t *fn, const gexp_node_t *a)
{
    if (a->kind != GEXP_TOKEN)
        return oct_err(v->eb, OCT_EINVAL, "%s: expected a value, got %s", fn->text, a->text);
    return 0;
}

/* A positive integer token. */
static int want_count(ev_t *v, const gexp_node_t *fn, const gexp_node_t *a, size_t *out)
{
    char buf[64], *end;
    if (want_token(v, fn, a)) return OCT_EINVAL;
    const char *s = unquote(a, buf, sizeof buf);
    long long n = strtoll(s, &end, 10);
    if (end == s || *end || n <= 0)
        return oct_err(v->eb, OCT_EINVAL, "%s: %s is not a positive integer", fn->text, a->text);
    *out = (size_t)n;
    return 0;
}

/* sum, difference, multiply, divide: a op b op c ... */
static int arith(ev_t *v, const gexp_node_t *n, char op, int64_t shift_ms, expr_set_t *out)
{
    int rc = want_args(v, n, 2, 26);
    if (rc) return rc;
    expr_set_t *sets = xcalloc(n->n_args, sizeof *sets);
    const expr_set_t **in = xcalloc(n->n_args, sizeof *in);
    double *fill = xcalloc(n->n_args, sizeof *fill); /* a missing series or point is 0 */
    oct_strbuf_t text = {0};
    for (size_t i = 0; i < n->n_args && !rc; i++) {
        rc = eval_node(v, n->args[i], shift_ms, &sets[i]);
        in[i] = &sets[i];
        if (i) oct_strbuf_printf(&text, " %c ", op);
        oct_strbuf_printf(&text, "%c", (char)('a' + i));
    }
    expr_t *e = NULL;
    if (!rc) rc = expr_parse(oct_strbuf_cstr(&text), &e, v->eb);
    if (!rc) {
        const char *name = "";
        for (size_t i = 0; i < n->n_args && !*name; i++)
            if (sets[i].n) name = sets[i].s[0].metric;
        expr_join_t j = {.op = EXPR_JOIN_UNION};
        rc = expr_join_eval(e, in, fill, &j, v->start_ms, v->end_ms, name, out, v->eb);
    }
    expr_free(e);
    oct_strbuf_free(&text);
    for (size_t i = 0; i < n->n_args; i++)
        expr_set_free(&sets[i]);
    free(sets);
    free(in);
    free(fill);
    return rc;
}

static int scale(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    int rc = want_args(v, n, 2, 2);
    if (rc || (rc = want_token(v, n, n->args[1]))) return rc;
    char buf[64];
    const char *f = unquote(n->args[1], buf, sizeof buf);
    char *end;
    double k = strtod(f, &end);
    if (!*f || strspn(f, "-0123456789.") != strlen(f) || *end)
        return oct_err(v->eb, OCT_EINVAL, "Unparseable scale factor value: %s", f);
    if ((rc = eval_node(v, n->args[0], shift_ms, out))) return rc;
    int integral = k == floor(k) && fabs(k) < 9.007199254740992e15;
    for (size_t s = 0; s < out->n; s++)
        for (size_t i = 0; i < out->s[s].n; i++) {
            query_dp_t *d = &out->s[s].dps[i];
            int64_t r;
            if (d->is_int && integral && !__builtin_mul_overflow(d->v.i, (int64_t)k, &r)) {
                d->v.i = r;
            } else {
                double x = d->is_int ? (double)d->v.i : d->v.f;
                d->is_int = 0;
                d->v.f = x * k;
            }
        }
    return 0;
}

static int absolute(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    int rc = want_args(v, n, 1, 1);
    if (rc || (rc = eval_node(v, n->args[0], shift_ms, out))) return rc;
    for (size_t s = 0; s < out->n; s++)
        for (size_t i = 0; i < out->s[s].n; i++) {
            query_dp_t *d = &out->s[s].dps[i];
            if (d->is_int && d->v.i == INT64_MIN) {
                d->is_int = 0;
                d->v.f = -(double)INT64_MIN;
            } else if (d->is_int) {
                d->v.i = d->v.i < 0 ? -d->v.i : d->v.i;
            } else {
                d->v.f = fabs(d->v.f);
            }
        }
    return 0;
}

/* alias(m, template, ...): the template (arguments joined with ','), each
 * "@tagk" replaced by the series' value of the longest tag key there. */
static int alias(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    if (n->n_args < 2)
        return oct_err(v->eb, OCT_EINVAL, "alias takes a series and a name template");
    oct_strbuf_t tpl = {0}, name = {0};
    for (size_t i = 1; i < n->n_args; i++) {
        char buf[1024];
        if (want_token(v, n, n->args[i])) {
            oct_strbuf_free(&tpl);
            return OCT_EINVAL;
        }
        if (i > 1) oct_strbuf_puts(&tpl, ",");
        oct_strbuf_puts(&tpl, unquote(n->args[i], buf, sizeof buf));
    }
    int rc = eval_node(v, n->args[0], shift_ms, out);
    const char *t = oct_strbuf_cstr(&tpl);
    for (size_t s = 0; s < out->n && !rc; s++) {
        expr_series_t *x = &out->s[s];
        oct_strbuf_reset(&name);
        for (const char *p = t; *p;) {
            size_t best = 0, bk = 0;
            if (*p == '@')
                for (size_t k = 0; k < x->n_tags; k++) {
                    size_t l = strlen(x->tagk[k]);
                    if (l > best && !strncmp(p + 1, x->tagk[k], l)) {
                        best = l;
                        bk = k;
                    }
                }
            if (best) {
                oct_strbuf_puts(&name, x->tagv[bk]);
                p += best + 1;
            } else {
                oct_strbuf_append(&name, p++, 1);
            }
        }
        free(x->metric);
        x->metric = xstrdup(oct_strbuf_cstr(&name));
        expr_series_set_tags(x, 0, NULL, NULL);
        expr_series_set_agg(x, 0, NULL);
    }
    oct_strbuf_free(&tpl);
    oct_strbuf_free(&name);
    return rc;
}

static int moving_average(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    int rc = want_args(v, n, 2, 2);
    if (rc || (rc = want_token(v, n, n->args[1]))) return rc;
    size_t count = 0;
    int64_t window = 0;
    const char *w = n->args[1]->text;
    if (strspn(w, "0123456789") == strlen(w)) {
        if ((rc = want_count(v, n, n->args[1], &count))) return rc;
    } else if ((rc = gexp_parse_span(w, &window, v->eb))) {
        return rc;
    }
    if ((rc = eval_node(v, n->args[0], shift_ms, out))) return rc;
    for (size_t s = 0; s < out->n; s++)
        gexp_moving_average(out->s[s].dps, out->s[s].n, count, window);
    return 0;
}

typedef struct {
    double score;
    size_t idx;
} ranked_t;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    /* descending; NaN (no point) last; ties in input order */
    if (isnan(x->score) != isnan(y->score)) return isnan(x->score) ? 1 : -1;
    if (x->score != y->score && !isnan(x->score)) return x->score > y->score ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* highestCurrent (by_max 0: the last non-NaN value) and highestMax. */
static int highest(ev_t *v, const gexp_node_t *n, int by_max, int64_t shift_ms, expr_set_t *out)
{
    size_t keep;
    int rc = want_args(v, n, 2, 2);
    if (rc || (rc = want_count(v, n, n->args[1], &keep))) return rc;
    expr_set_t in = {0};
    if ((rc = eval_node(v, n->args[0], shift_ms, &in))) {
        expr_set_free(&in);
        return rc;
    }
    ranked_t *r = xcalloc(in.n + 1, sizeof *r);
    for (size_t s = 0; s < in.n; s++) {
        r[s].idx = s;
        r[s].score = NAN;
        for (size_t i = 0; i < in.s[s].n; i++) {
            const query_dp_t *d = &in.s[s].dps[i];
            double x = d->is_null ? NAN : d->is_int ? (double)d->v.i : d->v.f;
            if (isnan(x)) continue;
            if (!by_max || isnan(r[s].score) || x > r[s].score) r[s].score = x;
        }
    }
    qsort(r, in.n, sizeof *r, cmp_ranked);
    expr_set_t picked = {0};
    picked.s = xcalloc(in.n + 1, sizeof *picked.s);
    for (size_t i = 0; i < in.n && i < keep; i++) {
        picked.s[picked.n++] = in.s[r[i].idx];
        memset(&in.s[r[i].idx], 0, sizeof in.s[r[i].idx]); /* moved */
    }
    expr_set_move(out, &picked);
    expr_set_free(&picked);
    expr_set_free(&in);
    free(r);
    return 0;
}

static int time_shift(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    int64_t span;
    int rc = want_args(v, n, 2, 2);
    if (rc || (rc = want_token(v, n, n->args[1]))) return rc;
    if ((rc = gexp_parse_span(n->args[1]->text, &span, v->eb))) return rc;
    return eval_node(v, n->args[0], shift_ms + span, out);
}

static int eval_node(ev_t *v, const gexp_node_t *n, int64_t shift_ms, expr_set_t *out)
{
    if (n->kind == GEXP_METRIC) return v->fetch(v->ctx, n->text, shift_ms, out, v->eb);
    if (n->kind == GEXP_TOKEN)
        return oct_err(v->eb, OCT_EINVAL,
                       "Expected a series (a metric query or a function), got %s", n->text);
    const char *f = n->text;
    if (!strcmp(f, "sum") || !strcmp(f, "sumSeries")) return arith(v, n, '+', shift_ms, out);
    if (!strcmp(f, "difference") || !strcmp(f, "diffSeries"))
        return arith(v, n, '-', shift_ms, out);
    if (!strcmp(f, "multiply") || !strcmp(f, "multiplySeries"))
        return arith(v, n, '*', shift_ms, out);
    if (!strcmp(f, "divide") || !strcmp(f, "divideSeries")) return arith(v, n, '/', shift_ms, out);
    if (!strcmp(f, "scale")) return scale(v, n, shift_ms, out);
    if (!strcmp(f, "absolute")) return absolute(v, n, shift_ms, out);
    if (!strcmp(f, "alias")) return alias(v, n, shift_ms, out);
    if (!strcmp(f, "movingAverage")) return moving_average(v, n, shift_ms, out);
    if (!strcmp(f, "highestCurrent")) return highest(v, n, 0, shift_ms, out);
    if (!strcmp(f, "highestMax")) return highest(v, n, 1, shift_ms, out);
    if (!strcmp(f, "timeShift") || !strcmp(f, "shift")) return time_shift(v, n, shift_ms, out);
    return oct_err(v->eb, OCT_EINVAL, "Function %s has not been implemented", f);
}

int gexp_eval(const gexp_node_t *n, int64_t start_ms, int64_t end_ms, gexp_fetch_fn fetch,
              void *ctx, expr_set_t *out, oct_errbuf_t *eb)
{
    ev_t v = {start_ms, end_ms, fetch, ctx, eb};
    if (n->kind != GEXP_CALL) return oct_err(eb, OCT_EINVAL, "Failed to parse %s", n->text);
    return eval_node(&v, n, 0, out);
}
