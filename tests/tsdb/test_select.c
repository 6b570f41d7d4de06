/* test_select.c -- tsdb_select / tsdb_select_names (which series match a
 * metric and tag conditions) and tsdb_last_point (the latest point at or
 * before the end of the current hour, within a back-scan), over a real data
 * dir. Expected series are TSUIDs built here from the UIDs (metric, then the
 * pairs sorted by tagk UID, 3 bytes each); expected points are the ones the
 * test wrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "codec/uid_bytes.h"
#include "testutil.h"
#include "tsdb_fixture.h"
#include "tsdb/select.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define H0 1356998400LL /* 2013-01-01T00:00:00Z, an hour boundary */
#define HR 3600LL

static void put2(const char *metric, const char *k1, const char *v1, const char *k2, const char *v2,
                 int64_t ts_ms, int64_t val)
{
    oct_slice_t t[4] = {oct_slice_str(k1), oct_slice_str(v1), oct_slice_str(k2 ? k2 : ""),
                        oct_slice_str(v2 ? v2 : "")};
    tsdb_dp_t dp = {oct_slice_str(metric), t, k2 ? 2 : 1, {ts_ms, {.i = val}, 0}, 0};
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

typedef struct {
    uint8_t t[16];
    size_t len;
} tsuid_t;

/* metric{k1=v1[,k2=v2]} as a TSUID: pairs ordered by tagk UID. */
static tsuid_t ts_of(const char *metric, const char *k1, const char *v1, const char *k2,
                     const char *v2)
{
    tsuid_t r = {{0}, 0};
    assert_int_equal(codec_uid_encode(tsdb_fx_uid(CODEC_UID_METRIC, metric), 3, r.t), 0);
    uint64_t ka = tsdb_fx_uid(CODEC_UID_TAGK, k1), va = tsdb_fx_uid(CODEC_UID_TAGV, v1);
    r.len = 9;
    if (k2) {
        uint64_t kb = tsdb_fx_uid(CODEC_UID_TAGK, k2), vb = tsdb_fx_uid(CODEC_UID_TAGV, v2);
        if (kb < ka) {
            uint64_t x = ka, y = va;
            ka = kb, va = vb, kb = x, vb = y;
        }
        assert_int_equal(codec_uid_encode(kb, 3, r.t + 9), 0);
        assert_int_equal(codec_uid_encode(vb, 3, r.t + 12), 0);
        r.len = 15;
    }
    assert_int_equal(codec_uid_encode(ka, 3, r.t + 3), 0);
    assert_int_equal(codec_uid_encode(va, 3, r.t + 6), 0);
    return r;
}

typedef struct {
    tsuid_t got[16];
    size_t n;
    int stop_after; /* return 7 after this many (0: never) */
} got_t;

static int got_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    got_t *g = ctx;
    assert_true(g->n < 16 && len <= 16);
    memcpy(g->got[g->n].t, tsuid, len);
    g->got[g->n++].len = len;
    return g->stop_after && (int)g->n == g->stop_after ? 7 : 0;
}

static int ts_cmp(const void *a, const void *b)
{
    const tsuid_t *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->t, y->t, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The callback saw exactly want[0..n) in ascending byte order. */
static void expect(const got_t *g, tsuid_t *want, size_t n)
{
    qsort(want, n, sizeof *want, ts_cmp);
    assert_int_equal(g->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(g->got[i].len, want[i].len);
        assert_memory_equal(g->got[i].t, want[i].t, want[i].len);
    }
}

static int setup(void **state)
{
    *state = tsdb_fx_open();
    /* A sel.m{host=a}, B {host=a,dc=x}, C {host=b,dc=x}, D {host=b,dc=y},
     * E {dc=x,rack=r1}, and one series of another metric. */
    put2("sel.m", "host", "a", NULL, NULL, H0 * 1000, 1);
    put2("sel.m", "host", "a", "dc", "x", H0 * 1000, 2);
    put2("sel.m", "host", "b", "dc", "x", H0 * 1000, 3);
    put2("sel.m", "host", "b", "dc", "y", H0 * 1000, 4);
    put2("sel.m", "dc", "x", "rack", "r1", H0 * 1000, 5);
    put2("sel.other", "host", "a", NULL, NULL, H0 * 1000, 6);
    return 0;
}

static void test_select(void **state)
{
    (void)state;
    tsdb_t *db = g_fx->db;
    uint64_t m = tsdb_fx_uid(CODEC_UID_METRIC, "sel.m");
    uint64_t host = tsdb_fx_uid(CODEC_UID_TAGK, "host"), dc = tsdb_fx_uid(CODEC_UID_TAGK, "dc");
    uint64_t a = tsdb_fx_uid(CODEC_UID_TAGV, "a"), b = tsdb_fx_uid(CODEC_UID_TAGV, "b");
    uint64_t x = tsdb_fx_uid(CODEC_UID_TAGV, "x"), y = tsdb_fx_uid(CODEC_UID_TAGV, "y");
    uint64_t r1 = tsdb_fx_uid(CODEC_UID_TAGV, "r1");
    tsuid_t A = ts_of("sel.m", "host", "a", NULL, NULL);
    tsuid_t B = ts_of("sel.m", "host", "a", "dc", "x");
    tsuid_t C = ts_of("sel.m", "host", "b", "dc", "x");
    tsuid_t D = ts_of("sel.m", "host", "b", "dc", "y");
    tsuid_t E = ts_of("sel.m", "dc", "x", "rack", "r1");

    got_t g = {0};
    tsdb_tag_match_t c1[1] = {{host, &a, 1}};
    assert_int_equal(tsdb_select(db, m, c1, 1, TSDB_SELECT_SUBSET, 0, got_cb, &g), 0);
    expect(&g, (tsuid_t[]){A, B}, 2);

    memset(&g, 0, sizeof g);
    assert_int_equal(tsdb_select(db, m, c1, 1, TSDB_SELECT_EXACT, 0, got_cb, &g), 0);
    expect(&g, (tsuid_t[]){A}, 1);

    memset(&g, 0, sizeof g);
    tsdb_tag_match_t c2[2] = {{dc, &x, 1}, {host, &b, 1}};
    assert_int_equal(tsdb_select(db, m, c2, 2, TSDB_SELECT_EXACT, 0, got_cb, &g), 0);
    expect(&g, (tsuid_t[]){C}, 1);

    /* one of several values: a union of postings, each series once */
    memset(&g, 0, sizeof g);
    uint64_t xy[2] = {y, x};
    tsdb_tag_match_t cu[1] = {{dc, xy, 2}};
    assert_int_equal(tsdb_select(db, m, cu, 1, TSDB_SELECT_SUBSET, 0, got_cb, &g), 0);
    tsuid_t all4[4] = {B, C, D, E};
    expect(&g, all4, 4);
    got_t g2 = {0};
    assert_int_equal(tsdb_select(db, m, cu, 1, TSDB_SELECT_SUBSET, 2, got_cb, &g2), 0);
    expect(&g2, all4, 2); /* all4 is sorted now: the first two */

    /* any value of a key; any key with a value */
    memset(&g, 0, sizeof g);
    tsdb_tag_match_t ck[1] = {{host, NULL, 0}};
    assert_int_equal(tsdb_select(db, m, ck, 1, TSDB_SELECT_SUBSET, 3, got_cb, &g), 0);
    tsuid_t abcd[4] = {A, B, C, D};
    qsort(abcd, 4, sizeof *abcd, ts_cmp);
    expect(&g, abcd, 3);
    memset(&g, 0, sizeof g);
    tsdb_tag_match_t cv[1] = {{0, &r1, 1}};
    assert_int_equal(tsdb_select(db, m, cv, 1, TSDB_SELECT_SUBSET, 0, got_cb, &g), 0);
    expect(&g, (tsuid_t[]){E}, 1);

    /* no condition: every series of the metric; exact: none has no tags */
    memset(&g, 0, sizeof g);
    assert_int_equal(tsdb_select(db, m, NULL, 0, TSDB_SELECT_SUBSET, 0, got_cb, &g), 0);
    expect(&g, (tsuid_t[]){A, B, C, D, E}, 5);
    memset(&g, 0, sizeof g);
    assert_int_equal(tsdb_select(db, m, NULL, 0, TSDB_SELECT_EXACT, 0, got_cb, &g), 0);
    assert_int_equal(g.n, 0);

    /* the callback stops it, streaming or from a union */
    memset(&g, 0, sizeof g);
    g.stop_after = 1;
    assert_int_equal(tsdb_select(db, m, NULL, 0, TSDB_SELECT_SUBSET, 0, got_cb, &g), 7);
    assert_int_equal(g.n, 1);
    memset(&g, 0, sizeof g);
    g.stop_after = 2;
    assert_int_equal(tsdb_select(db, m, cu, 1, TSDB_SELECT_SUBSET, 0, got_cb, &g), 7);
    assert_int_equal(g.n, 2);
}

static void test_select_names(void **state)
{
    (void)state;
    tsdb_t *db = g_fx->db;
    oct_errbuf_t eb;
    got_t g = {0};
    const char *k[2] = {"host", "dc"}, *v[2] = {"a", "x"};
    assert_int_equal(tsdb_select_names(db, "sel.m", k, v, 2, TSDB_SELECT_EXACT, got_cb, &g, &eb),
                     0);
    expect(&g, (tsuid_t[]){ts_of("sel.m", "host", "a", "dc", "x")}, 1);
    memset(&g, 0, sizeof g);
    assert_int_equal(tsdb_select_names(db, "sel.m", k, v, 1, TSDB_SELECT_SUBSET, got_cb, &g, &eb),
                     0);
    expect(&g,
           (tsuid_t[]){ts_of("sel.m", "host", "a", NULL, NULL),
                       ts_of("sel.m", "host", "a", "dc", "x")},
           2);

    /* the first unknown name in order metric, k0, v0, k1 ... is the error */
    memset(&g, 0, sizeof g);
    const char *k2[2] = {"host", "nokey"}, *v2[2] = {"novalue", "x"};
    assert_int_equal(tsdb_select_names(db, "sel.m", k2, v2, 2, TSDB_SELECT_SUBSET, got_cb, &g, &eb),
                     OCT_ENOSUCHNAME);
    assert_non_null(strstr(eb.msg, "novalue"));
    assert_int_equal(
        tsdb_select_names(db, "no.metric", k2, v2, 2, TSDB_SELECT_SUBSET, got_cb, &g, &eb),
        OCT_ENOSUCHNAME);
    assert_non_null(strstr(eb.msg, "no.metric"));
    assert_int_equal(g.n, 0);
}

static void expect_last(const tsuid_t *t, int64_t now_ms, int64_t back, int found, int64_t ts_ms,
                        int64_t val)
{
    codec_point_t p;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_last_point(g_fx->db, t->t, t->len, now_ms, back, &p, &eb), found);
    if (!found) return;
    assert_int_equal(p.ts_ms, ts_ms);
    assert_int_equal(p.val.i, val);
}

static void check_last(void)
{
    tsuid_t L = ts_of("last.m", "host", "l", NULL, NULL);
    int64_t h9 = (H0 + 9 * HR + 100) * 1000; /* "now": 100 s into hour 9 */
    int64_t p5 = (H0 + 5 * HR + 20) * 1000;
    expect_last(&L, h9, 0, 1, p5, 2);                 /* no bound: back to hour 5 */
    expect_last(&L, h9, 4, 1, p5, 2);                 /* hours 5..9 */
    expect_last(&L, h9, 3, 0, 0, 0);                  /* hours 6..9: nothing */
    expect_last(&L, h9 + 2 * HR * 1000, 0, 1, p5, 2); /* hour 11: not the hour-12 point */
    /* the whole current hour counts, also after "now" */
    expect_last(&L, (H0 + 5 * HR + 5) * 1000, 1, 1, p5, 2);
    expect_last(&L, (H0 + 4 * HR) * 1000, 0, 1, (H0 + 10) * 1000, 1);
    expect_last(&L, (H0 + 4 * HR) * 1000, 3, 0, 0, 0); /* hours 1..4 */
    expect_last(&L, (H0 + 4 * HR) * 1000, 4, 1, (H0 + 10) * 1000, 1);
    expect_last(&L, (H0 + 12 * HR + 1) * 1000, 1, 1, (H0 + 12 * HR + 30) * 1000, 3);
    tsuid_t none = ts_of("sel.m", "host", "a", NULL, NULL); /* its point is at H0 */
    expect_last(&none, (H0 - HR) * 1000, 0, 0, 0, 0);
}

static void test_last_point(void **state)
{
    (void)state;
    put2("last.m", "host", "l", NULL, NULL, (H0 + 10) * 1000, 1);
    put2("last.m", "host", "l", NULL, NULL, (H0 + 5 * HR + 20) * 1000, 2);
    put2("last.m", "host", "l", NULL, NULL, (H0 + 12 * HR + 30) * 1000, 3);
    check_last(); /* from the head */
    oct_errbuf_t eb;
    if (tsdb_flush(g_fx->db, &eb)) fail_msg("flush: %s", eb.msg);
    check_last(); /* from the store */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
        cmocka_unit_test(test_select_names),
        cmocka_unit_test(test_last_point),
    };
    return cmocka_run_group_tests(tests, setup, tsdb_fx_teardown);
}
