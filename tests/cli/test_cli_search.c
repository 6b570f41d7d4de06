/* test_cli_search.c -- the real `octsdb search`: the same engine as
 * /api/search over a data dir the test fills through the CLI itself. UIDs
 * are assigned first, so every TSUID below is known by hand:
 * metrics m.a=000001 m.b=000002; tagk host=000001 dc=000002;
 * tagv h1=000001 h2=000002 e=000003 w=000004; pairs sorted by tagk UID. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_fixture.h"
#include "testutil.h"

#define TS_A1 "000001000001000001000002000003" /* m.a{host=h1,dc=e} */
#define TS_A2 "000001000001000002000002000004" /* m.a{host=h2,dc=w} */
#define TS_B1 "000002000001000001"             /* m.b{host=h1} */

static void expect(int want_status, const char *want_out, const char *a1, const char *a2,
                   const char *a3, const char *a4)
{
    const char *argv[] = {"search", g_flag, a1, a2, a3, a4, NULL};
    char *out;
    int st = tu_run_octsdb(&out, argv);
    if (st != want_status || strcmp(out, want_out))
        fail_msg("search %s %s %s %s: got %d <%s>, want %d <%s>", a1, a2 ? a2 : "",
                 a2 && a3 ? a3 : "", a2 && a3 && a4 ? a4 : "", st, out, want_status, want_out);
    free(out);
}

static void search_lines(void **state)
{
    (void)state;
    char *out;
    const char *m[] = {"uid", g_flag, "assign", "metrics", "m.a", "m.b", NULL};
    const char *k[] = {"uid", g_flag, "assign", "tagk", "host", "dc", NULL};
    const char *v[] = {"uid", g_flag, "assign", "tagv", "h1", "h2", "e", "w", NULL};
    assert_int_equal(tu_run_octsdb(&out, m), 0);
    free(out);
    assert_int_equal(tu_run_octsdb(&out, k), 0);
    free(out);
    assert_int_equal(tu_run_octsdb(&out, v), 0);
    free(out);
    char in[4300];
    snprintf(in, sizeof in, "%s/in.txt", g_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("m.b 1356998400 1 host=h1\n"
          "m.a 1356998400 2 dc=w host=h2\n"
          "m.a 1356998400 3 host=h1 dc=e\n",
          f);
    fclose(f);
    const char *imp[] = {"import", g_flag, in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);

    expect(0, TS_A1 "\n" TS_A2 "\n" TS_B1 "\n", "tsuids", NULL, NULL, NULL);
    expect(0, TS_A2 "\n", "tsuids", "--limit=1", "--start=1", "m.*");
    expect(1, "", "tsuids", "--start=3", NULL, NULL);
    expect(0, TS_A1 " m.a dc=e host=h1\n", "tsmeta_summary", "host:h*", "dc:e", NULL);
    expect(0, TS_A1 " m.a dc=e host=h1\n" TS_B1 " m.b host=h1\n", "tsmeta_summary", "tagv:h1", NULL,
           NULL);
    expect(0, "tagv 000001 h1\ntagv 000002 h2\n", "uidmeta", "type:tagv", "h*", NULL);
    expect(0, "tagk 000001 host\ntagv 000001 h1\ntagv 000002 h2\n", "uidmeta", "*h*", NULL, NULL);
    expect(0, "metric 000002 m.b\n", "uidmeta", "*b", NULL, NULL);
    expect(1, "", "tsuids", "nosuch", NULL, NULL);
    expect(2, "", "tsuids", "m.a", "OR", "m.b");
    expect(2, "", "bogus", NULL, NULL, NULL);
    expect(2, "", "tsuids", "--limit=x", NULL, NULL);
}

/* Beside a running TSD (its data dir locked): the series it was sent. */
static void beside_running_tsd(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *const extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    const char *body = "{\"metric\":\"live.m\",\"timestamp\":1356998400,\"value\":1,"
                       "\"tags\":{\"host\":\"h9\"}}";
    char *r = NULL;
    int st = tu_http(t.port, "POST", "/api/put?sync=true", "Content-Type: application/json\r\n",
                     body, strlen(body), &r, NULL);
    free(r);
    assert_int_equal(st, 204);
    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", t.dir);
    /* a fresh dir: every UID is the first of its kind */
    const char *argv[] = {"search", flag, "tsmeta_summary", "live.*", NULL};
    char *out;
    st = tu_run_octsdb(&out, argv);
    tu_tsd_destroy(&t);
    assert_int_equal(st, 0);
    assert_string_equal(out, "000001000001000001 live.m host=h9\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(search_lines),
                                       cmocka_unit_test(beside_running_tsd)};
    return cmocka_run_group_tests(tests, cli_fixture_setup, cli_fixture_teardown);
}
