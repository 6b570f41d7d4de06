/* test_maint.c -- tsdb/maint.h over a real data dir: the raw row scan
 * (which rows, in which order), the window delete (which points survive,
 * how many row deletions, unflushed points included) and compaction (bytes
 * on disk, the same points before and after). Every expectation is counted
 * by hand from the points written below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "testutil.h"
#include "tsdb_fixture.h"
#include "tsdb/maint.h"
#include "tsdb/read.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define H0    1356998400LL /* 2013-01-01T00:00:00Z, an hour boundary */
#define HR    3600LL
#define MS(s) ((s)*1000LL)

static void put(const char *metric, const char *host, int64_t ts_s, int64_t val)
{
    oct_slice_t t[2] = {oct_slice_str("host"), oct_slice_str(host)};
    tsdb_dp_t dp = {oct_slice_str(metric), t, 1, {MS(ts_s), {.i = val}, 0}, 0};
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

static void flush(void)
{
    oct_errbuf_t eb;
    if (tsdb_flush(g_fx->db, &eb)) fail_msg("flush: %s", eb.msg);
}

/* metric{host=v} as a TSUID (widths 3). */
static void tsuid(const char *metric, const char *host, uint8_t out[9])
{
    assert_int_equal(codec_uid_encode(tsdb_fx_uid(CODEC_UID_METRIC, metric), 3, out), 0);
    assert_int_equal(codec_uid_encode(tsdb_fx_uid(CODEC_UID_TAGK, "host"), 3, out + 3), 0);
    assert_int_equal(codec_uid_encode(tsdb_fx_uid(CODEC_UID_TAGV, host), 3, out + 6), 0);
}

/* The values of a series over all time, in time order, into v; returns n. */
static size_t values(const char *metric, const char *host, int64_t *v, size_t cap)
{
    uint8_t t[9];
    tsuid(metric, host, t);
    codec_point_t *p;
    size_t n;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_read_series(g_fx->db, t, 9, 0, MS(H0 + 100 * HR), &p, &n, &eb), 0);
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++)
        v[i] = p[i].val.i;
    free(p);
    return n;
}

static int setup(void **state)
{
    *state = tsdb_fx_open();
    put("mt.m", "a", H0 + 10, 1);
    put("mt.m", "a", H0 + HR + 10, 2);
    put("mt.m", "a", H0 + 2 * HR + 10, 3);
    put("mt.m", "a", H0 + 5 * HR + 10, 4);
    put("mt.m", "b", H0 + 20, 5);
    put("mt.m", "b", H0 + 2 * HR + 20, 6);
    put("mt.o", "a", H0 + 30, 7);
    flush();
    return 0;
}

typedef struct {
    codec_rowkey_layout_t lay;
    uint64_t metric; /* count only this metric's rows (0: mt.m and mt.o) */
    uint64_t m1, m2;
    uint32_t base[16];
    uint64_t host[16];
    size_t n;
    int stop_at; /* return 9 at this row (1-based; 0: never) */
} rows_t;

static int rows_cb(void *ctx, const tsdb_row_t *row)
{
    rows_t *r = ctx;
    codec_rowkey_t rk;
    if (codec_rowkey_parse(&r->lay, row->key.ptr, row->key.len, &rk, NULL)) return 0;
    if (rk.metric_uid != r->m1 && rk.metric_uid != r->m2) return 0;
    assert_true(r->n < 16);
    assert_true(row->n_cells >= 1);
    assert_non_null(row->raw);
    assert_int_equal(row->part.len, 7); /* metric + base hour */
    assert_memory_equal(row->part.ptr, row->key.ptr, 7);
    r->base[r->n] = rk.base_time;
    r->host[r->n++] = codec_uid_decode(rk.tags + 3, 3);
    return r->stop_at && (int)r->n == r->stop_at ? 9 : 0;
}

static void test_scan_rows(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    uint64_t m = tsdb_fx_uid(CODEC_UID_METRIC, "mt.m"), o = tsdb_fx_uid(CODEC_UID_METRIC, "mt.o");
    uint64_t a = tsdb_fx_uid(CODEC_UID_TAGV, "a"), b = tsdb_fx_uid(CODEC_UID_TAGV, "b");
    rows_t r = {{3, 3, 3, 0, 1}, 0, m, m, {0}, {0}, 0, 0};
    /* hours 0..2 of mt.m: a@0 b@0 a@1 a@2 b@2 (b's tagv UID is the larger) */
    tsdb_rows_spec_t spec = {0, m, MS(H0 + 1800), MS(H0 + 2 * HR + 5)};
    assert_int_equal(tsdb_scan_rows(g_fx->db, &spec, rows_cb, &r, &eb), 0);
    uint32_t want_base[5] = {H0, H0, H0 + HR, H0 + 2 * HR, H0 + 2 * HR};
    uint64_t want_host[5] = {a, b, a, a, b};
    assert_int_equal(r.n, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(r.base[i], want_base[i]);
        assert_int_equal(r.host[i], want_host[i]);
    }
    /* an end before the start: nothing */
    memset(r.base, 0, sizeof r.base);
    r.n = 0;
    spec = (tsdb_rows_spec_t){0, m, MS(H0 + 2 * HR), MS(H0)};
    assert_int_equal(tsdb_scan_rows(g_fx->db, &spec, rows_cb, &r, &eb), 0);
    assert_int_equal(r.n, 0);
    /* every row: mt.m's 6 and mt.o's 1 */
    r.m2 = o;
    spec = (tsdb_rows_spec_t){.every_row = 1};
    assert_int_equal(tsdb_scan_rows(g_fx->db, &spec, rows_cb, &r, &eb), 0);
    assert_int_equal(r.n, 7);
    /* the callback stops it */
    r.n = 0;
    r.stop_at = 2;
    assert_int_equal(tsdb_scan_rows(g_fx->db, &spec, rows_cb, &r, &eb), 9);
    assert_int_equal(r.n, 2);
}

static void test_delete_window(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    uint8_t ta[9], tb[9];
    tsuid("mt.m", "a", ta);
    tsuid("mt.m", "b", tb);
    uint64_t rows = 99;
    assert_int_equal(tsdb_delete_window(g_fx->db, NULL, 0, &rows, &eb), 0);
    assert_int_equal(rows, 0);

    /* a over hours 1..2 (the window starts inside hour 1): rows a@1, a@2 */
    tsdb_window_t w = {ta, 9, MS(H0 + HR) + 500, MS(H0 + 2 * HR)};
    assert_int_equal(tsdb_delete_window(g_fx->db, &w, 1, &rows, &eb), 0);
    assert_int_equal(rows, 2);
    int64_t v[8];
    assert_int_equal(values("mt.m", "a", v, 8), 2);
    assert_int_equal(v[0], 1);
    assert_int_equal(v[1], 4);
    assert_int_equal(values("mt.m", "b", v, 8), 2); /* b untouched */

    /* an unflushed point goes too: b@2 gets one more, then hours 2..3 go */
    put("mt.m", "b", H0 + 2 * HR + 40, 8);
    tsdb_window_t wb[2] = {{tb, 9, MS(H0 + 2 * HR), MS(H0 + 3 * HR + 1)},
                           {ta, 9, MS(H0 + 7 * HR), MS(H0 + 9 * HR)}}; /* a: nothing there */
    assert_int_equal(tsdb_delete_window(g_fx->db, wb, 2, &rows, &eb), 0);
    assert_int_equal(rows, 1);
    assert_int_equal(values("mt.m", "b", v, 8), 1);
    assert_int_equal(v[0], 5);
    assert_int_equal(values("mt.m", "a", v, 8), 2);
    assert_int_equal(values("mt.o", "a", v, 8), 1);
    assert_int_equal(v[0], 7);

    /* a TSUID of the wrong length is refused */
    tsdb_window_t bad = {ta, 8, 0, MS(H0)};
    assert_true(tsdb_delete_window(g_fx->db, &bad, 1, &rows, &eb) < 0);
}

static void test_compact(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    uint64_t bytes = 0;
    assert_int_equal(tsdb_compact(g_fx->db, &eb), 0);
    assert_int_equal(tsdb_disk_usage(g_fx->db, &bytes, &eb), 0);
    assert_true(bytes > 0); /* everything is in files after a full compaction */
    int64_t v[8];
    assert_int_equal(values("mt.m", "a", v, 8), 2);
    assert_int_equal(v[0], 1);
    assert_int_equal(v[1], 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_rows),
        cmocka_unit_test(test_delete_window),
        cmocka_unit_test(test_compact),
    };
    return cmocka_run_group_tests(tests, setup, tsdb_fx_teardown);
}
