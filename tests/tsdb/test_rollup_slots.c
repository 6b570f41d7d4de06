/* test_rollup_slots.c -- one value per rollup slot when the TSD rewrites
 * its own rollups (tsd.rollups.auto) with values of other widths, on both
 * ways the write finds the old widths (tw_rollup_write): a row with many
 * puts read whole (ten hours of a day re-flushed at once: 40 cells in one
 * 1h row) and a row with few puts probed width by width (one hour: 4 cells;
 * the 1d cells, 4 in a row of a year). After each flush the 1h and 1d sum,
 * count, min and max read from the rollup tables must equal a model of the
 * points sent: a stale cell of another width left beside the new one would
 * be read as a second value and added to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "exec/exec.h"
#include "query/query.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb_fixture.h"
#include "tsdb/write.h"

#define H0 1356998400LL /* 2013-01-01T00:00:00Z */
#define NH 10           /* hours written */
#define CONF                                                                                       \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3},\"intervals\":["              \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"tsdb-rollup-1h\",\"preAggregationTable\":\"tsdb-rollup-preagg-1h\","             \
    "\"interval\":\"1h\",\"rowSpan\":\"1d\"},"                                                     \
    "{\"table\":\"tsdb-rollup-1d\",\"preAggregationTable\":\"tsdb-rollup-preagg-1d\","             \
    "\"interval\":\"1d\",\"rowSpan\":\"1y\"}]}"

/* The model: every point sent, as doubles (the values below are exact). */
typedef struct {
    double v[NH][8];
    size_t n[NH];
} model_t;

static tsdb_t *g_db;
static model_t g_m;

static void put(int hour, int sec, int is_float, double v)
{
    tsdb_dp_t dp;
    memset(&dp, 0, sizeof dp);
    oct_slice_t tags[2] = {oct_slice_str("host"), oct_slice_str("a")};
    dp.metric = oct_slice_str("slot.m");
    dp.tags = tags;
    dp.n_tags = 1;
    dp.pt.ts_ms = (H0 + hour * 3600LL + sec) * 1000;
    dp.pt.is_float = (uint8_t)is_float;
    if (is_float)
        dp.pt.val.f = v;
    else
        dp.pt.val.i = (int64_t)v;
    oct_errbuf_t eb;
    if (tsdb_put_batch(g_db, &dp, 1, NULL, NULL, NULL, &eb) != 1) fail_msg("put: %s", eb.msg);
    g_m.v[hour][g_m.n[hour]++] = v;
}

static void flush_all(void)
{
    oct_errbuf_t eb;
    tsdb_stats_t st;
    do {
        if (tsdb_flush(g_db, &eb)) fail_msg("flush: %s", eb.msg);
        tsdb_stats(g_db, &st);
    } while (st.head_points > 0);
}

typedef struct {
    size_t n;
    int64_t ts[NH];
    double v[NH];
} got_t;

static int on_result(void *ctx, const exec_result_t *r)
{
    got_t *g = ctx;
    for (size_t i = 0; i < r->n_dps && g->n < NH; i++) {
        g->ts[g->n] = r->dps[i].ts_ms / 1000;
        g->v[g->n++] = r->dps[i].is_int ? (double)r->dps[i].v.i : r->dps[i].v.f;
    }
    return 0;
}

static void query(const char *ds, got_t *g)
{
    query_t q;
    memset(&q, 0, sizeof q);
    memset(g, 0, sizeof *g);
    oct_errbuf_t eb;
    char m[128];
    snprintf(m, sizeof m, "sum:%s:rollup_nofallback:slot.m", ds);
    if (query_parse_m(&q, m, &eb)) fail_msg("query %s: %s", m, eb.msg);
    q.start_ms = H0 * 1000;
    q.end_ms = (H0 + 86400) * 1000 - 1;
    exec_stats_t st;
    if (exec_query(g_db, &q, NULL, on_result, g, &st, &eb)) fail_msg("exec %s: %s", m, eb.msg);
    query_free(&q);
}

/* agg: 0 sum, 1 count, 2 min, 3 max of v[0..n). */
static double agg_of(int agg, const double *v, size_t n)
{
    double r = agg == 1 ? (double)n : v[0];
    for (size_t i = agg == 1 ? n : 1; i < n; i++)
        r = agg == 0 ? r + v[i] : agg == 2 ? fmin(r, v[i]) : fmax(r, v[i]);
    return r;
}

/* Sums of doubles may be added in another order than the model's (the 1d
 * sum is the sum of the hourly sums): 1e-12 relative; a stale cell read as
 * a second value is off by far more. */
static int near(double got, double want)
{
    return fabs(got - want) <= 1e-12 * fmax(1, fabs(want));
}

static void check(const char *step)
{
    static const char *const aggs[4] = {"sum", "count", "min", "max"};
    double all[NH * 8];
    size_t na = 0;
    for (int h = 0; h < NH; h++)
        for (size_t i = 0; i < g_m.n[h]; i++)
            all[na++] = g_m.v[h][i];
    for (int a = 0; a < 4; a++) {
        char ds[16];
        got_t g;
        snprintf(ds, sizeof ds, "1h-%s", aggs[a]);
        query(ds, &g);
        if (g.n != NH) fail_msg("%s: %s: %zu hours, want %d", step, ds, g.n, NH);
        for (int h = 0; h < NH; h++) {
            double want = agg_of(a, g_m.v[h], g_m.n[h]);
            if (g.ts[h] != H0 + h * 3600 || !near(g.v[h], want))
                fail_msg("%s: %s hour %d: %.17g at %lld, want %.17g", step, ds, h, g.v[h],
                         (long long)g.ts[h], want);
        }
        snprintf(ds, sizeof ds, "1d-%s", aggs[a]);
        query(ds, &g);
        double want = agg_of(a, all, na);
        if (g.n != 1 || g.ts[0] != H0 || !near(g.v[0], want))
            fail_msg("%s: %s: %zu values, first %.17g, want one, %.17g", step, ds, g.n,
                     g.n ? g.v[0] : 0.0, want);
    }
}

static void widths(void **state)
{
    static const char *const kv[] = {
        "tsd.rollups.enable", "true", "tsd.rollups.auto", "true", "tsd.rollups.config", CONF, NULL};
    *state = tsdb_fx_open_kv(kv);
    g_db = g_fx->db;
    memset(&g_m, 0, sizeof g_m);

    /* 1-byte integers everywhere (sum 5, 1d sum 50) */
    for (int h = 0; h < NH; h++)
        put(h, 60, 0, 5);
    flush_all();
    check("first flush");
    /* every hour again at once (40 puts in the 1h row: read whole): sums
     * and maxima of 2 bytes, the 1d sum too */
    for (int h = 0; h < NH; h++)
        put(h, 120, 0, 1000);
    flush_all();
    check("ten hours to 2 bytes");
    /* one hour (4 puts in its row: probed): its sum becomes a double */
    put(3, 180, 1, 0.5);
    flush_all();
    check("one hour to a double");
    /* every hour again, back to 1-byte sums (10; hour 3: 10.5) with 2-byte minima */
    for (int h = 0; h < NH; h++)
        put(h, 240, 0, -995);
    flush_all();
    check("ten hours back to 1 byte");
    /* one hour: its minimum becomes a float64 */
    put(7, 300, 1, -2000.1);
    flush_all();
    check("one hour's minimum to a double");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(widths, tsdb_fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
