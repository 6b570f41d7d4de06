/* block.h -- octsdb's compressed block cell: all points of one series for one
 * row hour in a single cell with qualifier 4F <seq hi> <seq lo>.
 *
 * The byte format is specified in docs/format/block.md. In short: timestamps
 * as Gorilla delta-of-deltas or as bit-packed residuals from a regular grid
 * (whichever is smaller; nothing at all when perfectly regular), and per
 * block the smaller of two value encodings: an "integer stream" (integers,
 * or floats that are exactly short decimals scaled to integers, ALP/Elf
 * style, then level or delta coded and bit-packed in frames of 32 with
 * patched outliers) or Gorilla XOR for everything else. Every value
 * round-trips bit for bit, including NaN payloads, -0.0 and full-range int64.
 *
 * All functions are pure: no I/O, no allocation, no global state; buffers are
 * the caller's. They are thread-safe on distinct buffers. */
#ifndef OCT_CODEC_BLOCK_H
#define OCT_CODEC_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec/bitstream.h"
#include "codec/point.h"

#define CODEC_BLOCK_VERSION 1
/* First byte of every block qualifier (OpenTSDB leaves it unassigned). */
#define CODEC_BLOCK_QUAL_PREFIX 0x4F
#define CODEC_BLOCK_QUAL_LEN    3
/* Largest point count a block may hold (a millisecond-dense hour is 3.6M). */
#define CODEC_BLOCK_MAX_POINTS (1u << 22)

/* Value encodings; AUTO lets the encoder pick the smallest. */
typedef enum {
    CODEC_BLOCK_ENC_AUTO = -1,
    CODEC_BLOCK_ENC_INT = 0, /* integer stream (ints, decimal-scaled floats) */
    CODEC_BLOCK_ENC_XOR = 1, /* Gorilla XOR of the raw 64 bits */
} codec_block_enc_t;

/* Timestamp encodings (see docs/format/block.md). */
typedef enum {
    CODEC_BLOCK_TS_DOD = 0,     /* Gorilla delta-of-delta prefix codes */
    CODEC_BLOCK_TS_REGULAR = 1, /* every delta equal: no section at all */
    CODEC_BLOCK_TS_GRID = 2,    /* residuals from a fixed grid, bit-packed */
} codec_block_ts_t;

/* What the encoder chose (for statistics and tests). */
typedef struct {
    codec_block_enc_t enc;    /* value encoding used */
    unsigned dec_exp;         /* INT: decimal exponent e (floats = m / 10^e) */
    unsigned order;           /* INT: 0 = levels, 1 = deltas */
    codec_block_ts_t ts_mode; /* timestamp encoding used */
    unsigned ts_unit_exp;     /* timestamp unit 10^k ms */
} codec_block_info_t;

/* Upper bound of codec_block_encode()'s output for n points. */
size_t codec_block_encode_bound(size_t n);

/* Encodes pts[0..n) into out[0..cap). Points must be strictly increasing by
 * ts_ms; n may be 0 (an empty block) and at most CODEC_BLOCK_MAX_POINTS.
 * 'force' is CODEC_BLOCK_ENC_AUTO in production; tests force an encoding to
 * compare sizes. If 'info' is not NULL it receives the choice made.
 * Returns the number of bytes written, OCT_EINVAL (unsorted or duplicate
 * timestamps, too many points, or a forced INT encoding that cannot represent
 * the values exactly) or OCT_ENOSPC (cap too small; a cap of
 * codec_block_encode_bound(n) always suffices). */
ssize_t codec_block_encode(const codec_point_t *pts, size_t n, uint8_t *out, size_t cap,
                           codec_block_enc_t force, codec_block_info_t *info);

/* Number of points in the block 'in' after checking its header, or
 * OCT_ECORRUPT (including an unknown version). Does not validate the body. */
int codec_block_count(const uint8_t *in, size_t len);

/* Decodes the whole block into out[0..cap). Returns the number of points,
 * OCT_ENOSPC if cap < codec_block_count(), or OCT_ECORRUPT if the block is
 * malformed in any way (nothing is guaranteed about out[] then). Never reads
 * outside in[0..len). */
int codec_block_decode(const uint8_t *in, size_t len, codec_point_t *out, size_t cap);

/* As codec_block_decode (same checks, same results) into columns: ts[i],
 * val[i] = point i's 8 value bytes (an int64 or a double's bits), and
 * *types = 0 (every value an integer), 1 (every value a double) or 2 (mixed:
 * is_float[i] says which; is_float is written only then). The three arrays
 * hold cap elements. */
int codec_block_decode_cols(const uint8_t *in, size_t len, int64_t *ts, uint64_t *val,
                            uint8_t *is_float, size_t cap, int *types);

/* State of one bit-packed integer sequence inside the iterator. */
typedef struct {
    bitr_t r;       /* its section */
    uint64_t base;  /* added to every unpacked value */
    unsigned width; /* current frame's bit width */
    uint8_t esc;    /* current frame's form: plain, escapes, flagged */
    uint8_t next;   /* sparse frame: slot of the next non-zero, 63 = none */
    uint32_t len;   /* number of elements in the sequence */
} codec_block_ints_t;

/* Streaming decoder: yields points one by one without materialising the
 * block. It borrows 'in', which must outlive it. Plain value, no cleanup;
 * the fields are private. */
typedef struct {
    uint32_t n, i;   /* point count, next index */
    uint8_t types;   /* 0 int, 1 float, 2 mixed */
    uint8_t enc;     /* codec_block_enc_t */
    uint8_t ts_mode; /* codec_block_ts_t */
    uint8_t ts_order;
    uint8_t order;    /* INT values: 0 levels, 1 deltas */
    unsigned dec_exp; /* INT values: decimal exponent */
    const uint8_t *bitmap;
    int64_t ts0, ts; /* first and previous timestamp */
    uint64_t delta;  /* DOD/REGULAR: previous delta; GRID: grid step (units) */
    uint64_t unit;   /* 10^ts_unit_exp */
    uint64_t ts_level;
    uint64_t m;         /* INT: previous m; XOR: previous raw bits */
    unsigned lead, len; /* XOR: current window */
    bitr_t tsr;         /* DOD timestamp section */
    codec_block_ints_t tsi, vali;
    int err; /* sticky OCT_ECORRUPT */
} codec_block_iter_t;

/* Parses the header. Returns the point count or OCT_ECORRUPT. */
int codec_block_iter_init(codec_block_iter_t *it, const uint8_t *in, size_t len);

/* Stores the next point in *pt. Returns 1, 0 at the (verified) end of the
 * block, or OCT_ECORRUPT (sticky). A corrupt block may yield some points
 * before the error; callers that need all-or-nothing use codec_block_decode. */
int codec_block_iter_next(codec_block_iter_t *it, codec_point_t *pt);

/* Writes the 3-byte qualifier 4F <seq hi> <seq lo> into out. */
void codec_block_qualifier(uint16_t seq, uint8_t out[CODEC_BLOCK_QUAL_LEN]);

/* Returns 1 and sets *seq if qual[0..len) is a 3-byte block qualifier,
 * else 0 (the 9-byte writer form included: see codec_block_qualifier_rank). */
int codec_block_qualifier_parse(const uint8_t *qual, size_t len, uint16_t *seq);

/* The writer form (docs/format/block.md): 4F, writer id uint32 BE, seq
 * uint32 BE; written by TSDs sharing a store for hours still open. */
#define CODEC_BLOCK_WQUAL_LEN 9
void codec_block_writer_qualifier(uint32_t writer, uint32_t seq,
                                  uint8_t out[CODEC_BLOCK_WQUAL_LEN]);
/* 1 if qual[0..len) is the writer form (setting *writer and *seq if not
 * NULL), else 0. */
int codec_block_writer_qualifier_parse(const uint8_t *qual, size_t len, uint32_t *writer,
                                       uint32_t *seq);

/* 1 if qual[0..len) is a block qualifier of either form, setting *rank (if
 * not NULL) to the block's rank among the blocks of a row: the 3-byte form
 * its seq (0..65535), the writer form 65536 + seq * 2^32 + writer, so that
 * every reader orders the same cells the same way. Else 0. */
int codec_block_qualifier_rank(const uint8_t *qual, size_t len, int64_t *rank);

#endif
