/* test_expr.c -- query/expr.h: the expression language (precedence,
 * division by zero, comparisons, errors) and the join (union and
 * intersection on tags, fill values, pairing by timestamp).
 *
 * Every expected number is worked out by hand in the comment beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "query/expr.h"

static double eval_text(const char *text, const double *vals)
{
    expr_t *e;
    oct_errbuf_t eb;
    if (expr_parse(text, &e, &eb)) fail_msg("%s: %s", text, eb.msg);
    double r = expr_eval(e, vals);
    expr_free(e);
    return r;
}

static void expr_precedence_and_associativity(void **state)
{
    (void)state;
    double v[] = {2, 3, 4};                             /* by first use: a, b, c */
    assert_true(eval_text("a + b * c", v) == 14);       /* 2 + 12 */
    assert_true(eval_text("(a + b) * c", v) == 20);     /* 5 * 4 */
    assert_true(eval_text("a - b - c", v) == -5);       /* (2-3)-4 */
    assert_true(eval_text("12 / a / a", v) == 3);       /* (12/2)/2 */
    assert_true(eval_text("-a * b", v) == -6);          /* unary binds tighter */
    assert_true(eval_text("a * -b", v) == -6);          /* */
    assert_true(eval_text("7 % a", v) == 1);            /* 7 mod 2 */
    assert_true(eval_text("a*100", v) == 200);          /* no spaces */
    assert_true(eval_text(" 1.5e2 + .5 ", v) == 150.5); /* numbers */
    assert_true(eval_text("((a))", v) == 2);
}

static void expr_division_by_zero_is_zero(void **state)
{
    (void)state;
    double v[] = {5, 0};
    assert_true(eval_text("a / b", v) == 0); /* JEXL's lenient arithmetic */
    assert_true(eval_text("a % b", v) == 0);
    assert_true(eval_text("b / a", v) == 0);
    double n[] = {NAN, 2};
    assert_true(isnan(eval_text("a + b", n)));
}

static void expr_comparisons_are_one_or_zero(void **state)
{
    (void)state;
    double v[] = {2, 3};
    assert_true(eval_text("a < b", v) == 1);
    assert_true(eval_text("a > b", v) == 0);
    assert_true(eval_text("a <= 2", v) == 1);
    assert_true(eval_text("b >= 4", v) == 0);
    assert_true(eval_text("a == 2 && b != 2", v) == 1);
    assert_true(eval_text("a == 3 || b == 4", v) == 0);
    assert_true(eval_text("!a", v) == 0);
    assert_true(eval_text("(a > 1) * 10 + (b > 5) * 100", v) == 10); /* 1*10 + 0*100 */
    assert_true(eval_text("a + 1 < b + 1", v) == 1);                 /* + binds tighter than < */
}

static void expr_variables_in_first_use_order(void **state)
{
    (void)state;
    expr_t *e;
    oct_errbuf_t eb;
    assert_int_equal(expr_parse("cpu2 * x + cpu2 / y_1", &e, &eb), 0);
    assert_int_equal(expr_n_vars(e), 3);
    assert_string_equal(expr_var(e, 0), "cpu2");
    assert_string_equal(expr_var(e, 1), "x");
    assert_string_equal(expr_var(e, 2), "y_1");
    double v[] = {6, 2, 3}; /* 6*2 + 6/3 */
    assert_true(expr_eval(e, v) == 14);
    assert_string_equal(expr_text(e), "cpu2 * x + cpu2 / y_1");
    expr_free(e);
}

static void expr_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "unexpected end of the expression at position 0 in []"},
        {"a +", "unexpected end of the expression at position 3 in [a +]"},
        {"(a + b", "expected ')' at position 6 in [(a + b]"},
        {"a + b)", "unbalanced ')' at position 5 in [a + b)]"},
        {"a ? 1 : 0", "the conditional operator ?: is not supported at position 2 in [a ? 1 : 0]"},
        {"sum(a)", "function calls are not part of the language at position 3 in [sum(a)]"},
        {"a $ b", "unexpected character at position 2 in [a $ b]"},
        {"2a", "a number runs into a name at position 0 in [2a]"},
        {"a b", "unexpected character at position 2 in [a b]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expr_t *e = (expr_t *)1;
        oct_errbuf_t eb;
        assert_int_equal(expr_parse(bad[i].text, &e, &eb), OCT_EPARSE);
        assert_null(e);
        assert_string_equal(eb.msg, bad[i].msg);
    }
    /* nesting is bounded, not recursed into without limit */
    char deep[2001];
    memset(deep, '(', 1000);
    memset(deep + 1000, '-', 1000);
    deep[2000] = '\0';
    expr_t *e;
    oct_errbuf_t eb;
    assert_int_equal(expr_parse(deep, &e, &eb), OCT_EPARSE);
    assert_non_null(strstr(eb.msg, "nested too deeply at position 257 in [((("));
    memset(deep, '-', 200);
    strcpy(deep + 200, "a");
    assert_int_equal(expr_parse(deep, &e, &eb), 0);
    double v = 3;
    assert_true(expr_eval(e, &v) == 3); /* an even number of minus signs */
    expr_free(e);
}

/* ---- the join ---------------------------------------------------------------- */

static expr_series_t *series(expr_set_t *set, const char *metric, const char *host,
                             const int64_t *ts, const double *v, size_t n)
{
    expr_series_t *s = expr_set_add(set, metric);
    const char *k[] = {"host", "dc"}, *val[] = {host, "lga"};
    expr_series_set_tags(s, 2, k, val);
    s->dps = calloc(n ? n : 1, sizeof *s->dps);
    for (size_t i = 0; i < n; i++) {
        s->dps[i].ts_ms = ts[i];
        s->dps[i].v.f = v[i];
    }
    s->n = n;
    return s;
}

static void check_series(const expr_series_t *s, const char *host, const int64_t *ts,
                         const double *v, size_t n)
{
    assert_string_equal(expr_series_tag(s, "host"), host);
    assert_string_equal(expr_series_tag(s, "dc"), "lga");
    assert_int_equal(s->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s->dps[i].ts_ms, ts[i]);
        if (isnan(v[i]))
            assert_true(isnan(s->dps[i].v.f));
        else if (s->dps[i].v.f != v[i])
            fail_msg("%s point %zu: got %.17g want %.17g", host, i, s->dps[i].v.f, v[i]);
    }
}

static void join_union_by_timestamp_with_fills(void **state)
{
    (void)state;
    expr_set_t a = {0}, b = {0}, out = {0};
    /* a: web01 at 0,10,20 and web02 at 10; b: web01 at 10,20,30 (not at 0)
     * and web03 at 0 */
    series(&a, "m.a", "web01", (int64_t[]){0, 10, 20}, (double[]){1, 2, 3}, 3);
    series(&a, "m.a", "web02", (int64_t[]){10}, (double[]){7}, 1);
    series(&b, "m.b", "web01", (int64_t[]){10, 20, 30}, (double[]){10, NAN, 30}, 3);
    series(&b, "m.b", "web03", (int64_t[]){0}, (double[]){5}, 1);
    expr_t *e;
    oct_errbuf_t eb;
    assert_int_equal(expr_parse("a + b * 2", &e, &eb), 0);
    const expr_set_t *in[] = {&a, &b};
    double fill[] = {0, -1}; /* a: zero, b: scalar -1 */
    expr_join_t j = {.op = EXPR_JOIN_UNION, .include_agg_tags = 1};
    assert_int_equal(expr_join_eval(e, in, fill, &j, 0, 30, "e", &out, &eb), 0);
    assert_int_equal(out.n, 3); /* keys web01, web02, web03 in byte order */
    /* web01: t0 1+(-1)*2=-1; t10 2+10*2=22; t20 b NaN -> fill: 3-2=1;
     * t30 a missing -> 0: 0+30*2=60 */
    check_series(&out.s[0], "web01", (int64_t[]){0, 10, 20, 30}, (double[]){-1, 22, 1, 60}, 4);
    /* every output series has a row at every input timestamp (0, 10, 20, 30).
     * web02: no b series -> -1 throughout; a only at 10: 0-2, 7-2, 0-2, 0-2 */
    check_series(&out.s[1], "web02", (int64_t[]){0, 10, 20, 30}, (double[]){-2, 5, -2, -2}, 4);
    /* web03: no a series -> 0; b only at 0: 0+5*2, then 0-2 */
    check_series(&out.s[2], "web03", (int64_t[]){0, 10, 20, 30}, (double[]){10, -2, -2, -2}, 4);
    assert_string_equal(out.s[0].metric, "e");
    expr_set_free(&out);

    /* intersection: only web01; the window trims t0 and t30 */
    j.op = EXPR_JOIN_INTERSECTION;
    assert_int_equal(expr_join_eval(e, in, fill, &j, 5, 25, "e", &out, &eb), 0);
    assert_int_equal(out.n, 1);
    check_series(&out.s[0], "web01", (int64_t[]){10, 20}, (double[]){22, 1}, 2);
    expr_set_free(&out);
    expr_free(e);
    expr_set_free(&a);
    expr_set_free(&b);
}

static void join_on_named_keys_and_agg_tags(void **state)
{
    (void)state;
    expr_set_t a = {0}, b = {0}, out = {0};
    expr_series_t *x = series(&a, "m.a", "web01", (int64_t[]){0}, (double[]){8}, 1);
    const char *agg[] = {"cpu"};
    expr_series_set_agg(x, 1, agg);
    /* b's series differs in dc and has no aggregated keys */
    expr_series_t *y = series(&b, "m.b", "web01", (int64_t[]){0}, (double[]){2}, 1);
    const char *k[] = {"host", "dc"}, *v[] = {"web01", "sjc"};
    expr_series_set_tags(y, 2, k, v);
    expr_t *e;
    oct_errbuf_t eb;
    assert_int_equal(expr_parse("a / b", &e, &eb), 0);
    const expr_set_t *in[] = {&a, &b};
    double fill[] = {NAN, NAN};
    /* all tags + agg tags: two keys, each with a NaN partner */
    expr_join_t j = {.op = EXPR_JOIN_INTERSECTION, .include_agg_tags = 1};
    assert_int_equal(expr_join_eval(e, in, fill, &j, 0, 10, "e", &out, &eb), 0);
    assert_int_equal(out.n, 0);
    /* only on host, agg tags left out: one key; 8 / 2 = 4 */
    const char *keys[] = {"host"};
    j = (expr_join_t){.op = EXPR_JOIN_INTERSECTION, .use_keys = 1, .n_keys = 1, .keys = keys};
    assert_int_equal(expr_join_eval(e, in, fill, &j, 0, 10, "e", &out, &eb), 0);
    assert_int_equal(out.n, 1);
    assert_int_equal(out.s[0].n_tags, 1);
    assert_string_equal(out.s[0].tagk[0], "host");
    assert_int_equal(out.s[0].n_agg, 1);
    assert_string_equal(out.s[0].agg[0], "cpu");
    assert_true(out.s[0].dps[0].v.f == 4);
    expr_set_free(&out);
    /* joining on no key at all puts both of a's series on one key: refused */
    series(&a, "m.a", "web02", (int64_t[]){0}, (double[]){1}, 1);
    j = (expr_join_t){.op = EXPR_JOIN_UNION, .use_keys = 1};
    assert_int_equal(expr_join_eval(e, in, fill, &j, 0, 10, "e", &out, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "Variable a has more than one series for a join key of "
                                "expression [a / b]: join on more tags");
    expr_set_free(&out);
    expr_free(e);
    expr_set_free(&a);
    expr_set_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expr_precedence_and_associativity),
        cmocka_unit_test(expr_division_by_zero_is_zero),
        cmocka_unit_test(expr_comparisons_are_one_or_zero),
        cmocka_unit_test(expr_variables_in_first_use_order),
        cmocka_unit_test(expr_errors),
        cmocka_unit_test(join_union_by_timestamp_with_fills),
        cmocka_unit_test(join_on_named_keys_and_agg_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
