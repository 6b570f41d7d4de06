/* test_cli_copy_rados.c -- `octsdb copy` over the real parts: a data set
 * written by the real daemon (two metrics, two hosts, three hours, an
 * annotation, UID meta) goes from its data dir up to a RADOS namespace in
 * three runs (two stopped by --max-partitions, then resumed) and back down
 * to a fresh data dir; a daemon on the copy answers queries with exactly
 * the points sent, keeps the annotation and the meta, and gives the next
 * new metric the next UID. An empty namespace is refused as a source, a
 * second copy onto a non-empty destination is refused; a cell removed from the destination behind
 * its back makes the count check fail with the numbers. Needs a cluster: OCTSDB_TEST_STORE_RADOS
 * names the config file scripts/ceph-cluster.sh writes; without it the program exits 77 (ctest:
 * Skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "store/store.h"
#include "testutil.h"
#include "e2e/api_client.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

#define BASE_TS  1356998400LL         /* an hour boundary */
#define N_POINTS 150                  /* one a minute per series: hours 0, 1 and 2 */
#define TSUID_A  "000001000001000001" /* m.a{host=a}: the UIDs assigned first */

static const char *cfg_path;

static long value_of(int m, int h, int i)
{
    return 1000L * m + 100L * h + i;
}

static char *put_body(void)
{
    size_t cap = (size_t)N_POINTS * 4 * 128 + 16, len = 0;
    char *b = malloc(cap);
    len += (size_t)snprintf(b + len, cap - len, "[");
    for (int i = 0; i < N_POINTS; i++)
        for (int m = 0; m < 2; m++)
            for (int h = 0; h < 2; h++)
                len += (size_t)snprintf(b + len, cap - len,
                                        "%s{\"metric\":\"m.%c\",\"timestamp\":%lld,\"value\":%ld,"
                                        "\"tags\":{\"host\":\"%c\"}}",
                                        len > 1 ? "," : "", 'a' + m, BASE_TS + 60LL * i,
                                        value_of(m, h, i), 'a' + h);
    snprintf(b + len, cap - len, "]");
    return b;
}

static char *want_series(int m, int h)
{
    size_t cap = (size_t)N_POINTS * 40 + 256, len = 0;
    char *w = malloc(cap);
    len += (size_t)snprintf(w + len, cap - len,
                            "{\"metric\":\"m.%c\",\"tags\":{\"host\":\"%c\"},"
                            "\"aggregateTags\":[],%s\"dps\":{",
                            'a' + m, 'a' + h,
                            m == 0 && h == 0 ? "\"annotations\":[{\"tsuid\":\"" TSUID_A
                                               "\",\"startTime\":1357000000,\"endTime\":0,"
                                               "\"description\":\"deploy\",\"notes\":\"\","
                                               "\"custom\":null}],"
                                             : "");
    for (int i = 0; i < N_POINTS; i++)
        len += (size_t)snprintf(w + len, cap - len, "%s\"%lld\":%ld", i ? "," : "",
                                BASE_TS + 60LL * i, value_of(m, h, i));
    snprintf(w + len, cap - len, "}}");
    return w;
}

static void expect_has(char *resp, const char *want)
{
    if (!strstr(resp, want)) fail_msg("'%s' missing in %s", want, resp);
    free(resp);
}

/* Every series (m.a{host=a} with its annotation, as /api/query lists it),
 * the annotation read alone and the UID meta, as the test wrote them. */
static void data_set_matches_sent(const tu_tsd_t *t)
{
    for (int m = 0; m < 2; m++) {
        char target[256];
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:m.%c%%7Bhost=*%%7D",
                 BASE_TS, BASE_TS + 60LL * N_POINTS, 'a' + m);
        char *resp = ac_req_ok(t, "GET", target, NULL, 200);
        for (int h = 0; h < 2; h++) {
            char *w = want_series(m, h);
            if (!strstr(resp, w))
                fail_msg("m.%c host=%c missing or different: %s", 'a' + m, 'a' + h, resp);
            free(w);
        }
        free(resp);
    }
    expect_has(
        ac_req_ok(t, "GET", "/api/annotation?tsuid=" TSUID_A "&start_time=1357000000", NULL, 200),
        "\"description\":\"deploy\"");
    expect_has(ac_req_ok(t, "GET", "/api/uid/uidmeta?uid=000002&type=metric", NULL, 200),
               "\"displayName\":\"Metric B\"");
}

/* Runs octsdb copy with the cluster's config; stdout in *out (may be NULL). */
static int run_copy(char **out, const char *a1, const char *a2, const char *a3)
{
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "--config=%s", cfg_path);
    const char *argv[] = {"copy", cfg, "--quiet", a1, a2, a3, NULL};
    char *o = NULL;
    int st = tu_run_octsdb(&o, argv);
    if (out)
        *out = o;
    else
        free(o);
    return st;
}

/* Removes the first cell of the data table's first partition, through the
 * store, as something outside octsdb copy would. */
static void remove_one_data_cell(const char *dir)
{
    tsdb_t *db = ac_open_dir(dir);
    oct_errbuf_t eb;
    store_t *st = tsdb_store(db);
    store_scan_spec_t spec = {0};
    /* the first partition: [metric 000001][BASE_TS = 0x50E22700] (no salt) */
    uint8_t part[7] = {0, 0, 1, 0x50, 0xE2, 0x27, 0x00};
    spec.part = oct_slice(part, sizeof part);
    store_scanner_t *sc;
    store_result_t row = STORE_RESULT_INIT;
    assert_int_equal(store_scan_open(st, STORE_TABLE_DATA, &spec, &sc, &eb), 0);
    assert_int_equal(store_scan_next(sc, &row, &eb), 1);
    store_op_t del = {STORE_OP_DELETE_CELL, spec.part, row.cells[0]};
    assert_int_equal(store_write(st, STORE_TABLE_DATA, &del, 1, STORE_SYNC, &eb), 0);
    store_scan_close(sc);
    store_result_free(&row);
    tsdb_close(db);
}

static void round_trip_resume_refuse_and_check(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric", NULL};
    if (tu_tsd_start(&t, extra)) fail_msg("tsd did not start");
    /* names first, so their UIDs are known: m.a, m.b; host; a, b */
    free(ac_req_ok(&t, "POST", "/api/uid/assign",
                   "{\"metric\":[\"m.a\",\"m.b\"],\"tagk\":[\"host\"],\"tagv\":[\"a\",\"b\"]}",
                   200));
    char *body = put_body();
    free(ac_req_ok(&t, "POST", "/api/put?sync=true", body, 204));
    free(body);
    free(ac_req_ok(
        &t, "POST", "/api/annotation",
        "{\"tsuid\":\"" TSUID_A "\",\"startTime\":1357000000,\"description\":\"deploy\"}", 200));
    free(ac_req_ok(&t, "POST", "/api/uid/uidmeta",
                   "{\"uid\":\"000002\",\"type\":\"metric\",\"displayName\":\"Metric B\"}", 200));
    data_set_matches_sent(&t);
    assert_int_equal(tu_tsd_stop(&t), 0);

    char from[4200], to_rados[256], from_rados[256], to_dir[4200], *out;
    snprintf(from, sizeof from, "--from=%s", t.dir);
    snprintf(to_rados, sizeof to_rados, "--to=rados:octsdb/copytest-%d", (int)getpid());
    snprintf(from_rados, sizeof from_rados, "--from=rados:octsdb/copytest-%d", (int)getpid());
    char *dir2 = tu_tempdir();
    snprintf(to_dir, sizeof to_dir, "--to=%s/copy", dir2);

    /* up, in three runs: 3 + 3 partitions, then the rest */
    assert_int_equal(run_copy(&out, from, to_rados, "--max-partitions=3"), 4);
    expect_has(out, "Copied 3 partitions");
    assert_int_equal(run_copy(&out, from, to_rados, "--max-partitions=3"), 4);
    expect_has(out, "Resumed an unfinished copy\nCopied 3 partitions");
    assert_int_equal(run_copy(&out, from, to_rados, "--batch=7"), 0);
    /* 4 series x 3 hours = 12 block cells + the annotation; 5 names x 2
     * cells + 3 counters + m.b's meta */
    if (!strstr(out, "Resumed an unfinished copy") ||
        !strstr(out, "tsdb: 13 cells (source 13)\n") ||
        !strstr(out, "tsdb-uid: 14 cells (source 14)\n") || !strstr(out, "Copy complete"))
        fail_msg("%s", out);
    free(out);

    /* and down */
    assert_int_equal(run_copy(&out, from_rados, to_dir, NULL), 0);
    expect_has(out, "Copy complete");

    /* a namespace that holds nothing (a typo, say) is no source */
    char *err = NULL;
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "--config=%s", cfg_path);
    char empty_ns[256];
    snprintf(empty_ns, sizeof empty_ns, "--from=rados:octsdb/copytest-empty-%d", (int)getpid());
    const char *empty_argv[] = {"copy", cfg, empty_ns, to_dir, NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, empty_argv, 60), 3);
    expect_has(err, "holds no data set");

    /* a second copy onto it: refused, and nothing changes */
    const char *argv[] = {"copy", cfg, from, to_dir, NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, argv, 60), 3);
    expect_has(err, "already holds data");

    /* the copy answers as the original; the next metric gets the next UID */
    tu_tsd_t c = {0};
    c.dir = malloc(strlen(dir2) + 8);
    sprintf(c.dir, "%s/copy", dir2);
    const char *none[] = {NULL};
    if (tu_tsd_start(&c, none)) fail_msg("tsd on the copy did not start");
    data_set_matches_sent(&c);
    expect_has(ac_req_ok(&c, "GET", "/api/uid/assign?metric=m.c&tagv=c", NULL, 200),
               "\"m.c\":\"000003\"");
    assert_int_equal(tu_tsd_stop(&c), 0);

    /* a cell gone behind the copy's back: the count check says so */
    remove_one_data_cell(c.dir);
    char copy_dir[4200];
    snprintf(copy_dir, sizeof copy_dir, "--to=%s/copy", dir2);
    assert_int_equal(run_copy(&out, from_rados, copy_dir, "--check"), 1);
    expect_has(out, "tsdb: 12 cells (source 13) MISMATCH\n");

    tu_tsd_destroy(&c);
    tu_tsd_destroy(&t);
    tu_rmrf(dir2);
    free(dir2);
}

int main(void)
{
    cfg_path = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!cfg_path || !*cfg_path) {
        printf("[  SKIPPED ] test_cli_copy_rados: OCTSDB_TEST_STORE_RADOS is not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_resume_refuse_and_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
