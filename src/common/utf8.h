/* utf8.h -- encoding one code point as UTF-8. Header-only, no allocation.
 * Shared by the config reader (\uXXXX escapes) and the JSON parser. */
#ifndef OCT_COMMON_UTF8_H
#define OCT_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes cp (<= 0x10FFFF, not a surrogate: callers check) into o[0..4);
 * returns the number of bytes written (1..4). */
static inline size_t oct_utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
