/* test_query_hist.c -- query/query_hist.c: the percentile of a bucketed histogram against
 * values worked out by hand from docs/histograms.md's rule (the midpoint of the first bucket
 * whose cumulative share reaches p), 2.4's own example, bucket edges exactly; the names 2.4
 * prints (Java's Float.toString); the m= part and the checks of a histogram sub-query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "query/query.h"

#define B(lo, hi, n) ((query_hbucket_t){(lo), (hi), (n)})

static void pct_24_example(void **state)
{
    (void)state;
    /* 2.4's: [0,1.5)=42, [1.5,5.75)=24; shares 42/66 = 63.63..% and 100% */
    const query_hbucket_t b[] = {B(0, 1.5f, 42), B(1.5f, 5.75f, 24)};
    assert_true(query_hist_percentile(b, 2, 50) == 0.75);
    assert_true(query_hist_percentile(b, 2, 63.6) == 0.75);
    assert_true(query_hist_percentile(b, 2, 63.7) == 3.625);
    assert_true(query_hist_percentile(b, 2, 99) == 3.625);
    assert_true(query_hist_percentile(b, 2, 100) == 3.625);
    /* 2.4 answers -1 below p = 1; the 0.5th percentile is in the first bucket */
    assert_true(query_hist_percentile(b, 2, 0.5) == 0.75);
}

static void pct_edges(void **state)
{
    (void)state;
    /* four buckets of one value: the 25th percentile is the first bucket's upper edge */
    const query_hbucket_t b[] = {B(0, 10, 1), B(10, 20, 1), B(20, 30, 1), B(30, 40, 1)};
    assert_true(query_hist_percentile(b, 4, 0) == 5);
    assert_true(query_hist_percentile(b, 4, 25) == 5);
    assert_true(query_hist_percentile(b, 4, 25.0001) == 15);
    assert_true(query_hist_percentile(b, 4, 50) == 15);
    assert_true(query_hist_percentile(b, 4, 75) == 25);
    assert_true(query_hist_percentile(b, 4, 75.5) == 35);
    assert_true(query_hist_percentile(b, 4, 100) == 35);
    /* 999 of 1000 below 1: p99.9 is the first bucket (2.4, comparing with the float 99.9f,
     * which is above 99.9, answers 1.5) */
    const query_hbucket_t c[] = {B(0, 1, 999), B(1, 2, 1)};
    assert_true(query_hist_percentile(c, 2, 99.9) == 0.5);
    assert_true(query_hist_percentile(c, 2, 99.91) == 1.5);
    /* thirds: 1/3 is 33.33..%, so p = 100/3 is the first bucket's edge */
    const query_hbucket_t d[] = {B(0, 2, 1), B(2, 4, 1), B(4, 6, 1)};
    assert_true(query_hist_percentile(d, 3, 100.0 / 3) == 1);
    assert_true(query_hist_percentile(d, 3, 33.34) == 3);
    assert_true(query_hist_percentile(d, 3, 200.0 / 3) == 3);
    /* empty buckets are skipped, p0 is the first value's bucket */
    const query_hbucket_t e[] = {B(0, 1, 0), B(1, 2, 5), B(2, 3, 0)};
    assert_true(query_hist_percentile(e, 3, 0) == 1.5);
    assert_true(query_hist_percentile(e, 3, 100) == 1.5);
    /* no value at all: no percentile (2.4: 0.0) */
    assert_true(isnan(query_hist_percentile(e, 1, 50)));
    assert_true(isnan(query_hist_percentile(e, 0, 50)));
    /* counts past 32 bits (2.4 sums them in an int) */
    const query_hbucket_t f[] = {B(0, 1, 3000000000u), B(1, 2, 1000000000u)};
    assert_true(query_hist_percentile(f, 2, 75) == 0.5);
    assert_true(query_hist_percentile(f, 2, 76) == 1.5);
}

static void java_float(void **state)
{
    (void)state;
    static const struct {
        float f;
        const char *s;
    } t[] = {
        {75, "75.0"},
        {99.9f, "99.9"},
        {0.5f, "0.5"},
        {5.75f, "5.75"},
        {100, "100.0"},
        {0, "0.0"},
        {-0.0f, "-0.0"},
        {0.1f, "0.1"},
        {1e-3f, "0.001"},
        {1e-4f, "1.0E-4"},
        {1.5e7f, "1.5E7"},
        {1234567, "1234567.0"},
        {12345678, "1.2345678E7"},
        {33.333332f, "33.333332"},
        {-2.5f, "-2.5"},
        {NAN, "NaN"},
        {-INFINITY, "-Infinity"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char buf[32];
        size_t n = query_java_float(t[i].f, buf);
        assert_string_equal(buf, t[i].s);
        assert_int_equal(n, strlen(t[i].s));
    }
}

static void m_part(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof q);
    oct_errbuf_t eb;
    assert_int_equal(query_parse_m(&q,
                                   "sum:1h-sum:percentiles[99.9, 75,50]:show-histogram-buckets:"
                                   "h.m{host=*}",
                                   &eb),
                     0);
    assert_int_equal(q.n_subs, 1);
    const query_sub_t *s = &q.subs[0];
    assert_int_equal(s->n_percentiles, 3);
    assert_true(s->percentiles[0] == 50 && s->percentiles[1] == 75 && s->percentiles[2] == 99.9);
    assert_true(s->show_histogram_buckets);
    assert_true(query_sub_is_histogram(s));
    /* the same without the percentiles is another sub-query, not a duplicate */
    assert_int_equal(query_parse_m(&q, "sum:1h-sum:show-histogram-buckets:h.m{host=*}", &eb), 0);
    assert_int_equal(query_parse_m(&q, "none:h.m", &eb), 0);
    assert_int_equal(q.n_subs, 3);
    assert_false(query_sub_is_histogram(&q.subs[2]));
    query_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pct_24_example),
        cmocka_unit_test(pct_edges),
        cmocka_unit_test(java_float),
        cmocka_unit_test(m_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
