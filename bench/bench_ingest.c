/* bench_ingest.c -- the ingest load generator: a pre-generated realistic
 * data set written to the real daemon as fast as its sockets take it.
 *
 * Usage: bench_ingest [--points N] [--conns N] [--mode M] [--hosts N]
 *                     [--metrics N] [--bin PATH] [--smoke]
 *   --points   points per mode (default 1000000)
 *   --conns    parallel connections (default 4)
 *   --mode     telnet | json50 | json500 | json50gz | json500gz | all (default all)
 *   --hosts, --metrics   the fleet: hosts x metrics series, 8 tags each
 *              (default 1000 x 20 = 20000 series)
 *   --bin      the octsdb binary (default $OCTSDB_BIN, else ./octsdb next to this program)
 *   --smoke    a tiny run of every mode (seconds); exits non-zero on any loss
 *
 * For each mode: starts `octsdb tsd --auto-metric` on a free loopback port
 * with a fresh temp data dir, generates the data set (bench/common/putgen.h:
 * host, region, datacenter, rack, os, arch, team, service tags; 10 s rounds;
 * datagen values) and splits it by host over the connections, then starts
 * the clock and sends (the shared sender, bench/common/loadgen.h):
 *   telnet     `put` lines, then `version`, whose reply comes after every
 *              put of that connection has been handed to the write path;
 *   jsonN      POST /api/put with JSON arrays of N points, keep-alive, up to
 *              16 requests in flight per connection; 204 = all accepted;
 *   jsonNgz    the same bodies with Content-Encoding: gzip.
 * "accepted" is when every connection has its final answer; the daemon's
 * own count (telnet `stats`, tsd.datapoints.added) must then equal the
 * points sent. "durable" is when a following POST /api/put?sync=true
 * returns: the write-ahead log is in order, so its sync covers every point
 * before it. Also printed: the daemon's peak RSS (VmHWM) in total and per
 * active series, above the RSS it had when it started listening.
 * The client runs on the same machine and takes CPU from the daemon. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/benchutil.h"
#include "common/loadgen.h"
#include "common/putgen.h"
#include "common/tsdproc.h"

typedef struct {
    size_t points, conns, hosts, metrics;
    int mode; /* -1 = all */
    const char *bin;
    int smoke;
} opts_t;

/* ---- one mode --------------------------------------------------------- */

static int run_mode(const opts_t *o, loadgen_mode_t mode)
{
    const char *name = loadgen_mode_name(mode);
    tsdproc_t d;
    if (tsdproc_start(&d, o->bin, "bench_ingest", NULL) < 0) {
        fprintf(stderr, "%s: could not start %s\n", name, o->bin);
        return -1;
    }
    size_t series = o->hosts * o->metrics;
    putgen_cfg_t cfg = {.seed = 42,
                        .hosts = o->hosts,
                        .metrics = o->metrics,
                        .start_s = 1700000000,
                        .interval_s = 10};
    loadgen_payload_t *pl = calloc(o->conns, sizeof *pl);
    loadgen_conn_t *jobs = calloc(o->conns, sizeof *jobs);
    double tg = bench_now_s();
    loadgen_build(&cfg, mode, o->conns, (o->points + series - 1) / series, o->points, pl);
    size_t bytes = 0, total = 0;
    for (size_t c = 0; c < o->conns; c++) {
        bytes += pl[c].data.len;
        total += pl[c].points;
        jobs[c].pl = &pl[c];
        jobs[c].port = d.port;
        jobs[c].http = mode != LOADGEN_TELNET;
        jobs[c].telnet_end = LOADGEN_TELNET_VERSION;
        jobs[c].ok_status = 204; /* octsdb: 204 = every point accepted */
        jobs[c].timeout_ms = 30000;
    }
    double gen_s = bench_now_s() - tg;

    double t0 = bench_now_s();
    loadgen_totals_t tot = {0};
    int rc = 0;
    if (loadgen_start(jobs, o->conns) < 0) {
        fprintf(stderr, "%s: cannot start the senders\n", name);
        rc = -1;
    } else {
        loadgen_join(jobs, o->conns, &tot);
    }
    double t_acc = tot.last_s > t0 ? tot.last_s : t0;
    long long added = bench_octsdb_points_added(d.port);
    double t_before_sync = bench_now_s();
    int st = tsdproc_sync_put(d.port);
    double t_dur = bench_now_s();
    long hwm = bench_proc_status_kb(d.pid, "VmHWM");

    double acc_s = t_acc - t0;
    if (series > total) series = total;
    printf("%-10s %9zu pts %7.1f MB %3zux  accepted %10.0f pts/s (%6.2f s)", name, total,
           (double)bytes / 1e6, o->conns, (double)total / acc_s, acc_s);
    if (st == 200 || st == 204)
        printf("  durable %10.0f pts/s (+%.3f s sync)", (double)total / (t_dur - t0),
               t_dur - t_before_sync);
    else
        printf("  durable n/a (sync put: %d)", st);
    printf("  peak RSS %6.1f MB, %5.0f B/series above start\n", (double)hwm / 1024.0,
           (double)(hwm - d.rss_start_kb) * 1024.0 / (double)(series ? series : 1));
    if (o->smoke)
        printf("           (generated in %.2f s; daemon count %lld; %zu ok, %zu failed)\n", gen_s,
               added, tot.ok, tot.failed);

    if (tot.err) {
        fprintf(stderr, "%s: connection error: %s\n", name, strerror(tot.err));
        rc = -1;
    }
    if (tot.failed) {
        fprintf(stderr, "%s: %zu %s rejected\n", name, tot.failed,
                mode == LOADGEN_TELNET ? "lines" : "requests");
        rc = -1;
    }
    if (added != (long long)total) {
        fprintf(stderr, "%s: the daemon counts %lld points added, %zu were sent\n", name, added,
                total);
        rc = -1;
    }
    if (rc) tsdproc_print_log(&d);
    loadgen_payloads_free(pl, o->conns);
    free(pl);
    free(jobs);
    tsdproc_stop(&d);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o = {.points = 1000000, .conns = 4, .hosts = 1000, .metrics = 20, .mode = -1};
    o.bin = bench_octsdb_bin(argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            o.smoke = 1;
            o.points = 20000;
            o.conns = 2;
            o.hosts = 50;
        } else if (!strcmp(a, "--points") && v) {
            o.points = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--conns") && v) {
            o.conns = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--hosts") && v) {
            o.hosts = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--metrics") && v) {
            o.metrics = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--bin") && v) {
            o.bin = v;
            i++;
        } else if (!strcmp(a, "--mode") && v) {
            o.mode = -2;
            for (int m = 0; m < LOADGEN_N_MODES; m++)
                if (!strcmp(v, loadgen_mode_name((loadgen_mode_t)m))) o.mode = m;
            if (!strcmp(v, "all")) o.mode = -1;
            if (o.mode == -2) {
                fprintf(stderr, "unknown mode '%s'\n", v);
                return 2;
            }
            i++;
        } else {
            fprintf(stderr,
                    "usage: %s [--points N] [--conns N] [--mode telnet|json50|json500|json50gz|"
                    "json500gz|all] [--hosts N] [--metrics N] [--bin PATH] [--smoke]\n",
                    argv[0]);
            return 2;
        }
    }
    if (o.conns < 1) o.conns = 1;
    if (o.hosts < o.conns) o.hosts = o.conns;
    if (o.metrics < 1) o.metrics = 1;
    if (o.metrics > putgen_max_metrics()) o.metrics = putgen_max_metrics();
    struct stat sb;
    if (stat(o.bin, &sb) < 0) {
        fprintf(stderr, "octsdb binary not found: %s (set $OCTSDB_BIN or --bin)\n", o.bin);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    printf("ingest: %zu hosts x %zu metrics = %zu series, 8 tags each, 10 s rounds; %zu points "
           "per mode over %zu connections\n",
           o.hosts, o.metrics, o.hosts * o.metrics, o.points, o.conns);
    int rc = 0;
    for (int m = 0; m < LOADGEN_N_MODES; m++)
        if (o.mode == -1 || o.mode == m)
            if (run_mode(&o, (loadgen_mode_t)m) < 0) rc = 1;
    return rc;
}
