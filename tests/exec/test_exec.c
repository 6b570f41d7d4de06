/* test_exec.c -- the query executor over a real data dir: series
 * selection by every filter kind, grouping and output tags (with
 * OpenTSDB's single-value quirk), interpolated aggregation, downsampling
 * with fill over the scan window, rate and counters, ms/s data, TSUID
 * sub-queries, the error texts, limits, and delete. Every expected value is
 * computed by hand in the comments next to it, from the points written. */
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
#include "common/xmalloc.h"
#include "query/query.h"
#include "testutil.h"
#include "tsdb_fixture.h"
#include "exec/exec.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define H0   1356998400LL /* 2013-01-01T00:00:00Z */
#define S(x) ((H0 + (x)) * 1000LL)

/* ---- writing ------------------------------------------------------------ */

static void put_i(const char *m, const char *tags, int64_t ts_ms, int64_t v)
{
    oct_slice_t t[32];
    tsdb_dp_t dp = {
        oct_slice_str(m), t, tu_split_tags(tags, t), {ts_ms, {.i = v}, 0}, ts_ms % 1000 != 0};
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

static void put_f(const char *m, const char *tags, int64_t ts_ms, double v)
{
    oct_slice_t t[32];
    tsdb_dp_t dp = {oct_slice_str(m), t, tu_split_tags(tags, t), {ts_ms, {.f = v}, 1}, 0};
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

/* The data set (all in the hour H0):
 *   sys.cpu host=web01 dc=lga          0:10  60:20  120:30        (integers)
 *   sys.cpu host=web02 dc=lga          0:1   60:2   120:3         (integers)
 *   sys.cpu host=web03 dc=sjc          30:100 90:200              (integers)
 *   sys.cpu host=db01  dc=sjc role=db  0:5.5 60:6.5               (doubles)
 *   net.bytes host=web01               0:100 10:200 20:50 30:150  (a counter with a reset)
 *   mixed host=x                       H0 s + 500 ms: 1, H0+1 s: 2
 * Written in this order, so web01 gets a lower tag value UID than web02. */
static void load_data(void)
{
    put_i("sys.cpu", "host=web01 dc=lga", S(0), 10);
    put_i("sys.cpu", "host=web01 dc=lga", S(60), 20);
    put_i("sys.cpu", "host=web01 dc=lga", S(120), 30);
    put_i("sys.cpu", "host=web02 dc=lga", S(0), 1);
    put_i("sys.cpu", "host=web02 dc=lga", S(60), 2);
    put_i("sys.cpu", "host=web02 dc=lga", S(120), 3);
    put_i("sys.cpu", "host=web03 dc=sjc", S(30), 100);
    put_i("sys.cpu", "host=web03 dc=sjc", S(90), 200);
    put_f("sys.cpu", "host=db01 dc=sjc role=db", S(0), 5.5);
    put_f("sys.cpu", "host=db01 dc=sjc role=db", S(60), 6.5);
    put_i("net.bytes", "host=web01", S(0), 100);
    put_i("net.bytes", "host=web01", S(10), 200);
    put_i("net.bytes", "host=web01", S(20), 50);
    put_i("net.bytes", "host=web01", S(30), 150);
    put_i("mixed", "host=x", S(0) + 500, 1);
    put_i("mixed", "host=x", S(1), 2);
}

static int setup(void **state)
{
    fx_t *fx = tsdb_fx_open();
    load_data();
    *state = fx;
    return 0;
}

/* ---- running ------------------------------------------------------------ */

#define MAXR 16
#define MAXP 128

typedef struct {
    char tags[256];    /* "k=v,k=v" sorted by key */
    char aggtags[256]; /* "a,b" */
    char tsuid[64];
    size_t n;
    int64_t ts[MAXP];
    double v[MAXP];
    int is_int[MAXP];
    int is_null[MAXP];
} res_t;

typedef struct {
    size_t n;
    res_t r[MAXR];
} out_t;

static int collect(void *ctx, const exec_result_t *r)
{
    out_t *o = ctx;
    assert_true(o->n < MAXR);
    res_t *x = &o->r[o->n++];
    memset(x, 0, sizeof *x);
    for (size_t i = 0; i < r->n_tags; i++) {
        size_t l = strlen(x->tags);
        snprintf(x->tags + l, sizeof x->tags - l, "%s%s=%s", i ? "," : "", r->tagk[i], r->tagv[i]);
    }
    for (size_t i = 0; i < r->n_agg_tags; i++) {
        size_t l = strlen(x->aggtags);
        snprintf(x->aggtags + l, sizeof x->aggtags - l, "%s%s", i ? "," : "", r->agg_tags[i]);
    }
    if (r->n_tsuids) snprintf(x->tsuid, sizeof x->tsuid, "%s", r->tsuids[0]);
    assert_true(r->n_dps <= MAXP);
    x->n = r->n_dps;
    for (size_t i = 0; i < r->n_dps; i++) {
        x->ts[i] = r->dps[i].ts_ms;
        x->is_int[i] = r->dps[i].is_int;
        x->is_null[i] = r->dps[i].is_null;
        x->v[i] = r->dps[i].is_int ? (double)r->dps[i].v.i : r->dps[i].v.f;
    }
    return 0;
}

/* Runs "m" expressions (query_parse_m syntax) over [start_s, end_s]. */
static int run(out_t *o, int64_t start_ms, int64_t end_ms, const exec_opts_t *opts,
               oct_errbuf_t *eb, int show_tsuids, const char *m)
{
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = start_ms;
    q.end_ms = end_ms;
    q.show_tsuids = show_tsuids;
    q.no_annotations = 1;
    oct_errbuf_t peb;
    if (query_parse_m(&q, m, &peb)) fail_msg("parse %s: %s", m, peb.msg);
    memset(o, 0, sizeof *o);
    int rc = exec_query(g_fx->db, &q, opts, collect, o, NULL, eb);
    query_free(&q);
    return rc;
}

static void run_ok(out_t *o, const char *m)
{
    oct_errbuf_t eb;
    int rc = run(o, S(0), S(3599), NULL, &eb, 0, m);
    if (rc) fail_msg("query %s: %d %s", m, rc, eb.msg);
}

static void expect_dps(const res_t *r, size_t n, const int64_t *ts_s, const double *v)
{
    if (r->n != n) fail_msg("expected %zu points, got %zu", n, r->n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r->ts[i], S(ts_s[i]));
        if (fabs(r->v[i] - v[i]) > 1e-9)
            fail_msg("point %zu: expected %g, got %g", i, v[i], r->v[i]);
    }
}

/* ---- tests --------------------------------------------------------------- */

/* sum over all four sys.cpu series, LERP between points, no extrapolation:
 *   0:   10 + 1 + 5.5                      (web03 not started)  = 16.5
 *   30:  15 + 1.5 + 100 + 6.0                                   = 122.5
 *   60:  20 + 2 + 150 (lerp 100..200) + 6.5                     = 178.5
 *   90:  25 + 2.5 + 200                    (db01 ended at 60)   = 227.5
 *   120: 30 + 3                            (web03 ended at 90)  = 33
 * Tags: dc and host differ -> aggregateTags; role appears in one series only
 * with one value -> reported in tags (SpanGroup.computeTags). */
static void test_sum_all_lerp(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "sum:sys.cpu");
    assert_int_equal(o.n, 1);
    static const int64_t ts[] = {0, 30, 60, 90, 120};
    static const double v[] = {16.5, 122.5, 178.5, 227.5, 33};
    expect_dps(&o.r[0], 5, ts, v);
    assert_string_equal(o.r[0].tags, "role=db");
    assert_string_equal(o.r[0].aggtags, "dc,host");
}

/* Group by host within dc=lga: two groups in tag value UID order (web01 was
 * created first), each its own series with exact integer values. */
static void test_group_by(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "sum:sys.cpu{host=*,dc=lga}");
    assert_int_equal(o.n, 2);
    static const int64_t ts[] = {0, 60, 120};
    static const double a[] = {10, 20, 30}, b[] = {1, 2, 3};
    expect_dps(&o.r[0], 3, ts, a);
    expect_dps(&o.r[1], 3, ts, b);
    assert_string_equal(o.r[0].tags, "dc=lga,host=web01");
    assert_string_equal(o.r[1].tags, "dc=lga,host=web02");
    assert_string_equal(o.r[0].aggtags, "");
    assert_true(o.r[0].is_int[0] && o.r[0].is_int[1] && o.r[0].is_int[2]);

    /* Group by dc: lga = web01+web02, sjc = web03+db01. sjc:
     *   0: 5.5 (web03 not started); 30: 100 + 6.0 = 106; 60: 150 + 6.5 = 156.5; 90: 200 */
    run_ok(&o, "sum:sys.cpu{dc=*}");
    assert_int_equal(o.n, 2);
    static const double lga[] = {11, 22, 33};
    expect_dps(&o.r[0], 3, ts, lga);
    assert_string_equal(o.r[0].tags, "dc=lga");
    assert_string_equal(o.r[0].aggtags, "host");
    static const int64_t ts2[] = {0, 30, 60, 90};
    static const double sjc[] = {5.5, 106, 156.5, 200};
    expect_dps(&o.r[1], 4, ts2, sjc);
    assert_string_equal(o.r[1].tags, "dc=sjc,role=db");
}

/* Filters in the second (non-group-by) braces. */
static void test_filters(void **state)
{
    (void)state;
    out_t o;
    /* web01 + web03: 0:10, 30:15+100, 60:20+150, 90:25+200, 120:30 */
    run_ok(&o, "sum:sys.cpu{}{host=literal_or(web01|web03)}");
    assert_int_equal(o.n, 1);
    static const int64_t ts5[] = {0, 30, 60, 90, 120};
    static const double lit[] = {10, 115, 170, 225, 30};
    expect_dps(&o.r[0], 5, ts5, lit);

    /* web* and dc iliteral LGA -> web01 + web02: 11, 22, 33 */
    static const int64_t ts3[] = {0, 60, 120};
    static const double ab[] = {11, 22, 33};
    run_ok(&o, "sum:sys.cpu{}{host=wildcard(web*),dc=iliteral_or(LGA)}");
    assert_int_equal(o.n, 1);
    expect_dps(&o.r[0], 3, ts3, ab);

    /* regexp (find semantics, anchored by the pattern itself) */
    run_ok(&o, "sum:sys.cpu{}{host=regexp(^web0[12]$)}");
    assert_int_equal(o.n, 1);
    expect_dps(&o.r[0], 3, ts3, ab);

    /* not_key(role) drops db01: 0:11, 30:15+1.5+100, 60:22+150, 90:25+2.5+200, 120:33 */
    static const double nk[] = {11, 116.5, 172, 227.5, 33};
    run_ok(&o, "sum:sys.cpu{}{role=not_key()}");
    assert_int_equal(o.n, 1);
    expect_dps(&o.r[0], 5, ts5, nk);

    /* not_literal_or(web03|db01) -> web01 + web02 */
    run_ok(&o, "sum:sys.cpu{}{host=not_literal_or(web03|db01)}");
    assert_int_equal(o.n, 1);
    expect_dps(&o.r[0], 3, ts3, ab);

    /* A filter on a key the series lacks excludes it: role=* keeps db01 only */
    static const int64_t tsd[] = {0, 60};
    static const double db[] = {5.5, 6.5};
    run_ok(&o, "sum:sys.cpu{role=*}");
    assert_int_equal(o.n, 1);
    expect_dps(&o.r[0], 2, tsd, db);
    assert_string_equal(o.r[0].tags, "dc=sjc,host=db01,role=db");
}

/* explicit_tags: only series with exactly the filtered keys (no db01). */
static void test_explicit_tags(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "sum:explicit_tags:sys.cpu{host=*,dc=*}");
    assert_int_equal(o.n, 3); /* web01, web02, web03 */
    run_ok(&o, "sum:explicit_tags:sys.cpu{}{host=wildcard(*),dc=wildcard(*)}");
    assert_int_equal(o.n, 1);
    static const int64_t ts5[] = {0, 30, 60, 90, 120};
    static const double nk[] = {11, 116.5, 172, 227.5, 33};
    expect_dps(&o.r[0], 5, ts5, nk);
    /* host alone: no series has only host */
    run_ok(&o, "sum:explicit_tags:sys.cpu{host=*}");
    assert_int_equal(o.n, 0);
}

/* `none`: every series on its own, each with all its tags. */
static void test_none(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "none:sys.cpu");
    assert_int_equal(o.n, 4);
    int seen = 0;
    for (size_t i = 0; i < o.n; i++) {
        if (!strcmp(o.r[i].tags, "dc=lga,host=web01")) seen |= 1;
        if (!strcmp(o.r[i].tags, "dc=lga,host=web02")) seen |= 2;
        if (!strcmp(o.r[i].tags, "dc=sjc,host=web03")) seen |= 4;
        if (!strcmp(o.r[i].tags, "dc=sjc,host=db01,role=db")) seen |= 8;
        assert_string_equal(o.r[i].aggtags, "");
    }
    assert_int_equal(seen, 15);
}

/* Downsampling: web03 with 1m-avg: bucket 0 holds 100 (at 30 s), bucket 60
 * holds 200 (at 90 s). With -zero fill over [H0, H0+299]: buckets 0, 60, 120,
 * 180, 240 emitted, the last three 0. With -null: NaN marked null. */
static void test_downsample(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "sum:1m-avg:sys.cpu{host=web03}");
    assert_int_equal(o.n, 1);
    static const int64_t ts[] = {0, 60};
    static const double v[] = {100, 200};
    expect_dps(&o.r[0], 2, ts, v);
    assert_false(o.r[0].is_int[0]); /* downsampled values are doubles */

    oct_errbuf_t eb;
    assert_int_equal(run(&o, S(0), S(299), NULL, &eb, 0, "sum:1m-avg-zero:sys.cpu{host=web03}"), 0);
    assert_int_equal(o.n, 1);
    static const int64_t tsz[] = {0, 60, 120, 180, 240};
    static const double vz[] = {100, 200, 0, 0, 0};
    expect_dps(&o.r[0], 5, tsz, vz);

    assert_int_equal(run(&o, S(0), S(299), NULL, &eb, 0, "sum:1m-avg-null:sys.cpu{host=web03}"), 0);
    assert_int_equal(o.r[0].n, 5);
    assert_true(o.r[0].is_null[2] || isnan(o.r[0].v[2]));

    /* 2m-sum of web01 + web02: buckets 0 (10+20, 1+2) and 120 (30, 3):
     * per series 30 and 3 at 0, 30 and 3 at 120 -> sums 33, 33 */
    run_ok(&o, "sum:2m-sum:sys.cpu{dc=lga}");
    static const int64_t ts2[] = {0, 120};
    static const double v2[] = {33, 33};
    expect_dps(&o.r[0], 2, ts2, v2);
}

/* Rate and counters on net.bytes (0:100 10:200 20:50 30:150):
 *   plain rate: 10, -15, 10 per second at 10, 20, 30
 *   counter, max 1000: at 20: (1000 - 200 + 50) / 10 = 85
 *   counter, max 1000, reset 50: 85 > 50 -> 0
 *   dropcounter: the reset point is dropped; at 30: (150 - 50) / 10 = 10 */
static void test_rate(void **state)
{
    (void)state;
    out_t o;
    static const int64_t ts[] = {10, 20, 30};
    run_ok(&o, "sum:rate:net.bytes");
    static const double plain[] = {10, -15, 10};
    expect_dps(&o.r[0], 3, ts, plain);
    run_ok(&o, "sum:rate{counter,1000}:net.bytes");
    static const double ctr[] = {10, 85, 10};
    expect_dps(&o.r[0], 3, ts, ctr);
    run_ok(&o, "sum:rate{counter,1000,50}:net.bytes");
    static const double rst[] = {10, 0, 10};
    expect_dps(&o.r[0], 3, ts, rst);
    run_ok(&o, "sum:rate{dropcounter,1000}:net.bytes");
    static const int64_t tsd[] = {10, 30};
    static const double drop[] = {10, 10};
    expect_dps(&o.r[0], 2, tsd, drop);
}

/* ms and s points of one series keep their exact times; the query range
 * [start, end] is inclusive in ms. */
static void test_ms_and_range(void **state)
{
    (void)state;
    out_t o;
    run_ok(&o, "sum:mixed");
    assert_int_equal(o.r[0].n, 2);
    assert_int_equal(o.r[0].ts[0], S(0) + 500);
    assert_int_equal(o.r[0].ts[1], S(1));

    /* Only ts 60 of the whole-hour aggregation is inside [60 s, 61 s). */
    oct_errbuf_t eb;
    assert_int_equal(run(&o, S(60), S(61) - 1, NULL, &eb, 0, "sum:sys.cpu"), 0);
    static const int64_t ts[] = {60};
    static const double v[] = {178.5};
    expect_dps(&o.r[0], 1, ts, v);

    /* No data in range -> no results, no error. */
    assert_int_equal(run(&o, S(7200), S(7300), NULL, &eb, 0, "sum:sys.cpu"), 0);
    assert_int_equal(o.n, 0);
}

/* A TSUID sub-query reads exactly that series. */
static void test_tsuid_query(void **state)
{
    (void)state;
    out_t o;
    oct_errbuf_t eb;
    assert_int_equal(run(&o, S(0), S(3599), NULL, &eb, 1, "sum:sys.cpu{host=web02}"), 0);
    assert_int_equal(o.n, 1);
    /* widths 3/3/3: metric + 2 pairs = 15 bytes = 30 hex digits */
    assert_int_equal(strlen(o.r[0].tsuid), 30);
    char spec[128];
    snprintf(spec, sizeof spec, "sum:%s", o.r[0].tsuid);
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = S(0);
    q.end_ms = S(3599);
    q.no_annotations = 1;
    assert_int_equal(query_parse_tsuid(&q, spec, &eb), 0);
    out_t o2;
    memset(&o2, 0, sizeof o2);
    assert_int_equal(exec_query(g_fx->db, &q, NULL, collect, &o2, NULL, &eb), 0);
    query_free(&q);
    assert_int_equal(o2.n, 1);
    static const int64_t ts[] = {0, 60, 120};
    static const double v[] = {1, 2, 3};
    expect_dps(&o2.r[0], 3, ts, v);
    assert_string_equal(o2.r[0].tags, "dc=lga,host=web02");
}

/* OpenTSDB's error texts for unknown names; skip_unresolved_tagvs. */
static void test_errors(void **state)
{
    (void)state;
    out_t o;
    oct_errbuf_t eb;
    assert_int_equal(run(&o, S(0), S(3599), NULL, &eb, 0, "sum:nope"), OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'metrics': 'nope'");
    assert_int_equal(run(&o, S(0), S(3599), NULL, &eb, 0, "sum:sys.cpu{nokey=*}"), OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'tagk': 'nokey'");
    assert_int_equal(run(&o, S(0), S(3599), NULL, &eb, 0, "sum:sys.cpu{host=web99}"),
                     OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'tagv': 'web99'");
    /* wildcards and case-insensitive literals are not resolved: no error */
    assert_int_equal(run(&o, S(0), S(3599), NULL, &eb, 0, "sum:sys.cpu{host=web99*}"), 0);
    assert_int_equal(o.n, 0);

    exec_opts_t opts;
    exec_opts_default(&opts);
    opts.skip_unresolved_tagvs = 1;
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu{host=web99}"), 0);
    assert_int_equal(o.n, 0);
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu{host=web01|web99}"), 0);
    assert_int_equal(o.n, 1);
    static const int64_t ts[] = {0, 60, 120};
    static const double v[] = {10, 20, 30};
    expect_dps(&o.r[0], 3, ts, v);
}

/* Limits stop the query with OCT_ERANGE and a clear text. */
static void test_limits(void **state)
{
    (void)state;
    out_t o;
    oct_errbuf_t eb;
    exec_opts_t opts;
    exec_opts_default(&opts);
    opts.max_series = 3;
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu"), OCT_ERANGE);
    assert_non_null(strstr(eb.msg, "limit of 3 time series"));
    opts.max_series = 4;
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu"), 0);

    exec_opts_default(&opts);
    opts.max_points = 9; /* sys.cpu has 10 points */
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu"), OCT_ERANGE);
    assert_string_equal(eb.msg, "Sorry, you have attempted to fetch more than our limit of 9 data "
                                "points. Please try filtering using more tags or decrease your "
                                "time range.");
    opts.max_points = 10;
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu"), 0);

    exec_opts_default(&opts);
    opts.max_held_points = 5; /* dc=lga holds 6 */
    assert_int_equal(run(&o, S(0), S(3599), &opts, &eb, 0, "sum:sys.cpu{dc=lga}"), OCT_ERANGE);
}

/* Scan windows (TsdbQuery.getScanStart/EndTimeSeconds). */
static void test_scan_window(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof q);
    oct_errbuf_t eb;
    int64_t lo, hi;
    /* no downsampling: start's hour .. the hour after (end s + 1) */
    q.start_ms = S(1800);
    q.end_ms = S(3599);
    assert_int_equal(query_parse_m(&q, "sum:m", &eb), 0);
    exec_scan_window(&q, &q.subs[0], &lo, &hi);
    assert_int_equal(lo, S(0));
    assert_int_equal(hi, S(7200) - 1); /* end+1 = H0+3600 -> next hour H0+7200 */
    /* a delete stops at the hour holding end */
    exec_delete_window(&q, &q.subs[0], &lo, &hi);
    assert_int_equal(lo, S(0));
    assert_int_equal(hi, S(3600) - 1);
    query_free(&q);
    /* 1d downsampling: start aligned to the day (H0 is midnight UTC) */
    memset(&q, 0, sizeof q);
    q.start_ms = S(5 * 3600);
    q.end_ms = S(6 * 3600);
    assert_int_equal(query_parse_m(&q, "sum:1d-avg:m", &eb), 0);
    exec_scan_window(&q, &q.subs[0], &lo, &hi);
    assert_int_equal(lo, S(0));
    assert_int_equal(hi, S(86400) - 1);
    exec_delete_window(&q, &q.subs[0], &lo, &hi); /* 6:00 -> the next day boundary */
    assert_int_equal(lo, S(0));
    assert_int_equal(hi, S(86400) - 1);
    query_free(&q);
}

/* Points still in the head and flushed ones are both read; delete removes
 * the matched series' rows (head flushed first). */
static void test_flush_and_delete(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    put_i("del.me", "host=a", S(0), 1);
    assert_int_equal(tsdb_flush(g_fx->db, &eb), 0);
    put_i("del.me", "host=a", S(60), 2);
    put_i("del.me", "host=b", S(0), 7);
    out_t o;
    run_ok(&o, "sum:del.me{host=a}");
    static const int64_t ts[] = {0, 60};
    static const double v[] = {1, 2};
    expect_dps(&o.r[0], 2, ts, v);

    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = S(0);
    q.end_ms = S(3599);
    q.no_annotations = 1;
    q.delete_data = 1;
    assert_int_equal(query_parse_m(&q, "sum:del.me{host=a}", &eb), 0);
    exec_stats_t st;
    memset(&o, 0, sizeof o);
    assert_int_equal(exec_query(g_fx->db, &q, NULL, collect, &o, &st, &eb), 0);
    query_free(&q);
    expect_dps(&o.r[0], 2, ts, v); /* the deleted data is still returned */
    assert_int_equal(st.deleted_rows, 1);
    run_ok(&o, "sum:del.me{host=a}");
    assert_int_equal(o.n, 0);
    run_ok(&o, "sum:del.me{host=b}"); /* the other series is untouched */
    assert_int_equal(o.n, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_all_lerp),
        cmocka_unit_test(test_group_by),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_explicit_tags),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_downsample),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_ms_and_range),
        cmocka_unit_test(test_tsuid_query),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_scan_window),
        cmocka_unit_test(test_flush_and_delete),
    };
    return cmocka_run_group_tests(tests, setup, tsdb_fx_teardown);
}
