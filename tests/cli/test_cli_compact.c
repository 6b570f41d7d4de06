/* test_cli_compact.c -- the real `octsdb compact`: on a data dir where most
 * of the data was deleted (`scan --delete`), it reports the tables' bytes
 * before and after, the after figure is smaller, and the data that was kept
 * reads back exactly as imported; it refuses a locked data dir with no TSD
 * to work through (exit 3), rejects stray arguments (exit 2), and is listed in the help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char *g_dir;
static char g_flag[4200];

/* The number after "<name>: " at the start of a line of out, or -1. */
static long long figure(const char *out, const char *name)
{
    char pat[128];
    snprintf(pat, sizeof pat, "%s: ", name);
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, pat, strlen(pat))) return strtoll(p + strlen(pat), NULL, 10);
    return -1;
}

/* c.keep as imported: sum over its one series prints each point. */
static const char *const keep_expected = "c.keep 1356998400000 1 {host=k}\n"
                                         "c.keep 1356998460000 2.500000 {host=k}\n"
                                         "c.keep 1356998520000 3 {host=k}\n";

static void query_keep(void)
{
    char *out;
    const char *q[] = {"query", g_flag, "1356998400", "1357010000", "sum", "c.keep", NULL};
    assert_int_equal(tu_run_octsdb(&out, q), 0);
    assert_string_equal(out, keep_expected);
    free(out);
}

static void compact_frees_deleted_data_and_keeps_the_rest(void **state)
{
    (void)state;
    char in[4300];
    snprintf(in, sizeof in, "%s/in.txt", g_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    /* c.big: 20 series x 720 points (two hours every 10 s), the bulk */
    for (int h = 0; h < 20; h++)
        for (int i = 0; i < 720; i++)
            fprintf(f, "c.big %d %d host=h%02d\n", 1356998400 + i * 10, (i * 7919 + h) % 100000, h);
    fputs("c.keep 1356998400 1 host=k\n"
          "c.keep 1356998460 2.5 host=k\n"
          "c.keep 1356998520 3 host=k\n",
          f);
    fclose(f);
    char *out;
    const char *imp[] = {"import", g_flag, "--auto-metric", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);
    query_keep();

    const char *del[] = {"scan",       g_flag, "--delete", "1356998400",
                         "1357010000", "sum",  "c.big",    NULL};
    assert_int_equal(tu_run_octsdb(&out, del), 0);
    free(out);

    const char *cmp[] = {"compact", g_flag, NULL};
    assert_int_equal(tu_run_octsdb(&out, cmp), 0);
    long long before = figure(out, "Table bytes before"), after = figure(out, "Table bytes after");
    if (!(before > 0 && after > 0 && after < before))
        fail_msg("compact printed before %lld, after %lld:\n%s", before, after, out);
    free(out);
    query_keep();

    /* a second compaction has nothing left to free */
    assert_int_equal(tu_run_octsdb(&out, cmp), 0);
    long long again = figure(out, "Table bytes after");
    assert_true(again > 0 && again <= after + after / 10);
    free(out);
    query_keep();
}

/* Beside a running TSD compact works through it (test_cli_live.c); with
 * the TSD's address record gone there is no TSD to work through, so the
 * lock is reported. */
static void compact_refuses_a_locked_dir_without_a_tsd(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    char flag[4200], rec[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", t.dir);
    snprintf(rec, sizeof rec, "%s/tsd.addr", t.dir);
    /* the TSD records its address just after it starts accepting */
    for (int i = 0; i < 200 && access(rec, F_OK) != 0; i++)
        usleep(50 * 1000);
    assert_int_equal(unlink(rec), 0);
    char *out;
    const char *cmp[] = {"compact", flag, NULL};
    int rc = tu_run_octsdb(&out, cmp);
    free(out);
    tu_tsd_destroy(&t);
    assert_int_equal(rc, 3);
}

static void compact_usage(void **state)
{
    (void)state;
    char *out;
    const char *help[] = {"compact", "--help", NULL};
    assert_int_equal(tu_run_octsdb(&out, help), 0);
    assert_non_null(strstr(out, "usage: octsdb compact"));
    free(out);
    const char *extra[] = {"compact", g_flag, "now", NULL};
    assert_int_equal(tu_run_octsdb(&out, extra), 2);
    free(out);
    const char *top[] = {"--help", NULL};
    assert_int_equal(tu_run_octsdb(&out, top), 0);
    assert_non_null(strstr(out, "\n  compact "));
    free(out);
}

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    g_dir = tu_tempdir();
    snprintf(g_flag, sizeof g_flag, "--datadir=%s", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmrf(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compact_frees_deleted_data_and_keeps_the_rest),
        cmocka_unit_test(compact_refuses_a_locked_dir_without_a_tsd),
        cmocka_unit_test(compact_usage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
