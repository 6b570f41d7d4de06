/* query_agg.c -- OpenTSDB 2.4's aggregators (docs/query.md section 6): the registry
 * that /api/aggregators lists and the function each one applies to a set of
 * values, used inside downsampling buckets and across the series of a group.
 *
 * Every aggregator has two paths, as OpenTSDB's runLong/runDouble:
 *   - all inputs integers: an exact integer path. The result stays an integer
 *     when the true result is one (sum, min, max, diff, mult, count, median,
 *     first, last, and avg/dev/percentiles when they come out integral);
 *     otherwise it is the double nearest to the exact value. OpenTSDB
 *     truncates here (integer `avg` by integer division, `dev` and the
 *     percentiles cast to long) -- a deviation on purpose. An int64 overflow
 *     in sum/squareSum/mult/diff falls back to the double path instead of
 *     wrapping around as Java does.
 *   - any double: NaN (and fill-policy nulls) are skipped by every function;
 *     all-NaN gives NaN (count gives 0). OpenTSDB's mult/diff/first/last let
 *     a NaN through; we skip it like the others (deviation, consistency).
 *     The ep*r3/ep*r7 percentiles use their estimator on both paths (OpenTSDB's
 *     double path silently falls back to the default estimator: a bug).
 *
 * Percentile estimators (Apache Commons Math 3, facts only): with q = p/100
 * and n sorted values x[0..n-1], a position `pos` is computed:
 *   default ("legacy"): q == 0 -> 0, q == 1 -> n, else q(n+1)
 *   q <= 0.5/n -> 0, else rint(nq) (round half even)
 *   q == 0 -> 0, q == 1 -> n, else 1 + (n-1)q
 * then pos < 1 -> x[0], pos >= n -> x[n-1], else
 *   x[floor(pos)-1] + (pos - floor(pos)) * (x[floor(pos)] - x[floor(pos)-1]).
 *
 * Median is the upper median (element n/2 of the sorted values); dev is the
 * population standard deviation (divide by n; one value -> 0). Sorting uses a
 * scratch buffer the caller provides (query__agg_apply) so bulk callers do
 * not allocate per bucket. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "query/query_agg_int.h"

typedef enum { EST_LEGACY, EST_R3, EST_R7 } agg_est_t;

struct query_agg {
    const char *name;
    query_agg_kind_t fn;
    query_interp_t interp;
    double pct;    /* QUERY_AGG_PERCENTILE: the percentile, 0 < pct <= 100 */
    agg_est_t est; /* QUERY_AGG_PERCENTILE: the estimator */
};

#define AGG(n, f, i)                                                                               \
    {                                                                                              \
        n, f, QUERY_INTERP_##i, 0, EST_LEGACY                                                      \
    }
#define PCT(n, p, e)                                                                               \
    {                                                                                              \
        n, QUERY_AGG_PERCENTILE, QUERY_INTERP_LERP, p, e                                           \
    }

/* Sorted by name: the order /api/aggregators lists them in. */
static const struct query_agg aggs[] = {
    AGG("avg", QUERY_AGG_AVG, LERP),
    AGG("count", QUERY_AGG_COUNT, ZIM),
    AGG("dev", QUERY_AGG_DEV, LERP),
    AGG("diff", QUERY_AGG_DIFF, LERP),
    PCT("ep50r3", 50.0, EST_R3),
    PCT("ep50r7", 50.0, EST_R7),
    PCT("ep75r3", 75.0, EST_R3),
    PCT("ep75r7", 75.0, EST_R7),
    PCT("ep90r3", 90.0, EST_R3),
    PCT("ep90r7", 90.0, EST_R7),
    PCT("ep95r3", 95.0, EST_R3),
    PCT("ep95r7", 95.0, EST_R7),
    PCT("ep999r3", 99.9, EST_R3),
    PCT("ep999r7", 99.9, EST_R7),
    PCT("ep99r3", 99.0, EST_R3),
    PCT("ep99r7", 99.0, EST_R7),
    AGG("first", QUERY_AGG_FIRST, ZIM),
    AGG("last", QUERY_AGG_LAST, ZIM),
    AGG("max", QUERY_AGG_MAX, LERP),
    AGG("median", QUERY_AGG_MEDIAN, LERP),
    AGG("mimmax", QUERY_AGG_MAX, MIN),
    AGG("mimmin", QUERY_AGG_MIN, MAX),
    AGG("min", QUERY_AGG_MIN, LERP),
    AGG("mult", QUERY_AGG_MULT, LERP),
    AGG("none", QUERY_AGG_NONE, ZIM),
    PCT("p50", 50.0, EST_LEGACY),
    PCT("p75", 75.0, EST_LEGACY),
    PCT("p90", 90.0, EST_LEGACY),
    PCT("p95", 95.0, EST_LEGACY),
    PCT("p99", 99.0, EST_LEGACY),
    PCT("p999", 99.9, EST_LEGACY),
    AGG("pfsum", QUERY_AGG_SUM, PREV),
    AGG("squareSum", QUERY_AGG_SQUARESUM, ZIM),
    AGG("sum", QUERY_AGG_SUM, LERP),
    AGG("zimsum", QUERY_AGG_SUM, ZIM),
};

#define N_AGGS (sizeof aggs / sizeof aggs[0])

static const char *const agg_names[N_AGGS + 1] = {
    "avg",    "count",  "dev",    "diff",    "ep50r3",  "ep50r7",    "ep75r3", "ep75r7", "ep90r3",
    "ep90r7", "ep95r3", "ep95r7", "ep999r3", "ep999r7", "ep99r3",    "ep99r7", "first",  "last",
    "max",    "median", "mimmax", "mimmin",  "min",     "mult",      "none",   "p50",    "p75",
    "p90",    "p95",    "p99",    "p999",    "pfsum",   "squareSum", "sum",    "zimsum", NULL,
};

_Static_assert(sizeof agg_names / sizeof agg_names[0] == N_AGGS + 1, "names match table");

const query_agg_t *query_agg_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < N_AGGS; i++)
        if (strcmp(aggs[i].name, name) == 0) return &aggs[i];
    return NULL;
}

const char *query_agg_name(const query_agg_t *a)
{
    return a->name;
}

query_agg_kind_t query_agg_kind(const query_agg_t *a)
{
    return a->fn;
}

query_interp_t query_agg_interp(const query_agg_t *a)
{
    return a->interp;
}

const char *const *query_agg_names(void)
{
    return agg_names;
}

int query__agg_is_none(const query_agg_t *a)
{
    return a->fn == QUERY_AGG_NONE;
}

int query__agg_needs_scratch(const query_agg_t *a)
{
    return a->fn == QUERY_AGG_MEDIAN || a->fn == QUERY_AGG_PERCENTILE;
}

/* ---- helpers --------------------------------------------------------------- */

static inline double dp_double(const query_dp_t *p)
{
    if (p->is_null) return NAN;
    return p->is_int ? (double)p->v.i : p->v.f;
}

static inline void set_int(query_dp_t *out, int64_t v)
{
    out->v.i = v;
    out->is_int = 1;
    out->is_null = 0;
}

static inline void set_dbl(query_dp_t *out, double v)
{
    out->v.f = v;
    out->is_int = 0;
    out->is_null = 0;
}

/* A double that came out of integer inputs: an integer if it is integral and
 * in range, so all-integer inputs give integer results whenever exact. */
static void set_from_exact(query_dp_t *out, double v)
{
    if (v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
        set_int(out, (int64_t)v);
    else
        set_dbl(out, v);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The estimator's position (1-based, fractional) for n sorted values. */
static double pct_pos(const struct query_agg *a, size_t n)
{
    double q = a->pct / 100.0, len = (double)n;
    switch (a->est) {
    case EST_R3:
        return q <= 0.5 / len ? 0.0 : rint(len * q);
    case EST_R7:
        return q == 0.0 ? 0.0 : q == 1.0 ? len : 1.0 + (len - 1.0) * q;
    case EST_LEGACY:
    default:
        return q == 0.0 ? 0.0 : q == 1.0 ? len : q * (len + 1.0);
    }
}

/* Splits pos into the lower index and the fraction towards the next one;
 * *frac == 0 means x[*lo] exactly. */
static void pct_split(double pos, size_t n, size_t *lo, double *frac)
{
    if (pos < 1.0) {
        *lo = 0;
        *frac = 0.0;
    } else if (pos >= (double)n) {
        *lo = n - 1;
        *frac = 0.0;
    } else {
        double f = floor(pos);
        *lo = (size_t)f - 1;
        *frac = pos - f;
    }
}

/* Integer square root of a non-negative 128-bit value. */
static __int128 isqrt128(__int128 v)
{
    __int128 s = (__int128)sqrtl((long double)v);
    while (s > 0 && s * s > v)
        s--;
    while ((s + 1) * (s + 1) <= v)
        s++;
    return s;
}

/* ---- the integer path --------------------------------------------------- */

/* Returns 1 (set), or 0 when the exact integer computation overflowed and the
 * double path must answer instead. n >= 1, every value an integer. */
static int apply_int(const struct query_agg *a, const query_dp_t *v, size_t n, query_dp_t *out,
                     void *scratch)
{
    switch (a->fn) {
    case QUERY_AGG_SUM: {
        int64_t s = 0;
        for (size_t i = 0; i < n; i++)
            if (__builtin_add_overflow(s, v[i].v.i, &s)) return 0;
        set_int(out, s);
        return 1;
    }
    case QUERY_AGG_SQUARESUM: {
        int64_t s = 0, sq;
        for (size_t i = 0; i < n; i++) {
            if (__builtin_mul_overflow(v[i].v.i, v[i].v.i, &sq)) return 0;
            if (__builtin_add_overflow(s, sq, &s)) return 0;
        }
        set_int(out, s);
        return 1;
    }
    case QUERY_AGG_MULT: {
        int64_t p = v[0].v.i;
        for (size_t i = 1; i < n; i++)
            if (__builtin_mul_overflow(p, v[i].v.i, &p)) return 0;
        set_int(out, p);
        return 1;
    }
    case QUERY_AGG_MIN: {
        int64_t m = v[0].v.i;
        for (size_t i = 1; i < n; i++)
            if (v[i].v.i < m) m = v[i].v.i;
        set_int(out, m);
        return 1;
    }
    case QUERY_AGG_MAX: {
        int64_t m = v[0].v.i;
        for (size_t i = 1; i < n; i++)
            if (v[i].v.i > m) m = v[i].v.i;
        set_int(out, m);
        return 1;
    }
    case QUERY_AGG_AVG: {
        __int128 s = 0;
        for (size_t i = 0; i < n; i++)
            s += v[i].v.i;
        if (s % (__int128)n == 0)
            set_int(out, (int64_t)(s / (__int128)n));
        else
            set_dbl(out, (double)s / (double)n);
        return 1;
    }
    case QUERY_AGG_DEV: {
        if (n == 1) {
            set_int(out, 0);
            return 1;
        }
        /* Exact: n^2 var = n*S2 - S1^2, in 128 bits while it cannot overflow. */
        int exact = n < ((size_t)1 << 20);
        __int128 s1 = 0, s2 = 0;
        for (size_t i = 0; exact && i < n; i++) {
            int64_t x = v[i].v.i;
            if (x >= ((int64_t)1 << 40) || x <= -((int64_t)1 << 40)) {
                exact = 0;
                break;
            }
            s1 += x;
            s2 += (__int128)x * x;
        }
        if (!exact) return 0;
        __int128 num = (__int128)n * s2 - s1 * s1;
        __int128 r = isqrt128(num);
        if (r * r == num && r % (__int128)n == 0)
            set_int(out, (int64_t)(r / (__int128)n));
        else
            set_dbl(out, sqrt((double)num) / (double)n);
        return 1;
    }
    case QUERY_AGG_DIFF: {
        int64_t d;
        if (__builtin_sub_overflow(v[n - 1].v.i, v[0].v.i, &d)) return 0;
        set_int(out, d);
        return 1;
    }
    case QUERY_AGG_COUNT:
        set_int(out, (int64_t)n);
        return 1;
    case QUERY_AGG_FIRST:
        set_int(out, v[0].v.i);
        return 1;
    case QUERY_AGG_LAST:
        set_int(out, v[n - 1].v.i);
        return 1;
    case QUERY_AGG_MEDIAN:
    case QUERY_AGG_PERCENTILE: {
        int64_t *x = scratch;
        for (size_t i = 0; i < n; i++)
            x[i] = v[i].v.i;
        qsort(x, n, sizeof *x, cmp_i64);
        if (a->fn == QUERY_AGG_MEDIAN) {
            set_int(out, x[n / 2]);
            return 1;
        }
        size_t lo;
        double frac;
        pct_split(pct_pos(a, n), n, &lo, &frac);
        if (frac == 0.0 || x[lo] == x[lo + 1])
            set_int(out, x[lo]);
        else
            set_from_exact(out, (double)x[lo] + frac * ((double)x[lo + 1] - (double)x[lo]));
        return 1;
    }
    case QUERY_AGG_NONE:
    default:
        set_int(out, v[0].v.i);
        return 1;
    }
}

/* ---- the double path ------------------------------------------------------ */

static void apply_double(const struct query_agg *a, const query_dp_t *v, size_t n, query_dp_t *out,
                         void *scratch)
{
    if (a->fn == QUERY_AGG_SUM || a->fn == QUERY_AGG_AVG) {
        /* The hot case (sum over thousands of series at every timestamp) in
         * one pass: the non-NaN values added from 0.0 in order, exactly the
         * sum the general two-pass form below computes. */
        double r = 0.0;
        size_t m = 0;
        int any_null = 0;
        for (size_t i = 0; i < n; i++) {
            any_null |= v[i].is_null;
            double x = dp_double(&v[i]);
            if (!isnan(x)) {
                r += x;
                m++;
            }
        }
        if (m == 0) {
            set_dbl(out, NAN);
            out->is_null = (uint8_t)any_null;
            return;
        }
        if (a->fn == QUERY_AGG_AVG) r /= (double)m;
        set_dbl(out, r);
        return;
    }
    size_t m = 0; /* non-NaN values */
    size_t first = n, last = 0;
    int any_null = 0;
    for (size_t i = 0; i < n; i++) {
        any_null |= v[i].is_null;
        if (isnan(dp_double(&v[i]))) continue;
        if (first == n) first = i;
        last = i;
        m++;
    }
    if (a->fn == QUERY_AGG_COUNT) {
        set_dbl(out, (double)m);
        return;
    }
    if (m == 0) {
        set_dbl(out, NAN);
        out->is_null = (uint8_t)any_null;
        return;
    }
    double r = 0.0;
    switch (a->fn) {
    case QUERY_AGG_SUM:
    case QUERY_AGG_AVG:
        for (size_t i = first; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (!isnan(x)) r += x;
        }
        if (a->fn == QUERY_AGG_AVG) r /= (double)m;
        break;
    case QUERY_AGG_SQUARESUM:
        for (size_t i = first; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (!isnan(x)) r += x * x;
        }
        break;
    case QUERY_AGG_MULT:
        r = 1.0;
        for (size_t i = first; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (!isnan(x)) r *= x;
        }
        break;
    case QUERY_AGG_MIN:
    case QUERY_AGG_MAX:
        r = dp_double(&v[first]);
        for (size_t i = first + 1; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (isnan(x)) continue;
            if (a->fn == QUERY_AGG_MIN ? x < r : x > r) r = x;
        }
        break;
    case QUERY_AGG_DEV: {
        /* Two passes (mean, then squared deviations): steadier than Welford's
         * running update and still O(n). */
        double mean = 0.0, ss = 0.0;
        for (size_t i = first; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (!isnan(x)) mean += x;
        }
        mean /= (double)m;
        for (size_t i = first; i <= last; i++) {
            double x = dp_double(&v[i]);
            if (!isnan(x)) ss += (x - mean) * (x - mean);
        }
        r = m == 1 ? 0.0 : sqrt(ss / (double)m);
        break;
    }
    case QUERY_AGG_DIFF:
        r = m == 1 ? 0.0 : dp_double(&v[last]) - dp_double(&v[first]);
        break;
    case QUERY_AGG_FIRST:
        r = dp_double(&v[first]);
        break;
    case QUERY_AGG_LAST:
        r = dp_double(&v[last]);
        break;
    case QUERY_AGG_MEDIAN:
    case QUERY_AGG_PERCENTILE: {
        double *x = scratch;
        size_t k = 0;
        for (size_t i = first; i <= last; i++) {
            double d = dp_double(&v[i]);
            if (!isnan(d)) x[k++] = d;
        }
        qsort(x, k, sizeof *x, cmp_dbl);
        if (a->fn == QUERY_AGG_MEDIAN) {
            r = x[k / 2];
        } else {
            size_t lo;
            double frac;
            pct_split(pct_pos(a, k), k, &lo, &frac);
            r = frac == 0.0 ? x[lo] : x[lo] + frac * (x[lo + 1] - x[lo]);
        }
        break;
    }
    case QUERY_AGG_COUNT:
    case QUERY_AGG_NONE:
    default:
        r = dp_double(&v[first]);
        break;
    }
    set_dbl(out, r);
}

/* ---- entry points ---------------------------------------------------------- */

int query__agg_apply(const query_agg_t *a, const query_dp_t *vals, size_t n, query_dp_t *out,
                     void *scratch)
{
    if (n == 0) return 0;
    if (a->fn == QUERY_AGG_NONE) {
        /* No aggregation: one value passes unchanged, more is the caller's bug
         * (OpenTSDB: "More than one value in aggregator"). */
        if (n > 1) return OCT_EINVAL;
        *out = vals[0];
        return 1;
    }
    int all_int = 1;
    for (size_t i = 0; i < n && all_int; i++)
        all_int = vals[i].is_int && !vals[i].is_null;
    if (all_int && apply_int(a, vals, n, out, scratch)) return 1;
    apply_double(a, vals, n, out, scratch);
    return 1;
}

int query_agg_apply(const query_agg_t *a, const query_dp_t *vals, size_t n, query_dp_t *out)
{
    if (!query__agg_needs_scratch(a) || n == 0) return query__agg_apply(a, vals, n, out, NULL);
    uint64_t local[256];
    void *scratch = local;
    if (n > sizeof local / sizeof local[0]) {
        scratch = malloc(n * sizeof(uint64_t));
        if (!scratch) return -ENOMEM;
    }
    int rc = query__agg_apply(a, vals, n, out, scratch);
    if (scratch != local) free(scratch);
    return rc;
}
