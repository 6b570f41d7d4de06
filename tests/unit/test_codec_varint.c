/* test_codec_varint.c -- codec/varint.h's LEB128 varint and zigzag helpers,
 * the WAL record's integer encodings (docs/format/wal.md) and the block
 * header's (docs/format/block.md).
 *
 * Expected bytes are the LEB128 and zigzag definitions worked by hand (the
 * same encodings as protobuf's varint and sint64): zigzag maps 0,-1,1,-2,...
 * to 0,1,2,3,..., i.e. 2v for v >= 0 and -2v-1 for v < 0, and the extremes
 * of int64 to the top two uint64 values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "codec/varint.h"

static void zigzag_values(void **state)
{
    (void)state;
    assert_true(codec_zigzag(0) == 0);
    assert_true(codec_zigzag(-1) == 1);
    assert_true(codec_zigzag(1) == 2);
    assert_true(codec_zigzag(-2) == 3);
    assert_true(codec_zigzag(2147483647) == UINT64_C(4294967294));
    assert_true(codec_zigzag(-2147483648LL) == UINT64_C(4294967295));
    assert_true(codec_zigzag(INT64_MAX) == UINT64_MAX - 1);
    assert_true(codec_zigzag(INT64_MIN) == UINT64_MAX);
}

static void zigzag_round_trip(void **state)
{
    (void)state;
    const int64_t v[] = {
        0,         1,         -1,           63, -64, 64, -65, 1356998400000LL, -1356998400000LL,
        INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_true(codec_unzigzag(codec_zigzag(v[i])) == v[i]);
}

static void varint_bytes(void **state)
{
    (void)state;
    uint8_t b[10];
    uint64_t got;
    /* 300 = 0b10_0101100: low seven bits 0x2C with the continuation bit, then 2. */
    assert_int_equal(codec_varint_put(b, 300), 2);
    assert_int_equal(b[0], 0xAC);
    assert_int_equal(b[1], 0x02);
    assert_int_equal(codec_varint_get(b, 2, &got), 2);
    assert_true(got == 300);
    /* 127 fits one byte, 128 needs two (0x80 0x01). */
    assert_int_equal(codec_varint_put(b, 127), 1);
    assert_int_equal(b[0], 0x7F);
    assert_int_equal(codec_varint_put(b, 128), 2);
    assert_int_equal(b[0], 0x80);
    assert_int_equal(b[1], 0x01);
    /* 64 bits take ceil(64 / 7) = 10 bytes: nine 0xFF, then 0x01. */
    assert_int_equal(codec_varint_put(b, UINT64_MAX), 10);
    for (int i = 0; i < 9; i++)
        assert_int_equal(b[i], 0xFF);
    assert_int_equal(b[9], 0x01);
    assert_int_equal(codec_varint_get(b, 10, &got), 10);
    assert_true(got == UINT64_MAX);
    /* Truncated: the continuation bit promises a byte that is not there. */
    assert_int_equal(codec_varint_get(b, 9, &got), 0);
}

/* What the block codec relied on before the codecs were one: the length
 * without writing, and a tenth byte that would carry bits 64 and up refused. */
static void varint_len_and_overflow(void **state)
{
    (void)state;
    /* 7 bits per byte: 0..127 one byte, 2^7..2^14-1 two, 2^63 needs 64 bits
     * so ten bytes */
    assert_int_equal(codec_varint_len(0), 1);
    assert_int_equal(codec_varint_len(127), 1);
    assert_int_equal(codec_varint_len(128), 2);
    assert_int_equal(codec_varint_len(16383), 2);
    assert_int_equal(codec_varint_len(16384), 3);
    assert_int_equal(codec_varint_len(UINT64_C(1) << 63), 10);
    uint8_t b[11];
    uint64_t got = 7;
    /* nine 0xFF then 0x02: bit 64 set, which no uint64_t holds */
    memset(b, 0xFF, 9);
    b[9] = 0x02;
    assert_int_equal(codec_varint_get(b, 10, &got), 0);
    assert_true(got == 7);
    /* eleven bytes of continuation: longer than any varint */
    memset(b, 0x80, 11);
    assert_int_equal(codec_varint_get(b, 11, &got), 0);
    /* empty input */
    assert_int_equal(codec_varint_get(b, 0, &got), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zigzag_values),
        cmocka_unit_test(zigzag_round_trip),
        cmocka_unit_test(varint_bytes),
        cmocka_unit_test(varint_len_and_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
