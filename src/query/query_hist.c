/* query_hist.c -- histogram sub-queries (query.h, docs/histograms.md): their m= part, 2.4's
 * validation, the percentile of a bucketed histogram and the names 2.4 prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "query/query.h"

int query_sub_is_histogram(const query_sub_t *s)
{
    return s->n_percentiles > 0 || s->show_histogram_buckets;
}

int query_hist_parse_m_part(query_sub_t *s, const char *p, size_t n, oct_errbuf_t *eb)
{
    const char *lb = memchr(p, '[', n);
    const char *rb = lb ? memchr(lb, ']', (size_t)(p + n - lb)) : NULL;
    if (!lb || !rb) goto bad;
    free(s->percentiles);
    s->percentiles = NULL;
    s->n_percentiles = 0;
    for (const char *q = lb + 1; q <= rb;) {
        const char *e = q;
        while (e < rb && *e != ',')
            e++;
        char buf[64];
        const char *a = q, *b = e;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        if (b - a == 0 && e == rb && s->n_percentiles == 0 && q == lb + 1) break; /* [] */
        if (b - a == 0 || (size_t)(b - a) >= sizeof buf) goto bad;
        memcpy(buf, a, (size_t)(b - a));
        buf[b - a] = 0;
        char *end;
        double v = strtod(buf, &end);
        if (*end || end == buf) goto bad;
        s->percentiles = xrealloc(s->percentiles, (s->n_percentiles + 1) * sizeof(double));
        s->percentiles[s->n_percentiles++] = v;
        q = e + 1;
    }
    return 0;
bad:
    return oct_err(eb, OCT_EPARSE, "Malformated percentile query paramater: %.*s",
                   (int)(n > 200 ? 200 : n), p);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int query_hist_check(query_sub_t *s, oct_errbuf_t *eb)
{
    if (!query_sub_is_histogram(s)) return 0;
    query_agg_kind_t k = query_agg_kind(s->agg);
    if (!(k == QUERY_AGG_SUM && !strcmp(query_agg_name(s->agg), "sum")) && k != QUERY_AGG_NONE)
        return oct_err(eb, OCT_EPARSE,
                       "Only NONE or SUM aggregation function supported for histogram query");
    if (s->has_downsample && strcmp(query_agg_name(s->ds.agg), "sum"))
        return oct_err(eb, OCT_EPARSE,
                       "Only SUM downsampling aggregation supported for histogram query");
    for (size_t i = 0; i < s->n_percentiles; i++)
        if (!(s->percentiles[i] >= 0 && s->percentiles[i] <= 100)) {
            char buf[32];
            query_java_float((float)s->percentiles[i], buf);
            return oct_err(eb, OCT_EPARSE, "Invalid percentile parameters: %s", buf);
        }
    /* 2.4 accepts these and ignores them; octsdb does not answer what it did not compute */
    if (s->rate) return oct_err(eb, OCT_EPARSE, "Rate is not supported for histogram queries");
    if (s->has_downsample && s->ds.fill != QUERY_FILL_NONE)
        return oct_err(eb, OCT_EPARSE,
                       "Fill policies are not supported for histogram queries (use none)");
    if (s->n_percentiles) qsort(s->percentiles, s->n_percentiles, sizeof(double), cmp_double);
    return 0;
}

double query_hist_percentile(const query_hbucket_t *b, size_t n, double p)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += b[i].n;
    if (total == 0) return NAN;
    /* running * 100 / total is exact where it is a whole number and correctly rounded
     * otherwise, as p is: a cumulative share equal to p (a bucket's upper edge) passes. */
    uint64_t running = 0;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (!b[i].n) continue;
        running += b[i].n;
        last = i;
        if ((double)running * 100.0 / (double)total >= p)
            return ((double)b[i].lo + (double)b[i].hi) / 2;
    }
    return ((double)b[last].lo + (double)b[last].hi) / 2;
}

size_t query_java_float(float f, char *buf)
{
    if (isnan(f)) return (size_t)sprintf(buf, "NaN");
    if (isinf(f)) return (size_t)sprintf(buf, f < 0 ? "-Infinity" : "Infinity");
    size_t k = 0;
    if (signbit(f)) buf[k++] = '-';
    float a = fabsf(f);
    if (a == 0) return k + (size_t)sprintf(buf + k, "0.0");
    /* the fewest significant digits that read back as f */
    char e[32];
    int prec = 1;
    for (; prec < 9; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, (double)a);
        if (strtof(e, NULL) == a) break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, (double)a);
    char dig[16];
    int nd = 0;
    for (const char *c = e; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') dig[nd++] = *c;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    int x = atoi(strchr(e, 'e') + 1); /* a = d.ddd * 10^x */
    if (a >= 1e-3f && a < 1e7f) {
        if (x >= 0) {
            for (int i = 0; i <= x; i++)
                buf[k++] = i < nd ? dig[i] : '0';
            buf[k++] = '.';
            if (nd > x + 1)
                for (int i = x + 1; i < nd; i++)
                    buf[k++] = dig[i];
            else
                buf[k++] = '0';
        } else {
            buf[k++] = '0';
            buf[k++] = '.';
            for (int i = 0; i < -x - 1; i++)
                buf[k++] = '0';
            for (int i = 0; i < nd; i++)
                buf[k++] = dig[i];
        }
        buf[k] = 0;
        return k;
    }
    buf[k++] = dig[0];
    buf[k++] = '.';
    if (nd > 1)
        for (int i = 1; i < nd; i++)
            buf[k++] = dig[i];
    else
        buf[k++] = '0';
    return k + (size_t)sprintf(buf + k, "E%d", x);
}
