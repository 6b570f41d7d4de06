/* test_api_uid.c -- /api/uid/assign, /api/suggest, /api/search/lookup,
 * /api/uid/uidmeta, /api/uid/tsmeta and /api/uid/rename against the real
 * daemon. UIDs are assigned explicitly first, so every UID and TSUID in the
 * expected bodies is known by hand (widths 3, counters from 1, pairs sorted
 * by tagk UID). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "testutil.h"
#include "api_client.h"

/* metric lk.m=000001 other.m=000002; tagk host=000001 dc=000002;
 * tagv a=000001 b=000002 c=000003 x=000004 y=000005 */
#define TS_A "000001000001000001000002000004" /* lk.m{host=a,dc=x} */
#define TS_B "000001000001000002000002000004" /* lk.m{host=b,dc=x} */
#define TS_C "000001000001000003000002000005" /* lk.m{host=c,dc=y} */
#define TS_O "000002000001000001"             /* other.m{host=a} */

static tu_tsd_t T;

static int setup(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    if (tu_tsd_start(&T, NULL)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&T);
    return 0;
}

static void uid_assign(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/uid/assign?metric=lk.m,other.m&tagk=host,dc", NULL, 200,
              "{\"metric\":{\"lk.m\":\"000001\",\"other.m\":\"000002\"},"
              "\"tagk\":{\"host\":\"000001\",\"dc\":\"000002\"}}");
    AC_EXPECT(&T, "POST", "/api/uid/assign", "{\"tagv\":[\"a\",\"b\",\"c\",\"x\",\"y\"]}", 200,
              "{\"tagv\":{\"a\":\"000001\",\"b\":\"000002\",\"c\":\"000003\",\"x\":\"000004\","
              "\"y\":\"000005\"}}");
    /* existing names and invalid ones are errors: 400, the good ones still assigned */
    /* The validation text is the UID module's: OpenTSDB says "Invalid metric (...)" here and
     * "Invalid metric name (...)" on put; we accept either spelling of the subject. */
    char *r;
    assert_int_equal(ac_req(&T, "POST", "/api/uid/assign",
                            "{\"metric\":[\"lk.m\",\"bad name\",\"third.m\"]}", &r),
                     400);
    const char *head = "{\"metric\":{\"third.m\":\"000003\"},\"metric_errors\":{"
                       "\"lk.m\":\"Name already exists with UID: 000001\","
                       "\"bad name\":\"Invalid metric";
    if (strncmp(r, head, strlen(head))) fail_msg("got <%s>", r);
    const char *tail = "(\\\"bad name\\\"): illegal character:  \"}}";
    assert_non_null(strstr(r, tail));
    free(r);
    AC_EXPECT(&T, "GET", "/api/uid/assign", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing values to assign UIDs\"}}");
    AC_EXPECT(&T, "POST", "/api/uid/assign", "{}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing values to assign UIDs\"}}");

    /* points for the lookups: UIDs exist, so no auto-create is needed */
    AC_EXPECT(
        &T, "POST", "/api/put",
        "[{\"metric\":\"lk.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\","
        "\"dc\":\"x\"}},"
        "{\"metric\":\"lk.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"dc\":\"x\",\"host\":"
        "\"b\"}},"
        "{\"metric\":\"lk.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"c\",\"dc\":"
        "\"y\"}},"
        "{\"metric\":\"other.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"}}]",
        204, "");
}

static void suggest(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics", NULL, 200,
              "[\"lk.m\",\"other.m\",\"third.m\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&q=o", NULL, 200, "[\"other.m\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&max=2", NULL, 200, "[\"lk.m\",\"other.m\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&max=0", NULL, 200,
              "[\"lk.m\",\"other.m\",\"third.m\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=tagk", NULL, 200, "[\"dc\",\"host\"]");
    AC_EXPECT(&T, "GET", "/suggest?type=tagv&q=", NULL, 200, "[\"a\",\"b\",\"c\",\"x\",\"y\"]");
    AC_EXPECT(&T, "POST", "/api/suggest", "{\"type\":\"tagv\",\"q\":\"x\",\"max\":5}", 200,
              "[\"x\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=Metrics", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Invalid 'type' parameter:Metrics\"}}");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&max=ten", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse 'max' as a number\"}}");
    AC_EXPECT(&T, "GET", "/api/suggest", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>type</code>\"}}");
}

/* Body up to and including "results":[...], followed by ,"time": */
static void expect_lookup(const char *method, const char *target, const char *body,
                          const char *want_prefix)
{
    char *r;
    int st = ac_req(&T, method, target, body, &r);
    size_t n = strlen(want_prefix);
    if (st != 200 || strncmp(r, want_prefix, n) || strncmp(r + n, ",\"time\":", 8))
        fail_msg("%s %s: got %d <%s>\nwant <%s,\"time\":...>", method, target, st, r, want_prefix);
    free(r);
}

#define RES(ts, m, tags) "{\"tsuid\":\"" ts "\",\"metric\":\"" m "\",\"tags\":" tags "}"
#define R_A              RES(TS_A, "lk.m", "{\"dc\":\"x\",\"host\":\"a\"}")
#define R_B              RES(TS_B, "lk.m", "{\"dc\":\"x\",\"host\":\"b\"}")
#define R_C              RES(TS_C, "lk.m", "{\"dc\":\"y\",\"host\":\"c\"}")
#define R_O              RES(TS_O, "other.m", "{\"host\":\"a\"}")

static void lookup(void **state)
{
    (void)state;
    expect_lookup("GET", "/api/search/lookup?m=lk.m", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[],\"limit\":25,"
                  "\"startIndex\":0,\"totalResults\":3,\"results\":[" R_A "," R_B "," R_C "]");
    expect_lookup("GET", "/api/search/lookup?m=lk.m%7Bhost=a%7D", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"host\","
                  "\"value\":\"a\"}],\"limit\":25,\"startIndex\":0,\"totalResults\":1,"
                  "\"results\":[" R_A "]");
    expect_lookup("GET", "/api/search/lookup?m=lk.m{dc=x}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"dc\","
                  "\"value\":\"x\"}],\"limit\":25,\"startIndex\":0,\"totalResults\":2,"
                  "\"results\":[" R_A "," R_B "]");
    /* values of one key are OR'd */
    expect_lookup("GET", "/api/search/lookup?m=lk.m{host=a,host=c}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"host\","
                  "\"value\":\"a\"},{\"key\":\"host\",\"value\":\"c\"}],\"limit\":25,"
                  "\"startIndex\":0,\"totalResults\":2,\"results\":[" R_A "," R_C "]");
    /* different keys are AND'ed */
    expect_lookup("GET", "/api/search/lookup?m=lk.m{host=*,dc=y}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"host\","
                  "\"value\":\"*\"},{\"key\":\"dc\",\"value\":\"y\"}],\"limit\":25,"
                  "\"startIndex\":0,\"totalResults\":1,\"results\":[" R_C "]");
    expect_lookup("GET", "/api/search/lookup?m=lk.m{*=y}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"*\","
                  "\"value\":\"y\"}],\"limit\":25,\"startIndex\":0,\"totalResults\":1,"
                  "\"results\":[" R_C "]");
    /* no metric: every metric */
    expect_lookup("GET", "/api/search/lookup?m={host=a}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"*\",\"tags\":[{\"key\":\"host\","
                  "\"value\":\"a\"}],\"limit\":25,\"startIndex\":0,\"totalResults\":2,"
                  "\"results\":[" R_A "," R_O "]");
    expect_lookup("GET", "/api/search/lookup?m=lk.m&limit=1", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[],\"limit\":1,"
                  "\"startIndex\":0,\"totalResults\":1,\"results\":[" R_A "]");
    expect_lookup("POST", "/api/search/lookup",
                  "{\"metric\":\"lk.m\",\"tags\":[{\"key\":\"dc\",\"value\":\"y\"}],\"limit\":5}",
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"dc\","
                  "\"value\":\"y\"}],\"limit\":5,\"startIndex\":0,\"totalResults\":1,"
                  "\"results\":[" R_C "]");
    /* a metric without series: empty */
    expect_lookup("GET", "/api/search/lookup?m=third.m", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"third.m\",\"tags\":[],\"limit\":25,"
                  "\"startIndex\":0,\"totalResults\":0,\"results\":[]");
    AC_EXPECT(&T, "GET", "/api/search/lookup?m=nosuch.m", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"No such name for 'metrics': 'nosuch.m'\"}}");
    AC_EXPECT(&T, "GET", "/api/search/lookup", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>m</code>\"}}");
    AC_EXPECT(&T, "POST", "/api/search/lookup", "{\"limit\":3}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing metric and tags. Please supply at "
              "least one value.\"}}");
}

#define UM(uid, type, name, dn, desc, notes, created, custom)                                      \
    "{\"uid\":\"" uid "\",\"type\":\"" type "\",\"name\":\"" name "\",\"displayName\":\"" dn       \
    "\",\"description\":\"" desc "\",\"notes\":\"" notes "\",\"created\":" #created                \
    ",\"custom\":" custom "}"

static void uidmeta(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?uid=000001&type=metric", NULL, 200,
              UM("000001", "METRIC", "lk.m", "", "", "", 0, "null"));
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?uid=FFFFFF&type=metric", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Could not find the requested UID\"}}");
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?uid=000001&type=nope", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Invalid type requested: nope\"}}");
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?type=metric", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>uid</code>\"}}");
    AC_EXPECT(&T, "POST", "/api/uid/uidmeta",
              "{\"uid\":\"000001\",\"type\":\"metric\",\"displayName\":\"LK\","
              "\"custom\":{\"owner\":\"ops\"}}",
              200, UM("000001", "METRIC", "lk.m", "LK", "", "", 0, "{\"owner\":\"ops\"}"));
    /* the same again changes nothing */
    AC_EXPECT(&T, "POST", "/api/uid/uidmeta",
              "{\"uid\":\"000001\",\"type\":\"metric\",\"displayName\":\"LK\"}", 304, "");
    /* merge keeps displayName; query-string form */
    AC_EXPECT(&T, "POST", "/api/uid/uidmeta?uid=000001&type=metric&notes=n1", NULL, 200,
              UM("000001", "METRIC", "lk.m", "LK", "", "n1", 0, "{\"owner\":\"ops\"}"));
    /* PUT replaces every field */
    AC_EXPECT(&T, "PUT", "/api/uid/uidmeta",
              "{\"uid\":\"000002\",\"type\":\"tagk\",\"description\":\"datacenter\"}", 200,
              UM("000002", "TAGK", "dc", "", "datacenter", "", 0, "null"));
    AC_EXPECT(&T, "PUT", "/api/uid/uidmeta", "{\"uid\":\"000001\",\"type\":\"metric\"}", 200,
              UM("000001", "METRIC", "lk.m", "", "", "", 0, "null"));
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?uid=000002&type=TAGK", NULL, 200,
              UM("000002", "TAGK", "dc", "", "datacenter", "", 0, "null"));
    AC_EXPECT(&T, "DELETE", "/api/uid/uidmeta?uid=000002&type=tagk", NULL, 204, "");
    AC_EXPECT(&T, "GET", "/api/uid/uidmeta?uid=000002&type=tagk&method_override=get", NULL, 200,
              UM("000002", "TAGK", "dc", "", "", "", 0, "null"));
}

static void tsmeta(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/uid/tsmeta?tsuid=" TS_O, NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Could not find Timeseries meta data\"}}");
    AC_EXPECT(&T, "POST", "/api/uid/tsmeta?tsuid=" TS_O "&display_name=X", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Could not find TSMeta, specify "
              "\\\"create=true\\\" to create a new one.\"}}");
    char *r;
    assert_int_equal(
        ac_req(&T, "POST", "/api/uid/tsmeta?tsuid=" TS_O "&display_name=X&create=true", NULL, &r),
        200);
    /* the answer carries the UIDMeta of the metric and of each tag UID */
    const char *want_head =
        "{\"tsuid\":\"" TS_O
        "\",\"metric\":" UM("000002", "METRIC", "other.m", "", "", "", 0, "null") ",\"tags\":[" UM(
            "000001", "TAGK", "host", "", "", "", 0,
            "null") "," UM("000001", "TAGV", "a", "", "", "", 0,
                           "null") "],\"description\":\"\",\"notes\":\"\","
                                   "\"created\":";
    if (strncmp(r, want_head, strlen(want_head))) fail_msg("got <%s>", r);
    const char *tail = strstr(r, ",\"units\":");
    assert_non_null(tail);
    assert_string_equal(tail, ",\"units\":\"\",\"retention\":0,\"max\":\"NaN\",\"min\":\"NaN\","
                              "\"displayName\":\"X\",\"dataType\":\"\",\"lastReceived\":0,"
                              "\"totalDatapoints\":0,\"custom\":null}");
    /* GET returns the same object */
    char *g;
    assert_int_equal(ac_req(&T, "GET", "/api/uid/tsmeta?tsuid=" TS_O, NULL, &g), 200);
    assert_string_equal(g, r);
    free(g);
    free(r);
    AC_EXPECT(&T, "POST", "/api/uid/tsmeta?tsuid=" TS_O "&display_name=X", NULL, 304, "");
    /* m= with the exact tags identifies the series; JSON body merges */
    assert_int_equal(ac_req(&T, "POST", "/api/uid/tsmeta?m=other.m%7Bhost=a%7D",
                            "{\"description\":\"D\",\"units\":\"req/s\",\"max\":10.5}", &r),
                     200);
    assert_non_null(strstr(r, "\"description\":\"D\""));
    assert_non_null(strstr(r, "\"units\":\"req/s\",\"retention\":0,\"max\":10.5,\"min\":\"NaN\","
                              "\"displayName\":\"X\""));
    free(r);
    /* GET by m= lists the stored TSMeta of matching series */
    assert_int_equal(ac_req(&T, "GET", "/api/uid/tsmeta?m=other.m", NULL, &r), 200);
    assert_memory_equal(r, "[{\"tsuid\":\"" TS_O "\"", strlen("[{\"tsuid\":\"" TS_O "\""));
    free(r);
    AC_EXPECT(&T, "GET", "/api/uid/tsmeta?m=lk.m", NULL, 200, "[]");
    AC_EXPECT(&T, "DELETE", "/api/uid/tsmeta?tsuid=" TS_O, NULL, 204, "");
    AC_EXPECT(&T, "GET", "/api/uid/tsmeta?tsuid=" TS_O, NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Could not find Timeseries meta data\"}}");
}

static void rename_uid(void **state)
{
    (void)state;
    AC_EXPECT(&T, "POST", "/api/uid/rename", "{\"metric\":\"third.m\",\"name\":\"fourth.m\"}", 200,
              "{\"result\":\"true\"}");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&q=f", NULL, 200, "[\"fourth.m\"]");
    AC_EXPECT(&T, "GET", "/api/suggest?type=metrics&q=t", NULL, 200, "[]");
    AC_EXPECT(&T, "GET", "/api/uid/rename?tagv=y&name=z", NULL, 200, "{\"result\":\"true\"}");
    expect_lookup("GET", "/api/search/lookup?m=lk.m{dc=z}", NULL,
                  "{\"type\":\"LOOKUP\",\"metric\":\"lk.m\",\"tags\":[{\"key\":\"dc\","
                  "\"value\":\"z\"}],\"limit\":25,\"startIndex\":0,\"totalResults\":1,"
                  "\"results\":[" RES(TS_C, "lk.m", "{\"dc\":\"z\",\"host\":\"c\"}") "]");
    char *r;
    assert_int_equal(
        ac_req(&T, "POST", "/api/uid/rename", "{\"metric\":\"third.m\",\"name\":\"x.m\"}", &r),
        400);
    assert_memory_equal(r, "{\"result\":\"false\",\"error\":\"", 27);
    free(r);
    AC_EXPECT(&T, "POST", "/api/uid/rename", "{\"metric\":\"lk.m\"}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing necessary values to rename UID\"}}");
}

/* A lookup big enough for the answer's fast paths (a slot per tag value
 * UID, the body sized ahead): 5,000 series, host h<n> with grp g<n % 7>,
 * sent by this test. Every series comes once, in TSUID order, with its own
 * two tags; a filtered lookup gets the ones the arithmetic says. */
#define BIG_N 5000
static void big_lookup(void **state)
{
    (void)state;
    size_t cap = (size_t)BIG_N * 96 + 16, len = 0;
    char *body = malloc(cap), *r;
    len += (size_t)snprintf(body + len, cap - len, "[");
    for (int i = 0; i < BIG_N; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%s{\"metric\":\"big.m\",\"timestamp\":1700000000,\"value\":%d,"
                                "\"tags\":{\"host\":\"h%04d\",\"grp\":\"g%d\"}}",
                                i ? "," : "", i, i, i % 7);
    snprintf(body + len, cap - len, "]");
    assert_int_equal(ac_req(&T, "POST", "/api/uid/assign?metric=big.m", NULL, &r), 200);
    free(r);
    assert_int_equal(ac_req(&T, "POST", "/api/put?sync", body, &r), 204);
    free(r);
    free(body);
    for (int pass = 0; pass < 2; pass++) {
        const char *target = pass ? "/api/search/lookup?m=big.m{grp=g3}&limit=1000000"
                                  : "/api/search/lookup?m=big.m{host=*}&limit=1000000";
        assert_int_equal(ac_req(&T, "GET", target, NULL, &r), 200);
        json_arena_t a = JSON_ARENA_INIT;
        json_value_t *v;
        oct_errbuf_t eb;
        if (json_parse(&a, r, strlen(r), 0, &v, &eb)) fail_msg("bad JSON %s", eb.msg);
        const json_value_t *res = json_obj_get(v, "results");
        int64_t total;
        assert_int_equal(json_number_i64(json_obj_get(v, "totalResults"), &total), 0);
        int want = pass ? (BIG_N - 3 + 6) / 7 : BIG_N; /* n % 7 == 3 for n < BIG_N */
        assert_int_equal(total, want);
        assert_int_equal(res->n, (size_t)want);
        static char seen[BIG_N];
        memset(seen, 0, sizeof seen);
        char prev[64] = "";
        for (const json_value_t *o = res->child; o; o = o->next) {
            const json_value_t *ts = json_obj_get(o, "tsuid"), *m = json_obj_get(o, "metric"),
                               *tags = json_obj_get(o, "tags");
            const json_value_t *h = json_obj_get(tags, "host"), *g = json_obj_get(tags, "grp");
            assert_true(ts && m && h && g && tags->n == 2);
            assert_int_equal(m->len, 5);
            assert_memory_equal(m->str, "big.m", 5);
            char t[64];
            snprintf(t, sizeof t, "%.*s", (int)ts->len, ts->str);
            if (strcmp(prev, t) >= 0) fail_msg("TSUID %s after %s", t, prev);
            snprintf(prev, sizeof prev, "%s", t);
            int n = atoi(h->str + 1), gn = atoi(g->str + 1);
            assert_true(n >= 0 && n < BIG_N && !seen[n]);
            seen[n] = 1;
            assert_int_equal(gn, n % 7);
            if (pass) assert_int_equal(gn, 3);
        }
        json_arena_free(&a);
        free(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uid_assign), cmocka_unit_test(suggest), cmocka_unit_test(lookup),
        cmocka_unit_test(uidmeta),    cmocka_unit_test(tsmeta),  cmocka_unit_test(rename_uid),
        cmocka_unit_test(big_lookup),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
