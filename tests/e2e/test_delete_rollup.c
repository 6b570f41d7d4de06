/* test_delete_rollup.c -- octsdb's delete beyond the raw data table
 * (docs/delete.md, "Rollups" and "Lookups"), over the real daemon:
 *   - auto_rollups_cut: random points over two days with auto rollups at
 *     1h and 1d; exact ranges cutting hours and the day boundary; every
 *     rollupUsage of 1h sum/count/min/max/avg and 1d avg equals a model of
 *     the points left; the answer's cell counts equal the model's; then a
 *     restart, a compaction, and a kill -9 right after a delete's answer;
 *   - kill_mid_delete: kill -9 at random moments of a delete: after the
 *     restart it is done wholly or not at all, rollups agreeing;
 *   - client_rollups_cut: rollups and pre-aggregates written by a client,
 *     cut by a range: dropped whole and counted, the others untouched;
 *   - series_leaves_lookup: a series delete takes the series out of
 *     /api/search/lookup, also after a restart and after kill -9 (the log
 *     replayed), and a new put brings it back.
 * Expected values come from the model (loops over the points sent), never
 * from the code under test. Values are integers or multiples of 1/1024
 * small enough that every sum is exact in a double, whatever the order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "rollup_model.h"
#include "common/json.h"
#include "common/strbuf.h"

#define T0   1356998400LL /* 2013-01-01 00:00 UTC */
#define DAYS 2
#define NSER 3
#define MAXP (DAYS * 24 * 8)
/* cells an auto rollup slot holds: sum, count, min, max and the sum of
 * squares (docs/format/rollup.md) */
#define AUTO_CELLS 5
#define CONF       RM_CONF_1H_1D
#define COMMON                                                                                     \
    "--auto-metric", "--set", "tsd.http.query.allow_delete=true", "--set",                         \
        "tsd.rollups.enable=true", "--set", "tsd.rollups.config=" CONF

static const char *const g_auto[] = {COMMON, "--set", "tsd.rollups.auto=true", NULL};
static const char *const g_plain[] = {COMMON, NULL};

static rm_pt_t g_p[NSER][MAXP];
static int g_n[NSER];

static char *gen(unsigned *seed, int s)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    for (int h = 0; h < DAYS * 24; h++) {
        char used[3600] = {0};
        for (int k = 0; k < 8; k++) {
            int sec = (int)(rand_r(seed) % 3600);
            if (used[sec]) continue;
            used[sec] = 1;
            rm_pt_t *p = &g_p[s][g_n[s]++];
            p->ts = T0 + 3600LL * h + sec;
            rm_random_value(seed, p);
            oct_strbuf_printf(&sb, "%s{\"metric\":\"x.d\",\"timestamp\":%lld,\"value\":",
                              sb.len > 1 ? "," : "", p->ts);
            if (p->is_int)
                oct_strbuf_printf(&sb, "%lld", p->i);
            else
                oct_strbuf_printf(&sb, "%.17g", p->f);
            oct_strbuf_printf(&sb, ",\"tags\":{\"s\":\"%d\"}}", s);
        }
    }
    oct_strbuf_puts(&sb, "]");
    return sb.ptr;
}

/* Does series s have a point in [lo, hi] (seconds)? */
static int any_in(int s, long long lo, long long hi)
{
    for (int i = 0; i < g_n[s]; i++)
        if (g_p[s][i].ts >= lo && g_p[s][i].ts <= hi) return 1;
    return 0;
}

/* What the model says a delete of [lo, hi] (seconds, inclusive) of the
 * series in mask does to the 1h and 1d cells (4 aggregators each): cells
 * whose interval lies inside, cells cut; then the points go. */
static void model_delete(unsigned mask, long long lo, long long hi, long long *inside,
                         long long *cut)
{
    static const long long ivs[] = {3600, 86400};
    *inside = *cut = 0;
    for (int s = 0; s < NSER; s++) {
        if (!(mask & (1u << s))) continue;
        for (int k = 0; k < 2; k++)
            for (long long b = T0; b < T0 + 86400LL * DAYS; b += ivs[k]) {
                long long e = b + ivs[k] - 1;
                if (e < lo || b > hi || !any_in(s, b, e)) continue;
                if (b >= lo && e <= hi)
                    *inside += AUTO_CELLS;
                else
                    *cut += AUTO_CELLS;
            }
        int k = 0;
        for (int i = 0; i < g_n[s]; i++)
            if (g_p[s][i].ts < lo || g_p[s][i].ts > hi) g_p[s][k++] = g_p[s][i];
        g_n[s] = k;
    }
}

static void expect(tu_tsd_t *t, const char *what, int s, const char *ds, long long iv_s,
                   const char *agg, const char *usage)
{
    static long long ts[DAYS * 24];
    static double v[DAYS * 24];
    int n = 0;
    for (long long b = T0; b < T0 + 86400LL * DAYS; b += iv_s)
        if (rm_bucket(g_p[s], g_n[s], b, iv_s, agg, &v[n])) ts[n++] = b;
    char target[512];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:%s-%s:%s:x.d%%7Bs=%d%%7D",
             T0, T0 + 86400LL * DAYS - 1, ds, agg, usage, s);
    rm_expect(t, what, target, ts, v, n, strcmp(agg, "avg") ? 0 : 1e-12);
}

static void check_all(tu_tsd_t *t, const char *what)
{
    static const char *const usages[] = {"rollup_nofallback", "rollup_fallback",
                                         "rollup_fallback_raw", "rollup_raw"};
    static const char *const aggs[] = {"sum", "count", "min", "max", "avg"};
    for (int s = 0; s < NSER; s++)
        for (int u = 0; u < 4; u++) {
            for (int a = 0; a < 5; a++)
                expect(t, what, s, "1h", 3600, aggs[a], usages[u]);
            expect(t, what, s, "1d", 86400, "avg", usages[u]);
            expect(t, what, s, "1d", 86400, "count", usages[u]);
        }
}

/* POST /api/delete of body; its counts must equal the model's. */
static void delete_expect(tu_tsd_t *t, const char *body, long long inside, long long cut)
{
    char *r = ac_req_ok(t, "POST", "/api/delete", body, 200);
    char want[160];
    snprintf(want, sizeof want,
             "\"rollupCells\":%lld,\"rollupCellsRecomputed\":%lld,"
             "\"rollupCellsDropped\":0,",
             inside, cut);
    if (!strstr(r, want)) fail_msg("delete %s: got %s, want %s", body, r, want);
    free(r);
}

static void compact(tu_tsd_t *t)
{
    char flag[4200], *out = NULL;
    snprintf(flag, sizeof flag, "--datadir=%s", t->dir);
    const char *argv[] = {"compact", flag, NULL};
    assert_int_equal(tu_run_octsdb(&out, argv), 0);
    free(out);
}

/* A TSD with auto rollups holding the model's random points of every
 * series, flushed and rolled up by a clean stop, started again. */
static void start_with_data(tu_tsd_t *t, unsigned *seed)
{
    memset(t, 0, sizeof *t);
    memset(g_n, 0, sizeof g_n);
    assert_int_equal(tu_tsd_start(t, g_auto), 0);
    for (int s = 0; s < NSER; s++) {
        char *body = gen(seed, s);
        free(ac_req_ok(t, "POST", "/api/put", body, 204));
        free(body);
    }
    assert_int_equal(tu_tsd_stop(t), 0);
    assert_int_equal(tu_tsd_start(t, g_auto), 0);
}

static void auto_rollups_cut(void **state)
{
    (void)state;
    tu_tsd_t t;
    unsigned seed = 1212;
    start_with_data(&t, &seed);
    check_all(&t, "before any delete");

    /* series 0: cuts hours 5 and 7 of day 0, hour 6 wholly inside */
    long long in, cut;
    long long lo = T0 + 5 * 3600 + 1000, hi = T0 + 7 * 3600 + 123;
    char body[512];
    model_delete(1u, lo, hi, &in, &cut);
    snprintf(body, sizeof body,
             "{\"metric\":\"x.d\",\"tags\":{\"s\":\"0\"},\"start\":%lld,\"end\":%lld}", lo, hi);
    delete_expect(&t, body, in, cut);
    check_all(&t, "after the first delete");
    /* every series: across midnight, cutting both days and hours 23 and 24 */
    lo = T0 + 86400 - 1800 + 17;
    hi = T0 + 86400 + 1800 - 3;
    model_delete(7u, lo, hi, &in, &cut);
    snprintf(body, sizeof body, "{\"metric\":\"x.d\",\"start\":%lld,\"end\":%lld}", lo, hi);
    delete_expect(&t, body, in, cut);
    check_all(&t, "after the deletes");

    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_auto), 0);
    check_all(&t, "after a restart");
    assert_int_equal(tu_tsd_stop(&t), 0);
    compact(&t);
    assert_int_equal(tu_tsd_start(&t, g_auto), 0);
    check_all(&t, "after a compaction");

    /* series 2, hours 30..40 cut at both ends, then kill -9 once answered */
    lo = T0 + 30 * 3600 + 59;
    hi = T0 + 40 * 3600 + 2000;
    model_delete(4u, lo, hi, &in, &cut);
    snprintf(body, sizeof body,
             "{\"metric\":\"x.d\",\"tags\":{\"s\":\"2\"},\"start\":%lld,\"end\":%lld}", lo, hi);
    delete_expect(&t, body, in, cut);
    tu_tsd_kill(&t);
    assert_int_equal(tu_tsd_start(&t, g_auto), 0);
    check_all(&t, "after kill -9");
    tu_tsd_destroy(&t);
}

/* 1 if the raw 1h counts of series s equal the model's (no failure). */
static int raw_counts_are(tu_tsd_t *t, int s)
{
    char target[512];
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:1h-count:rollup_raw:x.d%%7Bs=%d%%7D", T0,
             T0 + 86400LL * DAYS - 1, s);
    char *r = ac_req_ok(t, "GET", target, NULL, 200);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *jv;
    oct_errbuf_t eb;
    int ok = !json_parse(&a, r, strlen(r), 0, &jv, &eb) && jv->type == JSON_ARRAY && jv->n == 1;
    const json_value_t *dps = ok ? json_obj_get(jv->child, "dps") : NULL;
    long long b = T0;
    for (const json_value_t *d = dps ? dps->child : NULL; ok && d; d = d->next, b += 3600) {
        double want, got;
        while (b < T0 + 86400LL * DAYS && !rm_bucket(g_p[s], g_n[s], b, 3600, "count", &want))
            b += 3600;
        ok = b < T0 + 86400LL * DAYS && strtoll(d->key, NULL, 10) == b &&
             !json_number_double(d, &got) && got == want;
    }
    double dummy;
    for (; ok && b < T0 + 86400LL * DAYS; b += 3600)
        ok = !rm_bucket(g_p[s], g_n[s], b, 3600, "count", &dummy);
    json_arena_free(&a);
    free(r);
    return ok && dps;
}

/* kill -9 at a random moment of a delete: after the restart the delete
 * happened wholly (its log record was durable: the open completes it) or
 * not at all, and the rollups agree with the raw data either way. */
static void kill_mid_delete(void **state)
{
    (void)state;
    tu_tsd_t t;
    unsigned seed = 99;
    start_with_data(&t, &seed);
    static rm_pt_t before[NSER][MAXP];
    static int nbefore[NSER];
    int seen[2] = {0, 0};
    for (int round = 0; round < 4; round++) {
        memcpy(before, g_p, sizeof g_p);
        memcpy(nbefore, g_n, sizeof g_n);
        long long lo = T0 + 3600LL * (1 + 11 * round) + 77, hi = lo + 3600LL * 9 + 555, in, cut;
        model_delete(7u, lo, hi, &in, &cut);
        char body[256], req[512];
        int bl =
            snprintf(body, sizeof body, "{\"metric\":\"x.d\",\"start\":%lld,\"end\":%lld}", lo, hi);
        int rl = snprintf(req, sizeof req,
                          "POST /api/delete HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s",
                          bl, body);
        int fd = tu_connect(t.port);
        assert_true(fd >= 0);
        assert_int_equal(tu_send_all(fd, req, (size_t)rl), 0);
        usleep((useconds_t)(round * 4000 + rand_r(&seed) % 4000));
        tu_tsd_kill(&t);
        close(fd);
        assert_int_equal(tu_tsd_start(&t, g_auto), 0);
        int after = raw_counts_are(&t, 0);
        if (!after) { /* not done at all: the model goes back */
            memcpy(g_p, before, sizeof g_p);
            memcpy(g_n, nbefore, sizeof g_n);
        }
        for (int s = 0; s < NSER; s++)
            if (!raw_counts_are(&t, s))
                fail_msg("round %d, series %d: neither before nor after the delete", round, s);
        seen[after]++;
        check_all(&t,
                  after ? "kill -9 during a delete (done)" : "kill -9 during a delete (not done)");
    }
    print_message("kill -9 during a delete: %d rounds done, %d not\n", seen[1], seen[0]);
    tu_tsd_destroy(&t);
}

static void rollup_put(tu_tsd_t *t, long long ts, const char *agg, int v, const char *gb)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"metric\":\"x.c\",\"timestamp\":%lld,\"value\":%d,\"tags\":{\"h\":\"a\"},"
             "\"interval\":\"1h\",\"aggregator\":\"%s\"%s%s%s}",
             ts, v, agg, gb ? ",\"groupByAggregator\":\"" : "", gb ? gb : "", gb ? "\"" : "");
    free(ac_req_ok(t, "POST", "/api/rollup", body, 204));
}

/* The 1h sums of x.c (pre-aggregates: {_aggregate=SUM}) must be v[h] at
 * T0 + h hours, h < 6, 0 meaning no value. */
static void expect_client(tu_tsd_t *t, const char *what, int pre, const int *v)
{
    long long ts[6];
    double d[6];
    int n = 0;
    for (int h = 0; h < 6; h++)
        if (v[h]) {
            ts[n] = T0 + 3600LL * h;
            d[n++] = v[h];
        }
    char target[256];
    snprintf(target, sizeof target,
             "/api/query?start=%lld&end=%lld&m=sum:1h-sum:rollup_nofallback:x.c%s", T0,
             T0 + 6 * 3600 - 1, pre ? "%7B_aggregate=SUM%7D" : "");
    rm_expect(t, what, target, ts, d, n, 0);
}

static void client_rollups_cut(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    int plain[6], pre[6];
    for (int h = 0; h < 6; h++) {
        plain[h] = 10 + h;
        pre[h] = 100 + h;
        rollup_put(&t, T0 + 3600LL * h, "sum", plain[h], NULL);
        rollup_put(&t, T0 + 3600LL * h, "count", 3, NULL);
        rollup_put(&t, T0 + 3600LL * h, "sum", pre[h], "sum");
    }
    expect_client(&t, "written", 0, plain);
    expect_client(&t, "written", 1, pre);
    /* from 01:30 to 03:59:59: hour 1 cut (sum, count, pre-aggregate sum:
     * dropped), hours 2 and 3 inside (3 cells each) */
    const char *body = "{\"metric\":\"x.c\",\"start\":1357002000,\"end\":1357012799,"
                       "\"dryRun\":true}";
    char *r = ac_req_ok(&t, "POST", "/api/delete", body, 200);
    if (!strstr(r, "\"rollupCells\":6,\"rollupCellsRecomputed\":0,\"rollupCellsDropped\":3,"))
        fail_msg("dry run: %s", r);
    free(r);
    expect_client(&t, "after the dry run", 0, plain);
    body = "{\"metric\":\"x.c\",\"start\":1357002000,\"end\":1357012799}";
    r = ac_req_ok(&t, "POST", "/api/delete", body, 200);
    if (!strstr(r, "\"rollupCells\":6,\"rollupCellsRecomputed\":0,\"rollupCellsDropped\":3,"))
        fail_msg("delete: %s", r);
    free(r);
    plain[1] = plain[2] = plain[3] = 0;
    pre[1] = pre[2] = pre[3] = 0;
    expect_client(&t, "after the delete", 0, plain);
    expect_client(&t, "after the delete", 1, pre);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    expect_client(&t, "after a restart", 0, plain);
    expect_client(&t, "after a restart", 1, pre);
    tu_tsd_destroy(&t);
}

/* /api/search/lookup?m=x.l must list exactly the hosts in want ("a,b"...). */
static void expect_lookup(tu_tsd_t *t, const char *what, const char *want)
{
    char *r = ac_req_ok(t, "GET", "/api/search/lookup?m=x.l", NULL, 200);
    int n = 0;
    for (const char *h = "abc"; *h; h++) {
        char tag[64];
        snprintf(tag, sizeof tag, "\"tags\":{\"h\":\"%c\"}", *h);
        int listed = strstr(r, tag) != NULL, wanted = strchr(want, *h) != NULL;
        if (listed != wanted)
            fail_msg("%s: host %c listed %d, want %d: %s", what, *h, listed, wanted, r);
        n += wanted;
    }
    char total[64];
    snprintf(total, sizeof total, "\"totalResults\":%d", n);
    if (!strstr(r, total)) fail_msg("%s: want %s: %s", what, total, r);
    free(r);
}

static void put_l(tu_tsd_t *t, char h, long long ts)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"x.l\",\"timestamp\":%lld,\"value\":1,\"tags\":{\"h\":\"%c\"}}", ts, h);
    free(ac_req_ok(t, "POST", "/api/put", body, 204));
}

static void series_leaves_lookup(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    for (const char *h = "abc"; *h; h++)
        put_l(&t, *h, T0 + 60);
    expect_lookup(&t, "written", "abc");
    /* a range leaving no point: still listed (docs/delete.md) */
    char *r = ac_req_ok(&t, "POST", "/api/delete",
                        "{\"metric\":\"x.l\",\"tags\":{\"h\":\"c\"},\"start\":1356998400,"
                        "\"end\":1356998500}",
                        200);
    if (!strstr(r, "\"points\":1,") || !strstr(r, "\"seriesForgotten\":0")) fail_msg("%s", r);
    free(r);
    expect_lookup(&t, "after a range delete", "abc");
    /* a series delete (no range): gone, also after a restart */
    r = ac_req_ok(&t, "POST", "/api/delete", "{\"metric\":\"x.l\",\"tags\":{\"h\":\"a\"}}", 200);
    if (!strstr(r, "\"seriesForgotten\":1")) fail_msg("series delete: %s", r);
    free(r);
    expect_lookup(&t, "after a series delete", "bc");
    r = ac_req_ok(&t, "GET", "/api/query?start=1356998400&end=1357002000&m=sum:x.l%7Bh=*%7D", NULL,
                  200);
    if (strstr(r, "\"h\":\"a\"")) fail_msg("query lists the deleted series: %s", r);
    free(r);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    expect_lookup(&t, "after a restart", "bc");
    /* b: a point, its delete, kill -9: the log replays its SERIES record,
     * then the DELETE, which forgets it again */
    put_l(&t, 'b', T0 + 90);
    free(ac_req_ok(&t, "POST", "/api/delete", "{\"metric\":\"x.l\",\"tags\":{\"h\":\"b\"}}", 200));
    tu_tsd_kill(&t);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    expect_lookup(&t, "b deleted, kill -9", "c");
    /* c: a point, its delete, a new point, kill -9: the replayed new point
     * brings it back */
    put_l(&t, 'c', T0 + 200);
    free(ac_req_ok(&t, "POST", "/api/delete", "{\"metric\":\"x.l\",\"tags\":{\"h\":\"c\"}}", 200));
    expect_lookup(&t, "c deleted", "");
    put_l(&t, 'c', T0 + 300);
    expect_lookup(&t, "c put again", "c");
    tu_tsd_kill(&t);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    expect_lookup(&t, "c put again, kill -9", "c");
    r = ac_req_ok(&t, "GET", "/api/query?start=1356998400&end=1357002000&m=sum:x.l%7Bh=c%7D", NULL,
                  200);
    if (!strstr(r, "\"dps\":{\"1356998700\":1}")) fail_msg("c after its new put: %s", r);
    free(r);
    /* a new point brings a back, for good */
    put_l(&t, 'a', T0 + 120);
    expect_lookup(&t, "a put again", "ac");
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, g_plain), 0);
    expect_lookup(&t, "a put again, restart", "ac");
    r = ac_req_ok(&t, "GET", "/api/query?start=1356998400&end=1357002000&m=sum:x.l%7Bh=a%7D", NULL,
                  200);
    if (!strstr(r, "\"dps\":{\"1356998520\":1}")) fail_msg("a after its new put: %s", r);
    free(r);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auto_rollups_cut),
        cmocka_unit_test(kill_mid_delete),
        cmocka_unit_test(client_rollups_cut),
        cmocka_unit_test(series_leaves_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
