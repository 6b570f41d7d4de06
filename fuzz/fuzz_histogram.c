/* fuzz_histogram.c -- libFuzzer target for histograms as clients send them: the telnet text
 * form (codec_hist_parse_text), the lenient base64 of a payload (hist_base64_decode) and the
 * decoder (codec_hist_decode_value), and the percentile of what they give.
 *
 * Properties, whatever the input:
 *   - a text form that parses encodes, and decodes back to the same buckets, under- and
 *     overflow (the round trip of what /api/histogram and telnet store);
 *   - base64 never writes past n * 3 / 4 + 3 bytes;
 *   - the decoder takes any bytes without crashing, and a histogram it accepts re-encodes to a
 *     payload that decodes to the same histogram;
 *   - a percentile of a decoded histogram is NaN (no values) or within its bucket bounds
 *     (the smallest and largest bound of any bucket). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "query/query.h"
#include "server/hist_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 64

static int same(const codec_hist_t *a, const codec_hist_t *b)
{
    if (a->n_buckets != b->n_buckets || a->underflow != b->underflow || a->overflow != b->overflow)
        return 0;
    for (size_t i = 0; i < a->n_buckets; i++)
        if (codec_hist_bucket_cmp(&a->buckets[i], &b->buckets[i]) ||
            a->buckets[i].n != b->buckets[i].n)
            return 0;
    return 1;
}

static void roundtrip(const codec_hist_t *h)
{
    uint8_t out[2 + CAP * 17 + 18];
    size_t n;
    oct_errbuf_t eb;
    if (codec_hist_encode(h, out, sizeof out, &n, &eb)) abort();
    if (n != codec_hist_payload_len(h)) abort();
    codec_hist_bucket_t b[CAP];
    codec_hist_t d;
    if (h->n_buckets == 0) return; /* under 6 bytes: not decodable, never stored */
    if (codec_hist_decode(out, n, b, CAP, &d, &eb) || !same(h, &d)) abort();
}

static void percentiles(const codec_hist_t *h)
{
    query_hbucket_t q[CAP];
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < h->n_buckets; i++) {
        q[i] = (query_hbucket_t){h->buckets[i].lo, h->buckets[i].hi, h->buckets[i].n};
        /* a client may send a bucket with hi < lo: the midpoint is within both anyway */
        float a = fminf(h->buckets[i].lo, h->buckets[i].hi);
        float z = fmaxf(h->buckets[i].lo, h->buckets[i].hi);
        if (a < lo) lo = a;
        if (z > hi) hi = z;
    }
    for (double p = 0; p <= 100; p += 12.5) {
        double v = query_hist_percentile(q, h->n_buckets, p);
        if (isnan(v) || !isfinite(lo) || !isfinite(hi)) continue;
        if (v < (double)lo || v > (double)hi) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    codec_hist_bucket_t b[CAP];
    codec_hist_t h;
    oct_errbuf_t eb;
    if (codec_hist_parse_text((const char *)data, size, b, CAP, &h, &eb) == 0) {
        roundtrip(&h);
        percentiles(&h);
    }
    uint8_t *raw = malloc(size * 3 / 4 + 3 + 1);
    size_t rl = hist_base64_decode((const char *)data, size, raw);
    if (rl > size * 3 / 4 + 3) abort();
    free(raw);
    uint8_t id;
    if (codec_hist_decode_value(data, size, -1, &id, b, CAP, &h, &eb) == 0) {
        roundtrip(&h);
        percentiles(&h);
    }
    return 0;
}
