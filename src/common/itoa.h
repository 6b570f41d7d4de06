/* itoa.h -- decimal text of 64-bit integers without printf.
 *
 * The JSON writer and the query answer write one integer per timestamp;
 * printf's format parsing and stream set-up cost several times the
 * conversion itself. Two digits per step from a table, written backwards
 * into a local and copied once. Pure and thread-safe (header-only). */
#ifndef OCT_COMMON_ITOA_H
#define OCT_COMMON_ITOA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Longest output of oct_i64toa ("-9223372036854775808"), without a NUL. */
#define OCT_ITOA_MAX 20

/* Writes v in decimal to buf (>= OCT_ITOA_MAX bytes, no NUL written);
 * returns the length. */
static inline size_t oct_u64toa(uint64_t v, char *buf)
{
    static const char pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";
    char t[OCT_ITOA_MAX];
    char *p = t + sizeof t;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(t + sizeof t - p);
    memcpy(buf, p, n);
    return n;
}

/* The same for a signed value ("-" first when negative; INT64_MIN too). */
static inline size_t oct_i64toa(int64_t v, char *buf)
{
    if (v >= 0) return oct_u64toa((uint64_t)v, buf);
    buf[0] = '-';
    return 1 + oct_u64toa(-(uint64_t)v, buf + 1);
}

#endif
