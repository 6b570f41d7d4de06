/* server.c -- the systems bench_peers runs: start, restart, stop, their data dir (see peers.h). */
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

#include "peers/peers.h"

/* ---- sockets and HTTP ------------------------------------------------- */

/* One request with Connection: close; the whole response into *out (body
 * after the headers; malloc'd). Returns the status or -1. */
int http_req(int port, const char *method, const char *target, const char *body, char **out)
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
double proc_cpu_s(int pid)
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

long long du_bytes(const char *dir)
{
    du_total = 0;
    if (nftw(dir, du_cb, 32, FTW_PHYS) < 0) return -1;
    return du_total;
}

void print_log(const server_t *s)
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

/* Forks and execs s's system on s->dir and its ports, output to s->log
 * (appended to with append). Returns the pid or -1. */
static int spawn(const server_t *s, int append)
{
    char a[4][320], conf[300];
    const char *bin = s->bin;
    snprintf(conf, sizeof conf, "%s.conf", s->dir);
    if (s->sys == SYS_INFLUX && write_influx_conf(s, conf) < 0) return -1;
    pid_t pid = fork();
    if (pid != 0) return pid;
    int fd = open(s->log, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
    if (s->sys == SYS_OCTSDB) {
        snprintf(a[0], sizeof a[0], "--port=%d", s->port);
        snprintf(a[1], sizeof a[1], "--datadir=%s", s->dir);
        execl(bin, bin, "tsd", "--bind=127.0.0.1", a[0], a[1], "--auto-metric", (char *)NULL);
    } else if (s->sys == SYS_VM) {
        snprintf(a[0], sizeof a[0], "-storageDataPath=%s", s->dir);
        snprintf(a[1], sizeof a[1], "-httpListenAddr=127.0.0.1:%d", s->port);
        snprintf(a[2], sizeof a[2], "-opentsdbListenAddr=127.0.0.1:%d", s->telnet);
        snprintf(a[3], sizeof a[3], "-opentsdbHTTPListenAddr=127.0.0.1:%d", s->put);
        /* its per-query series limits (300,000 for a range query,
         * 30,000 from the series API) and its 30 s query deadline would
         * refuse the cost curve's queries at 1 M series (its sum over every
         * series answered 422 on the loaded machine): raised, as an
         * operator would; octsdb has no such limits */
        execl(bin, bin, a[0], a[1], a[2], a[3], "-retentionPeriod=100y", "-search.disableCache",
              "-loggerLevel=ERROR", "-search.maxUniqueTimeseries=100000000",
              "-search.maxSeries=100000000", "-search.maxTagValues=100000000",
              "-search.maxQueryDuration=600s", (char *)NULL);
    } else {
        execl(bin, bin, "-config", conf, (char *)NULL);
    }
    _exit(127);
}

int server_start(server_t *s, int sys, const char *bin)
{
    memset(s, 0, sizeof *s);
    s->sys = sys;
    s->bin = bin;
    /* $TMPDIR when set: the cost curve's 1 M series take about a gigabyte */
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/bench_peers.%d.XXXXXX", tmp && *tmp ? tmp : "/tmp", sys);
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
        pid_t pid = spawn(s, 0);
        if (pid < 0) return -1;
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

int server_respawn(server_t *s)
{
    if (s->pid > 0) return -1;
    pid_t pid = spawn(s, 1);
    if (pid < 0) return -1;
    s->pid = pid;
    return 0;
}

/* A clean stop (each flushes on SIGTERM/SIGINT): returns 0 if it exited. */
int server_stop(server_t *s)
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

void server_destroy(server_t *s)
{
    server_stop(s);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s.conf'", s->dir, s->log, s->dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}
