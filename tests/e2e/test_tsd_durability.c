/* test_tsd_durability.c -- the real daemon under load: 8 telnet connections
 * writing 100,000 points each lose nothing, and `kill -9` during a
 * /api/put?sync=true load loses no acknowledged point. Points are checked in
 * the data dir itself (tsdb_open + tsdb_read_series) after the daemon is
 * gone, against what the test sent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/uid_bytes.h"
#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

#define BASE_TS 1356998400LL /* 2013-01-01T00:00:00Z, an hour boundary */

/* Opens the (stopped) daemon's data dir and reads one series of metric with
 * the single tag host=<host>. Returns the points (malloc'd) and count. */
static codec_point_t *read_series(const char *dir, const char *metric, const char *host, size_t *n)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("tsdb_open: %s", eb.msg);
    uid_registry_t *r = tsdb_uids(db);
    uint64_t m, k, v;
    assert_int_equal(
        uid_get_id(r, CODEC_UID_METRIC, (const uint8_t *)metric, strlen(metric), &m, &eb), 0);
    assert_int_equal(uid_get_id(r, CODEC_UID_TAGK, (const uint8_t *)"host", 4, &k, &eb), 0);
    assert_int_equal(uid_get_id(r, CODEC_UID_TAGV, (const uint8_t *)host, strlen(host), &v, &eb),
                     0);
    uint8_t tsuid[9];
    assert_int_equal(codec_uid_encode(m, 3, tsuid), 0);
    assert_int_equal(codec_uid_encode(k, 3, tsuid + 3), 0);
    assert_int_equal(codec_uid_encode(v, 3, tsuid + 6), 0);
    codec_point_t *pts = NULL;
    if (tsdb_read_series(db, tsuid, sizeof tsuid, 0, INT64_MAX, &pts, n, &eb))
        fail_msg("read: %s", eb.msg);
    tsdb_close(db);
    oct_config_free(cfg);
    return pts;
}

#define CONNS           8
#define POINTS_PER_CONN 100000

typedef struct {
    int port;
    int idx;
    int ok;
} writer_t;

/* One connection: POINTS_PER_CONN puts of series load.test host=c<idx>,
 * one per second from BASE_TS (27.8 hours: many rows), value = 3*j + idx,
 * then `version` to know every line before it was taken. */
static void *telnet_writer(void *p)
{
    writer_t *w = p;
    int fd = tu_connect(w->port);
    if (fd < 0) return NULL;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    for (int j = 0; j < POINTS_PER_CONN; j++) {
        len += (size_t)snprintf(buf + len, cap - len, "put load.test %lld %lld host=c%d\n",
                                BASE_TS + j, 3LL * j + w->idx, w->idx);
        if (cap - len < 256 || j == POINTS_PER_CONN - 1) {
            if (tu_send_all(fd, buf, len) < 0) goto out;
            len = 0;
        }
    }
    if (tu_send_all(fd, "version\n", 8) < 0) goto out;
    char reply[4096];
    size_t got = tu_recv_until(fd, reply, sizeof reply, TU_VERSION_HEAD, 60000);
    /* puts are silent: the only reply is the version banner */
    w->ok = got > 0 && strstr(reply, "put:") == NULL;
out:
    free(buf);
    close(fd);
    return NULL;
}

static void eight_connections_lose_nothing(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    pthread_t th[CONNS];
    writer_t w[CONNS];
    for (int i = 0; i < CONNS; i++) {
        w[i] = (writer_t){t.port, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, telnet_writer, &w[i]), 0);
    }
    for (int i = 0; i < CONNS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < CONNS; i++)
        assert_true(w[i].ok);
    assert_int_equal(tu_tsd_stop(&t), 0);

    for (int i = 0; i < CONNS; i++) {
        char host[16];
        snprintf(host, sizeof host, "c%d", i);
        size_t n;
        codec_point_t *pts = read_series(t.dir, "load.test", host, &n);
        assert_int_equal(n, POINTS_PER_CONN);
        for (size_t j = 0; j < n; j++) {
            if (pts[j].ts_ms != (BASE_TS + (long long)j) * 1000 || pts[j].is_float ||
                pts[j].val.i != 3LL * (long long)j + i)
                fail_msg("conn %d point %zu: ts %lld value %lld", i, j, (long long)pts[j].ts_ms,
                         (long long)pts[j].val.i);
        }
        free(pts);
    }
    tu_tsd_destroy(&t);
}

/* ---- kill -9 during /api/put?sync=true ---------------------------------- */

#define BATCH       100
#define MAX_BATCHES 100000

typedef struct {
    int port;
    atomic_int stop;
    atomic_int acked;   /* batches answered 204, in order: 0..acked-1 */
    atomic_int started; /* batches sent (acked or in flight) */
} sync_loader_t;

static void *sync_loader(void *p)
{
    sync_loader_t *l = p;
    char body[BATCH * 128];
    for (int b = 0; b < MAX_BATCHES && !atomic_load(&l->stop); b++) {
        size_t len = 0;
        body[len++] = '[';
        for (int i = 0; i < BATCH; i++) {
            long long j = (long long)b * BATCH + i;
            len += (size_t)snprintf(body + len, sizeof body - len,
                                    "%s{\"metric\":\"sync.test\",\"timestamp\":%lld,"
                                    "\"value\":%lld,\"tags\":{\"host\":\"k\"}}",
                                    i ? "," : "", BASE_TS + j, 7 * j);
        }
        body[len++] = ']';
        atomic_store(&l->started, b + 1);
        char *resp = NULL;
        int st = tu_http(l->port, "POST", "/api/put?sync=true", NULL, body, len, &resp, NULL);
        free(resp);
        if (st != 204) break; /* the daemon died under us */
        atomic_store(&l->acked, b + 1);
    }
    return NULL;
}

static void kill9_keeps_every_acknowledged_sync_put(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    sync_loader_t l = {.port = t.port};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sync_loader, &l), 0);
    /* let it acknowledge some batches, then kill without warning */
    for (int i = 0; i < 600 && atomic_load(&l.acked) < 30; i++) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    tu_tsd_kill(&t);
    atomic_store(&l.stop, 1);
    pthread_join(th, NULL);
    int acked = atomic_load(&l.acked), started = atomic_load(&l.started);
    assert_true(acked >= 30);

    /* restart on the same data dir: recovery must bring everything back */
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    assert_int_equal(tu_tsd_stop(&t), 0);
    size_t n;
    codec_point_t *pts = read_series(t.dir, "sync.test", "k", &n);
    /* every acknowledged point, exactly once; anything more comes from the
     * batch in flight and must be exactly what was sent */
    assert_true(n >= (size_t)acked * BATCH);
    assert_true(n <= (size_t)started * BATCH);
    for (size_t j = 0; j < n; j++) {
        if (pts[j].ts_ms != (BASE_TS + (long long)j) * 1000 || pts[j].is_float ||
            pts[j].val.i != 7 * (long long)j)
            fail_msg("point %zu of %zu: ts %lld value %lld", j, n, (long long)pts[j].ts_ms,
                     (long long)pts[j].val.i);
    }
    free(pts);
    tu_tsd_destroy(&t);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_connections_lose_nothing),
        cmocka_unit_test(kill9_keeps_every_acknowledged_sync_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
