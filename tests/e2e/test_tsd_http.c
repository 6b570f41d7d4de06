/* test_tsd_http.c -- the HTTP side of the TSD's port, end to end: error
 * shapes (docs/http-api.md, Errors), keep-alive, pipelining, chunked, gzip and
 * deflate bodies, Expect: 100-continue, the body size limit (413) and CORS
 * (docs/http-api.md, CORS). Bodies are checked by their effect: a metric named only
 * in the last chunk (or inside the compressed bytes) must show up in
 * /api/suggest afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <zlib.h>

#include "testutil.h"
#include "tsd_client.h"

#define LIMIT     65536 /* tsd.http.request.max_body_size for this daemon */
#define JSON_TYPE "application/json; charset=UTF-8"

static tu_tsd_t tsd;

static int setup(void **state)
{
    (void)state;
    memset(&tsd, 0, sizeof tsd);
    static const char *const extra[] = {"--auto-metric", "--set",
                                        "tsd.http.request.max_body_size=65536", NULL};
    return tu_tsd_start(&tsd, extra);
}

static int teardown(void **state)
{
    (void)state;
    int rc = tu_tsd_stop(&tsd);
    tu_tsd_destroy(&tsd);
    return rc == 0 ? 0 : -1;
}

/* The JSON array /api/suggest returns for metrics starting with q. */
static char *suggest(const char *q)
{
    char target[256];
    snprintf(target, sizeof target, "/api/suggest?type=metrics&q=%s", q);
    char *body = NULL;
    int st = tu_http(tsd.port, "GET", target, NULL, NULL, 0, &body, NULL);
    assert_int_equal(st, 200);
    return body;
}

static void test_not_found_shape(void **state)
{
    (void)state;
    char *body = NULL, *hdrs = NULL;
    int st = tu_http(tsd.port, "GET", "/api/no_such_endpoint", NULL, NULL, 0, &body, &hdrs);
    assert_int_equal(st, 404);
    assert_string_equal(body, "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}");
    char ct[128];
    assert_true(tc_header(hdrs, "Content-Type", ct, sizeof ct));
    assert_string_equal(ct, JSON_TYPE);
    free(body);
    free(hdrs);
}

static void test_options_without_cors_is_405(void **state)
{
    (void)state;
    char *body = NULL;
    int st = tu_http(tsd.port, "OPTIONS", "/api/version", NULL, NULL, 0, &body, NULL);
    assert_int_equal(st, 405);
    assert_string_equal(body, "{\"error\":{\"code\":405,\"message\":\"Method not allowed\","
                              "\"details\":\"The HTTP method [OPTIONS] is not permitted\"}}");
    free(body);
}

static void test_keep_alive(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    tc_resp_t *r = malloc(sizeof *r);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tc_sends(c, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
        assert_int_equal(tc_read_response(c, r, 5000), 0);
        assert_int_equal(r->status, 200);
        assert_non_null(strstr(r->body, "\"version\""));
        char v[64];
        assert_false(tc_header(r->headers, "Connection", v, sizeof v) && !strcasecmp(v, "close"));
    }
    free(r);
    tc_close(c);
}

static void test_pipelined_in_one_write(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    const char *two = "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /api/nope HTTP/1.1\r\nHost: x\r\n\r\n"
                      "OPTIONS /api/version HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(tc_sends(c, two), 0);
    tc_resp_t *r = malloc(sizeof *r);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 200);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 404);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 405);
    free(r);
    tc_close(c);
}

static void test_chunked_body(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    const char *parts[] = {
        "[{\"metric\":\"chunk.first\",\"timestamp\":1700000000,",
        "\"value\":1,\"tags\":{\"host\":\"a\"}},",
        "{\"metric\":\"chunk.second\",\"timestamp\":1700000000,\"value\":2,\"tags\":{\"host\":"
        "\"a\"}}]",
    };
    assert_int_equal(tc_sends(c, "POST /api/put HTTP/1.1\r\nHost: x\r\n"
                                 "Content-Type: application/json\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n"),
                     0);
    for (int i = 0; i < 3; i++) {
        char head[32];
        snprintf(head, sizeof head, "%zx\r\n", strlen(parts[i]));
        assert_int_equal(tc_sends(c, head), 0);
        assert_int_equal(tc_sends(c, parts[i]), 0);
        assert_int_equal(tc_sends(c, "\r\n"), 0);
        tc_sleep_ms(30);
    }
    assert_int_equal(tc_sends(c, "0\r\n\r\n"), 0);
    tc_resp_t *r = malloc(sizeof *r);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 204);
    free(r);
    tc_close(c);
    char *s = suggest("chunk.");
    assert_string_equal(s, "[\"chunk.first\",\"chunk.second\"]");
    free(s);
}

static void test_gzip_body(void **state)
{
    (void)state;
    const char *json = "[{\"metric\":\"gz.one\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"a\"}}]";
    uint8_t z[1024];
    size_t zn = tc_deflate(json, strlen(json), z, sizeof z, 15 + 16); /* gzip wrapper */
    char *body = NULL;
    int st =
        tu_http(tsd.port, "POST", "/api/put",
                "Content-Type: application/json\r\nContent-Encoding: gzip\r\n", z, zn, &body, NULL);
    assert_int_equal(st, 204);
    free(body);

    const char *json2 = "{\"metric\":\"gz.two\",\"timestamp\":1700000000,\"value\":2,"
                        "\"tags\":{\"host\":\"a\"}}";
    zn = tc_deflate(json2, strlen(json2), z, sizeof z, 15); /* zlib wrapper: HTTP's "deflate" */
    st = tu_http(tsd.port, "POST", "/api/put", "Content-Encoding: deflate\r\n", z, zn, &body, NULL);
    assert_int_equal(st, 204);
    free(body);

    char *s = suggest("gz.");
    assert_string_equal(s, "[\"gz.one\",\"gz.two\"]");
    free(s);
}

static void test_broken_gzip_is_400(void **state)
{
    (void)state;
    const char *json = "[{\"metric\":\"gzbad.x\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"a\"}}]";
    uint8_t z[1024];
    size_t zn = tc_deflate(json, strlen(json), z, sizeof z, 15 + 16);
    char *body = NULL;
    /* Truncated stream. */
    int st =
        tu_http(tsd.port, "POST", "/api/put", "Content-Encoding: gzip\r\n", z, zn / 2, &body, NULL);
    assert_int_equal(st, 400);
    assert_int_equal(strncmp(body, "{\"error\":{\"code\":400,\"message\":", 31), 0);
    free(body);
    /* Not gzip at all. */
    st = tu_http(tsd.port, "POST", "/api/put", "Content-Encoding: gzip\r\n", json, strlen(json),
                 &body, NULL);
    assert_int_equal(st, 400);
    assert_int_equal(strncmp(body, "{\"error\":{\"code\":400,\"message\":", 31), 0);
    free(body);
    char *s = suggest("gzbad.");
    assert_string_equal(s, "[]");
    free(s);
}

static void test_gzip_bomb_is_413(void **state)
{
    (void)state;
    /* 1 MiB of spaces compresses to ~1 KiB but decodes past the limit. */
    size_t n = 1 << 20;
    char *big = malloc(n);
    memset(big, ' ', n);
    uint8_t *z = malloc(n);
    size_t zn = tc_deflate(big, n, z, n, 15 + 16);
    assert_true(zn < LIMIT);
    char *body = NULL;
    int st =
        tu_http(tsd.port, "POST", "/api/put", "Content-Encoding: gzip\r\n", z, zn, &body, NULL);
    assert_int_equal(st, 413);
    assert_int_equal(strncmp(body, "{\"error\":{\"code\":413,\"message\":", 31), 0);
    free(body);
    free(big);
    free(z);
}

static void test_expect_100_continue(void **state)
{
    (void)state;
    const char *json = "[{\"metric\":\"expect.ok\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"a\"}}]";
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    char head[512];
    snprintf(head, sizeof head,
             "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Expect: 100-continue\r\nContent-Length: %zu\r\n\r\n",
             strlen(json));
    assert_int_equal(tc_sends(c, head), 0);
    tc_resp_t *r = malloc(sizeof *r);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 100);
    assert_int_equal(tc_sends(c, json), 0);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 204);
    free(r);
    tc_close(c);
    char *s = suggest("expect.");
    assert_string_equal(s, "[\"expect.ok\"]");
    free(s);
}

static void test_body_over_limit_is_413(void **state)
{
    (void)state;
    /* Declared too large, with Expect: refused before the body is sent. */
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    char head[512];
    snprintf(head, sizeof head,
             "POST /api/put HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: %d\r\n\r\n",
             LIMIT + 1);
    assert_int_equal(tc_sends(c, head), 0);
    tc_resp_t *r = malloc(sizeof *r);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 413);
    assert_int_equal(strncmp(r->body,
                             "{\"error\":{\"code\":413,\"message\":\"Request body too "
                             "large\"",
                             54),
                     0);
    char ct[128];
    assert_true(tc_header(r->headers, "Content-Type", ct, sizeof ct));
    assert_string_equal(ct, JSON_TYPE);
    tc_close(c);

    /* Chunked, crossing the limit on the way. */
    c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "POST /api/put HTTP/1.1\r\nHost: x\r\n"
                                 "Transfer-Encoding: chunked\r\n\r\n"),
                     0);
    char *chunk = malloc(16384);
    memset(chunk, ' ', 16384);
    int sent_ok = 1;
    for (int i = 0; i < 5 && sent_ok; i++) { /* 80 KiB > 64 KiB */
        sent_ok = tc_sends(c, "4000\r\n") == 0 && tc_send(c, chunk, 16384) == 0 &&
                  tc_sends(c, "\r\n") == 0;
    }
    assert_true(sent_ok);
    assert_int_equal(tc_sends(c, "0\r\n\r\n"), 0);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 413);
    assert_int_equal(strncmp(r->body, "{\"error\":{\"code\":413,", 21), 0);
    /* The whole body was read, so the connection is still usable. */
    assert_int_equal(tc_sends(c, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
    assert_int_equal(tc_read_response(c, r, 5000), 0);
    assert_int_equal(r->status, 200);
    free(chunk);
    free(r);
    tc_close(c);

    /* Exactly at the limit is accepted by the transport (the API then
     * says what it thinks of 64 KiB of spaces). */
    char *body = malloc(LIMIT);
    memset(body, ' ', LIMIT);
    char *resp = NULL;
    int st = tu_http(tsd.port, "POST", "/api/put", NULL, body, LIMIT, &resp, NULL);
    assert_int_not_equal(st, 413);
    assert_true(st >= 200);
    free(resp);
    free(body);
}

static void test_cors(void **state)
{
    (void)state;
    tu_tsd_t c = {0};
    static const char *const extra[] = {
        "--set", "tsd.http.request.cors_domains=http://good.example, https://other.example", NULL};
    assert_int_equal(tu_tsd_start(&c, extra), 0);
    const char *allow_headers = "Authorization, Content-Type, Accept, Origin, User-Agent, DNT, "
                                "Cache-Control, X-Mx-ReqToken, Keep-Alive, X-Requested-With, "
                                "If-Modified-Since";
    char *body = NULL, *hdrs = NULL, v[512];

    int st = tu_http(c.port, "GET", "/api/version", "Origin: http://good.example\r\n", NULL, 0,
                     &body, &hdrs);
    assert_int_equal(st, 200);
    assert_non_null(strstr(body, "\"version\""));
    assert_true(tc_header(hdrs, "Access-Control-Allow-Origin", v, sizeof v));
    assert_string_equal(v, "http://good.example");
    assert_true(tc_header(hdrs, "Access-Control-Allow-Methods", v, sizeof v));
    assert_string_equal(v, "GET, POST, PUT, DELETE");
    assert_true(tc_header(hdrs, "Access-Control-Allow-Headers", v, sizeof v));
    assert_string_equal(v, allow_headers);
    free(body);
    free(hdrs);

    /* Case-insensitive match, as OpenTSDB upper-cases both sides. */
    st = tu_http(c.port, "OPTIONS", "/api/put", "Origin: HTTPS://OTHER.example\r\n", NULL, 0, &body,
                 &hdrs);
    assert_int_equal(st, 200);
    assert_string_equal(body, "");
    assert_true(tc_header(hdrs, "Access-Control-Allow-Origin", v, sizeof v));
    assert_string_equal(v, "HTTPS://OTHER.example");
    free(body);
    free(hdrs);

    st = tu_http(c.port, "GET", "/api/version", "Origin: http://evil.example\r\n", NULL, 0, &body,
                 &hdrs);
    assert_int_equal(st, 200);
    assert_string_equal(body, "{\"error\":{\"code\":200,\"message\":\"CORS domain not allowed\","
                              "\"details\":\"The domain [http://evil.example] is not permitted "
                              "access\"}}");
    assert_false(tc_header(hdrs, "Access-Control-Allow-Origin", v, sizeof v));
    free(body);
    free(hdrs);

    /* No Origin: an ordinary request; OPTIONS without Origin is 405. */
    st = tu_http(c.port, "GET", "/api/version", NULL, NULL, 0, &body, &hdrs);
    assert_int_equal(st, 200);
    assert_false(tc_header(hdrs, "Access-Control-Allow-Origin", v, sizeof v));
    free(body);
    free(hdrs);
    st = tu_http(c.port, "OPTIONS", "/api/version", NULL, NULL, 0, &body, NULL);
    assert_int_equal(st, 405);
    free(body);

    assert_int_equal(tu_tsd_stop(&c), 0);
    tu_tsd_destroy(&c);
}

static void test_malformed_request_does_not_crash(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "GARBAGE\r\n\r\n"), 0);
    tc_resp_t *r = malloc(sizeof *r);
    if (tc_read_response(c, r, 3000) == 0) assert_true(r->status >= 400);
    tc_close(c);
    c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "GET /api/version HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n"
                                 "\r\n"),
                     0);
    if (tc_read_response(c, r, 3000) == 0) assert_true(r->status >= 400);
    tc_close(c);
    free(r);
    char *body = NULL;
    assert_int_equal(tu_http(tsd.port, "GET", "/api/version", NULL, NULL, 0, &body, NULL), 200);
    free(body);
}

static void test_query_string_params(void **state)
{
    (void)state;
    /* http_param: last occurrence wins, %XX and '+' decoded -- seen
     * through /api/suggest, whose q and max come from the query string. */
    char *body = NULL;
    int st = tu_http(tsd.port, "GET", "/api/suggest?type=metrics&q=zzz&q=chunk%2Ef&max=5", NULL,
                     NULL, 0, &body, NULL);
    assert_int_equal(st, 200);
    assert_string_equal(body, "[\"chunk.first\"]");
    free(body);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_found_shape),
        cmocka_unit_test(test_options_without_cors_is_405),
        cmocka_unit_test(test_keep_alive),
        cmocka_unit_test(test_pipelined_in_one_write),
        cmocka_unit_test(test_chunked_body),
        cmocka_unit_test(test_gzip_body),
        cmocka_unit_test(test_broken_gzip_is_400),
        cmocka_unit_test(test_gzip_bomb_is_413),
        cmocka_unit_test(test_expect_100_continue),
        cmocka_unit_test(test_body_over_limit_is_413),
        cmocka_unit_test(test_cors),
        cmocka_unit_test(test_malformed_request_does_not_crash),
        cmocka_unit_test(test_query_string_params),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
