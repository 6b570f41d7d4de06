/* test_exec_scan.c -- fixed-interval downsampling fed block by block
 * (tsdb_reader_scan into the executor's bucketer) over a real data dir.
 *
 * What is new there: a bucket may begin in one run of points (a block, an
 * hour) and end in the next, with the two runs of different types; the
 * general read path (head data, several blocks in a row) hands over its
 * merged points instead. Hand-worked cases put one bucket across an hour
 * boundary in each storage shape (flushed blocks, the later hour still in
 * the head, late data as a second block); a model check compares every
 * bucket of random series (integers and 1-decimal doubles, jittered
 * millisecond spacing, over three hours, in every storage shape) with the
 * downsampling rules computed here, bit for bit. */
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
#include "exec/exec.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

#define H0   1356998400LL /* 2013-01-01T00:00:00Z */
#define S(x) ((H0 + (x)) * 1000LL)

static void put(const char *host, int64_t ts_ms, int is_float, int64_t i, double f)
{
    oct_slice_t t[2] = {oct_slice_str("host"), oct_slice_str(host)};
    tsdb_dp_t dp = {oct_slice_str("sc.t"), t, 1, {ts_ms, {.i = i}, (uint8_t)is_float}, 0};
    if (is_float) dp.pt.val.f = f;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_put_batch(g_fx->db, &dp, 1, NULL, NULL, NULL, &eb), 1);
}

static void flush(void)
{
    oct_errbuf_t eb;
    if (tsdb_flush(g_fx->db, &eb)) fail_msg("flush: %s", eb.msg);
}

/* ---- random series and their model -------------------------------------- */

#define NR   4    /* random series r0..r3 */
#define MAXR 2400 /* points per random series */

typedef struct {
    int64_t ts;
    int is_float;
    int64_t i;
    double f;
} mpt_t;

static mpt_t g_r[NR][MAXR];
static size_t g_rn[NR];

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Three hours from S(1): steps of 1..13 s, a third with ms jitter; values
 * integers -50..49 or doubles k / 10: hour h of series s is all integers,
 * all doubles or mixed by (h + s) % 3, so buckets across an hour boundary
 * join blocks of every pair of kinds. */
static void gen(int s)
{
    int64_t t = S(1);
    size_t n = 0;
    int kind;
    while (n < MAXR) {
        kind = (int)(((t / 1000 - H0) / 3600 + s) % 3);
        mpt_t *p = &g_r[s][n];
        p->ts = t;
        p->is_float = kind == 0 ? 0 : kind == 1 ? 1 : (int)(next_rand() % 2);
        p->i = (int64_t)(next_rand() % 100) - 50;
        p->f = (double)((int64_t)(next_rand() % 2001) - 1000) / 10.0;
        n++;
        t += (int64_t)(1 + next_rand() % 13) * 1000 +
             (next_rand() % 3 == 0 ? (int64_t)(next_rand() % 999) : 0);
        if (t >= S(3 * 3600)) break;
    }
    g_rn[s] = n;
}

static void put_r(int s, int64_t from_ms, int64_t to_ms, int parity)
{
    char host[8];
    snprintf(host, sizeof host, "r%d", s);
    for (size_t k = 0; k < g_rn[s]; k++) {
        const mpt_t *p = &g_r[s][k];
        if (p->ts < from_ms || p->ts >= to_ms) continue;
        if (parity >= 0 && (int)(k % 2) != parity) continue;
        put(host, p->ts, p->is_float, p->i, p->f);
    }
}

static int64_t floor_div_ms(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The downsampling rules: every point an integer -> exact integer sum (avg:
 * the integer quotient when it divides, else sum / n in doubles), min, max,
 * count; any double -> doubles added in time order, min/max over doubles. */
static double model_bucket(const mpt_t *p, size_t n, const char *fn)
{
    int all_int = 1;
    for (size_t i = 0; i < n; i++)
        all_int &= !p[i].is_float;
    if (!strcmp(fn, "count")) return (double)n;
    if (all_int) {
        int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            sum += p[i].i;
            if (p[i].i < mn) mn = p[i].i;
            if (p[i].i > mx) mx = p[i].i;
        }
        if (!strcmp(fn, "sum")) return (double)sum;
        if (!strcmp(fn, "min")) return (double)mn;
        if (!strcmp(fn, "max")) return (double)mx;
        int64_t q = sum / (int64_t)n; /* exact when it divides */
        return sum % (int64_t)n == 0 ? (double)q : (double)sum / (double)n;
    }
    double r = 0, mn = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        double v = p[i].is_float ? p[i].f : (double)p[i].i;
        r += v;
        if (!i || v < mn) mn = v;
        if (!i || v > mx) mx = v;
    }
    if (!strcmp(fn, "sum")) return r;
    if (!strcmp(fn, "min")) return mn;
    if (!strcmp(fn, "max")) return mx;
    return r / (double)n;
}

/* ---- setup ---------------------------------------------------------------- */

/* Hand cases, one bucket across the hour boundary (see test_straddle):
 *   a (flushed)     3590:1 3595:2 | 3605:0.5 4000:4.25 (an integer block, then
 *                   a double one)
 *   h (head)        the same; the second hour still in the head
 *   l (late block)  the same; 3595 written after a flush, as a second block
 * Random: r0 flushed; r1 hours 0-1 flushed, hour 2 in the head; r2 every
 * other point flushed, then the rest as second blocks; r3 all in the head. */
static int setup(void **state)
{
    fx_t *fx = tsdb_fx_open();
    static const char *hs[] = {"a", "h", "l"};
    for (int k = 0; k < 3; k++) {
        put(hs[k], S(3590), 0, 1, 0);
        if (k != 2) put(hs[k], S(3595), 0, 2, 0);
        if (k != 1) {
            put(hs[k], S(3605), 1, 0, 0.5);
            put(hs[k], S(4000), 1, 0, 4.25);
        }
    }
    for (int s = 0; s < NR; s++)
        gen(s);
    put_r(0, S(0), S(3 * 3600), -1);
    put_r(1, S(0), S(2 * 3600), -1);
    put_r(2, S(0), S(3 * 3600), 0);
    flush();
    put("l", S(3595), 0, 2, 0);
    put_r(2, S(0), S(3 * 3600), 1);
    flush();
    put("h", S(3605), 1, 0, 0.5);
    put("h", S(4000), 1, 0, 4.25);
    put_r(1, S(2 * 3600), S(3 * 3600), -1);
    put_r(3, S(0), S(3 * 3600), -1);
    *state = fx;
    return 0;
}

/* ---- running ------------------------------------------------------------ */

typedef struct {
    size_t n, results;
    int64_t ts[MAXR];
    double v[MAXR];
    int is_null[MAXR];
} out_t;

static out_t g_o;

static int collect(void *ctx, const exec_result_t *r)
{
    out_t *o = ctx;
    o->results++;
    assert_true(r->n_dps <= MAXR);
    o->n = r->n_dps;
    for (size_t i = 0; i < r->n_dps; i++) {
        o->ts[i] = r->dps[i].ts_ms;
        o->is_null[i] = r->dps[i].is_null;
        o->v[i] = r->dps[i].is_int ? (double)r->dps[i].v.i : r->dps[i].v.f;
    }
    return 0;
}

static void run(int64_t start_ms, int64_t end_ms, const char *m)
{
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = start_ms;
    q.end_ms = end_ms;
    q.no_annotations = 1;
    oct_errbuf_t eb;
    if (query_parse_m(&q, m, &eb)) fail_msg("parse %s: %s", m, eb.msg);
    memset(&g_o, 0, sizeof g_o);
    int rc = exec_query(g_fx->db, &q, NULL, collect, &g_o, NULL, &eb);
    query_free(&q);
    if (rc) fail_msg("query %s: %d %s", m, rc, eb.msg);
    assert_int_equal(g_o.results, 1);
}

static void same_double(double got, double want, const char *what, size_t i)
{
    uint64_t g, w;
    memcpy(&g, &got, sizeof g);
    memcpy(&w, &want, sizeof w);
    if (g != w) fail_msg("%s point %zu: %.17g, want %.17g", what, i, got, want);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_straddle(void **state)
{
    (void)state;
    /* 7m = 420 s buckets are epoch multiples; H0 = 1356998400 leaves 240
     * mod 420, so buckets start at H0 + 180 + 420k: [3540, 3960) holds
     * 3590, 3595 and 3605 (across the hour boundary), [3960, 4380) holds
     * 4000. The first bucket mixes integers and a double: doubles in order,
     * 1 + 2 + 0.5 = 3.5. The second is 4.25 alone. */
    static const char *hs[] = {"a", "h", "l"};
    char m[64];
    for (int k = 0; k < 3; k++) {
        snprintf(m, sizeof m, "sum:7m-sum:sc.t{host=%s}", hs[k]);
        run(S(0), S(7199), m);
        assert_int_equal(g_o.n, 2);
        assert_int_equal(g_o.ts[0], S(3540));
        assert_int_equal(g_o.ts[1], S(3960));
        same_double(g_o.v[0], 3.5, m, 0);
        same_double(g_o.v[1], 4.25, m, 1);
        snprintf(m, sizeof m, "sum:7m-avg:sc.t{host=%s}", hs[k]);
        run(S(0), S(7199), m);
        same_double(g_o.v[0], 3.5 / 3.0, m, 0);
        same_double(g_o.v[1], 4.25, m, 1);
        snprintf(m, sizeof m, "sum:7m-min:sc.t{host=%s}", hs[k]);
        run(S(0), S(7199), m);
        same_double(g_o.v[0], 0.5, m, 0);
        snprintf(m, sizeof m, "sum:7m-count:sc.t{host=%s}", hs[k]);
        run(S(0), S(7199), m);
        same_double(g_o.v[0], 3.0, m, 0);
        same_double(g_o.v[1], 1.0, m, 1);
        /* zero fill over [0, 7199]: buckets H0 + 180 + 420k up to 6900 (the
         * one at H0 - 240 starts before the query), 17 of them, zero but
         * the two above (k = 8 and 9) */
        snprintf(m, sizeof m, "sum:7m-sum-zero:sc.t{host=%s}", hs[k]);
        run(S(0), S(7199), m);
        assert_int_equal(g_o.n, 17);
        for (size_t i = 0; i < 17; i++) {
            assert_int_equal(g_o.ts[i], S(180 + 420 * (int64_t)i));
            same_double(g_o.v[i], i == 8 ? 3.5 : i == 9 ? 4.25 : 0.0, m, i);
        }
    }
}

static void test_model(void **state)
{
    (void)state;
    static const char *ivs[] = {"7s", "1m", "7m", "25m", "1h", "90m"};
    static const int64_t iv_ms[] = {7000, 60000, 420000, 1500000, 3600000, 5400000};
    static const char *fns[] = {"sum", "avg", "min", "max", "count"};
    const int64_t start = S(0), end = S(3 * 3600) - 1;
    char m[64];
    for (int s = 0; s < NR; s++)
        for (size_t a = 0; a < sizeof ivs / sizeof ivs[0]; a++)
            for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
                snprintf(m, sizeof m, "sum:%s-%s:sc.t{host=r%d}", ivs[a], fns[f], s);
                run(start, end, m);
                /* buckets of the points in order; one starting before the
                 * query start is not output */
                size_t w = 0;
                const mpt_t *p = g_r[s];
                for (size_t i = 0; i < g_rn[s];) {
                    int64_t b = floor_div_ms(p[i].ts, iv_ms[a]) * iv_ms[a];
                    size_t j = i + 1;
                    while (j < g_rn[s] && p[j].ts < b + iv_ms[a])
                        j++;
                    if (b >= start) {
                        assert_true(w < g_o.n);
                        assert_int_equal(g_o.ts[w], b);
                        same_double(g_o.v[w], model_bucket(p + i, j - i, fns[f]), m, w);
                        w++;
                    }
                    i = j;
                }
                assert_int_equal(g_o.n, w);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straddle),
        cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, setup, tsdb_fx_teardown);
}
