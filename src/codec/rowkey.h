/* rowkey.h -- OpenTSDB data-table row keys, salt and TSUIDs.
 *
 * Row key = [salt][metric UID][base_time: 4 B][tagk tagv]... with widths taken from a
 * codec_rowkey_layout_t; the byte format, the salt hash and the TSUID are specified in
 * docs/format/rowkey.md. Pure functions: callers supply output buffers; parsing returns pointers
 * into the caller's key (borrowed, valid as long as the key is). */
#ifndef OCT_CODEC_ROWKEY_H
#define OCT_CODEC_ROWKEY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define CODEC_ROWKEY_TS_BYTES 4    /* base_time field */
#define CODEC_ROWKEY_SPAN_S   3600 /* one row = one UTC hour (Const.MAX_TIMESPAN) */
#define CODEC_ROWKEY_MAX_SALT 8

typedef struct {
    uint8_t metric_w;      /* metric UID width, 1..8 */
    uint8_t tagk_w;        /* tag-key UID width, 1..8 */
    uint8_t tagv_w;        /* tag-value UID width, 1..8 */
    uint8_t salt_w;        /* 0 (unsalted) .. 8 */
    uint32_t salt_buckets; /* >= 1; only used when salt_w > 0 */
} codec_rowkey_layout_t;

/* One tag pair as UIDs. */
typedef struct {
    uint64_t tagk, tagv;
} codec_tag_uid_t;

/* A parsed row key; every pointer is into the parsed key (borrowed). */
typedef struct {
    const uint8_t *salt;   /* salt_w bytes (NULL if unsalted) */
    const uint8_t *metric; /* metric_w bytes */
    const uint8_t *tags;   /* n_tags pairs of pair_w = tagk_w + tagv_w bytes */
    uint64_t metric_uid;
    uint32_t base_time; /* seconds */
    size_t n_tags;
    uint8_t tagk_w, tagv_w;
} codec_rowkey_t;

/* Returns 0 if the widths and bucket count are in range, else OCT_ECONFIG with the reason. */
OCT_MUST_CHECK int codec_rowkey_layout_check(const codec_rowkey_layout_t *l, oct_errbuf_t *eb);

/* Length of a row key with n_tags pairs: salt_w + metric_w + 4 + n_tags*(tagk_w + tagv_w). */
size_t codec_rowkey_len(const codec_rowkey_layout_t *l, size_t n_tags);

/* salt_w + metric_w + 4: the prefix shared by all rows of one metric, hour and salt bucket. */
size_t codec_rowkey_partition_prefix_len(const codec_rowkey_layout_t *l);

/* Row base time: ts_s - ts_s % 3600 (C and Java truncate alike, so a negative ts maps to the
 * same value OpenTSDB would compute). The _ms variant divides by 1000 first. */
int64_t codec_rowkey_base_time(int64_t ts_s);
int64_t codec_rowkey_base_time_ms(int64_t ts_ms);

/* Builds the row key of the series (metric, tags[0..n_tags)) for the hour containing ts_s into
 * out[0..cap): tag pairs are sorted by memcmp of tagk||tagv, and the salt is computed when
 * salt_w > 0. 'tags' is not modified. Returns the key length, or OCT_EINVAL (bad layout),
 * OCT_ERANGE (a UID too wide for its field, or a base time outside 0..2^32-1), OCT_ENOSPC. */
OCT_MUST_CHECK int codec_rowkey_build(const codec_rowkey_layout_t *l, uint64_t metric,
                                      const codec_tag_uid_t *tags, size_t n_tags, int64_t ts_s,
                                      uint8_t *out, size_t cap, oct_errbuf_t *eb);

/* Splits key[0..len) according to l. Returns 0, OCT_EINVAL (bad layout) or OCT_ECORRUPT if
 * len is not salt_w + metric_w + 4 + N*(tagk_w + tagv_w) for some N >= 0. Does not verify
 * the salt or the tag order. */
OCT_MUST_CHECK int codec_rowkey_parse(const codec_rowkey_layout_t *l, const uint8_t *key,
                                      size_t len, codec_rowkey_t *out, oct_errbuf_t *eb);

/* Pointers to tag pair i (< rk->n_tags) of a parsed key. */
static inline const uint8_t *codec_rowkey_tagk(const codec_rowkey_t *rk, size_t i)
{
    return rk->tags + i * (size_t)(rk->tagk_w + rk->tagv_w);
}
static inline const uint8_t *codec_rowkey_tagv(const codec_rowkey_t *rk, size_t i)
{
    return codec_rowkey_tagk(rk, i) + rk->tagk_w;
}

/* Java Arrays.hashCode(byte[]) continued from h over p[0..n) with signed bytes and 32-bit
 * wrap-around: start with h = 1; hashing two ranges in turn equals hashing their concatenation. */
int32_t codec_rowkey_java_hash(int32_t h, const uint8_t *p, size_t n);

/* Salt bucket of a hash: Java remainder (sign of the dividend), negated if negative. */
uint32_t codec_rowkey_salt_bucket(int32_t hash, uint32_t buckets);

/* Writes 'bucket' as OpenTSDB's salt bytes out[0..salt_w) (repeating the 4-byte pattern for
 * widths above 4, see docs/format/rowkey.md section 2). */
void codec_rowkey_salt_write(uint32_t bucket, unsigned salt_w, uint8_t *out);

/* Computes the salt of key[0..len) from its metric and tag bytes and writes it into the key's
 * salt bytes (a no-op returning 0 when salt_w == 0, and zero salt for an all-zero metric).
 * Returns the bucket (>= 0), OCT_EINVAL or OCT_ECORRUPT (bad length). */
OCT_MUST_CHECK int codec_rowkey_apply_salt(const codec_rowkey_layout_t *l, uint8_t *key,
                                           size_t len);

/* TSUID (metric || tag pairs) of key[0..len) into out[0..cap). Returns its length, OCT_ECORRUPT
 * (bad key length), OCT_EINVAL or OCT_ENOSPC. */
OCT_MUST_CHECK int codec_tsuid_from_rowkey(const codec_rowkey_layout_t *l, const uint8_t *key,
                                           size_t len, uint8_t *out, size_t cap, oct_errbuf_t *eb);

/* Number of tag pairs of tsuid[0..len), or OCT_EPARSE if the length does not fit the layout
 * (len >= metric_w and (len - metric_w) a multiple of tagk_w + tagv_w), or OCT_EINVAL. */
OCT_MUST_CHECK int codec_tsuid_check(const codec_rowkey_layout_t *l, const uint8_t *tsuid,
                                     size_t len, oct_errbuf_t *eb);

/* Upper-case hex of a TSUID (same as codec_uid_to_hex). */
OCT_MUST_CHECK int codec_tsuid_to_hex(const uint8_t *tsuid, size_t len, char *out, size_t cap);

/* Parses a hex TSUID (either case; odd length gets a leading 0, as OpenTSDB) into out[0..cap)
 * and checks its length against the layout. Returns the byte length, OCT_EPARSE, OCT_ENOSPC. */
OCT_MUST_CHECK int codec_tsuid_from_hex(const codec_rowkey_layout_t *l, const char *s, size_t slen,
                                        uint8_t *out, size_t cap, oct_errbuf_t *eb);

/* Row key for TSUID tsuid[0..tlen) and the hour containing ts_s (salt computed). The TSUID's
 * tag order is kept as given. Returns the key length, OCT_EPARSE (bad TSUID length),
 * OCT_ERANGE (base time), OCT_EINVAL, OCT_ENOSPC. */
OCT_MUST_CHECK int codec_rowkey_from_tsuid(const codec_rowkey_layout_t *l, const uint8_t *tsuid,
                                           size_t tlen, int64_t ts_s, uint8_t *out, size_t cap,
                                           oct_errbuf_t *eb);

#endif
