/* test_api_put.c -- /api/put against the real daemon: OpenTSDB's error
 * texts and statuses, summary/details over mixed good and bad points (the
 * good ones stored, checked by reading the data dir back after a clean
 * stop), unknown metrics with and without auto-create, timestamp and value
 * forms, a batch larger than one internal chunk, sync, and an acknowledged
 * put surviving kill -9. Expected bodies are written out by hand from the
 * page docs/http-api.md (/api/put). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"

static const char *const auto_metric[] = {"--auto-metric", NULL};
static const char *const host_a[] = {"host=a"};

#define E400_SOME                                                                                  \
    "{\"error\":{\"code\":400,\"message\":\"One or more data points had errors\",\"details\":"     \
    "\"Please see the TSD logs or append \\\"details\\\" to the put request\"}}"

static void put_request_errors(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    AC_EXPECT(&t, "POST", "/api/put", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing request content\"}}");
    AC_EXPECT(&t, "POST", "/api/put", "  \r\n", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing request content\"}}");
    AC_EXPECT(&t, "POST", "/api/put", "hello", 400,
              "{\"error\":{\"code\":400,\"message\":\"The JSON must start as an object or an "
              "array\"}}");
    AC_EXPECT(&t, "POST", "/api/put", "[]", 400,
              "{\"error\":{\"code\":400,\"message\":\"No datapoints found in content\"}}");
    AC_EXPECT(&t, "POST", "/api/put", " [ ] ", 400,
              "{\"error\":{\"code\":400,\"message\":\"No datapoints found in content\"}}");
    AC_EXPECT(&t, "GET", "/api/put", NULL, 405,
              "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP "
              "method [GET] is not permitted for this endpoint\"}}");
    /* unparsable: message fixed, details carry the parser's reason */
    const char *bad[] = {"[{\"metric\":", "{\"a\":1,}", "[1 2]", "{\"metric\":\"m\"} x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *r;
        assert_int_equal(ac_req(&t, "POST", "/api/put", bad[i], &r), 400);
        const char *want = "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given "
                           "JSON\",\"details\":\"";
        if (strncmp(r, want, strlen(want))) fail_msg("<%s>: %s", bad[i], r);
        free(r);
    }
    /* an unparsable batch stores nothing, even its valid first point */
    AC_EXPECT(&t, "POST", "/api/put",
              "[{\"metric\":\"put.none\",\"timestamp\":1356998400,\"value\":1,"
              "\"tags\":{\"host\":\"a\"}},{]",
              400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\","
              "\"details\":\"expected a string key at offset 77\"}}");
    AC_EXPECT(&t, "GET", "/api/suggest?type=metrics&q=put.none", NULL, 200, "[]");
    tu_tsd_destroy(&t);
}

/* Eight bad points of every kind between three good ones. */
static char *mixed_batch(const char *metric)
{
    char *b = malloc(4096);
    snprintf(
        b, 4096,
        "[{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":0,\"value\":1,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":\"\",\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":1},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":\"abc\",\"tags\":{\"host\":\"a\"}}"
        ","
        "{\"metric\":\"%1$s\",\"timestamp\":1356998460,\"value\":2.5,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":1,\"tags\":{}},"
        "{\"metric\":\"%1$s\",\"timestamp\":-5,\"value\":1,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998520,\"value\":\"7\",\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"%1$s\",\"timestamp\":1356998400,\"value\":NaN,\"tags\":{\"host\":\"a\"}}]",
        metric);
    return b;
}

static void check_mixed_stored(tsdb_t *db, const char *metric)
{
    codec_point_t *p;
    long n;
    ac_read(db, metric, host_a, 1, &p, &n);
    assert_int_equal(n, 3);
    assert_true(p[0].ts_ms == 1356998400000LL);
    assert_int_equal(p[0].is_float, 0);
    assert_int_equal(p[0].val.i, 1);
    assert_true(p[1].ts_ms == 1356998460000LL);
    assert_int_equal(p[1].is_float, 1);
    assert_true(p[1].val.f == 2.5);
    assert_true(p[2].ts_ms == 1356998520000LL);
    assert_int_equal(p[2].is_float, 0);
    assert_int_equal(p[2].val.i, 7);
    free(p);
}

static void put_mixed_summary_details(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    char *b = mixed_batch("put.summary");
    AC_EXPECT(&t, "POST", "/api/put?summary", b, 400, "{\"success\":3,\"failed\":8}");
    free(b);
    b = mixed_batch("put.plain");
    AC_EXPECT(&t, "POST", "/api/put", b, 400, E400_SOME);
    free(b);
    b = mixed_batch("put.mixed");
#define DP(m, ts, v, tags)                                                                         \
    "{\"datapoint\":{\"metric\":\"" m "\",\"timestamp\":" #ts ",\"value\":\"" v                    \
    "\",\"tags\":" tags "},"
    AC_EXPECT(
        &t, "POST", "/api/put?details", b, 400,
        "{\"success\":3,\"failed\":8,\"errors\":[" DP(
            "", 1356998400, "1",
            "{\"host\":\"a\"}") "\"error\":\"Metric name was empty\"}," DP("put.mixed",
                                                                           0, "1", "{\"host\":\"a\"}") "\"error\":\"Invalid timestamp\"}," DP("put.mixed",
                                                                                                                                              1356998400, "", "{\"host\":\"a\"}") "\"error\":\"Empty value\"}," DP("put.mixed",
                                                                                                                                                                                                                   1356998400, "1", "null") "\"error\":\"Missing tags\"}," DP("put.mixed", 1356998400, "abc", "{\"host\":\"a\"}") "\"error\":\"Unable to parse value to a number\"}," DP("put.mixed", 1356998400, "1", "{}") "\"error\":\"Missing tags\"}," DP("put.mixed", -5, "1", "{\"host\":\"a\"}") "\"error\":\"Invalid timestamp\"}," DP("put.mixed",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                1356998400,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                "NaN",
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                "{\"host\":\"a\"}") "\"error\":\"Unable to parse value to a number\"}]}");
#undef DP
    free(b);
    /* all good: summary is 200, details has an empty error list */
    AC_EXPECT(&t, "POST", "/api/put?summary",
              "{\"metric\":\"put.ok\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"h\":\"x\"}}",
              200, "{\"success\":1,\"failed\":0}");
    AC_EXPECT(
        &t, "POST", "/api/put?details",
        "[{\"metric\":\"put.ok\",\"timestamp\":1356998401,\"value\":1,\"tags\":{\"h\":\"x\"}}]",
        200, "{\"success\":1,\"failed\":0,\"errors\":[]}");
    /* the good points are visible at once through the series index */
    char *r;
    assert_int_equal(ac_req(&t, "GET", "/api/search/lookup?m=put.mixed", NULL, &r), 200);
    assert_non_null(strstr(r, "\"totalResults\":1,"));
    assert_non_null(strstr(r, "\"metric\":\"put.mixed\",\"tags\":{\"host\":\"a\"}"));
    free(r);
    assert_int_equal(tu_tsd_stop(&t), 0);

    tsdb_t *db = ac_open_dir(t.dir);
    check_mixed_stored(db, "put.summary");
    check_mixed_stored(db, "put.plain");
    check_mixed_stored(db, "put.mixed");
    tsdb_close(db);
    tu_tsd_destroy(&t);
}

static void put_unknown_metric_then_auto(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    const char *pt = "{\"metric\":\"new.metric\",\"timestamp\":1356998400,\"value\":1,\"tags\":{"
                     "\"host\":\"a\"}}";
    AC_EXPECT(&t, "POST", "/api/put", pt, 400, E400_SOME);
    AC_EXPECT(&t, "POST", "/api/put?details", pt, 400,
              "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"new.metric\","
              "\"timestamp\":1356998400,\"value\":\"1\",\"tags\":{\"host\":\"a\"}},"
              "\"error\":\"Unknown metric\"}]}");
    AC_EXPECT(&t, "GET", "/api/suggest?type=metrics", NULL, 200, "[]");
    /* assigning the metric makes the same put succeed */
    AC_EXPECT(&t, "GET", "/api/uid/assign?metric=new.metric", NULL, 200,
              "{\"metric\":{\"new.metric\":\"000001\"}}");
    AC_EXPECT(&t, "POST", "/api/put", pt, 204, "");
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);

    /* with --auto-metric the first put creates it */
    tu_tsd_t t2 = {0};
    assert_int_equal(tu_tsd_start(&t2, auto_metric), 0);
    AC_EXPECT(&t2, "POST", "/api/put", pt, 204, "");
    AC_EXPECT(&t2, "GET", "/api/suggest?type=metrics&q=new", NULL, 200, "[\"new.metric\"]");
    AC_EXPECT(&t2, "GET", "/api/suggest?type=tagk", NULL, 200, "[\"host\"]");
    AC_EXPECT(&t2, "GET", "/api/suggest?type=tagv", NULL, 200, "[\"a\"]");
    assert_int_equal(tu_tsd_stop(&t2), 0);
    tsdb_t *db = ac_open_dir(t2.dir);
    codec_point_t *p;
    long n;
    ac_read(db, "new.metric", host_a, 1, &p, &n);
    assert_int_equal(n, 1);
    assert_true(p[0].ts_ms == 1356998400000LL);
    assert_int_equal(p[0].val.i, 1);
    free(p);
    tsdb_close(db);
    tu_tsd_destroy(&t2);
}

static void put_timestamp_and_value_forms(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    AC_EXPECT(
        &t, "POST", "/api/put",
        "[{\"metric\":\"put.ts\",\"timestamp\":1356998400500,\"value\":1,\"tags\":{\"host\":\"a\"}}"
        ","
        "{\"metric\":\"put.ts\",\"timestamp\":1356998401.25,\"value\":2,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"put.ts\",\"timestamp\":\"1356998402\",\"value\":3,\"tags\":{\"host\":\"a\"}}"
        ","
        "{\"metric\":\"put.ts\",\"timestamp\":1.356998403e9,\"value\":4,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"put.val\",\"timestamp\":1356998400,\"value\":42.5,\"tags\":{\"host\":\"a\"}}"
        ","
        "{\"metric\":\"put.val\",\"timestamp\":1356998401,\"value\":\"1e3\",\"tags\":{\"host\":"
        "\"a\"}},"
        "{\"metric\":\"put.val\",\"timestamp\":1356998402,\"value\":-5,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"put.val\",\"timestamp\":1356998403,\"value\":\"0.1\",\"tags\":{"
        "\"ho\\u0073t\":\"a\"}}]",
        204, "");
    assert_int_equal(tu_tsd_stop(&t), 0);
    tsdb_t *db = ac_open_dir(t.dir);
    codec_point_t *p;
    long n;
    ac_read(db, "put.ts", host_a, 1, &p, &n);
    assert_int_equal(n, 4);
    const int64_t want_ts[] = {1356998400500LL, 1356998401250LL, 1356998402000LL, 1356998403000LL};
    for (int i = 0; i < 4; i++) {
        assert_true(p[i].ts_ms == want_ts[i]);
        assert_int_equal(p[i].is_float, 0);
        assert_int_equal(p[i].val.i, i + 1);
    }
    free(p);
    ac_read(db, "put.val", host_a, 1, &p, &n);
    assert_int_equal(n, 4);
    assert_int_equal(p[0].is_float, 1);
    assert_true(p[0].val.f == 42.5);
    assert_int_equal(p[1].is_float, 1);
    assert_true(p[1].val.f == 1000.0);
    assert_int_equal(p[2].is_float, 0);
    assert_int_equal(p[2].val.i, -5);
    assert_int_equal(p[3].is_float, 1);
    assert_true(p[3].val.f == 0.1);
    free(p);
    tsdb_close(db);
    tu_tsd_destroy(&t);
}

static void put_large_batch_and_sync(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    /* 10,000 points: more than two internal chunks */
    size_t cap = 10000 * 100 + 16, len = 0;
    char *b = malloc(cap);
    b[len++] = '[';
    for (int i = 0; i < 10000; i++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"metric\":\"put.big\",\"timestamp\":%d,\"value\":%d,"
                                "\"tags\":{\"host\":\"a\"}}",
                                i ? "," : "", 1356998400 + i, i * 3);
    b[len++] = ']';
    b[len] = '\0';
    AC_EXPECT(&t, "POST", "/api/put?summary", b, 200, "{\"success\":10000,\"failed\":0}");
    free(b);
    const char *pt = "{\"metric\":\"put.sync\",\"timestamp\":1356998400,\"value\":1,"
                     "\"tags\":{\"host\":\"a\"}}";
    AC_EXPECT(&t, "POST", "/api/put?sync", pt, 204, "");
    AC_EXPECT(&t, "POST", "/api/put?sync&summary", pt, 200, "{\"success\":1,\"failed\":0}");
    AC_EXPECT(&t, "POST", "/api/put?sync&sync_timeout=10000&summary", pt, 200,
              "{\"success\":1,\"failed\":0,\"timeouts\":0}");
    assert_int_equal(tu_tsd_stop(&t), 0);
    tsdb_t *db = ac_open_dir(t.dir);
    codec_point_t *p;
    long n;
    ac_read(db, "put.big", host_a, 1, &p, &n);
    assert_int_equal(n, 10000);
    for (int i = 0; i < 10000; i++) {
        assert_true(p[i].ts_ms == (1356998400LL + i) * 1000);
        assert_int_equal(p[i].val.i, i * 3);
    }
    free(p);
    tsdb_close(db);
    tu_tsd_destroy(&t);
}

static void put_acknowledged_survives_kill9(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    char b[512];
    for (int i = 0; i < 50; i++) {
        snprintf(
            b, sizeof b,
            "{\"metric\":\"put.kill\",\"timestamp\":%d,\"value\":%d,\"tags\":{\"host\":\"a\"}}",
            1356998400 + i, i);
        AC_EXPECT(&t, "POST", (i & 1) ? "/api/put?sync" : "/api/put", b, 204, "");
    }
    tu_tsd_kill(&t);
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0); /* replays the log */
    assert_int_equal(tu_tsd_stop(&t), 0);
    tsdb_t *db = ac_open_dir(t.dir);
    codec_point_t *p;
    long n;
    ac_read(db, "put.kill", host_a, 1, &p, &n);
    assert_int_equal(n, 50);
    for (int i = 0; i < 50; i++) {
        assert_true(p[i].ts_ms == (1356998400LL + i) * 1000);
        assert_int_equal(p[i].val.i, i);
    }
    free(p);
    tsdb_close(db);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_request_errors),
        cmocka_unit_test(put_mixed_summary_details),
        cmocka_unit_test(put_unknown_metric_then_auto),
        cmocka_unit_test(put_timestamp_and_value_forms),
        cmocka_unit_test(put_large_batch_and_sync),
        cmocka_unit_test(put_acknowledged_survives_kill9),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
