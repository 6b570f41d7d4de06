/* fuzz_rowkey.c -- libFuzzer target for row keys and TSUIDs (codec/rowkey.h).
 *
 * The first 5 bytes choose the layout (UID widths 1..8, salt width 0..8,
 * bucket count 1..256); the rest is the key. Round trips for a key that
 * parses: the TSUID's hex form parses back to the same TSUID; and, when the
 * base time is an hour boundary, TSUID of the key -> row key for that hour
 * gives the key with its salt recomputed (codec_rowkey_apply_salt on a copy); the TSUID's
 * hex form parses back to the same TSUID; and codec_rowkey_build from the
 * parsed UIDs gives a key that parses to the same metric, hour and tag pairs
 * (sorted). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "codec/uid_bytes.h"

#define MAX_KEY 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int pair_cmp(const uint8_t *a, const uint8_t *b, size_t w)
{
    return memcmp(a, b, w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5 || size - 5 > MAX_KEY) return 0;
    codec_rowkey_layout_t l = {
        .metric_w = (uint8_t)(1 + data[0] % 8),
        .tagk_w = (uint8_t)(1 + data[1] % 8),
        .tagv_w = (uint8_t)(1 + data[2] % 8),
        .salt_w = (uint8_t)(data[3] % 9),
        .salt_buckets = 1u + data[4],
    };
    const uint8_t *key = data + 5;
    size_t len = size - 5;
    oct_errbuf_t eb;
    codec_rowkey_t rk;
    if (codec_rowkey_parse(&l, key, len, &rk, &eb) != 0) return 0;
    if (codec_rowkey_len(&l, rk.n_tags) != len) abort();

    /* key -> TSUID -> key (salt recomputed). */
    uint8_t tsuid[MAX_KEY], back[MAX_KEY], salted[MAX_KEY];
    int tl = codec_tsuid_from_rowkey(&l, key, len, tsuid, sizeof tsuid, &eb);
    if (tl < 0) abort();
    if (codec_tsuid_check(&l, tsuid, (size_t)tl, &eb) != (int)rk.n_tags) abort();
    /* TSUID -> hex -> TSUID. */
    char hex[2 * MAX_KEY + 1];
    int hl = codec_tsuid_to_hex(tsuid, (size_t)tl, hex, sizeof hex);
    if (hl != 2 * tl) abort();
    uint8_t t2[MAX_KEY];
    if (codec_tsuid_from_hex(&l, hex, (size_t)hl, t2, sizeof t2, &eb) != tl) abort();
    if (memcmp(t2, tsuid, (size_t)tl) != 0) abort();

    /* A key whose base time is not an hour boundary (never written by
     * octsdb) cannot come back from a timestamp: stop here. */
    if (rk.base_time % CODEC_ROWKEY_SPAN_S != 0) return 0;
    int bl = codec_rowkey_from_tsuid(&l, tsuid, (size_t)tl, rk.base_time, back, sizeof back, &eb);
    if (bl != (int)len) abort();
    memcpy(salted, key, len);
    if (codec_rowkey_apply_salt(&l, salted, len) < 0) abort();
    if (memcmp(back, salted, len) != 0) abort();

    /* Parsed UIDs -> codec_rowkey_build -> same metric, hour, sorted pairs. */
    if (rk.n_tags > 64) return 0;
    codec_tag_uid_t tags[64];
    uint64_t metric = codec_uid_decode(rk.metric, l.metric_w);
    int fits = metric <= codec_uid_max(l.metric_w);
    for (size_t i = 0; i < rk.n_tags; i++) {
        tags[i].tagk = codec_uid_decode(codec_rowkey_tagk(&rk, i), l.tagk_w);
        tags[i].tagv = codec_uid_decode(codec_rowkey_tagv(&rk, i), l.tagv_w);
        fits = fits && tags[i].tagk <= codec_uid_max(l.tagk_w) &&
               tags[i].tagv <= codec_uid_max(l.tagv_w);
    }
    uint8_t built[MAX_KEY];
    int kl = codec_rowkey_build(&l, metric, tags, rk.n_tags, (int64_t)rk.base_time + 59, built,
                                sizeof built, &eb);
    if (!fits) {
        if (kl >= 0) abort();
        return 0;
    }
    if (kl != (int)len) abort();
    codec_rowkey_t rb;
    if (codec_rowkey_parse(&l, built, len, &rb, &eb) != 0) abort();
    if (rb.metric_uid != rk.metric_uid || rb.base_time != rk.base_time || rb.n_tags != rk.n_tags)
        abort();
    size_t pw = (size_t)l.tagk_w + l.tagv_w;
    for (size_t i = 1; i < rb.n_tags; i++)
        if (pair_cmp(codec_rowkey_tagk(&rb, i - 1), codec_rowkey_tagk(&rb, i), pw) > 0) abort();
    /* Same multiset of pairs: every input pair occurs in the built key. */
    for (size_t i = 0; i < rk.n_tags; i++) {
        int found = 0;
        for (size_t j = 0; j < rb.n_tags && !found; j++)
            found = !pair_cmp(codec_rowkey_tagk(&rk, i), codec_rowkey_tagk(&rb, j), pw);
        if (!found) abort();
    }
    return 0;
}
