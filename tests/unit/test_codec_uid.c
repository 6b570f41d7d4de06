/* test_codec_uid.c -- codec/uid_bytes: UID bytes, limits, hex, Java byte lists, kinds.
 * Expectations are hand arithmetic (written next to each case) or OpenTSDB's rules as
 * docs/format/uid.md states them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "codec/uid_bytes.h"
#include "testutil.h"

static void uid_max_per_width(void **state)
{
    (void)state;
    assert_true(codec_uid_max(1) == 255);
    assert_true(codec_uid_max(3) == 16777215);               /* docs/format/uid.md section 1 */
    assert_true(codec_uid_max(7) == 72057594037927935ull);   /* 2^56 - 1 */
    assert_true(codec_uid_max(8) == 9223372036854775807ull); /* 2^63 - 1, signed counter */
    assert_true(codec_uid_max(0) == 0);
    assert_true(codec_uid_max(9) == 0);
}

static void uid_encode_decode_widths(void **state)
{
    (void)state;
    uint8_t b[8];
    assert_int_equal(codec_uid_encode(1, 3, b), 0);
    assert_memory_equal(b, "\x00\x00\x01", 3);
    assert_int_equal(codec_uid_encode(228, 3, b), 0);
    assert_memory_equal(b, "\x00\x00\xE4", 3);
    assert_int_equal(codec_uid_encode(0x010203, 3, b), 0);
    assert_memory_equal(b, "\x01\x02\x03", 3);
    assert_true(codec_uid_decode(b, 3) == 66051); /* 1*65536 + 2*256 + 3 */
    assert_int_equal(codec_uid_encode(16777215, 3, b), 0);
    assert_memory_equal(b, "\xFF\xFF\xFF", 3);
    memset(b, 0xAA, sizeof b);
    assert_int_equal(codec_uid_encode(16777216, 3, b), OCT_ERANGE);
    assert_int_equal(b[0], 0xAA); /* untouched on error */
    assert_int_equal(codec_uid_encode(1, 0, b), OCT_EINVAL);
    assert_int_equal(codec_uid_encode(1, 9, b), OCT_EINVAL);
    assert_int_equal(codec_uid_encode(9223372036854775807ull, 8, b), 0);
    assert_memory_equal(b, "\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8);
    assert_int_equal(codec_uid_encode(9223372036854775808ull, 8, b), OCT_ERANGE);
    /* decode never fails, even above the encode limit */
    memset(b, 0xFF, 8);
    assert_true(codec_uid_decode(b, 8) == UINT64_MAX);
    assert_int_equal(codec_uid_encode(255, 1, b), 0);
    assert_int_equal(b[0], 0xFF);
    assert_int_equal(codec_uid_encode(256, 1, b), OCT_ERANGE);
}

static void uid_hex_output_upper_padded(void **state)
{
    (void)state;
    char s[32];
    assert_int_equal(codec_uid_to_hex((const uint8_t *)"\x00\x00\x01", 3, s, sizeof s), 6);
    assert_string_equal(s, "000001");
    assert_int_equal(codec_uid_to_hex((const uint8_t *)"\x00\x00\xFF", 3, s, sizeof s), 6);
    assert_string_equal(s, "0000FF");
    assert_int_equal(codec_uid_to_hex((const uint8_t *)"\xab\xcd", 2, s, sizeof s), 4);
    assert_string_equal(s, "ABCD");
    assert_int_equal(codec_uid_to_hex((const uint8_t *)"\x00\x00\x01", 3, s, 6), OCT_ENOSPC);
    assert_int_equal(codec_uid_to_hex((const uint8_t *)"\x00\x00\x01", 3, s, 7), 6);
}

static void uid_hex_parse_rules(void **state)
{
    (void)state;
    uint8_t b[8];
    oct_errbuf_t eb;
    assert_int_equal(codec_uid_from_hex("000001", 6, 3, b, &eb), 0);
    assert_memory_equal(b, "\x00\x00\x01", 3);
    assert_int_equal(codec_uid_from_hex("0000ff", 6, 3, b, &eb), 0); /* lower case */
    assert_memory_equal(b, "\x00\x00\xFF", 3);
    assert_int_equal(codec_uid_from_hex("1", 1, 3, b, &eb), 0); /* odd -> "01", padded */
    assert_memory_equal(b, "\x00\x00\x01", 3);
    assert_int_equal(codec_uid_from_hex("ABC", 3, 3, b, &eb), 0); /* "0ABC" */
    assert_memory_equal(b, "\x00\x0A\xBC", 3);
    assert_int_equal(codec_uid_from_hex("10203", 5, 3, b, &eb), 0);
    assert_memory_equal(b, "\x01\x02\x03", 3);
    assert_int_equal(codec_uid_from_hex("00000001", 8, 3, b, &eb), OCT_EPARSE); /* too long */
    assert_int_equal(codec_uid_from_hex("1000001", 7, 3, b, &eb), OCT_EPARSE);  /* 4 bytes */
    assert_int_equal(codec_uid_from_hex("00g001", 6, 3, b, &eb), OCT_EPARSE);
    assert_non_null(strstr(eb.msg, "position 2"));
    assert_int_equal(codec_uid_from_hex("", 0, 3, b, &eb), OCT_EPARSE);
    assert_int_equal(codec_uid_from_hex("0x01", 4, 3, b, &eb), OCT_EPARSE);
}

static void uid_javabytes_signed_display(void **state)
{
    (void)state;
    char s[64];
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x00\x00\x01", 3, s, sizeof s), 9);
    assert_string_equal(s, "[0, 0, 1]");
    /* 0xE4 = 228 = 256 - 28 */
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x00\x00\xE4", 3, s, sizeof s), 11);
    assert_string_equal(s, "[0, 0, -28]");
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x7F\x80\xFF", 3, s, sizeof s), 15);
    assert_string_equal(s, "[127, -128, -1]");
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"", 0, s, sizeof s), 2);
    assert_string_equal(s, "[]");
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x80", 1, s, sizeof s), 6);
    assert_string_equal(s, "[-128]");
}

static void uid_javabytes_enospc(void **state)
{
    (void)state;
    char s[16];
    /* "[-128]" needs 7 bytes with the NUL */
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x80", 1, s, 6), OCT_ENOSPC);
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"\x80", 1, s, 7), 6);
    assert_int_equal(codec_uid_to_javabytes((const uint8_t *)"", 0, s, 2), OCT_ENOSPC);
}

static void uid_javabytes_parse(void **state)
{
    (void)state;
    uint8_t b[8];
    oct_errbuf_t eb;
    const char *s = "[0, 0, -28]";
    assert_int_equal(codec_uid_from_javabytes(s, strlen(s), b, sizeof b, &eb), 3);
    assert_memory_equal(b, "\x00\x00\xE4", 3); /* not 9C, whatever the docs say */
    s = " [127,-128 , -1 ] ";
    assert_int_equal(codec_uid_from_javabytes(s, strlen(s), b, sizeof b, &eb), 3);
    assert_memory_equal(b, "\x7F\x80\xFF", 3);
    s = "[0, 0, 228]"; /* unsigned form accepted */
    assert_int_equal(codec_uid_from_javabytes(s, strlen(s), b, sizeof b, &eb), 3);
    assert_int_equal(b[2], 0xE4);
    s = "[]";
    assert_int_equal(codec_uid_from_javabytes(s, strlen(s), b, sizeof b, &eb), 0);
    const char *bad[] = {"",       "0, 0, 1", "[0, 0, 1", "[0,, 1]", "[0, 256]",
                         "[-129]", "[1,]",    "[1] x",    "[a]",     "[-]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(codec_uid_from_javabytes(bad[i], strlen(bad[i]), b, sizeof b, &eb),
                         OCT_EPARSE);
    s = "[1, 2, 3]";
    assert_int_equal(codec_uid_from_javabytes(s, strlen(s), b, 2, &eb), OCT_ENOSPC);
}

static void uid_javabytes_roundtrip_all_bytes(void **state)
{
    (void)state;
    uint8_t in[256], back[256];
    char s[256 * 6 + 4];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    int n = codec_uid_to_javabytes(in, 256, s, sizeof s);
    assert_true(n > 0);
    oct_errbuf_t eb;
    assert_int_equal(codec_uid_from_javabytes(s, (size_t)n, back, sizeof back, &eb), 256);
    assert_memory_equal(in, back, 256);
}

static void uid_kinds(void **state)
{
    (void)state;
    assert_string_equal(codec_uid_kind_qualifier(CODEC_UID_METRIC), "metrics");
    assert_string_equal(codec_uid_kind_qualifier(CODEC_UID_TAGK), "tagk");
    assert_string_equal(codec_uid_kind_qualifier(CODEC_UID_TAGV), "tagv");
    assert_string_equal(codec_uid_kind_meta_qualifier(CODEC_UID_METRIC), "metric_meta");
    assert_string_equal(codec_uid_kind_meta_qualifier(CODEC_UID_TAGK), "tagk_meta");
    assert_string_equal(codec_uid_kind_meta_qualifier(CODEC_UID_TAGV), "tagv_meta");
    assert_null(codec_uid_kind_qualifier((codec_uid_kind_t)3));
    codec_uid_kind_t k;
    oct_errbuf_t eb;
    const struct {
        const char *s;
        codec_uid_kind_t k;
    } ok[] = {{"metric", CODEC_UID_METRIC}, {"METRICS", CODEC_UID_METRIC},
              {"Metric", CODEC_UID_METRIC}, {"tagk", CODEC_UID_TAGK},
              {"TagK", CODEC_UID_TAGK},     {"TAGV", CODEC_UID_TAGV}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(codec_uid_kind_parse(ok[i].s, strlen(ok[i].s), &k, &eb), 0);
        assert_int_equal(k, ok[i].k);
    }
    assert_int_equal(codec_uid_kind_parse("tag", 3, &k, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "Invalid type requested: tag");
    assert_int_equal(codec_uid_kind_parse("metricss", 8, &k, &eb), OCT_EINVAL);
    assert_int_equal(codec_uid_kind_parse("metrics", 6, &k, &eb), 0); /* length-bounded */
    assert_int_equal(k, CODEC_UID_METRIC);
    assert_int_equal(codec_uid_kind_from_qualifier("tagv", 4, &k), 0);
    assert_int_equal(k, CODEC_UID_TAGV);
    assert_int_equal(codec_uid_kind_from_qualifier("metric", 6, &k), OCT_ENOTFOUND);
    assert_int_equal(codec_uid_kind_from_qualifier("TAGK", 4, &k), OCT_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uid_max_per_width),
        cmocka_unit_test(uid_encode_decode_widths),
        cmocka_unit_test(uid_hex_output_upper_padded),
        cmocka_unit_test(uid_hex_parse_rules),
        cmocka_unit_test(uid_javabytes_signed_display),
        cmocka_unit_test(uid_javabytes_enospc),
        cmocka_unit_test(uid_javabytes_parse),
        cmocka_unit_test(uid_javabytes_roundtrip_all_bytes),
        cmocka_unit_test(uid_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
