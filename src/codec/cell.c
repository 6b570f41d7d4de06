/* cell.c -- OpenTSDB data cells (family `t`): qualifiers, values, compacted and append columns.
 *
 * Decoding is built on one iterator (codec_cell_iter_t) that yields the points of a single,
 * compacted or append cell after validating every length against the bytes actually present;
 * the row decoder drains the iterators of all cells into the caller's array, sorts, and
 * de-duplicates. To keep "last one in input order wins" without scratch memory, the sort key is
 * packed into ts_ms while sorting (offset_ms << 41 | input sequence << 2 | width code) and the
 * real timestamp is written back afterwards. See docs/format/cells.md. */
#include "codec/cell.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/bytes.h"

const uint8_t codec_append_qualifier[3] = {CODEC_PREFIX_APPEND, 0x00, 0x00};

/* Sort-key packing for codec_row_decode: 22 bits of offset (both qualifier forms fit: 4095 s =
 * 4,095,000 ms and 2^22 - 1 ms), 39 bits of sequence, 2 bits of width code: 63 bits. */
#define KEY_SEQ_BITS  39
#define KEY_OFF_SHIFT (KEY_SEQ_BITS + 2)
_Static_assert(KEY_OFF_SHIFT + 22 == 63, "sort key must fit a non-negative int64_t");

codec_qual_kind_t codec_qual_classify(const uint8_t *q, size_t len)
{
    if (len == 0 || !q) return CODEC_QUAL_UNKNOWN;
    if ((len & 1) == 0) {
        if (len == 2) return CODEC_QUAL_SECONDS;
        if (len == 4 && (q[0] & CODEC_MS_PREFIX) == CODEC_MS_PREFIX) return CODEC_QUAL_MS;
        return CODEC_QUAL_COMPACTED;
    }
    switch (q[0]) {
    case CODEC_PREFIX_BLOCK:
        return CODEC_QUAL_BLOCK;
    case CODEC_PREFIX_APPEND:
        return CODEC_QUAL_APPEND;
    case CODEC_PREFIX_ANNOTATION:
        return CODEC_QUAL_ANNOTATION;
    case CODEC_PREFIX_HISTOGRAM:
        return CODEC_QUAL_HISTOGRAM;
    default:
        return CODEC_QUAL_UNKNOWN;
    }
}

const char *codec_qual_kind_name(codec_qual_kind_t kind)
{
    switch (kind) {
    case CODEC_QUAL_SECONDS:
        return "seconds";
    case CODEC_QUAL_MS:
        return "ms";
    case CODEC_QUAL_COMPACTED:
        return "compacted";
    case CODEC_QUAL_APPEND:
        return "append";
    case CODEC_QUAL_ANNOTATION:
        return "annotation";
    case CODEC_QUAL_HISTOGRAM:
        return "histogram";
    case CODEC_QUAL_BLOCK:
        return "block";
    case CODEC_QUAL_UNKNOWN:
        break;
    }
    return "unknown";
}

/* ---- values ------------------------------------------------------------------------------- */

unsigned codec_value_encode_int(int64_t v, uint8_t out[8])
{
    unsigned w = 8;
    if (v >= INT8_MIN && v <= INT8_MAX)
        w = 1;
    else if (v >= INT16_MIN && v <= INT16_MAX)
        w = 2;
    else if (v >= INT32_MIN && v <= INT32_MAX)
        w = 4;
    oct_put_be_n(out, (uint64_t)v, w);
    return w;
}

static int fits_float32(double d)
{
    /* Out-of-range double -> float conversion is undefined in ISO C; finite values beyond
     * FLT_MAX cannot fit anyway. NaN != NaN, so NaN goes to float64 with its bits intact. */
    if (isnan(d)) return 0;
    if (isfinite(d) && fabs(d) > FLT_MAX) return 0;
    return (double)(float)d == d;
}

unsigned codec_value_encode_float(double d, uint8_t out[8])
{
    if (fits_float32(d)) {
        float f = (float)d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        oct_put_be32(out, bits);
        return 4;
    }
    uint64_t bits;
    memcpy(&bits, &d, 8);
    oct_put_be64(out, bits);
    return 8;
}

/* Reads a value of a width already validated for its type. */
static void value_read(const uint8_t *v, unsigned width, int is_float, codec_dp_t *dp)
{
    dp->is_float = (uint8_t)(is_float != 0);
    dp->width = (uint8_t)width;
    if (is_float) {
        if (width == 4) {
            uint32_t bits = oct_get_be32(v);
            float f;
            memcpy(&f, &bits, 4);
            dp->val.f = (double)f;
        } else {
            uint64_t bits = oct_get_be64(v);
            memcpy(&dp->val.f, &bits, 8);
        }
    } else {
        uint64_t u = oct_get_be_n(v, width);
        if (width < 8 && (u >> (8 * width - 1)) & 1) u |= ~(uint64_t)0 << (8 * width);
        dp->val.i = (int64_t)u; /* two's complement; GCC/Clang define this conversion */
    }
}

/* Writes dp's value on its own width; returns the width. */
static unsigned value_write(const codec_dp_t *dp, uint8_t *out)
{
    if (dp->is_float) {
        if (dp->width == 4) {
            float f = (float)dp->val.f; /* exact: it was widened from a float32 */
            uint32_t bits;
            memcpy(&bits, &f, 4);
            oct_put_be32(out, bits);
            return 4;
        }
        uint64_t bits;
        memcpy(&bits, &dp->val.f, 8);
        oct_put_be64(out, bits);
        return 8;
    }
    oct_put_be_n(out, (uint64_t)dp->val.i, dp->width);
    return dp->width;
}

static int width_ok(int is_float, size_t w)
{
    return is_float ? (w == 4 || w == 8) : (w == 1 || w == 2 || w == 4 || w == 8);
}

/* ---- qualifiers --------------------------------------------------------------------------- */

int codec_qual_encode_s(uint32_t offset_s, uint8_t flags, uint8_t out[2])
{
    if (offset_s > CODEC_MAX_OFFSET_S || flags > CODEC_FLAGS_MASK) return OCT_ERANGE;
    oct_put_be16(out, (uint16_t)(offset_s << 4 | flags));
    return 2;
}

int codec_qual_encode_ms(uint32_t offset_ms, uint8_t flags, uint8_t out[4])
{
    if (offset_ms > CODEC_MAX_OFFSET_MS || flags > CODEC_FLAGS_MASK) return OCT_ERANGE;
    oct_put_be32(out, 0xF0000000u | offset_ms << 6 | flags);
    return 4;
}

/* Offset and precision of a 2- or 4-byte point qualifier at q (length known to be present). */
static uint32_t qual_offset_ms(const uint8_t *q, int ms)
{
    if (ms) return (oct_get_be32(q) & 0x0FFFFFC0u) >> 6;
    return (uint32_t)(oct_get_be16(q) >> 4) * 1000u;
}

int codec_point_encode(const codec_point_t *p, uint32_t base_s, int ms_precision,
                       codec_cell_buf_t *out, oct_errbuf_t *eb)
{
    int64_t off = p->ts_ms - (int64_t)base_s * 1000;
    if (off < 0 || off > (int64_t)CODEC_MAX_OFFSET_MS)
        return oct_err(eb, OCT_ERANGE, "timestamp %lld ms is outside the row at %u s",
                       (long long)p->ts_ms, base_s);
    if (!ms_precision && off % 1000 != 0)
        return oct_err(eb, OCT_ERANGE, "timestamp %lld ms is not a whole second",
                       (long long)p->ts_ms);
    unsigned w = p->is_float ? codec_value_encode_float(p->val.f, out->val)
                             : codec_value_encode_int(p->val.i, out->val);
    uint8_t flags = codec_flags(p->is_float, w);
    int ql = ms_precision ? codec_qual_encode_ms((uint32_t)off, flags, out->qual)
                          : codec_qual_encode_s((uint32_t)(off / 1000), flags, out->qual);
    if (ql < 0) return oct_err(eb, ql, "offset out of range"); /* unreachable: checked above */
    out->qual_len = (uint8_t)ql;
    out->val_len = (uint8_t)w;
    return 0;
}

/* ---- decoding ----------------------------------------------------------------------------- */

/* "Corrupt cell <qualifier hex>: <why>" into eb; long qualifiers are cut. */
static void corrupt_msg(oct_errbuf_t *eb, const uint8_t *q, size_t qlen, const char *why)
{
    static const char digits[] = "0123456789ABCDEF";
    char hex[2 * 32 + 4];
    size_t n = qlen > 32 ? 32 : qlen, k = 0;
    for (size_t i = 0; i < n; i++) {
        hex[k++] = digits[q[i] >> 4];
        hex[k++] = digits[q[i] & 0xF];
    }
    if (n < qlen) hex[k++] = '.', hex[k++] = '.', hex[k++] = '.';
    hex[k] = '\0';
    oct_err(eb, OCT_ECORRUPT, "corrupt cell with qualifier %s (%zu bytes): %s", hex, qlen, why);
}

/* Kept apart from the loop above so that static analysis follows it into
 * its callers and sees an error path never returns 0 or 1. */
static int corrupt(oct_errbuf_t *eb, const uint8_t *q, size_t qlen, const char *why)
{
    corrupt_msg(eb, q, qlen, why);
    return OCT_ECORRUPT;
}

int codec_cell_decode_single(const uint8_t *q, size_t qlen, const uint8_t *v, size_t vlen,
                             codec_dp_t *out, oct_errbuf_t *eb)
{
    codec_qual_kind_t kind = codec_qual_classify(q, qlen);
    if (kind != CODEC_QUAL_SECONDS && kind != CODEC_QUAL_MS)
        return corrupt(eb, q, qlen, "not a single data point qualifier");
    int ms = kind == CODEC_QUAL_MS;
    uint8_t flags = q[qlen - 1] & CODEC_FLAGS_MASK;
    int is_float = (flags & CODEC_FLAG_FLOAT) != 0;
    /* Legacy fix-up 1: float32 flagged as 4 bytes but stored on 8 with four zero bytes first. */
    if (is_float && (flags & CODEC_FLAGS_LEN_MASK) == 3 && vlen == 8) {
        if (v[0] | v[1] | v[2] | v[3])
            return corrupt(eb, q, qlen, "8-byte float32 value without 4 leading zero bytes");
        v += 4;
        vlen = 4;
    }
    /* Legacy fix-up 2: the value's actual length wins over the length bits. */
    if (!width_ok(is_float, vlen)) {
        char why[64];
        snprintf(why, sizeof why, "%s value of %zu bytes", is_float ? "float" : "integer", vlen);
        return corrupt(eb, q, qlen, why);
    }
    out->offset_ms = qual_offset_ms(q, ms);
    out->ms = (uint8_t)ms;
    value_read(v, (unsigned)vlen, is_float, out);
    return 0;
}

/* Length of the point qualifier starting at q[0] (4 if the ms nibble is set, else 2). */
static size_t point_qual_len(const uint8_t *q)
{
    return (q[0] & CODEC_MS_PREFIX) == CODEC_MS_PREFIX ? 4 : 2;
}

/* Value width from the flags of an entry in a compacted or append cell; 0 if illegal. */
static unsigned flags_width(uint8_t flags)
{
    unsigned w = (flags & CODEC_FLAGS_LEN_MASK) + 1u;
    return width_ok(flags & CODEC_FLAG_FLOAT, w) ? w : 0;
}

int codec_cell_iter_init(codec_cell_iter_t *it, const uint8_t *q, size_t qlen, const uint8_t *v,
                         size_t vlen, oct_errbuf_t *eb)
{
    memset(it, 0, sizeof *it);
    it->q = q, it->qlen = qlen, it->v = v, it->vlen = vlen;
    it->kind = codec_qual_classify(q, qlen);
    switch (it->kind) {
    case CODEC_QUAL_SECONDS:
    case CODEC_QUAL_MS:
    case CODEC_QUAL_APPEND:
        break;
    case CODEC_QUAL_COMPACTED: {
        size_t total = 0;
        for (size_t i = 0; i < qlen;) {
            size_t ql = point_qual_len(q + i);
            if (i + ql > qlen) {
                it->done = 1;
                return corrupt(eb, q, qlen, "truncated ms qualifier in compacted column");
            }
            unsigned w = flags_width(q[i + ql - 1]);
            if (w == 0) {
                it->done = 1;
                return corrupt(eb, q, qlen, "illegal value length flags in compacted column");
            }
            total += w;
            i += ql;
        }
        if (vlen == 0 || total != vlen - 1) {
            char why[96];
            snprintf(why, sizeof why, "values need %zu bytes + meta byte, value has %zu", total,
                     vlen);
            it->done = 1;
            return corrupt(eb, q, qlen, why);
        }
        if (v[vlen - 1] > CODEC_META_MIXED) {
            it->done = 1;
            return corrupt(eb, q, qlen, "compacted column meta byte is not 0x00 or 0x01");
        }
        break;
    }
    default:
        it->done = 1;
        break;
    }
    return (int)it->kind;
}

int codec_cell_iter_next(codec_cell_iter_t *it, codec_dp_t *dp, oct_errbuf_t *eb)
{
    if (it->done) return 0;
    switch (it->kind) {
    case CODEC_QUAL_SECONDS:
    case CODEC_QUAL_MS: {
        it->done = 1;
        int rc = codec_cell_decode_single(it->q, it->qlen, it->v, it->vlen, dp, eb);
        return rc < 0 ? rc : 1;
    }
    case CODEC_QUAL_COMPACTED: {
        /* Layout validated by init, so these reads are in bounds. */
        if (it->qi >= it->qlen) {
            it->done = 1;
            return 0;
        }
        const uint8_t *q = it->q + it->qi;
        size_t ql = point_qual_len(q);
        uint8_t flags = q[ql - 1] & CODEC_FLAGS_MASK;
        unsigned w = flags_width(flags);
        dp->offset_ms = qual_offset_ms(q, ql == 4);
        dp->ms = (uint8_t)(ql == 4);
        value_read(it->v + it->vi, w, flags & CODEC_FLAG_FLOAT, dp);
        it->qi += ql;
        it->vi += w;
        return 1;
    }
    case CODEC_QUAL_APPEND: {
        if (it->vi >= it->vlen) {
            it->done = 1;
            return 0;
        }
        const uint8_t *e = it->v + it->vi;
        size_t left = it->vlen - it->vi;
        size_t ql = point_qual_len(e);
        if (ql > left) {
            it->done = 1;
            return corrupt(eb, it->q, it->qlen, "truncated qualifier in append value");
        }
        uint8_t flags = e[ql - 1] & CODEC_FLAGS_MASK;
        unsigned w = flags_width(flags);
        if (w == 0) {
            it->done = 1;
            return corrupt(eb, it->q, it->qlen, "illegal value length flags in append value");
        }
        if (ql + w > left) {
            it->done = 1;
            return corrupt(eb, it->q, it->qlen, "truncated value in append value");
        }
        dp->offset_ms = qual_offset_ms(e, ql == 4);
        dp->ms = (uint8_t)(ql == 4);
        value_read(e + ql, w, flags & CODEC_FLAG_FLOAT, dp);
        it->vi += ql + w;
        return 1;
    }
    default:
        it->done = 1;
        return 0;
    }
}

/* ---- building ----------------------------------------------------------------------------- */

/* Decodes single cell c and writes its fixed-up qualifier and value at qout/vout (capacity
 * checked by the caller: 4 and 8 bytes suffice). Returns 0 or a negative code. */
static int fixed_single(const codec_cell_t *c, codec_dp_t *dp, uint8_t *qout, size_t *ql,
                        uint8_t *vout, size_t *vl, oct_errbuf_t *eb)
{
    codec_qual_kind_t k = codec_qual_classify(c->qual, c->qual_len);
    if (k != CODEC_QUAL_SECONDS && k != CODEC_QUAL_MS)
        return oct_err(eb, OCT_EINVAL, "cell of kind %s is not a single data point",
                       codec_qual_kind_name(k));
    int rc = codec_cell_decode_single(c->qual, c->qual_len, c->val, c->val_len, dp, eb);
    if (rc) return rc;
    /* A lone cell may carry an offset past the hour (2-byte qualifiers hold up
     * to 4095 s), but in a column a seconds qualifier from 3840 s on starts
     * with the ms nibble 0xF and would be misread: columns hold one hour. */
    if (dp->offset_ms >= 3600u * 1000u)
        return oct_err(eb, OCT_ERANGE, "offset %u ms is outside the row's hour", dp->offset_ms);
    memcpy(qout, c->qual, c->qual_len);
    qout[c->qual_len - 1] =
        (uint8_t)((qout[c->qual_len - 1] & 0xF0) | codec_flags(dp->is_float, dp->width));
    *ql = c->qual_len;
    *vl = value_write(dp, vout);
    return 0;
}

int codec_compact_build(const codec_cell_t *cells, size_t n, uint8_t *qual, size_t qcap,
                        size_t *qlen, uint8_t *val, size_t vcap, size_t *vlen, oct_errbuf_t *eb)
{
    if (n == 0) return oct_err(eb, OCT_EINVAL, "nothing to compact");
    if (n > INT32_MAX) return oct_err(eb, OCT_EINVAL, "too many cells");
    size_t qo = 0, vo = 0;
    int has_s = 0, has_ms = 0;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t qb[4], vb[8];
        size_t ql, vl;
        codec_dp_t dp;
        int rc = fixed_single(&cells[i], &dp, qb, &ql, vb, &vl, eb);
        if (rc) return rc;
        if (i > 0 && dp.offset_ms <= prev)
            return oct_err(eb, OCT_EINVAL, "cells not sorted by offset: %u ms after %u ms",
                           dp.offset_ms, prev);
        prev = dp.offset_ms;
        if (qo + ql > qcap || vo + vl > vcap) return oct_err(eb, OCT_ENOSPC, "output too small");
        memcpy(qual + qo, qb, ql);
        memcpy(val + vo, vb, vl);
        qo += ql, vo += vl;
        has_ms |= dp.ms, has_s |= !dp.ms;
    }
    if (n > 1) {
        if (vo + 1 > vcap) return oct_err(eb, OCT_ENOSPC, "output too small");
        val[vo++] = (has_s && has_ms) ? CODEC_META_MIXED : 0x00;
    }
    *qlen = qo;
    *vlen = vo;
    return (int)n;
}

int codec_append_build(const codec_cell_t *cells, size_t n, uint8_t *val, size_t vcap,
                       oct_errbuf_t *eb)
{
    size_t vo = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t qb[4], vb[8];
        size_t ql, vl;
        codec_dp_t dp;
        int rc = fixed_single(&cells[i], &dp, qb, &ql, vb, &vl, eb);
        if (rc) return rc;
        if (vo + ql + vl > vcap || vo + ql + vl > INT32_MAX)
            return oct_err(eb, OCT_ENOSPC, "output too small");
        memcpy(val + vo, qb, ql);
        memcpy(val + vo + ql, vb, vl);
        vo += ql + vl;
    }
    return (int)vo;
}

/* ---- row decoding ------------------------------------------------------------------------- */

static unsigned width_code(unsigned w)
{
    return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3;
}

static void sift_down(codec_point_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && a[child + 1].ts_ms > a[child].ts_ms) child++;
        if (a[root].ts_ms >= a[child].ts_ms) return;
        codec_point_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* In-place heapsort by ts_ms (keys are unique here, so stability is moot); O(n log n) for any
 * input, no allocation (qsort may allocate). Sorted input is the common case: skip it. */
static void sort_points(codec_point_t *a, size_t n)
{
    size_t i;
    for (i = 1; i < n && a[i - 1].ts_ms < a[i].ts_ms; i++) {
    }
    if (i >= n) return;
    for (i = n / 2; i-- > 0;)
        sift_down(a, i, n);
    for (i = n; i-- > 1;) {
        codec_point_t t = a[0];
        a[0] = a[i];
        a[i] = t;
        sift_down(a, 0, i);
    }
}

static int same_value(const codec_point_t *a, const codec_point_t *b)
{
    if (a->is_float != b->is_float) return 0;
    if ((a->ts_ms & 3) != (b->ts_ms & 3)) return 0; /* width code */
    if (a->is_float) {
        /* The same bits, as the cells store them: NaN equals NaN, 0.0 is not -0.0. */
        uint64_t x, y;
        memcpy(&x, &a->val.f, sizeof x);
        memcpy(&y, &b->val.f, sizeof y);
        return x == y;
    }
    return a->val.i == b->val.i;
}

int codec_row_decode(uint32_t base_s, const codec_cell_t *cells, size_t n, codec_point_t *out,
                     size_t cap, codec_row_stats_t *st, oct_errbuf_t *eb)
{
    memset(st, 0, sizeof *st);
    size_t count = 0;
    for (size_t c = 0; c < n; c++) {
        codec_cell_iter_t it;
        int kind = codec_cell_iter_init(&it, cells[c].qual, cells[c].qual_len, cells[c].val,
                                        cells[c].val_len, eb);
        if (kind < 0) return kind;
        switch (kind) {
        case CODEC_QUAL_ANNOTATION:
            st->n_annotation++;
            continue;
        case CODEC_QUAL_HISTOGRAM:
            st->n_histogram++;
            continue;
        case CODEC_QUAL_BLOCK:
            st->n_block++;
            continue;
        case CODEC_QUAL_UNKNOWN:
            st->n_unknown++;
            continue;
        default:
            break;
        }
        codec_dp_t dp;
        int rc;
        while ((rc = codec_cell_iter_next(&it, &dp, eb)) == 1) {
            if (count < cap) {
                /* Keeps the sequence within its KEY_SEQ_BITS and the count within int. */
                if (count >= (size_t)INT32_MAX)
                    return oct_err(eb, OCT_ERANGE, "too many points in one row");
                codec_point_t *p = &out[count];
                p->ts_ms = (int64_t)((uint64_t)dp.offset_ms << KEY_OFF_SHIFT |
                                     (uint64_t)count << 2 | width_code(dp.width));
                p->is_float = dp.is_float;
                if (dp.is_float)
                    p->val.f = dp.val.f;
                else
                    p->val.i = dp.val.i;
            }
            count++;
        }
        if (rc < 0) return rc;
    }
    st->needed = count;
    if (count > cap)
        return oct_err(eb, OCT_ENOSPC, "row holds %zu points, output has room for %zu", count, cap);

    sort_points(out, count);
    /* Keep the last point of each run of equal offsets; account for the others. */
    const int64_t base_ms = (int64_t)base_s * 1000;
    size_t w = 0;
    for (size_t i = 0; i < count;) {
        uint64_t off = (uint64_t)out[i].ts_ms >> KEY_OFF_SHIFT;
        size_t j = i + 1;
        while (j < count && ((uint64_t)out[j].ts_ms >> KEY_OFF_SHIFT) == off)
            j++;
        const codec_point_t *keep = &out[j - 1];
        for (size_t k = i; k + 1 < j; k++) {
            if (same_value(&out[k], keep)) {
                st->n_dup_identical++;
            } else {
                if (st->n_dup_conflict == 0) st->first_conflict_ms = base_ms + (int64_t)off;
                st->n_dup_conflict++;
            }
        }
        codec_point_t p = *keep;
        p.ts_ms = base_ms + (int64_t)off;
        out[w++] = p;
        i = j;
    }
    return (int)w;
}
