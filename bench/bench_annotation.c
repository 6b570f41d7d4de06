/* bench_annotation.c -- annotation puts (note + index row) and searches over
 * the annotation index (tsdb_annotation_put, tsdb_annotation_search).
 *
 * Writes N notes (default 20000) over 200 series into a fresh data dir
 * (ms start times: a seconds time divisible by 1000 would hit 2.4's
 * qualifier quirk, docs/format/annotations.md), then times searches that
 * read the whole index: a term matching one note in ten, the same paged to
 * 25, and a TSUID glob that matches none (so it reads no note). Prints
 * puts/s and ms per search, medians of 5 runs. A program that prints
 * figures, not a test.
 *   bench_annotation [N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/benchutil.h"
#include "common/config.h"
#include "tsdb/annotation.h"
#include "tsdb/tsdb.h"

#define RUNS 5

static int count_cb(void *ctx, const char *json, size_t len)
{
    (void)json;
    *(size_t *)ctx += len;
    return 0;
}

static double search_ms(tsdb_t *db, const char *q, size_t limit, size_t *total)
{
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        size_t bytes = 0;
        oct_errbuf_t eb;
        double t0 = bench_now_s();
        if (tsdb_annotation_search(db, q, 0, limit, count_cb, &bytes, total, &eb)) {
            fprintf(stderr, "search %s: %s\n", q, eb.msg);
            exit(1);
        }
        v[r] = (bench_now_s() - t0) * 1e3;
    }
    return bench_median(v, RUNS);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000;
    char dir[] = "/tmp/bench_annotation.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    tsdb_t *db;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) || tsdb_open(cfg, 0, &db, &eb)) {
        fprintf(stderr, "open: %s\n", eb.msg);
        return 1;
    }
    double t0 = bench_now_s();
    for (long i = 0; i < n; i++) {
        uint8_t tsuid[9] = {0, 0, 1, 0, 0, 1, 0, (uint8_t)(i % 200 >> 8), (uint8_t)(i % 200)};
        char desc[64];
        snprintf(desc, sizeof desc, "%s %ld", i % 10 ? "routine" : "deploy", i);
        tsdb_annotation_t a = {tsuid,   sizeof tsuid, 1356998400001 + i * 997, 0, desc,
                               "bench", NULL};
        if (tsdb_annotation_put(db, &a, &eb)) {
            fprintf(stderr, "put: %s\n", eb.msg);
            return 1;
        }
    }
    double put_s = bench_now_s() - t0;
    size_t t1, t2, t3;
    double a = search_ms(db, "deploy", 0, &t1);
    double b = search_ms(db, "deploy", 25, &t2);
    double c = search_ms(db, "tsuid:FF*", 0, &t3);
    printf("bench_annotation: %ld notes over 200 series, median of %d searches\n", n, RUNS);
    printf("  put (note + index)     %10.0f puts/s\n", n / put_s);
    printf("  search 'deploy'        %10.2f ms  (%zu matches)\n", a, t1);
    printf("  same, limit 25         %10.2f ms  (%zu matches)\n", b, t2);
    printf("  search 'tsuid:FF*'     %10.2f ms  (%zu matches, no note read)\n", c, t3);
    tsdb_close(db);
    oct_config_free(cfg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) ? 1 : 0;
}
