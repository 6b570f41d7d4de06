/* test_query_exp.c -- /api/query/exp and /api/query/gexp against the real
 * daemon (docs/expressions.md): joins (union, intersection), fill policies,
 * nested expressions, outputs and their meta, timeOffset; every gexp
 * function; the errors of both endpoints.
 *
 * The test writes a small data set (below) and computes every expected
 * value from those points with its own model: the union of the
 * expression's timestamps, each input taken at that timestamp or its fill
 * (docs/expressions.md section 3), and the function's arithmetic worked in
 * plain C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

#define T0 1356998400LL /* 2013-01-01 00:00:00 UTC */

/* ---- the data set and the model ------------------------------------------------ */

typedef struct {
    const char *metric, *host;
    size_t n;
    int64_t ts[8]; /* seconds */
    double v[8];
} ser_t;

/* xa: h1 1..6 every minute; h2 -10..-60 every minute; h3 one point.
 * xb: h1 at the half minutes plus one on the minute; h2 doubles every
 * minute; h4 one point. xc: an hour before T0 (for the time shifts). */
static const ser_t data[] = {
    {"xa", "h1", 6, {T0, T0 + 60, T0 + 120, T0 + 180, T0 + 240, T0 + 300}, {1, 2, 3, 4, 5, 6}},
    {"xa",
     "h2",
     6,
     {T0, T0 + 60, T0 + 120, T0 + 180, T0 + 240, T0 + 300},
     {-10, -20, -30, -40, -50, -60}},
    {"xa", "h3", 1, {T0 + 120}, {7}},
    {"xb",
     "h1",
     6,
     {T0 + 30, T0 + 90, T0 + 120, T0 + 150, T0 + 210, T0 + 270},
     {100, 101, 50, 102, 103, 104}},
    {"xb",
     "h2",
     6,
     {T0, T0 + 60, T0 + 120, T0 + 180, T0 + 240, T0 + 300},
     {0, 0.5, 1, 1.5, 2, 2.5}},
    {"xb", "h4", 1, {T0 + 300}, {9}},
    {"xc", "h1", 3, {T0 - 3600, T0 - 3540, T0 - 3480}, {1, 2, 3}},
};
#define N_DATA (sizeof data / sizeof *data)

static const ser_t *find(const char *metric, const char *host)
{
    for (size_t i = 0; i < N_DATA; i++)
        if (!strcmp(data[i].metric, metric) && !strcmp(data[i].host, host)) return &data[i];
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every timestamp of the metrics named (all their series), sorted, distinct. */
static size_t union_ts(const char *m1, const char *m2, int64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < N_DATA; i++)
        if (!strcmp(data[i].metric, m1) || (m2 && !strcmp(data[i].metric, m2)))
            for (size_t k = 0; k < data[i].n; k++)
                out[n++] = data[i].ts[k];
    qsort(out, n, sizeof *out, cmp_i64);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (!u || out[u - 1] != out[k]) out[u++] = out[k];
    return u;
}

static double at(const ser_t *s, int64_t ts, double fill)
{
    for (size_t k = 0; s && k < s->n; k++)
        if (s->ts[k] == ts) return s->v[k];
    return fill;
}

typedef double (*op_fn)(double a, double b);
static double op_exp1(double a, double b)
{
    return a * 2 + b;
}
static double op_sub(double a, double b)
{
    return a - b;
}
static double op_add(double a, double b)
{
    return a + b;
}
static double op_mul(double a, double b)
{
    return a * b;
}
static double op_div(double a, double b)
{
    return b == 0 ? 0 : a / b; /* division by zero is 0, docs/expressions.md section 2 */
}

/* The expected series of "f(a, b)" for one host: rows at every timestamp of
 * both metrics, inputs filled. */
static size_t model(const char *ma, const char *mb, const char *host, op_fn f, double fa, double fb,
                    int64_t *ts, double *v)
{
    size_t n = union_ts(ma, mb, ts);
    for (size_t k = 0; k < n; k++)
        v[k] = f(at(find(ma, host), ts[k], fa), at(find(mb, host), ts[k], fb));
    return n;
}

/* ---- the daemon ---------------------------------------------------------------- */

static tu_tsd_t tsd;

/* The data set as an /api/put body (free it). */
static char *put_body(void)
{
    oct_strbuf_t b = {0};
    oct_strbuf_puts(&b, "[");
    for (size_t i = 0; i < N_DATA; i++)
        for (size_t k = 0; k < data[i].n; k++) {
            double v = data[i].v[k];
            if (v == floor(v))
                oct_strbuf_printf(&b,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,"
                                  "\"tags\":{\"host\":\"%s\",\"dc\":\"d1\"}}",
                                  b.len > 1 ? "," : "", data[i].metric, (long long)data[i].ts[k],
                                  (long long)v, data[i].host);
            else
                oct_strbuf_printf(&b,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%.17g,"
                                  "\"tags\":{\"host\":\"%s\",\"dc\":\"d1\"}}",
                                  b.len > 1 ? "," : "", data[i].metric, (long long)data[i].ts[k], v,
                                  data[i].host);
        }
    oct_strbuf_puts(&b, "]");
    return b.ptr;
}

static int setup(void **state)
{
    (void)state;
    static const char *const args[] = {"--auto-metric", NULL};
    char *body = put_body();
    int rc = ac_start_put(&tsd, args, body);
    free(body);
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&tsd);
    return 0;
}

/* ---- reading answers ------------------------------------------------------------ */

typedef struct {
    json_arena_t a;
    json_value_t *root;
    char *body;
} doc_t;

static void doc_get(doc_t *d, const char *method, const char *target, const char *body)
{
    memset(d, 0, sizeof *d);
    d->body = ac_req_ok(&tsd, method, target, body, 200);
    oct_errbuf_t eb;
    if (json_parse(&d->a, d->body, strlen(d->body), JSON_ALLOW_NONFINITE, &d->root, &eb))
        fail_msg("%s: %s", eb.msg, d->body);
}

static void doc_free(doc_t *d)
{
    json_arena_free(&d->a);
    free(d->body);
}

static json_value_t *nth(const json_value_t *arr, size_t i)
{
    json_value_t *v = arr ? arr->child : NULL;
    while (v && i--)
        v = v->next;
    return v;
}

static double num(const json_value_t *v)
{
    if (v->type == JSON_STRING && v->len == 3 && !memcmp(v->str, "NaN", 3)) return NAN;
    double d;
    if (v->type != JSON_NUMBER || json_number_double(v, &d)) fail_msg("not a number");
    return d;
}

static int close_to(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* In an /api/query/exp output: the column of the series whose commonTags
 * host is `host` (1-based), or 0. */
static size_t exp_column(const json_value_t *out, const char *host)
{
    const json_value_t *meta = json_obj_get(out, "meta");
    for (size_t i = 1; i < meta->n; i++) {
        const json_value_t *m = nth(meta, i);
        const json_value_t *h = json_obj_get(json_obj_get(m, "commonTags"), "host");
        if (h && json_str_eq(h, host)) return (size_t)num(json_obj_get(m, "index"));
    }
    return 0;
}

/* Checks one column of an exp output against ts (seconds) / v. */
static void check_exp_column(const json_value_t *out, const char *host, const int64_t *ts,
                             const double *v, size_t n)
{
    size_t col = exp_column(out, host);
    if (!col) fail_msg("no series for host %s", host);
    const json_value_t *dps = json_obj_get(out, "dps");
    assert_int_equal(dps->n, n);
    for (size_t k = 0; k < n; k++) {
        const json_value_t *row = nth(dps, k);
        assert_true(num(nth(row, 0)) == (double)ts[k] * 1000);
        double got = num(nth(row, col));
        if (!close_to(got, v[k]))
            fail_msg("host %s row %zu (ts %lld): got %.17g want %.17g", host, k, (long long)ts[k],
                     got, v[k]);
    }
}

/* In a gexp answer: the series whose tags.host (or, with no tags, metric)
 * is `key`, checked against ts (seconds) / v. */
static void check_gexp_series(const json_value_t *arr, const char *key, const int64_t *ts,
                              const double *v, size_t n)
{
    for (const json_value_t *s = arr->child; s; s = s->next) {
        const json_value_t *h = json_obj_get(json_obj_get(s, "tags"), "host");
        if (!(h ? json_str_eq(h, key) : json_str_eq(json_obj_get(s, "metric"), key))) continue;
        const json_value_t *dps = json_obj_get(s, "dps");
        if (dps->n != n) fail_msg("%s: %u points, want %zu", key, dps->n, n);
        size_t k = 0;
        for (const json_value_t *p = dps->child; p; p = p->next, k++) {
            char want[24];
            snprintf(want, sizeof want, "%lld", (long long)ts[k]);
            if (p->key_len != strlen(want) || memcmp(p->key, want, p->key_len))
                fail_msg("%s point %zu: ts %.*s want %s", key, k, (int)p->key_len, p->key, want);
            if (!close_to(num(p), v[k]))
                fail_msg("%s point %zu: got %.17g want %.17g", key, k, num(p), v[k]);
        }
        return;
    }
    fail_msg("no series %s", key);
}

/* ---- /api/query/exp --------------------------------------------------------------- */

#define GEXP     "/api/query/gexp?start=1356998400&end=1356998700&exp="
#define EXP_TIME "\"time\":{\"start\":1356998400,\"end\":1356998700,\"aggregator\":\"sum\"}"
#define EXP_FILTER                                                                                 \
    "\"filters\":[{\"id\":\"f1\",\"tags\":[{\"type\":\"wildcard\",\"tagk\":\"host\","              \
    "\"filter\":\"*\",\"groupBy\":true}]}]"

static void exp_union_with_fills(void **state)
{
    (void)state;
    doc_t d;
    doc_get(
        &d, "POST", "/api/query/exp",
        "{" EXP_TIME "," EXP_FILTER ",\"metrics\":["
        "{\"id\":\"a\",\"metric\":\"xa\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"zero\"}},"
        "{\"id\":\"b\",\"metric\":\"xb\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"scalar\","
        "\"value\":5}}],"
        "\"expressions\":[{\"id\":\"e\",\"expr\":\"a * 2 + b\"}],"
        "\"outputs\":[{\"id\":\"e\",\"alias\":\"twice\"}]}");
    const json_value_t *out = nth(json_obj_get(d.root, "outputs"), 0);
    assert_true(json_str_eq(json_obj_get(out, "id"), "e"));
    assert_true(json_str_eq(json_obj_get(out, "alias"), "twice"));
    /* union: h1, h2, h3 (xa only), h4 (xb only) */
    const json_value_t *meta = json_obj_get(out, "dpsMeta");
    assert_true(num(json_obj_get(meta, "series")) == 4);
    int64_t ts[32];
    double v[32];
    static const char *const hosts[] = {"h1", "h2", "h3", "h4"};
    size_t n = 0;
    for (size_t i = 0; i < 4; i++) {
        n = model("xa", "xb", hosts[i], op_exp1, 0, 5, ts, v);
        check_exp_column(out, hosts[i], ts, v, n);
    }
    assert_true(num(json_obj_get(meta, "setCount")) == (double)n);
    assert_true(num(json_obj_get(meta, "firstTimestamp")) == (double)ts[0] * 1000);
    assert_true(num(json_obj_get(meta, "lastTimestamp")) == (double)ts[n - 1] * 1000);
    /* meta: the timestamp column, then each series with both metrics */
    const json_value_t *m0 = nth(json_obj_get(out, "meta"), 0);
    assert_true(json_str_eq(nth(json_obj_get(m0, "metrics"), 0), "timestamp"));
    const json_value_t *m1 = nth(json_obj_get(out, "meta"), 1);
    assert_true(json_str_eq(nth(json_obj_get(m1, "metrics"), 0), "xa"));
    assert_true(json_str_eq(nth(json_obj_get(m1, "metrics"), 1), "xb"));
    assert_true(json_str_eq(json_obj_get(json_obj_get(m1, "commonTags"), "dc"), "d1"));
    assert_int_equal(json_obj_get(m1, "aggregatedTags")->n, 0);
    /* the query is echoed */
    const json_value_t *q = json_obj_get(d.root, "query");
    assert_true(
        json_str_eq(json_obj_get(nth(json_obj_get(q, "expressions"), 0), "expr"), "a * 2 + b"));
    doc_free(&d);
}

static void exp_intersection_nested_and_outputs(void **state)
{
    (void)state;
    doc_t d;
    /* e = a - b on the hosts both have (h1, h2), NaN fills; g = e * 2 + b
     * nests it; outputs: g, then the raw metric b */
    doc_get(
        &d, "POST", "/api/query/exp",
        "{" EXP_TIME "," EXP_FILTER ",\"metrics\":["
        "{\"id\":\"a\",\"metric\":\"xa\",\"filter\":\"f1\",\"fillPolicy\":{\"policy\":\"nan\"}},"
        "{\"id\":\"b\",\"metric\":\"xb\",\"filter\":\"f1\"}],"
        "\"expressions\":[{\"id\":\"e\",\"expr\":\"a - b\",\"join\":{\"operator\":"
        "\"intersection\"}},{\"id\":\"g\",\"expr\":\"e + 1000\",\"join\":{\"operator\":"
        "\"intersection\"}}],\"outputs\":[{\"id\":\"g\"},{\"id\":\"b\"}]}");
    const json_value_t *outs = json_obj_get(d.root, "outputs");
    assert_int_equal(outs->n, 2);
    const json_value_t *g = nth(outs, 0);
    assert_null(json_obj_get(g, "alias"));
    assert_true(num(json_obj_get(json_obj_get(g, "dpsMeta"), "series")) == 2);
    int64_t ts[32];
    double v[32];
    for (int h = 1; h <= 2; h++) {
        const char *host = h == 1 ? "h1" : "h2";
        /* a NaN fill: where xa has no point, a - b is NaN, and NaN + 1000 too
         * (g's input e has no gaps: its rows are every timestamp) */
        size_t n = model("xa", "xb", host, op_sub, NAN, 0, ts, v);
        for (size_t k = 0; k < n; k++)
            v[k] += 1000;
        check_exp_column(g, host, ts, v, n);
    }
    /* the raw metric output: xb's own points, NaN where a series has none */
    const json_value_t *b = nth(outs, 1);
    assert_true(json_str_eq(json_obj_get(b, "id"), "b"));
    assert_true(num(json_obj_get(json_obj_get(b, "dpsMeta"), "series")) == 3);
    size_t n = union_ts("xb", NULL, ts);
    for (size_t k = 0; k < n; k++)
        v[k] = at(find("xb", "h2"), ts[k], NAN);
    check_exp_column(b, "h2", ts, v, n);
    doc_free(&d);
}

static void exp_time_offset_and_downsampler_fill(void **state)
{
    (void)state;
    doc_t d;
    /* xc was written an hour before T0; a 1h offset shows it at T0.. */
    doc_get(&d, "POST", "/api/query/exp",
            "{" EXP_TIME ",\"metrics\":[{\"id\":\"c\",\"metric\":\"xc\",\"timeOffset\":\"1h\"}]}");
    const json_value_t *out = nth(json_obj_get(d.root, "outputs"), 0);
    int64_t ts[] = {T0, T0 + 60, T0 + 120};
    double v[] = {1, 2, 3};
    check_exp_column(out, "h1", ts, v, 3);
    doc_free(&d);
    /* a 2-minute sum of xa{host=h3} with a scalar fill of -1: h3 has one
     * point (7 at T0+120); buckets T0, T0+120, T0+240 in [T0, T0+300] */
    doc_get(&d, "POST", "/api/query/exp",
            "{\"time\":{\"start\":1356998400,\"end\":1356998700,\"aggregator\":\"sum\","
            "\"downsampler\":{\"interval\":\"2m\",\"aggregator\":\"sum\",\"fillPolicy\":"
            "{\"policy\":\"scalar\",\"value\":-1}}},\"filters\":[{\"id\":\"f\",\"tags\":[{\"type\":"
            "\"literal_or\",\"tagk\":\"host\",\"filter\":\"h3\",\"groupBy\":false}]}],"
            "\"metrics\":[{\"id\":\"a\",\"metric\":\"xa\",\"filter\":\"f\"}]}");
    out = nth(json_obj_get(d.root, "outputs"), 0);
    const json_value_t *dps = json_obj_get(out, "dps");
    assert_int_equal(dps->n, 3);
    static const double want[] = {-1, 7, -1};
    for (size_t k = 0; k < 3; k++) {
        assert_true(num(nth(nth(dps, k), 0)) == (double)(T0 + 120 * (int64_t)k) * 1000);
        assert_true(num(nth(nth(dps, k), 1)) == want[k]);
    }
    doc_free(&d);
}

static void exp_errors(void **state)
{
    (void)state;
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"{}", "missing time"},
        {"{\"time\":{\"aggregator\":\"sum\"},\"metrics\":[]}", "missing or empty start"},
        {"{\"time\":{\"start\":\"1h-ago\"}}", "Missing or empty aggregator"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"nope\"}}", "Invalid aggregator"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"}}", "missing or empty metrics"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a-1\","
         "\"metric\":\"xa\"}]}",
         "Invalid id (\\\"a-1\\\"): illegal character: -"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"7\","
         "\"metric\":\"xa\"}]}",
         "The ID cannot be an integer"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"},{\"id\":\"a\",\"metric\":\"xb\"}]}",
         "duplicated metric id: a"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"filters\":[{\"id\":\"f\"},"
         "{\"id\":\"f\"}],\"metrics\":[{\"id\":\"a\",\"metric\":\"xa\"}]}",
         "duplicated filter id: f"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\",\"filter\":\"zz\"}]}",
         "unrecognized filter id zz in metric a"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"expressions\":[{\"id\":\"a\",\"expr\":\"a+1\"}]}",
         "Duplicated variable or expression id: a"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a + q\"}]}",
         "Expression [a + q] was missing input q"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"a * (2\"}]}",
         "expected ')' at position 6 in [a * (2]"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"expressions\":[{\"id\":\"e\"}]}",
         "missing or empty expr"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"expressions\":[{\"id\":\"e\",\"expr\":\"f+a\"},{\"id\":\"f\","
         "\"expr\":\"e*2\"}]}",
         "Expression e refers to itself (a circular reference)"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\",\"fillPolicy\":{\"policy\":\"sometimes\"}}]}",
         "Unrecognized fill policy: sometimes"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"xa\"}],\"outputs\":[{\"id\":\"zz\"}]}",
         "Output zz names no metric or expression"},
        {"{\"time\":{\"start\":\"1h-ago\",\"aggregator\":\"sum\"},\"metrics\":[{\"id\":\"a\","
         "\"metric\":\"no.such.metric\"}]}",
         "No such name for 'metrics': 'no.such.metric'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char want[1024];
        snprintf(want, sizeof want, "{\"error\":{\"code\":400,\"message\":\"%s\"}}", cases[i].msg);
        AC_EXPECT(&tsd, "POST", "/api/query/exp", cases[i].body, 400, want);
    }
    char *r = ac_req_ok(&tsd, "GET", "/api/query/exp", NULL, 405);
    free(r);
}

/* Every input of an expression is held at once: the points of all its
 * metrics count against tsd.query.limits.held_points.default together. */
static void exp_and_gexp_hold_limit(void **state)
{
    (void)state;
    /* grouped by host, xa answers 13 points and xb 13: each alone is under
     * 20, both are 26 */
    static const char *const args[] = {"--auto-metric", "--set",
                                       "tsd.query.limits.held_points.default=20", NULL};
    tu_tsd_t t;
    char *body = put_body();
    assert_int_equal(ac_start_put(&t, args, body), 0);
    free(body);
    char *r = ac_req_ok(&t, "POST", "/api/query/exp",
                        "{" EXP_TIME "," EXP_FILTER
                        ",\"metrics\":[{\"id\":\"a\",\"metric\":\"xa\",\"filter\":\"f1\"}]}",
                        200);
    free(r);
    r = ac_req_ok(&t, "POST", "/api/query/exp",
                  "{" EXP_TIME "," EXP_FILTER
                  ",\"metrics\":[{\"id\":\"a\",\"metric\":\"xa\",\"filter\":\"f1\"},"
                  "{\"id\":\"b\",\"metric\":\"xb\",\"filter\":\"f1\"}]}",
                  413);
    assert_non_null(strstr(r, "more than our limit of 20 data points"));
    free(r);
    r = ac_req_ok(&t, "GET", GEXP "sum(sum:xa%7Bhost=*%7D,sum:xb%7Bhost=*%7D)", NULL, 413);
    free(r);
    tu_tsd_destroy(&t);
}

/* ---- /api/query/gexp -------------------------------------------------------------- */

static void gexp_arithmetic_by_timestamp(void **state)
{
    (void)state;
    static const struct {
        const char *fn;
        op_fn op;
    } ops[] = {{"sum", op_add},
               {"difference", op_sub},
               {"multiply", op_mul},
               {"divide", op_div},
               {"diffSeries", op_sub}};
    int64_t ts[32];
    double v[32];
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char target[256];
        snprintf(target, sizeof target, GEXP "%s(sum:xa%%7Bhost=*%%7D,sum:xb%%7Bhost=*%%7D)",
                 ops[i].fn);
        doc_t d;
        doc_get(&d, "GET", target, NULL);
        assert_int_equal(d.root->n, 4); /* union on tags: h1..h4 */
        static const char *const hosts[] = {"h1", "h2", "h3", "h4"};
        for (size_t h = 0; h < 4; h++) {
            size_t n = model("xa", "xb", hosts[h], ops[i].op, 0, 0, ts, v);
            check_gexp_series(d.root, hosts[h], ts, v, n);
        }
        doc_free(&d);
    }
}

static void gexp_scale_absolute_alias(void **state)
{
    (void)state;
    doc_t d;
    int64_t ts[8];
    double v[8];
    const ser_t *h1 = find("xa", "h1"), *h2 = find("xa", "h2");
    /* integers times an integral factor stay integers */
    doc_get(&d, "GET", GEXP "scale(sum:xa%7Bhost=h1%7D,3)", NULL);
    for (size_t k = 0; k < h1->n; k++)
        v[k] = h1->v[k] * 3;
    check_gexp_series(d.root, "h1", h1->ts, v, h1->n);
    assert_non_null(strstr(d.body, "\"1356998400\":3,"));
    doc_free(&d);
    doc_get(&d, "GET", GEXP "scale(sum:xa%7Bhost=h1%7D,0.5)", NULL);
    for (size_t k = 0; k < h1->n; k++)
        v[k] = h1->v[k] * 0.5;
    check_gexp_series(d.root, "h1", h1->ts, v, h1->n);
    doc_free(&d);
    doc_get(&d, "GET", GEXP "absolute(sum:xa%7Bhost=h2%7D)&arrays", NULL);
    /* arrays: [[ts, v], ...] */
    const json_value_t *rows = json_obj_get(nth(d.root, 0), "dps");
    assert_int_equal(rows->n, h2->n);
    for (size_t k = 0; k < h2->n; k++) {
        assert_true(num(nth(nth(rows, k), 0)) == (double)h2->ts[k]);
        assert_true(num(nth(nth(rows, k), 1)) == -h2->v[k]);
    }
    doc_free(&d);
    doc_get(&d, "GET", GEXP "absolute(sum:xa%7Bhost=h2%7D)", NULL);
    for (size_t k = 0; k < h2->n; k++)
        v[k] = -h2->v[k];
    check_gexp_series(d.root, "h2", h2->ts, v, h2->n);
    doc_free(&d);
    /* alias renames from the tags and keeps the sign (2.4 took absolute values) */
    doc_get(&d, "GET", GEXP "alias(sum:xa%7Bhost=*%7D,'@host.cpu')", NULL);
    assert_int_equal(d.root->n, 3);
    check_gexp_series(d.root, "h2.cpu", h2->ts, h2->v, h2->n);
    check_gexp_series(d.root, "h1.cpu", h1->ts, h1->v, h1->n);
    assert_non_null(strstr(d.body, "\"metric\":\"h2.cpu\",\"tags\":{},\"aggregateTags\":[]"));
    doc_free(&d);
    (void)ts;
}

static void gexp_moving_average(void **state)
{
    (void)state;
    doc_t d;
    const ser_t *h1 = find("xa", "h1");
    double v[8];
    /* by count 3: 0 until 3 points, then the mean of the newest 3 */
    doc_get(&d, "GET", GEXP "movingAverage(sum:xa%7Bhost=h1%7D,3)", NULL);
    for (size_t k = 0; k < h1->n; k++)
        v[k] = k < 2 ? 0 : (h1->v[k] + h1->v[k - 1] + h1->v[k - 2]) / 3;
    check_gexp_series(d.root, "h1", h1->ts, v, h1->n);
    doc_free(&d);
    /* by time '2min': points in (t - 120 s, t] (this one and the one a
     * minute before), 0 until the history spans two minutes */
    doc_get(&d, "GET", GEXP "movingAverage(sum:xa%7Bhost=h1%7D,'2min')", NULL);
    for (size_t k = 0; k < h1->n; k++)
        v[k] = h1->ts[k] - h1->ts[0] < 120 ? 0 : (h1->v[k] + h1->v[k - 1]) / 2;
    check_gexp_series(d.root, "h1", h1->ts, v, h1->n);
    doc_free(&d);
}

static void gexp_highest_and_time_shift(void **state)
{
    (void)state;
    doc_t d;
    /* last values: h1 6, h2 -60, h3 7 -> h3 then h1 */
    doc_get(&d, "GET", GEXP "highestCurrent(sum:xa%7Bhost=*%7D,2)", NULL);
    assert_int_equal(d.root->n, 2);
    assert_true(json_str_eq(json_obj_get(json_obj_get(nth(d.root, 0), "tags"), "host"), "h3"));
    assert_true(json_str_eq(json_obj_get(json_obj_get(nth(d.root, 1), "tags"), "host"), "h1"));
    doc_free(&d);
    /* maxima: h1 6, h2 -10, h3 7 -> h3 */
    doc_get(&d, "GET", GEXP "highestMax(sum:xa%7Bhost=*%7D,1)", NULL);
    assert_int_equal(d.root->n, 1);
    assert_true(json_str_eq(json_obj_get(json_obj_get(nth(d.root, 0), "tags"), "host"), "h3"));
    doc_free(&d);
    /* xc, written an hour before T0, shown at T0.. (2.4 fails every timeShift) */
    const ser_t *c = find("xc", "h1");
    int64_t ts[3];
    for (size_t k = 0; k < 3; k++)
        ts[k] = c->ts[k] + 3600;
    doc_get(&d, "GET", GEXP "timeShift(sum:xc%7Bhost=h1%7D,'1hour')", NULL);
    check_gexp_series(d.root, "h1", ts, c->v, 3);
    doc_free(&d);
    /* nested: the shifted series plus xa h1 (rows at the union, 0 filled) */
    doc_get(&d, "GET", GEXP "sum(timeShift(sum:xc%7Bhost=h1%7D,'1h'),sum:xa%7Bhost=h1%7D)&ms",
            NULL);
    const ser_t *a = find("xa", "h1");
    int64_t tms[8];
    double v[8];
    for (size_t k = 0; k < a->n; k++) {
        tms[k] = a->ts[k] * 1000;
        v[k] = a->v[k] + (k < 3 ? c->v[k] : 0);
    }
    check_gexp_series(d.root, "h1", tms, v, a->n);
    doc_free(&d);
}

static void gexp_errors(void **state)
{
    (void)state;
    static const struct {
        const char *q, *msg;
    } cases[] = {
        {GEXP "nosuch(sum:xa)", "Function nosuch has not been implemented"},
        {GEXP "sum(sum:xa", "Failed to parse sum(sum:xa"},
        {GEXP "sum(sum:xa)", "Must have 2 to 26 series, got 1 instead"},
        {GEXP "scale(sum:xa,x2)", "Unparseable scale factor value: x2"},
        {GEXP "movingAverage(sum:xa,0)", "movingAverage: 0 is not a positive integer"},
        {GEXP "timeShift(sum:xa,'1fortnight')", "unknown time unit=fortnight in '1fortnight'"},
        {GEXP "absolute(5)", "Expected a series (a metric query or a function), got 5"},
        {"/api/query/gexp?start=1356998400", "Missing parameter <code>exp</code>"},
        {"/api/query/gexp?exp=absolute(sum:xa)", "Missing parameter <code>start</code>"},
        {"/api/query/gexp?start=1356998400&m=sum:xa&exp=absolute(sum:xa)",
         "gexp answers exp= only; send m= sub-queries to /api/query"},
        {GEXP "absolute(sum:xa)&show_tsuids", "show_tsuids is not supported by /api/query/gexp"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char want[1024];
        snprintf(want, sizeof want, "{\"error\":{\"code\":400,\"message\":\"%s\"}}", cases[i].msg);
        AC_EXPECT(&tsd, "GET", cases[i].q, NULL, 400, want);
    }
    char *r = ac_req_ok(&tsd, "POST", GEXP "absolute(sum:xa)", "{}", 405);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp_union_with_fills),
        cmocka_unit_test(exp_intersection_nested_and_outputs),
        cmocka_unit_test(exp_time_offset_and_downsampler_fill),
        cmocka_unit_test(exp_errors),
        cmocka_unit_test(exp_and_gexp_hold_limit),
        cmocka_unit_test(gexp_arithmetic_by_timestamp),
        cmocka_unit_test(gexp_scale_absolute_alias),
        cmocka_unit_test(gexp_moving_average),
        cmocka_unit_test(gexp_highest_and_time_shift),
        cmocka_unit_test(gexp_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
