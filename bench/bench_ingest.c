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
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/benchutil.h"
#include "common/loadgen.h"
#include "common/putgen.h"

typedef struct {
    size_t points, conns, hosts, metrics;
    int mode; /* -1 = all */
    const char *bin;
    int smoke;
} opts_t;

typedef struct {
    int pid, port;
    char dir[256];
    char log[300];
    long rss_start_kb;
} daemon_t;

/* ---- the daemon ------------------------------------------------------- */

static void print_log(const daemon_t *d)
{
    FILE *f = fopen(d->log, "r");
    if (!f) return;
    char line[1024];
    fprintf(stderr, "--- daemon log (%s) ---\n", d->log);
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

static int daemon_start(daemon_t *d, const char *bin)
{
    memset(d, 0, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "/tmp/bench_ingest.XXXXXX");
    if (!mkdtemp(d->dir)) return -1;
    snprintf(d->log, sizeof d->log, "%s.log", d->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        d->port = bench_free_port();
        char port[32], datadir[300];
        snprintf(port, sizeof port, "--port=%d", d->port);
        snprintf(datadir, sizeof datadir, "--datadir=%s", d->dir);
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) dup2(fd, 2);
            int nul = open("/dev/null", O_RDWR);
            if (nul >= 0) {
                dup2(nul, 0);
                dup2(nul, 1);
            }
            execl(bin, bin, "tsd", "--bind=127.0.0.1", port, datadir, "--auto-metric",
                  (char *)NULL);
            _exit(127);
        }
        d->pid = pid;
        for (int i = 0; i < 400; i++) {
            int fd = bench_connect(d->port);
            if (fd >= 0) {
                close(fd);
                d->rss_start_kb = bench_proc_status_kb(d->pid, "VmRSS");
                return 0;
            }
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                d->pid = 0;
                break;
            }
            bench_sleep_ms(50);
        }
        if (d->pid) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
            d->pid = 0;
        }
    }
    print_log(d);
    return -1;
}

static void daemon_stop(daemon_t *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        int st;
        for (int i = 0; i < 600 && waitpid(d->pid, &st, WNOHANG) != d->pid; i++)
            bench_sleep_ms(50);
        if (kill(d->pid, 0) == 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
        }
        d->pid = 0;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", d->dir, d->log);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", d->dir);
}

/* ---- asking the daemon ---------------------------------------------------- */

/* POST /api/put?sync=true with one point; returns the status or -1. */
static int sync_put(int port)
{
    int fd = bench_connect(port);
    if (fd < 0) return -1;
    const char *body = "{\"metric\":\"bench.sync\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"bench\"}}";
    char req[512];
    int n = snprintf(req, sizeof req,
                     "POST /api/put?sync=true&sync_timeout=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(body), body);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[4096];
    size_t got = 0;
    while (got + 1 < sizeof buf) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 60000) <= 0) break;
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n")) break;
    }
    close(fd);
    if (got < 12) return -1;
    buf[got] = '\0';
    return atoi(buf + 9);
}

/* ---- one mode --------------------------------------------------------- */

static int run_mode(const opts_t *o, loadgen_mode_t mode)
{
    const char *name = loadgen_mode_name(mode);
    daemon_t d;
    if (daemon_start(&d, o->bin) < 0) {
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
    int st = sync_put(d.port);
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
    if (rc) print_log(&d);
    loadgen_payloads_free(pl, o->conns);
    free(pl);
    free(jobs);
    daemon_stop(&d);
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
