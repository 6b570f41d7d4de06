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
 *   --curve N,N,...  also the cost curve: for each number of series N (10000
 *              ... 1000000), the same fleet scaled to N series (N / metrics
 *              hosts), --curve-rounds rounds of telnet puts (default 3) into a
 *              fresh octsdb and VictoriaMetrics each: ingest points/s, RSS per
 *              series and the query medians over --curve-reps runs (default 5)
 *   --curve-only  only the cost curve (the main table is skipped)
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
 * CPU seconds are the system process's CPU-time clock (clock_getcpuclockid:
 * every thread, in ns) over the ingest; peak RSS is VmHWM, and RSS per
 * series is VmHWM minus the RSS when it started listening, over the number
 * of series. Disk is the allocated size (st_blocks, as du) of the data dir
 * after a clean stop, which flushes octsdb's head and VictoriaMetrics'
 * in-memory parts (InfluxDB keeps its WAL until a cache snapshot: counted
 * as it lies), without RocksDB's info log files; octsdb is measured again
 * after `octsdb compact` on the stopped dir, and the gauge and the
 * integer-valued series are each also ingested alone (telnet) for their own
 * bytes per point. Queries run on the telnet data set with equivalent
 * PromQL for VictoriaMetrics (its result cache is off so repeated runs
 * compute); each is run --reps times over a fresh connection, median and
 * p99 reported, with the points one run reads from storage (octsdb: rawDPs
 * of show_summary on one more run; VictoriaMetrics: the growth of
 * vm_rows_read_per_query_sum over the runs, per run), which over the median
 * latency gives points read per second. The senders are bench/common/loadgen.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

#define START_S     1700000000LL
#define MAX_QUERIES 8
#define N_SCAN_Q    (Q_GROUPBY + 1) /* the queries that read points */

enum { SYS_OCTSDB, SYS_VM, SYS_INFLUX, N_SYS };
static const char *const sys_names[N_SYS] = {"octsdb", "VictoriaMetrics", "InfluxDB"};

enum { Q_RAW, Q_SUM1M, Q_RATE, Q_GROUPBY, Q_LOOKUP, Q_SUGGEST, N_QUERIES };
static const char *const query_names[N_QUERIES] = {
    "one series raw",    "sum 1m-avg, one metric", "sum:rate 1m-avg, every series",
    "{host=*} group-by", "/api/search/lookup",     "/api/suggest"};

/* The disk-by-kind runs: the bar differs for gauges and for the
 * integer-valued series, so each is also ingested alone. */
enum { KIND_GAUGE, KIND_INT, N_KINDS };
static const char *const kind_names[N_KINDS] = {
    "gauge series only (random walks, 1/2/4 decimals)",
    "integer series only (integer gauges, counters, mostly-constant)"};
static const unsigned kind_masks[N_KINDS] = {
    (1u << DATAGEN_GAUGE_D2) | (1u << DATAGEN_GAUGE_D1) | (1u << DATAGEN_GAUGE_D4),
    (1u << DATAGEN_INT_GAUGE) | (1u << DATAGEN_COUNTER) | (1u << DATAGEN_CONST)};

#define MAX_CURVE 8

typedef struct {
    size_t hosts, metrics, rounds, conns, new_series, reps;
    const char *bin[N_SYS];
    const char *out;
    int smoke;
    size_t curve[MAX_CURVE], n_curve, curve_rounds, curve_reps; /* series per point */
    int curve_only;
} opts_t;

/* Everything measured; NaN-free: a figure is valid when its flag is set. */
typedef struct {
    int ran;
    double pps[LOADGEN_N_MODES]; /* 0 = not measured */
    double cpu_per_m;            /* telnet: CPU seconds per million points */
    double hwm_mb;               /* telnet: peak RSS */
    double rss_per_series;       /* bytes */
    double disk_per_point;       /* bytes */
    double disk_compacted;       /* octsdb: bytes per point after `octsdb compact` */
    double disk_kind[N_KINDS];   /* bytes per point of one kind's own run */
    double disk_kind_compacted[N_KINDS];
    double new_series_rate;  /* series/s */
    double q_med[N_QUERIES]; /* ms; 0 = not measured */
    double q_p99[N_QUERIES];
    double q_scan[N_QUERIES]; /* points read per second of median latency */
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

/* CPU seconds the process has used (every thread, exited ones included),
 * from its CPU-time clock: nanoseconds, where /proc/<pid>/stat counts
 * 10 ms ticks and a smoke run's few milliseconds would read 0. */
static double proc_cpu_s(int pid)
{
    clockid_t c;
    struct timespec t;
    if (clock_getcpuclockid(pid, &c) != 0 || clock_gettime(c, &t) != 0) return -1;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long long du_total;
/* RocksDB's info log (LOG, LOG.old.*) is left out: it is the engine's
 * diagnostic text, which the peers write to stderr (not counted either),
 * and at 100-200 KB a file it would weigh on small data sets. */
static int du_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)flag;
    const char *base = path + ftw->base;
    if (!strcmp(base, "LOG") || !strncmp(base, "LOG.old.", 8)) return 0;
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
                /* its per-query series limits (300,000 for a range query,
                 * 30,000 from the series API) would refuse the cost curve's
                 * queries at 1 M series: raised, as an operator would */
                execl(bin, bin, a[0], a[1], a[2], a[3], "-retentionPeriod=100y",
                      "-search.disableCache", "-loggerLevel=ERROR",
                      "-search.maxUniqueTimeseries=100000000", "-search.maxSeries=100000000",
                      "-search.maxTagValues=100000000", (char *)NULL);
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
    long long v = st == 200 && body ? (long long)(sum_after(body, "\"dps\":{", 0) + 0.5) : -1;
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
    long long v = st == 200 && body ? (long long)(sum_after(body, "\"values\":[[", 1) + 0.5) : -1;
    free(body);
    return v;
}

/* ---- the load ----------------------------------------------------------- */

/* The new-series run: every line a new series (a fresh host with the
 * fleet's 8 tag keys), one slice of them per connection. */
static void build_new_series(const opts_t *o, loadgen_payload_t *pl)
{
    for (size_t c = 0; c < o->conns; c++) {
        loadgen_payload_t *j = &pl[c];
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
            loadgen_append_telnet(j, line, (size_t)n, 1);
        }
    }
}

/* How many points the system has stored: its own counter (octsdb: and then
 * the count query once the counter is complete). */
static long long stored(const server_t *s, long long want, char names[][64], size_t metrics,
                        int64_t end_s)
{
    switch (s->sys) {
    case SYS_OCTSDB: {
        long long a = bench_octsdb_points_added(s->port);
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
static double ingest(const opts_t *o, server_t *s, const loadgen_payload_t *pl, int http,
                     long long want, char names[][64], size_t metrics, int64_t end_s, double *cpu)
{
    loadgen_conn_t *jobs = calloc(o->conns, sizeof *jobs);
    for (size_t c = 0; c < o->conns; c++) {
        jobs[c].pl = &pl[c];
        jobs[c].port = http ? s->put : s->telnet;
        jobs[c].http = http;
        /* the peers answer nothing to `version`: the end is their close */
        jobs[c].telnet_end = LOADGEN_TELNET_CLOSE;
        jobs[c].ok_status = 0;
        jobs[c].timeout_ms = 60000;
    }
    double cpu0 = proc_cpu_s(s->pid);
    double t0 = bench_now_s();
    if (loadgen_start(jobs, o->conns) < 0) {
        free(jobs);
        return -1;
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
        if (loadgen_finished(jobs, o->conns) == o->conns && bench_now_s() - t_change > 10.0) break;
        bench_sleep_ms(poll_ms);
    }
    *cpu = proc_cpu_s(s->pid) - cpu0;
    loadgen_totals_t tot;
    loadgen_join(jobs, o->conns, &tot);
    size_t failed = tot.failed;
    int err = tot.err;
    free(jobs);
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

/* VictoriaMetrics' rows read from storage by its queries so far (the _sum
 * of its vm_rows_read_per_query histogram) into *sum and the number of
 * queries counted (_count) into *count; -1 when absent. */
static void vm_rows_read(int port, double *sum, double *count)
{
    char *body;
    *sum = *count = -1;
    int st = http_req(port, "GET", "/metrics", NULL, &body);
    if (st == 200) {
        static const char ks[] = "\nvm_rows_read_per_query_sum ";
        static const char kc[] = "\nvm_rows_read_per_query_count ";
        const char *l = strstr(body, ks);
        if (l) *sum = strtod(l + sizeof ks - 1, NULL);
        l = strstr(body, kc);
        if (l) *count = strtod(l + sizeof kc - 1, NULL);
    }
    free(body);
}

/* The points one run of the query reads from storage by octsdb's own
 * count (rawDPs of show_summary, one more run), or -1. */
static double octsdb_points_read(const server_t *s, const char *target)
{
    char *body = NULL, t[16500];
    double v = -1;
    snprintf(t, sizeof t, "%s&show_summary=true", target);
    if (http_req(s->port, "GET", t, NULL, &body) == 200) {
        const char *p = strstr(body, "\"rawDPs\":");
        if (p) v = strtod(p + 9, NULL);
    }
    free(body);
    return v;
}

/* The rows each of the last n queries read in VictoriaMetrics, given its
 * rows-read sum and count before them, or -1. Its /metrics shows a query a
 * second or two after it answered: waits (at most 10 s) for the count to
 * take all n, so the next query starts from settled counters. */
static double vm_points_read(const server_t *s, double s0, double c0, size_t n)
{
    double s1 = -1, c1 = -1;
    for (int i = 0; i < 100; i++) {
        vm_rows_read(s->port, &s1, &c1);
        if (c1 >= c0 + (double)n) break;
        bench_sleep_ms(100);
    }
    return c1 == c0 + (double)n && s1 >= s0 ? (s1 - s0) / (double)n : -1;
}

/* Runs every query reps times; fills median and p99 (ms), and for the
 * queries that read points, points read per second of median latency. A
 * query that fails or answers nothing leaves its figures at 0. */
static void run_queries(const opts_t *o, const server_t *s, char names[][64], int64_t end_s,
                        result_t *r)
{
    char target[16384];
    double *lat = calloc(o->reps, sizeof *lat);
    for (int q = 0; q < N_QUERIES; q++) {
        query_target(s->sys, q, names, o->metrics, end_s, target, sizeof target);
        double vm_s0 = 0, vm_c0 = 0; /* VictoriaMetrics' rows-read counters before */
        if (s->sys == SYS_VM && q < N_SCAN_Q) {
            vm_rows_read(s->port, &vm_s0, &vm_c0);
            if (vm_s0 < 0) vm_s0 = vm_c0 = 0; /* no query counted yet */
        }
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
            double pts = -1;
            if (q < N_SCAN_Q && s->sys == SYS_OCTSDB) pts = octsdb_points_read(s, target);
            if (q < N_SCAN_Q && s->sys == SYS_VM) pts = vm_points_read(s, vm_s0, vm_c0, ok);
            if (pts > 0 && r->q_med[q] > 0) r->q_scan[q] = pts / (r->q_med[q] / 1000.0);
        }
    }
    free(lat);
}

/* ---- one system, one mode ---------------------------------------------- */

/* Runs `octsdb compact --datadir=dir` on the stopped data dir (its output to
 * the log); returns 0 when it succeeded. */
static int octsdb_compact(const char *bin, const server_t *s)
{
    char datadir[300];
    snprintf(datadir, sizeof datadir, "--datadir=%s", s->dir);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(bin, bin, "compact", datadir, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "octsdb compact failed\n");
        print_log(s);
        return -1;
    }
    return 0;
}

/* Stops the system (flushing it) and measures its data dir: bytes per point
 * into *flushed and, for octsdb, again after `octsdb compact` into *compacted. */
static void measure_disk(const opts_t *o, server_t *s, long long points, double *flushed,
                         double *compacted)
{
    if (server_stop(s) != 0) return;
    long long d = du_bytes(s->dir);
    if (d > 0) *flushed = (double)d / (double)points;
    if (s->sys == SYS_OCTSDB && octsdb_compact(o->bin[SYS_OCTSDB], s) == 0) {
        d = du_bytes(s->dir);
        if (d > 0) *compacted = (double)d / (double)points;
    }
}

/* Ingests one mode's payloads into a fresh instance of sys; after the telnet
 * mode also takes memory, queries and disk. */
static void bench_mode(const opts_t *o, int sys, int m, const loadgen_payload_t *pl,
                       char names[][64], result_t *r)
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
    double secs = ingest(o, &s, pl, m != LOADGEN_TELNET, want, sys == SYS_OCTSDB ? names : NULL,
                         o->metrics, end_s, &cpu);
    if (secs > 0) {
        r->pps[m] = (double)want / secs;
        printf("  %-16s %-9s %10.0f points/s (%.2f s, %.2f CPU s)\n", sys_names[sys],
               loadgen_mode_name((loadgen_mode_t)m), r->pps[m], secs, cpu);
        fflush(stdout);
    }
    if (m == LOADGEN_TELNET && secs > 0) {
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
        measure_disk(o, &s, want, &r->disk_per_point, &r->disk_compacted);
    }
    server_destroy(&s);
}

/* One kind's series alone (telnet), for their bytes per point. Completion
 * is the system's own count: octsdb's count query would name metrics that
 * this subset may not have. */
static void bench_kind(const opts_t *o, int sys, int kind, const loadgen_payload_t *pl, result_t *r)
{
    long long want = 0;
    for (size_t c = 0; c < o->conns; c++)
        want += (long long)pl[c].points;
    if (want <= 0) return;
    server_t s;
    if (server_start(&s, sys, o->bin[sys]) == 0) {
        double cpu;
        double secs = ingest(o, &s, pl, 0, want, NULL, 0, START_S, &cpu);
        if (secs > 0) {
            measure_disk(o, &s, want, &r->disk_kind[kind], &r->disk_kind_compacted[kind]);
            printf("  %-16s %s: %lld points, %.2f bytes/point", sys_names[sys], kind_names[kind],
                   want, r->disk_kind[kind]);
            if (r->disk_kind_compacted[kind] > 0)
                printf(", %.2f after compaction", r->disk_kind_compacted[kind]);
            printf("\n");
            fflush(stdout);
        }
    }
    server_destroy(&s);
}

static void bench_new_series(const opts_t *o, int sys, const loadgen_payload_t *pl, result_t *r)
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
        memcpy(&v[s], (const char *)&r[s] + off, sizeof v[s]);
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
    for (int m = 0; m < LOADGEN_N_MODES; m++) {
        snprintf(name, sizeof name, "ingest %s, points/s (higher is better)",
                 loadgen_mode_name((loadgen_mode_t)m));
        row(f, name, r, offsetof(result_t, pps) + (size_t)m * sizeof(double), 0);
    }
    row(f, "CPU s per million points, telnet", r, offsetof(result_t, cpu_per_m), 2);
    row(f, "peak RSS MB, telnet", r, offsetof(result_t, hwm_mb), 1);
    row(f, "RSS bytes per active series", r, offsetof(result_t, rss_per_series), 0);
    row(f, "disk bytes per point after flush", r, offsetof(result_t, disk_per_point), 2);
    row(f, "disk bytes per point after compaction (octsdb compact)", r,
        offsetof(result_t, disk_compacted), 2);
    for (int k = 0; k < N_KINDS; k++) {
        snprintf(name, sizeof name, "disk bytes per point, %s, after flush", kind_names[k]);
        row(f, name, r, offsetof(result_t, disk_kind) + (size_t)k * sizeof(double), 2);
        snprintf(name, sizeof name, "disk bytes per point, %s, after compaction", kind_names[k]);
        row(f, name, r, offsetof(result_t, disk_kind_compacted) + (size_t)k * sizeof(double), 2);
    }
    snprintf(name, sizeof name, "new series/s, %zu new series (higher is better)", o->new_series);
    row(f, name, r, offsetof(result_t, new_series_rate), 0);
    for (int q = 0; q < N_QUERIES; q++) {
        snprintf(name, sizeof name, "query %s, median ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_med) + (size_t)q * sizeof(double), 2);
        snprintf(name, sizeof name, "query %s, p99 ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_p99) + (size_t)q * sizeof(double), 2);
        if (q < N_SCAN_Q) {
            snprintf(name, sizeof name, "query %s, points read/s (higher is better)",
                     query_names[q]);
            row(f, name, r, offsetof(result_t, q_scan) + (size_t)q * sizeof(double), 0);
        }
    }
}

/* ---- the cost curve ---------------------------------------------------- */

/* One point of the curve for one system: telnet ingest of c's fleet into a
 * fresh instance, its RSS per series, then the queries (c->reps runs). */
static void bench_curve_point(const opts_t *c, int sys, const loadgen_payload_t *pl,
                              char names[][64], result_t *r)
{
    int64_t end_s = START_S + (int64_t)(c->rounds - 1) * 10;
    long long want = (long long)(c->hosts * c->metrics * c->rounds);
    server_t s;
    r->ran = 1;
    if (server_start(&s, sys, c->bin[sys]) == 0) {
        double cpu = 0;
        double secs =
            ingest(c, &s, pl, 0, want, sys == SYS_OCTSDB ? names : NULL, c->metrics, end_s, &cpu);
        if (secs > 0) {
            r->pps[LOADGEN_TELNET] = (double)want / secs;
            r->cpu_per_m = cpu / ((double)want / 1e6);
            long hwm = bench_proc_status_kb(s.pid, "VmHWM");
            r->hwm_mb = (double)hwm / 1024.0;
            r->rss_per_series =
                (double)(hwm - s.rss_start_kb) * 1024.0 / (double)(c->hosts * c->metrics);
            if (sys == SYS_VM) {
                char *b;
                http_req(s.port, "GET", "/internal/force_flush", NULL, &b);
                free(b);
                bench_sleep_ms(200);
            }
            run_queries(c, &s, names, end_s, r);
            printf("  %-16s %8zu series: %10.0f points/s, %6.0f B/series RSS, raw %.2f ms, "
                   "sum 1m-avg %.2f ms, group-by %.2f ms\n",
                   sys_names[sys], c->hosts * c->metrics, r->pps[LOADGEN_TELNET], r->rss_per_series,
                   r->q_med[Q_RAW], r->q_med[Q_SUM1M], r->q_med[Q_GROUPBY]);
            fflush(stdout);
        }
    } else {
        fprintf(stderr, "%s: could not start %s\n", sys_names[sys], c->bin[sys]);
    }
    server_destroy(&s);
}

static void curve_cell(FILE *f, double o, double v, int decimals)
{
    cell(f, o, decimals);
    fprintf(f, " | ");
    cell(f, v, decimals);
    fprintf(f, " | ");
    if (o > 0 && v > 0)
        fprintf(f, "%.2f | ", o / v);
    else
        fprintf(f, "n/a | ");
}

/* The curve as one Markdown table: a row per number of series; per figure
 * octsdb, VictoriaMetrics and their ratio. */
static void curve_table(FILE *f, const opts_t *o, const result_t (*cr)[N_SYS])
{
    static const int qs[] = {Q_RAW, Q_SUM1M, Q_RATE, Q_GROUPBY, Q_LOOKUP, Q_SUGGEST};
    fprintf(f, "| series | points/s octsdb | VM | ratio | RSS B/series octsdb | VM | ratio |");
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        fprintf(f, " %s ms octsdb | VM | ratio |", query_names[qs[i]]);
    fprintf(f, "\n|---:|");
    for (size_t i = 0; i < 2 * 3 + 3 * sizeof qs / sizeof qs[0]; i++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (size_t k = 0; k < o->n_curve; k++) {
        const result_t *a = &cr[k][SYS_OCTSDB], *b = &cr[k][SYS_VM];
        fprintf(f, "| %zu | ", o->curve[k]);
        curve_cell(f, a->pps[LOADGEN_TELNET], b->pps[LOADGEN_TELNET], 0);
        curve_cell(f, a->rss_per_series, b->rss_per_series, 0);
        for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
            curve_cell(f, a->q_med[qs[i]], b->q_med[qs[i]], 2);
        fprintf(f, "\n");
    }
}

/* Runs the curve into cr[k][sys]. */
static void bench_curve(const opts_t *o, char names[][64], result_t (*cr)[N_SYS])
{
    loadgen_payload_t *pl = calloc(o->conns, sizeof(loadgen_payload_t));
    for (size_t k = 0; k < o->n_curve; k++) {
        opts_t c = *o;
        c.hosts = o->curve[k] / o->metrics;
        if (c.hosts < c.conns) c.hosts = c.conns;
        c.rounds = o->curve_rounds;
        c.reps = o->curve_reps;
        printf("cost curve: %zu series (%zu hosts x %zu metrics), %zu rounds, telnet\n",
               c.hosts * c.metrics, c.hosts, c.metrics, c.rounds);
        fflush(stdout);
        putgen_cfg_t cfg = {.seed = 42,
                            .hosts = c.hosts,
                            .metrics = c.metrics,
                            .start_s = START_S,
                            .interval_s = 10};
        loadgen_build(&cfg, LOADGEN_TELNET, c.conns, c.rounds, 0, pl);
        for (int s = 0; s < N_SYS; s++)
            if (o->bin[s] && s != SYS_INFLUX) bench_curve_point(&c, s, pl, names, &cr[k][s]);
        loadgen_payloads_free(pl, o->conns);
    }
    free(pl);
}

int main(int argc, char **argv)
{
    opts_t o = {.hosts = 1000,
                .metrics = 10,
                .rounds = 90,
                .conns = 4,
                .new_series = 20000,
                .reps = 30,
                .curve_rounds = 3,
                .curve_reps = 5};
    o.bin[SYS_OCTSDB] = bench_octsdb_bin(argv[0]);
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
            o.curve[0] = 200; /* the curve's code path, octsdb alone */
            o.n_curve = 1;
            continue;
        }
        if (!strcmp(a, "--curve-only")) {
            o.curve_only = 1;
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
        else if (!strcmp(a, "--curve")) {
            o.n_curve = 0;
            for (const char *p = v; *p && o.n_curve < MAX_CURVE;) {
                char *end;
                unsigned long long n = strtoull(p, &end, 10);
                if (end == p) goto usage;
                if (n) o.curve[o.n_curve++] = (size_t)n;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') goto usage;
            }
        } else if (!strcmp(a, "--curve-rounds"))
            o.curve_rounds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--curve-reps"))
            o.curve_reps = strtoull(v, NULL, 10);
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
    if (o.curve_rounds < 2) o.curve_rounds = 2;
    if (o.curve_reps < 1) o.curve_reps = 1;
    if (o.curve_only && !o.n_curve) goto usage;
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

    result_t r[N_SYS];
    memset(r, 0, sizeof r);
    size_t kind_points[N_KINDS] = {0}, kind_series[N_KINDS] = {0};
    if (!o.curve_only) {
        /* every mode's bytes, generated once and sent to every system in turn */
        loadgen_payload_t *pl = calloc(o.conns, sizeof(loadgen_payload_t));
        for (int m = 0; m < LOADGEN_N_MODES; m++) {
            putgen_cfg_t cfg = {.seed = 42,
                                .hosts = o.hosts,
                                .metrics = o.metrics,
                                .start_s = START_S,
                                .interval_s = 10};
            loadgen_build(&cfg, (loadgen_mode_t)m, o.conns, o.rounds, 0, pl);
            for (int s = 0; s < N_SYS; s++)
                if (o.bin[s]) bench_mode(&o, s, m, pl, names, &r[s]);
            loadgen_payloads_free(pl, o.conns);
        }
        build_new_series(&o, pl);
        for (int s = 0; s < N_SYS; s++)
            if (o.bin[s]) bench_new_series(&o, s, pl, &r[s]);
        loadgen_payloads_free(pl, o.conns);
        /* each kind of series alone, for its bytes per point (InfluxDB left out:
         * at its ~15,000 points/s it would double the run for a figure the bar
         * does not compare against) */
        for (int k = 0; k < N_KINDS; k++) {
            putgen_cfg_t cfg = {.seed = 42,
                                .hosts = o.hosts,
                                .metrics = o.metrics,
                                .start_s = START_S,
                                .interval_s = 10,
                                .class_mask = kind_masks[k]};
            loadgen_build(&cfg, LOADGEN_TELNET, o.conns, o.rounds, 0, pl);
            kind_points[k] = 0;
            for (size_t c = 0; c < o.conns; c++)
                kind_points[k] += pl[c].points;
            kind_series[k] = kind_points[k] / o.rounds;
            for (int s = 0; s < N_SYS; s++)
                if (o.bin[s] && s != SYS_INFLUX) bench_kind(&o, s, k, pl, &r[s]);
            loadgen_payloads_free(pl, o.conns);
        }
        free(pl);
        r[0].ran = 1;
    }
    result_t(*cr)[N_SYS] = calloc(MAX_CURVE, sizeof *cr);
    if (o.n_curve) bench_curve(&o, names, cr);

    printf("\n");
    if (!o.curve_only) table(stdout, &o, r);
    if (o.n_curve) {
        printf("\ncost curve (telnet, %zu rounds of 10 s; query medians of %zu runs):\n\n",
               o.curve_rounds, o.curve_reps);
        curve_table(stdout, &o, cr);
    }
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
            if (!o.curve_only) table(f, &o, r);
            if (o.n_curve) {
                fprintf(f,
                        "\n## Cost curve\n\nThe same fleet scaled to each number of series "
                        "(series / %zu metrics hosts), %zu rounds of 10 s over telnet into a "
                        "fresh instance of each system; RSS per series as above; query "
                        "medians of %zu runs; ratio = octsdb / VictoriaMetrics.\n\n",
                        o.metrics, o.curve_rounds, o.curve_reps);
                curve_table(f, &o, cr);
            }
            fprintf(f,
                    "\nNotes:\n"
                    "- points read/s: the points the system read from storage for one run of "
                    "the query, divided by its median latency; octsdb counts them itself "
                    "(rawDPs of `show_summary`), VictoriaMetrics by the growth of its "
                    "`vm_rows_read_per_query_sum` over the repeated runs, per run. "
                    "/api/search/lookup and "
                    "/api/suggest read no points: no such row. InfluxDB runs no queries "
                    "(no equivalent of these queries is set up for it): n/a.\n"
                    "- disk: the data dir's allocated bytes after a clean stop, over the points "
                    "sent; RocksDB's info log files (LOG, LOG.old.*) are not counted, as the "
                    "peers' logs (stderr) are not.\n"
                    "- after compaction: octsdb's stopped data dir after `octsdb compact "
                    "--datadir=DIR`, a full compaction of its store (its rows already hold one "
                    "block per series-hour, so OpenTSDB's row compaction has nothing left to "
                    "do). The peers have no such step to run: VictoriaMetrics merges its parts "
                    "and InfluxDB its TSM files in the background on their own schedule, so "
                    "their figure is the one after flush (n/a here).\n"
                    "- by kind: the same fleet's series of one kind only, ingested alone over "
                    "telnet into a fresh instance: %zu gauge series (%zu points), %zu integer "
                    "series (%zu points); InfluxDB not run (n/a).\n"
                    "\nHow figures are taken: see the header of bench/bench_peers.c.\n",
                    kind_series[KIND_GAUGE], kind_points[KIND_GAUGE], kind_series[KIND_INT],
                    kind_points[KIND_INT]);
            fclose(f);
        }
    }
    free(names);
    /* smoke: every octsdb figure must have been produced; the table says
     * which one is missing (n/a) */
    if (o.smoke) {
        const result_t *x = &r[0];
        int missing = !o.curve_only &&
                      (x->cpu_per_m <= 0 || x->hwm_mb <= 0 || x->rss_per_series <= 0 ||
                       x->disk_per_point <= 0 || x->disk_compacted <= 0 || x->new_series_rate <= 0);
        for (int m = 0; !o.curve_only && m < LOADGEN_N_MODES; m++)
            missing |= x->pps[m] <= 0;
        for (int k = 0; !o.curve_only && k < N_KINDS; k++)
            missing |= x->disk_kind[k] <= 0 || x->disk_kind_compacted[k] <= 0;
        for (int q = 0; !o.curve_only && q < N_QUERIES; q++)
            missing |= x->q_med[q] <= 0 || x->q_p99[q] <= 0 || (q < N_SCAN_Q && x->q_scan[q] <= 0);
        for (size_t k = 0; k < o.n_curve; k++) {
            const result_t *c = &cr[k][SYS_OCTSDB];
            missing |= c->pps[LOADGEN_TELNET] <= 0 || c->rss_per_series <= 0;
            for (int q = 0; q < N_QUERIES; q++)
                missing |= c->q_med[q] <= 0;
        }
        if (missing) {
            fprintf(stderr, "bench_peers --smoke: a figure is missing:\n");
            if (!o.curve_only) table(stderr, &o, r);
            if (o.n_curve) curve_table(stderr, &o, cr);
            rc = 1;
        }
    }
    free(cr);
    return rc;

usage:
    fprintf(stderr,
            "usage: %s [--hosts N] [--metrics N] [--hours H] [--conns N] [--new-series N] "
            "[--reps N] [--octsdb PATH] [--vm PATH] [--influx PATH] [--out FILE] [--smoke] "
            "[--curve N,N,...] [--curve-rounds N] [--curve-reps N] [--curve-only]\n",
            argv[0]);
    return 2;
}
