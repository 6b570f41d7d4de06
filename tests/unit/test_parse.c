/* test_parse.c -- tsdb/parse: integers, timestamps and values as OpenTSDB reads them.
 *
 * Expected messages are OpenTSDB 2.4's Tags.parseLong and PutDataPointRpc texts (docs/telnet.md,
 * "Data points"); expected numbers are worked out by hand (2^32 = 4294967296, 2^63 - 1 =
 * 9223372036854775807) or written as C double literals, which the compiler rounds
 * correctly, exactly as Java's Double.parseDouble does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "tsdb/parse.h"

/* ---- tsdb_parse_long -------------------------------------------------- */

static void long_ok(const char *s, int64_t want)
{
    oct_errbuf_t eb;
    int64_t v = 12345;
    int rc = tsdb_parse_long(s, strlen(s), &v, &eb);
    if (rc != 0) fail_msg("\"%s\": rc %d (%s)", s, rc, eb.msg);
    if (v != want) fail_msg("\"%s\": got %lld want %lld", s, (long long)v, (long long)want);
}

static void long_err(const char *s, const char *msg)
{
    oct_errbuf_t eb;
    int64_t v = 0;
    assert_int_equal(tsdb_parse_long(s, strlen(s), &v, &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, msg);
}

static void parse_long_accepts(void **state)
{
    (void)state;
    long_ok("0", 0);
    long_ok("42", 42);
    long_ok("+5", 5);
    long_ok("-5", -5);
    long_ok("-0", 0);
    long_ok("007", 7);
    long_ok("123456789012345678", 123456789012345678LL);    /* 18 digits */
    long_ok("9223372036854775807", 9223372036854775807LL);  /* 19 digits, max */
    long_ok("+9223372036854775807", 9223372036854775807LL); /* 20 chars with sign */
    long_ok("-9223372036854775808", -9223372036854775807LL - 1);
    long_ok("0000000000000000001", 1); /* 19 chars */
}

static void parse_long_messages(void **state)
{
    (void)state;
    long_err("", "Empty string");
    long_err("-", "Just a sign, no value: -");
    long_err("+", "Just a sign, no value: +");
    long_err("12345678901234567890", "Value too long: 12345678901234567890"); /* 20 digits */
    long_err("+12345678901234567890", "Value too long: +12345678901234567890");
    long_err("9223372036854775808", "Overflow in 9223372036854775808");
    long_err("9999999999999999999", "Overflow in 9999999999999999999");
    long_err("-9223372036854775809", "Overflow in -9223372036854775809");
    long_err("+9223372036854775808", "Overflow in +9223372036854775808");
    long_err("0x10", "Invalid character 'x' in 0x10");
    long_err("12a", "Invalid character 'a' in 12a");
    long_err("+-5", "Invalid character '-' in +-5");
    long_err("1 ", "Invalid character ' ' in 1 ");
    long_err("NaN", "Invalid character 'N' in NaN");
    long_err("inf", "Invalid character 'i' in inf");
    long_err("5f", "Invalid character 'f' in 5f");
    /* a bad character wins over an overflow that precedes it (Java checks the sign last) */
    long_err("999999999999999999x", "Invalid character 'x' in 999999999999999999x");
    long_err("99999999999999999x9", "Invalid character 'x' in 99999999999999999x9");
}

/* ---- tsdb_parse_timestamp -------------------------------------------- */

static void ts_ok(const char *s, int dots, int64_t want_ms, int want_is_ms)
{
    oct_errbuf_t eb;
    int64_t ms = -1;
    int is_ms = -1;
    int rc = tsdb_parse_timestamp(s, strlen(s), dots, &ms, &is_ms, &eb);
    if (rc != 0) fail_msg("\"%s\": rc %d (%s)", s, rc, eb.msg);
    if (ms != want_ms || is_ms != want_is_ms)
        fail_msg("\"%s\": got %lld/%d want %lld/%d", s, (long long)ms, is_ms, (long long)want_ms,
                 want_is_ms);
}

static void ts_err(const char *s, int dots, int want_rc, const char *msg)
{
    oct_errbuf_t eb;
    int64_t ms = 0;
    int is_ms = 0;
    int rc = tsdb_parse_timestamp(s, strlen(s), dots, &ms, &is_ms, &eb);
    if (rc != want_rc) fail_msg("\"%s\": rc %d want %d (%s)", s, rc, want_rc, eb.msg);
    assert_string_equal(eb.msg, msg);
}

static void timestamp_seconds_vs_ms(void **state)
{
    (void)state;
    ts_ok("1356998400", 0, 1356998400000LL, 0);
    ts_ok("1", 0, 1000, 0);
    ts_ok("+1356998400", 0, 1356998400000LL, 0);
    /* the 32-bit rule: 2^32 - 1 is the last second, 2^32 the first millisecond */
    ts_ok("4294967295", 0, 4294967295000LL, 0);
    ts_ok("4294967296", 0, 4294967296LL, 1);
    /* 13-digit milliseconds as clients send them */
    ts_ok("1356998400123", 0, 1356998400123LL, 1);
    ts_ok("9999999999999", 0, 9999999999999LL, 1);
    /* a true ms value below 2^32 is read as seconds (OpenTSDB does the same) */
    ts_ok("1000", 0, 1000000, 0);
}

static void timestamp_rejects(void **state)
{
    (void)state;
    ts_err("10000000000000", 0, OCT_EINVAL, "invalid timestamp: 10000000000000");
    ts_err("0", 0, OCT_EINVAL, "invalid timestamp: 0");
    ts_err("-0", 0, OCT_EINVAL, "invalid timestamp: 0");
    ts_err("-1", 0, OCT_EINVAL, "invalid timestamp: -1");
    ts_err("-1356998400", 0, OCT_EINVAL, "invalid timestamp: -1356998400");
    ts_err("", 0, OCT_EPARSE, "Empty string");
    ts_err("notatime", 0, OCT_EPARSE, "Invalid character 'n' in notatime");
    ts_err("12345678901234567890", 0, OCT_EPARSE, "Value too long: 12345678901234567890");
    ts_err("9223372036854775808", 0, OCT_EPARSE, "Overflow in 9223372036854775808");
    /* without allow_dots (HTTP) a dot is just a bad character */
    ts_err("1356998400.5", 0, OCT_EPARSE, "Invalid character '.' in 1356998400.5");
}

static void timestamp_dotted(void **state)
{
    (void)state;
    /* seconds.fraction is a decimal fraction, read to the millisecond */
    ts_ok("1356998400.123", 1, 1356998400123LL, 1);
    ts_ok("1356998400.5", 1, 1356998400500LL, 1); /* OpenTSDB: 13569984005 (dots deleted) */
    ts_ok("1356998400.05", 1, 1356998400050LL, 1);
    ts_ok("1356998400.000", 1, 1356998400000LL, 1);
    ts_ok("1356998400.", 1, 1356998400000LL, 1);
    /* digits below the millisecond are truncated */
    ts_ok("1356998400.123456", 1, 1356998400123LL, 1);
    ts_ok("1356998400.9999", 1, 1356998400999LL, 1);
    ts_ok("4294967295.999", 1, 4294967295999LL, 1);
    /* without a dot, allow_dots changes nothing */
    ts_ok("1356998400", 1, 1356998400000LL, 0);
    ts_ok("1356998400123", 1, 1356998400123LL, 1);

    ts_err("1356998400.1x", 1, OCT_EPARSE, "Invalid character 'x' in 1356998400.1x");
    ts_err("1.2.3", 1, OCT_EPARSE, "Invalid character '.' in 1.2.3");
    ts_err(".5", 1, OCT_EPARSE, "Invalid character '.' in .5");
    ts_err("1a.5", 1, OCT_EPARSE, "Invalid character 'a' in 1a.5");
    ts_err("0.5", 1, OCT_EINVAL, "invalid timestamp: 0.5");
    ts_err("-1.5", 1, OCT_EINVAL, "invalid timestamp: -1.5");
    /* the integer part of the dotted form is seconds: 2^32 is not */
    ts_err("4294967296.5", 1, OCT_EINVAL, "invalid timestamp: 4294967296.5");
}

/* ---- tsdb_parse_value ------------------------------------------------- */

static void val_int(const char *s, int64_t want)
{
    oct_errbuf_t eb;
    codec_point_t pt = {.ts_ms = 77, .is_float = 1};
    int rc = tsdb_parse_value(s, strlen(s), &pt, &eb);
    if (rc != 0) fail_msg("\"%s\": rc %d (%s)", s, rc, eb.msg);
    if (pt.is_float) fail_msg("\"%s\": parsed as float", s);
    if (pt.val.i != want) fail_msg("\"%s\": got %lld", s, (long long)pt.val.i);
    assert_int_equal(pt.ts_ms, 77); /* untouched */
}

static void val_float(const char *s, double want)
{
    oct_errbuf_t eb;
    codec_point_t pt = {.ts_ms = 77};
    int rc = tsdb_parse_value(s, strlen(s), &pt, &eb);
    if (rc != 0) fail_msg("\"%s\": rc %d (%s)", s, rc, eb.msg);
    if (!pt.is_float) fail_msg("\"%s\": parsed as integer", s);
    /* bit-exact: both sides must be the correctly rounded double */
    if (memcmp(&pt.val.f, &want, sizeof want) != 0)
        fail_msg("\"%s\": got %.17g want %.17g", s, pt.val.f, want);
    assert_int_equal(pt.ts_ms, 77);
}

static void val_err(const char *s, int want_rc, const char *msg)
{
    oct_errbuf_t eb;
    codec_point_t pt = {0};
    int rc = tsdb_parse_value(s, strlen(s), &pt, &eb);
    if (rc != want_rc) fail_msg("\"%s\": rc %d want %d (%s)", s, rc, want_rc, eb.msg);
    assert_string_equal(eb.msg, msg);
}

static void value_integers(void **state)
{
    (void)state;
    val_int("42", 42);
    val_int("-42", -42);
    val_int("+5", 5);
    val_int("0", 0);
    val_int("9223372036854775807", 9223372036854775807LL);
    val_int("-9223372036854775808", -9223372036854775807LL - 1);
}

static void value_floats(void **state)
{
    (void)state;
    val_float("42.5", 42.5);
    val_float("0.1", 0.1);
    val_float("-0.1", -0.1);
    val_float("0.430000", 0.43); /* Telegraf's %f */
    val_float("1e3", 1000.0);    /* 'e' makes it a float */
    val_float("1E3", 1000.0);
    val_float("1.3E3", 1300.0);
    val_float("2.5e-3", 0.0025);
    val_float("5.0f", 5.0); /* Java's type suffixes */
    val_float("5.0F", 5.0);
    val_float("0.1d", 0.1);
    val_float("1.5D", 1.5);
    val_float(".5", 0.5);
    val_float("5.", 5.0);
    val_float("+.5", 0.5);
    val_float("1.e3", 1000.0);
    val_float("-0.0", -0.0);
    val_float("3.14159265358979323846", 3.14159265358979323846); /* > 19 digits: slow path */
    val_float("123456789.123456789", 123456789.123456789);
    val_float("9007199254740993.0", 9007199254740993.0); /* 2^53 + 1: rounds to even */
    val_float("0.0000000000000000000001", 1e-22);
    val_float("0.00000000000000000000001", 1e-23); /* 23 fraction digits: slow path */
    val_float("1e-500", 0.0);                      /* underflow is zero in Java too */
    val_float("0x1.8p1", 3.0);                     /* Java hex float (has a '.') */
    val_float(" 1.5", 1.5);                        /* parseDouble trims */
    val_float("1.7976931348623157e308", 1.7976931348623157e308);
}

static void value_rejects(void **state)
{
    (void)state;
    /* no '.', 'e' or 'E': the strict integer path */
    val_err("NaN", OCT_EPARSE, "Invalid character 'N' in NaN");
    val_err("Infinity", OCT_EPARSE, "Invalid character 'I' in Infinity");
    val_err("-Infinity", OCT_EPARSE, "Invalid character 'I' in -Infinity");
    val_err("inf", OCT_EPARSE, "Invalid character 'i' in inf");
    val_err("0x10", OCT_EPARSE, "Invalid character 'x' in 0x10");
    val_err("5f", OCT_EPARSE, "Invalid character 'f' in 5f");
    val_err("", OCT_EPARSE, "Empty string");
    val_err("-", OCT_EPARSE, "Just a sign, no value: -");
    val_err("12345678901234567890", OCT_EPARSE, "Value too long: 12345678901234567890");
    val_err("9223372036854775808", OCT_EPARSE, "Overflow in 9223372036854775808");
    /* the double path: Double.parseDouble's message */
    val_err("1.2.3", OCT_EPARSE, "For input string: \"1.2.3\"");
    val_err("abc.d", OCT_EPARSE, "For input string: \"abc.d\"");
    val_err(".", OCT_EPARSE, "For input string: \".\"");
    val_err("1e", OCT_EPARSE, "For input string: \"1e\"");
    val_err("e3", OCT_EPARSE, "For input string: \"e3\"");
    val_err("1.5ff", OCT_EPARSE, "For input string: \"1.5ff\"");
    val_err("0x1e", OCT_EPARSE, "For input string: \"0x1e\""); /* hex float needs 'p' */
    val_err("NaN.0", OCT_EPARSE, "For input string: \"NaN.0\"");
    /* finite text, infinite value */
    val_err("1e500", OCT_EINVAL, "value is NaN or Infinite: 1e500");
    val_err("1.0e500", OCT_EINVAL, "value is NaN or Infinite: 1.0e500");
    val_err("-1e309", OCT_EINVAL, "value is NaN or Infinite: -1e309");
}

/* The fast decimal path against strtod over many generated decimals. */
static void value_fast_path_matches_strtod(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ULL;
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int frac = (int)(x % 12);
        unsigned long long ip = (x >> 8) % 100000000000ULL;
        unsigned long long fp = (x >> 20) % 1000000000000ULL;
        snprintf(buf, sizeof buf, "%s%llu.%0*llu", (x & 1) ? "-" : "", ip % ((x >> 40) | 1), frac,
                 fp % (frac ? 1000000000000ULL : 1));
        double want = strtod(buf, NULL);
        val_float(buf, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_long_accepts),
        cmocka_unit_test(parse_long_messages),
        cmocka_unit_test(timestamp_seconds_vs_ms),
        cmocka_unit_test(timestamp_rejects),
        cmocka_unit_test(timestamp_dotted),
        cmocka_unit_test(value_integers),
        cmocka_unit_test(value_floats),
        cmocka_unit_test(value_rejects),
        cmocka_unit_test(value_fast_path_matches_strtod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
