/* test_stop_signals.c -- signals while the TSD stops: a second SIGTERM
 * during a clean stop is logged and ignored (the TSD finishes and exits 0,
 * every point it took there after a restart), a third forces the exit at
 * once (status 128 + 15) and a point acknowledged by /api/put?sync before
 * is there after the restart.
 *
 * Design: the stop must last while the test sends its signals, and for as
 * long as the test wants: a query whose answer (N_POINTS raw points, a few
 * MiB) the test does not read keeps one HTTP request in flight, and the TSD
 * waits for it (up to its grace period) before it flushes. The test reads
 * the answer only after its signals, and checks it is whole. The points are
 * counted back with a 0all-count downsample: N_POINTS sent by telnet (and
 * one more by the sync put). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define N_POINTS 300000
#define BASE_TS  1356998400L

static tu_tsd_t tsd;

static const char *const extra[] = {"--auto-metric", NULL};

static int setup(void **state)
{
    (void)state;
    memset(&tsd, 0, sizeof tsd);
    return tu_tsd_start(&tsd, extra);
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&tsd);
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The log's size: where the lines of the next stop begin (the log holds
 * every start's). */
static long g_log_from;

static void mark_log(void)
{
    FILE *f = fopen(tsd.log, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    g_log_from = ftell(f);
    fclose(f);
}

/* Waits (20 s at most) until the daemon's log after the mark holds text. */
static void wait_log(const char *text)
{
    for (int i = 0; i < 4000; i++) {
        FILE *f = fopen(tsd.log, "r");
        static char buf[1 << 20];
        if (f) fseek(f, g_log_from, SEEK_SET);
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        buf[n] = '\0';
        if (strstr(buf, text)) return;
        sleep_ms(5);
    }
    tu_tsd_print_log(&tsd);
    fail_msg("the log never said <%s>", text);
}

/* N_POINTS points of stop.m over telnet, 1 s apart, value = index. */
static void load_points(void)
{
    size_t cap = (size_t)N_POINTS * 48, len = 0;
    char *buf = malloc(cap);
    for (int i = 0; i < N_POINTS; i++)
        len += (size_t)snprintf(buf + len, cap - len, "put stop.m %ld %d host=a\n", BASE_TS + i, i);
    len += (size_t)snprintf(buf + len, cap - len, "version\n");
    int fd = tu_connect(tsd.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, buf, len), 0);
    char reply[4096];
    tu_recv_until(fd, reply, sizeof reply, TU_VERSION_HEAD, 60000);
    if (!strstr(reply, TU_VERSION_HEAD)) fail_msg("telnet load answered <%s>", reply);
    close(fd);
    free(buf);
}

/* The count of stop.m's points stored, from the running TSD. */
static long count_points(void)
{
    char target[256], *resp = NULL;
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:0all-count:stop.m", BASE_TS,
             BASE_TS + N_POINTS + 10);
    assert_int_equal(tu_http(tsd.port, "GET", target, NULL, NULL, 0, &resp, NULL), 200);
    const char *d = strstr(resp, "\"dps\":{\"");
    long n = -1;
    if (!d || sscanf(strchr(d + 7, ':') + 1, "%ld", &n) != 1) fail_msg("query: <%s>", resp);
    free(resp);
    return n;
}

/* A raw query of every point, sent on a socket with a small receive buffer
 * and not read: the answer stays in flight. Returns the socket once the
 * answer has started. */
static int open_blocked_query(void)
{
    /* set before connect, so the window is small from the start (set after,
     * the transfer crawls once it resumes) */
    int small = 4096;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)tsd.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /api/query?start=%ld&end=%ld&m=sum:stop.m HTTP/1.1\r\nHost: x\r\n\r\n",
                     BASE_TS, BASE_TS + N_POINTS + 10);
    assert_int_equal(tu_send_all(fd, req, (size_t)n), 0);
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 30000), 1);
    return fd;
}

/* Reads the answer to its end: 200, and the body's last point. */
static void read_answer(int fd)
{
    size_t cap = 64u << 20, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    struct timeval tv = {30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char last[64];
    snprintf(last, sizeof last, "\"%ld\":%d}}]", BASE_TS + N_POINTS - 1, N_POINTS - 1);
    while (len < cap - 1 && (r = recv(fd, buf + len, cap - 1 - len, 0)) > 0) {
        len += (size_t)r;
        buf[len] = '\0';
        if (len >= strlen(last) && !strcmp(buf + len - strlen(last), last)) break;
    }
    buf[len] = '\0';
    assert_memory_equal(buf, "HTTP/1.1 200 ", 13);
    if (len < strlen(last) || strcmp(buf + len - strlen(last), last))
        fail_msg("answer cut: %zu bytes, ends <%s>", len, len > 40 ? buf + len - 40 : buf);
    free(buf);
    close(fd);
}

static int still_running(void)
{
    int st;
    return waitpid(tsd.pid, &st, WNOHANG) == 0;
}

static int wait_exit(void)
{
    int st;
    assert_int_equal(waitpid(tsd.pid, &st, 0), tsd.pid);
    tsd.pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Holds the stop with a blocked query, sends SIGTERM, and once the stop
 * has begun a second one, which the log must call ignored. Returns the
 * query's socket (its answer unread). */
static int stop_and_repeat(void)
{
    int q = open_blocked_query();
    mark_log();
    kill(tsd.pid, SIGTERM);
    wait_log("Received SIGTERM, shutting down");
    kill(tsd.pid, SIGTERM);
    wait_log("Received SIGTERM while stopping: ignored");
    return q;
}

static void second_sigterm_is_ignored(void **state)
{
    (void)state;
    load_points();
    int q = stop_and_repeat();
    assert_true(still_running());
    read_answer(q);
    assert_int_equal(wait_exit(), 0);
    wait_log("Shutdown complete");
    assert_int_equal(tu_tsd_start(&tsd, extra), 0);
    assert_int_equal(count_points(), N_POINTS);
}

static void third_sigterm_forces(void **state)
{
    (void)state;
    /* one more point, acknowledged once its log record is on disk */
    char body[160], *resp = NULL;
    snprintf(body, sizeof body,
             "{\"metric\":\"stop.m\",\"timestamp\":%ld,\"value\":7,"
             "\"tags\":{\"host\":\"a\"}}",
             BASE_TS + N_POINTS + 5);
    assert_int_equal(
        tu_http(tsd.port, "POST", "/api/put?sync", NULL, body, strlen(body), &resp, NULL), 204);
    free(resp);
    int q = stop_and_repeat();
    kill(tsd.pid, SIGTERM);
    assert_int_equal(wait_exit(), 128 + SIGTERM);
    wait_log("Received SIGTERM again while stopping: exiting now");
    close(q);
    assert_int_equal(tu_tsd_start(&tsd, extra), 0);
    assert_int_equal(count_points(), N_POINTS + 1);
    assert_int_equal(tu_tsd_stop(&tsd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_sigterm_is_ignored),
        cmocka_unit_test(third_sigterm_forces),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
