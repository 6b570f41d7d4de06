/* test_multi_tsd_uid_rados.c -- three real `octsdb tsd` processes on one
 * RADOS pool and namespace (each with its own data dir), the UID side of
 * issue 10:
 *
 *  (a) all three receive the same 50,011 new names at once (10 metrics,
 *      one tag key, 50,000 tag values, in 50,000 points sent to each TSD
 *      concurrently over /api/put, two TSDs in one order and one in the
 *      reverse): every name has one UID, the same on every TSD; the UIDs of
 *      each kind are exactly 1..N (no gaps, no UID twice: the counter equals
 *      the number of names, which the next assignment confirms); reverse
 *      lookups agree; `octsdb uid fsck` finds nothing wrong in exactly the
 *      2 x 50,011 + 3 cells that must be there. (Few metrics because
 *      each new series is also written to its metric's partition of
 *      tsdb-meta: 2,000 metrics made that, not the UIDs, the test's cost.
 *      The points are in the current hour, so no hour closes and is flushed
 *      meanwhile, and the TSDs are killed at the end instead of flushing
 *      50,000 open series each: the data side is not what this tests.)
 *  (b) a rename through one TSD (HTTP) and a delete through the command
 *      line (a fourth process) are seen by the other TSDs' writes and
 *      queries as soon as the rename or delete has returned: a put with the
 *      new name lands on the same series (same TSUID), the old name is
 *      unknown as in 2.4, and a deleted tag value becomes a new UID, so a
 *      new series.
 *
 * Expected UIDs and TSUIDs are counted by hand from what the test sends
 * (widths 3, counters from 1). Needs a cluster: OCTSDB_TEST_STORE_RADOS
 * names the config file of scripts/ceph-cluster.sh; without it the program
 * exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "rados_test.h"

#define N_TSD     3
#define N_METRICS 10
#define N_TAGV    50000 /* one point per tag value: point i is m.(i % N_METRICS){k=v<i>} */
#define BATCH     1000
#define T0        1356998400L

static const char *cfg_path;

typedef struct {
    char *tmp; /* holds tsd.conf */
    char conf[4300];
    tu_tsd_t t[N_TSD];
} cluster_t;

/* The cluster's config plus a namespace of this test's own. */
static void write_conf(cluster_t *c, const char *tag)
{
    c->tmp = tu_tempdir();
    snprintf(c->conf, sizeof c->conf, "%s/tsd.conf", c->tmp);
    FILE *in = fopen(cfg_path, "r"), *out = fopen(c->conf, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[4096];
    while (fgets(line, sizeof line, in))
        fputs(line, out);
    char ns[64];
    rt_namespace(tag, ns, sizeof ns);
    fprintf(out, "\ntsd.storage.rados.namespace = %s\n", ns);
    fclose(in);
    fclose(out);
}

static void start_all(cluster_t *c, int auto_metric)
{
    char arg[4400];
    snprintf(arg, sizeof arg, "--config=%s", c->conf);
    const char *extra[] = {arg, auto_metric ? "--auto-metric" : NULL, NULL};
    for (int i = 0; i < N_TSD; i++)
        if (tu_tsd_start(&c->t[i], extra)) fail_msg("tsd %d did not start", i);
}

static void stop_all(cluster_t *c)
{
    for (int i = 0; i < N_TSD; i++) {
        if (c->t[i].pid && tu_tsd_stop(&c->t[i]) != 0) {
            tu_tsd_print_log(&c->t[i]);
            fail_msg("tsd %d did not stop cleanly", i);
        }
        tu_tsd_destroy(&c->t[i]);
    }
    tu_rmrf(c->tmp);
    free(c->tmp);
}

/* octsdb uid ARGS... with the cluster's config and a fresh data dir of its
 * own (a fourth process on the data set); stdout in *out. */
static int run_uid(cluster_t *c, char **out, const char *a1, const char *a2, const char *a3)
{
    char cfg[4400], dd[4400];
    char *dir = tu_tempdir();
    snprintf(cfg, sizeof cfg, "--config=%s", c->conf);
    snprintf(dd, sizeof dd, "--datadir=%s", dir);
    const char *argv[] = {"uid", cfg, dd, a1, a2, a3, NULL};
    int st = tu_run_octsdb(out, argv);
    tu_rmrf(dir);
    free(dir);
    return st;
}

/* ---- (a) 50,001 names at once ------------------------------------------ */

typedef struct {
    const tu_tsd_t *t;
    long ts;
    int reverse;
    int failures;
    char first_error[512];
} sender_t;

static void *send_all(void *p)
{
    sender_t *s = p;
    size_t cap = (size_t)BATCH * 100 + 16;
    char *body = malloc(cap);
    for (int b = 0; b < N_TAGV / BATCH; b++) {
        int batch = s->reverse ? N_TAGV / BATCH - 1 - b : b;
        size_t len = 0;
        body[len++] = '[';
        for (int j = 0; j < BATCH; j++) {
            int i = batch * BATCH + j;
            len += (size_t)snprintf(body + len, cap - len,
                                    "%s{\"metric\":\"m.%d\",\"timestamp\":%ld,\"value\":%d,"
                                    "\"tags\":{\"k\":\"v%d\"}}",
                                    j ? "," : "", i % N_METRICS, s->ts, i, i);
        }
        body[len++] = ']';
        body[len] = '\0';
        char *r = NULL;
        int st = tu_http(s->t->port, "POST", "/api/put", "Content-Type: application/json\r\n", body,
                         len, &r, NULL);
        if (st != 204) {
            if (!s->failures++)
                snprintf(s->first_error, sizeof s->first_error, "%d %s", st, r ? r : "");
        }
        free(r);
    }
    free(body);
    return NULL;
}

/* Reads the n entries "<prefix><i>":"Name already exists with UID: X" of
 * the object after key in resp (for the tag key: "k", prefix empty, n 1). */
static void parse_errors(const char *resp, const char *key, const char *prefix, int n,
                         uint32_t *ids)
{
    const char *p = strstr(resp, key);
    if (!p) fail_msg("no %s in <%.300s>", key, resp);
    p += strlen(key);
    static const char exists[] = "\":\"Name already exists with UID: ";
    for (int i = 0; i < n; i++) {
        char name[32];
        if (*prefix)
            snprintf(name, sizeof name, "\"%s%d", prefix, i);
        else
            snprintf(name, sizeof name, "\"k");
        size_t nl = strlen(name);
        if (strncmp(p, name, nl) || strncmp(p + nl, exists, sizeof exists - 1))
            fail_msg("entry %d after %s: <%.200s>", i, key, p);
        p += nl + sizeof exists - 1;
        char *end;
        ids[i] = (uint32_t)strtoul(p, &end, 16);
        if (*end != '"') fail_msg("entry %d after %s: <%.200s>", i, key, p);
        p = end + 1;
        if (*p == ',') p++;
    }
    if (*p != '}') fail_msg("more names than sent after %s: <%.100s>", key, p);
}

/* Asks t for the UID of every name (/api/uid/assign: each one already
 * exists, and the answer names its UID) into ids[kind][index]. */
static void uids_of_all(const tu_tsd_t *t, uint32_t *metric_ids, uint32_t *tagv_ids,
                        uint32_t *tagk_id)
{
    size_t cap = (size_t)(N_METRICS + N_TAGV) * 12 + 64, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body + len, cap - len, "{\"metric\":[");
    for (int i = 0; i < N_METRICS; i++)
        len += (size_t)snprintf(body + len, cap - len, "%s\"m.%d\"", i ? "," : "", i);
    len += (size_t)snprintf(body + len, cap - len, "],\"tagk\":[\"k\"],\"tagv\":[");
    for (int i = 0; i < N_TAGV; i++)
        len += (size_t)snprintf(body + len, cap - len, "%s\"v%d\"", i ? "," : "", i);
    snprintf(body + len, cap - len, "]}");
    char *r;
    int st = ac_req(t, "POST", "/api/uid/assign", body, &r);
    free(body);
    if (st != 400) fail_msg("assign of existing names: %d <%.300s>", st, r);
    /* every name is an error "Name already exists with UID: XXXXXX", in order */
    parse_errors(r, "\"metric_errors\":{", "m.", N_METRICS, metric_ids);
    parse_errors(r, "\"tagk_errors\":{", "", 1, tagk_id);
    parse_errors(r, "\"tagv_errors\":{", "v", N_TAGV, tagv_ids);
    free(r);
}

/* ids[0..n) is exactly 1..n. */
static void assert_permutation(const uint32_t *ids, int n, const char *what)
{
    char *seen = calloc((size_t)n + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ids[i] < 1 || ids[i] > (uint32_t)n)
            fail_msg("%s %d has UID %u, not in 1..%d", what, i, ids[i], n);
        if (seen[ids[i]]++) fail_msg("%s: UID %u given twice", what, ids[i]);
    }
    free(seen);
}

static void same_names_at_once_get_one_uid_each(void **state)
{
    (void)state;
    cluster_t c;
    memset(&c, 0, sizeof c);
    write_conf(&c, "uid3");
    start_all(&c, 1);

    int64_t t0 = oct_clock_mono_ns();
    long now = (long)(oct_clock_wall_ms() / 60000 * 60);
    pthread_t th[N_TSD];
    sender_t s[N_TSD];
    for (int i = 0; i < N_TSD; i++) {
        s[i] = (sender_t){&c.t[i], now, i == 2, 0, ""};
        assert_int_equal(pthread_create(&th[i], NULL, send_all, &s[i]), 0);
    }
    for (int i = 0; i < N_TSD; i++)
        pthread_join(th[i], NULL);
    printf("3 TSDs x %d points (50,011 new names): %lld ms\n", N_TAGV,
           (long long)((oct_clock_mono_ns() - t0) / 1000000));
    for (int i = 0; i < N_TSD; i++)
        if (s[i].failures) {
            tu_tsd_print_log(&c.t[i]);
            fail_msg("tsd %d: %d puts failed, first: %s", i, s[i].failures, s[i].first_error);
        }

    /* every TSD names the same UID for every name, and they are 1..N per kind */
    uint32_t *m[N_TSD], *v[N_TSD], k[N_TSD];
    for (int i = 0; i < N_TSD; i++) {
        m[i] = malloc(N_METRICS * sizeof(uint32_t));
        v[i] = malloc(N_TAGV * sizeof(uint32_t));
        uids_of_all(&c.t[i], m[i], v[i], &k[i]);
    }
    for (int i = 1; i < N_TSD; i++) {
        assert_memory_equal(m[i], m[0], N_METRICS * sizeof(uint32_t));
        assert_memory_equal(v[i], v[0], N_TAGV * sizeof(uint32_t));
        assert_int_equal(k[i], k[0]);
    }
    assert_permutation(m[0], N_METRICS, "metric");
    assert_permutation(v[0], N_TAGV, "tagv");
    assert_int_equal(k[0], 1);

    /* reverse maps agree, asked of another TSD than the one that answered */
    for (int j = 0; j < 200; j++) {
        int i = (int)(((unsigned)j * 2654435761u) % N_TAGV);
        char target[128], want[64], *r;
        snprintf(target, sizeof target, "/api/uid/uidmeta?type=tagv&uid=%06X", v[0][i]);
        snprintf(want, sizeof want, "\"name\":\"v%d\"", i);
        r = ac_req_ok(&c.t[j % N_TSD], "GET", target, NULL, 200);
        if (!strstr(r, want)) fail_msg("%s: <%s>, want %s", target, r, want);
        free(r);
        i = j * 10 % N_METRICS;
        snprintf(target, sizeof target, "/api/uid/uidmeta?type=metric&uid=%06X", m[0][i]);
        snprintf(want, sizeof want, "\"name\":\"m.%d\"", i);
        r = ac_req_ok(&c.t[(j + 1) % N_TSD], "GET", target, NULL, 200);
        if (!strstr(r, want)) fail_msg("%s: <%s>, want %s", target, r, want);
        free(r);
    }

    /* the store itself: forward and reverse of every name, three counters */
    char *out = NULL;
    int st = run_uid(&c, &out, "fsck", NULL, NULL);
    char want[64];
    snprintf(want, sizeof want, "%d KVs analyzed\nNo errors found.\n",
             2 * (N_METRICS + 1 + N_TAGV) + 3);
    if (st != 0 || !out || strcmp(out, want))
        fail_msg("uid fsck: %d <%s>, want <%s>", st, out, want);
    free(out);

    /* the counters equal the names: the next name of each kind gets N + 1 */
    AC_EXPECT(&c.t[1], "GET", "/api/uid/assign?metric=probe&tagk=probe&tagv=probe", NULL, 200,
              "{\"metric\":{\"probe\":\"00000B\"},\"tagk\":{\"probe\":\"000002\"},"
              "\"tagv\":{\"probe\":\"00C351\"}}");

    for (int i = 0; i < N_TSD; i++) {
        free(m[i]);
        free(v[i]);
    }
    for (int i = 0; i < N_TSD; i++)
        tu_tsd_kill(&c.t[i]);
    stop_all(&c);
}

/* ---- (b) rename and delete seen by the other TSDs ----------------------- */

static void put_ok(const tu_tsd_t *t, const char *metric, const char *tags, long ts, long v)
{
    char body[512], *r;
    snprintf(body, sizeof body, "{\"metric\":\"%s\",\"timestamp\":%ld,\"value\":%ld,\"tags\":{%s}}",
             metric, ts, v, tags);
    int st = ac_req(t, "POST", "/api/put?details", body, &r);
    if (st != 200 || strcmp(r, "{\"success\":1,\"failed\":0,\"errors\":[]}"))
        fail_msg("put %s{%s} on port %d: %d <%s>", metric, tags, t->port, st, r);
    free(r);
}

/* The whole answer to sum:m over the first hour with TSUIDs. */
static void expect_query(const tu_tsd_t *t, const char *m, const char *want)
{
    char target[512], *r;
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:%s&show_tsuids", T0,
             T0 + 3600, m);
    int st = ac_req(t, "GET", target, NULL, &r);
    if ((want[0] == '[' ? st != 200 : st != 400) || !strstr(r, want))
        fail_msg("port %d %s: got %d <%s>, want <%s>", t->port, target, st, r, want);
    free(r);
}

#define SERIES(metric, tagv, tsuid, dps)                                                           \
    "[{\"metric\":\"" metric "\",\"tags\":{\"host\":\"" tagv "\"},\"aggregateTags\":[],"           \
    "\"tsuids\":[\"" tsuid "\"],\"dps\":{" dps "}}]"

static void rename_and_delete_reach_the_other_tsds(void **state)
{
    (void)state;
    cluster_t c;
    memset(&c, 0, sizeof c);
    write_conf(&c, "ren3");
    start_all(&c, 0); /* metrics are not created by puts, as 2.4's default */
    tu_tsd_t *a = &c.t[0], *b = &c.t[1], *cc = &c.t[2];

    AC_EXPECT(a, "GET", "/api/uid/assign?metric=ren.old", NULL, 200,
              "{\"metric\":{\"ren.old\":\"000001\"}}");
    /* b and c learn the names and their series (host: tagk 1; b, c: tagv 1, 2) */
    put_ok(b, "ren.old", "\"host\":\"b\"", T0, 1);
    put_ok(cc, "ren.old", "\"host\":\"c\"", T0, 10);
    expect_query(b, "ren.old{host=b}",
                 SERIES("ren.old", "b", "000001000001000001", "\"1356998400\":1"));
    expect_query(cc, "ren.old{host=c}",
                 SERIES("ren.old", "c", "000001000001000002", "\"1356998400\":10"));

    int64_t t0 = oct_clock_mono_ns();
    AC_EXPECT(a, "POST", "/api/uid/rename", "{\"metric\":\"ren.old\",\"name\":\"ren.new\"}", 200,
              "{\"result\":\"true\"}");
    int64_t rename_ms = (oct_clock_mono_ns() - t0) / 1000000;
    printf("rename through tsd 0, 3 TSDs watching: %lld ms\n", (long long)rename_ms);
    /* the stated bound: every TSD dropped the old name before the rename
     * answered (docs/scale-out.md); no waiting below */
    assert_true(rename_ms < 1000);

    /* the other TSDs' writes: the new name is the same series, the old one unknown */
    put_ok(b, "ren.new", "\"host\":\"b\"", T0 + 60, 2);
    put_ok(cc, "ren.new", "\"host\":\"c\"", T0 + 60, 20);
    char *r;
    assert_int_equal(ac_req(b, "POST", "/api/put?details",
                            "{\"metric\":\"ren.old\",\"timestamp\":1356998520,\"value\":4,"
                            "\"tags\":{\"host\":\"b\"}}",
                            &r),
                     400);
    if (!strstr(r, "\"error\":\"Unknown metric\"")) fail_msg("put of the old name on b: <%s>", r);
    free(r);
    /* and their queries */
    expect_query(b, "ren.new{host=b}",
                 SERIES("ren.new", "b", "000001000001000001", "\"1356998400\":1,\"1356998460\":2"));
    expect_query(
        cc, "ren.new{host=c}",
        SERIES("ren.new", "c", "000001000001000002", "\"1356998400\":10,\"1356998460\":20"));
    expect_query(b, "ren.old{host=b}", "No such name for 'metrics': 'ren.old'");
    expect_query(cc, "ren.old{host=c}", "No such name for 'metrics': 'ren.old'");

    /* a delete from the command line (a fourth process): tag value b goes;
     * b's next put of host=b gets a new UID (3), so a new series */
    char *out = NULL;
    t0 = oct_clock_mono_ns();
    assert_int_equal(run_uid(&c, &out, "delete", "tagv", "b"), 0);
    printf("octsdb uid delete (process start to exit): %lld ms\n",
           (long long)((oct_clock_mono_ns() - t0) / 1000000));
    free(out);
    put_ok(b, "ren.new", "\"host\":\"b\"", T0 + 120, 3);
    expect_query(b, "ren.new{host=b}",
                 SERIES("ren.new", "b", "000001000001000003", "\"1356998520\":3"));
    /* c never cached b; c's series is untouched */
    expect_query(
        cc, "ren.new{host=c}",
        SERIES("ren.new", "c", "000001000001000002", "\"1356998400\":10,\"1356998460\":20"));
    stop_all(&c);
}

int main(void)
{
    cfg_path = rt_cfg_path_or_skip();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rename_and_delete_reach_the_other_tsds),
        cmocka_unit_test(same_names_at_once_get_one_uid_each),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
