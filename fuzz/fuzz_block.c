/* fuzz_block.c -- libFuzzer target for octsdb's compressed block cells
 * (codec/block.h).
 *
 * Byte 0 picks the mode. Decode mode: the rest is a block; if
 * codec_block_decode accepts it, the streaming iterator must yield the same
 * points, and decode -> encode (AUTO) -> decode must give them back bit for
 * bit. Encode mode: the rest is read as points (varint-ish time deltas of
 * 1..2^16 ms and 8-byte values, int or float by a flag bit), encoded with
 * each encoding (AUTO, INT, XOR), and each block that encodes must decode to
 * exactly those points (NaN payloads and -0.0 included). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "common/err.h"

#define MAX_PTS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static codec_point_t a[MAX_PTS], b[MAX_PTS];
static uint8_t enc[1 << 18];

static int same(const codec_point_t *x, const codec_point_t *y, int n)
{
    for (int i = 0; i < n; i++)
        if (x[i].ts_ms != y[i].ts_ms || x[i].is_float != y[i].is_float ||
            memcmp(&x[i].val, &y[i].val, sizeof x[i].val))
            return 0;
    return 1;
}

static void roundtrip(const codec_point_t *p, int n, codec_block_enc_t force)
{
    if (codec_block_encode_bound((size_t)n) > sizeof enc) return;
    codec_block_info_t info;
    ssize_t k = codec_block_encode(p, (size_t)n, enc, sizeof enc, force, &info);
    if (k < 0) {
        if (force == CODEC_BLOCK_ENC_INT && k == OCT_EINVAL) return;
        abort();
    }
    if (codec_block_count(enc, (size_t)k) != n) abort();
    if (codec_block_decode(enc, (size_t)k, b, MAX_PTS) != n) abort();
    if (!same(p, b, n)) abort();
}

static void decode_mode(const uint8_t *in, size_t len)
{
    int n = codec_block_decode(in, len, a, MAX_PTS);
    if (n < 0) {
        /* The iterator must not crash either; it may yield a prefix. */
        codec_block_iter_t it;
        if (codec_block_iter_init(&it, in, len) >= 0) {
            codec_point_t p;
            int r, k = 0;
            while ((r = codec_block_iter_next(&it, &p)) == 1)
                if (++k > (int)CODEC_BLOCK_MAX_POINTS) abort();
        }
        return;
    }
    codec_block_iter_t it;
    if (codec_block_iter_init(&it, in, len) != n) abort();
    for (int i = 0; i < n; i++) {
        codec_point_t p;
        if (codec_block_iter_next(&it, &p) != 1 || !same(&p, &a[i], 1)) abort();
    }
    codec_point_t p;
    if (codec_block_iter_next(&it, &p) != 0) abort();
    for (int i = 1; i < n; i++)
        if (a[i].ts_ms <= a[i - 1].ts_ms) abort();
    roundtrip(a, n, CODEC_BLOCK_ENC_AUTO);
}

static void encode_mode(const uint8_t *in, size_t len)
{
    int n = 0;
    int64_t ts = 1356998400000LL;
    size_t off = 0;
    while (n < MAX_PTS && len - off >= 11) {
        uint16_t d = (uint16_t)(in[off] << 8 | in[off + 1]);
        uint8_t fl = in[off + 2];
        ts += 1 + d;
        a[n].ts_ms = ts;
        a[n].is_float = fl & 1;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | in[off + 3 + i];
        /* Small values are what collectors send: let the flag shrink them. */
        if (fl & 2) bits = (uint64_t)(int64_t)(int8_t)(bits & 0xFF);
        if (a[n].is_float && (fl & 2)) {
            a[n].val.f = (double)(int64_t)bits / ((fl & 4) ? 10.0 : 1.0);
        } else {
            memcpy(&a[n].val, &bits, 8);
        }
        n++;
        off += 11;
    }
    roundtrip(a, n, CODEC_BLOCK_ENC_AUTO);
    roundtrip(a, n, CODEC_BLOCK_ENC_INT);
    roundtrip(a, n, CODEC_BLOCK_ENC_XOR);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    if (data[0] & 1)
        encode_mode(data + 1, size - 1);
    else
        decode_mode(data + 1, size - 1);
    return 0;
}
