/* uid_bytes.c -- OpenTSDB unique IDs as bytes, hex and Java byte lists; UID kinds.
 *
 * The byte form is plain fixed-width big-endian (docs/format/uid.md), so the work here is in
 * the text forms: they come from users and CLI scripts, hence strict bounds checks and error
 * messages that quote the input. Nothing allocates. */
#include "codec/uid_bytes.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/bytes.h"

_Static_assert(CODEC_UID_MAX_WIDTH == 8, "UIDs are at most 8 bytes (one uint64_t)");

uint64_t codec_uid_max(unsigned width)
{
    if (width < 1 || width > CODEC_UID_MAX_WIDTH) return 0;
    if (width == 8) return (uint64_t)INT64_MAX;
    return ((uint64_t)1 << (8 * width)) - 1;
}

int codec_uid_encode(uint64_t id, unsigned width, uint8_t *out)
{
    if (width < 1 || width > CODEC_UID_MAX_WIDTH) return OCT_EINVAL;
    if (id > codec_uid_max(width)) return OCT_ERANGE;
    oct_put_be_n(out, id, width);
    return 0;
}

uint64_t codec_uid_decode(const uint8_t *uid, unsigned width)
{
    assert(width >= 1 && width <= CODEC_UID_MAX_WIDTH);
    return oct_get_be_n(uid, width);
}

int codec_uid_to_hex(const uint8_t *uid, size_t n, char *out, size_t cap)
{
    static const char digits[] = "0123456789ABCDEF";
    if (n > (SIZE_MAX - 1) / 2 || cap < 2 * n + 1 || 2 * n > INT32_MAX) return OCT_ENOSPC;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[uid[i] >> 4];
        out[2 * i + 1] = digits[uid[i] & 0xF];
    }
    out[2 * n] = '\0';
    return (int)(2 * n);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int codec_uid_from_hex(const char *s, size_t len, size_t width, uint8_t *out, oct_errbuf_t *eb)
{
    if (len == 0) return oct_err(eb, OCT_EPARSE, "empty UID");
    if (width == 0) return oct_err(eb, OCT_EPARSE, "zero-width UID");
    size_t nbytes = len / 2 + (len & 1);
    if (nbytes > width)
        return oct_err(eb, OCT_EPARSE, "UID \"%.*s\" is longer than %zu bytes",
                       (int)(len > 64 ? 64 : len), s, width);
    for (size_t i = 0; i < len; i++) {
        if (hex_digit(s[i]) < 0)
            return oct_err(eb, OCT_EPARSE, "invalid hex character at position %zu in UID \"%.*s\"",
                           i, (int)(len > 64 ? 64 : len), s);
    }
    size_t pad = width - nbytes;
    memset(out, 0, pad);
    /* An odd length behaves as if a leading '0' had been written. */
    size_t si = 0;
    uint8_t *o = out + pad;
    if (len & 1) *o++ = (uint8_t)hex_digit(s[si++]);
    for (; si < len; si += 2)
        *o++ = (uint8_t)(hex_digit(s[si]) << 4 | hex_digit(s[si + 1]));
    return 0;
}

int codec_uid_to_javabytes(const uint8_t *b, size_t n, char *out, size_t cap)
{
    size_t pos = 0;
    if (cap < 3) return OCT_ENOSPC;
    out[pos++] = '[';
    for (size_t i = 0; i < n; i++) {
        char tmp[8];
        int k = snprintf(tmp, sizeof tmp, "%s%d", i ? ", " : "", (int)(int8_t)b[i]);
        /* Leave room for "]" and NUL after this element. */
        if ((size_t)k + 2 > cap - pos) return OCT_ENOSPC;
        memcpy(out + pos, tmp, (size_t)k);
        pos += (size_t)k;
    }
    out[pos++] = ']';
    out[pos] = '\0';
    if (pos > INT32_MAX) return OCT_ENOSPC;
    return (int)pos;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

int codec_uid_from_javabytes(const char *s, size_t len, uint8_t *out, size_t cap, oct_errbuf_t *eb)
{
    size_t i = 0, n = 0;
    const int shown = (int)(len > 64 ? 64 : len);
    while (i < len && is_blank(s[i]))
        i++;
    if (i == len || s[i] != '[')
        return oct_err(eb, OCT_EPARSE, "byte list \"%.*s\" must start with '['", shown, s);
    i++;
    while (i < len && is_blank(s[i]))
        i++;
    if (i < len && s[i] == ']') {
        i++;
        goto tail;
    }
    for (;;) {
        while (i < len && is_blank(s[i]))
            i++;
        int neg = 0;
        if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
        size_t digits = 0;
        int v = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (v < 1000) v = v * 10 + (s[i] - '0');
            i++;
            digits++;
        }
        if (digits == 0)
            return oct_err(eb, OCT_EPARSE, "expected a number at position %zu in \"%.*s\"", i,
                           shown, s);
        if (neg) v = -v;
        if (v < -128 || v > 255)
            return oct_err(eb, OCT_EPARSE, "byte value out of range at position %zu in \"%.*s\"", i,
                           shown, s);
        if (n == cap) return oct_err(eb, OCT_ENOSPC, "byte list \"%.*s\" is too long", shown, s);
        out[n++] = (uint8_t)(v & 0xFF);
        while (i < len && is_blank(s[i]))
            i++;
        if (i < len && s[i] == ',') {
            i++;
            continue;
        }
        if (i < len && s[i] == ']') {
            i++;
            break;
        }
        return oct_err(eb, OCT_EPARSE, "expected ',' or ']' at position %zu in \"%.*s\"", i, shown,
                       s);
    }
tail:
    while (i < len && is_blank(s[i]))
        i++;
    if (i != len)
        return oct_err(eb, OCT_EPARSE, "trailing characters after ']' in \"%.*s\"", shown, s);
    if (n > INT32_MAX) return OCT_ENOSPC;
    return (int)n;
}

static const char *const kind_qualifiers[CODEC_UID_N_KINDS] = {"metrics", "tagk", "tagv"};
static const char *const kind_meta[CODEC_UID_N_KINDS] = {"metric_meta", "tagk_meta", "tagv_meta"};

const char *codec_uid_kind_qualifier(codec_uid_kind_t kind)
{
    if ((unsigned)kind >= CODEC_UID_N_KINDS) return NULL;
    return kind_qualifiers[kind];
}

const char *codec_uid_kind_meta_qualifier(codec_uid_kind_t kind)
{
    if ((unsigned)kind >= CODEC_UID_N_KINDS) return NULL;
    return kind_meta[kind];
}

static int ieq(const char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && strncasecmp(s, lit, len) == 0;
}

int codec_uid_kind_parse(const char *s, size_t len, codec_uid_kind_t *kind, oct_errbuf_t *eb)
{
    if (s && (ieq(s, len, "metric") || ieq(s, len, "metrics"))) {
        *kind = CODEC_UID_METRIC;
    } else if (s && ieq(s, len, "tagk")) {
        *kind = CODEC_UID_TAGK;
    } else if (s && ieq(s, len, "tagv")) {
        *kind = CODEC_UID_TAGV;
    } else {
        return oct_err(eb, OCT_EINVAL, "Invalid type requested: %.*s",
                       s ? (int)(len > 100 ? 100 : len) : 4, s ? s : "null");
    }
    return 0;
}

int codec_uid_kind_from_qualifier(const char *q, size_t len, codec_uid_kind_t *kind)
{
    for (unsigned k = 0; k < CODEC_UID_N_KINDS; k++) {
        if (strlen(kind_qualifiers[k]) == len && memcmp(q, kind_qualifiers[k], len) == 0) {
            *kind = (codec_uid_kind_t)k;
            return 0;
        }
    }
    return OCT_ENOTFOUND;
}
