/* query_math.c -- the per-series and cross-series arithmetic of a query
 * (docs/query.md sections 4-6): downsampling with fill policies and calendar alignment,
 * rate of change with counter handling, and the aggregation of a group of
 * series with OpenTSDB's interpolation.
 *
 * Downsampling. A bucket is [start, next start); its value is the
 * aggregator applied to the bucket's points (contiguous in the sorted input,
 * so no copy) and is always emitted as a double, as OpenTSDB does -- but it
 * is computed on the exact integer path when the points are integers. Fixed
 * intervals align to epoch multiples (ts - ts mod interval). Calendar
 * intervals follow OpenTSDB's DateTime.previousInterval: the bucket holding
 * ts starts at an anchor in local time (top of second/minute/hour/day/month/
 * year, chosen by whether the count divides the next larger unit) advanced by
 * whole intervals; sub-day steps are absolute durations, day/week steps keep
 * local midnight (so "1dc" in Europe/Berlin has 23 h and 25 h days), weeks
 * start on Sunday, months on the 1st. Without fill the grid is anchored at
 * the series' first point (OpenTSDB's Downsampler), with fill at the query
 * start (FillingDownsampler), and fill covers every bucket from the one
 * holding start_ms to the one holding end_ms (data outside them is dropped).
 * "all" is one bucket stamped start_ms holding the points in [start, end].
 *
 * Rate. (v_i - v_{i-1}) * 1000 / (t_i - t_{i-1}) per second, at t_i, from
 * the exact integer difference when both are integers. Counter mode: a
 * negative difference is a reset: dropped (dropResets), or counterMax - prev
 * + cur, and then, with resetValue > 0, a rate above resetValue becomes 0.
 *
 * Aggregation. A k-way merge over the series walks the union of timestamps
 * once: a binary heap of pending timestamps, each holding the list of series
 * whose next point is there, so the merge costs O(points + distinct
 * timestamps x log series) -- at most O(points x log series), and one heap
 * step per timestamp when the series are aligned -- plus one value per
 * active series per output timestamp for the aggregator, which the
 * semantics require. A series is
 * active from its first to its last point (no extrapolation); in between it
 * contributes its exact point or the interpolated value (LERP exact when
 * both neighbours are integers, ZIM 0, MAX/MIN = no contribution, PREV and
 * rate = the latest value). Every buffer is allocated once per call. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "query/query_agg_int.h"
#include "query/tz.h"

/* ---- small arithmetic ------------------------------------------------------ */

static inline int64_t floor_div64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static inline int64_t floor_mod64(int64_t a, int64_t b)
{
    return a - floor_div64(a, b) * b;
}

static inline double dp_double(const query_dp_t *p)
{
    if (p->is_null) return NAN;
    return p->is_int ? (double)p->v.i : p->v.f;
}

/* ---- calendar buckets ---------------------------------------------------- */

typedef enum { CAL_MS, CAL_DAYS, CAL_MONTHS } cal_kind_t;

/* A grid of calendar buckets; bucket k starts at cal_start(c, k). */
typedef struct {
    const query_tz_t *tz;
    cal_kind_t kind;
    int64_t step; /* ms, days or months per bucket */
    int64_t base; /* bucket 0: UTC ms, civil day number, or month index y*12+m-1 */
} cal_t;

static void local_fields(const query_tz_t *tz, int64_t ts, int *y, int *mo, int *d, int *h, int *mi,
                         int *s, int *wday)
{
    query_tz_utc_to_local(tz, floor_div64(ts, 1000), y, mo, d, h, mi, s, wday);
}

static int64_t local_midnight_ms(const query_tz_t *tz, int64_t y, int m, int d)
{
    return query_tz_local_to_utc(tz, (int)y, m, d, 0, 0, 0) * 1000;
}

static int64_t cal_start(const cal_t *c, int64_t k)
{
    switch (c->kind) {
    case CAL_MS:
        return c->base + k * c->step;
    case CAL_DAYS: {
        int64_t y;
        int m, d;
        query_civil_from_days(c->base + k * c->step, &y, &m, &d);
        return local_midnight_ms(c->tz, y, m, d);
    }
    case CAL_MONTHS:
    default: {
        int64_t mi = c->base + k * c->step;
        int64_t y = floor_div64(mi, 12);
        return local_midnight_ms(c->tz, y, (int)(mi - y * 12) + 1, 1);
    }
    }
}

/* Bucket 0 of the grid is the bucket holding ts (previousInterval). */
static int cal_init(cal_t *c, const query_downsample_t *ds, const query_tz_t *tz, int64_t ts)
{
    int y, mo, d, h, mi, s, wday;
    int64_t n = ds->count, anchor;
    local_fields(tz, ts, &y, &mo, &d, &h, &mi, &s, &wday);
    int64_t ms = floor_mod64(ts, 1000);
    int64_t top_min = ts - ms - (int64_t)s * 1000;
    int64_t top_hour = top_min - (int64_t)mi * 60000;
    c->tz = tz;
    if (n <= 0) return OCT_EINVAL;
    switch (ds->unit) {
    case 'S':
        c->step = n;
        anchor = 1000 % n == 0 ? ts - ms : top_min;
        goto sub_day;
    case 's':
        c->step = n * 1000;
        anchor = 60 % n == 0 ? top_min : top_hour;
        goto sub_day;
    case 'm':
        c->step = n * 60000;
        anchor = 60 % n == 0 ? top_hour : local_midnight_ms(tz, y, mo, d);
        goto sub_day;
    case 'h':
        c->step = n * 3600000;
        anchor = 24 % n == 0 ? local_midnight_ms(tz, y, mo, d) : local_midnight_ms(tz, y, mo, 1);
    sub_day:
        c->kind = CAL_MS;
        c->base = anchor + floor_div64(ts - anchor, c->step) * c->step;
        return 0;
    case 'd': {
        int64_t today = query_days_from_civil(y, mo, d);
        int64_t a = n == 1 ? today : query_days_from_civil(y, 1, 1);
        c->kind = CAL_DAYS;
        c->step = n;
        c->base = a + floor_div64(today - a, n) * n;
        return 0;
    }
    case 'w':
        c->kind = CAL_DAYS;
        c->step = 7 * n;
        c->base = query_days_from_civil(y, mo, d) - wday;
        return 0;
    case 'n': {
        int64_t a = (int64_t)y * 12, m_idx = a + mo - 1;
        c->kind = CAL_MONTHS;
        c->step = n;
        c->base = a + floor_div64(m_idx - a, n) * n;
        return 0;
    }
    case 'y':
        c->kind = CAL_MONTHS;
        c->step = 12 * n;
        c->base = (int64_t)y * 12;
        return 0;
    default:
        return OCT_EINVAL;
    }
}

/* The k with cal_start(k) <= ts < cal_start(k + 1). */
static int64_t cal_index(const cal_t *c, int64_t ts)
{
    int64_t k;
    if (c->kind == CAL_MS) return floor_div64(ts - c->base, c->step);
    int y, mo, d, h, mi, s, wday;
    local_fields(c->tz, ts, &y, &mo, &d, &h, &mi, &s, &wday);
    if (c->kind == CAL_DAYS)
        k = floor_div64(query_days_from_civil(y, mo, d) - c->base, c->step);
    else
        k = floor_div64((int64_t)y * 12 + mo - 1 - c->base, c->step);
    /* Local dates and instants agree except around gaps at midnight. */
    while (k > INT64_MIN / 2 && cal_start(c, k) > ts)
        k--;
    while (cal_start(c, k + 1) <= ts)
        k++;
    return k;
}

/* ---- downsampling ---------------------------------------------------------- */

size_t query_downsample_bound(const query_downsample_t *ds, int64_t start_ms, int64_t end_ms,
                              size_t n_in)
{
    if (ds->all) return 1;
    if (ds->fill == QUERY_FILL_NONE) return n_in;
    if (end_ms < start_ms) return 0;
    int64_t min_len; /* the shortest bucket the grid can have */
    if (!ds->calendar) {
        min_len = ds->interval_ms;
    } else {
        const int64_t H = 3600000;
        int64_t n = ds->count > 0 ? ds->count : 1;
        switch (ds->unit) {
        case 'S':
            min_len = n;
            break;
        case 's':
            min_len = n * 1000;
            break;
        case 'm':
            min_len = n * 60000;
            break;
        case 'h':
            min_len = n * H;
            break;
        case 'd':
            min_len = n * 24 * H - 4 * H;
            break; /* DST shifts are at most 2 h; margin */
        case 'w':
            min_len = n * 168 * H - 4 * H;
            break;
        case 'n':
            min_len = n * 27 * 24 * H;
            break;
        case 'y':
            min_len = n * 364 * 24 * H;
            break;
        default:
            min_len = 1;
            break;
        }
    }
    if (min_len <= 0) min_len = 1;
    uint64_t span = (uint64_t)end_ms - (uint64_t)start_ms;
    return (size_t)(span / (uint64_t)min_len) + 3;
}

typedef struct {
    const query_agg_t *agg;
    void *scratch;
    size_t scratch_cap; /* 8-byte slots */
} ds_ctx_t;

/* Aggregates in[0..n) (n >= 1) into one double-typed point at ts. */
static int ds_bucket(ds_ctx_t *x, int64_t ts, const query_dp_t *in, size_t n, query_dp_t *out)
{
    if (query__agg_needs_scratch(x->agg) && n > x->scratch_cap) {
        size_t cap = x->scratch_cap * 2 > n ? x->scratch_cap * 2 : n;
        void *p = realloc(x->scratch, cap * sizeof(uint64_t));
        if (!p) return -ENOMEM;
        x->scratch = p;
        x->scratch_cap = cap;
    }
    query_dp_t r;
    int rc = query__agg_apply(x->agg, in, n, &r, x->scratch);
    if (rc < 0) return rc;
    out->ts_ms = ts;
    out->v.f = r.is_int ? (double)r.v.i : r.v.f;
    out->is_int = 0;
    out->is_null = r.is_null;
    return 0;
}

static void ds_fill(query_fill_t fill, int64_t ts, query_dp_t *out)
{
    out->ts_ms = ts;
    out->v.f = fill == QUERY_FILL_ZERO ? 0.0 : NAN;
    out->is_int = 0;
    out->is_null = fill == QUERY_FILL_NULL;
}

/* Bucket boundaries of the bucket holding ts: fixed grid or calendar. */
static void bucket_of(const query_downsample_t *ds, const cal_t *c, int64_t ts, int64_t *k,
                      int64_t *s, int64_t *e)
{
    if (ds->calendar) {
        *k = cal_index(c, ts);
        *s = cal_start(c, *k);
        *e = cal_start(c, *k + 1);
    } else {
        *s = ts - floor_mod64(ts, ds->interval_ms);
        *e = *s + ds->interval_ms;
        *k = floor_div64(ts, ds->interval_ms);
    }
}

long query_downsample(const query_downsample_t *ds, const char *tz, int64_t start_ms,
                      int64_t end_ms, const query_dp_t *in, size_t n, query_dp_t *out, size_t cap)
{
    if (!ds->agg || query__agg_is_none(ds->agg)) return OCT_EINVAL;
    if (!ds->all && !ds->calendar && ds->interval_ms <= 0) return OCT_EINVAL;
    if (!ds->all && ds->calendar && ds->count <= 0) return OCT_EINVAL;

    ds_ctx_t x = {.agg = ds->agg};
    cal_t cal = {0};
    const query_tz_t *zone = NULL;
    long w = 0;
    int rc = 0;
    size_t i = 0;

    if (ds->all) {
        while (i < n && in[i].ts_ms < start_ms)
            i++;
        size_t j = i;
        while (j < n && in[j].ts_ms <= end_ms)
            j++;
        if (j == i) return 0;
        if (cap < 1) return OCT_ENOSPC;
        rc = ds_bucket(&x, start_ms, in + i, j - i, out);
        free(x.scratch);
        return rc < 0 ? rc : 1;
    }
    if (ds->calendar) {
        rc = query_tz_get(tz ? tz : "UTC", &zone, NULL);
        if (rc < 0) return rc;
    }

    if (ds->fill == QUERY_FILL_NONE) {
        int have_grid = 0;
        while (i < n) {
            int64_t k, s, e;
            if (ds->calendar && !have_grid) {
                rc = cal_init(&cal, ds, zone, in[i].ts_ms);
                if (rc < 0) goto out;
                have_grid = 1;
            }
            bucket_of(ds, &cal, in[i].ts_ms, &k, &s, &e);
            size_t j = i + 1;
            while (j < n && in[j].ts_ms < e)
                j++;
            if ((size_t)w >= cap) {
                rc = OCT_ENOSPC;
                goto out;
            }
            rc = ds_bucket(&x, s, in + i, j - i, &out[w]);
            if (rc < 0) goto out;
            w++;
            i = j;
        }
        goto out;
    }

    /* Filling: every bucket from the one holding start_ms to the one holding
     * end_ms, in order; points outside them are ignored. */
    if (end_ms < start_ms) goto out;
    int64_t k0, k1, s, e, s_end, e_end;
    if (ds->calendar) {
        rc = cal_init(&cal, ds, zone, start_ms);
        if (rc < 0) goto out;
    }
    bucket_of(ds, &cal, start_ms, &k0, &s, &e);
    bucket_of(ds, &cal, end_ms, &k1, &s_end, &e_end);
    (void)s_end;
    (void)e_end;
    while (i < n && in[i].ts_ms < s)
        i++;
    for (int64_t k = k0; k <= k1; k++) {
        if (k > k0) {
            s = e;
            e = ds->calendar ? cal_start(&cal, k + 1) : s + ds->interval_ms;
        }
        if (e <= s) continue; /* a calendar day that does not exist locally */
        size_t j = i;
        while (j < n && in[j].ts_ms < e)
            j++;
        if ((size_t)w >= cap) {
            rc = OCT_ENOSPC;
            goto out;
        }
        if (j > i) {
            rc = ds_bucket(&x, s, in + i, j - i, &out[w]);
            if (rc < 0) goto out;
        } else {
            ds_fill(ds->fill, s, &out[w]);
        }
        w++;
        i = j;
    }

out:
    free(x.scratch);
    return rc < 0 ? rc : w;
}

/* ---- rate ------------------------------------------------------------------ */

size_t query_rate(const query_rate_t *r, query_dp_t *pts, size_t n)
{
    if (n == 0) return 0;
    size_t w = 0;
    query_dp_t prev = pts[0];
    for (size_t i = 1; i < n; i++) {
        query_dp_t cur = pts[i];
        /* OpenTSDB fails the query on non-increasing timestamps; dedupe makes
         * them impossible upstream, so a stray one is skipped, not fatal. */
        if (cur.ts_ms <= prev.ts_ms) continue;
        double dt = (double)(cur.ts_ms - prev.ts_ms);
        int ints = prev.is_int && cur.is_int && !prev.is_null && !cur.is_null;
        __int128 idiff = 0;
        double diff;
        if (ints) {
            idiff = (__int128)cur.v.i - prev.v.i;
            diff = (double)idiff;
        } else {
            diff = dp_double(&cur) - dp_double(&prev);
        }
        double rate;
        if (r->counter && diff < 0) {
            if (r->drop_resets) {
                prev = cur; /* the next rate is measured from the reset value */
                continue;
            }
            if (ints)
                diff = (double)((__int128)r->counter_max - prev.v.i + cur.v.i);
            else
                diff = (double)r->counter_max - dp_double(&prev) + dp_double(&cur);
            rate = diff * 1000.0 / dt;
            if (r->reset_value > 0 && rate > (double)r->reset_value) rate = 0.0;
        } else {
            rate = diff * 1000.0 / dt;
        }
        pts[w].ts_ms = cur.ts_ms;
        pts[w].v.f = rate;
        pts[w].is_int = 0;
        pts[w].is_null = prev.is_null || cur.is_null;
        w++;
        prev = cur;
    }
    return w;
}

/* ---- cross-series aggregation ---------------------------------------------- */

/* The merge keeps every series in exactly one group: the series whose next
 * unconsumed point has timestamp `ts`. Groups sit in a binary heap keyed by
 * ts, and a series joins a group through a small direct-mapped cache of
 * pending timestamps, so aligned data (every series on the same 1 m
 * buckets) costs one heap operation per timestamp instead of one per point
 * and per level. Two groups may share a timestamp when the cache misses;
 * both pop at the same x, which is all the merge needs. */
#define NO_IDX UINT32_MAX
#define GCACHE 64

typedef struct {
    int64_t ts;
    uint32_t head, tail; /* series list, linked through nxt[] */
    uint32_t live;
} grp_t;

typedef struct {
    grp_t *g;
    uint32_t *heap, hn; /* group indices, min-heap by ts */
    uint32_t *free_g, n_free;
    uint32_t *nxt; /* per series: next series of its group */
    uint32_t cache[GCACHE];
} merge_t;

static void gheap_up(merge_t *m, uint32_t i)
{
    uint32_t v = m->heap[i];
    int64_t t = m->g[v].ts;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (m->g[m->heap[p]].ts <= t) break;
        m->heap[i] = m->heap[p];
        i = p;
    }
    m->heap[i] = v;
}

static void gheap_down(merge_t *m, uint32_t i)
{
    uint32_t v = m->heap[i], n = m->hn;
    int64_t t = m->g[v].ts;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && m->g[m->heap[c + 1]].ts < m->g[m->heap[c]].ts) c++;
        if (m->g[m->heap[c]].ts >= t) break;
        m->heap[i] = m->heap[c];
        i = c;
    }
    m->heap[i] = v;
}

static void merge_add(merge_t *m, uint32_t s, int64_t ts)
{
    uint32_t h = (uint32_t)(((uint64_t)ts * 0x9E3779B97F4A7C15ull) >> 58) & (GCACHE - 1);
    uint32_t gi = m->cache[h];
    m->nxt[s] = NO_IDX;
    if (gi != NO_IDX && m->g[gi].live && m->g[gi].ts == ts) {
        m->nxt[m->g[gi].tail] = s;
        m->g[gi].tail = s;
        return;
    }
    gi = m->free_g[--m->n_free];
    m->g[gi] = (grp_t){ts, s, s, 1};
    m->cache[h] = gi;
    m->heap[m->hn] = gi;
    gheap_up(m, m->hn++);
}

/* Pops one group with the smallest ts; returns its first series. */
static uint32_t merge_pop(merge_t *m)
{
    uint32_t gi = m->heap[0];
    m->heap[0] = m->heap[--m->hn];
    if (m->hn > 0) gheap_down(m, 0);
    m->g[gi].live = 0;
    m->free_g[m->n_free++] = gi;
    return m->g[gi].head;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation at x between a and b (a.ts < x < b.ts): exact when
 * both are integers (an integer iff the division is exact), else in doubles. */
static query_dp_t lerp(const query_dp_t *a, const query_dp_t *b, int64_t x)
{
    query_dp_t r = {.ts_ms = x};
    if (a->is_int && b->is_int && !a->is_null && !b->is_null) {
        int64_t dy, num64, den64 = b->ts_ms - a->ts_ms;
        if (!__builtin_sub_overflow(b->v.i, a->v.i, &dy) &&
            !__builtin_mul_overflow(x - a->ts_ms, dy, &num64)) {
            /* The common case, without 128-bit division. */
            if (num64 % den64 == 0) {
                r.v.i = a->v.i + num64 / den64;
                r.is_int = 1;
            } else {
                r.v.f = (double)a->v.i + (double)num64 / (double)den64;
            }
            return r;
        }
        __int128 num = (__int128)(x - a->ts_ms) * ((__int128)b->v.i - a->v.i);
        __int128 den = (__int128)b->ts_ms - a->ts_ms;
        if (num % den == 0) {
            r.v.i = a->v.i + (int64_t)(num / den);
            r.is_int = 1;
        } else {
            r.v.f = (double)a->v.i + (double)num / (double)den;
        }
    } else {
        double y0 = dp_double(a), y1 = dp_double(b);
        r.v.f = y0 + (double)(x - a->ts_ms) * (y1 - y0) / (double)(b->ts_ms - a->ts_ms);
        r.is_null = a->is_null || b->is_null;
    }
    return r;
}

long query_aggregate(const query_agg_t *a, int rate, const query_dp_t *const *series,
                     const size_t *lens, size_t n_series, query_dp_t **out)
{
    return query_aggregate_range(a, rate, series, lens, n_series, INT64_MIN, INT64_MAX, out);
}

/* The first index of s[0..n) with ts >= t (n if none). */
static size_t lower_bound_ts(const query_dp_t *s, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].ts_ms < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether a sums its values (sum, zimsum, pfsum, avg: *is_avg for avg):
 * those fold plain doubles without query__agg_apply. */
static int sum_like_agg(const query_agg_t *a, int *is_avg)
{
    const char *an = query_agg_name(a);
    *is_avg = !strcmp(an, "avg");
    return *is_avg || !strcmp(an, "sum") || !strcmp(an, "zimsum") || !strcmp(an, "pfsum");
}

/* The plain-double sum or avg of one value, as the merge loop below folds
 * one series' value (NaN gives NaN). */
static query_dp_t sum_one(double v, int is_avg)
{
    double sum = 0.0;
    size_t cnt = 0;
    if (!isnan(v)) {
        sum += v;
        cnt++;
    }
    if (cnt && is_avg) sum /= (double)cnt;
    return (query_dp_t){.v.f = cnt ? sum : NAN};
}

/* query_aggregate_range over one series (a group of one: every {host=*}
 * group of distinct hosts): each output timestamp is one of its points and
 * there is nothing to interleave or interpolate, so each point in
 * [t_from, t_to) is aggregated alone, exactly as the merge would (of points
 * sharing a timestamp, the last), without the merge's set-up. */
static long aggregate_one(const query_agg_t *a, const query_dp_t *s, size_t n, int64_t t_from,
                          int64_t t_to, query_dp_t **out)
{
    int is_avg, sum_like = sum_like_agg(a, &is_avg);
    size_t k = t_from == INT64_MIN ? 0 : lower_bound_ts(s, n, t_from), w = 0;
    query_dp_t *res = malloc((n - k ? n - k : 1) * sizeof *res);
    void *scratch = query__agg_needs_scratch(a) ? malloc(sizeof(uint64_t)) : NULL;
    if (!res || (query__agg_needs_scratch(a) && !scratch)) {
        free(res);
        free(scratch);
        return -ENOMEM;
    }
    for (; k < n && s[k].ts_ms < t_to; k++) {
        if (k + 1 < n && s[k + 1].ts_ms == s[k].ts_ms) continue;
        query_dp_t r;
        int ok = 1;
        if (sum_like && !s[k].is_int && !s[k].is_null)
            r = sum_one(s[k].v.f, is_avg);
        else
            ok = query__agg_apply(a, &s[k], 1, &r, scratch);
        if (ok < 0) {
            free(res);
            free(scratch);
            return ok;
        }
        if (ok) {
            r.ts_ms = s[k].ts_ms;
            res[w++] = r;
        }
    }
    free(scratch);
    *out = res;
    return (long)w;
}

long query_aggregate_range(const query_agg_t *a, int rate, const query_dp_t *const *series,
                           const size_t *lens, size_t n_series, int64_t t_from, int64_t t_to,
                           query_dp_t **out)
{
    *out = NULL;
    if (n_series > UINT32_MAX) return OCT_EINVAL;
    if (query__agg_is_none(a)) {
        /* `none` emits every series itself; one series passes through. */
        if (n_series > 1) return OCT_EINVAL;
        if (n_series == 0 || lens[0] == 0) return 0;
        *out = malloc(lens[0] * sizeof **out);
        if (!*out) return -ENOMEM;
        memcpy(*out, series[0], lens[0] * sizeof **out);
        return (long)lens[0];
    }

    size_t total = 0;
    for (size_t s = 0; s < n_series; s++)
        total += lens[s];
    if (total == 0) return 0;
    if (n_series == 1) return aggregate_one(a, series[0], lens[0], t_from, t_to, out);

    query_interp_t interp = query_agg_interp(a);
    merge_t mg = {0};
    mg.g = malloc(n_series * sizeof *mg.g);
    mg.heap = malloc(n_series * sizeof *mg.heap);
    mg.free_g = malloc(n_series * sizeof *mg.free_g);
    mg.nxt = malloc(n_series * sizeof *mg.nxt);
    size_t *pos = calloc(n_series, sizeof *pos);
    uint32_t *active = malloc(n_series * sizeof *active);
    uint32_t *fresh = malloc(n_series * sizeof *fresh);
    query_dp_t *vals = malloc(n_series * sizeof *vals);
    query_dp_t *cur = malloc(n_series * sizeof *cur); /* each series' latest point */
    /* Each series' latest value as a double when it is a plain double (not
     * an integer, not null), and how many series have one: a sum or avg
     * over every series then reads 8 bytes per series instead of sweeping
     * cur[] (24), which thousands of series push out of the cache. */
    double *curv = malloc(n_series * sizeof *curv);
    size_t n_curv = 0;
    int is_avg, sum_like = sum_like_agg(a, &is_avg);
    void *scratch = query__agg_needs_scratch(a) ? malloc(n_series * sizeof(uint64_t)) : NULL;
    size_t ocap = total < 1024 ? total : 1024, w = 0;
    query_dp_t *res = malloc(ocap * sizeof *res);
    long rc = 0;
    if (!mg.g || !mg.heap || !mg.free_g || !mg.nxt || !pos || !active || !fresh || !vals || !cur ||
        !curv || !res || (query__agg_needs_scratch(a) && !scratch)) {
        rc = -ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < GCACHE; i++)
        mg.cache[i] = NO_IDX;
    for (size_t i = 0; i < n_series; i++)
        mg.free_g[i] = (uint32_t)(n_series - 1 - i);
    mg.n_free = (uint32_t)n_series;

    size_t n_active = 0;
    for (size_t s = 0; s < n_series; s++) {
        if (lens[s] == 0) continue;
        if (t_from == INT64_MIN || series[s][0].ts_ms >= t_from) {
            merge_add(&mg, (uint32_t)s, series[s][0].ts_ms);
            continue;
        }
        /* The state the merge has when it reaches t_from: the points before
         * it consumed; a series that ended before it is no longer active,
         * one that started before it is active with its latest point. */
        size_t k = lower_bound_ts(series[s], lens[s], t_from);
        if (k == lens[s]) continue;
        pos[s] = k;
        cur[s] = series[s][k - 1];
        curv[s] = cur[s].v.f;
        n_curv += !cur[s].is_int && !cur[s].is_null;
        active[n_active++] = (uint32_t)s; /* in series order */
        merge_add(&mg, (uint32_t)s, series[s][k].ts_ms);
    }

    while (mg.hn > 0 && mg.g[mg.heap[0]].ts < t_to) {
        int64_t x = mg.g[mg.heap[0]].ts;
        size_t n_fresh = 0, n_ended = 0, n_hit = 0;
        /* Consume every point at x (a series with a repeated timestamp joins
         * a new group at x, which pops in this same loop). */
        while (mg.hn > 0 && mg.g[mg.heap[0]].ts == x) {
            for (uint32_t s = merge_pop(&mg), next; s != NO_IDX; s = next) {
                next = mg.nxt[s];
                if (pos[s] == 0) fresh[n_fresh++] = s;
                if (pos[s] == 0 || cur[s].ts_ms != x) n_hit++;
                int was = pos[s] > 0 && !cur[s].is_int && !cur[s].is_null;
                cur[s] = series[s][pos[s]];
                int now = !cur[s].is_int && !cur[s].is_null;
                curv[s] = cur[s].v.f;
                n_curv += (size_t)now - (size_t)was;
                /* Thousands of series interleave: no hardware prefetcher
                 * follows that many streams, so fetch this series' next
                 * cache line now; it is needed when the series pops again. */
                if (pos[s] + 4 < lens[s]) __builtin_prefetch(&series[s][pos[s] + 4]);
                if (++pos[s] < lens[s])
                    merge_add(&mg, s, series[s][pos[s]].ts_ms);
                else
                    n_ended++;
            }
        }
        if (n_fresh > 1) qsort(fresh, n_fresh, sizeof *fresh, cmp_u32);
        /* Merge the newly started series into `active`, keeping series order
         * (first/last depend on it). */
        if (n_fresh > 0) {
            size_t ia = n_active, ifr = n_fresh, o = n_active + n_fresh;
            while (ifr > 0) {
                if (ia > 0 && active[ia - 1] > fresh[ifr - 1])
                    active[--o] = active[--ia];
                else
                    active[--o] = fresh[--ifr];
            }
            n_active += n_fresh;
        }

        /* Every series active, each exact at x (aligned data) or stepping
         * (rate): the latest points are the values, in series order. */
        const query_dp_t *in = vals;
        size_t m = 0;
        if (n_active == n_series && (rate || n_hit == n_active)) {
            in = cur;
            m = n_series;
        }
        for (size_t i = 0; in == vals && i < n_active; i++) {
            uint32_t s = active[i];
            const query_dp_t *p = &cur[s];
            if (p->ts_ms == x || rate) {
                vals[m++] = *p;
                continue;
            }
            switch (interp) {
            case QUERY_INTERP_LERP:
                vals[m++] = lerp(p, &series[s][pos[s]], x);
                break;
            case QUERY_INTERP_ZIM:
                vals[m] = (query_dp_t){.ts_ms = x, .is_int = 1};
                vals[m++].v.i = 0;
                break;
            case QUERY_INTERP_PREV:
                vals[m++] = *p;
                break;
            case QUERY_INTERP_MAX:
            case QUERY_INTERP_MIN:
            default:
                /* A +/- infinite sentinel never wins min/max: leave it out. */
                break;
            }
        }

        query_dp_t r;
        int ok;
        if (in == cur && sum_like && n_curv == n_series) {
            /* Plain doubles only: query__agg_apply's sum/avg, bit for bit
             * (the non-NaN values added from 0.0 in series order). */
            double sum = 0.0;
            size_t cnt = 0;
            for (size_t i = 0; i < n_series; i++) {
                double v = curv[i];
                if (!isnan(v)) {
                    sum += v;
                    cnt++;
                }
            }
            if (cnt && is_avg) sum /= (double)cnt;
            r = (query_dp_t){.v.f = cnt ? sum : NAN};
            ok = 1;
        } else {
            ok = query__agg_apply(a, in, m, &r, scratch);
        }
        if (ok < 0) {
            rc = ok;
            goto done;
        }
        if (ok) {
            if (w == ocap) {
                size_t ncap = ocap * 2 < total ? ocap * 2 : total;
                query_dp_t *p = realloc(res, ncap * sizeof *res);
                if (!p) {
                    rc = -ENOMEM;
                    goto done;
                }
                res = p;
                ocap = ncap;
            }
            r.ts_ms = x;
            res[w++] = r;
        }

        /* Series whose last point was at x stop contributing after x. */
        if (n_ended > 0) {
            size_t o = 0;
            for (size_t i = 0; i < n_active; i++)
                if (pos[active[i]] < lens[active[i]]) active[o++] = active[i];
            n_active = o;
        }
    }

done:
    free(mg.g);
    free(mg.heap);
    free(mg.free_g);
    free(mg.nxt);
    free(pos);
    free(active);
    free(fresh);
    free(vals);
    free(cur);
    free(curv);
    free(scratch);
    if (rc < 0) {
        free(res);
        return rc;
    }
    *out = res;
    return (long)w;
}
