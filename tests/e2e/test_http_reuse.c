/* test_http_reuse.c -- what the HTTP transport keeps from one request to
 * the next must not leak into the next one: on ONE keep-alive connection,
 * a short body after a long one (the connection's body buffer is reused),
 * a good gzip body after a corrupt one and a raw-deflate body after a gzip
 * one (the thread's inflater is reset, not rebuilt), a chunked body after
 * sized ones, and three puts pipelined in one write. Each put asks for
 * ?summary, and the expected "success" counts are the numbers of points
 * the test itself wrote into each body. And a bad Content-Length on a
 * later request of a kept-alive connection (sent after the first answer,
 * pipelined behind it, or its header block arriving after its request line)
 * gets exactly one answer, OpenTSDB's error object written out here byte
 * for byte, and then the connection's end. */
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
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

/* Reads fd until EOF (returns 1) or 10 s pass (returns 0); buf gets the
 * bytes, NUL-terminated. */
static int read_to_eof(int fd, char *buf, size_t cap, size_t *len)
{
    *len = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = 10000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) break;
        ssize_t r = recv(fd, buf + *len, cap - 1 - *len, 0);
        if (r <= 0) {
            buf[*len] = '\0';
            return 1; /* EOF (or a reset after the bytes: still the end) */
        }
        *len += (size_t)r;
        if (*len + 1 >= cap) break;
    }
    buf[*len] = '\0';
    return 0;
}

/* A put of one point at 1356998400 + i with value i + 1 (i < 10). */
static const char good_put_fmt[] = "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 79\r\n\r\n"
                                   "{\"metric\":\"reuse.len\",\"timestamp\":135699840%d,\"value\":%"
                                   "d,\"tags\":{\"host\":\"web01\"}}";

/* 2.4's error object for the two cases, as the test expects it on the wire. */
static const char want_400[] =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=UTF-8\r\n"
    "Content-Length: 100\r\nConnection: close\r\n\r\n"
    "{\"error\":{\"code\":400,\"message\":\"Bad Request\","
    "\"details\":\"The Content-Length header is not a number\"}}";
static const char want_413[] =
    "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json; charset=UTF-8\r\n"
    "Content-Length: 108\r\nConnection: close\r\n\r\n"
    "{\"error\":{\"code\":413,\"message\":\"Request body too large\","
    "\"details\":\"The Content-Length header is too large\"}}";

/* The good put's answer: 204 with no body; returns its length in buf. */
static size_t good_answer_len(const char *buf)
{
    if (strncmp(buf, "HTTP/1.1 204 ", 13)) fail_msg("expected a 204 first: <%s>", buf);
    const char *e = strstr(buf, "\r\n\r\n");
    assert_non_null(e);
    return (size_t)(e + 4 - buf);
}

static void test_bad_length_on_a_later_request(void **state)
{
    (void)state;
    static char buf[8192];
    size_t len;
    for (int mode = 0; mode < 3; mode++) {
        char good_put[256];
        snprintf(good_put, sizeof good_put, good_put_fmt, mode, mode + 1);
        assert_int_equal(strlen(strchr(good_put, '{')), 79);
        const char *value = mode == 2 ? "99999999999999999999999" : mode ? "-1" : "abc";
        const char *want = mode == 2 ? want_413 : want_400;
        char bad[256];
        snprintf(bad, sizeof bad,
                 "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: %s\r\n\r\n{}", value);
        int fd = tu_connect(tsd.port);
        assert_true(fd >= 0);
        if (mode == 1) { /* pipelined: both in one write */
            char both[512];
            snprintf(both, sizeof both, "%s%s", good_put, bad);
            assert_int_equal(tu_send_all(fd, both, strlen(both)), 0);
        } else {
            assert_int_equal(tu_send_all(fd, good_put, strlen(good_put)), 0);
            size_t n = 0; /* a 204 is its header block */
            while (n < 4 || memcmp(buf + n - 4, "\r\n\r\n", 4))
                if (tu_recv_some(fd, buf + n, 2, 5000) != 1)
                    fail_msg("no answer: <%.*s>", (int)n, buf);
                else
                    n++;
            buf[n] = '\0';
            assert_int_equal(good_answer_len(buf), n);
            if (mode == 0) {
                assert_int_equal(tu_send_all(fd, bad, strlen(bad)), 0);
            } else { /* the request line first, the headers a moment later */
                size_t line = (size_t)(strchr(bad, '\n') + 1 - bad);
                assert_int_equal(tu_send_all(fd, bad, line), 0);
                struct timespec ts = {0, 200 * 1000 * 1000};
                nanosleep(&ts, NULL);
                assert_int_equal(tu_send_all(fd, bad + line, strlen(bad) - line), 0);
            }
        }
        if (!read_to_eof(fd, buf, sizeof buf, &len)) fail_msg("mode %d: no end: <%s>", mode, buf);
        const char *got = buf;
        if (mode == 1) got += good_answer_len(buf);
        assert_string_equal(got, want);
        close(fd);
    }
    /* the TSD serves on, and the good puts were stored */
    char *resp = NULL;
    assert_int_equal(tu_http(tsd.port, "GET",
                             "/api/query?start=1356998400&end=1356998403&m=sum:reuse.len", NULL,
                             NULL, 0, &resp, NULL),
                     200);
    if (!strstr(resp, "\"dps\":{\"1356998400\":1,\"1356998401\":2,\"1356998402\":3}"))
        fail_msg("query answered <%s>", resp);
    free(resp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_connection_many_bodies),
        cmocka_unit_test(test_bad_length_on_a_later_request),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
