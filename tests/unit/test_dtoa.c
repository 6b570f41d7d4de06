/* test_dtoa.c -- oct_dtoa / oct_dtoa_g / oct_dtoa_digits against the
 * printf/strtod loops they replace.
 *
 * The reference is the old code, kept here verbatim in spirit: try "%.*g" at
 * each precision from min_prec up and stop at the first text strtod reads
 * back (and, for /api/query/last, the "%.*e" variant from two digits up).
 * Over 2.06 million doubles from distributions chosen to hit the hard cases
 * (random bit patterns incl. subnormals, random 1..17-digit decimals,
 * averages x/3, x/7..., integers around 2^53, powers of ten and their
 * nextafter neighbours, the %g exponent-switch boundaries 1e-5, 1e15..1e17,
 * exact ".5" ties the 17-digit text cannot settle, odd m / 2^k whose 18th
 * digit is an exact half-even tie) every text must match
 * byte for byte. A few hand-written expectations pin the format itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtoa.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* The loop every caller used to run. */
static void ref_g(double v, int min_prec, char *buf, size_t cap)
{
    for (int prec = min_prec; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

/* /api/query/last's loop: digits of "%.*e" from two digits up, trailing
 * zeros stripped, and the exponent. */
static int ref_last(double v, char *dig, int *exp)
{
    char buf[40];
    for (int prec = 2; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v) break;
    }
    const char *p = buf;
    if (*p == '-') p++;
    int nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') dig[nd++] = *p;
    *exp = (int)strtol(p + 1, NULL, 10);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    return nd;
}

static double pow10d(int k)
{
    char t[16];
    snprintf(t, sizeof t, "1e%d", k);
    return strtod(t, NULL);
}

/* A random decimal of nd digits times 10^k, correctly rounded. */
static double rand_decimal(int nd, int k)
{
    char t[40];
    int n = 0;
    t[n++] = (char)('1' + next_rand() % 9);
    for (int i = 1; i < nd; i++)
        t[n++] = (char)('0' + next_rand() % 10);
    snprintf(t + n, sizeof t - (size_t)n, "e%d", k);
    return strtod(t, NULL);
}

#define NDIST 11

static double gen(int dist)
{
    uint64_t r = next_rand();
    switch (dist) {
    case 0: /* any bit pattern */
        return from_bits(r);
    case 1: /* subnormals and the smallest normals */
        return from_bits(r & (r & 1 ? 0x000FFFFFFFFFFFFFull : 0x801FFFFFFFFFFFFFull));
    case 2: /* decimals of 1..17 digits over the usual range */
        return rand_decimal(1 + (int)(r % 17), (int)(r >> 8 & 63) - 40);
    case 3: { /* averages from downsampling */
        static const double div[] = {3, 6, 7, 9, 11, 12, 60, 100, 1000, 3600};
        double x = (double)(int64_t)(r >> 20 & 0xFFFFFFF) - 0x8000000;
        if (r & 1) x = x / 1000.0;
        return x / div[r >> 50 & 7 ? (r >> 50) % 10 : 0];
    }
    case 4: { /* integers up to 2^53 and beyond */
        uint64_t m = next_rand() >> (r % 64);
        double x = (double)m;
        return r & 0x100 ? x : nextafter(x, r & 0x200 ? INFINITY : 0);
    }
    case 5: { /* powers of ten and their neighbours */
        double x = pow10d((int)(r % 633) - 324);
        int steps = (int)(r >> 16 & 7);
        for (int i = 0; i < steps; i++)
            x = nextafter(x, r & 0x1000000 ? INFINITY : 0);
        return x;
    }
    case 6: { /* the %g exponent-switch boundaries, 9.99..9x carries */
        static const int b[] = {-5, -4, 14, 15, 16, 17};
        int k = b[(r >> 4) % 6];
        if (r & 1) {
            double x = pow10d(k);
            for (int i = (int)(r >> 32 & 63); i > 0; i--)
                x = nextafter(x, r & 2 ? INFINITY : 0);
            return x;
        }
        char t[40];
        int n9 = 13 + (int)(r >> 8 & 3);
        memset(t, '9', (size_t)n9);
        int n = n9;
        for (int i = 0; i < 4; i++)
            t[n++] = (char)('0' + next_rand() % 10);
        snprintf(t + n, sizeof t - (size_t)n, "e%d", k - n);
        return strtod(t, NULL);
    }
    case 7: { /* exact ".5"-style ties at the 15th/16th digit */
        static const double frac[] = {0.5, 0.25, 0.75, 0.125};
        double ip = (double)(1000000000000ll + (int64_t)(r % 8000000000000000ll));
        double x = ip + frac[r >> 60 & 3];
        return ldexp(x, (int)(r >> 40 & 15) - 8);
    }
    case 8: /* short decimals anywhere in the exponent range */
        return rand_decimal(1 + (int)(r % 6), (int)(r >> 8 % 620) % 620 - 310);
    case 9: { /* odd m / 2^k: exact decimals of k places, all ending in 5,
               * so 17-digit half-even ties (18 significant digits) occur */
        int bits = 10 + (int)(r % 44);
        uint64_t m = (next_rand() >> (64 - bits)) | 1 | UINT64_C(1) << (bits - 1);
        return ldexp((double)m, -(bits + (int)(r >> 8 & 7)));
    }
    default: /* sums of tenths, as float arithmetic leaves them */
        return (double)(r % 1000) * 0.1 + (double)(r >> 32 & 1023) * 0.01;
    }
}

/* Values per distribution: fewer where the reference loop is slowest (huge
 * or tiny exponents), so 2.06 million run in about 2 s. */
static const int n_per_dist[NDIST] = {100000, 100000, 230000, 230000, 230000, 100000,
                                      230000, 230000, 230000, 150000, 230000};

static void test_differential(void **state)
{
    (void)state;
    char want[48], got[OCT_DTOA_BUF + 16];
    long checked = 0, checked_g1 = 0, checked_last = 0;
    for (int dist = 0; dist < NDIST; dist++) {
        for (int i = 0; i < n_per_dist[dist]; i++) {
            double v = gen(dist);
            if (!isfinite(v)) continue;
            if (i & 1) v = -v;
            ref_g(v, 15, want, sizeof want);
            size_t n = oct_dtoa(v, got);
            if (strcmp(want, got) != 0 || n != strlen(want))
                fail_msg("dist %d: %a: want %s got %s", dist, v, want, got);
            checked++;
            if (i % 128 == 0) { /* the 1..17 loop is slow: a sample */
                ref_g(v, 1, want, sizeof want);
                n = oct_dtoa_g(v, 1, got);
                if (strcmp(want, got) != 0 || n != strlen(want))
                    fail_msg("g1 dist %d: %a: want %s got %s", dist, v, want, got);
                checked_g1++;
            }
            if (i % 128 == 64 && v != 0) {
                char wd[24], gd[24];
                int we, ge, gp;
                int wn = ref_last(v, wd, &we);
                int gn = oct_dtoa_digits(v, 2, gd, &ge, &gp);
                if (wn != gn || we != ge || strcmp(wd, gd) != 0)
                    fail_msg("last dist %d: %a: want %se%d got %se%d", dist, v, wd, we, gd, ge);
                checked_last++;
            }
        }
    }
    printf("dtoa: %ld values matched (%ld also at min_prec 1, %ld as /last digits)\n", checked,
           checked_g1, checked_last);
    assert_true(checked >= 2000000);
}

static void test_specials(void **state)
{
    (void)state;
    const double v[] = {0.0,
                        -0.0,
                        DBL_MAX,
                        -DBL_MAX,
                        DBL_MIN,
                        -DBL_MIN,
                        DBL_TRUE_MIN,
                        1e-5,
                        1e-4,
                        1e15,
                        1e16,
                        1e17,
                        1e21,
                        1e22,
                        1e23,
                        0.1,
                        0.2,
                        0.3,
                        1.0 / 3,
                        2.0 / 3,
                        13.725,
                        1,
                        -1,
                        123456,
                        9007199254740992.0,
                        9007199254740993.0};
    char want[48], got[OCT_DTOA_BUF];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        for (int p = 1; p <= 17; p++) {
            ref_g(v[i], p, want, sizeof want);
            oct_dtoa_g(v[i], p, got);
            if (strcmp(want, got) != 0) fail_msg("%a p%d: want %s got %s", v[i], p, want, got);
        }
    }
}

static void expect(double v, const char *want)
{
    char got[OCT_DTOA_BUF];
    size_t n = oct_dtoa(v, got);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
}

static void test_handwritten(void **state)
{
    (void)state;
    expect(0.1, "0.1");
    expect(1e21, "1e+21");
    expect(13.725000000000001, "13.725000000000001");
    expect(13.725, "13.725");
    expect(1.0 / 3, "0.3333333333333333");
    expect(2.0 / 3, "0.6666666666666666");
    expect(0.1 + 0.2, "0.30000000000000004");
    expect(-0.0, "-0");
    expect(0.0, "0");
    expect(100, "100");
    expect(1e14, "100000000000000");
    expect(1e15, "1e+15");
    expect(123456789012345.6, "123456789012345.6");
    expect(0.0001, "0.0001");
    expect(0.00001, "1e-05");
    expect(-1.5e-7, "-1.5e-07");
    expect(DBL_MAX, "1.7976931348623157e+308");
    expect(DBL_TRUE_MIN, "4.94065645841247e-324");
    expect(9007199254740993.0, "9007199254740992"); /* 2^53 + 1 is not a double */
    char got[OCT_DTOA_BUF];
    assert_int_equal(oct_dtoa(INFINITY, got), 0);
    assert_int_equal(oct_dtoa(NAN, got), 0);
    oct_dtoa_g(0.1, 1, got);
    assert_string_equal(got, "0.1");
    oct_dtoa_g(1e100, 1, got);
    assert_string_equal(got, "1e+100");
    char dig[18];
    int e, p;
    assert_int_equal(oct_dtoa_digits(DBL_TRUE_MIN, 2, dig, &e, &p), 2);
    assert_string_equal(dig, "49");
    assert_int_equal(e, -324);
    assert_int_equal(oct_dtoa_digits(-250.0, 2, dig, &e, &p), 2);
    assert_string_equal(dig, "25");
    assert_int_equal(e, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handwritten),
        cmocka_unit_test(test_specials),
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
