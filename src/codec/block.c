/* block.c -- encoder, chooser and qualifier of the block cell
 * (docs/format/block.md); the decoders are in block_dec.c.
 *
 * The encoder makes a few cheap passes over the points instead of building
 * intermediate arrays, so it needs no scratch memory: one pass validates the
 * timestamps and finds their unit, one finds the decimal exponent of the
 * floats, then every candidate value encoding is sized exactly (the sizing and
 * the writing share one routine, with a NULL writer meaning "count only") and
 * the smallest is written. All arithmetic on timestamps and integer values is
 * done on uint64_t so that the full int64 range wraps instead of overflowing;
 * the decoder undoes it with the same wrapping arithmetic. */
#include "codec/block.h"

#include <math.h>
#include <string.h>

#include "codec/block_int.h"
#include "codec/varint.h"
#include "common/bytes.h"
#include "common/err.h"
#include "common/pow10.h"

#define N_SAMPLES 15 /* values sampled to pick a base */

static inline unsigned bitlen(uint64_t v)
{
    return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

static inline uint64_t raw_bits(const codec_point_t *p)
{
    return p->is_float ? dbits(p->val.f) : (uint64_t)p->val.i;
}

/* x / unit for the four timestamp units, as constant divisions (which the
 * compiler turns into multiplications: the encoder divides every timestamp
 * several times). */
static inline uint64_t div_unit(uint64_t x, uint64_t unit)
{
    switch (unit) {
    case 1:
        return x;
    case 10:
        return x / 10;
    case 100:
        return x / 100;
    default:
        return x / 1000;
    }
}

/* ------------------------------------------------------------------------ */
/* Decimal detection                                                          */

/* The scaled integer of float f at exponent e, if (double)m / 10^e gives f
 * back bit for bit. Division (not multiplication by 10^-e) is what makes the
 * check meaningful: IEEE division is correctly rounded, so it yields exactly
 * the double nearest to the decimal m * 10^-e, which is what a parser made of
 * the printed value. */
static inline int dec_scale(double f, unsigned e, int64_t *m)
{
    double x = f * oct_pow10_f64[e];
    if (!(fabs(x) <= 9007199254740992.0)) return 0; /* also rejects NaN, Inf */
    int64_t r = (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
    if (dbits((double)r / oct_pow10_f64[e]) != dbits(f)) return 0;
    *m = r;
    return 1;
}

/* The smallest e for which every point maps to an exact int64, or -1. */
static int find_dec_exp(const codec_point_t *pts, size_t n)
{
    unsigned e = 0;
    int64_t m;
    int first = 1, grew = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pts[i].is_float) continue;
        while (!dec_scale(pts[i].val.f, e, &m)) {
            if (++e > MAX_DEC_EXP) return -1;
            grew |= !first;
        }
        first = 0;
    }
    /* A value verified at a smaller e may not survive the final one (its
     * scaled integer may pass 2^53), and integers must not overflow. When e
     * never grew after the first float, every float was checked at it. */
    for (size_t i = 0; i < n; i++) {
        if (pts[i].is_float) {
            if (grew && !dec_scale(pts[i].val.f, e, &m)) return -1;
        } else if (e) {
            int64_t prod;
            if (__builtin_mul_overflow(pts[i].val.i, (int64_t)oct_pow10_u64[e], &prod)) return -1;
        }
    }
    return (int)e;
}

/* The value of point p in the integer stream at exponent e (already proven
 * to be exact by find_dec_exp). */
static inline uint64_t point_m(const codec_point_t *p, unsigned e)
{
    if (!p->is_float) return (uint64_t)p->val.i * oct_pow10_u64[e];
    double x = p->val.f * oct_pow10_f64[e];
    return (uint64_t)(int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

/* ------------------------------------------------------------------------ */
/* Integer stream                                                             */

/* A sequence of int64 levels to pack: the points' values scaled by 10^e, or
 * their timestamps' residuals from the grid ts0 + j * step units. */
typedef struct {
    const codec_point_t *pts;
    size_t n;
    int is_ts;
    unsigned e;          /* values: decimal exponent */
    uint64_t unit, step; /* timestamps: unit (ms) and grid step (units) */
} src_t;

static inline uint64_t src_level(const src_t *s, size_t j)
{
    if (!s->is_ts) return point_m(&s->pts[j], s->e);
    return div_unit((uint64_t)s->pts[j].ts_ms - (uint64_t)s->pts[0].ts_ms, s->unit) -
           (uint64_t)j * s->step;
}

/* First packed index: order 1 starts at the first difference, and timestamp
 * residual 0 is always 0. */
static inline size_t src_start(const src_t *s, unsigned order)
{
    return s->is_ts || order ? 1 : 0;
}

static inline uint64_t src_elem(const src_t *s, size_t j, unsigned order)
{
    return order ? src_level(s, j) - src_level(s, j - 1) : src_level(s, j);
}

static void isort(int64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int64_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Median of up to N_SAMPLES evenly spaced sequence elements: a base that
 * centres the zigzag values without being dragged by a counter reset. */
static uint64_t src_sample_median(const src_t *s, unsigned order)
{
    int64_t v[N_SAMPLES];
    size_t start = src_start(s, order), len = s->n - start, k = 0;
    size_t step = len / N_SAMPLES ? len / N_SAMPLES : 1;
    for (size_t j = 0; j < len && k < N_SAMPLES; j += step)
        v[k++] = (int64_t)src_elem(s, start + j, order);
    if (k == 0) return 0;
    isort(v, k);
    return (uint64_t)v[k / 2];
}

/* Picks the width of one frame and whether it patches outliers. Without
 * escapes every value takes the frame's largest bit length. With them, a slot
 * holding all ones (w bits) is an escape followed by 7 bits of length and the
 * value itself, so one counter reset does not widen 31 other slots. Width 0
 * with escapes is the sparse form: mostly zeros, the few others located by
 * 6-bit slot numbers. The flagged form spends one bit per slot on "zero or
 * not", for steps that are often zero but not rare (an integer gauge). The
 * histograms of bit lengths (and of all-ones values, which must escape too)
 * give each candidate's exact cost. */

static unsigned frame_width(const uint64_t *z, size_t cnt, int *esc)
{
    unsigned hist[65] = {0}, ones[65] = {0}, maxw = 0;
    for (size_t k = 0; k < cnt; k++) {
        unsigned b = bitlen(z[k]);
        hist[b]++;
        ones[b] += (z[k] & (z[k] + 1)) == 0; /* all ones: an escape at width b */
        if (b > maxw) maxw = b;
    }
    uint64_t best = (uint64_t)maxw * cnt, above_bits = 0;
    unsigned bw = maxw;
    *esc = FORM_PLAIN;
    /* flagged: one bit per slot, non-zero values stored as z - 1 */
    if (maxw > 1 && hist[0] > 0) {
        uint64_t maxz = 0;
        for (size_t k = 0; k < cnt; k++)
            if (z[k] > maxz) maxz = z[k];
        unsigned fw = bitlen(maxz - 1) ? bitlen(maxz - 1) : 1;
        uint64_t cost = cnt + (uint64_t)(cnt - hist[0]) * fw;
        if (fw < 64 && cost < best) {
            best = cost;
            bw = fw;
            *esc = FORM_FLAGGED;
        }
    }
    for (unsigned w = maxw; w-- > 0;) {
        /* values of bit length w + 1 become exceptions; 8 more header bits */
        above_bits += (uint64_t)hist[w + 1] * (7 + w + 1);
        uint64_t cost = w ? (uint64_t)w * cnt + above_bits + (uint64_t)ones[w] * (7 + w) + 8
                          : above_bits + 6 * (cnt - hist[0]) + 6 + 8;
        if (cost < best) {
            best = cost;
            bw = w;
            *esc = FORM_ESCAPE;
        }
    }
    return bw;
}

/* Slot of the first non-zero z at or after k in the frame, or 63 (none). */
static inline unsigned next_nonzero(const uint64_t *z, size_t k, size_t cnt)
{
    for (; k < cnt; k++)
        if (z[k]) return (unsigned)k;
    return 63;
}

/* Writes (if w != NULL) and sizes the frames of an integer sequence.
 * Returns their length in bits. */
static uint64_t int_pass(const src_t *s, unsigned order, uint64_t base, bitw_t *w)
{
    size_t start = src_start(s, order), len = s->n - start;
    uint64_t bits = 0, z[FRAME];
    unsigned prev_w = 0;
    int prev_esc = 0;
    uint64_t prev = start ? src_level(s, start - 1) : 0;
    for (size_t f = 0; f < len; f += FRAME) {
        size_t cnt = len - f < FRAME ? len - f : FRAME;
        for (size_t k = 0; k < cnt; k++) {
            uint64_t l = src_level(s, start + f + k);
            uint64_t x = order ? l - prev : l;
            prev = l;
            z[k] = codec_zigzag((int64_t)(x - base));
        }
        int esc;
        unsigned wd = frame_width(z, cnt, &esc);
        uint64_t ones = wd == 64 ? UINT64_MAX : (UINT64_C(1) << wd) - 1;
        unsigned hdr = esc == prev_esc && wd == prev_w ? 1 : 9;
        bits += hdr;
        if (w) {
            if (hdr == 1)
                bitw_put32(w, 0, 1);
            else
                bitw_put32(w,
                           esc == FORM_ESCAPE    ? 0x180u | wd
                           : esc == FORM_FLAGGED ? 0x100u | (64 + wd)
                                                 : 0x100u | wd,
                           9);
        }
        if (esc == FORM_FLAGGED) {
            bits += cnt; /* the flags; only non-zeros hold wd bits */
            for (size_t k = 0; k < cnt; k++) {
                if (z[k]) bits += wd;
                if (!w) continue;
                if (z[k]) {
                    bitw_put32(w, 1, 1);
                    bitw_put(w, z[k] - 1, wd);
                } else {
                    bitw_put32(w, 0, 1);
                }
            }
            prev_w = wd;
            prev_esc = esc;
            continue;
        }
        bits += (uint64_t)wd * cnt;
        if (esc && wd == 0) {
            /* sparse: next slot number, then at that slot length + value */
            bits += 6;
            if (w) bitw_put32(w, next_nonzero(z, 0, cnt), 6);
            for (size_t k = 0; k < cnt; k++) {
                if (!z[k]) continue;
                unsigned bl = bitlen(z[k]);
                bits += 7 + bl + 6;
                if (w) {
                    bitw_put32(w, bl, 7);
                    bitw_put(w, z[k], bl);
                    bitw_put32(w, next_nonzero(z, k + 1, cnt), 6);
                }
            }
            prev_w = wd;
            prev_esc = esc;
            continue;
        }
        for (size_t k = 0; k < cnt; k++) {
            if (esc && z[k] >= ones) {
                unsigned bl = bitlen(z[k]);
                bits += 7 + bl;
                if (w) {
                    bitw_put(w, ones, wd);
                    bitw_put32(w, bl, 7);
                    bitw_put(w, z[k], bl);
                }
            } else if (w) {
                bitw_put(w, z[k], wd);
            }
        }
        prev_w = wd;
        prev_esc = esc;
    }
    return bits;
}

/* The cheapest (order, base) for a sequence; returns its cost in bits,
 * counting the header varints (base, and for values of order 1 the first
 * level) and the section's padding. */
static uint64_t int_choose(const src_t *s, unsigned *order, uint64_t *base)
{
    struct {
        unsigned order;
        uint64_t base;
    } cand[3];
    int nc = 0;
    cand[nc].order = 0;
    cand[nc++].base = src_sample_median(s, 0);
    if (s->n >= 2) {
        cand[nc].order = 1;
        cand[nc++].base = 0;
        cand[nc].order = 1;
        cand[nc++].base = src_sample_median(s, 1);
    }
    uint64_t best = UINT64_MAX;
    for (int c = 0; c < nc; c++) {
        uint64_t bytes = codec_varint_len(codec_zigzag((int64_t)cand[c].base));
        if (cand[c].order && !s->is_ts)
            bytes += codec_varint_len(codec_zigzag((int64_t)src_level(s, 0)));
        bytes += (int_pass(s, cand[c].order, cand[c].base, NULL) + 7) / 8;
        if (bytes * 8 < best) {
            best = bytes * 8;
            *order = cand[c].order;
            *base = cand[c].base;
        }
    }
    return best;
}

/* ------------------------------------------------------------------------ */
/* XOR                                                                        */

static uint64_t xor_pass(const codec_point_t *pts, size_t n, bitw_t *w)
{
    uint64_t prev = raw_bits(&pts[0]), bits = 64;
    unsigned wlead = 65, wlen = 0; /* invalid window */
    if (w) bitw_put(w, prev, 64);
    for (size_t i = 1; i < n; i++) {
        uint64_t r = raw_bits(&pts[i]), x = r ^ prev;
        prev = r;
        if (x == 0) {
            bits += 1;
            if (w) bitw_put32(w, 0, 1);
            continue;
        }
        unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
        if (wlead <= 64 && lead >= wlead && trail >= 64 - wlead - wlen) {
            bits += 2 + wlen;
            if (w) {
                bitw_put32(w, 2, 2);
                bitw_put(w, x >> (64 - wlead - wlen), wlen);
            }
        } else {
            wlead = lead;
            wlen = 64 - lead - trail;
            bits += 2 + 6 + 6 + wlen;
            if (w) {
                bitw_put32(w, 3, 2);
                bitw_put32(w, wlead, 6);
                bitw_put32(w, wlen - 1, 6);
                bitw_put(w, x >> trail, wlen);
            }
        }
    }
    return bits;
}

/* ------------------------------------------------------------------------ */
/* Delta-of-delta timestamps                                                  */

/* Writes (if w != NULL) and sizes the delta-of-delta section. */
static uint64_t dod_pass(const codec_point_t *pts, size_t n, uint64_t unit, bitw_t *w)
{
    uint64_t bits = 0;
    if (n < 3) return 0;
    uint64_t prev_d = div_unit((uint64_t)pts[1].ts_ms - (uint64_t)pts[0].ts_ms, unit);
    for (size_t i = 2; i < n; i++) {
        uint64_t d = div_unit((uint64_t)pts[i].ts_ms - (uint64_t)pts[i - 1].ts_ms, unit);
        uint64_t z = codec_zigzag((int64_t)(d - prev_d));
        prev_d = d;
        unsigned k = z == 0 ? 0 : z < 16 ? 1 : z < 256 ? 2 : z < 65536 ? 3 : z >> 32 == 0 ? 4 : 5;
        bits += (k < 5 ? k + 1 : 5) + dod_payload[k];
        if (w) {
            /* k ones then a terminating zero, except for the longest code */
            if (k < 5)
                bitw_put32(w, ((1u << k) - 1) << 1, k + 1);
            else
                bitw_put32(w, 0x1F, 5);
            bitw_put(w, z, dod_payload[k]);
        }
    }
    return bits;
}

/* Median timestamp delta (in units) of a sample: the grid step. */
static uint64_t ts_median_delta(const codec_point_t *pts, size_t n, uint64_t unit)
{
    int64_t v[N_SAMPLES];
    size_t k = 0, step = (n - 1) / N_SAMPLES ? (n - 1) / N_SAMPLES : 1;
    for (size_t j = 1; j < n && k < N_SAMPLES; j += step)
        v[k++] = (int64_t)div_unit((uint64_t)pts[j].ts_ms - (uint64_t)pts[j - 1].ts_ms, unit);
    isort(v, k);
    return (uint64_t)v[k / 2];
}

/* ------------------------------------------------------------------------ */
/* Encoder                                                                    */

size_t codec_block_encode_bound(size_t n)
{
    /* header <= 80 bytes; bitmap n/8; per point at most 69 timestamp bits
     * (DOD; the chooser never takes a larger GRID) and 78 XOR bits or 64 + 9/32
     * integer-stream bits */
    return 80 + (n + 7) / 8 + (n * 147 + 7) / 8 + 8;
}

/* Writes v at *p if it fits before end; 0 or -1. */
static int put_uvarint(uint8_t **p, uint8_t *end, uint64_t v)
{
    if ((size_t)(end - *p) < codec_varint_len(v)) return -1;
    *p += codec_varint_put(*p, v);
    return 0;
}

static int put_svarint(uint8_t **p, uint8_t *end, uint64_t v)
{
    return put_uvarint(p, end, codec_zigzag((int64_t)v));
}

ssize_t codec_block_encode(const codec_point_t *pts, size_t n, uint8_t *out, size_t cap,
                           codec_block_enc_t force, codec_block_info_t *info)
{
    codec_block_info_t inf = {CODEC_BLOCK_ENC_INT, 0, 0, CODEC_BLOCK_TS_DOD, 0};
    uint8_t *p = out, *end = out + cap;
    if (n > CODEC_BLOCK_MAX_POINTS) return OCT_EINVAL;
    if (force != CODEC_BLOCK_ENC_AUTO && force != CODEC_BLOCK_ENC_INT &&
        force != CODEC_BLOCK_ENC_XOR)
        return OCT_EINVAL;

    /* Pass 1: order, timestamp unit, regularity, value types. */
    size_t n_float = 0;
    unsigned k = 3;
    int regular = n >= 2;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].is_float > 1) return OCT_EINVAL;
        n_float += pts[i].is_float;
        if (i == 0) continue;
        if (pts[i].ts_ms <= pts[i - 1].ts_ms) return OCT_EINVAL;
        uint64_t diff = (uint64_t)pts[i].ts_ms - (uint64_t)pts[0].ts_ms;
        while (k && diff - div_unit(diff, oct_pow10_u64[k]) * oct_pow10_u64[k])
            k--;
        if (i >= 2 && (uint64_t)pts[i].ts_ms - (uint64_t)pts[i - 1].ts_ms !=
                          (uint64_t)pts[1].ts_ms - (uint64_t)pts[0].ts_ms)
            regular = 0;
    }
    if (n == 0) k = 0;
    uint64_t unit = oct_pow10_u64[k];
    unsigned types = n_float == 0 ? 0 : n_float == n ? 1 : 2;
    inf.ts_unit_exp = k;

    if (put_uvarint(&p, end, CODEC_BLOCK_VERSION) || put_uvarint(&p, end, n)) return OCT_ENOSPC;
    if (n == 0) {
        inf.enc = force == CODEC_BLOCK_ENC_AUTO ? CODEC_BLOCK_ENC_INT : force;
        if (info) *info = inf;
        return p - out;
    }

    /* Timestamps: regular, else the smaller of DOD and GRID. */
    src_t tsrc = {pts, n, 1, 0, unit, 0};
    unsigned ts_order = 0;
    uint64_t ts_base = 0, ts_bits = 0;
    if (regular) {
        inf.ts_mode = CODEC_BLOCK_TS_REGULAR;
    } else if (n >= 3) {
        uint64_t dod = dod_pass(pts, n, unit, NULL);
        /* Grid step candidates: the median delta (robust to gaps and slips)
         * and the rounded mean (exact under symmetric jitter, where the
         * median of noisy deltas can be off by a few ms and make the
         * residuals drift). */
        uint64_t span = div_unit((uint64_t)pts[n - 1].ts_ms - (uint64_t)pts[0].ts_ms, unit);
        uint64_t steps[2] = {ts_median_delta(pts, n, unit),
                             span / (n - 1) + (span % (n - 1) >= (n - 1 + 1) / 2)};
        uint64_t grid = UINT64_MAX;
        for (int c = 0; c < 2; c++) {
            if (c == 1 && steps[1] == steps[0]) break;
            src_t cand = tsrc;
            unsigned o = 0;
            uint64_t b = 0;
            cand.step = steps[c];
            uint64_t bits = int_choose(&cand, &o, &b) + 8 * codec_varint_len(cand.step);
            if (bits < grid) {
                grid = bits;
                tsrc.step = cand.step;
                ts_order = o;
                ts_base = b;
            }
        }
        /* GRID's header holds step and base; DOD's the first delta */
        uint64_t d1 = div_unit((uint64_t)pts[1].ts_ms - (uint64_t)pts[0].ts_ms, unit);
        if (grid < (dod + 7) / 8 * 8 + 8 * codec_varint_len(d1)) {
            inf.ts_mode = CODEC_BLOCK_TS_GRID;
        } else {
            inf.ts_mode = CODEC_BLOCK_TS_DOD;
            ts_bits = dod;
            ts_order = 0; /* the GRID candidate's order must not leak into a DOD header */
        }
    }

    /* Values: the smaller of INT (if exact) and XOR. */
    src_t vsrc = {pts, n, 0, 0, 1, 0};
    int dexp = find_dec_exp(pts, n);
    uint64_t best_bits = UINT64_MAX, val_base = 0;
    if (dexp >= 0 && force != CODEC_BLOCK_ENC_XOR) {
        vsrc.e = (unsigned)dexp;
        best_bits = 8 + int_choose(&vsrc, &inf.order, &val_base);
        inf.dec_exp = vsrc.e;
    } else if (force == CODEC_BLOCK_ENC_INT) {
        return OCT_EINVAL;
    }
    if (force != CODEC_BLOCK_ENC_INT) {
        uint64_t bits = (xor_pass(pts, n, NULL) + 7) / 8 * 8;
        if (bits < best_bits) {
            inf.enc = CODEC_BLOCK_ENC_XOR;
            inf.dec_exp = 0;
            inf.order = 0;
        }
    }

    /* Header. */
    if (p >= end) return OCT_ENOSPC;
    *p++ = (uint8_t)(types | (unsigned)inf.enc << 2 | (unsigned)inf.ts_mode << 4);
    if (put_svarint(&p, end, (uint64_t)pts[0].ts_ms)) return OCT_ENOSPC;
    if (n >= 2) {
        if (p >= end) return OCT_ENOSPC;
        *p++ = (uint8_t)(k | ts_order << 3);
        uint64_t d = inf.ts_mode == CODEC_BLOCK_TS_GRID
                         ? tsrc.step
                         : div_unit((uint64_t)pts[1].ts_ms - (uint64_t)pts[0].ts_ms, unit);
        if (put_uvarint(&p, end, d)) return OCT_ENOSPC;
        if (inf.ts_mode == CODEC_BLOCK_TS_GRID) {
            if (put_svarint(&p, end, ts_base)) return OCT_ENOSPC;
            ts_bits = int_pass(&tsrc, ts_order, ts_base, NULL);
        }
        if (inf.ts_mode != CODEC_BLOCK_TS_REGULAR && put_uvarint(&p, end, (ts_bits + 7) / 8))
            return OCT_ENOSPC;
    }
    if (types == 2) {
        size_t nb = (n + 7) / 8;
        if ((size_t)(end - p) < nb) return OCT_ENOSPC;
        memset(p, 0, nb);
        for (size_t i = 0; i < n; i++)
            if (pts[i].is_float) p[i / 8] |= (uint8_t)(0x80u >> (i % 8));
        p += nb;
    }
    if (inf.enc == CODEC_BLOCK_ENC_INT) {
        if (p >= end) return OCT_ENOSPC;
        *p++ = (uint8_t)(inf.dec_exp | inf.order << 5);
        if (put_svarint(&p, end, val_base)) return OCT_ENOSPC;
        if (inf.order && put_svarint(&p, end, src_level(&vsrc, 0))) return OCT_ENOSPC;
    }

    /* Sections. */
    bitw_t w;
    bitw_init(&w, p, (size_t)(end - p));
    if (inf.ts_mode == CODEC_BLOCK_TS_DOD)
        dod_pass(pts, n, unit, &w);
    else if (inf.ts_mode == CODEC_BLOCK_TS_GRID)
        int_pass(&tsrc, ts_order, ts_base, &w);
    bitw_flush(&w);
    if (inf.enc == CODEC_BLOCK_ENC_INT)
        int_pass(&vsrc, inf.order, val_base, &w);
    else
        xor_pass(pts, n, &w);
    p = bitw_flush(&w);
    if (w.err) return OCT_ENOSPC;
    if (info) *info = inf;
    return p - out;
}

/* ------------------------------------------------------------------------ */
/* Qualifier                                                                  */

void codec_block_qualifier(uint16_t seq, uint8_t out[CODEC_BLOCK_QUAL_LEN])
{
    out[0] = CODEC_BLOCK_QUAL_PREFIX;
    oct_put_be16(out + 1, seq);
}

int codec_block_qualifier_parse(const uint8_t *qual, size_t len, uint16_t *seq)
{
    if (len != CODEC_BLOCK_QUAL_LEN || qual[0] != CODEC_BLOCK_QUAL_PREFIX) return 0;
    if (seq) *seq = oct_get_be16(qual + 1);
    return 1;
}

void codec_block_writer_qualifier(uint32_t writer, uint32_t seq, uint8_t out[CODEC_BLOCK_WQUAL_LEN])
{
    out[0] = CODEC_BLOCK_QUAL_PREFIX;
    oct_put_be32(out + 1, writer);
    oct_put_be32(out + 5, seq);
}

int codec_block_writer_qualifier_parse(const uint8_t *qual, size_t len, uint32_t *writer,
                                       uint32_t *seq)
{
    if (len != CODEC_BLOCK_WQUAL_LEN || qual[0] != CODEC_BLOCK_QUAL_PREFIX) return 0;
    if (writer) *writer = oct_get_be32(qual + 1);
    if (seq) *seq = oct_get_be32(qual + 5);
    return 1;
}

int codec_block_qualifier_rank(const uint8_t *qual, size_t len, int64_t *rank)
{
    uint16_t s16;
    uint32_t wr, seq;
    if (codec_block_qualifier_parse(qual, len, &s16)) {
        if (rank) *rank = s16;
        return 1;
    }
    if (codec_block_writer_qualifier_parse(qual, len, &wr, &seq)) {
        /* seq < 2^31 in practice; clamped so that the rank fits int64 below
         * the head's ranks */
        uint64_t r = 65536 + ((uint64_t)(seq < 0x7FFFFFFEu ? seq : 0x7FFFFFFEu) << 32) + wr;
        if (rank) *rank = (int64_t)r;
        return 1;
    }
    return 0;
}
