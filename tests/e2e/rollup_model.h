/* rollup_model.h -- the model the rollup tests compare with: points as the
 * test sent them, and an aggregator's value over one bucket computed by
 * hand from them (never by the code under test). Header-only, for
 * tests/e2e/test_rollup*.c. */
#ifndef OCT_TEST_ROLLUP_MODEL_H
#define OCT_TEST_ROLLUP_MODEL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_client.h"
#include "common/json.h"

/* A rollup config with the TSD's 1h and 1d tables (r1h, r1d) beside raw data. */
#define RM_CONF_1H_1D                                                                              \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"r1h\",\"preAggregationTable\":\"p1h\",\"interval\":\"1h\",\"rowSpan\":\"1d\"},"  \
    "{\"table\":\"r1d\",\"preAggregationTable\":\"p1d\",\"interval\":\"1d\",\"rowSpan\":\"1y\"}]}"

typedef struct {
    long long ts;
    int is_int;
    long long i;
    double f;
} rm_pt_t;

static inline double rm_pv(const rm_pt_t *p)
{
    return p->is_int ? (double)p->i : p->f;
}

/* A random value into p: an integer in [-1000, 1000] or a multiple of
 * 1/1024 within about +-977, so every sum of a few thousand is exact in a
 * double whatever the order. */
static inline void rm_random_value(unsigned *seed, rm_pt_t *p)
{
    p->is_int = rand_r(seed) % 2;
    if (p->is_int)
        p->i = (long long)(rand_r(seed) % 2001) - 1000;
    else
        p->f = ((double)(rand_r(seed) % 2000001) - 1000000.0) / 1024.0;
}

/* <agg> (sum, count, min, max, dev -- the population standard deviation,
 * in two passes --, else avg) of the points of p[0..n) in
 * [b, b + iv_s) into *v. Returns 0 when the bucket has no point. */
static inline int rm_bucket(const rm_pt_t *p, int n, long long b, long long iv_s, const char *agg,
                            double *v)
{
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    long long cnt = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].ts < b || p[i].ts >= b + iv_s) continue;
        sum += rm_pv(&p[i]);
        cnt++;
        mn = fmin(mn, rm_pv(&p[i]));
        mx = fmax(mx, rm_pv(&p[i]));
    }
    if (!cnt) return 0;
    if (!strcmp(agg, "dev")) {
        double mean = sum / (double)cnt, ss = 0;
        for (int i = 0; i < n; i++)
            if (p[i].ts >= b && p[i].ts < b + iv_s)
                ss += (rm_pv(&p[i]) - mean) * (rm_pv(&p[i]) - mean);
        *v = sqrt(ss / (double)cnt);
        return 1;
    }
    *v = !strcmp(agg, "sum")     ? sum
         : !strcmp(agg, "count") ? (double)cnt
         : !strcmp(agg, "min")   ? mn
         : !strcmp(agg, "max")   ? mx
                                 : sum / (double)cnt;
    return 1;
}

/* The answer of GET target must be exactly one series whose dps equal
 * ts[0..n), v[0..n) (to rel_tol relative; 0 = exactly), or no series at
 * all when n is 0. Needs cmocka included before. */
static inline void rm_expect(const tu_tsd_t *t, const char *what, const char *target,
                             const long long *ts, const double *v, int n, double rel_tol)
{
    char *r = ac_req_ok(t, "GET", target, NULL, 200);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *jv;
    oct_errbuf_t eb;
    if (json_parse(&a, r, strlen(r), JSON_ALLOW_NONFINITE, &jv, &eb) || jv->type != JSON_ARRAY)
        fail_msg("%s: not a JSON array: %s", what, r);
    if (n == 0) {
        if (jv->n != 0) fail_msg("%s %s: want no series, got %s", what, target, r);
    } else {
        if (jv->n != 1) fail_msg("%s %s: want one series, got %s", what, target, r);
        const json_value_t *dps = json_obj_get(jv->child, "dps");
        if (!dps || (int)dps->n != n) fail_msg("%s %s: want %d points, got %s", what, target, n, r);
        int i = 0;
        for (const json_value_t *d = dps->child; d; d = d->next, i++) {
            double got;
            long long tts = strtoll(d->key, NULL, 10);
            if (json_number_double(d, &got)) fail_msg("%s: not a number in %s", what, r);
            double tol = rel_tol * (fabs(v[i]) > 1 ? fabs(v[i]) : 1);
            if (tts != ts[i] || fabs(got - v[i]) > tol)
                fail_msg("%s %s: point %d: got %lld=%.17g, want %lld=%.17g", what, target, i, tts,
                         got, ts[i], v[i]);
        }
    }
    json_arena_free(&a);
    free(r);
}

#endif
