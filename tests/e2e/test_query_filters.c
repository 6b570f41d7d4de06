/* test_query_filters.c -- series selection and grouping through /api/query
 * against the real daemon: every filter type (literal_or, iliteral_or,
 * not_literal_or, not_iliteral_or, wildcard, iwildcard, regexp, not_key) with
 * groupBy true and false, in POST `filters` and in the GET {group-by}{other}
 * forms; the legacy tag map and `{}` forms (k=*, k=a|b, k=web* which is a
 * case-insensitive wildcard, k=v); group-by combinations and the contents of
 * `tags` and `aggregateTags` (with OpenTSDB's quirk: a tag key present in only
 * some series, with one value, is reported in `tags`); explicitTags; group
 * order; showTSUIDs (checked by querying each TSUID back); showQuery with
 * query.index over several sub-queries, GET and POST. Expectations: the
 * model in query_ref.h, which matches with fnmatch(3) and POSIX regex rather
 * than the daemon's matchers (docs/query.md sections 7 and 8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "query_ref.h"

#define T0    1356998400LL /* 2013-01-01 00:00:00 UTC */
#define START T0
#define END   (T0 + 600)

static const char *const daemon_args[] = {"--auto-metric", NULL};
static tu_tsd_t tsd;
static qr_db_t db;

static const char *const series_tags[] = {
    "host=web01,dc=lga", "host=web02,dc=lga", "host=Web03,dc=sjc",
    "host=db01,dc=sjc",  "host=web04",        "host=web05,dc=lga,env=prod",
};
#define N_SERIES (sizeof series_tags / sizeof *series_tags)

static void build_db(void)
{
    for (size_t i = 0; i < N_SERIES; i++) {
        qr_series_t *s = qr_series(&db, "f.m", series_tags[i]);
        int64_t v = (int64_t)1 << i; /* a sum names the series it holds */
        qr_i(s, T0, v);
        qr_i(s, T0 + 60, 3 * v);
        if (i == 2) qr_i(s, T0 + 90, 100); /* one misaligned point */
    }
    qr_i(qr_series(&db, "f.other", "host=web01"), T0 + 30, 5);
}

static int setup(void **state)
{
    (void)state;
    if (tu_tsd_start(&tsd, daemon_args)) return -1;
    build_db();
    qr_put_db(&tsd, &db);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&tsd);
    qr_db_free(&db);
    return 0;
}

static const char *const type_names[] = {"literal_or",      "iliteral_or", "not_literal_or",
                                         "not_iliteral_or", "wildcard",    "iwildcard",
                                         "regexp",          "not_key"};

/* Percent-encodes everything but unreserved characters and ':' ',' '='. */
static void url_encode(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 4 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-._~:,=", ch))
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, cap - n, "%%%02X", ch);
    }
    out[n] = '\0';
}

/* One filter as POST filters, GET m= (group-by in the first braces, others in
 * the second), encoded and not. */
static void filter_case(const char *agg, int type, const char *tagk, const char *expr, int gb)
{
    qr_q_t q = qr_q("f.m", agg, START, END);
    qr_filter(&q, type, tagk, expr, gb);
    char sub[512];
    snprintf(sub, sizeof sub,
             "\"aggregator\":\"%s\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"%s\",\"tagk\":"
             "\"%s\",\"filter\":\"%s\",\"groupBy\":%s}]",
             agg, type_names[type], tagk, expr, gb ? "true" : "false");
    qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(START, END, sub, ""), 0, 0);
    char m[256], enc[768], target[1024];
    snprintf(m, sizeof m, "%s:f.m%s{%s=%s(%s)}%s", agg, gb ? "" : "{}", tagk, type_names[type],
             expr, "");
    url_encode(m, enc, sizeof enc);
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s", START, END, enc);
    qr_expect_get(&tsd, &db, &q, target, 0, 0);
}

static void every_filter_type(void **state)
{
    (void)state;
    qr_failures = 0;
    const struct {
        int type;
        const char *tagk, *expr;
    } cases[] = {
        {QR_LITERAL_OR, "host", "web01|web02"},
        {QR_LITERAL_OR, "host", "web01"},
        {QR_ILITERAL_OR, "host", "WEB01|web03"},
        {QR_NOT_LITERAL_OR, "host", "web01|db01"},
        {QR_NOT_ILITERAL_OR, "host", "WEB03|db01"},
        {QR_NOT_LITERAL_OR, "dc", "lga"},
        {QR_WILDCARD, "host", "web*"},
        {QR_WILDCARD, "host", "*01"},
        {QR_WILDCARD, "host", "*eb0*"},
        {QR_WILDCARD, "host", "*"},
        {QR_WILDCARD, "dc", "*"},
        {QR_IWILDCARD, "host", "WEB*"},
        {QR_IWILDCARD, "host", "*B0*"},
        {QR_REGEXP, "host", "^web0[1-3]$"},
        {QR_REGEXP, "host", "eb0"},
        {QR_REGEXP, "host", "^(db|Web)[0-9]+"},
        {QR_REGEXP, "env", "."},
        {QR_NOT_KEY, "dc", ""},
        {QR_NOT_KEY, "env", ""},
    };
    const char *aggs[] = {"sum", "none", "count"};
    for (size_t a = 0; a < sizeof aggs / sizeof *aggs; a++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            for (int gb = 0; gb <= 1; gb++) {
                if (cases[i].type == QR_NOT_KEY && gb) continue; /* nothing to group by */
                filter_case(aggs[a], cases[i].type, cases[i].tagk, cases[i].expr, gb);
            }
    assert_int_equal(qr_failures, 0);
}

/* Several filters ANDed, over two keys, with mixed groupBy. */
static void filter_combinations(void **state)
{
    (void)state;
    qr_failures = 0;
    const struct {
        const char *post_filters; /* JSON list members */
        qr_filter_t f[3];
        int nf;
        const char *m; /* GET m= braces */
    } cases[] = {
        {"{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"*\",\"groupBy\":true},"
         "{\"type\":\"wildcard\",\"tagk\":\"dc\",\"filter\":\"*\",\"groupBy\":true}",
         {{QR_WILDCARD, "host", "*", 1}, {QR_WILDCARD, "dc", "*", 1}},
         2,
         "{host=*,dc=*}"},
        {"{\"type\":\"wildcard\",\"tagk\":\"dc\",\"filter\":\"*\",\"groupBy\":true}",
         {{QR_WILDCARD, "dc", "*", 1}},
         1,
         "{dc=*}"},
        {"{\"type\":\"literal_or\",\"tagk\":\"dc\",\"filter\":\"lga\",\"groupBy\":true},"
         "{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"web*\",\"groupBy\":false}",
         {{QR_LITERAL_OR, "dc", "lga", 1}, {QR_WILDCARD, "host", "web*", 0}},
         2,
         "{dc=lga}{host=wildcard(web*)}"},
        {"{\"type\":\"iwildcard\",\"tagk\":\"host\",\"filter\":\"w*\",\"groupBy\":false},"
         "{\"type\":\"not_literal_or\",\"tagk\":\"dc\",\"filter\":\"lga\",\"groupBy\":false}",
         {{QR_IWILDCARD, "host", "w*", 0}, {QR_NOT_LITERAL_OR, "dc", "lga", 0}},
         2,
         "{}{host=iwildcard(w*),dc=not_literal_or(lga)}"},
        {"{\"type\":\"regexp\",\"tagk\":\"host\",\"filter\":\"0[12]$\",\"groupBy\":true},"
         "{\"type\":\"literal_or\",\"tagk\":\"host\",\"filter\":\"web02|db01\",\"groupBy\":false}",
         {{QR_REGEXP, "host", "0[12]$", 1}, {QR_LITERAL_OR, "host", "web02|db01", 0}},
         2,
         "{host=regexp(0[12]$)}{host=web02|db01}"},
        {"{\"type\":\"wildcard\",\"tagk\":\"dc\",\"filter\":\"*\",\"groupBy\":false},"
         "{\"type\":\"not_key\",\"tagk\":\"env\",\"filter\":\"\",\"groupBy\":false}",
         {{QR_WILDCARD, "dc", "*", 0}, {QR_NOT_KEY, "env", "", 0}},
         2,
         "{}{dc=*,env=not_key()}"},
    };
    const char *aggs[] = {"sum", "avg", "none", "max"};
    for (size_t a = 0; a < sizeof aggs / sizeof *aggs; a++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            qr_q_t q = qr_q("f.m", aggs[a], START, END);
            for (int k = 0; k < cases[i].nf; k++)
                q.f[q.nf++] = cases[i].f[k];
            char sub[1024];
            snprintf(sub, sizeof sub, "\"aggregator\":\"%s\",\"metric\":\"f.m\",\"filters\":[%s]",
                     aggs[a], cases[i].post_filters);
            qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(START, END, sub, ""), 0, 0);
            char m[256], enc[768], target[1024];
            snprintf(m, sizeof m, "%s:f.m%s", aggs[a], cases[i].m);
            url_encode(m, enc, sizeof enc);
            snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s", START, END, enc);
            qr_expect_get(&tsd, &db, &q, target, 0, 0);
        }
    assert_int_equal(qr_failures, 0);
}

/* The legacy tag map (POST "tags") and the URI's first braces: k=* is a
 * group-by wildcard, k=a|b a group-by literal_or, a value with '*' a
 * case-insensitive wildcard, k=v a literal. */
static void legacy_tags(void **state)
{
    (void)state;
    qr_failures = 0;
    const struct {
        const char *k, *v;
        int type;
    } cases[] = {
        {"host", "*", QR_WILDCARD},     {"host", "web01|web02", QR_LITERAL_OR},
        {"host", "web*", QR_IWILDCARD}, {"host", "web01", QR_LITERAL_OR},
        {"dc", "*", QR_WILDCARD},       {"dc", "lga|sjc", QR_LITERAL_OR},
        {"host", "*0*", QR_IWILDCARD},
    };
    const char *aggs[] = {"sum", "none", "min"};
    for (size_t a = 0; a < sizeof aggs / sizeof *aggs; a++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            qr_q_t q = qr_q("f.m", aggs[a], START, END);
            qr_filter(&q, cases[i].type, cases[i].k, cases[i].v, 1);
            char sub[512];
            snprintf(sub, sizeof sub,
                     "\"aggregator\":\"%s\",\"metric\":\"f.m\",\"tags\":{\"%s\":\"%s\"}", aggs[a],
                     cases[i].k, cases[i].v);
            qr_expect_post(&tsd, &db, &q, "/api/query", qr_body(START, END, sub, ""), 0, 0);
            char target[512];
            snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=%s:f.m{%s=%s}", START,
                     END, aggs[a], cases[i].k, cases[i].v);
            qr_expect_get(&tsd, &db, &q, target, 0, 0);
        }
    assert_int_equal(qr_failures, 0);
}

/* tags / aggregateTags by hand: dc=* groups lga {web01, web02, web05} and sjc
 * {Web03, db01}; env appears only in web05 with one value, so it is reported
 * in the lga group's tags (SpanGroup.computeTags); without grouping, dc and
 * host vary, env=prod still in tags. */
static void tags_and_aggregate_tags_by_hand(void **state)
{
    (void)state;
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356999000&m=sum:f.m%7Bdc=*%7D", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(r.v);
    assert_int_equal(r.v->n, 2);
    int seen = 0;
    for (const json_value_t *el = r.v->child; el; el = el->next) {
        const json_value_t *tags = json_obj_get(el, "tags");
        const json_value_t *agg = json_obj_get(el, "aggregateTags");
        const json_value_t *dc = json_obj_get(tags, "dc");
        const json_value_t *dps = json_obj_get(el, "dps");
        const json_value_t *v0 = json_obj_get(dps, "1356998400");
        int64_t sum;
        assert_non_null(v0);
        assert_int_equal(json_number_i64(v0, &sum), 0);
        if (json_str_eq(dc, "lga")) {
            seen |= 1;
            assert_int_equal(tags->n, 2);
            assert_true(json_str_eq(json_obj_get(tags, "env"), "prod"));
            assert_int_equal(agg->n, 1);
            assert_true(json_str_eq(agg->child, "host"));
            assert_int_equal(sum, 1 + 2 + 32);
        } else if (json_str_eq(dc, "sjc")) {
            seen |= 2;
            assert_int_equal(tags->n, 1);
            assert_int_equal(agg->n, 1);
            assert_true(json_str_eq(agg->child, "host"));
            assert_int_equal(sum, 4 + 8);
        } else {
            fail_msg("unexpected group: %s", r.body);
        }
    }
    assert_int_equal(seen, 3);
    qr_resp_free(&r);
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356999000&m=sum:f.m", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.v->n, 1);
    const json_value_t *tags = json_obj_get(r.v->child, "tags");
    const json_value_t *agg = json_obj_get(r.v->child, "aggregateTags");
    assert_int_equal(tags->n, 1);
    assert_true(json_str_eq(json_obj_get(tags, "env"), "prod"));
    assert_int_equal(agg->n, 2);
    int dc = 0, host = 0;
    for (const json_value_t *a = agg->child; a; a = a->next) {
        dc |= json_str_eq(a, "dc");
        host |= json_str_eq(a, "host");
    }
    assert_true(dc && host);
    int64_t sum;
    assert_int_equal(
        json_number_i64(json_obj_get(json_obj_get(r.v->child, "dps"), "1356998400"), &sum), 0);
    assert_int_equal(sum, 63);
    qr_resp_free(&r);
}

/* Groups come out in the byte order of their tag-value UIDs, which the data
 * set assigned in series order (one put per series). */
static void group_order(void **state)
{
    (void)state;
    qr_resp_t r;
    qr_req(&tsd, "GET", "/api/query?start=1356998400&end=1356999000&m=sum:f.m%7Bhost=*%7D", NULL,
           &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.v->n, N_SERIES);
    size_t i = 0;
    for (const json_value_t *el = r.v->child; el; el = el->next, i++) {
        char want[16];
        sscanf(series_tags[i], "host=%15[^,]", want);
        if (!json_str_eq(json_obj_get(json_obj_get(el, "tags"), "host"), want))
            fail_msg("group %zu is not host=%s: %s", i, want, r.body);
    }
    qr_resp_free(&r);
}

static void explicit_tags(void **state)
{
    (void)state;
    qr_failures = 0;
    /* host and dc filtered: only series with exactly {host, dc} */
    qr_q_t q = qr_q("f.m", "sum", START, END);
    qr_filter(&q, QR_WILDCARD, "host", "*", 0);
    qr_filter(&q, QR_WILDCARD, "dc", "*", 1);
    q.explicit_tags = 1;
    qr_expect_post(&tsd, &db, &q, "/api/query",
                   qr_body(START, END,
                           "\"aggregator\":\"sum\",\"metric\":\"f.m\",\"explicitTags\":true,"
                           "\"filters\":[{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":"
                           "\"*\",\"groupBy\":false},{\"type\":\"wildcard\",\"tagk\":\"dc\","
                           "\"filter\":\"*\",\"groupBy\":true}]",
                           ""),
                   0, 0);
    qr_expect_get(&tsd, &db, &q,
                  "/api/query?start=1356998400&end=1356999000"
                  "&m=sum:explicit_tags:f.m%7Bdc=*%7D%7Bhost=*%7D",
                  0, 0);
    /* only host: web04 is the one series with no other key */
    qr_q_t q2 = qr_q("f.m", "sum", START, END);
    qr_filter(&q2, QR_WILDCARD, "host", "*", 1);
    q2.explicit_tags = 1;
    qr_expect_get(&tsd, &db, &q2,
                  "/api/query?start=1356998400&end=1356999000&m=sum:explicit_tags:f.m%7Bhost=*%7D",
                  0, 0);
    qr_expect_post(&tsd, &db, &q2, "/api/query",
                   qr_body(START, END,
                           "\"aggregator\":\"sum\",\"metric\":\"f.m\",\"explicitTags\":true,"
                           "\"tags\":{\"host\":\"*\"}",
                           ""),
                   0, 0);
    /* by hand: the only group is host=web04 with 16 at T0 */
    qr_resp_t r;
    qr_req(&tsd, "GET",
           "/api/query?start=1356998400&end=1356999000&m=sum:explicit_tags:f.m%7Bhost=*%7D", NULL,
           &r);
    if (r.status != 200 || !r.v || r.v->n != 1 ||
        !json_str_eq(json_obj_get(json_obj_get(r.v->child, "tags"), "host"), "web04"))
        qr_fail("explicit host only: %s", r.body);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* showTSUIDs: each group lists its series' TSUIDs, sorted; querying a TSUID
 * back gives that one series. */
static void show_tsuids(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query",
           qr_body(START, END, "\"aggregator\":\"sum\",\"metric\":\"f.m\",\"tags\":{\"dc\":\"*\"}",
                   "\"showTSUIDs\":true"),
           &r);
    assert_int_equal(r.status, 200);
    assert_non_null(r.v);
    int total = 0;
    for (const json_value_t *el = r.v->child; el; el = el->next) {
        const json_value_t *ts = json_obj_get(el, "tsuids");
        const json_value_t *dc = json_obj_get(json_obj_get(el, "tags"), "dc");
        if (!ts || ts->type != JSON_ARRAY) fail_msg("no tsuids: %s", r.body);
        unsigned want = json_str_eq(dc, "lga") ? 3 : 2;
        if (ts->n != want) qr_fail("dc group: %u tsuids, want %u: %s", ts->n, want, r.body);
        const json_value_t *prev = NULL;
        for (const json_value_t *t = ts->child; t; t = t->next) {
            total++;
            if (t->type != JSON_STRING) fail_msg("tsuid not a string: %s", r.body);
            if (prev && (prev->len > t->len ||
                         (prev->len == t->len && memcmp(prev->str, t->str, t->len) >= 0)))
                qr_fail("tsuids not sorted: %s", r.body);
            prev = t;
            for (size_t k = 0; k < t->len; k++)
                if (!isxdigit((unsigned char)t->str[k]) || islower((unsigned char)t->str[k]))
                    qr_fail("tsuid not upper-case hex: %.*s", (int)t->len, t->str);
            /* the TSUID names one series of this dc: its data comes back alone */
            char target[256];
            snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&tsuid=sum:%.*s", START,
                     END, (int)t->len, t->str);
            qr_resp_t r2;
            qr_req(&tsd, "GET", target, NULL, &r2);
            const json_value_t *tags2 = r2.v && r2.v->type == JSON_ARRAY && r2.v->n == 1
                                            ? json_obj_get(r2.v->child, "tags")
                                            : NULL;
            const json_value_t *host = tags2 ? json_obj_get(tags2, "host") : NULL;
            const json_value_t *dc2 = tags2 ? json_obj_get(tags2, "dc") : NULL;
            if (!host || !dc2 || dc2->len != dc->len || memcmp(dc2->str, dc->str, dc->len)) {
                qr_fail("tsuid %.*s: %s", (int)t->len, t->str, r2.body);
            } else {
                /* compare with the model for that one host */
                qr_q_t q = qr_q("f.m", "sum", START, END);
                char hv[QR_NAME];
                snprintf(hv, sizeof hv, "%.*s", (int)host->len, host->str);
                qr_filter(&q, QR_LITERAL_OR, "host", hv, 0);
                static qr_res_t res;
                qr_run(&db, &q, &res);
                /* tsuid queries report all tags of the one series */
                qr_check(target, &r2, &res, 0, 0);
                qr_res_free(&res);
            }
            qr_resp_free(&r2);
        }
    }
    assert_int_equal(total, 5);
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

/* Several sub-queries: GET m= repeated and POST queries[], with showQuery
 * giving query.index (what Grafana maps results by). */
static void several_subqueries_and_show_query(void **state)
{
    (void)state;
    qr_failures = 0;
    qr_resp_t r;
    qr_req(&tsd, "POST", "/api/query",
           "{\"start\":1356998400,\"end\":1356999000,\"showQuery\":true,\"queries\":["
           "{\"aggregator\":\"sum\",\"metric\":\"f.m\",\"tags\":{\"dc\":\"lga\"}},"
           "{\"aggregator\":\"max\",\"metric\":\"f.other\"},"
           "{\"aggregator\":\"count\",\"metric\":\"f.m\",\"filters\":[{\"type\":\"wildcard\","
           "\"tagk\":\"dc\",\"filter\":\"*\",\"groupBy\":true}]}]}",
           &r);
    assert_int_equal(r.status, 200);
    assert_non_null(r.v);
    /* expected: index 0 one group (lga, 35 at T0), index 1 one (5 at +30),
     * index 2 two groups (counts) -- in sub-query order */
    const int want_index[] = {0, 1, 2, 2};
    const char *want_metric[] = {"f.m", "f.other", "f.m", "f.m"};
    if (r.v->n != 4) fail_msg("want 4 results: %s", r.body);
    int i = 0;
    for (const json_value_t *el = r.v->child; el; el = el->next, i++) {
        const json_value_t *qy = json_obj_get(el, "query");
        int64_t idx = -1;
        if (!qy || json_number_i64(json_obj_get(qy, "index"), &idx) || idx != want_index[i])
            qr_fail("result %d: query.index %lld, want %d: %s", i, (long long)idx, want_index[i],
                    r.body);
        if (!json_str_eq(json_obj_get(el, "metric"), want_metric[i]))
            qr_fail("result %d: metric, want %s: %s", i, want_metric[i], r.body);
        if (qy && !json_str_eq(json_obj_get(qy, "metric"), want_metric[i]))
            qr_fail("result %d: query.metric, want %s", i, want_metric[i]);
    }
    qr_resp_free(&r);
    /* the values of each sub-query through the model */
    qr_q_t q0 = qr_q("f.m", "sum", START, END);
    qr_filter(&q0, QR_LITERAL_OR, "dc", "lga", 1);
    qr_expect_get(&tsd, &db, &q0,
                  "/api/query?start=1356998400&end=1356999000&m=sum:f.m%7Bdc=lga%7D&show_query", 0,
                  0);
    /* GET with two m=: results in parameter order; each checked with its model */
    qr_req(&tsd, "GET",
           "/api/query?start=1356998400&end=1356999000&m=max:f.other&m=sum:f.m%7Bdc=lga%7D"
           "&show_query",
           NULL, &r);
    if (r.status != 200 || !r.v || r.v->n != 2) {
        qr_fail("two m=: %s", r.body);
    } else {
        int64_t i0 = -1, i1 = -1;
        (void)!json_number_i64(json_obj_get(json_obj_get(r.v->child, "query"), "index"), &i0);
        (void)!json_number_i64(json_obj_get(json_obj_get(r.v->child->next, "query"), "index"), &i1);
        if (i0 != 0 || i1 != 1 || !json_str_eq(json_obj_get(r.v->child, "metric"), "f.other"))
            qr_fail("two m=: order/index: %s", r.body);
        static qr_res_t res;
        qr_q_t q1 = qr_q("f.other", "max", START, END);
        qr_run(&db, &q1, &res);
        qr_check_dps("two m= #0", r.v->child, &res.g[0], 0, 0, 0);
        qr_res_free(&res);
        qr_run(&db, &q0, &res);
        qr_check_dps("two m= #1", r.v->child->next, &res.g[0], 0, 0, 0);
        qr_res_free(&res);
    }
    qr_resp_free(&r);
    assert_int_equal(qr_failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_filter_type), cmocka_unit_test(filter_combinations),
        cmocka_unit_test(legacy_tags),       cmocka_unit_test(tags_and_aggregate_tags_by_hand),
        cmocka_unit_test(group_order),       cmocka_unit_test(explicit_tags),
        cmocka_unit_test(show_tsuids),       cmocka_unit_test(several_subqueries_and_show_query),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
