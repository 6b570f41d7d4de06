/* test_rollup_split.c -- split rollup queries (tsd.rollups.split_query.enable,
 * docs/rollups.md "Split queries") over the real daemon, with data stamped
 * relative to the real clock so that `now - delaySla` falls inside it:
 *   - sla: client rollups that differ from the raw points of the same hours
 *     (sum 1000 + k where raw data sums to 3k + 1), a 1h table with
 *     delaySla 2h; 1h and 2h downsamples read the table before the bucket
 *     holding now - 2h and raw data from it on (that bucket whole from raw),
 *     for every rollupUsage; ROLLUP_RAW reads raw only; a range wholly after
 *     the SLA point reads raw only, one wholly before it rollups only;
 *   - pending: with tsd.rollups.auto and no delaySla, hours still in the
 *     head (not rolled up yet) are read from raw data, never as an empty
 *     rollup table; after a restart (every closed hour rolled up) a client
 *     rollup shows the table is read up to the hour not closed yet, and a
 *     late point makes its hour raw again.
 * Expected values come from a model of what this test wrote, split at the
 * point computed here from the clock (a query that straddles an hour
 * boundary of the clock is asked again). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "api_client.h"
#include "rollup_model.h"
#include "common/json.h"

#define CONF(sla)                                                                                  \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1},\"intervals\":["                                  \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"r1h\",\"preAggregationTable\":\"p1h\",\"interval\":\"1h\",\"rowSpan\":"          \
    "\"1d\"" sla "}]}"

#define MAXP 64

/* the model: raw points and the client's 1h sums */
typedef struct {
    long long ts;
    double v;
} mp_t;
static mp_t g_raw[MAXP], g_ru[MAXP];
static int g_nraw, g_nru;

static void raw_add(tu_tsd_t *t, long long ts, double v)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"s.r\",\"timestamp\":%lld,\"value\":%.17g,\"tags\":{\"h\":\"a\"}}", ts,
             v);
    char *r = ac_req_ok(t, "POST", "/api/put", body, 204);
    free(r);
    g_raw[g_nraw++] = (mp_t){ts, v};
}

static void ru_add(tu_tsd_t *t, long long hour, double v)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"s.r\",\"timestamp\":%lld,\"value\":%.17g,\"tags\":{\"h\":\"a\"},"
             "\"interval\":\"1h\",\"aggregator\":\"sum\"}",
             hour, v);
    char *r = ac_req_ok(t, "POST", "/api/rollup", body, 204);
    free(r);
    for (int i = 0; i < g_nru; i++)
        if (g_ru[i].ts == hour) {
            g_ru[i].v = v;
            return;
        }
    g_ru[g_nru++] = (mp_t){hour, v};
}

/* The sums of m[0..n) in [b, b + iv) into *v; 0 when none. */
static int bucket(const mp_t *m, int n, long long b, long long iv, double *v)
{
    int any = 0;
    *v = 0;
    for (int i = 0; i < n; i++)
        if (m[i].ts >= b && m[i].ts < b + iv) {
            *v += m[i].v;
            any = 1;
        }
    return any;
}

static long long floor_to(long long a, long long b)
{
    return a / b * b; /* the clock is positive */
}

/* Does the answer r hold exactly one series whose dps are ts/v[0..n) (none
 * when n is 0)? */
static int same(const char *r, const long long *ts, const double *v, int n)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *jv;
    oct_errbuf_t eb;
    int ok = !json_parse(&a, r, strlen(r), JSON_ALLOW_NONFINITE, &jv, &eb) &&
             jv->type == JSON_ARRAY && (int)jv->n == (n ? 1 : 0);
    if (ok && n) {
        const json_value_t *dps = json_obj_get(jv->child, "dps");
        ok = dps && (int)dps->n == n;
        int i = 0;
        for (const json_value_t *d = ok ? dps->child : NULL; d && ok; d = d->next, i++) {
            double got;
            ok = !json_number_double(d, &got) && strtoll(d->key, NULL, 10) == ts[i] &&
                 fabs(got - v[i]) <= 1e-12 * (fabs(v[i]) > 1 ? fabs(v[i]) : 1);
        }
    }
    json_arena_free(&a);
    return ok;
}

/* GET m=sum:<iv>-sum:<usage>:s.r over [start, end]: buckets before the one
 * holding split(now) from the client's rollups, the rest from raw points.
 * Asked again when the clock crossed that bucket's end meanwhile. */
static void expect_split(tu_tsd_t *t, const char *what, long long iv, const char *usage,
                         long long start, long long end, long long (*split)(long long now))
{
    char target[512], *r = NULL;
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:%llds-sum:%s%ss.r", start,
             end, iv, usage, *usage ? ":" : "");
    for (int attempt = 0; attempt < 3; attempt++) {
        long long cut = floor_to(split((long long)time(NULL)), iv);
        long long ts[MAXP];
        double v[MAXP];
        int n = 0;
        for (long long b = floor_to(start, iv); b <= end; b += iv) {
            if (b < start) continue; /* a bucket before the start is not shown */
            int any =
                b < cut ? bucket(g_ru, g_nru, b, iv, &v[n]) : bucket(g_raw, g_nraw, b, iv, &v[n]);
            if (any) ts[n++] = b;
        }
        free(r);
        r = ac_req_ok(t, "GET", target, NULL, 200);
        if (same(r, ts, v, n)) {
            free(r);
            return;
        }
        if (floor_to(split((long long)time(NULL)), iv) == cut) break;
    }
    fail_msg("%s %s: got %s", what, target, r);
}

static long long split_sla(long long now)
{
    return now - 7200;
}

static long long split_never(long long now)
{
    (void)now;
    return 0; /* everything from raw data */
}

static long long split_none(long long now)
{
    (void)now;
    return (long long)1 << 40; /* everything from the rollup table */
}

static long long g_mid;

/* the hour not closed yet (the flush's 60 s grace): never rolled up */
static long long split_open(long long now)
{
    return floor_to(now - 60, 3600);
}

static long long split_mid(long long now)
{
    (void)now;
    return g_mid;
}

/* Split queries on; auto_on: tsd.rollups.auto and no delaySla, else a 2h
 * delaySla and client rollups only. */
static const char *g_args[] = {"--auto-metric",
                               "--set",
                               "tsd.rollups.enable=true",
                               "--set",
                               "tsd.rollups.split_query.enable=true",
                               "--set",
                               NULL,
                               "--set",
                               NULL,
                               NULL};

static void start(tu_tsd_t *t, int auto_on, int fresh)
{
    if (fresh) { /* a new data dir, an empty model */
        memset(t, 0, sizeof *t);
        g_nraw = g_nru = 0;
    }
    g_args[6] = auto_on ? "tsd.rollups.auto=true" : "tsd.rollups.auto=false";
    g_args[8] = auto_on ? "tsd.rollups.config=" CONF("")
                        : "tsd.rollups.config=" CONF(",\"delaySla\":\"2h\"");
    assert_int_equal(tu_tsd_start(t, g_args), 0);
}

static void sla(void **state)
{
    (void)state;
    tu_tsd_t t;
    start(&t, 0, 1);
    long long now = (long long)time(NULL);
    long long h = floor_to(now, 3600);
    long long s0 = floor_to(h - 8 * 3600, 7200); /* 2h-aligned: whole 2h buckets */
    for (int k = 0; s0 + 3600LL * k <= h; k++) {
        long long hk = s0 + 3600LL * k;
        if (hk + 60 <= now) raw_add(&t, hk + 60, k);
        if (hk + 1800 <= now) raw_add(&t, hk + 1800, 2 * k + 1);
        ru_add(&t, hk, 1000 + k);
    }
    static const char *const usages[] = {"", "rollup_nofallback", "rollup_fallback",
                                         "rollup_fallback_raw"};
    for (int u = 0; u < 4; u++) {
        expect_split(&t, "1h", 3600, usages[u], s0, now, split_sla);
        expect_split(&t, "2h", 7200, usages[u], s0, now, split_sla);
        /* wholly after the SLA point: raw only; wholly before: rollups only */
        expect_split(&t, "after", 3600, usages[u], h - 3600 + 1, now, split_never);
        expect_split(&t, "before", 3600, usages[u], s0, h - 4 * 3600 - 1, split_none);
    }
    expect_split(&t, "raw", 3600, "rollup_raw", s0, now, split_never);
    tu_tsd_destroy(&t);
}

static void pending(void **state)
{
    (void)state;
    tu_tsd_t t;
    start(&t, 1, 1);
    long long now = (long long)time(NULL);
    long long h = floor_to(now, 3600);
    /* three hours in the head: nothing rolled up, all from raw data (an
     * auto table read as is would answer nothing) */
    for (int k = 0; k < 3; k++) {
        long long hk = h - 3600LL * (2 - k);
        if (hk + 10 <= now) raw_add(&t, hk + 10, 7 * k + 1);
        if (hk + 20 <= now) raw_add(&t, hk + 20, 5);
    }
    expect_split(&t, "head", 3600, "rollup_nofallback", h - 7200, now, split_never);
    /* a clean stop rolls every hour up: the table answers (a client's sum
     * for the oldest hour shows it is the table) */
    assert_int_equal(tu_tsd_stop(&t), 0);
    start(&t, 1, 0);
    g_nru = 0;
    for (int k = 0; k < 3; k++) {
        double v;
        if (bucket(g_raw, g_nraw, h - 3600LL * (2 - k), 3600, &v))
            g_ru[g_nru++] = (mp_t){h - 3600LL * (2 - k), v};
    }
    ru_add(&t, h - 7200, 5000);
    expect_split(&t, "rolled up", 3600, "rollup_nofallback", h - 7200, now, split_open);
    /* a late point into the middle hour: from it on, raw data again */
    raw_add(&t, h - 3600 + 30, 11);
    g_mid = h - 3600;
    expect_split(&t, "late point", 3600, "rollup_nofallback", h - 7200, now, split_mid);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sla),
        cmocka_unit_test(pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
