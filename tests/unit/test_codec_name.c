/* test_codec_name.c -- codec/name: Tags.validateString rules, error texts, UTF-8 deviation.
 * Categories of the non-ASCII samples are from the Unicode charts (noted per case). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "codec/name.h"

static int valid(const char *s, const char *specials)
{
    oct_errbuf_t eb;
    return codec_name_validate_metric(s, strlen(s), specials, &eb);
}

static void name_ascii_rules(void **state)
{
    (void)state;
    assert_int_equal(valid("sys.cpu.user", NULL), 0);
    assert_int_equal(valid("a-b_c.d/E9", NULL), 0);
    const char *bad = " =,:;!@#$%^&*()+[]{}|\\\"'<>?~`\t";
    for (const char *p = bad; *p; p++) {
        char s[4] = {'a', *p, 'b', 0};
        assert_int_equal(valid(s, NULL), OCT_EBADNAME);
    }
}

static void name_error_texts(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    assert_int_equal(codec_name_validate_metric("sys cpu", 7, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"sys cpu\"): illegal character:  ");
    assert_int_equal(codec_name_validate_metric("", 0, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name: empty string");
    assert_int_equal(codec_name_validate_metric(NULL, 0, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name: null");
    assert_int_equal(codec_name_validate_tagk("host=x", 6, "web01", 5, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg,
                        "Invalid tag name with value [web01] (\"host=x\"): illegal character: =");
    assert_int_equal(codec_name_validate_tagv("web 01", 6, "host", 4, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg,
                        "Invalid tag value with key [host] (\"web 01\"): illegal character:  ");
    assert_int_equal(codec_name_validate_tagv("", 0, "host", 4, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid tag value with key [host]: empty string");
    /* the reported character is a whole UTF-8 sequence: U+1F600 (So) */
    assert_int_equal(codec_name_validate_metric("a\xF0\x9F\x98\x80", 5, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"a\xF0\x9F\x98\x80\"): illegal character: "
                                "\xF0\x9F\x98\x80");
}

static void name_unicode_letters(void **state)
{
    (void)state;
    assert_int_equal(valid("caf\xC3\xA9", NULL), 0);              /* é U+00E9 Ll */
    assert_int_equal(valid("\xC3\x89t\xC3\xA9", NULL), 0);        /* É U+00C9 Lu */
    assert_int_equal(valid("\xE4\xB8\xAD\xE6\x96\x87", NULL), 0); /* 中文 Lo */
    assert_int_equal(valid("\xD0\x9C\xD0\xBE\xD1\x81", NULL), 0); /* Cyrillic */
    assert_int_equal(valid("\xC7\x85", NULL), 0);                 /* ǅ U+01C5 Lt */
    assert_int_equal(valid("\xCA\xB0", NULL), 0);                 /* ʰ U+02B0 Lm */
    assert_int_equal(valid("\xF0\xA0\x80\x80", NULL), 0); /* U+20000 Lo, non-BMP: accepted */
    assert_int_equal(valid("\xF0\x9D\x90\x80", NULL), 0); /* U+1D400 math bold A, Lu */
    /* rejected */
    assert_int_equal(valid("\xD9\xA3", NULL), OCT_EBADNAME);         /* ٣ U+0663 Nd */
    assert_int_equal(valid("\xF0\x9F\x98\x80", NULL), OCT_EBADNAME); /* 😀 So */
    assert_int_equal(valid("\xC2\xA0", NULL), OCT_EBADNAME);         /* NBSP Zs */
    assert_int_equal(valid("\xC2\xB2", NULL), OCT_EBADNAME);         /* ² No */
    assert_int_equal(valid("\xCC\x81", NULL), OCT_EBADNAME);         /* combining acute Mn */
    assert_int_equal(valid("\xE2\x82\xAC", NULL), OCT_EBADNAME);     /* € Sc */
}

static void name_letter_table_edges(void **state)
{
    (void)state;
    assert_true(codec_name_is_letter('A'));
    assert_true(codec_name_is_letter('z'));
    assert_false(codec_name_is_letter('0'));
    assert_false(codec_name_is_letter('_'));
    assert_true(codec_name_is_letter(0xAA));  /* ª Lo */
    assert_false(codec_name_is_letter(0xD7)); /* × Sm */
    assert_true(codec_name_is_letter(0xFF));  /* ÿ Ll */
    assert_false(codec_name_is_letter(0x10FFFF));
    assert_false(codec_name_is_letter(0));
    assert_string_equal(codec_name_unicode_version(), codec__letters_unicode_version);
    /* the table is sorted and non-overlapping, so binary search is valid */
    for (size_t i = 0; i < codec__letter_range_count; i++) {
        assert_true(codec__letter_ranges[i].lo <= codec__letter_ranges[i].hi);
        if (i) assert_true(codec__letter_ranges[i - 1].hi + 1 < codec__letter_ranges[i].lo);
    }
}

static void name_invalid_utf8(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    const char *bad[] = {
        "a\x80",            /* lone continuation */
        "\xC3",             /* truncated */
        "\xC3(",            /* bad continuation */
        "\xC0\xAF",         /* overlong '/' */
        "\xE0\x80\xAF",     /* overlong */
        "\xED\xA0\x80",     /* surrogate U+D800 */
        "\xF4\x90\x80\x80", /* U+110000 */
        "\xFF",             /* never valid */
        "\xE9t\xE9",        /* Latin-1 bytes, not UTF-8 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(valid(bad[i], NULL), OCT_EBADNAME);
    assert_int_equal(codec_name_validate_metric("ab\xE9", 3, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"ab\\xE9\"): invalid UTF-8 at byte 2");
    /* an embedded NUL is a character, and an illegal one */
    assert_int_equal(codec_name_validate_metric("a\0b", 3, NULL, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"a\\x00b\"): illegal character: \\x00");
}

static void name_specialchars(void **state)
{
    (void)state;
    assert_int_equal(valid("a b", " "), 0);
    assert_int_equal(valid("a=b", " "), OCT_EBADNAME);
    assert_int_equal(valid("a=b:c", "=:"), 0);
    assert_int_equal(valid("x\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"), 0); /* emoji via setting */
    assert_int_equal(valid("\xD9\xA3", "!\xD9\xA3"), 0);
    assert_int_equal(valid("a!", ""), OCT_EBADNAME);
    oct_errbuf_t eb;
    assert_int_equal(codec_name_validate_tagk("a b", 3, "v", 1, " ", &eb), 0);
    assert_int_equal(codec_name_validate_tagv("a b", 3, "k", 1, " ", &eb), 0);
}

static void utf8_decoder(void **state)
{
    (void)state;
    uint32_t cp;
    assert_int_equal(codec_utf8_decode((const uint8_t *)"\xC3\xA9", 2, &cp), 2);
    assert_int_equal(cp, 0xE9);
    assert_int_equal(codec_utf8_decode((const uint8_t *)"\xEF\xBF\xBF", 3, &cp), 3);
    assert_int_equal(cp, 0xFFFF);
    assert_int_equal(codec_utf8_decode((const uint8_t *)"\xF4\x8F\xBF\xBF", 4, &cp), 4);
    assert_int_equal(cp, 0x10FFFF);
    assert_int_equal(codec_utf8_decode((const uint8_t *)"\xF0\xA0\x80\x80", 3, &cp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(name_ascii_rules),     cmocka_unit_test(name_error_texts),
        cmocka_unit_test(name_unicode_letters), cmocka_unit_test(name_letter_table_edges),
        cmocka_unit_test(name_invalid_utf8),    cmocka_unit_test(name_specialchars),
        cmocka_unit_test(utf8_decoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
