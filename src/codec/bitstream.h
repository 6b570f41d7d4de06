/* bitstream.h -- MSB-first bit writer and reader for the codecs (varints are
 * in codec/varint.h).
 *
 * Both sides work on caller-supplied buffers and keep a sticky error flag, in
 * the manner of Prometheus' Decbuf: a sequence of puts or gets can run without
 * checks and the caller tests 'err' once at the end. A reader that runs past
 * its end returns zero bits and sets 'err', so garbage input can never make a
 * decoder read out of bounds. Header-only so the hot loops inline. */
#ifndef OCT_CODEC_BITSTREAM_H
#define OCT_CODEC_BITSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"

/* ---- writer ------------------------------------------------------------ */

typedef struct {
    uint8_t *p;    /* next byte to write */
    uint8_t *end;  /* one past the buffer */
    uint64_t acc;  /* pending bits, right-aligned */
    unsigned nacc; /* number of pending bits, < 8 between calls */
    int err;       /* sticky: 1 once the buffer overflowed */
} bitw_t;

static inline void bitw_init(bitw_t *w, uint8_t *buf, size_t cap)
{
    w->p = buf;
    w->end = buf + cap;
    w->acc = 0;
    w->nacc = 0;
    w->err = 0;
}

/* Appends the low 'n' bits of v (n <= 32). */
static inline void bitw_put32(bitw_t *w, uint64_t v, unsigned n)
{
    if (n == 0) return;
    w->acc = (w->acc << n) | (v & ((UINT64_C(1) << n) - 1));
    w->nacc += n;
    while (w->nacc >= 8) {
        w->nacc -= 8;
        if (w->p < w->end)
            *w->p++ = (uint8_t)(w->acc >> w->nacc);
        else
            w->err = 1;
    }
}

/* Appends the low 'n' bits of v (n <= 64). */
static inline void bitw_put(bitw_t *w, uint64_t v, unsigned n)
{
    if (n > 32) {
        bitw_put32(w, v >> 32, n - 32);
        n = 32;
    }
    bitw_put32(w, v, n);
}

/* Pads with zero bits to a byte boundary; returns the end pointer. */
static inline uint8_t *bitw_flush(bitw_t *w)
{
    if (w->nacc) bitw_put32(w, 0, 8 - w->nacc);
    return w->p;
}

/* ---- reader ------------------------------------------------------------ */

typedef struct {
    const uint8_t *p;   /* next byte to load */
    const uint8_t *end; /* one past the input */
    uint64_t acc;       /* loaded bits, left-aligned */
    unsigned nacc;      /* number of loaded bits */
    int err;            /* sticky: 1 once a read went past the end */
} bitr_t;

static inline void bitr_init(bitr_t *r, const uint8_t *buf, size_t len)
{
    r->p = buf;
    r->end = buf + len;
    r->acc = 0;
    r->nacc = 0;
    r->err = 0;
}

/* Loads whole bytes below the loaded bits while they fit. With 8 bytes left
 * it is one big-endian 64-bit load (block decoding is the query hot path):
 * the bits of a byte only partly counted are ORed again, identically, by the
 * next refill. */
static inline void bitr_refill(bitr_t *r)
{
    if (r->nacc > 56) return;
    if (r->end - r->p >= 8) {
        r->acc |= oct_get_be64(r->p) >> r->nacc;
        unsigned take = (64 - r->nacc) >> 3;
        r->p += take;
        r->nacc += take * 8;
        return;
    }
    while (r->nacc <= 56 && r->p < r->end) {
        r->acc |= (uint64_t)*r->p++ << (56 - r->nacc);
        r->nacc += 8;
    }
}

/* Reads 'n' bits (n <= 32); past the end it returns 0 and sets err. */
static inline uint64_t bitr_get32(bitr_t *r, unsigned n)
{
    if (n == 0) return 0;
    if (r->nacc < n) {
        bitr_refill(r);
        if (r->nacc < n) {
            r->err = 1;
            r->nacc = 0;
            r->acc = 0;
            return 0;
        }
    }
    uint64_t v = r->acc >> (64 - n);
    r->acc <<= n; /* n <= 32 */
    r->nacc -= n;
    return v;
}

/* Reads 'n' bits (n <= 64). */
static inline uint64_t bitr_get(bitr_t *r, unsigned n)
{
    if (n > 32) {
        uint64_t hi = bitr_get32(r, n - 32);
        return hi << 32 | bitr_get32(r, 32);
    }
    return bitr_get32(r, n);
}

/* Reads one bit. */
static inline unsigned bitr_bit(bitr_t *r)
{
    return (unsigned)bitr_get32(r, 1);
}

/* Number of leading 1 bits, at most 'max', consuming them and the 0 that ends
 * a shorter run (the prefix codes of the timestamp section). */
static inline unsigned bitr_ones(bitr_t *r, unsigned max)
{
    unsigned k = 0;
    while (k < max && bitr_bit(r))
        k++;
    return k;
}

/* True when the reader consumed everything and what is left of the current
 * byte (the padding) is zero. */
static inline int bitr_at_clean_end(const bitr_t *r)
{
    return !r->err && r->p == r->end && r->nacc < 8 && r->acc == 0;
}

#endif
