/* test_uid_live.c -- a UID delete or rename through the registry of an open
 * tsdb reaches its write path at once (issue 15). OpenTSDB has no HTTP
 * route for a UID delete, so the delete is tested here, on the real store:
 * after it the name is unknown, a put with it (auto-create on) gets a new
 * UID -- the counter never goes back -- and a new series, while the old
 * series keeps exactly its old points. UIDs are counted by hand (widths 3,
 * counters from 1 in order of first use); points are read back by TSUID.
 * And a lost change notification (another TSD's rename that never arrived,
 * as after a RADOS watch was lost): what the write path keyed by name is
 * dropped when the registry is told notifications were lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsdb_fixture.h"
#include "store/store.h"
#include "tsdb/read.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/write.h"
#include "uid/uid.h"

#define H0 1356998400000LL

static int setup(void **state)
{
    *state = tsdb_fx_open();
    return 0;
}

/* Puts metric{k=v} at H0 + dt s; accepted or fails the test. */
static void put(const char *metric, const char *k, const char *v, int dt, int64_t val)
{
    oct_slice_t tags[2] = {oct_slice_str(k), oct_slice_str(v)};
    tsdb_dp_t dp = {oct_slice_str(metric), tags, 1, {0}, 0};
    dp.pt.ts_ms = H0 + dt * 1000LL;
    dp.pt.val.i = val;
    uint64_t seq;
    oct_errbuf_t eb;
    if (tsdb_put(g_fx->db, &dp, &seq, &eb)) fail_msg("put %s{%s=%s}: %s", metric, k, v, eb.msg);
}

/* The points of TSUID hex must be exactly (dt s, val) pairs want[0..n). */
static void expect_points(const char *hex, const int64_t (*want)[2], size_t n)
{
    uint8_t tsuid[32];
    int len = tu_unhex(hex, tsuid, sizeof tsuid);
    assert_true(len > 0);
    codec_point_t *p = NULL;
    size_t got = 0;
    oct_errbuf_t eb;
    if (tsdb_read_series(g_fx->db, tsuid, (size_t)len, H0, H0 + 3600000, &p, &got, &eb))
        fail_msg("read %s: %s", hex, eb.msg);
    if (got != n) fail_msg("%s: %zu points, want %zu", hex, got, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p[i].ts_ms, H0 + want[i][0] * 1000);
        assert_int_equal(p[i].val.i, want[i][1]);
    }
    free(p);
}

static void del(codec_uid_kind_t kind, const char *name)
{
    oct_errbuf_t eb;
    if (uid_delete(tsdb_uids(g_fx->db), kind, (const uint8_t *)name, strlen(name), &eb))
        fail_msg("delete %s: %s", name, eb.msg);
}

static void delete_metric(void **state)
{
    (void)state;
    put("m.d", "host", "a", 0, 1); /* m.d=1 host=1 a=1 */
    put("m.d", "host", "a", 5, 2);
    del(CODEC_UID_METRIC, "m.d");
    put("m.d", "host", "a", 10, 4); /* m.d=2 */
    static const int64_t old[][2] = {{0, 1}, {5, 2}}, neu[][2] = {{10, 4}};
    expect_points("000001000001000001", old, 2);
    expect_points("000002000001000001", neu, 1);
    assert_int_equal(tsdb_fx_uid(CODEC_UID_METRIC, "m.d"), 2);
}

static void delete_tagv(void **state)
{
    (void)state;
    put("m.e", "host", "b", 0, 1); /* m.e=1 host=1 b=1 */
    put("m.e", "host", "c", 0, 8); /* c=2, a series the delete leaves alone */
    del(CODEC_UID_TAGV, "b");
    put("m.e", "host", "b", 10, 2); /* b=3 */
    put("m.e", "host", "c", 10, 16);
    static const int64_t old[][2] = {{0, 1}}, neu[][2] = {{10, 2}}, c[][2] = {{0, 8}, {10, 16}};
    expect_points("000001000001000001", old, 1);
    expect_points("000001000001000003", neu, 1);
    expect_points("000001000001000002", c, 2);
}

/* A rename, then one batch naming the series by its new and its old tag
 * key: the first lands in the old series, the second makes a new tagk. */
static void rename_tagk_batch(void **state)
{
    (void)state;
    put("m.f", "host", "a", 0, 1); /* m.f=1 host=1 a=1 */
    oct_errbuf_t eb;
    assert_int_equal(uid_rename(tsdb_uids(g_fx->db), CODEC_UID_TAGK, (const uint8_t *)"host", 4,
                                (const uint8_t *)"node", 4, &eb),
                     0);
    oct_slice_t t1[2] = {oct_slice_str("node"), oct_slice_str("a")};
    oct_slice_t t2[2] = {oct_slice_str("host"), oct_slice_str("a")};
    tsdb_dp_t dps[3] = {{oct_slice_str("m.f"), t1, 1, {0}, 0},
                        {oct_slice_str("m.f"), t2, 1, {0}, 0},
                        {oct_slice_str("m.f"), t1, 1, {0}, 0}};
    for (int i = 0; i < 3; i++) {
        dps[i].pt.ts_ms = H0 + (10 + i) * 1000LL;
        dps[i].pt.val.i = 2 << i;
    }
    uint64_t seq;
    assert_int_equal(tsdb_put_batch(g_fx->db, dps, 3, NULL, NULL, &seq, &eb), 3);
    put("m.f", "node", "a", 20, 16); /* the renamed name again, now found in the map */
    static const int64_t old[][2] = {{0, 1}, {10, 2}, {12, 8}, {20, 16}}, neu[][2] = {{11, 4}};
    expect_points("000001000001000001", old, 4);
    expect_points("000001000002000001", neu, 1);
    tsdb_stats_t st;
    tsdb_stats(g_fx->db, &st);
    assert_int_equal(st.series, 2);
}

/* A rename made in the store behind the registry's back (another TSD whose
 * notification was lost): the write path keeps using the old name until the
 * registry hears that notifications were lost -- here an unreadable message,
 * which the registry treats as a lost watch -- and then forgets every name
 * of the kind: the new name finds the series, the old one is new. */
static void lost_notification_forgets_every_name(void **state)
{
    (void)state;
    put("m.l", "host", "a", 0, 1); /* m.l=1 host=1 a=1 */
    store_t *st = tsdb_store(g_fx->db);
    oct_errbuf_t eb;
    static const uint8_t id1[3] = {0, 0, 1};
    oct_slice_t part = oct_slice_str("tagv"), id = oct_slice(id1, 3);
    store_op_t ops[3] = {
        {STORE_OP_PUT, part, {oct_slice_str("z"), oct_slice_str("id"), part, id}},
        {STORE_OP_DELETE_CELL, part, {oct_slice_str("a"), oct_slice_str("id"), part, {0}}},
        {STORE_OP_PUT, part, {id, oct_slice_str("name"), part, oct_slice_str("z")}},
    };
    assert_int_equal(store_write(st, STORE_TABLE_UID, ops, 3, 0, &eb), 0);
    put("m.l", "host", "a", 5, 2); /* stale, as expected without a notification */
    static const uint8_t unknown_version[24] = {0x02, 2, 1};
    assert_int_equal(store_notify(st, STORE_TABLE_UID, part, oct_slice(unknown_version, 24), &eb),
                     0);
    put("m.l", "host", "z", 10, 4); /* z is tag value 1: the same series */
    put("m.l", "host", "a", 15, 8); /* a is unknown now: a new tag value (2), a new series */
    static const int64_t old[][2] = {{0, 1}, {5, 2}, {10, 4}}, neu[][2] = {{15, 8}};
    expect_points("000001000001000001", old, 3);
    expect_points("000001000001000002", neu, 1);
    assert_int_equal(tsdb_fx_uid(CODEC_UID_TAGV, "a"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(delete_metric, setup, tsdb_fx_teardown),
        cmocka_unit_test_setup_teardown(delete_tagv, setup, tsdb_fx_teardown),
        cmocka_unit_test_setup_teardown(rename_tagk_batch, setup, tsdb_fx_teardown),
        cmocka_unit_test_setup_teardown(lost_notification_forgets_every_name, setup,
                                        tsdb_fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
