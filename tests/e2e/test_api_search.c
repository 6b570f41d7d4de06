/* test_api_search.c -- /api/search/{tsuids,tsmeta_summary,tsmeta,uidmeta}
 * answered without a plugin, against the real daemon. UIDs are assigned
 * explicitly first (widths 3, counters from 1), so the test computes every
 * TSUID itself from the series it writes (pairs sorted by tagk UID), filters
 * them with its own predicate for each query, sorts them and pages them:
 * the expected answers never come from the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

static tu_tsd_t T;

/* UIDs in assignment order (index + 1). */
static const char *const METRICS[] = {"sys.cpu.user", "sys.cpu.sys", "net.bytes", "empty.m"};
static const char *const TAGKS[] = {"host", "dc", "iface"};
static const char *const TAGVS[] = {"web01", "web02", "db01", "east", "west", "eth0"};

typedef struct {
    const char *metric;
    const char *k[3], *v[3];
    int n;
} series_t;

static const series_t SERIES[] = {
    {"sys.cpu.user", {"host", "dc"}, {"web01", "east"}, 2},
    {"sys.cpu.user", {"host", "dc"}, {"web02", "west"}, 2},
    {"sys.cpu.user", {"host", "dc"}, {"db01", "east"}, 2},
    {"sys.cpu.sys", {"host", "dc"}, {"web01", "east"}, 2},
    {"sys.cpu.sys", {"host"}, {"db01"}, 1},
    {"net.bytes", {"host", "iface"}, {"web02", "eth0"}, 2},
    {"net.bytes", {"dc", "host", "iface"}, {"west", "web01", "eth0"}, 3},
};
#define N_SERIES (sizeof SERIES / sizeof *SERIES)

static int idx(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return (int)i + 1;
    fail_msg("unknown name %s", name);
    return -1;
}

/* The TSUID in hex: metric UID, then pairs in tagk UID order. */
static void tsuid_hex(const series_t *s, char *out)
{
    int kid[3], vid[3];
    for (int i = 0; i < s->n; i++) {
        kid[i] = idx(TAGKS, 3, s->k[i]);
        vid[i] = idx(TAGVS, 6, s->v[i]);
    }
    out += sprintf(out, "%06X", idx(METRICS, 4, s->metric));
    for (int done = 0; done < s->n; done++) {
        int best = -1;
        for (int i = 0; i < s->n; i++)
            if (kid[i] > 0 && (best < 0 || kid[i] < kid[best])) best = i;
        out += sprintf(out, "%06X%06X", kid[best], vid[best]);
        kid[best] = 0;
    }
}

static const char *tag(const series_t *s, const char *k)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->k[i], k)) return s->v[i];
    return NULL;
}

static int prefix(const char *s, const char *p)
{
    return s && !strncmp(s, p, strlen(p));
}

/* The queries and the test's own reading of them. */
typedef int (*pred_fn)(const series_t *s);
static int p_all(const series_t *s)
{
    (void)s;
    return 1;
}
static int p_sys_cpu(const series_t *s)
{
    return prefix(s->metric, "sys.cpu.");
}
static int p_user(const series_t *s)
{
    return !strcmp(s->metric, "sys.cpu.user");
}
static int p_web_east(const series_t *s)
{
    return prefix(tag(s, "host"), "web") && tag(s, "dc") && !strcmp(tag(s, "dc"), "east");
}
static int p_tagk_iface(const series_t *s)
{
    return tag(s, "iface") != NULL;
}
static int p_tagv_west_sys(const series_t *s)
{
    return prefix(s->metric, "sys") && tag(s, "dc") && !strcmp(tag(s, "dc"), "west");
}
static int p_suffix_01(const series_t *s)
{
    const char *h = tag(s, "host");
    return h && strlen(h) >= 2 && !strcmp(h + strlen(h) - 2, "01") && strstr(s->metric, "u");
}
static int p_none(const series_t *s)
{
    (void)s;
    return 0;
}

static const struct {
    const char *q_url, *q_json; /* the query for a URL and inside a JSON string */
    pred_fn p;
} QUERIES[] = {
    {"", "", p_all},
    {"*", "*", p_all},
    {"sys.cpu.*", "sys.cpu.*", p_sys_cpu},
    {"name:sys.cpu.user", "name:sys.cpu.user", p_user},
    {"metric:sys.cpu.user", "metric:sys.cpu.user", p_user},
    {"host:web*%20AND%20dc:east", "host:web* AND dc:east", p_web_east},
    {"tagk:iface", "tagk:iface", p_tagk_iface},
    {"sys*+tagv:west", "sys* tagv:west", p_tagv_west_sys},
    {"host:*01+*u*", "host:*01 *u*", p_suffix_01},
    {"host:nosuch", "host:nosuch", p_none},
    {"nosuch.metric", "nosuch.metric", p_none},
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expected matches of p, sorted (equal hex order = byte order). */
static size_t expected(pred_fn p, char (*hex)[64], const series_t **ser)
{
    char *ptr[N_SERIES];
    char all[N_SERIES][64];
    size_t n = 0;
    for (size_t i = 0; i < N_SERIES; i++)
        if (p(&SERIES[i])) {
            tsuid_hex(&SERIES[i], all[i]);
            ptr[n++] = all[i];
        }
    qsort(ptr, n, sizeof *ptr, cmp_str);
    for (size_t i = 0; i < n; i++) {
        strcpy(hex[i], ptr[i]);
        ser[i] = &SERIES[(size_t)(ptr[i] - all[0]) / 64];
    }
    return n;
}

/* "tsuid","metric","tags" of one summary, tags sorted by key. */
static void summary_json(const series_t *s, const char *hex, char *out)
{
    int ord[3] = {0, 1, 2};
    for (int i = 1; i < s->n; i++)
        for (int j = i; j > 0 && strcmp(s->k[ord[j - 1]], s->k[ord[j]]) > 0; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    out += sprintf(out, "{\"tsuid\":\"%s\",\"metric\":\"%s\",\"tags\":{", hex, s->metric);
    for (int i = 0; i < s->n; i++)
        out += sprintf(out, "%s\"%s\":\"%s\"", i ? "," : "", s->k[ord[i]], s->v[ord[i]]);
    strcpy(out, "}}");
}

static char *search(const char *method, const char *target, const char *body)
{
    char *r;
    int st = ac_req(&T, method, target, body, &r);
    if (st != 200) fail_msg("%s %s %s: %d %s", method, target, body ? body : "", st, r);
    return r;
}

/* Asserts head + results + totalResults, and a "time" after them. */
static void expect_page(const char *r, const char *type, const char *q_json, long limit, long start,
                        const char *items, size_t total, const char *what)
{
    char want[8192];
    snprintf(want, sizeof want,
             "{\"type\":\"%s\",\"query\":\"%s\",\"limit\":%ld,\"startIndex\":%ld,"
             "\"results\":[%s],\"totalResults\":%zu,\"time\":",
             type, q_json, limit, start, items, total);
    if (strncmp(r, want, strlen(want))) fail_msg("%s:\n got <%s>\nwant <%s...>", what, r, want);
}

static int setup(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    if (tu_tsd_start(&T, NULL)) return -1;
    char body[4096], *p = body, *r;
    p += sprintf(p, "{\"metric\":[");
    for (size_t i = 0; i < 4; i++)
        p += sprintf(p, "%s\"%s\"", i ? "," : "", METRICS[i]);
    p += sprintf(p, "],\"tagk\":[");
    for (size_t i = 0; i < 3; i++)
        p += sprintf(p, "%s\"%s\"", i ? "," : "", TAGKS[i]);
    p += sprintf(p, "],\"tagv\":[");
    for (size_t i = 0; i < 6; i++)
        p += sprintf(p, "%s\"%s\"", i ? "," : "", TAGVS[i]);
    sprintf(p, "]}");
    if (ac_req(&T, "POST", "/api/uid/assign", body, &r) != 200) return -1;
    free(r);
    p = body;
    p += sprintf(p, "[");
    for (size_t i = 0; i < N_SERIES; i++) {
        p += sprintf(p, "%s{\"metric\":\"%s\",\"timestamp\":1356998400,\"value\":%zu,\"tags\":{",
                     i ? "," : "", SERIES[i].metric, i);
        for (int j = 0; j < SERIES[i].n; j++)
            p += sprintf(p, "%s\"%s\":\"%s\"", j ? "," : "", SERIES[i].k[j], SERIES[i].v[j]);
        p += sprintf(p, "}}");
    }
    sprintf(p, "]");
    if (ac_req(&T, "POST", "/api/put", body, &r) != 204) return -1;
    free(r);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&T);
    return 0;
}

/* Every query, as GET and POST, with pages that cut the answer at each
 * place: first, middle, last, past the end. */
static void tsuids_and_summaries(void **state)
{
    (void)state;
    static const long LIMITS[] = {0, 1, 2, 3, 100};
    for (size_t qi = 0; qi < sizeof QUERIES / sizeof *QUERIES; qi++) {
        char hex[N_SERIES][64];
        const series_t *ser[N_SERIES];
        size_t n = expected(QUERIES[qi].p, hex, ser);
        for (size_t li = 0; li < sizeof LIMITS / sizeof *LIMITS; li++) {
            long limit = LIMITS[li], eff = limit ? limit : 25;
            for (long start = 0; start <= (long)n + 1; start++) {
                char ids[4096] = "", sums[8192] = "", target[512], body[512], what[600];
                for (long i = start; i < (long)n && i < start + eff; i++) {
                    char one[512];
                    sprintf(ids + strlen(ids), "%s\"%s\"", i > start ? "," : "", hex[i]);
                    summary_json(ser[i], hex[i], one);
                    sprintf(sums + strlen(sums), "%s%s", i > start ? "," : "", one);
                }
                snprintf(target, sizeof target,
                         "/api/search/tsuids?query=%s&limit=%ld&startIndex=%ld", QUERIES[qi].q_url,
                         limit, start);
                char *r = search("GET", target, NULL);
                snprintf(what, sizeof what, "GET %s", target);
                expect_page(r, "TSUIDS", QUERIES[qi].q_json, eff, start, ids, n, what);
                free(r);
                snprintf(body, sizeof body, "{\"query\":\"%s\",\"limit\":%ld,\"startIndex\":%ld}",
                         QUERIES[qi].q_json, limit, start);
                r = search("POST", "/api/search/tsmeta_summary", body);
                snprintf(what, sizeof what, "POST tsmeta_summary %s", body);
                expect_page(r, "TSMETA_SUMMARY", QUERIES[qi].q_json, eff, start, sums, n, what);
                free(r);
            }
        }
    }
    /* no parameters at all: every series, default limit */
    char hex[N_SERIES][64], ids[4096] = "";
    const series_t *ser[N_SERIES];
    size_t n = expected(p_all, hex, ser);
    for (size_t i = 0; i < n; i++)
        sprintf(ids + strlen(ids), "%s\"%s\"", i ? "," : "", hex[i]);
    char *r = search("GET", "/api/search/tsuids", NULL);
    expect_page(r, "TSUIDS", "", 25, 0, ids, n, "GET /api/search/tsuids");
    free(r);
    /* the snake-case spelling of startIndex */
    r = search("GET", "/api/search/tsuids?limit=1&start_index=6", NULL);
    char one[80];
    sprintf(one, "\"%s\"", hex[6]);
    expect_page(r, "TSUIDS", "", 1, 6, one, n, "start_index");
    free(r);
}

/* TSMeta results: stored fields where meta exists, defaults elsewhere. */
static void tsmeta_objects(void **state)
{
    (void)state;
    char hex[N_SERIES][64];
    const series_t *ser[N_SERIES];
    size_t n = expected(p_user, hex, ser);
    assert_int_equal(n, 3);
    char body[256], *r;
    snprintf(body, sizeof body, "{\"tsuid\":\"%s\",\"description\":\"the second\"}", hex[1]);
    assert_int_equal(ac_req(&T, "POST", "/api/uid/tsmeta?create=true", body, &r), 200);
    free(r);
    r = search("GET", "/api/search/tsmeta?query=sys.cpu.user&limit=2&startIndex=1", NULL);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&a, r, strlen(r), 0, &v, &eb)) fail_msg("bad JSON %s: %s", eb.msg, r);
    const json_value_t *res = json_obj_get(v, "results"), *tot = json_obj_get(v, "totalResults");
    int64_t total;
    assert_int_equal(json_number_i64(tot, &total), 0);
    assert_int_equal(total, 3);
    assert_int_equal(res->n, 2);
    const json_value_t *o = res->child;
    for (size_t i = 1; i < 3; i++, o = o->next) {
        const json_value_t *ts = json_obj_get(o, "tsuid"), *d = json_obj_get(o, "description"),
                           *m = json_obj_get(o, "metric");
        assert_int_equal(ts->len, strlen(hex[i]));
        assert_memory_equal(ts->str, hex[i], ts->len);
        const json_value_t *mn = json_obj_get(m, "name");
        assert_int_equal(mn->len, strlen("sys.cpu.user"));
        const char *want = i == 1 ? "the second" : "";
        assert_int_equal(d->len, strlen(want));
        assert_memory_equal(d->str, want, d->len);
        /* two tags: four UIDMeta objects */
        const json_value_t *tags = json_obj_get(o, "tags");
        assert_int_equal(tags->n, 2 * (size_t)ser[i]->n);
    }
    json_arena_free(&a);
    free(r);
}

/* One UIDMeta per expected (type, UID, name), in order. */
static void expect_uids(const char *query, const char *const *want, size_t n_want, long limit,
                        long start, size_t total)
{
    char target[256], *r;
    snprintf(target, sizeof target, "/api/search/uidmeta?query=%s&limit=%ld&startIndex=%ld", query,
             limit, start);
    r = search("GET", target, NULL);
    const char *p = r;
    for (size_t i = 0; i < n_want; i++) {
        const char *hit = strstr(p, want[i]);
        if (!hit) fail_msg("%s: %s missing (or out of order) in %s", target, want[i], r);
        p = hit + strlen(want[i]);
    }
    if (strstr(p, "{\"uid\"")) fail_msg("%s: more results than %zu in %s", target, n_want, r);
    char tot[64];
    snprintf(tot, sizeof tot, "\"totalResults\":%zu,", total);
    if (!strstr(r, tot)) fail_msg("%s: want %s in %s", target, tot, r);
    free(r);
}

#define U(hex, type, name) "{\"uid\":\"" hex "\",\"type\":\"" type "\",\"name\":\"" name "\","

static void uidmeta(void **state)
{
    (void)state;
    const char *web[] = {U("000001", "TAGV", "web01"), U("000002", "TAGV", "web02")};
    expect_uids("name:web*", web, 2, 25, 0, 2);
    expect_uids("web*", web, 2, 25, 0, 2);
    expect_uids("web*", web + 1, 1, 1, 1, 2);
    expect_uids("web*", NULL, 0, 1, 2, 2);
    /* kind order, then name order */
    const char *tagk[] = {U("000002", "TAGK", "dc"), U("000001", "TAGK", "host"),
                          U("000003", "TAGK", "iface")};
    expect_uids("type:tagk", tagk, 3, 25, 0, 3);
    const char *sys[] = {U("000002", "METRIC", "sys.cpu.sys"),
                         U("000001", "METRIC", "sys.cpu.user")};
    expect_uids("type:metric%20AND%20sys*", sys, 2, 25, 0, 2);
    /* '*e*' over every kind: empty.m, net.bytes, sys.cpu.user (metric); iface (tagk);
     * east, eth0, web01, web02, west (tagv) */
    const char *e_ok[] = {U("000004", "METRIC", "empty.m"),
                          U("000003", "METRIC", "net.bytes"),
                          U("000001", "METRIC", "sys.cpu.user"),
                          U("000003", "TAGK", "iface"),
                          U("000004", "TAGV", "east"),
                          U("000006", "TAGV", "eth0"),
                          U("000001", "TAGV", "web01"),
                          U("000002", "TAGV", "web02"),
                          U("000005", "TAGV", "west")};
    expect_uids("*e*", e_ok, 9, 25, 0, 9);
    expect_uids("*e*", e_ok + 3, 2, 2, 3, 9);
    expect_uids("*e*", e_ok + 8, 1, 2, 8, 9);
    expect_uids("type:tagk+type:tagv", NULL, 0, 25, 0, 0);
    /* POST, and the stored UIDMeta fields come back */
    char *r;
    assert_int_equal(ac_req(&T, "POST", "/api/uid/uidmeta",
                            "{\"uid\":\"000003\",\"type\":\"tagk\",\"description\":\"NIC\"}", &r),
                     200);
    free(r);
    r = search("POST", "/api/search/uidmeta", "{\"query\":\"name:iface\"}");
    if (!strstr(r, U("000003", "TAGK", "iface") "\"displayName\":\"\",\"description\":\"NIC\""))
        fail_msg("got %s", r);
    free(r);
}

#define E400(msg) "{\"error\":{\"code\":400,\"message\":\"" msg "\"}}"

static void bad_queries(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/search/tsuids?query=host:web01%20OR%20host:db01", NULL, 400,
              E400("Unsupported search operator 'OR': terms are ANDed"));
    AC_EXPECT(&T, "GET", "/api/search/tsmeta?query=NOT%20host:web01", NULL, 400,
              E400("Unsupported search operator 'NOT': terms are ANDed"));
    AC_EXPECT(&T, "GET", "/api/search/tsmeta_summary?query=(sys.cpu.user)", NULL, 400,
              E400("Unsupported search term '(sys.cpu.user)': use name, field:name or a '*' glob"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?query=sys.cpu.us%3Fr", NULL, 400,
              E400("Unsupported search term 'sys.cpu.us?r': use name, field:name or a '*' glob"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?query=-host:web01", NULL, 400,
              E400("Unsupported search term '-host:web01': use name, field:name or a '*' glob"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?query=h*st:web01", NULL, 400,
              E400("Unsupported search field 'h*st': no '*' in a tag key"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?query=host:", NULL, 400,
              E400("Unsupported search term 'host:'"));
    AC_EXPECT(&T, "POST", "/api/search/tsuids", "{\"query\":\"\\\"web01\\\"\"}", 400,
              E400("Unsupported search term '\\\"web01\\\"': use name, field:name or a '*' glob"));
    AC_EXPECT(&T, "GET", "/api/search/uidmeta?query=displayName:x", NULL, 400,
              E400("Unsupported uidmeta search field 'displayName' (name or type)"));
    AC_EXPECT(&T, "GET", "/api/search/uidmeta?query=type:bogus", NULL, 400,
              E400("Unknown UID type 'bogus' (metric, tagk or tagv)"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?limit=ten", NULL, 400,
              E400("Unable to parse 'limit' as a non-negative number"));
    AC_EXPECT(&T, "GET", "/api/search/tsuids?startIndex=-1", NULL, 400,
              E400("Unable to parse 'startIndex' as a non-negative number"));
    AC_EXPECT(&T, "POST", "/api/search/tsuids", "{\"startIndex\":-1}", 400,
              E400("Unable to parse 'startIndex' as a non-negative number"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tsuids_and_summaries),
        cmocka_unit_test(tsmeta_objects),
        cmocka_unit_test(uidmeta),
        cmocka_unit_test(bad_queries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
