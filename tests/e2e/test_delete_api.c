/* test_delete_api.c -- octsdb's exact delete over the real daemon and the real
 * `octsdb delete` (docs/delete.md), against a model of every point sent.
 *
 * One data dir, four series (del.a{host=a,b,c}, del.b{host=a}), points with
 * millisecond timestamps over four hours, some flushed to the store and some
 * still in the head when the deletes run. In order: an exact range through
 * POST /api/delete (dry run first: its counts equal the model's), a series
 * through `octsdb delete` beside the TSD, a whole metric with deleteUid
 * through the API; a restart; `octsdb delete` and `octsdb compact` on the
 * stopped dir; then a point acknowledged just before a delete in an open
 * hour, kill -9 once the delete answered, and a restart. After every step
 * each series read back through /api/query equals what the model keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "api_client.h"
#include "delete_model.h"

#define H0 1356998400000LL /* 2013-01-01T00:00:00Z, ms */
#define HR 3600000LL
#define NS 4

static const char *const s_metric[NS] = {"del.a", "del.a", "del.a", "del.b"};
static const char *const s_host[NS] = {"a", "b", "c", "a"};

static dm_series_t g_m[NS];
static tu_tsd_t g_t;
static const char *const k_extra[] = {"--auto-metric", "--set", "tsd.http.query.allow_delete=true",
                                      NULL};

static void put(int s, int64_t ts, int64_t val)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,\"tags\":{\"host\":\"%s\"}}",
             s_metric[s], (long long)ts, (long long)val, s_host[s]);
    free(ac_req_ok(&g_t, "POST", "/api/put", body, 204));
    dm_add(&g_m[s], ts, val);
}

static uint64_t model_delete(int s, int64_t lo, int64_t hi)
{
    return dm_delete(&g_m[s], lo, hi);
}

/* The /api/query answer for series s over [from, to] the model predicts:
 * its kept points in time order. */
static void expect_series(int s, int64_t from, int64_t to, const char *when)
{
    char target[256], want[16384];
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&ms=true&m=sum:%s%%7Bhost=%s%%7D", (long long)from,
             (long long)to, s_metric[s], s_host[s]);
    size_t n = (size_t)snprintf(want, sizeof want,
                                "[{\"metric\":\"%s\",\"tags\":{\"host\":\"%s\"},"
                                "\"aggregateTags\":[],\"dps\":{",
                                s_metric[s], s_host[s]);
    static dm_kept_t k[DM_NP];
    size_t nk = dm_kept(&g_m[s], from, to, k);
    int any = nk > 0;
    for (size_t i = 0; i < nk; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "%s\"%lld\":%lld", i ? "," : "",
                              (long long)k[i].ts, (long long)k[i].val);
    snprintf(want + n, sizeof want - n, "}}]");
    char *r;
    int st = ac_req(&g_t, "GET", target, NULL, &r);
    int ok = st == 200 && (any ? !strcmp(r, want) : !strcmp(r, "[]"));
    if (!ok) fail_msg("%s: %s: got %d <%s>, want <%s>", when, target, st, r, any ? want : "[]");
    free(r);
}

static int g_b_gone; /* del.b's name is deleted: it cannot be queried */

static void check(const char *when)
{
    for (int s = 0; s < (g_b_gone ? 3 : NS); s++)
        expect_series(s, H0, H0 + 4 * HR, when);
}

static int run_cli(char **out, const char *a0, const char *a1, const char *a2, const char *a3,
                   const char *a4)
{
    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", g_t.dir);
    const char *argv[] = {a0, flag, a1, a2, a3, a4, NULL};
    return tu_run_octsdb(out, argv);
}

static int setup(void **state)
{
    (void)state;
    memset(&g_t, 0, sizeof g_t);
    memset(g_m, 0, sizeof g_m);
    return tu_tsd_start(&g_t, k_extra) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

static void deletes_restart_compact(void **state)
{
    (void)state;
    /* a point every 9 min 7.3 s, per series, over hours 0..3 */
    for (int s = 0; s < NS; s++)
        for (int64_t t = H0 + 11 * s; t < H0 + 4 * HR; t += 547300)
            put(s, t, t / 1000 % 100000 + 1000000 * s);
    free(ac_req_ok(&g_t, "POST", "/api/octsdb/flush", NULL, 204));
    for (int s = 0; s < NS; s++) /* and some only in the head */
        for (int k = 0; k < 4; k++)
            put(s, H0 + k * HR + 1234567 + s, 500 + k);
    check("before");

    /* 1. an exact range of host=a: from one of its points to one ms before
     *    another, over both kinds of hour (partial, whole) */
    int64_t lo = g_m[0].ts[3], hi = g_m[0].ts[20] - 1;
    char body[512], *r;
    snprintf(body, sizeof body,
             "{\"metric\":\"del.a\",\"tags\":{\"host\":\"a\"},\"start\":%lld,\"end\":%lld,"
             "\"dryRun\":true}",
             (long long)lo, (long long)hi);
    uint64_t want = 0;
    for (size_t i = 0; i < g_m[0].n; i++)
        want += g_m[0].ts[i] >= lo && g_m[0].ts[i] <= hi;
    char wbody[512];
    snprintf(wbody, sizeof wbody, "\"series\":1,\"points\":%llu,", (unsigned long long)want);
    r = ac_req_ok(&g_t, "POST", "/api/delete", body, 200);
    if (!strstr(r, wbody)) fail_msg("dry run: <%s>, want <%s>", r, wbody);
    free(r);
    check("after a dry run");
    body[strlen(body) - strlen(",\"dryRun\":true}")] = 0;
    strcat(body, "}");
    r = ac_req_ok(&g_t, "POST", "/api/delete", body, 200);
    assert_int_equal(model_delete(0, lo, hi), want);
    if (!strstr(r, wbody)) fail_msg("delete: <%s>, want <%s>", r, wbody);
    free(r);
    check("after the range delete");

    /* 2. the series host=b, all time, by `octsdb delete` beside the TSD */
    char *out = NULL;
    assert_int_equal(run_cli(&out, "delete", "--metric=del.a", "--tags=host=b", NULL, NULL), 0);
    uint64_t nb = model_delete(1, 0, INT64_MAX);
    char line[64];
    snprintf(line, sizeof line, "\npoints: %llu\n", (unsigned long long)nb);
    if (!strstr(out, line)) fail_msg("octsdb delete said <%s>, want <%s>", out, line);
    free(out);
    check("after the series delete");

    /* 3. the whole metric del.b with its name */
    r = ac_req_ok(&g_t, "POST", "/api/delete", "{\"metric\":\"del.b\",\"deleteUid\":true}", 200);
    if (!strstr(r, "\"uidDeleted\":true")) fail_msg("metric delete: <%s>", r);
    free(r);
    model_delete(3, 0, INT64_MAX);
    g_b_gone = 1;
    AC_EXPECT(&g_t, "GET", "/api/query?start=1356998400&m=sum:del.b", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"No such name for 'metrics': 'del.b'\"}}");
    /* 2.4-style errors */
    AC_EXPECT(&g_t, "POST", "/api/delete", "{\"metric\":\"del.a\",\"start\":5,\"end\":4}", 400,
              "{\"error\":{\"code\":400,\"message\":\"start must not be after end\"}}");
    AC_EXPECT(&g_t, "POST", "/api/delete", "{\"metric\":\"nope\"}", 400,
              "{\"error\":{\"code\":400,\"message\":\"No such name for 'metrics': 'nope'\"}}");

    /* 4. a restart: nothing comes back */
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    assert_int_equal(tu_tsd_start(&g_t, k_extra), 0);
    check("after a restart");

    /* 5. on the stopped dir: a range of host=c by the CLI, then a compaction */
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    char s0[32], s1[32];
    snprintf(s0, sizeof s0, "--start=%lld", (long long)(H0 + HR + 1));
    snprintf(s1, sizeof s1, "--end=%lld", (long long)(H0 + 2 * HR + 777777));
    assert_int_equal(run_cli(&out, "delete", "--metric=del.a", "--tags=host=c", s0, s1), 0);
    uint64_t nc = model_delete(2, H0 + HR + 1, H0 + 2 * HR + 777777);
    snprintf(line, sizeof line, "\npoints: %llu\n", (unsigned long long)nc);
    if (!strstr(out, line)) fail_msg("octsdb delete (stopped) said <%s>, want <%s>", out, line);
    free(out);
    assert_int_equal(run_cli(&out, "compact", NULL, NULL, NULL, NULL), 0);
    free(out);
    assert_int_equal(tu_tsd_start(&g_t, k_extra), 0);
    check("after a stopped delete and a compaction");
}

/* A point acknowledged just before a delete, in an hour still open (its
 * points in the head and the log only), then kill -9 right after the delete
 * answered: the restart replays the log and the point stays deleted; a
 * point acknowledged after the delete, in its range, stays. */
static void kill_after_delete(void **state)
{
    (void)state;
    int64_t now = (int64_t)time(NULL) * 1000;
    int64_t p = now - 5000, q = now - 4000;
    put(0, p, 77);
    char body[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"del.a\",\"tags\":{\"host\":\"a\"},\"start\":%lld,\"end\":%lld}",
             (long long)p, (long long)q);
    char *r = ac_req_ok(&g_t, "POST", "/api/delete", body, 200);
    if (!strstr(r, "\"points\":1,")) fail_msg("delete: <%s>", r);
    free(r);
    model_delete(0, p, q);
    put(0, q, 88);
    tu_tsd_kill(&g_t);
    assert_int_equal(tu_tsd_start(&g_t, k_extra), 0);
    expect_series(0, now - 60000, now + 60000, "after kill -9");
    check("after kill -9 (the old hours)");
}

/* ---- a whole metric in every table ------------------------------------ */

#define RCONF                                                                                      \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1},\"intervals\":["                                  \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"tsdb-rollup-1h\",\"preAggregationTable\":\"tsdb-rollup-preagg-1h\","             \
    "\"interval\":\"1h\",\"rowSpan\":\"1d\"}]}"
#define HCONF "tsd.core.histograms.config={\"net.opentsdb.core.SimpleHistogramDecoder\": 7}"
static const char *const k_every[] = {"--auto-metric",
                                      "--set",
                                      "tsd.http.query.allow_delete=true",
                                      "--set",
                                      "tsd.rollups.enable=true",
                                      "--set",
                                      "tsd.rollups.config=" RCONF,
                                      "--set",
                                      HCONF,
                                      "--set",
                                      "tsd.core.meta.enable_realtime_ts=true",
                                      "--set",
                                      "tsd.core.meta.enable_tsuid_tracking=true",
                                      NULL};

/* The answers of the three kinds of query for metric m (raw, rollup table,
 * histogram percentiles), concatenated. */
static char *answers(tu_tsd_t *t, const char *m)
{
    static const char *const q[] = {
        "sum:", "sum:1h-sum:rollup_nofallback:", "sum:percentiles[50]:"};
    size_t cap = 1 << 16, n = 0;
    char *all = calloc(1, cap);
    for (int i = 0; i < 3; i++) {
        char target[256], *r;
        snprintf(target, sizeof target, "/api/query?start=1356998400&end=1357009199&m=%s%s", q[i],
                 m);
        int st = ac_req(t, "GET", target, NULL, &r);
        if (st != 200) fail_msg("%s: %d <%s>", target, st, r);
        n += (size_t)snprintf(all + n, cap - n, "%s\n", r);
        free(r);
    }
    return all;
}

/* w.m and w.keep get the same raw points, rollup cells, histogram points
 * and an annotation; a histogram point in a range delete is counted; the
 * whole-metric delete of w.m leaves all three kinds of query of w.m empty
 * (before and after a restart) and w.keep's answers exactly as they were. */
static void whole_metric_every_table(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, k_every), 0);
    const char *ms[2] = {"w.m", "w.keep"};
    char body[2048];
    for (int i = 0; i < 2; i++) {
        snprintf(
            body, sizeof body,
            "[{\"metric\":\"%s\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}},"
            "{\"metric\":\"%s\",\"timestamp\":1357002000,\"value\":2,\"tags\":{\"host\":\"a\"}}]",
            ms[i], ms[i]);
        free(ac_req_ok(&t, "POST", "/api/put", body, 204));
        snprintf(
            body, sizeof body,
            "[{\"metric\":\"%s\",\"timestamp\":1356998400,\"value\":10,\"tags\":{\"host\":\"a\"},"
            "\"interval\":\"1h\",\"aggregator\":\"sum\"},"
            "{\"metric\":\"%s\",\"timestamp\":1357002000,\"value\":20,\"tags\":{\"host\":\"a\"},"
            "\"interval\":\"1h\",\"aggregator\":\"sum\"}]",
            ms[i], ms[i]);
        free(ac_req_ok(&t, "POST", "/api/rollup", body, 204));
        snprintf(body, sizeof body,
                 "[{\"metric\":\"%s\",\"timestamp\":1356998500,\"tags\":{\"host\":\"a\"},\"id\":7,"
                 "\"buckets\":{\"0,1.5\":3,\"1.5,5.75\":1}},"
                 "{\"metric\":\"%s\",\"timestamp\":1357002100,\"tags\":{\"host\":\"a\"},\"id\":7,"
                 "\"buckets\":{\"0,1.5\":1,\"1.5,5.75\":5}}]",
                 ms[i], ms[i]);
        free(ac_req_ok(&t, "POST", "/api/histogram", body, 204));
    }
    char *keep0 = answers(&t, "w.keep"), *m0 = answers(&t, "w.m");
    /* each kind of query has data of both hours */
    if (!strstr(m0, "1356998400") || !strstr(m0, "1357002000") || strstr(m0, "[]\n") ||
        strstr(keep0, "[]\n"))
        fail_msg("before the delete: w.m <%s> w.keep <%s>", m0, keep0);
    /* a range holding one histogram point and no numeric point */
    char *r = ac_req_ok(&t, "POST", "/api/delete",
                        "{\"metric\":\"w.m\",\"start\":1357002050,\"end\":1357002150}", 200);
    if (!strstr(r, "\"points\":0,\"histograms\":1,")) fail_msg("range delete: <%s>", r);
    free(r);
    r = ac_req_ok(&t, "POST", "/api/delete", "{\"metric\":\"w.m\",\"dryRun\":true}", 200);
    if (!strstr(r, "\"series\":1,\"points\":2,\"histograms\":1,") ||
        !strstr(r, "\"rollupRows\":1,") || !strstr(r, "\"metaRows\":1,"))
        fail_msg("dry run of the whole metric: <%s>", r);
    free(r);
    r = ac_req_ok(&t, "POST", "/api/delete", "{\"metric\":\"w.m\"}", 200);
    if (!strstr(r, "\"points\":2,\"histograms\":1,") || !strstr(r, "\"uidDeleted\":false"))
        fail_msg("whole metric: <%s>", r);
    free(r);
    for (int round = 0; round < 2; round++) {
        char *m1 = answers(&t, "w.m"), *keep1 = answers(&t, "w.keep");
        if (strcmp(m1, "[]\n[]\n[]\n")) fail_msg("w.m after the delete (%d): <%s>", round, m1);
        assert_string_equal(keep1, keep0);
        free(m1);
        free(keep1);
        assert_int_equal(tu_tsd_stop(&t), 0);
        assert_int_equal(tu_tsd_start(&t, k_every), 0);
    }
    /* the stored TSMeta of w.m{host=a} went, w.keep's stayed (UIDs 1 and 2:
     * w.m was named first) */
    char *r2;
    int st = ac_req(&t, "GET", "/api/uid/tsmeta?tsuid=000001000001000001", NULL, &r);
    int st2 = ac_req(&t, "GET", "/api/uid/tsmeta?tsuid=000002000001000001", NULL, &r2);
    if (st != 404 || st2 != 200 || !strstr(r2, "\"metric\":{\"uid\":\"000002\""))
        fail_msg("tsmeta of w.m: %d <%s>, of w.keep: %d <%s>", st, r, st2, r2);
    free(r);
    free(r2);
    free(keep0);
    free(m0);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deletes_restart_compact),
        cmocka_unit_test(kill_after_delete),
        cmocka_unit_test(whole_metric_every_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
