/* test_rollup_reopen.c -- an hour whose blocks a stop or a crash left not
 * final is still compacted and rolled up when it closes (docs/rollups.md,
 * "Hours left open by a stop or a crash"; docs/format/layout.md, "The same
 * registry on a local store"), over the real daemon and its data dir:
 *   - points of hour H-1 (the last hour that ended) go to the store as
 *     blocks that are not final while tsd.storage.head.grace_ms (2 h) keeps
 *     the hour open: r.clean by a forced flush and a clean stop, r.kill by a
 *     forced flush, then enough other points to start a new log segment and
 *     a second flush that deletes the segment holding them, then kill -9
 *     (series 0 also has points only in the log, replayed);
 *   - the TSD restarts with a grace of 0: the hour has closed, no new point
 *     for it arrives, and the flush finalizes both metrics (the daemon's
 *     flush count) without a stop; the registry read through the store is
 *     empty after the stop, every row one compacted block (4F 00 00), and
 *     1h and 1d sum, count, min, max and avg with rollup_nofallback equal a
 *     model of the points sent, read back after another restart (so from
 *     the rollup table, no hour left in the head);
 *   - an entry put back for an hour already final (a crash between the
 *     final write and the entry's delete): the next run finalizes it again,
 *     the answers stay the model's (recomputed, never added twice);
 *   - a running TSD: an hour whose only block an open flush wrote before
 *     it closed, and no point after, is rolled up by its final flush.
 * Grace 2 h, then 0, stands for the hour closing while the TSD is down: the
 * same state without waiting for the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "rollup_model.h"
#include "common/bytes.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "store/store.h"

#define NSER 3
#define MAXP 200
#define CONF RM_CONF_1H_1D

enum { M_CLEAN, M_KILL, M_ONE, N_METRICS };
static const char *const g_metric[N_METRICS] = {"r.clean", "r.kill", "r.one"};
static rm_pt_t g_p[N_METRICS][NSER][MAXP];
static int g_n[N_METRICS][NSER];
static long long g_h; /* base of hour H-1, the hour that closes */

/* The daemon with auto rollups, 1 MiB log segments and the given grace
 * ("tsd.storage.head.grace_ms=<ms>"). */
static void start(tu_tsd_t *t, const char *grace)
{
    const char *args[] = {"--auto-metric",
                          "--set",
                          "tsd.rollups.enable=true",
                          "--set",
                          "tsd.rollups.auto=true",
                          "--set",
                          "tsd.rollups.config=" CONF,
                          "--set",
                          "tsd.storage.wal.segment_mb=1",
                          "--set",
                          grace,
                          NULL};
    assert_int_equal(tu_tsd_start(t, args), 0);
}
#define GRACE_OPEN   "tsd.storage.head.grace_ms=7200000"
#define GRACE_CLOSED "tsd.storage.head.grace_ms=0"

/* k random points of metric m, series s, at unused seconds of hour g_h,
 * into the model and through /api/put. */
static void put(tu_tsd_t *t, unsigned *seed, int m, int s, int k)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    for (int i = 0; i < k && g_n[m][s] < MAXP;) {
        long long ts = g_h + (long long)(rand_r(seed) % 3600);
        int used = 0;
        for (int j = 0; j < g_n[m][s]; j++)
            used |= g_p[m][s][j].ts == ts;
        if (used) continue;
        rm_pt_t *p = &g_p[m][s][g_n[m][s]++];
        p->ts = ts;
        rm_random_value(seed, p);
        if (p->is_int)
            oct_strbuf_printf(&sb, "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,",
                              i ? "," : "", g_metric[m], ts, p->i);
        else
            oct_strbuf_printf(&sb, "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%.17g,",
                              i ? "," : "", g_metric[m], ts, p->f);
        oct_strbuf_printf(&sb, "\"tags\":{\"s\":\"%d\"}}", s);
        i++;
    }
    oct_strbuf_puts(&sb, "]");
    free(ac_req_ok(t, "POST", "/api/put", sb.ptr, 204));
    oct_strbuf_free(&sb);
}

static void flush(tu_tsd_t *t)
{
    free(ac_req_ok(t, "POST", "/api/octsdb/flush", NULL, 204));
}

/* 1h and 1d of every aggregator and series of metric m against the model. */
static void check(tu_tsd_t *t, const char *what, int m)
{
    static const char *const aggs[] = {"sum", "count", "min", "max", "avg"};
    long long day = g_h - g_h % 86400;
    for (int s = 0; s < NSER; s++)
        for (int a = 0; a < 5; a++)
            for (int d = 0; d < 2; d++) {
                long long lo = d ? day : g_h, iv = d ? 86400 : 3600, ts = lo;
                double v;
                int n = rm_bucket(g_p[m][s], g_n[m][s], lo, iv, aggs[a], &v);
                char target[512];
                snprintf(
                    target, sizeof target,
                    "/api/query?start=%lld&end=%lld&m=sum:%s-%s:rollup_nofallback:%s%%7Bs=%d%%7D",
                    lo, lo + iv - 1, d ? "1d" : "1h", aggs[a], g_metric[m], s);
                rm_expect(t, what, target, &ts, &v, n, !strcmp(aggs[a], "avg") ? 1e-12 : 0);
            }
}

/* The daemon's count of blocks flushed (/api/stats, tsd.compaction.count type=flush). */
static long long blocks_flushed(tu_tsd_t *t)
{
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(t, "/api/stats", &a, &keep);
    long long n = -1;
    for (json_value_t *e = v->child; e; e = e->next) {
        json_value_t *m = json_obj_get(e, "metric"), *tags = json_obj_get(e, "tags");
        json_value_t *ty = tags ? json_obj_get(tags, "type") : NULL,
                     *val = json_obj_get(e, "value");
        if (!m || !ty || !val || m->len != 20 || memcmp(m->str, "tsd.compaction.count", 20) ||
            ty->len != 5 || memcmp(ty->str, "flush", 5))
            continue;
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)val->len, val->str);
        n = strtoll(buf, NULL, 10);
    }
    json_arena_free(&a);
    free(keep);
    return n;
}

/* ---- the data dir of the stopped daemon, through the store ------------- */

static store_t *store_of(const tu_tsd_t *t)
{
    store_options_t so = {0};
    so.dir = t->dir;
    store_t *st;
    oct_errbuf_t eb;
    if (store_open(&so, &st, &eb)) fail_msg("store_open %s: %s", t->dir, eb.msg);
    return st;
}

/* The TSUIDs (writer id 0, hour g_h) in the open-rows registry: its 256
 * partitions "open/" + hour mod 16 + TSUID's last byte mod 16. */
typedef struct {
    uint8_t tsuid[16][64];
    size_t len[16], n;
} entries_t;

static void registry(store_t *st, entries_t *e)
{
    memset(e, 0, sizeof *e);
    for (int p = 0; p < 256; p++) {
        uint8_t part[7] = {'o', 'p', 'e', 'n', '/', (uint8_t)(p / 16), (uint8_t)(p % 16)};
        store_scan_spec_t spec = {0};
        spec.part = oct_slice(part, 7);
        store_scanner_t *sc;
        oct_errbuf_t eb;
        assert_int_equal(store_scan_open(st, STORE_TABLE_SYS, &spec, &sc, &eb), 0);
        store_result_t row = STORE_RESULT_INIT;
        while (store_scan_next(sc, &row, &eb) == 1) {
            oct_slice_t k = row.cells[0].row;
            assert_true(k.len > 8 && k.len < 72);
            assert_int_equal(row.cells[0].value.len, 8);
            if (oct_get_be32(k.ptr) != (uint32_t)(g_h / 3600) || oct_get_be32(k.ptr + k.len - 4))
                continue;
            assert_true(e->n < 16);
            memcpy(e->tsuid[e->n], k.ptr + 4, k.len - 8);
            e->len[e->n++] = k.len - 8;
        }
        store_result_free(&row);
        store_scan_close(sc);
    }
}

/* Series tsuid's row of hour g_h holds exactly one block cell, 4F 00 00. */
static void expect_compact(store_t *st, const uint8_t *tsuid, size_t len)
{
    uint8_t key[80];
    memcpy(key, tsuid, 3);
    oct_put_be32(key + 3, (uint32_t)g_h);
    memcpy(key + 7, tsuid + 3, len - 3);
    store_result_t r = STORE_RESULT_INIT;
    oct_errbuf_t eb;
    int n = store_get(st, STORE_TABLE_DATA, oct_slice(key, 7), oct_slice(key, len + 4),
                      oct_slice_str("t"), &r, &eb);
    assert_true(n > 0);
    int blocks = 0, seq0 = 0;
    for (size_t i = 0; i < r.n; i++) {
        oct_slice_t q = r.cells[i].qualifier;
        if (q.len != 3 || q.ptr[0] != 0x4F) continue;
        blocks++;
        seq0 += q.ptr[1] == 0 && q.ptr[2] == 0;
    }
    store_result_free(&r);
    if (blocks != 1 || seq0 != 1)
        fail_msg("row of hour %lld: %d block cells, want one 4F 00 00", g_h, blocks);
}

/* The names in dir (the log's segment files), one string. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    out[0] = '\0';
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            strncat(out, e->d_name, cap - strlen(out) - 2);
            strcat(out, " ");
        }
    closedir(d);
}

/* Enough points of another metric, in the current hour, to fill a 1 MiB
 * log segment: far-apart millisecond stamps and doubles, ~14 log bytes each. */
static void fill_log(tu_tsd_t *t, long long hour_now)
{
    int fd = tu_connect(t->port);
    assert_true(fd >= 0);
    enum { N = 90000 };
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    /* over 1,000 series: out-of-order points into one series' head are
     * inserted by moving the rest (quadratic: past 20 s under ASan) */
    for (int i = 0; i < N; i++)
        oct_strbuf_printf(&sb, "put r.fill %lld %d.5 f=%d\n",
                          hour_now * 1000 + (i % 2 ? 3599000 - i : i), i, i % 1000);
    assert_int_equal(tu_send_all(fd, sb.ptr, sb.len), 0);
    const char *ver;
    const char *before = tu_telnet_tx(fd, &ver, "%s", "");
    assert_string_equal(before, "");
    close(fd);
    oct_strbuf_free(&sb);
}

/* An entry for series tsuid's hour g_h, as the TSD writes it. */
static void put_entry(store_t *st, const uint8_t *tsuid, size_t len)
{
    uint8_t part[7] = {
        'o', 'p', 'e', 'n', '/', (uint8_t)(g_h / 3600 % 16), (uint8_t)(tsuid[len - 1] % 16)};
    uint8_t row[80], val[8];
    oct_put_be32(row, (uint32_t)(g_h / 3600));
    memcpy(row + 4, tsuid, len);
    oct_put_be32(row + 4 + len, 0);
    oct_put_be64(val, (uint64_t)time(NULL) * 1000);
    store_op_t op = {
        STORE_OP_PUT,
        oct_slice(part, 7),
        {oct_slice(row, len + 8), oct_slice_str("o"), oct_slice(NULL, 0), oct_slice(val, 8)}};
    oct_errbuf_t eb;
    assert_int_equal(store_write(st, STORE_TABLE_SYS, &op, 1, STORE_SYNC, &eb), 0);
}

/* Waits (20 s at most) until the daemon flushed at least want blocks. */
static void wait_blocks(tu_tsd_t *t, long long want)
{
    long long n = 0;
    for (int i = 0; i < 400 && (n = blocks_flushed(t)) < want; i++)
        usleep(50 * 1000);
    if (n < want) fail_msg("%lld blocks flushed after 20 s, want %lld", n, want);
}

/* The stopped daemon's registry has no entry for hour g_h, and the row of
 * every series of all is one compacted block. */
static void expect_final(tu_tsd_t *t, const entries_t *all)
{
    store_t *st = store_of(t);
    entries_t e;
    registry(st, &e);
    assert_int_equal(e.n, 0);
    for (size_t i = 0; i < all->n; i++)
        expect_compact(st, all->tsuid[i], all->len[i]);
    store_close(st);
}

static void hour_closed_while_stopped(void **state)
{
    (void)state;
    long long now = (long long)time(NULL), hour_now = now - now % 3600;
    g_h = hour_now - 3600;
    unsigned seed = 1212;
    tu_tsd_t t = {0};
    char wal[4200], before[8192], after[8192];
    entries_t all;

    /* run 1: r.clean in two blocks not final (a forced flush, the stop) */
    start(&t, GRACE_OPEN);
    snprintf(wal, sizeof wal, "%s/wal", t.dir);
    for (int s = 0; s < NSER; s++)
        put(&t, &seed, M_CLEAN, s, 20);
    flush(&t);
    for (int s = 0; s < NSER; s++)
        put(&t, &seed, M_CLEAN, s, 20);
    assert_int_equal(tu_tsd_stop(&t), 0);
    store_t *st = store_of(&t);
    registry(st, &all);
    assert_int_equal(all.n, NSER); /* one entry per series-hour */
    store_close(st);

    /* run 2: r.kill in one block not final, the log segment holding its
     * points deleted, then kill -9 (series 0 also has points in the log) */
    start(&t, GRACE_OPEN);
    for (int s = 0; s < NSER; s++)
        put(&t, &seed, M_KILL, s, 30);
    flush(&t);
    list_dir(wal, before, sizeof before);
    fill_log(&t, hour_now);
    /* the log written out (sync), so the flush may delete the segment */
    char body[200];
    snprintf(body, sizeof body,
             "[{\"metric\":\"r.fill\",\"timestamp\":%lld,\"value\":1,\"tags\":{\"f\":\"1\"}}]",
             hour_now);
    free(ac_req_ok(&t, "POST", "/api/put?sync=true", body, 204));
    flush(&t);
    list_dir(wal, after, sizeof after);
    for (char *tok = strtok(before, " "); tok; tok = strtok(NULL, " "))
        if (strstr(after, tok)) fail_msg("log segment %s still there: %s", tok, after);
    put(&t, &seed, M_KILL, 0, 10);
    tu_tsd_kill(&t);
    st = store_of(&t);
    registry(st, &all);
    assert_int_equal(all.n, 2 * NSER);
    store_close(st);

    /* run 3: the hour has closed; no point for it arrives, yet the flush
     * finalizes all six rows (nothing else has a block to write) */
    start(&t, GRACE_CLOSED);
    wait_blocks(&t, 2 * NSER);
    check(&t, "finalized", M_CLEAN);
    check(&t, "finalized", M_KILL);
    assert_int_equal(tu_tsd_stop(&t), 0);
    expect_final(&t, &all);

    /* run 4: no hour in the head: the rollup table answers */
    start(&t, GRACE_CLOSED);
    check(&t, "after a restart", M_CLEAN);
    check(&t, "after a restart", M_KILL);
    assert_int_equal(tu_tsd_stop(&t), 0);

    /* the entries back for hours already final (a crash between the final
     * write and their delete): finalized again, the same cells */
    st = store_of(&t);
    for (size_t i = 0; i < all.n; i++)
        put_entry(st, all.tsuid[i], all.len[i]);
    store_close(st);
    start(&t, GRACE_CLOSED);
    wait_blocks(&t, 2 * NSER);
    assert_int_equal(tu_tsd_stop(&t), 0);
    expect_final(&t, &all);
    start(&t, GRACE_CLOSED);
    check(&t, "finalized twice", M_CLEAN);
    check(&t, "finalized twice", M_KILL);
    tu_tsd_destroy(&t);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A running TSD: an hour whose only block (seq 0) an open flush wrote
 * before it closed, and no point after: its final flush still compacts and
 * rolls it up (a lone seq 0 looked compact). The grace is set so that hour
 * H-1 closes 5 s after the start. */
static void one_block_then_the_hour_closes(void **state)
{
    (void)state;
    long long t0 = now_ms(), hour_now = t0 / 1000 - t0 / 1000 % 3600;
    g_h = hour_now - 3600;
    long long closes = t0 + 5000;
    char grace[64];
    snprintf(grace, sizeof grace, "tsd.storage.head.grace_ms=%lld", closes - hour_now * 1000);
    unsigned seed = 77;
    tu_tsd_t t = {0};
    start(&t, grace);
    for (int s = 0; s < NSER; s++)
        put(&t, &seed, M_ONE, s, 15);
    flush(&t); /* the hour still open: one block, not final */
    if (now_ms() >= closes) {
        tu_tsd_destroy(&t);
        fprintf(stderr, "the flush came after the hour closed (a slow machine): skipped\n");
        skip();
    }
    while (now_ms() < closes + 100)
        usleep(20 * 1000);
    flush(&t); /* forced: every closed hour final */
    check(&t, "one block", M_ONE);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hour_closed_while_stopped),
        cmocka_unit_test(one_block_then_the_hour_closes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
