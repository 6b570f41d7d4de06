/* test_api_stats.c -- the stats under OpenTSDB 2.4's names over the real daemon: the figures
 * the test's own puts and queries must produce (docs/stats.md), /api/stats/query listing the
 * queries the test sent with their own figures and the bounded ring, /api/stats/threads, and
 * the telnet `stats` lines naming the same table as /api/stats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

/* The value of metric{tag} in a fresh /api/stats ("" tag: none but host); fails if absent. */
static long long stat(const tu_tsd_t *t, const char *metric, const char *tag)
{
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(t, "/api/stats", &a, &keep);
    long long got = -1;
    for (json_value_t *e = v->child; e && got < 0; e = e->next) {
        json_value_t *m = json_obj_get(e, "metric"), *tags = json_obj_get(e, "tags");
        if (!json_str_eq(m, metric)) continue;
        char want_k[64] = "", want_v[64] = "";
        const char *eq = strchr(tag, '=');
        if (eq) {
            snprintf(want_k, sizeof want_k, "%.*s", (int)(eq - tag), tag);
            snprintf(want_v, sizeof want_v, "%s", eq + 1);
        }
        size_t n_tags = 0;
        for (json_value_t *g = tags->child; g; g = g->next)
            n_tags++;
        if (eq ? !json_str_eq(json_obj_get(tags, want_k), want_v) || n_tags != 2 : n_tags != 1)
            continue;
        got = strtoll(json_obj_get(e, "value")->str, NULL, 10);
    }
    free(keep);
    json_arena_free(&a);
    if (got < 0) fail_msg("no stat %s{%s}", metric, tag);
    return got;
}

#define PUT3                                                                                       \
    "[{\"metric\":\"m.a\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"x\"}},"        \
    "{\"metric\":\"m.a\",\"timestamp\":1356998400,\"value\":2,\"tags\":{\"host\":\"y\"}},"         \
    "{\"metric\":\"m.b\",\"timestamp\":1356998400,\"value\":3,\"tags\":{\"host\":\"x\"}}]"

static void start_with_points(tu_tsd_t *t)
{
    assert_int_equal(tu_tsd_start(t, (const char *const[]){"--auto-metric", NULL}), 0);
    char *r;
    assert_int_equal(ac_req(t, "POST", "/api/put?sync=true", PUT3, &r), 204);
    free(r);
}

static void names_and_values_as_2_4(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    start_with_points(&t);
    /* 2 metrics, 1 tag key, 2 tag values: each assigned once and held by the cache */
    assert_int_equal(stat(&t, "tsd.uid.cache-size", "kind=metrics"), 2);
    assert_int_equal(stat(&t, "tsd.uid.cache-size", "kind=tagk"), 1);
    assert_int_equal(stat(&t, "tsd.uid.cache-size", "kind=tagv"), 2);
    assert_int_equal(stat(&t, "tsd.uid.ids-used", "kind=tagv"), 2);
    assert_int_equal(stat(&t, "tsd.datapoints.added", "type=all"), 3);
    assert_int_equal(stat(&t, "tsd.rpc.received", "type=put"), 3); /* per point (compat.md) */
    assert_int_equal(stat(&t, "tsd.rpc.exceptions", ""), 0);
    assert_int_equal(stat(&t, "tsd.query.count", "type=running"), 0);
    assert_int_equal(stat(&t, "tsd.http.latency_50pct", "type=graph"), 0); /* no /q yet */

    /* a known metric is found in the cache; an unknown one misses it and is a 400 */
    long long hit0 = stat(&t, "tsd.uid.cache-hit", "kind=metrics");
    long long miss0 = stat(&t, "tsd.uid.cache-miss", "kind=metrics");
    char *r;
    assert_int_equal(ac_req(&t, "GET", "/api/query?start=1356998400&m=sum:m.a", NULL, &r), 200);
    free(r);
    assert_true(stat(&t, "tsd.uid.cache-hit", "kind=metrics") > hit0);
    assert_int_equal(ac_req(&t, "GET", "/api/query?start=1356998400&m=sum:m.zzz", NULL, &r), 400);
    free(r);
    assert_true(stat(&t, "tsd.uid.cache-miss", "kind=metrics") > miss0);
    assert_int_equal(ac_req(&t, "GET", "/api/query?m=sum:m.a", NULL, &r), 400); /* no start */
    free(r);
    assert_int_equal(stat(&t, "tsd.http.query.success", ""), 1);
    assert_int_equal(stat(&t, "tsd.http.query.invalid_requests", ""), 2);
    assert_int_equal(stat(&t, "tsd.http.query.exceptions", ""), 0);
    assert_int_equal(
        ac_req(&t, "GET", "/q?start=1356998400&end=1356998460&m=sum:m.a&ascii", NULL, &r), 200);
    free(r);
    long long p[4];
    const char *names[4] = {"tsd.http.latency_50pct", "tsd.http.latency_75pct",
                            "tsd.http.latency_90pct", "tsd.http.latency_95pct"};
    for (int i = 0; i < 4; i++) {
        p[i] = stat(&t, names[i], "type=all");
        if (i) assert_true(p[i] >= p[i - 1]);
    }
    /* every connection so far was one HTTP request (tu_http closes each) */
    long long http = stat(&t, "tsd.connectionmgr.connections", "type=http");
    long long total = stat(&t, "tsd.connectionmgr.connections", "type=total");
    assert_true(total >= http + 1 && total <= http + 2); /* the second read counts itself */

    /* telnet `stats` and /api/stats name the same table: same names, tags, order */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, "stats\n", 6), 0);
    static char text[65536];
    tu_recv_until(fd, text, sizeof text, "tsd.storage.bytes ", 5000);
    tu_recv_until(fd, text + strlen(text), sizeof text - strlen(text), "\n", 1000);
    close(fd);
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(&t, "/api/stats", &a, &keep);
    const char *line = text;
    size_t n = 0;
    for (json_value_t *e = v->child; e; e = e->next, n++) {
        json_value_t *m = json_obj_get(e, "metric");
        char want[160];
        int k = snprintf(want, sizeof want, "%.*s ", (int)m->len, m->str);
        if (strncmp(line, want, (size_t)k)) fail_msg("line %zu: <%.60s>, want <%s>", n, line, want);
        for (json_value_t *g = json_obj_get(e, "tags")->child; g; g = g->next) {
            if (g->key_len == 4 && !memcmp(g->key, "host", 4)) continue;
            snprintf(want, sizeof want, " %.*s=%.*s ", (int)g->key_len, g->key, (int)g->len,
                     g->str);
            const char *nl = strchr(line, '\n');
            const char *at = strstr(line, want);
            if (!at || (nl && at > nl)) fail_msg("line %zu lacks tag <%s>", n, want);
        }
        line = strchr(line, '\n');
        assert_non_null(line);
        line++;
    }
    assert_true(n > 40);
    free(keep);
    json_arena_free(&a);
    tu_tsd_destroy(&t);
}

/* The completed entry whose query asks metric m, or NULL. */
static json_value_t *completed_for(json_value_t *root, const char *m)
{
    for (json_value_t *e = json_obj_get(root, "completed")->child; e; e = e->next) {
        json_value_t *qs = json_obj_get(json_obj_get(e, "query"), "queries");
        if (qs && qs->child && json_str_eq(json_obj_get(qs->child, "metric"), m)) return e;
    }
    return NULL;
}

static double num(json_value_t *o, const char *key)
{
    json_value_t *v = json_obj_get(o, key);
    if (!v || v->type != JSON_NUMBER) fail_msg("no number %s", key);
    return strtod(v->str, NULL); /* the text ends at a delimiter strtod stops at */
}

static void query_stats_list_the_queries_sent(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    start_with_points(&t);
    const char *body = "{\"start\":1356998400,\"end\":1356998460,"
                       "\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"m.a\"}]}";
    char *r = NULL;
    int st = tu_http(t.port, "POST", "/api/query",
                     "Content-Type: application/json\r\nUser-Agent: stats-test/1.0\r\n", body,
                     strlen(body), &r, NULL);
    assert_int_equal(st, 200);
    free(r);
    assert_int_equal(ac_req(&t, "GET", "/api/query?start=1356998400&m=sum:m.zzz", NULL, &r), 400);
    free(r);

    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(&t, "/api/stats/query", &a, &keep);
    assert_int_equal(json_obj_get(v, "running")->n, 0);
    assert_int_equal(json_obj_get(v, "completed")->n, 2);
    json_value_t *e = completed_for(v, "m.a");
    assert_non_null(e);
    json_value_t *q = json_obj_get(e, "query");
    assert_true(num(q, "start") == 1356998400000.0);
    assert_true(num(q, "end") == 1356998460000.0);
    assert_true(json_str_eq(json_obj_get(json_obj_get(q, "queries")->child, "aggregator"), "sum"));
    assert_true(json_str_eq(json_obj_get(json_obj_get(e, "requestHeaders"), "User-Agent"),
                            "stats-test/1.0"));
    json_value_t *remote = json_obj_get(e, "remote");
    assert_true(remote->len > 10 && !memcmp(remote->str, "127.0.0.1:", 10));
    assert_true(num(json_obj_get(e, "httpResponse"), "code") == 200);
    assert_true(json_str_eq(json_obj_get(e, "exception"), "null"));
    assert_true(num(e, "executed") == 1);
    assert_true(num(e, "queryCompletedTimestamp") >= num(e, "queryStartTimestamp"));
    /* m.a has two series (host=x, host=y), one point each at the same second: sum gives one */
    json_value_t *fig = json_obj_get(e, "stats");
    assert_true(num(fig, "series") == 2);
    assert_true(num(fig, "rawDPs") == 2);
    assert_true(num(fig, "emittedDPs") == 1);
    assert_true(num(fig, "totalTime") >= 0);

    e = completed_for(v, "m.zzz");
    assert_non_null(e);
    assert_true(num(json_obj_get(e, "httpResponse"), "code") == 400);
    json_value_t *ex = json_obj_get(e, "exception");
    assert_true(ex->type == JSON_STRING && memmem(ex->str, ex->len, "m.zzz", 5));
    assert_true(num(json_obj_get(e, "stats"), "series") == 0);
    free(keep);

    /* The ring keeps the newest STATS_QUERY_KEEP (256): after 2 + 300 distinct queries the
     * oldest kept is the 47th, i.e. the one ending at 1356998400 + 45 + 1 (the loop's 45th). */
    for (int i = 1; i <= 300; i++) {
        char target[128];
        snprintf(target, sizeof target, "/api/query?start=1356998400&end=%d&m=sum:m.b",
                 1356998400 + i);
        assert_int_equal(ac_req(&t, "GET", target, NULL, &r), 200);
        free(r);
    }
    v = ac_get_json(&t, "/api/stats/query", &a, &keep);
    json_value_t *done = json_obj_get(v, "completed");
    assert_int_equal(done->n, 256);
    assert_true(num(json_obj_get(done->child, "query"), "end") == (1356998400.0 + 45) * 1000);
    json_value_t *last = done->child;
    while (last->next)
        last = last->next;
    assert_true(num(json_obj_get(last, "query"), "end") == (1356998400.0 + 300) * 1000);
    free(keep);
    json_arena_free(&a);
    tu_tsd_destroy(&t);
}

static void threads_as_2_4_shapes_them(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    start_with_points(&t);
    json_arena_t a = JSON_ARENA_INIT;
    char *keep;
    json_value_t *v = ac_get_json(&t, "/api/stats/threads", &a, &keep);
    int main_seen = 0, http_seen = 0;
    for (json_value_t *e = v->child; e; e = e->next) {
        json_value_t *st = json_obj_get(e, "state"), *name = json_obj_get(e, "name");
        assert_true(json_str_eq(st, "RUNNABLE") || json_str_eq(st, "WAITING") ||
                    json_str_eq(st, "BLOCKED") || json_str_eq(st, "STOPPED") ||
                    json_str_eq(st, "TERMINATED") || json_str_eq(st, "UNKNOWN"));
        assert_int_equal(name->type, JSON_STRING);
        if (num(e, "threadID") == t.pid) main_seen = 1; /* the main thread's id is the pid */
        if (json_str_eq(name, "tsd-http")) http_seen = 1;
        assert_true(num(e, "cpuUserMs") >= 0);
    }
    assert_true(main_seen && http_seen);
    /* as many as the kernel lists for the daemon (none started or ended while idle) */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", t.pid);
    DIR *d = opendir(path);
    assert_non_null(d);
    size_t n_task = 0;
    for (struct dirent *de; (de = readdir(d));)
        n_task += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(v->n, n_task);
    free(keep);
    json_arena_free(&a);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_values_as_2_4),
        cmocka_unit_test(query_stats_list_the_queries_sent),
        cmocka_unit_test(threads_as_2_4_shapes_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
