/* test_api_annotation.c -- /api/annotation, /api/annotation/bulk and
 * /api/annotations against the real daemon (docs/http-api.md, Annotations). Expected
 * bodies are written by hand: the API order of a note is tsuid (none for a
 * global note), description, notes, custom (none when null), endTime,
 * startTime; errors are OpenTSDB's v1 error objects. */
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
#include "tsdb/annotation.h"
#include "tsdb/tsdb_int.h"

#define TS "000001000001000001"

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

static void single(void **state)
{
    (void)state;
    /* create (POST) */
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"tsuid\":\"" TS "\",\"startTime\":1356998425,\"description\":\"deploy\","
              "\"custom\":{\"owner\":\"jdoe\",\"n\":5}}",
              200,
              "{\"tsuid\":\"" TS "\",\"description\":\"deploy\",\"notes\":\"\","
              "\"custom\":{\"owner\":\"jdoe\",\"n\":\"5\"},\"endTime\":0,"
              "\"startTime\":1356998425}");
    /* read it back by query string (times go through the date parser) */
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS "&start_time=1356998425", NULL, 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"deploy\",\"notes\":\"\","
              "\"custom\":{\"owner\":\"jdoe\",\"n\":\"5\"},\"endTime\":0,"
              "\"startTime\":1356998425}");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS "&start_time=2013/01/01-00:00:25", NULL, 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"deploy\",\"notes\":\"\","
              "\"custom\":{\"owner\":\"jdoe\",\"n\":\"5\"},\"endTime\":0,"
              "\"startTime\":1356998425}");
    /* POST merges: only notes changes */
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"tsuid\":\"" TS "\",\"startTime\":1356998425,\"notes\":\"rolled back\"}", 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"deploy\",\"notes\":\"rolled back\","
              "\"custom\":{\"owner\":\"jdoe\",\"n\":\"5\"},\"endTime\":0,"
              "\"startTime\":1356998425}");
    /* nothing set -> 304, nothing written */
    AC_EXPECT(&T, "POST", "/api/annotation", "{\"tsuid\":\"" TS "\",\"startTime\":1356998425}", 304,
              "");
    /* PUT replaces every field */
    AC_EXPECT(&T, "PUT", "/api/annotation",
              "{\"tsuid\":\"" TS "\",\"startTime\":1356998425,\"endTime\":1356998500}", 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"\",\"notes\":\"\",\"endTime\":1356998500,"
              "\"startTime\":1356998425}");
    /* query-string POST */
    AC_EXPECT(&T, "POST",
              "/api/annotation?tsuid=" TS "&start_time=1356998425&description=qs%20note", NULL, 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"qs note\",\"notes\":\"\","
              "\"endTime\":1356998500,\"startTime\":1356998425}");
    /* errors */
    AC_EXPECT(&T, "POST", "/api/annotation", "{\"tsuid\":\"" TS "\",\"description\":\"x\"}", 400,
              "{\"error\":{\"code\":400,\"message\":\"The start timestamp has not been set\","
              "\"details\":\"TSUID: " TS " Start: 0  Description: x\"}}");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS, NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing start time\"}}");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS "&start_time=1356998426", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}");
    AC_EXPECT(&T, "POST", "/api/annotation", "{\"startTime\":1356998425,\"custom\":[1]}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given JSON\","
              "\"details\":\"bad value for the field \\\"custom\\\"\"}}");
}

/* AC_EXPECT compares whole bodies; the invalid-TSUID detail text is the
 * codec's, so that case is checked by prefix here instead. */
static void bad_tsuid(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(ac_req(&T, "POST", "/api/annotation",
                            "{\"tsuid\":\"0000010000010000\",\"startTime\":5,\"notes\":\"x\"}", &r),
                     400);
    const char *head = "{\"error\":{\"code\":400,\"message\":\"Invalid TSUID: 0000010000010000\"";
    if (strncmp(r, head, strlen(head))) fail_msg("got <%s>", r);
    free(r);
}

static void delete_one(void **state)
{
    (void)state;
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"tsuid\":\"" TS "\",\"startTime\":1356998600,\"description\":\"gone soon\"}", 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"gone soon\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1356998600}");
    AC_EXPECT(&T, "DELETE", "/api/annotation?tsuid=" TS "&start_time=1356998600", NULL, 204, "");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS "&start_time=1356998600", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}");
    /* deleting what is not there is still 204; with a body too */
    AC_EXPECT(&T, "DELETE", "/api/annotation", "{\"tsuid\":\"" TS "\",\"startTime\":1356998600}",
              204, "");
    /* method_override on a GET */
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"tsuid\":\"" TS "\",\"startTime\":1356998601,\"description\":\"o\"}", 200,
              "{\"tsuid\":\"" TS "\",\"description\":\"o\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1356998601}");
    AC_EXPECT(&T, "GET",
              "/api/annotation?tsuid=" TS "&start_time=1356998601&method_override=delete", NULL,
              204, "");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=" TS "&start_time=1356998601", NULL, 404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}");
}

static void global(void **state)
{
    (void)state;
    /* no tsuid: global note, no tsuid in the answer */
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"startTime\":1356998700,\"endTime\":1356998760,\"description\":\"outage\"}", 200,
              "{\"description\":\"outage\",\"notes\":\"\",\"endTime\":1356998760,"
              "\"startTime\":1356998700}");
    AC_EXPECT(&T, "POST", "/api/annotation",
              "{\"startTime\":1357002000,\"description\":\"next hour\"}", 200,
              "{\"description\":\"next hour\",\"notes\":\"\",\"endTime\":0,"
              "\"startTime\":1357002000}");
    AC_EXPECT(&T, "GET", "/api/annotation?start_time=1356998700", NULL, 200,
              "{\"description\":\"outage\",\"notes\":\"\",\"endTime\":1356998760,"
              "\"startTime\":1356998700}");
    AC_EXPECT(&T, "GET", "/api/annotations?start_time=1356998000&end_time=1357005600", NULL, 200,
              "[{\"description\":\"outage\",\"notes\":\"\",\"endTime\":1356998760,"
              "\"startTime\":1356998700},{\"description\":\"next hour\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1357002000}]");
    /* inclusive start, the second one out of range */
    AC_EXPECT(&T, "GET", "/api/annotations?start_time=1356998700&end_time=1357001999", NULL, 200,
              "[{\"description\":\"outage\",\"notes\":\"\",\"endTime\":1356998760,"
              "\"startTime\":1356998700}]");
    AC_EXPECT(&T, "GET", "/api/annotations?start_time=1356998701&end_time=1357001999", NULL, 200,
              "[]");
    AC_EXPECT(
        &T, "GET", "/api/annotations", NULL, 400,
        "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>start_time</code>\"}}");
}

static void bulk(void **state)
{
    (void)state;
    const char *ts2 = "000001000001000002";
    char body[1024];
    snprintf(body, sizeof body,
             "[{\"tsuid\":\"%s\",\"startTime\":1356998410,\"description\":\"b1\"},"
             "{\"tsuid\":\"%s\",\"startTime\":1356998420,\"description\":\"b2\"},"
             "{\"tsuid\":\"%s\",\"startTime\":1356998430},"
             "{\"startTime\":1356998440,\"notes\":\"g\"}]",
             ts2, ts2, ts2);
    /* the third note sets nothing: skipped, as OpenTSDB does */
    AC_EXPECT(&T, "POST", "/api/annotation/bulk", body, 200,
              "[{\"tsuid\":\"000001000001000002\",\"description\":\"b1\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1356998410},"
              "{\"tsuid\":\"000001000001000002\",\"description\":\"b2\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1356998420},"
              "{\"description\":\"\",\"notes\":\"g\",\"endTime\":0,\"startTime\":1356998440}]");
    AC_EXPECT(&T, "POST", "/api/annotation/bulk", "[{\"description\":\"no start\"}]", 400,
              "{\"error\":{\"code\":400,\"message\":\"The start timestamp has not been set\","
              "\"details\":\"Annotation error: TSUID:  Start: 0  Description: no start\"}}");
    AC_EXPECT(&T, "GET", "/api/annotation/bulk", NULL, 405,
              "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":"
              "\"The HTTP method [GET] is not permitted for this endpoint\"}}");
    /* bulk delete: errors first */
    AC_EXPECT(&T, "DELETE", "/api/annotation/bulk", "{\"tsuids\":[\"000001000001000002\"]}", 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing the start time value\"}}");
    AC_EXPECT(&T, "DELETE", "/api/annotation/bulk", "{\"startTime\":\"1356998400\"}", 400,
              "{\"error\":{\"code\":400,"
              "\"message\":\"Missing the TSUIDs or global annotations flag\"}}");
    AC_EXPECT(
        &T, "DELETE", "/api/annotation/bulk?tsuids=000001000001000002", NULL, 400,
        "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>start_time</code>\"}}");
    /* [1356998400 s, 1356998415 s] holds b1 only (times in ms in the answer) */
    AC_EXPECT(&T, "DELETE", "/api/annotation/bulk",
              "{\"startTime\":\"1356998400\",\"endTime\":\"1356998415\","
              "\"tsuids\":[\"000001000001000002\"]}",
              200,
              "{\"startTime\":1356998400000,\"endTime\":1356998415000,"
              "\"tsuids\":[\"000001000001000002\"],\"global\":false,\"totalDeleted\":1}");
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=000001000001000002&start_time=1356998410", NULL,
              404,
              "{\"error\":{\"code\":404,\"message\":\"Unable to locate annotation in storage\"}}");
    /* query-string form with global: b2 and the global note at 1356998440 */
    AC_EXPECT(&T, "DELETE",
              "/api/annotation/bulk?start_time=1356998400&end_time=1356998450"
              "&tsuids=000001000001000002&global",
              NULL, 200,
              "{\"startTime\":1356998400000,\"endTime\":1356998450000,"
              "\"tsuids\":[\"000001000001000002\"],\"global\":true,\"totalDeleted\":2}");
    AC_EXPECT(&T, "GET", "/api/annotations?start_time=1356998400&end_time=1356998450", NULL, 200,
              "[]");
    AC_EXPECT(&T, "DELETE", "/api/annotation/bulk",
              "{\"startTime\":\"1356998400\",\"endTime\":\"1356998450\",\"global\":true}", 200,
              "{\"startTime\":1356998400000,\"endTime\":1356998450000,\"tsuids\":null,"
              "\"global\":true,\"totalDeleted\":0}");
}

/* A note stored by OpenTSDB (same bytes) is served: written through the
 * storage API into the stopped daemon's data dir, then read over HTTP. */
static void stored_by_opentsdb(void **state)
{
    (void)state;
    assert_int_equal(tu_tsd_stop(&T), 0);
    tsdb_t *db = ac_open_dir(T.dir);
    uint8_t row[13], q[3] = {0x01, 0x00, 0x3C}; /* +60 s */
    assert_int_equal(tu_unhex("000001 50E22700 000001000003", row, sizeof row), 13);
    const char *js = "{\"tsuid\":\"000001000001000003\",\"startTime\":1356998460,"
                     "\"endTime\":0,\"description\":\"otsdb\",\"notes\":\"\",\"custom\":null}";
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(row, 7),
                     {oct_slice(row, 13), oct_slice_str("t"), oct_slice(q, 3), oct_slice_str(js)}};
    oct_errbuf_t eb;
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, &op, 1, 0, &eb), 0);
    tsdb_close(db);
    assert_int_equal(tu_tsd_start(&T, NULL), 0);
    AC_EXPECT(&T, "GET", "/api/annotation?tsuid=000001000001000003&start_time=1356998460", NULL,
              200,
              "{\"tsuid\":\"000001000001000003\",\"description\":\"otsdb\",\"notes\":\"\","
              "\"endTime\":0,\"startTime\":1356998460}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single), cmocka_unit_test(bad_tsuid), cmocka_unit_test(delete_one),
        cmocka_unit_test(global), cmocka_unit_test(bulk),      cmocka_unit_test(stored_by_opentsdb),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
