/* rollup.h -- OpenTSDB 2.4's rollup cell qualifier (docs/format/rollup.md
 * section 3): aggregator id, interval index and value flags in 3 bytes.
 * Pure functions, no allocation, no I/O. */
#ifndef OCT_CODEC_ROLLUP_H
#define OCT_CODEC_ROLLUP_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"

#define CODEC_ROLLUP_QUAL_LEN   3
#define CODEC_ROLLUP_MAX_AGG_ID 127
#define CODEC_ROLLUP_MAX_INDEX  4095 /* 12 bits beside the flags */

/* Encodes point p's value (integer: smallest of 1/2/4/8 bytes; double:
 * float32 when exact, else float64) with the qualifier
 * [agg_id][(index << 4) | flags] into qual[0..3) and val; *val_len gets
 * the value width. Returns 0, or OCT_ERANGE when agg_id > 127 or
 * index > 4095. */
OCT_MUST_CHECK int codec_rollup_encode(unsigned agg_id, uint32_t index, const codec_point_t *p,
                                       uint8_t qual[CODEC_ROLLUP_QUAL_LEN], uint8_t val[8],
                                       size_t *val_len);

/* octsdb's sum-of-squares cell (docs/format/rollup.md section 5: family
 * CODEC_ROLLUP_OWN_FAMILY, column code CODEC_ROLLUP_SUMSQ): the qualifier
 * [code][(index << 4) | 0xF] and v as a float64, always (one width per
 * slot). Returns 0, or OCT_ERANGE when index > 4095. codec_rollup_decode
 * reads it back (its *agg_id is then the column code). */
#define CODEC_ROLLUP_OWN_FAMILY "o"
#define CODEC_ROLLUP_SUMSQ      0
OCT_MUST_CHECK int codec_rollup_encode_sumsq(uint32_t index, double v,
                                             uint8_t qual[CODEC_ROLLUP_QUAL_LEN], uint8_t val[8]);

/* Decodes a 3-byte rollup cell: *agg_id, *index and the value (its
 * timestamp is left to the caller: base + index * interval). Returns 0 or
 * OCT_ECORRUPT (a qualifier that is not 3 bytes, or a value whose length
 * disagrees with its flags). */
OCT_MUST_CHECK int codec_rollup_decode(const uint8_t *q, size_t qlen, const uint8_t *v, size_t vlen,
                                       unsigned *agg_id, uint32_t *index, codec_point_t *out);

#endif
