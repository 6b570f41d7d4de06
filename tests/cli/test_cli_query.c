/* test_cli_query.c -- the real `octsdb query`: OpenTSDB's CLI syntax and
 * its output lines "<metric> <ts_ms> <value> {tags}" for a small data set,
 * values computed by hand: sum with linear interpolation (integer while all
 * inputs are integers, "%f" otherwise), none with a group-by, downsampling
 * with N in milliseconds, rate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fixture.h"
#include "testutil.h"

static void query_lines(void **state)
{
    (void)state;
    char in[4300];
    snprintf(in, sizeof in, "%s/in.txt", g_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("q.m 1356998400 10 host=a dc=x\n"
          "q.m 1356998460 20 host=a dc=x\n"
          "q.m 1356998520 30 host=a dc=x\n"
          "q.m 1356998430 1 host=b dc=x\n"
          "q.m 1356998490 3.5 host=b dc=x\n",
          f);
    fclose(f);
    char *out;
    const char *imp[] = {"import", g_flag, "--auto-metric", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);

    /* sum: a alone at 400; at 430 a = 10 + 10*30/60 = 15, + b 1 = 16; at 460
     * b = 1 + 2.5*30/60 = 2.25, + 20 = 22.25; at 490 a = 25, + 3.5 = 28.5;
     * at 520 b has ended: 30. dc=x is common to both series, host is not. */
    const char *sum[] = {"query", g_flag, "2013/01/01-00:00", "2013/01/01-01:00", "sum",
                         "q.m",   NULL};
    assert_int_equal(tu_run_octsdb(&out, sum), 0);
    assert_string_equal(out, "q.m 1356998400000 10 {dc=x}\n"
                             "q.m 1356998430000 16 {dc=x}\n"
                             "q.m 1356998460000 22.250000 {dc=x}\n"
                             "q.m 1356998490000 28.500000 {dc=x}\n"
                             "q.m 1356998520000 30 {dc=x}\n");
    free(out);

    /* none, grouped by host: each series as stored */
    const char *none[] = {"query", g_flag, "1356998400", "1357000000",
                          "none",  "q.m",  "host=*",     NULL};
    assert_int_equal(tu_run_octsdb(&out, none), 0);
    assert_string_equal(out, "q.m 1356998400000 10 {dc=x, host=a}\n"
                             "q.m 1356998460000 20 {dc=x, host=a}\n"
                             "q.m 1356998520000 30 {dc=x, host=a}\n"
                             "q.m 1356998430000 1 {dc=x, host=b}\n"
                             "q.m 1356998490000 3.500000 {dc=x, host=b}\n");
    free(out);

    /* downsample 120000 ms avg: buckets at 400 (10, 20 -> 15) and 520 (30) */
    const char *ds[] = {"query",  g_flag, "1356998400", "1357000000", "sum", "downsample",
                        "120000", "avg",  "q.m",        "host=a",     NULL};
    assert_int_equal(tu_run_octsdb(&out, ds), 0);
    assert_string_equal(out, "q.m 1356998400000 15.000000 {dc=x, host=a}\n"
                             "q.m 1356998520000 30.000000 {dc=x, host=a}\n");
    free(out);

    /* rate: 10 per 60 s twice */
    const char *rate[] = {"query", g_flag, "1356998400", "1357000000", "sum",
                          "rate",  "q.m",  "host=a",     NULL};
    assert_int_equal(tu_run_octsdb(&out, rate), 0);
    assert_string_equal(out, "q.m 1356998460000 0.166667 {dc=x, host=a}\n"
                             "q.m 1356998520000 0.166667 {dc=x, host=a}\n");
    free(out);

    /* two queries in one command, and a gnuplot option that is ignored */
    const char *two[] = {"query", g_flag,   "1356998400", "1357000000", "+key=top", "max",
                         "q.m",   "host=b", "min",        "q.m",        "host=a",   NULL};
    assert_int_equal(tu_run_octsdb(&out, two), 0);
    assert_string_equal(out, "q.m 1356998430000 1 {dc=x, host=b}\n"
                             "q.m 1356998490000 3.500000 {dc=x, host=b}\n"
                             "q.m 1356998400000 10 {dc=x, host=a}\n"
                             "q.m 1356998460000 20 {dc=x, host=a}\n"
                             "q.m 1356998520000 30 {dc=x, host=a}\n");
    free(out);

    /* errors: unknown metric (1), unknown aggregator and missing metric (2) */
    const char *unk[] = {"query", g_flag, "1356998400", "sum", "no.such", NULL};
    assert_int_equal(tu_run_octsdb(&out, unk), 1);
    free(out);
    const char *badagg[] = {"query", g_flag, "1356998400", "blah", "q.m", NULL};
    assert_int_equal(tu_run_octsdb(&out, badagg), 2);
    free(out);
    const char *short_[] = {"query", g_flag, "1356998400", "sum", NULL};
    assert_int_equal(tu_run_octsdb(&out, short_), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(query_lines),
    };
    return cmocka_run_group_tests(tests, cli_fixture_setup, cli_fixture_teardown);
}
