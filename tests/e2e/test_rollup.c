/* test_rollup.c -- 2.4's rollups and pre-aggregates over the real daemon
 * (docs/rollups.md): /api/rollup and telnet `rollup` writes with 2.4's
 * rules and texts, the worked example's bytes in the store, queries from
 * the rollup table (sum, count, min, max, avg as sum(sums)/sum(counts),
 * coarser downsamples), every rollupUsage mode with and without rollup
 * data, pre-aggregates with and without interval, durability across
 * kill -9, and start-up refusals. Expected values come from a model of the
 * values this test wrote (hand arithmetic in loops), never from the code
 * under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "rollup_model.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "store/store.h"
#include "tsdb/tsdb_int.h"

#define T0    1356998400LL /* 2013-01-01 00:00 UTC */
#define HOURS 48
#define CONF                                                                                       \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"tsdb-rollup-1h\",\"preAggregationTable\":\"tsdb-rollup-preagg-1h\","             \
    "\"interval\":\"1h\",\"rowSpan\":\"1d\",\"delaySla\":\"2h\"}]}"

static tu_tsd_t g_t;
static tu_tsd_t *g_q = &g_t; /* the daemon expect_q asks */
static const char *const g_args[] = {"--auto-metric",
                                     "--set",
                                     "tsd.rollups.enable=true",
                                     "--set",
                                     "tsd.http.query.allow_delete=true",
                                     "--set",
                                     "tsd.rollups.config=" CONF,
                                     NULL};

/* ---- the model: what this test writes for metric m.r ------------------------ */

/* host h (0 = a, 1 = b), hour k: 1h sum, count, min, max. Host b has no
 * rollups for hours 30..33; host a's hour 47 has a sum but no count. */
static int has(int h, int k)
{
    return !(h == 1 && k >= 30 && k <= 33);
}
static int has_count(int h, int k)
{
    return has(h, k) && !(h == 0 && k == 47);
}
static double v_sum(int h, int k)
{
    return (double)((k * 13 + h * 29) % 50 - 10) + (k % 3 == 0 ? 0.25 : 0);
}
static long long v_count(int h, int k)
{
    return 1 + (k * 7 + h * 3) % 5;
}
static long long v_min(int h, int k)
{
    return -(k % 4) - h;
}
static long long v_max(int h, int k)
{
    return 100 + k + h;
}

/* ---- helpers ----------------------------------------------------------------- */

typedef struct {
    long long ts[HOURS * 2];
    double v[HOURS * 2];
    int n;
} exp_t;

static void ex_add(exp_t *e, long long ts, double v)
{
    e->ts[e->n] = ts;
    e->v[e->n++] = v;
}

/* The answer of a GET /api/query m=<m> over [start, end] must be exactly one
 * series whose dps equal e (doubles to 1e-12 relative), or none at all when
 * e is NULL. */
static void expect_q(const char *what, const char *m, long long start, long long end,
                     const exp_t *e)
{
    char target[1024];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s", start, end, m);
    rm_expect(g_q, what, target, e ? e->ts : NULL, e ? e->v : NULL, e ? e->n : 0, 1e-12);
}

static void post_rollups(const char *body, const char *want)
{
    char *r = ac_req_ok(&g_t, "POST", "/api/rollup?summary", body, 200);
    assert_string_equal(r, want);
    free(r);
}

/* Writes the model of m.r for hours [k0, k1) over /api/rollup, a day's
 * worth per request. */
static void write_model(int k0, int k1)
{
    static const char *const aggs[] = {"sum", "count", "min", "max"};
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    int n = 0;
    oct_strbuf_puts(&sb, "[");
    for (int h = 0; h < 2; h++)
        for (int k = k0; k < k1; k++)
            for (int a = 0; a < 4; a++) {
                if (!has(h, k) || (a == 1 && !has_count(h, k))) continue;
                /* any second inside the hour lands on its start */
                long long ts = T0 + 3600LL * k + (k * 61) % 3600;
                char val[64];
                if (a == 0)
                    snprintf(val, sizeof val, "%.17g", v_sum(h, k));
                else
                    snprintf(val, sizeof val, "%lld",
                             a == 1   ? v_count(h, k)
                             : a == 2 ? v_min(h, k)
                                      : v_max(h, k));
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"m.r\",\"timestamp\":%lld,\"value\":%s,"
                                  "\"tags\":{\"host\":\"%c\"},\"interval\":\"1h\","
                                  "\"aggregator\":\"%s\"}",
                                  n++ ? "," : "", ts, val, 'a' + h, aggs[a]);
            }
    oct_strbuf_puts(&sb, "]");
    char want[64];
    snprintf(want, sizeof want, "{\"success\":%d,\"failed\":0}", n);
    post_rollups(sb.ptr, want);
    oct_strbuf_free(&sb);
}

static int setup(void **state)
{
    (void)state;
    memset(&g_t, 0, sizeof g_t);
    if (tu_tsd_start(&g_t, g_args)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

/* ---- tests ------------------------------------------------------------------- */

/* 2.4's worked example (docs/format/rollup.md): the first names written, so
 * every UID is 000001; the cell is read back from the store after a
 * kill -9 (the write returned: it must have survived). */
static void worked_example_bytes(void **state)
{
    (void)state;
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    const char *got = tu_telnet_tx(fd, NULL,
                                   "rollup 1h-sum sys.cpu 1357016400 42 host=web01\n"
                                   "rollup 1h-count sys.cpu 1357016400 42 host=web01\n");
    assert_string_equal(got, "");
    close(fd);
    tu_tsd_kill(&g_t);
    tsdb_t *db = ac_open_dir(g_t.dir);
    static const uint8_t part[] = {14,  't', 's', 'd', 'b', '-', 'r', 'o',  'l',  'l',  'u',
                                   'p', '-', '1', 'h', 0,   0,   1,   0x50, 0xE2, 0x27, 0};
    static const uint8_t row[] = {0, 0, 1, 0x50, 0xE2, 0x27, 0, 0, 0, 1, 0, 0, 1};
    static const uint8_t q_sum[] = {0, 0, 0x50}, q_cnt[] = {1, 0, 0x50};
    store_result_t res = STORE_RESULT_INIT;
    oct_errbuf_t eb;
    int rc = store_get(tsdb_store(db), STORE_TABLE_ROLLUP, oct_slice(part, sizeof part),
                       oct_slice(row, sizeof row), oct_slice_str("t"), &res, &eb);
    assert_int_equal(rc, 2);
    assert_int_equal(res.cells[0].qualifier.len, 3);
    assert_memory_equal(res.cells[0].qualifier.ptr, q_sum, 3);
    assert_int_equal(res.cells[0].value.len, 1);
    assert_int_equal(res.cells[0].value.ptr[0], 0x2A);
    assert_memory_equal(res.cells[1].qualifier.ptr, q_cnt, 3);
    store_result_free(&res);
    tsdb_close(db);
    assert_int_equal(tu_tsd_start(&g_t, g_args), 0);
    exp_t e = {.n = 0};
    ex_add(&e, 1357016400, 42);
    expect_q("worked example after restart", "sum:1h-sum:sys.cpu", T0, T0 + 86399, &e);
}

/* Reads from the 1h table: every downsampler the table answers, against the
 * model. */
static void query_from_rollups(void **state)
{
    (void)state;
    write_model(0, 24);
    write_model(24, HOURS);
    long long end = T0 + 3600LL * HOURS - 1;
    for (int h = 0; h < 2; h++) {
        char m[128];
        exp_t e = {.n = 0};
        /* 1h-sum: the stored sums */
        for (int k = 0; k < HOURS; k++)
            if (has(h, k)) ex_add(&e, T0 + 3600LL * k, v_sum(h, k));
        snprintf(m, sizeof m, "sum:1h-sum:m.r%%7Bhost=%c%%7D", 'a' + h);
        expect_q("1h-sum", m, T0, end, &e);
        /* 1h-avg: sum/count per hour; a sum without its count is left out */
        e.n = 0;
        for (int k = 0; k < HOURS; k++)
            if (has_count(h, k)) ex_add(&e, T0 + 3600LL * k, v_sum(h, k) / (double)v_count(h, k));
        snprintf(m, sizeof m, "sum:1h-avg:m.r%%7Bhost=%c%%7D", 'a' + h);
        expect_q("1h-avg", m, T0, end, &e);
        /* per day: sum, avg = sum(sums)/sum(counts), count, min, max */
        exp_t es = {.n = 0}, ea = {.n = 0}, ec = {.n = 0}, emin = {.n = 0}, emax = {.n = 0},
              e6 = {.n = 0};
        for (int d = 0; d < 2; d++) {
            double s = 0, sa = 0, c = 0, mn = INFINITY, mx = -INFINITY;
            for (int k = 24 * d; k < 24 * d + 24; k++) {
                if (!has(h, k)) continue;
                s += v_sum(h, k);
                if (has_count(h, k)) {
                    sa += v_sum(h, k);
                    c += (double)v_count(h, k);
                }
                mn = fmin(mn, (double)v_min(h, k));
                mx = fmax(mx, (double)v_max(h, k));
            }
            long long ts = T0 + 86400LL * d;
            ex_add(&es, ts, s);
            ex_add(&ea, ts, sa / c);
            ex_add(&ec, ts, c);
            ex_add(&emin, ts, mn);
            ex_add(&emax, ts, mx);
        }
        /* 6h-sum: 6 stored values per bucket (7200.. divides by 3600) */
        for (int b = 0; b < HOURS / 6; b++) {
            double s = 0;
            int any = 0;
            for (int k = 6 * b; k < 6 * b + 6; k++)
                if (has(h, k)) s += v_sum(h, k), any = 1;
            if (any) ex_add(&e6, T0 + 6 * 3600LL * b, s);
        }
        static const char *const names[] = {"1d-sum", "1d-avg", "1d-count",
                                            "1d-min", "1d-max", "6h-sum"};
        const exp_t *want[] = {&es, &ea, &ec, &emin, &emax, &e6};
        for (int i = 0; i < 6; i++) {
            snprintf(m, sizeof m, "sum:%s:m.r%%7Bhost=%c%%7D", names[i], 'a' + h);
            expect_q(names[i], m, T0, end, want[i]);
        }
    }
    /* across both hosts on day 0 (both complete there): the sums add up */
    exp_t e = {.n = 0};
    for (int k = 0; k < 24; k++)
        ex_add(&e, T0 + 3600LL * k, v_sum(0, k) + v_sum(1, k));
    expect_q("group sum", "sum:1h-sum:m.r", T0, T0 + 86399, &e);
    /* 30m is not a multiple of 1h: the raw table, which holds nothing */
    expect_q("30m-sum reads raw", "sum:30m-sum:m.r", T0, end, NULL);
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&m=sum:1h-dev:m.r", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Standard deviation over rolled up data "
              "is not supported at this time\"}}");
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&m=sum:1h-first:m.r", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"No ID found mapping to aggregator: "
              "first\"}}");
}

/* Every rollupUsage, where the 1h table has data (day 0) and where only raw
 * data exists (day 2). */
static void usage_modes(void **state)
{
    (void)state;
    /* rollups for day 0: 10 + k per hour; raw points for days 0 and 2: two
     * per hour, k and 2k + 1 */
    oct_strbuf_t sb = OCT_STRBUF_INIT, rb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    oct_strbuf_puts(&rb, "[");
    for (int k = 0; k < 24; k++) {
        oct_strbuf_printf(&sb,
                          "%s{\"metric\":\"u.r\",\"timestamp\":%lld,\"value\":%d,\"tags\":"
                          "{\"host\":\"a\"},\"interval\":\"1h\",\"aggregator\":\"SUM\"}",
                          k ? "," : "", T0 + 3600LL * k, 10 + k);
        oct_strbuf_printf(&sb,
                          ",{\"metric\":\"u.r\",\"timestamp\":%lld,\"value\":2,\"tags\":"
                          "{\"host\":\"a\"},\"interval\":\"1h\",\"aggregator\":\"count\"}",
                          T0 + 3600LL * k);
        for (int d = 0; d < 3; d += 2)
            oct_strbuf_printf(&rb,
                              "%s{\"metric\":\"u.r\",\"timestamp\":%lld,\"value\":%d,\"tags\":"
                              "{\"host\":\"a\"}},{\"metric\":\"u.r\",\"timestamp\":%lld,"
                              "\"value\":%d,\"tags\":{\"host\":\"a\"}}",
                              k || d ? "," : "", T0 + 86400LL * d + 3600LL * k, k,
                              T0 + 86400LL * d + 3600LL * k + 60, 2 * k + 1);
    }
    oct_strbuf_puts(&sb, "]");
    oct_strbuf_puts(&rb, "]");
    post_rollups(sb.ptr, "{\"success\":48,\"failed\":0}");
    char *r = ac_req_ok(&g_t, "POST", "/api/put?sync=true", rb.ptr, 204);
    free(r);
    oct_strbuf_free(&sb);
    oct_strbuf_free(&rb);
    exp_t roll = {.n = 0}, raw0 = {.n = 0}, raw2 = {.n = 0};
    for (int k = 0; k < 24; k++) {
        ex_add(&roll, T0 + 3600LL * k, 10 + k);
        ex_add(&raw0, T0 + 3600LL * k, 3 * k + 1);
        ex_add(&raw2, T0 + 2 * 86400LL + 3600LL * k, 3 * k + 1);
    }
    long long d0 = T0, d0e = T0 + 86399, d2 = T0 + 2 * 86400, d2e = d2 + 86399;
    /* day 0: the rollup table answers, but ROLLUP_RAW */
    expect_q("default", "sum:1h-sum:u.r", d0, d0e, &roll);
    expect_q("nofallback", "sum:1h-sum:rollup_nofallback:u.r", d0, d0e, &roll);
    expect_q("fallback", "sum:1h-sum:rollup_fallback:u.r", d0, d0e, &roll);
    expect_q("fallback_raw", "sum:1h-sum:rollup_fallback_raw:u.r", d0, d0e, &roll);
    expect_q("raw", "sum:1h-sum:ROLLUP_RAW:u.r", d0, d0e, &raw0);
    /* day 2: no rollups there */
    expect_q("default, empty table", "sum:1h-sum:u.r", d2, d2e, NULL);
    expect_q("nofallback, empty table", "sum:1h-sum:rollup_nofallback:u.r", d2, d2e, NULL);
    expect_q("fallback, empty table", "sum:1h-sum:rollup_fallback:u.r", d2, d2e, &raw2);
    expect_q("fallback_raw, empty table", "sum:1h-sum:rollup_fallback_raw:u.r", d2, d2e, &raw2);
    expect_q("raw, empty table", "sum:1h-sum:rollup_raw:u.r", d2, d2e, &raw2);
    /* dev: client rollups have no sum of squares (docs/rollups.md), so
     * 2.4's 400 without a fallback, the raw points (k and 2k + 1 per hour:
     * deviation (k + 1) / 2) with one */
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&end=1357084799&m=sum:1h-dev:u.r", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Standard deviation over rolled up data "
              "is not supported at this time\"}}");
    exp_t dev0 = {.n = 0};
    for (int k = 0; k < 24; k++)
        ex_add(&dev0, T0 + 3600LL * k, (k + 1) / 2.0);
    expect_q("dev, fallback", "sum:1h-dev:rollup_fallback:u.r", d0, d0e, &dev0);
    expect_q("dev, fallback_raw", "sum:1h-dev:rollup_fallback_raw:u.r", d0, d0e, &dev0);
    expect_q("dev, raw", "sum:1h-dev:rollup_raw:u.r", d0, d0e, &dev0);
    /* the POST form */
    char body[512];
    static const char *const modes[] = {"ROLLUP_NOFALLBACK", "ROLLUP_FALLBACK",
                                        "ROLLUP_FALLBACK_RAW", "ROLLUP_RAW"};
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof body,
                 "{\"start\":%lld,\"end\":%lld,\"queries\":[{\"aggregator\":\"sum\",\"metric\":"
                 "\"u.r\",\"downsample\":\"1d-sum\",\"rollupUsage\":\"%s\"}]}",
                 d2, d2e, modes[i]);
        char want[256];
        if (i == 0)
            snprintf(want, sizeof want, "[]");
        else
            snprintf(want, sizeof want,
                     "[{\"metric\":\"u.r\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],"
                     "\"dps\":{\"%lld\":%d.0}}]",
                     d2, 24 * 23 * 3 / 2 + 24); /* sum over k of 3k + 1 */
        AC_EXPECT(&g_t, "POST", "/api/query", body, 200, want);
    }
    /* a delete that would read a rollup table is refused: it deletes raw rows */
    AC_EXPECT(&g_t, "DELETE", "/api/query?start=1357171200&end=1357257599&m=sum:1h-sum:u.r", NULL,
              400,
              "{\"error\":{\"code\":400,\"message\":\"A delete reads raw data only: add "
              "rollupUsage ROLLUP_RAW to delete\"}}");
    expect_q("after the refused delete", "sum:1h-sum:rollup_raw:u.r", d2, d2e, &raw2);
}

/* Pre-aggregates: without interval (the default pre-agg table, raw cells)
 * and rolled up (1h-sum:sum), chosen by the _aggregate filter or pre-agg. */
static void pre_aggregates(void **state)
{
    (void)state;
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    /* dc=lga: 42 at T0+25, 8 at T0+70 (SUM: no interval); rolled up hourly */
    const char *got = tu_telnet_tx(fd, NULL,
                                   "rollup SUM p.r 1356998425 42 dc=lga\n"
                                   "rollup sum p.r 1356998470 8 dc=lga _aggregate=sum\n"
                                   "rollup 1h-sum:sum p.r 1356998400 50 dc=lga\n"
                                   "rollup 1h-sum:sum p.r 1357002000 7 dc=lga\n"
                                   "rollup 1h-count:SUM p.r 1357002000 2 dc=lga\n");
    assert_string_equal(got, "");
    close(fd);
    exp_t raw = {.n = 0}, m1 = {.n = 0}, h1 = {.n = 0};
    ex_add(&raw, 1356998425, 42);
    ex_add(&raw, 1356998470, 8);
    ex_add(&m1, 1356998400, 42);
    ex_add(&m1, 1356998460, 8);
    ex_add(&h1, T0, 50);
    ex_add(&h1, T0 + 3600, 7);
    long long e = T0 + 7199;
    expect_q("pre-agg raw", "sum:p.r%7B_aggregate=SUM%7D", T0, e, &raw);
    expect_q("pre-agg 1m", "sum:1m-sum:p.r%7B_aggregate=SUM%7D", T0, e, &m1);
    expect_q("pre-agg 1h", "sum:1h-sum:p.r%7B_aggregate=SUM%7D", T0, e, &h1);
    expect_q("pre-agg flag", "sum:1h-sum:pre-agg:p.r", T0, e, &h1);
    /* not a pre-aggregate query: the plain tables hold nothing for p.r */
    expect_q("plain", "sum:1h-sum:p.r", T0, e, NULL);
    expect_q("plain raw", "sum:p.r", T0, e, NULL);
}

/* 2.4's write rules and texts, over HTTP (?details) and telnet. */
static void write_errors(void **state)
{
    (void)state;
#define PT(extra)                                                                                  \
    "{\"metric\":\"e.r\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}" extra "}"
    static const struct {
        const char *body, *err;
    } cases[] = {
        {PT(""), "Missing interval"},
        {PT(",\"interval\":\"1h\""), "Missing aggregator"},
        {PT(",\"interval\":\"60m\",\"aggregator\":\"sum\""), "Unexpected exception"},
        {PT(",\"interval\":\"1h\",\"aggregator\":\"p99\""),
         "No ID found mapping to aggregator: p99"},
        {PT(",\"groupByAggregator\":\"\""),
         "Cannot write a group by data point without specifying the aggregation function. "
         "Metric=e.r tags={host=a}"},
        {PT(",\"groupByAggregator\":\"avg\""),
         "Derived group by aggregations are not allowed AVG with metric e.r {host=a}"},
        {PT(",\"groupByAggregator\":\"nope\""),
         "Invalid group by aggregator nope with metric e.r {host=a}"},
        {"{\"metric\":\"e.r\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\","
         "\"_aggregate\":\"MAX\"},\"groupByAggregator\":\"sum\"}",
         "Given tag value for _aggregate of MAX did not match the group by aggregator of SUM for "
         "e.r {host=a, _aggregate=MAX}"},
        {"{\"metric\":\"e.r\",\"timestamp\":1356998400000,\"value\":42,\"tags\":{\"host\":\"a\"},"
         "\"interval\":\"1h\",\"aggregator\":\"sum\"}",
         "bad timestamp=1356998400000 when trying to add value=[42]/0 to metric=e.r, "
         "tags={host=a}"},
        {PT(",\"interval\":\"1h\",\"aggregator\":\"sum\",\"value\":\"x\""),
         "Unable to parse value to a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = ac_req_ok(&g_t, "POST", "/api/rollup?details", cases[i].body, 400);
        char want[1024];
        snprintf(want, sizeof want, "\"error\":\"%s\"}]}", cases[i].err);
        if (!strstr(r, want)) fail_msg("case %zu: %s lacks %s", i, r, want);
        if (!strstr(r, "\"success\":0,\"failed\":1")) fail_msg("case %zu: %s", i, r);
        free(r);
    }
    AC_EXPECT(&g_t, "POST", "/api/rollup", PT(""), 400,
              "{\"error\":{\"code\":400,\"message\":\"One or more data points had errors\","
              "\"details\":\"Please see the TSD logs or append \\\"details\\\" to the put "
              "request\"}}");
    AC_EXPECT(&g_t, "POST", "/api/rollup?sync=true",
              PT(",\"interval\":\"1h\",\"aggregator\":\"max\""), 204, "");
    AC_EXPECT(&g_t, "POST", "/api/rollup", "[]", 400,
              "{\"error\":{\"code\":400,\"message\":\"No datapoints found in content\"}}");
    char *r;
    assert_int_equal(ac_req(&g_t, "GET", "/api/rollup", NULL, &r), 405);
    free(r);
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    const char *got = tu_telnet_tx(fd, NULL,
                                   "rollup 1h-sum e.r 1356998400\n"
                                   "rollup 3h-sum e.r 1356998400 1 host=a\n"
                                   "rollup 1h-avg e.r 1356998400 1 host=a\n"
                                   "rollup 1h-sum e.r 1356998400 x host=a\n"
                                   "rollup 1h-sum e.r -5 1 host=a\n"
                                   "rollup 1h-sum e.r 1356998400 1 host\n");
    assert_string_equal(got,
                        "rollup: illegal argument: not enough arguments (need least 7, got 3)\n"
                        "rollup: No such rollup: No rollups configured for the interval: 3h\n"
                        "rollup: illegal argument: No ID found mapping to aggregator: avg\n"
                        "rollup: invalid value: Invalid character 'x' in x\n"
                        "rollup: illegal argument: invalid timestamp: -5\n"
                        "rollup: illegal argument: invalid tag: host\n");
    close(fd);
}

/* Runs `octsdb tsd` with a rollup config file that must stop start-up;
 * returns its stderr (static). */
static char *run_bad(const char *conf, int *status)
{
    char *dir = tu_tempdir();
    char path[4200], datadir[4200], set[4300];
    snprintf(path, sizeof path, "%s/rollup.json", dir);
    snprintf(datadir, sizeof datadir, "--datadir=%s/d", dir);
    snprintf(set, sizeof set, "tsd.rollups.config=%s", path);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(conf, f);
    fclose(f);
    const char *argv[] = {"tsd",   "--bind=127.0.0.1",        "--port=1", datadir,
                          "--set", "tsd.rollups.enable=true", "--set",    set,
                          NULL};
    static char out[4096];
    char *err = NULL;
    *status = tu_run_octsdb_stderr(&err, argv, 20);
    snprintf(out, sizeof out, "%s", err ? err : "");
    free(err);
    tu_rmrf(dir);
    free(dir);
    return out;
}

static void startup_refused(void **state)
{
    (void)state;
    int st;
    char *out = run_bad("{\"aggregationIds\":{\"sum\":0},\"intervals\":[{\"table\":\"t\","
                        "\"preAggregationTable\":\"p\",\"interval\":\"1m\",\"rowSpan\":\"3h\","
                        "\"defaultInterval\":true}]}",
                        &st);
    if (!strstr(out, "The multiplier must be 1 or an even value")) fail_msg("output: %s", out);
    assert_int_not_equal(st, 0);
    out = run_bad("{\"aggregationIds\":{},\"intervals\":[]}", &st);
    if (!strstr(out, "Rollup config given but no aggegation ID mappings found."))
        fail_msg("output: %s", out);
    assert_int_not_equal(st, 0);
}

/* ---- rollups made by the TSD (tsd.rollups.auto) ------------------------------ */

#define AUTO_CONF                                                                                  \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"r10m\",\"preAggregationTable\":\"p10m\",\"interval\":\"10m\","                   \
    "\"rowSpan\":\"1d\"},"                                                                         \
    "{\"table\":\"r1h\",\"preAggregationTable\":\"p1h\",\"interval\":\"1h\",\"rowSpan\":\"1d\"},"  \
    "{\"table\":\"r1d\",\"preAggregationTable\":\"p1d\",\"interval\":\"1d\",\"rowSpan\":\"1y\"}]}"

#define AUTO_SERIES 3
#define AUTO_HOURS  4
#define AUTO_MAX    400

typedef rm_pt_t apt_t;

static apt_t g_pts[AUTO_SERIES][AUTO_MAX];
static int g_np[AUTO_SERIES];

/* Random points (fixed seed) for series s in hours [h0, h1): seconds the
 * series holds no point at yet (a second write there would be a duplicate,
 * which the TSD drops), ints and doubles mixed. Returns the /api/put body. */
static char *auto_points(unsigned *seed, int s, int h0, int h1, int per_hour)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    int first = 1;
    for (int h = h0; h < h1; h++) {
        int used[3600] = {0};
        for (int i = 0; i < g_np[s]; i++)
            if (g_pts[s][i].ts >= T0 + 3600LL * h && g_pts[s][i].ts < T0 + 3600LL * (h + 1))
                used[g_pts[s][i].ts - T0 - 3600LL * h] = 1;
        for (int k = 0; k < per_hour && g_np[s] < AUTO_MAX; k++) {
            int sec = (int)(rand_r(seed) % 3600);
            if (used[sec]) continue;
            used[sec] = 1;
            apt_t *p = &g_pts[s][g_np[s]++];
            p->ts = T0 + 3600LL * h + sec;
            p->is_int = rand_r(seed) % 2;
            if (p->is_int)
                p->i = (long long)(rand_r(seed) % 2001) - 1000;
            else
                p->f = ((double)(rand_r(seed) % 2000001) - 1000000.0) / 1024.0; /* exact */
            if (p->is_int)
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"a.r\",\"timestamp\":%lld,\"value\":%lld,"
                                  "\"tags\":{\"s\":\"%d\"}}",
                                  first ? "" : ",", p->ts, p->i, s);
            else
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"a.r\",\"timestamp\":%lld,\"value\":%.17g,"
                                  "\"tags\":{\"s\":\"%d\"}}",
                                  first ? "" : ",", p->ts, p->f, s);
            first = 0;
        }
    }
    oct_strbuf_puts(&sb, "]");
    return sb.ptr;
}

/* The model's answer of <agg> per bucket of iv_s seconds for series s. */
static void auto_expect(int s, const char *agg, long long iv_s, exp_t *e)
{
    e->n = 0;
    for (long long b = T0; b < T0 + 3600LL * AUTO_HOURS; b += iv_s) {
        double v;
        if (rm_bucket(g_pts[s], g_np[s], b, iv_s, agg, &v)) ex_add(e, b, v);
    }
}

/* The rollup tables (rollup_nofallback reads nothing else) must equal the
 * model, for each interval the TSD computes (10m, 1h, and 1d from the 1h
 * cells: the day holds the hours closed so far) and for a coarser
 * downsample over them (2h over 1h). */
static void auto_check(const char *what)
{
    static const char *const aggs[] = {"sum", "count", "min", "max", "avg"};
    static const struct {
        const char *ds;
        long long s;
        const char *usage;
    } ivs[] = {{"10m", 600, "nofallback"},
               {"1h", 3600, "nofallback"},
               {"2h", 7200, "nofallback"},
               {"1d", 86400, "nofallback"}};
    for (int s = 0; s < AUTO_SERIES; s++)
        for (size_t i = 0; i < sizeof ivs / sizeof ivs[0]; i++)
            for (int a = 0; a < 5; a++) {
                char m[160], w[200];
                exp_t e;
                auto_expect(s, aggs[a], ivs[i].s, &e);
                snprintf(m, sizeof m, "sum:%s-%s:rollup_%s:a.r%%7Bs=%d%%7D", ivs[i].ds, aggs[a],
                         ivs[i].usage, s);
                snprintf(w, sizeof w, "%s: %s", what, m);
                expect_q(w, m, T0, T0 + 3600LL * AUTO_HOURS - 1, &e);
            }
}

static void auto_rollups(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    static const char *const args[] = {
        "--auto-metric",         "--set", "tsd.rollups.enable=true",       "--set",
        "tsd.rollups.auto=true", "--set", "tsd.rollups.config=" AUTO_CONF, NULL};
    assert_int_equal(tu_tsd_start(&t, args), 0);
    g_q = &t;
    unsigned seed = 12345;
    memset(g_np, 0, sizeof g_np);
    /* hours 0..2, then kill -9: the log holds them; the restart replays
     * them, the clean stop flushes (and rolls up) every hour */
    for (int s = 0; s < AUTO_SERIES; s++) {
        char *body = auto_points(&seed, s, 0, AUTO_HOURS - 1, 60);
        char *r = ac_req_ok(&t, "POST", "/api/put", body, 204);
        free(r);
        free(body);
    }
    tu_tsd_kill(&t);
    assert_int_equal(tu_tsd_start(&t, args), 0);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, args), 0);
    auto_check("after replay");
    /* late points into flushed hours and a new hour: recomputed, not added */
    for (int s = 0; s < AUTO_SERIES; s++) {
        char *body = auto_points(&seed, s, 1, AUTO_HOURS, 25);
        char *r = ac_req_ok(&t, "POST", "/api/put", body, 204);
        free(r);
        free(body);
    }
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, args), 0);
    auto_check("after late points");
    /* and the raw answer agrees with the model too (ROLLUP_RAW) */
    exp_t e;
    auto_expect(0, "sum", 3600, &e);
    expect_q("raw", "sum:1h-sum:rollup_raw:a.r%7Bs=0%7D", T0, T0 + 3600LL * AUTO_HOURS - 1, &e);
    g_q = &g_t;
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worked_example_bytes), cmocka_unit_test(query_from_rollups),
        cmocka_unit_test(usage_modes),          cmocka_unit_test(pre_aggregates),
        cmocka_unit_test(write_errors),         cmocka_unit_test(startup_refused),
        cmocka_unit_test(auto_rollups),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
