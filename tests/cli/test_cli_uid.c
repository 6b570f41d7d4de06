/* test_cli_uid.c -- the real `octsdb` binary: uid and mkmetric output lines
 * and exit statuses as OpenTSDB's `tsdb uid` prints them, and --help for
 * every command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fixture.h"
#include "testutil.h"

/* Runs `octsdb <cmd> --datadir=<dir> args...`; returns status, output in *out. */
static int run5(char **out, const char *cmd, const char *a1, const char *a2, const char *a3,
                const char *a4, const char *a5)
{
    const char *argv[8] = {cmd, g_flag, a1, a2, a3, a4, a5, NULL};
    return tu_run_octsdb(out, argv);
}

static int run(char **out, const char *cmd, const char *a1, const char *a2, const char *a3,
               const char *a4)
{
    const char *argv[8] = {cmd, g_flag, a1, a2, a3, a4, NULL};
    return tu_run_octsdb(out, argv);
}

static void assign_lookup_grep_print_opentsdb_lines(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run(&out, "mkmetric", "sys.cpu.0", "sys.cpu.1", NULL, NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.0: [0, 0, 1]\nmetrics sys.cpu.1: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "assign", "tagk", "host", NULL), 0);
    assert_string_equal(out, "tagk host: [0, 0, 1]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "assign", "tagv", "web01", "sys.cpu.0"), 0);
    assert_string_equal(out, "tagv web01: [0, 0, 1]\ntagv sys.cpu.0: [0, 0, 2]\n");
    free(out);

    /* lookup by name in every kind, in qualifier order, then by kind */
    assert_int_equal(run(&out, "uid", "sys.cpu.0", NULL, NULL, NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.0: [0, 0, 1]\ntagv sys.cpu.0: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "tagv", "sys.cpu.0", NULL, NULL), 0);
    assert_string_equal(out, "tagv sys.cpu.0: [0, 0, 2]\n");
    free(out);
    /* a number is an ID */
    assert_int_equal(run(&out, "uid", "2", NULL, NULL, NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.1: [0, 0, 2]\ntagv sys.cpu.0: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "metrics", "3", NULL, NULL), 1);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(run(&out, "uid", "nothing.here", NULL, NULL, NULL), 1);
    free(out);

    /* grep: regex over names, rows in name order; exit 1 when nothing matches */
    assert_int_equal(run(&out, "uid", "grep", "cpu", NULL, NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.0: [0, 0, 1]\ntagv sys.cpu.0: [0, 0, 2]\n"
                             "metrics sys.cpu.1: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "grep", "metrics", "^sys\\.cpu\\.[1-9]$", NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.1: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "-i", "grep", "WEB", NULL), 0);
    assert_string_equal(out, "tagv web01: [0, 0, 1]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "grep", "nomatch", NULL, NULL), 1);
    free(out);
}

static void rename_delete_and_fsck(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run5(&out, "uid", "rename", "metrics", "sys.cpu.1", "sys.cpu.renamed", NULL),
                     0);
    assert_string_equal(out, "metrics sys.cpu.1 -> sys.cpu.renamed\n");
    free(out);
    assert_int_equal(run(&out, "uid", "metrics", "2", NULL, NULL), 0);
    assert_string_equal(out, "metrics sys.cpu.renamed: [0, 0, 2]\n");
    free(out);
    assert_int_equal(run(&out, "uid", "rename", "metrics", "gone", "x"), 1);
    free(out);
    assert_int_equal(run(&out, "uid", "delete", "tagv", "web01", NULL), 0);
    free(out);
    assert_int_equal(run(&out, "uid", "tagv", "web01", NULL, NULL), 1);
    free(out);
    assert_int_equal(run(&out, "uid", "fsck", NULL, NULL, NULL), 0);
    assert_non_null(strstr(out, "No errors found.\n"));
    free(out);
    /* wrong usage */
    assert_int_equal(run(&out, "uid", "assign", "tagv", NULL, NULL), 2);
    free(out);
    assert_int_equal(run(&out, "uid", "assign", "bogus", "x", NULL), 2);
    free(out);
    /* an invalid name is refused, the valid one still assigned */
    assert_int_equal(run(&out, "uid", "assign", "tagk", "bad name", "good"), 1);
    assert_string_equal(out, "tagk good: [0, 0, 2]\n");
    free(out);
}

static void every_command_has_help(void **state)
{
    (void)state;
    const char *cmds[] = {"uid", "mkmetric", "version"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *out;
        const char *argv[] = {cmds[i], "--help", NULL};
        assert_int_equal(tu_run_octsdb(&out, argv), 0);
        assert_true(strlen(out) > 0);
        free(out);
    }
    char *out;
    const char *argv[] = {"--help", NULL};
    assert_int_equal(tu_run_octsdb(&out, argv), 0);
    assert_non_null(strstr(out, "mkmetric"));
    assert_non_null(strstr(out, "uid"));
    free(out);
    const char *bad[] = {"no-such-command", NULL};
    assert_int_equal(tu_run_octsdb(&out, bad), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(assign_lookup_grep_print_opentsdb_lines),
        cmocka_unit_test(rename_delete_and_fsck),
        cmocka_unit_test(every_command_has_help),
    };
    return cmocka_run_group_tests(tests, cli_fixture_setup, cli_fixture_teardown);
}
