/* bench_retention.c -- what retention costs (docs/retention.md): the cut
 * every series read now computes (tsdb_retention_cut_ms in read.c: nothing
 * without rules, the hour arithmetic with a raw rule, a metric-name lookup
 * and prefix match with metric rules), and one expiry pass
 * (tsdb_retention_run: the walk plus store_part_drop's range deletion and
 * compaction).
 *
 * Writes S series (default 200) x H hours (default 72) x P points an hour
 * (default 60) ending at the current hour into a fresh data dir, then
 *   - reads every series over its last 6 hours (never cut) with no rule,
 *     with tsd.storage.retention.raw = 24h, and with that plus 4 metric
 *     prefix rules: median of 5 rounds, microseconds per series read;
 *   - runs one pass with raw = 24h after a full compaction: its time, the
 *     partitions dropped and the bytes on disk before and after.
 * A program that prints figures, not a test.
 *   bench_retention [S] [H] [P] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/benchutil.h"
#include "common/config.h"
#include "tsdb/maint.h"
#include "tsdb/read.h"
#include "tsdb/retention.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define RUNS 5

static void die(const char *what, const oct_errbuf_t *eb)
{
    fprintf(stderr, "bench_retention: %s: %s\n", what, eb->msg);
    exit(1);
}

static tsdb_t *open_db(const char *dir, const char *const *sets)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb)) die("config", &eb);
    if (oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb)) die("config", &eb);
    for (size_t i = 0; sets && sets[i]; i += 2)
        if (oct_config_set(cfg, sets[i], sets[i + 1], &eb)) die("config", &eb);
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) die("open", &eb);
    oct_config_free(cfg);
    return db;
}

typedef struct {
    uint8_t (*tsuid)[32];
    size_t *len;
    size_t n, cap;
} series_t;

static int collect(void *ctx, const uint8_t *tsuid, size_t len)
{
    series_t *s = ctx;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->tsuid = realloc(s->tsuid, s->cap * sizeof *s->tsuid);
        s->len = realloc(s->len, s->cap * sizeof *s->len);
    }
    memcpy(s->tsuid[s->n], tsuid, len < 32 ? len : 32);
    s->len[s->n++] = len;
    return 0;
}

/* Median microseconds per series read of the last 6 hours. */
static double read_us(tsdb_t *db, long long h0)
{
    oct_errbuf_t eb;
    uint64_t metric;
    if (uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)"r.m", 3, &metric, &eb))
        die("uid", &eb);
    series_t s = {0};
    tsdb_series_find(db, metric, 0, 0, collect, &s);
    tsdb_reader_t *rd = tsdb_reader_new(db);
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < s.n; i++) {
            codec_point_t *pts;
            size_t n;
            if (tsdb_reader_read(rd, s.tsuid[i], s.len[i], (h0 - 6 * 3600) * 1000, h0 * 1000, &pts,
                                 &n, &eb))
                die("read", &eb);
        }
        v[r] = (bench_now_s() - t0) * 1e6 / (double)(s.n ? s.n : 1);
    }
    tsdb_reader_free(rd);
    free(s.tsuid);
    free(s.len);
    return bench_median(v, RUNS);
}

int main(int argc, char **argv)
{
    long S = argc > 1 ? atol(argv[1]) : 200, H = argc > 2 ? atol(argv[2]) : 72,
         P = argc > 3 ? atol(argv[3]) : 60;
    char dir[] = "/tmp/bench_retention.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    long long now = (long long)time(NULL), h0 = now - now % 3600;
    oct_errbuf_t eb;

    tsdb_t *db = open_db(dir, NULL);
    tsdb_dp_t *dps = calloc((size_t)P, sizeof *dps);
    char(*tv)[24] = calloc((size_t)S, sizeof *tv);
    oct_slice_t *tags = calloc((size_t)S * 2, sizeof *tags);
    unsigned seed = 1;
    for (long i = 0; i < S; i++) {
        snprintf(tv[i], sizeof tv[i], "%ld", i);
        tags[2 * i] = oct_slice_str("s");
        tags[2 * i + 1] = oct_slice_str(tv[i]);
    }
    for (long k = H; k >= 1; k--)
        for (long i = 0; i < S; i++) {
            for (long j = 0; j < P; j++) {
                seed = seed * 1103515245u + 12345u;
                dps[j] = (tsdb_dp_t){.metric = oct_slice_str("r.m"),
                                     .tags = &tags[2 * i],
                                     .n_tags = 1,
                                     .pt = {.ts_ms = (h0 - k * 3600 + j * (3600 / P)) * 1000,
                                            .val.i = (int64_t)(seed >> 8)}};
            }
            if (tsdb_put_batch(db, dps, (size_t)P, NULL, NULL, NULL, &eb) != P) die("put", &eb);
        }
    if (tsdb_flush(db, &eb) || tsdb_compact(db, &eb)) die("flush", &eb);
    tsdb_close(db);

    static const char *const raw[] = {"tsd.storage.retention.raw", "24h", NULL};
    static const char *const rules[] = {"tsd.storage.retention.raw",
                                        "24h",
                                        "tsd.storage.retention.metric.sys.",
                                        "7d",
                                        "tsd.storage.retention.metric.r.",
                                        "2d",
                                        "tsd.storage.retention.metric.r.x",
                                        "1d",
                                        "tsd.storage.retention.metric.debug.",
                                        "1d",
                                        NULL};
    db = open_db(dir, NULL);
    double none = read_us(db, h0);
    tsdb_close(db);
    db = open_db(dir, raw);
    double with_raw = read_us(db, h0);
    tsdb_close(db);
    db = open_db(dir, rules);
    double with_rules = read_us(db, h0);
    tsdb_close(db);

    db = open_db(dir, raw);
    uint64_t before = 0, after = 0;
    tsdb_retention_report_t rep;
    if (tsdb_disk_usage(db, &before, &eb)) die("usage", &eb);
    double t0 = bench_now_s();
    if (tsdb_retention_run(db, now * 1000, 0, &rep, &eb)) die("pass", &eb);
    double pass_ms = (bench_now_s() - t0) * 1e3;
    if (tsdb_disk_usage(db, &after, &eb)) die("usage", &eb);
    tsdb_close(db);

    printf("bench_retention: %ld series x %ld hours x %ld points/h, median of %d rounds\n", S, H, P,
           RUNS);
    printf("  series read, last 6 h, no rule        %8.2f us\n", none);
    printf("  same, raw = 24h                       %8.2f us\n", with_raw);
    printf("  same, raw + 4 metric prefix rules     %8.2f us\n", with_rules);
    printf("  pass, raw = 24h: %llu partitions in %.1f ms; bytes on disk %llu -> %llu\n",
           (unsigned long long)rep.raw_parts, pass_ms, (unsigned long long)before,
           (unsigned long long)after);
    free(dps);
    free(tv);
    free(tags);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return 0;
}
