/* cell.h -- OpenTSDB data cells (family `t`): qualifiers, values, compacted and append columns.
 *
 * The byte formats are specified in docs/format/cells.md. This module encodes
 * single points, builds compacted and append columns, classifies qualifiers, and decodes a whole
 * row into time-sorted codec_point_t's with duplicate accounting. Pure functions: no I/O, no
 * allocation; every decoder bounds-checks its input and reports bad bytes as OCT_ECORRUPT with
 * the qualifier in hex, never crashes, whatever the input. */
#ifndef OCT_CODEC_CELL_H
#define OCT_CODEC_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"

#define CODEC_FLAG_FLOAT        0x8 /* flags bit 3: IEEE float */
#define CODEC_FLAGS_LEN_MASK    0x7 /* flags bits 2..0: value length - 1 */
#define CODEC_FLAGS_MASK        0xF
#define CODEC_MS_PREFIX         0xF0 /* (q[0] & 0xF0) == 0xF0 marks a 4-byte ms qualifier */
#define CODEC_PREFIX_ANNOTATION 0x01
#define CODEC_PREFIX_APPEND     0x05
#define CODEC_PREFIX_HISTOGRAM  0x06
#define CODEC_PREFIX_BLOCK      0x4F /* octsdb's compressed block cell (odd length) */
#define CODEC_META_MIXED        0x01 /* compacted column mixes seconds and ms points */
#define CODEC_MAX_OFFSET_S      3599u
#define CODEC_MAX_OFFSET_MS     3599999u

/* The qualifier of an append column: 05 00 00. */
extern const uint8_t codec_append_qualifier[3];

typedef enum {
    CODEC_QUAL_UNKNOWN = 0,
    CODEC_QUAL_SECONDS,    /* 2 bytes: one point, seconds precision */
    CODEC_QUAL_MS,         /* 4 bytes, first nibble F: one point, ms precision */
    CODEC_QUAL_COMPACTED,  /* other even length >= 4: several points */
    CODEC_QUAL_APPEND,     /* odd, prefix 0x05 */
    CODEC_QUAL_ANNOTATION, /* odd, prefix 0x01 */
    CODEC_QUAL_HISTOGRAM,  /* odd, prefix 0x06 */
    CODEC_QUAL_BLOCK,      /* odd, prefix 0x4F: octsdb block cell, defined by codec/block */
} codec_qual_kind_t;

/* One cell of a row: borrowed qualifier and value bytes. */
typedef struct {
    const uint8_t *qual;
    size_t qual_len;
    const uint8_t *val;
    size_t val_len;
} codec_cell_t;

/* One data point relative to its row, as stored. */
typedef struct {
    uint32_t offset_ms; /* from the row's base time; a seconds point counts offset_s * 1000 */
    uint8_t is_float;
    uint8_t width; /* value bytes: 1/2/4/8 for integers, 4/8 for floats */
    uint8_t ms;    /* 1 if the qualifier was the 4-byte ms form */
    union {
        int64_t i;
        double f; /* float32 values widened exactly */
    } val;
} codec_dp_t;

/* Storage form of one point: qualifier and value bytes. */
typedef struct {
    uint8_t qual[4];
    uint8_t val[8];
    uint8_t qual_len; /* 2 or 4 */
    uint8_t val_len;  /* 1, 2, 4 or 8 */
} codec_cell_buf_t;

/* Classifies a qualifier (see docs/format/cells.md section 6). Never fails. */
codec_qual_kind_t codec_qual_classify(const uint8_t *q, size_t len);

/* Short name of a kind for messages ("seconds", "ms", "compacted", ...). */
const char *codec_qual_kind_name(codec_qual_kind_t kind);

/* Integer value in the smallest of 1/2/4/8 big-endian two's-complement bytes; returns the width. */
unsigned codec_value_encode_int(int64_t v, uint8_t out[8]);
/* Float value as float32 if (float)d == d, else float64 (NaN always float64, bits kept);
 * returns the width (4 or 8). */
unsigned codec_value_encode_float(double d, uint8_t out[8]);

/* Flags nibble for a value of 'width' bytes. */
static inline uint8_t codec_flags(int is_float, unsigned width)
{
    return (uint8_t)((is_float ? CODEC_FLAG_FLOAT : 0) | ((width - 1) & CODEC_FLAGS_LEN_MASK));
}

/* Seconds qualifier (offset_s << 4 | flags) into out[0..2); returns 2, or OCT_ERANGE if
 * offset_s > 3599 or flags > 0xF. */
OCT_MUST_CHECK int codec_qual_encode_s(uint32_t offset_s, uint8_t flags, uint8_t out[2]);
/* Millisecond qualifier (0xF0000000 | offset_ms << 6 | flags) into out[0..4); returns 4, or
 * OCT_ERANGE if offset_ms > 3599999 or flags > 0xF. */
OCT_MUST_CHECK int codec_qual_encode_ms(uint32_t offset_ms, uint8_t flags, uint8_t out[4]);

/* Encodes point p of the row starting at base_s as one cell. ms_precision selects the 4-byte ms
 * qualifier (OpenTSDB uses it whenever the written timestamp was in ms); otherwise p->ts_ms must
 * be a whole second. Returns 0 or OCT_ERANGE (outside the row's hour, or a fractional second
 * without ms_precision) with the reason in eb. */
OCT_MUST_CHECK int codec_point_encode(const codec_point_t *p, uint32_t base_s, int ms_precision,
                                      codec_cell_buf_t *out, oct_errbuf_t *eb);

/* Decodes a single-point cell (2-byte or ms 4-byte qualifier) with the legacy fix-ups of
 * cells.md section 3. Returns 0 or OCT_ECORRUPT (also for a qualifier of another kind). */
OCT_MUST_CHECK int codec_cell_decode_single(const uint8_t *q, size_t qlen, const uint8_t *v,
                                            size_t vlen, codec_dp_t *out, oct_errbuf_t *eb);

/* Iterator over the data points of one cell (single, compacted or append), in stored order.
 * The cell's bytes are borrowed and must outlive the iterator. Fields are private. */
typedef struct {
    const uint8_t *q, *v;
    size_t qlen, vlen, qi, vi;
    codec_qual_kind_t kind;
    int done;
} codec_cell_iter_t;

/* Prepares 'it' for cell (q, v). Returns the cell's kind (>= 0); for non-data kinds
 * (annotation, histogram, block, unknown) the iterator yields nothing. For a compacted column the
 * whole layout is validated here: returns OCT_ECORRUPT if the lengths don't add up to
 * vlen - 1 or the meta byte is > 1. */
OCT_MUST_CHECK int codec_cell_iter_init(codec_cell_iter_t *it, const uint8_t *q, size_t qlen,
                                        const uint8_t *v, size_t vlen, oct_errbuf_t *eb);
/* Next point into *dp: returns 1, 0 at the end, or OCT_ECORRUPT (then stays at the end). */
OCT_MUST_CHECK int codec_cell_iter_next(codec_cell_iter_t *it, codec_dp_t *dp, oct_errbuf_t *eb);

/* Builds a compacted column from n single-point cells sorted by strictly increasing offset
 * (legacy fix-ups applied to each; value widths kept). n == 1 yields that single cell, fixed
 * up, without meta byte. Writes qual[0..*qlen) and val[0..*vlen) (meta byte included).
 * Returns n, OCT_EINVAL (n == 0, a cell that is not a single point, offsets not increasing),
 * OCT_ERANGE (a point outside the row's hour), OCT_ECORRUPT (a cell that does not decode)
 * or OCT_ENOSPC. */
OCT_MUST_CHECK int codec_compact_build(const codec_cell_t *cells, size_t n, uint8_t *qual,
                                       size_t qcap, size_t *qlen, uint8_t *val, size_t vcap,
                                       size_t *vlen, oct_errbuf_t *eb);

/* Builds the value of an append column (qualifier codec_append_qualifier) from n single-point
 * cells, in the given (arrival) order, fixed up. Returns the value length, OCT_EINVAL,
 * OCT_ERANGE (a point outside the row's hour), OCT_ECORRUPT or OCT_ENOSPC. */
OCT_MUST_CHECK int codec_append_build(const codec_cell_t *cells, size_t n, uint8_t *val,
                                      size_t vcap, oct_errbuf_t *eb);

/* What codec_row_decode saw besides the points. */
typedef struct {
    size_t needed;             /* raw points found before de-duplication (set on OCT_ENOSPC too) */
    size_t n_dup_identical;    /* extra points at an offset equal to the survivor's value */
    size_t n_dup_conflict;     /* extra points at an offset with a different value/type/width */
    int64_t first_conflict_ms; /* absolute ms time of the earliest conflict (if any) */
    size_t n_annotation, n_histogram, n_block, n_unknown; /* skipped cells */
} codec_row_stats_t;

/* Decodes the data points of the row with base time base_s from cells[0..n) (any mixture of
 * kinds; non-data cells are skipped and counted) into out[0..cap), sorted by time, one point
 * per ms offset: on duplicates the last one in input order wins (later cell; later append
 * entry) and the others are counted in *st as identical or conflicting. st may not be NULL.
 * Returns the number of points written, OCT_ENOSPC (st->needed says how many slots suffice),
 * or OCT_ECORRUPT naming the bad qualifier in eb. */
OCT_MUST_CHECK int codec_row_decode(uint32_t base_s, const codec_cell_t *cells, size_t n,
                                    codec_point_t *out, size_t cap, codec_row_stats_t *st,
                                    oct_errbuf_t *eb);

#endif
