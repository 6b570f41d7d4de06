/* test_query_math.c -- query/: downsampling (alignment, fill policies,
 * "all", calendar buckets across the 2023 Europe/Berlin DST changes), rate
 * and counter rate, and cross-series aggregation with every interpolation.
 *
 * Expectations are hand-computed (the arithmetic is in the comments; epoch
 * values of local midnights are derived from 2023-01-01T00:00Z = 1672531200
 * plus whole days), and the aggregation machinery is also checked against a
 * brute-force model written here: for every timestamp of the union, scan
 * every series linearly and interpolate in long double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "query/query.h"

#define T0   1356998400000LL /* 2013-01-01 00:00:00 UTC, a whole day */
#define S(x) (T0 + (int64_t)(x)*1000)

static query_dp_t ip(int64_t ts, int64_t v)
{
    query_dp_t p = {.ts_ms = ts, .is_int = 1};
    p.v.i = v;
    return p;
}

static query_dp_t dp(int64_t ts, double v)
{
    query_dp_t p = {.ts_ms = ts};
    p.v.f = v;
    return p;
}

static void check_dbl(const query_dp_t *p, int64_t ts, double v, const char *what, size_t i)
{
    if (p->ts_ms != ts)
        fail_msg("%s[%zu]: ts %lld, want %lld", what, i, (long long)p->ts_ms, (long long)ts);
    if (p->is_int)
        fail_msg("%s[%zu]: integer %lld, want double %.17g", what, i, (long long)p->v.i, v);
    if (isnan(v)) {
        if (!isnan(p->v.f)) fail_msg("%s[%zu]: %.17g, want NaN", what, i, p->v.f);
    } else if (fabs(p->v.f - v) > 1e-9 * fmax(1.0, fabs(v))) {
        fail_msg("%s[%zu]: %.17g, want %.17g", what, i, p->v.f, v);
    }
}

/* Expected aggregate value: integer when is_int, else double. */
typedef struct {
    int64_t ts;
    double v;
    int is_int;
} want_t;

static void check_series(const query_dp_t *got, long n, const want_t *want, size_t nw,
                         const char *what)
{
    if (n != (long)nw) fail_msg("%s: %ld points, want %zu", what, n, nw);
    for (size_t i = 0; i < nw; i++) {
        if (got[i].ts_ms != want[i].ts)
            fail_msg("%s[%zu]: ts %lld want %lld", what, i, (long long)got[i].ts_ms,
                     (long long)want[i].ts);
        if (want[i].is_int) {
            if (!got[i].is_int)
                fail_msg("%s[%zu]: double %.17g, want integer %.0f", what, i, got[i].v.f,
                         want[i].v);
            if ((double)got[i].v.i != want[i].v)
                fail_msg("%s[%zu]: %lld, want %.0f", what, i, (long long)got[i].v.i, want[i].v);
        } else {
            check_dbl(&got[i], want[i].ts, want[i].v, what, i);
        }
    }
}

static query_downsample_t ds_fixed(const char *agg, int64_t interval_ms, query_fill_t fill)
{
    query_downsample_t d = {.interval_ms = interval_ms, .agg = query_agg_find(agg), .fill = fill};
    assert_non_null(d.agg);
    return d;
}

static query_downsample_t ds_cal(const char *agg, int64_t count, char unit, query_fill_t fill)
{
    query_downsample_t d = {
        .calendar = 1, .count = count, .unit = unit, .agg = query_agg_find(agg), .fill = fill};
    assert_non_null(d.agg);
    return d;
}

static long run_ds(const query_downsample_t *d, const char *tz, int64_t start, int64_t end,
                   const query_dp_t *in, size_t n, query_dp_t *out, size_t cap)
{
    size_t bound = query_downsample_bound(d, start, end, n);
    if (bound > cap) fail_msg("bound %zu > test buffer %zu", bound, cap);
    return query_downsample(d, tz, start, end, in, n, out, bound);
}

/* ---- downsampling, fixed intervals --------------------------------------------- */

static void ds_fixed_alignment_and_double_output(void **state)
{
    (void)state;
    /* Buckets are epoch multiples of 60 s: T0+59.999 s is still in T0's. */
    query_dp_t in[] = {ip(S(0), 1), ip(S(10), 2), ip(S(59) + 999, 3), ip(S(65), 4), ip(S(130), 5)};
    query_dp_t out[16];
    query_downsample_t d = ds_fixed("avg", 60000, QUERY_FILL_NONE);
    long n = run_ds(&d, NULL, S(0), S(200), in, 5, out, 16);
    assert_int_equal(n, 3);
    check_dbl(&out[0], S(0), 2.0, "avg", 0); /* (1+2+3)/3 */
    check_dbl(&out[1], S(60), 4.0, "avg", 1);
    check_dbl(&out[2], S(120), 5.0, "avg", 2);

    /* Not aligned to the data: a 7 s grid from the epoch. T0 is 1356998400 s,
     * 1356998400 mod 7 = 2 (7 * 193856914 = 1356998398), so T0 lies 2 s into
     * the bucket starting at T0 - 2 s. */
    query_dp_t in2[] = {ip(S(0), 10), ip(S(4), 20), ip(S(5), 30)};
    d = ds_fixed("sum", 7000, QUERY_FILL_NONE);
    n = run_ds(&d, NULL, S(0), S(10), in2, 3, out, 16);
    assert_int_equal(n, 2);
    check_dbl(&out[0], S(-2), 30.0, "sum7", 0); /* [T0-2, T0+5): 10 + 20 */
    check_dbl(&out[1], S(5), 30.0, "sum7", 1);
}

static void ds_ms_and_seconds_mixed(void **state)
{
    (void)state;
    /* 1 s buckets over ms and whole-second points. */
    query_dp_t in[] = {ip(S(0), 1),  ip(S(0) + 250, 2), ip(S(0) + 999, 3),
                       ip(S(1), 10), dp(S(1) + 1, 0.5), ip(S(3), 7)};
    query_dp_t out[16];
    query_downsample_t d = ds_fixed("sum", 1000, QUERY_FILL_NONE);
    long n = run_ds(&d, NULL, S(0), S(3), in, 6, out, 16);
    assert_int_equal(n, 3);
    check_dbl(&out[0], S(0), 6.0, "ms", 0);
    check_dbl(&out[1], S(1), 10.5, "ms", 1);
    check_dbl(&out[2], S(3), 7.0, "ms", 2);

    /* 500 ms buckets. */
    d = ds_fixed("count", 500, QUERY_FILL_NONE);
    n = run_ds(&d, NULL, S(0), S(3), in, 6, out, 16);
    assert_int_equal(n, 4);
    check_dbl(&out[0], S(0), 2.0, "ms500", 0);       /* 0, 250 */
    check_dbl(&out[1], S(0) + 500, 1.0, "ms500", 1); /* 999 */
    check_dbl(&out[2], S(1), 2.0, "ms500", 2);
    check_dbl(&out[3], S(3), 1.0, "ms500", 3);
}

static void ds_every_aggregator_in_a_bucket(void **state)
{
    (void)state;
    /* One 1 m bucket holding 3 1 4 1 5 (the same hand results as
     * test_query_agg, now typed as doubles). */
    query_dp_t in[] = {ip(S(0), 3), ip(S(1), 1), ip(S(2), 4), ip(S(3), 1), ip(S(4), 5)};
    struct {
        const char *agg;
        double v;
    } cases[] = {{"sum", 14},   {"min", 1},      {"max", 5},        {"avg", 2.8},   {"median", 3},
                 {"dev", 1.6},  {"diff", 2},     {"mult", 60},      {"zimsum", 14}, {"mimmin", 1},
                 {"mimmax", 5}, {"pfsum", 14},   {"squareSum", 52}, {"count", 5},   {"first", 3},
                 {"last", 5},   {"p50", 3},      {"p75", 4.5},      {"p90", 5},     {"ep50r3", 1},
                 {"ep90r3", 4}, {"ep90r7", 4.6}, {"ep999r7", 4.996}};
    query_dp_t out[8];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        query_downsample_t d = ds_fixed(cases[i].agg, 60000, QUERY_FILL_NONE);
        long n = run_ds(&d, NULL, S(0), S(59), in, 5, out, 8);
        assert_int_equal(n, 1);
        check_dbl(&out[0], S(0), cases[i].v, cases[i].agg, 0);
    }
    query_downsample_t none = ds_fixed("none", 60000, QUERY_FILL_NONE);
    assert_int_equal(query_downsample(&none, NULL, S(0), S(59), in, 5, out, 8), OCT_EINVAL);
}

static void ds_fill_policies(void **state)
{
    (void)state;
    /* start T0+30 s, end T0+5 m 10 s, 1 m sum: buckets T0 .. T0+5m (6). */
    query_dp_t in[] = {ip(S(-30), 50), ip(S(10), 1), ip(S(125), 2), ip(S(126), 3), ip(S(420), 99)};
    query_dp_t out[32];
    int64_t start = S(30), end = S(310);

    query_downsample_t d = ds_fixed("sum", 60000, QUERY_FILL_ZERO);
    long n = run_ds(&d, NULL, start, end, in, 5, out, 32);
    assert_int_equal(n, 6);
    double zero[] = {1, 0, 5, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        check_dbl(&out[i], S(60 * i), zero[i], "zero", (size_t)i);
        assert_false(out[i].is_null);
    }

    d.fill = QUERY_FILL_NAN;
    n = run_ds(&d, NULL, start, end, in, 5, out, 32);
    assert_int_equal(n, 6);
    double nanv[] = {1, NAN, 5, NAN, NAN, NAN};
    for (int i = 0; i < 6; i++) {
        check_dbl(&out[i], S(60 * i), nanv[i], "nan", (size_t)i);
        assert_false(out[i].is_null);
    }

    d.fill = QUERY_FILL_NULL;
    n = run_ds(&d, NULL, start, end, in, 5, out, 32);
    assert_int_equal(n, 6);
    for (int i = 0; i < 6; i++) {
        check_dbl(&out[i], S(60 * i), nanv[i], "null", (size_t)i);
        assert_int_equal(out[i].is_null, isnan(nanv[i]) ? 1 : 0);
    }

    /* none: only buckets with data, all of them (interpolation uses those
     * outside the range as anchors; the caller trims to [start, end]). */
    d.fill = QUERY_FILL_NONE;
    n = run_ds(&d, NULL, start, end, in, 5, out, 32);
    assert_int_equal(n, 4);
    check_dbl(&out[0], S(-60), 50, "none", 0);
    check_dbl(&out[1], S(0), 1, "none", 1);
    check_dbl(&out[2], S(120), 5, "none", 2);
    check_dbl(&out[3], S(420), 99, "none", 3);

    /* Fill with no data at all: every bucket filled. */
    d.fill = QUERY_FILL_ZERO;
    n = run_ds(&d, NULL, start, end, NULL, 0, out, 32);
    assert_int_equal(n, 6);
    check_dbl(&out[5], S(300), 0.0, "empty", 5);

    /* An end exactly on a boundary includes that bucket. */
    n = run_ds(&d, NULL, S(0), S(120), in, 5, out, 32);
    assert_int_equal(n, 3);
    check_dbl(&out[2], S(120), 5.0, "edge", 2);

    /* Too small a buffer is refused, never overrun. */
    assert_int_equal(query_downsample(&d, NULL, start, end, in, 5, out, 5), OCT_ENOSPC);
}

static void ds_all(void **state)
{
    (void)state;
    query_dp_t in[] = {ip(S(-5), 1000), ip(S(0), 1), dp(S(50), 2.5), ip(S(100), 3),
                       ip(S(101), 1000)};
    query_dp_t out[2];
    query_downsample_t d = {.all = 1, .agg = query_agg_find("sum"), .fill = QUERY_FILL_NONE};
    long n = run_ds(&d, NULL, S(0), S(100), in, 5, out, 2);
    assert_int_equal(n, 1);
    check_dbl(&out[0], S(0), 6.5, "all", 0); /* stamped with the start */
    n = run_ds(&d, NULL, S(0) + 1, S(100), in, 5, out, 2);
    assert_int_equal(n, 1);
    check_dbl(&out[0], S(0) + 1, 5.5, "all", 0);
    /* No data in range: no bucket, even with a fill policy. */
    d.fill = QUERY_FILL_ZERO;
    n = run_ds(&d, NULL, S(200), S(300), in, 5, out, 2);
    assert_int_equal(n, 0);
}

/* ---- calendar downsampling ---------------------------------------------------- */

/* 2023-03-25T00:00Z = 1672531200 + (31+28+24) days * 86400 = 1679702400.
 * Europe/Berlin midnights: 03-25 00:00 CET = 03-24T23:00Z = 1679698800,
 * 03-26 00:00 CET = 1679785200, 03-27 00:00 CEST = 03-26T22:00Z = 1679868000
 * (23 h later), 03-28 00:00 CEST = 1679954400. */
static void ds_calendar_day_spring_forward_berlin(void **state)
{
    (void)state;
    enum { N = 72 };
    query_dp_t in[N];
    for (int i = 0; i < N; i++)
        in[i] = ip((1679698800LL + 3600LL * i) * 1000, 1);
    query_dp_t out[N];
    query_downsample_t d = ds_cal("sum", 1, 'd', QUERY_FILL_ZERO);
    /* start 03-25 01:00 local, end 03-27 12:00 local */
    long n = run_ds(&d, "Europe/Berlin", (1679698800LL + 3600) * 1000,
                    (1679868000LL + 43200) * 1000, in, N, out, N);
    assert_int_equal(n, 3);
    check_dbl(&out[0], 1679698800000LL, 24, "spring", 0);
    check_dbl(&out[1], 1679785200000LL, 23, "spring", 1); /* the 23 h day */
    check_dbl(&out[2], 1679868000000LL, 24, "spring", 2);

    /* Without fill the grid starts at the first point; the last point
     * (1679954400 = 03-28 00:00 local) opens a fourth bucket. */
    d.fill = QUERY_FILL_NONE;
    n = run_ds(&d, "Europe/Berlin", 1679698800000LL, 1679958000000LL, in, N, out, N);
    assert_int_equal(n, 4);
    check_dbl(&out[1], 1679785200000LL, 23, "spring-none", 1);
    check_dbl(&out[3], 1679954400000LL, 1, "spring-none", 3);

    /* The same data in UTC: 24-hour days from 03-25T00:00Z (the first point
     * at 03-24T23:00Z opens the 03-24 bucket alone). */
    n = run_ds(&d, NULL, 1679698800000LL, 1679958000000LL, in, N, out, N);
    assert_int_equal(n, 4);
    check_dbl(&out[0], 1679616000000LL, 1, "utc", 0);
    check_dbl(&out[1], 1679702400000LL, 24, "utc", 1);
    check_dbl(&out[2], 1679788800000LL, 24, "utc", 2);
    check_dbl(&out[3], 1679875200000LL, 23, "utc", 3);
}

/* 2023-10-28T00:00Z = 1672531200 + 300 days * 86400 = 1698451200.
 * Berlin midnights: 10-28 00:00 CEST = 10-27T22:00Z = 1698444000,
 * 10-29 00:00 CEST = 1698530400, 10-30 00:00 CET = 10-29T23:00Z = 1698620400
 * (25 h later), 10-31 00:00 CET = 1698706800. */
static void ds_calendar_day_fall_back_berlin(void **state)
{
    (void)state;
    enum { N = 72 };
    query_dp_t in[N];
    for (int i = 0; i < N; i++)
        in[i] = ip((1698444000LL + 3600LL * i) * 1000, 1);
    query_dp_t out[N];
    query_downsample_t d = ds_cal("count", 1, 'd', QUERY_FILL_NONE);
    long n = run_ds(&d, "Europe/Berlin", 1698444000000LL, 1698703200000LL, in, N, out, N);
    assert_int_equal(n, 3);
    check_dbl(&out[0], 1698444000000LL, 24, "fall", 0);
    check_dbl(&out[1], 1698530400000LL, 25, "fall", 1); /* the 25 h day */
    check_dbl(&out[2], 1698620400000LL, 23, "fall", 2); /* (1698699600-1698620400)/3600 + 1 */

    /* Fill null over 10-27 .. 10-31 local with data only on 28..30. */
    d = ds_cal("sum", 1, 'd', QUERY_FILL_NULL);
    n = run_ds(&d, "Europe/Berlin", 1698444000000LL - 86400000, 1698706800000LL + 1000, in, N, out,
               N);
    assert_int_equal(n, 5);
    check_dbl(&out[0], 1698357600000LL, NAN, "fall-null", 0); /* 10-27 00:00 CEST */
    assert_true(out[0].is_null);
    check_dbl(&out[2], 1698530400000LL, 25, "fall-null", 2);
    check_dbl(&out[4], 1698706800000LL, NAN, "fall-null", 4);
    assert_true(out[4].is_null);
}

static void ds_calendar_other_units(void **state)
{
    (void)state;
    query_dp_t out[8];
    /* 2023-03-29T12:00Z, a Wednesday; its week (Sunday start) began 03-26
     * 00:00 Berlin = 1679785200. */
    query_dp_t wed[] = {ip(1680091200000LL, 7)};
    query_downsample_t d = ds_cal("sum", 1, 'w', QUERY_FILL_NONE);
    assert_int_equal(run_ds(&d, "Europe/Berlin", 1680091200000LL, 1680091200000LL, wed, 1, out, 8),
                     1);
    check_dbl(&out[0], 1679785200000LL, 7, "week", 0);
    /* Month: 03-01 00:00 CET = 02-28T23:00Z = 1677628800 - 3600. */
    d = ds_cal("sum", 1, 'n', QUERY_FILL_NONE);
    assert_int_equal(run_ds(&d, "Europe/Berlin", 1680091200000LL, 1680091200000LL, wed, 1, out, 8),
                     1);
    check_dbl(&out[0], 1677625200000LL, 7, "month", 0);
    /* Year in UTC: 2023-01-01. */
    d = ds_cal("sum", 1, 'y', QUERY_FILL_NONE);
    assert_int_equal(run_ds(&d, NULL, 1680091200000LL, 1680091200000LL, wed, 1, out, 8), 1);
    check_dbl(&out[0], 1672531200000LL, 7, "year", 0);
    /* Hours follow local hour boundaries: Asia/Kolkata is UTC+5:30, so
     * 2023-01-01T00:00Z (05:30 local) is in the hour starting 05:00 local =
     * 2022-12-31T23:30Z = 1672529400. */
    query_dp_t k[] = {ip(1672531200000LL, 1), ip(1672531200000LL + 1800000, 2)};
    d = ds_cal("sum", 1, 'h', QUERY_FILL_NONE);
    assert_int_equal(run_ds(&d, "Asia/Kolkata", 1672531200000LL, 1672533000000LL, k, 2, out, 8), 2);
    check_dbl(&out[0], 1672529400000LL, 1, "kolkata", 0);
    check_dbl(&out[1], 1672531200000LL + 1800000, 2, "kolkata", 1);
    /* 15mc in UTC is the fixed 15 m grid. */
    query_dp_t m[] = {ip(S(20 * 60), 4)};
    d = ds_cal("sum", 15, 'm', QUERY_FILL_NONE);
    assert_int_equal(run_ds(&d, NULL, S(0), S(3600), m, 1, out, 8), 1);
    check_dbl(&out[0], S(15 * 60), 4, "15mc", 0);
    /* Unknown zone. */
    assert_true(query_downsample(&d, "Not/AZone", S(0), S(3600), m, 1, out, 8) < 0);
    /* A month of calendar days with fill: 31 buckets for March 2023 UTC. */
    d = ds_cal("sum", 1, 'd', QUERY_FILL_ZERO);
    query_dp_t big[64];
    size_t cap = query_downsample_bound(&d, 1677628800000LL, 1680307199000LL, 0);
    assert_true(cap >= 31 && cap <= 64);
    assert_int_equal(
        query_downsample(&d, NULL, 1677628800000LL, 1680307199000LL, NULL, 0, big, cap), 31);
    check_dbl(&big[30], 1680220800000LL, 0.0, "march", 30); /* 03-31 */
}

/* ---- rate ------------------------------------------------------------------ */

static query_rate_t rate_opts(int counter, int64_t max, int64_t reset, int drop)
{
    query_rate_t r = {
        .counter = counter, .counter_max = max, .reset_value = reset, .drop_resets = drop};
    return r;
}

static void rate_plain(void **state)
{
    (void)state;
    query_rate_t r = rate_opts(0, INT64_MAX, 0, 0);
    query_dp_t p[] = {ip(S(0), 10), ip(S(10), 40), ip(S(20), 40), ip(S(25), 35)};
    assert_int_equal(query_rate(&r, p, 4), 3);
    check_dbl(&p[0], S(10), 3.0, "rate", 0); /* 30 / 10 s */
    check_dbl(&p[1], S(20), 0.0, "rate", 1);
    check_dbl(&p[2], S(25), -1.0, "rate", 2); /* -5 / 5 s: not a counter */

    query_dp_t one[] = {ip(S(0), 5)};
    assert_int_equal(query_rate(&r, one, 1), 0);
    assert_int_equal(query_rate(&r, one, 0), 0);

    /* ms and s mixed: 3 over 1.5 s; doubles; then 0.5 over 250 ms. */
    query_dp_t m[] = {ip(S(0), 100), ip(S(1) + 500, 103), dp(S(2), 104.5), dp(S(2) + 250, 105.0)};
    assert_int_equal(query_rate(&r, m, 4), 3);
    check_dbl(&m[0], S(1) + 500, 2.0, "ms", 0);
    check_dbl(&m[1], S(2), 3.0, "ms", 1); /* 1.5 / 0.5 s */
    check_dbl(&m[2], S(2) + 250, 2.0, "ms", 2);

    /* Exact integer difference of huge values (doubles would lose it). */
    query_dp_t h[] = {ip(S(0), 9007199254740993LL), ip(S(1), 9007199254740995LL)};
    assert_int_equal(query_rate(&r, h, 2), 1);
    check_dbl(&h[0], S(1), 2.0, "exact", 0);

    /* Equal timestamps: the later duplicate is skipped (OpenTSDB would fail). */
    query_dp_t e[] = {ip(S(0), 1), ip(S(0), 5), ip(S(1), 7)};
    assert_int_equal(query_rate(&r, e, 3), 1);
    check_dbl(&e[0], S(1), 6.0, "dup", 0);
}

static void rate_counter(void **state)
{
    (void)state;
    /* Reset with counterMax 100: 100 - 90 + 10 = 20 over 10 s. */
    query_rate_t r = rate_opts(1, 100, 0, 0);
    query_dp_t p[] = {ip(S(0), 90), ip(S(10), 10), ip(S(20), 30)};
    assert_int_equal(query_rate(&r, p, 3), 2);
    check_dbl(&p[0], S(10), 2.0, "max100", 0);
    check_dbl(&p[1], S(20), 2.0, "max100", 1);

    /* Without counterMax (Long.MAX): (2^63-1 - 90 + 10) / 10 s. */
    r = rate_opts(1, INT64_MAX, 0, 0);
    query_dp_t q[] = {ip(S(0), 90), ip(S(10), 10)};
    assert_int_equal(query_rate(&r, q, 2), 1);
    check_dbl(&q[0], S(10), 9223372036854775727.0 / 10.0, "nomax", 0);

    /* resetValue: a rate above it after a wrap becomes 0. */
    r = rate_opts(1, INT64_MAX, 1000, 0);
    query_dp_t s[] = {ip(S(0), 90), ip(S(10), 10), ip(S(20), 50)};
    assert_int_equal(query_rate(&r, s, 3), 2);
    check_dbl(&s[0], S(10), 0.0, "reset", 0);
    check_dbl(&s[1], S(20), 4.0, "reset", 1);
    r = rate_opts(1, 100, 5, 0); /* 2.0 <= 5: kept */
    query_dp_t t[] = {ip(S(0), 90), ip(S(10), 10)};
    assert_int_equal(query_rate(&r, t, 2), 1);
    check_dbl(&t[0], S(10), 2.0, "reset-kept", 0);
    r = rate_opts(1, 100, 1, 0); /* 2.0 > 1: zeroed */
    query_dp_t u[] = {ip(S(0), 90), ip(S(10), 10)};
    assert_int_equal(query_rate(&r, u, 2), 1);
    check_dbl(&u[0], S(10), 0.0, "reset-zero", 0);
    /* resetValue only judges wraps: a fast normal increase stays. */
    r = rate_opts(1, 100, 1, 0);
    query_dp_t f[] = {ip(S(0), 0), ip(S(1), 50)};
    assert_int_equal(query_rate(&r, f, 2), 1);
    check_dbl(&f[0], S(1), 50.0, "reset-noop", 0);

    /* dropResets: the reset point yields nothing and the next rate is
     * measured from it: (30 - 10) / 10 s. */
    r = rate_opts(1, INT64_MAX, 0, 1);
    query_dp_t d[] = {ip(S(0), 90), ip(S(10), 10), ip(S(20), 30), ip(S(30), 5), ip(S(31), 6)};
    assert_int_equal(query_rate(&r, d, 5), 2);
    check_dbl(&d[0], S(20), 2.0, "drop", 0);
    check_dbl(&d[1], S(31), 1.0, "drop", 1);

    /* Double counter wrap: 10 - 9.5 + 0.5 = 1 over 1 s. */
    r = rate_opts(1, 10, 0, 0);
    query_dp_t g[] = {dp(S(0), 9.5), dp(S(1), 0.5)};
    assert_int_equal(query_rate(&r, g, 2), 1);
    check_dbl(&g[0], S(1), 1.0, "dbl", 0);

    /* NaN (a fill) never counts as a reset. */
    r = rate_opts(1, 100, 0, 0);
    query_dp_t n[] = {dp(S(0), 5.0), dp(S(60), NAN), dp(S(120), 7.0)};
    assert_int_equal(query_rate(&r, n, 3), 2);
    check_dbl(&n[0], S(60), NAN, "nan", 0);
    check_dbl(&n[1], S(120), NAN, "nan", 1);
}

/* ---- aggregation across series ----------------------------------------------- */

/* Three misaligned integer series (offsets in seconds):
 *   A: (0,10) (20,30) (40,10)          active 0..40
 *   B: (10,100) (20,50) (30,200)       active 10..30
 *   C: (5,7) (25,12) (45,3)            active 5..45
 * union: 0 5 10 20 25 30 40 45. LERP values per series (hand):
 *   x=0:  A 10
 *   x=5:  A 10+5*20/20=15              C 7
 *   x=10: A 20          B 100          C 7+5*5/20 = 8.25
 *   x=20: A 30          B 50           C 7+15*5/20 = 10.75
 *   x=25: A 30-5*20/20=25  B 50+5*150/10 = 125  C 12
 *   x=30: A 20          B 200          C 12-5*9/20 = 9.75
 *   x=40: A 10                         C 12-15*9/20 = 5.25
 *   x=45:                              C 3                                  */
static const query_dp_t SA[] = {{S(0), {10}, 1, 0}, {S(20), {30}, 1, 0}, {S(40), {10}, 1, 0}};
static const query_dp_t SB[] = {{S(10), {100}, 1, 0}, {S(20), {50}, 1, 0}, {S(30), {200}, 1, 0}};
static const query_dp_t SC[] = {{S(5), {7}, 1, 0}, {S(25), {12}, 1, 0}, {S(45), {3}, 1, 0}};

static long agg3(const char *name, int rate, query_dp_t **out)
{
    const query_dp_t *ser[] = {SA, SB, SC};
    size_t lens[] = {3, 3, 3};
    const query_agg_t *a = query_agg_find(name);
    assert_non_null(a);
    return query_aggregate(a, rate, ser, lens, 3, out);
}

#define W(x, v, i)                                                                                 \
    {                                                                                              \
        S(x), v, i                                                                                 \
    }

static void aggregate_interpolation_modes(void **state)
{
    (void)state;
    query_dp_t *o;
    long n;

    /* LERP, exact: OpenTSDB's integer division would give 128, 90, 229, 15. */
    want_t sum[] = {W(0, 10, 1),   W(5, 22, 1),      W(10, 128.25, 0), W(20, 90.75, 0),
                    W(25, 162, 1), W(30, 229.75, 0), W(40, 15.25, 0),  W(45, 3, 1)};
    n = agg3("sum", 0, &o);
    check_series(o, n, sum, 8, "sum");
    free(o);

    want_t mn[] = {W(0, 10, 1),  W(5, 7, 1),     W(10, 8.25, 0), W(20, 10.75, 0),
                   W(25, 12, 1), W(30, 9.75, 0), W(40, 5.25, 0), W(45, 3, 1)};
    n = agg3("min", 0, &o);
    check_series(o, n, mn, 8, "min");
    free(o);

    /* Where C's interpolated value is a double the result is one too. */
    want_t mx[] = {W(0, 10, 1),   W(5, 15, 1),   W(10, 100, 0), W(20, 50, 0),
                   W(25, 125, 1), W(30, 200, 0), W(40, 10, 0),  W(45, 3, 1)};
    n = agg3("max", 0, &o);
    check_series(o, n, mx, 8, "max");
    free(o);

    want_t avg[] = {W(0, 10, 1),  W(5, 11, 1),          W(10, 42.75, 0), W(20, 30.25, 0),
                    W(25, 54, 1), W(30, 229.75 / 3, 0), W(40, 7.625, 0), W(45, 3, 1)};
    n = agg3("avg", 0, &o);
    check_series(o, n, avg, 8, "avg");
    free(o);

    /* ZIM: a series without a point at x counts 0 (while active). */
    want_t zim[] = {W(0, 10, 1),  W(5, 7, 1),    W(10, 100, 1), W(20, 80, 1),
                    W(25, 12, 1), W(30, 200, 1), W(40, 10, 1),  W(45, 3, 1)};
    n = agg3("zimsum", 0, &o);
    check_series(o, n, zim, 8, "zimsum");
    free(o);
    want_t cnt[] = {W(0, 1, 1),  W(5, 2, 1),  W(10, 3, 1), W(20, 3, 1),
                    W(25, 3, 1), W(30, 3, 1), W(40, 2, 1), W(45, 1, 1)};
    n = agg3("count", 0, &o);
    check_series(o, n, cnt, 8, "count");
    free(o);
    /* first/last in series order, with ZIM zeros. */
    want_t fst[] = {W(0, 10, 1), W(5, 0, 1),  W(10, 0, 1),  W(20, 30, 1),
                    W(25, 0, 1), W(30, 0, 1), W(40, 10, 1), W(45, 3, 1)};
    n = agg3("first", 0, &o);
    check_series(o, n, fst, 8, "first");
    free(o);
    want_t lst[] = {W(0, 10, 1),  W(5, 7, 1),  W(10, 0, 1), W(20, 0, 1),
                    W(25, 12, 1), W(30, 0, 1), W(40, 0, 1), W(45, 3, 1)};
    n = agg3("last", 0, &o);
    check_series(o, n, lst, 8, "last");
    free(o);

    /* MAX / MIN: missing values never win; only exact points count. */
    want_t mimmin[] = {W(0, 10, 1),  W(5, 7, 1),    W(10, 100, 1), W(20, 30, 1),
                       W(25, 12, 1), W(30, 200, 1), W(40, 10, 1),  W(45, 3, 1)};
    n = agg3("mimmin", 0, &o);
    check_series(o, n, mimmin, 8, "mimmin");
    free(o);
    want_t mimmax[] = {W(0, 10, 1),  W(5, 7, 1),    W(10, 100, 1), W(20, 50, 1),
                       W(25, 12, 1), W(30, 200, 1), W(40, 10, 1),  W(45, 3, 1)};
    n = agg3("mimmax", 0, &o);
    check_series(o, n, mimmax, 8, "mimmax");
    free(o);

    /* PREV: the previous value of each active series.
     * 5: A10+C7; 10: A10+B100+C7; 20: 30+50+7; 25: 30+50+12; 30: 30+200+12;
     * 40: 10+12. */
    want_t pf[] = {W(0, 10, 1),  W(5, 17, 1),   W(10, 117, 1), W(20, 87, 1),
                   W(25, 92, 1), W(30, 242, 1), W(40, 22, 1),  W(45, 3, 1)};
    n = agg3("pfsum", 0, &o);
    check_series(o, n, pf, 8, "pfsum");
    free(o);

    /* rate: step (latest value) instead of LERP, for any aggregator. */
    n = agg3("sum", 1, &o);
    check_series(o, n, pf, 8, "sum-rate");
    free(o);

    /* median across series: 10: sorted 8.25 20 100 -> 20 (a double: 8.25 is
     * one); 25: 12 25 125 -> 25 (all integers). */
    n = agg3("median", 0, &o);
    assert_int_equal(n, 8);
    check_dbl(&o[2], S(10), 20.0, "median", 2);
    assert_true(o[4].is_int && o[4].v.i == 25);
    free(o);
}

static void aggregate_nan_and_doubles(void **state)
{
    (void)state;
    /* P: (0,1.0) (10,NaN) (20,3.0); Q: (5,2.0) (15,4.0).
     * 0: 1; 5: P lerp with NaN -> skipped, Q 2; 10: P NaN, Q 3; 15: P NaN, Q 4;
     * 20: P 3 (Q ended). */
    query_dp_t P[] = {dp(S(0), 1.0), dp(S(10), NAN), dp(S(20), 3.0)};
    query_dp_t Q[] = {dp(S(5), 2.0), dp(S(15), 4.0)};
    const query_dp_t *ser[] = {P, Q};
    size_t lens[] = {3, 2};
    query_dp_t *o;
    long n = query_aggregate(query_agg_find("sum"), 0, ser, lens, 2, &o);
    want_t w[] = {W(0, 1, 0), W(5, 2, 0), W(10, 3, 0), W(15, 4, 0), W(20, 3, 0)};
    check_series(o, n, w, 5, "nan-sum");
    free(o);
    /* All-NaN at x: NaN. */
    query_dp_t R[] = {dp(S(0), NAN)};
    const query_dp_t *ser2[] = {R};
    size_t lens2[] = {1};
    n = query_aggregate(query_agg_find("max"), 0, ser2, lens2, 1, &o);
    assert_int_equal(n, 1);
    assert_true(isnan(o[0].v.f));
    free(o);
    /* An int and a double series: LERP of the int series in doubles where
     * needed: I (0,0) (30,1); D (10, 0.5): at 10, I = 1/3. */
    query_dp_t I1[] = {ip(S(0), 0), ip(S(30), 1)};
    query_dp_t D1[] = {dp(S(10), 0.5)};
    const query_dp_t *ser3[] = {I1, D1};
    size_t lens3[] = {2, 1};
    n = query_aggregate(query_agg_find("sum"), 0, ser3, lens3, 2, &o);
    want_t w3[] = {W(0, 0, 1), W(10, 0.5 + 1.0 / 3.0, 0), W(30, 1, 1)};
    check_series(o, n, w3, 3, "mixed");
    free(o);
}

static void aggregate_ms_and_s_mixed(void **state)
{
    (void)state;
    /* A in ms: (0,0) (1.5 s,3); B at whole seconds: (1 s,10) (2 s,20).
     * 1 s: A = 0 + 1000*3/1500 = 2 -> 12; 1.5 s: B = 15 -> 18. */
    query_dp_t A[] = {ip(S(0), 0), ip(S(1) + 500, 3)};
    query_dp_t B[] = {ip(S(1), 10), ip(S(2), 20)};
    const query_dp_t *ser[] = {A, B};
    size_t lens[] = {2, 2};
    query_dp_t *o;
    long n = query_aggregate(query_agg_find("sum"), 0, ser, lens, 2, &o);
    want_t w[] = {{S(0), 0, 1}, {S(1), 12, 1}, {S(1) + 500, 18, 1}, {S(2), 20, 1}};
    check_series(o, n, w, 4, "ms-s");
    free(o);
}

static void aggregate_none_and_empty(void **state)
{
    (void)state;
    query_dp_t *o = (query_dp_t *)1;
    const query_dp_t *ser[] = {SA, SB};
    size_t lens[] = {3, 3};
    assert_int_equal(query_aggregate(query_agg_find("none"), 0, ser, lens, 2, &o), OCT_EINVAL);
    assert_int_equal(query_aggregate(query_agg_find("none"), 0, ser, lens, 1, &o), 3);
    assert_true(o[2].ts_ms == S(40) && o[2].v.i == 10);
    free(o);
    size_t zero[] = {0, 0};
    assert_int_equal(query_aggregate(query_agg_find("sum"), 0, ser, zero, 2, &o), 0);
    assert_int_equal(query_aggregate(query_agg_find("sum"), 0, ser, lens, 0, &o), 0);
}

/* ---- brute-force model ---------------------------------------------------------- */

static uint64_t rng = 12345;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp_ts(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The model: for each x of the union, each series in order, linear search. */
static long double model_value(const query_dp_t *s, size_t n, int64_t x, int *present, int mode)
{
    *present = 0;
    if (n == 0 || x < s[0].ts_ms || x > s[n - 1].ts_ms) return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].ts_ms == x) {
            *present = 1;
            return (long double)s[i].v.i;
        }
        if (s[i].ts_ms > x) {
            *present = 2;
            if (mode == 1) return 0; /* zim */
            long double x0 = (long double)s[i - 1].ts_ms, x1 = (long double)s[i].ts_ms;
            long double y0 = (long double)s[i - 1].v.i, y1 = (long double)s[i].v.i;
            return y0 + ((long double)x - x0) * (y1 - y0) / (x1 - x0);
        }
    }
    return 0;
}

/* mode 0: random starts and steps (ms and s); 1: every series on the same
 * 10 s grid; 2: the same grid with random points missing. */
static void brute_force_case(int mode)
{
    enum { NS = 40, MAXP = 60 };
    static query_dp_t data[NS][MAXP];
    size_t lens[NS];
    const query_dp_t *ser[NS];
    static int64_t all[NS * MAXP];
    size_t nall = 0;
    for (int s = 0; s < NS; s++) {
        /* Starts on a whole-second grid so series share timestamps; steps are
         * mostly whole seconds, sometimes milliseconds. */
        int64_t t = mode ? S(0) : S(0) + 1000 * (int64_t)(rnd() % 300);
        lens[s] = mode ? MAXP : rnd() % MAXP; /* some series are empty */
        size_t k = 0;
        for (size_t i = 0; i < lens[s]; i++) {
            if (mode == 0)
                t += (rnd() % 4 == 0) ? 1 + (int64_t)(rnd() % 5000)
                                      : 1000 * (1 + (int64_t)(rnd() % 10));
            else
                t += 10000;
            if (mode == 2 && rnd() % 5 == 0) continue;
            data[s][k++] = ip(t, (int64_t)(rnd() % 2001) - 1000);
            all[nall++] = t;
        }
        lens[s] = k;
        ser[s] = data[s];
    }
    qsort(all, nall, sizeof all[0], cmp_ts);
    size_t nu = 0;
    for (size_t i = 0; i < nall; i++)
        if (nu == 0 || all[nu - 1] != all[i]) all[nu++] = all[i];

    const char *names[] = {"sum", "zimsum", "count", "min", "max", "mimmax", "first", "last"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        query_dp_t *o;
        long n = query_aggregate(query_agg_find(names[k]), 0, ser, lens, NS, &o);
        if (n != (long)nu) fail_msg("%s: %ld points, model %zu", names[k], n, nu);
        for (size_t i = 0; i < nu; i++) {
            long double acc = 0, mn = INFINITY, mx = -INFINITY, fst = NAN, lst = NAN;
            long cnt = 0;
            for (int s = 0; s < NS; s++) {
                int present;
                int zim = (k == 1 || k == 2 || k >= 6) ? 1 : 0;
                long double v = model_value(ser[s], lens[s], all[i], &present, zim);
                if (!present) continue;
                if (k == 5 && present == 2) continue; /* mimmax ignores missing */
                acc += v;
                if (cnt == 0) fst = v;
                lst = v;
                cnt++;
                if (v < mn) mn = v;
                if (v > mx) mx = v;
            }
            long double want = k <= 1   ? acc
                               : k == 2 ? (long double)cnt
                               : k == 3 ? mn
                               : k == 6 ? fst
                               : k == 7 ? lst
                                        : mx;
            double got = o[i].is_int ? (double)o[i].v.i : o[i].v.f;
            if (o[i].ts_ms != all[i]) fail_msg("%s[%zu]: ts", names[k], i);
            if (fabsl((long double)got - want) > 1e-6L)
                fail_msg("%s[%zu] at %lld: %.17g, model %.17Lg", names[k], i, (long long)all[i],
                         got, want);
        }
        free(o);
    }
}

static void aggregate_matches_brute_force_model(void **state)
{
    (void)state;
    brute_force_case(0);
    brute_force_case(1);
    brute_force_case(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ds_fixed_alignment_and_double_output),
        cmocka_unit_test(ds_ms_and_seconds_mixed),
        cmocka_unit_test(ds_every_aggregator_in_a_bucket),
        cmocka_unit_test(ds_fill_policies),
        cmocka_unit_test(ds_all),
        cmocka_unit_test(ds_calendar_day_spring_forward_berlin),
        cmocka_unit_test(ds_calendar_day_fall_back_berlin),
        cmocka_unit_test(ds_calendar_other_units),
        cmocka_unit_test(rate_plain),
        cmocka_unit_test(rate_counter),
        cmocka_unit_test(aggregate_interpolation_modes),
        cmocka_unit_test(aggregate_nan_and_doubles),
        cmocka_unit_test(aggregate_ms_and_s_mixed),
        cmocka_unit_test(aggregate_none_and_empty),
        cmocka_unit_test(aggregate_matches_brute_force_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
