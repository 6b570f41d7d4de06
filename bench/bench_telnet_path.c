/* bench_telnet_path.c -- CPU per telnet `put` point through the daemon's own
 * code path, without sockets: telnet session, batching, tsdb_put_batch, the
 * WAL thread and the head, over a real tsdb in a temp dir.
 *
 * Usage: bench_telnet_path [hosts=1000] [runs=7] [rounds_per_run=5]
 *
 * Generates hosts x 20 metrics series with 8 tags (bench/common/putgen.h,
 * 10 s rounds). The first round creates every series and is not timed;
 * each run then feeds rounds_per_run further rounds (new timestamps, so
 * every point is new: no duplicates) in 256 KiB reads, as the transport
 * hands them over (telnet_line_stable: no copy, as the transport does),
 * flushing the session after each read. Prints the median
 * over the runs of the process CPU time (every thread: the WAL writer and
 * flusher included) and of the wall time per point. Meant for A/B
 * comparisons of the hot path on a shared machine, where CPU time is far
 * steadier than a socket benchmark's points per second. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/benchutil.h"
#include "common/config.h"
#include "common/err.h"
#include "common/putgen.h"
#include "common/strbuf.h"
#include "server/telnet.h"
#include "server/tsd.h"
#include "tsdb/tsdb.h"

#define MAX_RUNS 64
#define READ_SZ  (256u * 1024u)

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Feeds [p, end) as reads of READ_SZ cut at line ends; returns the reply bytes. */
static size_t feed(telnet_session_t *s, const char *p, const char *end, oct_strbuf_t *out)
{
    size_t replies = 0;
    while (p < end) {
        const char *stop = p + READ_SZ < end ? p + READ_SZ : end;
        while (p < stop) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) nl = end;
            (void)telnet_line_stable(s, p, (size_t)(nl - p), out);
            p = nl + 1;
        }
        telnet_flush(s, out);
        replies += out->len;
        oct_strbuf_reset(out);
    }
    return replies;
}

int main(int argc, char **argv)
{
    size_t hosts = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    size_t per_run = argc > 3 ? strtoull(argv[3], NULL, 10) : 5;
    if (hosts < 1) hosts = 1;
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;
    if (per_run < 1) per_run = 1;
    size_t metrics = 20, series = hosts * metrics;

    putgen_cfg_t cfg = {
        .seed = 42, .hosts = hosts, .metrics = metrics, .start_s = 1700000000, .interval_s = 10};
    putgen_t *g = putgen_new(&cfg, 0, hosts);
    putgen_buf_t text = {0};
    putgen_point_t pt;
    size_t n_rounds = 1 + (size_t)runs * per_run;
    size_t *round_off = malloc((n_rounds + 1) * sizeof *round_off);
    for (size_t r = 0; r < n_rounds; r++) {
        round_off[r] = text.len;
        for (size_t i = 0; i < series; i++) {
            putgen_next(g, &pt);
            putgen_append_telnet(&text, &pt);
        }
    }
    round_off[n_rounds] = text.len;
    putgen_free(g);
    printf("bench_telnet_path: %zu series (8 tags), %d runs of %zu points, %.1f bytes/line\n",
           series, runs, series * per_run, (double)text.len / (double)(series * n_rounds));

    char dir[] = "/tmp/bench_telnet_path.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    tsdb_t *db = NULL;
    if (oct_config_set(c, "tsd.storage.data_dir", dir, &eb) < 0 ||
        oct_config_set(c, "tsd.core.auto_create_metrics", "true", &eb) < 0 ||
        tsdb_open(c, 0, &db, &eb) < 0) {
        fprintf(stderr, "tsdb_open: %s\n", eb.msg);
        return 1;
    }
    static tsd_ctx_t tsd; /* counters are atomics: zero-initialised statically */
    tsd.db = db;
    tsd.cfg = c;
    snprintf(tsd.hostname, sizeof tsd.hostname, "bench");
    telnet_session_t *s = telnet_session_new(&tsd);
    oct_strbuf_t out = OCT_STRBUF_INIT;

    int rc = 0;
    double c0 = cpu_s(), w0 = bench_now_s();
    if (feed(s, text.ptr + round_off[0], text.ptr + round_off[1], &out)) rc = 1;
    printf("  first round (creates %zu series): %.0f ns CPU, %.0f ns wall per point\n", series,
           (cpu_s() - c0) / (double)series * 1e9, (bench_now_s() - w0) / (double)series * 1e9);
    double rc_cpu[MAX_RUNS], rc_wall[MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        size_t a = round_off[1 + (size_t)r * per_run], b = round_off[1 + (size_t)(r + 1) * per_run];
        c0 = cpu_s();
        w0 = bench_now_s();
        if (feed(s, text.ptr + a, text.ptr + b, &out)) rc = 1;
        rc_cpu[r] = (cpu_s() - c0) / (double)(series * per_run) * 1e9;
        rc_wall[r] = (bench_now_s() - w0) / (double)(series * per_run) * 1e9;
    }
    if (rc) fprintf(stderr, "the session replied: some points were refused\n");
    printf("  per point (median of %d): %.0f ns CPU, %.0f ns wall\n", runs,
           bench_median(rc_cpu, (size_t)runs), bench_median(rc_wall, (size_t)runs));

    oct_strbuf_free(&out);
    telnet_session_free(s);
    tsdb_close(db);
    oct_config_free(c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    free(round_off);
    putgen_buf_free(&text);
    return rc;
}
