/* test_store_keys.c -- the RocksDB backend's physical key bytes against the
 * vectors written out by hand in docs/format/store-keys.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "testutil.h"
#include "store/store_int.h"

#define LIT(s) oct_slice((s), sizeof(s) - 1)

static void assert_hex(const uint8_t *got, size_t n, const char *want_hex)
{
    uint8_t want[256];
    int wn = tu_unhex(want_hex, want, sizeof want);
    assert_true(wn >= 0);
    if ((size_t)wn != n || memcmp(got, want, n) != 0)
        fail_msg("got %s, want %s", tu_hex(got, n), want_hex);
}

static void enc_matches_documented_table(void **state)
{
    (void)state;
    const struct {
        oct_slice_t x;
        const char *hex;
    } v[] = {
        {LIT("a"), "61 00 01"},
        {LIT("a\x00"), "61 00 FF 00 01"},
        {LIT("a\x00\x00"), "61 00 FF 00 FF 00 01"},
        {LIT("ab"), "61 62 00 01"},
        {LIT("\x00"), "00 FF 00 01"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint8_t buf[32], raw[32];
        size_t n = (size_t)(store__enc(buf, v[i].x) - buf);
        assert_int_equal(n, store__enc_len(v[i].x));
        assert_hex(buf, n, v[i].hex);
        size_t rl = 99;
        assert_int_equal(store__dec(buf, n, raw, &rl), (long)n);
        assert_int_equal(rl, v[i].x.len);
        assert_memory_equal(raw, v[i].x.ptr, rl);
    }
}

static void key_matches_documented_example(void **state)
{
    (void)state;
    uint8_t buf[64];
    oct_slice_t part = LIT("metrics"), row = LIT("\x00\x00\x01"), fam = LIT("id");
    size_t n = (size_t)(store__key(buf, part, row, fam, part) - buf);
    assert_int_equal(n, store__key_len(part, row, fam, part));
    assert_hex(buf, n,
               "6D 65 74 72 69 63 73 00 01  00 FF 00 FF 01 00 01  69 64  00"
               "  6D 65 74 72 69 63 73");
}

static void dec_rejects_malformed(void **state)
{
    (void)state;
    uint8_t b[8];
    /* no terminator; 00 followed by neither 01 nor FF; 00 at the very end */
    assert_int_equal(store__dec(b, (size_t)tu_unhex("61 62", b, 8), NULL, NULL), -1);
    assert_int_equal(store__dec(b, (size_t)tu_unhex("61 00 02", b, 8), NULL, NULL), -1);
    assert_int_equal(store__dec(b, (size_t)tu_unhex("61 00", b, 8), NULL, NULL), -1);
    /* stops at the first terminator; the rest belongs to the next field */
    size_t rl;
    assert_int_equal(store__dec(b, (size_t)tu_unhex("00 01 61 00 01", b, 8), NULL, &rl), 2);
    assert_int_equal(rl, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enc_matches_documented_table),
        cmocka_unit_test(key_matches_documented_example),
        cmocka_unit_test(dec_rejects_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
