/* test_disk_faults.c -- the daemon on a full disk and on a read-only data
 * dir: writes fail with a clear error, queries keep working, nothing stored
 * is damaged, and writing resumes when space returns.
 *
 * Design: the data dir lives on a small tmpfs that the test mounts (we run as
 * root in CI's sandbox; where mount(2) is refused the tests skip). The disk
 * fills up with /api/put?sync=true batches of incompressible values, so every
 * acknowledged point is known; then the error shapes over HTTP and telnet,
 * a query, and after `mount -o remount,size=` gives space back the SAME
 * daemon must take writes again (the log starts a fresh segment by itself);
 * a clean stop and a restart must then hold every acknowledged point exactly
 * once with its value, nothing that was not sent, and `octsdb fsck` clean. A read-only data dir is
 * a read-only bind mount (root ignores file modes). */
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
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

#define BASE_TS 1356998400LL
#define BATCH   500
/* the flush frees log segments as it goes: a slow (TSan) run once took
 * 200,000 points without filling the disk */
#define MAX_BATCHES 1600
/* points written after space returns: timestamps AFTER_TS + k, values val_of(AFTER_J + k) */
#define AFTER_TS      1357400000LL
#define AFTER_J       1000000LL
#define RECOVER_BATCH 500
#define RECOVER_MAX   2000
#define TELNET_TRIES  5

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The value of one /api/stats metric, or -1. */
static long long stat_value(const tu_tsd_t *t, const char *metric)
{
    char *resp = NULL;
    int st = tu_http(t->port, "GET", "/api/stats", NULL, NULL, 0, &resp, NULL);
    long long v = -1;
    char key[128];
    snprintf(key, sizeof key, "\"metric\":\"%s\"", metric);
    const char *p = st == 200 && resp ? strstr(resp, key) : NULL;
    const char *q = p ? strstr(p, "\"value\":\"") : NULL;
    if (q) v = strtoll(q + 9, NULL, 10);
    free(resp);
    return v;
}

static void dump_log(const tu_tsd_t *t)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "tail -20 '%s' >&2", t->log);
    if (system(cmd) < 0) perror("system");
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

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
    /* 1 MB log segments: the default 64 MB would not fit the 6 MB disk at
     * all; heads flushed (as extra blocks) once 500 ms old, so RocksDB's
     * writes meet the full disk too */
    const char *extra[] = {"--auto-metric",
                           "--set",
                           "tsd.storage.wal.segment_mb=1",
                           "--set",
                           "tsd.storage.head.open_flush_ms=500",
                           NULL};
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
    /* the disk filled before MAX_BATCHES (800,000 points, ~1.6 MB raw per 100k) */
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

    /* with details, the failed point is listed (400: the log refused it at
     * once, as it does while failing; 500 if it had just started a fresh
     * segment in space RocksDB freed and the write failed again) */
    const char *one = "[{\"metric\":\"df.m\",\"timestamp\":1357300000,\"value\":1,"
                      "\"tags\":{\"host\":\"a\"}}]";
    st = ac_req(&t, "POST", "/api/put?sync=true&details", one, &resp);
    if (!((st == 400 && strstr(resp, "\"failed\":1")) || st == 500) ||
        !strstr(resp, "No space left"))
        fail_msg("details: %d <%s>", st, resp);
    free(resp);

    /* telnet: one error line per rejected put (a put that slipped into a
     * fresh segment gets none: it fails later, unacknowledged; retry) */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    char reply[4096] = "";
    for (int i = 1; i <= TELNET_TRIES; i++) {
        char line[128];
        snprintf(line, sizeof line, "put df.m %lld 1 host=a\n", 1357300000LL + i);
        assert_int_equal(tu_send_all(fd, line, strlen(line)), 0);
        tu_recv_some(fd, reply, sizeof reply, 1000);
        if (reply[0]) break;
    }
    if (strncmp(reply, "put: ", 5) != 0 || !strstr(reply, "No space left"))
        fail_msg("telnet on a full disk: <%s>", reply);
    close(fd);

    /* queries keep working, and see every acknowledged point (one series:
     * sum is the series itself; count the dps members) */
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:df.m{host=a}", BASE_TS,
             BASE_TS + sent + 10);
    st = ac_req(&t, "GET", target, NULL, &resp);
    if (st != 200) {
        dump_log(&t);
        fail_msg("query on a full disk: %d <%s>", st, resp);
    }
    long dps = 0;
    const char *d = strstr(resp, "\"dps\":{");
    assert_non_null(d);
    for (const char *p = d + 7; *p && *p != '}'; p++)
        dps += *p == ':';
    free(resp);
    if (dps < acked || dps > sent)
        fail_msg("query on a full disk: %ld points, acked %lld", dps, acked);

    /* Space returns. The running daemon must take writes again by itself
     * (the log retries a fresh segment every 200 ms): one-point sync puts
     * until one is acknowledged, within 15 s, no restart. */
    /* RocksDB clears its own ENOSPC error (a background thread, every 5 s)
     * only once a memtable's worth (64 MB) is free: give it 160 MB */
    assert_int_equal(mount(NULL, mnt, NULL, MS_REMOUNT, "size=160m"), 0);
    int64_t t0 = now_ms();
    long long k = 0, first_ok = -1;
    static unsigned char after_ok[RECOVER_MAX]; /* 1: acknowledged, 0: may be there */
    while (first_ok < 0 && k < RECOVER_MAX - RECOVER_BATCH) {
        char b1[256];
        snprintf(b1, sizeof b1,
                 "{\"metric\":\"df.m\",\"timestamp\":%lld,\"value\":%lld,"
                 "\"tags\":{\"host\":\"a\"}}",
                 AFTER_TS + k, val_of(AFTER_J + k));
        st = ac_req(&t, "POST", "/api/put?sync=true", b1, &resp);
        free(resp);
        if (st == 204) {
            after_ok[k] = 1;
            first_ok = k;
        } else if (now_ms() - t0 > 15000) {
            fail_msg("no put acknowledged 15 s after space returned (last status %d)", st);
        } else {
            sleep_ms(50);
        }
        k++;
    }
    fprintf(stderr, "disk full: writes resumed %lld ms after space returned (%lld attempts)\n",
            (long long)(now_ms() - t0), k);
    /* a full batch and a telnet put are taken too */
    size_t len = 0;
    body[len++] = '[';
    for (int i = 0; i < RECOVER_BATCH; i++)
        len += (size_t)snprintf(body + len, sizeof body - len,
                                "%s{\"metric\":\"df.m\",\"timestamp\":%lld,\"value\":%lld,"
                                "\"tags\":{\"host\":\"a\"}}",
                                i ? "," : "", AFTER_TS + k + i, val_of(AFTER_J + k + i));
    body[len++] = ']';
    st = tu_http(t.port, "POST", "/api/put?sync=true", "Content-Type: application/json\r\n", body,
                 len, &resp, NULL);
    if (st != 204) fail_msg("batch after space returned: %d <%s>", st, resp ? resp : "");
    free(resp);
    resp = NULL;
    for (int i = 0; i < RECOVER_BATCH; i++)
        after_ok[k + i] = 1;
    k += RECOVER_BATCH;
    fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *got =
        tu_telnet_tx(fd, NULL, "put df.m %lld %lld host=a\n", AFTER_TS + k, val_of(AFTER_J + k));
    if (strstr(got, "put:")) fail_msg("telnet after space returned: <%s>", got);
    close(fd);
    after_ok[k++] = 1; /* no error line, and the clean stop below writes it out */
    long long n_after = k;

    /* The flush that failed on the full disk kept its points in the head
     * and retries: the head empties in the running daemon (open_flush_ms
     * above) once RocksDB has recovered. */
    t0 = now_ms();
    long long head;
    while ((head = stat_value(&t, "tsd.head.points")) != 0) {
        if (now_ms() - t0 > 30000) {
            char cmd[4400];
            snprintf(cmd, sizeof cmd, "tail -20 '%s' >&2", t.log);
            if (system(cmd) < 0) perror("system");
            fail_msg("head still holds %lld points 30 s after space returned", head);
        }
        sleep_ms(100);
    }
    fprintf(stderr, "disk full: head flushed %lld ms after the last put; %lld flush errors\n",
            (long long)(now_ms() - t0), stat_value(&t, "tsd.storage.flush_errors"));

    /* The clean stop flushes the heads into the store (RocksDB, which hit
     * ENOSPC too, must not abort in its shutdown), the restart replays
     * whatever is left in the log (torn tails of failed segments cut). */
    int stop_rc = tu_tsd_stop(&t);
    if (stop_rc != 0) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "tail -5 '%s' >&2", t.log);
        if (system(cmd) < 0) perror("system");
        fail_msg("clean stop after the disk filled: exit status %d", stop_rc);
    }
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    st = ac_req(&t, "POST", "/api/put?sync=true", one, &resp);
    if (st != 204) fail_msg("after the restart: %d <%s>", st, resp);
    free(resp);
    assert_int_equal(tu_tsd_stop(&t), 0);

    /* Nothing stored is damaged: every point is one that was sent, with its
     * value, once (timestamps strictly increase); every acknowledged one is
     * there: the fill's first 'acked', the ones after space returned, and
     * the restart's. */
    tsdb_t *db = ac_open_dir(data);
    const char *tags[] = {"host=a"};
    uint8_t tsuid[64];
    int tl = ac_tsuid(db, "df.m", tags, 1, tsuid);
    assert_true(tl > 0);
    codec_point_t *pts = NULL;
    size_t n = 0;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_read_series(db, tsuid, (size_t)tl, 0, INT64_MAX, &pts, &n, &eb), 0);
    long long fill_seen = 0, after_seen = 0, after_acked_seen = 0, after_acked = 0;
    int one_seen = 0;
    for (long long i = 0; i < n_after; i++)
        after_acked += after_ok[i];
    for (size_t i = 0; i < n; i++) {
        long long ts = pts[i].ts_ms / 1000;
        if (pts[i].ts_ms % 1000 || pts[i].is_float || (i && pts[i].ts_ms <= pts[i - 1].ts_ms))
            fail_msg("point %zu: ts %lld is_float %d", i, (long long)pts[i].ts_ms, pts[i].is_float);
        if (ts - BASE_TS >= 0 && ts - BASE_TS < sent) {
            long long j = ts - BASE_TS;
            if (pts[i].val.i != val_of(j)) fail_msg("fill point %lld: wrong value", j);
            if (j < acked && j != fill_seen)
                fail_msg("acknowledged fill point %lld lost", fill_seen);
            fill_seen++;
        } else if (ts == 1357300000LL) {
            /* the one-point put: refused on the full disk, acknowledged after the restart */
            if (pts[i].val.i != 1)
                fail_msg("point 1357300000: value %lld", (long long)pts[i].val.i);
            one_seen = 1;
        } else if (ts >= 1357300001LL && ts <= 1357300000LL + TELNET_TRIES) {
            /* telnet puts on the full disk: not acknowledged, may be there */
            if (pts[i].val.i != 1) fail_msg("telnet point %lld: wrong value", ts);
        } else if (ts >= AFTER_TS && ts < AFTER_TS + n_after) {
            long long j = ts - AFTER_TS;
            if (pts[i].val.i != val_of(AFTER_J + j)) fail_msg("point %lld after: wrong value", j);
            after_seen++;
            after_acked_seen += after_ok[j];
        } else {
            fail_msg("point %zu: ts %lld was never sent", i, (long long)pts[i].ts_ms);
        }
    }
    if (fill_seen < acked) fail_msg("%lld of %lld acknowledged fill points", fill_seen, acked);
    if (after_acked_seen != after_acked)
        fail_msg("%lld of %lld points acknowledged after space returned", after_acked_seen,
                 after_acked);
    assert_true(one_seen);
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
    fprintf(stderr,
            "disk full: %lld points acknowledged before the 6 MB disk filled, %lld of %lld sent "
            "then stored; after space returned %lld acknowledged, %lld stored\n",
            acked, fill_seen, sent, after_acked, after_seen);

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

/* tsd.mode=ro on a read-only dir serves queries and refuses puts as
 * OpenTSDB's ro mode does (no put endpoint: /api/put is 404 "Endpoint not
 * found", telnet `put` an unknown command). The store is opened read-only
 * with RocksDB's info LOG outside the data dir (it renames the old LOG at
 * every open), and no write-ahead log or flush thread is started. */
static void read_only_dir_serves_queries_in_ro_mode(void **state)
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
    tu_tsd_t t = {.dir = strdup(ro)};
    const char *extra[] = {"--set", "tsd.mode=ro", NULL};
    if (tu_tsd_start(&t, extra) != 0) {
        char cmd[4400];
        snprintf(cmd, sizeof cmd, "tail -5 '%s' >&2", t.log);
        if (system(cmd) < 0) perror("system");
        fail_msg("tsd.mode=ro did not start on a read-only data dir");
    }
    char *resp;
    int st = ac_req(&t, "GET", "/api/query?start=1356998400&m=sum:ro.m{host=a}", NULL, &resp);
    if (st != 200 || !strstr(resp, "\"1356998400\":42"))
        fail_msg("query in ro mode: %d <%s>", st, resp);
    free(resp);
    st = ac_req(&t, "GET", "/api/search/lookup?m=ro.m", NULL, &resp);
    if (st != 200 || !strstr(resp, "\"totalResults\":1"))
        fail_msg("lookup in ro mode: %d <%s>", st, resp);
    free(resp);
    st = ac_req(&t, "POST", "/api/put",
                "{\"metric\":\"ro.m\",\"timestamp\":1356998401,\"value\":1,"
                "\"tags\":{\"host\":\"a\"}}",
                &resp);
    if (st != 404 || !strstr(resp, "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\""))
        fail_msg("put in ro mode: %d <%s>", st, resp);
    free(resp);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *line = "put ro.m 1356998402 1 host=a\n";
    assert_int_equal(tu_send_all(fd, line, strlen(line)), 0);
    char reply[1024];
    tu_recv_some(fd, reply, sizeof reply, 1000);
    if (strncmp(reply, "unknown command: put", 20) != 0)
        fail_msg("telnet put in ro mode: <%s>", reply);
    close(fd);
    assert_int_equal(tu_tsd_stop(&t), 0);
    umount2(ro, MNT_DETACH);
    g_mounted[1][0] = '\0';
    unlink(t.log);
    free(t.dir);

    /* the dir is as it was: the one point, nothing more */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disk_full_fails_clearly_and_recovers),
        cmocka_unit_test(read_only_dir_refused_clearly),
        cmocka_unit_test(read_only_dir_serves_queries_in_ro_mode),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
