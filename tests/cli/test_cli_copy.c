/* test_cli_copy.c -- `octsdb copy` between two data dirs of the embedded
 * store, on what a crashed daemon leaves: points acknowledged with
 * sync=true, the daemon then killed with SIGKILL, so they sit in the
 * write-ahead log and not yet in the store. While the daemon runs the copy
 * is refused (the dir is locked); after the kill the copy replays the log
 * first, and a daemon on the copy answers with every point sent. Usage
 * errors exit 2. (The RADOS direction: test_cli_copy_rados.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "e2e/api_client.h"

#define BASE_TS  1356998400LL
#define N_POINTS 90 /* one a minute: an hour and a half, nothing flushed in between */

static void copy_of_a_crashed_data_dir_has_every_point(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    /* no flush pass within the test: the points stay in the log only */
    const char *extra[] = {"--auto-metric", "--flush-interval=3600000", NULL};
    if (tu_tsd_start(&t, extra)) fail_msg("tsd did not start");
    size_t cap = (size_t)N_POINTS * 128 + 16, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "[");
    for (int i = 0; i < N_POINTS; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"metric\":\"crash.m\",\"timestamp\":%lld,\"value\":%d,"
                                "\"tags\":{\"host\":\"x\"}}",
                                i ? "," : "", BASE_TS + 60LL * i, 7 * i);
    snprintf(body + len, cap - len, "]");
    free(ac_req_ok(&t, "POST", "/api/put?sync=true", body, 204));
    free(body);

    char from[4200], to[4200], *err = NULL;
    char *dir2 = tu_tempdir();
    snprintf(from, sizeof from, "--from=%s", t.dir);
    snprintf(to, sizeof to, "--to=%s/copy", dir2);
    const char *argv[] = {"copy", "--quiet", from, to, NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, argv, 60), 3);
    if (!strstr(err, "is locked: a running TSD holds it")) fail_msg("%s", err);
    free(err);

    tu_tsd_kill(&t);
    char *out = NULL;
    assert_int_equal(tu_run_octsdb(&out, argv), 0);
    /* one series, two hours: two cells in the data table */
    if (!strstr(out, "tsdb: 2 cells (source 2)\n") || !strstr(out, "Copy complete\n"))
        fail_msg("%s", out);
    free(out);

    tu_tsd_t c = {0};
    c.dir = malloc(strlen(dir2) + 8);
    sprintf(c.dir, "%s/copy", dir2);
    const char *none[] = {NULL};
    if (tu_tsd_start(&c, none)) fail_msg("tsd on the copy did not start");
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:crash.m", BASE_TS,
             BASE_TS + 60LL * N_POINTS);
    char *resp = ac_req_ok(&c, "GET", target, NULL, 200);
    cap = (size_t)N_POINTS * 32 + 16;
    char *want = malloc(cap);
    len = 0;
    for (int i = 0; i < N_POINTS; i++)
        len += (size_t)snprintf(want + len, cap - len, "%s\"%lld\":%d", i ? "," : "{",
                                BASE_TS + 60LL * i, 7 * i);
    snprintf(want + len, cap - len, "}}");
    if (!strstr(resp, want)) fail_msg("points missing on the copy: %s", resp);
    free(want);
    free(resp);
    assert_int_equal(tu_tsd_stop(&c), 0);
    tu_tsd_destroy(&c);
    tu_tsd_destroy(&t);
    tu_rmrf(dir2);
    free(dir2);
}

static void usage_errors(void **state)
{
    (void)state;
    char *err = NULL;
    const char *no_to[] = {"copy", "--from=/nonexistent", NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, no_to, 30), 2);
    if (!strstr(err, "--from and --to are required")) fail_msg("%s", err);
    free(err);
    const char *bad_spec[] = {"copy", "--from=/nonexistent-octsdb-dir", "--to=rados:", NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, bad_spec, 30), 3);
    if (!strstr(err, "no such data dir")) fail_msg("%s", err);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_of_a_crashed_data_dir_has_every_point),
        cmocka_unit_test(usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
