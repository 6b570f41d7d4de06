/* test_gexp.c -- query/gexp.h: the gexp grammar (calls, metric sub-queries
 * with tag groups, tokens, failures), time spans and the moving average,
 * each expected value worked by hand beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "query/gexp.h"

static void gexp_parse_tree(void **state)
{
    (void)state;
    gexp_node_t *n;
    oct_errbuf_t eb;
    assert_int_equal(gexp_parse(" sum ( scale(sum:1m-avg:m{host=a,dc=b|c}, 2.5) , "
                                "timeShift(max:rate:m2, '1d') ) ",
                                &n, &eb),
                     0);
    assert_int_equal(n->kind, GEXP_CALL);
    assert_string_equal(n->text, "sum");
    assert_int_equal(n->n_args, 2);
    const gexp_node_t *sc = n->args[0], *ts = n->args[1];
    assert_string_equal(sc->text, "scale");
    assert_int_equal(sc->args[0]->kind, GEXP_METRIC);
    assert_string_equal(sc->args[0]->text, "sum:1m-avg:m{host=a,dc=b|c}"); /* commas in braces */
    assert_int_equal(sc->args[1]->kind, GEXP_TOKEN);
    assert_string_equal(sc->args[1]->text, "2.5");
    assert_string_equal(ts->text, "timeShift");
    assert_string_equal(ts->args[0]->text, "max:rate:m2");
    assert_string_equal(ts->args[1]->text, "'1d'");
    gexp_free(n);
    /* filter functions inside the tag group are part of the metric */
    assert_int_equal(gexp_parse("absolute(sum:m{host=regexp(web.*),dc=*})", &n, &eb), 0);
    assert_string_equal(n->args[0]->text, "sum:m{host=regexp(web.*),dc=*}");
    gexp_free(n);
}

static void gexp_parse_failures(void **state)
{
    (void)state;
    static const char *const bad[] = {"sum:m",      "sum(a", "sum(a,)",    "sum(a) x",
                                      "sum(m{a=b)", "(a)",   "sum(a(b)c)", "alias(m, 'open)"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gexp_node_t *n = (gexp_node_t *)1;
        oct_errbuf_t eb;
        assert_int_equal(gexp_parse(bad[i], &n, &eb), OCT_EPARSE);
        assert_null(n);
        char want[128];
        snprintf(want, sizeof want, "Failed to parse %s", bad[i]);
        assert_string_equal(eb.msg, want);
    }
}

static void gexp_spans(void **state)
{
    (void)state;
    int64_t ms;
    oct_errbuf_t eb;
    assert_int_equal(gexp_parse_span("'1d'", &ms, &eb), 0);
    assert_int_equal(ms, 86400000);
    assert_int_equal(gexp_parse_span("90sec", &ms, &eb), 0);
    assert_int_equal(ms, 90000);
    assert_int_equal(gexp_parse_span("'2weeks'", &ms, &eb), 0);
    assert_int_equal(ms, 2 * 604800000LL);
    assert_int_equal(gexp_parse_span("'3hr'", &ms, &eb), 0);
    assert_int_equal(ms, 3 * 3600000LL);
    assert_int_equal(gexp_parse_span("'0m'", &ms, &eb), OCT_EINVAL);
    assert_int_equal(gexp_parse_span("'1y'", &ms, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "unknown time unit=y in '1y'");
}

static void gexp_moving_average_count_and_time(void **state)
{
    (void)state;
    query_dp_t d[6];
    /* ts 0,10,20,30,40,50 s; values 2, 4, NaN, 8, 10, 12 (the 4 an integer) */
    static const double v[] = {2, 4, NAN, 8, 10, 12};
    for (int i = 0; i < 6; i++) {
        memset(&d[i], 0, sizeof d[i]);
        d[i].ts_ms = i * 10000;
        d[i].v.f = v[i];
    }
    d[1].is_int = 1;
    d[1].v.i = 4;
    query_dp_t c[6];
    memcpy(c, d, sizeof d);
    gexp_moving_average(c, 6, 2, 0);
    /* newest 2 non-NaN: -, (2+4)/2, (2+4)/2 (NaN skipped), (4+8)/2, 9, 11 */
    static const double want_n[] = {0, 3, 3, 6, 9, 11};
    for (int i = 0; i < 6; i++) {
        assert_false(c[i].is_int);
        assert_true(c[i].v.f == want_n[i]);
    }
    memcpy(c, d, sizeof d);
    gexp_moving_average(c, 6, 0, 25000);
    /* window (t-25s, t]; 0 while t - 0 < 25 s: t=30 {10 4, 20 NaN, 30 8}
     * -> (4+8)/2 = 6; t=40 {20 NaN, 30, 40} -> (8+10)/2 = 9; t=50 {30, 40,
     * 50} -> (8+10+12)/3 = 10 */
    static const double want_t[] = {0, 0, 0, 6, 9, 10};
    for (int i = 0; i < 6; i++)
        assert_true(c[i].v.f == want_t[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gexp_parse_tree),
        cmocka_unit_test(gexp_parse_failures),
        cmocka_unit_test(gexp_spans),
        cmocka_unit_test(gexp_moving_average_count_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
