/* test_tsd_telnet.c -- the telnet-style side of the TSD's port, end to end:
 * framing (lines split across writes, many per write, CRLF, over-long
 * lines), `exit`, a client that never reads, and telnet and HTTP on the
 * same port. Expected replies are OpenTSDB's texts (docs/telnet.md, Commands). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "testutil.h"
#include "tsd_client.h"

static tu_tsd_t tsd;

/* OpenTSDB's reply to an unknown command (docs/telnet.md, Commands). */
static void unknown_reply(char *out, size_t cap, const char *cmd)
{
    snprintf(out, cap, "unknown command: %s.  Try `help'.\n", cmd);
}

#define TOO_LONG "error: line too long (over 65536 bytes), skipped\n"

static int setup(void **state)
{
    (void)state;
    memset(&tsd, 0, sizeof tsd);
    return tu_tsd_start(&tsd, NULL);
}

static int teardown(void **state)
{
    (void)state;
    int rc = tu_tsd_stop(&tsd);
    tu_tsd_destroy(&tsd);
    return rc == 0 ? 0 : -1;
}

static void test_version_answers_a_line(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "version\n"), 0);
    tc_read_lines(c, 1, 5000);
    /* tcollector only needs a non-empty, newline-terminated answer. */
    assert_true(c->len > 1);
    assert_non_null(strchr(c->buf, '\n'));
    assert_null(strstr(c->buf, "unknown command"));
    tc_close(c);
}

static void test_line_split_across_writes(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "fo"), 0);
    tc_sleep_ms(100);
    assert_int_equal(tc_sends(c, "o1"), 0);
    tc_sleep_ms(100);
    assert_int_equal(tc_sends(c, "\n"), 0);
    tc_read_lines(c, 1, 5000);
    char want[128];
    unknown_reply(want, sizeof want, "foo1");
    assert_string_equal(c->buf, want);
    tc_close(c);
}

static void test_crlf_line_end(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "foo2\r\n"), 0); /* collectd's line end */
    tc_read_lines(c, 1, 5000);
    char want[128];
    unknown_reply(want, sizeof want, "foo2");
    assert_string_equal(c->buf, want);
    tc_close(c);
}

static void test_many_lines_in_one_write(void **state)
{
    (void)state;
    enum { N = 2000 };
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    size_t cap = N * 32, len = 0, wlen = 0, wcap = N * 64;
    char *req = malloc(cap), *want = malloc(wcap);
    for (int i = 0; i < N; i++) {
        char cmd[32];
        snprintf(cmd, sizeof cmd, "cmd%d", i);
        len += (size_t)snprintf(req + len, cap - len, "%s%s", cmd, i % 2 ? "\r\n" : "\n");
        unknown_reply(want + wlen, wcap - wlen, cmd);
        wlen += strlen(want + wlen);
    }
    assert_int_equal(tc_send(c, req, len), 0);
    tc_read_lines(c, N, 5000);
    assert_int_equal(c->len, wlen);
    assert_memory_equal(c->buf, want, wlen);
    free(req);
    free(want);
    tc_close(c);
}

static void test_overlong_line_answered_and_skipped(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    size_t n = 70000;
    char *line = malloc(n + 16);
    memset(line, 'x', n);
    memcpy(line + n, "\nfoo3\n", 7);
    assert_int_equal(tc_send(c, line, n + 6), 0);
    tc_read_lines(c, 2, 5000);
    char want[256];
    snprintf(want, sizeof want, "%s", TOO_LONG);
    unknown_reply(want + strlen(want), sizeof want - strlen(want), "foo3");
    assert_string_equal(c->buf, want);
    tc_consume(c, c->len);

    /* The same, dribbled in pieces: refused once, then usable again. */
    for (int i = 0; i < 7; i++) {
        assert_int_equal(tc_send(c, line, 10000), 0);
        tc_sleep_ms(20);
    }
    assert_int_equal(tc_sends(c, "tail\nfoo4\n"), 0);
    tc_read_lines(c, 2, 5000);
    snprintf(want, sizeof want, "%s", TOO_LONG);
    unknown_reply(want + strlen(want), sizeof want - strlen(want), "foo4");
    assert_string_equal(c->buf, want);
    free(line);
    tc_close(c);
}

static void test_line_at_the_limit_is_accepted(void **state)
{
    (void)state;
    /* 65536 bytes plus CR LF is the longest line taken: it reaches the
     * command parser (an unknown command), not the length check. */
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    size_t n = 65536;
    char *line = malloc(n + 3);
    memset(line, 'y', n);
    memcpy(line + n, "\r\n", 2);
    assert_int_equal(tc_send(c, line, n + 2), 0);
    tc_read_lines(c, 1, 5000);
    assert_true(c->len > 0);
    assert_int_equal(strncmp(c->buf, "unknown command: yyyy", 21), 0);
    assert_null(strstr(c->buf, "line too long"));
    free(line);
    tc_close(c);
}

static void test_exit_closes(void **state)
{
    (void)state;
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "exit\n"), 0);
    assert_true(tc_wait_eof(c, 5000));
    tc_close(c);
}

static void test_eof_after_command_still_answers(void **state)
{
    (void)state;
    /* `echo foo5 | nc -q1 host 4242`: the client half-closes, then reads. */
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "foo5\n"), 0);
    shutdown(c->fd, SHUT_WR);
    tc_read_lines(c, 1, 5000);
    char want[128];
    unknown_reply(want, sizeof want, "foo5");
    assert_string_equal(c->buf, want);
    assert_true(tc_wait_eof(c, 5000));
    tc_close(c);
}

static void test_client_that_never_reads(void **state)
{
    (void)state;
    /* 200,000 replies (~7 MB) for a client that does not read: the daemon
     * must keep serving others and keep only whole lines for it. */
    enum { N = 200000 };
    tc_conn_t *a = tc_open(tsd.port);
    assert_non_null(a);
    size_t cap = (size_t)N * 12, len = 0;
    char *req = malloc(cap);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(req + len, cap - len, "z%d\n", i);
    assert_int_equal(tc_send(a, req, len), 0);
    free(req);

    tc_conn_t *b = tc_open(tsd.port);
    assert_non_null(b);
    assert_int_equal(tc_sends(b, "foo6\n"), 0);
    tc_read_lines(b, 1, 2000);
    char want[128];
    unknown_reply(want, sizeof want, "foo6");
    assert_string_equal(b->buf, want);
    tc_close(b);

    /* Now read what was kept: complete lines, in order, some dropped. */
    size_t total = 0;
    long lines = 0, last = -1;
    int in_order = 1;
    char *carry = calloc(1, 256);
    size_t carry_len = 0;
    while (tc_fill(a, 1500)) {
        char *p = a->buf, *end = a->buf + a->len, *nl;
        while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
            char line[256];
            size_t ll = carry_len + (size_t)(nl - p);
            assert_true(ll < sizeof line);
            memcpy(line, carry, carry_len);
            memcpy(line + carry_len, p, (size_t)(nl - p));
            line[ll] = '\0';
            carry_len = 0;
            long k;
            assert_int_equal(sscanf(line, "unknown command: z%ld.  Try `help'.", &k), 1);
            if (k <= last) in_order = 0;
            last = k;
            lines++;
            p = nl + 1;
        }
        size_t rest = (size_t)(end - p);
        assert_true(carry_len + rest < 256);
        memcpy(carry + carry_len, p, rest);
        carry_len += rest;
        total += a->len;
        a->len = 0;
    }
    free(carry);
    assert_int_equal(carry_len, 0); /* ends on a line boundary */
    assert_true(in_order);
    assert_true(lines > 0);
    assert_true(lines < N); /* replies beyond the cap were dropped */
    (void)total;
    tc_close(a);
}

static void test_http_on_the_same_port(void **state)
{
    (void)state;
    tc_conn_t *t = tc_open(tsd.port);
    assert_non_null(t);
    assert_int_equal(tc_sends(t, "version\n"), 0);
    tc_read_lines(t, 1, 5000);
    assert_true(t->len > 1);

    char *body = NULL, *hdrs = NULL;
    int st = tu_http(tsd.port, "GET", "/api/version", NULL, NULL, 0, &body, &hdrs);
    assert_int_equal(st, 200);
    assert_non_null(body);
    assert_int_equal(body[0], '{');
    assert_non_null(strstr(body, "\"version\""));
    char ct[128];
    assert_true(tc_header(hdrs, "Content-Type", ct, sizeof ct));
    assert_string_equal(ct, "application/json; charset=UTF-8");
    free(body);
    free(hdrs);

    /* The telnet connection opened first is still served. */
    tc_consume(t, t->len);
    assert_int_equal(tc_sends(t, "foo7\n"), 0);
    tc_read_lines(t, 1, 5000);
    char want[128];
    unknown_reply(want, sizeof want, "foo7");
    assert_string_equal(t->buf, want);
    tc_close(t);
}

static void test_idle_connections(void **state)
{
    (void)state;
    /* 1,000 connections that say nothing, then one that works. */
    enum { N = 1000 };
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = tu_connect(tsd.port);
        assert_true(fds[i] >= 0);
    }
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "foo8\n"), 0);
    tc_read_lines(c, 1, 5000);
    char want[128];
    unknown_reply(want, sizeof want, "foo8");
    assert_string_equal(c->buf, want);
    tc_close(c);
    char *body = NULL;
    assert_int_equal(tu_http(tsd.port, "GET", "/api/version", NULL, NULL, 0, &body, NULL), 200);
    free(body);
    for (int i = 0; i < N; i++)
        close(fds[i]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_answers_a_line),
        cmocka_unit_test(test_line_split_across_writes),
        cmocka_unit_test(test_crlf_line_end),
        cmocka_unit_test(test_many_lines_in_one_write),
        cmocka_unit_test(test_overlong_line_answered_and_skipped),
        cmocka_unit_test(test_line_at_the_limit_is_accepted),
        cmocka_unit_test(test_exit_closes),
        cmocka_unit_test(test_eof_after_command_still_answers),
        cmocka_unit_test(test_client_that_never_reads),
        cmocka_unit_test(test_http_on_the_same_port),
        cmocka_unit_test(test_idle_connections),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
