/* rowkey.c -- OpenTSDB data-table row keys, salt and TSUIDs.
 *
 * Row keys are short (13..~150 bytes), so building one sorts the tag pairs in place inside the
 * output buffer with an insertion sort: no scratch memory and, for the usual <= 8 tags, faster
 * than anything cleverer. The salt reproduces Java's int arithmetic with uint32_t (wrap-around is
 * defined there) and converts back only at the end. See docs/format/rowkey.md. */
#include "codec/rowkey.h"

#include <string.h>

#include "codec/uid_bytes.h"
#include "common/bytes.h"

static int layout_ok(const codec_rowkey_layout_t *l)
{
    return l && l->metric_w >= 1 && l->metric_w <= 8 && l->tagk_w >= 1 && l->tagk_w <= 8 &&
           l->tagv_w >= 1 && l->tagv_w <= 8 && l->salt_w <= CODEC_ROWKEY_MAX_SALT &&
           l->salt_buckets >= 1;
}

int codec_rowkey_layout_check(const codec_rowkey_layout_t *l, oct_errbuf_t *eb)
{
    if (!l) return oct_err(eb, OCT_ECONFIG, "no row key layout");
    if (l->metric_w < 1 || l->metric_w > 8 || l->tagk_w < 1 || l->tagk_w > 8 || l->tagv_w < 1 ||
        l->tagv_w > 8)
        return oct_err(eb, OCT_ECONFIG, "UID widths must be 1..8 (metric %u, tagk %u, tagv %u)",
                       l->metric_w, l->tagk_w, l->tagv_w);
    if (l->salt_w > CODEC_ROWKEY_MAX_SALT)
        return oct_err(eb, OCT_ECONFIG, "salt width must be 0..8, not %u", l->salt_w);
    if (l->salt_buckets < 1) return oct_err(eb, OCT_ECONFIG, "salt buckets must be at least 1");
    return 0;
}

static size_t pair_w(const codec_rowkey_layout_t *l)
{
    return (size_t)l->tagk_w + l->tagv_w;
}

size_t codec_rowkey_partition_prefix_len(const codec_rowkey_layout_t *l)
{
    return (size_t)l->salt_w + l->metric_w + CODEC_ROWKEY_TS_BYTES;
}

size_t codec_rowkey_len(const codec_rowkey_layout_t *l, size_t n_tags)
{
    return codec_rowkey_partition_prefix_len(l) + n_tags * pair_w(l);
}

int64_t codec_rowkey_base_time(int64_t ts_s)
{
    return ts_s - ts_s % CODEC_ROWKEY_SPAN_S;
}

int64_t codec_rowkey_base_time_ms(int64_t ts_ms)
{
    return codec_rowkey_base_time(ts_ms / 1000);
}

int32_t codec_rowkey_java_hash(int32_t h, const uint8_t *p, size_t n)
{
    uint32_t u = (uint32_t)h;
    for (size_t i = 0; i < n; i++)
        u = 31u * u + (uint32_t)(int32_t)(int8_t)p[i];
    /* Two's-complement reinterpretation, without relying on implementation-defined casts. */
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

uint32_t codec_rowkey_salt_bucket(int32_t hash, uint32_t buckets)
{
    if (buckets == 0) return 0;
    /* Java: r = hash % buckets takes the sign of hash; |r| < buckets. Work on magnitudes. */
    uint32_t mag = hash < 0 ? (uint32_t)(-(int64_t)hash) : (uint32_t)hash;
    return mag % buckets;
}

void codec_rowkey_salt_write(uint32_t bucket, unsigned salt_w, uint8_t *out)
{
    /* Java masks int shift counts to 5 bits; '& 31' reproduces the repeat for widths > 4. */
    for (unsigned i = 1; i <= salt_w; i++)
        out[salt_w - i] = (uint8_t)(bucket >> ((8 * (i - 1)) & 31));
}

/* Salt over metric||tags of a key whose length is already known to fit the layout. */
static uint32_t salt_of(const codec_rowkey_layout_t *l, uint8_t *key, size_t len)
{
    const uint8_t *metric = key + l->salt_w;
    size_t tags_at = codec_rowkey_partition_prefix_len(l);
    int zero = 1;
    for (unsigned i = 0; i < l->metric_w; i++)
        zero &= metric[i] == 0;
    if (zero) { /* the global annotation row is never salted */
        memset(key, 0, l->salt_w);
        return 0;
    }
    int32_t h = codec_rowkey_java_hash(1, metric, l->metric_w);
    h = codec_rowkey_java_hash(h, key + tags_at, len - tags_at);
    uint32_t bucket = codec_rowkey_salt_bucket(h, l->salt_buckets);
    codec_rowkey_salt_write(bucket, l->salt_w, key);
    return bucket;
}

static int len_fits(const codec_rowkey_layout_t *l, size_t len)
{
    size_t pre = codec_rowkey_partition_prefix_len(l);
    return len >= pre && (len - pre) % pair_w(l) == 0;
}

int codec_rowkey_apply_salt(const codec_rowkey_layout_t *l, uint8_t *key, size_t len)
{
    if (!layout_ok(l)) return OCT_EINVAL;
    if (!len_fits(l, len)) return OCT_ECORRUPT;
    if (l->salt_w == 0) return 0;
    uint32_t b = salt_of(l, key, len);
    return b > (uint32_t)INT32_MAX ? INT32_MAX : (int)b; /* buckets - 1 < 2^32; clamp for int */
}

static int put_base_time(uint8_t *p, int64_t ts_s, oct_errbuf_t *eb)
{
    int64_t base = codec_rowkey_base_time(ts_s);
    if (base < 0 || base > (int64_t)UINT32_MAX)
        return oct_err(eb, OCT_ERANGE, "base time %lld out of range for a row key",
                       (long long)base);
    oct_put_be32(p, (uint32_t)base);
    return 0;
}

/* Sorts n pairs of width pw (<= 16) at p by memcmp, in place. */
static void sort_pairs(uint8_t *p, size_t n, size_t pw)
{
    uint8_t tmp[16];
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        if (memcmp(p + (j - 1) * pw, p + j * pw, pw) <= 0) continue;
        memcpy(tmp, p + i * pw, pw);
        while (j > 0 && memcmp(p + (j - 1) * pw, tmp, pw) > 0) {
            memcpy(p + j * pw, p + (j - 1) * pw, pw);
            j--;
        }
        memcpy(p + j * pw, tmp, pw);
    }
}

int codec_rowkey_build(const codec_rowkey_layout_t *l, uint64_t metric, const codec_tag_uid_t *tags,
                       size_t n_tags, int64_t ts_s, uint8_t *out, size_t cap, oct_errbuf_t *eb)
{
    if (!layout_ok(l)) return oct_err(eb, OCT_EINVAL, "invalid row key layout");
    size_t pw = pair_w(l), pre = codec_rowkey_partition_prefix_len(l);
    if (n_tags > (INT32_MAX - pre) / pw) return oct_err(eb, OCT_ENOSPC, "too many tags");
    size_t len = pre + n_tags * pw;
    if (len > cap) return oct_err(eb, OCT_ENOSPC, "row key needs %zu bytes, have %zu", len, cap);
    if (codec_uid_encode(metric, l->metric_w, out + l->salt_w) != 0)
        return oct_err(eb, OCT_ERANGE, "metric UID %llu does not fit %u bytes",
                       (unsigned long long)metric, l->metric_w);
    int rc = put_base_time(out + l->salt_w + l->metric_w, ts_s, eb);
    if (rc) return rc;
    uint8_t *tp = out + pre;
    for (size_t i = 0; i < n_tags; i++) {
        if (codec_uid_encode(tags[i].tagk, l->tagk_w, tp + i * pw) != 0 ||
            codec_uid_encode(tags[i].tagv, l->tagv_w, tp + i * pw + l->tagk_w) != 0)
            return oct_err(eb, OCT_ERANGE, "tag UID pair %llu=%llu does not fit %u/%u bytes",
                           (unsigned long long)tags[i].tagk, (unsigned long long)tags[i].tagv,
                           l->tagk_w, l->tagv_w);
    }
    sort_pairs(tp, n_tags, pw);
    if (l->salt_w) salt_of(l, out, len);
    return (int)len;
}

int codec_rowkey_parse(const codec_rowkey_layout_t *l, const uint8_t *key, size_t len,
                       codec_rowkey_t *out, oct_errbuf_t *eb)
{
    if (!layout_ok(l)) return oct_err(eb, OCT_EINVAL, "invalid row key layout");
    if (!len_fits(l, len))
        return oct_err(eb, OCT_ECORRUPT,
                       "row key of %zu bytes does not fit layout salt %u metric %u tags %u+%u", len,
                       l->salt_w, l->metric_w, l->tagk_w, l->tagv_w);
    size_t pre = codec_rowkey_partition_prefix_len(l);
    out->salt = l->salt_w ? key : NULL;
    out->metric = key + l->salt_w;
    out->metric_uid = oct_get_be_n(out->metric, l->metric_w);
    out->base_time = oct_get_be32(out->metric + l->metric_w);
    out->tags = key + pre;
    out->n_tags = (len - pre) / pair_w(l);
    out->tagk_w = l->tagk_w;
    out->tagv_w = l->tagv_w;
    return 0;
}

int codec_tsuid_from_rowkey(const codec_rowkey_layout_t *l, const uint8_t *key, size_t len,
                            uint8_t *out, size_t cap, oct_errbuf_t *eb)
{
    codec_rowkey_t rk;
    int rc = codec_rowkey_parse(l, key, len, &rk, eb);
    if (rc) return rc;
    size_t tlen = len - l->salt_w - CODEC_ROWKEY_TS_BYTES;
    if (tlen > cap) return oct_err(eb, OCT_ENOSPC, "TSUID needs %zu bytes", tlen);
    if (tlen > INT32_MAX) return oct_err(eb, OCT_ENOSPC, "TSUID too long");
    memcpy(out, rk.metric, l->metric_w);
    memcpy(out + l->metric_w, rk.tags, rk.n_tags * pair_w(l));
    return (int)tlen;
}

int codec_tsuid_check(const codec_rowkey_layout_t *l, const uint8_t *tsuid, size_t len,
                      oct_errbuf_t *eb)
{
    (void)tsuid;
    if (!layout_ok(l)) return oct_err(eb, OCT_EINVAL, "invalid row key layout");
    if (len < l->metric_w || (len - l->metric_w) % pair_w(l) != 0)
        return oct_err(eb, OCT_EPARSE, "TSUID of %zu bytes does not fit metric %u tags %u+%u", len,
                       l->metric_w, l->tagk_w, l->tagv_w);
    size_t n = (len - l->metric_w) / pair_w(l);
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

int codec_tsuid_to_hex(const uint8_t *tsuid, size_t len, char *out, size_t cap)
{
    return codec_uid_to_hex(tsuid, len, out, cap);
}

int codec_tsuid_from_hex(const codec_rowkey_layout_t *l, const char *s, size_t slen, uint8_t *out,
                         size_t cap, oct_errbuf_t *eb)
{
    if (!layout_ok(l)) return oct_err(eb, OCT_EINVAL, "invalid row key layout");
    size_t n = slen / 2 + (slen & 1);
    if (n > cap || n > INT32_MAX)
        return oct_err(eb, OCT_ENOSPC, "TSUID of %zu bytes does not fit %zu", n, cap);
    int rc = codec_uid_from_hex(s, slen, n, out, eb);
    if (rc) return rc;
    rc = codec_tsuid_check(l, out, n, eb);
    if (rc < 0) return rc;
    return (int)n;
}

int codec_rowkey_from_tsuid(const codec_rowkey_layout_t *l, const uint8_t *tsuid, size_t tlen,
                            int64_t ts_s, uint8_t *out, size_t cap, oct_errbuf_t *eb)
{
    int rc = codec_tsuid_check(l, tsuid, tlen, eb);
    if (rc < 0) return rc;
    size_t len = tlen + l->salt_w + CODEC_ROWKEY_TS_BYTES;
    if (len > cap || len > INT32_MAX)
        return oct_err(eb, OCT_ENOSPC, "row key needs %zu bytes, have %zu", len, cap);
    rc = put_base_time(out + l->salt_w + l->metric_w, ts_s, eb);
    if (rc) return rc;
    memcpy(out + l->salt_w, tsuid, l->metric_w);
    memcpy(out + codec_rowkey_partition_prefix_len(l), tsuid + l->metric_w, tlen - l->metric_w);
    memset(out, 0, l->salt_w);
    if (l->salt_w) salt_of(l, out, len);
    return (int)len;
}
