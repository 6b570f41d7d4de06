/* test_uid_durability.c -- new UIDs on the write path are not synced one by
 * one; the rule that replaces the per-UID sync is "every UID a WAL record
 * names is durable before that record's fdatasync". Checked here through the
 * registry's count of deferred syncs (uid_deferred_syncs) and the WAL's own
 * sync count:
 *   - a put naming new UIDs makes no store sync by itself; the fsync wait
 *     that acknowledges it has made exactly one store sync by the time it
 *     returns, however many UIDs the batch created;
 *   - a put of known series, or a wait for "written" only, makes none;
 *   - uid_get_or_create (the API's acknowledged assignment) syncs a name the
 *     write path assigned before reporting it;
 *   - at WAL replay, a series naming a UID that the store lost (a power loss
 *     before the sync: simulated by replaying a WAL into a store that never
 *     saw the assignment) ends the segment like a torn tail instead of
 *     creating a series on UIDs that will be handed out again; a UID whose
 *     name was deleted (below the counter) still replays;
 *   - a chunk's new names are assigned in one batch per kind, but when the
 *     UIDs run out part way the series that fit still get theirs, as with
 *     one-by-one assignment.
 * The WAL sync interval is 0, so the log syncs only when a waiter asks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"
#include "uid/uid.h"

#define TS0 1356998400LL

static oct_config_t *cfg_for(const char *dir)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.storage.wal.sync_interval_ms", "0", &eb), 0);
    return cfg;
}

static tsdb_t *open_db(oct_config_t *cfg)
{
    tsdb_t *db;
    oct_errbuf_t eb;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("open: %s", eb.msg);
    return db;
}

/* Puts one point of metric{host=<host>} and returns its log position. */
static uint64_t put1(tsdb_t *db, const char *metric, const char *host, int64_t i)
{
    oct_errbuf_t eb;
    oct_slice_t tags[2] = {oct_slice_str("host"), oct_slice_str(host)};
    tsdb_dp_t dp = {.metric = oct_slice_str(metric), .tags = tags, .n_tags = 1};
    dp.pt.ts_ms = (TS0 + i) * 1000;
    dp.pt.val.i = i;
    uint64_t seq = 0;
    if (tsdb_put(db, &dp, &seq, &eb)) fail_msg("put: %s", eb.msg);
    return seq;
}

static uint64_t wal_syncs(tsdb_t *db)
{
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    return st.wal_syncs;
}

static void wait_synced(tsdb_t *db, uint64_t seq)
{
    oct_errbuf_t eb;
    if (tsdb_wait_durable(db, seq, 1, 10000, &eb)) fail_msg("wait: %s", eb.msg);
}

static void store_sync_precedes_the_wal_sync_that_acks_new_uids(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    oct_config_t *cfg = cfg_for(dir);
    tsdb_t *db = open_db(cfg);
    uid_registry_t *u = tsdb_uids(db);
    uint64_t d0 = uid_deferred_syncs(u), w0 = wal_syncs(db);

    /* three new UIDs (metric m, tagk host, tagv a): none synced yet */
    uint64_t seq = put1(db, "m", "a", 0);
    assert_int_equal(uid_deferred_syncs(u), d0);
    wait_synced(db, seq);
    assert_int_equal(uid_deferred_syncs(u), d0 + 1);
    assert_int_equal(wal_syncs(db), w0 + 1);

    /* a known series: the WAL syncs, the store need not */
    seq = put1(db, "m", "a", 1);
    wait_synced(db, seq);
    assert_int_equal(uid_deferred_syncs(u), d0 + 1);
    assert_int_equal(wal_syncs(db), w0 + 2);

    /* ten new tag values in one batch: one store sync for all of them */
    oct_slice_t tags[10][2];
    char hosts[10][8];
    tsdb_dp_t dps[10];
    for (int i = 0; i < 10; i++) {
        snprintf(hosts[i], sizeof hosts[i], "h%d", i);
        tags[i][0] = oct_slice_str("host");
        tags[i][1] = oct_slice_str(hosts[i]);
        dps[i] = (tsdb_dp_t){.metric = oct_slice_str("m"), .tags = tags[i], .n_tags = 1};
        dps[i].pt.ts_ms = (TS0 + 2) * 1000;
        dps[i].pt.val.i = i;
    }
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(db, dps, 10, NULL, NULL, &seq, &eb), 10);
    assert_int_equal(uid_deferred_syncs(u), d0 + 1);
    wait_synced(db, seq);
    assert_int_equal(uid_deferred_syncs(u), d0 + 2);
    assert_int_equal(wal_syncs(db), w0 + 3);

    /* written but not synced (a telnet put's ack): no store sync either */
    seq = put1(db, "m", "b", 3);
    assert_int_equal(tsdb_wait_durable(db, seq, 0, 10000, &eb), 0);
    assert_int_equal(uid_deferred_syncs(u), d0 + 2);
    assert_int_equal(wal_syncs(db), w0 + 3);

    /* the API acknowledges "b" as assigned: it syncs it first, once */
    uint64_t id, id2;
    int created = -1;
    assert_int_equal(
        uid_get_or_create(u, CODEC_UID_TAGV, (const uint8_t *)"b", 1, &id, &created, &eb), 0);
    assert_int_equal(created, 0);
    assert_int_equal(uid_deferred_syncs(u), d0 + 3);
    assert_int_equal(uid_get_or_create(u, CODEC_UID_TAGV, (const uint8_t *)"b", 1, &id2, NULL, &eb),
                     0);
    assert_int_equal(id2, id);
    assert_int_equal(uid_deferred_syncs(u), d0 + 3);
    /* a: 1, h0..h9: 2..11, b: 12 */
    assert_int_equal(id, 12);

    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in) fail_msg("cannot read %s", from);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Writes m{host=a} x 3 points into a fresh data dir's WAL (written, not
 * synced, not flushed) and copies its first segment to 'to'. */
static void wal_of_three_points(const char *to)
{
    char *dir = tu_tempdir();
    oct_config_t *cfg = cfg_for(dir);
    tsdb_t *db = open_db(cfg);
    uint64_t seq = 0;
    for (int i = 0; i < 3; i++)
        seq = put1(db, "m", "a", i);
    oct_errbuf_t eb;
    assert_int_equal(tsdb_wait_durable(db, seq, 0, 10000, &eb), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/wal/%016x.wal", dir, 1);
    copy_file(path, to);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

/* Opens a fresh data dir, lets prep() run on it, closes it (its own WAL is
 * then gone), drops the saved WAL segment in and reopens: the replay. */
static tsdb_t *replay_into(const char *dir, oct_config_t *cfg, const char *seg,
                           void (*prep)(tsdb_t *db))
{
    tsdb_t *db = open_db(cfg);
    if (prep) prep(db);
    tsdb_close(db);
    char path[4096];
    snprintf(path, sizeof path, "%s/wal/%016x.wal", dir, 1);
    copy_file(seg, path);
    return open_db(cfg);
}

static void replay_drops_records_naming_lost_uids(void **state)
{
    (void)state;
    char *src = tu_tempdir(), *dir = tu_tempdir();
    char seg[4096];
    snprintf(seg, sizeof seg, "%s/seg", src);
    wal_of_three_points(seg);

    oct_config_t *cfg = cfg_for(dir);
    tsdb_t *db = replay_into(dir, cfg, seg, NULL);
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    /* the store never saw m, host, a: the record is a torn tail */
    assert_int_equal(st.series, 0);
    assert_int_equal(st.head_points, 0);
    assert_true(st.wal_torn_bytes > 0);
    oct_errbuf_t eb;
    uint64_t c;
    assert_int_equal(uid_counter(tsdb_uids(db), CODEC_UID_METRIC, &c, &eb), 0);
    assert_int_equal(c, 0);

    /* UID 1 goes to the first new name, and its series holds only its own point */
    uint64_t seq = put1(db, "other", "z", 10);
    wait_synced(db, seq);
    tsdb_stats(db, &st);
    assert_int_equal(st.series, 1);
    assert_int_equal(st.head_points, 1);
    uint64_t id;
    assert_int_equal(
        uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)"other", 5, &id, &eb), 0);
    assert_int_equal(id, 1);

    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    tu_rmrf(src);
    free(dir);
    free(src);
}

/* The same names in the same order as the WAL's writer (so the same UIDs),
 * then tag value "a" deleted: its UID 1 stays below the counter. */
static void assign_then_delete_a(tsdb_t *db)
{
    uid_registry_t *u = tsdb_uids(db);
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(
        uid_get_or_create(u, CODEC_UID_METRIC, (const uint8_t *)"m", 1, &id, NULL, &eb), 0);
    assert_int_equal(id, 1);
    assert_int_equal(
        uid_get_or_create(u, CODEC_UID_TAGK, (const uint8_t *)"host", 4, &id, NULL, &eb), 0);
    assert_int_equal(id, 1);
    assert_int_equal(uid_get_or_create(u, CODEC_UID_TAGV, (const uint8_t *)"a", 1, &id, NULL, &eb),
                     0);
    assert_int_equal(id, 1);
    assert_int_equal(uid_delete(u, CODEC_UID_TAGV, (const uint8_t *)"a", 1, &eb), 0);
}

static void replay_keeps_records_naming_deleted_uids(void **state)
{
    (void)state;
    char *src = tu_tempdir(), *dir = tu_tempdir();
    char seg[4096];
    snprintf(seg, sizeof seg, "%s/seg", src);
    wal_of_three_points(seg);

    oct_config_t *cfg = cfg_for(dir);
    tsdb_t *db = replay_into(dir, cfg, seg, assign_then_delete_a);
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.series, 1);
    assert_int_equal(st.head_points, 3);
    assert_int_equal(st.wal_torn_bytes, 0);

    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    tu_rmrf(src);
    free(dir);
    free(src);
}

typedef struct {
    size_t first_err, n_err;
    int rc;
} errs_t;

static void on_err(void *ctx, size_t index, int rc, const char *msg)
{
    (void)msg;
    errs_t *e = ctx;
    if (!e->n_err++) e->first_err = index;
    e->rc = rc;
}

static void exhaustion_part_way_through_a_chunk_fails_only_what_does_not_fit(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    oct_config_t *cfg = cfg_for(dir);
    oct_errbuf_t eb;
    /* 1-byte tag values: UIDs 1..255 */
    assert_int_equal(oct_config_set(cfg, "tsd.storage.uid.width.tagv", "1", &eb), 0);
    tsdb_t *db = open_db(cfg);
    enum { N = 300 };
    static oct_slice_t tags[N][2];
    static char hosts[N][8];
    static tsdb_dp_t dps[N];
    for (int i = 0; i < N; i++) {
        snprintf(hosts[i], sizeof hosts[i], "h%03d", i);
        tags[i][0] = oct_slice_str("host");
        tags[i][1] = oct_slice_str(hosts[i]);
        dps[i] = (tsdb_dp_t){.metric = oct_slice_str("m"), .tags = tags[i], .n_tags = 1};
        dps[i].pt.ts_ms = TS0 * 1000;
        dps[i].pt.val.i = i;
    }
    errs_t e = {0, 0, 0};
    uint64_t seq;
    /* h000..h254 take tag value UIDs 1..255; h255..h299 find none left */
    assert_int_equal(tsdb_put_batch(db, dps, N, on_err, &e, &seq, &eb), 255);
    assert_int_equal(e.n_err, 45);
    assert_int_equal(e.first_err, 255);
    assert_int_equal(e.rc, OCT_EEXHAUSTED);
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.series, 255);
    uint64_t id;
    assert_int_equal(
        uid_get_id(tsdb_uids(db), CODEC_UID_TAGV, (const uint8_t *)"h254", 4, &id, &eb), 0);
    assert_int_equal(id, 255);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(store_sync_precedes_the_wal_sync_that_acks_new_uids),
        cmocka_unit_test(replay_drops_records_naming_lost_uids),
        cmocka_unit_test(replay_keeps_records_naming_deleted_uids),
        cmocka_unit_test(exhaustion_part_way_through_a_chunk_fails_only_what_does_not_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
