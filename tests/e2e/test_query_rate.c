/* test_query_rate.c -- rates through /api/query against the real daemon:
 * plain rate over integers, doubles and millisecond steps (the first point
 * yields nothing), counter rates with resets under the default counterMax,
 * an explicit counterMax, resetValue and dropResets (POST rateOptions and
 * the GET rate{counter,max,reset} / rate{dropcounter} forms), rates of
 * misaligned series aggregated with the previous rate (no LERP), and the
 * m= form Grafana builds: sum:1m-avg-null:rate{counter,,1000}:metric{host=*}.
 * Expectations: the model in query_ref.h plus hand-computed values
 * (docs/query.md section 5, OpenTSDB's RateSpan). */
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

static void build_db(void)
{
    /* gauges */
    qr_series_t *a = qr_series(&db, "rate.g", "host=a");
    qr_i(a, T0 + 0, 100);
    qr_i(a, T0 + 10, 150);
    qr_i(a, T0 + 30, 140);
    qr_i(a, T0 + 60, 200);
    qr_i_ms(a, T0 * 1000 + 61500, 230);
    qr_i(a, T0 + 90, 230);
    qr_series_t *b = qr_series(&db, "rate.g", "host=b");
    qr_f(b, T0 + 5, 1.5);
    qr_f(b, T0 + 25, 3.0);
    qr_f(b, T0 + 45, 2.25);
    qr_i(b, T0 + 65, 7);
    /* counters with resets */
    qr_series_t *c = qr_series(&db, "rate.c", "host=a");
    const int64_t cv[] = {100, 200, 50, 150, 1000, 20, 30};
    for (int k = 0; k < 7; k++)
        qr_i(c, T0 + 10 * k, cv[k]);
    qr_series_t *d = qr_series(&db, "rate.c", "host=b");
    qr_f(d, T0 + 5, 0.5);
    qr_f(d, T0 + 15, 10.5);
    qr_f(d, T0 + 25, 2.5);
    qr_f(d, T0 + 35, 12.5);
    /* Grafana-style: counters every 20 s for 10 minutes, one reset each */
    for (int h = 0; h < 2; h++) {
        qr_series_t *g = qr_series(&db, "rate.gf", h ? "host=b" : "host=a");
        int64_t v = h ? 5000 : 10;
        for (int k = 0; k < 30; k++) {
            if (k == (h ? 7 : 19))
                v = 3; /* reset */
            else
                v += 37 * k + 11 * h;
            qr_i(g, T0 + 20 * k, v);
        }
    }
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

/* Value at key `key` of the response series whose tag host == h. */
static int dp_of(const qr_resp_t *r, const char *h, const char *key, double *out)
{
    if (r->status != 200 || !r->v || r->v->type != JSON_ARRAY) return 0;
    for (const json_value_t *el = r->v->child; el; el = el->next) {
        const json_value_t *tags = json_obj_get(el, "tags");
        const json_value_t *hv = tags ? json_obj_get(tags, "host") : NULL;
        if (h && (!hv || !json_str_eq(hv, h))) continue;
        const json_value_t *dps = json_obj_get(el, "dps");
        const json_value_t *v = dps ? json_obj_get(dps, key) : NULL;
        return v && !json_number_double(v, out);
    }
    return 0;
}

static void expect_points(const char *target, const char *body, const char *host, int n,
                          const char *const *keys, const double *want)
{
    qr_resp_t r;
    qr_req(&tsd, body ? "POST" : "GET", target, body, &r);
    for (int i = 0; i < n; i++) {
        double got = NAN;
        if (!dp_of(&r, host, keys[i], &got) || !(fabs(got - want[i]) <= 1e-9 * fabs(want[i])))
            qr_fail("%s %s host=%s at %s: got %.17g, want %.17g: %.500s", target, body ? body : "",
                    host ? host : "*", keys[i], got, want[i], r.body);
    }
    /* no more points than the expected ones */
    for (const json_value_t *el = r.v && r.v->type == JSON_ARRAY ? r.v->child : NULL; el;
         el = el->next) {
        const json_value_t *tags = json_obj_get(el, "tags");
        const json_value_t *hv = tags ? json_obj_get(tags, "host") : NULL;
        if (host && (!hv || !json_str_eq(hv, host))) continue;
        const json_value_t *dps = json_obj_get(el, "dps");
        if (!dps || (int)dps->n != n)
            qr_fail("%s %s host=%s: %u points, want %d: %.500s", target, body ? body : "",
                    host ? host : "*", dps ? dps->n : 0, n, r.body);
        break;
    }
    qr_resp_free(&r);
}

/* Rates worked out by hand. */
static void rates_by_hand(void **state)
{
    (void)state;
    qr_failures = 0;
    /* gauge a: (150-100)/10, (140-150)/20, (200-140)/30, (230-200)/1.5, 0/28.5 */
    const char *ka[] = {"1356998410", "1356998430", "1356998460", "1356998461", "1356998490"};
    const double va[] = {5, -0.5, 2, 20, 0};
    expect_points("/api/query?start=1356998400&end=1356998500&m=sum:rate:rate.g{host=a}", NULL, "a",
                  5, ka, va);
    /* the same with ms keys: the ms step lands at +61.5 s */
    const char *kam[] = {"1356998410000", "1356998430000", "1356998460000", "1356998461500",
                         "1356998490000"};
    expect_points("/api/query?start=1356998400&end=1356998500&m=sum:rate:rate.g{host=a}&ms", NULL,
                  "a", 5, kam, va);
    /* counter a: 100 200 50 150 1000 20 30 every 10 s */
    const char *kc[] = {"1356998410", "1356998420", "1356998430",
                        "1356998440", "1356998450", "1356998460"};
    const double plain[] = {10, -15, 10, 85, -98, 1};
    expect_points("/api/query?start=1356998400&end=1356998500&m=sum:rate:rate.c{host=a}", NULL, "a",
                  6, kc, plain);
    const double big = 9223372036854775807.0;
    const double dflt[] = {10, (big - 200 + 50) / 10, 10, 85, (big - 1000 + 20) / 10, 1};
    expect_points("/api/query?start=1356998400&end=1356998500&m=sum:rate{counter}:rate.c{host=a}",
                  NULL, "a", 6, kc, dflt);
    const double max1000[] = {10, 85, 10, 85, 2, 1};
    expect_points(
        "/api/query?start=1356998400&end=1356998500&m=sum:rate{counter,1000}:rate.c{host=a}", NULL,
        "a", 6, kc, max1000);
    /* resetValue 50: a reset whose rate exceeds 50 becomes 0; 85 after a
     * normal step stays (resetValue only applies to resets) */
    const double reset50[] = {10, 0, 10, 85, 2, 1};
    expect_points(
        "/api/query?start=1356998400&end=1356998500&m=sum:rate{counter,1000,50}:rate.c{host=a}",
        NULL, "a", 6, kc, reset50);
    /* dropResets: the reset points yield nothing, the next rate starts from them */
    const char *kd[] = {"1356998410", "1356998430", "1356998440", "1356998460"};
    const double drop[] = {10, 10, 85, 1};
    expect_points(
        "/api/query?start=1356998400&end=1356998500&m=sum:rate{dropcounter}:rate.c{host=a}", NULL,
        "a", 4, kd, drop);
    expect_points("/api/query",
                  qr_body(T0, T0 + 100,
                          "\"aggregator\":\"sum\",\"metric\":"
                          "\"rate.c\",\"tags\":{\"host\":\"a\"},\"rate\":true,"
                          "\"rateOptions\":{\"counter\":true,\"dropResets\":true}",
                          ""),
                  "a", 4, kd, drop);
    expect_points("/api/query",
                  qr_body(T0, T0 + 100,
                          "\"aggregator\":\"sum\",\"metric\":"
                          "\"rate.c\",\"tags\":{\"host\":\"a\"},\"rate\":true,"
                          "\"rateOptions\":{\"counter\":true,\"counterMax\":1000,"
                          "\"resetValue\":50}",
                          ""),
                  "a", 6, kc, reset50);
    /* double counter b: 0.5 10.5 2.5 12.5 at +5 +15 +25 +35, counterMax 1000 */
    const char *kb[] = {"1356998415", "1356998425", "1356998435"};
    const double vb[] = {1, (1000 - 10.5 + 2.5) / 10, 1};
    expect_points(
        "/api/query?start=1356998400&end=1356998500&m=sum:rate{counter,1000}:rate.c{host=b}", NULL,
        "b", 3, kb, vb);
    assert_int_equal(qr_failures, 0);
}

static void rate_case(const char *metric, const char *agg, long long start, long long end,
                      int counter, long long max, long long reset, int drop, const char *tags)
{
    qr_q_t q = qr_q(metric, agg, start, end);
    q.rate = 1;
    q.counter = counter;
    q.counter_max = max;
    q.reset_value = reset;
    q.drop_resets = drop;
    char target[512], opts[128] = "rate", filt[64] = "";
    if (tags) {
        qr_filter(&q, QR_WILDCARD, "host", "*", 1);
        snprintf(filt, sizeof filt, "{%s}", tags);
    }
    if (counter)
        snprintf(opts, sizeof opts, "rate{%s,%lld,%lld}", drop ? "dropcounter" : "counter", max,
                 reset);
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:%s:%s%s", start, end, agg,
             opts, metric, filt);
    qr_expect_get(&tsd, &db, &q, target, 0, 0);
    char sub[512];
    snprintf(sub, sizeof sub,
             "\"aggregator\":\"%s\",\"metric\":\"%s\",\"rate\":true,\"rateOptions\":{"
             "\"counter\":%s,\"counterMax\":%lld,\"resetValue\":%lld,\"dropResets\":%s}%s",
             agg, metric, counter ? "true" : "false", max, reset, drop ? "true" : "false",
             tags ? ",\"tags\":{\"host\":\"*\"}" : "");
    qr_expect_post(&tsd, &db, &q, "/api/query?arrays", qr_body(start, end, sub, ""), 0, 1);
}

/* Rates of misaligned series aggregated: the previous rate stands in for a
 * series without a point (no LERP), for every interpolation kind. */
static void rates_aggregated(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *aggs[] = {"sum", "zimsum", "avg", "max", "min", "count", "pfsum", "none", "dev"};
    for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++) {
        rate_case("rate.g", aggs[i], T0, T0 + 100, 0, INT64_MAX, 0, 0, NULL);
        rate_case("rate.g", aggs[i], T0, T0 + 100, 0, INT64_MAX, 0, 0, "host=*");
        rate_case("rate.c", aggs[i], T0, T0 + 100, 1, 1000, 0, 0, NULL);
        rate_case("rate.c", aggs[i], T0, T0 + 100, 1, 1000, 0, 1, NULL);
        rate_case("rate.c", aggs[i], T0, T0 + 100, 1, 1000, 90, 0, "host=*");
        rate_case("rate.c", aggs[i], T0, T0 + 100, 1, INT64_MAX, 0, 0, NULL);
    }
    /* by hand: sum of both gauges' rates at +25, where only b has a rate
     * ((3.0-1.5)/20 = 0.075); a stands in with its latest rate, the one at +10
     * ((150-100)/10 = 5): 5.075 */
    const char *k[] = {"1356998425"};
    const double v[] = {5.075};
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356998500&m=sum:rate:rate.g", NULL, &r);
    double got = NAN;
    if (!dp_of(&r, NULL, k[0], &got) || fabs(got - v[0]) > 1e-9 * v[0])
        qr_fail("sum of rates at +25: got %.17g want %.17g: %s", got, v[0], r.body);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* What Grafana sends: downsample, fill null, counter rate with a reset
 * value, group by host, as GET m= and as its POST body. */
static void grafana_forms(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_q_t q = qr_q("rate.gf", "sum", T0, T0 + 599);
    q.ds = QR_DS_FIXED;
    q.ds_ms = 60000;
    q.ds_agg = "avg";
    q.fill = QR_FILL_NULL;
    q.rate = 1;
    q.counter = 1;
    q.reset_value = 1000;
    qr_filter(&q, QR_WILDCARD, "host", "*", 1);
    qr_expect_get(&tsd, &db, &q,
                  "/api/query?start=1356998400&end=1356998999"
                  "&m=sum:1m-avg-null:rate%7Bcounter,,1000%7D:rate.gf%7Bhost=*%7D",
                  0, 0);
    qr_expect_get(&tsd, &db, &q,
                  "/api/query?start=1356998400&end=1356998999"
                  "&m=sum:1m-avg-null:rate{counter,,1000}:rate.gf{host=*}",
                  0, 0);
    /* Grafana's frontend POST: ms start/end, msResolution, globalAnnotations,
     * showQuery, filters */
    qr_expect_post(&tsd, &db, &q, "/api/query",
                   "{\"start\":1356998400000,\"end\":1356998999000,\"queries\":[{\"metric\":"
                   "\"rate.gf\",\"aggregator\":\"sum\",\"downsample\":\"1m-avg-null\","
                   "\"rate\":true,\"rateOptions\":{\"counter\":true,\"resetValue\":1000},"
                   "\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"*\","
                   "\"groupBy\":true}]}],\"msResolution\":true,\"globalAnnotations\":true,"
                   "\"showQuery\":true}",
                   1, 0);
    /* the Go backend: {start, end, queries} and ?arrays=true */
    qr_expect_post(&tsd, &db, &q, "/api/query?arrays=true",
                   "{\"start\":1356998400000,\"end\":1356998999000,\"queries\":[{\"metric\":"
                   "\"rate.gf\",\"aggregator\":\"sum\",\"downsample\":\"1m-avg-null\","
                   "\"rate\":true,\"rateOptions\":{\"counter\":true,\"resetValue\":1000},"
                   "\"tags\":{\"host\":\"*\"}}]}",
                   0, 1);
    assert_int_equal(qr_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rates_by_hand),
        cmocka_unit_test(rates_aggregated),
        cmocka_unit_test(grafana_forms),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
