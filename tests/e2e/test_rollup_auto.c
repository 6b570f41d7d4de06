/* test_rollup_auto.c -- rollups made by the TSD beyond the hour and their
 * backfill, over the real daemon and the real binary (docs/rollups.md):
 *   - long_intervals: random points over three days, a late batch, a
 *     kill -9 while a forced flush writes the rollups, replay; the 1h, 6h
 *     (also read as 12h) and 1d tables answer sum, count, min, max and avg
 *     exactly as a model of the points this test sent;
 *   - backfill: raw data written with auto off has no rollups; `octsdb
 *     rollup --backfill` beside the running TSD (a metric and a range first,
 *     then everything, then again) and on the stopped data dir makes the
 *     model's rollups, the same every time; with auto off it is refused.
 * Expected values come from the model (loops over the points sent), never
 * from the code under test. Values are integers or multiples of 1/1024
 * small enough that every sum is exact in a double, whatever the order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "rollup_model.h"
#include "common/json.h"
#include "common/strbuf.h"

#define T0   1356998400LL /* 2013-01-01 00:00 UTC */
#define DAYS 3
#define NSER 3
#define MAXP (DAYS * 24 * 16)
#define CONF                                                                                       \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"r1h\",\"preAggregationTable\":\"p1h\",\"interval\":\"1h\",\"rowSpan\":\"1d\"},"  \
    "{\"table\":\"r6h\",\"preAggregationTable\":\"p6h\",\"interval\":\"6h\",\"rowSpan\":\"1n\"},"  \
    "{\"table\":\"r1d\",\"preAggregationTable\":\"p1d\",\"interval\":\"1d\",\"rowSpan\":\"1y\"}]}"

static const char *const g_auto_args[] = {
    "--auto-metric",         "--set", "tsd.rollups.enable=true",  "--set",
    "tsd.rollups.auto=true", "--set", "tsd.rollups.config=" CONF, NULL};
static const char *const g_plain_args[] = {
    "--auto-metric", "--set", "tsd.rollups.enable=true", "--set", "tsd.rollups.config=" CONF, NULL};

typedef rm_pt_t pt_t;

/* the model: points per metric (0: x.r, 1: x.o) and series */
static pt_t g_p[2][NSER][MAXP];
static int g_n[2][NSER];
static const char *const g_metric[2] = {"x.r", "x.o"};

/* Random points of metric m, series s, hours [h0, h1): per_hour tries at
 * seconds the series has no point at yet. Returns the /api/put body. */
static char *gen(unsigned *seed, int m, int s, int h0, int h1, int per_hour)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    int first = 1;
    for (int h = h0; h < h1; h++) {
        static char used[3600];
        memset(used, 0, sizeof used);
        for (int i = 0; i < g_n[m][s]; i++)
            if (g_p[m][s][i].ts >= T0 + 3600LL * h && g_p[m][s][i].ts < T0 + 3600LL * (h + 1))
                used[g_p[m][s][i].ts - T0 - 3600LL * h] = 1;
        for (int k = 0; k < per_hour && g_n[m][s] < MAXP; k++) {
            int sec = (int)(rand_r(seed) % 3600);
            if (used[sec]) continue;
            used[sec] = 1;
            pt_t *p = &g_p[m][s][g_n[m][s]++];
            p->ts = T0 + 3600LL * h + sec;
            /* the last series: integers far from 0 beside their spread (dev's
             * exact integer path, where the textbook formula cancels) */
            p->is_int = s == NSER - 1 ? 1 : rand_r(seed) % 2;
            if (p->is_int)
                p->i = (long long)(rand_r(seed) % 2001) - 1000 + (s == NSER - 1 ? 5000000 : 0);
            else
                p->f = ((double)(rand_r(seed) % 2000001) - 1000000.0) / 1024.0;
            if (p->is_int)
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,"
                                  "\"tags\":{\"s\":\"%d\"}}",
                                  first ? "" : ",", g_metric[m], p->ts, p->i, s);
            else
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%.17g,"
                                  "\"tags\":{\"s\":\"%d\"}}",
                                  first ? "" : ",", g_metric[m], p->ts, p->f, s);
            first = 0;
        }
    }
    oct_strbuf_puts(&sb, "]");
    return sb.ptr;
}

static void put(tu_tsd_t *t, unsigned *seed, int m, int h0, int h1, int per_hour)
{
    for (int s = 0; s < NSER; s++) {
        char *body = gen(seed, m, s, h0, h1, per_hour);
        char *r = ac_req_ok(t, "POST", "/api/put", body, 204);
        free(r);
        free(body);
    }
}

/* The model's answer per bucket of iv_s seconds in [lo, hi) into ts/v;
 * returns the count of buckets with points. */
static int model(int m, int s, const char *agg, long long iv_s, long long lo, long long hi,
                 long long *ts, double *v)
{
    int n = 0;
    for (long long b = lo; b < hi; b += iv_s)
        if (rm_bucket(g_p[m][s], g_n[m][s], b, iv_s, agg, &v[n])) ts[n++] = b;
    return n;
}

/* GET /api/query of m=sum:<ds>-<agg>:rollup_nofallback:<metric>{s=<s>}
 * over [lo, hi) must equal the model (sum, count, min, max exactly; avg to
 * 1e-12 relative); no series at all when the model has no bucket. */
static void expect(tu_tsd_t *t, const char *what, int m, int s, const char *ds, long long iv_s,
                   const char *agg, long long lo, long long hi)
{
    static long long ts[DAYS * 24 + 1];
    static double v[DAYS * 24 + 1];
    int n = model(m, s, agg, iv_s, lo, hi, ts, v);
    char target[512];
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:%s-%s:rollup_nofallback:%s%%7Bs=%d%%7D", lo,
             hi - 1, ds, agg, g_metric[m], s);
    rm_expect(t, what, target, ts, v, n,
              !strcmp(agg, "avg")   ? 1e-12
              : !strcmp(agg, "dev") ? 1e-9
                                    : 0);
}

/* Every table the TSD computes, every aggregator, every series of m. */
static void check_all(tu_tsd_t *t, const char *what, int m, long long lo, long long hi)
{
    static const char *const aggs[] = {"sum", "count", "min", "max", "avg", "dev"};
    static const struct {
        const char *ds;
        long long s;
    } ivs[] = {{"1h", 3600}, {"6h", 21600}, {"12h", 43200}, {"1d", 86400}};
    for (int s = 0; s < NSER; s++)
        for (size_t i = 0; i < sizeof ivs / sizeof ivs[0]; i++)
            for (int a = 0; a < 6; a++)
                expect(t, what, m, s, ivs[i].ds, ivs[i].s, aggs[a], lo, hi);
}

static void long_intervals(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    memset(g_n, 0, sizeof g_n);
    unsigned seed = 4242;
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    /* days 0 and 1, flushed and rolled up by a clean stop */
    put(&t, &seed, 0, 0, 48, 8);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    check_all(&t, "days 0-1", 0, T0, T0 + 86400LL * DAYS);
    /* day 2 and late points into days 0 and 1, then kill -9 while a
     * forced flush writes them and their rollups: the replay recomputes */
    put(&t, &seed, 0, 0, 72, 4);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    static const char req[] = "POST /api/octsdb/flush HTTP/1.1\r\nHost: x\r\n"
                              "Content-Length: 0\r\n\r\n";
    assert_int_equal(tu_send_all(fd, req, sizeof req - 1), 0);
    usleep((useconds_t)(1000 + rand_r(&seed) % 20000));
    tu_tsd_kill(&t);
    close(fd);
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    check_all(&t, "after kill -9 and replay", 0, T0, T0 + 86400LL * DAYS);
    /* a range within a day: the 1d cell is read for the whole day, so only
     * a query on period boundaries is compared; here one day alone */
    check_all(&t, "day 1 alone", 0, T0 + 86400, T0 + 2 * 86400);
    /* a client's sum over hour 5 of series 0: the TSD's sum of squares of
     * that hour no longer matches, so dev is unknown there -- 2.4's 400
     * without a fallback, the raw points with one */
    char body[256], target[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"x.r\",\"timestamp\":%lld,\"value\":1,\"tags\":{\"s\":\"0\"},"
             "\"interval\":\"1h\",\"aggregator\":\"sum\"}",
             T0 + 5 * 3600);
    char *r = ac_req_ok(&t, "POST", "/api/rollup", body, 204);
    free(r);
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:1h-dev:rollup_nofallback:x.r%%7Bs=0%%7D", T0,
             T0 + 86399);
    AC_EXPECT(&t, "GET", target, NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Standard deviation over rolled up data "
              "is not supported at this time\"}}");
    static long long mts[25];
    static double mv[25];
    int n = model(0, 0, "dev", 3600, T0, T0 + 86400, mts, mv);
    static const char *const fb[] = {"rollup_fallback_raw", "rollup_fallback"};
    for (int i = 0; i < 2; i++) {
        snprintf(target, sizeof target,
                 "/api/query?start=%lld&end=%lld&m=sum:1h-dev:%s:x.r%%7Bs=0%%7D", T0, T0 + 86399,
                 fb[i]);
        rm_expect(&t, fb[i], target, mts, mv, n, 1e-9);
    }
    /* a late point into hour 6 recomputes day 0 from its hours, hour 5
     * without its sum of squares now: the day has none either (a partial
     * one would give a wrong dev) */
    long long lts = T0 + 6 * 3600 + 3599;
    for (int i = 0; i < g_n[0][0]; i++)
        if (g_p[0][0][i].ts == lts) lts--, i = -1; /* a second without a point */
    pt_t *lp = &g_p[0][0][g_n[0][0]++];
    *lp = (pt_t){.ts = lts, .is_int = 1, .i = 77};
    snprintf(body, sizeof body,
             "{\"metric\":\"x.r\",\"timestamp\":%lld,\"value\":77,\"tags\":{\"s\":\"0\"}}", lp->ts);
    r = ac_req_ok(&t, "POST", "/api/put", body, 204);
    free(r);
    r = ac_req_ok(&t, "POST", "/api/octsdb/flush", NULL, 204);
    free(r);
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:1d-dev:rollup_nofallback:x.r%%7Bs=0%%7D", T0,
             T0 + 86399);
    AC_EXPECT(&t, "GET", target, NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Standard deviation over rolled up data "
              "is not supported at this time\"}}");
    n = model(0, 0, "dev", 86400, T0, T0 + 86400, mts, mv);
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:1d-dev:rollup_fallback_raw:x.r%%7Bs=0%%7D", T0,
             T0 + 86399);
    rm_expect(&t, "1d after a late point", target, mts, mv, n, 1e-9);
    tu_tsd_destroy(&t);
}

/* Runs `octsdb rollup --backfill` with args; returns its status, stdout in *out. */
static int backfill(tu_tsd_t *t, const char *const *extra, char **out)
{
    char dir[600];
    snprintf(dir, sizeof dir, "--datadir=%s", t->dir);
    const char *argv[24] = {"rollup", "--backfill", dir};
    int n = 3;
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return tu_run_octsdb(out, argv);
}

static void backfill_cmd(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    memset(g_n, 0, sizeof g_n);
    unsigned seed = 777;
    /* raw data of two metrics over two days with auto off: no rollups */
    assert_int_equal(tu_tsd_start(&t, g_plain_args), 0);
    put(&t, &seed, 0, 0, 48, 6);
    put(&t, &seed, 1, 0, 48, 3);
    assert_int_equal(tu_tsd_stop(&t), 0);
    char *out = NULL;
    /* the stopped data dir without auto rollups configured: refused */
    static const char *const no_auto[] = {"--set=tsd.rollups.enable=true",
                                          "--set=tsd.rollups.config=" CONF, NULL};
    assert_int_equal(backfill(&t, no_auto, &out), 3);
    free(out);
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    long long lo = T0, hi = T0 + 2 * 86400LL;
    char *r = ac_req_ok(&t, "GET",
                        "/api/query?start=1356998400&end=1357171199&m=sum:1h-sum:rollup_"
                        "nofallback:x.r",
                        NULL, 200);
    assert_string_equal(r, "[]");
    free(r);
    /* beside the running TSD: metric x.r, a range inside day 0 (widened to
     * the whole day) */
    static const char *const part[] = {"--metric=x.r", "--start=1357002000", "--end=1357005599",
                                       NULL};
    assert_int_equal(backfill(&t, part, &out), 0);
    if (!strstr(out, "Backfilled 3 series, 72 series-hours, "))
        fail_msg("partial backfill printed: %s", out);
    free(out);
    check_all(&t, "partial: day 0", 0, lo, lo + 86400);
    r = ac_req_ok(&t, "GET",
                  "/api/query?start=1357084800&end=1357171199&m=sum:1h-sum:rollup_nofallback:x.r",
                  NULL, 200);
    assert_string_equal(r, "[]"); /* day 1 untouched */
    free(r);
    r = ac_req_ok(&t, "GET",
                  "/api/query?start=1356998400&end=1357171199&m=sum:1h-sum:rollup_nofallback:x.o",
                  NULL, 200);
    assert_string_equal(r, "[]"); /* the other metric untouched */
    free(r);
    static const char *const unknown[] = {"--metric=no.such", NULL};
    assert_int_equal(backfill(&t, unknown, &out), 1);
    free(out);
    /* everything, twice: the same cells */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(backfill(&t, NULL, &out), 0);
        if (!strstr(out, "Backfilled 6 series, 288 series-hours, "))
            fail_msg("full backfill printed: %s", out);
        free(out);
        check_all(&t, k ? "live, second run" : "live", 0, lo, hi);
        check_all(&t, k ? "live, second run" : "live", 1, lo, hi);
    }
    assert_int_equal(tu_tsd_stop(&t), 0);
    /* on the stopped data dir: again the same */
    static const char *const stopped[] = {"--set=tsd.rollups.enable=true",
                                          "--set=tsd.rollups.auto=true",
                                          "--set=tsd.rollups.config=" CONF, "--quiet", NULL};
    assert_int_equal(backfill(&t, stopped, &out), 0);
    if (!strstr(out, "Backfilled 6 series, 288 series-hours, "))
        fail_msg("stopped backfill printed: %s", out);
    free(out);
    assert_int_equal(tu_tsd_start(&t, g_auto_args), 0);
    check_all(&t, "stopped", 0, lo, hi);
    check_all(&t, "stopped", 1, lo, hi);
    tu_tsd_destroy(&t);
}

/* A client's rollup written again with a value of another width (1-byte
 * int, 2-byte int, float32, float64, back to 1 byte) is one value, the
 * last, never two cells added up by the reader. */
static void one_value_per_slot(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, g_plain_args), 0);
    static const char *const vals[] = {"5", "300", "2.5", "0.1", "7"};
    static const char *const want[] = {"5", "300", "2.5", "0.1", "7"};
    for (int i = 0; i < 5; i++) {
        char body[256], exp[128];
        snprintf(body, sizeof body,
                 "{\"metric\":\"w.r\",\"timestamp\":1357016400,\"value\":%s,"
                 "\"tags\":{\"h\":\"a\"},\"interval\":\"1h\",\"aggregator\":\"sum\"}",
                 vals[i]);
        char *r = ac_req_ok(&t, "POST", "/api/rollup", body, 204);
        free(r);
        r = ac_req_ok(&t, "GET",
                      "/api/query?start=1357016400&end=1357019999&m=sum:1h-sum:rollup_"
                      "nofallback:w.r",
                      NULL, 200);
        snprintf(exp, sizeof exp, "\"dps\":{\"1357016400\":%s", want[i]);
        if (!strstr(r, exp)) fail_msg("after writing %s: %s", vals[i], r);
        free(r);
    }
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_intervals),
        cmocka_unit_test(backfill_cmd),
        cmocka_unit_test(one_value_per_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
