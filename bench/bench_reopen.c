/* bench_reopen.c -- what remembering the hours not final costs
 * (docs/rollups.md, "Hours left open by a stop or a crash"): the clean
 * stop's pass writing one block per open series-hour and, before it, one
 * open-rows registry entry each; the next open reading them back into one
 * empty head bucket each; and the final flush of those hours deleting them.
 *
 * Data: S series of one metric (tag host), P points each in the last hour
 * that ended, in a fresh data dir under $TMPDIR, opened with
 * tsd.storage.head.grace_ms = 2 h so that the hour stays open. Steps:
 * put; close (the stop: S blocks not final, S entries); open again (S
 * buckets from the registry); close and open with a grace of 0 and a flush
 * (the hour closes: S compactions, S entries deleted).
 * Figures: the process's CPU seconds of each step (every thread, the
 * store's background work included) and the wall seconds. For the
 * registry's own share run it under valgrind --tool=callgrind and compare
 * the inclusive cost of tw_shared_mark with tw_flush_pass, and of
 * tw_open_rows_reopen with tsdb_open.
 *
 * Usage: bench_reopen [series] [points]   (default 100000 10) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/benchutil.h"
#include "common/config.h"
#include "common/xmalloc.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

static tsdb_t *open_db(const char *dir, const char *grace_ms)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) ||
        oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb) ||
        oct_config_set(cfg, "tsd.storage.head.grace_ms", grace_ms, &eb)) {
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

static double g_t, g_c;
static void lap(const char *what)
{
    double t = bench_now_s(), c = bench_cpu_s();
    if (what) printf("%-44s %8.3f CPU s %8.3f wall s\n", what, c - g_c, t - g_t);
    g_t = t;
    g_c = c;
}

int main(int argc, char **argv)
{
    size_t S = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    size_t P = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
    if (!S || !P || P > 3600) {
        fprintf(stderr, "usage: bench_reopen [series] [points <= 3600]\n");
        return 2;
    }
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/bench_reopen.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    tsdb_t *db = open_db(dir, "7200000");
    /* the last hour that ended: open under a grace of 2 h, closed under 0 */
    int64_t now = (int64_t)time(NULL), hour = now - now % 3600 - 3600;
    char(*host)[24] = xcalloc(S, sizeof *host);
    oct_slice_t *tags = xcalloc(2 * S, sizeof *tags);
    tsdb_dp_t *dps = xcalloc(S * P, sizeof *dps);
    size_t n = 0;
    for (size_t i = 0; i < S; i++) {
        snprintf(host[i], sizeof host[i], "h%06zu", i);
        tags[2 * i] = oct_slice_str("host");
        tags[2 * i + 1] = oct_slice_str(host[i]);
        for (size_t k = 0; k < P; k++) {
            tsdb_dp_t *p = &dps[n++];
            p->metric = oct_slice_str("bench.o");
            p->tags = &tags[2 * i];
            p->n_tags = 1;
            p->pt.ts_ms = (hour + (int64_t)(k * 3600 / P)) * 1000;
            p->pt.val.i = (int64_t)(i + k);
        }
    }
    oct_errbuf_t eb;
    lap(NULL);
    for (size_t off = 0; off < n; off += 4096) {
        size_t k = n - off < 4096 ? n - off : 4096;
        if (tsdb_put_batch(db, dps + off, k, NULL, NULL, NULL, &eb) != (long)k) {
            fprintf(stderr, "put: %s\n", eb.msg);
            return 1;
        }
    }
    lap("put");
    tsdb_close(db);
    lap("close: blocks not final + registry entries");
    db = open_db(dir, "7200000");
    lap("open: registry read back into buckets");
    tsdb_close(db);
    lap("close again (nothing to write)");
    db = open_db(dir, "0");
    lap("open with grace 0");
    if (tsdb_flush(db, &eb)) {
        fprintf(stderr, "flush: %s\n", eb.msg);
        return 1;
    }
    lap("flush: the hours final, entries deleted");
    tsdb_close(db);
    lap("close");
    printf("%zu series x %zu points\n", S, P);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    free(dps);
    free(tags);
    free(host);
    return 0;
}
