/* test_query_agg_range.c -- query_aggregate_range: pieces of the time line
 * put together must be exactly query_aggregate's output (same timestamps,
 * same value bits, same flags), for every kind of interpolation, with and
 * without rate, on series that start and end at different times, repeat
 * no timestamp, mix integers, doubles and NaN, and for split points on,
 * between, before and after the points. Plus one small case by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

#define NS   24
#define MAXN 200

static query_dp_t pts[NS][MAXN];
static size_t lens[NS];
static const query_dp_t *ser[NS];

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void make(int kind)
{
    for (size_t s = 0; s < NS; s++) {
        int64_t t = 1000 * (int64_t)(rnd() % 50);
        lens[s] = s == 5 ? 0 : s == 6 ? 1 : 20 + rnd() % (MAXN - 20);
        for (size_t i = 0; i < lens[s]; i++) {
            query_dp_t *p = &pts[s][i];
            memset(p, 0, sizeof *p);
            p->ts_ms = t;
            t += 1 + (int64_t)(rnd() % 3000) * (kind == 0 ? 1 : 1000);
            if (kind == 2 && rnd() % 3 == 0) {
                p->is_int = 1;
                p->v.i = (int64_t)(rnd() % 1000);
            } else {
                p->v.f = (double)(rnd() % 100000) / 100.0;
                if (rnd() % 50 == 0) p->v.f = NAN;
            }
        }
        ser[s] = pts[s];
    }
}

static int same(const query_dp_t *a, const query_dp_t *b)
{
    return a->ts_ms == b->ts_ms && a->is_int == b->is_int && a->is_null == b->is_null &&
           !memcmp(&a->v, &b->v, sizeof a->v);
}

static void check(const char *agg, int rate, const int64_t *cuts, size_t n_cuts)
{
    const query_agg_t *a = query_agg_find(agg);
    assert_non_null(a);
    query_dp_t *whole;
    long nw = query_aggregate(a, rate, ser, lens, NS, &whole);
    assert_true(nw > 0);
    long at = 0;
    for (size_t c = 0; c <= n_cuts; c++) {
        int64_t from = c == 0 ? INT64_MIN : cuts[c - 1], to = c == n_cuts ? INT64_MAX : cuts[c];
        query_dp_t *part;
        long np = query_aggregate_range(a, rate, ser, lens, NS, from, to, &part);
        assert_true(np >= 0);
        for (long i = 0; i < np; i++) {
            assert_true(at + i < nw);
            if (!same(&part[i], &whole[at + i]))
                fail_msg("%s rate %d piece %zu point %ld differs", agg, rate, c, i);
            assert_true(part[i].ts_ms >= from && part[i].ts_ms < to);
        }
        at += np;
        free(part);
    }
    assert_int_equal(at, nw);
    free(whole);
}

static void test_pieces_equal_whole(void **state)
{
    (void)state;
    static const char *aggs[] = {"sum",    "avg",   "zimsum", "pfsum", "min",   "max", "mimmin",
                                 "mimmax", "count", "dev",    "p50",   "first", "last"};
    for (int kind = 0; kind < 3; kind++) {
        make(kind);
        /* cuts: before everything, on a point, between points, after all */
        int64_t on = pts[0][lens[0] / 2].ts_ms, mid = pts[1][lens[1] / 3].ts_ms + 1;
        int64_t cuts1[] = {-5, on, on + 1, mid, INT64_MAX - 1};
        /* pieces must tile the line in order */
        for (int i = 1; i < 5; i++)
            for (int j = i; j > 0 && cuts1[j] < cuts1[j - 1]; j--) {
                int64_t t = cuts1[j];
                cuts1[j] = cuts1[j - 1];
                cuts1[j - 1] = t;
            }
        int64_t cuts2[] = {pts[2][lens[2] - 1].ts_ms};
        for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
            for (int rate = 0; rate < 2; rate++) {
                check(aggs[i], rate, cuts1, 5);
                check(aggs[i], rate, cuts2, 1);
            }
    }
}

/* By hand: a = {0:1, 10:3}, b = {5:10, 20:20} (integers), sum with LERP.
 * Whole: 0 -> 1 (b not started); 5 -> a at 5 is 2, + 10 = 12;
 * 10 -> 3 + b at 10 (10 + 5 * 10 / 15, not integral: 13.333...) ;
 * 20 -> 20 (a ended). The piece [6, 21) gives the last two. */
static void test_by_hand(void **state)
{
    (void)state;
    query_dp_t a[2] = {{.ts_ms = 0, .v.i = 1, .is_int = 1}, {.ts_ms = 10, .v.i = 3, .is_int = 1}};
    query_dp_t b[2] = {{.ts_ms = 5, .v.i = 10, .is_int = 1}, {.ts_ms = 20, .v.i = 20, .is_int = 1}};
    const query_dp_t *s[2] = {a, b};
    size_t l[2] = {2, 2};
    query_dp_t *o;
    long n = query_aggregate_range(query_agg_find("sum"), 0, s, l, 2, 6, 21, &o);
    assert_int_equal(n, 2);
    assert_int_equal(o[0].ts_ms, 10);
    assert_int_equal(o[0].is_int, 0);
    assert_true(fabs(o[0].v.f - (3.0 + 10.0 + 50.0 / 15.0)) < 1e-12);
    assert_int_equal(o[1].ts_ms, 20);
    assert_int_equal(o[1].is_int, 1);
    assert_int_equal(o[1].v.i, 20);
    free(o);
    n = query_aggregate_range(query_agg_find("sum"), 0, s, l, 2, INT64_MIN, 6, &o);
    assert_int_equal(n, 2);
    assert_int_equal(o[0].v.i, 1);
    assert_int_equal(o[1].v.i, 12);
    free(o);
}

/* One series alone (the single-series path) against the same series with
 * an empty second one (the merge path): equal for every aggregator, with
 * and without rate, whole and cut, on series with integers, NaN, -0.0,
 * null points and a repeated timestamp (of which the last point counts). */
static void test_one_series_as_merge(void **state)
{
    (void)state;
    static const char *aggs[] = {"sum",    "avg",    "zimsum", "pfsum",  "min",      "max",
                                 "mimmin", "mimmax", "count",  "dev",    "p50",      "first",
                                 "last",   "mult",   "diff",   "median", "squareSum"};
    static const query_dp_t none[1];
    for (int kind = 0; kind < 3; kind++) {
        make(kind);
        query_dp_t *p = pts[0];
        p[3].v.f = -0.0, p[3].is_int = 0;
        p[4].is_null = 1, p[4].is_int = 0, p[4].v.f = NAN;
        p[8].ts_ms = p[7].ts_ms; /* a repeated timestamp */
        for (size_t s = 0; s < NS; s++) {
            if (!lens[s]) continue;
            const query_dp_t *one[1] = {ser[s]}, *two[2] = {ser[s], none};
            size_t l1[1] = {lens[s]}, l2[2] = {lens[s], 0};
            int64_t cuts[][2] = {{INT64_MIN, INT64_MAX},
                                 {ser[s][lens[s] / 2].ts_ms, INT64_MAX},
                                 {INT64_MIN, ser[s][lens[s] / 3].ts_ms + 1}};
            for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
                for (int rate = 0; rate < 2; rate++)
                    for (size_t c = 0; c < 3; c++) {
                        const query_agg_t *a = query_agg_find(aggs[i]);
                        assert_non_null(a);
                        query_dp_t *o1, *o2;
                        long n1 =
                            query_aggregate_range(a, rate, one, l1, 1, cuts[c][0], cuts[c][1], &o1);
                        long n2 =
                            query_aggregate_range(a, rate, two, l2, 2, cuts[c][0], cuts[c][1], &o2);
                        assert_int_equal(n1, n2);
                        for (long k = 0; k < n1; k++)
                            if (!same(&o1[k], &o2[k]))
                                fail_msg("%s rate %d series %zu cut %zu point %ld differs", aggs[i],
                                         rate, s, c, k);
                        free(o1);
                        free(o2);
                    }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pieces_equal_whole),
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_one_series_as_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
