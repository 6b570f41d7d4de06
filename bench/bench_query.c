/* bench_query.c -- latency and scan speed of Grafana-typical queries through
 * the query executor (exec/exec.h) on a generated fleet.
 *
 * Usage: bench_query [--day-series N] [--hour-series N] [--repeats N]
 *                    [--annotations] [--keep DIR] [--reuse DIR] [--only N]
 *   --day-series   series with a full day of data (default 1000)
 *   --hour-series  series with the day's last hour (default 10000)
 *   --repeats      runs per query (default 7; the 10,000-series one too)
 *   --annotations  also look up each series' annotations (Grafana's default:
 *                  it does not send noAnnotations); off by default
 *   --keep DIR     write the data set into DIR and leave it there
 *   --reuse DIR    query a data set left by --keep (same series counts), no load
 *   --only N       run only query N (1 to 5), e.g. under a profiler
 *
 * Data set: bench/common/datagen.h fleet (seed 42): metric bench.day with
 * host=h<i> dc=dc<i%10> for day-series series over 24 h from
 * 2013-01-01T00:00Z, and bench.hour with the same tags for hour-series
 * series over the last hour (80 % of series every 10 s, 20 % every 1 s).
 * Written through tsdb_put_batch into a temp data dir, one hour at a time,
 * and flushed (tsdb_flush) so queries read compressed blocks from RocksDB.
 *
 * Queries (timed from the call to the last callback; the callback only
 * counts points, no JSON):
 *   one series, a day, raw           sum:bench.day{host=h00000}
 *   sum 1m-avg, day-series, a day    sum:1m-avg:bench.day
 *   sum rate, hour-series, an hour   sum:rate:bench.hour
 *   group-by, day-series, an hour    sum:1m-avg:bench.day{host=*} over the
 *                                    day's last hour (one group per host)
 *   the same group-by with annotations looked up (as Grafana asks)
 * For each: median and p99 (nearest rank) latency over the repeats, raw
 * points read per run, points scanned per second at the median, and the
 * median CPU time of the process (all threads) per run, and an FNV-1a
 * checksum of the output points (equal across builds that answer alike). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "common/datagen.h"
#include "query/query.h"
#include "exec/exec.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define D0      1356998400000LL /* 2013-01-01T00:00:00Z in ms */
#define HOUR_MS 3600000LL

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the whole process (every thread): steadier than wall time
 * on a loaded machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const oct_errbuf_t *eb)
{
    fprintf(stderr, "bench_query: %s: %s\n", what, eb ? eb->msg : "");
    exit(1);
}

/* Writes series [0, n) of metric m for the hours [h0, h1) of the day. */
static uint64_t load(tsdb_t *db, const char *m, size_t n, int h0, int h1)
{
    enum { BATCH = 8192 };
    static tsdb_dp_t dps[BATCH];
    static char tagbuf[BATCH][32];
    static oct_slice_t tags[BATCH][4];
    codec_point_t *pts = malloc(DATAGEN_MAX_POINTS_PER_HOUR * sizeof *pts);
    uint64_t total = 0;
    oct_errbuf_t eb;
    for (int h = h0; h < h1; h++) {
        size_t nb = 0;
        for (size_t i = 0; i < n; i++) {
            size_t np =
                datagen_series_hour(42, i, D0 + h * HOUR_MS, pts, DATAGEN_MAX_POINTS_PER_HOUR);
            for (size_t j = 0; j < np; j++) {
                if (nb == BATCH) {
                    if (tsdb_put_batch(db, dps, nb, NULL, NULL, NULL, &eb) != (long)nb)
                        die("put", &eb);
                    total += nb;
                    nb = 0;
                }
                int l = snprintf(tagbuf[nb], sizeof tagbuf[nb], "h%05zudc%zu", i, i % 10);
                tags[nb][0] = oct_slice_str("host");
                tags[nb][1] = oct_slice(tagbuf[nb], 6);
                tags[nb][2] = oct_slice_str("dc");
                tags[nb][3] = oct_slice(tagbuf[nb] + 6, (size_t)l - 6);
                dps[nb] = (tsdb_dp_t){oct_slice_str(m), tags[nb], 2, pts[j],
                                      (uint8_t)(pts[j].ts_ms % 1000 != 0)};
                nb++;
            }
        }
        if (nb) {
            if (tsdb_put_batch(db, dps, nb, NULL, NULL, NULL, &eb) != (long)nb) die("put", &eb);
            total += nb;
        }
        if (tsdb_flush(db, &eb)) die("flush", &eb);
    }
    free(pts);
    return total;
}

typedef struct {
    uint64_t points, results, sum; /* sum: FNV-1a of every output point's bytes */
} cnt_t;

static int count_cb(void *ctx, const exec_result_t *r)
{
    cnt_t *c = ctx;
    c->points += r->n_dps;
    c->results++;
    /* A checksum of the exact output (timestamps, value bits, flags), so two
     * builds can be shown to answer identically. */
    for (size_t i = 0; i < r->n_dps; i++) {
        const query_dp_t *d = &r->dps[i];
        uint64_t w[3] = {(uint64_t)d->ts_ms, 0, (uint64_t)d->is_int | (uint64_t)d->is_null << 8};
        memcpy(&w[1], &d->v, sizeof w[1]);
        const uint8_t *b = (const uint8_t *)w;
        for (size_t k = 0; k < sizeof w; k++)
            c->sum = (c->sum ^ b[k]) * 0x100000001b3ull;
    }
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(tsdb_t *db, const char *label, const char *m, int64_t start, int64_t end,
                  int repeats, int annotations)
{
    double *lat = calloc((size_t)repeats, sizeof *lat);
    double *cpu = calloc((size_t)repeats, sizeof *cpu);
    exec_opts_t opts;
    exec_opts_default(&opts);
    opts.max_held_points = 0;
    uint64_t raw = 0, out = 0, series = 0, sum = 0;
    for (int r = 0; r < repeats; r++) {
        query_t q;
        memset(&q, 0, sizeof q);
        q.start_ms = start;
        q.end_ms = end;
        q.no_annotations = !annotations;
        oct_errbuf_t eb;
        if (query_parse_m(&q, m, &eb)) die("parse", &eb);
        cnt_t c = {0, 0, 0xcbf29ce484222325ull};
        exec_stats_t st;
        double t0 = now_s(), c0 = cpu_s();
        if (exec_query(db, &q, &opts, count_cb, &c, &st, &eb)) die("query", &eb);
        lat[r] = now_s() - t0;
        cpu[r] = cpu_s() - c0;
        raw = st.raw_points;
        series = st.series;
        out = c.points;
        sum = c.sum;
        query_free(&q);
    }
    qsort(lat, (size_t)repeats, sizeof *lat, cmp_d);
    qsort(cpu, (size_t)repeats, sizeof *cpu, cmp_d);
    double med = lat[(repeats - 1) / 2];
    size_t k = (size_t)(0.99 * repeats + 0.999999);
    double p99 = lat[(k ? k : 1) - 1];
    printf("%-34s series %6llu  raw points %9llu  out %6llu  median %8.2f ms  p99 %8.2f ms  "
           "%6.1f M points/s  cpu median %8.2f ms  output fnv %016llx\n",
           label, (unsigned long long)series, (unsigned long long)raw, (unsigned long long)out,
           med * 1e3, p99 * 1e3, (double)raw / med / 1e6, cpu[(repeats - 1) / 2] * 1e3,
           (unsigned long long)sum);
    free(lat);
    free(cpu);
}

int main(int argc, char **argv)
{
    size_t day_series = 1000, hour_series = 10000;
    int repeats = 7, annotations = 0, reuse = 0, only = 0;
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--day-series") && i + 1 < argc)
            day_series = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hour-series") && i + 1 < argc)
            hour_series = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--annotations"))
            annotations = 1;
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else if (!strcmp(argv[i], "--reuse") && i + 1 < argc)
            keep = argv[++i], reuse = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_query [--day-series N] [--hour-series N] "
                            "[--repeats N] [--annotations] [--keep DIR] [--reuse DIR] "
                            "[--only N]\n");
            return 2;
        }
    }
    if (repeats < 1) repeats = 1;
    char dir[256];
    if (keep) {
        snprintf(dir, sizeof dir, "%s", keep);
    } else {
        snprintf(dir, sizeof dir, "%s/bench_query.XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir)) die("mkdtemp", NULL);
    }
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) ||
        oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb))
        die("config", &eb);
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) die("open", &eb);

    double t0 = now_s();
    uint64_t n1 = reuse ? 0 : load(db, "bench.day", day_series, 0, 24);
    uint64_t n2 = reuse ? 0 : load(db, "bench.hour", hour_series, 23, 24);
    double tl = now_s() - t0;
    if (!reuse)
        printf("data set: bench.day %zu series x 24 h = %llu points, bench.hour %zu series x 1 h = "
               "%llu points; written + flushed in %.1f s\n",
               day_series, (unsigned long long)n1, hour_series, (unsigned long long)n2, tl);

    int64_t day_end = D0 + 24 * HOUR_MS - 1, hour0 = D0 + 23 * HOUR_MS;
    if (!only || only == 1)
        bench(db, "one series, day, raw", "sum:bench.day{host=h00000}", D0, day_end, repeats,
              annotations);
    if (!only || only == 2)
        bench(db, "sum 1m-avg, day-series, day", "sum:1m-avg:bench.day", D0, day_end, repeats,
              annotations);
    if (!only || only == 3)
        bench(db, "sum rate, hour-series, hour", "sum:rate:bench.hour", hour0, day_end, repeats,
              annotations);
    if (!only || only == 4)
        bench(db, "group-by host=*, day-series, hour", "sum:1m-avg:bench.day{host=*}", hour0,
              day_end, repeats, annotations);
    if (!only || only == 5)
        bench(db, "group-by, annotations on", "sum:1m-avg:bench.day{host=*}", hour0, day_end,
              repeats, 1);

    tsdb_close(db);
    oct_config_free(cfg);
    if (!keep) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "bench_query: could not remove %s\n", dir);
    }
    return 0;
}
