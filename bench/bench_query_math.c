/* bench_query_math.c -- throughput of the query math: downsampling one day of
 * 10 s data per series, cross-series aggregation of 1,000 series, and the
 * rate pipeline over 10,000 series for an hour.
 *
 * Usage: bench_query_math [n_series=1000] [runs=7] [seed=42]
 *
 * Data comes from the deterministic fleet generator (bench/common/datagen.h);
 * for the day-long downsampling case only series with a 10 s cadence are
 * kept (timestamps on whole seconds or with ms jitter, values ints or
 * doubles as the class gives). Figures are input points per second, the
 * median of 'runs' timed passes; a memcpy of the same input points is the
 * ceiling to compare with. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/benchutil.h"
#include "common/datagen.h"
#include "common/err.h"
#include "common/xmalloc.h"
#include "query/query.h"

#define DAY_START 1356998400000LL /* 2013-01-01T00:00Z */
#define DAY_MS    86400000LL
#define HOUR_MS   3600000LL
#define MAX_RUNS  64

typedef struct {
    query_dp_t *p;
    size_t n;
} ser_t;

static volatile uint64_t sink;

static query_dp_t to_dp(const codec_point_t *c)
{
    query_dp_t d = {.ts_ms = c->ts_ms, .is_int = (uint8_t)!c->is_float};
    if (c->is_float)
        d.v.f = c->val.f;
    else
        d.v.i = c->val.i;
    return d;
}

/* Series idx of the fleet over [start, start+len); only 10 s cadence series
 * when only_10s (returns 0 points otherwise). */
static size_t gen(uint64_t seed, uint64_t idx, int64_t start, int64_t len, int only_10s,
                  query_dp_t *out, size_t cap)
{
    datagen_series_t s;
    datagen_series_init(&s, seed, idx, start);
    if (only_10s && s.interval_ms != 10000) return 0;
    size_t n = 0;
    for (;;) {
        codec_point_t c;
        datagen_series_next(&s, &c);
        if (c.ts_ms >= start + len || n == cap) break;
        out[n++] = to_dp(&c);
    }
    return n;
}

static size_t total_points(const ser_t *s, size_t ns)
{
    size_t t = 0;
    for (size_t i = 0; i < ns; i++)
        t += s[i].n;
    return t;
}

/* memcpy of every series' points: the ceiling. */
static double time_memcpy(const ser_t *s, size_t ns, int runs, query_dp_t *tmp)
{
    double r[MAX_RUNS];
    size_t pts = total_points(s, ns);
    for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < ns; i++) {
            memcpy(tmp, s[i].p, s[i].n * sizeof *tmp);
            sink += (uint64_t)tmp[s[i].n ? s[i].n - 1 : 0].ts_ms;
        }
        r[k] = (double)pts / (bench_now_s() - t0);
    }
    return bench_median(r, (size_t)(runs));
}

static double time_downsample(const ser_t *s, size_t ns, const query_downsample_t *ds,
                              const char *tz, int64_t start, int64_t end, int runs, query_dp_t *out,
                              size_t cap)
{
    double r[MAX_RUNS];
    size_t pts = total_points(s, ns);
    for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < ns; i++) {
            long n = query_downsample(ds, tz, start, end, s[i].p, s[i].n, out, cap);
            if (n < 0) {
                fprintf(stderr, "downsample: %s\n", oct_strerror((int)n));
                exit(1);
            }
            sink += (uint64_t)n;
        }
        r[k] = (double)pts / (bench_now_s() - t0);
    }
    return bench_median(r, (size_t)(runs));
}

static double time_aggregate(const ser_t *s, size_t ns, const char *agg, int rate, int runs,
                             long *n_out)
{
    double r[MAX_RUNS];
    size_t pts = total_points(s, ns);
    const query_dp_t **ptrs = xmalloc(ns * sizeof *ptrs);
    size_t *lens = xmalloc(ns * sizeof *lens);
    for (size_t i = 0; i < ns; i++) {
        ptrs[i] = s[i].p;
        lens[i] = s[i].n;
    }
    for (int k = 0; k < runs; k++) {
        query_dp_t *o;
        double t0 = bench_now_s();
        long n = query_aggregate(query_agg_find(agg), rate, ptrs, lens, ns, &o);
        r[k] = (double)pts / (bench_now_s() - t0);
        if (n < 0) {
            fprintf(stderr, "aggregate: %s\n", oct_strerror((int)n));
            exit(1);
        }
        *n_out = n;
        free(o);
    }
    free(ptrs);
    free(lens);
    return bench_median(r, (size_t)(runs));
}

static void free_series(ser_t *s, size_t ns)
{
    for (size_t i = 0; i < ns; i++)
        free(s[i].p);
    free(s);
}

int main(int argc, char **argv)
{
    size_t n_series = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 42;
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    const size_t day_cap = 8640 + 16, ds_cap = 8640 + 16;
    query_dp_t *tmp = xmalloc(3600 * 24 * sizeof *tmp);
    query_dp_t *out = xmalloc(ds_cap * sizeof *out);

    /* 1. A day of 10 s data per series. */
    ser_t *day = xcalloc(n_series, sizeof *day);
    size_t nd = 0;
    for (uint64_t idx = 0; nd < n_series && idx < n_series * 20; idx++) {
        size_t n = gen(seed, idx, DAY_START, DAY_MS, 1, tmp, day_cap);
        if (n == 0) continue;
        day[nd].p = xmemdup(tmp, n * sizeof *tmp);
        day[nd].n = n;
        nd++;
    }
    size_t day_pts = total_points(day, nd);
    printf("downsampling: %zu series x a day of 10 s data = %zu points, median of %d runs\n", nd,
           day_pts, runs);
    printf("  %-34s %8.1f M points/s\n", "memcpy (ceiling)", time_memcpy(day, nd, runs, tmp) / 1e6);
    struct {
        const char *label, *agg, *tz;
        int64_t iv;
        int cal;
        int64_t count;
        char unit;
        query_fill_t fill;
    } cases[] = {
        {"1m-avg", "avg", NULL, 60000, 0, 0, 0, QUERY_FILL_NONE},
        {"1m-avg-nan", "avg", NULL, 60000, 0, 0, 0, QUERY_FILL_NAN},
        {"1m-sum", "sum", NULL, 60000, 0, 0, 0, QUERY_FILL_NONE},
        {"1m-p99", "p99", NULL, 60000, 0, 0, 0, QUERY_FILL_NONE},
        {"1h-max", "max", NULL, 3600000, 0, 0, 0, QUERY_FILL_NONE},
        {"1hc-avg (Europe/Berlin)", "avg", "Europe/Berlin", 3600000, 1, 1, 'h', QUERY_FILL_NONE},
        {"1dc-avg-zero (Europe/Berlin)", "avg", "Europe/Berlin", DAY_MS, 1, 1, 'd',
         QUERY_FILL_ZERO},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        query_downsample_t ds = {.interval_ms = cases[c].iv,
                                 .calendar = cases[c].cal,
                                 .count = cases[c].count,
                                 .unit = cases[c].unit,
                                 .agg = query_agg_find(cases[c].agg),
                                 .fill = cases[c].fill};
        double r = time_downsample(day, nd, &ds, cases[c].tz, DAY_START, DAY_START + DAY_MS - 1,
                                   runs, out, ds_cap);
        printf("  %-34s %8.1f M points/s\n", cases[c].label, r / 1e6);
    }

    /* 2. Aggregation of the same series after 1m-avg (aligned buckets): the
     * Grafana "sum over 1,000 series with 1m-avg over a day". */
    ser_t *dsd = xcalloc(nd, sizeof *dsd);
    query_downsample_t avg1m = {.interval_ms = 60000, .agg = query_agg_find("avg")};
    for (size_t i = 0; i < nd; i++) {
        long n = query_downsample(&avg1m, NULL, DAY_START, DAY_START + DAY_MS - 1, day[i].p,
                                  day[i].n, out, ds_cap);
        dsd[i].p = xmemdup(out, (size_t)n * sizeof *out);
        dsd[i].n = (size_t)n;
    }
    long n_out = 0;
    printf("aggregation: %zu series after 1m-avg (%zu points), median of %d runs\n", nd,
           total_points(dsd, nd), runs);
    printf("  %-34s %8.1f M points/s\n", "memcpy (ceiling)", time_memcpy(dsd, nd, runs, tmp) / 1e6);
    const char *aggs[] = {"sum", "avg", "zimsum", "max", "p95"};
    for (size_t a = 0; a < sizeof aggs / sizeof aggs[0]; a++) {
        double r = time_aggregate(dsd, nd, aggs[a], 0, runs, &n_out);
        printf("  %-34s %8.1f M points/s  (%ld output points)\n", aggs[a], r / 1e6, n_out);
    }

    /* 3. Raw, misaligned series: the same series' first hour, no
     * downsampling (the union timeline is every distinct timestamp). */
    ser_t *raw = xcalloc(nd, sizeof *raw);
    for (size_t i = 0; i < nd; i++) {
        size_t n = 0;
        while (n < day[i].n && day[i].p[n].ts_ms < DAY_START + HOUR_MS)
            n++;
        raw[i].p = day[i].p;
        raw[i].n = n;
    }
    printf("aggregation of raw series: %zu series x 1 h of 10 s data (%zu points)\n", nd,
           total_points(raw, nd));
    double r = time_aggregate(raw, nd, "sum", 0, runs, &n_out);
    printf("  %-34s %8.1f M points/s  (%ld output points)\n", "sum (LERP)", r / 1e6, n_out);
    free(raw);

    /* 4. Rate over 10x the series for an hour: query_rate on each series,
     * then sum with rate=1 (step). Every series of the fleet, any cadence. */
    size_t nr = n_series * 10;
    ser_t *hr = xcalloc(nr, sizeof *hr);
    for (size_t i = 0; i < nr; i++) {
        size_t n = gen(seed, i, DAY_START, HOUR_MS, 0, tmp, 3600 + 16);
        hr[i].p = xmemdup(tmp, n * sizeof *tmp);
        hr[i].n = n;
    }
    size_t hr_pts = total_points(hr, nr);
    ser_t *rated = xcalloc(nr, sizeof *rated);
    for (size_t i = 0; i < nr; i++)
        rated[i].p = xmalloc((hr[i].n + 1) * sizeof *tmp);
    printf("rate: %zu series x 1 h (%zu points), median of %d runs\n", nr, hr_pts, runs);
    printf("  %-34s %8.1f M points/s\n", "memcpy (ceiling)", time_memcpy(hr, nr, runs, tmp) / 1e6);
    double rr[MAX_RUNS];
    query_rate_t ro = {.counter = 1, .counter_max = INT64_MAX};
    for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < nr; i++) {
            memcpy(rated[i].p, hr[i].p, hr[i].n * sizeof *tmp);
            rated[i].n = query_rate(&ro, rated[i].p, hr[i].n);
        }
        rr[k] = (double)hr_pts / (bench_now_s() - t0);
    }
    printf("  %-34s %8.1f M points/s\n", "copy + query_rate (counter)",
           bench_median(rr, (size_t)(runs)) / 1e6);
    r = time_aggregate(rated, nr, "sum", 1, runs, &n_out);
    printf("  %-34s %8.1f M points/s  (%ld output points)\n", "sum of rates (step)", r / 1e6,
           n_out);

    free_series(rated, nr);
    free_series(hr, nr);
    free_series(dsd, nd);
    free_series(day, nd);
    free(tmp);
    free(out);
    return (int)(sink & 0);
}
