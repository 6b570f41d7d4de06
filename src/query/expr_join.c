/* expr_join.c -- series sets and the join of expr.h: series of several
 * variables paired by tags, their points paired by timestamp.
 *
 * The join key of a series is its tag pairs (all of them, or only the keys
 * the join names) and, if asked, its aggregated tag keys, serialised so that
 * byte order of the key is the output order: "k\0v\0" per pair in tag-key
 * order, then "\1" and "k\0" per aggregated key. Every input series gets
 * its key; sorting (key, variable) puts each output series' inputs next to
 * each other. Every output series has a row at each distinct timestamp of
 * any input of the expression (so an output's series share their rows),
 * each input paired with it by timestamp (docs/expressions.md section 3:
 * never by position, as 2.4 did). */
#include "query/expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xmalloc.h"

/* ---- sets --------------------------------------------------------------------- */

/* A set's array holds pow2(n) slots (0 for none), so appending one at a
 * time copies it O(log n) times, not n. */
static size_t pow2(size_t n)
{
    size_t c = 1;
    while (c < n)
        c <<= 1;
    return n ? c : 0;
}

expr_series_t *expr_set_add(expr_set_t *set, const char *metric)
{
    if (set->n == pow2(set->n)) set->s = xrealloc(set->s, pow2(set->n + 1) * sizeof *set->s);
    expr_series_t *s = &set->s[set->n++];
    memset(s, 0, sizeof *s);
    s->metric = xstrdup(metric ? metric : "");
    return s;
}

void expr_series_set_tags(expr_series_t *s, size_t n, const char *const *tagk,
                          const char *const *tagv)
{
    for (size_t i = 0; i < s->n_tags; i++) {
        free(s->tagk[i]);
        free(s->tagv[i]);
    }
    free(s->tagk);
    free(s->tagv);
    s->n_tags = n;
    s->tagk = xcalloc(n ? n : 1, sizeof *s->tagk);
    s->tagv = xcalloc(n ? n : 1, sizeof *s->tagv);
    for (size_t i = 0; i < n; i++) { /* insertion sort by key: tag lists are short */
        size_t j = i;
        while (j > 0 && strcmp(s->tagk[j - 1], tagk[i]) > 0) {
            s->tagk[j] = s->tagk[j - 1];
            s->tagv[j] = s->tagv[j - 1];
            j--;
        }
        s->tagk[j] = xstrdup(tagk[i]);
        s->tagv[j] = xstrdup(tagv[i]);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void expr_series_set_agg(expr_series_t *s, size_t n, const char *const *agg)
{
    for (size_t i = 0; i < s->n_agg; i++)
        free(s->agg[i]);
    free(s->agg);
    s->agg = xcalloc(n ? n : 1, sizeof *s->agg);
    s->n_agg = 0;
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < s->n_agg && !dup; j++)
            dup = !strcmp(s->agg[j], agg[i]);
        if (!dup) s->agg[s->n_agg++] = xstrdup(agg[i]);
    }
    qsort(s->agg, s->n_agg, sizeof *s->agg, cmp_str);
}

const char *expr_series_tag(const expr_series_t *s, const char *k)
{
    for (size_t i = 0; i < s->n_tags; i++)
        if (!strcmp(s->tagk[i], k)) return s->tagv[i];
    return NULL;
}

void expr_series_free(expr_series_t *s)
{
    expr_series_set_tags(s, 0, NULL, NULL);
    expr_series_set_agg(s, 0, NULL);
    free(s->tagk);
    free(s->tagv);
    free(s->agg);
    free(s->metric);
    free(s->dps);
    memset(s, 0, sizeof *s);
}

void expr_set_free(expr_set_t *set)
{
    for (size_t i = 0; i < set->n; i++)
        expr_series_free(&set->s[i]);
    free(set->s);
    set->s = NULL;
    set->n = 0;
}

void expr_set_move(expr_set_t *to, expr_set_t *from)
{
    if (!from->n) return;
    to->s = xrealloc(to->s, pow2(to->n + from->n) * sizeof *to->s);
    memcpy(to->s + to->n, from->s, from->n * sizeof *from->s);
    to->n += from->n;
    free(from->s);
    from->s = NULL;
    from->n = 0;
}

/* ---- the join ------------------------------------------------------------------- */

typedef struct {
    char *key;
    size_t len;
    size_t var;
    const expr_series_t *s;
} keyed_t;

static int in_keys(const expr_join_t *j, const char *k)
{
    if (!j->use_keys) return 1;
    for (size_t i = 0; i < j->n_keys; i++)
        if (!strcmp(j->keys[i], k)) return 1;
    return 0;
}

static void make_key(const expr_join_t *j, const expr_series_t *s, oct_strbuf_t *b)
{
    oct_strbuf_reset(b);
    for (size_t i = 0; i < s->n_tags; i++) {
        if (!in_keys(j, s->tagk[i])) continue;
        oct_strbuf_append(b, s->tagk[i], strlen(s->tagk[i]) + 1);
        oct_strbuf_append(b, s->tagv[i], strlen(s->tagv[i]) + 1);
    }
    if (j->include_agg_tags && s->n_agg) {
        oct_strbuf_append(b, "\1", 1);
        for (size_t i = 0; i < s->n_agg; i++)
            oct_strbuf_append(b, s->agg[i], strlen(s->agg[i]) + 1);
    }
}

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_t *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->var < y->var ? -1 : x->var > y->var;
}

static double dp_value(const query_dp_t *d)
{
    if (d->is_null) return NAN;
    return d->is_int ? (double)d->v.i : d->v.f;
}

/* One output series from the inputs in[0..nv) (NULL = the variable has
 * none for this key), a row at each of ts[0..n_ts). */
static void eval_one(const expr_t *e, const expr_series_t *const *in, size_t nv, const double *fill,
                     const expr_join_t *j, const int64_t *ts, size_t n_ts, const char *name,
                     expr_set_t *out)
{
    const expr_series_t *first = NULL;
    for (size_t i = 0; i < nv && !first; i++)
        first = in[i];
    expr_series_t *o = expr_set_add(out, name);
    /* the key's tags: those of the first input the join looks at */
    size_t nt = 0;
    const char **tk = xcalloc(first->n_tags + 1, sizeof *tk),
               **tv = xcalloc(first->n_tags + 1, sizeof *tv);
    for (size_t i = 0; i < first->n_tags; i++)
        if (in_keys(j, first->tagk[i])) {
            tk[nt] = first->tagk[i];
            tv[nt++] = first->tagv[i];
        }
    expr_series_set_tags(o, nt, tk, tv);
    free(tk);
    free(tv);
    size_t na = 0;
    for (size_t i = 0; i < nv; i++)
        na += in[i] ? in[i]->n_agg : 0;
    const char **ag = xcalloc(na + 1, sizeof *ag);
    na = 0;
    for (size_t i = 0; i < nv; i++)
        for (size_t k = 0; in[i] && k < in[i]->n_agg; k++)
            ag[na++] = in[i]->agg[k];
    expr_series_set_agg(o, na, ag);
    free(ag);

    o->dps = xcalloc(n_ts ? n_ts : 1, sizeof *o->dps);
    size_t *pos = xcalloc(nv + 1, sizeof *pos);
    double *vals = xcalloc(nv + 1, sizeof *vals);
    for (size_t r = 0; r < n_ts; r++) {
        for (size_t i = 0; i < nv; i++) {
            vals[i] = fill[i];
            if (!in[i]) continue;
            while (pos[i] < in[i]->n && in[i]->dps[pos[i]].ts_ms < ts[r])
                pos[i]++;
            if (pos[i] < in[i]->n && in[i]->dps[pos[i]].ts_ms == ts[r]) {
                double v = dp_value(&in[i]->dps[pos[i]]);
                if (!isnan(v)) vals[i] = v;
            }
        }
        query_dp_t *d = &o->dps[o->n++];
        d->ts_ms = ts[r];
        d->v.f = expr_eval(e, vals);
    }
    free(pos);
    free(vals);
}

/* Every timestamp of every input in [start_ms, end_ms], sorted, distinct:
 * each series (sorted already) merged into the running union, which stays
 * as short as the distinct timestamps, so this is linear in the points. */
static size_t all_timestamps(const expr_set_t *const *in, size_t nv, int64_t start_ms,
                             int64_t end_ms, int64_t **out)
{
    size_t n = 0, cap = 64;
    int64_t *u = xmalloc(cap * sizeof *u), *tmp = xmalloc(cap * sizeof *tmp);
    for (size_t i = 0; i < nv; i++)
        for (size_t s = 0; s < in[i]->n; s++) {
            const expr_series_t *x = &in[i]->s[s];
            if (n + x->n > cap) {
                while (cap < n + x->n)
                    cap *= 2;
                u = xrealloc(u, cap * sizeof *u);
                tmp = xrealloc(tmp, cap * sizeof *tmp);
            }
            size_t a = 0, b = 0, m = 0;
            while (a < n || b < x->n) {
                int64_t t;
                if (b == x->n || (a < n && u[a] <= x->dps[b].ts_ms)) {
                    t = u[a++];
                } else {
                    t = x->dps[b++].ts_ms;
                    if (t < start_ms || t > end_ms) continue;
                }
                if (!m || tmp[m - 1] != t) tmp[m++] = t;
            }
            int64_t *sw = u;
            u = tmp;
            tmp = sw;
            n = m;
        }
    free(tmp);
    *out = u;
    return n;
}

int expr_join_eval(const expr_t *e, const expr_set_t *const *in, const double *fill,
                   const expr_join_t *j, int64_t start_ms, int64_t end_ms, const char *name,
                   expr_set_t *out, oct_errbuf_t *eb)
{
    size_t nv = expr_n_vars(e), total = 0;
    for (size_t i = 0; i < nv; i++)
        total += in[i]->n;
    keyed_t *ks = xcalloc(total ? total : 1, sizeof *ks);
    oct_strbuf_t b = {0};
    size_t k = 0;
    for (size_t i = 0; i < nv; i++)
        for (size_t s = 0; s < in[i]->n; s++) {
            make_key(j, &in[i]->s[s], &b);
            ks[k].len = b.len;
            ks[k].key = xmalloc(b.len + 1);
            if (b.len) memcpy(ks[k].key, b.ptr, b.len);
            ks[k].var = i;
            ks[k].s = &in[i]->s[s];
            k++;
        }
    oct_strbuf_free(&b);
    qsort(ks, total, sizeof *ks, cmp_keyed);

    int64_t *ts;
    size_t n_ts = all_timestamps(in, nv, start_ms, end_ms, &ts);
    int rc = 0;
    const expr_series_t **row = xcalloc(nv ? nv : 1, sizeof *row);
    for (size_t g = 0; g < total && !rc;) {
        size_t h = g;
        memset(row, 0, nv * sizeof *row);
        size_t present = 0;
        while (h < total && ks[h].len == ks[g].len && !memcmp(ks[h].key, ks[g].key, ks[g].len)) {
            if (row[ks[h].var]) {
                rc = oct_err(eb, OCT_EINVAL,
                             "Variable %s has more than one series for a join key of "
                             "expression [%s]: join on more tags",
                             expr_var(e, ks[h].var), expr_text(e));
                break;
            }
            row[ks[h].var] = ks[h].s;
            present++;
            h++;
        }
        if (!rc && (j->op == EXPR_JOIN_UNION || present == nv))
            eval_one(e, row, nv, fill, j, ts, n_ts, name, out);
        g = h;
    }
    free(row);
    free(ts);
    for (size_t i = 0; i < total; i++)
        free(ks[i].key);
    free(ks);
    return rc;
}
