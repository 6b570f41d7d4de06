/* test_legacy_routes.c -- 2.4's UI-era routes and jsonp against the real
 * daemon: /q?ascii read by a small copy of check_tsd's parsing and compared
 * with the points this test wrote (and their sums, worked here), /q?json's
 * counters, /q's errors and the gnuplot 501; /logs (the daemon's own start-up
 * lines, newest first, 2.4's tab-separated fields), /stats (the points
 * written), /version and /api/version against git itself; jsonp= on
 * answers and errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

#define T0 1356998400 /* 2013-01-01T00:00:00Z */

/* The data: two hosts, five minutes. web01 integers, web02 doubles chosen
 * to be exact in binary and to print in each of Java's two notations; they
 * are sent as Java prints them (JSON reads "1.0E7" as the number). */
static const int64_t web01[5] = {1, 2, 3, 4, 5};
static const double web02[5] = {0.5, 2.0, 1.0e7, 0.0001220703125, 123.25};
static const char *const web02_text[5] = {"0.5", "2.0", "1.0E7", "1.220703125E-4", "123.25"};

static tu_tsd_t tsd;

static int setup(void **state)
{
    (void)state;
    const char *const extra[] = {"--auto-metric", NULL};
    if (tu_tsd_start(&tsd, extra)) return -1;
    char body[4096];
    size_t n = (size_t)snprintf(body, sizeof body, "[");
    for (int i = 0; i < 5; i++) {
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"metric\":\"sys.load\",\"timestamp\":%d,\"value\":%" PRId64
                              ",\"tags\":{\"host\":\"web01\"}},"
                              "{\"metric\":\"sys.load\",\"timestamp\":%d,\"value\":%s,"
                              "\"tags\":{\"host\":\"web02\"}}",
                              i ? "," : "", T0 + 60 * i, web01[i], T0 + 60 * i, web02_text[i]);
    }
    snprintf(body + n, sizeof body - n, "]");
    char *r;
    int st = ac_req(&tsd, "POST", "/api/put", body, &r);
    free(r);
    return st == 204 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&tsd);
    return 0;
}

/* ---- check_tsd's reading of /q?ascii, in our words: every line is
 * "metric timestamp value tag=value...", split on spaces; the value read as
 * a float; lines that do not split so are skipped. */
typedef struct {
    char metric[64];
    long ts;
    double value;
    char tags[128]; /* the tag words joined by ' ' */
} ck_point_t;

static size_t ck_parse(char *text, ck_point_t *out, size_t cap)
{
    size_t n = 0;
    for (char *line = strtok(text, "\n"); line && n < cap; line = strtok(NULL, "\n")) {
        char *save, *w[3];
        char *first = strtok_r(line, " ", &save);
        w[0] = first;
        w[1] = first ? strtok_r(NULL, " ", &save) : NULL;
        w[2] = w[1] ? strtok_r(NULL, " ", &save) : NULL;
        if (!w[2]) continue;
        ck_point_t *p = &out[n];
        snprintf(p->metric, sizeof p->metric, "%s", w[0]);
        p->ts = strtol(w[1], NULL, 10);
        p->value = strtod(w[2], NULL);
        p->tags[0] = '\0';
        for (char *t; (t = strtok_r(NULL, " ", &save));) {
            if (p->tags[0]) strncat(p->tags, " ", sizeof p->tags - strlen(p->tags) - 1);
            strncat(p->tags, t, sizeof p->tags - strlen(p->tags) - 1);
        }
        n++;
    }
    return n;
}

static char *get_text(const char *target, int want_status)
{
    char *r;
    int st = ac_req(&tsd, "GET", target, NULL, &r);
    if (st != want_status) fail_msg("GET %s: %d <%s>", target, st, r);
    return r;
}

/* GET target (200 expected) parsed as JSON into a; *keep is the text. */
static json_value_t *get_json(const char *target, json_arena_t *a, char **keep)
{
    *keep = get_text(target, 200);
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(a, *keep, strlen(*keep), 0, &v, &eb))
        fail_msg("GET %s: bad JSON %s: %s", target, eb.msg, *keep);
    return v;
}

static void q_ascii_per_host_as_check_tsd_reads_it(void **state)
{
    (void)state;
    char target[256];
    snprintf(target, sizeof target, "/q?start=%d&end=%d&m=sum:sys.load%%7Bhost=*%%7D&ascii",
             T0 - 60, T0 + 600);
    char *r = get_text(target, 200);
    /* the exact text of 2.4: seconds, Java's number forms, the tags */
    char want[2048];
    size_t n = 0;
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "sys.load %d %" PRId64 " host=web01\n",
                              T0 + 60 * i, web01[i]);
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(want + n, sizeof want - n, "sys.load %d %s host=web02\n", T0 + 60 * i,
                              web02_text[i]);
    assert_string_equal(r, want);

    ck_point_t p[16];
    assert_int_equal(ck_parse(r, p, 16), 10);
    for (int i = 0; i < 10; i++) {
        int h = i / 5, k = i % 5;
        assert_string_equal(p[i].metric, "sys.load");
        assert_int_equal(p[i].ts, T0 + 60 * k);
        assert_true(p[i].value == (h ? web02[k] : (double)web01[k]));
        assert_string_equal(p[i].tags, h ? "host=web02" : "host=web01");
    }
    free(r);
}

static void q_ascii_sum_and_json(void **state)
{
    (void)state;
    char target[256];
    snprintf(target, sizeof target, "/q?start=%d&end=%d&m=sum:sys.load&ascii", T0 - 60, T0 + 600);
    char *r = get_text(target, 200);
    ck_point_t p[16];
    assert_int_equal(ck_parse(r, p, 16), 5);
    for (int k = 0; k < 5; k++) { /* same timestamps: no interpolation, a plain sum */
        assert_int_equal(p[k].ts, T0 + 60 * k);
        assert_true(p[k].value == (double)web01[k] + web02[k]);
        assert_string_equal(p[k].tags, ""); /* host was aggregated away */
    }
    free(r);
    /* the window: only the middle three minutes; 2 + 2.0 is a double, and
     * 10000003 is past Java's 1e7 switch to E notation */
    snprintf(target, sizeof target, "/q?start=%d&end=%d&m=sum:sys.load&ascii", T0 + 60, T0 + 180);
    r = get_text(target, 200);
    assert_string_equal(r, "sys.load 1356998460 4.0\nsys.load 1356998520 1.0000003E7\n"
                           "sys.load 1356998580 4.0001220703125\n");
    free(r);

    /* json: plotted = points out (5 summed + 10 per host), points = raw
     * points read (10 + 10), etags = tags aggregated away per m */
    snprintf(target, sizeof target,
             "/q?start=%d&end=%d&m=sum:sys.load&m=sum:sys.load%%7Bhost=*%%7D&json", T0 - 60,
             T0 + 600);
    r = get_text(target, 200);
    const char *want = "{\"plotted\":15,\"points\":20,\"etags\":[[\"host\"],[]],\"timing\":";
    if (strncmp(r, want, strlen(want))) fail_msg("got <%s>", r);
    char *end;
    long timing = strtol(r + strlen(want), &end, 10);
    assert_true(timing >= 0);
    assert_string_equal(end, "}");
    free(r);
}

static void q_errors(void **state)
{
    (void)state;
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&ascii", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>m</code>\"}}");
    AC_EXPECT(&tsd, "GET", "/q?m=sum:sys.load&ascii", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Missing parameter <code>start</code>\"}}");
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&m=sum:no.such&ascii", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"No such name for 'metrics': 'no.such'\"}}");
    /* the HTML page around a graph (no png, ascii or json) is 2.4's UI, not served */
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&m=sum:sys.load", NULL, 501,
              "{\"error\":{\"code\":501,\"message\":\"The graph page is not served\","
              "\"details\":\"Use /q with png, ascii or json, or /api/query; or the UI at /\"}}");
    /* gnuplot options are checked whole before anything runs (2.4's messages) */
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&m=sum:sys.load&png&ylabel=a%22b", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"'ylabel' was invalid. Must satisfy the "
              "pattern [a-zA-Z0-9 \\\\-_]\",\"details\":\"a\\\"b\"}}");
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&m=sum:sys.load&png&yrange=%5B0:1%5D%0Aset", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"'yrange' was invalid. Must be in the "
              "format [min:max].\",\"details\":\"[0:1]\\nset\"}}");
    AC_EXPECT(&tsd, "GET", "/q?start=1h-ago&m=sum:sys.load&png&wxh=99x99", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Parameter wxh too short\","
              "\"details\":\"99x99\"}}");
}

/* Width and height of a PNG from its IHDR chunk (bytes 16..23), after checking the signature
 * and that the first chunk is IHDR; -1 if the bytes are not a PNG. */
static int png_size(const unsigned char *p, size_t n, long *w, long *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 24 || memcmp(p, sig, 8) || memcmp(p + 12, "IHDR", 4)) return -1;
    *w = (long)p[16] << 24 | (long)p[17] << 16 | (long)p[18] << 8 | p[19];
    *h = (long)p[20] << 24 | (long)p[21] << 16 | (long)p[22] << 8 | p[23];
    return 0;
}

static void q_png_drawn_by_gnuplot(void **state)
{
    (void)state;
    static const struct {
        const char *opts;
        long w, h;
    } cases[] = {
        {"&wxh=320x240", 320, 240},
        {"", 1024, 768}, /* 2.4's default size */
        {"&wxh=400x300&yrange=%5B0:20%5D&ylabel=load%20avg&title=Two%20hosts&nokey&ylog"
         "&smooth=csplines&bgcolor=xFFFFEE&fgcolor=x000080&o=&o=axis%20x1y2",
         400, 300},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char target[512];
        snprintf(target, sizeof target, "/q?start=%d&end=%d&m=sum:sys.load&m=max:sys.load&png%s",
                 T0, T0 + 300, cases[i].opts);
        char *body = NULL, *hdrs = NULL;
        int st = tu_http(tsd.port, "GET", target, NULL, NULL, 0, &body, &hdrs);
        if (st != 200) fail_msg("GET %s: %d %s", target, st, body ? body : "");
        assert_non_null(strstr(hdrs, "Content-Type: image/png"));
        const char *cl = strstr(hdrs, "Content-Length: ");
        assert_non_null(cl);
        long w, h;
        assert_int_equal(png_size((const unsigned char *)body, (size_t)atol(cl + 16), &w, &h), 0);
        assert_int_equal(w, cases[i].w);
        assert_int_equal(h, cases[i].h);
        free(body);
        free(hdrs);
    }
}

/* Without gnuplot on the TSD's PATH: 501 naming the package to install. */
static void q_png_without_gnuplot(void **state)
{
    (void)state;
    const char *old = getenv("PATH");
    char *keep = old ? strdup(old) : NULL;
    setenv("PATH", "/nonexistent", 1);
    tu_tsd_t t = {0};
    int rc = tu_tsd_start(&t, (const char *const[]){"--auto-metric", NULL});
    if (keep) setenv("PATH", keep, 1);
    free(keep);
    assert_int_equal(rc, 0);
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/put",
                            "{\"metric\":\"x.m\",\"timestamp\":1356998400,\"value\":1,"
                            "\"tags\":{\"h\":\"a\"}}",
                            &r),
                     204);
    free(r);
    AC_EXPECT(&t, "GET", "/q?start=1356998400&m=sum:x.m&png", NULL, 501,
              "{\"error\":{\"code\":501,\"message\":\"Graphs need gnuplot, which is not "
              "installed\",\"details\":\"Install Debian's gnuplot-nox (apt-get install "
              "gnuplot-nox), or use /q with ascii or json, or /api/query\"}}");
    tu_tsd_destroy(&t);
}

static void logs_text_and_json(void **state)
{
    (void)state;
    time_t now = time(NULL);
    char *r = get_text("/logs", 200);
    /* newest first: "Ready to serve" was logged after "Starting octsdb" */
    char *rd = strstr(r, "Ready to serve on 127.0.0.1:");
    char *st = strstr(r, "Starting octsdb ");
    assert_non_null(rd);
    assert_non_null(st);
    assert_true(rd < st);
    /* the whole line: <secs>\tINFO\t<thread>\ttsd\tReady to serve on <addr> */
    char *bol = rd;
    while (bol > r && bol[-1] != '\n')
        bol--;
    char *f[5];
    char *line = strndup(bol, (size_t)(strchr(rd, '\n') - bol));
    char *save;
    f[0] = strtok_r(line, "\t", &save);
    for (int i = 1; i < 5; i++)
        f[i] = strtok_r(NULL, "\t", &save);
    assert_non_null(f[4]);
    long secs = strtol(f[0], NULL, 10);
    assert_true(secs <= (long)now && secs > (long)now - 120);
    assert_string_equal(f[1], "INFO");
    assert_string_equal(f[3], "tsd");
    char want[64];
    snprintf(want, sizeof want, "Ready to serve on 127.0.0.1:%d", tsd.port);
    assert_string_equal(f[4], want);

    /* ?json: the same lines as strings */
    char *j;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = get_json("/logs?json", &a, &j);
    assert_int_equal(v->type, JSON_ARRAY);
    size_t bl = strlen(bol) - strlen(strchr(rd, '\n'));
    int found = 0;
    for (json_value_t *c = v->child; c; c = c->next)
        found |= c->type == JSON_STRING && c->len == bl && !memcmp(c->str, bol, bl);
    assert_true(found);
    json_arena_free(&a);
    free(line);
    free(j);
    free(r);
}

static void stats_text_and_json(void **state)
{
    (void)state;
    char host[256];
    assert_int_equal(gethostname(host, sizeof host), 0);
    char *r = get_text("/stats", 200);
    /* 10 points written by setup */
    char want[300];
    snprintf(want, sizeof want, " 10 type=all host=%s\n", host);
    char *l = strstr(r, "tsd.datapoints.added ");
    assert_non_null(l);
    char *sp = strchr(l + strlen("tsd.datapoints.added "), ' ');
    assert_non_null(sp);
    if (strncmp(sp, want, strlen(want))) fail_msg("got <%.80s>", l);
    free(r);
    char *j;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = get_json("/stats?json", &a, &j);
    assert_int_equal(v->type, JSON_ARRAY);
    int found = 0;
    want[strlen(want) - 1] = '\0'; /* no '\n' in the JSON strings */
    for (json_value_t *c = v->child; c; c = c->next) {
        if (c->len < 21 || memcmp(c->str, "tsd.datapoints.added ", 21)) continue;
        const char *s = memchr(c->str + 21, ' ', c->len - 21);
        found =
            s && (size_t)(c->str + c->len - s) == strlen(want) && !memcmp(s, want, strlen(want));
    }
    assert_true(found);
    json_arena_free(&a);
    free(j);
}

/* git's own answer in the source tree, or "unknown" as the build says
 * outside a checkout. */
static void git_out(const char *args, char *out, size_t cap)
{
    char src[512], cmd[1024];
    snprintf(src, sizeof src, "%s", __FILE__);
    char *dir = dirname(dirname(dirname(src))); /* tests/e2e/x.c -> the tree */
    snprintf(cmd, sizeof cmd, "git -C '%s' %s 2>/dev/null", dir, args);
    FILE *p = popen(cmd, "r");
    out[0] = '\0';
    if (p) {
        if (!fgets(out, (int)cap, p)) out[0] = '\0';
        pclose(p);
    }
    out[strcspn(out, "\n")] = '\0';
    if (!out[0]) snprintf(out, cap, "unknown");
}

static void version_routes_name_the_revision(void **state)
{
    (void)state;
    /* The binary may predate the checkout's last commit (built, then
     * committed): git is asked about the revision the daemon names, which
     * must be a real commit on this branch, not about HEAD. */
    char head[64], full[64] = "unknown", shrt[64] = "unknown", ts[64] = "0";
    git_out("rev-parse HEAD", head, sizeof head);
    if (strcmp(head, "unknown")) {
        json_arena_t a0 = JSON_ARENA_INIT;
        char *r0;
        json_value_t *v0 = get_json("/api/version", &a0, &r0);
        json_value_t *fr = json_obj_get(v0, "full_revision");
        assert_non_null(fr);
        assert_true(fr->len == 40 && strspn(fr->str, "0123456789abcdef") >= 40);
        char rev[41], args[128], ok[64];
        memcpy(rev, fr->str, 40);
        rev[40] = '\0';
        json_arena_free(&a0);
        free(r0);
        snprintf(args, sizeof args, "merge-base --is-ancestor %s HEAD && echo yes", rev);
        git_out(args, ok, sizeof ok);
        if (strcmp(ok, "yes")) fail_msg("revision %s is not a commit behind HEAD %s", rev, head);
        snprintf(full, sizeof full, "%s", rev);
        snprintf(args, sizeof args, "rev-parse --short=7 %s", rev);
        git_out(args, shrt, sizeof shrt);
        snprintf(args, sizeof args, "log -1 --format=%%ct %s", rev);
        git_out(args, ts, sizeof ts);
    }

    char *r = get_text("/version", 200);
    char want[256];
    snprintf(want, sizeof want, "net.opentsdb.tools octsdb %s built at revision %s (", OCT_VERSION,
             shrt);
    if (strncmp(r, want, strlen(want))) fail_msg("got <%s>, want <%s...>", r, want);
    const char *st = r + strlen(want);
    assert_true(!strncmp(st, "MINT)\nBuilt on ", 15) || !strncmp(st, "MODIFIED)\nBuilt on ", 19));
    assert_int_equal(r[strlen(r) - 1], '\n');
    free(r);

    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = get_json("/api/version", &a, &r);
    assert_true(json_str_eq(json_obj_get(v, "version"), "2.4.1"));
    assert_true(json_str_eq(json_obj_get(v, "full_revision"), full));
    assert_true(json_str_eq(json_obj_get(v, "short_revision"), shrt));
    assert_true(json_str_eq(json_obj_get(v, "timestamp"), ts)); /* Unix seconds, as a string */
    assert_true(json_str_eq(json_obj_get(v, "octsdb_version"), OCT_VERSION));
    json_value_t *d = json_obj_get(v, "octsdb_revision");
    assert_non_null(d);
    if (strcmp(full, "unknown")) /* git describe --always starts with the short hash or a tag */
        assert_true(d->len > 0 && strncmp(d->str, "unknown", d->len));
    json_arena_free(&a);
    /* /version.json and a legacy URI ending in "json" answer the same object */
    char *r2 = get_text("/version.json", 200);
    char *r3 = get_text("/version?json", 200);
    assert_string_equal(r, r2);
    assert_string_equal(r, r3);
    free(r2);
    free(r3);

    /* jsonp wraps it, and errors too (status kept) */
    char *w = get_text("/api/version?jsonp=cb", 200);
    char wrapped[2048];
    snprintf(wrapped, sizeof wrapped, "cb(%s)", r);
    assert_string_equal(w, wrapped);
    free(w);
    free(r);
}

static void jsonp_everywhere(void **state)
{
    (void)state;
    char target[256], wrapped[4096];
    snprintf(target, sizeof target, "/api/query?start=%d&end=%d&m=sum:sys.load", T0 - 60, T0 + 600);
    char *plain = get_text(target, 200);
    strncat(target, "&jsonp=my.fn_1", sizeof target - strlen(target) - 1);
    char *w = get_text(target, 200);
    snprintf(wrapped, sizeof wrapped, "my.fn_1(%s)", plain);
    assert_string_equal(w, wrapped);
    free(w);
    free(plain);
    plain = get_text("/aggregators", 200);
    w = get_text("/aggregators?jsonp=f", 200);
    snprintf(wrapped, sizeof wrapped, "f(%s)", plain);
    assert_string_equal(w, wrapped);
    free(w);
    free(plain);
    AC_EXPECT(&tsd, "GET", "/api/query?m=sum:sys.load&jsonp=f", NULL, 400,
              "f({\"error\":{\"code\":400,\"message\":\"Missing parameter "
              "<code>start</code>\"}})");
    AC_EXPECT(&tsd, "GET", "/api/nothing?jsonp=f", NULL, 404,
              "f({\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}})");
    /* text answers are not JSON: not wrapped */
    w = get_text("/version?jsonp=f", 200);
    assert_true(!strncmp(w, "net.opentsdb.tools octsdb ", 26));
    free(w);
    /* a callback that is not a JavaScript name is refused, not echoed */
    AC_EXPECT(&tsd, "GET", "/api/version?jsonp=alert(1)//", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Invalid jsonp callback name\","
              "\"details\":\"Only letters, digits, '_', '$' and '.' are allowed\"}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(q_ascii_per_host_as_check_tsd_reads_it),
        cmocka_unit_test(q_ascii_sum_and_json),
        cmocka_unit_test(q_errors),
        cmocka_unit_test(q_png_drawn_by_gnuplot),
        cmocka_unit_test(q_png_without_gnuplot),
        cmocka_unit_test(logs_text_and_json),
        cmocka_unit_test(stats_text_and_json),
        cmocka_unit_test(version_routes_name_the_revision),
        cmocka_unit_test(jsonp_everywhere),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
