/* test_query_body.c -- query/query_body: the /api/query POST body bound as
 * OpenTSDB's Jackson binding of TSQuery does. Expected values come from
 * OpenTSDB's behaviour (docs/api-query-json.md: texts, TSSubQuery defaults
 * counterMax Long.MAX_VALUE and resetValue 0) and hand arithmetic on the
 * fixed clock below; the e2e tests (test_query_errors and friends) check the
 * same texts through the daemon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "query/query_body.h"

#define NOW INT64_C(1700000000000) /* 2023-11-14T22:13:20Z */

static int parse(const char *body, query_t *q, query_body_err_t *e)
{
    memset(q, 0, sizeof *q);
    return query_body_parse(body, strlen(body), NOW, q, e);
}

static void expect_error(const char *body, const char *message, const char *details)
{
    query_t q;
    query_body_err_t e;
    assert_int_equal(parse(body, &q, &e), -1);
    assert_int_equal(e.status, 400);
    assert_string_equal(e.message, message);
    assert_string_equal(e.details, details);
    query_free(&q);
}

static void grafana_body(void **state)
{
    (void)state;
    query_t q;
    query_body_err_t e;
    assert_int_equal(parse("{\"start\":1699996400000,\"queries\":[{\"aggregator\":\"sum\","
                           "\"metric\":\"sys.cpu\",\"downsample\":\"1m-avg\","
                           "\"tags\":{\"host\":\"*\"}}],\"showQuery\":true}",
                           &q, &e),
                     0);
    /* a 13-character number is ms; no end: the clock */
    assert_true(q.start_ms == INT64_C(1699996400000));
    assert_true(q.end_ms == NOW);
    assert_int_equal(q.show_query, 1);
    assert_int_equal(q.n_subs, 1);
    assert_string_equal(q.subs[0].metric, "sys.cpu");
    assert_int_equal(q.subs[0].has_downsample, 1);
    assert_true(q.subs[0].ds.interval_ms == 60000);
    assert_int_equal(q.subs[0].n_filters, 1);
    /* rateOptions absent: TSSubQuery's defaults */
    assert_true(q.subs[0].rate_opts.counter_max == INT64_MAX);
    assert_true(q.subs[0].rate_opts.reset_value == 0);
    query_free(&q);
}

static void strings_coerced(void **state)
{
    (void)state;
    query_t q;
    query_body_err_t e;
    /* a 10-character start is seconds; "1h-ago" is NOW - 3,600,000 */
    assert_int_equal(parse("{\"start\":\"1699990000\",\"end\":\"1h-ago\",\"queries\":[{"
                           "\"aggregator\":\"sum\",\"metric\":\"m\",\"rate\":\"true\","
                           "\"rateOptions\":{\"counter\":\"TRUE\",\"counterMax\":\"65535\","
                           "\"resetValue\":\"7\",\"dropResets\":1}}]}",
                           &q, &e),
                     0);
    assert_true(q.start_ms == INT64_C(1699990000000));
    assert_true(q.end_ms == NOW - 3600000);
    assert_int_equal(q.subs[0].rate, 1);
    assert_int_equal(q.subs[0].rate_opts.counter, 1);
    assert_int_equal(q.subs[0].rate_opts.drop_resets, 1);
    assert_true(q.subs[0].rate_opts.counter_max == 65535);
    assert_true(q.subs[0].rate_opts.reset_value == 7);
    query_free(&q);
}

static void last_of_tags_and_filters_wins(void **state)
{
    (void)state;
    query_t q;
    query_body_err_t e;
    /* filters (2) then tags (1 key): the tag map replaces them */
    assert_int_equal(parse("{\"start\":1699990000,\"queries\":[{\"aggregator\":\"sum\","
                           "\"metric\":\"m\",\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"a\","
                           "\"filter\":\"x*\"},{\"type\":\"literal_or\",\"tagk\":\"b\","
                           "\"filter\":\"y\"}],\"tags\":{\"c\":\"z\"}}]}",
                           &q, &e),
                     0);
    assert_int_equal(q.subs[0].n_filters, 1);
    query_free(&q);
}

static void duplicates_dropped(void **state)
{
    (void)state;
    query_t q;
    query_body_err_t e;
    assert_int_equal(parse("{\"start\":1699990000,\"queries\":["
                           "{\"aggregator\":\"sum\",\"metric\":\"a\"},"
                           "{\"aggregator\":\"sum\",\"metric\":\"b\"},"
                           "{\"aggregator\":\"sum\",\"metric\":\"a\"}]}",
                           &q, &e),
                     0);
    assert_int_equal(q.n_subs, 2);
    assert_string_equal(q.subs[1].metric, "b");
    assert_int_equal(q.subs[1].index, 1);
    query_free(&q);
}

static void errors(void **state)
{
    (void)state;
    expect_error(" \r\n\t", "Missing message content",
                 "Supply valid JSON formatted data in the body of your request");
    expect_error("[1]", "Unable to parse the given JSON", "the body is not an object");
    expect_error("{\"start\":1699990000,\"queries\":{}}", "Unable to parse the given JSON",
                 "a field has the wrong type");
    expect_error("{\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"a\"}]}", "Missing start time",
                 "");
    expect_error("{\"start\":1700000000,\"end\":1699990000,\"queries\":[{\"aggregator\":\"sum\","
                 "\"metric\":\"a\"}]}",
                 "End time [1699990000000] must be greater than the start time [1700000000000]",
                 "");
    expect_error("{\"start\":1699990000,\"queries\":[]}", "Missing queries", "");
    expect_error("{\"start\":1699990000,\"queries\":[{\"metric\":\"a\"}]}",
                 "Missing the aggregation function", "");
    expect_error(
        "{\"start\":1699990000,\"queries\":[{\"aggregator\":\"nosuch\",\"metric\":\"a\"}]}",
        "No such aggregation function: nosuch", "");
    expect_error("{\"start\":1699990000,\"queries\":[{\"aggregator\":\"sum\"}]}",
                 "Missing the metric or tsuids, provide at least one", "");
    expect_error("{\"start\":1699990000,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"a\","
                 "\"filters\":[{\"type\":\"wildcard\",\"filter\":\"x*\"}]}]}",
                 "Tagk cannot be null or empty", "");
    expect_error("{\"start\":1699990000,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"a\","
                 "\"rateOptions\":{\"counterMax\":\"12x\"}}]}",
                 "Unable to parse the given JSON", "a field has the wrong type");
    expect_error("{\"start\":1699990000,\"timezone\":\"Nowhere/Atlantis\",\"queries\":[{"
                 "\"aggregator\":\"sum\",\"metric\":\"a\",\"downsample\":\"1h-avg\"}]}",
                 "The timezone specification could not be found", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grafana_body),
        cmocka_unit_test(strings_coerced),
        cmocka_unit_test(last_of_tags_and_filters_wins),
        cmocka_unit_test(duplicates_dropped),
        cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
