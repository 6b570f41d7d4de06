/* histogram.c -- the simple bucketed histogram's bytes (histogram.h,
 * docs/format/histogram.md). */
#include "codec/histogram.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"
#include "common/bytes.h"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Java's Float.compare: numeric order, -0.0 < 0.0, every NaN equal and last. */
static int java_float_cmp(float a, float b)
{
    if (a < b) return -1;
    if (a > b) return 1;
    uint32_t x = float_bits(a), y = float_bits(b);
    if (a != a) x = 0x7fc00000u; /* floatToIntBits: one canonical NaN */
    if (b != b) y = 0x7fc00000u;
    int32_t sx = (int32_t)x, sy = (int32_t)y;
    return (sx > sy) - (sx < sy);
}

int codec_hist_bucket_cmp(const codec_hist_bucket_t *a, const codec_hist_bucket_t *b)
{
    int c = java_float_cmp(a->lo, b->lo);
    return c ? c : java_float_cmp(a->hi, b->hi);
}

void codec_hist_normalize(codec_hist_t *h)
{
    /* Insertion sort, stable, so of equal bounds the last written stays last;
     * then keep that one. Histograms have tens of buckets. */
    codec_hist_bucket_t *b = h->buckets;
    for (size_t i = 1; i < h->n_buckets; i++) {
        codec_hist_bucket_t t = b[i];
        size_t j = i;
        for (; j > 0 && codec_hist_bucket_cmp(&b[j - 1], &t) > 0; j--)
            b[j] = b[j - 1];
        b[j] = t;
    }
    size_t k = 0;
    for (size_t i = 0; i < h->n_buckets; i++) {
        if (i + 1 < h->n_buckets && codec_hist_bucket_cmp(&b[i], &b[i + 1]) == 0) continue;
        b[k++] = b[i];
    }
    h->n_buckets = k;
}

size_t codec_hist_varint_put(uint64_t v, uint8_t out[CODEC_HIST_VARINT_MAX])
{
    size_t n = 0;
    while (n < 8 && v > 0x7f) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v; /* the ninth byte holds the last 8 bits whole */
    return n;
}

size_t codec_hist_varint_get(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t r = 0;
    for (size_t i = 0; i < CODEC_HIST_VARINT_MAX; i++) {
        if (i >= n) return 0;
        if (i == 8) {
            r |= (uint64_t)p[i] << 56;
            *v = r;
            return 9;
        }
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0; /* not reached */
}

static size_t varint_len(uint64_t v)
{
    uint8_t tmp[CODEC_HIST_VARINT_MAX];
    return codec_hist_varint_put(v, tmp);
}

size_t codec_hist_payload_len(const codec_hist_t *h)
{
    size_t n = 2 + varint_len(h->underflow) + varint_len(h->overflow);
    for (size_t i = 0; i < h->n_buckets; i++)
        n += 8 + varint_len(h->buckets[i].n);
    return n;
}

int codec_hist_encode(const codec_hist_t *h, uint8_t *out, size_t cap, size_t *len,
                      oct_errbuf_t *eb)
{
    if (h->n_buckets > CODEC_HIST_MAX_BUCKETS)
        return oct_err(eb, OCT_ERANGE, "too many histogram buckets: %zu (at most %d)", h->n_buckets,
                       CODEC_HIST_MAX_BUCKETS);
    size_t need = codec_hist_payload_len(h);
    if (need > cap)
        return oct_err(eb, OCT_ENOSPC, "histogram needs %zu bytes, buffer has %zu", need, cap);
    size_t o = 0;
    oct_put_be16(out, (uint16_t)h->n_buckets);
    o += 2;
    for (size_t i = 0; i < h->n_buckets; i++) {
        oct_put_be32(out + o, float_bits(h->buckets[i].lo));
        oct_put_be32(out + o + 4, float_bits(h->buckets[i].hi));
        o += 8;
        o += codec_hist_varint_put(h->buckets[i].n, out + o);
    }
    o += codec_hist_varint_put(h->underflow, out + o);
    o += codec_hist_varint_put(h->overflow, out + o);
    *len = o;
    return 0;
}

int codec_hist_decode(const uint8_t *p, size_t n, codec_hist_bucket_t *b, size_t cap,
                      codec_hist_t *out, oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    out->buckets = b;
    if (n < 6)
        return oct_err(eb, OCT_ECORRUPT, "Byte array shorter than 6 bytes detected: %zu bytes", n);
    int16_t count = (int16_t)oct_get_be16(p);
    if (count < 0) return oct_err(eb, OCT_ECORRUPT, "negative histogram bucket count %d", count);
    if ((size_t)count > cap) {
        out->n_buckets = (size_t)count;
        return oct_err(eb, OCT_ENOSPC, "histogram has %d buckets, room for %zu", count, cap);
    }
    size_t o = 2, k;
    for (int i = 0; i < count; i++) {
        if (n - o < 8) goto truncated;
        b[i].lo = bits_float(oct_get_be32(p + o));
        b[i].hi = bits_float(oct_get_be32(p + o + 4));
        o += 8;
        if (!(k = codec_hist_varint_get(p + o, n - o, &b[i].n))) goto truncated;
        o += k;
    }
    out->n_buckets = (size_t)count;
    if (!(k = codec_hist_varint_get(p + o, n - o, &out->underflow))) goto truncated;
    o += k;
    if (!(k = codec_hist_varint_get(p + o, n - o, &out->overflow))) goto truncated;
    return 0;
truncated:
    out->n_buckets = 0;
    return oct_err(eb, OCT_ECORRUPT, "histogram payload ends early (%zu bytes, %d buckets)", n,
                   count);
}

int codec_hist_decode_value(const uint8_t *v, size_t n, int want_id, uint8_t *id,
                            codec_hist_bucket_t *b, size_t cap, codec_hist_t *out, oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    out->buckets = b;
    if (n < 1) return oct_err(eb, OCT_ECORRUPT, "empty histogram cell");
    *id = v[0];
    if (want_id >= 0 && v[0] != want_id)
        return oct_err(eb, OCT_ECORRUPT, "Data ID %u did not match the codec ID %d", v[0], want_id);
    return codec_hist_decode(v + 1, n - 1, b, cap, out, eb);
}

int codec_hist_qualifier(uint32_t offset_ms, int ms, uint8_t out[5])
{
    if (offset_ms > CODEC_MAX_OFFSET_MS || (!ms && offset_ms % 1000)) return OCT_ERANGE;
    out[0] = CODEC_PREFIX_HISTOGRAM;
    if (!ms) {
        oct_put_be16(out + 1, (uint16_t)(offset_ms / 1000));
        return 3;
    }
    oct_put_be32(out + 1, offset_ms);
    return 5;
}

int codec_hist_qualifier_parse(const uint8_t *q, size_t n, uint32_t *offset_ms, int *ms)
{
    if ((n != 3 && n != 5) || q[0] != CODEC_PREFIX_HISTOGRAM) return OCT_ECORRUPT;
    uint32_t off = n == 3 ? oct_get_be16(q + 1) * 1000u : oct_get_be32(q + 1);
    if (off > CODEC_MAX_OFFSET_MS) return OCT_ECORRUPT;
    *offset_ms = off;
    *ms = n == 5;
    return 0;
}

/* ---- the text form ------------------------------------------------------- */

/* Java's Float.parseFloat, for what a client sends: leading/trailing spaces
 * trimmed, a decimal or hex number, NaN, [+-]Infinity, an f/F/d/D suffix. */
static int parse_jfloat(const char *s, size_t n, float *out)
{
    char buf[64];
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n && (s[n - 1] == 'f' || s[n - 1] == 'F' || s[n - 1] == 'd' || s[n - 1] == 'D') &&
        !(n >= 8 && !memcmp(s + n - 8, "Infinity", 8)))
        n--;
    if (n == 0 || n >= sizeof buf) return -1;
    if (n <= 7) { /* the usual bound, a small whole number: exact in a float, no strtof */
        uint32_t v = 0;
        size_t i = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            v = v * 10 + (uint32_t)(s[i++] - '0');
        if (i == n) {
            *out = (float)v;
            return 0;
        }
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    const char *b = buf + (buf[0] == '+' || buf[0] == '-');
    if (!strcmp(b, "NaN")) {
        if (b != buf) return -1;
        *out = NAN;
        return 0;
    }
    if (!strcmp(b, "Infinity")) {
        *out = buf[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    for (const char *c = b; *c; c++) /* strtof's own words (inf, nan) are not Java's */
        if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == 'E' || *c == '+' ||
              *c == '-' || *c == 'x' || *c == 'X' || *c == 'p' || *c == 'P' ||
              (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F')))
            return -1;
    char *end;
    errno = 0;
    float f = strtof(buf, &end);
    if (end == buf || *end) return -1;
    *out = f;
    return 0;
}

/* Java's Long.parseLong: optional sign, decimal digits, no overflow. */
static int parse_jlong(const char *s, size_t n, uint64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n && (s[0] == '-' || s[0] == '+')) neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t v = 0, lim = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (uint64_t)0 - v : v; /* a Java long's bits */
    return 0;
}

int codec_hist_parse_text(const char *s, size_t n, codec_hist_bucket_t *b, size_t cap,
                          codec_hist_t *out, oct_errbuf_t *eb)
{
    out->buckets = b;
    out->n_buckets = 0;
    out->underflow = out->overflow = 0;
    /* Java's split(":") drops trailing empty items */
    while (n && s[n - 1] == ':')
        n--;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ':')
            j++;
        const char *it = s + i;
        size_t il = j - i, eq = il, neq = 0;
        for (size_t k = 0; k < il; k++)
            if (it[k] == '=') {
                if (!neq++) eq = k;
            }
        if (neq != 1)
            return oct_err(eb, OCT_EPARSE, "Improperly formatted bucket: %.*s", (int)il, it);
        const char *key = it, *val = it + eq + 1;
        size_t kl = eq, vl = il - eq - 1;
        uint64_t cnt;
        if (parse_jlong(val, vl, &cnt))
            return oct_err(eb, OCT_EPARSE, "For input string: \"%.*s\"", (int)vl, val);
        if (kl == 1 && (key[0] == 'u' || key[0] == 'U')) {
            out->underflow = cnt;
        } else if (kl == 1 && (key[0] == 'o' || key[0] == 'O')) {
            out->overflow = cnt;
        } else {
            size_t comma = kl, nc = 0;
            for (size_t k = 0; k < kl; k++)
                if (key[k] == ',') {
                    if (!nc++) comma = k;
                }
            if (nc != 1)
                return oct_err(eb, OCT_EPARSE, "Improperly formatted bounds: %.*s", (int)il, it);
            float lo, hi;
            if (parse_jfloat(key, comma, &lo))
                return oct_err(eb, OCT_EPARSE, "For input string: \"%.*s\"", (int)comma, key);
            if (parse_jfloat(key + comma + 1, kl - comma - 1, &hi))
                return oct_err(eb, OCT_EPARSE, "For input string: \"%.*s\"", (int)(kl - comma - 1),
                               key + comma + 1);
            if (out->n_buckets == cap) return oct_err(eb, OCT_ENOSPC, "more than %zu buckets", cap);
            b[out->n_buckets++] = (codec_hist_bucket_t){lo, hi, cnt};
        }
        i = j + 1;
    }
    codec_hist_normalize(out);
    return 0;
}

int codec_hist_parse_bounds(const char *s, size_t n, float *lo, float *hi)
{
    size_t comma = n, nc = 0;
    for (size_t k = 0; k < n; k++)
        if (s[k] == ',') {
            if (!nc++) comma = k;
        }
    if (nc != 1) return OCT_EPARSE;
    if (parse_jfloat(s, comma, lo) || parse_jfloat(s + comma + 1, n - comma - 1, hi))
        return OCT_ERANGE;
    return 0;
}
