/* test_tsd_lifecycle.c -- the daemon's life: the ready line, clean exit on
 * SIGTERM/SIGINT and a restart on the same data dir, and the clear errors
 * for a port already taken, a data dir already in use and an unknown
 * storage backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include "testutil.h"
#include "tsd_client.h"

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static char *suggest(int port, const char *q)
{
    char target[256];
    snprintf(target, sizeof target, "/api/suggest?type=metrics&q=%s", q);
    char *body = NULL;
    assert_int_equal(tu_http(port, "GET", target, NULL, NULL, 0, &body, NULL), 200);
    return body;
}

static void test_ready_sigterm_and_restart(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    static const char *const extra[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    char ready[128];
    snprintf(ready, sizeof ready, "INFO tsd: Ready to serve on 127.0.0.1:%d", t.port);
    for (int i = 0; i < 50 && !tc_log_contains(t.log, ready); i++)
        tc_sleep_ms(20);
    assert_true(tc_log_contains(t.log, ready));

    const char *json = "{\"metric\":\"life.before\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"a\"}}";
    char *body = NULL;
    assert_int_equal(tu_http(t.port, "POST", "/api/put", NULL, json, strlen(json), &body, NULL),
                     204);
    free(body);

    /* A telnet put sent just before SIGTERM is still taken. */
    tc_conn_t *c = tc_open(t.port);
    assert_non_null(c);
    assert_int_equal(tc_sends(c, "put life.telnet 1700000000 1 host=a\n"), 0);
    tc_sleep_ms(100);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tc_close(c);
    assert_true(tc_log_contains(t.log, "Received SIGTERM"));
    assert_true(tc_log_contains(t.log, "INFO tsd: Shutdown complete"));

    assert_int_equal(tu_tsd_start(&t, extra), 0);
    char *s = suggest(t.port, "life.");
    assert_string_equal(s, "[\"life.before\",\"life.telnet\"]");
    free(s);

    /* SIGINT (Ctrl-C in `make run`) is a clean stop too. */
    kill(t.pid, SIGINT);
    int st = 0;
    assert_int_equal(waitpid(t.pid, &st, 0), t.pid);
    t.pid = 0;
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    tu_tsd_destroy(&t);
}

static void test_port_taken(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    char *dir2 = tu_tempdir();
    char port[32], datadir[4200], want[128];
    snprintf(port, sizeof port, "--port=%d", t.port);
    snprintf(datadir, sizeof datadir, "--datadir=%s", dir2);
    const char *args[] = {"--bind=127.0.0.1", port, datadir, NULL};
    char *err = NULL;
    int st = tc_run_tsd_expect_exit(args, &err, 20000);
    assert_true(st > 0);
    snprintf(want, sizeof want, "ERROR tsd: Failed to bind to 127.0.0.1:%d: Address already in use",
             t.port);
    if (!strstr(err, want)) fprintf(stderr, "stderr was: %s\n", err);
    assert_non_null(strstr(err, want));
    free(err);
    /* The first daemon is unharmed. */
    char *body = NULL;
    assert_int_equal(tu_http(t.port, "GET", "/api/version", NULL, NULL, 0, &body, NULL), 200);
    free(body);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
    tu_rmrf(dir2);
    free(dir2);
}

static void test_data_dir_locked(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    char port[32], datadir[4200];
    int p2 = free_port();
    snprintf(port, sizeof port, "--port=%d", p2);
    snprintf(datadir, sizeof datadir, "--datadir=%s", t.dir);
    const char *args[] = {"--bind=127.0.0.1", port, datadir, NULL};
    char *err = NULL;
    int st = tc_run_tsd_expect_exit(args, &err, 20000);
    assert_true(st > 0);
    if (!strstr(err, "locked")) fprintf(stderr, "stderr was: %s\n", err);
    assert_non_null(strstr(err, "ERROR tsd: "));
    assert_non_null(strstr(err, "locked"));
    assert_non_null(strstr(err, t.dir));
    /* It released the port it had bound. */
    int fd = tu_connect(p2);
    assert_true(fd < 0);
    free(err);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

/* An unknown tsd.storage.backend stops the daemon before it touches the data
 * dir, with the key and the known backends in the message. */
static void test_unknown_storage_backend(void **state)
{
    (void)state;
    char *parent = tu_tempdir();
    char port[32], datadir[4300], dir[4200];
    snprintf(port, sizeof port, "--port=%d", free_port());
    snprintf(dir, sizeof dir, "%s/data", parent);
    snprintf(datadir, sizeof datadir, "--datadir=%s", dir);
    const char *args[] = {"--bind=127.0.0.1",        port, datadir, "--set",
                          "tsd.storage.backend=foo", NULL};
    char *err = NULL;
    int st = tc_run_tsd_expect_exit(args, &err, 20000);
    assert_true(st > 0);
    const char *want = "tsd.storage.backend: unknown storage backend 'foo' (known: rocksdb, rados)";
    if (!strstr(err, want)) fprintf(stderr, "stderr was: %s\n", err);
    assert_non_null(strstr(err, "ERROR tsd: "));
    assert_non_null(strstr(err, want));
    struct stat sb;
    assert_int_equal(stat(dir, &sb), -1);
    assert_int_equal(errno, ENOENT);
    free(err);
    tu_rmrf(parent);
    free(parent);
}

/* A telnet connection that answers: proves the daemon accepted and kept it. */
static tc_conn_t *telnet_alive(int port)
{
    tc_conn_t *c = tc_open(port);
    if (!c) return NULL;
    if (tc_sends(c, "nosuch\n") != 0 || tc_read_lines(c, 1, 3000) == 0) {
        tc_close(c);
        return NULL;
    }
    tc_consume(c, c->len);
    return c;
}

static void test_connection_limit(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    static const char *const extra[] = {"--max-connections=2", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    tc_sleep_ms(200); /* the start-up probe's connection is closed and counted out */
    tc_conn_t *a = telnet_alive(t.port), *b = telnet_alive(t.port);
    assert_non_null(a);
    assert_non_null(b);
    /* The third is closed at once (OpenTSDB: tsd.core.connections.limit). */
    tc_conn_t *c = tc_open(t.port);
    assert_non_null(c);
    tc_sends(c, "nosuch\n");
    assert_true(tc_wait_eof(c, 3000));
    tc_close(c);
    /* Closing one makes room again. */
    tc_close(a);
    tc_sleep_ms(200);
    c = telnet_alive(t.port);
    assert_non_null(c);
    tc_close(c);
    tc_close(b);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

static void test_idle_timeout(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    static const char *const extra[] = {"--set", "tsd.core.socket.timeout=1", NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    tc_conn_t *tel = telnet_alive(t.port);
    assert_non_null(tel);
    tc_conn_t *quiet = tc_open(t.port); /* never says anything */
    assert_non_null(quiet);
    tc_conn_t *http = tc_open(t.port);
    assert_non_null(http);
    assert_int_equal(tc_sends(http, "GET /api/version HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
    tc_resp_t *r = malloc(sizeof *r);
    assert_int_equal(tc_read_response(http, r, 3000), 0);
    assert_int_equal(r->status, 200);
    free(r);
    /* All three are closed within a few seconds of silence. */
    assert_true(tc_wait_eof(tel, 4000));
    assert_true(tc_wait_eof(quiet, 4000));
    assert_true(tc_wait_eof(http, 4000));
    tc_close(tel);
    tc_close(quiet);
    tc_close(http);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

static void test_help(void **state)
{
    (void)state;
    char *out = NULL;
    const char *const argv[] = {"tsd", "--help", NULL};
    assert_int_equal(tu_run_octsdb(&out, argv), 0);
    assert_non_null(strstr(out, "usage: octsdb tsd"));
    assert_non_null(strstr(out, "--port"));
    free(out);
    const char *const bad[] = {"tsd", "stray", NULL};
    assert_int_equal(tu_run_octsdb(&out, bad), 2);
    free(out);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_sigterm_and_restart),
        cmocka_unit_test(test_port_taken),
        cmocka_unit_test(test_data_dir_locked),
        cmocka_unit_test(test_unknown_storage_backend),
        cmocka_unit_test(test_connection_limit),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
