/* test_exec_fast.c -- the query executor's fast paths over a real data dir:
 * fixed-interval downsampling straight from the read points (sum, avg, min,
 * max, count and their aliases; integer, double, NaN and mixed buckets; an
 * int64 overflow; epoch-aligned odd intervals; every fill policy) and the
 * annotations that come with a series' rows instead of a second read (seconds
 * and ms start times, notes in hours without data, outside the range, in the
 * head's hour and in flushed rows). Every expected value is worked out by
 * hand in the comment beside it from the points written. */
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
#include "query/query.h"
#include "testutil.h"
#include "tsdb_fixture.h"
#include "tsdb/annotation.h"
#include "exec/exec.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

#define H0   1356998400LL /* 2013-01-01T00:00:00Z */
#define S(x) ((H0 + (x)) * 1000LL)

static void put(const char *m, const char *host, int64_t ts_ms, int is_float, int64_t i, double f)
{
    oct_slice_t t[2] = {oct_slice_str("host"), oct_slice_str(host)};
    tsdb_dp_t dp = {oct_slice_str(m), t, 1, {ts_ms, {.i = i}, (uint8_t)is_float}, 0};
    if (is_float) dp.pt.val.f = f;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

#define PI(m, h, s, v) put(m, h, S(s), 0, v, 0)
#define PF(m, h, s, v) put(m, h, S(s), 1, 0, v)

/* ds.t, all in hour H0:
 *   host=a (integers)  0:1 10:2 20:4 | 60:INT64_MAX 70:1 | 120:5 130:7
 *   host=b (doubles)   0:1.5 10:NaN 20:2.5 | 60:NaN
 *   host=c (mixed)     0:3 (int) 10:0.5 (double)
 * Flushed, so the query reads blocks from the store. */
static int setup(void **state)
{
    fx_t *fx = tsdb_fx_open();
    oct_errbuf_t eb;
    PI("ds.t", "a", 0, 1);
    PI("ds.t", "a", 10, 2);
    PI("ds.t", "a", 20, 4);
    PI("ds.t", "a", 60, INT64_MAX);
    PI("ds.t", "a", 70, 1);
    PI("ds.t", "a", 120, 5);
    PI("ds.t", "a", 130, 7);
    PF("ds.t", "b", 0, 1.5);
    PF("ds.t", "b", 10, NAN);
    PF("ds.t", "b", 20, 2.5);
    PF("ds.t", "b", 60, NAN);
    PI("ds.t", "c", 0, 3);
    PF("ds.t", "c", 10, 0.5);
    if (tsdb_flush(fx->db, &eb)) fail_msg("flush: %s", eb.msg);
    *state = fx;
    return 0;
}

/* ---- running ------------------------------------------------------------ */

#define MAXP  32
#define MAXAN 8

typedef struct {
    size_t n, results;
    int64_t ts[MAXP];
    double v[MAXP];
    int is_int[MAXP], is_null[MAXP];
    size_t n_ann;
    char ann[MAXAN][256];
} out_t;

static int collect(void *ctx, const exec_result_t *r)
{
    out_t *o = ctx;
    o->results++;
    assert_true(r->n_dps <= MAXP);
    o->n = r->n_dps;
    for (size_t i = 0; i < r->n_dps; i++) {
        o->ts[i] = r->dps[i].ts_ms;
        o->is_int[i] = r->dps[i].is_int;
        o->is_null[i] = r->dps[i].is_null;
        o->v[i] = r->dps[i].is_int ? (double)r->dps[i].v.i : r->dps[i].v.f;
    }
    assert_true(r->n_annotations <= MAXAN);
    o->n_ann = r->n_annotations;
    for (size_t i = 0; i < r->n_annotations; i++)
        snprintf(o->ann[i], sizeof o->ann[i], "%.*s", (int)r->annotation_lens[i],
                 r->annotations[i]);
    return 0;
}

static void run(out_t *o, int64_t start_ms, int64_t end_ms, int annotations, const char *m)
{
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = start_ms;
    q.end_ms = end_ms;
    q.no_annotations = !annotations;
    oct_errbuf_t eb;
    if (query_parse_m(&q, m, &eb)) fail_msg("parse %s: %s", m, eb.msg);
    memset(o, 0, sizeof *o);
    int rc = exec_query(g_fx->db, &q, NULL, collect, o, NULL, &eb);
    query_free(&q);
    if (rc) fail_msg("query %s: %d %s", m, rc, eb.msg);
    assert_int_equal(o->results, 1);
}

/* Expects n points at S(ts_s[i]) (+ off_ms), doubles, bit-exact values
 * (NaN matches NaN). */
static void expect(const out_t *o, size_t n, int64_t off_ms, const int64_t *ts_s, const double *v)
{
    assert_int_equal(o->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(o->ts[i], S(ts_s[i]) + off_ms);
        assert_int_equal(o->is_int[i], 0); /* downsampled values are doubles */
        if (isnan(v[i])) {
            if (!isnan(o->v[i])) fail_msg("point %zu: %.17g, want NaN", i, o->v[i]);
        } else if (memcmp(&o->v[i], &v[i], sizeof v[i])) {
            fail_msg("point %zu: %.17g, want %.17g", i, o->v[i], v[i]);
        }
    }
}

/* ---- downsampling ------------------------------------------------------- */

static void test_ds_integers(void **state)
{
    (void)state;
    out_t o;
    const int64_t ts[] = {0, 60, 120};
    /* sums: 1+2+4 = 7; INT64_MAX + 1 overflows int64, so the doubles add:
     * 2^63 - 1 rounds to 2^63, + 1.0 stays 2^63; 5+7 = 12 */
    run(&o, S(0), S(3599), 0, "sum:1m-sum:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){7.0, 9223372036854775808.0, 12.0});
    /* zimsum/pfsum downsample as sum */
    run(&o, S(0), S(3599), 0, "sum:1m-zimsum:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){7.0, 9223372036854775808.0, 12.0});
    /* avg: 7/3 is not integral -> 7.0/3.0; (2^63 - 1 + 1) / 2 = 2^62 exactly
     * (exact 128-bit sum); 12/2 = 6 */
    run(&o, S(0), S(3599), 0, "sum:1m-avg:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){7.0 / 3.0, 4611686018427387904.0, 6.0});
    run(&o, S(0), S(3599), 0, "sum:1m-min:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){1.0, 1.0, 5.0});
    run(&o, S(0), S(3599), 0, "sum:1m-mimmax:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){4.0, 9223372036854775807.0, 7.0});
    run(&o, S(0), S(3599), 0, "sum:1m-count:ds.t{host=a}");
    expect(&o, 3, 0, ts, (double[]){3.0, 2.0, 2.0});
}

static void test_ds_doubles_nan_mixed(void **state)
{
    (void)state;
    out_t o;
    const int64_t ts[] = {0, 60};
    /* b: {1.5, NaN, 2.5} and {NaN}: NaN is skipped; an all-NaN bucket is NaN
     * for every function but count, which counts 0 */
    run(&o, S(0), S(3599), 0, "sum:1m-sum:ds.t{host=b}");
    expect(&o, 2, 0, ts, (double[]){4.0, NAN});
    run(&o, S(0), S(3599), 0, "sum:1m-avg:ds.t{host=b}");
    expect(&o, 2, 0, ts, (double[]){2.0, NAN});
    run(&o, S(0), S(3599), 0, "sum:1m-min:ds.t{host=b}");
    expect(&o, 2, 0, ts, (double[]){1.5, NAN});
    run(&o, S(0), S(3599), 0, "sum:1m-max:ds.t{host=b}");
    expect(&o, 2, 0, ts, (double[]){2.5, NAN});
    run(&o, S(0), S(3599), 0, "sum:1m-count:ds.t{host=b}");
    expect(&o, 2, 0, ts, (double[]){2.0, 0.0});
    /* c: int 3 and double 0.5 take the double path: 3.5, 1.75, 0.5, 3 */
    run(&o, S(0), S(3599), 0, "sum:1m-sum:ds.t{host=c}");
    expect(&o, 1, 0, ts, (double[]){3.5});
    run(&o, S(0), S(3599), 0, "sum:1m-avg:ds.t{host=c}");
    expect(&o, 1, 0, ts, (double[]){1.75});
    run(&o, S(0), S(3599), 0, "sum:1m-mimmin:ds.t{host=c}");
    expect(&o, 1, 0, ts, (double[]){0.5});
    run(&o, S(0), S(3599), 0, "sum:1m-max:ds.t{host=c}");
    expect(&o, 1, 0, ts, (double[]){3.0});
}

static void test_ds_odd_interval(void **state)
{
    (void)state;
    out_t o;
    /* 7 s buckets are epoch multiples: H0 * 1000 = 1356998400000 leaves
     * 2000 mod 7000, so buckets start 2 s before each multiple of 7 s from
     * H0: 0 s in [-2, 5), 10 s in [5, 12), 20 s in [19, 26), 60 s in
     * [54, 61), 70 s in [68, 75), 120 s in [117, 124), 130 s in [124, 131) */
    run(&o, S(0), S(3599), 0, "sum:7s-sum:ds.t{host=a}");
    /* the first bucket starts before the query: only start <= ts is kept */
    expect(&o, 6, 0, (int64_t[]){5, 19, 54, 68, 117, 124},
           (double[]){2.0, 4.0, 9223372036854775807.0, 1.0, 5.0, 7.0});
}

static void test_ds_fill(void **state)
{
    (void)state;
    out_t o;
    /* over [0, 239] s: buckets 0, 60, 120 have points, 180 is empty */
    const int64_t ts[] = {0, 60, 120, 180};
    run(&o, S(0), S(239), 0, "sum:1m-max-zero:ds.t{host=a}");
    expect(&o, 4, 0, ts, (double[]){4.0, 9223372036854775807.0, 7.0, 0.0});
    run(&o, S(0), S(239), 0, "sum:1m-max-nan:ds.t{host=a}");
    expect(&o, 4, 0, ts, (double[]){4.0, 9223372036854775807.0, 7.0, NAN});
    assert_int_equal(o.is_null[3], 0);
    run(&o, S(0), S(239), 0, "sum:1m-max-null:ds.t{host=a}");
    assert_int_equal(o.n, 4);
    assert_int_equal(o.is_null[2], 0);
    assert_int_equal(o.is_null[3], 1);
    assert_int_equal(o.ts[3], S(180));
}

/* ---- annotations -------------------------------------------------------- */

static int count_note(void *ctx, const char *json, size_t len)
{
    (void)json;
    (void)len;
    ++*(int *)ctx;
    return 0;
}

typedef struct {
    char tsuid[64];
} tsuid_out_t;

static int tsuid_cb(void *ctx, const exec_result_t *r)
{
    tsuid_out_t *t = ctx;
    assert_int_equal(r->n_tsuids, 1);
    snprintf(t->tsuid, sizeof t->tsuid, "%s", r->tsuids[0]);
    return 0;
}

/* The TSUID bytes of m{host=h}, as the executor reports it. */
static size_t tsuid_of(const char *m, const char *h, uint8_t *out)
{
    char expr[128];
    snprintf(expr, sizeof expr, "sum:%s{host=%s}", m, h);
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = S(0);
    q.end_ms = S(7199);
    q.show_tsuids = 1;
    q.no_annotations = 1;
    oct_errbuf_t eb;
    if (query_parse_m(&q, expr, &eb)) fail_msg("parse: %s", eb.msg);
    tsuid_out_t t = {{0}};
    assert_int_equal(exec_query(g_fx->db, &q, NULL, tsuid_cb, &t, NULL, &eb), 0);
    query_free(&q);
    size_t n = strlen(t.tsuid) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(t.tsuid + 2 * i, "%2x", &b);
        out[i] = (uint8_t)b;
    }
    return n;
}

static void put_note(const uint8_t *tsuid, size_t len, int64_t start, const char *desc)
{
    tsdb_annotation_t a = {tsuid, len, start, 0, desc, NULL, NULL};
    oct_errbuf_t eb;
    if (tsdb_annotation_put(g_fx->db, &a, &eb)) fail_msg("note: %s", eb.msg);
}

static void test_annotations_with_rows(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    /* ds.n{host=a}: points at 0 and 30 s, flushed; ds.n{host=b}: a point at
     * 20 s, still in the head */
    PI("ds.n", "a", 0, 1);
    PI("ds.n", "a", 30, 2);
    if (tsdb_flush(g_fx->db, &eb)) fail_msg("flush: %s", eb.msg);
    PI("ds.n", "b", 20, 5);
    uint8_t ta[64], tb[64];
    size_t la = tsuid_of("ds.n", "a", ta), lb = tsuid_of("ds.n", "b", tb);
    /* a: H0+5 s (seconds), H0+7.5 s (ms form), H0+3700 s (next hour, no data
     * there), H0+7300 s (outside the queries below); b: H0+3 s */
    put_note(ta, la, H0 + 5, "a5");
    put_note(ta, la, S(0) + 7500, "a7500ms");
    put_note(ta, la, H0 + 3700, "a3700");
    put_note(ta, la, H0 + 7300, "a7300");
    put_note(tb, lb, H0 + 3, "b3");

    out_t o;
    /* one group of both series over the first two hours: every note of
     * either series with startTime in [H0, H0+7199] s, ordered by the stored
     * startTime value (seconds before the ms value 1356998407500) */
    run(&o, S(0), S(7199), 1, "sum:ds.n");
    assert_int_equal(o.n_ann, 4);
    assert_non_null(strstr(o.ann[0], "\"b3\""));
    assert_non_null(strstr(o.ann[1], "\"a5\""));
    assert_non_null(strstr(o.ann[2], "\"a3700\""));
    assert_non_null(strstr(o.ann[3], "\"a7500ms\""));
    /* the sum at 0 s is 1 (a only; b starts at 20 s) */
    assert_int_equal(o.ts[0], S(0));
    assert_int_equal(o.v[0], 1);

    /* a narrower range keeps only [H0+4, H0+6] s: a5 */
    run(&o, S(4), S(6), 1, "sum:ds.n{host=a}");
    assert_int_equal(o.n_ann, 1);
    assert_non_null(strstr(o.ann[0], "\"a5\""));
    /* downsampled (the fast path reads too): same notes */
    run(&o, S(0), S(7199), 1, "sum:1m-avg:ds.n{host=a}");
    assert_int_equal(o.n_ann, 3);
    assert_non_null(strstr(o.ann[0], "\"a5\""));
    assert_non_null(strstr(o.ann[1], "\"a3700\""));
    assert_non_null(strstr(o.ann[2], "\"a7500ms\""));
    /* 1m-avg of a: (1 + 2) / 2 = 1.5 at 0 s */
    assert_int_equal(o.n, 1);
    assert_true(o.v[0] == 1.5);
    /* a note 5 h in, in another 4 h read chunk than every point of a: it
     * still comes with a (whose points are all in the first hour) */
    put_note(ta, la, H0 + 5 * 3600, "a5h");
    run(&o, S(0), S(6 * 3600 - 1), 1, "sum:1m-avg:ds.n{host=a}");
    assert_int_equal(o.n_ann, 5);
    assert_non_null(strstr(o.ann[0], "\"a5\""));
    assert_non_null(strstr(o.ann[1], "\"a3700\""));
    assert_non_null(strstr(o.ann[2], "\"a7300\""));
    assert_non_null(strstr(o.ann[3], "\"a5h\""));
    assert_non_null(strstr(o.ann[4], "\"a7500ms\""));
    /* no_annotations: none */
    run(&o, S(0), S(7199), 0, "sum:ds.n");
    assert_int_equal(o.n_ann, 0);
    /* the store's own scan agrees with what the query gave for a */
    int count = 0;
    assert_int_equal(tsdb_annotation_scan(g_fx->db, ta, la, S(0), S(7199), count_note, &count, &eb),
                     0);
    assert_int_equal(count, 3);
    /* and over the 6 h: the same 5 as the query */
    count = 0;
    assert_int_equal(
        tsdb_annotation_scan(g_fx->db, ta, la, S(0), S(6 * 3600 - 1), count_note, &count, &eb), 0);
    assert_int_equal(count, 5);
}

/* A group of 20 series is loaded by several threads (PARALLEL_MIN_SER is
 * 16): each series' notes land with that series, in series order. */
static void test_annotations_parallel_group(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    char h[8];
    for (int i = 0; i < 20; i++) {
        snprintf(h, sizeof h, "s%02d", i);
        PI("ds.p", h, 10 + i, i);
    }
    if (tsdb_flush(g_fx->db, &eb)) fail_msg("flush: %s", eb.msg);
    uint8_t t3[64], t17[64];
    size_t l3 = tsuid_of("ds.p", "s03", t3), l17 = tsuid_of("ds.p", "s17", t17);
    put_note(t17, l17, H0 + 100, "s17");
    put_note(t3, l3, H0 + 200, "s03");
    put_note(t3, l3, H0 + 50, "s03early");
    out_t o;
    run(&o, S(0), S(3599), 1, "sum:ds.p");
    /* by startTime: 50 (s03), 100 (s17), 200 (s03) */
    assert_int_equal(o.n_ann, 3);
    assert_non_null(strstr(o.ann[0], "\"s03early\""));
    assert_non_null(strstr(o.ann[1], "\"s17\""));
    assert_non_null(strstr(o.ann[2], "\"s03\""));
    /* each series has one point, and a series contributes only from its
     * first to its last point: the sum at 10 + i s is series i's value i */
    assert_int_equal(o.n, 20);
    assert_int_equal(o.ts[19], S(29));
    assert_true(o.v[19] == 19.0);
    assert_true(o.v[3] == 3.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ds_integers),
        cmocka_unit_test(test_ds_doubles_nan_mixed),
        cmocka_unit_test(test_ds_odd_interval),
        cmocka_unit_test(test_ds_fill),
        cmocka_unit_test(test_annotations_with_rows),
        cmocka_unit_test(test_annotations_parallel_group),
    };
    return cmocka_run_group_tests(tests, setup, tsdb_fx_teardown);
}
