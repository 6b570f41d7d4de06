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
 * the clock and sends:
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
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/benchutil.h"
#include "common/putgen.h"

#define HTTP_WINDOW 16

enum { MODE_TELNET, MODE_JSON50, MODE_JSON500, MODE_JSON50GZ, MODE_JSON500GZ, N_MODES };

static const char *const mode_names[N_MODES] = {"telnet", "json50", "json500", "json50gz",
                                                "json500gz"};

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

/* ---- one connection's work ---------------------------------------------- */

typedef struct {
    int port;
    int http;
    putgen_buf_t data; /* everything this connection sends */
    size_t *req_end;   /* http: end offset of each request */
    size_t n_req;
    size_t points;
    /* results */
    size_t ok, failed; /* http: 204s / others; telnet: error lines */
    double done;
    int err;
} conn_job_t;

/* Telnet: write everything, then `version`; read replies all along so the
 * daemon never has to drop them; done when the version text arrives. */
static void run_telnet(conn_job_t *j, int fd)
{
    putgen_append(&j->data, "version\n", 8);
    size_t off = 0;
    char in[65536];
    size_t inlen = 0;
    int got_version = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (!got_version) {
        struct pollfd p = {fd, (short)(POLLIN | (off < j->data.len ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 30000) <= 0) {
            j->err = ETIMEDOUT;
            return;
        }
        if ((p.revents & POLLOUT) && off < j->data.len) {
            ssize_t w = write(fd, j->data.ptr + off, j->data.len - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                return;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(fd, in + inlen, sizeof in - 1 - inlen);
            if (r == 0) {
                j->err = ECONNRESET;
                return;
            }
            if (r < 0) {
                if (errno == EAGAIN) continue;
                j->err = errno;
                return;
            }
            inlen += (size_t)r;
            in[inlen] = '\0';
            /* count complete error lines, keep the partial tail */
            char *line = in, *nl;
            while ((nl = strchr(line, '\n'))) {
                if (!strncmp(line, "put:", 4)) j->failed++;
                if (!strncmp(line, "Built on ", 9)) got_version = 1;
                line = nl + 1;
            }
            inlen = (size_t)(in + inlen - line);
            memmove(in, line, inlen);
        }
    }
    j->ok = j->points - j->failed;
}

/* One complete HTTP response at the start of buf? Returns its length (0 if
 * incomplete) and its status. */
static size_t http_response_len(const char *buf, size_t n, int *status)
{
    const char *hend = memmem(buf, n, "\r\n\r\n", 4);
    if (!hend) return 0;
    size_t hlen = (size_t)(hend - buf) + 4;
    *status = n > 12 ? atoi(buf + 9) : 0;
    size_t clen = 0;
    for (const char *p = buf; p < hend; p++) {
        if ((p == buf || p[-1] == '\n') && !strncasecmp(p, "Content-Length:", 15)) {
            clen = strtoull(p + 15, NULL, 10);
            break;
        }
    }
    return n >= hlen + clen ? hlen + clen : 0;
}

static void run_http(conn_job_t *j, int fd)
{
    size_t off = 0, answered = 0;
    size_t cap = 1 << 20;
    char *in = malloc(cap);
    size_t inlen = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (answered < j->n_req) {
        /* write only whole requests inside the window of unanswered ones */
        size_t last = answered + HTTP_WINDOW < j->n_req ? answered + HTTP_WINDOW : j->n_req;
        size_t limit = j->req_end[last - 1];
        struct pollfd p = {fd, (short)(POLLIN | (off < limit ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 30000) <= 0) {
            j->err = ETIMEDOUT;
            break;
        }
        if ((p.revents & POLLOUT) && off < limit) {
            ssize_t w = write(fd, j->data.ptr + off, limit - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                break;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (inlen + 65536 > cap) {
                cap *= 2;
                in = realloc(in, cap);
            }
            ssize_t r = read(fd, in + inlen, cap - inlen);
            if (r == 0) {
                j->err = ECONNRESET;
                break;
            }
            if (r < 0) {
                if (errno == EAGAIN) continue;
                j->err = errno;
                break;
            }
            inlen += (size_t)r;
            size_t used = 0, l;
            int status;
            while ((l = http_response_len(in + used, inlen - used, &status)) > 0) {
                if (status == 204)
                    j->ok++;
                else {
                    if (j->failed == 0) fprintf(stderr, "HTTP %d: %.300s\n", status, in + used);
                    j->failed++;
                }
                answered++;
                used += l;
            }
            memmove(in, in + used, inlen - used);
            inlen -= used;
        }
    }
    free(in);
}

static void *conn_thread(void *arg)
{
    conn_job_t *j = arg;
    int fd = bench_connect(j->port);
    if (fd < 0) {
        j->err = errno;
        return NULL;
    }
    if (j->http)
        run_http(j, fd);
    else
        run_telnet(j, fd);
    j->done = bench_now_s();
    close(fd);
    return NULL;
}

/* ---- building the data set ---------------------------------------------- */

static void build_jobs(const opts_t *o, int mode, conn_job_t *jobs, int port)
{
    size_t series = o->hosts * o->metrics;
    size_t rounds = (o->points + series - 1) / series;
    size_t batch = (mode == MODE_JSON50 || mode == MODE_JSON50GZ) ? 50 : 500;
    int gz = mode == MODE_JSON50GZ || mode == MODE_JSON500GZ;
    putgen_cfg_t cfg = {.seed = 42,
                        .hosts = o->hosts,
                        .metrics = o->metrics,
                        .start_s = 1700000000,
                        .interval_s = 10};
    size_t left = o->points;
    for (size_t c = 0; c < o->conns; c++) {
        conn_job_t *j = &jobs[c];
        memset(j, 0, sizeof *j);
        j->port = port;
        j->http = mode != MODE_TELNET;
        size_t lo = o->hosts * c / o->conns, hi = o->hosts * (c + 1) / o->conns;
        putgen_t *g = putgen_new(&cfg, lo, hi);
        size_t n = putgen_series(g) * rounds;
        if (n > left || c == o->conns - 1) n = left;
        left -= n;
        j->points = n;
        putgen_point_t pt;
        if (!j->http) {
            for (size_t i = 0; i < n; i++) {
                putgen_next(g, &pt);
                putgen_append_telnet(&j->data, &pt);
            }
        } else {
            putgen_buf_t body = {0}, zbody = {0};
            size_t cap_req = n / batch + 2;
            j->req_end = malloc(cap_req * sizeof(*j->req_end));
            for (size_t i = 0; i < n;) {
                body.len = 0;
                putgen_append(&body, "[", 1);
                size_t k;
                for (k = 0; k < batch && i < n; k++, i++) {
                    if (k) putgen_append(&body, ",", 1);
                    putgen_next(g, &pt);
                    putgen_append_json(&body, &pt);
                }
                putgen_append(&body, "]", 1);
                const putgen_buf_t *b = &body;
                if (gz) {
                    if (putgen_gzip(body.ptr, body.len, &zbody) < 0) abort();
                    b = &zbody;
                }
                char hdr[256];
                int hl = snprintf(hdr, sizeof hdr,
                                  "POST /api/put HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                  "Content-Type: application/json\r\n%s"
                                  "Content-Length: %zu\r\n\r\n",
                                  gz ? "Content-Encoding: gzip\r\n" : "", b->len);
                putgen_append(&j->data, hdr, (size_t)hl);
                putgen_append(&j->data, b->ptr, b->len);
                j->req_end[j->n_req++] = j->data.len;
            }
            putgen_buf_free(&body);
            putgen_buf_free(&zbody);
        }
        putgen_free(g);
    }
}

/* ---- asking the daemon ---------------------------------------------------- */

/* tsd.datapoints.added from the telnet `stats`, or -1. */
static long long stats_points_added(int port)
{
    int fd = bench_connect(port);
    if (fd < 0) return -1;
    const char *req = "stats\nversion\n";
    if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
        close(fd);
        return -1;
    }
    char buf[65536];
    size_t n = 0;
    double t0 = bench_now_s();
    buf[0] = '\0';
    while (!strstr(buf, "Built on ") && n + 1 < sizeof buf && bench_now_s() - t0 < 10) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0) continue;
        ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = '\0';
    }
    close(fd);
    const char *l = strstr(buf, "tsd.datapoints.added ");
    long long ts, v;
    if (!l || sscanf(l, "tsd.datapoints.added %lld %lld", &ts, &v) != 2) return -1;
    return v;
}

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

static int run_mode(const opts_t *o, int mode)
{
    daemon_t d;
    if (daemon_start(&d, o->bin) < 0) {
        fprintf(stderr, "%s: could not start %s\n", mode_names[mode], o->bin);
        return -1;
    }
    conn_job_t *jobs = calloc(o->conns, sizeof *jobs);
    double tg = bench_now_s();
    build_jobs(o, mode, jobs, d.port);
    size_t bytes = 0, total = 0;
    for (size_t c = 0; c < o->conns; c++) {
        bytes += jobs[c].data.len;
        total += jobs[c].points;
    }
    double gen_s = bench_now_s() - tg;

    pthread_t *th = calloc(o->conns, sizeof *th);
    double t0 = bench_now_s();
    for (size_t c = 0; c < o->conns; c++)
        pthread_create(&th[c], NULL, conn_thread, &jobs[c]);
    for (size_t c = 0; c < o->conns; c++)
        pthread_join(th[c], NULL);
    double t_acc = t0;
    size_t ok = 0, failed = 0;
    int err = 0;
    for (size_t c = 0; c < o->conns; c++) {
        if (jobs[c].done > t_acc) t_acc = jobs[c].done;
        ok += jobs[c].ok;
        failed += jobs[c].failed;
        if (jobs[c].err) err = jobs[c].err;
    }
    long long added = stats_points_added(d.port);
    double t_before_sync = bench_now_s();
    int st = sync_put(d.port);
    double t_dur = bench_now_s();
    long hwm = bench_proc_status_kb(d.pid, "VmHWM");

    double acc_s = t_acc - t0;
    size_t series = o->hosts * o->metrics;
    if (series > total) series = total;
    printf("%-10s %9zu pts %7.1f MB %3zux  accepted %10.0f pts/s (%6.2f s)", mode_names[mode],
           total, (double)bytes / 1e6, o->conns, (double)total / acc_s, acc_s);
    if (st == 200 || st == 204)
        printf("  durable %10.0f pts/s (+%.3f s sync)", (double)total / (t_dur - t0),
               t_dur - t_before_sync);
    else
        printf("  durable n/a (sync put: %d)", st);
    printf("  peak RSS %6.1f MB, %5.0f B/series above start\n", (double)hwm / 1024.0,
           (double)(hwm - d.rss_start_kb) * 1024.0 / (double)(series ? series : 1));
    if (o->smoke)
        printf("           (generated in %.2f s; daemon count %lld; %zu ok, %zu failed)\n", gen_s,
               added, ok, failed);

    int rc = 0;
    if (err) {
        fprintf(stderr, "%s: connection error: %s\n", mode_names[mode], strerror(err));
        rc = -1;
    }
    if (failed) {
        fprintf(stderr, "%s: %zu %s rejected\n", mode_names[mode], failed,
                mode == MODE_TELNET ? "lines" : "requests");
        rc = -1;
    }
    if (added != (long long)total) {
        fprintf(stderr, "%s: the daemon counts %lld points added, %zu were sent\n",
                mode_names[mode], added, total);
        rc = -1;
    }
    if (rc) print_log(&d);
    for (size_t c = 0; c < o->conns; c++) {
        putgen_buf_free(&jobs[c].data);
        free(jobs[c].req_end);
    }
    free(jobs);
    free(th);
    daemon_stop(&d);
    return rc;
}

static const char *default_bin(const char *argv0)
{
    const char *e = getenv("OCTSDB_BIN");
    if (e && *e) return e;
    static char path[4096];
    const char *slash = strrchr(argv0, '/');
    if (slash)
        snprintf(path, sizeof path, "%.*s/octsdb", (int)(slash - argv0), argv0);
    else
        snprintf(path, sizeof path, "./octsdb");
    return path;
}

int main(int argc, char **argv)
{
    opts_t o = {.points = 1000000, .conns = 4, .hosts = 1000, .metrics = 20, .mode = -1};
    o.bin = default_bin(argv[0]);
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
            for (int m = 0; m < N_MODES; m++)
                if (!strcmp(v, mode_names[m])) o.mode = m;
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
    for (int m = 0; m < N_MODES; m++)
        if (o.mode == -1 || o.mode == m)
            if (run_mode(&o, m) < 0) rc = 1;
    return rc;
}
