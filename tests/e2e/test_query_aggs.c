/* test_query_aggs.c -- /api/query against the real daemon: every aggregator
 * that /api/aggregators lists, across series with aligned timestamps (no
 * interpolation) and with misaligned ones (LERP, zero-if-missing, min/max-
 * if-missing, previous value), integers, doubles and both mixed, GET and
 * POST. Expectations come from the independent model in query_ref.h, and a
 * handful of values are worked out by hand below (docs/query.md sections 1, 4-6 and
 * the team's decisions: exact integer avg and LERP, NaN skipped, a series
 * contributes only between its first and last point). */
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

#define T0 1356998400LL /* 2013-01-01 00:00:00 UTC */

static const char *const daemon_args[] = {"--auto-metric", NULL};
static tu_tsd_t tsd;
static qr_db_t db;

/* OpenTSDB 2.4's /api/aggregators (docs/query.md section 6). */
static const char *const all_aggs[] = {
    "avg",    "count",  "dev",    "diff",    "ep50r3",  "ep50r7",    "ep75r3", "ep75r7", "ep90r3",
    "ep90r7", "ep95r3", "ep95r7", "ep999r3", "ep999r7", "ep99r3",    "ep99r7", "first",  "last",
    "max",    "median", "mimmax", "mimmin",  "min",     "mult",      "none",   "p50",    "p75",
    "p90",    "p95",    "p99",    "p999",    "pfsum",   "squareSum", "sum",    "zimsum",
};
#define N_AGGS (sizeof all_aggs / sizeof *all_aggs)

static void build_db(void)
{
    /* aligned integers: every series has a point at every timestamp */
    static const int64_t al[4][6] = {
        {10, 20, 30, 45, 7, -3}, {1, 2, 3, 4, 5, 6}, {100, 0, 5, 5, 9, 12}, {-7, 8, 8, 2, 3, 1}};
    static const char *const hosts[4] = {"host=a", "host=b", "host=c", "host=d"};
    for (int s = 0; s < 4; s++) {
        qr_series_t *x = qr_series(&db, "agg.al", hosts[s]);
        for (int k = 0; k < 6; k++)
            qr_i(x, T0 + 60 * k, al[s][k]);
    }
    /* aligned doubles (exact in float32) */
    static const double ald[4][6] = {{1.5, 2.25, -0.5, 8.0, 3.75, 0.125},
                                     {0.5, 0.5, 0.5, 1.0, 2.0, 4.0},
                                     {-1.25, 6.5, 7.0, 3.5, 0.0, 2.5},
                                     {10.5, 11.0, 0.75, 5.5, 6.25, 9.0}};
    for (int s = 0; s < 4; s++) {
        qr_series_t *x = qr_series(&db, "agg.ald", hosts[s]);
        for (int k = 0; k < 6; k++)
            qr_f(x, T0 + 60 * k, ald[s][k]);
    }
    /* misaligned, mixed: a ints over the whole range, b ints starting later
     * and ending earlier, c doubles, d an int then a double */
    qr_series_t *a = qr_series(&db, "agg.mis", "host=a");
    qr_i(a, T0 + 0, 10);
    qr_i(a, T0 + 60, 20);
    qr_i(a, T0 + 120, 35);
    qr_i(a, T0 + 180, 41);
    qr_i(a, T0 + 240, 50);
    qr_series_t *b = qr_series(&db, "agg.mis", "host=b");
    qr_i(b, T0 + 30, 7);
    qr_i(b, T0 + 90, 12);
    qr_i(b, T0 + 150, 4);
    qr_series_t *c = qr_series(&db, "agg.mis", "host=c");
    qr_f(c, T0 + 20, 1.5);
    qr_f(c, T0 + 100, 2.25);
    qr_f(c, T0 + 200, -0.5);
    qr_series_t *d = qr_series(&db, "agg.mis", "host=d");
    qr_i(d, T0 + 45, 3);
    qr_f(d, T0 + 135, 8.5);
    /* misaligned integers only: LERP in exact integer arithmetic */
    qr_series_t *e = qr_series(&db, "agg.misi", "host=a");
    qr_i(e, T0 + 0, 1);
    qr_i(e, T0 + 40, 2);
    qr_i(e, T0 + 80, 4);
    qr_i(e, T0 + 120, 100);
    qr_series_t *f = qr_series(&db, "agg.misi", "host=b");
    qr_i(f, T0 + 10, 5);
    qr_i(f, T0 + 30, 6);
    qr_i(f, T0 + 100, 9);
    /* 300 series: more values than fit a small fixed buffer (percentiles,
     * median across series; a 600-point bucket when downsampling) */
    for (int h = 0; h < 300; h++) {
        char tags[32];
        snprintf(tags, sizeof tags, "host=h%03d", h);
        qr_series_t *x = qr_series(&db, "agg.many", tags);
        qr_i(x, T0, (h * 37) % 301);
        qr_f(x, T0 + 60, 0.5 * ((h * 11) % 97));
    }
    qr_series_t *one = qr_series(&db, "agg.dense", "host=a");
    for (int k = 0; k < 600; k++)
        qr_i(one, T0 + 5 * k, (k * 13) % 101);
    /* two series for the integer-avg check */
    qr_i(qr_series(&db, "agg.avg", "host=a"), T0 + 60, 1);
    qr_i(qr_series(&db, "agg.avg", "host=b"), T0 + 60, 2);
}

static int setup(void **state)
{
    (void)state;
    if (tu_tsd_start(&tsd, daemon_args)) return -1;
    build_db();
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

static void aggregators_listed(void **state)
{
    (void)state;
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/aggregators", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(r.v);
    assert_int_equal(r.v->type, JSON_ARRAY);
    assert_int_equal(r.v->n, N_AGGS);
    for (size_t i = 0; i < N_AGGS; i++) {
        int found = 0;
        for (const json_value_t *a = r.v->child; a; a = a->next)
            found |= json_str_eq(a, all_aggs[i]);
        if (!found) fail_msg("aggregator %s not listed: %s", all_aggs[i], r.body);
    }
    qr_resp_free(&r);
}

/* Every aggregator over one metric, POST without tags (one group; `none`:
 * one output per series) and GET m=<agg>:<metric>. */
static void every_agg_over(const char *metric)
{
    long long start = T0, end = T0 + 3000;
    for (size_t i = 0; i < N_AGGS; i++) {
        qr_q_t q = qr_q(metric, all_aggs[i], start, end);
        char sub[256];
        snprintf(sub, sizeof sub, "\"aggregator\":\"%s\",\"metric\":\"%s\"", all_aggs[i], metric);
        qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(start, end, sub, ""), 0, 0);
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:%s", start, end,
                 all_aggs[i], metric);
        qr_expect_get(&tsd, &db, &q, target, 0, 0);
    }
}

static void every_aggregator_aligned_integers(void **state)
{
    (void)state;
    qr_failures = 0;
    every_agg_over("agg.al");
    assert_int_equal(qr_failures, 0);
}

static void every_aggregator_aligned_doubles(void **state)
{
    (void)state;
    qr_failures = 0;
    every_agg_over("agg.ald");
    assert_int_equal(qr_failures, 0);
}

static void every_aggregator_misaligned_mixed(void **state)
{
    (void)state;
    qr_failures = 0;
    every_agg_over("agg.mis");
    assert_int_equal(qr_failures, 0);
}

static void every_aggregator_misaligned_integers(void **state)
{
    (void)state;
    qr_failures = 0;
    every_agg_over("agg.misi");
    assert_int_equal(qr_failures, 0);
}

/* The value at key `ts` (seconds) of the first series of a response. */
static const json_value_t *dp_at(const qr_resp_t *r, long long ts)
{
    if (r->status != 200 || !r->v || r->v->type != JSON_ARRAY || !r->v->child) return NULL;
    const json_value_t *dps = json_obj_get(r->v->child, "dps");
    char key[32];
    snprintf(key, sizeof key, "%lld", ts);
    return dps ? json_obj_get(dps, key) : NULL;
}

static double num(const json_value_t *v)
{
    double d;
    if (!v || v->type != JSON_NUMBER || json_number_double(v, &d)) return NAN;
    return d;
}

/* A few values worked out by hand, independently of the model. */
static void hand_computed_values(void **state)
{
    (void)state;
    qr_resp_t r;
    struct {
        const char *agg;
        long long ts;
        double want;
    } cases[] = {
        /* sum at +90: a LERP 20..35 over 60..120 -> 27.5; b 12; c LERP 1.5..2.25 over
         * 20..100 -> 2.15625; d LERP 3..8.5 over 45..135 -> 5.75 */
        {"sum", T0 + 90, 27.5 + 12 + 2.15625 + 5.75},
        {"zimsum", T0 + 90, 12}, /* only b has a point there */
        {"pfsum", T0 + 90, 20 + 12 + 1.5 + 3},
        {"mimmin", T0 + 90, 12}, /* the missing ones are left out */
        {"mimmax", T0 + 90, 12},
        {"count", T0 + 90, 4},  /* all four are between first and last point */
        {"count", T0 + 0, 1},   /* only a has started */
        {"count", T0 + 240, 1}, /* b, c, d have ended */
        {"sum", T0 + 240, 50},
        {"max", T0 + 20, 10 + 10.0 * 20 / 60}, /* a LERP 10..20 over 0..60; c 1.5 */
        {"min", T0 + 20, 1.5},
        {"avg", T0 + 30, (15 + 7 + (1.5 + 10 * 0.75 / 80)) / 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"start\":%lld,\"end\":%lld,\"queries\":[{\"aggregator\":\"%s\","
                 "\"metric\":\"agg.mis\"}]}",
                 T0, T0 + 3000, cases[i].agg);
        qr_req(&tsd, "POST", "/api/query", body, &r);
        double got = num(dp_at(&r, cases[i].ts));
        if (!(fabs(got - cases[i].want) <= 1e-9 * fabs(cases[i].want)))
            fail_msg("%s at %lld: got %g, want %.17g (%s)", cases[i].agg, cases[i].ts, got,
                     cases[i].want, r.body);
        qr_resp_free(&r);
    }
    /* integer avg is exact: avg(1, 2) = 1.5, not 1 */
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356999400&m=avg:agg.avg", NULL, &r);
    assert_int_equal(r.status, 200);
    if (num(dp_at(&r, T0 + 60)) != 1.5) fail_msg("avg(1,2): %s", r.body);
    qr_resp_free(&r);
    /* integer LERP is exact: agg.misi b at +40 = 6 + 10*3/70 (not truncated) */
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356999400&m=sum:agg.misi", NULL, &r);
    assert_int_equal(r.status, 200);
    double want = 2 + 6 + 10.0 * 3 / 70;
    if (fabs(num(dp_at(&r, T0 + 40)) - want) > 1e-9 * want)
        fail_msg("sum at +40: want %.17g: %s", want, r.body);
    /* an exactly integral LERP stays an integer: a at +100 = 4 + 20*96/40 = 52,
     * b 9 -> 61, written as a JSON integer */
    const json_value_t *v = dp_at(&r, T0 + 100);
    if (!v || num(v) != 61 || !(v->flags & JSON_F_INTEGER)) fail_msg("sum at +100: %s", r.body);
    qr_resp_free(&r);
}

/* The series' points outside [start, end] but inside the scanned hour are
 * used for interpolation, not emitted (docs/query.md sections 1 and 7). */
static void interpolation_uses_scanned_points_outside_range(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *aggs[] = {"sum", "zimsum", "pfsum", "mimmin", "avg", "count", "max", "dev"};
    for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++) {
        qr_q_t q = qr_q("agg.mis", aggs[i], T0 + 45, T0 + 200);
        char sub[128];
        snprintf(sub, sizeof sub, "\"aggregator\":\"%s\",\"metric\":\"agg.mis\"", aggs[i]);
        qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(T0 + 45, T0 + 200, sub, ""), 0, 0);
    }
    /* by hand: sum at +60 = a 20 + b LERP 7..12 over 30..90 (9.5) + c LERP at 60
     * (1.5 + 40*0.75/80 = 1.875) + d LERP 3..8.5 over 45..135 (3 + 15*5.5/90) */
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query",
           qr_body(T0 + 45, T0 + 200, "\"aggregator\":\"sum\",\"metric\":\"agg.mis\"", ""), &r);
    double want = 20 + 9.5 + 1.875 + (3 + 15 * 5.5 / 90);
    if (fabs(num(dp_at(&r, T0 + 60)) - want) > 1e-9 * want)
        fail_msg("sum at +60: want %.17g: %s", want, r.body);
    if (dp_at(&r, T0 + 30) || dp_at(&r, T0 + 240)) fail_msg("points outside emitted: %s", r.body);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* Grouping with every aggregator: one output per host (group by host=*),
 * and `none` with a group-by. */
static void every_aggregator_grouped(void **state)
{
    (void)state;
    qr_failures = 0;
    for (size_t i = 0; i < N_AGGS; i++) {
        qr_q_t q = qr_q("agg.mis", all_aggs[i], T0, T0 + 3000);
        qr_filter(&q, QR_LITERAL_OR, "host", "a|c|d", 1);
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:agg.mis{host=a|c|d}",
                 T0, T0 + 3000, all_aggs[i]);
        qr_expect_get(&tsd, &db, &q, target, 0, 0);
        /* non-group-by filter: all three in one group */
        qr_q_t q2 = qr_q("agg.mis", all_aggs[i], T0, T0 + 3000);
        qr_filter(&q2, QR_LITERAL_OR, "host", "a|c|d", 0);
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:agg.mis{}{host=a|c|d}",
                 T0, T0 + 3000, all_aggs[i]);
        qr_expect_get(&tsd, &db, &q2, target, 0, 0);
    }
    assert_int_equal(qr_failures, 0);
}

/* Percentiles and median over 300 series, and over a 600-point bucket. */
static void many_values(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *aggs[] = {"p50", "p99", "p999", "median", "ep90r7", "ep99r3", "dev", "sum"};
    for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++) {
        qr_q_t q = qr_q("agg.many", aggs[i], T0, T0 + 3000);
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:agg.many", T0,
                 T0 + 3000, aggs[i]);
        qr_expect_get(&tsd, &db, &q, target, 0, 0);
        qr_q_t qd = qr_q("agg.dense", "sum", T0, T0 + 3599);
        qd.ds = QR_DS_FIXED;
        qd.ds_ms = 3600000;
        qd.ds_agg = aggs[i];
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:1h-%s:agg.dense", T0,
                 T0 + 3599, aggs[i]);
        qr_expect_get(&tsd, &db, &qd, target, 0, 0);
    }
    assert_int_equal(qr_failures, 0);
}

/* Duplicate sub-queries are answered once (docs/query.md section 3); a POST without
 * `end` runs to now (Grafana omits it), over years of empty hours. */
static void duplicates_and_open_end(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1357000000&m=sum:agg.al&m=sum:agg.al",
           NULL, &r);
    if (r.status != 200 || !r.v || r.v->n != 1) qr_fail("duplicate m=: %s", r.body);
    qr_resp_free(&r);
    qr_req(&tsd, "POST", "/api/query",
           "{\"start\":1356998400,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"agg.al\"},"
           "{\"aggregator\":\"sum\",\"metric\":\"agg.al\"}]}",
           &r);
    if (r.status != 200 || !r.v || r.v->n != 1) qr_fail("duplicate queries: %s", r.body);
    qr_resp_free(&r);
    qr_q_t q = qr_q("agg.mis", "sum", T0, T0 + 3000);
    qr_expect_post(&tsd, &db, &q, "/api/query",
                   "{\"start\":1356998400000,\"queries\":[{\"aggregator\":\"sum\",\"metric\":"
                   "\"agg.mis\"}]}",
                   0, 0);
    qr_expect_get(&tsd, &db, &q, "/api/query?start=1356998400&m=sum:agg.mis", 0, 0);
    assert_int_equal(qr_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(aggregators_listed),
        cmocka_unit_test(every_aggregator_aligned_integers),
        cmocka_unit_test(every_aggregator_aligned_doubles),
        cmocka_unit_test(every_aggregator_misaligned_mixed),
        cmocka_unit_test(every_aggregator_misaligned_integers),
        cmocka_unit_test(hand_computed_values),
        cmocka_unit_test(interpolation_uses_scanned_points_outside_range),
        cmocka_unit_test(every_aggregator_grouped),
        cmocka_unit_test(many_values),
        cmocka_unit_test(duplicates_and_open_end),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
