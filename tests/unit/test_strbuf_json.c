/* test_strbuf_json.c -- oct_strbuf_json_string against a per-byte model of
 * JSON string escaping written here: every byte value at every position of
 * short strings, runs between escapes, and hand-written cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"

/* The model: one byte at a time, as RFC 8259 asks (and OpenTSDB's Jackson
 * writes): quote and backslash escaped, \n \r \t by name, other controls as
 * \u00XX, everything else (UTF-8 bytes included) as is. */
static size_t model(const unsigned char *s, size_t n, char *out)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c == '\n') {
            out[o++] = '\\', out[o++] = 'n';
        } else if (c == '\r') {
            out[o++] = '\\', out[o++] = 'r';
        } else if (c == '\t') {
            out[o++] = '\\', out[o++] = 't';
        } else if (c < 0x20) {
            o += (size_t)sprintf(out + o, "\\u%04x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    return o;
}

static void check(const unsigned char *s, size_t n)
{
    char want[512];
    size_t wl = model(s, n, want);
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_append(&sb, "x", 1); /* appends after what is there */
    oct_strbuf_json_string(&sb, (const char *)s, n);
    assert_int_equal(sb.len, wl + 1);
    assert_memory_equal(sb.ptr + 1, want, wl);
    assert_int_equal(sb.ptr[sb.len], '\0');
    oct_strbuf_free(&sb);
}

static void every_byte_at_every_position(void **state)
{
    (void)state;
    unsigned char s[40];
    for (size_t len = 1; len <= 24; len++)
        for (size_t pos = 0; pos < len; pos++)
            for (unsigned b = 0; b < 256; b++) {
                memset(s, 'a' + (int)(len % 26), len);
                s[pos] = (unsigned char)b;
                if (pos + 2 < len) s[pos + 2] = '"'; /* two escapes with a run between */
                check(s, len);
            }
    check((const unsigned char *)"", 0);
}

static void hand_written(void **state)
{
    (void)state;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_json_string(&sb, "sys.cpu.user", 12);
    assert_string_equal(sb.ptr, "\"sys.cpu.user\"");
    oct_strbuf_reset(&sb);
    oct_strbuf_json_string(&sb, "a\"b\\c\n\x01\xc3\xa9", 9);
    assert_string_equal(sb.ptr, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\"");
    oct_strbuf_reset(&sb);
    oct_strbuf_json_string(&sb, "\"\"", 2);
    assert_string_equal(sb.ptr, "\"\\\"\\\"\"");
    oct_strbuf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_byte_at_every_position),
        cmocka_unit_test(hand_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
