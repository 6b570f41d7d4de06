/* test_wal_sync.c -- tsd.storage.wal.sync_interval_ms bounds the window in
 * which written-but-unsynced puts are exposed to power loss: with it, the
 * log syncs by itself; with 0, only when a waiter asks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

static uint64_t syncs_after_puts(const char *interval_ms)
{
    char *dir = tu_tempdir();
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.storage.wal.sync_interval_ms", interval_ms, &eb), 0);
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("open: %s", eb.msg);
    oct_slice_t tags[2] = {oct_slice_str("host"), oct_slice_str("a")};
    tsdb_dp_t dp = {.metric = oct_slice_str("m"), .tags = tags, .n_tags = 1};
    tsdb_stats_t st0, st;
    tsdb_stats(db, &st0);
    for (int i = 0; i < 5; i++) {
        dp.pt.ts_ms = (1356998400LL + i) * 1000;
        dp.pt.val.i = i;
        uint64_t seq;
        assert_int_equal(tsdb_put(db, &dp, &seq, &eb), 0);
        /* written, not synced: what a telnet put gets */
        assert_int_equal(tsdb_wait_durable(db, seq, 0, 5000, &eb), 0);
    }
    struct timespec ts = {0, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    tsdb_stats(db, &st);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
    return st.wal_syncs - st0.wal_syncs;
}

static void periodic_sync_happens_unasked(void **state)
{
    (void)state;
    assert_true(syncs_after_puts("100") >= 1);
}

static void no_sync_without_interval_or_request(void **state)
{
    (void)state;
    assert_int_equal(syncs_after_puts("0"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(periodic_sync_happens_unasked),
        cmocka_unit_test(no_sync_without_interval_or_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
