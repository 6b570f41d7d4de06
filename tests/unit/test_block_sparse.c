/* test_block_sparse.c -- codec_block_decode's bulk decoding of sparse
 * integer frames (mostly base, a few patched slots) against the points
 * encoded and against the streaming iterator, which decodes element by
 * element: mostly-constant series with rare outliers at every slot position
 * (first, last, adjacent), grid timestamps with rare jitter, and every
 * single-bit corruption of such blocks, on which both decoders must agree
 * (both reject, or both give the same points). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "codec/block.h"
#include "common/err.h"

#define N 1000

static codec_point_t in[N], out[N], it_out[N];
static uint8_t buf[1 << 16];

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Decodes with the iterator; returns the count or a negative error. */
static int iter_decode(const uint8_t *b, size_t len, codec_point_t *o, size_t cap)
{
    codec_block_iter_t it;
    int n = codec_block_iter_init(&it, b, len);
    if (n < 0) return n;
    int r, k = 0;
    codec_point_t p;
    while ((r = codec_block_iter_next(&it, &p)) == 1) {
        if ((size_t)k >= cap) return OCT_ENOSPC;
        o[k++] = p;
    }
    return r < 0 ? r : k;
}

static int same(const codec_point_t *a, const codec_point_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].ts_ms != b[i].ts_ms || a[i].is_float != b[i].is_float ||
            memcmp(&a[i].val, &b[i].val, sizeof a[i].val))
            return 0;
    return 1;
}

/* Integers: constant 7 with outliers at the given slots (mod 32 patterns),
 * timestamps every 10 s with a 1 ms jitter on the same slots. */
static size_t make(int n, const int *slots, int n_slots, int every_frame)
{
    for (int i = 0; i < n; i++) {
        int odd = 0;
        for (int k = 0; k < n_slots; k++)
            if ((every_frame ? i % 32 : i) == slots[k]) odd = 1;
        in[i].ts_ms = 1356998400000LL + (int64_t)i * 10000 + odd;
        in[i].val.i = odd ? (int64_t)(next_rand() % 100000) - 50000 : 7;
        in[i].is_float = 0;
    }
    ssize_t len = codec_block_encode(in, (size_t)n, buf, sizeof buf, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_true(len > 0);
    return (size_t)len;
}

static void round_trip(int n, const int *slots, int n_slots, int every_frame)
{
    size_t len = make(n, slots, n_slots, every_frame);
    assert_int_equal(codec_block_decode(buf, len, out, N), n);
    assert_true(same(in, out, n));
    assert_int_equal(iter_decode(buf, len, it_out, N), n);
    assert_true(same(in, it_out, n));
}

static void test_sparse_round_trip(void **state)
{
    (void)state;
    /* outliers at the first, the last, adjacent and middle slots of frames */
    round_trip(N, (int[]){0}, 1, 1);
    round_trip(N, (int[]){31}, 1, 1);
    round_trip(N, (int[]){1, 2}, 2, 1);
    round_trip(N, (int[]){5, 17, 30}, 3, 1);
    /* a short last frame (1000 = 31 * 32 + 8) with an outlier in it */
    round_trip(N, (int[]){995, 999}, 2, 0);
    /* a single outlier in the whole block, and none */
    round_trip(N, (int[]){400}, 1, 0);
    round_trip(N, NULL, 0, 0);
    round_trip(33, (int[]){32}, 1, 0);
}

/* Every single-bit flip: the bulk decoder and the iterator agree. */
static void flips(size_t len, int n)
{
    static uint8_t m[1 << 16];
    for (size_t bit = 0; bit < len * 8; bit++) {
        memcpy(m, buf, len);
        m[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
        int a = codec_block_decode(m, len, out, N);
        int b = iter_decode(m, len, it_out, N);
        if (a >= 0 || b >= 0) {
            if (a != b) fail_msg("bit %zu: decode %d, iterator %d", bit, a, b);
            assert_true(same(out, it_out, a));
        }
    }
    (void)n;
}

static void test_sparse_corruption_agrees(void **state)
{
    (void)state;
    size_t len = make(200, (int[]){3, 31}, 2, 1);
    flips(len, 200);
    len = make(100, (int[]){40, 99}, 2, 0);
    flips(len, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_round_trip),
        cmocka_unit_test(test_sparse_corruption_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
