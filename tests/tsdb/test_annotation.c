/* test_annotation.c -- annotation storage (tsdb/annotation.h) against the
 * real store in a temp dir. The bytes expected are written by hand from the
 * page docs/format/annotations.md (row keys, qualifiers, JSON, its worked example):
 * row key 00 00 01 | 50 E2 27 00 | 00 00 01 00 00 01 for the hour
 * 1356998400 of TSUID 000001000001000001, qualifier 01 00 19 for +25 s.
 * Notes written straight into the store in OpenTSDB's format must read back,
 * and the data path must not mistake a note for a point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "store/store.h"
#include "testutil.h"
#include "tsdb/annotation.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

#define H0 1356998400LL /* 2013-01-01T00:00:00Z = 0x50E22700 */

static const uint8_t TSUID[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};

typedef struct {
    char *dir;
    tsdb_t *db;
} fx_t;

static tsdb_t *open_db(const char *dir, const char *const *kv)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    for (size_t i = 0; kv && kv[i]; i += 2)
        assert_int_equal(oct_config_set(cfg, kv[i], kv[i + 1], &eb), 0);
    tsdb_t *db = NULL;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("tsdb_open: %s", eb.msg);
    oct_config_free(cfg);
    return db;
}

static int setup_kv(void **state, const char *const *kv)
{
    fx_t *fx = calloc(1, sizeof *fx);
    fx->dir = tu_tempdir();
    fx->db = open_db(fx->dir, kv);
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    return setup_kv(state, NULL);
}

static int setup_salted(void **state)
{
    static const char *const kv[] = {"tsd.storage.salt.width", "1", "tsd.storage.salt.buckets",
                                     "20", NULL};
    return setup_kv(state, kv);
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    tsdb_close(fx->db);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

/* The raw cell at (row hex, qualifier hex) of the data table as a string,
 * or NULL; plen = the row's partition prefix length. */
static char *raw_cell(tsdb_t *db, const char *row_hex, size_t plen, const char *qual_hex)
{
    uint8_t row[64], q[8];
    int rl = tu_unhex(row_hex, row, sizeof row), ql = tu_unhex(qual_hex, q, sizeof q);
    assert_true(rl > 0 && ql > 0);
    store_result_t r = STORE_RESULT_INIT;
    oct_errbuf_t eb;
    int rc = store_get_cell(tsdb_store(db), STORE_TABLE_DATA, oct_slice(row, plen),
                            oct_slice(row, (size_t)rl), oct_slice_str("t"),
                            oct_slice(q, (size_t)ql), &r, &eb);
    assert_true(rc >= 0);
    char *s = NULL;
    if (rc == 1) {
        s = calloc(1, r.cells[0].value.len + 1);
        memcpy(s, r.cells[0].value.ptr, r.cells[0].value.len);
    }
    store_result_free(&r);
    return s;
}

static void raw_put(tsdb_t *db, const char *row_hex, size_t plen, const char *qual_hex,
                    const char *value)
{
    uint8_t row[64], q[8];
    int rl = tu_unhex(row_hex, row, sizeof row), ql = tu_unhex(qual_hex, q, sizeof q);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(row, plen),
                     {oct_slice(row, (size_t)rl), oct_slice_str("t"), oct_slice(q, (size_t)ql),
                      oct_slice_str(value)}};
    oct_errbuf_t eb;
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, &op, 1, 0, &eb), 0);
}

static void expect_get(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start,
                       const char *want)
{
    char *js = NULL;
    oct_errbuf_t eb;
    int rc = tsdb_annotation_get(db, tsuid, len, start, &js, &eb);
    if (!want) {
        assert_int_equal(rc, 0);
        assert_null(js);
        return;
    }
    if (rc != 1) fail_msg("get %lld: rc %d %s", (long long)start, rc, eb.msg);
    assert_string_equal(js, want);
    free(js);
}

/* collects scanned JSON texts joined by '\n' */
static int scan_cb(void *ctx, const char *json, size_t len)
{
    char *buf = ctx;
    size_t n = strlen(buf);
    memcpy(buf + n, json, len);
    buf[n + len] = '\n';
    buf[n + len + 1] = '\0';
    return 0;
}

static void expect_scan(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t a, int64_t b,
                        const char *want)
{
    char buf[8192] = "";
    oct_errbuf_t eb;
    int rc = tsdb_annotation_scan(db, tsuid, len, a, b, scan_cb, buf, &eb);
    if (rc) fail_msg("scan: %d %s", rc, eb.msg);
    assert_string_equal(buf, want);
}

/* docs/format/annotations.md section 4 (OpenTSDB's example 7) */
static void series_bytes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    tsdb_annotation_t a = {TSUID, 9, H0 + 25, 0, "deploy", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), 0);
    char *v = raw_cell(fx->db, "000001 50E22700 000001000001", 7, "010019");
    assert_non_null(v);
    assert_string_equal(v, "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425,"
                           "\"endTime\":0,\"description\":\"deploy\",\"notes\":\"\","
                           "\"custom\":null}");
    free(v);
    /* ms start time: 4-byte offset 25123 = 0x00006223 */
    tsdb_annotation_t m = {TSUID, 9,   H0 * 1000 + 25123,     H0 * 1000 + 30000,
                           "ms",  "n", "{\"owner\":\"jdoe\"}"};
    assert_int_equal(tsdb_annotation_put(fx->db, &m, &eb), 0);
    v = raw_cell(fx->db, "000001 50E22700 000001000001", 7, "0100006223");
    assert_non_null(v);
    assert_string_equal(v, "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425123,"
                           "\"endTime\":1356998430000,\"description\":\"ms\",\"notes\":\"n\","
                           "\"custom\":{\"owner\":\"jdoe\"}}");
    free(v);
}

static void global_bytes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    tsdb_annotation_t a = {NULL, 0, H0 + 25, H0 + 60, "outage", "dc1", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), 0);
    /* zero metric, the hour, no tags; no tsuid field */
    char *v = raw_cell(fx->db, "000000 50E22700", 7, "010019");
    assert_non_null(v);
    assert_string_equal(v, "{\"startTime\":1356998425,\"endTime\":1356998460,"
                           "\"description\":\"outage\",\"notes\":\"dc1\",\"custom\":null}");
    free(v);
    expect_get(fx->db, NULL, 0, H0 + 25,
               "{\"startTime\":1356998425,\"endTime\":1356998460,"
               "\"description\":\"outage\",\"notes\":\"dc1\",\"custom\":null}");
    /* a series note at the same time is another cell */
    expect_get(fx->db, TSUID, 9, H0 + 25, NULL);
}

/* salt 1 byte / 20 buckets: the series row gets the data's salt 08
 * (docs/format/rowkey.md section 4), the global row stays unsalted (salt byte 00) */
static void salted_bytes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    tsdb_annotation_t a = {TSUID, 9, H0 + 25, 0, "s", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), 0);
    char *v = raw_cell(fx->db, "08 000001 50E22700 000001000001", 8, "010019");
    assert_non_null(v);
    free(v);
    tsdb_annotation_t g = {NULL, 0, H0 + 25, 0, "g", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &g, &eb), 0);
    v = raw_cell(fx->db, "00 000000 50E22700", 8, "010019");
    assert_non_null(v);
    assert_string_equal(v, "{\"startTime\":1356998425,\"endTime\":0,\"description\":\"g\","
                           "\"notes\":\"\",\"custom\":null}");
    free(v);
    expect_scan(fx->db, TSUID, 9, H0 * 1000, H0 * 1000 + 3599999,
                "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425,\"endTime\":0,"
                "\"description\":\"s\",\"notes\":\"\",\"custom\":null}\n");
}

/* OpenTSDB's quirk: 1356998000 (seconds, divisible by 1000) is stored in its
 * hour's row (1356994800 = 0x50E218F0) at offset 1356998 % 3600 = 3398 =
 * 0x0D46; 1356998425000 (ms on a whole second) folds onto 01 00 19. */
static void quirk_bytes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    tsdb_annotation_t a = {TSUID, 9, 1356998000, 0, "q", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), 0);
    char *v = raw_cell(fx->db, "000001 50E218F0 000001000001", 7, "010D46");
    assert_non_null(v);
    free(v);
    expect_get(fx->db, TSUID, 9, 1356998000,
               "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998000,\"endTime\":0,"
               "\"description\":\"q\",\"notes\":\"\",\"custom\":null}");
    /* 1356994800 + 3398 = 1356998198 maps to the same cell: refused, not merged */
    tsdb_annotation_t b = {TSUID, 9, 1356998198, 0, "other", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &b, &eb), OCT_EEXISTS);
    expect_get(fx->db, TSUID, 9, 1356998198, NULL);
    assert_int_equal(tsdb_annotation_delete(fx->db, TSUID, 9, 1356998198, &eb), 0);
    /* the scan lists it at its true time, inside [1356998000 s, +0] */
    expect_scan(fx->db, TSUID, 9, 1356998000000LL, 1356998000000LL,
                "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998000,\"endTime\":0,"
                "\"description\":\"q\",\"notes\":\"\",\"custom\":null}\n");

    tsdb_annotation_t m = {TSUID, 9, 1356998425000LL, 0, "msfold", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &m, &eb), 0);
    v = raw_cell(fx->db, "000001 50E22700 000001000001", 7, "010019");
    assert_non_null(v);
    assert_string_equal(v, "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425000,"
                           "\"endTime\":0,\"description\":\"msfold\",\"notes\":\"\","
                           "\"custom\":null}");
    free(v);
    /* the same instant asked in seconds finds it */
    expect_get(fx->db, TSUID, 9, 1356998425,
               "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425000,\"endTime\":0,"
               "\"description\":\"msfold\",\"notes\":\"\",\"custom\":null}");
}

/* A note written by OpenTSDB (bytes by hand) reads back, by key and by scan. */
static void opentsdb_written(void **state)
{
    fx_t *fx = *state;
    const char *js = "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998430,"
                     "\"endTime\":1356998490,\"description\":\"from otsdb\",\"notes\":\"x\","
                     "\"custom\":{\"a\":\"1\"}}";
    raw_put(fx->db, "000001 50E22700 000001000001", 7, "01001E", js); /* +30 s */
    const char *g = "{\"startTime\":1356998000,\"endTime\":0,\"description\":\"quirky\","
                    "\"notes\":\"\",\"custom\":null}";
    raw_put(fx->db, "000000 50E218F0", 7, "010D46", g);
    expect_get(fx->db, TSUID, 9, 1356998430, js);
    expect_get(fx->db, NULL, 0, 1356998000, g);
    char want[1024];
    snprintf(want, sizeof want, "%s\n", js);
    expect_scan(fx->db, TSUID, 9, H0 * 1000, H0 * 1000 + 3599999, want);
    snprintf(want, sizeof want, "%s\n", g);
    expect_scan(fx->db, NULL, 0, 1356990000000LL, 1356999999000LL, want);
    oct_errbuf_t eb;
    assert_int_equal(tsdb_annotation_delete(fx->db, NULL, 0, 1356998000, &eb), 1);
    expect_scan(fx->db, NULL, 0, 1356990000000LL, 1356999999000LL, "");
}

/* Several notes in one hour and across hours: time order, inclusive bounds,
 * replace, delete. */
static void round_trip(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    /* put out of order: +70 s, +10 s, +10.5 s (ms), next hour +5 s */
    tsdb_annotation_t n1 = {TSUID, 9, H0 + 70, 0, "n1", "", NULL};
    tsdb_annotation_t n2 = {TSUID, 9, H0 + 10, 0, "n2", "", NULL};
    tsdb_annotation_t n3 = {TSUID, 9, (H0 + 10) * 1000 + 500, 0, "n3", "", NULL};
    tsdb_annotation_t n4 = {TSUID, 9, H0 + 3605, 0, "n4", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &n1, &eb), 0);
    assert_int_equal(tsdb_annotation_put(fx->db, &n2, &eb), 0);
    assert_int_equal(tsdb_annotation_put(fx->db, &n3, &eb), 0);
    assert_int_equal(tsdb_annotation_put(fx->db, &n4, &eb), 0);
#define J(t, d)                                                                                    \
    "{\"tsuid\":\"000001000001000001\",\"startTime\":" #t ",\"endTime\":0,\"description\":\"" d    \
    "\",\"notes\":\"\",\"custom\":null}\n"
    expect_scan(fx->db, TSUID, 9, 0, 4102444800000LL,
                J(1356998410, "n2") J(1356998410500, "n3") J(1356998470, "n1") J(1357002005, "n4"));
    /* bounds are inclusive, in ms */
    expect_scan(fx->db, TSUID, 9, 1356998410000LL, 1356998470000LL,
                J(1356998410, "n2") J(1356998410500, "n3") J(1356998470, "n1"));
    expect_scan(fx->db, TSUID, 9, 1356998410001LL, 1356998469999LL, J(1356998410500, "n3"));
    /* global notes are elsewhere */
    expect_scan(fx->db, NULL, 0, 0, 4102444800000LL, "");
    /* replace */
    tsdb_annotation_t n1b = {TSUID, 9, H0 + 70, 0, "n1b", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &n1b, &eb), 0);
    /* delete: 1 then 0 */
    assert_int_equal(tsdb_annotation_delete(fx->db, TSUID, 9, (H0 + 10) * 1000 + 500, &eb), 1);
    assert_int_equal(tsdb_annotation_delete(fx->db, TSUID, 9, (H0 + 10) * 1000 + 500, &eb), 0);
    expect_get(fx->db, TSUID, 9, (H0 + 10) * 1000 + 500, NULL);
    expect_scan(fx->db, TSUID, 9, 0, 4102444800000LL,
                J(1356998410, "n2") J(1356998470, "n1b") J(1357002005, "n4"));
#undef J
}

static void bad_args(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    tsdb_annotation_t a = {TSUID, 9, 0, 0, "x", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "The start timestamp has not been set");
    tsdb_annotation_t b = {TSUID, 8, H0, 0, "x", "", NULL}; /* not 3 + 6k bytes */
    assert_true(tsdb_annotation_put(fx->db, &b, &eb) < 0);
    tsdb_annotation_t c = {TSUID, 9, H0, 0, "x", "", "[1]"}; /* custom not an object */
    assert_int_equal(tsdb_annotation_put(fx->db, &c, &eb), OCT_EINVAL);
    char *js;
    assert_int_equal(tsdb_annotation_get(fx->db, TSUID, 9, -5, &js, &eb), OCT_EINVAL);
}

/* The data path reads the series' row and must skip the note's cell, before
 * and after the head is flushed into that row. */
static void data_skips_notes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    oct_slice_t tags[2] = {oct_slice_str("host"), oct_slice_str("web01")};
    tsdb_dp_t dp = {oct_slice_str("sys.cpu.user"), tags, 1, {0}, 0};
    dp.pt.ts_ms = (H0 + 25) * 1000;
    dp.pt.val.i = 42;
    assert_int_equal(tsdb_put(fx->db, &dp, NULL, &eb), 0);
    dp.pt.ts_ms = (H0 + 85) * 1000;
    dp.pt.val.i = 300;
    assert_int_equal(tsdb_put(fx->db, &dp, NULL, &eb), 0);
    /* first UIDs of a fresh registry: the series is 000001000001000001 */
    tsdb_annotation_t a = {TSUID, 9, H0 + 25, 0, "on a point", "", NULL};
    assert_int_equal(tsdb_annotation_put(fx->db, &a, &eb), 0);
    for (int pass = 0; pass < 2; pass++) {
        codec_point_t *p = NULL;
        size_t n = 0;
        assert_int_equal(
            tsdb_read_series(fx->db, TSUID, 9, H0 * 1000, H0 * 1000 + 3599999, &p, &n, &eb), 0);
        assert_int_equal(n, 2);
        assert_int_equal(p[0].ts_ms, (H0 + 25) * 1000);
        assert_int_equal(p[0].val.i, 42);
        assert_int_equal(p[1].ts_ms, (H0 + 85) * 1000);
        assert_int_equal(p[1].val.i, 300);
        free(p);
        if (pass == 0) assert_int_equal(tsdb_flush(fx->db, &eb), 0);
    }
    expect_get(fx->db, TSUID, 9, H0 + 25,
               "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425,\"endTime\":0,"
               "\"description\":\"on a point\",\"notes\":\"\",\"custom\":null}");
    /* reopen: the note and the points survive */
    tsdb_close(fx->db);
    fx->db = open_db(fx->dir, NULL);
    codec_point_t *p = NULL;
    size_t n = 0;
    assert_int_equal(
        tsdb_read_series(fx->db, TSUID, 9, H0 * 1000, H0 * 1000 + 3599999, &p, &n, &eb), 0);
    assert_int_equal(n, 2);
    free(p);
    expect_scan(fx->db, TSUID, 9, H0 * 1000, H0 * 1000 + 3599999,
                "{\"tsuid\":\"000001000001000001\",\"startTime\":1356998425,\"endTime\":0,"
                "\"description\":\"on a point\",\"notes\":\"\",\"custom\":null}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(series_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(global_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(salted_bytes, setup_salted, teardown),
        cmocka_unit_test_setup_teardown(quirk_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(opentsdb_written, setup, teardown),
        cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(data_skips_notes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
