/* test_http_reuse.c -- what the HTTP transport keeps from one request to
 * the next must not leak into the next one: on ONE keep-alive connection,
 * a short body after a long one (the connection's body buffer is reused),
 * a good gzip body after a corrupt one and a raw-deflate body after a gzip
 * one (the thread's inflater is reset, not rebuilt), a chunked body after
 * sized ones, and three puts pipelined in one write. Each put asks for
 * ?summary, and the expected "success" counts are the numbers of points
 * the test itself wrote into each body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <zlib.h>

#include "testutil.h"
#include "tsd_client.h"

static tu_tsd_t tsd;

static int setup(void **state)
{
    (void)state;
    memset(&tsd, 0, sizeof tsd);
    static const char *const extra[] = {"--auto-metric", NULL};
    return tu_tsd_start(&tsd, extra);
}

static int teardown(void **state)
{
    (void)state;
    int rc = tu_tsd_stop(&tsd);
    tu_tsd_destroy(&tsd);
    return rc == 0 ? 0 : -1;
}

/* A JSON array of n points of metric m (n distinct timestamps from ts0). */
static size_t points(char *out, size_t cap, const char *m, int n, long ts0)
{
    size_t len = 0;
    len += (size_t)snprintf(out + len, cap - len, "[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len,
                                "%s{\"metric\":\"%s\",\"timestamp\":%ld,\"value\":%d,"
                                "\"tags\":{\"host\":\"web%02d\",\"dc\":\"lga\"}}",
                                i ? "," : "", m, ts0 + i, i, i % 7);
    len += (size_t)snprintf(out + len, cap - len, "]");
    assert_true(len < cap);
    return len;
}

/* Sends one POST /api/put?summary with the given extra headers. */
static void post(tc_conn_t *c, const char *enc, const void *body, size_t n)
{
    char head[512];
    snprintf(head, sizeof head,
             "POST /api/put?summary HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "%s%s%sContent-Length: %zu\r\n\r\n",
             enc ? "Content-Encoding: " : "", enc ? enc : "", enc ? "\r\n" : "", n);
    assert_int_equal(tc_sends(c, head), 0);
    assert_int_equal(tc_send(c, body, n), 0);
}

static void expect(tc_conn_t *c, tc_resp_t *r, int status, int success)
{
    assert_int_equal(tc_read_response(c, r, 10000), 0);
    assert_int_equal(r->status, status);
    if (success >= 0) {
        char want[64];
        snprintf(want, sizeof want, "{\"success\":%d,\"failed\":0}", success);
        assert_string_equal(r->body, want);
    }
}

static void test_one_connection_many_bodies(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    tc_resp_t *r = malloc(sizeof *r);
    static char json[1 << 16];
    static uint8_t z[1 << 16];

    /* long, then short: a stale tail of the long body would be trailing
     * garbage after the short one's ']' */
    size_t n = points(json, sizeof json, "reuse.a", 200, 1356998400);
    post(c, NULL, json, n);
    expect(c, r, 200, 200);
    n = points(json, sizeof json, "reuse.a", 1, 1356999400);
    post(c, NULL, json, n);
    expect(c, r, 200, 1);

    /* corrupt gzip (half the stream), then good gzip, raw deflate, gzip */
    n = points(json, sizeof json, "reuse.b", 30, 1356998400);
    size_t zn = tc_deflate(json, n, z, sizeof z, 15 + 16);
    post(c, "gzip", z, zn / 2);
    expect(c, r, 400, -1);
    assert_non_null(strstr(r->body, "\"code\":400"));
    post(c, "gzip", z, zn);
    expect(c, r, 200, 30);
    n = points(json, sizeof json, "reuse.b", 7, 1356999400);
    zn = tc_deflate(json, n, z, sizeof z, -15); /* raw deflate, no zlib header */
    post(c, "deflate", z, zn);
    expect(c, r, 200, 7);
    n = points(json, sizeof json, "reuse.b", 3, 1357000400);
    zn = tc_deflate(json, n, z, sizeof z, 15 + 16);
    post(c, "gzip", z, zn);
    expect(c, r, 200, 3);

    /* chunked after sized bodies: two chunks */
    n = points(json, sizeof json, "reuse.c", 5, 1356998400);
    char head[256];
    snprintf(head, sizeof head,
             "POST /api/put?summary HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
             "%zx\r\n",
             n / 2);
    assert_int_equal(tc_sends(c, head), 0);
    assert_int_equal(tc_send(c, json, n / 2), 0);
    snprintf(head, sizeof head, "\r\n%zx\r\n", n - n / 2);
    assert_int_equal(tc_sends(c, head), 0);
    assert_int_equal(tc_send(c, json + n / 2, n - n / 2), 0);
    assert_int_equal(tc_sends(c, "\r\n0\r\n\r\n"), 0);
    expect(c, r, 200, 5);

    /* three puts in one write, answered in order */
    static char three[3 << 14];
    size_t tl = 0;
    int counts[3] = {4, 60, 2};
    for (int k = 0; k < 3; k++) {
        n = points(json, sizeof json, "reuse.d", counts[k], 1356998400 + 1000L * k);
        tl += (size_t)snprintf(three + tl, sizeof three - tl,
                               "POST /api/put?summary HTTP/1.1\r\nHost: x\r\n"
                               "Content-Length: %zu\r\n\r\n",
                               n);
        assert_true(tl + n < sizeof three);
        memcpy(three + tl, json, n);
        tl += n;
    }
    assert_int_equal(tc_send(c, three, tl), 0);
    for (int k = 0; k < 3; k++)
        expect(c, r, 200, counts[k]);

    /* and a plain put still answers 204 with no body */
    n = points(json, sizeof json, "reuse.e", 2, 1356998400);
    snprintf(head, sizeof head, "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n",
             n);
    assert_int_equal(tc_sends(c, head), 0);
    assert_int_equal(tc_send(c, json, n), 0);
    expect(c, r, 204, -1);
    assert_int_equal(r->body_len, 0);

    free(r);
    tc_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_connection_many_bodies),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
