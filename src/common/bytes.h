/* bytes.h -- byte slices and big-endian helpers. All of OpenTSDB's on-disk
 * integers are big-endian, which also keeps RocksDB's byte order equal to
 * numeric order. Header-only, no allocation. */
#ifndef OCT_COMMON_BYTES_H
#define OCT_COMMON_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A borrowed byte range; never owns its memory. */
typedef struct {
    const uint8_t *ptr;
    size_t len;
} oct_slice_t;

static inline oct_slice_t oct_slice(const void *p, size_t n)
{
    oct_slice_t s = {(const uint8_t *)p, n};
    return s;
}

static inline oct_slice_t oct_slice_str(const char *s)
{
    return oct_slice(s, s ? strlen(s) : 0);
}

static inline int oct_slice_eq(oct_slice_t a, oct_slice_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* memcmp order with shorter-prefix-first; returns <0, 0, >0. */
static inline int oct_slice_cmp(oct_slice_t a, oct_slice_t b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c) return c;
    return (a.len > b.len) - (a.len < b.len);
}

static inline void oct_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void oct_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void oct_put_be64(uint8_t *p, uint64_t v)
{
    oct_put_be32(p, (uint32_t)(v >> 32));
    oct_put_be32(p + 4, (uint32_t)v);
}
static inline uint16_t oct_get_be16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}
static inline uint32_t oct_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t oct_get_be64(const uint8_t *p)
{
    return (uint64_t)oct_get_be32(p) << 32 | oct_get_be32(p + 4);
}

/* Big-endian unsigned integer of 'w' bytes (1..8). */
static inline void oct_put_be_n(uint8_t *p, uint64_t v, unsigned w)
{
    for (unsigned i = 0; i < w; i++)
        p[w - 1 - i] = (uint8_t)(v >> (8 * i));
}
static inline uint64_t oct_get_be_n(const uint8_t *p, unsigned w)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < w; i++)
        v = v << 8 | p[i];
    return v;
}

#endif
