/* gexp.c -- the gexp grammar (gexp.h): a recursive-descent parser for
 * "func(arg, arg, ...)", time spans, and the moving average.
 *
 * An argument is a call when a name is followed by '('; otherwise it is the
 * text up to the next ',' or ')' outside braces (so a metric's tag group
 * may hold commas and filter expressions), whitespace trimmed: a metric
 * sub-query when it has a ':' outside quotes, a plain token otherwise. */
#include "query/gexp.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"

typedef struct {
    const char *s;
    size_t pos;
} gp_t;

static void skip_ws(gp_t *p)
{
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

void gexp_free(gexp_node_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n_args; i++)
        gexp_free(n->args[i]);
    free(n->args);
    free(n->text);
    free(n);
}

static gexp_node_t *node(gexp_kind_t kind, const char *s, size_t len)
{
    gexp_node_t *n = xcalloc(1, sizeof *n);
    n->kind = kind;
    n->text = xmalloc(len + 1);
    memcpy(n->text, s, len);
    n->text[len] = '\0';
    return n;
}

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static gexp_node_t *parse_call(gp_t *p, int depth);

static gexp_node_t *parse_arg(gp_t *p, int depth)
{
    skip_ws(p);
    size_t b = p->pos, e = b;
    while (is_name_char(p->s[e]))
        e++;
    size_t after = e;
    while (isspace((unsigned char)p->s[after]))
        after++;
    if (e > b && p->s[after] == '(') return parse_call(p, depth + 1);
    /* plain text up to ',' or ')' outside braces and quotes */
    int braces = 0, quote = 0, colon = 0;
    e = b;
    for (char c; (c = p->s[e]); e++) {
        if (quote) {
            if (c == '\'') quote = 0;
            continue;
        }
        if (c == '\'')
            quote = 1;
        else if (c == '{')
            braces++;
        else if (c == '}' && braces)
            braces--;
        else if (!braces && (c == ',' || c == ')'))
            break;
        else if (c == '(' && !braces)
            return NULL;
        else if (c == ':' && !braces)
            colon = 1;
    }
    if (quote || braces) return NULL;
    size_t end = e;
    while (end > b && isspace((unsigned char)p->s[end - 1]))
        end--;
    if (end == b) return NULL;
    p->pos = e;
    return node(colon ? GEXP_METRIC : GEXP_TOKEN, p->s + b, end - b);
}

static gexp_node_t *parse_call(gp_t *p, int depth)
{
    if (depth > 32) return NULL;
    skip_ws(p);
    size_t b = p->pos;
    while (is_name_char(p->s[p->pos]))
        p->pos++;
    if (p->pos == b) return NULL;
    gexp_node_t *n = node(GEXP_CALL, p->s + b, p->pos - b);
    skip_ws(p);
    if (p->s[p->pos++] != '(') goto fail;
    for (;;) {
        gexp_node_t *a = parse_arg(p, depth);
        if (!a) goto fail;
        n->args = xrealloc(n->args, (n->n_args + 1) * sizeof *n->args);
        n->args[n->n_args++] = a;
        skip_ws(p);
        char c = p->s[p->pos++];
        if (c == ')') return n;
        if (c != ',') goto fail;
    }
fail:
    gexp_free(n);
    return NULL;
}

int gexp_parse(const char *s, gexp_node_t **out, oct_errbuf_t *eb)
{
    gp_t p = {s, 0};
    gexp_node_t *n = parse_call(&p, 0);
    if (n) {
        skip_ws(&p);
        if (p.s[p.pos]) {
            gexp_free(n);
            n = NULL;
        }
    }
    *out = n;
    return n ? 0 : oct_err(eb, OCT_EPARSE, "Failed to parse %s", s);
}

int gexp_parse_span(const char *s, int64_t *ms, oct_errbuf_t *eb)
{
    size_t len = strlen(s);
    const char *b = s;
    if (len >= 2 && s[0] == '\'' && s[len - 1] == '\'') {
        b++;
        len -= 2;
    }
    char buf[64];
    if (len >= sizeof buf) return oct_err(eb, OCT_EINVAL, "Invalid time span: %s", s);
    memcpy(buf, b, len);
    buf[len] = '\0';
    char *u;
    long long n = strtoll(buf, &u, 10);
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"s", 1000},         {"sec", 1000},      {"secs", 1000},     {"second", 1000},
                 {"seconds", 1000},   {"m", 60000},       {"min", 60000},     {"mins", 60000},
                 {"minute", 60000},   {"minutes", 60000}, {"h", 3600000},     {"hr", 3600000},
                 {"hrs", 3600000},    {"hour", 3600000},  {"hours", 3600000}, {"d", 86400000},
                 {"day", 86400000},   {"days", 86400000}, {"w", 604800000},   {"week", 604800000},
                 {"weeks", 604800000}};
    if (u == buf || n <= 0) return oct_err(eb, OCT_EINVAL, "Invalid time span: %s", s);
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcmp(u, units[i].name)) {
            *ms = (int64_t)n * units[i].ms;
            return 0;
        }
    return oct_err(eb, OCT_EINVAL, "unknown time unit=%s in %s", u, s);
}

static double dpv(const query_dp_t *d)
{
    if (d->is_null) return NAN;
    return d->is_int ? (double)d->v.i : d->v.f;
}

void gexp_moving_average(query_dp_t *dps, size_t n, size_t count, int64_t window_ms)
{
    double *v = xmalloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = dpv(&dps[i]);
    size_t lo = 0; /* time window: first index inside it */
    for (size_t i = 0; i < n; i++) {
        double sum = 0, avg = 0;
        size_t k = 0;
        if (window_ms == 0) {
            for (size_t j = i + 1; j-- > 0 && k < count;)
                if (!isnan(v[j])) {
                    sum += v[j];
                    k++;
                }
            avg = k == count ? sum / (double)k : 0;
        } else {
            while (dps[lo].ts_ms <= dps[i].ts_ms - window_ms)
                lo++;
            for (size_t j = lo; j <= i; j++)
                if (!isnan(v[j])) {
                    sum += v[j];
                    k++;
                }
            int spans = dps[i].ts_ms - dps[0].ts_ms >= window_ms;
            avg = spans && k ? sum / (double)k : 0;
        }
        dps[i].is_int = 0;
        dps[i].is_null = 0;
        dps[i].v.f = avg;
    }
    free(v);
}
