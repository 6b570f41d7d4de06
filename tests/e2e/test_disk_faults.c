/* test_disk_faults.c -- the daemon on a full disk and on a read-only data
 * dir: writes fail with a clear error, queries keep working, nothing stored
 * is damaged, and writing resumes when space returns.
 *
 * Design: the data dir lives on a small tmpfs that the test mounts (we run as
 * root in CI's sandbox; where mount(2) is refused the tests skip). The disk
 * fills up with /api/put?sync=true batches of incompressible values, so every
 * acknowledged point is known; then the error shapes over HTTP and telnet,
 * a query, and after `mount -o remount,size=` gives space back, a restart
 * (the write-ahead log's failure is sticky inside a running daemon, by
 * design: a log with a hole must not take later records) must accept writes
 * again and hold every acknowledged point exactly once with its value, with
 * `octsdb fsck` clean. A read-only data dir is a read-only bind mount (root
 * ignores file modes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

#define BASE_TS     1356998400LL
#define BATCH       500
#define MAX_BATCHES 400

/* A 47-bit value that LZ4/ZSTD and the block codec cannot shrink much. */
static long long val_of(long long j)
{
    uint64_t x = (uint64_t)j * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (long long)(x & ((1ull << 47) - 1));
}

static char g_mounted[2][4200]; /* unmounted by the group teardown if a test fails */

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++)
        if (g_mounted[i][0]) umount2(g_mounted[i], MNT_DETACH);
    return 0;
}

static int mount_tmpfs(const char *dir, const char *size)
{
    snprintf(g_mounted[0], sizeof g_mounted[0], "%s", dir);
    char opt[64];
    snprintf(opt, sizeof opt, "size=%s", size);
    return mount("tmpfs", dir, "tmpfs", 0, opt);
}

static void disk_full_fails_clearly_and_recovers(void **state)
{
    (void)state;
    char *root = tu_tempdir();
    char mnt[4200], data[4300];
    snprintf(mnt, sizeof mnt, "%s/mnt", root);
    assert_int_equal(mkdir(mnt, 0755), 0);
    if (mount_tmpfs(mnt, "6m") != 0) {
        fprintf(stderr, "cannot mount tmpfs (%s): skipped\n", strerror(errno));
        tu_rmrf(root);
        free(root);
        skip();
    }
    snprintf(data, sizeof data, "%s/data", mnt);
    tu_tsd_t t = {.dir = strdup(data)};
    /* 1 MB log segments: the default 64 MB would not fit the 6 MB disk at all */
    const char *extra[] = {"--auto-metric", "--set", "tsd.storage.wal.segment_mb=1", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);

    /* fill the disk; every 204 is an acknowledged batch */
    static char body[BATCH * 128];
    long long acked = 0, sent = 0;
    int st = 0;
    char *resp = NULL;
    for (int b = 0; b < MAX_BATCHES; b++) {
        size_t len = 0;
        body[len++] = '[';
        for (int i = 0; i < BATCH; i++) {
            long long j = (long long)b * BATCH + i;
            len += (size_t)snprintf(body + len, sizeof body - len,
                                    "%s{\"metric\":\"df.m\",\"timestamp\":%lld,\"value\":%lld,"
                                    "\"tags\":{\"host\":\"a\"}}",
                                    i ? "," : "", BASE_TS + j, val_of(j));
        }
        body[len++] = ']';
        sent = (long long)(b + 1) * BATCH;
        free(resp);
        resp = NULL;
        st = tu_http(t.port, "POST", "/api/put?sync=true", "Content-Type: application/json\r\n",
                     body, len, &resp, NULL);
        if (st != 204) break;
        acked = sent;
    }
    /* the disk filled before MAX_BATCHES (200,000 points, ~1.6 MB raw per 100k) */
    if (st == 204) fail_msg("6 MB disk never filled after %lld points", acked);
    assert_true(acked > 0);
    /* a clear error naming the cause: 500 with OpenTSDB's JSON error when the
     * batch was taken but its log write failed, 400 with the put error list
     * when the log had already failed before the batch */
    if ((st != 400 && st != 500) || !resp || !strstr(resp, "\"error") ||
        !strstr(resp, "No space left"))
        fail_msg("disk full: status %d <%s>", st, resp ? resp : "");
    free(resp);
    resp = NULL;

    /* with details, the failed point is listed */
    const char *one = "[{\"metric\":\"df.m\",\"timestamp\":1357300000,\"value\":1,"
                      "\"tags\":{\"host\":\"a\"}}]";
    st = ac_req(&t, "POST", "/api/put?sync=true&details", one, &resp);
    if (st != 400 || !strstr(resp, "\"failed\":1") || !strstr(resp, "No space left"))
        fail_msg("details: %d <%s>", st, resp);
    free(resp);

    /* telnet: one error line per rejected put */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *line = "put df.m 1357300001 1 host=a\n";
    assert_int_equal(tu_send_all(fd, line, strlen(line)), 0);
    char reply[4096];
    tu_recv_some(fd, reply, sizeof reply, 1500);
    if (strncmp(reply, "put: ", 5) != 0 || !strstr(reply, "No space left"))
        fail_msg("telnet on a full disk: <%s>", reply);
    close(fd);

    /* queries keep working, and see every acknowledged point (one series:
     * sum is the series itself; count the dps members) */
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:df.m{host=a}", BASE_TS,
             BASE_TS + sent + 10);
    st = ac_req(&t, "GET", target, NULL, &resp);
    assert_int_equal(st, 200);
    long dps = 0;
    const char *d = strstr(resp, "\"dps\":{");
    assert_non_null(d);
    for (const char *p = d + 7; *p && *p != '}'; p++)
        dps += *p == ':';
    free(resp);
    if (dps < acked || dps > sent)
        fail_msg("query on a full disk: %ld points, acked %lld", dps, acked);

    /* space returns; the daemon needs a restart to write again (see above).
     * The clean stop flushes the heads into the store, which now has room. */
    assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT, "size=64m"), 0);
    int stop_rc = tu_tsd_stop(&t);
    if (stop_rc != 0) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "tail -5 '%s' >&2", t.log);
        if (system(cmd) < 0) perror("system");
        /* KNOWN BUG: after RocksDB itself hit ENOSPC, the clean stop can
         * abort inside RocksDB (Debug build: "writable_file_writer.h:312:
         * AssertFalseAndGetStatusForPrevError(): Assertion
         * `sync_without_flush_called_' failed", exit 134): the shutdown
         * syncs/flushes a store whose writer already failed. The stop must
         * exit 0. Skipped unless OCT_TEST_KNOWN_BUGS is set. */
        if (!getenv("OCT_TEST_KNOWN_BUGS")) {
            fprintf(stderr, "known bug: clean stop after disk full exited %d\n", stop_rc);
            tu_tsd_destroy(&t);
            umount2(mnt, MNT_DETACH);
            g_mounted[0][0] = '\0';
            tu_rmrf(root);
            free(root);
            skip();
        }
        fail_msg("clean stop after the disk filled: exit status %d", stop_rc);
    }
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    st = ac_req(&t, "POST", "/api/put?sync=true", one, &resp);
    if (st != 204) fail_msg("after space returned: %d <%s>", st, resp);
    free(resp);
    fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *more = "put df.m 1357300001 2 host=a\nversion\n";
    assert_int_equal(tu_send_all(fd, more, strlen(more)), 0);
    tu_recv_some(fd, reply, sizeof reply, 500);
    if (strstr(reply, "put:")) fail_msg("telnet after space returned: <%s>", reply);
    close(fd);
    assert_int_equal(tu_tsd_stop(&t), 0);

    /* nothing stored is damaged: every acknowledged point exactly once with
     * its value; points past it only ones that were sent; the two new ones */
    tsdb_t *db = ac_open_dir(data);
    const char *tags[] = {"host=a"};
    uint8_t tsuid[64];
    int tl = ac_tsuid(db, "df.m", tags, 1, tsuid);
    assert_true(tl > 0);
    codec_point_t *pts = NULL;
    size_t n = 0;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_read_series(db, tsuid, (size_t)tl, 0, INT64_MAX, &pts, &n, &eb), 0);
    assert_true(n >= (size_t)acked + 2);
    for (size_t i = 0; i + 2 < n; i++) {
        long long j = pts[i].ts_ms / 1000 - BASE_TS;
        if (pts[i].ts_ms % 1000 || j != (long long)i || j >= sent || pts[i].is_float ||
            pts[i].val.i != val_of(j))
            fail_msg("point %zu: ts %lld value %lld", i, (long long)pts[i].ts_ms,
                     (long long)pts[i].val.i);
    }
    assert_int_equal(pts[n - 2].ts_ms, 1357300000000LL);
    assert_int_equal(pts[n - 2].val.i, 1);
    assert_int_equal(pts[n - 1].ts_ms, 1357300001000LL);
    assert_int_equal(pts[n - 1].val.i, 2);
    free(pts);
    tsdb_close(db);
    char flag[4400];
    snprintf(flag, sizeof flag, "--datadir=%s", data);
    char *out = NULL;
    const char *fsck[] = {"fsck", flag, "--full-scan", NULL};
    int rc = tu_run_octsdb(&out, fsck);
    if (rc != 0 || !strstr(out, "Total Errors: 0")) fail_msg("fsck %d:\n%s", rc, out);
    free(out);
    const char *ufsck[] = {"uid", flag, "fsck", NULL};
    rc = tu_run_octsdb(&out, ufsck);
    if (rc != 0) fail_msg("uid fsck %d:\n%s", rc, out);
    free(out);
    fprintf(stderr, "disk full: %lld points acknowledged before the 6 MB disk filled\n", acked);

    tu_tsd_destroy(&t);
    umount2(mnt, MNT_DETACH);
    g_mounted[0][0] = '\0';
    tu_rmrf(root);
    free(root);
}

/* Writes one point through a short-lived daemon, so a dir holds data. */
static void populate(char *dir)
{
    tu_tsd_t t = {.dir = strdup(dir)};
    const char *extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    char *resp;
    int st = ac_req(&t, "POST", "/api/put?sync=true",
                    "{\"metric\":\"ro.m\",\"timestamp\":1356998400,\"value\":42,"
                    "\"tags\":{\"host\":\"a\"}}",
                    &resp);
    free(resp);
    assert_int_equal(st, 204);
    assert_int_equal(tu_tsd_stop(&t), 0);
    free(t.dir);
}

/* Makes 'ro' a read-only bind mount of 'src'; 0 or -1 (errno). */
static int bind_ro(const char *src, const char *ro)
{
    if (mount(src, ro, NULL, MS_BIND, NULL) != 0) return -1;
    snprintf(g_mounted[1], sizeof g_mounted[1], "%s", ro);
    if (mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
        umount2(ro, MNT_DETACH);
        return -1;
    }
    return 0;
}

static void read_only_dir_refused_clearly(void **state)
{
    (void)state;
    char *root = tu_tempdir();
    char src[4200], ro[4200];
    snprintf(src, sizeof src, "%s/src", root);
    snprintf(ro, sizeof ro, "%s/ro", root);
    assert_int_equal(mkdir(ro, 0755), 0);
    populate(src);
    if (bind_ro(src, ro) != 0) {
        fprintf(stderr, "cannot bind-mount read-only (%s): skipped\n", strerror(errno));
        tu_rmrf(root);
        free(root);
        skip();
    }
    /* The remount must really be read-only, or this case tests nothing (seen
     * once in the ASan suite: the probe below would have been writable). */
    char probe[4300];
    snprintf(probe, sizeof probe, "%s/.probe", ro);
    int pfd = open(probe, O_WRONLY | O_CREAT, 0644);
    if (pfd >= 0) {
        close(pfd);
        unlink(probe);
        umount2(ro, MNT_DETACH);
        fprintf(stderr, "the read-only bind mount is writable here: skipped\n");
        tu_rmrf(root);
        free(root);
        skip();
    }
    /* read-write mode on a read-only dir: the daemon refuses to start and
     * says why (rather than accepting puts it cannot keep) */
    tu_tsd_t t = {.dir = strdup(ro)};
    const char *extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), -1);
    FILE *f = fopen(t.log, "r");
    assert_non_null(f);
    static char log[1 << 16];
    size_t ln = fread(log, 1, sizeof log - 1, f);
    log[ln] = '\0';
    fclose(f);
    if (!strstr(log, "Read-only file system")) fail_msg("log does not say why:\n%s", log);
    unlink(t.log);
    free(t.dir);

    /* nothing was damaged: the source still reads back */
    umount2(ro, MNT_DETACH);
    tsdb_t *db = ac_open_dir(src);
    const char *tags[] = {"host=a"};
    codec_point_t *pts;
    long n;
    ac_read(db, "ro.m", tags, 1, &pts, &n);
    assert_int_equal(n, 1);
    assert_int_equal(pts[0].val.i, 42);
    free(pts);
    tsdb_close(db);
    tu_rmrf(root);
    free(root);
}

/* tsd.mode=ro on a read-only dir should serve queries (and refuse puts).
 * KNOWN BUG, disabled: the daemon cannot open a read-only dir even in ro
 * mode -- src/server/tsd.c:159 opens the store with flags 0 (read-write)
 * whatever tsd.mode says, and the RocksDB store (src/store/store_rocksdb.c,
 * make_options) keeps its info LOG in the data dir and renames it at every
 * open, read-only opens included, so `octsdb query` on such a dir fails too:
 * "IO error: While renaming a file to <dir>/LOG.old.<n>: Read-only file
 * system". Run with OCT_TEST_KNOWN_BUGS=1 to try it. */
static void read_only_dir_serves_queries_in_ro_mode(void **state)
{
    (void)state;
    if (!getenv("OCT_TEST_KNOWN_BUGS")) skip();
    char *root = tu_tempdir();
    char src[4200], ro[4200];
    snprintf(src, sizeof src, "%s/src", root);
    snprintf(ro, sizeof ro, "%s/ro", root);
    assert_int_equal(mkdir(ro, 0755), 0);
    populate(src);
    if (bind_ro(src, ro) != 0) {
        tu_rmrf(root);
        free(root);
        skip();
    }
    tu_tsd_t t = {.dir = strdup(ro)};
    const char *extra[] = {"--set", "tsd.mode=ro", NULL};
    int started = tu_tsd_start(&t, extra);
    if (started == 0) {
        char *resp;
        int st = ac_req(&t, "GET", "/api/query?start=1356998400&m=sum:ro.m", NULL, &resp);
        int ok = st == 200 && strstr(resp, "\"1356998400\":42") != NULL;
        free(resp);
        tu_tsd_stop(&t);
        if (!ok) fail_msg("query in ro mode: %d", st);
    }
    umount2(ro, MNT_DETACH);
    unlink(t.log);
    free(t.dir);
    tu_rmrf(root);
    free(root);
    assert_int_equal(started, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disk_full_fails_clearly_and_recovers),
        cmocka_unit_test(read_only_dir_refused_clearly),
        cmocka_unit_test(read_only_dir_serves_queries_in_ro_mode),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
