/* test_query_downsample.c -- downsampling through /api/query against the
 * real daemon: every aggregator as a downsampler, bucket alignment to epoch
 * multiples, the fill policies none / nan ("NaN") / null (null) / zero with
 * cross-series aggregation over the filled buckets, `0all` (one bucket at
 * start, `end` included), the last bucket holding points after `end`
 * (docs/query.md section 7, scan window), second and millisecond data mixed with
 * msResolution on and off, arrays=true, and calendar downsampling (1dc across
 * the 2023 DST change in Europe/Berlin, UTC days, Sunday weeks, months),
 * whose expectations are worked out by hand. Everything else is compared with
 * the independent model in query_ref.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "query_ref.h"

#define T0 1356998400LL /* 2013-01-01 00:00:00 UTC */

static const char *const daemon_args[] = {"--auto-metric", NULL};
static tu_tsd_t tsd;
static qr_db_t db;
static long long now_s;

static const char *const ds_aggs[] = {
    "avg",    "count",  "dev",    "diff",    "ep50r3",    "ep50r7", "ep75r3", "ep75r7", "ep90r3",
    "ep90r7", "ep95r3", "ep95r7", "ep999r3", "ep999r7",   "ep99r3", "ep99r7", "first",  "last",
    "max",    "median", "mimmax", "mimmin",  "min",       "mult",   "p50",    "p75",    "p90",
    "p95",    "p99",    "p999",   "pfsum",   "squareSum", "sum",    "zimsum",
};
#define N_DS_AGGS (sizeof ds_aggs / sizeof *ds_aggs)

#define BERLIN_D25 1679698800LL /* 2023-03-25 00:00 CET  = 2023-03-24T23:00Z */
#define BERLIN_D26 1679785200LL /* 2023-03-26 00:00 CET  = 2023-03-25T23:00Z */
#define BERLIN_D27 1679868000LL /* 2023-03-27 00:00 CEST = 2023-03-26T22:00Z */
#define UTC_D25    1679702400LL
#define UTC_D26    1679788800LL
#define UTC_D27    1679875200LL
#define UTC_JAN01  1672531200LL /* a Sunday */
#define UTC_JAN08  1673136000LL
#define UTC_JAN15  1673740800LL
#define UTC_FEB01  1675209600LL
#define UTC_MAR01  1677628800LL

static void build_db(void)
{
    /* ds.a host=a: integers every 10 s over 10 minutes, minute 3 missing */
    qr_series_t *a = qr_series(&db, "ds.a", "host=a");
    for (int k = 0; k < 60; k++) {
        if (k >= 18 && k < 24) continue;
        qr_i(a, T0 + 10 * k, (k * 7) % 23 - 5);
    }
    /* host=b: doubles every 15 s from +120 to +480 */
    qr_series_t *b = qr_series(&db, "ds.a", "host=b");
    for (int k = 0; k <= 24; k++)
        qr_f(b, T0 + 120 + 15 * k, 0.25 * ((k * 5) % 11) - 1.0);
    /* seconds and milliseconds mixed, no two points in one second per series */
    qr_series_t *m = qr_series(&db, "ds.ms", "host=a");
    qr_i(m, T0 + 0, 10);
    qr_i_ms(m, T0 * 1000 + 1500, 20);
    qr_f_ms(m, T0 * 1000 + 2250, 2.5);
    qr_i_ms(m, T0 * 1000 + 3999, 40);
    qr_i(m, T0 + 4, 50);
    qr_series_t *m2 = qr_series(&db, "ds.ms", "host=b");
    qr_i_ms(m2, T0 * 1000 + 500, 7);
    qr_f_ms(m2, T0 * 1000 + 2600, 9.5);
    qr_i_ms(m2, T0 * 1000 + 4100, 3);
    /* calendar: hourly ones over the three Berlin days around the DST change */
    qr_series_t *h = qr_series(&db, "cal.h", "host=a");
    for (int k = 0; k < 71; k++)
        qr_i(h, BERLIN_D25 + 3600LL * k, 1);
    /* ten minutes ago, for relative times */
    now_s = (long long)time(NULL);
    qr_i(qr_series(&db, "ds.now", "host=a"), now_s - 600, 42);
    /* calendar: daily ones at noon UTC, 2023-01-01 .. 2023-03-31 */
    qr_series_t *d = qr_series(&db, "cal.d", "host=a");
    for (int k = 0; k < 90; k++)
        qr_i(d, UTC_JAN01 + 86400LL * k + 43200, 1);
}

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1); /* the daemon's default zone (tsd.core.timezone unset) */
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

static const char *const fill_names[] = {"none", "nan", "null", "zero"};

/* One downsampled query, POST and GET, compared with the model. */
static void ds_case(const char *metric, const char *agg, long long start, long long end,
                    long long iv_s, const char *iv, const char *dsagg, int fill)
{
    qr_q_t q = qr_q(metric, agg, start, end);
    q.ds = QR_DS_FIXED;
    q.ds_ms = iv_s * 1000;
    q.ds_agg = dsagg;
    q.fill = fill;
    char spec[64], sub[256], target[512];
    if (fill == QR_FILL_NONE && (iv_s & 1)) /* the default policy, also spelled out */
        snprintf(spec, sizeof spec, "%s-%s", iv, dsagg);
    else
        snprintf(spec, sizeof spec, "%s-%s-%s", iv, dsagg, fill_names[fill]);
    snprintf(sub, sizeof sub, "\"aggregator\":\"%s\",\"metric\":\"%s\",\"downsample\":\"%s\"", agg,
             metric, spec);
    qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(start, end, sub, ""), 0, 0);
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:%s:%s", start, end, agg,
             spec, metric);
    qr_expect_get(&tsd, &db, &q, target, 0, 0);
}

static void every_aggregator_as_downsampler(void **state)
{
    (void)state;
    qr_failures = 0;
    for (size_t i = 0; i < N_DS_AGGS; i++) {
        ds_case("ds.a", "sum", T0, T0 + 599, 60, "1m", ds_aggs[i], QR_FILL_NONE);
        ds_case("ds.a", "none", T0, T0 + 599, 60, "1m", ds_aggs[i], QR_FILL_NONE);
        ds_case("ds.a", "avg", T0, T0 + 599, 45, "45s", ds_aggs[i], QR_FILL_NONE);
    }
    assert_int_equal(qr_failures, 0);
}

static void fill_policies(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *dsaggs[] = {"sum", "avg", "count", "max", "dev", "p90"};
    const char *aggs[] = {"sum", "none", "avg", "zimsum", "count", "min", "mimmax", "last"};
    for (int fill = 0; fill < 4; fill++)
        for (size_t i = 0; i < sizeof dsaggs / sizeof *dsaggs; i++)
            for (size_t j = 0; j < sizeof aggs / sizeof *aggs; j++) {
                /* past the data: trailing buckets are all empty */
                ds_case("ds.a", aggs[j], T0, T0 + 900, 60, "1m", dsaggs[i], fill);
                ds_case("ds.a", aggs[j], T0, T0 + 599, 30, "30s", dsaggs[i], fill);
            }
    assert_int_equal(qr_failures, 0);
}

/* Values of one response series as text, for hand-written expectations. */
static const json_value_t *series0(const qr_resp_t *r)
{
    if (r->status != 200 || !r->v || r->v->type != JSON_ARRAY || r->v->n < 1) return NULL;
    return json_obj_get(r->v->child, "dps");
}

/* Expects dps exactly {keys[i]: vals[i]} (vals as JSON text: "NaN" string, null, numbers). */
static void expect_dps(const char *what, const qr_resp_t *r, int n, const long long *keys,
                       const char *const *vals)
{
    const json_value_t *dps = series0(r);
    if (!dps || (int)dps->n != n) {
        qr_fail("%s: want %d points: %d %.600s", what, n, r->status, r->body);
        return;
    }
    int i = 0;
    for (const json_value_t *d = dps->child; d; d = d->next, i++) {
        char key[32];
        snprintf(key, sizeof key, "%lld", keys[i]);
        int key_ok = d->key_len == strlen(key) && !memcmp(d->key, key, d->key_len);
        int val_ok;
        if (!strcmp(vals[i], "null"))
            val_ok = d->type == JSON_NULL;
        else if (!strcmp(vals[i], "\"NaN\""))
            val_ok = json_str_eq(d, "NaN");
        else {
            double got, want = strtod(vals[i], NULL);
            val_ok = d->type == JSON_NUMBER && !json_number_double(d, &got) &&
                     fabs(got - want) <= 1e-9 * fabs(want);
        }
        if (!key_ok || !val_ok)
            qr_fail("%s: point %d: want %s:%s in %.600s", what, i, key, vals[i], r->body);
    }
}

/* Fill policies worked out by hand on host=a of ds.a (minute 3 empty). */
static void fill_by_hand(void **state)
{
    (void)state;
    qr_failures = 0;
    /* host=a, value (7k mod 23) - 5 at +10k s: minute 2 (k = 12..17) holds
     * 10, 17, 1, 8, 15, -1 -> sum 50; minute 3 is empty; minute 4 (k = 24..29)
     * holds 2, 9, 16, 0, 7, 14 -> sum 48. */
    const char *fills[] = {"nan", "null", "zero"};
    const char *mid[] = {"\"NaN\"", "null", "0"};
    for (int f = 0; f < 3; f++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"start\":%lld,\"end\":%lld,\"queries\":[{\"aggregator\":\"sum\","
                 "\"metric\":\"ds.a\",\"downsample\":\"1m-sum-%s\",\"filters\":[{\"type\":"
                 "\"literal_or\",\"tagk\":\"host\",\"filter\":\"a\",\"groupBy\":false}]}]}",
                 T0 + 120, T0 + 299, fills[f]);
        qr_resp_t r;
        qr_req(&tsd, "POST", "/api/query", body, &r);
        long long keys[] = {T0 + 120, T0 + 180, T0 + 240};
        const char *vals[] = {"50", mid[f], "48"};
        expect_dps(fills[f], &r, 3, keys, vals);
        qr_resp_free(&r);
    }
    /* fill none: the empty minute is simply absent */
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998520&end=1356998699&m=sum:1m-sum:ds.a{host=a}",
           NULL, &r);
    long long keys[] = {T0 + 120, T0 + 240};
    const char *vals[] = {"50", "48"};
    expect_dps("none", &r, 2, keys, vals);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* 0all: one bucket stamped `start` holding every point in [start, end],
 * the point exactly at `end` included. */
static void downsample_all(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *aggs[] = {"sum", "count", "avg", "max", "first", "last", "p50", "dev"};
    for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++) {
        qr_q_t q = qr_q("ds.a", "sum", T0 + 30, T0 + 300);
        q.ds = QR_DS_ALL;
        q.ds_agg = aggs[i];
        char sub[256], target[256];
        snprintf(sub, sizeof sub,
                 "\"aggregator\":\"sum\",\"metric\":\"ds.a\",\"downsample\":\"0all-%s\"", aggs[i]);
        qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(T0 + 30, T0 + 300, sub, ""), 0, 0);
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=none:0all-%s:ds.a",
                 T0 + 30, T0 + 300, aggs[i]);
        q.agg = "none";
        qr_expect_get(&tsd, &db, &q, target, 0, 0);
    }
    /* by hand: count over host=a in [+30, +300]: k=3..30 minus k=18..23 -> 22 */
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998430&end=1356998700&m=sum:0all-count:ds.a{host=a}",
           NULL, &r);
    long long keys[] = {T0 + 30};
    const char *vals[] = {"22"};
    expect_dps("0all-count", &r, 1, keys, vals);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* The bucket holding `end` is emitted whole: points after `end` but inside
 * it count (the scan reaches the next interval boundary, docs/query.md section 7). */
static void last_bucket_is_whole(void **state)
{
    (void)state;
    qr_failures = 0;
    ds_case("ds.a", "sum", T0, T0 + 65, 60, "1m", "sum", QR_FILL_NONE);
    ds_case("ds.a", "sum", T0, T0 + 65, 60, "1m", "count", QR_FILL_NONE);
    /* by hand: host=a minute 1 (k = 6..11) holds 14, -2, 5, 12, -4, 3 -> sum 28,
     * four of them after `end` (+65) */
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356998465&m=sum:1m-sum:ds.a{host=a}",
           NULL, &r);
    const json_value_t *dps = series0(&r);
    const json_value_t *v = dps ? json_obj_get(dps, "1356998460") : NULL;
    double got;
    if (!v || json_number_double(v, &got) || got != 28) qr_fail("last bucket: %s", r.body);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* Seconds and milliseconds mixed: raw and downsampled, with keys in ms
 * (msResolution / ms) and in seconds (default). */
static void ms_and_seconds_mixed(void **state)
{
    (void)state;
    qr_failures = 0;
    const char *aggs[] = {"sum", "none", "avg", "zimsum", "max"};
    for (size_t i = 0; i < sizeof aggs / sizeof *aggs; i++) {
        qr_q_t q = qr_q("ds.ms", aggs[i], T0, T0 + 10);
        char sub[128], target[256];
        snprintf(sub, sizeof sub, "\"aggregator\":\"%s\",\"metric\":\"ds.ms\"", aggs[i]);
        qr_expect_post(&tsd, &db, &q, "/api/query",
                       qr_body(T0, T0 + 10, sub, "\"msResolution\":true"), 1, 0);
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:ds.ms&ms", T0, T0 + 10,
                 aggs[i]);
        qr_expect_get(&tsd, &db, &q, target, 1, 0);
        /* seconds keys when msResolution is off (no two points share a second
         * within a series, but the interpolated union does: only host=a) */
        qr_q_t qa = q;
        qr_filter(&qa, QR_LITERAL_OR, "host", "a", 1);
        char sub_a[160];
        snprintf(sub_a, sizeof sub_a,
                 "\"aggregator\":\"%s\",\"metric\":\"ds.ms\",\"tags\":{\"host\":\"a\"}", aggs[i]);
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:ds.ms{host=a}", T0,
                 T0 + 10, aggs[i]);
        qr_expect_get(&tsd, &db, &qa, target, 0, 0);
        qr_expect_post(&tsd, &db, &qa, "/api/query",
                       qr_body(T0, T0 + 10, sub_a, "\"msResolution\":false"), 0, 0);
        /* millisecond and second downsampling */
        qr_q_t qd = q;
        qd.ds = QR_DS_FIXED;
        qd.ds_ms = 500;
        qd.ds_agg = "sum";
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:500ms-sum:ds.ms&ms",
                 T0, T0 + 10, aggs[i]);
        qr_expect_get(&tsd, &db, &qd, target, 1, 0);
        qd.ds_ms = 1000;
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:1s-sum:ds.ms", T0,
                 T0 + 10, aggs[i]);
        qr_expect_get(&tsd, &db, &qd, target, 0, 0);
    }
    /* start/end given in ms select by ms: [T0+1.5 s, T0+3.999 s] */
    qr_q_t q = qr_q("ds.ms", "sum", 0, 0);
    q.start = T0 * 1000 + 1500;
    q.end = T0 * 1000 + 3999;
    qr_filter(&q, QR_LITERAL_OR, "host", "a", 1);
    qr_expect_get(&tsd, &db, &q,
                  "/api/query?start=1356998401500&end=1356998403999&m=sum:ds.ms{host=a}&ms", 1, 0);
    /* by hand: host=a raw with ms keys */
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356998410&m=sum:ds.ms{host=a}&ms", NULL,
           &r);
    long long keys[] = {T0 * 1000, T0 * 1000 + 1500, T0 * 1000 + 2250, T0 * 1000 + 3999,
                        T0 * 1000 + 4000};
    const char *vals[] = {"10", "20", "2.5", "40", "50"};
    expect_dps("ms keys", &r, 5, keys, vals);
    qr_resp_free(&r);
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356998410&m=sum:ds.ms{host=a}", NULL, &r);
    long long skeys[] = {T0, T0 + 1, T0 + 2, T0 + 3, T0 + 4};
    expect_dps("second keys", &r, 5, skeys, vals);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

static void arrays_output(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_q_t q = qr_q("ds.a", "sum", T0, T0 + 900);
    q.ds = QR_DS_FIXED;
    q.ds_ms = 60000;
    q.ds_agg = "avg";
    q.fill = QR_FILL_NULL;
    qr_expect_post(&tsd, &db, &q, "/api/query?arrays=true",
                   qr_body(T0, T0 + 900,
                           "\"aggregator\":\"sum\",\"metric\":\"ds.a\",\"downsample\":"
                           "\"1m-avg-null\"",
                           ""),
                   0, 1);
    qr_expect_get(&tsd, &db, &q,
                  "/api/query?start=1356998400&end=1356999300&m=sum:1m-avg-null:ds.a&arrays", 0, 1);
    q.fill = QR_FILL_NAN;
    qr_expect_post(&tsd, &db, &q, "/api/query?arrays=true",
                   qr_body(T0, T0 + 900,
                           "\"aggregator\":\"sum\",\"metric\":\"ds.a\",\"downsample\":"
                           "\"1m-avg-nan\"",
                           "\"msResolution\":true"),
                   1, 1);
    assert_int_equal(qr_failures, 0);
}

static void calendar_case(const char *what, const char *body, int n, const long long *keys,
                          const char *const *vals)
{
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query", body, &r);
    expect_dps(what, &r, n, keys, vals);
    qr_resp_free(&r);
}

/* Calendar days in Europe/Berlin across the switch to summer time on
 * 2023-03-26: 24, 23 and 24 hourly points. */
static void calendar_days_across_dst(void **state)
{
    (void)state;
    qr_failures = 0;
    long long bkeys[] = {BERLIN_D25, BERLIN_D26, BERLIN_D27};
    const char *bvals[] = {"24", "23", "24"};
    calendar_case("1dc Berlin",
                  "{\"start\":\"2023/03/25-00:00:00\",\"end\":\"2023/03/27-23:59:59\","
                  "\"timezone\":\"Europe/Berlin\",\"queries\":[{\"aggregator\":\"sum\","
                  "\"metric\":\"cal.h\",\"downsample\":\"1dc-sum\"}]}",
                  3, bkeys, bvals);
    calendar_case("1d + useCalendar Berlin",
                  "{\"start\":\"2023/03/25-00:00:00\",\"end\":\"2023/03/27-23:59:59\","
                  "\"timezone\":\"Europe/Berlin\",\"useCalendar\":true,\"queries\":[{"
                  "\"aggregator\":\"sum\",\"metric\":\"cal.h\",\"downsample\":\"1d-sum\"}]}",
                  3, bkeys, bvals);
    calendar_case("1dc Berlin, epoch start/end",
                  "{\"start\":1679698800,\"end\":1679954399,"
                  "\"timezone\":\"Europe/Berlin\",\"queries\":[{\"aggregator\":\"sum\","
                  "\"metric\":\"cal.h\",\"downsample\":\"1dc-count\"}]}",
                  3, bkeys, bvals);
    /* UTC days: the 24th's one point is before start; the 27th ends at 21:00Z */
    long long ukeys[] = {UTC_D25, UTC_D26, UTC_D27};
    const char *uvals[] = {"24", "24", "22"};
    calendar_case("1dc UTC",
                  "{\"start\":\"2023/03/25-00:00:00\",\"end\":\"2023/03/27-23:59:59\","
                  "\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"cal.h\","
                  "\"downsample\":\"1dc-sum\"}]}",
                  3, ukeys, uvals);
    /* a fixed 1d interval ignores the zone: epoch-aligned (UTC) days */
    calendar_case("1d Berlin, not calendar",
                  "{\"start\":\"2023/03/25-00:00:00\",\"end\":\"2023/03/27-23:59:59\","
                  "\"timezone\":\"Europe/Berlin\",\"queries\":[{\"aggregator\":\"sum\","
                  "\"metric\":\"cal.h\",\"downsample\":\"1d-sum\"}]}",
                  3, ukeys, uvals);
    assert_int_equal(qr_failures, 0);
}

/* Calendar weeks start on Sunday (2023-01-01 is one); months on the 1st. */
static void calendar_weeks_and_months(void **state)
{
    (void)state;
    qr_failures = 0;
    long long wkeys[] = {UTC_JAN01, UTC_JAN08, UTC_JAN15};
    const char *wvals[] = {"7", "7", "7"};
    calendar_case("1wc",
                  "{\"start\":\"2023/01/01\",\"end\":\"2023/01/21-23:59:59\",\"queries\":[{"
                  "\"aggregator\":\"sum\",\"metric\":\"cal.d\",\"downsample\":\"1wc-sum\"}]}",
                  3, wkeys, wvals);
    long long mkeys[] = {UTC_JAN01, UTC_FEB01, UTC_MAR01};
    const char *mvals[] = {"31", "28", "31"};
    calendar_case("1nc",
                  "{\"start\":\"2023/01/01\",\"end\":\"2023/03/31-23:59:59\",\"queries\":[{"
                  "\"aggregator\":\"sum\",\"metric\":\"cal.d\",\"downsample\":\"1nc-sum\"}]}",
                  3, mkeys, mvals);
    assert_int_equal(qr_failures, 0);
}

/* A start inside a bucket: that bucket's timestamp is before start and is
 * not emitted, with or without fill (the serializer's [start, end] check). */
static void unaligned_start(void **state)
{
    (void)state;
    qr_failures = 0;
    for (int fill = 0; fill < 4; fill++) {
        ds_case("ds.a", "sum", T0 + 30, T0 + 599, 60, "1m", "sum", fill);
        ds_case("ds.a", "none", T0 + 150, T0 + 451, 60, "1m", "avg", fill);
    }
    assert_int_equal(qr_failures, 0);
}

/* The time forms of start/end select the same data (docs/query.md section 2). */
static void time_forms(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_q_t q = qr_q("ds.a", "sum", T0, T0 + 300);
    const char *forms[][2] = {
        {"1356998400", "1356998700"},
        {"1356998400000", "1356998700000"},
        {"2013/01/01-00:00:00", "2013/01/01-00:05:00"},
        {"2013/01/01%2000:00:00", "2013/01/01%2000:05:00"},
        {"2013/01/01-00:00", "2013/01/01-00:05"},
        {"2013/01/01", "2013/01/01-00:05"},
        {"1356998400.000", "1356998700.000"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%s&end=%s&m=sum:ds.a", forms[i][0],
                 forms[i][1]);
        qr_expect_get(&tsd, &db, &q, target, 0, 0);
    }
    qr_expect_post(&tsd, &db, &q, "/api/query",
                   "{\"start\":\"2013/01/01-01:00:00\",\"end\":\"2013/01/01-01:05:00\","
                   "\"timezone\":\"Europe/Berlin\",\"queries\":[{\"aggregator\":\"sum\","
                   "\"metric\":\"ds.a\"}]}",
                   0, 0);
    /* relative: the point from ten minutes ago */
    qr_q_t qn = qr_q("ds.now", "sum", now_s - 3600, now_s + 60);
    const char *rel[] = {"1h-ago", "60m-ago", "3600s-ago", "1d-ago",
                         "1w-ago", "1n-ago",  "1y-ago",    "3600000ms-ago"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%s&m=sum:ds.now", rel[i]);
        qr_expect_get(&tsd, &db, &qn, target, 0, 0);
        snprintf(target, sizeof target, "/api/query?start=%s&end=now&m=sum:ds.now", rel[i]);
        qr_expect_get(&tsd, &db, &qn, target, 0, 0);
    }
    assert_int_equal(qr_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_aggregator_as_downsampler),
        cmocka_unit_test(fill_policies),
        cmocka_unit_test(fill_by_hand),
        cmocka_unit_test(downsample_all),
        cmocka_unit_test(last_bucket_is_whole),
        cmocka_unit_test(ms_and_seconds_mixed),
        cmocka_unit_test(arrays_output),
        cmocka_unit_test(calendar_days_across_dst),
        cmocka_unit_test(calendar_weeks_and_months),
        cmocka_unit_test(unaligned_start),
        cmocka_unit_test(time_forms),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
