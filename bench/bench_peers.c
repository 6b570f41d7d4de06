/* bench_peers.c -- octsdb side by side with VictoriaMetrics and InfluxDB:
 * ingest, CPU, memory, disk, new-series rate and query latency, one table.
 *
 * Usage: bench_peers [--hosts N] [--metrics N] [--hours H] [--conns N]
 *                    [--new-series N] [--reps N] [--octsdb PATH] [--vm PATH]
 *                    [--influx PATH] [--out FILE] [--smoke]
 *   --hosts/--metrics/--hours  the data set: hosts x metrics series with 8
 *              tags each (bench/common/putgen.h), one point per series every
 *              10 s for H hours (default 1000 x 10 x 0.25 h = 900,000 points;
 *              the full scale is --hours 6: 21.6 M points)
 *   --conns    parallel sending connections (default 4)
 *   --new-series  points of the new-series run, each one a new series (default 20000)
 *   --reps     runs of each query (default 30)
 *   --octsdb   the octsdb binary (default $OCTSDB_BIN, else ./octsdb next to this program)
 *   --vm, --influx  the peers' binaries (victoria-metrics, influxd); a peer
 *              without a binary is left out of the table
 *   --out      also write the table as Markdown to FILE, with the machine
 *   --smoke    a tiny run of octsdb alone (seconds): every figure, no peers
 *
 * Design: the data set is generated once per mode as the exact bytes that go
 * on the wire (telnet `put` lines; POST /api/put requests with JSON arrays of
 * 50 and 500 points, plain and gzip'd), split by host over the connections,
 * and the same bytes are sent to every system, each started fresh on
 * 127.0.0.1 with an empty data dir and stopped by its PID. The clock stops
 * when the system itself reports every point stored, not when the sender is
 * done: octsdb's tsd.datapoints.added (telnet `stats`) and then a query
 * counting every point (sum of 0all-count per metric); VictoriaMetrics'
 * vm_rows_added_to_storage_total (/metrics); InfluxDB's SELECT count(value).
 * CPU seconds are utime+stime of the system's process (/proc/<pid>/stat) over
 * the ingest; peak RSS is VmHWM, and RSS per series is VmHWM minus the RSS
 * when it started listening, over the number of series. Disk is the
 * allocated size (st_blocks, as du) of the data dir after a clean stop,
 * which flushes octsdb's head and VictoriaMetrics' in-memory parts (InfluxDB
 * keeps its WAL until a cache snapshot: counted as it lies). Queries run on
 * the telnet data set with equivalent PromQL for VictoriaMetrics (its result
 * cache is off so repeated runs compute); each is run --reps times over a
 * fresh connection, median and p99 reported. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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
#define START_S     1700000000LL
#define MAX_QUERIES 8

enum { SYS_OCTSDB, SYS_VM, SYS_INFLUX, N_SYS };
static const char *const sys_names[N_SYS] = {"octsdb", "VictoriaMetrics", "InfluxDB"};

enum { MODE_TELNET, MODE_JSON50, MODE_JSON500, MODE_JSON50GZ, MODE_JSON500GZ, N_MODES };
static const char *const mode_names[N_MODES] = {"telnet", "json50", "json500", "json50gz",
                                                "json500gz"};

enum { Q_RAW, Q_SUM1M, Q_RATE, Q_GROUPBY, Q_LOOKUP, Q_SUGGEST, N_QUERIES };
static const char *const query_names[N_QUERIES] = {
    "one series raw",    "sum 1m-avg, one metric", "sum:rate 1m-avg, every series",
    "{host=*} group-by", "/api/search/lookup",     "/api/suggest"};

typedef struct {
    size_t hosts, metrics, rounds, conns, new_series, reps;
    const char *bin[N_SYS];
    const char *out;
    int smoke;
} opts_t;

/* Everything measured; NaN-free: a figure is valid when its flag is set. */
typedef struct {
    int ran;
    double pps[N_MODES];     /* 0 = not measured */
    double cpu_per_m;        /* telnet: CPU seconds per million points */
    double hwm_mb;           /* telnet: peak RSS */
    double rss_per_series;   /* bytes */
    double disk_per_point;   /* bytes */
    double new_series_rate;  /* series/s */
    double q_med[N_QUERIES]; /* ms; 0 = not measured */
    double q_p99[N_QUERIES];
    char note[256];
} result_t;

typedef struct {
    int sys;
    int pid;
    int port;   /* octsdb: everything; VM: HTTP API; Influx: HTTP API */
    int telnet; /* telnet put port */
    int put;    /* /api/put port */
    char dir[256];
    char log[300];
    long rss_start_kb;
} server_t;

/* ---- sockets and HTTP ------------------------------------------------- */

/* One request with Connection: close; the whole response into *out (body
 * after the headers; malloc'd). Returns the status or -1. */
static int http_req(int port, const char *method, const char *target, const char *body, char **out)
{
    *out = NULL;
    int fd = bench_connect(port);
    if (fd < 0) return -1;
    char hdr[8192];
    size_t bl = body ? strlen(body) : 0;
    int hl = snprintf(hdr, sizeof hdr,
                      "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      method, target, bl);
    if (hl <= 0 || (size_t)hl >= sizeof hdr || write(fd, hdr, (size_t)hl) != hl ||
        (bl && write(fd, body, bl) != (ssize_t)bl)) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 65536 > cap) buf = realloc(buf, cap *= 2);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 120000) <= 0) break;
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    int st = n > 12 ? atoi(buf + 9) : -1;
    char *b = strstr(buf, "\r\n\r\n");
    if (b) memmove(buf, b + 4, n - (size_t)(b + 4 - buf) + 1);
    *out = buf;
    return st;
}

/* ---- the process ------------------------------------------------------ */

/* utime + stime of the process, in seconds. */
static double proc_cpu_s(int pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long long ut = 0, st = 0;
    /* after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long long du_total;
static int du_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)flag;
    (void)ftw;
    du_total += (long long)sb->st_blocks * 512;
    return 0;
}

static long long du_bytes(const char *dir)
{
    du_total = 0;
    if (nftw(dir, du_cb, 32, FTW_PHYS) < 0) return -1;
    return du_total;
}

static void print_log(const server_t *s)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return;
    char line[1024];
    int n = 0;
    fprintf(stderr, "--- %s log (%s), last lines ---\n", sys_names[s->sys], s->log);
    while (fgets(line, sizeof line, f))
        n++;
    rewind(f);
    for (int i = 0; fgets(line, sizeof line, f); i++)
        if (i >= n - 30) fputs(line, stderr);
    fclose(f);
}

static int write_influx_conf(const server_t *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f,
            "reporting-disabled = true\n"
            "bind-address = \"127.0.0.1:%d\"\n"
            "[meta]\n  dir = \"%s/meta\"\n"
            "[data]\n  dir = \"%s/data\"\n  wal-dir = \"%s/wal\"\n  query-log-enabled = false\n"
            "[monitor]\n  store-enabled = false\n"
            "[http]\n  bind-address = \"127.0.0.1:%d\"\n  log-enabled = false\n"
            "[logging]\n  level = \"warn\"\n"
            "[[opentsdb]]\n  enabled = true\n  bind-address = \"127.0.0.1:%d\"\n"
            "  database = \"bench\"\n  log-point-errors = false\n",
            bench_free_port(), s->dir, s->dir, s->dir, s->port, s->telnet);
    return fclose(f);
}

/* Is the system up and answering? */
static int server_ready(const server_t *s)
{
    char *body = NULL;
    int st;
    switch (s->sys) {
    case SYS_OCTSDB:
        st = http_req(s->port, "GET", "/api/version", NULL, &body);
        break;
    case SYS_VM:
        st = http_req(s->port, "GET", "/health", NULL, &body);
        if (st == 200) { /* the OpenTSDB listeners open after the API */
            int fd = bench_connect(s->telnet);
            if (fd < 0)
                st = -1;
            else
                close(fd);
        }
        break;
    default: {
        st = http_req(s->port, "GET", "/ping", NULL, &body);
        int fd = st == 204 ? bench_connect(s->telnet) : -1;
        if (fd < 0)
            st = -1;
        else {
            close(fd);
            st = 200;
        }
    }
    }
    free(body);
    return st == 200 || st == 204;
}

static int server_start(server_t *s, int sys, const char *bin)
{
    memset(s, 0, sizeof *s);
    s->sys = sys;
    snprintf(s->dir, sizeof s->dir, "/tmp/bench_peers.%d.XXXXXX", sys);
    if (!mkdtemp(s->dir)) return -1;
    snprintf(s->log, sizeof s->log, "%s.log", s->dir);
    for (int attempt = 0; attempt < 3; attempt++) {
        s->port = bench_free_port();
        s->telnet = s->put = s->port;
        if (sys == SYS_VM) {
            s->telnet = bench_free_port();
            s->put = bench_free_port();
        } else if (sys == SYS_INFLUX) {
            s->telnet = s->put = bench_free_port();
        }
        char a[4][320], conf[300];
        snprintf(conf, sizeof conf, "%s.conf", s->dir);
        if (sys == SYS_INFLUX && write_influx_conf(s, conf) < 0) return -1;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
            int nul = open("/dev/null", O_RDONLY);
            if (nul >= 0) dup2(nul, 0);
            if (sys == SYS_OCTSDB) {
                snprintf(a[0], sizeof a[0], "--port=%d", s->port);
                snprintf(a[1], sizeof a[1], "--datadir=%s", s->dir);
                execl(bin, bin, "tsd", "--bind=127.0.0.1", a[0], a[1], "--auto-metric",
                      (char *)NULL);
            } else if (sys == SYS_VM) {
                snprintf(a[0], sizeof a[0], "-storageDataPath=%s", s->dir);
                snprintf(a[1], sizeof a[1], "-httpListenAddr=127.0.0.1:%d", s->port);
                snprintf(a[2], sizeof a[2], "-opentsdbListenAddr=127.0.0.1:%d", s->telnet);
                snprintf(a[3], sizeof a[3], "-opentsdbHTTPListenAddr=127.0.0.1:%d", s->put);
                execl(bin, bin, a[0], a[1], a[2], a[3], "-retentionPeriod=100y",
                      "-search.disableCache", "-loggerLevel=ERROR", (char *)NULL);
            } else {
                execl(bin, bin, "-config", conf, (char *)NULL);
            }
            _exit(127);
        }
        s->pid = pid;
        for (int i = 0; i < 600; i++) {
            if (server_ready(s)) {
                if (sys == SYS_INFLUX) { /* its /api/put does not create the database */
                    char *b;
                    int st = http_req(s->port, "POST", "/query?q=CREATE+DATABASE+bench", NULL, &b);
                    free(b);
                    if (st != 200) fprintf(stderr, "InfluxDB: CREATE DATABASE: HTTP %d\n", st);
                }
                s->rss_start_kb = bench_proc_status_kb(s->pid, "VmRSS");
                return 0;
            }
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                s->pid = 0;
                break;
            }
            bench_sleep_ms(50);
        }
        if (s->pid) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            s->pid = 0;
        }
    }
    print_log(s);
    return -1;
}

/* A clean stop (each flushes on SIGTERM/SIGINT): returns 0 if it exited. */
static int server_stop(server_t *s)
{
    int rc = -1;
    if (s->pid > 0) {
        kill(s->pid, s->sys == SYS_VM ? SIGINT : SIGTERM);
        int st;
        for (int i = 0; i < 1200; i++) {
            if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
                rc = 0;
                break;
            }
            bench_sleep_ms(50);
        }
        if (rc < 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
        s->pid = 0;
    }
    return rc;
}

static void server_destroy(server_t *s)
{
    server_stop(s);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s.conf'", s->dir, s->log, s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}

/* ---- how many points a system has stored ------------------------------ */

/* tsd.datapoints.added from octsdb's telnet `stats`, or -1. */
static long long octsdb_added(int port)
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

/* Sums every number after `key` up to the next `stop` character, for every
 * occurrence of key: the values of OpenTSDB's "dps":{...} maps, or the last
 * element of InfluxDB's "values":[[t,n]]. */
static double sum_after(const char *s, const char *key, int last_of_pair)
{
    double total = 0;
    size_t kl = strlen(key);
    for (const char *p = strstr(s, key); p; p = strstr(p, key)) {
        p += kl;
        const char *end = strchr(p, last_of_pair ? ']' : '}');
        if (!end) break;
        if (last_of_pair) {
            const char *c = memchr(p, ',', (size_t)(end - p));
            if (c) total += strtod(c + 1 + (c[1] == '"'), NULL);
        } else {
            for (const char *q = p; q < end; q++)
                if (*q == ':') total += strtod(q + 1, NULL);
        }
        p = end;
    }
    return total;
}

/* octsdb: the points a query sees (sum over metrics of 0all-count). */
static long long octsdb_query_count(int port, char metric_names[][64], size_t metrics,
                                    int64_t end_s)
{
    char target[8192];
    size_t n = (size_t)snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld",
                                START_S - 1, (long long)end_s + 1);
    for (size_t m = 0; m < metrics && n < sizeof target - 128; m++)
        n += (size_t)snprintf(target + n, sizeof target - n, "&m=sum:0all-count:%s",
                              metric_names[m]);
    char *body;
    int st = http_req(port, "GET", target, NULL, &body);
    long long v = st == 200 ? (long long)(sum_after(body, "\"dps\":{", 0) + 0.5) : -1;
    if (st != 200 && body) fprintf(stderr, "octsdb count query: %d %.300s\n", st, body);
    free(body);
    return v;
}

static long long vm_added(int port)
{
    char *body;
    int st = http_req(port, "GET", "/metrics", NULL, &body);
    long long v = -1;
    if (st == 200) {
        const char *l = strstr(body, "\nvm_rows_added_to_storage_total ");
        if (l) v = (long long)strtod(l + 32, NULL);
    }
    free(body);
    return v;
}

static long long influx_count(int port)
{
    char *body;
    int st = http_req(port, "GET", "/query?db=bench&q=SELECT+count(value)+FROM+/.*/", NULL, &body);
    long long v = st == 200 ? (long long)(sum_after(body, "\"values\":[[", 1) + 0.5) : -1;
    free(body);
    return v;
}

/* ---- the load ----------------------------------------------------------- */

typedef struct {
    putgen_buf_t data;
    size_t *req_end; /* http: end offset of each request */
    size_t n_req;
    size_t points;
} payload_t;

typedef struct {
    const payload_t *pl;
    int port, http;
    size_t ok, failed;
    int err;
    atomic_int done;
} conn_job_t;

/* Telnet: write everything, close the write side, read whatever comes back
 * (error lines) until the system closes. */
static void run_telnet(conn_job_t *j, int fd)
{
    size_t off = 0, len = j->pl->data.len;
    char in[65536];
    size_t inlen = 0;
    int wr_open = 1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    for (;;) {
        struct pollfd p = {fd, (short)(POLLIN | (off < len ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 60000) <= 0) {
            if (!wr_open) break; /* a peer that keeps the socket open */
            j->err = ETIMEDOUT;
            return;
        }
        if ((p.revents & POLLOUT) && off < len) {
            ssize_t w = write(fd, j->pl->data.ptr + off, len - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                return;
            }
            if (off == len && wr_open) {
                shutdown(fd, SHUT_WR);
                wr_open = 0;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(fd, in + inlen, sizeof in - 1 - inlen);
            if (r == 0) break;
            if (r < 0) {
                if (errno == EAGAIN) continue;
                if (!wr_open) break;
                j->err = errno;
                return;
            }
            inlen += (size_t)r;
            in[inlen] = '\0';
            char *line = in, *nl;
            while ((nl = strchr(line, '\n'))) {
                j->failed++;
                line = nl + 1;
            }
            inlen = (size_t)(in + inlen - line);
            memmove(in, line, inlen);
            if (inlen + 1 >= sizeof in) inlen = 0;
        }
    }
    if (off < len) j->err = EPIPE;
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

/* HTTP: keep-alive, up to HTTP_WINDOW requests in flight. */
static void run_http(conn_job_t *j, int fd)
{
    size_t off = 0, answered = 0;
    size_t cap = 1 << 20;
    char *in = malloc(cap);
    size_t inlen = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (answered < j->pl->n_req) {
        size_t last = answered + HTTP_WINDOW < j->pl->n_req ? answered + HTTP_WINDOW : j->pl->n_req;
        size_t limit = j->pl->req_end[last - 1];
        struct pollfd p = {fd, (short)(POLLIN | (off < limit ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 60000) <= 0) {
            j->err = ETIMEDOUT;
            break;
        }
        if ((p.revents & POLLOUT) && off < limit) {
            ssize_t w = write(fd, j->pl->data.ptr + off, limit - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                break;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (inlen + 65536 > cap) in = realloc(in, cap *= 2);
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
                if (status / 100 == 2)
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
        atomic_store(&j->done, 1);
        return NULL;
    }
    if (j->http)
        run_http(j, fd);
    else
        run_telnet(j, fd);
    close(fd);
    atomic_store(&j->done, 1);
    return NULL;
}

/* The wire bytes of one mode, one payload per connection (a slice of the
 * hosts, every round). */
static void build_payloads(const opts_t *o, int mode, payload_t *pl)
{
    size_t batch = (mode == MODE_JSON50 || mode == MODE_JSON50GZ) ? 50 : 500;
    int gz = mode == MODE_JSON50GZ || mode == MODE_JSON500GZ;
    putgen_cfg_t cfg = {
        .seed = 42, .hosts = o->hosts, .metrics = o->metrics, .start_s = START_S, .interval_s = 10};
    for (size_t c = 0; c < o->conns; c++) {
        payload_t *j = &pl[c];
        memset(j, 0, sizeof *j);
        size_t lo = o->hosts * c / o->conns, hi = o->hosts * (c + 1) / o->conns;
        putgen_t *g = putgen_new(&cfg, lo, hi);
        size_t n = putgen_series(g) * o->rounds;
        j->points = n;
        putgen_point_t pt;
        if (mode == MODE_TELNET) {
            for (size_t i = 0; i < n; i++) {
                putgen_next(g, &pt);
                putgen_append_telnet(&j->data, &pt);
            }
        } else {
            putgen_buf_t body = {0}, zbody = {0};
            j->req_end = malloc((n / batch + 2) * sizeof(*j->req_end));
            for (size_t i = 0; i < n;) {
                body.len = 0;
                putgen_append(&body, "[", 1);
                for (size_t k = 0; k < batch && i < n; k++, i++) {
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

/* The new-series run: every line a new series (a fresh host with the
 * fleet's 8 tag keys), one connection per sender. */
static void build_new_series(const opts_t *o, payload_t *pl)
{
    for (size_t c = 0; c < o->conns; c++) {
        payload_t *j = &pl[c];
        memset(j, 0, sizeof *j);
        size_t lo = o->new_series * c / o->conns, hi = o->new_series * (c + 1) / o->conns;
        char line[400];
        for (size_t i = lo; i < hi; i++) {
            int n =
                snprintf(line, sizeof line,
                         "put bench.new %lld %zu host=new-%08zu region=r%zu "
                         "datacenter=dc%zu rack=r%zu os=os%zu arch=a%zu team=t%zu "
                         "service=s%zu\n",
                         START_S, i % 977, i, i % 6, i % 18, i % 720, i % 4, i % 2, i % 12, i % 40);
            putgen_append(&j->data, line, (size_t)n);
        }
        j->points = hi - lo;
    }
}

static void free_payloads(payload_t *pl, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        putgen_buf_free(&pl[c].data);
        free(pl[c].req_end);
    }
}

/* How many points the system has stored: its own counter (octsdb: and then
 * the count query once the counter is complete). */
static long long stored(const server_t *s, long long want, char names[][64], size_t metrics,
                        int64_t end_s)
{
    switch (s->sys) {
    case SYS_OCTSDB: {
        long long a = octsdb_added(s->port);
        if (a < want || !names) return a;
        return octsdb_query_count(s->port, names, metrics, end_s);
    }
    case SYS_VM:
        return vm_added(s->port);
    default:
        return influx_count(s->port);
    }
}

/* Sends the payloads and waits until the system reports `want` points
 * stored. Returns the seconds, or -1; *cpu gets the process's CPU seconds. */
static double ingest(const opts_t *o, server_t *s, const payload_t *pl, int http, long long want,
                     char names[][64], size_t metrics, int64_t end_s, double *cpu)
{
    conn_job_t *jobs = calloc(o->conns, sizeof *jobs);
    pthread_t *th = calloc(o->conns, sizeof *th);
    double cpu0 = proc_cpu_s(s->pid);
    double t0 = bench_now_s();
    for (size_t c = 0; c < o->conns; c++) {
        jobs[c] = (conn_job_t){.pl = &pl[c], .port = http ? s->put : s->telnet, .http = http};
        pthread_create(&th[c], NULL, conn_thread, &jobs[c]);
    }
    /* generous: InfluxDB takes ~15,000 points/s here; a stall ends it sooner */
    double limit = 60.0 + (double)want / 4000.0, t_end = -1;
    long long got = -1, last = -1;
    double t_change = t0; /* when the count last moved */
    int poll_ms = s->sys == SYS_OCTSDB ? 10 : s->sys == SYS_VM ? 20 : 50;
    while (bench_now_s() - t0 < limit) {
        got = stored(s, want, names, metrics, end_s);
        if (got >= want) {
            t_end = bench_now_s();
            break;
        }
        if (got < 0 && kill(s->pid, 0) != 0) break;
        if (got != last) {
            last = got;
            t_change = bench_now_s();
        }
        /* every sender finished and nothing moved for a while: lost points */
        size_t done = 0;
        for (size_t c = 0; c < o->conns; c++)
            done += (size_t)atomic_load(&jobs[c].done);
        if (done == o->conns && bench_now_s() - t_change > 10.0) break;
        bench_sleep_ms(poll_ms);
    }
    *cpu = proc_cpu_s(s->pid) - cpu0;
    for (size_t c = 0; c < o->conns; c++)
        pthread_join(th[c], NULL);
    size_t failed = 0;
    int err = 0;
    for (size_t c = 0; c < o->conns; c++) {
        failed += jobs[c].failed;
        if (jobs[c].err) err = jobs[c].err;
    }
    free(jobs);
    free(th);
    if (err || failed || t_end < 0 || got != want) {
        fprintf(stderr, "%s: stored %lld of %lld points (%s%zu rejected)\n", sys_names[s->sys], got,
                want, err ? strerror(err) : "", failed);
        print_log(s);
        return -1;
    }
    return t_end - t0;
}

/* ---- queries ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The target of query q for system sys (octsdb or VM), into buf. */
static void query_target(int sys, int q, char names[][64], size_t metrics, int64_t end_s, char *buf,
                         size_t cap)
{
    long long s0 = START_S, e0 = (long long)end_s;
    size_t n = 0;
    if (sys == SYS_OCTSDB) {
        switch (q) {
        case Q_RAW:
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=sum:%s{host=web-00000.prod}", s0,
                     e0, names[0]);
            break;
        case Q_SUM1M:
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=sum:1m-avg:%s", s0, e0, names[0]);
            break;
        case Q_RATE:
            n = (size_t)snprintf(buf, cap, "/api/query?start=%lld&end=%lld", s0, e0);
            for (size_t m = 0; m < metrics && n < cap - 128; m++)
                n += (size_t)snprintf(buf + n, cap - n, "&m=sum:1m-avg:rate:%s", names[m]);
            break;
        case Q_GROUPBY:
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=sum:1m-avg:%s{host=*}", s0, e0,
                     names[0]);
            break;
        case Q_LOOKUP:
            snprintf(buf, cap, "/api/search/lookup?m=%s{host=*}&limit=1000000", names[0]);
            break;
        default:
            snprintf(buf, cap, "/api/suggest?type=tagv&q=web-&max=1000000");
        }
        return;
    }
    /* VictoriaMetrics: PromQL over /api/v1/query_range, the series API and
     * label values (the metric names hold dots: selected by __name__). */
    switch (q) {
    case Q_RAW:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=%%7B__name__%%3D%%22%s%%22,host%%3D%%22web-00000.prod"
                 "%%22%%7D&start=%lld&end=%lld&step=10s",
                 names[0], s0, e0);
        break;
    case Q_SUM1M:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=sum(avg_over_time(%%7B__name__%%3D%%22%s%%22%%7D"
                 "%%5B1m%%5D))&start=%lld&end=%lld&step=60s",
                 names[0], s0, e0);
        break;
    case Q_RATE:
        n = (size_t)snprintf(buf, cap,
                             "/api/v1/query_range?query=sum%%20by%%20(__name__)(rate(%%7B__name__"
                             "%%3D~%%22");
        for (size_t m = 0; m < metrics && n < cap - 256; m++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", m ? "%7C" : "", names[m]);
        snprintf(buf + n, cap - n, "%%22%%7D%%5B1m%%5D))&start=%lld&end=%lld&step=60s", s0, e0);
        break;
    case Q_GROUPBY:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=sum%%20by%%20(host)(avg_over_time(%%7B__name__%%3D"
                 "%%22%s%%22%%7D%%5B1m%%5D))&start=%lld&end=%lld&step=60s",
                 names[0], s0, e0);
        break;
    case Q_LOOKUP:
        snprintf(buf, cap,
                 "/api/v1/series?match%%5B%%5D=%%7B__name__%%3D%%22%s%%22%%7D&start=%lld&end=%lld",
                 names[0], s0, e0);
        break;
    default:
        snprintf(buf, cap, "/api/v1/label/host/values?start=%lld&end=%lld", s0, e0);
    }
}

/* Runs every query reps times; fills median and p99 (ms). A query that
 * fails or answers nothing leaves its figures at 0. */
static void run_queries(const opts_t *o, const server_t *s, char names[][64], int64_t end_s,
                        result_t *r)
{
    char target[16384];
    double *lat = calloc(o->reps, sizeof *lat);
    for (int q = 0; q < N_QUERIES; q++) {
        query_target(s->sys, q, names, o->metrics, end_s, target, sizeof target);
        size_t ok = 0;
        for (size_t i = 0; i < o->reps; i++) {
            char *body;
            double t0 = bench_now_s();
            int st = http_req(s->port, "GET", target, NULL, &body);
            double dt = bench_now_s() - t0;
            /* an empty answer would make the figure meaningless */
            int empty = !body || strlen(body) < 16;
            if (st != 200 || empty) {
                fprintf(stderr, "%s %s: HTTP %d %.200s\n", sys_names[s->sys], query_names[q], st,
                        body ? body : "");
                free(body);
                break;
            }
            free(body);
            lat[ok++] = dt * 1000.0;
        }
        if (ok == o->reps) {
            qsort(lat, ok, sizeof *lat, cmp_double);
            r->q_med[q] = ok % 2 ? lat[ok / 2] : (lat[ok / 2 - 1] + lat[ok / 2]) / 2;
            size_t k = (size_t)((double)ok * 0.99 + 0.999999);
            r->q_p99[q] = lat[(k ? k : 1) - 1];
        }
    }
    free(lat);
}

/* ---- one system, one mode ---------------------------------------------- */

/* Ingests one mode's payloads into a fresh instance of sys; after the telnet
 * mode also takes memory, queries and disk. */
static void bench_mode(const opts_t *o, int sys, int m, const payload_t *pl, char names[][64],
                       result_t *r)
{
    int64_t end_s = START_S + (int64_t)(o->rounds - 1) * 10;
    long long want = (long long)(o->hosts * o->metrics * o->rounds);
    size_t series = o->hosts * o->metrics;
    server_t s;
    r->ran = 1;
    if (server_start(&s, sys, o->bin[sys]) < 0) {
        fprintf(stderr, "%s: could not start %s\n", sys_names[sys], o->bin[sys]);
        server_destroy(&s);
        return;
    }
    double cpu = 0;
    double secs = ingest(o, &s, pl, m != MODE_TELNET, want, sys == SYS_OCTSDB ? names : NULL,
                         o->metrics, end_s, &cpu);
    if (secs > 0) {
        r->pps[m] = (double)want / secs;
        printf("  %-16s %-9s %10.0f points/s (%.2f s, %.2f CPU s)\n", sys_names[sys], mode_names[m],
               r->pps[m], secs, cpu);
        fflush(stdout);
    }
    if (m == MODE_TELNET && secs > 0) {
        r->cpu_per_m = cpu / ((double)want / 1e6);
        long hwm = bench_proc_status_kb(s.pid, "VmHWM");
        r->hwm_mb = (double)hwm / 1024.0;
        r->rss_per_series = (double)(hwm - s.rss_start_kb) * 1024.0 / (double)series;
        if (sys == SYS_VM) { /* make the in-memory rows searchable */
            char *b;
            http_req(s.port, "GET", "/internal/force_flush", NULL, &b);
            free(b);
            bench_sleep_ms(200);
        }
        if (sys != SYS_INFLUX) run_queries(o, &s, names, end_s, r);
        if (server_stop(&s) == 0) {
            long long d = du_bytes(s.dir);
            if (d > 0) r->disk_per_point = (double)d / (double)want;
        }
    }
    server_destroy(&s);
}

static void bench_new_series(const opts_t *o, int sys, const payload_t *pl, result_t *r)
{
    server_t s;
    if (server_start(&s, sys, o->bin[sys]) == 0) {
        double cpu;
        double secs = ingest(o, &s, pl, 0, (long long)o->new_series, NULL, 0, START_S, &cpu);
        if (secs > 0) {
            r->new_series_rate = (double)o->new_series / secs;
            printf("  %-16s new series %7.0f series/s (%.2f s, %.2f CPU s)\n", sys_names[sys],
                   r->new_series_rate, secs, cpu);
            fflush(stdout);
        }
    }
    server_destroy(&s);
}

/* ---- the table -------------------------------------------------------- */

static void machine(char *buf, size_t cap)
{
    char model[256] = "unknown CPU", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    long mem_kb = -1;
    f = fopen("/proc/meminfo", "r");
    if (f) {
        if (fgets(line, sizeof line, f)) sscanf(line, "MemTotal: %ld", &mem_kb);
        fclose(f);
    }
    /* the machine is often shared: its load says how far to trust wall clocks */
    double load = -1;
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1;
        fclose(f);
    }
    snprintf(buf, cap, "%s, %ld cores, %.1f GiB memory; load average %.1f at start", model,
             sysconf(_SC_NPROCESSORS_ONLN), (double)mem_kb / 1048576.0, load);
}

static void cell(FILE *f, double v, int decimals)
{
    if (v > 0)
        fprintf(f, "%.*f", decimals, v);
    else
        fprintf(f, "n/a");
}

static void row(FILE *f, const char *name, const result_t *r, size_t off, int decimals)
{
    double v[N_SYS];
    for (int s = 0; s < N_SYS; s++)
        v[s] = *(const double *)((const char *)&r[s] + off);
    fprintf(f, "| %s | ", name);
    for (int s = 0; s < N_SYS; s++) {
        if (!r[s].ran && s) continue;
        cell(f, v[s], decimals);
        fprintf(f, " | ");
    }
    for (int s = 1; s < N_SYS; s++) {
        if (!r[s].ran) continue;
        if (v[0] > 0 && v[s] > 0)
            fprintf(f, "%.2f | ", v[0] / v[s]);
        else
            fprintf(f, "n/a | ");
    }
    fprintf(f, "\n");
}

static void table(FILE *f, const opts_t *o, const result_t *r)
{
    fprintf(f, "| figure | ");
    for (int s = 0; s < N_SYS; s++)
        if (!s || r[s].ran) fprintf(f, "%s | ", sys_names[s]);
    for (int s = 1; s < N_SYS; s++)
        if (r[s].ran) fprintf(f, "octsdb / %s | ", sys_names[s]);
    fprintf(f, "\n|---|");
    for (int s = 0; s < N_SYS; s++)
        if (!s || r[s].ran) fprintf(f, "---:|");
    for (int s = 1; s < N_SYS; s++)
        if (r[s].ran) fprintf(f, "---:|");
    fprintf(f, "\n");
    char name[128];
    for (int m = 0; m < N_MODES; m++) {
        snprintf(name, sizeof name, "ingest %s, points/s (higher is better)", mode_names[m]);
        row(f, name, r, offsetof(result_t, pps) + (size_t)m * sizeof(double), 0);
    }
    row(f, "CPU s per million points, telnet", r, offsetof(result_t, cpu_per_m), 2);
    row(f, "peak RSS MB, telnet", r, offsetof(result_t, hwm_mb), 1);
    row(f, "RSS bytes per active series", r, offsetof(result_t, rss_per_series), 0);
    row(f, "disk bytes per point after flush", r, offsetof(result_t, disk_per_point), 2);
    snprintf(name, sizeof name, "new series/s, %zu new series (higher is better)", o->new_series);
    row(f, name, r, offsetof(result_t, new_series_rate), 0);
    for (int q = 0; q < N_QUERIES; q++) {
        snprintf(name, sizeof name, "query %s, median ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_med) + (size_t)q * sizeof(double), 2);
        snprintf(name, sizeof name, "query %s, p99 ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_p99) + (size_t)q * sizeof(double), 2);
    }
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
    opts_t o = {
        .hosts = 1000, .metrics = 10, .rounds = 90, .conns = 4, .new_series = 20000, .reps = 30};
    o.bin[SYS_OCTSDB] = default_bin(argv[0]);
    char cmdline[2048];
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof cmdline - 256; i++)
        cl += (size_t)snprintf(cmdline + cl, sizeof cmdline - cl, "%s%s", i ? " " : "",
                               i ? argv[i] : "bench_peers");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            o.smoke = 1;
            o.hosts = 20;
            o.metrics = 5;
            o.rounds = 20;
            o.conns = 2;
            o.new_series = 500;
            o.reps = 3;
            continue;
        }
        if (!v) goto usage;
        i++;
        if (!strcmp(a, "--hosts"))
            o.hosts = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--metrics"))
            o.metrics = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--hours"))
            o.rounds = (size_t)(strtod(v, NULL) * 360.0 + 0.5);
        else if (!strcmp(a, "--conns"))
            o.conns = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--new-series"))
            o.new_series = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--reps"))
            o.reps = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--octsdb"))
            o.bin[SYS_OCTSDB] = v;
        else if (!strcmp(a, "--vm"))
            o.bin[SYS_VM] = *v ? v : NULL;
        else if (!strcmp(a, "--influx"))
            o.bin[SYS_INFLUX] = *v ? v : NULL;
        else if (!strcmp(a, "--out"))
            o.out = v;
        else
            goto usage;
    }
    if (o.smoke) o.bin[SYS_VM] = o.bin[SYS_INFLUX] = NULL;
    if (o.conns < 1) o.conns = 1;
    if (o.hosts < o.conns) o.hosts = o.conns;
    if (o.metrics < 1) o.metrics = 1;
    if (o.metrics > putgen_max_metrics()) o.metrics = putgen_max_metrics();
    if (o.rounds < 2) o.rounds = 2;
    if (o.reps < 1) o.reps = 1;
    if (o.new_series < o.conns) o.new_series = o.conns;
    for (int s = 0; s < N_SYS; s++) {
        struct stat sb;
        if (o.bin[s] && stat(o.bin[s], &sb) < 0) {
            fprintf(stderr, "%s binary not found: %s\n", sys_names[s], o.bin[s]);
            if (s == SYS_OCTSDB) return 2;
            o.bin[s] = NULL;
        }
    }
    signal(SIGPIPE, SIG_IGN);

    /* the metric names, in the generator's order */
    char(*names)[64] = calloc(o.metrics, sizeof *names);
    {
        putgen_cfg_t cfg = {.seed = 42, .hosts = 1, .metrics = o.metrics, .start_s = START_S};
        putgen_t *g = putgen_new(&cfg, 0, 1);
        putgen_point_t pt;
        for (size_t m = 0; m < o.metrics; m++) {
            putgen_next(g, &pt);
            snprintf(names[m], sizeof names[m], "%s", pt.metric);
        }
        putgen_free(g);
    }
    size_t points = o.hosts * o.metrics * o.rounds;
    char mach[512];
    machine(mach, sizeof mach);
    printf("bench_peers: %zu hosts x %zu metrics = %zu series (8 tags each), %zu rounds of 10 s "
           "(%.2f h) = %zu points per mode, %zu connections\nmachine: %s\n",
           o.hosts, o.metrics, o.hosts * o.metrics, o.rounds, (double)o.rounds / 360.0, points,
           o.conns, mach);
    fflush(stdout);

    /* every mode's bytes, generated once and sent to every system in turn */
    result_t r[N_SYS];
    memset(r, 0, sizeof r);
    payload_t *pl = calloc(o.conns, sizeof(payload_t));
    for (int m = 0; m < N_MODES; m++) {
        build_payloads(&o, m, pl);
        for (int s = 0; s < N_SYS; s++)
            if (o.bin[s]) bench_mode(&o, s, m, pl, names, &r[s]);
        free_payloads(pl, o.conns);
    }
    build_new_series(&o, pl);
    for (int s = 0; s < N_SYS; s++)
        if (o.bin[s]) bench_new_series(&o, s, pl, &r[s]);
    free_payloads(pl, o.conns);
    free(pl);
    r[0].ran = 1;

    printf("\n");
    table(stdout, &o, r);
    int rc = 0;
    if (o.out) {
        FILE *f = fopen(o.out, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s: %s\n", o.out, strerror(errno));
            rc = 1;
        } else {
            time_t t = time(NULL);
            char date[64];
            strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
            fprintf(f,
                    "# octsdb vs peers, %s\n\n"
                    "- machine: %s\n- command: `%s`\n"
                    "- data set: %zu hosts x %zu metrics = %zu series with 8 tags, %zu rounds "
                    "of 10 s (%.2f h) = %zu points per mode, seed 42, %zu connections\n"
                    "- ratios are octsdb / peer; every system ran alone on the same cores, "
                    "sender on the same machine\n\n",
                    date, mach, cmdline, o.hosts, o.metrics, o.hosts * o.metrics, o.rounds,
                    (double)o.rounds / 360.0, points, o.conns);
            table(f, &o, r);
            fprintf(f, "\nHow figures are taken: see the header of bench/bench_peers.c.\n");
            fclose(f);
        }
    }
    free(names);
    /* smoke: every octsdb figure must have been produced */
    if (o.smoke) {
        const result_t *x = &r[0];
        int missing = x->cpu_per_m <= 0 || x->hwm_mb <= 0 || x->rss_per_series <= 0 ||
                      x->disk_per_point <= 0 || x->new_series_rate <= 0;
        for (int m = 0; m < N_MODES; m++)
            missing |= x->pps[m] <= 0;
        for (int q = 0; q < N_QUERIES; q++)
            missing |= x->q_med[q] <= 0 || x->q_p99[q] <= 0;
        if (missing) rc = 1;
    }
    return rc;

usage:
    fprintf(stderr,
            "usage: %s [--hosts N] [--metrics N] [--hours H] [--conns N] [--new-series N] "
            "[--reps N] [--octsdb PATH] [--vm PATH] [--influx PATH] [--out FILE] [--smoke]\n",
            argv[0]);
    return 2;
}
