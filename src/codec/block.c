/* block.c -- encoder, chooser and decoders of the block cell (docs/format/block.md).
 *
 * The encoder makes a few cheap passes over the points instead of building
 * intermediate arrays, so it needs no scratch memory: one pass validates the
 * timestamps and finds their unit, one finds the decimal exponent of the
 * floats, then every candidate value encoding is sized exactly (the sizing and
 * the writing share one routine, with a NULL writer meaning "count only") and
 * the smallest is written. All arithmetic on timestamps and integer values is
 * done on uint64_t so that the full int64 range wraps instead of overflowing;
 * the decoder undoes it with the same wrapping arithmetic.
 *
 * The iterator decodes point by point; codec_block_decode() decodes a whole
 * block section by section with loops specialised per encoding (faster), and
 * makes the same checks.
 * Every read is bounds-checked by the sticky bit reader, every field that
 * could address memory (count, lengths, widths) is range-checked before use. */
#include "codec/block.h"

#include <math.h>
#include <string.h>

#include "codec/varint.h"
#include "common/bytes.h"
#include "common/err.h"
#include "common/pow10.h"

#define FRAME       32 /* values per bit-packing frame */
#define MAX_DEC_EXP 18 /* 10^18 is the largest power of ten in an int64 */
#define N_SAMPLES   15 /* values sampled to pick a base */

static inline uint64_t dbits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline double bitsd(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

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
enum { FORM_PLAIN, FORM_ESCAPE, FORM_FLAGGED };

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

/* Refill from a big-endian 64-bit load: ORs the next bytes below the
 * loaded bits and counts the whole bytes that fit. Bits of a byte only
 * partly counted are ORed again, identically, by the next refill. */
static inline void fr_refill(bitr_t *r)
{
    if (r->nacc > 56) return;
    if (r->end - r->p >= 8) {
        r->acc |= oct_get_be64(r->p) >> r->nacc;
        unsigned take = (64 - r->nacc) >> 3;
        r->p += take;
        r->nacc += take * 8;
    } else {
        bitr_refill(r);
    }
}

/* As bitr_get32 (n <= 32). */
static inline uint64_t fr_get32(bitr_t *r, unsigned n)
{
    if (n == 0) return 0;
    if (r->nacc < n) {
        fr_refill(r);
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

static inline uint64_t fr_get(bitr_t *r, unsigned n)
{
    if (n > 32) {
        uint64_t hi = fr_get32(r, n - 32);
        return hi << 32 | fr_get32(r, 32);
    }
    return fr_get32(r, n);
}

/* Reads sequence element j (j counts from the first packed element, the
 * sequence has d->len elements). */
static inline int ints_next(codec_block_ints_t *d, size_t j, uint64_t *x)
{
    bitr_t *r = &d->r;
    unsigned slot = (unsigned)(j % FRAME);
    uint64_t z;
    if (slot == 0) {
        if (fr_get32(r, 1)) { /* else: same width and form as the last frame */
            d->esc = (uint8_t)fr_get32(r, 1);
            d->width = (unsigned)fr_get32(r, 7);
            if (d->width > 64) {
                if (d->esc) return -1;
                d->esc = FORM_FLAGGED;
                d->width -= 64;
            }
        }
        if (d->esc == FORM_ESCAPE && d->width == 0) d->next = (uint8_t)fr_get32(r, 6);
    }
    if (d->esc == FORM_FLAGGED) {
        z = fr_get32(r, 1) ? fr_get(r, d->width) + 1 : 0;
    } else if (d->esc && d->width == 0) {
        size_t cnt = d->len - (j - slot) < FRAME ? d->len - (j - slot) : FRAME;
        /* slot numbers must increase and stay inside the frame */
        if (d->next != 63 && (d->next < slot || d->next >= cnt)) return -1;
        if (d->next == slot) {
            unsigned bl = (unsigned)fr_get32(r, 7);
            if (bl == 0 || bl > 64) return -1;
            z = fr_get(r, bl);
            d->next = (uint8_t)fr_get32(r, 6);
            if (d->next != 63 && d->next <= slot) return -1;
        } else {
            z = 0;
        }
    } else {
        z = fr_get(r, d->width);
        if (d->esc && z == (d->width == 64 ? UINT64_MAX : (UINT64_C(1) << d->width) - 1)) {
            unsigned bl = (unsigned)fr_get32(r, 7);
            if (bl > 64) return -1;
            z = fr_get(r, bl);
        }
    }
    *x = (uint64_t)codec_unzigzag(z) + d->base;
    return r->err ? -1 : 0;
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

static const unsigned dod_payload[6] = {0, 4, 8, 16, 32, 64};

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
/* Decoder                                                                    */

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
    if (end_bits & 7) (void)fr_get32(r, (unsigned)(end_bits & 7));
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
                    dst[j * stride] = (uint64_t)codec_unzigzag(fr_get32(r, w)) + base;
            } else {
                for (; j < fend; j++)
                    dst[j * stride] = (uint64_t)codec_unzigzag(fr_get(r, w)) + base;
            }
            d->r = lr;
            if (r->err) return -1;
        } else if (d->esc == FORM_FLAGGED) {
            unsigned w = d->width;
            uint64_t base = d->base;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            for (; j < fend; j++) {
                uint64_t z = fr_get32(r, 1) ? fr_get(r, w) + 1 : 0;
                dst[j * stride] = (uint64_t)codec_unzigzag(z) + base;
            }
            d->r = lr;
            if (r->err) return -1;
        } else if (d->width > 0) { /* escapes */
            unsigned w = d->width;
            uint64_t base = d->base, ones = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
            bitr_t lr = d->r, *r = &lr; /* a local: dst cannot alias it */
            for (; j < fend; j++) {
                uint64_t z = fr_get(r, w);
                if (z == ones) {
                    unsigned bl = (unsigned)fr_get32(r, 7);
                    if (bl > 64) return -1;
                    z = fr_get(r, bl);
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
                unsigned bl = (unsigned)fr_get32(r, 7);
                if (bl == 0 || bl > 64) return -1;
                uint64_t z = fr_get(r, bl);
                if (fs + t < fend) dst[(fs + t) * stride] = (uint64_t)codec_unzigzag(z) + base;
                unsigned nn = (unsigned)fr_get32(r, 6);
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
        while (k < 5 && fr_get32(r, 1))
            k++;
        uint64_t z = fr_get(r, dod_payload[k]);
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
            raw = fr_get(r, 64);
        } else if (fr_get32(r, 1)) {
            if (fr_get32(r, 1)) { /* a new window */
                lead = (unsigned)fr_get32(r, 6);
                wlen = (unsigned)fr_get32(r, 6) + 1;
            }
            /* also refuses reusing a window when none was read yet (lead 65) */
            if (wlen == 0 || lead + wlen > 64) return -1;
            raw ^= fr_get(r, wlen) << (64 - lead - wlen);
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
