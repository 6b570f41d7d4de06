/* test_stats_query.c -- server/stats_query.h without a daemon: running queries listed while
 * they run, completed ones in a ring of STATS_QUERY_KEEP, 2.4's "executed" count for a repeat,
 * and the JSON parsed back. The daemon-side figures are in e2e/test_api_stats.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "server/stats_query.h"

static json_value_t *list(stats_queries_t *qs, json_arena_t *a, oct_strbuf_t *sb)
{
    oct_strbuf_reset(sb);
    json_writer_t w;
    json_w_init(&w, sb);
    stats_queries_json(qs, &w);
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(a, sb->ptr, sb->len, 0, &v, &eb)) fail_msg("%s: %s", eb.msg, sb->ptr);
    return v;
}

static long nval(json_value_t *o, const char *key)
{
    json_value_t *v = json_obj_get(o, key);
    if (!v || v->type != JSON_NUMBER) fail_msg("no number %s", key);
    return strtol(v->str, NULL, 10);
}

static int query_n(json_value_t *e)
{
    return (int)nval(json_obj_get(e, "query"), "n");
}

static void running_then_completed(void **state)
{
    (void)state;
    stats_queries_t *qs = stats_queries_new();
    http_request_t req = {0}; /* no transport: no remote, no headers */
    stats_query_t *a = stats_query_begin(qs, "{\"n\":1}", 7, &req);
    stats_query_t *b = stats_query_begin(qs, "{\"n\":2}", 7, &req);
    assert_int_equal(stats_queries_running(qs), 2);
    json_arena_t ar = JSON_ARENA_INIT;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    json_value_t *v = list(qs, &ar, &sb);
    json_value_t *run = json_obj_get(v, "running");
    assert_int_equal(run->n, 2);
    assert_int_equal(query_n(run->child), 1); /* oldest first */
    assert_int_equal(query_n(run->child->next), 2);
    assert_int_equal(json_obj_get(v, "completed")->n, 0);

    stats_query_figures_t f = {.series = 3, .raw_points = 30, .emitted_points = 10};
    stats_query_end(qs, a, 200, NULL, &f);
    stats_query_end(qs, b, 400, "No such name for 'metrics': 'x'", NULL);
    assert_int_equal(stats_queries_running(qs), 0);
    v = list(qs, &ar, &sb);
    assert_int_equal(json_obj_get(v, "running")->n, 0);
    json_value_t *done = json_obj_get(v, "completed");
    assert_int_equal(done->n, 2);
    json_value_t *e = done->child;
    assert_int_equal(query_n(e), 1);
    assert_true(json_str_eq(json_obj_get(e, "exception"), "null"));
    assert_int_equal(nval(json_obj_get(e, "stats"), "rawDPs"), 30);
    assert_int_equal(nval(e, "executed"), 1);
    e = e->next;
    assert_true(json_str_eq(json_obj_get(e, "exception"), "No such name for 'metrics': 'x'"));
    assert_int_equal(nval(json_obj_get(e, "httpResponse"), "code"), 400);

    /* the same query, remote and status again: counted on the kept entry */
    stats_query_end(qs, stats_query_begin(qs, "{\"n\":1}", 7, &req), 200, NULL, &f);
    v = list(qs, &ar, &sb);
    done = json_obj_get(v, "completed");
    assert_int_equal(done->n, 2);
    assert_int_equal(nval(done->child, "executed"), 2);

    /* a ring of STATS_QUERY_KEEP: 300 more distinct queries keep the newest 256 */
    for (int i = 3; i < 303; i++) {
        char q[32];
        int n = snprintf(q, sizeof q, "{\"n\":%d}", i);
        stats_query_end(qs, stats_query_begin(qs, q, (size_t)n, &req), 200, NULL, NULL);
    }
    v = list(qs, &ar, &sb);
    done = json_obj_get(v, "completed");
    assert_int_equal(done->n, STATS_QUERY_KEEP);
    assert_int_equal(query_n(done->child), 302 - STATS_QUERY_KEEP + 1);
    oct_strbuf_free(&sb);
    json_arena_free(&ar);
    stats_queries_free(qs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(running_then_completed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
