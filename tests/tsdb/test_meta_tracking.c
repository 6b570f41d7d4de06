/* test_meta_tracking.c -- tsd.core.meta.* on the write path: what lands in
 * tsdb-meta (ts_ctr, ts_meta) and tsdb-uid (UIDMeta) per OpenTSDB's table
 * (docs/format/meta.md section 2), checked in the store after the puts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/read.h"
#include "tsdb/select.h"
#include "tsdb/tsmeta.h"
#include "tsdb/write.h"

/* TSUID of metric 1, host(1)=web01(1) in a fresh data dir */
static const uint8_t TSUID[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};

static tsdb_t *open_db(const char *dir, int tracking, int realtime_ts, int incrementing,
                       int realtime_uid)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.meta.enable_tsuid_tracking",
                                    tracking ? "true" : "false", &eb),
                     0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.meta.enable_realtime_ts",
                                    realtime_ts ? "true" : "false", &eb),
                     0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.meta.enable_tsuid_incrementing",
                                    incrementing ? "true" : "false", &eb),
                     0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.meta.enable_realtime_uid",
                                    realtime_uid ? "true" : "false", &eb),
                     0);
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("open: %s", eb.msg);
    oct_config_free(cfg);
    return db;
}

static void put_n(tsdb_t *db, int n)
{
    oct_slice_t tags[2] = {oct_slice_str("host"), oct_slice_str("web01")};
    tsdb_dp_t *dps = calloc((size_t)n, sizeof *dps);
    for (int i = 0; i < n; i++) {
        dps[i].metric = oct_slice_str("sys.cpu.user");
        dps[i].tags = tags;
        dps[i].n_tags = 1;
        dps[i].pt.ts_ms = (1356998400LL + i) * 1000;
        dps[i].pt.val.i = i;
    }
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(db, dps, (size_t)n, NULL, NULL, NULL, &eb), n);
    free(dps);
}

/* ts_ctr as stored, or -1 if absent */
static int64_t read_ctr(tsdb_t *db)
{
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    int rc =
        store_get_cell(tsdb_store(db), STORE_TABLE_META, oct_slice(TSUID, 3), oct_slice(TSUID, 9),
                       oct_slice_str("name"), oct_slice_str("ts_ctr"), &r, &eb);
    assert_true(rc >= 0);
    int64_t v = -1;
    if (rc == 1) {
        assert_int_equal(r.cells[0].value.len, 8);
        v = (int64_t)oct_get_be64(r.cells[0].value.ptr);
    }
    store_result_free(&r);
    return v;
}

static int has_tsmeta(tsdb_t *db, int64_t *created)
{
    oct_errbuf_t eb;
    json_arena_t a = JSON_ARENA_INIT;
    tsmeta_t m;
    int rc = tsmeta_get(db, TSUID, 9, &a, &m, NULL, &eb);
    assert_true(rc >= 0);
    if (rc == 1 && created) *created = m.created;
    json_arena_free(&a);
    return rc == 1;
}

static void tracking_off_writes_nothing(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    tsdb_t *db = open_db(dir, 0, 1, 1, 0);
    put_n(db, 5);
    assert_int_equal(read_ctr(db), -1);
    assert_false(has_tsmeta(db, NULL));
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static void tracking_only_writes_counter_one(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    tsdb_t *db = open_db(dir, 1, 0, 0, 0);
    put_n(db, 5);
    assert_int_equal(read_ctr(db), 1);
    assert_false(has_tsmeta(db, NULL));
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static void realtime_ts_creates_tsmeta_once(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    int64_t before = (int64_t)time(NULL), created = 0;
    tsdb_t *db = open_db(dir, 1, 1, 0, 0);
    put_n(db, 5);
    put_n(db, 3);
    assert_true(has_tsmeta(db, &created));
    assert_true(created >= before && created <= (int64_t)time(NULL));
    assert_int_equal(read_ctr(db), -1); /* not incrementing: no counter */
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static void incrementing_counts_every_point(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    tsdb_t *db = open_db(dir, 1, 1, 1, 0);
    put_n(db, 700); /* more than one chunk of 512 */
    put_n(db, 3);
    assert_int_equal(read_ctr(db), 703);
    assert_true(has_tsmeta(db, NULL));
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static void realtime_uid_writes_uidmeta(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    tsdb_t *db = open_db(dir, 0, 0, 0, 1);
    put_n(db, 1);
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(uid_meta_get_json(tsdb_uids(db), CODEC_UID_TAGV, 1, &r, &eb), 1);
    const char *want = "{\"type\":\"TAGV\",\"displayName\":\"\"";
    assert_true(r.cells[0].value.len > strlen(want));
    assert_memory_equal(r.cells[0].value.ptr, want, strlen(want));
    store_result_free(&r);
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static int count_series(void *ctx, const uint8_t *tsuid, size_t len)
{
    (void)tsuid;
    (void)len;
    (*(int *)ctx)++;
    return 0;
}

/* Deleting a series' TSMeta removes ts_meta and ts_ctr only: the series
 * stays in the index after a reopen (rebuilt from name:octsdb_series) and
 * its points are still found through it. */
static void tsmeta_delete_keeps_series(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    tsdb_t *db = open_db(dir, 1, 1, 1, 0);
    put_n(db, 4);
    assert_true(has_tsmeta(db, NULL));
    assert_int_equal(read_ctr(db), 4);
    oct_errbuf_t eb;
    assert_int_equal(tsmeta_delete(db, TSUID, 9, &eb), 0);
    assert_false(has_tsmeta(db, NULL));
    assert_int_equal(read_ctr(db), -1);
    tsdb_close(db);

    db = open_db(dir, 0, 0, 0, 0);
    const char *k[1] = {"host"}, *v[1] = {"web01"};
    int n = 0;
    assert_int_equal(
        tsdb_select_names(db, "sys.cpu.user", k, v, 1, TSDB_SELECT_EXACT, count_series, &n, &eb),
        0);
    assert_int_equal(n, 1);
    codec_point_t *pts;
    size_t np;
    assert_int_equal(tsdb_read_series(db, TSUID, 9, 0, INT64_MAX, &pts, &np, &eb), 0);
    assert_int_equal(np, 4); /* put_n wrote values 0..3 at 1356998400..403 */
    for (size_t i = 0; i < np; i++)
        assert_int_equal(pts[i].ts_ms, (1356998400LL + (int64_t)i) * 1000);
    free(pts);
    assert_false(has_tsmeta(db, NULL));
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracking_off_writes_nothing),
        cmocka_unit_test(tracking_only_writes_counter_one),
        cmocka_unit_test(realtime_ts_creates_tsmeta_once),
        cmocka_unit_test(incrementing_counts_every_point),
        cmocka_unit_test(realtime_uid_writes_uidmeta),
        cmocka_unit_test(tsmeta_delete_keeps_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
