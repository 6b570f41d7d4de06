/* block_int.h -- private to block.c (encoder) and block_dec.c (decoders):
 * the constants of the block format both sides must agree on
 * (docs/format/block.md). Not part of the codec's contract; include
 * codec/block.h instead. */
#ifndef OCT_CODEC_BLOCK_INT_H
#define OCT_CODEC_BLOCK_INT_H

#include <stdint.h>
#include <string.h>

#define FRAME       32 /* values per bit-packing frame */
#define MAX_DEC_EXP 18 /* 10^18 is the largest power of ten in an int64 */

/* The forms of a bit-packed frame: plain, with escaped outliers (width 0:
 * sparse), or with a zero/non-zero flag per slot (block.c's frame_width
 * says when each pays). */
enum { FORM_PLAIN, FORM_ESCAPE, FORM_FLAGGED };

/* Payload bits of the delta-of-delta prefix codes 0, 10, 110, 1110, 11110,
 * 11111. */
static const unsigned dod_payload[6] = {0, 4, 8, 16, 32, 64};

/* The 64 bits of a double. */
static inline uint64_t dbits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

#endif
