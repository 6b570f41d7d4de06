/* test_metrics.c -- /metrics against the real daemon: the output is parsed
 * by a small parser of Prometheus' text format written here (HELP/TYPE
 * lines, families contiguous, sample syntax, counters ending in _total), its
 * values are checked against what the test itself sent (points, series,
 * UIDs, connections, errors, as deltas from a first scrape), and every
 * /api/stats entry has exactly one sample with the same value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

/* ---- a parser of the text exposition format --------------------------- */

#define MAX_SAMPLES 128

typedef struct {
    char name[128];
    char labels[128]; /* the text between the braces, "" if none */
    double value;
} sample_t;

typedef struct {
    char name[128];
    char type[16];
    int help;
} family_t;

typedef struct {
    sample_t s[MAX_SAMPLES];
    size_t n;
    family_t f[MAX_SAMPLES];
    size_t nf;
} scrape_t;

static int valid_name(const char *p, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)p[0]) || p[0] == '_' || p[0] == ':')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)p[i]) || p[i] == '_' || p[i] == ':')) return 0;
    return 1;
}

static family_t *family(scrape_t *sc, const char *name, size_t n)
{
    for (size_t i = 0; i < sc->nf; i++)
        if (strlen(sc->f[i].name) == n && !memcmp(sc->f[i].name, name, n)) return &sc->f[i];
    return NULL;
}

/* Parses text into sc, failing the test on any violation of the format. */
static void parse_scrape(const char *text, scrape_t *sc)
{
    memset(sc, 0, sizeof *sc);
    const family_t *current = NULL; /* family of the last sample */
    const char *p = text;
    int line_no = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (!eol) fail_msg("line %d: not terminated by a newline", line_no + 1);
        line_no++;
        size_t len = (size_t)(eol - p);
        char line[512];
        if (len >= sizeof line) fail_msg("line %d too long", line_no);
        memcpy(line, p, len);
        line[len] = '\0';
        p = eol + 1;
        if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
            char *name = line + 7, *sp = strchr(name, ' ');
            if (!sp || !valid_name(name, (size_t)(sp - name)))
                fail_msg("line %d: bad metric name: %s", line_no, line);
            family_t *f = family(sc, name, (size_t)(sp - name));
            if (!f) {
                assert_true(sc->nf < MAX_SAMPLES);
                f = &sc->f[sc->nf++];
                memcpy(f->name, name, (size_t)(sp - name));
            } else if (f == current || (line[2] == 'T' && f->type[0]) ||
                       (line[2] == 'H' && f->help)) {
                fail_msg("line %d: second %.4s line for %s", line_no, line + 2, f->name);
            }
            for (size_t i = 0; i < sc->n; i++)
                if (!strcmp(sc->s[i].name, f->name))
                    fail_msg("line %d: %s's HELP/TYPE after its samples", line_no, f->name);
            if (line[2] == 'H') {
                f->help = 1;
            } else {
                snprintf(f->type, sizeof f->type, "%s", sp + 1);
                if (strcmp(f->type, "counter") && strcmp(f->type, "gauge"))
                    fail_msg("line %d: type '%s'", line_no, f->type);
            }
            continue;
        }
        if (line[0] == '#' || line[0] == '\0') continue;
        assert_true(sc->n < MAX_SAMPLES);
        sample_t *s = &sc->s[sc->n++];
        size_t nl = strcspn(line, "{ ");
        if (!valid_name(line, nl) || nl >= sizeof s->name)
            fail_msg("line %d: bad sample name: %s", line_no, line);
        memcpy(s->name, line, nl);
        char *q = line + nl;
        if (*q == '{') {
            char *close = strchr(q, '}');
            if (!close) fail_msg("line %d: unclosed labels", line_no);
            /* each label: name="value" (no escapes expected in our labels) */
            for (char *l = q + 1; l < close;) {
                size_t ln = strcspn(l, "=");
                if (!valid_name(l, ln) || l[ln + 1] != '"')
                    fail_msg("line %d: bad label: %s", line_no, line);
                char *endq = strchr(l + ln + 2, '"');
                if (!endq || endq > close) fail_msg("line %d: bad label value", line_no);
                l = endq + 1;
                if (*l == ',') l++;
            }
            memcpy(s->labels, q + 1, (size_t)(close - q - 1));
            q = close + 1;
        }
        if (*q != ' ') fail_msg("line %d: no space before the value: %s", line_no, line);
        char *end;
        s->value = strtod(q + 1, &end);
        if (end == q + 1 || (*end && *end != ' '))
            fail_msg("line %d: bad value: %s", line_no, line);
        const family_t *f = family(sc, s->name, strlen(s->name));
        if (!f || !f->type[0] || !f->help)
            fail_msg("line %d: %s has no HELP/TYPE", line_no, s->name);
        if (current && f != current) {
            for (size_t i = 0; i + 1 < sc->n; i++)
                if (!strcmp(sc->s[i].name, f->name))
                    fail_msg("line %d: family %s is split", line_no, f->name);
        }
        current = f;
        size_t sl = strlen(s->name);
        int total = sl > 6 && !strcmp(s->name + sl - 6, "_total");
        if ((strcmp(f->type, "counter") == 0) != total)
            fail_msg("line %d: %s is a %s", line_no, s->name, f->type);
    }
}

/* The sample name{labels}; fails if absent. */
static double get(const scrape_t *sc, const char *name, const char *labels)
{
    for (size_t i = 0; i < sc->n; i++)
        if (!strcmp(sc->s[i].name, name) && !strcmp(sc->s[i].labels, labels)) return sc->s[i].value;
    fail_msg("no sample %s{%s}", name, labels);
    return 0;
}

static int n_http; /* HTTP requests this test made to the daemon */

static void scrape(const tu_tsd_t *t, scrape_t *sc)
{
    char *body = NULL, *hdrs = NULL;
    int st = tu_http(t->port, "GET", "/metrics", NULL, NULL, 0, &body, &hdrs);
    n_http++;
    if (st != 200) fail_msg("GET /metrics: %d %s", st, body ? body : "");
    if (!strstr(hdrs, "Content-Type: text/plain; version=0.0.4"))
        fail_msg("GET /metrics content type: %s", hdrs);
    parse_scrape(body, sc);
    free(body);
    free(hdrs);
}

static void metrics_count_what_was_done(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    time_t started = time(NULL);
    assert_int_equal(tu_tsd_start(&t, (const char *const[]){"--auto-metric", NULL}), 0);
    scrape_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    scrape(&t, a);

    /* One telnet connection: 4 points in 3 series, then a bad value whose
     * error reply shows every earlier line was taken. */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *lines = "put m.cpu 1356998400 1 host=a\n"
                        "put m.cpu 1356998460 2 host=a\n"
                        "put m.cpu 1356998400 3 host=b\n"
                        "put m.mem 1356998400 4 host=a\n"
                        "put m.mem 1356998400 abc host=a\n";
    assert_int_equal(tu_send_all(fd, lines, strlen(lines)), 0);
    char reply[512];
    tu_recv_some(fd, reply, sizeof reply, 2000);
    assert_non_null(strstr(reply, "invalid value"));
    close(fd);
    /* HTTP: 3 points, one of them in a new series (m.mem host=c). */
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/put?sync=true",
                            "[{\"metric\":\"m.mem\",\"timestamp\":1356998460,\"value\":5,"
                            "\"tags\":{\"host\":\"a\"}},"
                            "{\"metric\":\"m.mem\",\"timestamp\":1356998400,\"value\":6,"
                            "\"tags\":{\"host\":\"c\"}},"
                            "{\"metric\":\"m.cpu\",\"timestamp\":1356998460,\"value\":7,"
                            "\"tags\":{\"host\":\"b\"}}]",
                            &r),
                     204);
    free(r);
    n_http++;

    /* Telnet points are counted once the write path took them: wait. */
    for (int i = 0; i < 100; i++) {
        scrape(&t, b);
        if (get(b, "octsdb_datapoints_added_total", "type=\"all\"") -
                get(a, "octsdb_datapoints_added_total", "type=\"all\"") >=
            7)
            break;
        usleep(50 * 1000);
    }
#define DELTA(name, labels) (get(b, name, labels) - get(a, name, labels))
    assert_int_equal(DELTA("octsdb_datapoints_added_total", "type=\"all\""), 7);
    assert_int_equal(DELTA("octsdb_rpc_received_total", "type=\"put\""), 5 + 3);
    assert_int_equal(DELTA("octsdb_rpc_received_total", "type=\"telnet\""), 5);
    assert_int_equal(DELTA("octsdb_rpc_errors_total", "type=\"invalid_values\""), 1);
    assert_int_equal(DELTA("octsdb_connectionmgr_connections_total", "type=\"telnet\""), 1);
    assert_int_equal(DELTA("octsdb_connectionmgr_connections_total", "type=\"total\""), n_http);
    assert_int_equal(get(b, "octsdb_uid_cache_size", "kind=\"metrics\""), 2);
    assert_int_equal(DELTA("octsdb_rpc_exceptions_total", ""), 0);
    /* every HTTP request since the first scrape, the last scrape included */
    assert_int_equal(DELTA("octsdb_connectionmgr_connections_total", "type=\"http\""), n_http - 1);
    assert_int_equal(DELTA("octsdb_rpc_received_total", "type=\"http\""), n_http - 1);
    assert_int_equal(DELTA("octsdb_series_created_total", ""), 4);
    assert_int_equal(get(b, "octsdb_series_active", ""), 4);
    assert_int_equal(get(b, "octsdb_uid_ids_used", "kind=\"metrics\""), 2);
    assert_int_equal(get(b, "octsdb_uid_ids_used", "kind=\"tagk\""), 1);
    assert_int_equal(get(b, "octsdb_uid_ids_used", "kind=\"tagv\""), 3);
    /* 3-byte UIDs: 2^24 - 1 ids, 2 used */
    assert_int_equal(get(b, "octsdb_uid_ids_available", "kind=\"metrics\""), 16777215 - 2);
    assert_true(get(b, "octsdb_connectionmgr_connections", "type=\"open\"") >= 1);
    double up = get(b, "octsdb_uptime_seconds", "");
    assert_true(up >= 0 && up <= (double)(time(NULL) - started) + 1);

    /* Every /api/stats entry is one sample of /metrics with its value;
     * those that the second request itself moves may have grown. */
    json_arena_t ar = JSON_ARENA_INIT;
    assert_int_equal(ac_req(&t, "GET", "/api/stats", NULL, &r), 200);
    scrape(&t, b);
    json_value_t *v;
    oct_errbuf_t eb;
    assert_int_equal(json_parse(&ar, r, strlen(r), 0, &v, &eb), 0);
    size_t n_stats = 0;
    for (json_value_t *e = v->child; e; e = e->next, n_stats++) {
        json_value_t *m = json_obj_get(e, "metric"), *val = json_obj_get(e, "value"),
                     *tags = json_obj_get(e, "tags");
        char metric[128], name[160], labels[128] = "";
        snprintf(metric, sizeof metric, "%.*s", (int)m->len, m->str);
        assert_memory_equal(metric, "tsd.", 4);
        size_t k = (size_t)snprintf(name, sizeof name, "octsdb_");
        for (const char *c = metric + 4; *c; c++)
            name[k++] = (*c == '.' || *c == '-') ? '_' : *c;
        name[k] = '\0';
        for (json_value_t *tg = tags->child; tg; tg = tg->next)
            if (!(tg->key_len == 4 && !memcmp(tg->key, "host", 4)))
                snprintf(labels, sizeof labels, "%.*s=\"%.*s\"", (int)tg->key_len, tg->key,
                         (int)tg->len, tg->str);
        /* a counter ends in _total; a gauge does not; uptime is in seconds */
        char counter[170], gauge[170];
        snprintf(counter, sizeof counter, "%s_total", name);
        snprintf(gauge, sizeof gauge, "%s%s", name,
                 !strcmp(metric, "tsd.uptime") ? "_seconds" : "");
        int found = 0;
        double got = 0;
        for (size_t i = 0; i < b->n; i++)
            if ((!strcmp(b->s[i].name, counter) || !strcmp(b->s[i].name, gauge)) &&
                !strcmp(b->s[i].labels, labels)) {
                found++;
                got = b->s[i].value;
            }
        if (found != 1) fail_msg("%s{%s}: %d samples in /metrics", metric, labels, found);
        double want = strtod(val->str, NULL);
        int moves = !strcmp(metric, "tsd.uptime") || strstr(labels, "\"http\"") ||
                    strstr(labels, "\"open\"") || strstr(labels, "\"total\"");
        if (strstr(metric, ".latency_")) continue; /* a percentile may move either way */
        if (moves ? got < want : got != want)
            fail_msg("%s{%s}: /metrics %.0f, /api/stats %.0f", metric, labels, got, want);
    }
    assert_int_equal(b->n, n_stats); /* nothing else */
    assert_true(n_stats > 25);
    free(r);
    json_arena_free(&ar);

    /* GET only; the other verbs are 405. */
    assert_int_equal(ac_req(&t, "POST", "/metrics", "{}", &r), 405);
    free(r);
    free(a);
    free(b);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metrics_count_what_was_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
