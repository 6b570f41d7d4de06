/* test_uid_rename_live.c -- a UID rename on a running daemon takes effect at
 * once (issue 15): the next put with the new name lands in the series the
 * old name had (same TSUID), the old name is unknown as in OpenTSDB 2.4
 * (a new UID with auto-create on; with it off the put is refused, "Unknown
 * metric" as 2.4's /api/put reports a NoSuchUniqueName), and queries
 * see the same; a restart changes nothing of that. Puts racing a rename
 * lose nothing acknowledged. UIDs are counted by hand: widths 3, counters
 * from 1 in order of first use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "api_client.h"

#define T0 1356998400L

#define PUT_OK "{\"success\":1,\"failed\":0,\"errors\":[]}"

static const char *const auto_metric[] = {"--auto-metric", NULL};

static int put1(const tu_tsd_t *t, const char *metric, const char *tags, long ts, long v, char **r)
{
    char body[512];
    snprintf(body, sizeof body, "{\"metric\":\"%s\",\"timestamp\":%ld,\"value\":%ld,\"tags\":{%s}}",
             metric, ts, v, tags);
    return ac_req(t, "POST", "/api/put?details", body, r);
}

static void put_ok(const tu_tsd_t *t, const char *metric, const char *tags, long ts, long v)
{
    char *r;
    int st = put1(t, metric, tags, ts, v, &r);
    if (st != 200 || strcmp(r, PUT_OK)) fail_msg("put %s{%s}: %d <%s>", metric, tags, st, r);
    free(r);
}

/* The whole answer to a query of m ("metric{k=v}"): one series, named as
 * m names it (the names come back from its UIDs), with that TSUID and the
 * "ts":v pairs dps (NULL: whatever points). */
static void expect_series(const tu_tsd_t *t, const char *m, const char *tsuid, const char *dps)
{
    char target[512], want[1024], *r;
    int ml = (int)strcspn(m, "{"), kl = (int)strcspn(m + ml + 1, "=");
    const char *v = m + ml + 1 + kl + 1;
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:%s&show_tsuids", T0,
             T0 + 3600, m);
    int st = ac_req(t, "GET", target, NULL, &r);
    int n = snprintf(want, sizeof want,
                     "[{\"metric\":\"%.*s\",\"tags\":{\"%.*s\":\"%.*s\"},\"aggregateTags\":[],"
                     "\"tsuids\":[\"%s\"],\"dps\":{",
                     ml, m, kl, m + ml + 1, (int)strcspn(v, "}"), v, tsuid);
    if (dps) snprintf(want + n, sizeof want - (size_t)n, "%s}}]", dps);
    if (st != 200 || (dps ? strcmp(r, want) : strncmp(r, want, (size_t)n)))
        fail_msg("%s: got %d <%s>, want <%s>", target, st, r, want);
    free(r);
}

static void rename_ok(const tu_tsd_t *t, const char *kind, const char *from, const char *to)
{
    char body[256];
    snprintf(body, sizeof body, "{\"%s\":\"%s\",\"name\":\"%s\"}", kind, from, to);
    AC_EXPECT(t, "POST", "/api/uid/rename", body, 200, "{\"result\":\"true\"}");
}

/* What every query below must answer, before and after a restart. */
static void check_after_renames(const tu_tsd_t *t)
{
    /* m.new=000001 (was m.old), node=000001 (was host), b=000001 (was a);
     * host=000002 and a=000002 came back as new names. */
    expect_series(t, "m.new{node=b}", "000001000001000001",
                  "\"1356998400\":1,\"1356998410\":2,\"1356998430\":8,\"1356998450\":32");
    expect_series(t, "m.new{host=b}", "000001000002000001", "\"1356998440\":16");
    expect_series(t, "m.new{node=a}", "000001000001000002", "\"1356998460\":64");
    char *r;
    assert_int_equal(ac_req(t, "GET", "/api/query?start=1356998400&m=sum:m.old{node=b}", NULL, &r),
                     400);
    assert_non_null(strstr(r, "No such name for 'metrics': 'm.old'"));
    free(r);
}

/* Metric auto-create off (the default): metric, tag key and tag value. */
static void rename_then_put(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    AC_EXPECT(&t, "GET", "/api/uid/assign?metric=m.old", NULL, 200,
              "{\"metric\":{\"m.old\":\"000001\"}}");
    put_ok(&t, "m.old", "\"host\":\"a\"", T0, 1);

    rename_ok(&t, "metric", "m.old", "m.new");
    put_ok(&t, "m.new", "\"host\":\"a\"", T0 + 10, 2); /* the same series */
    char *r;
    assert_int_equal(put1(&t, "m.old", "\"host\":\"a\"", T0 + 20, 4, &r), 400);
    if (!strstr(r, "\"error\":\"Unknown metric\"")) fail_msg("got <%s>", r);
    free(r);
    expect_series(&t, "m.new{host=a}", "000001000001000001", "\"1356998400\":1,\"1356998410\":2");

    rename_ok(&t, "tagk", "host", "node");
    put_ok(&t, "m.new", "\"node\":\"a\"", T0 + 30, 8);  /* the same series */
    put_ok(&t, "m.new", "\"host\":\"a\"", T0 + 40, 16); /* host: a new tagk, a new series */
    expect_series(&t, "m.new{node=a}", "000001000001000001",
                  "\"1356998400\":1,\"1356998410\":2,\"1356998430\":8");
    expect_series(&t, "m.new{host=a}", "000001000002000001", "\"1356998440\":16");

    rename_ok(&t, "tagv", "a", "b");
    put_ok(&t, "m.new", "\"node\":\"b\"", T0 + 50, 32); /* the same series */
    put_ok(&t, "m.new", "\"node\":\"a\"", T0 + 60, 64); /* a: a new tagv, a new series */
    check_after_renames(&t);

    /* a restarted daemon agrees */
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    check_after_renames(&t);
    tu_tsd_destroy(&t);
}

/* Metric auto-create on: the old name becomes a new metric. */
static void rename_then_put_auto(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    put_ok(&t, "m.old", "\"host\":\"a\"", T0, 1);
    rename_ok(&t, "metric", "m.old", "m.new");
    put_ok(&t, "m.new", "\"host\":\"a\"", T0 + 10, 2);
    put_ok(&t, "m.old", "\"host\":\"a\"", T0 + 20, 4);
    expect_series(&t, "m.new{host=a}", "000001000001000001", "\"1356998400\":1,\"1356998410\":2");
    expect_series(&t, "m.old{host=a}", "000002000001000001", "\"1356998420\":4");
    /* renamed back over a name in use: refused, nothing changes */
    char *r;
    assert_int_equal(
        ac_req(&t, "POST", "/api/uid/rename", "{\"metric\":\"m.new\",\"name\":\"m.old\"}", &r),
        400);
    free(r);
    put_ok(&t, "m.new", "\"host\":\"a\"", T0 + 30, 8);
    expect_series(&t, "m.new{host=a}", "000001000001000001",
                  "\"1356998400\":1,\"1356998410\":2,\"1356998430\":8");
    tu_tsd_destroy(&t);
}

/* ---- puts racing a rename --------------------------------------------- */

#define RACE_N 600

typedef struct {
    const tu_tsd_t *t;
    atomic_int renamed; /* set once the rename's answer came back */
    atomic_int started; /* acknowledged puts so far */
    int acked[RACE_N];  /* 1: acknowledged */
    int after[RACE_N];  /* 1: sent after the rename had returned */
    int before[RACE_N]; /* 1: acknowledged before the rename was sent */
} race_t;

static void *putter(void *arg)
{
    race_t *rc = arg;
    for (int i = 0; i < RACE_N; i++) {
        rc->after[i] = atomic_load(&rc->renamed) == 2;
        char *r;
        int st = put1(rc->t, "c.old", "\"host\":\"h\"", T0 + i, 1, &r);
        rc->acked[i] = st == 200 && !strcmp(r, PUT_OK);
        free(r);
        rc->before[i] = rc->acked[i] && atomic_load(&rc->renamed) == 0;
        if (rc->acked[i]) atomic_fetch_add(&rc->started, 1);
    }
    return NULL;
}

/* Timestamps (offsets from T0) of the points a query returns, into seen[]. */
/* Offset of needle in s, or SIZE_MAX (noinline: keeps gcc's dangling-pointer
 * analysis from confusing pointers into r with r itself). */
__attribute__((noinline)) static size_t off(const char *s, const char *needle)
{
    const char *p = strstr(s, needle);
    return p ? (size_t)(p - s) : SIZE_MAX;
}

static void query_into(const tu_tsd_t *t, const char *m, int *seen, int mark)
{
    char target[256], *r;
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:%s", T0, T0 + 3600, m);
    assert_int_equal(ac_req(t, "GET", target, NULL, &r), 200);
    size_t o = off(r, "\"dps\":{");
    if (o == SIZE_MAX) fail_msg("%s: <%s>", target, r);
    o += 7;
    while (r[o] == '"') {
        long ts = 0;
        for (o++; r[o] >= '0' && r[o] <= '9'; o++)
            ts = ts * 10 + (r[o] - '0');
        if (ts < T0 || ts >= T0 + RACE_N || strncmp(r + o, "\":1", 3))
            fail_msg("%s: unexpected point at %zu in <%s>", target, o, r);
        if (seen[ts - T0]) fail_msg("%s: timestamp %ld twice", m, ts);
        seen[ts - T0] = mark;
        o += 3;
        if (r[o] == ',') o++;
    }
    free(r);
}

static void rename_under_puts(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    put_ok(&t, "c.old", "\"host\":\"h\"", T0 - 60, 0); /* the UIDs exist: c.old=000001 */
    static race_t rc;
    memset(&rc, 0, sizeof rc);
    rc.t = &t;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, putter, &rc), 0);
    while (atomic_load(&rc.started) < RACE_N / 3)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    atomic_store(&rc.renamed, 1);
    rename_ok(&t, "metric", "c.old", "c.new");
    atomic_store(&rc.renamed, 2);
    assert_int_equal(pthread_join(th, NULL), 0);

    /* 1: in c.new (the old series), 2: in c.old (a new metric) */
    int seen[RACE_N] = {0};
    query_into(&t, "c.new{host=h}", seen, 1);
    query_into(&t, "c.old{host=h}", seen, 2);
    int n_after = 0, n_before = 0;
    for (int i = 0; i < RACE_N; i++) {
        if (!rc.acked[i]) fail_msg("put %d not acknowledged", i);
        if (!seen[i]) fail_msg("acknowledged point %d lost", i);
        if (rc.before[i] && seen[i] != 1)
            fail_msg("point %d put before the rename not in c.new", i);
        if (rc.after[i] && seen[i] != 2) fail_msg("point %d put after the rename not in c.old", i);
        n_after += rc.after[i];
        n_before += rc.before[i];
    }
    /* the race really happened on both sides of the rename */
    assert_true(n_before >= RACE_N / 3);
    assert_true(n_after > 0);
    expect_series(&t, "c.old{host=h}", "000002000001000001", NULL);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rename_then_put),
        cmocka_unit_test(rename_then_put_auto),
        cmocka_unit_test(rename_under_puts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
