/* bench_rollup.c -- rollups made by the TSD (tsd.rollups.auto) and queries
 * answered from them (docs/rollups.md).
 *
 * Data: S series of one metric (tag host), one point a minute for D days
 * (random walks, integers and doubles), written with tsdb_put_batch a day
 * at a time, each day flushed (tsdb_flush: the final blocks, and with auto
 * the 1h rollups of every series-hour) in a fresh data dir under $TMPDIR.
 * Figures: ingest + flush seconds with auto on (1h rollups, and 1d ones
 * recomputed from them), and the same data again with auto off (the cost
 * of computing and writing the rollups); then tsdb_rollup_backfill of that
 * auto-off data dir (`octsdb rollup --backfill`); a `sum` `1d-avg` over the
 * whole range answered from the 1d table (ROLLUP_NOFALLBACK) beside the
 * same query forced to raw (ROLLUP_RAW), median of 5 each, and the same for
 * `1d-dev` (from the sums, counts and octsdb's sums of squares), with the points
 * each read; bytes on disk after a full compaction, and again after a
 * retention pass keeping 30 days of raw data (more than 30 days only). The answers of the two
 * queries are compared (avg to 1e-9 relative): the benchmark fails if they differ.
 *
 * The put + flush figures are the process's CPU seconds (every thread, the
 * store's background work included: independent of the machine's load) and
 * the wall seconds, each with the on/off ratio.
 *
 * Usage: bench_rollup [series] [days] [--ingest-only]   (default 100 7; the
 * issue's figure: bench_rollup 100 365, about 52 M points; --ingest-only
 * stops after the put + flush figures) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/benchutil.h"
#include "common/config.h"
#include "common/xmalloc.h"
#include "exec/exec.h"
#include "query/query.h"
#include "tsdb/maint.h"
#include "tsdb/retention.h"
#include "tsdb/rollup.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define T0 1356998400LL /* 2013-01-01 */
#define CONF                                                                                       \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"tsdb-rollup-1h\",\"preAggregationTable\":\"tsdb-rollup-preagg-1h\","             \
    "\"interval\":\"1h\",\"rowSpan\":\"1d\"},"                                                     \
    "{\"table\":\"tsdb-rollup-1d\",\"preAggregationTable\":\"tsdb-rollup-preagg-1d\","             \
    "\"interval\":\"1d\",\"rowSpan\":\"1y\"}]}"

/* raw_keep: tsd.storage.retention.raw, or NULL to keep everything */
static tsdb_t *open_db(const char *dir, int auto_on, const char *raw_keep)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) ||
        oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb) ||
        oct_config_set(cfg, "tsd.rollups.enable", "true", &eb) ||
        oct_config_set(cfg, "tsd.rollups.auto", auto_on ? "true" : "false", &eb) ||
        oct_config_set(cfg, "tsd.rollups.config", CONF, &eb) ||
        (raw_keep && oct_config_set(cfg, "tsd.storage.retention.raw", raw_keep, &eb))) {
        fprintf(stderr, "config: %s\n", eb.msg);
        exit(1);
    }
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) {
        fprintf(stderr, "open: %s\n", eb.msg);
        exit(1);
    }
    oct_config_free(cfg);
    return db;
}

/* Writes the data set; returns the seconds spent in puts and flushes, and
 * the process's CPU seconds meanwhile in *cpu. */
static double load(tsdb_t *db, size_t S, size_t D, uint64_t *n_points, double *cpu)
{
    char(*host)[24] = xcalloc(S, sizeof *host);
    oct_slice_t *tags = xcalloc(2 * S, sizeof *tags);
    double *walk = xcalloc(S, sizeof *walk);
    for (size_t i = 0; i < S; i++) {
        snprintf(host[i], sizeof host[i], "h%05zu", i);
        tags[2 * i] = oct_slice_str("host");
        tags[2 * i + 1] = oct_slice_str(host[i]);
    }
    size_t per_day = S * 1440;
    tsdb_dp_t *dps = xmalloc(per_day * sizeof *dps);
    uint64_t rnd = 42;
    oct_errbuf_t eb;
    double spent = 0;
    *n_points = 0;
    *cpu = 0;
    for (size_t d = 0; d < D; d++) {
        size_t n = 0;
        for (int m = 0; m < 1440; m++)
            for (size_t i = 0; i < S; i++) {
                rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
                walk[i] += (double)((int64_t)(rnd >> 40) % 200 - 100) / 16.0;
                tsdb_dp_t *p = &dps[n++];
                memset(p, 0, sizeof *p);
                p->metric = oct_slice_str("bench.r");
                p->tags = &tags[2 * i];
                p->n_tags = 1;
                p->pt.ts_ms = (T0 + (int64_t)d * 86400 + m * 60) * 1000;
                p->pt.is_float = i % 2;
                if (i % 2)
                    p->pt.val.f = walk[i];
                else
                    p->pt.val.i = (int64_t)walk[i];
            }
        double t0 = bench_now_s(), c0 = bench_cpu_s();
        for (size_t off = 0; off < n; off += 4096) {
            size_t k = n - off < 4096 ? n - off : 4096;
            if (tsdb_put_batch(db, dps + off, k, NULL, NULL, NULL, &eb) != (long)k) {
                fprintf(stderr, "put: %s\n", eb.msg);
                exit(1);
            }
        }
        /* one pass takes at most 256 series-hours per series visited: repeat
         * until the head is empty (every hour final, every rollup written) */
        tsdb_stats_t st;
        do {
            if (tsdb_flush(db, &eb)) {
                fprintf(stderr, "flush: %s\n", eb.msg);
                exit(1);
            }
            tsdb_stats(db, &st);
        } while (st.head_points > 0);
        spent += bench_now_s() - t0;
        *cpu += bench_cpu_s() - c0;
        *n_points += n;
    }
    free(dps);
    free(walk);
    free(tags);
    free(host);
    return spent;
}

typedef struct {
    double sum;
    size_t n;
    double *v;
} qsum_t;

static int on_result(void *ctx, const exec_result_t *r)
{
    qsum_t *q = ctx;
    q->v = xrealloc(q->v, (q->n + r->n_dps) * sizeof *q->v);
    for (size_t i = 0; i < r->n_dps; i++)
        q->v[q->n++] = r->dps[i].is_int ? (double)r->dps[i].v.i : r->dps[i].v.f;
    return 0;
}

static double run_query(tsdb_t *db, size_t D, const char *agg, const char *usage, qsum_t *out,
                        uint64_t *read)
{
    double t[5];
    for (int rep = 0; rep < 5; rep++) {
        query_t q;
        memset(&q, 0, sizeof q);
        oct_errbuf_t eb;
        char m[128];
        snprintf(m, sizeof m, "sum:1d-%s:%s:bench.r", agg, usage);
        if (query_parse_m(&q, m, &eb)) {
            fprintf(stderr, "query: %s\n", eb.msg);
            exit(1);
        }
        q.start_ms = T0 * 1000;
        q.end_ms = (T0 + (int64_t)D * 86400) * 1000 - 1;
        exec_stats_t st;
        free(out->v);
        memset(out, 0, sizeof *out);
        double t0 = bench_now_s();
        if (exec_query(db, &q, NULL, on_result, out, &st, &eb)) {
            fprintf(stderr, "exec: %s\n", eb.msg);
            exit(1);
        }
        t[rep] = bench_now_s() - t0;
        *read = st.raw_points;
        query_free(&q);
    }
    return bench_median(t, 5);
}

static char *mkdir_tmp(void)
{
    const char *tmp = getenv("TMPDIR");
    char *d = xmalloc(4096);
    snprintf(d, 4096, "%s/bench_rollup.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d)) {
        perror("mkdtemp");
        exit(1);
    }
    return d;
}

int main(int argc, char **argv)
{
    size_t S = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    size_t D = argc > 2 ? strtoul(argv[2], NULL, 10) : 7;
    oct_errbuf_t eb;
    char cmd[4200];
    double spent[2], cpu[2];
    /* --ingest-only: the put + flush figures alone (for profiling) */
    int ingest_only = argc > 3 && !strcmp(argv[3], "--ingest-only");
    uint64_t n_points = 0, disk = 0, disk_ret = 0, backfill_cells = 0;
    double backfill_s = 0;
    for (int a = 0; a < 2; a++) {
        char *dir = mkdir_tmp();
        tsdb_t *db = open_db(dir, a == 0, NULL);
        spent[a] = load(db, S, D, &n_points, &cpu[a]);
        /* avg from sum and count; dev also from octsdb's sums of squares */
        static const char *const aggs[] = {"avg", "dev"};
        for (int g = 0; a == 0 && !ingest_only && g < 2; g++) {
            qsum_t ru = {0}, raw = {0};
            uint64_t r_ru = 0, r_raw = 0;
            double t_ru = run_query(db, D, aggs[g], "rollup_nofallback", &ru, &r_ru);
            double t_raw = run_query(db, D, aggs[g], "rollup_raw", &raw, &r_raw);
            if (ru.n != raw.n || ru.n != D) {
                fprintf(stderr, "answers differ: %zu vs %zu points\n", ru.n, raw.n);
                return 1;
            }
            for (size_t i = 0; i < ru.n; i++)
                if (fabs(ru.v[i] - raw.v[i]) > 1e-9 * fmax(1, fabs(raw.v[i]))) {
                    fprintf(stderr, "day %zu: rollup %.17g raw %.17g\n", i, ru.v[i], raw.v[i]);
                    return 1;
                }
            printf("sum 1d-%s over %zu days, %zu series: from 1d rollups %.2f ms (%llu values "
                   "read), raw %.2f ms (%llu points read), %.1fx\n",
                   aggs[g], D, S, t_ru * 1e3, (unsigned long long)r_ru, t_raw * 1e3,
                   (unsigned long long)r_raw, t_raw / t_ru);
            free(ru.v);
            free(raw.v);
        }
        if (a == 0) {
            if (tsdb_compact(db, &eb) || tsdb_disk_usage(db, &disk, &eb)) {
                fprintf(stderr, "disk: %s\n", eb.msg);
                return 1;
            }
            /* the same data dir with 30 days of raw data kept (rollups kept
             * whole), expired as the TSD's pass would at the data's end */
            if (D > 30) {
                tsdb_close(db);
                db = open_db(dir, 1, "30d");
                tsdb_retention_report_t rep;
                if (tsdb_retention_run(db, (T0 + (int64_t)D * 86400) * 1000, 0, &rep, &eb) ||
                    tsdb_compact(db, &eb) || tsdb_disk_usage(db, &disk_ret, &eb)) {
                    fprintf(stderr, "retention: %s\n", eb.msg);
                    return 1;
                }
            }
        }
        if (a == 1 && !ingest_only) {
            /* the auto-off data dir again with auto on: its backfill */
            tsdb_close(db);
            db = open_db(dir, 1, NULL);
            tsdb_rollup_backfill_t o = {.start_ms = 0, .end_ms = INT64_MAX};
            tsdb_rollup_backfill_stats_t bst;
            double t0 = bench_now_s();
            if (tsdb_rollup_backfill(db, &o, &bst, &eb)) {
                fprintf(stderr, "backfill: %s\n", eb.msg);
                return 1;
            }
            backfill_s = bench_now_s() - t0;
            backfill_cells = bst.cells;
        }
        tsdb_close(db);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) return 1;
        free(dir);
    }
    printf("data: %zu series x %zu days of 1-minute points = %llu points\n", S, D,
           (unsigned long long)n_points);
    printf("put + flush, CPU seconds of the process: auto rollups on %.2f s, off %.2f s, "
           "%.2fx\n",
           cpu[0], cpu[1], cpu[0] / cpu[1]);
    printf("put + flush, wall: auto rollups on %.2f s, off %.2f s, %.2fx\n", spent[0], spent[1],
           spent[0] / spent[1]);
    if (ingest_only) return 0;
    printf("backfill of the auto-off data: %.2f s, %llu rollup cells\n", backfill_s,
           (unsigned long long)backfill_cells);
    printf("disk after compaction (raw + 1h and 1d rollups): %.2f MB, %.2f bytes/point\n",
           (double)disk / 1e6, (double)disk / (double)n_points);
    if (disk_ret)
        printf("disk with tsd.storage.retention.raw = 30d (rollups kept): %.2f MB, %.1f%% of the "
               "above\n",
               (double)disk_ret / 1e6, 100.0 * (double)disk_ret / (double)disk);
    return 0;
}
