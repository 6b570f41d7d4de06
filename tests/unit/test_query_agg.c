/* test_query_agg.c -- query/: the aggregator registry and every aggregator's
 * function (docs/query.md section 6) on integers, doubles, NaN and fill nulls.
 *
 * Every expected number is worked out by hand in the comment beside it (the
 * percentile positions from Apache Commons Math's formulas: default q(n+1),
 * R-3 rint(nq), R-7 1+(n-1)q, then interpolation between the neighbours). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "query/query.h"

static query_dp_t I(int64_t v)
{
    query_dp_t p = {.is_int = 1};
    p.v.i = v;
    return p;
}

static query_dp_t D(double v)
{
    query_dp_t p = {.is_int = 0};
    p.v.f = v;
    return p;
}

static query_dp_t NUL(void)
{
    query_dp_t p = {.is_null = 1};
    p.v.f = NAN;
    return p;
}

static query_dp_t run(const char *name, const query_dp_t *v, size_t n)
{
    const query_agg_t *a = query_agg_find(name);
    if (!a) fail_msg("no aggregator %s", name);
    query_dp_t out;
    memset(&out, 0xAB, sizeof out);
    int rc = query_agg_apply(a, v, n, &out);
    if (rc != 1) fail_msg("%s: rc %d", name, rc);
    return out;
}

static void expect_int(const char *name, const query_dp_t *v, size_t n, int64_t want)
{
    query_dp_t r = run(name, v, n);
    if (!r.is_int)
        fail_msg("%s: expected integer %lld, got double %.17g", name, (long long)want, r.v.f);
    if (r.v.i != want)
        fail_msg("%s: expected %lld, got %lld", name, (long long)want, (long long)r.v.i);
}

static void expect_dbl(const char *name, const query_dp_t *v, size_t n, double want)
{
    query_dp_t r = run(name, v, n);
    if (r.is_int)
        fail_msg("%s: expected double %.17g, got integer %lld", name, want, (long long)r.v.i);
    if (isnan(want)) {
        if (!isnan(r.v.f)) fail_msg("%s: expected NaN, got %.17g", name, r.v.f);
        return;
    }
    if (fabs(r.v.f - want) > 1e-12 * fmax(1.0, fabs(want)))
        fail_msg("%s: expected %.17g, got %.17g", name, want, r.v.f);
}

/* ---- registry --------------------------------------------------------------- */

static const struct {
    const char *name;
    query_interp_t interp;
} table[] = {
    {"sum", QUERY_INTERP_LERP},      {"min", QUERY_INTERP_LERP},     {"max", QUERY_INTERP_LERP},
    {"avg", QUERY_INTERP_LERP},      {"median", QUERY_INTERP_LERP},  {"dev", QUERY_INTERP_LERP},
    {"diff", QUERY_INTERP_LERP},     {"mult", QUERY_INTERP_LERP},    {"zimsum", QUERY_INTERP_ZIM},
    {"mimmin", QUERY_INTERP_MAX},    {"mimmax", QUERY_INTERP_MIN},   {"pfsum", QUERY_INTERP_PREV},
    {"squareSum", QUERY_INTERP_ZIM}, {"count", QUERY_INTERP_ZIM},    {"first", QUERY_INTERP_ZIM},
    {"last", QUERY_INTERP_ZIM},      {"none", QUERY_INTERP_ZIM},     {"p50", QUERY_INTERP_LERP},
    {"p75", QUERY_INTERP_LERP},      {"p90", QUERY_INTERP_LERP},     {"p95", QUERY_INTERP_LERP},
    {"p99", QUERY_INTERP_LERP},      {"p999", QUERY_INTERP_LERP},    {"ep50r3", QUERY_INTERP_LERP},
    {"ep75r3", QUERY_INTERP_LERP},   {"ep90r3", QUERY_INTERP_LERP},  {"ep95r3", QUERY_INTERP_LERP},
    {"ep99r3", QUERY_INTERP_LERP},   {"ep999r3", QUERY_INTERP_LERP}, {"ep50r7", QUERY_INTERP_LERP},
    {"ep75r7", QUERY_INTERP_LERP},   {"ep90r7", QUERY_INTERP_LERP},  {"ep95r7", QUERY_INTERP_LERP},
    {"ep99r7", QUERY_INTERP_LERP},   {"ep999r7", QUERY_INTERP_LERP},
};

static void agg_registry_has_every_aggregator_with_its_interpolation(void **state)
{
    (void)state;
    size_t n = sizeof table / sizeof table[0];
    assert_int_equal(n, 35);
    for (size_t i = 0; i < n; i++) {
        const query_agg_t *a = query_agg_find(table[i].name);
        if (!a) fail_msg("missing %s", table[i].name);
        assert_string_equal(query_agg_name(a), table[i].name);
        if (query_agg_interp(a) != table[i].interp)
            fail_msg("%s: wrong interpolation", table[i].name);
    }
    /* The names list holds exactly these 35, each once. */
    const char *const *names = query_agg_names();
    size_t k = 0;
    for (; names[k]; k++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found += strcmp(names[k], table[i].name) == 0;
        if (found != 1) fail_msg("names list: %s", names[k]);
        for (size_t j = 0; j < k; j++)
            if (strcmp(names[j], names[k]) == 0) fail_msg("duplicate %s", names[k]);
    }
    assert_int_equal(k, 35);
    assert_null(query_agg_find("Sum"));
    assert_null(query_agg_find("squaresum"));
    assert_null(query_agg_find("raw"));
    assert_null(query_agg_find("p100"));
    assert_null(query_agg_find(""));
}

/* ---- integers ---------------------------------------------------------------- */

/* V = 3 1 4 1 5; sorted 1 1 3 4 5; n = 5, sum 14, sum of squares 52. */
static void agg_integers(void **state)
{
    (void)state;
    query_dp_t v[] = {I(3), I(1), I(4), I(1), I(5)};
    size_t n = 5;
    expect_int("sum", v, n, 14);
    expect_int("zimsum", v, n, 14);
    expect_int("pfsum", v, n, 14);
    expect_int("min", v, n, 1);
    expect_int("mimmin", v, n, 1);
    expect_int("max", v, n, 5);
    expect_int("mimmax", v, n, 5);
    expect_dbl("avg", v, n, 2.8);      /* 14/5; OpenTSDB truncates to 2 */
    expect_int("median", v, n, 3);     /* sorted[5/2] */
    expect_dbl("dev", v, n, 1.6);      /* sqrt((5*52 - 14^2)/25) = 8/5 */
    expect_int("diff", v, n, 2);       /* 5 - 3 */
    expect_int("mult", v, n, 60);      /* 3*1*4*1*5 */
    expect_int("squareSum", v, n, 52); /* 9+1+16+1+25 */
    expect_int("count", v, n, 5);
    expect_int("first", v, n, 3);
    expect_int("last", v, n, 5);
    /* default estimator, pos = q*6 */
    expect_int("p50", v, n, 3);   /* pos 3 -> x[2] */
    expect_dbl("p75", v, n, 4.5); /* pos 4.5 -> 4 + .5*(5-4) */
    expect_int("p90", v, n, 5);   /* pos 5.4 >= n -> x[4] */
    expect_int("p95", v, n, 5);
    expect_int("p99", v, n, 5);
    expect_int("p999", v, n, 5);
    /* R-3, pos = rint(5q), half to even */
    expect_int("ep50r3", v, n, 1); /* rint(2.5) = 2 -> x[1] */
    expect_int("ep75r3", v, n, 4); /* rint(3.75) = 4 -> x[3] */
    expect_int("ep90r3", v, n, 4); /* rint(4.5) = 4 -> x[3] */
    expect_int("ep95r3", v, n, 5); /* rint(4.75) = 5 -> x[4] */
    expect_int("ep99r3", v, n, 5);
    expect_int("ep999r3", v, n, 5);
    /* R-7, pos = 1 + 4q */
    expect_int("ep50r7", v, n, 3);   /* pos 3 -> x[2] */
    expect_int("ep75r7", v, n, 4);   /* pos 4 -> x[3] */
    expect_dbl("ep90r7", v, n, 4.6); /* pos 4.6 -> 4 + .6 */
    expect_dbl("ep95r7", v, n, 4.8);
    expect_dbl("ep99r7", v, n, 4.96);
    expect_dbl("ep999r7", v, n, 4.996);
}

static void agg_integers_stay_integers_when_exact(void **state)
{
    (void)state;
    query_dp_t two[] = {I(2), I(4)};
    expect_int("avg", two, 2, 3);
    query_dp_t dv[] = {I(2), I(4), I(4), I(4), I(5), I(5), I(7), I(9)};
    expect_int("dev", dv, 8, 2); /* mean 5, squares 9+1+1+1+0+0+4+16 = 32, /8 = 4 */
    query_dp_t p[] = {I(1), I(3)};
    expect_int("p50", p, 2, 2); /* pos 1.5 -> 1 + .5*2 */
    query_dp_t even[] = {I(4), I(1), I(3), I(2)};
    expect_int("median", even, 4, 3); /* upper median: sorted[2] */
    query_dp_t one[] = {I(-7)};
    expect_int("dev", one, 1, 0);
    expect_int("diff", one, 1, 0);
    expect_int("avg", one, 1, -7);
    expect_int("p99", one, 1, -7);
    expect_int("ep50r3", one, 1, -7);
    expect_int("none", one, 1, -7);
    query_dp_t neg[] = {I(-3), I(-4)};
    expect_dbl("avg", neg, 2, -3.5); /* Java's -7/2 would give -3 */
}

static void agg_integer_overflow_falls_back_to_double(void **state)
{
    (void)state;
    query_dp_t big[] = {I(INT64_MAX), I(1)};
    expect_dbl("sum", big, 2, 9223372036854775808.0);
    expect_int("max", big, 2, INT64_MAX);
    expect_int("avg", big, 2, 4611686018427387904LL); /* (2^63-1+1)/2 = 2^62, exact */
    query_dp_t sq[] = {I(4000000000LL), I(4000000000LL)};
    expect_dbl("squareSum", sq, 2, 3.2e19);
    expect_dbl("mult", sq, 2, 1.6e19);
    query_dp_t d[] = {I(INT64_MIN), I(INT64_MAX)};
    expect_dbl("diff", d, 2, 18446744073709551615.0);
}

/* ---- doubles and NaN ---------------------------------------------------------- */

/* W = 2.5 NaN -1 4 0.5; the NaN is skipped: 4 values, sorted -1 .5 2.5 4,
 * sum 6, mean 1.5, squared deviations 1+6.25+6.25+1 = 14.5. */
static void agg_doubles_skip_nan(void **state)
{
    (void)state;
    query_dp_t v[] = {D(2.5), D(NAN), D(-1.0), D(4.0), D(0.5)};
    size_t n = 5;
    expect_dbl("sum", v, n, 6.0);
    expect_dbl("zimsum", v, n, 6.0);
    expect_dbl("min", v, n, -1.0);
    expect_dbl("max", v, n, 4.0);
    expect_dbl("avg", v, n, 1.5);
    expect_dbl("median", v, n, 2.5); /* sorted[4/2] */
    expect_dbl("dev", v, n, sqrt(3.625));
    expect_dbl("diff", v, n, -2.0); /* 0.5 - 2.5 */
    expect_dbl("mult", v, n, -5.0); /* 2.5 * -1 * 4 * .5 */
    expect_dbl("squareSum", v, n, 23.5);
    expect_dbl("count", v, n, 4.0);
    expect_dbl("first", v, n, 2.5);
    expect_dbl("last", v, n, 0.5);
    expect_dbl("p50", v, n, 1.5);   /* pos 2.5 -> .5 + .5*(2.5-.5) */
    expect_dbl("p75", v, n, 3.625); /* pos 3.75 -> 2.5 + .75*1.5 */
    expect_dbl("p90", v, n, 4.0);   /* pos 4.5 >= 4 */
    expect_dbl("p999", v, n, 4.0);
    /* The estimators apply to doubles too (OpenTSDB would answer p50's 1.5). */
    expect_dbl("ep50r3", v, n, 0.5);     /* rint(2) = 2 -> x[1] */
    expect_dbl("ep75r3", v, n, 2.5);     /* rint(3) -> x[2] */
    expect_dbl("ep90r3", v, n, 4.0);     /* rint(3.6) = 4 -> x[3] */
    expect_dbl("ep50r7", v, n, 1.5);     /* pos 2.5 */
    expect_dbl("ep75r7", v, n, 2.875);   /* pos 3.25 -> 2.5 + .25*1.5 */
    expect_dbl("ep90r7", v, n, 3.55);    /* pos 3.7 */
    expect_dbl("ep95r7", v, n, 3.775);   /* pos 3.85 */
    expect_dbl("ep99r7", v, n, 3.955);   /* pos 3.97 */
    expect_dbl("ep999r7", v, n, 3.9955); /* pos 3.997 */
}

static void agg_all_nan_gives_nan_and_count_zero(void **state)
{
    (void)state;
    query_dp_t v[] = {D(NAN), D(NAN)};
    const char *nan_aggs[] = {"sum",  "min",    "max",    "avg",    "median", "dev",       "diff",
                              "mult", "zimsum", "mimmin", "mimmax", "pfsum",  "squareSum", "first",
                              "last", "p50",    "p999",   "ep50r3", "ep99r7"};
    for (size_t i = 0; i < sizeof nan_aggs / sizeof nan_aggs[0]; i++)
        expect_dbl(nan_aggs[i], v, 2, NAN);
    expect_dbl("count", v, 2, 0.0);
}

static void agg_nan_edges(void **state)
{
    (void)state;
    query_dp_t v[] = {D(NAN), D(1.5), D(NAN)};
    expect_dbl("first", v, 3, 1.5);
    expect_dbl("last", v, 3, 1.5);
    expect_dbl("diff", v, 3, 0.0); /* one real value */
    expect_dbl("dev", v, 3, 0.0);
    expect_dbl("mult", v, 3, 1.5);
    /* A NaN is a double: mixing it with integers takes the double path. */
    query_dp_t m[] = {I(1), D(NAN), I(2)};
    expect_dbl("sum", m, 3, 3.0);
    expect_dbl("avg", m, 3, 1.5);
    expect_dbl("count", m, 3, 2.0);
    query_dp_t mix[] = {I(1), D(2.5)};
    expect_dbl("sum", mix, 2, 3.5);
    expect_dbl("max", mix, 2, 2.5);
    expect_dbl("min", mix, 2, 1.0);
}

static void agg_fill_nulls_are_nan_and_marked(void **state)
{
    (void)state;
    query_dp_t v[] = {NUL(), NUL()};
    query_dp_t r = run("sum", v, 2);
    assert_false(r.is_int);
    assert_true(isnan(r.v.f));
    assert_true(r.is_null);
    query_dp_t w[] = {NUL(), I(4)};
    r = run("sum", w, 2);
    assert_false(r.is_null);
    assert_false(r.is_int);
    assert_true(r.v.f == 4.0);
    /* A plain NaN is not a null. */
    query_dp_t x[] = {D(NAN)};
    r = run("max", x, 1);
    assert_true(isnan(r.v.f));
    assert_false(r.is_null);
}

static void agg_none_and_empty(void **state)
{
    (void)state;
    const query_agg_t *none = query_agg_find("none");
    query_dp_t v[] = {D(2.25), D(3.0)};
    query_dp_t out;
    assert_int_equal(query_agg_apply(none, v, 2, &out), OCT_EINVAL);
    assert_int_equal(query_agg_apply(none, v, 1, &out), 1);
    assert_true(out.v.f == 2.25);
    assert_int_equal(query_agg_apply(query_agg_find("sum"), v, 0, &out), 0);
    assert_int_equal(query_agg_apply(query_agg_find("p50"), v, 0, &out), 0);
}

/* Percentiles over a larger set (beyond the stack scratch): 1..1000. */
static void agg_percentiles_large(void **state)
{
    (void)state;
    static query_dp_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = I(1000 - i);                /* reversed: must sort */
    expect_dbl("p50", v, 1000, 500.5);     /* pos 500.5 -> 500 + .5 */
    expect_int("median", v, 1000, 501);    /* sorted[500] */
    expect_int("ep50r3", v, 1000, 500);    /* rint(500) -> x[499] */
    expect_dbl("ep50r7", v, 1000, 500.5);  /* pos 1 + 999*.5 = 500.5 */
    expect_int("ep99r3", v, 1000, 990);    /* rint(990) */
    expect_dbl("ep75r7", v, 1000, 750.25); /* pos 1+999*.75 = 750.25 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agg_registry_has_every_aggregator_with_its_interpolation),
        cmocka_unit_test(agg_integers),
        cmocka_unit_test(agg_integers_stay_integers_when_exact),
        cmocka_unit_test(agg_integer_overflow_falls_back_to_double),
        cmocka_unit_test(agg_doubles_skip_nan),
        cmocka_unit_test(agg_all_nan_gives_nan_and_count_zero),
        cmocka_unit_test(agg_nan_edges),
        cmocka_unit_test(agg_fill_nulls_are_nan_and_marked),
        cmocka_unit_test(agg_none_and_empty),
        cmocka_unit_test(agg_percentiles_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
