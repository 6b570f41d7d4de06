/* test_tsd_rados.c -- the real daemon on the rados store backend: points
 * put over HTTP (sync=true) across two hours are answered by /api/query
 * exactly as sent, also after a clean restart whose write-ahead log was
 * deleted first, leaving the data dir nothing but its binding to the data
 * set, so what the answer holds came back from the Ceph cluster. Expected bodies are built from the
 * points the test sends. Needs a cluster: OCTSDB_TEST_STORE_RADOS names the config file
 * scripts/ceph-cluster.sh writes (passed as --config); without it the
 * program exits 77 (ctest: Skipped). With cephx on (that script's cluster),
 * a client without OSD caps is refused at start-up, naming the caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define BASE_TS  1356998400LL /* an hour boundary */
#define N_POINTS 150          /* one a minute: 2.5 hours, so two hours close */

static const char *cfg_path;

/* value of point i of host h ("a" or "b"): integers, printed as such */
static long value_of(int i, char h)
{
    return h == 'a' ? 3L * i : 1000L - i;
}

static char *put_body(void)
{
    size_t cap = (size_t)N_POINTS * 2 * 128 + 16, len = 0;
    char *b = malloc(cap);
    len += (size_t)snprintf(b + len, cap - len, "[");
    for (int i = 0; i < N_POINTS; i++)
        for (int h = 0; h < 2; h++)
            len += (size_t)snprintf(
                b + len, cap - len,
                "%s{\"metric\":\"rados.test\",\"timestamp\":%lld,\"value\":%ld,\"tags\":"
                "{\"host\":\"%c\"}}",
                len > 1 ? "," : "", BASE_TS + 60LL * i, value_of(i, (char)('a' + h)), 'a' + h);
    snprintf(b + len, cap - len, "]");
    return b;
}

/* The one series of host h as /api/query prints it with {host=*}. */
static char *want_series(char h)
{
    size_t cap = (size_t)N_POINTS * 40 + 256, len = 0;
    char *w = malloc(cap);
    len += (size_t)snprintf(w + len, cap - len,
                            "{\"metric\":\"rados.test\",\"tags\":{\"host\":\"%c\"},"
                            "\"aggregateTags\":[],\"dps\":{",
                            h);
    for (int i = 0; i < N_POINTS; i++)
        len += (size_t)snprintf(w + len, cap - len, "%s\"%lld\":%ld", i ? "," : "",
                                BASE_TS + 60LL * i, value_of(i, h));
    snprintf(w + len, cap - len, "}}");
    return w;
}

static void query_matches_sent(const tu_tsd_t *t)
{
    char target[256], *resp = NULL;
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:rados.test%%7Bhost=*%%7D",
             BASE_TS, BASE_TS + 60LL * N_POINTS);
    int st = tu_http(t->port, "GET", target, NULL, NULL, 0, &resp, NULL);
    if (st != 200) fail_msg("query: %d %s", st, resp ? resp : "");
    for (char h = 'a'; h <= 'b'; h++) {
        char *w = want_series(h);
        if (!strstr(resp, w)) fail_msg("series host=%c missing or different in %s", h, resp);
        free(w);
    }
    free(resp);
}

static void daemon_on_rados_answers_from_the_cluster(void **state)
{
    (void)state;
    char cfg_arg[4200];
    snprintf(cfg_arg, sizeof cfg_arg, "--config=%s", cfg_path);
    const char *extra[] = {cfg_arg, "--auto-metric", NULL};
    tu_tsd_t t = {0};
    if (tu_tsd_start(&t, extra)) fail_msg("tsd did not start");
    char *body = put_body(), *resp = NULL;
    int st = tu_http(t.port, "POST", "/api/put?sync=true", "Content-Type: application/json\r\n",
                     body, strlen(body), &resp, NULL);
    if (st != 204) {
        tu_tsd_print_log(&t);
        fail_msg("put: %d %s", st, resp ? resp : "");
    }
    free(resp);
    free(body);
    query_matches_sent(&t);
    assert_int_equal(tu_tsd_stop(&t), 0);

    /* Without its log the data dir holds only the binding to the data set
     * (rados.ns, rados.lock): the daemon has only the cluster to answer from. */
    DIR *d = opendir(t.dir);
    assert_non_null(d);
    struct dirent *de;
    int bound = 0;
    while ((de = readdir(d))) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", t.dir, de->d_name);
        if (!strcmp(de->d_name, "wal"))
            tu_rmrf(p);
        else if (!strcmp(de->d_name, "rados.ns"))
            bound = 1;
        else if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
                 strcmp(de->d_name, "rados.lock"))
            fail_msg("%s in the data dir of a rados store", de->d_name);
    }
    closedir(d);
    assert_true(bound);
    extra[1] = NULL; /* and no new names may appear */
    if (tu_tsd_start(&t, extra)) fail_msg("tsd did not restart");
    query_matches_sent(&t);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

/* 1 when the config file at path holds the line. */
static int file_has_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char buf[4096];
    int found = 0;
    while (!found && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        found = strcmp(buf, line) == 0;
    }
    fclose(f);
    return found;
}

/* The test cluster runs with cephx; the TSD's client there has only the
 * caps docs/scale-out.md gives it (every rados test runs as it), and a
 * client without OSD caps is refused at start-up with an error that says
 * which caps, instead of starting and failing its first write. */
static void a_client_without_caps_fails_at_start(void **state)
{
    (void)state;
    /* the cluster of scripts/ceph-cluster.sh: client.octsdb, and
     * client.nocaps (mon 'allow r', no osd caps) beside its ceph.conf */
    if (!file_has_line(cfg_path, "tsd.storage.rados.user = octsdb")) skip();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", cfg_path);
    *strrchr(dir, '/') = 0;
    char conf[4200], keyring[4200];
    snprintf(keyring, sizeof keyring, "%s/client.nocaps.keyring", dir);
    snprintf(conf, sizeof conf, "%s/ceph.conf", dir);
    FILE *kf = fopen(keyring, "r");
    if (!kf) skip();
    fclose(kf);
    assert_true(file_has_line(conf, "auth_client_required = cephx"));

    char *tmp = tu_tempdir();
    char path[4300], data[4300];
    snprintf(path, sizeof path, "%s/nocaps.conf", tmp);
    snprintf(data, sizeof data, "%s/data", tmp);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fprintf(out,
            "tsd.storage.backend = rados\ntsd.storage.rados.conf = %s\n"
            "tsd.storage.rados.user = nocaps\ntsd.storage.rados.namespace = nocaps\n",
            conf);
    fclose(out);
    char cfg_arg[4400], data_arg[4400];
    snprintf(cfg_arg, sizeof cfg_arg, "--config=%s", path);
    snprintf(data_arg, sizeof data_arg, "--datadir=%s", data);
    const char *argv[] = {"tsd", cfg_arg, data_arg, "--bind=127.0.0.1", "--port=4", NULL};
    char *err = NULL;
    int st = tu_run_octsdb_stderr(&err, argv, 60);
    printf("octsdb tsd as client.nocaps: exit %d: %s", st, err ? err : "");
    assert_true(st > 0); /* refused, not hanging (-1) nor started */
    assert_non_null(strstr(err, "client.nocaps may not read pool"));
    assert_non_null(strstr(err, "osd 'allow rw pool="));
    free(err);
    tu_rmrf(tmp);
    free(tmp);
}

/* tsd.rollups.auto on a shared store is refused at start-up: its rows are
 * compacted by compare-and-set, which computes no rollups (docs/rollups.md),
 * so the tables would stay empty without a word. */
static void auto_rollups_refused_on_a_shared_store(void **state)
{
    (void)state;
    char *tmp = tu_tempdir();
    char cfg_arg[4400], data_arg[4400];
    snprintf(cfg_arg, sizeof cfg_arg, "--config=%s", cfg_path);
    snprintf(data_arg, sizeof data_arg, "--datadir=%s/data", tmp);
    const char *argv[] = {"tsd",
                          cfg_arg,
                          data_arg,
                          "--bind=127.0.0.1",
                          "--port=4",
                          "--set",
                          "tsd.rollups.enable=true",
                          "--set",
                          "tsd.rollups.auto=true",
                          "--set",
                          "tsd.rollups.config={\"aggregationIds\":{\"sum\":0,\"count\":1,"
                          "\"min\":2,\"max\":3},\"intervals\":[{\"table\":\"tsdb\","
                          "\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","
                          "\"rowSpan\":\"1h\",\"defaultInterval\":true},{\"table\":\"r1h\","
                          "\"preAggregationTable\":\"p1h\",\"interval\":\"1h\","
                          "\"rowSpan\":\"1d\"}]}",
                          NULL};
    char *err = NULL;
    int st = tu_run_octsdb_stderr(&err, argv, 60);
    printf("octsdb tsd with auto rollups on rados: exit %d: %s", st, err ? err : "");
    assert_true(st > 0); /* refused, not hanging (-1) nor started */
    assert_non_null(strstr(err, "tsd.rollups.auto=true is not supported on a shared store"));
    free(err);
    tu_rmrf(tmp);
    free(tmp);
}

int main(void)
{
    cfg_path = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!cfg_path || !*cfg_path) {
        printf("[  SKIPPED ] test_tsd_rados: OCTSDB_TEST_STORE_RADOS is not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(daemon_on_rados_answers_from_the_cluster),
        cmocka_unit_test(a_client_without_caps_fails_at_start),
        cmocka_unit_test(auto_rollups_refused_on_a_shared_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
