/* test_api_put_stream.c -- /api/put parses an array of up to one chunk
 * (4,096 points) once and stores it only after its closing bracket; a
 * longer array is validated whole first. Either way an unparsable body
 * stores nothing and is answered with the whole-body parser's message, and
 * a bad JSON body is reported before a bad sync_timeout. Expected offsets
 * are the byte positions of the faults in the bodies built here. */
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

static const char *const auto_metric[] = {"--auto-metric", NULL};
static const char *const host_a[] = {"host=a"};

#define E400_JSON(details)                                                                         \
    "{\"error\":{\"code\":400,\"message\":\"Unable to parse the given "                            \
    "JSON\",\"details\":\"" details "\"}}"

/* '[' + n points of metric m (timestamps 1356998400 + i, value i) + tail. */
static char *batch(const char *m, int n, const char *tail, size_t *len_out)
{
    size_t cap = (size_t)n * 120 + strlen(tail) + 16, len = 0;
    char *b = malloc(cap);
    b[len++] = '[';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"metric\":\"%s\",\"timestamp\":%d,\"value\":%d,"
                                "\"tags\":{\"host\":\"a\"}}",
                                i ? "," : "", m, 1356998400 + i, i);
    len += (size_t)snprintf(b + len, cap - len, "%s", tail);
    if (len_out) *len_out = len;
    return b;
}

static void expect_json_error_at(tu_tsd_t *t, const char *body, const char *why, size_t offset)
{
    char *r;
    char want[256];
    snprintf(want, sizeof want, E400_JSON("%s at offset %zu"), why, offset);
    assert_int_equal(ac_req(t, "POST", "/api/put?details", body, &r), 400);
    assert_string_equal(r, want);
    free(r);
}

/* The metric was never stored: it does not even exist. */
static void assert_not_stored(const tu_tsd_t *t, const char *metric)
{
    char q[256];
    snprintf(q, sizeof q, "/api/suggest?type=metrics&q=%s", metric);
    AC_EXPECT(t, "GET", q, NULL, 200, "[]");
}

static void put_stream_unparsable_bodies(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);

    /* "[": the element parser would say "unterminated array"; the answer is
     * the whole-body parser's, as before */
    expect_json_error_at(&t, "[", "unexpected end of input", 1);
    expect_json_error_at(&t, "[ ", "unexpected end of input", 2);
    expect_json_error_at(&t, "[1,", "unexpected end of input", 3);
    expect_json_error_at(&t, "[1,]", "unexpected character", 3);
    expect_json_error_at(&t, "[1 2]", "expected ',' or ']'", 3);

    /* a good point, then the array never closes: error at the very end */
    size_t len;
    char *b = batch("put.s1", 1, "", &len);
    expect_json_error_at(&t, b, "unterminated array", len);
    free(b);
    /* three points (one of them bad), then garbage after the array: no
     * per-point errors, nothing stored */
    b = batch("put.s2", 3, "] x", &len);
    memcpy(strstr(b, "\"put.s2\""), "\"\"      ", 8); /* first metric now empty */
    expect_json_error_at(&t, b, "trailing characters after the value", len - 1);
    free(b);
    assert_not_stored(&t, "put.s1");
    assert_not_stored(&t, "put.s2");

    /* more than one chunk, broken in the last element: nothing stored */
    b = batch("put.s3", 4097, ",{\"metric\":]", &len);
    expect_json_error_at(&t, b, "unexpected character", len - 1);
    free(b);
    assert_not_stored(&t, "put.s3");

    /* bad JSON wins over a bad sync_timeout; good JSON with a bad one
     * stores nothing */
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/put?sync&sync_timeout=x", "[", &r), 400);
    assert_string_equal(r, E400_JSON("unexpected end of input at offset 1"));
    free(r);
    b = batch("put.s4", 2, "]", NULL);
    AC_EXPECT(&t, "POST", "/api/put?sync&sync_timeout=x", b, 400,
              "{\"error\":{\"code\":400,\"message\":\"Unable to parse 'sync_timeout' as a "
              "number\",\"details\":\"x\"}}");
    free(b);
    assert_not_stored(&t, "put.s4");
    tu_tsd_destroy(&t);
}

static void put_stream_chunk_edges(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, auto_metric), 0);
    /* one chunk exactly, one point more, and a small batch */
    const int sizes[] = {4096, 4097, 50};
    const char *const names[] = {"put.e4096", "put.e4097", "put.e50"};
    for (int k = 0; k < 3; k++) {
        char *b = batch(names[k], sizes[k], "]", NULL);
        char *r, want[64];
        snprintf(want, sizeof want, "{\"success\":%d,\"failed\":0}", sizes[k]);
        assert_int_equal(ac_req(&t, "POST", "/api/put?summary", b, &r), 200);
        assert_string_equal(r, want);
        free(r);
        free(b);
    }
    /* a bad point in a one-chunk batch is a per-point error, the rest stored */
    char *b = batch("put.e3", 3, "]", NULL);
    memcpy(strstr(b, "\"put.e3\""), "\"\"      ", 8); /* the first metric now empty */
    AC_EXPECT(&t, "POST", "/api/put?summary", b, 400, "{\"success\":2,\"failed\":1}");
    free(b);
    assert_int_equal(tu_tsd_stop(&t), 0);

    tsdb_t *db = ac_open_dir(t.dir);
    for (int k = 0; k < 3; k++) {
        codec_point_t *p;
        long n;
        ac_read(db, names[k], host_a, 1, &p, &n);
        assert_int_equal(n, sizes[k]);
        for (long i = 0; i < n; i++) {
            assert_true(p[i].ts_ms == (1356998400LL + i) * 1000);
            assert_int_equal(p[i].val.i, i);
        }
        free(p);
    }
    codec_point_t *p;
    long n;
    ac_read(db, "put.e3", host_a, 1, &p, &n);
    assert_int_equal(n, 2);
    assert_true(p[0].ts_ms == 1356998401LL * 1000 && p[1].ts_ms == 1356998402LL * 1000);
    assert_int_equal(p[0].val.i, 1);
    assert_int_equal(p[1].val.i, 2);
    free(p);
    tsdb_close(db);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_stream_unparsable_bodies),
        cmocka_unit_test(put_stream_chunk_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
