/* test_auth.c -- optional authentication against the real daemon: every
 * HTTP route of the router's tables and every telnet command, without
 * credentials (401 / an error line), with a read-write credential (served)
 * and with a read-only one (403 / an error line for writes).
 *
 * The expected route table below is written from OpenTSDB 2.4's endpoint list
 * (docs/http-api.md, Endpoints) and
 * the access policy in docs/reliability.md ("Access"), not read from the
 * code: the test first checks that the router's own list (api_route_list)
 * is exactly this table, so a route added later without deciding its
 * access fails here. The credentials' digests were computed with sha256sum:
 *   rw-token-123 (rw), ro-token-456 (ro), alice/s3cret (rw, salt "salt1"),
 *   bob/pw (ro). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/api_int.h"
#include "testutil.h"
#include "tsd_client.h"

#define G API_GET
#define P API_POST
#define U API_PUT
#define D API_DELETE

typedef struct {
    const char *path;
    int legacy;
    unsigned verbs, writes;
} route_t;

static const route_t want_routes[] = {
    {"aggregators", 0, G | P, 0},
    {"annotation", 0, G | P | U | D, P | U | D},
    {"annotation/bulk", 0, P | U | D, P | U | D},
    {"annotations", 0, G | P | U | D, P | U | D},
    {"config", 0, G | P, 0},
    {"config/filters", 0, G | P, 0},
    {"dropcaches", 0, G | D, G | D},
    {"histogram", 0, G | P | U | D, G | P | U | D},
    {"octsdb/compact", 0, P, P},
    {"octsdb/delete", 0, P, P},
    {"octsdb/expire", 0, P, P},
    {"octsdb/flush", 0, P, 0},
    {"octsdb/fsck", 0, P, P},
    {"octsdb/uid/delete", 0, P, P},
    {"octsdb/uid/fsck", 0, P, P},
    {"put", 0, P, P},
    {"query/last", 0, G | P, 0},
    {"rollup", 0, P, P},
    {"search/lookup", 0, G | P, 0},
    {"search/tsmeta", 0, G | P, 0},
    {"search/tsmeta_summary", 0, G | P, 0},
    {"search/tsuids", 0, G | P, 0},
    {"search/uidmeta", 0, G | P, 0},
    {"search/annotation", 0, G | P, 0},
    {"serializers", 0, G | P, 0},
    {"stats", 0, G | P, 0},
    {"stats/query", 0, G | P, 0},
    {"stats/threads", 0, G | P, 0},
    {"stats/jvm", 0, G | P, 0},
    {"suggest", 0, G | P, 0},
    {"uid/assign", 0, G | P, G | P},
    {"uid/rename", 0, G | P, G | P},
    {"uid/tsmeta", 0, G | P | U | D, P | U | D},
    {"uid/uidmeta", 0, G | P | U | D, P | U | D},
    {"version", 0, G | P, 0},
    {"aggregators", 1, G | P, 0},
    {"logs", 1, G | P, 0},
    {"q", 1, G | P, 0},
    {"stats", 1, G | P, 0},
    {"metrics", 1, G, 0},
    {"suggest", 1, G | P, 0},
    {"version", 1, G | P, 0},
    {"version.json", 1, G | P, 0},
};
#define N_ROUTES (sizeof want_routes / sizeof *want_routes)

static const char creds_text[] =
    "token 67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a63 rw\n"
    "token c7cd1ad27b484ef7a21922fb31f179f4448c9b8dd9ca622c6a63c250def477b9 ro\n"
    "basic alice sha256:salt1:347d42a35e134d9e3658c354c6d472514e2b1a2b7fa24e7d4e119c0523505302 rw\n"
    "basic bob 30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ro\n";

#define H_RW       "Authorization: Bearer rw-token-123\r\n"
#define H_RO       "Authorization: Bearer ro-token-456\r\n"
#define H_RW_BASIC "Authorization: Basic YWxpY2U6czNjcmV0\r\n" /* alice:s3cret */
#define H_RO_BASIC "Authorization: Basic Ym9iOnB3\r\n"         /* bob:pw */
#define H_BAD      "Authorization: Bearer rw-token-124\r\n"

typedef struct {
    tu_tsd_t tsd;
    char *dir;
    char creds[512];
} fx_t;

static int start(fx_t *f, const char *const *more)
{
    memset(f, 0, sizeof *f);
    f->dir = tu_tempdir();
    snprintf(f->creds, sizeof f->creds, "%s/credentials", f->dir);
    FILE *fp = fopen(f->creds, "w");
    if (!fp) return -1;
    fputs(creds_text, fp);
    fclose(fp);
    char set[600];
    snprintf(set, sizeof set, "tsd.core.authentication.credentials_file=%s", f->creds);
    const char *args[16] = {"--auto-metric", "--set", "tsd.core.authentication.enable=true",
                            "--set", set};
    int n = 5;
    for (int i = 0; more && more[i] && n < 15; i++)
        args[n++] = more[i];
    args[n] = NULL;
    return tu_tsd_start(&f->tsd, args);
}

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    if (start(f, NULL)) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    tu_tsd_destroy(&f->tsd);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static const char *verb_name(unsigned b)
{
    return b == G ? "GET" : b == P ? "POST" : b == U ? "PUT" : "DELETE";
}

/* status of one request; checks the 401 shape when it is one */
static int req(const fx_t *f, const char *method, const char *target, const char *hdr,
               const char *body)
{
    char *resp = NULL, *hdrs = NULL;
    int st = tu_http(f->tsd.port, method, target, hdr, body, body ? strlen(body) : 0, &resp, &hdrs);
    if (st == 401) {
        if (!resp || strncmp(resp, "{\"error\":{\"code\":401,\"message\":\"Unauthorized\"", 45))
            fail_msg("%s %s: 401 body <%s>", method, target, resp ? resp : "");
        if (!hdrs || !strstr(hdrs, "WWW-Authenticate: Bearer realm=\"octsdb\"") ||
            !strstr(hdrs, "WWW-Authenticate: Basic realm=\"octsdb\""))
            fail_msg("%s %s: no WWW-Authenticate challenges in <%s>", method, target,
                     hdrs ? hdrs : "");
    }
    if (st == 403 && (!resp || strncmp(resp, "{\"error\":{\"code\":403,", 21)))
        fail_msg("%s %s: 403 body <%s>", method, target, resp ? resp : "");
    free(resp);
    free(hdrs);
    return st;
}

static void router_table_is_the_tested_one(void **state)
{
    (void)state;
    api_route_info_t got[64];
    size_t n = api_route_list(got, 64);
    assert_int_equal(n, N_ROUTES);
    for (size_t i = 0; i < N_ROUTES; i++) {
        size_t j = 0;
        while (j < n &&
               (strcmp(got[j].path, want_routes[i].path) || got[j].legacy != want_routes[i].legacy))
            j++;
        if (j == n)
            fail_msg("route %s (legacy %d) missing", want_routes[i].path, want_routes[i].legacy);
        assert_int_equal(got[j].verbs, want_routes[i].verbs);
        if (got[j].write_verbs != want_routes[i].writes)
            fail_msg("route %s: write verbs %u, want %u", want_routes[i].path, got[j].write_verbs,
                     want_routes[i].writes);
    }
}

static void every_http_route(void **state)
{
    fx_t *f = *state;
    for (size_t i = 0; i < N_ROUTES; i++) {
        const route_t *r = &want_routes[i];
        char target[128];
        snprintf(target, sizeof target, "%s%s", r->legacy ? "/" : "/api/", r->path);
        for (unsigned b = G; b <= D; b <<= 1) {
            if (!(r->verbs & b)) continue;
            const char *m = verb_name(b);
            const char *body = b == G ? NULL : "{}";
            int st = req(f, m, target, NULL, body);
            if (st != 401) fail_msg("%s %s without credentials: %d", m, target, st);
            st = req(f, m, target, H_BAD, body);
            if (st != 401) fail_msg("%s %s with a bad token: %d", m, target, st);
            st = req(f, m, target, "Authorization: Basic Ym9iOnB4\r\n", body); /* bob:px */
            if (st != 401) fail_msg("%s %s with a bad password: %d", m, target, st);
            const char *rw[] = {H_RW, H_RW_BASIC};
            for (int k = 0; k < 2; k++) {
                st = req(f, m, target, rw[k], body);
                if (st == 401 || st == 403 || st < 200) fail_msg("%s %s as rw: %d", m, target, st);
            }
            const char *ro[] = {H_RO, H_RO_BASIC};
            for (int k = 0; k < 2; k++) {
                st = req(f, m, target, ro[k], body);
                if (r->writes & b) {
                    if (st != 403) fail_msg("%s %s as ro: %d, want 403", m, target, st);
                } else if (st == 401 || st == 403 || st < 200) {
                    fail_msg("%s %s as ro: %d", m, target, st);
                }
            }
        }
    }
}

/* Paths outside the tables: the query engine's prefix, the 501/400 stubs,
 * unknown paths, static files. All 401 without credentials. */
static void other_paths_and_query_deletes(void **state)
{
    fx_t *f = *state;
    const char *paths[] = {"/api/query",
                           "/api/query/exp",
                           "/api/query/gexp",
                           "/api/uid/other",
                           "/api/nope",
                           "/s/index.html",
                           "/",
                           "/api/v1/version",
                           "/api/v2/version",
                           "/diediedie",
                           "/q"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        assert_int_equal(req(f, "GET", paths[i], NULL, NULL), 401);
        assert_int_equal(req(f, "POST", paths[i], NULL, "{}"), 401);
        int st = req(f, "GET", paths[i], H_RW, NULL);
        if (st == 401 || st == 403) fail_msg("GET %s as rw: %d", paths[i], st);
    }
    /* a put as rw is stored and a ro credential can read it back */
    const char *put = "{\"metric\":\"auth.m\",\"timestamp\":1356998400,\"value\":42,"
                      "\"tags\":{\"a\":\"b\"}}";
    assert_int_equal(req(f, "POST", "/api/put?sync", H_RW, put), 204);
    assert_int_equal(req(f, "POST", "/api/put?sync", H_RO, put), 403);
    char *resp = NULL;
    int st = tu_http(f->tsd.port, "GET", "/api/query?start=1356998000&end=1356999000&m=sum:auth.m",
                     H_RO, NULL, 0, &resp, NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(resp, "\"1356998400\":42"));
    free(resp);

    /* query deletes are writes for a ro credential, whatever the form */
    const char *q = "/api/query?start=1356998000&end=1356999000&m=sum:auth.m";
    char ov[256];
    snprintf(ov, sizeof ov, "%s&method_override=delete", q);
    assert_int_equal(req(f, "DELETE", q, H_RO, NULL), 403);
    assert_int_equal(req(f, "GET", ov, H_RO, NULL), 403);
    const char *pd = "{\"start\":1356998000,\"end\":1356999000,\"delete\":true,"
                     "\"queries\":[{\"aggregator\":\"sum\",\"metric\":\"auth.m\"}]}";
    assert_int_equal(req(f, "POST", "/api/query", H_RO, pd), 403);
    /* rw reaches the handler, which refuses (allow_delete is off): 400 */
    assert_int_equal(req(f, "DELETE", q, H_RW, NULL), 400);
    assert_int_equal(req(f, "POST", "/api/query", H_RW, pd), 400);
    /* method_override on the table's routes counts too */
    assert_int_equal(
        req(f, "GET", "/api/annotation?method_override=delete&start_time=1", H_RO, NULL), 403);
    /* the point survived all of that */
    resp = NULL;
    st = tu_http(f->tsd.port, "GET", q, H_RW, NULL, 0, &resp, NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(resp, "\"1356998400\":42"));
    free(resp);
}

/* ---- telnet -------------------------------------------------------------- */

/* line + "\n", then `version`: what preceded the version reply */
static const char *tx(int fd, const char *line)
{
    return tu_telnet_tx(fd, NULL, "%s\n", line);
}

static int closed_soon(int fd)
{
    char b[256];
    for (int i = 0; i < 100; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0) continue;
        ssize_t r = recv(fd, b, sizeof b, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET)) return 1;
    }
    return 0;
}

#define REQ         ": authentication required: auth <token> | auth <user> <password>\n"
#define DENY        ": permission denied: read-only credential\n"
#define HELP_RW     "available commands: stats dropcaches version exit help put rollup histogram \n"
#define HELP_RO     "available commands: stats dropcaches version exit help \n"
#define STATS       "tsd." /* prefix of the stats reply */
#define UNKNOWN_DIE "unknown command: diediedie.  Try `help'.\n"

/* Every telnet command (docs/telnet.md, Commands, `auth` included) and what each session
 * state gets. version and exit are checked separately (tx uses version). */
static const struct {
    const char *line;
    const char *unauth, *ro, *rw;
} telnet_cmds[] = {
    {"put auth.t 1356998400 7 a=b", "put" REQ, "put" DENY, ""},
    {"stats", "stats" REQ, STATS, STATS},
    {"dropcaches", "dropcaches" REQ, "dropcaches" DENY, "Caches dropped.\n"},
    {"help", "help" REQ, HELP_RO, HELP_RW},
    {"diediedie", "diediedie" REQ, "diediedie" DENY, UNKNOWN_DIE},
    {"nosuchcmd", "nosuchcmd" REQ, "unknown command: nosuchcmd.  Try `help'.\n",
     "unknown command: nosuchcmd.  Try `help'.\n"},
};

static void expect_cmd(int fd, const char *line, const char *want)
{
    const char *got = tx(fd, line);
    int ok = !strcmp(want, STATS) ? !strncmp(got, STATS, 4) : !strcmp(got, want);
    if (!ok) fail_msg("<%s>: got <%s>, want <%s>", line, got, want);
}

static void every_telnet_command(void **state)
{
    fx_t *f = *state;
    /* the commands a rw session lists are exactly the table's (+ version, exit) */
    int fd = tu_connect(f->tsd.port);
    assert_true(fd >= 0);
    for (int role = 0; role < 3; role++) {
        if (role == 1) assert_string_equal(tx(fd, "auth bob pw"), "auth: ok ro\n");
        if (role == 2) assert_string_equal(tx(fd, "auth rw-token-123"), "auth: ok rw\n");
        for (size_t i = 0; i < sizeof telnet_cmds / sizeof *telnet_cmds; i++)
            expect_cmd(fd, telnet_cmds[i].line,
                       role == 0   ? telnet_cmds[i].unauth
                       : role == 1 ? telnet_cmds[i].ro
                                   : telnet_cmds[i].rw);
    }
    /* the rw put was stored; the unauthenticated and ro ones were not */
    char *resp = NULL;
    int st = tu_http(f->tsd.port, "GET", "/api/query?start=1356998000&end=1356999000&m=sum:auth.t",
                     H_RW, NULL, 0, &resp, NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(resp, "\"1356998400\":7"));
    free(resp);
    /* a failed auth drops the session back to unauthenticated */
    assert_string_equal(tx(fd, "auth wrong"), "auth: invalid credentials\n");
    expect_cmd(fd, "stats", "stats" REQ);
    assert_string_equal(tx(fd, "auth"), "auth: usage: auth <token> | auth <user> <password>\n");
    assert_string_equal(tx(fd, "auth a b c"),
                        "auth: usage: auth <token> | auth <user> <password>\n");
    assert_string_equal(tx(fd, "auth alice s3cret"), "auth: ok rw\n");
    assert_string_equal(tx(fd, "auth ro-token-456"), "auth: ok ro\n");
    /* exit works in every state */
    assert_int_equal(tu_send_all(fd, "exit\n", 5), 0);
    assert_true(closed_soon(fd));
    close(fd);

    fd = tu_connect(f->tsd.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, "exit\n", 5), 0);
    assert_true(closed_soon(fd));
    close(fd);

    /* three failed attempts close the connection */
    fd = tu_connect(f->tsd.port);
    assert_true(fd >= 0);
    assert_string_equal(tx(fd, "auth x"), "auth: invalid credentials\n");
    assert_string_equal(tx(fd, "auth bob px"), "auth: invalid credentials\n");
    assert_int_equal(tu_send_all(fd, "auth y\n", 7), 0);
    assert_true(closed_soon(fd));
    close(fd);
}

/* the daemons of the two tests below: static, so that the teardown stops
 * them after a failed assertion */
static tu_tsd_t g_lone;

static int teardown_lone(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_lone);
    memset(&g_lone, 0, sizeof g_lone);
    return 0;
}

/* Enabled without a usable credentials file: the daemon does not start,
 * and its log names the key and says what is wrong (it used to start and
 * refuse every client, reading the file at the first connection). */
static void bad_credentials_stop_startup(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char bad[4200], empty[4200], setbad[4300], setempty[4300];
    snprintf(bad, sizeof bad, "%s/bad-creds", dir);
    snprintf(empty, sizeof empty, "%s/empty-creds", dir);
    FILE *fp = fopen(bad, "w");
    assert_non_null(fp);
    /* line 2: a digest that is not 64 hex digits */
    fputs("# collectors\ntoken 1234 rw\n", fp);
    fclose(fp);
    fp = fopen(empty, "w");
    assert_non_null(fp);
    fputs("# nothing yet\n", fp);
    fclose(fp);
    snprintf(setbad, sizeof setbad, "tsd.core.authentication.credentials_file=%s", bad);
    snprintf(setempty, sizeof setempty, "tsd.core.authentication.credentials_file=%s", empty);
    static const char key[] = "tsd.core.authentication.credentials_file";
    const struct {
        const char *set; /* the credentials_file setting, NULL = unset */
        const char *want1, *want2;
    } cases[] = {
        {"tsd.core.authentication.credentials_file=/nonexistent/creds", "/nonexistent/creds",
         "No such file"},
        {NULL, "is not set", "tsd.core.authentication.enable"},
        {setbad, bad, ": 2: "},
        {setempty, empty, "holds no credentials"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[6] = {"--set", "tsd.core.authentication.enable=true", NULL, NULL, NULL};
        if (cases[i].set) {
            args[2] = "--set";
            args[3] = cases[i].set;
        }
        tu_tsd_t t = {0};
        if (tu_tsd_start(&t, args) != -1) fail_msg("case %zu: the daemon started", i);
        if (!tc_log_contains(t.log, key) || !tc_log_contains(t.log, cases[i].want1) ||
            !tc_log_contains(t.log, cases[i].want2))
            fail_msg("case %zu: the log does not name %s, '%s' and '%s'", i, key, cases[i].want1,
                     cases[i].want2);
        if (tc_log_contains(t.log, "Ready to serve")) fail_msg("case %zu: it served", i);
        tu_tsd_destroy(&t);
    }
    tu_rmrf(dir);
    free(dir);
}

/* off by default: no credentials needed, `auth` is an unknown command */
static void off_by_default(void **state)
{
    (void)state;
    const char *args[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&g_lone, args), 0);
    char *resp = NULL;
    assert_int_equal(tu_http(g_lone.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 200);
    free(resp);
    assert_int_equal(tu_http(g_lone.port, "POST", "/api/put?sync", NULL,
                             "{\"metric\":\"m\",\"timestamp\":1356998400,\"value\":1,"
                             "\"tags\":{\"a\":\"b\"}}",
                             64, &resp, NULL),
                     204);
    free(resp);
    int fd = tu_connect(g_lone.port);
    assert_true(fd >= 0);
    assert_string_equal(tx(fd, "auth rw-token-123"), "unknown command: auth.  Try `help'.\n");
    assert_string_equal(tx(fd, "put m 1356998401 2 a=b"), "");
    assert_string_equal(tx(fd, "help"), HELP_RW);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(router_table_is_the_tested_one),
        cmocka_unit_test_setup_teardown(every_http_route, setup, teardown),
        cmocka_unit_test_setup_teardown(other_paths_and_query_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(every_telnet_command, setup, teardown),
        cmocka_unit_test(bad_credentials_stop_startup),
        cmocka_unit_test_teardown(off_by_default, teardown_lone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
