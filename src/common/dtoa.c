/* dtoa.c -- shortest-of-p..17 double formatting without a printf/strtod loop.
 *
 * Fast path (|v| in about [7e-12, 1e43], i.e. every value a metric query
 * normally prints): v = m * 2^be is scaled exactly with 128-bit integers to
 * n + f = |v| * 10^(16 - E), n the 17 leading digits and f the discarded
 * fraction (only how it compares with 1/2 is kept). Rounding n + f to p
 * digits, half to even, is then exactly what glibc's correctly rounded
 * "%.*g" prints. Whether a candidate M * 10^k reads back as v is decided
 * with one IEEE multiply or divide when M <= 2^53 and |k| <= 22 (both
 * operands exact, so the result is the correctly rounded value strtod would
 * return: Clinger's fast path), else by strtod itself. p = 17 always reads
 * back, so it needs no check.
 * Slow path (other magnitudes): one "%.16e" conversion (correctly rounded,
 * so its 17 digits D lie within half a unit of v) and the shorter candidates
 * rounded from D, except when the dropped digits read exactly "50...0":
 * then v may lie on either side of the midpoint and printf is asked for that
 * precision. Dropped digits "49...9" are safe: v then lies below "49...95".
 * Either way the "%g" layout is rebuilt from digits and exponent. */
#include "common/dtoa.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/itoa.h"
#include "common/pow10.h"

/* Parses printf's "%.*e" output of a positive value: digits to dig (returns
 * their count), exponent to *e. */
static int parse_e(const char *t, char *dig, int *e)
{
    int n = 0;
    for (; *t != 'e'; t++)
        if (*t != '.') dig[n++] = *t;
    t++;
    int neg = *t++ == '-';
    int x = 0;
    for (; *t; t++)
        x = x * 10 + (*t - '0');
    *e = neg ? -x : x;
    return n;
}

/* Rounds the 17 digits d17 (exponent e17) to p digits into c; 0 when the
 * dropped digits are an exact tie and the 17 digits cannot decide. */
static int round_to(const char *d17, int e17, int p, char *c, int *ce)
{
    int up;
    if (d17[p] != '5') {
        up = d17[p] > '5';
    } else {
        up = 0;
        for (int i = p + 1; i < 17; i++)
            if (d17[i] != '0') {
                up = 1;
                break;
            }
        if (!up) return 0;
    }
    memcpy(c, d17, (size_t)p);
    *ce = e17;
    if (up) {
        int i = p - 1;
        while (i >= 0 && c[i] == '9')
            c[i--] = '0';
        if (i < 0) {
            c[0] = '1';
            (*ce)++;
        } else {
            c[i]++;
        }
    }
    return 1;
}

/* Whether m * 10^k reads back as a, when one correctly rounded operation on
 * exact doubles decides it (m and 10^|k| exact); -1 when it cannot. */
static inline int fast_reads_back(uint64_t m, int k, double a)
{
#if FLT_EVAL_METHOD == 0 /* with excess precision (x87) the fast path double-rounds */
    if (m <= (UINT64_C(1) << 53) && k >= -22 && k <= 22) {
        double x = (double)m;
        x = k >= 0 ? x * oct_pow10_f64[k] : x / oct_pow10_f64[-k];
        return x == a;
    }
#else
    (void)m, (void)k, (void)a;
#endif
    return -1;
}

/* Does the decimal c[0..n) * 10^(ce - n + 1) read back as a (> 0)? */
static int reads_back(const char *c, int n, int ce, double a)
{
    uint64_t m = 0;
    for (int i = 0; i < n; i++)
        m = m * 10 + (uint64_t)(c[i] - '0');
    int k = ce - n + 1;
    int fast = fast_reads_back(m, k, a);
    if (fast >= 0) return fast;
    char t[32], *o = t + n;
    memcpy(t, c, (size_t)n);
    *o++ = 'e';
    if (k < 0) *o++ = '-';
    unsigned ak = (unsigned)abs(k);
    if (ak >= 100) *o++ = (char)('0' + ak / 100);
    if (ak >= 10) *o++ = (char)('0' + ak / 10 % 10);
    *o++ = (char)('0' + ak % 10);
    *o = '\0';
    return strtod(t, NULL) == a;
}

static int digits_slow(double v, int min_prec, char *dig, int *exp10, int *prec);

/* 5^0 .. 5^27 (5^27 < 2^63). */
static const uint64_t pow5_u64[28] = {
    1ull,
    5ull,
    25ull,
    125ull,
    625ull,
    3125ull,
    15625ull,
    78125ull,
    390625ull,
    1953125ull,
    9765625ull,
    48828125ull,
    244140625ull,
    1220703125ull,
    6103515625ull,
    30517578125ull,
    152587890625ull,
    762939453125ull,
    3814697265625ull,
    19073486328125ull,
    95367431640625ull,
    476837158203125ull,
    2384185791015625ull,
    11920928955078125ull,
    59604644775390625ull,
    298023223876953125ull,
    1490116119384765625ull,
    7450580596923828125ull,
};

/* How the discarded fraction f of an exact value compares with one half. */
enum { FR_ZERO, FR_BELOW, FR_HALF, FR_ABOVE };

/* Exactly: a * 10^(16 - *e) = *n + f with 10^16 <= *n < 10^17 and f in
 * [0, 1) classified in *fr. 128-bit integer arithmetic is exact for a in
 * about [7e-12, 1e43]; returns 0 outside that (the caller asks printf). */
static int exact17(double a, uint64_t *n, int *fr, int *e)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int bexp = (int)(bits >> 52 & 0x7FF);
    if (bexp == 0) return 0; /* subnormal: far outside the range anyway */
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
    int x = bexp - 1022; /* a = m * 2^(x - 53), 2^(x-1) <= a < 2^x */
    int be = x - 53;
    /* e0 = floor((x-1) log10 2) (78913 / 2^18 is log10 2 to 6 digits; the
     * floor is exact for |x| < 1650) is E or E - 1, so n below lies in
     * [10^16, 2 * 10^17); one digit is folded into f when it is >= 10^17.
     * (>> of a negative int: arithmetic on every compiler we build with.) */
    int e0 = (x - 1) * 78913 >> 18;
    int q = 16 - e0;
    typedef unsigned __int128 u128;
    uint64_t n0;
    int cls;
    if (q >= 0) {
        if (q > 27) return 0;
        uint64_t p5 = pow5_u64[q];
        u128 prod = (u128)m * p5; /* a * 10^q = m * 5^q * 2^(be + q) */
        int s = be + q;
        if (s >= 0) {
            if (s > 10) return 0; /* cannot happen: the result is < 2e17 */
            n0 = (uint64_t)(prod << s);
            cls = FR_ZERO;
        } else {
            int sh = -s;
            if (sh >= 127) return 0;
            u128 rem = prod & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
            n0 = (uint64_t)(prod >> sh);
            cls = rem == 0 ? FR_ZERO : rem < half ? FR_BELOW : rem == half ? FR_HALF : FR_ABOVE;
        }
    } else {
        int t = -q; /* a / 10^t = m * 2^(be - t) / 5^t, and be > t here */
        if (t > 27 || be - t < 0 || 53 + be - t > 127) return 0;
        uint64_t p5 = pow5_u64[t];
        u128 num = (u128)m << (be - t);
        n0 = (uint64_t)(num / p5);
        uint64_t rem = (uint64_t)(num % p5); /* 5^t is odd: never exactly half */
        cls = rem == 0 ? FR_ZERO : 2 * (u128)rem < p5 ? FR_BELOW : FR_ABOVE;
    }
    if (n0 < oct_pow10_u64[16]) return 0; /* e0 overshot: not expected, but stay exact */
    if (n0 >= oct_pow10_u64[17]) {        /* E was e0 + 1: move one digit into f */
        unsigned r = (unsigned)(n0 % 10);
        n0 /= 10;
        e0++;
        if (r > 5 || (r == 5 && cls != FR_ZERO))
            cls = FR_ABOVE;
        else if (r == 5)
            cls = FR_HALF;
        else
            cls = (r == 0 && cls == FR_ZERO) ? FR_ZERO : FR_BELOW;
    }
    if (n0 >= oct_pow10_u64[17]) return 0; /* not expected either */
    *n = n0;
    *fr = cls;
    *e = e0;
    return 1;
}

/* n / 10^j with a constant divisor per case (a multiply, not a divide). */
static uint64_t div_pow10(uint64_t n, int j)
{
    /* literal divisors: through the table the compiler emits a 64-bit div */
    switch (j) {
#define C(k, v)                                                                                    \
    case k:                                                                                        \
        return n / v##ull;
        /* clang-format off */
        C(0, 1) C(1, 10) C(2, 100) C(3, 1000) C(4, 10000) C(5, 100000) C(6, 1000000)
        C(7, 10000000) C(8, 100000000) C(9, 1000000000) C(10, 10000000000)
        C(11, 100000000000) C(12, 1000000000000) C(13, 10000000000000)
        C(14, 100000000000000) C(15, 1000000000000000) C(16, 10000000000000000)
        /* clang-format on */
#undef C
    }
    return 0;
}

/* The exact value n + f (f classified by fr) rounded to p digits, half to
 * even as printf does; *ce is the exponent of its first digit (base e). */
static uint64_t round_exact(uint64_t n, int fr, int e, int p, int *ce)
{
    int j = p >= 17 ? 0 : 17 - p; /* p in 1..17 */
    uint64_t qn = div_pow10(n, j), r = n - qn * oct_pow10_u64[j], half = oct_pow10_u64[j] / 2;
    int up;
    if (j == 0)
        up = fr == FR_ABOVE || (fr == FR_HALF && (qn & 1));
    else if (r != half)
        up = r > half;
    else
        up = fr != FR_ZERO || (qn & 1);
    qn += (uint64_t)up;
    *ce = e;
    if (qn == oct_pow10_u64[p]) {
        qn = oct_pow10_u64[p - 1];
        (*ce)++;
    }
    return qn;
}

/* Does m * 10^k read back as a (> 0)? */
static int int_reads_back(uint64_t m, int k, double a)
{
    while ((m > (UINT64_C(1) << 53) || k < -22) && m % 10 == 0) {
        m /= 10;
        k++;
    }
    int fast = fast_reads_back(m, k, a);
    if (fast >= 0) return fast;
    char t[40];
    snprintf(t, sizeof t, "%" PRIu64 "e%d", m, k);
    return strtod(t, NULL) == a;
}

static int strip(const char *dig, int p)
{
    while (p > 1 && dig[p - 1] == '0')
        p--;
    return p;
}

int oct_dtoa_digits(double v, int min_prec, char *dig, int *exp10, int *prec)
{
    if (!isfinite(v)) return 0;
    if (min_prec < 1) min_prec = 1;
    if (min_prec > 17) min_prec = 17;
    double a = fabs(v);
    uint64_t n17;
    int fr, e;
    if (a != 0 && exact17(a, &n17, &fr, &e)) {
        int p = min_prec, ce;
        uint64_t c;
        for (;; p++) {
            c = round_exact(n17, fr, e, p, &ce);
            if (p >= 17 || int_reads_back(c, ce - p + 1, a)) break;
        }
        oct_u64toa(c, dig); /* c has exactly p digits (round_exact) */
        int n = strip(dig, p);
        dig[n] = '\0';
        *exp10 = ce;
        *prec = p;
        return n;
    }
    return digits_slow(v, min_prec, dig, exp10, prec);
}

static int digits_slow(double v, int min_prec, char *dig, int *exp10, int *prec)
{
    double a = fabs(v);
    if (a == 0) {
        dig[0] = '0';
        dig[1] = '\0';
        *exp10 = 0;
        *prec = min_prec;
        return 1;
    }
    /* "%.16e" always yields 17 digits; the zeros only make that visible */
    char t[40], d17[18] = "00000000000000000";
    int e17;
    snprintf(t, sizeof t, "%.16e", a);
    parse_e(t, d17, &e17);
    int p = min_prec, ce = e17;
    for (; p < 17; p++) {
        if (!round_to(d17, e17, p, dig, &ce)) {
            snprintf(t, sizeof t, "%.*e", p - 1, a);
            parse_e(t, dig, &ce);
        }
        int n = p;
        while (n > 1 && dig[n - 1] == '0')
            n--;
        if (reads_back(dig, n, ce, a)) break;
    }
    if (p == 17) {
        memcpy(dig, d17, 17);
        ce = e17;
    }
    int n = p;
    while (n > 1 && dig[n - 1] == '0')
        n--;
    dig[n] = '\0';
    *exp10 = ce;
    *prec = p;
    return n;
}

size_t oct_dtoa_g(double v, int min_prec, char *buf)
{
    char dig[18];
    int x, p;
    int n = oct_dtoa_digits(v, min_prec, dig, &x, &p);
    if (n == 0) {
        buf[0] = '\0';
        return 0;
    }
    char *o = buf;
    if (signbit(v)) *o++ = '-';
    if (x < -4 || x >= p) {
        *o++ = dig[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, (size_t)n - 1);
            o += n - 1;
        }
        *o++ = 'e';
        *o++ = x < 0 ? '-' : '+';
        int ax = abs(x);
        if (ax >= 100) *o++ = (char)('0' + ax / 100);
        *o++ = (char)('0' + ax / 10 % 10);
        *o++ = (char)('0' + ax % 10);
    } else if (x >= 0) {
        for (int i = 0; i <= x; i++)
            *o++ = i < n ? dig[i] : '0';
        if (n > x + 1) {
            *o++ = '.';
            memcpy(o, dig + x + 1, (size_t)(n - x - 1));
            o += n - x - 1;
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *o++ = '0';
        memcpy(o, dig, (size_t)n);
        o += n;
    }
    *o = '\0';
    return (size_t)(o - buf);
}

size_t oct_dtoa(double v, char *buf)
{
    return oct_dtoa_g(v, 15, buf);
}
