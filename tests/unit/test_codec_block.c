/* test_codec_block.c -- codec/block: golden bytes, bit-exact round trips of every
 * series class and edge case, the encoding chooser, and hostile input.
 *
 * Golden vectors were derived by hand from docs/format/block.md (the bit
 * strings are spelled out next to them). Round trips compare the decoded
 * points with the input bit for bit. Series are generated here with a local
 * PRNG, independent of bench/common/datagen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "common/err.h"
#include "testutil.h"

#define T0 1356998400000LL /* 2013-01-01 00:00:00 UTC in ms */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double dbl_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static codec_point_t ip(int64_t ts, int64_t v)
{
    codec_point_t p = {.ts_ms = ts, .is_float = 0};
    p.val.i = v;
    return p;
}

static codec_point_t fp(int64_t ts, double v)
{
    codec_point_t p = {.ts_ms = ts, .is_float = 1};
    p.val.f = v;
    return p;
}

/* The value bits of a point regardless of its type (the union's bytes). */
static uint64_t vbits(const codec_point_t *p)
{
    uint64_t u;
    memcpy(&u, &p->val, sizeof u);
    return u;
}

/* Encodes with 'force', decodes both ways, checks bit-exact equality and
 * returns the encoded size. */
static size_t roundtrip_enc(const codec_point_t *pts, size_t n, codec_block_enc_t force,
                            codec_block_info_t *info)
{
    size_t cap = codec_block_encode_bound(n);
    uint8_t *buf = malloc(cap);
    codec_point_t *out = malloc((n ? n : 1) * sizeof *out);
    assert_non_null(buf);
    assert_non_null(out);
    ssize_t len = codec_block_encode(pts, n, buf, cap, force, info);
    assert_true(len > 0);
    assert_true((size_t)len <= cap);
    assert_int_equal(codec_block_count(buf, (size_t)len), (int)n);
    assert_int_equal(codec_block_decode(buf, (size_t)len, out, n), (int)n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].ts_ms, pts[i].ts_ms);
        assert_int_equal(out[i].is_float, pts[i].is_float);
        if (vbits(&out[i]) != vbits(&pts[i]))
            fail_msg("point %zu: value bits %016llx, want %016llx", i,
                     (unsigned long long)vbits(&out[i]), (unsigned long long)vbits(&pts[i]));
    }
    /* the iterator yields the same points and then a clean end */
    codec_block_iter_t it;
    assert_int_equal(codec_block_iter_init(&it, buf, (size_t)len), (int)n);
    codec_point_t p;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(codec_block_iter_next(&it, &p), 1);
        assert_int_equal(p.ts_ms, pts[i].ts_ms);
        assert_true(vbits(&p) == vbits(&pts[i]));
    }
    assert_int_equal(codec_block_iter_next(&it, &p), 0);
    free(buf);
    free(out);
    return (size_t)len;
}

static size_t roundtrip(const codec_point_t *pts, size_t n)
{
    return roundtrip_enc(pts, n, CODEC_BLOCK_ENC_AUTO, NULL);
}

/* Size of a forced encoding, or 0 when it cannot represent the block. */
static size_t forced_size(const codec_point_t *pts, size_t n, codec_block_enc_t enc)
{
    size_t cap = codec_block_encode_bound(n);
    uint8_t *buf = malloc(cap);
    ssize_t len = codec_block_encode(pts, n, buf, cap, enc, NULL);
    free(buf);
    if (len == OCT_EINVAL) return 0;
    assert_true(len > 0);
    return (size_t)len;
}

/* Asserts AUTO is exactly as small as the best forced encoding, and that
 * every forced encoding round-trips. Returns the chosen encoding. */
static codec_block_enc_t check_chooser(const codec_point_t *pts, size_t n)
{
    codec_block_info_t info;
    size_t a = roundtrip_enc(pts, n, CODEC_BLOCK_ENC_AUTO, &info);
    size_t i = forced_size(pts, n, CODEC_BLOCK_ENC_INT);
    size_t x = forced_size(pts, n, CODEC_BLOCK_ENC_XOR);
    assert_true(x > 0);
    size_t best = i && i < x ? i : x;
    assert_int_equal(a, best);
    assert_int_equal(info.enc, i && i <= x ? CODEC_BLOCK_ENC_INT : CODEC_BLOCK_ENC_XOR);
    if (i) roundtrip_enc(pts, n, CODEC_BLOCK_ENC_INT, NULL);
    roundtrip_enc(pts, n, CODEC_BLOCK_ENC_XOR, NULL);
    return info.enc;
}

static void expect_bytes(const codec_point_t *pts, size_t n, const char *hex)
{
    uint8_t want[256], got[256];
    int wn = tu_unhex(hex, want, sizeof want);
    assert_true(wn > 0);
    ssize_t len = codec_block_encode(pts, n, got, sizeof got, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_int_equal(len, wn);
    if (memcmp(got, want, (size_t)wn)) fail_msg("got %s", tu_hex(got, (size_t)len));
    roundtrip(pts, n);
}

/* ---- qualifier and golden bytes ------------------------------------------ */

static void block_qualifier_is_4f_seq_be(void **state)
{
    (void)state;
    uint8_t q[3];
    uint16_t seq = 0;
    codec_block_qualifier(0x0102, q);
    assert_memory_equal(q, "\x4F\x01\x02", 3);
    assert_int_equal(codec_block_qualifier_parse(q, 3, &seq), 1);
    assert_int_equal(seq, 0x0102);
    codec_block_qualifier(0, q);
    assert_memory_equal(q, "\x4F\x00\x00", 3);
    /* OpenTSDB's own odd-length qualifiers are not ours */
    assert_int_equal(codec_block_qualifier_parse((const uint8_t *)"\x05\x00\x00", 3, &seq), 0);
    assert_int_equal(codec_block_qualifier_parse((const uint8_t *)"\x01\x00\x10", 3, &seq), 0);
    assert_int_equal(codec_block_qualifier_parse((const uint8_t *)"\x4F\x00", 2, &seq), 0);
    assert_int_equal(codec_block_qualifier_parse((const uint8_t *)"\x4F\x00\x00\x00\x00", 5, &seq),
                     0);
}

/* The writer form of docs/format/block.md: 4F, writer u32 BE, seq u32 BE;
 * ranks: 3-byte by seq, every writer form above, by seq then writer. */
static void block_writer_qualifier_and_ranks(void **state)
{
    (void)state;
    uint8_t q[CODEC_BLOCK_WQUAL_LEN];
    uint32_t wr = 0, seq = 0;
    int64_t r3 = -1, ra = -1, rb = -1, rc = -1;
    codec_block_writer_qualifier(0x01020304u, 0x0A0B0C0Du, q);
    assert_memory_equal(q, "\x4F\x01\x02\x03\x04\x0A\x0B\x0C\x0D", 9);
    assert_int_equal(codec_block_writer_qualifier_parse(q, 9, &wr, &seq), 1);
    assert_int_equal(wr, 0x01020304u);
    assert_int_equal(seq, 0x0A0B0C0Du);
    /* not the 3-byte form, and neither form parses as the other */
    uint16_t s16;
    assert_int_equal(codec_block_qualifier_parse(q, 9, &s16), 0);
    assert_int_equal(
        codec_block_writer_qualifier_parse((const uint8_t *)"\x4F\xFF\xFF", 3, &wr, &seq), 0);
    assert_int_equal(
        codec_block_writer_qualifier_parse((const uint8_t *)"\x05\0\0\0\0\0\0\0\0", 9, &wr, &seq),
        0);
    assert_int_equal(codec_block_qualifier_rank((const uint8_t *)"\x4F\xFF\xFF", 3, &r3), 1);
    assert_int_equal(r3, 65535);
    uint8_t a[9], b[9], c[9];
    codec_block_writer_qualifier(7, 0, a); /* writer 7, seq 0 */
    codec_block_writer_qualifier(2, 1, b); /* writer 2, seq 1 */
    codec_block_writer_qualifier(9, 0, c); /* writer 9, seq 0 */
    assert_int_equal(codec_block_qualifier_rank(a, 9, &ra), 1);
    assert_int_equal(codec_block_qualifier_rank(b, 9, &rb), 1);
    assert_int_equal(codec_block_qualifier_rank(c, 9, &rc), 1);
    assert_int_equal(ra, 65536 + 7);
    assert_int_equal(rc, 65536 + 9);
    assert_int_equal(rb, 65536 + (INT64_C(1) << 32) + 2);
    assert_true(r3 < ra && ra < rc && rc < rb);
    /* the largest seq still ranks below INT64_MAX - 1 (the head's ranks) */
    codec_block_writer_qualifier(UINT32_MAX, UINT32_MAX, a);
    assert_int_equal(codec_block_qualifier_rank(a, 9, &ra), 1);
    assert_true(ra > rb && ra < INT64_MAX - 1);
    assert_int_equal(codec_block_qualifier_rank((const uint8_t *)"\x4F\x00\x00\x00\x00", 5, &ra),
                     0);
}

static void block_golden_empty(void **state)
{
    (void)state;
    uint8_t buf[8];
    codec_point_t dummy;
    assert_int_equal(codec_block_encode(NULL, 0, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL), 2);
    assert_memory_equal(buf, "\x01\x00", 2);
    assert_int_equal(codec_block_count(buf, 2), 0);
    assert_int_equal(codec_block_decode(buf, 2, &dummy, 0), 0);
}

static void block_golden_regular_ints(void **state)
{
    (void)state;
    /* ts 1000, 2000, 3000 ms -> unit 10^3, REGULAR, delta 1.
     * values 5, 7, 9. Candidates, each 4 bytes of value header + section:
     *  order 0, base 7 (median): z = 3, 0, 4; flagged frame of width 2 =
     *    bitlen(4 - 1): 10 1000010 | 1 10 | 0 | 1 11 -> A1 67 (16 bits);
     *  order 1, base 2: z = 0, 0 -> '0' (same as initial width 0) -> 00, but
     *    it also needs m0;
     * a tie, and the first candidate (order 0) is kept.
     * 01 version | 03 n | 10 flags (REGULAR) | D0 0F ts0 zz(1000)=2000 |
     * 03 tshdr (k 3) | 01 delta | 00 ehdr | 0E base zz(7) | A1 67 */
    codec_point_t p[3] = {ip(1000, 5), ip(2000, 7), ip(3000, 9)};
    expect_bytes(p, 3, "01 03 10 D00F 03 01 00 0E A167");
    /* values 5, 7, 9, 11: order 1 with base 2 wins: z = 0, 0, 0 -> 00;
     * 20 ehdr (order 1) | 04 base zz(2) | 0A m0 zz(5) | 00 */
    codec_point_t q[4] = {ip(1000, 5), ip(2000, 7), ip(3000, 9), ip(4000, 11)};
    expect_bytes(q, 4, "01 04 10 D00F 03 01 20 04 0A 00");
}

static void block_golden_dod_timestamps(void **state)
{
    (void)state;
    /* ts 0, 10, 20, 31, 41 s: deltas 10, 10, 11, 10 -> dods 0, +1, -1 ->
     * zigzag 0, 2, 1 -> bits 0 | 10 0010 | 10 0001 | pad 000 = 45 08.
     * values all 0 -> order 0, base 0, width 0: one bit '0' -> 00.
     * 01 | 05 | 00 flags | 00 ts0 | 03 unit | 0A delta1 | 02 tsbytes |
     * 00 ehdr | 00 base | 45 08 | 00 */
    codec_point_t p[5] = {ip(0, 0), ip(10000, 0), ip(20000, 0), ip(31000, 0), ip(41000, 0)};
    expect_bytes(p, 5, "01 05 00 00 03 0A 02 00 00 4508 00");
}

static void block_golden_xor_nan(void **state)
{
    (void)state;
    /* NaN with payload 1, then -0.0: neither is a decimal, so XOR.
     * flags 15 = types float(1) | XOR(1)<<2 | regular<<4; ts0 0; unit 0; delta1 1.
     * first value: 64 raw bits 7FF8000000000001; XOR with 8000000000000000 is
     * FFF8000000000001: '11' lead 000000 len-1 111111, 64 bits, pad 00. */
    codec_point_t p[2] = {fp(0, dbl_of(0x7FF8000000000001ull)), fp(1, -0.0)};
    expect_bytes(p, 2, "01 02 15 00 00 01 7FF8000000000001 C0FFFFE0000000000004");
}

static void decode_expect_ints(const char *hex, const int64_t *want, int n)
{
    uint8_t b[64];
    codec_point_t out[8];
    int l = tu_unhex(hex, b, sizeof b);
    assert_true(l > 0);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 8), n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(out[i].ts_ms, i);
        assert_int_equal(out[i].is_float, 0);
        assert_int_equal(out[i].val.i, want[i]);
    }
}

static void decode_expect_corrupt(const char *hex)
{
    uint8_t b[64];
    codec_point_t out[8];
    int l = tu_unhex(hex, b, sizeof b);
    assert_true(l > 0);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 8), OCT_ECORRUPT);
}

static void block_golden_escape_frames(void **state)
{
    (void)state;
    /* Hand-built blocks: ints at ts 0, 1, 2 (, 3) ms: 01 n | 10 REGULAR |
     * 00 ts0 | 00 tshdr (k 0) | 01 delta | 00 ehdr | 00 base | frames.
     * Escape frame of width 1 holding 0, 100, -1 (z = 0, 200, 1):
     * 11 0000001 | 0 | 1 0001000 11001000 | 1 0000001 1 -> C0 A2 32 20 60 */
    const int64_t esc[3] = {0, 100, -1};
    decode_expect_ints("01 03 10 00 00 01 00 00 C0A2322060", esc, 3);
    /* Sparse frame holding 0, 0, 5, 0 (z[2] = 10): 11 0000000 | slot 000010 |
     * len 0000100 1010 | next 111111 (none) -> C0 04 12 BF */
    const int64_t sparse[4] = {0, 0, 5, 0};
    decode_expect_ints("01 04 10 00 00 01 00 00 C00412BF", sparse, 4);
    /* slot 5 lies outside a 4-slot frame; slot 1 after slot 2 goes back */
    decode_expect_corrupt("01 04 10 00 00 01 00 00 C00A12BF");
    decode_expect_corrupt("01 04 10 00 00 01 00 00 C0041281");
}

static void block_ts_grid_for_jittered_ms(void **state)
{
    (void)state;
    codec_point_t p[360];
    rng_state = 17;
    /* 10 s scrapes with +-5 ms of jitter: DOD needs 6-11 bits a point, GRID
     * residuals fit 4 bits */
    for (int i = 0; i < 360; i++)
        p[i] = ip(T0 + 10000LL * i + (int64_t)(rnd() % 11) - 5, 7);
    codec_block_info_t info;
    size_t len = roundtrip_enc(p, 360, CODEC_BLOCK_ENC_AUTO, &info);
    assert_int_equal(info.ts_mode, CODEC_BLOCK_TS_GRID);
    assert_int_equal(info.ts_unit_exp, 0);
    /* residuals relative to the first point span -10..10, so 4 bits x 359 =
     * 180 bytes, plus ~20 bytes of header, frame headers and values; DOD
     * would spend at least 6 bits on each of the ~90% non-zero dods */
    assert_true(len <= 210);
    /* 1 s data with missed scrapes (gaps): any mode, exact round trip */
    int64_t ts = T0;
    for (int i = 0; i < 360; i++) {
        ts += rnd() % 20 == 0 ? 2000 : 1000;
        p[i] = ip(ts, i);
    }
    roundtrip_enc(p, 360, CODEC_BLOCK_ENC_AUTO, &info);
    assert_int_equal(info.ts_unit_exp, 3);
    assert_true(info.ts_mode != CODEC_BLOCK_TS_REGULAR);
}

/* ---- round trips per series class ---------------------------------------- */

static void block_roundtrip_gauge_decimals(void **state)
{
    (void)state;
    static const double scale[] = {10.0, 100.0, 10000.0};
    static const unsigned dexp[] = {1, 2, 4};
    codec_point_t p[360];
    for (int d = 0; d < 3; d++) {
        rng_state = 7 + (uint64_t)d;
        double x = 50;
        for (int i = 0; i < 360; i++) {
            x += ((double)(rnd() % 2001) - 1000) / 1000.0;
            p[i] = fp(T0 + 10000LL * i, round(x * scale[d]) / scale[d]);
        }
        codec_block_info_t info;
        size_t len = roundtrip_enc(p, 360, CODEC_BLOCK_ENC_AUTO, &info);
        assert_int_equal(info.enc, CODEC_BLOCK_ENC_INT);
        assert_true(info.dec_exp <= dexp[d]); /* a walk may happen to need fewer */
        assert_int_equal(info.ts_unit_exp, 3);
        assert_int_equal(info.ts_mode, CODEC_BLOCK_TS_REGULAR);
        /* steps of at most 1.0 at 4 decimals fit 15 bits + sign: < 2.2 B/pt */
        assert_true(len < 360 * 22 / 10);
        assert_int_equal(check_chooser(p, 360), CODEC_BLOCK_ENC_INT);
    }
}

static void block_roundtrip_counter_with_reset(void **state)
{
    (void)state;
    codec_point_t p[360];
    int64_t v = 1000000000;
    rng_state = 11;
    for (int i = 0; i < 360; i++) {
        v = i == 200 ? 3 : v + 900 + (int64_t)(rnd() % 100);
        p[i] = ip(T0 + 10000LL * i + (int64_t)(rnd() % 10 == 0) * 1000, v);
    }
    codec_block_info_t info;
    size_t len = roundtrip_enc(p, 360, CODEC_BLOCK_ENC_AUTO, &info);
    assert_int_equal(info.enc, CODEC_BLOCK_ENC_INT);
    assert_int_equal(info.order, 1);
    /* increments in 900..999 need 7 bits around the median (+1 sign bit at
     * worst); one slipped timestamp in 10 costs ~3 dods of 6 bits: under
     * Gorilla's 1.37 B/pt */
    assert_true(len < 360 * 137 / 100);
    check_chooser(p, 360);
}

static void block_roundtrip_constant_is_tiny(void **state)
{
    (void)state;
    codec_point_t p[360];
    for (int i = 0; i < 360; i++)
        p[i] = fp(T0 + 10000LL * i, 1.5);
    size_t len = roundtrip(p, 360);
    /* header ~14 bytes + 12 frames x 1 bit */
    assert_true(len <= 20);
    for (int i = 0; i < 360; i++)
        p[i] = ip(T0 + 10000LL * i, 0);
    assert_true(roundtrip(p, 360) <= 16);
    check_chooser(p, 360);
}

static void block_roundtrip_int_extremes(void **state)
{
    (void)state;
    codec_point_t p[8];
    const int64_t v[8] = {INT64_MIN, INT64_MAX, 0, -1, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1, 1};
    for (int i = 0; i < 8; i++)
        p[i] = ip(T0 + i, v[i]);
    check_chooser(p, 8);
    /* huge deltas of both signs in a counter-like stream */
    for (int i = 0; i < 8; i++)
        p[i] = ip(T0 + i * 1000LL, i % 2 ? INT64_MAX : INT64_MIN);
    check_chooser(p, 8);
}

static void block_roundtrip_special_floats(void **state)
{
    (void)state;
    const uint64_t raw[] = {
        0x7FF8000000000000ull, /* quiet NaN */
        0x7FF0000000000001ull, /* signalling NaN, payload 1 */
        0xFFFFFFFFFFFFFFFFull, /* negative NaN, all payload bits */
        0x7FF0000000000000ull, /* +Inf */
        0xFFF0000000000000ull, /* -Inf */
        0x8000000000000000ull, /* -0.0 */
        0x0000000000000000ull, /* +0.0 */
        0x0000000000000001ull, /* smallest denormal */
        0x800FFFFFFFFFFFFFull, /* largest negative denormal */
        0x0010000000000000ull, /* DBL_MIN */
        0x7FEFFFFFFFFFFFFFull, /* DBL_MAX */
    };
    size_t n = sizeof raw / sizeof raw[0];
    codec_point_t p[sizeof raw / sizeof raw[0]];
    for (size_t i = 0; i < n; i++)
        p[i] = fp(T0 + (int64_t)i * 7, dbl_of(raw[i]));
    assert_int_equal(check_chooser(p, n), CODEC_BLOCK_ENC_XOR);
    /* each alone, and each next to a decimal */
    for (size_t i = 0; i < n; i++) {
        codec_point_t q[2] = {fp(T0, 12.25), fp(T0 + 1, dbl_of(raw[i]))};
        roundtrip(&q[1], 1);
        check_chooser(q, 2);
    }
}

static void block_decimal_detection(void **state)
{
    (void)state;
    codec_block_info_t info;
    codec_point_t p[3] = {fp(0, 12.34), fp(1, 0.5), fp(2, -7.0)};
    roundtrip_enc(p, 3, CODEC_BLOCK_ENC_INT, &info);
    assert_int_equal(info.dec_exp, 2);
    /* 0.1 + 0.2 is not the double of any short decimal */
    p[1] = fp(1, 0.1 + 0.2);
    assert_int_equal(forced_size(p, 3, CODEC_BLOCK_ENC_INT), 0);
    roundtrip(p, 3);
    /* integer-valued doubles need no scaling */
    codec_point_t q[3] = {fp(0, 3.0), fp(1, -4.0), fp(2, 9007199254740992.0)};
    roundtrip_enc(q, 3, CODEC_BLOCK_ENC_INT, &info);
    assert_int_equal(info.dec_exp, 0);
    /* 2^53 + 2 is integral but past the exactly scaled range */
    q[1] = fp(1, 9007199254740994.0);
    assert_int_equal(forced_size(q, 3, CODEC_BLOCK_ENC_INT), 0);
    /* tiny decimal: 1e-6 needs e = 6 */
    codec_point_t r[2] = {fp(0, 1e-6), fp(1, 2e-6)};
    roundtrip_enc(r, 2, CODEC_BLOCK_ENC_INT, &info);
    assert_int_equal(info.dec_exp, 6);
}

static void block_roundtrip_mixed_types(void **state)
{
    (void)state;
    codec_point_t p[100];
    rng_state = 5;
    for (int i = 0; i < 100; i++) {
        int64_t ts = T0 + 10000LL * i;
        p[i] = rnd() % 2 ? ip(ts, (int64_t)(rnd() % 1000)) : fp(ts, (double)(rnd() % 100000) / 100);
    }
    codec_block_info_t info;
    roundtrip_enc(p, 100, CODEC_BLOCK_ENC_AUTO, &info);
    check_chooser(p, 100);
    /* ints that would overflow once scaled by 10^2 force XOR */
    p[3] = ip(p[3].ts_ms, INT64_MAX);
    p[4] = fp(p[4].ts_ms, 0.25);
    assert_int_equal(forced_size(p, 100, CODEC_BLOCK_ENC_INT), 0);
    assert_int_equal(check_chooser(p, 100), CODEC_BLOCK_ENC_XOR);
    /* an int 1 and a float 1.0 at the same value must keep their types */
    codec_point_t q[4] = {ip(0, 1), fp(1, 1.0), ip(2, 1), fp(3, 1.0)};
    check_chooser(q, 4);
}

static void block_roundtrip_small_and_full(void **state)
{
    (void)state;
    codec_point_t one = ip(T0 + 123, 42);
    roundtrip(&one, 1);
    codec_point_t two[2] = {fp(T0, 1.25), fp(T0 + 1, -1.25)};
    roundtrip(two, 2);
    check_chooser(two, 2);

    static codec_point_t p[3600];
    /* a full hour at 1 s */
    rng_state = 99;
    double x = 0;
    for (int i = 0; i < 3600; i++) {
        x += (double)(rnd() % 21) - 10;
        p[i] = fp(T0 + 1000LL * i, x / 100);
    }
    assert_true(roundtrip(p, 3600) < 3600 * 2);
    check_chooser(p, 3600);
    /* a full hour at 1 s with ms jitter, ints */
    for (int i = 0; i < 3600; i++)
        p[i] = ip(T0 + 1000LL * i + (int64_t)(rnd() % 900), (int64_t)rnd());
    check_chooser(p, 3600);
    /* ms-precision points at arbitrary spacing */
    int64_t ts = T0;
    for (int i = 0; i < 3600; i++) {
        ts += 1 + (int64_t)(rnd() % 2000);
        p[i] = fp(ts, dbl_of(rnd()));
    }
    check_chooser(p, 3600);
}

static void block_roundtrip_extreme_timestamps(void **state)
{
    (void)state;
    /* negative, around zero, and the full int64 range in one block */
    codec_point_t p[6] = {ip(INT64_MIN, 1), ip(INT64_MIN + 1, 2), ip(-1000, 3), ip(0, 4),
                          ip(1, 5),         ip(INT64_MAX, 6)};
    check_chooser(p, 6);
    codec_point_t q[3] = {ip(INT64_MIN, 1), ip(INT64_MAX - 1, 2), ip(INT64_MAX, 3)};
    check_chooser(q, 3);
    /* regular negative timestamps on a seconds grid */
    codec_point_t r[4] = {ip(-30000, 1), ip(-20000, 1), ip(-10000, 1), ip(0, 1)};
    codec_block_info_t info;
    roundtrip_enc(r, 4, CODEC_BLOCK_ENC_AUTO, &info);
    assert_int_equal(info.ts_unit_exp, 3);
    assert_int_equal(info.ts_mode, CODEC_BLOCK_TS_REGULAR);
}

/* ---- rejected input ------------------------------------------------------- */

static void block_encode_rejects_bad_input(void **state)
{
    (void)state;
    uint8_t buf[256];
    codec_point_t dup[2] = {ip(5, 1), ip(5, 2)};
    codec_point_t back[3] = {ip(5, 1), ip(7, 2), ip(6, 3)};
    codec_point_t badtype[1] = {ip(5, 1)};
    badtype[0].is_float = 2;
    assert_int_equal(codec_block_encode(dup, 2, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL),
                     OCT_EINVAL);
    assert_int_equal(codec_block_encode(back, 3, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL),
                     OCT_EINVAL);
    assert_int_equal(codec_block_encode(badtype, 1, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL),
                     OCT_EINVAL);
    assert_int_equal(codec_block_encode(back, 2, buf, sizeof buf, (codec_block_enc_t)7, NULL),
                     OCT_EINVAL);
    /* the count limit is checked before any point is read */
    assert_int_equal(codec_block_encode(dup, CODEC_BLOCK_MAX_POINTS + 1, buf, sizeof buf,
                                        CODEC_BLOCK_ENC_AUTO, NULL),
                     OCT_EINVAL);
}

static void block_encode_enospc_at_every_short_cap(void **state)
{
    (void)state;
    codec_point_t p[50];
    for (int i = 0; i < 50; i++)
        p[i] = fp(T0 + 1000LL * i + i * i, (double)i / 4);
    uint8_t full[2048], buf[2048];
    ssize_t len = codec_block_encode(p, 50, full, sizeof full, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_true(len > 0);
    for (ssize_t cap = 0; cap < len; cap++)
        assert_int_equal(codec_block_encode(p, 50, buf, (size_t)cap, CODEC_BLOCK_ENC_AUTO, NULL),
                         OCT_ENOSPC);
    assert_int_equal(codec_block_encode(p, 50, buf, (size_t)len, CODEC_BLOCK_ENC_AUTO, NULL), len);
    assert_memory_equal(buf, full, (size_t)len);
}

static void block_decode_enospc_and_version(void **state)
{
    (void)state;
    codec_point_t p[3] = {ip(1000, 5), ip(2000, 7), ip(3000, 9)}, out[3];
    uint8_t buf[64];
    ssize_t len = codec_block_encode(p, 3, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_int_equal(codec_block_decode(buf, (size_t)len, out, 2), OCT_ENOSPC);
    for (int v = 0; v < 256; v++) {
        if (v == CODEC_BLOCK_VERSION) continue;
        buf[0] = (uint8_t)v;
        assert_int_equal(codec_block_count(buf, (size_t)len), OCT_ECORRUPT);
        assert_int_equal(codec_block_decode(buf, (size_t)len, out, 3), OCT_ECORRUPT);
    }
    assert_int_equal(codec_block_count(buf, 0), OCT_ECORRUPT);
}

/* A block of every kind, for the corruption tests. */
static size_t sample_blocks(uint8_t blk[][4096], size_t len[])
{
    static codec_point_t p[300];
    size_t nb = 0;
    rng_state = 3;
    for (int kind = 0; kind < 6; kind++) {
        int64_t ts = T0;
        for (int i = 0; i < 300; i++) {
            ts += kind == 1 ? 10000 : 1 + (int64_t)(rnd() % 20000);
            switch (kind) {
            case 0:
                p[i] = ip(ts, (int64_t)(rnd() % 1000));
                break;
            case 1:
                p[i] = fp(ts, (double)(int64_t)(rnd() % 100000) / 100);
                break;
            case 2:
                p[i] = fp(ts, dbl_of(rnd()));
                break;
            case 3:
                p[i] = i % 3 ? ip(ts, i) : fp(ts, (double)i / 8);
                break;
            case 4:
                p[i] = i % 3 ? ip(ts, (int64_t)rnd()) : fp(ts, dbl_of(rnd()));
                break;
            default:
                p[i] = ip(ts, 77);
                break;
            }
        }
        ssize_t l = codec_block_encode(p, 300, blk[nb], 4096, CODEC_BLOCK_ENC_AUTO, NULL);
        assert_true(l > 0);
        len[nb++] = (size_t)l;
    }
    return nb;
}

static void block_decode_rejects_truncation_and_trailing(void **state)
{
    (void)state;
    static uint8_t blk[6][4096];
    size_t len[6];
    static codec_point_t out[300];
    size_t nb = sample_blocks(blk, len);
    for (size_t b = 0; b < nb; b++) {
        for (size_t l = 0; l < len[b]; l++) {
            /* copy so that ASan sees reads past the truncated end */
            uint8_t *t = malloc(l ? l : 1);
            memcpy(t, blk[b], l);
            int rc = codec_block_decode(t, l, out, 300);
            if (rc >= 0) fail_msg("block %zu truncated to %zu of %zu decoded", b, l, len[b]);
            free(t);
        }
        blk[b][len[b]] = 0;
        assert_int_equal(codec_block_decode(blk[b], len[b] + 1, out, 300), OCT_ECORRUPT);
        assert_int_equal(codec_block_decode(blk[b], len[b], out, 300), 300);
    }
}

static void block_decode_survives_bit_flips_and_garbage(void **state)
{
    (void)state;
    static uint8_t blk[6][4096];
    size_t len[6];
    size_t cap = 1u << 16;
    codec_point_t *out = malloc(cap * sizeof *out);
    size_t nb = sample_blocks(blk, len);
    rng_state = 1234;
    for (size_t b = 0; b < nb; b++) {
        for (int k = 0; k < 3000; k++) {
            uint8_t *t = malloc(len[b]);
            memcpy(t, blk[b], len[b]);
            for (int f = 0; f <= k % 3; f++) {
                size_t bit = rnd() % (len[b] * 8);
                t[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
            int rc = codec_block_decode(t, len[b], out, cap);
            /* either rejected or a well-formed result: strictly increasing */
            assert_true(rc == OCT_ECORRUPT || rc == OCT_ENOSPC || (rc >= 0 && (size_t)rc <= cap));
            for (int i = 1; i < rc; i++)
                assert_true(out[i].ts_ms > out[i - 1].ts_ms);
            free(t);
        }
    }
    for (int k = 0; k < 20000; k++) {
        size_t l = rnd() % 64;
        uint8_t *t = malloc(l ? l : 1);
        for (size_t i = 0; i < l; i++)
            t[i] = (uint8_t)rnd();
        if (l) t[0] = CODEC_BLOCK_VERSION; /* get past the version check */
        int rc = codec_block_decode(t, l, out, cap);
        assert_true(rc == OCT_ECORRUPT || rc == OCT_ENOSPC || rc >= 0);
        codec_block_iter_t it;
        codec_point_t pt;
        if (codec_block_iter_init(&it, t, l) >= 0)
            while (codec_block_iter_next(&it, &pt) > 0) {
            }
        free(t);
    }
    free(out);
}

static void block_decode_rejects_forged_headers(void **state)
{
    (void)state;
    codec_point_t out[4];
    uint8_t b[32];
    /* n above the limit: 2^22 + 1 as LEB128 = 81 80 80 02 */
    int l = tu_unhex("01 81808002 00 00", b, sizeof b);
    assert_int_equal(codec_block_count(b, (size_t)l), OCT_ECORRUPT);
    /* reserved flag bits, types 3, encoding 2 */
    l = tu_unhex("01 01 20 00 00 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    l = tu_unhex("01 01 03 00 00 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    l = tu_unhex("01 01 08 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    /* a valid one-point block, then each byte varied: ehdr e > 18 */
    l = tu_unhex("01 01 01 00 13 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    l = tu_unhex("01 01 01 00 02 00 00", b, sizeof b); /* float 0 at e = 2 */
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), 1);
    assert_true(out[0].is_float == 1 && out[0].val.f == 0.0 && out[0].ts_ms == 0);
    /* integers may not carry a decimal exponent */
    l = tu_unhex("01 01 00 00 02 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    /* non-zero padding */
    l = tu_unhex("01 01 01 00 02 00 01", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    /* frame width 65: header bit 1 then 1000001 */
    l = tu_unhex("01 01 00 00 00 00 C1", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
    /* a zero timestamp delta (not strictly increasing) */
    l = tu_unhex("01 02 10 00 00 00 00 00 00", b, sizeof b);
    assert_int_equal(codec_block_decode(b, (size_t)l, out, 4), OCT_ECORRUPT);
}

/* Regression (found by tests/e2e/test_crash_loop.c): deltas 10000, 1, 10000 ms
 * made the encoder weigh GRID, choose DOD, and still write GRID's order bit,
 * which the decoder rightly rejects. Also a seeded sweep of small irregular
 * blocks, each of which must decode to exactly what was encoded. */
static void block_irregular_ms_timestamps_round_trip(void **state)
{
    (void)state;
    static const int64_t offs[4] = {0, 10000, 10001, 20001};
    codec_point_t pts[64], out[64];
    uint8_t buf[4096];
    for (int i = 0; i < 4; i++) {
        pts[i].ts_ms = 1357002000000LL + offs[i];
        pts[i].is_float = 0;
        pts[i].val.i = 5;
    }
    ssize_t len = codec_block_encode(pts, 4, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_true(len > 0);
    assert_int_equal(codec_block_decode(buf, (size_t)len, out, 64), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(out[i].ts_ms, pts[i].ts_ms);

    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int iter = 0; iter < 20000; iter++) {
        int n = 1 + (int)(x % 40);
        int64_t ts = 1357002000000LL + (int64_t)(x % 3600) * 1000;
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            pts[i].ts_ms = ts;
            ts += (x & 3) == 0 ? 1 + (int64_t)(x >> 60) : 10000 + (int64_t)((x >> 8) % 3) - 1;
            pts[i].is_float = (x >> 20) & 1;
            if (pts[i].is_float)
                pts[i].val.f = (double)((x >> 24) % 100000) / 100.0;
            else
                pts[i].val.i = (int64_t)((x >> 24) % 1000);
        }
        len = codec_block_encode(pts, (size_t)n, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL);
        assert_true(len > 0);
        int k = codec_block_decode(buf, (size_t)len, out, 64);
        if (k != n) fail_msg("iteration %d: %d points decoded as %d", iter, n, k);
        for (int i = 0; i < n; i++) {
            assert_int_equal(out[i].ts_ms, pts[i].ts_ms);
            assert_int_equal(out[i].is_float, pts[i].is_float);
            assert_memory_equal(&out[i].val, &pts[i].val, sizeof pts[i].val);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_qualifier_is_4f_seq_be),
        cmocka_unit_test(block_writer_qualifier_and_ranks),
        cmocka_unit_test(block_golden_empty),
        cmocka_unit_test(block_golden_regular_ints),
        cmocka_unit_test(block_golden_dod_timestamps),
        cmocka_unit_test(block_golden_xor_nan),
        cmocka_unit_test(block_golden_escape_frames),
        cmocka_unit_test(block_ts_grid_for_jittered_ms),
        cmocka_unit_test(block_roundtrip_gauge_decimals),
        cmocka_unit_test(block_roundtrip_counter_with_reset),
        cmocka_unit_test(block_roundtrip_constant_is_tiny),
        cmocka_unit_test(block_roundtrip_int_extremes),
        cmocka_unit_test(block_roundtrip_special_floats),
        cmocka_unit_test(block_decimal_detection),
        cmocka_unit_test(block_roundtrip_mixed_types),
        cmocka_unit_test(block_roundtrip_small_and_full),
        cmocka_unit_test(block_roundtrip_extreme_timestamps),
        cmocka_unit_test(block_encode_rejects_bad_input),
        cmocka_unit_test(block_encode_enospc_at_every_short_cap),
        cmocka_unit_test(block_decode_enospc_and_version),
        cmocka_unit_test(block_decode_rejects_truncation_and_trailing),
        cmocka_unit_test(block_decode_survives_bit_flips_and_garbage),
        cmocka_unit_test(block_decode_rejects_forged_headers),
        cmocka_unit_test(block_irregular_ms_timestamps_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
