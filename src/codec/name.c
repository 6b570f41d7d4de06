/* name.c -- validation of metric names, tag keys and tag values (OpenTSDB Tags.validateString).
 *
 * OpenTSDB checks each UTF-16 unit; we decode UTF-8 and check whole code points, which both
 * accepts letters outside the BMP and refuses malformed byte strings that would otherwise become
 * unreadable UID rows (docs/format/uid.md section 5). The common case (ASCII) never touches the
 * letter table; other code points are binary-searched in the generated range table. */
#include "codec/name.h"

#include <stdio.h>
#include <string.h>

/* The longest prefix of a name quoted in an error, in bytes: enough to recognise it, short
 * enough that the whole message fits an oct_errbuf_t. */
#define QUOTE_MAX 300

size_t codec_utf8_decode(const uint8_t *s, size_t len, uint32_t *cp)
{
    uint8_t b = s[0];
    size_t n;
    uint32_t c, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
        n = 2, c = b & 0x1F, min = 0x80;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3, c = b & 0x0F, min = 0x800;
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4, c = b & 0x07, min = 0x10000;
    } else {
        return 0; /* continuation byte as lead, C0/C1 overlong leads, F5..FF */
    }
    if (len < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return n;
}

int codec_name_is_letter(uint32_t cp)
{
    size_t lo = 0, hi = codec__letter_range_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < codec__letter_ranges[mid].lo)
            hi = mid;
        else if (cp > codec__letter_ranges[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

const char *codec_name_unicode_version(void)
{
    return codec__letters_unicode_version;
}

static int in_specials(uint32_t cp, const char *specials)
{
    if (!specials) return 0;
    const uint8_t *p = (const uint8_t *)specials;
    size_t len = strlen(specials);
    while (len > 0) {
        uint32_t sc;
        size_t k = codec_utf8_decode(p, len, &sc);
        if (k == 0) { /* a malformed setting byte matches nothing; skip it */
            p++, len--;
            continue;
        }
        if (sc == cp) return 1;
        p += k, len -= k;
    }
    return 0;
}

/* 1 for the ASCII bytes every name may hold (letters, digits, - _ . /). */
static const uint8_t plain_ascii[256] = {
    ['-'] = 1, ['.'] = 1, ['/'] = 1, ['_'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1,
    ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['A'] = 1, ['B'] = 1,
    ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
    ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
    ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
    ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
    ['y'] = 1, ['z'] = 1,
};

static int allowed(uint32_t cp, const char *specials)
{
    if (cp < 0x80 ? plain_ascii[cp] : codec_name_is_letter(cp)) return 1;
    return in_specials(cp, specials);
}

/* Bounded string builder for error messages. */
typedef struct {
    char *buf;
    size_t cap, len;
} sbuf_t;

static void sb_put(sbuf_t *b, const void *p, size_t n)
{
    if (b->len + 1 >= b->cap) return;
    size_t room = b->cap - 1 - b->len;
    if (n > room) n = room;
    memcpy(b->buf + b->len, p, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void sb_str(sbuf_t *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* Appends s, writing NUL bytes and malformed UTF-8 as \xNN, cut at QUOTE_MAX bytes on a
 * code-point boundary. */
static void sb_quote(sbuf_t *b, const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        if (i >= QUOTE_MAX) {
            sb_str(b, "...");
            return;
        }
        uint32_t cp;
        size_t k = codec_utf8_decode(s + i, len - i, &cp);
        if (k == 0 || cp == 0) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\x%02X", s[i]);
            sb_str(b, esc);
            i++;
        } else {
            sb_put(b, s + i, k);
            i += k;
        }
    }
}

static int fail(oct_errbuf_t *eb, const char *what, const char *s, size_t len, const char *why,
                const uint8_t *c, size_t clen)
{
    if (!eb) return OCT_EBADNAME;
    sbuf_t b = {eb->msg, sizeof eb->msg, 0};
    eb->msg[0] = '\0';
    sb_str(&b, "Invalid ");
    sb_str(&b, what);
    sb_str(&b, " (\"");
    sb_quote(&b, (const uint8_t *)s, len);
    sb_str(&b, "\"): ");
    sb_str(&b, why);
    if (c) sb_quote(&b, c, clen);
    return OCT_EBADNAME;
}

/* Length of s's leading run of plain ASCII bytes: the whole name, almost
 * always, so the UTF-8 decoding below runs only for the rest. */
static size_t plain_prefix(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && plain_ascii[(uint8_t)s[i]])
        i++;
    return i;
}

int codec_name_validate(const char *what, const char *s, size_t len, const char *specials,
                        oct_errbuf_t *eb)
{
    if (!s) return oct_err(eb, OCT_EBADNAME, "Invalid %s: null", what);
    if (len == 0) return oct_err(eb, OCT_EBADNAME, "Invalid %s: empty string", what);
    const uint8_t *p = (const uint8_t *)s;
    size_t i = plain_prefix(s, len);
    while (i < len) {
        uint32_t cp;
        size_t k = codec_utf8_decode(p + i, len - i, &cp);
        if (k == 0) {
            char why[48];
            snprintf(why, sizeof why, "invalid UTF-8 at byte %zu", i);
            return fail(eb, what, s, len, why, NULL, 0);
        }
        if (!allowed(cp, specials)) return fail(eb, what, s, len, "illegal character: ", p + i, k);
        i += k;
    }
    return 0;
}

int codec_name_validate_metric(const char *s, size_t len, const char *specials, oct_errbuf_t *eb)
{
    return codec_name_validate("metric name", s, len, specials, eb);
}

/* Builds "<prefix>[<other>]" for the <what> of a tag, quoting 'other' like a name. */
static void tag_what(char *out, size_t cap, const char *prefix, const char *other, size_t olen)
{
    sbuf_t b = {out, cap, 0};
    out[0] = '\0';
    sb_str(&b, prefix);
    sb_str(&b, "[");
    if (other)
        sb_quote(&b, (const uint8_t *)other, olen);
    else
        sb_str(&b, "null");
    sb_str(&b, "]");
}

int codec_name_validate_tagk(const char *tagk, size_t klen, const char *tagv, size_t vlen,
                             const char *specials, oct_errbuf_t *eb)
{
    /* the message's text is built only for a name that fails */
    if (tagk && klen && plain_prefix(tagk, klen) == klen) return 0;
    char what[QUOTE_MAX + 64];
    tag_what(what, sizeof what, "tag name with value ", tagv, vlen);
    return codec_name_validate(what, tagk, klen, specials, eb);
}

int codec_name_validate_tagv(const char *tagv, size_t vlen, const char *tagk, size_t klen,
                             const char *specials, oct_errbuf_t *eb)
{
    if (tagv && vlen && plain_prefix(tagv, vlen) == vlen) return 0;
    char what[QUOTE_MAX + 64];
    tag_what(what, sizeof what, "tag value with key ", tagk, klen);
    return codec_name_validate(what, tagv, vlen, specials, eb);
}
