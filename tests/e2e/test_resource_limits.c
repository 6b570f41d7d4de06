/* test_resource_limits.c -- the daemon under hostile or careless clients:
 * thousands of idle connections, a client that never reads its replies,
 * slowloris-style partial requests, and queries over the series/point limits.
 * Each time another client must still get quick answers, and the daemon's
 * peak RSS (VmHWM) must stay within a stated bound (docs/reliability.md,
 * "Faults", gives the bounds and the figures measured).
 *
 * Design: the daemon is the real binary (tu_tsd_start); RSS is read from
 * /proc/<pid>/status. "Quick" is a `version` round trip over telnet and a
 * GET /api/version under 1 s (the daemon answers those in microseconds; the
 * slack is for a loaded 2-core CI box). Bounds are generous multiples of the
 * measured figures so that they catch leaks and unbounded buffers, not noise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

#define IDLE_CONNS 3000
/* Peak-RSS bounds; measured figures (RelWithDebInfo) in docs/reliability.md.
 * ASan's shadow memory and quarantine multiply RSS, so its build gets 4x. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_SCALE  4
#define SLOW_SCALE 3 /* and its Debug build answers slower */
#else
#define RSS_SCALE  1
#define SLOW_SCALE 1
#endif
#define RSS_IDLE_MB  (160 * RSS_SCALE) /* 3,000 idle connections: measured ~100 MB */
#define RSS_FLOOD_MB (160 * RSS_SCALE) /* clients that never read: measured ~95 MB */
#define RSS_SLOW_MB  (64 * RSS_SCALE)  /* 300 partial requests: measured ~19 MB */
#define RSS_QUERY_MB (128 * RSS_SCALE) /* over-limit queries: measured ~35 MB */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmHWM (peak RSS) of pid in kB, or -1. */
static long vm_hwm_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

/* Reads until a '\n', EOF or timeout; returns bytes read (buf NUL-terminated). */
static size_t read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t len = 0;
    double end = now_s() + timeout_ms / 1000.0;
    while (len + 1 < cap) {
        int left = (int)((end - now_s()) * 1000);
        if (left <= 0) break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, left) <= 0) break;
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0) break;
        len += (size_t)r;
        if (memchr(buf, '\n', len)) break;
    }
    buf[len] = '\0';
    return len;
}

/* A fresh client's `version` over telnet and GET /api/version: both must
 * answer correctly within max_s. Returns the slower time in seconds. */
static double probe_within(int port, double max_s)
{
    double t0 = now_s();
    int fd = tu_connect(port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, "version\n", 8), 0);
    char buf[4096];
    read_line(fd, buf, sizeof buf, (int)(max_s * 2000));
    close(fd);
    double t1 = now_s();
    if (!strstr(buf, "octsdb")) fail_msg("telnet version after %.3f s: <%s>", t1 - t0, buf);
    char *resp = NULL;
    int st = tu_http(port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL);
    double t2 = now_s();
    if (st != 200 || !resp || !strstr(resp, "\"version\"")) fail_msg("/api/version: %d", st);
    free(resp);
    double worst = t1 - t0 > t2 - t1 ? t1 - t0 : t2 - t1;
    if (worst > max_s)
        fail_msg("answer took %.3f s (telnet %.3f s, http %.3f s)", worst, t1 - t0, t2 - t1);
    return worst;
}

/* The bound tells a stalled daemon (no answer at all while the others flood
 * it) from a busy one: ctest -j2 runs the crash loop and the durability load
 * beside this test on 2 cores, where a healthy answer has taken 3.8 s under
 * ASan, so 1 s was a flake, not a finding. */
static double probe(int port)
{
    return probe_within(port, 3.0 * SLOW_SCALE);
}

static void check_rss(const char *what, int pid, long bound_mb)
{
    long kb = vm_hwm_kb(pid);
    assert_true(kb > 0);
    fprintf(stderr, "%s: peak RSS %.1f MB (bound %ld MB)\n", what, kb / 1024.0, bound_mb);
    if (kb > bound_mb * 1024) fail_msg("%s: peak RSS %ld kB over %ld MB", what, kb, bound_mb);
}

/* ---- thousands of idle connections ---------------------------------------- */

static void idle_connections_do_not_starve_others(void **state)
{
    (void)state;
    struct rlimit rl;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < rl.rlim_max) { /* the daemon inherits the raised limit */
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int n = IDLE_CONNS;
    if (rl.rlim_cur < (rlim_t)n + 200) n = (int)rl.rlim_cur - 200;
    if (n < 500) {
        fprintf(stderr, "RLIMIT_NOFILE %llu too low: skipped\n", (unsigned long long)rl.rlim_cur);
        skip();
    }
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    fprintf(stderr, "idle daemon: peak RSS %.1f MB\n", vm_hwm_kb(t.pid) / 1024.0);
    int *fds = malloc(sizeof(int) * (size_t)n);
    /* a third silent, a third telnet (one put), a third HTTP keep-alive */
    char req[] = "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n";
    int opened = 0;
    for (int i = 0; i < n; i++) {
        fds[i] = tu_connect(t.port);
        if (fds[i] < 0) fail_msg("connection %d refused (%s)", i, strerror(errno));
        opened++;
        if (i % 3 == 1) {
            char line[128];
            int l = snprintf(line, sizeof line, "put idle.m 1356998400 %d host=c%d\n", i, i);
            assert_int_equal(tu_send_all(fds[i], line, (size_t)l), 0);
        } else if (i % 3 == 2) {
            assert_int_equal(tu_send_all(fds[i], req, sizeof req - 1), 0);
        }
    }
    /* the keep-alive ones got their answer and are still open */
    int answered = 0;
    for (int i = 2; i < n; i += 3) {
        char buf[2048];
        size_t got = read_line(fds[i], buf, sizeof buf, 2000);
        answered += got > 0 && !strncmp(buf, "HTTP/1.1 200", 12);
    }
    assert_int_equal(answered, n / 3);
    double worst = probe(t.port), w2 = probe(t.port);
    fprintf(stderr, "%d idle connections: probe %.1f ms / %.1f ms\n", opened, worst * 1e3,
            w2 * 1e3);
    check_rss("idle connections", t.pid, RSS_IDLE_MB);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    probe(t.port); /* still serving once they all went away */
    tu_tsd_destroy(&t);
}

/* ---- a client that never reads its replies ------------------------------- */

typedef struct {
    int port;
    atomic_int stop;
    long long sent;
} flooder_t;

/* Sends unknown commands (each answered by an error line ~20 times its size)
 * at 6.4 MB/s -- 130 MB/s of replies, far past any buffer -- and never reads.
 * Not flat out: the point is the replies nobody reads, not a CPU race. */
static void *flood_main(void *arg)
{
    flooder_t *f = arg;
    int fd = tu_connect(f->port);
    if (fd < 0) return NULL;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    static char junk[1 << 16];
    for (size_t i = 0; i + 2 <= sizeof junk; i += 2)
        memcpy(junk + i, "x\n", 2);
    while (!atomic_load(&f->stop)) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, 100) <= 0) continue;
        ssize_t w = send(fd, junk, sizeof junk, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN) break;
        if (w > 0) f->sent += w;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    close(fd);
    return NULL;
}

static void client_that_never_reads_does_not_stall_others(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    enum { NF = 2 };
    static flooder_t f[NF]; /* static: outlives a failed assertion's longjmp */
    pthread_t th[NF];
    for (int i = 0; i < NF; i++) {
        f[i] = (flooder_t){.port = t.port};
        assert_int_equal(pthread_create(&th[i], NULL, flood_main, &f[i]), 0);
    }
    double worst = 0;
    /* 2 s of probes while the clients flood. The daemon keeps reading (it
     * drops replies past 256 kB per connection rather than stop reading, so
     * collectors that never read never block) */
    for (int i = 0; i < 20; i++) {
        double w = probe(t.port);
        if (w > worst) worst = w;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    long long sent = 0;
    for (int i = 0; i < NF; i++)
        atomic_store(&f[i].stop, 1);
    for (int i = 0; i < NF; i++) {
        pthread_join(th[i], NULL);
        sent += f[i].sent;
    }
    fprintf(stderr, "%d non-reading clients sent %.1f MB of bad lines; worst probe %.1f ms\n", NF,
            sent / 1048576.0, worst * 1e3);
    check_rss("non-reading clients", t.pid, RSS_FLOOD_MB);
    probe(t.port);
    tu_tsd_destroy(&t);
}

/* ---- slowloris ------------------------------------------------------------- */

/* Seconds until the daemon closes fd (reads and discards), or -1 after max_s. */
static double seconds_to_close(int fd, double max_s)
{
    double t0 = now_s();
    char buf[4096];
    while (now_s() - t0 < max_s) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) < 0) break;
        if (p.revents) {
            ssize_t r = recv(fd, buf, sizeof buf, 0);
            if (r <= 0) return now_s() - t0;
        }
    }
    return -1;
}

static void partial_requests_dropped_after_socket_timeout(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *extra[] = {"--set", "tsd.core.socket.timeout=1", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    enum { N = 300 };
    static int fds[N];
    static const char *const partial[] = {
        "",                                         /* connected, nothing sent */
        "put slow.m 1356998400 1 ho",               /* telnet line without its end */
        "GET /api/version HTTP/1.1\r\nHost: x\r\n", /* headers never finished */
        "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n[{\"me", /* short body */
    };
    for (int i = 0; i < N; i++) {
        fds[i] = tu_connect(t.port);
        assert_true(fds[i] >= 0);
        const char *p = partial[i % 4];
        if (*p) assert_int_equal(tu_send_all(fds[i], p, strlen(p)), 0);
    }
    /* others are served meanwhile */
    probe(t.port);
    /* each is dropped after about the 1 s timeout (the idle sweep and a busy
     * box add some): never before 0.5 s, always by 5 s */
    double t0 = now_s(), last = 0;
    for (int i = 0; i < N; i++) {
        double left = 5.0 - (now_s() - t0);
        double s = seconds_to_close(fds[i], left > 0 ? left : 0.01);
        if (s < 0) fail_msg("partial request %d (<%s>) still open after 5 s", i, partial[i % 4]);
        close(fds[i]);
        if (now_s() - t0 > last) last = now_s() - t0;
    }
    fprintf(stderr, "%d partial requests all dropped within %.2f s of the 1 s timeout\n", N, last);
    check_rss("partial requests", t.pid, RSS_SLOW_MB);
    probe(t.port);
    tu_tsd_destroy(&t);
}

/* ---- queries over the limits -------------------------------------------- */

static void over_limit_queries_get_413(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric",
                           "--set",
                           "tsd.query.limits.series.default=50",
                           "--set",
                           "tsd.query.limits.data_points.default=100000",
                           NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    /* 100 series x 3,000 points = 300,000 points: over both limits; 40 series
     * of lim.small x 2,000 = 80,000: under both */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    static char buf[1 << 20];
    size_t len = 0;
    for (int s = 0; s < 100; s++) {
        for (int j = 0; j < 3000; j++) {
            len += (size_t)snprintf(buf + len, sizeof buf - len, "put lim.big %lld %d host=h%d\n",
                                    1356998400LL + j * 10, j, s);
            if (len > sizeof buf - 256) {
                assert_int_equal(tu_send_all(fd, buf, len), 0);
                len = 0;
            }
        }
    }
    for (int s = 0; s < 40; s++)
        for (int j = 0; j < 2000; j++) {
            len += (size_t)snprintf(buf + len, sizeof buf - len, "put lim.small %lld %d host=h%d\n",
                                    1356998400LL + j * 10, 1, s);
            if (len > sizeof buf - 256) {
                assert_int_equal(tu_send_all(fd, buf, len), 0);
                len = 0;
            }
        }
    const char *reply = tu_telnet_tx(fd, NULL, "%.*s", (int)len, buf);
    if (strstr(reply, "put:")) fail_msg("load: <%s>", reply);
    close(fd);

    char *resp;
    /* too many series */
    int st =
        ac_req(&t, "GET", "/api/query?start=1356998400&end=1357030000&m=sum:lim.big", NULL, &resp);
    if (st != 413 || !strstr(resp, "\"code\":413") || !strstr(resp, "limit of 50 time series"))
        fail_msg("series limit: %d <%s>", st, resp);
    free(resp);
    /* too many points: 40 series (under 50) x 3,000 = 120,000 > 100,000 */
    st = ac_req(&t, "GET",
                "/api/query?start=1356998400&end=1357030000&m=sum:lim.big{host=h1|h2|h3|h4|h5|h6|"
                "h7|h8|h9|h10|h11|h12|h13|h14|h15|h16|h17|h18|h19|h20|h21|h22|h23|h24|h25|h26|h27|"
                "h28|h29|h30|h31|h32|h33|h34|h35|h36|h37|h38|h39|h40}",
                NULL, &resp);
    if (st != 413 || !strstr(resp, "limit of 100000 data points"))
        fail_msg("points limit: %d <%s>", st, resp);
    free(resp);
    /* under both limits: answered, the sum of 40 ones is 40 at every step */
    st = ac_req(&t, "GET", "/api/query?start=1356998400&end=1357030000&m=sum:lim.small", NULL,
                &resp);
    if (st != 200 || !strstr(resp, "\"1356998400\":40")) fail_msg("small: %d <%.300s>", st, resp);
    free(resp);
    /* again and again: the refusals hold no memory */
    for (int i = 0; i < 20; i++) {
        st = ac_req(&t, "GET", "/api/query?start=1356998400&end=1357030000&m=sum:lim.big", NULL,
                    &resp);
        free(resp);
        assert_int_equal(st, 413);
    }
    check_rss("over-limit queries", t.pid, RSS_QUERY_MB);
    probe(t.port);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_connections_do_not_starve_others),
        cmocka_unit_test(client_that_never_reads_does_not_stall_others),
        cmocka_unit_test(partial_requests_dropped_after_socket_timeout),
        cmocka_unit_test(over_limit_queries_get_413),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
