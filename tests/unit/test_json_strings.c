/* test_json_strings.c -- common/json's string scanner at every length and
 * every position: the scanner reads 16 bytes at a time where they exist and
 * byte by byte at the end, so each special byte (closing quote, escape,
 * control character, invalid and valid UTF-8) is put at each offset of
 * strings from 0 to 40 bytes, with and without bytes after the string, and
 * the outcome is checked against what RFC 8259 says: the decoded value or
 * the error and its offset, computed here from the string's layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

/* Parses doc[0..n) (not NUL-terminated: a byte past the end must never be
 * read, which ASan checks because the copy is malloc'd to exactly n). */
static int parse_n(json_arena_t *a, const char *doc, size_t n, json_value_t **v, oct_errbuf_t *eb)
{
    char *copy = malloc(n ? n : 1);
    memcpy(copy, doc, n);
    int rc = json_parse(a, copy, n, 0, v, eb);
    oct_errbuf_t eb2;
    int rc2 = json_validate(copy, n, 0, &eb2);
    assert_int_equal(rc, rc2);
    if (rc) assert_string_equal(eb->msg, eb2.msg);
    /* the decoded value may point into the input: compare before freeing */
    if (!rc && (*v)->type == JSON_STRING && !((*v)->flags & JSON_F_ESCAPED)) {
        char *dup = json_arena_strndup(a, (*v)->str, (*v)->len);
        (*v)->str = dup;
    }
    free(copy);
    return rc;
}

static void want_error(const char *doc, size_t n, const char *why, size_t offset)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    char want[128];
    snprintf(want, sizeof want, "%s at offset %zu", why, offset);
    if (parse_n(&a, doc, n, &v, &eb) != OCT_EPARSE) fail_msg("accepted: %.*s", (int)n, doc);
    assert_string_equal(eb.msg, want);
    json_arena_free(&a);
}

static void want_string(const char *doc, size_t n, const char *want, size_t want_len)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    if (parse_n(&a, doc, n, &v, &eb)) fail_msg("%.*s: %s", (int)n, doc, eb.msg);
    assert_int_equal(v->type, JSON_STRING);
    assert_int_equal(v->len, want_len);
    assert_memory_equal(v->str, want, want_len);
    json_arena_free(&a);
}

/* doc = '"' + L plain letters with 'special' (sl bytes) at position k +
 * closing quote (if closed) + tail. Returns its length. */
static size_t build(char *doc, size_t L, size_t k, const char *special, size_t sl, int closed,
                    const char *tail)
{
    size_t n = 0;
    doc[n++] = '"';
    for (size_t i = 0; i < L; i++) {
        if (i == k) {
            memcpy(doc + n, special, sl);
            n += sl;
        } else {
            doc[n++] = (char)('a' + i % 26);
        }
    }
    if (closed) doc[n++] = '"';
    memcpy(doc + n, tail, strlen(tail));
    return n + strlen(tail);
}

static void strings_every_length_and_position(void **state)
{
    (void)state;
    char doc[128], want[128];
    memset(want, 0, sizeof want);
    for (size_t L = 0; L <= 40; L++) {
        /* plain: the value is the letters; unterminated: error at the end */
        size_t n = build(doc, L, SIZE_MAX, "", 0, 1, "");
        for (size_t i = 0; i < L; i++)
            want[i] = (char)('a' + i % 26);
        want_string(doc, n, want, L);
        n = build(doc, L, SIZE_MAX, "", 0, 1, "  ");
        want_string(doc, n, want, L);
        n = build(doc, L, SIZE_MAX, "", 0, 0, "");
        want_error(doc, n, "unterminated string", 1 + L);
        /* the closing quote followed by more bytes */
        n = build(doc, L, SIZE_MAX, "", 0, 1, "x");
        want_error(doc, n, "trailing characters after the value", 2 + L);

        for (size_t k = 0; k < L; k++) {
            /* a control character at k (the string's byte k is doc[1 + k]) */
            n = build(doc, L, k, "\x01", 1, 1, "");
            want_error(doc, n, "control character in string", 1 + k);
            n = build(doc, L, k, "\x1f", 1, 1, "");
            want_error(doc, n, "control character in string", 1 + k);
            /* a byte that cannot start UTF-8, and a lone continuation byte */
            n = build(doc, L, k, "\xff", 1, 1, "");
            want_error(doc, n, "invalid UTF-8 in string", 1 + k);
            n = build(doc, L, k, "\x80", 1, 1, "");
            want_error(doc, n, "invalid UTF-8 in string", 1 + k);
            /* U+00E9 (C3 A9) and U+20AC (E2 82 AC) are kept as they are */
            n = build(doc, L, k, "\xc3\xa9", 2, 1, "");
            memcpy(want, doc + 1, L + 1);
            want_string(doc, n, want, L + 1);
            n = build(doc, L, k, "\xe2\x82\xac", 3, 1, "");
            memcpy(want, doc + 1, L + 2);
            want_string(doc, n, want, L + 2);
            /* an escaped quote and an escaped newline are decoded */
            n = build(doc, L, k, "\\\"", 2, 1, "");
            for (size_t i = 0; i < L; i++)
                want[i] = i == k ? '"' : (char)('a' + i % 26);
            want_string(doc, n, want, L);
            n = build(doc, L, k, "\\n", 2, 1, "");
            want[k] = '\n';
            want_string(doc, n, want, L);
            /* a quote at k ends the string early: the rest is trailing */
            n = build(doc, L, k, "\"", 1, 1, "");
            want_error(doc, n, "trailing characters after the value", 2 + k);
        }
    }
}

/* Strings as object keys and array members take the same scanner. */
static void strings_in_objects(void **state)
{
    (void)state;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    const char *doc =
        "{\"datacenter_and_rack_id\":\"us-east-1a-rack-0042-row-7\",\"k\":[\"0123456789"
        "abcdef0123456789\",\"\"]}";
    /* parsed in place: keys point into the input */
    assert_int_equal(json_parse(&a, doc, strlen(doc), 0, &v, &eb), 0);
    const json_value_t *x = json_obj_get(v, "datacenter_and_rack_id");
    assert_non_null(x);
    assert_true(json_str_eq(x, "us-east-1a-rack-0042-row-7"));
    const json_value_t *k = json_obj_get(v, "k");
    assert_non_null(k);
    assert_int_equal(k->n, 2);
    assert_true(json_str_eq(k->child, "0123456789abcdef0123456789"));
    assert_true(json_str_eq(k->child->next, ""));
    json_arena_free(&a);
    /* a control character 20 bytes into a key: offset 1 ('{') + 1 ('"') + 20 */
    want_error("{\"0123456789abcdefghij\x02xyz\":1}", 30, "control character in string", 22);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_every_length_and_position),
        cmocka_unit_test(strings_in_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
