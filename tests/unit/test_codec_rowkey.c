/* test_codec_rowkey.c -- codec/rowkey: OpenTSDB's worked example 1 (docs/format/rowkey.md
 * section 4) byte for byte, salt arithmetic (hand values computed in docs/format/rowkey.md and an
 * independent int64 reference), parse, TSUIDs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "codec/rowkey.h"
#include "testutil.h"

static const codec_rowkey_layout_t L333 = {3, 3, 3, 0, 20};
static const codec_rowkey_layout_t L333S1 = {3, 3, 3, 1, 20};

/* Independent reference for Arrays.hashCode: exact int64 arithmetic, reduced to int32 by
 * explicit modular arithmetic each step. */
static int64_t ref_hash(const uint8_t *p, size_t n)
{
    int64_t h = 1;
    for (size_t i = 0; i < n; i++) {
        int64_t b = p[i] > 127 ? (int64_t)p[i] - 256 : p[i];
        h = 31 * h + b;
        h %= 4294967296LL;
        if (h < 0) h += 4294967296LL;
        if (h >= 2147483648LL) h -= 4294967296LL;
    }
    return h;
}

static void rowkey_doc_example_unsalted(void **state)
{
    (void)state;
    uint8_t key[64], want[64];
    oct_errbuf_t eb;
    codec_tag_uid_t tags[] = {{1, 1}};
    int wn = tu_unhex("000001 50E22700 000001 000001", want, sizeof want);
    /* any ts within the hour gives the same key */
    int64_t ts_list[] = {1356998400, 1356998425, 1356998400 + 3599};
    for (size_t i = 0; i < 3; i++) {
        int n = codec_rowkey_build(&L333, 1, tags, 1, ts_list[i], key, sizeof key, &eb);
        assert_int_equal(n, 13);
        assert_int_equal(n, wn);
        assert_memory_equal(key, want, 13);
    }
    assert_int_equal(codec_rowkey_len(&L333, 1), 13);
    assert_int_equal(codec_rowkey_partition_prefix_len(&L333), 7);
    uint8_t tsuid[32];
    assert_int_equal(codec_tsuid_from_rowkey(&L333, key, 13, tsuid, sizeof tsuid, &eb), 9);
    char hex[64];
    assert_int_equal(codec_tsuid_to_hex(tsuid, 9, hex, sizeof hex), 18);
    assert_string_equal(hex, "000001000001000001");
}

static void rowkey_doc_example_salted(void **state)
{
    (void)state;
    uint8_t key[64], want[64];
    oct_errbuf_t eb;
    codec_tag_uid_t tags[] = {{1, 1}};
    const uint8_t base[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    assert_int_equal(codec_rowkey_java_hash(1, base, 9), 691019968); /* docs/format/rowkey.md */
    assert_int_equal(codec_rowkey_salt_bucket(691019968, 20), 8);
    int n = codec_rowkey_build(&L333S1, 1, tags, 1, 1356998425, key, sizeof key, &eb);
    assert_int_equal(n, 14);
    assert_int_equal(tu_unhex("08 000001 50E22700 000001 000001", want, sizeof want), 14);
    assert_memory_equal(key, want, 14);
    assert_int_equal(codec_rowkey_partition_prefix_len(&L333S1), 8);
    codec_rowkey_t rk;
    assert_int_equal(codec_rowkey_parse(&L333S1, key, 14, &rk, &eb), 0);
    assert_int_equal(rk.salt[0], 8);
    assert_true(rk.metric_uid == 1);
    assert_int_equal(rk.base_time, 1356998400u);
    assert_int_equal(rk.n_tags, 1);
    assert_ptr_equal(codec_rowkey_tagk(&rk, 0), key + 8);
    assert_ptr_equal(codec_rowkey_tagv(&rk, 0), key + 11);
}

static void rowkey_salt_signed_bytes_and_negative_hash(void **state)
{
    (void)state;
    const uint8_t ff[9] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    /* one byte 0xFF = -1: 31*1 - 1 = 30 */
    assert_int_equal(codec_rowkey_java_hash(1, ff, 1), 30);
    assert_int_equal(codec_rowkey_salt_bucket(30, 7), 2);
    assert_int_equal(codec_rowkey_java_hash(1, ff, 9), -1048956514); /* rowkey.md */
    assert_int_equal(codec_rowkey_salt_bucket(-1048956514, 20), 14); /* -14 negated */
    assert_int_equal(codec_rowkey_salt_bucket(INT32_MIN, 20), 8);    /* 2147483648 % 20 */
    assert_int_equal(codec_rowkey_salt_bucket(INT32_MIN, 1), 0);
    /* hashing in two parts equals hashing the concatenation */
    int32_t h = codec_rowkey_java_hash(1, ff, 4);
    assert_int_equal(codec_rowkey_java_hash(h, ff + 4, 5), -1048956514);
    /* against the int64 reference over pseudo-random bytes */
    uint8_t buf[40];
    uint32_t x = 12345;
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(round % 40);
        for (size_t i = 0; i < n; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (uint8_t)(x >> 16);
        }
        assert_int_equal(codec_rowkey_java_hash(1, buf, n), (int32_t)ref_hash(buf, n));
    }
    /* 2-byte salt from the all-FF key */
    codec_rowkey_layout_t l = {3, 3, 3, 2, 20};
    uint8_t key[64], want[64];
    oct_errbuf_t eb;
    codec_tag_uid_t tags[] = {{0xFFFFFF, 0xFFFFFF}};
    assert_int_equal(codec_rowkey_build(&l, 0xFFFFFF, tags, 1, 3600, key, sizeof key, &eb), 15);
    assert_int_equal(tu_unhex("000E FFFFFF 00000E10 FFFFFF FFFFFF", want, sizeof want), 15);
    assert_memory_equal(key, want, 15);
}

static void rowkey_salt_wide_repeats_like_java(void **state)
{
    (void)state;
    uint8_t s[8];
    codec_rowkey_salt_write(8, 1, s);
    assert_int_equal(s[0], 8);
    codec_rowkey_salt_write(0x0102, 1, s); /* high byte dropped */
    assert_int_equal(s[0], 0x02);
    codec_rowkey_salt_write(8, 4, s);
    assert_memory_equal(s, "\x00\x00\x00\x08", 4);
    codec_rowkey_salt_write(8, 6, s); /* Java shift 32 acts as 0 */
    assert_memory_equal(s, "\x00\x08\x00\x00\x00\x08", 6);
    codec_rowkey_salt_write(0x01020304, 8, s);
    assert_memory_equal(s, "\x01\x02\x03\x04\x01\x02\x03\x04", 8);
}

static void rowkey_annotation_row_not_salted(void **state)
{
    (void)state;
    uint8_t key[64];
    oct_errbuf_t eb;
    int n = codec_rowkey_build(&L333S1, 0, NULL, 0, 1356998400, key, sizeof key, &eb);
    assert_int_equal(n, 8);
    assert_memory_equal(key, "\x00\x00\x00\x00\x50\xE2\x27\x00", 8);
    key[0] = 0x55;
    assert_int_equal(codec_rowkey_apply_salt(&L333S1, key, 8), 0);
    assert_int_equal(key[0], 0);
}

static void rowkey_tags_sorted_by_uid_bytes(void **state)
{
    (void)state;
    uint8_t key[64], want[64];
    oct_errbuf_t eb;
    /* given out of order; sort is by tagk||tagv bytes, i.e. by tagk UID */
    codec_tag_uid_t tags[] = {{0x000300, 1}, {0x000002, 0xFFFFFF}, {0x010000, 2}, {0x000002, 5}};
    int n = codec_rowkey_build(&L333, 7, tags, 4, 1356998400, key, sizeof key, &eb);
    assert_int_equal(n, 7 + 4 * 6);
    assert_int_equal(tu_unhex("000007 50E22700"
                              "000002 000005 000002 FFFFFF 000300 000001 010000 000002",
                              want, sizeof want),
                     31);
    assert_memory_equal(key, want, 31);
    assert_int_equal(tags[0].tagk, 0x000300); /* input untouched */
    /* 1-byte tagk, 2-byte tagv widths */
    codec_rowkey_layout_t l = {2, 1, 2, 0, 1};
    codec_tag_uid_t t2[] = {{9, 0x0102}, {3, 0xFFFF}};
    n = codec_rowkey_build(&l, 0x0A0B, t2, 2, 7200 + 59, key, sizeof key, &eb);
    assert_int_equal(n, 12);
    assert_int_equal(tu_unhex("0A0B 00001C20 03FFFF 090102", want, sizeof want), 12);
    assert_memory_equal(key, want, 12);
}

static void rowkey_build_errors(void **state)
{
    (void)state;
    uint8_t key[64];
    oct_errbuf_t eb;
    codec_tag_uid_t tags[] = {{1, 1}};
    assert_int_equal(codec_rowkey_build(&L333, 1 << 24, tags, 1, 0, key, sizeof key, &eb),
                     OCT_ERANGE);
    codec_tag_uid_t big[] = {{1, 1 << 24}};
    assert_int_equal(codec_rowkey_build(&L333, 1, big, 1, 0, key, sizeof key, &eb), OCT_ERANGE);
    assert_int_equal(
        codec_rowkey_build(&L333, 1, tags, 1, 4294967296LL + 3600, key, sizeof key, &eb),
        OCT_ERANGE);
    assert_int_equal(codec_rowkey_build(&L333, 1, tags, 1, -3600, key, sizeof key, &eb),
                     OCT_ERANGE);
    assert_int_equal(codec_rowkey_build(&L333, 1, tags, 1, 0, key, 12, &eb), OCT_ENOSPC);
    codec_rowkey_layout_t bad = {0, 3, 3, 0, 20};
    assert_int_equal(codec_rowkey_build(&bad, 1, tags, 1, 0, key, sizeof key, &eb), OCT_EINVAL);
    assert_int_equal(codec_rowkey_layout_check(&bad, &eb), OCT_ECONFIG);
    codec_rowkey_layout_t bad2 = {3, 3, 3, 9, 20};
    assert_int_equal(codec_rowkey_layout_check(&bad2, &eb), OCT_ECONFIG);
    codec_rowkey_layout_t bad3 = {3, 3, 3, 1, 0};
    assert_int_equal(codec_rowkey_layout_check(&bad3, &eb), OCT_ECONFIG);
    assert_int_equal(codec_rowkey_layout_check(&L333S1, &eb), 0);
    /* max base time 4294965600 = 2^32 - 1 - (2^32 - 1) % 3600 */
    assert_int_equal(codec_rowkey_build(&L333, 1, tags, 1, 4294967295LL, key, sizeof key, &eb), 13);
    assert_memory_equal(key + 3, "\xFF\xFF\xF9\x60", 4); /* 4294965600 = 0xFFFFF960 */
}

static void rowkey_base_time(void **state)
{
    (void)state;
    assert_true(codec_rowkey_base_time(1356998400) == 1356998400);
    assert_true(codec_rowkey_base_time(1356998425) == 1356998400);
    assert_true(codec_rowkey_base_time(1356998400 + 3600) == 1356998400 + 3600);
    assert_true(codec_rowkey_base_time_ms(1356998425123LL) == 1356998400);
    assert_true(codec_rowkey_base_time_ms(1356998399999LL) == 1356998400 - 3600);
}

static void rowkey_parse_lengths(void **state)
{
    (void)state;
    uint8_t key[64] = {0};
    oct_errbuf_t eb;
    codec_rowkey_t rk;
    for (size_t len = 0; len < 40; len++) {
        int rc = codec_rowkey_parse(&L333S1, key, len, &rk, &eb);
        /* 8 + 6k bytes fit */
        if (len >= 8 && (len - 8) % 6 == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(rk.n_tags, (len - 8) / 6);
        } else {
            assert_int_equal(rc, OCT_ECORRUPT);
        }
    }
    assert_int_equal(codec_rowkey_parse(&L333, key, 13, &rk, &eb), 0);
    assert_null(rk.salt);
}

static void tsuid_roundtrip_and_rowkey_from_tsuid(void **state)
{
    (void)state;
    uint8_t tsuid[32], key[64], want[64];
    oct_errbuf_t eb;
    int n = codec_tsuid_from_hex(&L333, "000001000001000001", 18, tsuid, sizeof tsuid, &eb);
    assert_int_equal(n, 9);
    assert_memory_equal(tsuid, "\x00\x00\x01\x00\x00\x01\x00\x00\x01", 9);
    assert_int_equal(codec_tsuid_from_hex(&L333, "000001000001000001", 18, tsuid, 8, &eb),
                     OCT_ENOSPC);
    assert_int_equal(codec_tsuid_from_hex(&L333, "0000010000010000", 16, tsuid, 32, &eb),
                     OCT_EPARSE);
    assert_int_equal(codec_tsuid_from_hex(&L333, "00000100000100000Z", 18, tsuid, 32, &eb),
                     OCT_EPARSE);
    /* 7 bytes is not 3 + 6k */
    assert_int_equal(codec_tsuid_from_hex(&L333, "1000001000001", 13, tsuid, 32, &eb), OCT_EPARSE);
    /* OpenTSDB pads an odd length with a leading 0 */
    assert_int_equal(codec_tsuid_from_hex(&L333, "00001000001000001", 17, tsuid, 32, &eb), 9);
    assert_memory_equal(tsuid, "\x00\x00\x01\x00\x00\x01\x00\x00\x01", 9);
    assert_int_equal(codec_tsuid_check(&L333, tsuid, 3, &eb), 0);
    assert_int_equal(codec_tsuid_check(&L333, tsuid, 2, &eb), OCT_EPARSE);

    n = codec_rowkey_from_tsuid(&L333S1, tsuid, 9, 1356998425, key, sizeof key, &eb);
    assert_int_equal(n, 14);
    assert_int_equal(tu_unhex("08 000001 50E22700 000001 000001", want, sizeof want), 14);
    assert_memory_equal(key, want, 14);
    uint8_t back[32];
    assert_int_equal(codec_tsuid_from_rowkey(&L333S1, key, 14, back, sizeof back, &eb), 9);
    assert_memory_equal(back, tsuid, 9);
    assert_int_equal(codec_tsuid_from_rowkey(&L333S1, key, 13, back, sizeof back, &eb),
                     OCT_ECORRUPT);
    assert_int_equal(codec_rowkey_from_tsuid(&L333S1, tsuid, 8, 0, key, sizeof key, &eb),
                     OCT_EPARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rowkey_doc_example_unsalted),
        cmocka_unit_test(rowkey_doc_example_salted),
        cmocka_unit_test(rowkey_salt_signed_bytes_and_negative_hash),
        cmocka_unit_test(rowkey_salt_wide_repeats_like_java),
        cmocka_unit_test(rowkey_annotation_row_not_salted),
        cmocka_unit_test(rowkey_tags_sorted_by_uid_bytes),
        cmocka_unit_test(rowkey_build_errors),
        cmocka_unit_test(rowkey_base_time),
        cmocka_unit_test(rowkey_parse_lengths),
        cmocka_unit_test(tsuid_roundtrip_and_rowkey_from_tsuid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
