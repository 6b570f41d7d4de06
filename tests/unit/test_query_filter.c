/* test_query_filter.c -- query/ tag-value filters: every type with values
 * that must and must not match (OpenTSDB 2.4's rules, docs/query.md section 7,
 * including the wildcard cursor quirk), construction errors with
 * OpenTSDB's texts, the legacy tag-map conversion, and the
 * /api/config/filters texts. Expectations are written out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "query/query.h"

typedef struct {
    const char *value; /* NULL: the series lacks the tag key */
    int want;
} case_t;

static void check(const char *type, const char *expr, const case_t *cases, size_t n)
{
    query_filter_t f;
    oct_errbuf_t eb;
    int rc = query_filter_init(&f, type, "host", expr, 0, &eb);
    if (rc != 0) fail_msg("init %s(%s): %s", type, expr, eb.msg);
    for (size_t i = 0; i < n; i++) {
        const char *v = cases[i].value;
        int got = query_filter_match(&f, v, v ? strlen(v) : 0);
        if (got != cases[i].want)
            fail_msg("%s(%s) on '%s': got %d want %d", type, expr, v ? v : "(absent)", got,
                     cases[i].want);
    }
    query_filter_free(&f);
}

#define CHECK(type, expr, ...)                                                                     \
    do {                                                                                           \
        static const case_t cs_[] = {__VA_ARGS__};                                                 \
        check(type, expr, cs_, sizeof(cs_) / sizeof(cs_[0]));                                      \
    } while (0)

static void literal_or_family(void **state)
{
    (void)state;
    CHECK("literal_or", "web01|web02", {"web01", 1}, {"web02", 1}, {"web03", 0}, {"WEB01", 0},
          {"web0", 0}, {"web011", 0}, {"", 0}, {NULL, 0});
    CHECK("literal_or", "web01", {"web01", 1}, {"web01 ", 0});
    /* Java's split: inner empty items kept, trailing ones dropped */
    CHECK("literal_or", "a||b", {"a", 1}, {"b", 1}, {"", 1});
    CHECK("literal_or", "a|", {"a", 1}, {"", 0});
    CHECK("iliteral_or", "Web01|WEB02", {"web01", 1}, {"WEB01", 1}, {"wEb02", 1}, {"web03", 0},
          {NULL, 0});
    CHECK("not_literal_or", "web01|web02", {"web03", 1}, {"web01", 0}, {"web02", 0}, {"WEB01", 1},
          {NULL, 0});
    CHECK("not_iliteral_or", "web01|web02", {"WEB01", 0}, {"Web02", 0}, {"web03", 1}, {NULL, 0});
    /* Values need not be NUL-terminated: match on a prefix of a buffer. */
    query_filter_t f;
    oct_errbuf_t eb;
    assert_int_equal(query_filter_init(&f, "literal_or", "host", "web01", 0, &eb), 0);
    assert_int_equal(query_filter_match(&f, "web01xyz", 5), 1);
    assert_int_equal(query_filter_match(&f, "web01xyz", 6), 0);
    query_filter_free(&f);
}

static void literal_or_large_list(void **state)
{
    (void)state;
    /* 5000 literals v0..v4999 (beyond OpenTSDB's expansion limit of 4096) */
    static char expr[5000 * 6];
    size_t off = 0;
    for (int i = 0; i < 5000; i++)
        off += (size_t)snprintf(expr + off, sizeof(expr) - off, "%sv%d", i ? "|" : "", i);
    query_filter_t f;
    oct_errbuf_t eb;
    assert_int_equal(query_filter_init(&f, "literal_or", "host", expr, 1, &eb), 0);
    assert_int_equal(f.group_by, 1);
    char v[16];
    for (int i = 0; i < 5000; i++) {
        snprintf(v, sizeof(v), "v%d", i);
        assert_int_equal(query_filter_match(&f, v, strlen(v)), 1);
    }
    assert_int_equal(query_filter_match(&f, "v5000", 5), 0);
    assert_int_equal(query_filter_match(&f, "v", 1), 0);
    assert_int_equal(query_filter_match(&f, "v00", 3), 0);
    query_filter_free(&f);
}

static void wildcard_family(void **state)
{
    (void)state;
    CHECK("wildcard", "web*", {"web01", 1}, {"web", 1}, {"xweb", 0}, {"WEB01", 0}, {"we", 0},
          {NULL, 0});
    CHECK("wildcard", "*.example.com", {"a.example.com", 1}, {".example.com", 1},
          {"a.example.co", 0}, {"a.example.com.x", 0}, {"example.com", 0});
    CHECK("wildcard", "*mid*", {"amidb", 1}, {"mid", 1}, {"mi", 0}, {"MID", 0});
    /* Only inner stars: not anchored at either end (OpenTSDB). */
    CHECK("wildcard", "a*b", {"ab", 1}, {"axb", 1}, {"xaxbx", 1}, {"ba", 0}, {"bab", 1}, {"a", 0});
    /* The cursor moves by the part's length, not past where it was found:
     * "ab" is found at 1 in "bab", then "b" is searched from 2 and found at
     * 2, the same 'b'. A true glob would reject "bab". */
    CHECK("wildcard", "ab*b", {"bab", 1}, {"abb", 1}, {"xaby", 1}, {"ab", 0}, {"ba", 0});
    CHECK("wildcard", "x*y*z", {"xyz", 1}, {"x1y2z", 1}, {"zyx", 0}, {"xzy", 0});
    CHECK("wildcard", "*", {"anything", 1}, {"", 1}, {"*", 1}, {NULL, 0});
    CHECK("wildcard", "**", {"anything", 1}, {NULL, 0});
    CHECK("wildcard", "web**01", {"web01", 1}, {"webx01", 1}, {"web0", 0});
    CHECK("wildcard", "*web*01*", {"xweb-01y", 1}, {"01web", 0});
    CHECK("iwildcard", "WEB*", {"web01", 1}, {"Web01", 1}, {"xweb", 0}, {NULL, 0});
    CHECK("iwildcard", "*.EXAMPLE.com", {"A.example.COM", 1}, {"a.example.org", 0});
}

static void regexp_find_semantics(void **state)
{
    (void)state;
    CHECK("regexp", "^web[0-9]+$", {"web01", 1}, {"web", 0}, {"xweb01", 0}, {"web01x", 0},
          {NULL, 0});
    CHECK("regexp", "eb0", {"web01", 1}, {"eb", 0});
    CHECK("regexp", "prod|stage", {"app-stage-1", 1}, {"production", 1}, {"dev", 0});
    CHECK("regexp", "a{2}", {"baab", 1}, {"bab", 0});
    CHECK("regexp", ".*", {"", 1}, {"x", 1}, {NULL, 0});
    CHECK("regexp", "^\xc3\xbc",
          {"\xc3\xbc"
           "ber",
           1},
          {"uber", 0});
    CHECK("regexp", "(?i)^WEB", {"web01", 1}, {"xweb", 0});
}

static void not_key(void **state)
{
    (void)state;
    CHECK("not_key", "", {NULL, 1}, {"x", 0}, {"", 0});
    CHECK("not_key", NULL, {NULL, 1}, {"web01", 0});
}

static void expect_init_error(const char *type, const char *tagk, const char *expr,
                              const char *want)
{
    query_filter_t f;
    oct_errbuf_t eb;
    memset(&eb, 0, sizeof(eb));
    assert_int_equal(query_filter_init(&f, type, tagk, expr, 0, &eb), OCT_EPARSE);
    if (strncmp(eb.msg, want, strlen(want)) != 0)
        fail_msg("init %s(%s): got '%s' want prefix '%s'", type ? type : "-", expr ? expr : "-",
                 eb.msg, want);
}

static void init_errors(void **state)
{
    (void)state;
    expect_init_error("foo", "host", "x", "Could not find a tag value filter of the type: foo");
    expect_init_error("literal_or", "", "x", "The tagk cannot be null or empty");
    expect_init_error("literal_or", "host", "", "Filter cannot be null or empty");
    expect_init_error("not_iliteral_or", "host", "|", "Filter must contain more than just a pipe");
    expect_init_error("wildcard", "host", "web", "Filter must contain an asterisk");
    expect_init_error("iwildcard", "host", "", "Filter cannot be null or empty");
    expect_init_error("regexp", "host", "", "Filter cannot be null or empty");
    expect_init_error("regexp", "host", "(web", "Invalid regular expression '(web': ");
    expect_init_error("regexp", "host", "[a-", "Invalid regular expression '[a-': ");
    expect_init_error("not_key", "host", "x", "The filter must be empty for the not_key filter");
    expect_init_error(NULL, "host", "web*", "The filter type cannot be null or empty");
}

static void init_text_form_and_type_case(void **state)
{
    (void)state;
    query_filter_t f;
    oct_errbuf_t eb;
    assert_int_equal(query_filter_init(&f, NULL, "host", "regexp(^a)", 1, &eb), 0);
    assert_int_equal(f.type, QUERY_FILTER_REGEXP);
    assert_string_equal(f.tagk, "host");
    assert_string_equal(f.expr, "^a");
    assert_int_equal(f.group_by, 1);
    assert_int_equal(query_filter_match(&f, "abc", 3), 1);
    assert_int_equal(query_filter_match(&f, "bac", 3), 0);
    query_filter_free(&f);
    assert_int_equal(query_filter_init(&f, "ILiteral_Or", "host", "A", 0, &eb), 0);
    assert_int_equal(f.type, QUERY_FILTER_ILITERAL_OR);
    assert_int_equal(f.group_by, 0);
    query_filter_free(&f);
}

typedef struct {
    const char *value;
    query_filter_type_t type;
    const char *expr;
    const char *yes, *no;
} legacy_t;

static void legacy_tag_conversion(void **state)
{
    (void)state;
    static const legacy_t cases[] = {
        {"*", QUERY_FILTER_WILDCARD, "*", "anything", NULL},
        {"web01", QUERY_FILTER_LITERAL_OR, "web01", "web01", "WEB01"},
        {"web01|web02", QUERY_FILTER_LITERAL_OR, "web01|web02", "web02", "web03"},
        /* (NULL as "yes": only a series without the key; as "no": the key is
         * absent) */
        /* a star without parentheses: case-insensitive wildcard */
        {"web*", QUERY_FILTER_IWILDCARD, "web*", "WEB01", "xweb"},
        {"regexp(^w.*1$)", QUERY_FILTER_REGEXP, "^w.*1$", "web01", "web02"},
        {"Literal_Or(a|b)", QUERY_FILTER_LITERAL_OR, "a|b", "b", "c"},
        {"wildcard(*01)", QUERY_FILTER_WILDCARD, "*01", "web01", "web02"},
        {"not_literal_or(a)", QUERY_FILTER_NOT_LITERAL_OR, "a", "b", "a"},
        {"iliteral_or(A)", QUERY_FILTER_ILITERAL_OR, "A", "a", "b"},
        {"not_key()", QUERY_FILTER_NOT_KEY, "", NULL, "x"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        query_filter_t f;
        oct_errbuf_t eb;
        if (query_filter_from_tag(&f, "host", cases[i].value, 1, &eb) != 0)
            fail_msg("%s: %s", cases[i].value, eb.msg);
        assert_int_equal(f.type, cases[i].type);
        assert_string_equal(f.expr, cases[i].expr);
        assert_string_equal(f.tagk, "host");
        assert_int_equal(f.group_by, 1);
        const char *y = cases[i].yes, *n = cases[i].no;
        assert_int_equal(query_filter_match(&f, y, y ? strlen(y) : 0), 1);
        assert_int_equal(query_filter_match(&f, n, n ? strlen(n) : 0), 0);
        query_filter_free(&f);
    }
    query_filter_t f;
    oct_errbuf_t eb;
    assert_int_equal(query_filter_from_tag(&f, "host", "web01", 0, &eb), 0);
    assert_int_equal(f.group_by, 0);
    query_filter_free(&f);
    assert_int_equal(query_filter_from_tag(&f, "host", "wildcard(web*", 1, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Filter must end with a ')': wildcard(web*");
    assert_int_equal(query_filter_from_tag(&f, "host", "bogus(x)", 1, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Could not find a tag value filter of the type: bogus");
    assert_int_equal(query_filter_from_tag(&f, "", "x", 1, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Tagk cannot be null or empty");
    assert_int_equal(query_filter_from_tag(&f, "host", "", 1, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Filter cannot be null or empty");
    assert_int_equal(query_filter_from_tag(&f, "host", "wildcard(web)", 1, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Filter must contain an asterisk");
}

static void config_filters_texts(void **state)
{
    (void)state;
    static const char *const names[] = {"literal_or",      "iliteral_or", "not_literal_or",
                                        "not_iliteral_or", "wildcard",    "iwildcard",
                                        "regexp",          "not_key"};
    assert_int_equal(QUERY_FILTER_TYPE_COUNT, 8);
    for (int t = 0; t < QUERY_FILTER_TYPE_COUNT; t++) {
        assert_string_equal(query_filter_type_name((query_filter_type_t)t), names[t]);
        assert_true(strlen(query_filter_type_description((query_filter_type_t)t)) > 40);
        /* each example shows its own type in the JSON form */
        char want[64];
        snprintf(want, sizeof(want), "\"type\":\"%s\"", names[t]);
        assert_non_null(strstr(query_filter_type_examples((query_filter_type_t)t), want));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(literal_or_family),
        cmocka_unit_test(literal_or_large_list),
        cmocka_unit_test(wildcard_family),
        cmocka_unit_test(regexp_find_semantics),
        cmocka_unit_test(not_key),
        cmocka_unit_test(init_errors),
        cmocka_unit_test(init_text_form_and_type_case),
        cmocka_unit_test(legacy_tag_conversion),
        cmocka_unit_test(config_filters_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
