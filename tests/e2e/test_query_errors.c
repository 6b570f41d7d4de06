/* test_query_errors.c -- /api/query's error answers against the real daemon,
 * GET and POST, with OpenTSDB 2.4.1's status codes and texts in the v1 error
 * shape {"error":{"code":..,"message":..}} (docs/http-api.md, Errors and /api/query; texts from
 * QueryRpc, TSQuery/TSSubQuery.validateAndSetQuery, NoSuchUniqueName,
 * DownsamplingSpecification, FillPolicy, parseRateOptions): unknown metric,
 * tag key and tag value, unknown aggregator and downsampler, `none` as a
 * downsampler, unknown fill policy, bad rate options, m= with too few or too
 * many parts, end <= start, missing start, missing sub-queries, bad times,
 * an unknown time zone, bodies that are not JSON; and the non-errors: no data
 * in range and a wildcard matching nothing answer [] with 200. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "query_ref.h"

#define T0 1356998400LL

static const char *const daemon_args[] = {"--auto-metric", NULL};
static tu_tsd_t tsd;
static qr_db_t db;

static int setup(void **state)
{
    (void)state;
    if (tu_tsd_start(&tsd, daemon_args)) return -1;
    qr_series_t *s = qr_series(&db, "e.m", "host=web01");
    qr_i(s, T0, 1);
    qr_i(s, T0 + 60, 2);
    qr_put_db(&tsd, &db);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&tsd);
    qr_db_free(&db);
    return 0;
}

#define Q "/api/query?start=1356998400&end=1356999000"

static const char *post(const char *sub)
{
    return qr_body(T0, T0 + 600, sub, "");
}

static void unknown_names(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_expect_error(&tsd, "GET", Q "&m=sum:nope", NULL, 400, "No such name for 'metrics': 'nope'");
    qr_expect_error(&tsd, "POST", "/api/query", post("\"aggregator\":\"sum\",\"metric\":\"nope\""),
                    400, "No such name for 'metrics': 'nope'");
    qr_expect_error(&tsd, "GET", Q "&m=sum:e.m%7Bnokey=*%7D", NULL, 400,
                    "No such name for 'tagk': 'nokey'");
    qr_expect_error(&tsd, "POST", "/api/query",
                    post("\"aggregator\":\"sum\",\"metric\":\"e.m\",\"filters\":[{\"type\":"
                         "\"wildcard\",\"tagk\":\"nokey\",\"filter\":\"*\",\"groupBy\":true}]"),
                    400, "No such name for 'tagk': 'nokey'");
    /* a literal tag value must exist (literal_or is resolved to UIDs) */
    qr_expect_error(&tsd, "GET", Q "&m=sum:e.m%7Bhost=nohost%7D", NULL, 400,
                    "No such name for 'tagv': 'nohost'");
    qr_expect_error(&tsd, "POST", "/api/query",
                    post("\"aggregator\":\"sum\",\"metric\":\"e.m\",\"tags\":{\"host\":"
                         "\"web01|WEB01\"}"),
                    400, "No such name for 'tagv': 'WEB01'");
    assert_int_equal(qr_failures, 0);
}

static void bad_aggregators_and_specs(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_expect_error(&tsd, "GET", Q "&m=foo:e.m", NULL, 400, "No such aggregation function: foo");
    qr_expect_error(&tsd, "POST", "/api/query", post("\"aggregator\":\"foo\",\"metric\":\"e.m\""),
                    400, "No such aggregation function: foo");
    qr_expect_error(&tsd, "POST", "/api/query", post("\"metric\":\"e.m\""), 400,
                    "Missing the aggregation function");
    qr_expect_error(&tsd, "GET", Q "&m=sum:1m-foo:e.m", NULL, 400,
                    "No such downsampling function: foo");
    qr_expect_error(&tsd, "GET", Q "&m=sum:1m-none:e.m", NULL, 400,
                    "cannot use the NONE aggregator for downsampling");
    qr_expect_error(&tsd, "POST", "/api/query",
                    post("\"aggregator\":\"sum\",\"metric\":\"e.m\",\"downsample\":\"1m-sum-foo\""),
                    400, "Unrecognized fill policy: foo");
    qr_expect_error(&tsd, "GET", Q "&m=sum:1m:e.m", NULL, 400,
                    "Invalid downsampling specifier '1m': must provide at least interval and "
                    "function");
    qr_expect_error(&tsd, "GET", Q "&m=sum:1m-sum-nan-x:e.m", NULL, 400,
                    "Invalid downsampling specifier '1m-sum-nan-x': must consist of interval, "
                    "function, and optional fill policy");
    qr_expect_error(&tsd, "GET", Q "&m=sum:rate%7Bcounter,abc%7D:e.m", NULL, 400,
                    "Max value of counter was not a number, received 'abc'");
    qr_expect_error(&tsd, "GET", Q "&m=sum:rate%7Bcounter,5,x%7D:e.m", NULL, 400,
                    "Reset value of counter was not a number, received 'x'");
    assert_int_equal(qr_failures, 0);
}

static void bad_m_syntax(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_expect_error(&tsd, "GET", Q "&m=sum", NULL, 400,
                    "Invalid parameter m=sum (not enough :-separated parts)");
    qr_expect_error(&tsd, "GET", Q "&m=sum:1m-avg:rate:a:b:e.m", NULL, 400,
                    "Invalid parameter m=sum:1m-avg:rate:a:b:e.m (too many :-separated parts)");
    qr_expect_error(&tsd, "GET", Q, NULL, 400, "Missing sub queries");
    qr_expect_error(&tsd, "POST", "/api/query", "{\"start\":1356998400,\"queries\":[]}", 400,
                    "Missing queries");
    qr_expect_error(&tsd, "POST", "/api/query", "{\"start\":1356998400}", 400, "Missing queries");
    assert_int_equal(qr_failures, 0);
}

static void bad_times(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_expect_error(&tsd, "GET", "/api/query?start=1356998400&end=1356998400&m=sum:e.m", NULL, 400,
                    "End time [1356998400000] must be greater than the start time "
                    "[1356998400000]");
    qr_expect_error(&tsd, "GET", "/api/query?start=1356998400&end=1356990000&m=sum:e.m", NULL, 400,
                    "End time [1356990000000] must be greater than the start time "
                    "[1356998400000]");
    qr_expect_error(&tsd, "POST", "/api/query",
                    "{\"start\":1356998400000,\"end\":1356998399999,\"queries\":[{\"aggregator\":"
                    "\"sum\",\"metric\":\"e.m\"}]}",
                    400,
                    "End time [1356998399999] must be greater than the start time "
                    "[1356998400000]");
    qr_expect_error(&tsd, "GET", "/api/query?m=sum:e.m", NULL, 400,
                    "Missing parameter <code>start</code>");
    qr_expect_error(&tsd, "GET", "/api/query?start=&m=sum:e.m", NULL, 400,
                    "Missing parameter <code>start</code>");
    qr_expect_error(&tsd, "POST", "/api/query",
                    "{\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"e.m\"}]}", 400,
                    "Missing start time");
    qr_expect_error(&tsd, "GET", "/api/query?start=2013/aa/bb&m=sum:e.m", NULL, 400,
                    "Invalid date: 2013/aa/bb. Unparseable date: \"2013/aa/bb\"");
    qr_expect_error(&tsd, "GET", "/api/query?start=2013/1/1&m=sum:e.m", NULL, 400,
                    "Invalid absolute date: 2013/1/1");
    /* a 10-digit number with 4 decimals (OpenTSDB: <seconds>.<ms>, 3 digits) */
    qr_expect_error(&tsd, "GET", "/api/query?start=1356998400.1234&m=sum:e.m", NULL, 400,
                    "Invalid time: 1356998400.1234. Millisecond timestamps must be in the format "
                    "<seconds>.<ms> where the milliseconds are limited to 3 digits");
    qr_expect_error(&tsd, "POST", "/api/query",
                    "{\"start\":1356998400,\"end\":1356999000,\"timezone\":\"Mars/Olympus\","
                    "\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"e.m\",\"downsample\":"
                    "\"1dc-sum\"}]}",
                    400, "The timezone specification could not be found");
    assert_int_equal(qr_failures, 0);
}

static void bad_bodies(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_expect_error(&tsd, "POST", "/api/query", "{\"start\":", 400,
                    "Unable to parse the given JSON");
    qr_expect_error(&tsd, "POST", "/api/query", "[1,2]", 400, "Unable to parse the given JSON");
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query", NULL, &r);
    const json_value_t *e = r.v ? json_obj_get(r.v, "error") : NULL;
    if (r.status != 400 || !e ||
        !json_str_eq(json_obj_get(e, "message"), "Missing message content"))
        qr_fail("empty POST: %d %s", r.status, r.body);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* Not errors: a query that matches nothing in range answers [] with 200. */
static void no_data_is_empty_array(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *gets[] = {
        "/api/query?start=1000000000&end=1000003600&m=sum:e.m",
        "/api/query?start=1356998400&end=1356999000&m=sum:e.m%7Bhost=zzz*%7D",
        "/api/query?start=1356998400&end=1356999000&m=sum:e.m%7Bhost=wildcard(zz*)%7D",
        "/api/query?start=1356998400&end=1356999000&m=sum:e.m%7Bhost=regexp(%5Ezz)%7D",
        "/api/query?start=1356998400&end=1356999000&m=sum:1m-avg-zero:e.m%7Bhost=zzz*%7D",
    };
    for (size_t i = 0; i < sizeof gets / sizeof *gets; i++) {
        qr_resp_t r;
        qr_req(&tsd, "GET", gets[i], NULL, &r);
        if (r.status != 200 || strcmp(r.body, "[]"))
            qr_fail("%s: %d %s", gets[i], r.status, r.body);
        qr_resp_free(&r);
    }
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query",
           "{\"start\":1000000000,\"end\":1000003600,\"queries\":[{\"aggregator\":\"sum\","
           "\"metric\":\"e.m\"}]}",
           &r);
    if (r.status != 200 || strcmp(r.body, "[]")) qr_fail("POST no data: %d %s", r.status, r.body);
    qr_resp_free(&r);
    /* and the data is there where it is */
    qr_q_t q = qr_q("e.m", "sum", T0, T0 + 600);
    qr_expect_get(&tsd, &db, &q, Q "&m=sum:e.m", 0, 0);
    assert_int_equal(qr_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_names), cmocka_unit_test(bad_aggregators_and_specs),
        cmocka_unit_test(bad_m_syntax),  cmocka_unit_test(bad_times),
        cmocka_unit_test(bad_bodies),    cmocka_unit_test(no_data_is_empty_array),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
