/* test_common.c -- common/: error codes, big-endian helpers, slices, clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/err.h"

static void err_codes_have_distinct_texts(void **state)
{
    (void)state;
    assert_string_equal(oct_strerror(OCT_ENOTFOUND), "not found");
    assert_string_equal(oct_strerror(-ENOENT), strerror(ENOENT));
    assert_string_equal(oct_strerror(-1999), "unknown error");
    oct_errbuf_t eb;
    assert_int_equal(oct_err(&eb, OCT_EPARSE, "bad %s at %d", "x", 7), OCT_EPARSE);
    assert_string_equal(eb.msg, "bad x at 7");
}

static void be_roundtrip_all_widths(void **state)
{
    (void)state;
    uint8_t b[8];
    oct_put_be32(b, 0x50E22700u);
    assert_int_equal(b[0], 0x50);
    assert_int_equal(b[3], 0x00);
    assert_int_equal(oct_get_be32(b), 0x50E22700u);
    for (unsigned w = 1; w <= 8; w++) {
        uint64_t v = w == 8 ? UINT64_MAX - 5 : ((uint64_t)1 << (8 * w)) - 2;
        oct_put_be_n(b, v, w);
        assert_true(oct_get_be_n(b, w) == v);
        assert_int_equal(b[w - 1], (uint8_t)v);
    }
    oct_put_be64(b, 0x0102030405060708ull);
    assert_int_equal(b[0], 1);
    assert_int_equal(b[7], 8);
}

static void slice_cmp_is_memcmp_then_length(void **state)
{
    (void)state;
    assert_true(oct_slice_cmp(oct_slice("ab", 2), oct_slice("abc", 3)) < 0);
    assert_true(oct_slice_cmp(oct_slice("b", 1), oct_slice("abc", 3)) > 0);
    assert_int_equal(oct_slice_cmp(oct_slice("", 0), oct_slice("", 0)), 0);
    assert_true(oct_slice_eq(oct_slice_str("x"), oct_slice("x", 1)));
}

/* The monotonic clock never goes back, its ms and ns agree, and the wall
 * clock is the epoch time time(2) gives, to the second. */
static void clocks_monotonic_and_wall(void **state)
{
    (void)state;
    int64_t prev = oct_clock_mono_ns();
    for (int i = 0; i < 100000; i++) {
        int64_t now = oct_clock_mono_ns();
        assert_true(now >= prev);
        prev = now;
    }
    int64_t ms = oct_clock_mono_ms(), ns = oct_clock_mono_ns();
    /* ms was read first: ns / 10^6 is at least it, and a second is plenty */
    assert_true(ns / 1000000 >= ms);
    assert_true(ns / 1000000 - ms < 1000);
    int64_t before = (int64_t)time(NULL) * 1000;
    int64_t wall = oct_clock_wall_ms();
    int64_t after = (int64_t)time(NULL) * 1000;
    /* time() truncates to the second, so wall lies in [before, after + 1000);
     * a second more each side because time() may read the kernel's coarse
     * clock, a tick behind */
    assert_true(wall >= before - 1000);
    assert_true(wall < after + 2000);
    /* and it is an epoch time after 2020-01-01 (1577836800 s) */
    assert_true(wall > INT64_C(1577836800000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(err_codes_have_distinct_texts),
        cmocka_unit_test(be_roundtrip_all_widths),
        cmocka_unit_test(slice_cmp_is_memcmp_then_length),
        cmocka_unit_test(clocks_monotonic_and_wall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
