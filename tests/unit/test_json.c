/* test_json.c -- common/json: strict parsing, escapes to UTF-8, numbers kept
 * as text, the depth limit, array streaming, the writer, and garbage that
 * must fail cleanly (never crash). Expected values are written out by hand
 * from RFC 8259 and the UTF-8 encoding table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/itoa.h"
#include "common/json.h"

static json_value_t *parse_ok(json_arena_t *a, const char *s, unsigned flags)
{
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    int rc = json_parse(a, s, strlen(s), flags, &v, &eb);
    if (rc) fail_msg("parse of <%s> failed: %s", s, eb.msg);
    assert_int_equal(json_validate(s, strlen(s), flags, &eb), 0);
    return v;
}

static void parse_bad(const char *s, unsigned flags)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    int rc = json_parse(&a, s, strlen(s), flags, &v, &eb);
    if (rc != OCT_EPARSE) fail_msg("<%s> was accepted", s);
    assert_non_null(strstr(eb.msg, "at offset"));
    assert_int_equal(json_validate(s, strlen(s), flags, &eb), OCT_EPARSE);
    json_arena_free(&a);
}

static void json_valid_documents(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = parse_ok(&a,
                               " {\"metric\":\"sys.cpu\",\"timestamp\":1356998400,"
                               "\"value\":42.5,\"tags\":{\"host\":\"web01\"},"
                               "\"ok\":true,\"no\":false,\"nil\":null,\"arr\":[1,[],{}]} ",
                               0);
    assert_int_equal(v->type, JSON_OBJECT);
    assert_int_equal(v->n, 8);
    assert_true(json_str_eq(json_obj_get(v, "metric"), "sys.cpu"));
    json_value_t *tags = json_obj_get(v, "tags");
    assert_int_equal(tags->type, JSON_OBJECT);
    assert_true(json_str_eq(json_obj_get(tags, "host"), "web01"));
    assert_int_equal(json_obj_get(v, "ok")->type, JSON_TRUE);
    assert_int_equal(json_obj_get(v, "no")->type, JSON_FALSE);
    assert_int_equal(json_obj_get(v, "nil")->type, JSON_NULL);
    json_value_t *arr = json_obj_get(v, "arr");
    assert_int_equal(arr->n, 3);
    assert_int_equal(arr->child->next->type, JSON_ARRAY);
    assert_int_equal(arr->child->next->n, 0);
    assert_int_equal(arr->child->next->next->type, JSON_OBJECT);
    assert_null(json_obj_get(v, "absent"));
    /* scalars at top level are documents too */
    assert_int_equal(parse_ok(&a, "\"x\"", 0)->type, JSON_STRING);
    assert_int_equal(parse_ok(&a, "  -0  ", 0)->type, JSON_NUMBER);
    assert_int_equal(parse_ok(&a, "null", 0)->type, JSON_NULL);
    json_arena_free(&a);
}

static void json_duplicate_keys_last_wins(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = parse_ok(&a, "{\"k\":1,\"k\":2}", 0);
    assert_int_equal(v->n, 2);
    json_value_t *k = json_obj_get(v, "k");
    assert_int_equal(k->len, 1);
    assert_memory_equal(k->str, "2", 1);
    json_arena_free(&a);
}

static void json_strings_zero_copy_and_escapes(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    const char *doc = "[\"plain\",\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\"\\u0041\\u00e9\\u20AC\","
                      "\"\\ud83d\\ude00\",\"caf\xc3\xa9\",\"\\u0000x\"]";
    json_value_t *v = parse_ok(&a, doc, 0);
    json_value_t *s = v->child;
    /* no escapes: points into the input */
    assert_ptr_equal(s->str, doc + 2);
    assert_int_equal(s->len, 5);
    assert_int_equal(s->flags & JSON_F_ESCAPED, 0);
    s = s->next;
    assert_true(s->flags & JSON_F_ESCAPED);
    assert_int_equal(s->len, 12);
    assert_memory_equal(s->str, "a\"b\\c/d\b\f\n\r\t", 12);
    s = s->next; /* A, e-acute (C3 A9), euro (E2 82 AC) */
    assert_int_equal(s->len, 6);
    assert_memory_equal(s->str, "A\xc3\xa9\xe2\x82\xac", 6);
    s = s->next; /* U+1F600 = F0 9F 98 80 */
    assert_int_equal(s->len, 4);
    assert_memory_equal(s->str, "\xf0\x9f\x98\x80", 4);
    s = s->next; /* raw UTF-8 passes */
    assert_int_equal(s->len, 5);
    assert_memory_equal(s->str, "caf\xc3\xa9", 5);
    s = s->next; /* NUL decoded, length says 2 */
    assert_int_equal(s->len, 2);
    assert_memory_equal(s->str, "\0x", 2);
    /* escaped keys are decoded too */
    v = parse_ok(&a, "{\"h\\u006fst\":\"w\"}", 0);
    assert_true(json_str_eq(json_obj_get(v, "host"), "w"));
    json_arena_free(&a);
}

static void json_numbers_kept_as_text(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v =
        parse_ok(&a,
                 "[42, -7, 0, 1.50, 1e3, -2.5E-3, 9223372036854775807,"
                 "-9223372036854775808, 9223372036854775808, 123456789012345678901234]",
                 0);
    const char *texts[] = {"42",
                           "-7",
                           "0",
                           "1.50",
                           "1e3",
                           "-2.5E-3",
                           "9223372036854775807",
                           "-9223372036854775808",
                           "9223372036854775808",
                           "123456789012345678901234"};
    int integer[] = {1, 1, 1, 0, 0, 0, 1, 1, 1, 1};
    size_t i = 0;
    for (json_value_t *n = v->child; n; n = n->next, i++) {
        assert_int_equal(n->type, JSON_NUMBER);
        assert_int_equal(n->len, strlen(texts[i]));
        assert_memory_equal(n->str, texts[i], n->len);
        assert_int_equal(!!(n->flags & JSON_F_INTEGER), integer[i]);
    }
    assert_int_equal(i, 10);
    int64_t x;
    json_value_t *n = v->child;
    assert_int_equal(json_number_i64(n, &x), 0);
    assert_int_equal(x, 42);
    assert_int_equal(json_number_i64(n->next, &x), 0);
    assert_int_equal(x, -7);
    assert_int_equal(json_number_i64(n->next->next->next, &x), OCT_EPARSE); /* 1.50 */
    double d;
    assert_int_equal(json_number_double(n->next->next->next->next->next, &d), 0);
    assert_true(d == -2.5e-3);
    n = n->next->next->next->next->next->next;
    assert_int_equal(json_number_i64(n, &x), 0);
    assert_true(x == INT64_MAX);
    assert_int_equal(json_number_i64(n->next, &x), 0);
    assert_true(x == INT64_MIN);
    assert_int_equal(json_number_i64(n->next->next, &x), OCT_ERANGE);
    assert_int_equal(json_number_i64(n->next->next->next, &x), OCT_ERANGE);
    json_arena_free(&a);
}

static void json_nonfinite_only_when_allowed(void **state)
{
    (void)state;
    parse_bad("[NaN]", 0);
    parse_bad("[Infinity]", 0);
    parse_bad("[-Infinity]", 0);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = parse_ok(&a, "[NaN,Infinity,-Infinity]", JSON_ALLOW_NONFINITE);
    const char *t[] = {"NaN", "Infinity", "-Infinity"};
    size_t i = 0;
    for (json_value_t *n = v->child; n; n = n->next, i++) {
        assert_int_equal(n->type, JSON_NUMBER);
        assert_true(n->flags & JSON_F_NONFINITE);
        assert_int_equal(n->len, strlen(t[i]));
        assert_memory_equal(n->str, t[i], n->len);
    }
    parse_bad("[Nan]", JSON_ALLOW_NONFINITE);
    parse_bad("[-Inf]", JSON_ALLOW_NONFINITE);
    json_arena_free(&a);
}

static void json_invalid_documents(void **state)
{
    (void)state;
    const char *bad[] = {
        "",
        "   ",
        "{",
        "}",
        "[",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{a:1}",
        "{'a':1}",
        "[01]",
        "[+1]",
        "[.5]",
        "[1.]",
        "[1e]",
        "[1e+]",
        "[-]",
        "[0x10]",
        "[tru]",
        "[nulls]",
        "[True]",
        "\"abc",
        "\"a\\x\"",
        "\"\\u12\"",
        "\"\\uZZZZ\"",
        "\"tab\there\"",
        "\"nl\nhere\"",
        "\"\\ud800\"",
        "\"\\ude00\"",
        "\"\\ud800\\u0041\"",
        "\"\xc3\"",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\xf5\x80\x80\x80\"",
        "\"\xff\"",
        "[1] [2]",
        "{} x",
        "[1 2]",
        "{\"a\":1 \"b\":2}",
        "/* c */ 1",
        "[1]//",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        parse_bad(bad[i], 0);
}

static void json_depth_limit(void **state)
{
    (void)state;
    /* JSON_MAX_DEPTH levels pass, one more fails cleanly */
    size_t d = JSON_MAX_DEPTH;
    static char s1[2 * JSON_MAX_DEPTH + 1], s2[2 * (JSON_MAX_DEPTH + 1) + 1];
    memset(s1, '[', d);
    memset(s1 + d, ']', d);
    json_arena_t a = JSON_ARENA_INIT;
    (void)parse_ok(&a, s1, 0);
    memset(s2, '[', d + 1);
    memset(s2 + d + 1, ']', d + 1);
    json_value_t *v;
    oct_errbuf_t eb;
    assert_int_equal(json_parse(&a, s2, strlen(s2), 0, &v, &eb), OCT_EPARSE);
    assert_non_null(strstr(eb.msg, "nesting too deep"));
    /* a million open brackets must not recurse a million times */
    size_t big = 1000000;
    char *s = malloc(big + 1);
    memset(s, '[', big);
    s[big] = '\0';
    assert_int_equal(json_validate(s, big, 0, &eb), OCT_EPARSE);
    for (size_t i = 0; i < big; i += 2)
        s[i] = '{', s[i + 1] = '"';
    assert_int_equal(json_validate(s, big, 0, &eb), OCT_EPARSE);
    free(s);
    json_arena_free(&a);
}

static void json_garbage_never_crashes(void **state)
{
    (void)state;
    /* Random bytes and mutated valid documents: every result must be 0 or
     * OCT_EPARSE, and parse and validate must agree. */
    const char *seed = "[{\"metric\":\"m\\u00e9\",\"timestamp\":1356998400,\"value\":\"1e3\","
                       "\"tags\":{\"a\":\"b\"}},[true,false,null,-1.5e-3]]";
    size_t sl = strlen(seed);
    char buf[256];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    json_arena_t a = JSON_ARENA_INIT;
    for (int it = 0; it < 20000; it++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n;
        if (it & 1) {
            n = x % sizeof buf;
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[i] = (char)(x & 0xFF);
            }
        } else {
            memcpy(buf, seed, sl);
            n = sl;
            for (int m = 0; m < 3; m++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[x % sl] = "[]{}\",:\\e.-0u\x80 "[(x >> 32) % 16];
            }
        }
        json_value_t *v;
        oct_errbuf_t eb;
        int r1 = json_parse(&a, buf, n, JSON_ALLOW_NONFINITE, &v, &eb);
        int r2 = json_validate(buf, n, JSON_ALLOW_NONFINITE, &eb);
        assert_true(r1 == 0 || r1 == OCT_EPARSE);
        assert_int_equal(r1, r2);
        if ((it & 255) == 0) json_arena_reset(&a);
    }
    json_arena_free(&a);
}

static void json_stream_array(void **state)
{
    (void)state;
    const char *doc = " [ {\"a\":1} , [2] ,\"three\"] \n";
    json_stream_t st;
    oct_errbuf_t eb;
    json_arena_t a = JSON_ARENA_INIT;
    assert_int_equal(json_stream_open(&st, doc, strlen(doc), 0, &eb), 0);
    json_value_t *v;
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 1);
    assert_int_equal(v->type, JSON_OBJECT);
    json_arena_reset(&a);
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 1);
    assert_int_equal(v->type, JSON_ARRAY);
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 1);
    assert_true(json_str_eq(v, "three"));
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 0);
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 0);

    assert_int_equal(json_stream_open(&st, "[]", 2, 0, &eb), 0);
    assert_int_equal(json_stream_next(&st, &a, &v, &eb), 0);
    assert_int_equal(json_stream_open(&st, "{}", 2, 0, &eb), OCT_EPARSE);
    const char *bad[] = {"[1,]", "[1 2]", "[1", "[1] x", "[,]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(json_stream_open(&st, bad[i], strlen(bad[i]), 0, &eb), 0);
        int rc;
        while ((rc = json_stream_next(&st, &a, &v, &eb)) == 1) {
        }
        if (rc != OCT_EPARSE) fail_msg("stream accepted <%s>", bad[i]);
    }
    json_arena_free(&a);
}

static void json_writer_output(void **state)
{
    (void)state;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &sb);
    json_w_obj_begin(&w);
    json_w_key(&w, "s");
    json_w_str(&w, "a\"b\n");
    json_w_key(&w, "i");
    json_w_int(&w, -42);
    json_w_key(&w, "u");
    json_w_uint(&w, UINT64_MAX);
    json_w_key(&w, "d");
    json_w_double(&w, 0.1);
    json_w_key(&w, "nan");
    json_w_double(&w, NAN);
    json_w_key(&w, "arr");
    json_w_arr_begin(&w);
    json_w_bool(&w, 1);
    json_w_null(&w);
    json_w_arr_begin(&w);
    json_w_arr_end(&w);
    json_w_obj_begin(&w);
    json_w_obj_end(&w);
    json_w_raw(&w, "{\"x\":1}", 7);
    json_w_arr_end(&w);
    json_w_key(&w, "after");
    json_w_str(&w, NULL);
    json_w_obj_end(&w);
    assert_string_equal(sb.ptr, "{\"s\":\"a\\\"b\\n\",\"i\":-42,\"u\":18446744073709551615,"
                                "\"d\":0.1,\"nan\":\"NaN\",\"arr\":[true,null,[],{},{\"x\":1}],"
                                "\"after\":null}");
    /* re-serialising a parsed document gives the compact form */
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = parse_ok(&a, " { \"k\" : [ 1.50 , \"\\u00e9\" , {} ] } ", 0);
    oct_strbuf_reset(&sb);
    json_w_init(&w, &sb);
    json_w_value(&w, v);
    assert_string_equal(sb.ptr, "{\"k\":[1.50,\"\xc3\xa9\",{}]}");
    oct_strbuf_free(&sb);
    json_arena_free(&a);
}

/* The integer writer (common/itoa.h) against printf, the text it replaces:
 * every digit count, the ends of both ranges, and a pseudo-random spread. */
static void json_integers_as_printf(void **state)
{
    (void)state;
    int64_t vals[200];
    size_t nv = 0;
    vals[nv++] = INT64_MIN;
    vals[nv++] = INT64_MAX;
    vals[nv++] = INT64_MIN + 1;
    int64_t p10 = 1;
    for (int d = 0; d < 19; d++) {
        vals[nv++] = p10;
        vals[nv++] = p10 - 1;
        vals[nv++] = -p10;
        vals[nv++] = -(p10 - 1);
        vals[nv++] = p10 + 1;
        if (d < 18) p10 *= 10; /* 10^19 is past INT64_MAX */
    }
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    while (nv < sizeof vals / sizeof *vals) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[nv++] = (int64_t)(x >> (x % 64));
    }
    for (size_t i = 0; i < nv; i++) {
        char want[32], got[OCT_ITOA_MAX + 1];
        snprintf(want, sizeof want, "%lld", (long long)vals[i]);
        size_t n = oct_i64toa(vals[i], got);
        got[n] = '\0';
        assert_string_equal(got, want);
        oct_strbuf_t sb = OCT_STRBUF_INIT;
        json_writer_t w;
        json_w_init(&w, &sb);
        json_w_arr_begin(&w);
        json_w_int(&w, vals[i]);
        json_w_uint(&w, (uint64_t)vals[i]);
        json_w_arr_end(&w);
        char want2[64];
        snprintf(want2, sizeof want2, "[%lld,%llu]", (long long)vals[i],
                 (unsigned long long)vals[i]);
        assert_string_equal(oct_strbuf_cstr(&sb), want2);
        oct_strbuf_free(&sb);
    }
    char big[OCT_ITOA_MAX];
    assert_int_equal(oct_u64toa(UINT64_MAX, big), 20);
    assert_memory_equal(big, "18446744073709551615", 20);
}

static void json_arena_reuse(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    a.block_size = 64;
    char *p = json_arena_alloc(&a, 10);
    memset(p, 1, 10);
    char *big = json_arena_alloc(&a, 1000); /* larger than a block */
    memset(big, 2, 1000);
    assert_true(((uintptr_t)big % _Alignof(max_align_t)) == 0);
    char *s = json_arena_strndup(&a, "hello", 3);
    assert_string_equal(s, "hel");
    json_arena_reset(&a);
    assert_int_equal(a.bytes, 0);
    p = json_arena_alloc(&a, 500); /* reuses the kept 1000-byte block */
    memset(p, 3, 500);
    json_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_valid_documents),
        cmocka_unit_test(json_duplicate_keys_last_wins),
        cmocka_unit_test(json_strings_zero_copy_and_escapes),
        cmocka_unit_test(json_numbers_kept_as_text),
        cmocka_unit_test(json_nonfinite_only_when_allowed),
        cmocka_unit_test(json_invalid_documents),
        cmocka_unit_test(json_depth_limit),
        cmocka_unit_test(json_garbage_never_crashes),
        cmocka_unit_test(json_stream_array),
        cmocka_unit_test(json_writer_output),
        cmocka_unit_test(json_integers_as_printf),
        cmocka_unit_test(json_arena_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
