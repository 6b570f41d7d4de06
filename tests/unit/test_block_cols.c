/* test_block_cols.c -- codec_block_decode_cols (the column decoder the query
 * executor folds blocks with) and the word-at-a-time unpacking of plain
 * integer frames that both bulk decoders use.
 *
 * Every block is encoded from points the test made, so the expected output
 * is the input: integers of every zigzag width 1..64 (each width's frames
 * are plain, so a width's unpacking runs at the start, middle and very end
 * of the section, where fewer than 8 bytes follow), GRID/DOD/REGULAR
 * timestamps, decimal floats, XOR doubles (NaN payloads, -0.0) and mixed
 * blocks. On every truncation and every single-bit corruption of such
 * blocks, the column decoder must agree with codec_block_decode (both
 * reject, or the same points). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "common/err.h"

#define N 700

static codec_point_t in[N], pts[N];
static int64_t cts[N];
static uint64_t cval[N];
static uint8_t cisf[N];
static uint8_t buf[1 << 16], bad[1 << 16];

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The column decode compared with want[0..n): timestamps, the 8 value
 * bytes, and the float flag (from types, or is_float[] when mixed); strict:
 * types must also be what the points make it (0, 1 or 2). */
static void check_cols(const codec_point_t *want, int n, int got, int types, int strict)
{
    assert_int_equal(got, n);
    int any_f = 0, any_i = 0;
    for (int i = 0; i < n; i++) {
        any_f |= want[i].is_float;
        any_i |= !want[i].is_float;
    }
    if (n && strict) assert_int_equal(types, any_f && any_i ? 2 : any_f ? 1 : 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(cts[i], want[i].ts_ms);
        assert_memory_equal(&cval[i], &want[i].val, 8);
        int f = types == 2 ? cisf[i] : types == 1;
        assert_int_equal(f, want[i].is_float);
    }
}

static size_t enc(int n)
{
    ssize_t len = codec_block_encode(in, (size_t)n, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_true(len > 0);
    return (size_t)len;
}

static void roundtrip(int n)
{
    size_t len = enc(n);
    /* an exact-size copy: under ASan a read past the block is caught */
    uint8_t *b = malloc(len);
    assert_non_null(b);
    memcpy(b, buf, len);
    int types = -1;
    int got = codec_block_decode_cols(b, len, cts, cval, cisf, N, &types);
    check_cols(in, n, got, types, 1);
    /* and the point decoder, which shares the frame unpacking */
    assert_int_equal(codec_block_decode(b, len, pts, N), n);
    free(b);
    for (int i = 0; i < n; i++) {
        assert_int_equal(pts[i].ts_ms, in[i].ts_ms);
        assert_int_equal(pts[i].is_float, in[i].is_float);
        assert_memory_equal(&pts[i].val, &in[i].val, 8);
    }
}

/* Integers whose zigzag codes have exactly w bits (the top one set), so
 * every frame is plain of width w: values v with zigzag(v) in
 * [2^(w-1), 2^w). Level coding (order 0) needs the values themselves wide,
 * so consecutive values jump around. */
static void make_width(int n, unsigned w)
{
    for (int i = 0; i < n; i++) {
        uint64_t z = w == 64 ? next_rand() | (1ull << 63)
                             : (next_rand() & ((1ull << (w - 1)) - 1)) | (1ull << (w - 1));
        int64_t v = (int64_t)((z >> 1) ^ (0 - (z & 1)));
        in[i].ts_ms = 1356998400000LL + i * 10000LL; /* REGULAR */
        in[i].val.i = v;
        in[i].is_float = 0;
    }
}

static void test_every_width(void **state)
{
    (void)state;
    /* lengths: one frame and a short one, frames ending exactly at the
     * section end, and many frames */
    static const int lens[] = {2, 33, 64, 65, 97, 129, 641};
    for (unsigned w = 1; w <= 64; w++)
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            make_width(lens[k], w);
            roundtrip(lens[k]);
        }
}

/* Jittered millisecond timestamps (GRID residuals), slips (DOD), and the
 * value kinds: decimal floats (integer stream with e > 0), arbitrary doubles
 * with NaN payloads and -0.0 (XOR), mixed integer/float blocks. */
static void make_kind(int n, int kind)
{
    int64_t t = 1356998400000LL;
    double level = 50.0;
    for (int i = 0; i < n; i++) {
        t += kind % 2 ? 10000 + (int64_t)(next_rand() % 11) - 5 : 1000 + (next_rand() % 50 == 0);
        in[i].ts_ms = t;
        switch (kind) {
        case 0:
        case 1: /* 2-decimal gauge */
            level += (double)((int64_t)(next_rand() % 201) - 100) / 100.0;
            in[i].val.f = round(level * 100.0) / 100.0;
            in[i].is_float = 1;
            break;
        case 2: { /* raw doubles, a NaN with payload and -0.0 now and then */
            uint64_t u = next_rand();
            if (i % 17 == 3) u = 0x7FF8000000000123ull;
            if (i % 23 == 5) u = 0x8000000000000000ull;
            memcpy(&in[i].val.f, &u, 8);
            in[i].is_float = 1;
            break;
        }
        default: /* mixed: integers and 1-decimal floats */
            if (next_rand() % 3) {
                in[i].val.i = (int64_t)(next_rand() % 1000) - 500;
                in[i].is_float = 0;
            } else {
                in[i].val.f = (double)((int64_t)(next_rand() % 2000) - 1000) / 10.0;
                in[i].is_float = 1;
            }
            break;
        }
    }
}

static void test_kinds(void **state)
{
    (void)state;
    for (int kind = 0; kind < 4; kind++)
        for (int n = 1; n <= N; n += 97) {
            make_kind(n, kind);
            roundtrip(n);
        }
    /* the empty block */
    size_t len = enc(0);
    int types = -1;
    assert_int_equal(codec_block_decode_cols(buf, len, cts, cval, cisf, N, &types), 0);
    assert_int_equal(types, 0);
}

/* Both decoders on damaged bytes: the same verdict, the same points. */
static void agree(const uint8_t *b, size_t len)
{
    int np = codec_block_decode(b, len, pts, N);
    int types = -1;
    int nc = codec_block_decode_cols(b, len, cts, cval, cisf, N, &types);
    if (np < 0) {
        assert_true(nc < 0);
        return;
    }
    /* a damaged bitmap may mark every point one way: only the flags count */
    assert_true(types >= 0 && types <= 2);
    check_cols(pts, np, nc, types, 0);
}

static void test_damage(void **state)
{
    (void)state;
    for (int kind = 0; kind < 5; kind++) {
        if (kind < 4)
            make_kind(90, kind);
        else
            make_width(90, 37);
        size_t len = enc(90);
        for (size_t l = 0; l < len; l++)
            agree(buf, l);
        for (size_t bit = 0; bit < len * 8; bit++) {
            memcpy(bad, buf, len);
            bad[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
            agree(bad, len);
        }
    }
}

static void test_cap(void **state)
{
    (void)state;
    make_width(40, 9);
    size_t len = enc(40);
    int types;
    assert_int_equal(codec_block_decode_cols(buf, len, cts, cval, cisf, 39, &types), OCT_ENOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_width),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
