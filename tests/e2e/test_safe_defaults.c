/* test_safe_defaults.c -- the daemon's safe defaults, against the real
 * binary: `diediedie` exists only when tsd.core.enable_diediedie is set
 * (a deviation from OpenTSDB, which has it unless tsd.no_diediedie);
 * deleting through /api/query needs tsd.http.query.allow_delete in every
 * form (DELETE, method_override=delete, a POST body "delete":true -- the
 * last is a deviation too, OpenTSDB deletes unchecked); /s/<file> serves
 * only files under tsd.http.staticroot (path traversal tried every way). Expected texts are the
 * OpenTSDB's (docs/telnet.md Commands, docs/http-api.md Errors and /api/query) or, for octsdb's
 * own behaviour, docs/reliability.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define UNKNOWN_DIE "unknown command: diediedie.  Try `help'.\n"
#define NO_DELETE                                                                                  \
    "{\"error\":{\"code\":400,\"message\":\"Bad request\",\"details\":\"Deleting data is not "     \
    "enabled (tsd.http.query.allow_delete=false)\"}}"
#define NOT_FOUND "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}"

/* line + "\n", then `version`: what preceded the version reply */
static const char *tx(int fd, const char *line)
{
    return tu_telnet_tx(fd, NULL, "%s\n", line);
}

static tu_tsd_t g_t; /* static: the teardown reaches it after a failed assertion */

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    memset(&g_t, 0, sizeof g_t);
    return 0;
}

static void diediedie_off_by_default(void **state)
{
    (void)state;
    assert_int_equal(tu_tsd_start(&g_t, NULL), 0);
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    assert_string_equal(tx(fd, "help"),
                        "available commands: stats dropcaches version exit help put rollup histogram \n");
    assert_string_equal(tx(fd, "diediedie"), UNKNOWN_DIE);
    close(fd);
    /* still serving: a new connection answers, the process is alive */
    fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    assert_string_equal(tx(fd, "dropcaches"), "Caches dropped.\n");
    close(fd);
    assert_int_equal(waitpid(g_t.pid, NULL, WNOHANG), 0);

    /* tsd.no_diediedie still wins over enable_diediedie */
    tu_tsd_destroy(&g_t);
    memset(&g_t, 0, sizeof g_t);
    const char *both[] = {"--set", "tsd.core.enable_diediedie=true", "--set",
                          "tsd.no_diediedie=true", NULL};
    assert_int_equal(tu_tsd_start(&g_t, both), 0);
    fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    assert_string_equal(tx(fd, "diediedie"), UNKNOWN_DIE);
    close(fd);
}

static void diediedie_when_enabled(void **state)
{
    (void)state;
    const char *args[] = {"--set", "tsd.core.enable_diediedie=true", NULL};
    assert_int_equal(tu_tsd_start(&g_t, args), 0);
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    assert_string_equal(
        tx(fd, "help"),
        "available commands: stats dropcaches version exit help put rollup histogram diediedie \n");
    assert_int_equal(tu_send_all(fd, "diediedie\n", 10), 0);
    char buf[256];
    tu_recv_some(fd, buf, sizeof buf, 2000);
    assert_string_equal(buf, "Cleaning up and exiting now.\n");
    close(fd);
    int st = -1;
    for (int i = 0; i < 300 && g_t.pid; i++) { /* 30 s */
        if (waitpid(g_t.pid, &st, WNOHANG) == g_t.pid)
            g_t.pid = 0;
        else
            usleep(100 * 1000);
    }
    assert_int_equal(g_t.pid, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static int http(const char *method, const char *target, const char *body, char **resp)
{
    *resp = NULL;
    int st = tu_http(g_t.port, method, target, body ? "Content-Type: application/json\r\n" : NULL,
                     body, body ? strlen(body) : 0, resp, NULL);
    if (!*resp) *resp = calloc(1, 1);
    return st;
}

static void expect(const char *method, const char *target, const char *body, int want_st,
                   const char *want)
{
    char *r;
    int st = http(method, target, body, &r);
    if (st != want_st || (want && strcmp(r, want)))
        fail_msg("%s %s: got %d <%s>, want %d <%s>", method, target, st, r, want_st,
                 want ? want : "*");
    free(r);
}

#define Q   "/api/query?start=1356998000&end=1356999000&m=sum:safe.m"
#define PUT "{\"metric\":\"safe.m\",\"timestamp\":1356998400,\"value\":42,\"tags\":{\"a\":\"b\"}}"
#define POST_DELETE                                                                                \
    "{\"start\":1356998000,\"end\":1356999000,\"delete\":true,"                                    \
    "\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"safe.m\"}]}"
#define HAS_POINT(r) (strstr((r), "\"1356998400\":42") != NULL)

static void query_delete_needs_allow_delete(void **state)
{
    (void)state;
    const char *args[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&g_t, args), 0);
    expect("POST", "/api/put?sync", PUT, 204, "");
    expect("DELETE", Q, NULL, 400, NO_DELETE);
    expect("GET", Q "&method_override=delete", NULL, 400, NO_DELETE);
    expect("POST", "/api/query", POST_DELETE, 400, NO_DELETE);
    expect("POST", "/api/query?method_override=delete",
           "{\"start\":1356998000,\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"safe.m\"}]}",
           400, NO_DELETE);
    char *r;
    assert_int_equal(http("GET", Q, NULL, &r), 200);
    assert_true(HAS_POINT(r));
    free(r);

    /* allowed: the delete answers the data it removes, then it is gone
     * (also after a restart: nothing comes back from the log) */
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    const char *allow[] = {"--auto-metric", "--set", "tsd.http.query.allow_delete=true", NULL};
    assert_int_equal(tu_tsd_start(&g_t, allow), 0);
    assert_int_equal(http("GET", Q, NULL, &r), 200);
    assert_true(HAS_POINT(r));
    free(r);
    assert_int_equal(http("POST", "/api/query", POST_DELETE, &r), 200);
    assert_true(HAS_POINT(r));
    free(r);
    expect("GET", Q, NULL, 200, "[]");
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    assert_int_equal(tu_tsd_start(&g_t, allow), 0);
    expect("GET", Q, NULL, 200, "[]");
}

/* /s/<file> serves files under tsd.http.staticroot and nothing outside it,
 * however the path is spelled: "..", its percent-encodings, absolute paths,
 * symlinks inside the root pointing out of it. */
static void expect_static(const char *target, int want_st, const char *want_body,
                          const char *want_hdr)
{
    char *r = NULL, *h = NULL;
    int st = tu_http(g_t.port, "GET", target, NULL, NULL, 0, &r, &h);
    if (st != want_st || (want_body && (!r || strcmp(r, want_body))) ||
        (want_hdr && (!h || !strstr(h, want_hdr))) || (r && strstr(r, "outside-secret")) ||
        (r && strstr(r, "root:")))
        fail_msg("GET %s: got %d <%s> <%s>, want %d", target, st, r ? r : "", h ? h : "", want_st);
    free(r);
    free(h);
}

static void static_files_stay_in_root(void **state)
{
    (void)state;
    char *base = tu_tempdir();
    char root[600], p[800], q[800];
    snprintf(root, sizeof root, "%s/root", base);
    assert_int_equal(mkdir(root, 0755), 0);
    snprintf(p, sizeof p, "%s/sub", root);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/outside", base);
    assert_int_equal(mkdir(p, 0755), 0);
    struct {
        const char *rel, *text;
    } files[] = {{"root/index.html", "<html>in-root</html>"},
                 {"root/sub/a.css", "b{}"},
                 {"outside/secret.txt", "outside-secret"}};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", base, files[i].rel);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fputs(files[i].text, f);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/outside/secret.txt", base);
    snprintf(q, sizeof q, "%s/link_out", root);
    assert_int_equal(symlink(p, q), 0);
    snprintf(p, sizeof p, "%s/outside", base);
    snprintf(q, sizeof q, "%s/dirlink", root);
    assert_int_equal(symlink(p, q), 0);
    snprintf(q, sizeof q, "%s/link_in", root);
    assert_int_equal(symlink("index.html", q), 0);
    snprintf(q, sizeof q, "%s/up", root);
    assert_int_equal(symlink("..", q), 0);

    char set[700];
    snprintf(set, sizeof set, "tsd.http.staticroot=%s", root);
    const char *args[] = {"--set", set, NULL};
    assert_int_equal(tu_tsd_start(&g_t, args), 0);

    expect_static("/s/index.html", 200, "<html>in-root</html>",
                  "Content-Type: text/html; charset=UTF-8");
    expect_static("/s/index.html", 200, NULL, "Cache-Control: public, max-age=31536000");
    expect_static("/s/index.html?nocache", 200, NULL, "Cache-Control: no-cache");
    expect_static("/s/sub/a.css", 200, "b{}", "Content-Type: text/css");
    expect_static("/s/link_in", 200, "<html>in-root</html>", NULL);
    const char *refused[] = {
        "/s/link_out",
        "/s/dirlink/secret.txt",
        "/s/up/outside/secret.txt",
        "/s/../outside/secret.txt",
        "/s/sub/../../outside/secret.txt",
        "/s/%2e%2e/outside/secret.txt",
        "/s/%2E%2E%2Foutside%2Fsecret.txt",
        "/s/..%2foutside%2fsecret.txt",
        "/s/sub/../index.html",
        "/s/./index.html",
        "/s//etc/passwd",
        "/s/%2fetc%2fpasswd",
        "/s/../../../../../../etc/passwd",
        "/s/sub",
        "/s/sub/",
        "/s/missing.html",
        "/s/",
        "/../outside/secret.txt",
        "/etc/passwd",
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        expect_static(refused[i], 404, NULL, NULL);
    expect("POST", "/s/index.html", "x", 405, NULL);

    /* without a static root nothing is served */
    tu_tsd_destroy(&g_t);
    memset(&g_t, 0, sizeof g_t);
    assert_int_equal(tu_tsd_start(&g_t, NULL), 0);
    expect_static("/s/index.html", 404, NOT_FOUND, NULL);
    tu_rmrf(base);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(diediedie_off_by_default, teardown),
        cmocka_unit_test_teardown(diediedie_when_enabled, teardown),
        cmocka_unit_test_teardown(query_delete_needs_allow_delete, teardown),
        cmocka_unit_test_teardown(static_files_stay_in_root, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
