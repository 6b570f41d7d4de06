/* test_shared_journal.c -- the journal of new series on a shared store
 * stays bounded (docs/format/layout.md, "New series"): driven minute by
 * minute with the test's own clock, as the sweep thread drives it once a
 * minute, it keeps exactly the series of the last 32 minutes in at most 64
 * partitions, and a reader still finds a minute 27 minutes back (the
 * furthest a TSD reads before it reloads from tsdb-meta instead).
 *
 * Runs on the real RocksDB store, and on RADOS too when
 * OCTSDB_TEST_STORE_RADOS names a cluster's config (scripts/ceph-cluster.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "store/store.h"
#include "testutil.h"
#include "tsdb/series.h"

#define PER_MIN 3
/* some minute of 2026; the ring's slot is the minute mod 64 */
#define M0 29500000LL

/* The k-th TSUID created in minute m (made-up bytes: the journal does not
 * read them). */
static void tsuid_of(int64_t m, int k, uint8_t out[6])
{
    out[0] = 0;
    out[1] = 0;
    out[2] = 1;
    out[3] = (uint8_t)(m >> 8);
    out[4] = (uint8_t)m;
    out[5] = (uint8_t)k;
}

typedef struct {
    int64_t m;
    int n, bad;
} read_ctx_t;

static int on_tsuid(void *ctx, oct_slice_t t)
{
    read_ctx_t *c = ctx;
    uint8_t want[6];
    tsuid_of(c->m, c->n, want);
    if (t.len != 6 || memcmp(t.ptr, want, 6) != 0) c->bad++;
    c->n++;
    return 0;
}

typedef struct {
    store_t *st;
    size_t parts, rows;
} count_ctx_t;

static int count_part(void *ctx, oct_slice_t part)
{
    count_ctx_t *c = ctx;
    if (part.len < 7 || memcmp(part.ptr, "series/", 7) != 0) return 0;
    c->parts++;
    store_scan_spec_t spec = {0};
    spec.part = part;
    store_scanner_t *sc;
    oct_errbuf_t eb;
    if (store_scan_open(c->st, STORE_TABLE_SYS, &spec, &sc, &eb)) fail_msg("scan: %s", eb.msg);
    store_result_t row = STORE_RESULT_INIT;
    while (store_scan_next(sc, &row, &eb) == 1)
        c->rows++;
    store_result_free(&row);
    store_scan_close(sc);
    return 0;
}

/* Runs minutes M0 .. M0 + minutes - 1 on st; checks every `every` minutes. */
static void run(store_t *st, int minutes, int every)
{
    oct_errbuf_t eb;
    for (int64_t t = M0; t < M0 + minutes; t++) {
        uint8_t ids[PER_MIN][6];
        oct_slice_t sl[PER_MIN];
        for (int k = 0; k < PER_MIN; k++) {
            tsuid_of(t, k, ids[k]);
            sl[k] = oct_slice(ids[k], 6);
        }
        if (tw_journal_put(st, t, sl, PER_MIN, &eb)) fail_msg("put: %s", eb.msg);
        if (tw_journal_trim(st, t, &eb)) fail_msg("trim: %s", eb.msg);
        if ((t - M0) % every != every - 1 && t != M0 + minutes - 1) continue;
        /* the minute of t - 31 is the oldest kept: trimmed at minute m + 32 */
        int64_t kept = t - M0 + 1 < 32 ? t - M0 + 1 : 32;
        count_ctx_t c = {st, 0, 0};
        if (store_part_list(st, STORE_TABLE_SYS, oct_slice(NULL, 0), oct_slice(NULL, 0), count_part,
                            &c, &eb))
            fail_msg("part_list: %s", eb.msg);
        assert_int_equal(c.rows, (size_t)(kept * PER_MIN));
        assert_true(c.parts <= 64);
        /* a reader 27 minutes behind finds that minute whole */
        if (t - 27 >= M0) {
            read_ctx_t r = {t - 27, 0, 0};
            assert_int_equal(tw_journal_read(st, t - 27, on_tsuid, &r, &eb), 0);
            assert_int_equal(r.n, PER_MIN);
            assert_int_equal(r.bad, 0);
        }
        /* a trimmed minute reads as empty, and the ring's other minutes in
         * the same slot are not mistaken for it */
        if (t - 32 >= M0) {
            read_ctx_t r = {t - 32, 0, 0};
            assert_int_equal(tw_journal_read(st, t - 32, on_tsuid, &r, &eb), 0);
            assert_int_equal(r.n, 0);
        }
    }
}

static void journal_stays_bounded_rocksdb(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    store_options_t o = {0};
    o.dir = dir;
    store_t *st;
    oct_errbuf_t eb;
    if (store_open(&o, &st, &eb)) fail_msg("open: %s", eb.msg);
    run(st, 200, 1);
    store_close(st);
    tu_rmrf(dir);
    free(dir);
}

static void journal_stays_bounded_rados(void **state)
{
    (void)state;
    const char *path = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!path || !*path) skip();
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    if (oct_config_load_file(cfg, path, &eb)) fail_msg("%s: %s", path, eb.msg);
    char ns[64];
    snprintf(ns, sizeof ns, "jnl-%d-%lld", (int)getpid(), (long long)oct_clock_wall_ms());
    if (oct_config_set(cfg, "tsd.storage.rados.namespace", ns, &eb)) fail_msg("%s", eb.msg);
    char *dir = tu_tempdir();
    store_options_t o = {0};
    o.dir = dir;
    o.backend = "rados";
    o.cfg = cfg;
    store_t *st;
    if (store_open(&o, &st, &eb)) fail_msg("open: %s", eb.msg);
    run(st, 100, 10);
    store_close(st);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(journal_stays_bounded_rocksdb),
        cmocka_unit_test(journal_stays_bounded_rados),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
