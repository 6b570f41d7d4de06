/* test_put_parked_fault.c -- a small /api/put (no ?sync) whose answer was
 * parked to wait for the write-ahead log, when that log write then fails:
 * the client gets 500 with OpenTSDB's error object, the TSD goes on taking
 * writes once the disk has room again, and after a restart every point
 * that was acknowledged (204) is there with its value.
 *
 * Design: the data dir is on a small tmpfs the test mounts (skipped where
 * mount(2) is refused). The TSD runs one polling thread. The test stops the
 * log's own thread ("tsdb-wal") with ptrace (PTRACE_SEIZE + INTERRUPT:
 * that thread alone, the rest of the TSD runs), so a put can only be
 * answered after the log has written it: the polling thread waits its
 * millisecond, parks the answer and serves on -- a GET on another
 * connection answers meanwhile, which proves the put is parked and not
 * holding the only polling thread. Then the test fills the disk with a
 * file of its own and lets the log thread go: its write fails (ENOSPC),
 * and the parked put must be answered 500. The filler removed, a sync put
 * is acknowledged again without a restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define BASE_TS 1356998400L

static char g_mnt[4200];

static int teardown(void **state)
{
    (void)state;
    if (g_mnt[0]) umount2(g_mnt, MNT_DETACH);
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The thread of pid named name, or -1. */
static pid_t find_thread(pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    pid_t found = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) && found < 0) {
        char comm[400], buf[32] = "";
        snprintf(comm, sizeof comm, "%s/%s/comm", path, e->d_name);
        FILE *f = fopen(comm, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f) && !strncmp(buf, name, strlen(name)) &&
            buf[strlen(name)] == '\n')
            found = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* n points of par.m at BASE_TS + i.., value = their offset, as a raw POST
 * on fd. */
static void send_put(int fd, int i, int n, int sync)
{
    static char body[1 << 17], req[(1 << 17) + 256];
    size_t bl = 0;
    for (int k = 0; k < n; k++)
        bl += (size_t)snprintf(body + bl, sizeof body - bl,
                               "%s{\"metric\":\"par.m\",\"timestamp\":%ld,\"value\":%d,"
                               "\"tags\":{\"host\":\"a\"}}",
                               k ? "," : "[", BASE_TS + i + k, i + k);
    bl += (size_t)snprintf(body + bl, sizeof body - bl, "]");
    int rl = snprintf(req, sizeof req,
                      "POST /api/put%s HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
                      sync ? "?sync" : "", bl, body);
    assert_int_equal(tu_send_all(fd, req, (size_t)rl), 0);
}

/* Reads one answer (headers and Content-Length body) from fd; its status. */
static int read_answer(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    char *hdr_end = NULL;
    while (!hdr_end && n + 1 < cap) {
        if (tu_recv_some(fd, buf + n, 2, timeout_ms) != 1) return -1;
        n++;
        buf[n] = '\0';
        hdr_end = strstr(buf, "\r\n\r\n");
    }
    const char *cl = strstr(buf, "Content-Length: ");
    size_t want = cl ? (size_t)atol(cl + 16) : 0;
    size_t body = n - (size_t)(hdr_end + 4 - buf);
    for (; body < want && n + 1 < cap; body++, n++)
        if (tu_recv_some(fd, buf + n, 2, timeout_ms) != 1) return -1;
    buf[n] = '\0';
    int st = -1;
    sscanf(buf, "HTTP/1.1 %d", &st);
    return st;
}

/* Nothing to read on fd for ms? */
static int silent_for(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 0;
}

static void parked_put_gets_500_when_the_log_fails(void **state)
{
    (void)state;
    char *root = tu_tempdir();
    char data[4300], filler[4300];
    snprintf(g_mnt, sizeof g_mnt, "%s/mnt", root);
    assert_int_equal(mkdir(g_mnt, 0755), 0);
    if (mount("tmpfs", g_mnt, "tmpfs", 0, "size=8m") != 0) {
        fprintf(stderr, "cannot mount tmpfs (%s): skipped\n", strerror(errno));
        g_mnt[0] = '\0';
        tu_rmrf(root);
        free(root);
        skip();
    }
    snprintf(data, sizeof data, "%s/data", g_mnt);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    tu_tsd_t t = {.dir = strdup(data)};
    const char *extra[] = {"--auto-metric", "--worker-threads=1", "--set",
                           "tsd.storage.wal.segment_mb=1", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    static char buf[1 << 16];

    /* acknowledged before: points 0..9 */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    for (int i = 0; i < 10; i++) {
        send_put(fd, i, 1, i == 9);
        assert_int_equal(read_answer(fd, buf, sizeof buf, 10000), 204);
    }

    /* the log thread stopped: the answer to a put of 1,000 points (its
     * log record needs fresh pages) is parked */
    pid_t wal = find_thread(t.pid, "tsdb-wal");
    assert_true(wal > 0);
    if (ptrace(PTRACE_SEIZE, wal, 0, 0) != 0) {
        fprintf(stderr, "cannot ptrace the log thread (%s): skipped\n", strerror(errno));
        close(fd);
        tu_tsd_destroy(&t);
        skip();
    }
    assert_int_equal(ptrace(PTRACE_INTERRUPT, wal, 0, 0), 0);
    int wst;
    assert_int_equal(waitpid(wal, &wst, __WALL), wal);
    send_put(fd, 100, 1000, 0); /* a record of many pages: the disk full refuses it */
    assert_true(silent_for(fd, 300));
    char *resp = NULL;
    assert_int_equal(tu_http(t.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 200);
    free(resp);
    assert_true(silent_for(fd, 10));

    /* the disk full, the log thread goes on: its write fails */
    int ff = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(ff >= 0);
    memset(buf, 0x5a, sizeof buf);
    while (write(ff, buf, sizeof buf) > 0)
        ;
    assert_int_equal(errno, ENOSPC);
    close(ff);
    assert_int_equal(ptrace(PTRACE_DETACH, wal, 0, 0), 0);
    assert_int_equal(read_answer(fd, buf, sizeof buf, 20000), 500);
    if (!strstr(buf, "\r\n\r\n{\"error\":{\"code\":500,\"message\":\"Unable to write the data "
                     "points to the log\""))
        fail_msg("answer <%s>", buf);
    close(fd);

    /* room again: the same TSD acknowledges a sync put (the log starts a
     * fresh segment by itself, within a few retries) */
    unlink(filler);
    int acked = 0;
    for (int k = 0; k < 100 && !acked; k++) {
        fd = tu_connect(t.port);
        assert_true(fd >= 0);
        send_put(fd, 11, 1, 1);
        int st = read_answer(fd, buf, sizeof buf, 10000);
        close(fd);
        if (st == 204)
            acked = 1;
        else
            sleep_ms(100);
    }
    assert_true(acked);

    /* restart: the acknowledged points 0..9 and 11, each with its value */
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:par.m", BASE_TS,
             BASE_TS + 12);
    assert_int_equal(tu_http(t.port, "GET", target, NULL, NULL, 0, &resp, NULL), 200);
    for (int i = 0; i < 12; i++) {
        if (i == 10) continue; /* never sent */
        char want[64];
        snprintf(want, sizeof want, "\"%ld\":%d", BASE_TS + i, i);
        if (!strstr(resp, want)) fail_msg("point %d lost: <%s>", i, resp);
    }
    free(resp);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
    umount2(g_mnt, MNT_DETACH);
    g_mnt[0] = '\0';
    tu_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parked_put_gets_500_when_the_log_fails),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
