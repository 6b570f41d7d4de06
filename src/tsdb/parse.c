/* parse.c -- the text of a data point: integers, timestamps and values as
 * OpenTSDB reads them (docs/telnet.md, "Data points").
 *
 * Every put line goes through here, so the common shapes have fast paths:
 * an integer of at most 18 digits cannot overflow and is summed without
 * checks; a decimal "123.45" with at most 19 significant digits and at most
 * 22 fraction digits is m / 10^k with m < 2^53, which one IEEE division
 * rounds correctly (Clinger's fast path), so it equals what strtod and
 * Java's Double.parseDouble give. Everything else (exponents, long
 * mantissas, f/d suffixes, hex floats) is checked against Java's grammar and
 * handed to strtod, which is correctly rounded in glibc. The process never
 * calls setlocale, so strtod reads '.' as the decimal point.
 *
 * Messages are OpenTSDB's (Tags.parseLong's NumberFormatException texts,
 * Double.parseDouble's "For input string: ..."), so callers can prefix them
 * as OpenTSDB does. Pure functions, no allocation. */
#include "tsdb/parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Longest value token handed to strtod (it needs a NUL-terminated copy on
 * the stack). Java has no limit; nobody sends 1 KiB numbers. */
#define PARSE_MAX_DOUBLE_TEXT 1024

/* Longest token quoted in a message; the error buffer truncates anyway. */
#define MSG_TOKEN(n) ((int)((n) > 400 ? 400 : (n)))

static inline int is_digit(unsigned char c)
{
    return (unsigned)(c - '0') < 10u;
}

/* Tags.parseLong on s[0..n), quoting disp[0..dn) in messages (the dotted
 * timestamp parser quotes the whole token while parsing a part of it).
 * Java accumulates with wrapping arithmetic and checks the sign at the end,
 * which catches every overflow because 19 digits stay below 2^64; here the
 * check is explicit, and as in Java a bad character anywhere wins over an
 * overflow. */
static int parse_long_q(const char *s, size_t n, const char *disp, size_t dn, int64_t *out,
                        oct_errbuf_t *eb)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    int neg = 0;

    if (n == 0) return oct_err(eb, OCT_EPARSE, "Empty string");
    if (p[0] == '+' || p[0] == '-') {
        if (n == 1)
            return oct_err(eb, OCT_EPARSE, "Just a sign, no value: %.*s", MSG_TOKEN(dn), disp);
        if (n > 20) return oct_err(eb, OCT_EPARSE, "Value too long: %.*s", MSG_TOKEN(dn), disp);
        neg = p[0] == '-';
        i = 1;
    } else if (n > 19) {
        return oct_err(eb, OCT_EPARSE, "Value too long: %.*s", MSG_TOKEN(dn), disp);
    }

    uint64_t v = 0;
    if (n - i <= 18) {
        /* at most 18 digits: below 10^18 < 2^63, no overflow possible */
        for (; i < n; i++) {
            unsigned d = (unsigned)(p[i] - '0');
            if (d > 9) goto bad_char;
            v = v * 10 + d;
        }
    } else {
        for (; i < n; i++) {
            unsigned d = (unsigned)(p[i] - '0');
            if (d > 9) goto bad_char;
            if (v > (UINT64_MAX - d) / 10) goto overflow;
            v = v * 10 + d;
        }
        if (v > (uint64_t)INT64_MAX + (uint64_t)neg) goto overflow;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;

bad_char:
    return oct_err(eb, OCT_EPARSE, "Invalid character '%c' in %.*s", p[i], MSG_TOKEN(dn), disp);
overflow:
    /* Java reports a bad character before an overflow: look for one first */
    for (; i < n; i++)
        if (!is_digit(p[i])) goto bad_char;
    return oct_err(eb, OCT_EPARSE, "Overflow in %.*s", MSG_TOKEN(dn), disp);
}

int tsdb_parse_long(const char *s, size_t n, int64_t *out, oct_errbuf_t *eb)
{
    return parse_long_q(s, n, s, n, out, eb);
}

/* ---- timestamps ------------------------------------------------------ */

#define TS_MAX_MS 9999999999999LL

int tsdb_parse_timestamp(const char *s, size_t n, int allow_dots, int64_t *ts_ms, int *is_ms,
                         oct_errbuf_t *eb)
{
    const char *dot = allow_dots ? memchr(s, '.', n) : NULL;
    int64_t v;
    int rc;

    if (!dot) {
        if ((rc = parse_long_q(s, n, s, n, &v, eb)) < 0) return rc;
        if (v <= 0) return oct_err(eb, OCT_EINVAL, "invalid timestamp: %lld", (long long)v);
        if ((uint64_t)v & 0xFFFFFFFF00000000ULL) {
            if (v > TS_MAX_MS)
                return oct_err(eb, OCT_EINVAL, "invalid timestamp: %lld", (long long)v);
            *ts_ms = v;
            *is_ms = 1;
        } else {
            *ts_ms = v * 1000;
            *is_ms = 0;
        }
        return 0;
    }

    /* seconds.fraction: the fraction is a decimal fraction of a second, read
     * to the millisecond and truncated below it (".5" = 500 ms, ".123456" =
     * 123 ms). OpenTSDB deletes the dot instead, so only exactly three
     * fraction digits meant what the sender thought. */
    size_t ilen = (size_t)(dot - s);
    if ((rc = parse_long_q(s, ilen, s, n, &v, eb)) < 0) {
        if (ilen == 0) /* ".5": no seconds at all */
            return oct_err(eb, OCT_EPARSE, "Invalid character '.' in %.*s", MSG_TOKEN(n), s);
        return rc;
    }
    int64_t frac = 0;
    unsigned nd = 0;
    for (size_t i = ilen + 1; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!is_digit(c))
            return oct_err(eb, OCT_EPARSE, "Invalid character '%c' in %.*s", c, MSG_TOKEN(n), s);
        if (nd < 3) {
            frac = frac * 10 + (c - '0');
            nd++;
        }
    }
    for (; nd < 3; nd++)
        frac *= 10;
    /* the integer part is seconds: it must be a valid seconds value */
    if (v <= 0 || ((uint64_t)v & 0xFFFFFFFF00000000ULL))
        return oct_err(eb, OCT_EINVAL, "invalid timestamp: %.*s", MSG_TOKEN(n), s);
    *ts_ms = v * 1000 + frac;
    *is_ms = 1;
    return 0;
}

/* ---- values ---------------------------------------------------------- */

static const double pow10_tab[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* "[+-]digits.digits" (one side may be empty, not both) with a mantissa
 * below 2^53 and at most 22 fraction digits: returns 1 and the correctly
 * rounded double; 0 if the text needs the general path. */
static int fast_decimal(const unsigned char *p, size_t n, double *out)
{
    size_t i = 0;
    int neg = 0;
    if (n && (p[0] == '-' || p[0] == '+')) {
        neg = p[0] == '-';
        i = 1;
    }
    uint64_t m = 0;
    unsigned sig = 0, fd = 0;
    int seen_dot = 0, digits = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d <= 9) {
            if (m == 0 && d == 0) {
                /* leading zeros are free */
            } else if (++sig > 19) {
                return 0;
            }
            m = m * 10 + d;
            digits = 1;
            if (seen_dot) fd++;
        } else if (p[i] == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            return 0;
        }
    }
    if (!digits || fd > 22 || m > (1ULL << 53)) return 0;
    double v = (double)m / pow10_tab[fd];
    *out = neg ? -v : v;
    return 1;
}

static size_t skip_digits(const unsigned char *p, size_t i, size_t n, int hex)
{
    while (i < n && (is_digit(p[i]) || (hex && ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f'))))
        i++;
    return i;
}

/* Java's FloatingDecimal grammar (after trimming): [+-] then either
 * digits[.digits][(e|E)[+-]digits] with digits on at least one side of the
 * dot, or 0x/0X hexdigits[.hexdigits](p|P)[+-]digits; then an optional
 * f/F/d/D suffix. ("NaN" and "Infinity" cannot reach here: they contain no
 * '.', 'e' or 'E'.) Returns the length without the suffix, or 0 if the text
 * does not match. */
static size_t java_double_syntax(const unsigned char *p, size_t n)
{
    size_t i = 0, end = n;
    if (end && ((p[end - 1] | 0x20) == 'f' || (p[end - 1] | 0x20) == 'd')) end--;
    if (i < end && (p[i] == '+' || p[i] == '-')) i++;
    int hex = end - i > 2 && p[i] == '0' && (p[i + 1] | 0x20) == 'x';
    if (hex) i += 2;
    size_t a = i;
    i = skip_digits(p, i, end, hex);
    size_t mant = i - a;
    if (i < end && p[i] == '.') {
        size_t b = ++i;
        i = skip_digits(p, i, end, hex);
        mant += i - b;
    }
    if (mant == 0) return 0;
    if (i < end && (p[i] | 0x20) == (hex ? 'p' : 'e')) {
        i++;
        if (i < end && (p[i] == '+' || p[i] == '-')) i++;
        size_t b = i;
        i = skip_digits(p, i, end, 0);
        if (i == b) return 0;
    } else if (hex) {
        return 0; /* Java requires the binary exponent of a hex float */
    }
    return i == end ? end : 0;
}

int tsdb_parse_value(const char *s, size_t n, codec_point_t *pt, oct_errbuf_t *eb)
{
    const unsigned char *p = (const unsigned char *)s;
    int looks_int = 1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '.' || p[i] == 'e' || p[i] == 'E') {
            looks_int = 0;
            break;
        }
    }
    if (looks_int) {
        int64_t v;
        int rc = parse_long_q(s, n, s, n, &v, eb);
        if (rc < 0) return rc;
        pt->val.i = v;
        pt->is_float = 0;
        return 0;
    }

    double d;
    if (!fast_decimal(p, n, &d)) {
        /* Java trims characters <= ' ' before parsing a double */
        size_t a = 0, b = n;
        while (a < b && p[a] <= ' ')
            a++;
        while (b > a && p[b - 1] <= ' ')
            b--;
        if (a == b) return oct_err(eb, OCT_EPARSE, "empty String");
        size_t len = java_double_syntax(p + a, b - a);
        if (len == 0 || len >= PARSE_MAX_DOUBLE_TEXT)
            return oct_err(eb, OCT_EPARSE, "For input string: \"%.*s\"", MSG_TOKEN(b - a), s + a);
        char buf[PARSE_MAX_DOUBLE_TEXT];
        memcpy(buf, s + a, len);
        buf[len] = '\0';
        d = strtod(buf, NULL);
    }
    if (!isfinite(d))
        return oct_err(eb, OCT_EINVAL, "value is NaN or Infinite: %.*s", MSG_TOKEN(n), s);
    pt->val.f = d;
    pt->is_float = 1;
    return 0;
}
