/* exec_fast.c -- fixed-interval downsampling straight from the read
 * columns. With a fixed interval and an aggregator of kind sum, avg, min,
 * max or count (whatever its name and interpolation: zimsum, pfsum,
 * mimmin, mimmax too), the reader hands over each flushed block decoded
 * into columns (tsdb_reader_scan) and exec__dsb_run buckets it while it is
 * still in the cache, with query_agg.c's arithmetic (same bits); a bucket
 * that goes on into the next block waits in a small carry buffer. The
 * choice is made on the aggregator's kind (query_agg_kind), never its
 * name. */
#include <math.h>
#include <string.h>

#include "common/xmalloc.h"
#include "exec/exec_int.h"

int exec__fast_kind(const query_sub_t *sub)
{
    if (!sub->has_downsample || sub->ds.all || sub->ds.calendar || sub->ds.interval_ms <= 0 ||
        !sub->ds.agg)
        return EXEC_FAST_NO;
    /* by kind, not name: an alias (zimsum, pfsum, mimmin, mimmax) computes
     * its bucket like its kind, whatever its interpolation */
    switch (query_agg_kind(sub->ds.agg)) {
    case QUERY_AGG_SUM:
    case QUERY_AGG_AVG:
    case QUERY_AGG_MIN:
    case QUERY_AGG_MAX:
    case QUERY_AGG_COUNT:
        return (int)query_agg_kind(sub->ds.agg);
    default:
        return EXEC_FAST_NO;
    }
}

static inline double col_double(const uint64_t *v, const uint8_t *isf, int types, size_t i)
{
    double d;
    if (types == 0 || (types == 2 && isf && !isf[i])) return (double)(int64_t)v[i];
    memcpy(&d, &v[i], sizeof d);
    return d;
}

/* One bucket of n >= 1 raw points in columns (tsdb_reader_scan's form), as
 * query__agg_apply followed by the downsampler's conversion to a double
 * computes it: the exact integer path when every point is an integer
 * (falling back to doubles on an int64 overflow, as apply_int does), else
 * the doubles with NaN skipped, in order. */
static void dsf_bucket(int fn, const uint64_t *v, const uint8_t *isf, int types, size_t n,
                       int64_t ts, query_dp_t *out)
{
    double r = 0.0;
    int all_int = types == 0;
    if (types == 2 && isf) { /* types 2 (mixed) always comes with its flags */
        unsigned any = 0;
        for (size_t i = 0; i < n; i++)
            any |= isf[i];
        all_int = !any;
    }
    if (all_int) {
        const int64_t *p = (const int64_t *)(const void *)v;
        int64_t a = p[0];
        switch (fn) {
        case QUERY_AGG_SUM:
        case QUERY_AGG_AVG: {
            int64_t sum = 0;
            size_t i = 0;
            for (; i < n; i++)
                if (__builtin_add_overflow(sum, p[i], &sum)) break;
            if (i < n) {
                if (fn == QUERY_AGG_SUM) goto dbl;
                __int128 s128 = 0;
                for (size_t k = 0; k < n; k++)
                    s128 += p[k];
                r = s128 % (__int128)n == 0 ? (double)(int64_t)(s128 / (__int128)n)
                                            : (double)s128 / (double)n;
            } else if (fn == QUERY_AGG_SUM) {
                r = (double)sum;
            } else {
                /* an exact quotient stays exact: the integer division */
                int64_t q = sum / (int64_t)n;
                r = sum % (int64_t)n == 0 ? (double)q : (double)sum / (double)n;
            }
            break;
        }
        case QUERY_AGG_MIN:
            for (size_t i = 1; i < n; i++)
                if (p[i] < a) a = p[i];
            r = (double)a;
            break;
        case QUERY_AGG_MAX:
            for (size_t i = 1; i < n; i++)
                if (p[i] > a) a = p[i];
            r = (double)a;
            break;
        default:
            r = (double)n;
            break;
        }
        goto done;
    }
dbl:;
    size_t m = 0;
    switch (fn) {
    case QUERY_AGG_SUM:
    case QUERY_AGG_AVG:
        if (types == 1) {
            const double *d = (const double *)(const void *)v;
            for (size_t i = 0; i < n; i++)
                if (!isnan(d[i])) {
                    r += d[i];
                    m++;
                }
        } else {
            for (size_t i = 0; i < n; i++) {
                double x = col_double(v, isf, types, i);
                if (!isnan(x)) {
                    r += x;
                    m++;
                }
            }
        }
        if (m && fn == QUERY_AGG_AVG) r /= (double)m;
        break;
    case QUERY_AGG_MIN:
    case QUERY_AGG_MAX:
        for (size_t i = 0; i < n; i++) {
            double x = col_double(v, isf, types, i);
            if (isnan(x)) continue;
            if (!m++ || (fn == QUERY_AGG_MIN ? x < r : x > r)) r = x;
        }
        break;
    default:
        for (size_t i = 0; i < n; i++)
            m += !isnan(col_double(v, isf, types, i));
        r = (double)m;
        m = 1;
        break;
    }
    if (!m) r = NAN;
done:
    out->ts_ms = ts;
    out->v.f = r;
    out->is_int = 0;
    out->is_null = 0;
}

static query_dp_t *dsb_slot(dsb_t *b)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->res = xrealloc(b->res, b->cap * sizeof *b->res);
    }
    return &b->res[b->n++];
}

static void dsb_fill_to(dsb_t *b, int64_t s)
{
    for (; b->next_fill < s; b->next_fill += b->iv) {
        query_dp_t *o = dsb_slot(b);
        o->ts_ms = b->next_fill;
        o->v.f = b->ds->fill == QUERY_FILL_ZERO ? 0.0 : NAN;
        o->is_int = 0;
        o->is_null = b->ds->fill == QUERY_FILL_NULL;
    }
}

/* The next output slot, for the bucket starting at s: the empty buckets
 * before it first when the fill policy asks for them. */
static query_dp_t *dsb_next(dsb_t *b, int64_t s)
{
    if (b->ds->fill != QUERY_FILL_NONE) {
        dsb_fill_to(b, s);
        b->next_fill = s + b->iv;
    }
    return dsb_slot(b);
}

static void dsb_emit(dsb_t *b, int64_t s, const uint64_t *v, const uint8_t *isf, int types,
                     size_t n)
{
    dsf_bucket(b->fn, v, isf, types, n, s, dsb_next(b, s));
}

/* Doubles only (types 1): the points of d[i..) before e folded as
 * dsf_bucket folds them (NaN skipped, in order: the same bits), in the pass
 * that finds where the bucket ends, so a point is touched once. Returns that
 * end; the value goes to *out. fn is a constant in each caller's copy. */
static inline __attribute__((always_inline)) size_t
fold_dbl(int fn, const int64_t *ts, const double *d, size_t i, size_t n, int64_t e, double *out)
{
    double r = 0.0;
    size_t m = 0;
    for (; i < n && ts[i] < e; i++) {
        double x = d[i];
        if (isnan(x)) continue;
        if (fn == QUERY_AGG_SUM || fn == QUERY_AGG_AVG)
            r += x;
        else if (fn == QUERY_AGG_MIN ? (!m || x < r) : fn == QUERY_AGG_MAX ? (!m || x > r) : 0)
            r = x;
        m++;
    }
    if (fn == QUERY_AGG_COUNT)
        r = (double)m;
    else if (!m)
        r = NAN;
    else if (fn == QUERY_AGG_AVG)
        r /= (double)m;
    *out = r;
    return i;
}

static size_t fold_any(int fn, const int64_t *ts, const double *d, size_t i, size_t n, int64_t e,
                       double *out)
{
    switch (fn) {
    case QUERY_AGG_SUM:
        return fold_dbl(QUERY_AGG_SUM, ts, d, i, n, e, out);
    case QUERY_AGG_AVG:
        return fold_dbl(QUERY_AGG_AVG, ts, d, i, n, e, out);
    case QUERY_AGG_MIN:
        return fold_dbl(QUERY_AGG_MIN, ts, d, i, n, e, out);
    case QUERY_AGG_MAX:
        return fold_dbl(QUERY_AGG_MAX, ts, d, i, n, e, out);
    default:
        return fold_dbl(QUERY_AGG_COUNT, ts, d, i, n, e, out);
    }
}

static void dsb_carry(dsb_t *b, const uint64_t *v, const uint8_t *isf, int types, size_t n)
{
    if (b->nc + n > b->ccap) {
        b->ccap = (b->nc + n) * 2;
        b->cv = xrealloc(b->cv, b->ccap * sizeof *b->cv);
        b->cf = xrealloc(b->cf, b->ccap);
    }
    memcpy(b->cv + b->nc, v, n * sizeof *v);
    if (types == 2 && isf) /* mixed: always with its flags */
        memcpy(b->cf + b->nc, isf, n);
    else
        memset(b->cf + b->nc, types, n);
    b->ctypes = b->nc == 0 ? types : b->ctypes == types ? types : 2;
    b->nc += n;
}

int exec__dsb_run(void *ctx, const int64_t *ts, const uint64_t *v, const uint8_t *isf, int types,
                  size_t n)
{
    dsb_t *b = ctx;
    int64_t iv = b->iv;
    size_t i = 0;
    if (b->nc) {
        int64_t e = b->carry_s + iv;
        while (i < n && ts[i] < e)
            i++;
        dsb_carry(b, v, isf, types, i);
        if (i == n) return 0;
        dsb_emit(b, b->carry_s, b->cv, b->cf, b->ctypes, b->nc);
        b->nc = 0;
    }
    int64_t s = 0, e = 0; /* the last bucket's bounds, once there is one */
    int have = 0;
    while (i < n) {
        /* points are dense: the next bucket is most often the adjacent one,
         * which needs no division */
        if (have && ts[i] >= e && e <= INT64_MAX - iv && ts[i] < e + iv)
            s = e;
        else
            s = floor_div(ts[i], iv) * iv;
        e = s + iv;
        have = 1;
        size_t j = i + 1;
        double r = 0.0;
        if (types == 1)
            j = fold_any(b->fn, ts, (const double *)(const void *)v, i, n, e, &r);
        else
            while (j < n && ts[j] < e)
                j++;
        if (j == n) { /* the bucket may go on in the next block */
            b->carry_s = s;
            dsb_carry(b, v + i, isf ? isf + i : NULL, types, n - i);
            break;
        }
        if (types == 1) {
            query_dp_t *o = dsb_next(b, s);
            *o = (query_dp_t){.ts_ms = s};
            o->v.f = r;
        } else {
            dsb_emit(b, s, v + i, isf ? isf + i : NULL, types, j - i);
        }
        i = j;
    }
    return 0;
}

/* Ends the series: the waiting bucket, then (fill) the buckets up to the
 * one holding hi. */
void exec__dsb_finish(dsb_t *b, int64_t hi)
{
    if (b->nc) {
        dsb_emit(b, b->carry_s, b->cv, b->cf, b->ctypes, b->nc);
        b->nc = 0;
    }
    if (b->ds->fill != QUERY_FILL_NONE) dsb_fill_to(b, floor_div(hi, b->iv) * b->iv + b->iv);
}
