/* test_api_query_basic.c -- /api/query against the real daemon: points put
 * over /api/put, then GET and POST queries (a Grafana-shaped body with
 * msResolution, a downsampler and filters, with and without ?arrays),
 * group-by order, the optional sections, OpenTSDB's error bodies, and
 * delete (refused by default, done with tsd.http.query.allow_delete). The
 * expected bodies are written out by hand from the points put. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"

#define H0 1356998400LL /* 2013-01-01T00:00:00Z */

static const char *const extra[] = {"--auto-metric", NULL};

/* sys.cpu.user host=web01 dc=lga  0:10  60:20  120:30  180:40
 * sys.cpu.user host=web02 dc=lga  0:1   60:2   120:3   180:4
 * sys.cpu.user host=web03 dc=sjc  30:1.5 90:2.5
 * (seconds after H0) */
static const char put_body[] = "["
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998400,\"value\":10,"
                               "\"tags\":{\"host\":\"web01\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998460,\"value\":20,"
                               "\"tags\":{\"host\":\"web01\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998520,\"value\":30,"
                               "\"tags\":{\"host\":\"web01\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998580,\"value\":40,"
                               "\"tags\":{\"host\":\"web01\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998400,\"value\":1,"
                               "\"tags\":{\"host\":\"web02\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998460,\"value\":2,"
                               "\"tags\":{\"host\":\"web02\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998520,\"value\":3,"
                               "\"tags\":{\"host\":\"web02\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998580,\"value\":4,"
                               "\"tags\":{\"host\":\"web02\",\"dc\":\"lga\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998430,\"value\":1."
                               "5,\"tags\":{\"host\":\"web03\",\"dc\":\"sjc\"}},"
                               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998490,\"value\":2."
                               "5,\"tags\":{\"host\":\"web03\",\"dc\":\"sjc\"}}"
                               "]";

static tu_tsd_t g_t;

/* Offset of needle in s, or SIZE_MAX. */
__attribute__((noinline)) static size_t off(const char *s, const char *needle)
{
    const char *p = strstr(s, needle);
    return p ? (size_t)(p - s) : SIZE_MAX;
}

static int setup(void **state)
{
    (void)state;
    return ac_start_put(&g_t, extra, put_body);
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

/* One series over GET: integers stay integers, keys are seconds. */
static void test_get_one_series(void **state)
{
    (void)state;
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web01}", NULL,
              200,
              "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"lga\",\"host\":\"web01\"},"
              "\"aggregateTags\":[],\"dps\":{\"1356998400\":10,\"1356998460\":20,"
              "\"1356998520\":30,\"1356998580\":40}}]");
    /* ms keys and arrays */
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web02}&ms&arrays",
              NULL, 200,
              "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"lga\",\"host\":\"web02\"},"
              "\"aggregateTags\":[],\"dps\":[[1356998400000,1],[1356998460000,2],"
              "[1356998520000,3],[1356998580000,4]]}]");
    /* start is inclusive, end too: only 60 and 120 */
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998460&end=1356998520&m=sum:sys.cpu.user{host=web02}", NULL,
              200,
              "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"lga\",\"host\":\"web02\"},"
              "\"aggregateTags\":[],\"dps\":{\"1356998460\":2,\"1356998520\":3}}]");
}

/* What Grafana's OpenTSDB data source (2.3 setting, filters on) posts.
 * dc=lga: web01 + web02 per 1m bucket: 11, 22, 33, 44 (downsampled: doubles). */
static void test_post_grafana(void **state)
{
    (void)state;
    static const char body[] =
        "{\"start\":1356998400000,\"end\":1356998700000,\"queries\":[{\"aggregator\":\"sum\","
        "\"metric\":\"sys.cpu.user\",\"downsample\":\"1m-avg\",\"filters\":[{\"type\":"
        "\"literal_or\",\"tagk\":\"dc\",\"filter\":\"lga\",\"groupBy\":false}],"
        "\"rateOptions\":{\"counter\":false}}],\"msResolution\":true,\"globalAnnotations\":true}";
    AC_EXPECT(
        &g_t, "POST", "/api/query", body, 200,
        "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"lga\"},\"aggregateTags\":[\"host\"],"
        "\"dps\":{\"1356998400000\":11.0,\"1356998460000\":22.0,\"1356998520000\":33.0,"
        "\"1356998580000\":44.0}}]");
    AC_EXPECT(
        &g_t, "POST", "/api/query?arrays=true", body, 200,
        "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"lga\"},\"aggregateTags\":[\"host\"],"
        "\"dps\":[[1356998400000,11.0],[1356998460000,22.0],[1356998520000,33.0],"
        "[1356998580000,44.0]]}]");
    /* rate over the same: (22-11)/60 per second at 60 s, etc. Seconds keys. */
    static const char rate[] =
        "{\"start\":\"1356998400\",\"end\":\"1356998700\",\"queries\":[{\"aggregator\":\"sum\","
        "\"metric\":\"sys.cpu.user\",\"rate\":true,\"tags\":{\"dc\":\"lga\"}}]}";
    char *r;
    assert_int_equal(ac_req(&g_t, "POST", "/api/query", rate, &r), 200);
    /* 11/60 = 0.18333333333333332 (shortest round-trip text of the double) */
    assert_non_null(strstr(r, "\"1356998460\":0.18333333333333332"));
    assert_null(strstr(r, "\"1356998400\"")); /* the first point has no rate */
    free(r);
}

/* Group by host: three outputs in tag value UID order (created in put order). */
static void test_group_by(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(ac_req(&g_t, "GET",
                            "/api/query?start=1356998400&end=1356998700&m=max:sys.cpu.user{host=*}",
                            NULL, &r),
                     200);
    size_t a = off(r, "\"host\":\"web01\""), b = off(r, "\"host\":\"web02\""),
           c = off(r, "\"host\":\"web03\"");
    int ok = c != SIZE_MAX && a < b && b < c;
    int has = off(r, "\"1356998430\":1.5") != SIZE_MAX;
    if (!ok || !has) fail_msg("group order or values wrong: %s", r);
    free(r);
}

/* showTSUIDs, showQuery, showSummary. */
static void test_sections(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(ac_req(&g_t, "GET",
                            "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user"
                            "{host=web01}&show_tsuids&show_query&show_summary",
                            NULL, &r),
                     200);
    /* 3-byte UIDs: metric 1, two pairs -> 30 hex digits */
    size_t t = off(r, "\"tsuids\":[\"");
    size_t hexlen = t != SIZE_MAX ? strcspn(r + t + 11, "\"") : 0;
    assert_int_equal(hexlen, 30);
    assert_non_null(strstr(r, "\"query\":{\"aggregator\":\"sum\",\"metric\":\"sys.cpu.user\""));
    assert_non_null(strstr(r, "\"index\":0"));
    assert_non_null(strstr(r, "{\"statsSummary\":{"));

    /* annotations of the series (in range only) and global ones on request */
    char body[256], hex[31];
    snprintf(hex, sizeof hex, "%.30s", r + t + 11);
    free(r);
    snprintf(body, sizeof body,
             "{\"tsuid\":\"%s\",\"startTime\":1356998460,\"description\":\"deploy\"}", hex);
    int st = ac_req(&g_t, "POST", "/api/annotation", body, &r);
    free(r);
    assert_int_equal(st, 200);
    snprintf(body, sizeof body,
             "{\"tsuid\":\"%s\",\"startTime\":1356999999,\"description\":\"later\"}", hex);
    st = ac_req(&g_t, "POST", "/api/annotation", body, &r);
    free(r);
    assert_int_equal(st, 200);
    st = ac_req(&g_t, "POST", "/api/annotation",
                "{\"startTime\":1356998470,\"description\":\"global\"}", &r);
    free(r);
    assert_int_equal(st, 200);
    assert_int_equal(ac_req(&g_t, "GET",
                            "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user"
                            "{host=web01}&global_annotations",
                            NULL, &r),
                     200);
    size_t a = off(r, "\"annotations\":[{"), g = off(r, "\"globalAnnotations\":[{"),
           d = off(r, "\"deploy\""), gl = off(r, "\"global\""), la = off(r, "\"later\"");
    int ok = a != SIZE_MAX && g != SIZE_MAX && d != SIZE_MAX && gl != SIZE_MAX && la == SIZE_MAX &&
             a < g && g < off(r, "\"dps\"");
    if (!ok) fail_msg("annotations: %s", r);
    free(r);
    /* no_annotations drops both */
    assert_int_equal(ac_req(&g_t, "GET",
                            "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user"
                            "{host=web01}&global_annotations&no_annotations",
                            NULL, &r),
                     200);
    ok = off(r, "nnotations") == SIZE_MAX;
    if (!ok) fail_msg("no_annotations: %s", r);
    free(r);
}

/* OpenTSDB's error bodies. */
static void test_errors(void **state)
{
    (void)state;
    AC_EXPECT(&g_t, "GET", "/api/query?m=sum:sys.cpu.user", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>start</code>\"}}");
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}");
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&end=1356998700&m=sum:nope", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"No such name for 'metrics': 'nope'\"}}");
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web99}", NULL,
              400, "{\"error\":{\"code\":400,\"message\":\"No such name for 'tagv': 'web99'\"}}");
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&end=1356998400&m=sum:sys.cpu.user", NULL,
              400,
              "{\"error\":{\"code\":400,\"message\":\"End time [1356998400000] must be greater "
              "than the start time [1356998400000]\"}}");
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&m=foo:sys.cpu.user", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"No such aggregation function: foo\"}}");
    AC_EXPECT(&g_t, "POST", "/api/query", "{\"queries\":[]}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing start time\"}}");
    AC_EXPECT(&g_t, "POST", "/api/query", "{\"start\":\"1h-ago\"}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing queries\"}}");
    AC_EXPECT(&g_t, "POST", "/api/query",
              "{\"start\":1356998400,\"queries\":[{\"metric\":\"sys.cpu.user\"}]}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing the aggregation function\"}}");
    /* no data in range: an empty array */
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356912000&end=1356915600&m=sum:sys.cpu.user", NULL,
              200, "[]");
    /* delete is off by default */
    AC_EXPECT(&g_t, "DELETE", "/api/query?start=1356998400&m=sum:sys.cpu.user", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Bad request\",\"details\":\"Deleting data is "
              "not enabled (tsd.http.query.allow_delete=false)\"}}");
    AC_EXPECT(&g_t, "POST", "/api/query",
              "{\"start\":1356998400,\"delete\":true,\"queries\":[{\"aggregator\":\"sum\","
              "\"metric\":\"sys.cpu.user\"}]}",
              400,
              "{\"error\":{\"code\":400,\"message\":\"Bad request\",\"details\":\"Deleting data is "
              "not enabled (tsd.http.query.allow_delete=false)\"}}");
    char *r;
    assert_int_equal(
        ac_req(&g_t, "PUT", "/api/query?start=1356998400&m=sum:sys.cpu.user", NULL, &r), 405);
    free(r);
}

/* With allow_delete, DELETE answers the data, then it is gone. */
static void test_delete(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    static const char *const ex[] = {"--auto-metric", "--set", "tsd.http.query.allow_delete=true",
                                     NULL};
    assert_int_equal(tu_tsd_start(&t, ex), 0);
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/put", put_body, &r), 204);
    free(r);
    AC_EXPECT(&t, "DELETE",
              "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web03}", NULL,
              200,
              "[{\"metric\":\"sys.cpu.user\",\"tags\":{\"dc\":\"sjc\",\"host\":\"web03\"},"
              "\"aggregateTags\":[],\"dps\":{\"1356998430\":1.5,\"1356998490\":2.5}}]");
    AC_EXPECT(&t, "GET",
              "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web03}", NULL,
              200, "[]");
    /* the others stay */
    assert_int_equal(
        ac_req(&t, "GET",
               "/api/query?start=1356998400&end=1356998700&m=sum:sys.cpu.user{host=web01}", NULL,
               &r),
        200);
    assert_non_null(strstr(r, "\"1356998400\":10"));
    free(r);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_one_series), cmocka_unit_test(test_post_grafana),
        cmocka_unit_test(test_group_by),       cmocka_unit_test(test_sections),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_delete),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
