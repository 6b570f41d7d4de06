/* test_metasync.c -- `octsdb uid metasync` and `uid metapurge` on a data
 * dir the real daemon wrote with meta tracking off (the default). UIDs are
 * assigned first, so the TSUIDs are known by hand:
 *   A1 = m.a{host=h1} 000001000001000001: points at 1356998410, 1356998420, 1357002000
 *   A2 = m.a{host=h2} 000001000001000002: points at 1356998405, 1356998406
 *   B1 = m.b{host=h1} 000002000001000001: one point at 1356990000
 * Expected, from those points: created = each series' first point; the
 * counters 3, 2, 1; UIDMeta created = the earliest first point of the
 * series using the UID: m.a 1356998405, m.b 1356990000, host 1356990000,
 * h1 1356990000, h2 1356998405. Before the sync the test gives A1 a TSMeta
 * (created = now, counter 0) and h2 a UIDMeta (created 0) with
 * descriptions, which the sync must keep while fixing created. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"

#define A1 "000001000001000001"
#define A2 "000001000001000002"
#define B1 "000002000001000001"

static tu_tsd_t T;

static void run(int want_status, const char *want_out, const char *sub)
{
    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", T.dir);
    const char *argv[] = {"uid", flag, sub, NULL};
    char *out;
    int st = tu_run_octsdb(&out, argv);
    if (st != want_status || strcmp(out, want_out))
        fail_msg("uid %s: got %d <%s>, want %d <%s>", sub, st, out, want_status, want_out);
    free(out);
}

/* The body of GET target must contain every one of the fragments. */
static void expect_has(const char *target, const char *const *frags)
{
    char *r = ac_req_ok(&T, "GET", target, NULL, 200);
    for (; *frags; frags++)
        if (!strstr(r, *frags)) fail_msg("GET %s: no <%s> in <%s>", target, *frags, r);
    free(r);
}

static void sync_then_purge(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    assert_int_equal(tu_tsd_start(&T, NULL), 0);
    char *r = ac_req_ok(
        &T, "POST", "/api/uid/assign",
        "{\"metric\":[\"m.a\",\"m.b\"],\"tagk\":[\"host\"],\"tagv\":[\"h1\",\"h2\"]}", 200);
    free(r);
    r = ac_req_ok(
        &T, "POST", "/api/put",
        "[{\"metric\":\"m.a\",\"timestamp\":1356998420,\"value\":2,\"tags\":{\"host\":\"h1\"}},"
        "{\"metric\":\"m.a\",\"timestamp\":1356998410,\"value\":1,\"tags\":{\"host\":\"h1\"}},"
        "{\"metric\":\"m.a\",\"timestamp\":1357002000,\"value\":3,\"tags\":{\"host\":\"h1\"}},"
        "{\"metric\":\"m.a\",\"timestamp\":1356998405,\"value\":4,\"tags\":{\"host\":\"h2\"}},"
        "{\"metric\":\"m.a\",\"timestamp\":1356998406,\"value\":5,\"tags\":{\"host\":\"h2\"}},"
        "{\"metric\":\"m.b\",\"timestamp\":1356990000,\"value\":6,\"tags\":{\"host\":\"h1\"}}]",
        204);
    free(r);
    /* meta tracking is off: no TSMeta yet */
    r = ac_req_ok(&T, "GET", "/api/uid/tsmeta?tsuid=" A2, NULL, 404);
    free(r);
    r = ac_req_ok(&T, "POST", "/api/uid/tsmeta?tsuid=" A1 "&create=true&description=first", NULL,
                  200);
    free(r);
    r = ac_req_ok(&T, "POST", "/api/uid/uidmeta",
                  "{\"uid\":\"000002\",\"type\":\"tagv\",\"description\":\"second host\"}", 200);
    free(r);

    /* beside the running TSD: refused (it holds the data dir) */
    char flag[4200], *err;
    snprintf(flag, sizeof flag, "--datadir=%s", T.dir);
    const char *argv[] = {"uid", flag, "metasync", NULL};
    int st = tu_run_octsdb_stderr(&err, argv, 60);
    if (st != 3) fail_msg("metasync beside a TSD: status %d, stderr <%s>", st, err);
    free(err);

    assert_int_equal(tu_tsd_stop(&T), 0);
    run(0,
        "metasync: 3 series, 6 points; TSMeta 2 created, 1 fixed; 3 counters set; "
        "UIDMeta 4 created, 1 fixed\n",
        "metasync");
    /* a second run finds nothing to do */
    run(0,
        "metasync: 3 series, 6 points; TSMeta 0 created, 0 fixed; 0 counters set; "
        "UIDMeta 0 created, 0 fixed\n",
        "metasync");

    assert_int_equal(tu_tsd_start(&T, NULL), 0);
    const char *a1[] = {"\"tsuid\":\"" A1 "\"", "\"description\":\"first\"",
                        "\"created\":1356998410", "\"totalDatapoints\":3", NULL};
    expect_has("/api/uid/tsmeta?tsuid=" A1, a1);
    const char *a2[] = {"\"tsuid\":\"" A2 "\"", "\"created\":1356998405", "\"totalDatapoints\":2",
                        NULL};
    expect_has("/api/uid/tsmeta?tsuid=" A2, a2);
    const char *b1[] = {"\"tsuid\":\"" B1 "\"", "\"created\":1356990000", "\"totalDatapoints\":1",
                        NULL};
    expect_has("/api/uid/tsmeta?tsuid=" B1, b1);
    static const struct {
        const char *q, *created;
    } U[] = {
        {"uid=000001&type=metric", "\"created\":1356998405"},
        {"uid=000002&type=metric", "\"created\":1356990000"},
        {"uid=000001&type=tagk", "\"created\":1356990000"},
        {"uid=000001&type=tagv", "\"created\":1356990000"},
        {"uid=000002&type=tagv", "\"created\":1356998405"},
    };
    for (size_t i = 0; i < sizeof U / sizeof *U; i++) {
        char target[128];
        snprintf(target, sizeof target, "/api/uid/uidmeta?%s", U[i].q);
        const char *f[] = {U[i].created, i == 4 ? "\"description\":\"second host\"" : "{", NULL};
        expect_has(target, f);
    }
    assert_int_equal(tu_tsd_stop(&T), 0);

    run(0, "metapurge: TSMeta of 3 series, 5 UIDMeta deleted\n", "metapurge");
    run(0, "metapurge: TSMeta of 0 series, 0 UIDMeta deleted\n", "metapurge");
    assert_int_equal(tu_tsd_start(&T, NULL), 0);
    r = ac_req_ok(&T, "GET", "/api/uid/tsmeta?tsuid=" A1, NULL, 404);
    free(r);
    const char *none[] = {"\"created\":0", "\"description\":\"\"", NULL};
    expect_has("/api/uid/uidmeta?uid=000002&type=tagv", none);
    /* the series themselves are untouched: all three still found */
    const char *all[] = {A1, A2, B1, "\"totalResults\":3,", NULL};
    expect_has("/api/search/tsuids?query=*", all);
    tu_tsd_destroy(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sync_then_purge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
