/* test_tree.c -- trees over the real daemon: /api/tree*, processing of new
 * series (tsd.core.tree.enable_processing with meta tracking), collisions,
 * strict match and not-matched records, `octsdb uid treesync` and
 * `treepurge` through the running TSD. Every expected body is worked out by
 * hand from the rules and the data the test sends.
 *
 * UIDs are assigned first, in this order, so every TSUID is known:
 *   metrics sys.cpu.0.user 000001, sys.cpu.0.system 000002, sys.mem.free 000003
 *   tagk host 000001, dc 000002; tagv web01 000001, lga 000002
 *   U = sys.cpu.0.user{host=web01}          000001000001000001
 *   S = sys.cpu.0.system{host=web01}        000002000001000001
 *   M = sys.mem.free{host=web01}            000003000001000001
 *   D = sys.mem.free{dc=lga,host=web01}     000003000001000001000002000002
 * Branch ids (docs/format/tree.md): Java's String.hashCode, by hand:
 *   "sys" = 115*961 + 121*31 + 115 = 114381 = 0001BECD
 *   "cpu" = 99*961 + 112*31 + 117 = 98728 = 000181A8
 *   "0" = 48 = 00000030
 *   "web01" = (((119*31 + 101)*31 + 98)*31 + 48)*31 + 49 = 113003605 = 06BC4C55
 *   "lga" = 108*961 + 103*31 + 97 = 103788 + 3193 + 97 = 107078 = 0001A246
 *   "mem" = 109*961 + 101*31 + 109 = 104749 + 3131 + 109 = 107989 = 0001A5D5 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "api_client.h"

#define U "000001000001000001"
#define S "000002000001000001"
#define M "000003000001000001"
#define D "000003000001000001000002000002"

static tu_tsd_t T;

static const char *const tsd_args[] = {"--set", "tsd.core.meta.enable_tsuid_tracking=true",
                                       "--set", "tsd.core.meta.enable_realtime_ts=true",
                                       "--set", "tsd.core.tree.enable_processing=true",
                                       NULL};

static int setup(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    if (tu_tsd_start(&T, tsd_args)) return -1;
    char *r;
    int st = ac_req(&T, "POST", "/api/uid/assign",
                    "{\"metric\":[\"sys.cpu.0.user\",\"sys.cpu.0.system\",\"sys.mem.free\"],"
                    "\"tagk\":[\"host\",\"dc\"],\"tagv\":[\"web01\",\"lga\"]}",
                    &r);
    free(r);
    return st == 200 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_stop(&T);
    return 0;
}

/* Replaces "created":<n> by "created":0 after checking lo <= n <= hi. */
static void fix_created(char *body, long lo, long hi)
{
    char *p = strstr(body, "\"created\":");
    if (!p) fail_msg("no created in <%s>", body);
    p += 10;
    char *end;
    long v = strtol(p, &end, 10);
    if (v < lo || v > hi) fail_msg("created %ld not in [%ld, %ld]", v, lo, hi);
    memmove(p + 1, end, strlen(end) + 1);
    p[0] = '0';
}

#define EXPECT_CREATED(method, target, body, status, lo, hi, want)                                 \
    do {                                                                                           \
        char *r_ = ac_req_ok(&T, method, target, body, status);                                    \
        fix_created(r_, lo, hi);                                                                   \
        if (strcmp(r_, want)) fail_msg("%s %s: got <%s>, want <%s>", method, target, r_, want);    \
        free(r_);                                                                                  \
    } while (0)

static void put(const char *metric, const char *tags_json)
{
    char body[512];
    snprintf(body, sizeof body,
             "[{\"metric\":\"%s\",\"timestamp\":1356998400,\"value\":1,\"tags\":%s}]", metric,
             tags_json);
    char *r = ac_req_ok(&T, "POST", "/api/put?sync=true", body, 204);
    free(r);
}

#define TREE(id, name, desc, rules, strict, failures, enabled)                                     \
    "{\"name\":\"" name "\",\"description\":\"" desc "\",\"notes\":\"\",\"rules\":" rules          \
    ",\"created\":0,\"treeId\":" #id ",\"strictMatch\":" strict ",\"storeFailures\":" failures     \
    ",\"enabled\":" enabled "}"

#define RULE(type, field, regex, sep, desc, level, order, tree, custom, fmt)                       \
    "{\"type\":\"" type "\",\"field\":\"" field "\",\"regex\":\"" regex "\",\"separator\":\"" sep  \
    "\",\"description\":\"" desc "\",\"notes\":\"\",\"level\":" #level ",\"order\":" #order        \
    ",\"treeId\":" #tree ",\"customField\":\"" custom                                              \
    "\",\"regexGroupIdx\":0,\"displayFormat\":\"" fmt "\"}"

/* Tree definitions and their errors; tree 1 gets 2.4's metric-split rule. */
static void tree_definitions(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/tree", NULL, 200, "[]");
    AC_EXPECT(&T, "POST", "/api/tree?description=x", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Tree was missing the name\"}}");
    long t0 = (long)time(NULL);
    EXPECT_CREATED("POST", "/api/tree?name=Metrics&description=by%20metric", NULL, 200, t0,
                   (long)time(NULL),
                   TREE(1, "Metrics", "by metric", "null", "false", "false", "false"));
    /* a JSON body: values read as strings, keys in any case; created is set (2.4 writes 0) */
    EXPECT_CREATED("POST", "/api/tree",
                   "{\"NAME\":\"Hosts\",\"enabled\":true,\"strictMatch\":\"TRUE\"}", 200, t0,
                   (long)time(NULL), TREE(2, "Hosts", "", "null", "true", "false", "true"));
    AC_EXPECT(&T, "GET", "/api/tree?treeid=9", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 9\"}}");
    AC_EXPECT(&T, "GET", "/api/tree?treeid=65536", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Invalid Tree ID\"}}");
    AC_EXPECT(&T, "GET", "/api/tree?treeid=x1", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse 'tree' value\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/nosuch", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"This endpoint is not supported\"}}");
    /* POST merges; nothing changed is 304; PUT overwrites every editable field */
    AC_EXPECT(&T, "POST", "/api/tree?treeid=1", NULL, 304, "");
    AC_EXPECT(&T, "POST", "/api/tree?treeid=1&description=by%20metric", NULL, 304, "");
    EXPECT_CREATED("POST", "/api/tree?treeid=2&notes=n&enabled=false", NULL, 200, t0,
                   (long)time(NULL),
                   "{\"name\":\"Hosts\",\"description\":\"\",\"notes\":\"n\","
                   "\"rules\":null,\"created\":0,\"treeId\":2,\"strictMatch\":true,"
                   "\"storeFailures\":false,\"enabled\":false}");
    EXPECT_CREATED("PUT", "/api/tree?treeid=2&name=Hosts&enabled=true", NULL, 200, t0,
                   (long)time(NULL), TREE(2, "Hosts", "", "null", "false", "false", "true"));
    AC_EXPECT(&T, "PUT", "/api/tree?treeid=7&name=x", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 7\"}}");
    /* verbs through method_override */
    AC_EXPECT(&T, "GET", "/api/tree?treeid=7&method_override=delete", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 7\"}}");
}

static void tree_rule_endpoints(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/tree/rule?treeid=1&level=0&order=0", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate rule: [1:0:0:null]\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/rule?treeid=1&order=0", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>level</code>\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/rule?treeid=5&level=0&order=0", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 5\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&type=tagk", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing field name required for TAGK "
              "rule\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&type=tagv_custom&field=a", NULL,
              400,
              "{\"error\":{\"code\":400,\"message\":\"Missing custom field name required for "
              "TAGV_CUSTOM rule\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&type=bogus", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse the 'type' parameter\","
              "\"details\":\"bogus\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=-1&order=0&type=metric", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Negative levels are not allowed\"}}");
    /* create, merge, 304, overwrite, delete */
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&type=tagk&field=host", NULL, 200,
              RULE("TAGK", "host", "", "", "", 0, 0, 1, "", ""));
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&type=tagk&field=host", NULL, 304,
              "");
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=0&order=0&description=d", NULL, 200,
              RULE("TAGK", "host", "", "", "d", 0, 0, 1, "", ""));
    AC_EXPECT(&T, "PUT", "/api/tree/rule",
              "{\"treeId\":1,\"level\":0,\"order\":0,\"type\":\"Metric\",\"separator\":\"\\\\.\"}",
              200, RULE("METRIC", "", "", "\\\\.", "", 0, 0, 1, "", ""));
    AC_EXPECT(&T, "GET", "/api/tree/rule?treeid=1&level=0&order=0", NULL, 200,
              RULE("METRIC", "", "", "\\\\.", "", 0, 0, 1, "", ""));
    AC_EXPECT(&T, "POST", "/api/tree/rule?treeid=1&level=3&order=1&type=metric", NULL, 200,
              RULE("METRIC", "", "", "", "", 3, 1, 1, "", ""));
    AC_EXPECT(&T, "DELETE", "/api/tree/rule?treeid=1&level=3&order=1", NULL, 204, "");
    AC_EXPECT(&T, "DELETE", "/api/tree/rule?treeid=1&level=3&order=1", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate rule: [1:3:1:null]\"}}");
    /* /rules */
    AC_EXPECT(&T, "GET", "/api/tree/rules?treeid=1", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unsupported HTTP request method\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rules", "[]", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing tree rules\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/rules",
              "[{\"treeId\":2,\"level\":0,\"order\":0,\"type\":\"metric\"},"
              "{\"treeId\":1,\"level\":1,\"order\":0,\"type\":\"metric\"}]",
              400,
              "{\"error\":{\"code\":400,\"message\":\"All rules must belong to the same tree\"}}");
    /* a bad rule anywhere writes nothing */
    AC_EXPECT(
        &T, "POST", "/api/tree/rules",
        "[{\"treeId\":2,\"level\":0,\"order\":0,\"type\":\"tagk\",\"field\":\"host\"},"
        "{\"treeId\":2,\"level\":1,\"order\":0,\"type\":\"tagk\"}]",
        400,
        "{\"error\":{\"code\":400,\"message\":\"Missing field name required for TAGK rule\"}}");
    EXPECT_CREATED("GET", "/api/tree?treeid=2", NULL, 200, 0, (long)time(NULL),
                   TREE(2, "Hosts", "", "null", "false", "false", "true"));
    /* 2.4's documented example: L0 TAGK host, L1 METRIC split on \. */
    const char *rules2 =
        "[{\"treeId\":2,\"level\":0,\"order\":0,\"type\":\"TAGK\",\"field\":\"host\"},"
        "{\"treeId\":2,\"level\":1,\"order\":0,\"type\":\"METRIC\","
        "\"separator\":\"\\\\.\"}]";
    AC_EXPECT(&T, "POST", "/api/tree/rules", rules2, 204, "");
    AC_EXPECT(&T, "POST", "/api/tree/rules", rules2, 204, ""); /* unchanged: 2.4 answers 500 */
    EXPECT_CREATED("GET", "/api/tree?treeid=2", NULL, 200, 0, (long)time(NULL),
                   TREE(2, "Hosts", "",
                        "{\"0\":{\"0\":" RULE("TAGK", "host", "", "", "", 0, 0, 2, "",
                                              "") "},\"1\":{\"0\":" RULE("METRIC", "", "", "\\\\.",
                                                                         "", 1, 0, 2, "", "") "}}",
                        "false", "false", "true"));
    /* enable tree 1 (rule L0: METRIC split on \.) */
    char *r = ac_req_ok(&T, "POST", "/api/tree?treeid=1&enabled=true", NULL, 200);
    free(r);
}

#define LEAF(metric, tags, tsuid, name)                                                            \
    "{\"metric\":\"" metric "\",\"tags\":" tags ",\"tsuid\":\"" tsuid "\",\"displayName\":\"" name \
    "\"}"

/* New series go through the enabled trees as their TSMeta is created. */
static void tree_processing_and_branches(void **state)
{
    (void)state;
    put("sys.cpu.0.user", "{\"host\":\"web01\"}");
    put("sys.cpu.0.system", "{\"host\":\"web01\"}");
    /* tree 1: ROOT/sys/cpu/0 with the leaves system and user (sorted) */
    AC_EXPECT(&T, "GET", "/api/tree/branch?treeid=1", NULL, 200,
              "{\"leaves\":null,\"branchId\":\"0001\",\"path\":{\"0\":\"ROOT\"},\"depth\":0,"
              "\"displayName\":\"ROOT\",\"treeId\":1,\"branches\":[{\"leaves\":null,"
              "\"branchId\":\"00010001BECD\",\"path\":{\"0\":\"ROOT\",\"1\":\"sys\"},\"depth\":1,"
              "\"displayName\":\"sys\",\"treeId\":1,\"branches\":null}]}");
    AC_EXPECT(
        &T, "GET", "/api/tree/branch?branch=00010001BECD", NULL, 200,
        "{\"leaves\":null,\"branchId\":\"00010001BECD\",\"path\":{\"0\":\"ROOT\",\"1\":"
        "\"sys\"},\"depth\":1,\"displayName\":\"sys\",\"treeId\":1,\"branches\":[{\"leaves\":"
        "null,\"branchId\":\"00010001BECD000181A8\",\"path\":{\"0\":\"ROOT\",\"1\":\"sys\","
        "\"2\":\"cpu\"},\"depth\":2,\"displayName\":\"cpu\",\"treeId\":1,\"branches\":null}]}");
    AC_EXPECT(
        &T, "GET", "/api/tree/branch?branch=00010001BECD000181A800000030", NULL, 200,
        "{\"leaves\":[" LEAF("sys.cpu.0.system", "{\"host\":\"web01\"}", S, "system") "," LEAF(
            "sys.cpu.0.user", "{\"host\":\"web01\"}", U,
            "user") "],"
                    "\"branchId\":\"00010001BECD000181A800000030\",\"path\":{\"0\":\"ROOT\",\"1\":"
                    "\"sys\","
                    "\"2\":\"cpu\",\"3\":\"0\"},\"depth\":3,\"displayName\":\"0\",\"treeId\":1,"
                    "\"branches\":null}");
    /* tree 2 (2.4's example): ROOT/web01/sys/cpu/0 leaf user */
    AC_EXPECT(&T, "GET", "/api/tree/branch?branch=000106BC4C55", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate branch '000106BC4C55' for "
              "tree '1'\"}}");
    char *r = ac_req_ok(&T, "GET", "/api/tree/branch?branch=000206BC4C550001BECD000181A800000030",
                        NULL, 200);
    if (!strstr(r, "\"leaves\":[" LEAF("sys.cpu.0.system", "{\"host\":\"web01\"}", S,
                                       "system") "," LEAF("sys.cpu.0.user", "{\"host\":\"web01\"}",
                                                          U, "user") "]") ||
        !strstr(
            r, "\"path\":{\"0\":\"ROOT\",\"1\":\"web01\",\"2\":\"sys\",\"3\":\"cpu\",\"4\":\"0\"}"))
        fail_msg("tree 2 deepest branch: <%s>", r);
    free(r);
    /* branch errors */
    AC_EXPECT(&T, "GET", "/api/tree/branch", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing or invalid branch and tree IDs\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/branch?branch=001", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Branch ID was too short\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/branch?treeid=1", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unsupported HTTP request method\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/branch?treeid=9", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate branch '0009' for tree "
              "'9'\"}}");
}

/* storeFailures: two series with the same leaf name on one branch; strict
 * match: a series without the level's tag is not stored but recorded. */
static void tree_collisions_and_not_matched(void **state)
{
    (void)state;
    char *r =
        ac_req_ok(&T, "POST", "/api/tree?name=Collide&enabled=true&store_failures=true", NULL, 200);
    free(r);
    /* tree 3: L0 METRIC regex ^(\w+)\. -> "sys"; L1 TAGK host -> leaf "web01" */
    AC_EXPECT(
        &T, "POST", "/api/tree/rules",
        "[{\"treeId\":3,\"level\":0,\"order\":0,\"type\":\"METRIC\",\"regex\":\"^(\\\\w+)\\\\.\"},"
        "{\"treeId\":3,\"level\":1,\"order\":0,\"type\":\"TAGK\",\"field\":\"host\"}]",
        204, "");
    r = ac_req_ok(&T, "POST",
                  "/api/tree?name=Strict&enabled=true&store_failures=true&strict_match=true", NULL,
                  200);
    free(r);
    /* tree 4: L0 TAGK dc, L1 METRIC */
    AC_EXPECT(&T, "POST", "/api/tree/rules",
              "[{\"treeId\":4,\"level\":0,\"order\":0,\"type\":\"TAGK\",\"field\":\"dc\"},"
              "{\"treeId\":4,\"level\":1,\"order\":0,\"type\":\"METRIC\"}]",
              204, "");
    put("sys.mem.free", "{\"host\":\"web01\"}");
    put("sys.mem.free", "{\"host\":\"web01\",\"dc\":\"lga\"}");
    /* tree 3 saw only M and D (the cpu series predate it): M took the leaf
     * web01 under ROOT/sys, D collides with it */
    AC_EXPECT(&T, "GET", "/api/tree/collisions?treeid=3", NULL, 200, "{\"" D "\":\"" M "\"}");
    AC_EXPECT(&T, "GET", "/api/tree/collisions?treeid=3&tsuids=" M, NULL, 200, "{}");
    AC_EXPECT(&T, "POST", "/api/tree/collisions", "{\"treeId\":3,\"tsuids\":[\"" D "\"]}", 200,
              "{\"" D "\":\"" M "\"}");
    AC_EXPECT(&T, "GET", "/api/tree/notmatched?treeid=3", NULL, 200, "{}");
    AC_EXPECT(
        &T, "GET", "/api/tree/branch?branch=00030001BECD", NULL, 200,
        "{\"leaves\":[" LEAF("sys.mem.free", "{\"host\":\"web01\"}", M,
                             "web01") "],"
                                      "\"branchId\":\"00030001BECD\",\"path\":{\"0\":\"ROOT\","
                                      "\"1\":\"sys\"},\"depth\":1,"
                                      "\"displayName\":\"sys\",\"treeId\":3,\"branches\":null}");
    /* tree 4: M has no dc: not matched (2.4 never records these); D is ROOT/lga leaf sys.mem.free
     */
    AC_EXPECT(&T, "GET", "/api/tree/notmatched?treeid=4", NULL, 200,
              "{\"" M "\":\"[4:0:0:TAGK]\"}");
    AC_EXPECT(&T, "GET", "/api/tree/branch?branch=00040001A246", NULL, 200,
              "{\"leaves\":[" LEAF(
                  "sys.mem.free", "{\"dc\":\"lga\",\"host\":\"web01\"}", D,
                  "sys.mem.free") "],"
                                  "\"branchId\":\"00040001A246\",\"path\":{\"0\":\"ROOT\",\"1\":"
                                  "\"lga\"},\"depth\":1,"
                                  "\"displayName\":\"lga\",\"treeId\":4,\"branches\":null}");
    AC_EXPECT(&T, "GET", "/api/tree/collisions?treeid=3&tsuids=" D "&method_override=delete", NULL,
              400, "{\"error\":{\"code\":400,\"message\":\"Unsupported HTTP request method\"}}");
    AC_EXPECT(
        &T, "POST", "/api/tree/collisions", "{\"treeId\":3,\"tsuids\":\"" D "\"}", 400,
        "{\"error\":{\"code\":400,\"message\":\"Unable to convert the given data to a list\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/notmatched", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>treeid</code>\"}}");
}

/* /api/tree/test with custom-field rules: nothing is stored. */
static void tree_test_endpoint(void **state)
{
    (void)state;
    char *r =
        ac_req_ok(&T, "POST", "/api/uid/uidmeta",
                  "{\"uid\":\"000003\",\"type\":\"metric\",\"custom\":{\"owner\":\"ops\"}}", 200);
    free(r);
    r = ac_req_ok(&T, "POST", "/api/uid/uidmeta",
                  "{\"uid\":\"000001\",\"type\":\"tagv\",\"custom\":{\"rack\":\"r12\"}}", 200);
    free(r);
    r = ac_req_ok(&T, "POST", "/api/uid/uidmeta",
                  "{\"uid\":\"000001\",\"type\":\"tagk\",\"custom\":{\"kind\":\"server\"}}", 200);
    free(r);
    r = ac_req_ok(&T, "POST", "/api/tree?name=Custom", NULL, 200);
    free(r);
    /* tree 5: METRIC_CUSTOM owner / TAGV_CUSTOM web01.rack / TAGK_CUSTOM host.kind
     * with "{tag_name}={value}" / METRIC split on [.] with "<{value}>" */
    AC_EXPECT(&T, "POST", "/api/tree/rules",
              "[{\"treeId\":5,\"level\":0,\"order\":0,\"type\":\"METRIC_CUSTOM\",\"field\":\"x\","
              "\"customField\":\"owner\"},"
              "{\"treeId\":5,\"level\":1,\"order\":0,\"type\":\"TAGV_CUSTOM\",\"field\":\"web01\","
              "\"customField\":\"rack\"},"
              "{\"treeId\":5,\"level\":2,\"order\":0,\"type\":\"TAGK_CUSTOM\",\"field\":\"host\","
              "\"customField\":\"kind\",\"displayFormat\":\"{tag_name}={value}\"},"
              "{\"treeId\":5,\"level\":3,\"order\":0,\"type\":\"METRIC\",\"separator\":\"[.]\","
              "\"displayFormat\":\"<{value}>\"}]",
              204, "");
    r = ac_req_ok(&T, "GET", "/api/tree/test?treeid=5&tsuids=" M ",000009000001000001", NULL, 200);
    const char *want[] = {
        /* ROOT/ops/r12/kind=server/<sys>/<mem> leaf <free> */
        "\"displayName\":\"ops\"",
        "\"displayName\":\"r12\"",
        "\"displayName\":\"kind=server\"",
        "\"displayName\":\"<sys>\"",
        "\"leaves\":[" LEAF("sys.mem.free", "{\"host\":\"web01\"}", M, "<free>") "]",
        "\"000009000001000001\":{\"branch\":null,\"meta\":null,\"messages\":[\"Unable to locate "
        "TSUID meta data\"]}",
        "\"meta\":{\"tsuid\":\"" M "\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(r, want[i])) fail_msg("test: no <%s> in <%s>", want[i], r);
    free(r);
    /* the tree is disabled and test stores nothing */
    AC_EXPECT(&T, "GET", "/api/tree/branch?treeid=5", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate branch '0005' for tree "
              "'5'\"}}");
    AC_EXPECT(&T, "GET", "/api/tree/test?treeid=5", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing or empty TSUID list\"}}");
    AC_EXPECT(&T, "POST", "/api/tree/test", "{\"treeId\":\"5\",\"tsuids\":[\"" M "\"]}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing or invalid Tree ID\"}}");
}

static int run_uid(const char *const *args, char **out)
{
    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", T.dir);
    const char *argv[12] = {"uid", flag};
    size_t n = 2;
    for (; *args && n < 11; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    return tu_run_octsdb(out, argv);
}

/* treepurge and treesync through the running TSD, then DELETE. */
static void tree_purge_and_sync(void **state)
{
    (void)state;
    char *out;
    const char *purge[] = {"treepurge", "1", NULL};
    assert_int_equal(run_uid(purge, &out), 0);
    assert_string_equal(out, "treepurge: tree 1: branches, leaves, collisions and not-matched "
                             "deleted\n");
    free(out);
    AC_EXPECT(&T, "GET", "/api/tree/branch?treeid=1", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate branch '0001' for tree "
              "'1'\"}}");
    /* without tree processing configured: nothing done, exit 0 (2.4) */
    const char *nosync[] = {"treesync", NULL};
    assert_int_equal(run_uid(nosync, &out), 0);
    assert_string_equal(out, "");
    free(out);
    /* four series have TSMeta, read in TSUID order U, S, M, D; enabled trees 1..4:
     *   tree 1 (metric split): U, S, M stored; D -> ROOT/sys/mem leaf free, held by M:
     *     a collision (not recorded: no storeFailures)
     *   tree 2 (host, metric split): U, S, M stored; D collides with M likewise
     *   tree 3 (regex sys, host): ROOT/sys leaf web01 is M's: U, S, D collide, M stored
     *   tree 4 (strict dc, metric): U, S, M not matched; D stored
     * stored 3 + 3 + 1 + 1 = 8, collisions 1 + 1 + 3 = 5, not matched 3 */
    const char *sync[] = {"treesync", "--set", "tsd.core.tree.enable_processing=true", NULL};
    assert_int_equal(run_uid(sync, &out), 0);
    assert_string_equal(out, "treesync: 4 series; 8 stored, 5 collisions, 3 not matched, "
                             "0 without a branch\n");
    free(out);
    AC_EXPECT(
        &T, "GET", "/api/tree/branch?branch=00010001BECD0001A5D5", NULL, 200,
        "{\"leaves\":[" LEAF(
            "sys.mem.free", "{\"host\":\"web01\"}", M,
            "free") "],"
                    "\"branchId\":\"00010001BECD0001A5D5\",\"path\":{\"0\":\"ROOT\",\"1\":\"sys\","
                    "\"2\":\"mem\"},\"depth\":2,\"displayName\":\"mem\",\"treeId\":1,\"branches\":"
                    "null}");
    AC_EXPECT(&T, "GET", "/api/tree/collisions?treeid=3", NULL, 200,
              "{\"" U "\":\"" M "\",\"" S "\":\"" M "\",\"" D "\":\"" M "\"}");
    const char *bad[] = {"treepurge", "0", NULL};
    assert_int_equal(run_uid(bad, &out), 2);
    free(out);
    /* DELETE: generated data only, then the definition too */
    AC_EXPECT(&T, "DELETE", "/api/tree?treeid=3", NULL, 204, "");
    AC_EXPECT(&T, "GET", "/api/tree/collisions?treeid=3", NULL, 200, "{}");
    char *r = ac_req_ok(&T, "GET", "/api/tree?treeid=3", NULL, 200);
    free(r);
    AC_EXPECT(&T, "DELETE", "/api/tree", "{\"treeId\":3,\"definition\":\"true\"}", 204, "");
    AC_EXPECT(&T, "GET", "/api/tree?treeid=3", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 3\"}}");
    AC_EXPECT(&T, "DELETE", "/api/tree?treeid=3", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 3\"}}");
}

/* The same commands on the stopped data dir: the TSD is started again after. */
static void tree_cli_offline(void **state)
{
    (void)state;
    assert_int_equal(tu_tsd_stop(&T), 0);
    char *out;
    const char *purge[] = {"treepurge", "2", "TRUE", NULL};
    assert_int_equal(run_uid(purge, &out), 0);
    assert_string_equal(out, "treepurge: tree 2: branches, leaves, collisions and not-matched "
                             "deleted, and the definition and rules\n");
    free(out);
    const char *gone[] = {"treepurge", "2", NULL};
    assert_int_equal(run_uid(gone, &out), 3);
    free(out);
    /* trees 1 (everything there already: U, S, M stored, D a collision) and 4
     * (U, S, M not matched, D stored) remain enabled */
    const char *sync[] = {"treesync", "--set", "tsd.core.tree.enable_processing=true", NULL};
    assert_int_equal(run_uid(sync, &out), 0);
    assert_string_equal(out, "treesync: 4 series; 4 stored, 1 collisions, 3 not matched, "
                             "0 without a branch\n");
    free(out);
    assert_int_equal(tu_tsd_start(&T, tsd_args), 0);
    AC_EXPECT(&T, "GET", "/api/tree?treeid=2", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate tree: 2\"}}");
    char *r = ac_req_ok(&T, "GET", "/api/tree/branch?branch=00010001BECD", NULL, 200);
    if (!strstr(r, "\"displayName\":\"cpu\"") || !strstr(r, "\"displayName\":\"mem\""))
        fail_msg("tree 1 branch sys: <%s>", r);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tree_definitions),
        cmocka_unit_test(tree_rule_endpoints),
        cmocka_unit_test(tree_processing_and_branches),
        cmocka_unit_test(tree_collisions_and_not_matched),
        cmocka_unit_test(tree_test_endpoint),
        cmocka_unit_test(tree_purge_and_sync),
        cmocka_unit_test(tree_cli_offline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
