/* test_api_misc.c -- routing and the small endpoints against the real
 * daemon: API versions, 404/405/501 texts, tsd.mode restrictions, legacy
 * routes, /api/version, /api/config (sorted, PASS keys masked),
 * /api/config/filters, /api/aggregators (OpenTSDB 2.4's full list),
 * /api/serializers, /api/stats (+query, threads), /api/dropcaches. */
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
#include "common/json.h"

#define E404 "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}"

static void routing_versions_and_errors(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    char *r1, *r2, *r3, *r4;
    assert_int_equal(ac_req(&t, "GET", "/api/version", NULL, &r1), 200);
    assert_int_equal(ac_req(&t, "GET", "/api/v1/version", NULL, &r2), 200);
    assert_int_equal(ac_req(&t, "GET", "/API/Version/", NULL, &r3), 200);
    /* legacy /version is text in 2.4; /version.json is the API's object */
    assert_int_equal(ac_req(&t, "GET", "/version.json", NULL, &r4), 200);
    assert_string_equal(r1, r2);
    assert_string_equal(r1, r3);
    assert_string_equal(r1, r4);
    free(r1);
    free(r2);
    free(r3);
    free(r4);
    AC_EXPECT(&t, "GET", "/api/v2/version", NULL, 501,
              "{\"error\":{\"code\":501,\"message\":\"Requested API version is greater than the "
              "max implemented\"}}");
    AC_EXPECT(&t, "GET", "/api/v1x/version", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Invalid API version format supplied\","
              "\"details\":\"v1x\"}}");
    AC_EXPECT(&t, "GET", "/api/nope", NULL, 404, E404);
    AC_EXPECT(&t, "GET", "/api", NULL, 404, E404);
    AC_EXPECT(&t, "GET", "/nope", NULL, 404, E404);
    AC_EXPECT(&t, "PUT", "/api/version", NULL, 405,
              "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP "
              "method [PUT] is not permitted for this endpoint\"}}");
    AC_EXPECT(&t, "POST", "/api/dropcaches", NULL, 405,
              "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":\"The HTTP "
              "method [POST] is not permitted for this endpoint\"}}");
    AC_EXPECT(&t, "GET", "/api/uid/other", NULL, 501,
              "{\"error\":{\"code\":501,\"message\":\"Other UID endpoints have not been "
              "implemented yet\"}}");
    /* answered without a plugin (test_api_search_annotation.c): nothing noted here */
    {
        char *ar = ac_req_ok(&t, "GET", "/api/search/annotation?query=x", NULL, 200);
        if (strncmp(ar,
                    "{\"type\":\"ANNOTATION\",\"query\":\"x\",\"limit\":25,\"startIndex\":0,"
                    "\"results\":[],\"totalResults\":0,\"time\":",
                    strlen("{\"type\":\"ANNOTATION\",\"query\":\"x\",\"limit\":25,"
                           "\"startIndex\":0,\"results\":[],\"totalResults\":0,\"time\":")))
            fail_msg("search/annotation: <%s>", ar);
        free(ar);
    }
    AC_EXPECT(&t, "GET", "/api/dropcaches", NULL, 200,
              "{\"status\":\"200\",\"message\":\"Caches dropped\"}");
    AC_EXPECT(&t, "DELETE", "/api/dropcaches", NULL, 200,
              "{\"status\":\"200\",\"message\":\"Caches dropped\"}");
    tu_tsd_destroy(&t);
}

static void modes_restrict_endpoints(void **state)
{
    (void)state;
    const char *pt =
        "{\"metric\":\"m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"h\":\"a\"}}";
    const char *const ro[] = {"--read-only", "--auto-metric", NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, ro), 0);
    AC_EXPECT(&t, "POST", "/api/put", pt, 404, E404);
    AC_EXPECT(&t, "GET", "/api/uid/assign?metric=x", NULL, 404, E404);
    AC_EXPECT(&t, "GET", "/api/suggest?type=metrics", NULL, 200, "[]");
    tu_tsd_destroy(&t);

    const char *const wo[] = {"--set", "tsd.mode=wo", "--auto-metric", NULL};
    tu_tsd_t w = {0};
    assert_int_equal(tu_tsd_start(&w, wo), 0);
    AC_EXPECT(&w, "POST", "/api/put", pt, 204, "");
    AC_EXPECT(&w, "GET", "/api/suggest?type=metrics", NULL, 404, E404);
    AC_EXPECT(&w, "GET", "/api/search/lookup?m=m", NULL, 404, E404);
    char *r;
    assert_int_equal(ac_req(&w, "GET", "/api/version", NULL, &r), 200); /* all modes */
    free(r);
    tu_tsd_destroy(&w);
}

static void version_config_filters_aggregators(void **state)
{
    (void)state;
    const char *const extra[] = {"--set", "my.db.password=hunter2", "--set",
                                 "tsd.custom.PassPhrase=x", NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;

    json_value_t *v = ac_get_json(&t, "/api/version", &a, &keep);
    /* 2.4's nine, then octsdb's own two (test_legacy_routes checks values) */
    const char *fields[] = {"version",     "short_revision", "full_revision",  "timestamp",
                            "repo_status", "user",           "host",           "repo",
                            "branch",      "octsdb_version", "octsdb_revision"};
    assert_int_equal(v->type, JSON_OBJECT);
    assert_int_equal(v->n, 11);
    for (size_t i = 0; i < 11; i++) {
        json_value_t *f = json_obj_get(v, fields[i]);
        if (!f || f->type != JSON_STRING) fail_msg("version.%s missing or not a string", fields[i]);
    }
    assert_true(json_str_eq(json_obj_get(v, "version"), "2.4.1"));
    free(keep);

    v = ac_get_json(&t, "/api/config", &a, &keep);
    assert_int_equal(v->type, JSON_OBJECT);
    char port[16];
    snprintf(port, sizeof port, "%d", t.port);
    assert_true(json_str_eq(json_obj_get(v, "tsd.network.port"), port));
    assert_true(json_str_eq(json_obj_get(v, "my.db.password"), "********"));
    assert_true(json_str_eq(json_obj_get(v, "tsd.custom.PassPhrase"), "********"));
    assert_true(json_str_eq(json_obj_get(v, "tsd.mode"), "rw"));
    for (json_value_t *c = v->child; c && c->next; c = c->next) { /* sorted keys */
        size_t n = c->key_len < c->next->key_len ? c->key_len : c->next->key_len;
        int cmp = memcmp(c->key, c->next->key, n);
        assert_true(cmp < 0 || (cmp == 0 && c->key_len < c->next->key_len));
        assert_int_equal(c->type, JSON_STRING);
    }
    free(keep);

    v = ac_get_json(&t, "/api/config/filters", &a, &keep);
    const char *filters[] = {"iliteral_or",    "iwildcard", "literal_or", "not_iliteral_or",
                             "not_literal_or", "regexp",    "wildcard"};
    assert_int_equal(v->n, 7);
    for (size_t i = 0; i < 7; i++) {
        json_value_t *f = json_obj_get(v, filters[i]);
        assert_non_null(f);
        assert_int_equal(json_obj_get(f, "description")->type, JSON_STRING);
        assert_int_equal(json_obj_get(f, "examples")->type, JSON_STRING);
    }
    free(keep);

    /* docs/query.md section 6: 23 plain names + 12 estimated percentiles */
    const char *aggs[] = {"sum",       "min",    "max",    "avg",    "median",  "dev",
                          "diff",      "mult",   "zimsum", "mimmin", "mimmax",  "pfsum",
                          "squareSum", "count",  "first",  "last",   "none",    "p50",
                          "p75",       "p90",    "p95",    "p99",    "p999",    "ep50r3",
                          "ep75r3",    "ep90r3", "ep95r3", "ep99r3", "ep999r3", "ep50r7",
                          "ep75r7",    "ep90r7", "ep95r7", "ep99r7", "ep999r7"};
    size_t na = sizeof aggs / sizeof *aggs;
    v = ac_get_json(&t, "/api/aggregators", &a, &keep);
    assert_int_equal(v->type, JSON_ARRAY);
    assert_int_equal(v->n, na);
    for (size_t i = 0; i < na; i++) {
        int found = 0;
        for (json_value_t *c = v->child; c; c = c->next)
            found += json_str_eq(c, aggs[i]);
        if (found != 1) fail_msg("aggregator %s found %d times", aggs[i], found);
    }
    free(keep);
    char *r1, *r2;
    assert_int_equal(ac_req(&t, "GET", "/api/aggregators", NULL, &r1), 200);
    assert_int_equal(ac_req(&t, "POST", "/aggregators", NULL, &r2), 200);
    assert_string_equal(r1, r2);
    free(r1);
    free(r2);

    v = ac_get_json(&t, "/api/serializers", &a, &keep);
    assert_int_equal(v->type, JSON_ARRAY);
    assert_int_equal(v->n, 1);
    assert_true(json_str_eq(json_obj_get(v->child, "serializer"), "json"));
    assert_int_equal(json_obj_get(v->child, "formatters")->type, JSON_ARRAY);
    assert_int_equal(json_obj_get(v->child, "parsers")->type, JSON_ARRAY);
    free(keep);
    json_arena_free(&a);
    tu_tsd_destroy(&t);
}

static void stats_endpoints(void **state)
{
    (void)state;
    const char *const extra[] = {"--auto-metric", NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    AC_EXPECT(
        &t, "POST", "/api/put",
        "[{\"metric\":\"s.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"h\":\"a\"}},"
        "{\"metric\":\"s.m\",\"timestamp\":1356998401,\"value\":1,\"tags\":{\"h\":\"a\"}},"
        "{\"metric\":\"s.m\",\"timestamp\":1356998402,\"value\":\"x\",\"tags\":{\"h\":\"a\"}}]",
        400,
        "{\"error\":{\"code\":400,\"message\":\"One or more data points had errors\","
        "\"details\":\"Please see the TSD logs or append \\\"details\\\" to the put "
        "request\"}}");
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(&t, "/api/stats", &a, &keep);
    assert_int_equal(v->type, JSON_ARRAY);
    assert_true(v->n > 10);
    int seen_put = 0, seen_invalid = 0, seen_ids = 0;
    for (json_value_t *e = v->child; e; e = e->next) {
        json_value_t *m = json_obj_get(e, "metric"), *val = json_obj_get(e, "value"),
                     *tags = json_obj_get(e, "tags"), *ts = json_obj_get(e, "timestamp");
        assert_int_equal(m->type, JSON_STRING);
        assert_memory_equal(m->str, "tsd.", 4);
        assert_int_equal(val->type, JSON_STRING);
        assert_int_equal(ts->type, JSON_NUMBER);
        assert_non_null(json_obj_get(tags, "host"));
        json_value_t *type = json_obj_get(tags, "type"), *kind = json_obj_get(tags, "kind");
        if (json_str_eq(m, "tsd.rpc.received") && json_str_eq(type, "put")) {
            seen_put = 1;
            assert_int_equal(val->len, 1);
            assert_memory_equal(val->str, "3", 1);
        }
        if (json_str_eq(m, "tsd.rpc.errors") && json_str_eq(type, "invalid_values")) {
            seen_invalid = 1;
            assert_memory_equal(val->str, "1", 1);
        }
        if (json_str_eq(m, "tsd.uid.ids-used") && json_str_eq(kind, "metrics")) {
            seen_ids = 1;
            assert_memory_equal(val->str, "1", 1);
        }
    }
    assert_true(seen_put && seen_invalid && seen_ids);
    free(keep);
    /* the points /api/query gave out: the two stored ones, once each */
    v = ac_get_json(&t, "/api/query?start=1356998400&end=1356998410&m=sum:s.m", &a, &keep);
    assert_int_equal(v->type, JSON_ARRAY);
    free(keep);
    v = ac_get_json(&t, "/api/stats", &a, &keep);
    int seen_emitted = 0, seen_storage = 0;
    for (json_value_t *e = v->child; e; e = e->next) {
        json_value_t *m = json_obj_get(e, "metric"), *val = json_obj_get(e, "value"),
                     *type = json_obj_get(json_obj_get(e, "tags"), "type");
        if (json_str_eq(m, "tsd.query.datapoints") && json_str_eq(type, "emitted")) {
            seen_emitted = 1;
            assert_true(json_str_eq(val, "2"));
        }
        if (json_str_eq(m, "tsd.storage.bytes")) seen_storage = 1;
    }
    assert_true(seen_emitted && seen_storage);
    free(keep);
    /* the query above is listed (its figures: test_api_stats.c) */
    v = ac_get_json(&t, "/api/stats/query", &a, &keep);
    assert_int_equal(json_obj_get(v, "running")->n, 0);
    assert_int_equal(json_obj_get(v, "completed")->n, 1);
    free(keep);
    v = ac_get_json(&t, "/api/stats/threads", &a, &keep);
    assert_int_equal(v->type, JSON_ARRAY);
    assert_true(v->n >= 2); /* at least the main thread and a worker */
    assert_int_equal(json_obj_get(v->child, "name")->type, JSON_STRING);
    free(keep);
    json_arena_free(&a);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(routing_versions_and_errors),
        cmocka_unit_test(modes_restrict_endpoints),
        cmocka_unit_test(version_config_filters_aggregators),
        cmocka_unit_test(stats_endpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
