/* test_api_search_annotation.c -- /api/search/annotation and `octsdb search
 * annotation` against the real daemon and binary. UIDs are assigned first
 * (widths 3, counters from 1), so the TSUIDs are known by hand:
 *   A = sys.cpu.user{host=web01} 000001000001000001
 *   B = sys.cpu.user{host=web02} 000001000001000002
 *   C = net.bytes{host=web01}    000002000001000001
 * The notes the test writes are in NOTES, in the order a search returns
 * them (global by time, then by TSUID, then by time); each query's matches
 * are listed by hand from those notes. The second test plants a note in the
 * data table the way OpenTSDB stores it (bytes from
 * docs/format/annotations.md) plus a stale index row
 * (docs/format/annotation-index.md), and checks that --reindex finds the
 * one and drops the other. */
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
#include "store/store.h"
#include "tsdb/tsdb_int.h"

#define TS_A "000001000001000001"
#define TS_B "000001000001000002"
#define TS_C "000002000001000001"

static tu_tsd_t T;

typedef struct {
    const char *tsuid; /* NULL: global */
    int64_t start;
    const char *desc, *notes;
    const char *custom; /* JSON object text or NULL */
} note_t;

static const note_t NOTES[] = {
    {NULL, 1356998400, "deploy v2", "rolled out by bob", "{\"owner\":\"bob\"}"},
    {NULL, 1356998500, "Outage", "db failover", NULL},
    {TS_A, 1356998410, "deploy v3", "", "{\"owner\":\"alice\",\"ticket\":\"OPS-1\"}"},
    {TS_A, 1356998425123, "reboot", "kernel upgrade", NULL},
    {TS_B, 1356998405, "Deploy canary", "alice", "{\"owner\":\"carol\"}"},
    {TS_C, 1356998400, "link flap", "redeploy pending", NULL},
};
#define N_NOTES (sizeof NOTES / sizeof *NOTES)

/* The note as the API writes it: tsuid, description, notes, custom (when
 * an object), endTime, startTime. */
static void note_json(const note_t *n, char *out)
{
    out += sprintf(out, "{");
    if (n->tsuid) out += sprintf(out, "\"tsuid\":\"%s\",", n->tsuid);
    out += sprintf(out, "\"description\":\"%s\",\"notes\":\"%s\",", n->desc, n->notes);
    if (n->custom) out += sprintf(out, "\"custom\":%s,", n->custom);
    sprintf(out, "\"endTime\":0,\"startTime\":%lld}", (long long)n->start);
}

/* Queries (URL form, JSON form) and their matches, worked by hand from
 * NOTES: bare terms and description:/notes:/custom: match a whole value or
 * one word of it, case-insensitively. -1 ends a list. */
static const struct {
    const char *q_url, *q_json;
    int match[8];
} QUERIES[] = {
    {"", "", {0, 1, 2, 3, 4, 5, -1}},
    {"deploy*", "deploy*", {0, 2, 4, -1}}, /* not "redeploy" */
    {"*deploy*", "*deploy*", {0, 2, 4, 5, -1}},
    {"description:deploy", "description:deploy", {0, 2, 4, -1}},
    {"notes:alice", "notes:alice", {4, -1}},
    {"alice", "alice", {4, -1}}, /* note 2 has alice only in custom */
    {"custom.owner:alice", "custom.owner:alice", {2, -1}},
    {"custom:bob", "custom:bob", {0, -1}},
    {"custom:ops-*", "custom:ops-*", {2, -1}},
    {"metric:sys.cpu.*", "metric:sys.cpu.*", {2, 3, 4, -1}},
    {"tsuid:000002*", "tsuid:000002*", {5, -1}},
    {"deploy*%20metric:sys.cpu.user", "deploy* metric:sys.cpu.user", {2, 4, -1}},
    {"kernel%20AND%20upgrade", "kernel AND upgrade", {3, -1}},
    {"DB+FAILOVER", "DB FAILOVER", {1, -1}},
    {"nosuch", "nosuch", {-1}},
};

static int setup(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    if (tu_tsd_start(&T, NULL)) return -1;
    char *r;
    if (ac_req(&T, "POST", "/api/uid/assign",
               "{\"metric\":[\"sys.cpu.user\",\"net.bytes\"],\"tagk\":[\"host\"],"
               "\"tagv\":[\"web01\",\"web02\"]}",
               &r) != 200)
        return -1;
    free(r);
    if (ac_req(&T, "POST", "/api/put",
               "[{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998400,\"value\":1,"
               "\"tags\":{\"host\":\"web01\"}},"
               "{\"metric\":\"sys.cpu.user\",\"timestamp\":1356998400,\"value\":2,"
               "\"tags\":{\"host\":\"web02\"}},"
               "{\"metric\":\"net.bytes\",\"timestamp\":1356998400,\"value\":3,"
               "\"tags\":{\"host\":\"web01\"}}]",
               &r) != 204)
        return -1;
    free(r);
    /* written in reverse, so the answer's order is the index's, not ours */
    for (size_t i = N_NOTES; i-- > 0;) {
        const note_t *n = &NOTES[i];
        char body[1024], *p = body;
        p += sprintf(p, "{");
        if (n->tsuid) p += sprintf(p, "\"tsuid\":\"%s\",", n->tsuid);
        p += sprintf(p, "\"startTime\":%lld,\"description\":\"%s\",\"notes\":\"%s\"",
                     (long long)n->start, n->desc, n->notes);
        if (n->custom) p += sprintf(p, ",\"custom\":%s", n->custom);
        sprintf(p, "}");
        if (ac_req(&T, "POST", "/api/annotation", body, &r) != 200) {
            fprintf(stderr, "annotation %zu: %s\n", i, r);
            free(r);
            return -1;
        }
        free(r);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&T);
    return 0;
}

static void expect_page(const char *method, const char *target, const char *body, const char *q,
                        long limit, long start, const int *match)
{
    char *r;
    int st = ac_req(&T, method, target, body, &r);
    if (st != 200) fail_msg("%s %s %s: %d %s", method, target, body ? body : "", st, r);
    size_t total = 0;
    while (match[total] >= 0)
        total++;
    long eff = limit > 0 ? limit : 25;
    char want[8192], *p = want;
    p += sprintf(p,
                 "{\"type\":\"ANNOTATION\",\"query\":\"%s\",\"limit\":%ld,\"startIndex\":%ld,"
                 "\"results\":[",
                 q, eff, start);
    for (long i = start; i < (long)total && i < start + eff; i++) {
        if (i > start) *p++ = ',';
        note_json(&NOTES[match[i]], p);
        p += strlen(p);
    }
    sprintf(p, "],\"totalResults\":%zu,\"time\":", total);
    if (strncmp(r, want, strlen(want)))
        fail_msg("%s %s %s:\n got <%s>\nwant <%s...>", method, target, body ? body : "", r, want);
    free(r);
}

/* Every query as GET and POST, with pages cutting the answer everywhere. */
static void queries_and_pages(void **state)
{
    (void)state;
    static const long LIMITS[] = {0, 1, 2, 4};
    for (size_t qi = 0; qi < sizeof QUERIES / sizeof *QUERIES; qi++) {
        size_t n = 0;
        while (QUERIES[qi].match[n] >= 0)
            n++;
        for (size_t li = 0; li < sizeof LIMITS / sizeof *LIMITS; li++)
            for (long start = 0; start <= (long)n + 1; start++) {
                char target[512], body[512];
                snprintf(target, sizeof target,
                         "/api/search/annotation?query=%s&limit=%ld&startIndex=%ld",
                         QUERIES[qi].q_url, LIMITS[li], start);
                expect_page("GET", target, NULL, QUERIES[qi].q_json, LIMITS[li], start,
                            QUERIES[qi].match);
                snprintf(body, sizeof body, "{\"query\":\"%s\",\"limit\":%ld,\"startIndex\":%ld}",
                         QUERIES[qi].q_json, LIMITS[li], start);
                expect_page("POST", "/api/search/annotation", body, QUERIES[qi].q_json, LIMITS[li],
                            start, QUERIES[qi].match);
            }
    }
}

#define E400(msg) "{\"error\":{\"code\":400,\"message\":\"" msg "\"}}"

static void refused(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/search/annotation?query=deploy%20OR%20reboot", NULL, 400,
              E400("Unsupported search operator 'OR': terms are ANDed"));
    AC_EXPECT(&T, "GET", "/api/search/annotation?query=owner:bob", NULL, 400,
              E400("Unsupported annotation search field 'owner' (description, notes, custom, "
                   "custom.KEY, tsuid or metric)"));
    AC_EXPECT(&T, "GET", "/api/search/annotation?query=custom.*:bob", NULL, 400,
              E400("Unsupported annotation search field 'custom.*' (description, notes, custom, "
                   "custom.KEY, tsuid or metric)"));
    AC_EXPECT(&T, "GET", "/api/search/annotation?query=notes:", NULL, 400,
              E400("Unsupported search term 'notes:'"));
    AC_EXPECT(&T, "GET", "/api/search/annotation?limit=ten", NULL, 400,
              E400("Unable to parse 'limit' as a non-negative number"));
}

/* A deleted note leaves the answers at once. */
static void delete_then_search(void **state)
{
    (void)state;
    char *r = ac_req_ok(
        &T, "POST", "/api/annotation",
        "{\"tsuid\":\"" TS_C "\",\"startTime\":1356998999,\"description\":\"gone\"}", 200);
    free(r);
    static const int none[] = {-1};
    r = ac_req_ok(&T, "GET", "/api/search/annotation?query=gone", NULL, 200);
    if (!strstr(r, "\"description\":\"gone\"") || !strstr(r, "\"totalResults\":1,"))
        fail_msg("got <%s>", r);
    free(r);
    r = ac_req_ok(&T, "DELETE", "/api/annotation?tsuid=" TS_C "&start_time=1356998999", NULL, 204);
    free(r);
    expect_page("GET", "/api/search/annotation?query=gone", NULL, "gone", 0, 0, none);
}

static void run_cli(int want_status, const char *want_out, const char *a1, const char *a2,
                    const char *a3)
{
    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", T.dir);
    const char *argv[] = {"search", flag, a1, a2, a3, NULL};
    char *out;
    int st = tu_run_octsdb(&out, argv);
    if (st != want_status || strcmp(out, want_out))
        fail_msg("search %s %s %s: got %d <%s>, want %d <%s>", a1, a2 ? a2 : "", a2 && a3 ? a3 : "",
                 st, out, want_status, want_out);
    free(out);
}

static void planted_and_reindex(void **state)
{
    (void)state;
    assert_int_equal(tu_tsd_stop(&T), 0);
    tsdb_t *db = ac_open_dir(T.dir);
    store_t *st = tsdb_store(db);
    /* a note OpenTSDB would have written for C at 1356998460: C's row for
     * hour 1356998400 (0x50E22700), qualifier 01 + 60 s on 2 bytes */
    static const uint8_t row[] = {0, 0, 2, 0x50, 0xE2, 0x27, 0x00, 0, 0, 1, 0, 0, 1};
    static const uint8_t qual[] = {0x01, 0x00, 0x3C};
    const char *js = "{\"tsuid\":\"" TS_C "\",\"startTime\":1356998460,\"endTime\":0,"
                     "\"description\":\"planted\",\"notes\":\"\",\"custom\":null}";
    store_op_t put = {STORE_OP_PUT,
                      oct_slice(row, 7),
                      {oct_slice(row, sizeof row), oct_slice_str("t"), oct_slice(qual, sizeof qual),
                       oct_slice_str(js)}};
    oct_errbuf_t eb;
    assert_int_equal(store_write(st, STORE_TABLE_DATA, &put, 1, STORE_SYNC, &eb), 0);
    /* an index row for A at 1356999000 s, whose note does not exist */
    static const uint8_t irow[] = {'S', 0,    0,    1,    0,    0,    1,    0,    0,
                                   1,   0x00, 0x00, 0x01, 0x3B, 0xF3, 0x71, 0x7F, 0xC0};
    static const uint8_t ival[] = {0, 0, 0, 0, 0x50, 0xE2, 0x29, 0x58};
    store_op_t iput = {STORE_OP_PUT,
                       oct_slice_str("annidx"),
                       {oct_slice(irow, sizeof irow), oct_slice_str("a"), oct_slice_str("s"),
                        oct_slice(ival, sizeof ival)}};
    assert_int_equal(store_write(st, STORE_TABLE_SYS, &iput, 1, STORE_SYNC, &eb), 0);
    tsdb_close(db);

    /* not indexed yet: the planted note is not found, the stale row skipped */
    run_cli(1, "", "annotation", "planted", NULL);
    run_cli(0, "- 1356998400 0 deploy v2\n- 1356998500 0 Outage\n", "annotation", "--limit=2",
            NULL);
    run_cli(0, "indexed 7 annotations, dropped 1 stale index rows\n", "annotation", "--reindex",
            NULL);
    run_cli(0, TS_C " 1356998460 0 planted\n", "annotation", "planted", NULL);
    run_cli(0, TS_A " 1356998410 0 deploy v3\n" TS_B " 1356998405 0 Deploy canary\n", "annotation",
            "deploy*", "metric:sys.cpu.user");
    run_cli(2, "", "annotation", "--reindex", "planted");

    assert_int_equal(tu_tsd_start(&T, NULL), 0);
    static const note_t planted = {TS_C, 1356998460, "planted", "", NULL};
    /* C's notes by time: 1356998400 (link flap), then the planted one */
    char want[2048], first[512], second[512];
    note_json(&NOTES[5], first);
    note_json(&planted, second);
    snprintf(want, sizeof want,
             "{\"type\":\"ANNOTATION\",\"query\":\"tsuid:%s\",\"limit\":25,\"startIndex\":0,"
             "\"results\":[%s,%s],\"totalResults\":2,\"time\":",
             TS_C, first, second);
    char *r = ac_req_ok(&T, "GET", "/api/search/annotation?query=tsuid:" TS_C, NULL, 200);
    if (strncmp(r, want, strlen(want))) fail_msg("got <%s>\nwant <%s...>", r, want);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queries_and_pages),
        cmocka_unit_test(refused),
        cmocka_unit_test(delete_then_search),
        cmocka_unit_test(planted_and_reindex),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
