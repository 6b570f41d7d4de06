/* block_dec.c -- decoders of the block cell (docs/format/block.md); the
 * encoder is in block.c.
 *
 * The iterator decodes point by point; codec_block_decode() decodes a whole
 * block section by section with loops specialised per encoding (faster), and
 * makes the same checks. Every read is bounds-checked by the sticky bit
 * reader, every field that could address memory (count, lengths, widths) is
 * range-checked before use. The integer arithmetic wraps on uint64_t exactly
 * as the encoder's does. */
#include "codec/block.h"

#include <string.h>

#include "codec/block_int.h"
#include "codec/varint.h"
#include "common/bytes.h"
#include "common/err.h"
#include "common/pow10.h"

static inline double bitsd(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Reads sequence element j (j counts from the first packed element, the
 * sequence has d->len elements). */
static inline int ints_next(codec_block_ints_t *d, size_t j, uint64_t *x)
{
    bitr_t *r = &d->r;
    unsigned slot = (unsigned)(j % FRAME);
    uint64_t z;
    if (slot == 0) {
        if (bitr_get32(r, 1)) { /* else: same width and form as the last frame */
            d->esc = (uint8_t)bitr_get32(r, 1);
            d->width = (unsigned)bitr_get32(r, 7);
            if (d->width > 64) {
                if (d->esc) return -1;
                d->esc = FORM_FLAGGED;
                d->width -= 64;
            }
        }
        if (d->esc == FORM_ESCAPE && d->width == 0) d->next = (uint8_t)bitr_get32(r, 6);
    }
    if (d->esc == FORM_FLAGGED) {
        z = bitr_get32(r, 1) ? bitr_get(r, d->width) + 1 : 0;
    } else if (d->esc && d->width == 0) {
        size_t cnt = d->len - (j - slot) < FRAME ? d->len - (j - slot) : FRAME;
        /* slot numbers must increase and stay inside the frame */
        if (d->next != 63 && (d->next < slot || d->next >= cnt)) return -1;
        if (d->next == slot) {
            unsigned bl = (unsigned)bitr_get32(r, 7);
            if (bl == 0 || bl > 64) return -1;
            z = bitr_get(r, bl);
            d->next = (uint8_t)bitr_get32(r, 6);
            if (d->next != 63 && d->next <= slot) return -1;
        } else {
            z = 0;
        }
    } else {
        z = bitr_get(r, d->width);
        if (d->esc && z == (d->width == 64 ? UINT64_MAX : (UINT64_C(1) << d->width) - 1)) {
            unsigned bl = (unsigned)bitr_get32(r, 7);
            if (bl > 64) return -1;
            z = bitr_get(r, bl);
        }
    }
    *x = (uint64_t)codec_unzigzag(z) + d->base;
    return r->err ? -1 : 0;
}

/* Reads a varint at *p, before end; 0 or -1 (truncated, too long). */
static int get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    size_t k = codec_varint_get(*p, (size_t)(end - *p), v);
    *p += k;
    return k ? 0 : -1;
}

static int get_svarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t z;
    if (get_uvarint(p, end, &z)) return -1;
    *v = (uint64_t)codec_unzigzag(z);
    return 0;
}

int codec_block_iter_init(codec_block_iter_t *it, const uint8_t *in, size_t len)
{
    const uint8_t *p = in, *end = in + len;
    uint64_t v, n;
    memset(it, 0, sizeof *it);
    it->err = OCT_ECORRUPT; /* until the header is proven good */
    if (len == 0 || in[0] != CODEC_BLOCK_VERSION) return OCT_ECORRUPT;
    p++;
    if (get_uvarint(&p, end, &n) || n > CODEC_BLOCK_MAX_POINTS) return OCT_ECORRUPT;
    it->n = (uint32_t)n;
    if (n == 0) {
        if (p != end) return OCT_ECORRUPT;
        bitr_init(&it->tsr, p, 0);
        bitr_init(&it->tsi.r, p, 0);
        bitr_init(&it->vali.r, p, 0);
        it->err = 0;
        return 0;
    }
    if (p >= end) return OCT_ECORRUPT;
    unsigned flags = *p++;
    it->types = flags & 3;
    it->enc = (flags >> 2) & 3;
    it->ts_mode = (flags >> 4) & 3;
    if ((flags >> 6) || it->types == 3 || it->enc > 1 || it->ts_mode > 2) return OCT_ECORRUPT;
    if (get_svarint(&p, end, &v)) return OCT_ECORRUPT;
    it->ts0 = it->ts = (int64_t)v;
    it->unit = 1;
    uint64_t tsbytes = 0;
    if (n >= 2) {
        if (p >= end) return OCT_ECORRUPT;
        unsigned h = *p++;
        it->ts_order = (uint8_t)((h >> 3) & 1);
        if ((h & 7) > 3 || (h >> 4) || (it->ts_order && it->ts_mode != CODEC_BLOCK_TS_GRID))
            return OCT_ECORRUPT;
        it->unit = oct_pow10_u64[h & 7];
        if (get_uvarint(&p, end, &it->delta)) return OCT_ECORRUPT;
        if (it->ts_mode == CODEC_BLOCK_TS_GRID && get_svarint(&p, end, &it->tsi.base))
            return OCT_ECORRUPT;
        if (it->ts_mode != CODEC_BLOCK_TS_REGULAR && get_uvarint(&p, end, &tsbytes))
            return OCT_ECORRUPT;
    } else if (it->ts_mode != CODEC_BLOCK_TS_DOD) {
        return OCT_ECORRUPT;
    }
    if (it->types == 2) {
        size_t nb = (size_t)(n + 7) / 8;
        if ((size_t)(end - p) < nb) return OCT_ECORRUPT;
        if (n % 8 && (p[nb - 1] & (0xFFu >> (n % 8)))) return OCT_ECORRUPT;
        it->bitmap = p;
        p += nb;
    }
    if (it->enc == CODEC_BLOCK_ENC_INT) {
        if (p >= end) return OCT_ECORRUPT;
        unsigned h = *p++;
        it->dec_exp = h & 0x1F;
        it->order = (h >> 5) & 1;
        if ((h >> 6) || it->dec_exp > MAX_DEC_EXP || (it->types == 0 && it->dec_exp))
            return OCT_ECORRUPT;
        if (get_svarint(&p, end, &it->vali.base)) return OCT_ECORRUPT;
        if (it->order && get_svarint(&p, end, &it->m)) return OCT_ECORRUPT;
    } else {
        it->lead = 65; /* invalid window */
    }
    if ((uint64_t)(end - p) < tsbytes) return OCT_ECORRUPT;
    bitr_init(&it->tsr, p, it->ts_mode == CODEC_BLOCK_TS_DOD ? (size_t)tsbytes : 0);
    bitr_init(&it->tsi.r, p, it->ts_mode == CODEC_BLOCK_TS_GRID ? (size_t)tsbytes : 0);
    bitr_init(&it->vali.r, p + tsbytes, (size_t)(end - p - (ptrdiff_t)tsbytes));
    it->tsi.len = (uint32_t)n - 1;
    it->vali.len = (uint32_t)n - it->order;
    it->err = 0;
    return (int)n;
}

static int iter_fail(codec_block_iter_t *it)
{
    it->err = OCT_ECORRUPT;
    return OCT_ECORRUPT;
}

int codec_block_iter_next(codec_block_iter_t *it, codec_point_t *pt)
{
    if (it->err) return it->err;
    uint32_t i = it->i;
    if (i == it->n) {
        if (!bitr_at_clean_end(&it->tsr) || !bitr_at_clean_end(&it->tsi.r) ||
            !bitr_at_clean_end(&it->vali.r))
            return iter_fail(it);
        return 0;
    }

    /* timestamp */
    int64_t ts = it->ts;
    if (i > 0) {
        if (it->ts_mode == CODEC_BLOCK_TS_GRID) {
            uint64_t x;
            if (ints_next(&it->tsi, i - 1, &x)) return iter_fail(it);
            it->ts_level = it->ts_order ? it->ts_level + x : x;
            ts = (int64_t)((uint64_t)it->ts0 + (it->ts_level + i * it->delta) * it->unit);
        } else {
            if (i >= 2 && it->ts_mode == CODEC_BLOCK_TS_DOD) {
                unsigned k = bitr_ones(&it->tsr, 5);
                uint64_t z = bitr_get(&it->tsr, dod_payload[k]);
                if (it->tsr.err) return iter_fail(it);
                it->delta += (uint64_t)codec_unzigzag(z);
            }
            ts = (int64_t)((uint64_t)ts + it->delta * it->unit);
        }
        if (ts <= it->ts) return iter_fail(it);
    }
    it->ts = ts;

    /* value */
    int is_float = it->types == 1 || (it->types == 2 && (it->bitmap[i / 8] & (0x80u >> (i % 8))));
    if (it->enc == CODEC_BLOCK_ENC_INT) {
        uint64_t m;
        if (it->order == 1 && i == 0) {
            m = it->m;
        } else {
            uint64_t x;
            if (ints_next(&it->vali, i - it->order, &x)) return iter_fail(it);
            m = it->order ? it->m + x : x;
        }
        it->m = m;
        if (is_float) {
            pt->val.f = (double)(int64_t)m / oct_pow10_f64[it->dec_exp];
        } else if (it->dec_exp) {
            int64_t sm = (int64_t)m, q = (int64_t)oct_pow10_u64[it->dec_exp];
            if (sm % q) return iter_fail(it);
            pt->val.i = sm / q;
        } else {
            pt->val.i = (int64_t)m;
        }
    } else {
        bitr_t *r = &it->vali.r;
        uint64_t raw;
        if (i == 0) {
            raw = bitr_get(r, 64);
        } else if (!bitr_bit(r)) {
            raw = it->m;
        } else {
            if (bitr_bit(r)) {
                it->lead = (unsigned)bitr_get32(r, 6);
                it->len = (unsigned)bitr_get32(r, 6) + 1;
                if (it->lead + it->len > 64) return iter_fail(it);
            } else if (it->lead > 64) {
                return iter_fail(it);
            }
            raw = it->m ^ (bitr_get(r, it->len) << (64 - it->lead - it->len));
        }
        if (r->err) return iter_fail(it);
        it->m = raw;
        if (is_float)
            pt->val.f = bitsd(raw);
        else
            pt->val.i = (int64_t)raw;
    }
    pt->ts_ms = ts;
    pt->is_float = (uint8_t)is_float;
    it->i = i + 1;
    return 1;
}

int codec_block_count(const uint8_t *in, size_t len)
{
    codec_block_iter_t it;
    return codec_block_iter_init(&it, in, len);
}

/* ---- bulk decoding ------------------------------------------------------ */
/* codec_block_decode decodes section by section instead of point by point:
 * all timestamps, then all values, each with a loop specialised to its
 * encoding, and the bit reader refills a whole word at a time while 8 bytes
 * remain. Integer sequences land in the output points' own 8-byte fields as
 * scratch and are turned into timestamps/values in place. Every check of the
 * iterator is made here too: both return OCT_ECORRUPT on the same blocks. */

/* The rest of a plain frame of width w (1..56), cnt > 0 slots, when all of
 * its bits and 8 bytes past the last slot's first byte are in the section:
 * each slot comes from its own unaligned 64-bit load, with no dependency
 * from slot to slot (the reader's state is set once, after the frame).
 * Returns 0 (nothing read: the caller takes the bit-by-bit loop) or 1. */
static inline int plain_fast(bitr_t *r, unsigned w, uint64_t *dst, size_t stride, size_t cnt,
                             uint64_t base)
{
    /* bit positions count from 8 bytes before r->p, so the nacc bits
     * already loaded (they came from the bytes just before r->p) are >= 0 */
    size_t off = 64 - r->nacc, last = off + (cnt - 1) * w;
    if ((ptrdiff_t)(last >> 3) > r->end - r->p) return 0; /* load at (last >> 3) - 8 + 8 */
    const uint8_t *p = r->p;
    for (size_t k = 0; k < cnt; k++) {
        size_t b = off + k * w;
        uint64_t z = (oct_get_be64(p + (ptrdiff_t)(b >> 3) - 8) << (b & 7)) >> (64 - w);
        dst[k * stride] = (uint64_t)codec_unzigzag(z) + base;
    }
    size_t end_bits = off + cnt * w;
    r->p = p + (ptrdiff_t)(end_bits >> 3) - 8;
    r->acc = 0;
    r->nacc = 0;
    if (end_bits & 7) (void)bitr_get32(r, (unsigned)(end_bits & 7));
    return 1;
}

/* Decodes elements [0, cnt) of an integer sequence into dst[k * stride].
 * Each frame's header goes through ints_next (with its slot 0); the rest of
 * a plain, flagged or escaped frame unpacks in a loop of its own, a sparse
 * frame through ints_next. */
static int ints_bulk(codec_block_ints_t *d, size_t cnt, uint64_t *dst, size_t stride)
{
    for (size_t j = 0; j < cnt;) {
        uint64_t x;
        if (ints_next(d, j, &x)) return -1; /* slot 0: reads the frame header */
        dst[j * stride] = x;
        size_t fend = j - j % FRAME + FRAME;
        if (fend > cnt) fend = cnt;
        j++;
        if (d->esc == FORM_PLAIN) {
            unsigned w = d->width;
            uint64_t base = d->base;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            if (w == 0) {
                uint64_t v = (uint64_t)codec_unzigzag(0) + base;
                for (; j < fend; j++)
                    dst[j * stride] = v;
            } else if (w <= 56 && plain_fast(r, w, dst + j * stride, stride, fend - j, base)) {
                j = fend;
            } else if (w <= 32) {
                for (; j < fend; j++)
                    dst[j * stride] = (uint64_t)codec_unzigzag(bitr_get32(r, w)) + base;
            } else {
                for (; j < fend; j++)
                    dst[j * stride] = (uint64_t)codec_unzigzag(bitr_get(r, w)) + base;
            }
            d->r = lr;
            if (r->err) return -1;
        } else if (d->esc == FORM_FLAGGED) {
            unsigned w = d->width;
            uint64_t base = d->base;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            for (; j < fend; j++) {
                uint64_t z = bitr_get32(r, 1) ? bitr_get(r, w) + 1 : 0;
                dst[j * stride] = (uint64_t)codec_unzigzag(z) + base;
            }
            d->r = lr;
            if (r->err) return -1;
        } else if (d->width > 0) { /* escapes */
            unsigned w = d->width;
            uint64_t base = d->base, ones = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            for (; j < fend; j++) {
                uint64_t z = bitr_get(r, w);
                if (z == ones) {
                    unsigned bl = (unsigned)bitr_get32(r, 7);
                    if (bl > 64) return -1;
                    z = bitr_get(r, bl);
                }
                dst[j * stride] = (uint64_t)codec_unzigzag(z) + base;
            }
            d->r = lr;
            if (r->err) return -1;
        } else {
            /* Sparse: every slot is base but the patched ones, which form a
             * chain of increasing slots. The checks are ints_next's: a chain
             * link is checked against the frame when a later slot of the
             * frame is visited, so one left dangling by the last slot is not
             * an error. */
            size_t fs = j - 1, cntf = d->len - fs < FRAME ? d->len - fs : FRAME;
            uint64_t base = d->base;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            for (size_t k = j; k < fend; k++)
                dst[k * stride] = base;
            size_t cur = 1;
            while (cur < cntf && d->next != 63) {
                size_t t = d->next;
                if (t >= cntf) return -1;
                unsigned bl = (unsigned)bitr_get32(r, 7);
                if (bl == 0 || bl > 64) return -1;
                uint64_t z = bitr_get(r, bl);
                if (fs + t < fend) dst[(fs + t) * stride] = (uint64_t)codec_unzigzag(z) + base;
                unsigned nn = (unsigned)bitr_get32(r, 6);
                if (nn != 63 && nn <= t) return -1;
                d->next = (uint8_t)nn;
                cur = t + 1;
            }
            d->r = lr;
            if (r->err) return -1;
            j = fend;
        }
    }
    return 0;
}

/* 3 = sizeof(codec_point_t) / 8: the stride of a point's 8-byte fields. */
#define PT_STRIDE (sizeof(codec_point_t) / sizeof(uint64_t))
_Static_assert(sizeof(codec_point_t) % sizeof(uint64_t) == 0, "point stride");

/* decode_ts and decode_vals write element i at ts[i * ts_st], val[i * v_st]
 * and (when isf is not NULL) isf[i * f_st]: points (codec_block_decode) and
 * columns (codec_block_decode_cols) share them, inlined with constant
 * strides into each. */
#define DEC_INLINE static inline __attribute__((always_inline))

DEC_INLINE int decode_ts(codec_block_iter_t *it, int64_t *out, size_t st, uint32_t n)
{
    int64_t prev = it->ts0;
    out[0] = prev;
    if (n < 2) return 0;
    uint64_t unit = it->unit;
    if (it->ts_mode == CODEC_BLOCK_TS_GRID) {
        uint64_t *dst = (uint64_t *)(void *)&out[st];
        if (ints_bulk(&it->tsi, n - 1, dst, st)) return -1;
        /* in locals: the stores to out[] could alias *it for the compiler.
         * ts[i] = t0 + (level[i] + i * step) * unit, modulo 2^64, taken a
         * step at a time (the same sums); the order check is folded into a
         * flag, so no branch sits in the chain from one point to the next. */
        uint64_t su = it->delta * unit, t = (uint64_t)it->ts0;
        unsigned bad = 0;
        if (it->ts_order) {
            for (uint32_t i = 1; i < n; i++) {
                t += (uint64_t)out[i * st] * unit + su; /* level += residual delta */
                bad |= (int64_t)t <= prev;
                out[i * st] = prev = (int64_t)t;
            }
        } else {
            for (uint32_t i = 1; i < n; i++) {
                t += su; /* t0 + i * step * unit */
                int64_t ts = (int64_t)(t + (uint64_t)out[i * st] * unit);
                bad |= ts <= prev;
                out[i * st] = prev = ts;
            }
        }
        return bad ? -1 : 0;
    }
    uint64_t delta = it->delta;
    int64_t ts = (int64_t)((uint64_t)prev + delta * unit);
    if (ts <= prev) return -1;
    out[st] = prev = ts;
    if (it->ts_mode == CODEC_BLOCK_TS_REGULAR) {
        uint64_t step = delta * unit;
        for (uint32_t i = 2; i < n; i++) {
            ts = (int64_t)((uint64_t)prev + step);
            if (ts <= prev) return -1;
            out[i * st] = prev = ts;
        }
        return 0;
    }
    bitr_t *r = &it->tsr;
    for (uint32_t i = 2; i < n; i++) {
        unsigned k = 0;
        while (k < 5 && bitr_get32(r, 1))
            k++;
        uint64_t z = bitr_get(r, dod_payload[k]);
        if (r->err) return -1;
        delta += (uint64_t)codec_unzigzag(z);
        ts = (int64_t)((uint64_t)prev + delta * unit);
        if (ts <= prev) return -1;
        out[i * st] = prev = ts;
    }
    return 0;
}

static inline int pt_is_float(const codec_block_iter_t *it, uint32_t i)
{
    return it->types == 1 || (it->types == 2 && (it->bitmap[i / 8] & (0x80u >> (i % 8))));
}

DEC_INLINE int decode_vals(codec_block_iter_t *it, uint64_t *out, size_t st, uint8_t *isf,
                           size_t fst, uint32_t n)
{
    if (it->enc == CODEC_BLOCK_ENC_INT) {
        uint32_t o = it->order;
        if (n > o) {
            if (ints_bulk(&it->vali, n - o, &out[o * st], st)) return -1;
        }
        uint64_t m = it->m;
        unsigned e = it->dec_exp;
        double scale = oct_pow10_f64[e];
        int64_t q = (int64_t)oct_pow10_u64[e];
        if (it->types == 1) {
            /* The levels first, then the divisions two at a time: a
             * division is the slow step, and the lanes of a vector division
             * round each quotient exactly as a scalar one. */
            if (o) {
                out[0] = m;
                for (uint32_t i = 1; i < n; i++) {
                    m += out[i * st];
                    out[i * st] = m;
                }
            }
            typedef double v2d __attribute__((vector_size(16)));
            const v2d sc = {scale, scale};
            uint32_t i = 0;
            for (; i + 1 < n; i += 2) {
                v2d d = {(double)(int64_t)out[i * st], (double)(int64_t)out[(i + 1) * st]};
                d /= sc;
                out[i * st] = dbits(d[0]);
                out[(i + 1) * st] = dbits(d[1]);
                if (isf) {
                    isf[i * fst] = 1;
                    isf[(i + 1) * fst] = 1;
                }
            }
            if (i < n) {
                out[i * st] = dbits((double)(int64_t)out[i * st] / scale);
                if (isf) isf[i * fst] = 1;
            }
            return 0;
        }
        if (it->types == 0 && !e) {
            /* all integers (e = 0): the levels are the values */
            if (o) {
                out[0] = m;
                for (uint32_t i = 1; i < n; i++) {
                    m += out[i * st];
                    out[i * st] = m;
                }
            }
            if (isf)
                for (uint32_t i = 0; i < n; i++)
                    isf[i * fst] = 0;
            return 0;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (!o || i) m = o ? m + out[i * st] : out[i * st];
            if (pt_is_float(it, i)) {
                out[i * st] = dbits((double)(int64_t)m / scale);
                if (isf) isf[i * fst] = 1;
            } else {
                int64_t sm = (int64_t)m;
                if (e) {
                    if (sm % q) return -1;
                    sm /= q;
                }
                out[i * st] = (uint64_t)sm;
                if (isf) isf[i * fst] = 0;
            }
        }
        return 0;
    }
    bitr_t *r = &it->vali.r;
    uint64_t raw = 0;
    unsigned lead = it->lead, wlen = it->len;
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0) {
            raw = bitr_get(r, 64);
        } else if (bitr_get32(r, 1)) {
            if (bitr_get32(r, 1)) { /* a new window */
                lead = (unsigned)bitr_get32(r, 6);
                wlen = (unsigned)bitr_get32(r, 6) + 1;
            }
            /* also refuses reusing a window when none was read yet (lead 65) */
            if (wlen == 0 || lead + wlen > 64) return -1;
            raw ^= bitr_get(r, wlen) << (64 - lead - wlen);
        }
        if (r->err) return -1;
        /* a double's bits and an int64's are the same 8 bytes */
        out[i * st] = raw;
        if (isf) isf[i * fst] = (uint8_t)pt_is_float(it, i);
    }
    return 0;
}

static int block_end_clean(const codec_block_iter_t *it)
{
    return bitr_at_clean_end(&it->tsr) && bitr_at_clean_end(&it->tsi.r) &&
           bitr_at_clean_end(&it->vali.r);
}

int codec_block_decode(const uint8_t *in, size_t len, codec_point_t *out, size_t cap)
{
    codec_block_iter_t it;
    int n = codec_block_iter_init(&it, in, len);
    if (n < 0) return n;
    if ((size_t)n > cap) return OCT_ENOSPC;
    if (n > 0) {
        if (decode_ts(&it, &out[0].ts_ms, PT_STRIDE, (uint32_t)n) ||
            decode_vals(&it, (uint64_t *)(void *)&out[0].val, PT_STRIDE, &out[0].is_float,
                        sizeof(codec_point_t), (uint32_t)n))
            return OCT_ECORRUPT;
    }
    if (!block_end_clean(&it)) return OCT_ECORRUPT;
    return n;
}

int codec_block_decode_cols(const uint8_t *in, size_t len, int64_t *ts, uint64_t *val,
                            uint8_t *is_float, size_t cap, int *types)
{
    codec_block_iter_t it;
    int n = codec_block_iter_init(&it, in, len);
    if (n < 0) return n;
    if ((size_t)n > cap) return OCT_ENOSPC;
    *types = n > 0 ? it.types : 0;
    if (n > 0) {
        if (decode_ts(&it, ts, 1, (uint32_t)n) ||
            decode_vals(&it, val, 1, it.types == 2 ? is_float : NULL, 1, (uint32_t)n))
            return OCT_ECORRUPT;
    }
    if (!block_end_clean(&it)) return OCT_ECORRUPT;
    return n;
}
