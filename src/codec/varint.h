/* varint.h -- the one LEB128 varint and zigzag codec of octsdb: the block
 * cell's header fields (docs/format/block.md) and the WAL record's integers
 * (docs/format/wal.md) use these bytes, so their formats stay in step.
 *
 * LEB128: seven bits per byte, low group first, the top bit set on every byte
 * but the last; a uint64_t takes 1 to CODEC_VARINT_MAX bytes, and the encoder
 * always writes the shortest form. Zigzag maps 0, -1, 1, -2, ... to
 * 0, 1, 2, 3, ... so that small negative numbers stay short.
 *
 * Header-only so the hot loops inline. Pure functions on caller buffers: no
 * allocation, safe from any thread. */
#ifndef OCT_CODEC_VARINT_H
#define OCT_CODEC_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define CODEC_VARINT_MAX 10 /* ceil(64 / 7) */

static inline uint64_t codec_zigzag(int64_t v)
{
    /* the sign as an all-ones/zero mask without right-shifting a negative
     * value (implementation-defined in C17) */
    uint64_t u = (uint64_t)v;
    return (u << 1) ^ (0 - (u >> 63));
}

static inline int64_t codec_unzigzag(uint64_t z)
{
    return (int64_t)((z >> 1) ^ (0 - (z & 1)));
}

/* Number of bytes codec_varint_put() writes for v. */
static inline size_t codec_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >>= 7)
        n++;
    return n;
}

/* Writes v at p, which has room for codec_varint_len(v) bytes (at most
 * CODEC_VARINT_MAX); returns the number written. */
static inline size_t codec_varint_put(uint8_t *p, uint64_t v)
{
    size_t i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

/* Reads one varint from p[0..n); returns the bytes read, or 0 if it is
 * truncated or does not fit 64 bits (a tenth byte above 1). */
static inline size_t codec_varint_get(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < CODEC_VARINT_MAX; i++) {
        if (i == CODEC_VARINT_MAX - 1 && p[i] > 1) return 0;
        x |= (uint64_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

#endif
