/* json.c -- strict zero-copy JSON parser, array streaming, and writer.
 *
 * The parser is a recursive descent over the input with an explicit depth
 * bound (JSON_MAX_DEPTH), so hostile nesting fails with an error long before
 * the C stack is at risk. Strings are scanned once (16 bytes at a time with
 * SSE2) to find their end (and validate UTF-8); only if they contain escapes
 * are they decoded, into the arena, with a second pass whose output can
 * never be longer than the input.
 * The same code runs in "validate" mode (no arena): nodes are then built on
 * the stack and thrown away, so json_validate allocates nothing. */
#include "common/utf8.h"
#include "common/json.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtoa.h"
#include "common/itoa.h"
#include "common/xmalloc.h"

/* ---- arena -------------------------------------------------------------- */

struct json_arena_block {
    json_arena_block_t *next;
    size_t size, used;
    max_align_t data[]; /* aligned payload */
};

#define JSON_ARENA_DEFAULT_BLOCK (64 * 1024)
#define JSON_ALIGN               _Alignof(max_align_t)

void *json_arena_alloc(json_arena_t *a, size_t n)
{
    size_t need = (n + JSON_ALIGN - 1) & ~(JSON_ALIGN - 1);
    if (need == 0) need = JSON_ALIGN;
    json_arena_block_t *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t bs = a->block_size ? a->block_size : JSON_ARENA_DEFAULT_BLOCK;
        if (bs < need) bs = need;
        b = xmalloc(sizeof *b + bs);
        b->size = bs;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    a->bytes += need;
    return p;
}

char *json_arena_strndup(json_arena_t *a, const char *p, size_t n)
{
    char *d = json_arena_alloc(a, n + 1);
    if (n) memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

void json_arena_reset(json_arena_t *a)
{
    /* Keep the largest block only: resets happen per element on hot paths,
     * where one block is nearly always enough. */
    json_arena_block_t *keep = NULL, *b = a->head;
    while (b) {
        json_arena_block_t *next = b->next;
        if (!keep || b->size > keep->size) {
            if (keep) free(keep);
            keep = b;
        } else {
            free(b);
        }
        b = next;
    }
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
    a->head = keep;
    a->bytes = 0;
}

void json_arena_free(json_arena_t *a)
{
    json_arena_block_t *b = a->head;
    while (b) {
        json_arena_block_t *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->bytes = 0;
}

/* ---- parser ------------------------------------------------------------- */

typedef struct {
    const char *s, *p, *end;
    json_arena_t *a; /* NULL = validate only */
    unsigned flags;
    oct_errbuf_t *eb;
    int depth;
} jp_t;

static int jp_fail(jp_t *j, const char *why)
{
    return oct_err(j->eb, OCT_EPARSE, "%s at offset %zu", why, (size_t)(j->p - j->s));
}

static inline void jp_ws(jp_t *j)
{
    const char *p = j->p, *e = j->end;
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    j->p = p;
}

static json_value_t *jp_node(jp_t *j, json_value_t *tmp)
{
    if (!j->a) {
        memset(tmp, 0, sizeof *tmp);
        return tmp;
    }
    json_value_t *v = json_arena_alloc(j->a, sizeof *v);
    memset(v, 0, sizeof *v);
    return v;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *e)
{
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if ((size_t)(e - p) < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

static int read_u4(const char *p, const char *e, uint32_t *out)
{
    if (e - p < 4) return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)p[i]);
        if (h < 0) return -1;
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* Decodes the escaped string body raw[0..n) (already known to end before the
 * closing quote, UTF-8 valid) into out (may be NULL: validate only). Returns
 * the decoded length or -1 with j->p set at the offending escape. */
static long jp_unescape(jp_t *j, const char *raw, size_t n, char *out)
{
    const char *p = raw, *e = raw + n;
    size_t o = 0;
    char tmp[4];
    while (p < e) {
        if (*p != '\\') {
            if (out) out[o] = *p;
            o++;
            p++;
            continue;
        }
        const char *esc = p;
        p++;
        char c = *p++; /* the scan guaranteed a byte after '\\' */
        char d;
        switch (c) {
        case '"':
            d = '"';
            break;
        case '\\':
            d = '\\';
            break;
        case '/':
            d = '/';
            break;
        case 'b':
            d = '\b';
            break;
        case 'f':
            d = '\f';
            break;
        case 'n':
            d = '\n';
            break;
        case 'r':
            d = '\r';
            break;
        case 't':
            d = '\t';
            break;
        case 'u': {
            uint32_t cp;
            if (read_u4(p, e, &cp)) goto bad_u;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || read_u4(p + 2, e, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF) {
                    j->p = esc;
                    return -1;
                }
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                j->p = esc;
                return -1;
            }
            size_t k = oct_utf8_put(out ? out + o : tmp, cp);
            o += k;
            continue;
        }
        default:
            goto bad_u;
        }
        if (out) out[o] = d;
        o++;
        continue;
    bad_u:
        j->p = esc;
        return -1;
    }
    return (long)o;
}

/* j->p is just past the opening quote. Sets the string, its length and whether it had escapes. */
static int jp_string(jp_t *j, const char **str, size_t *len, int *escaped)
{
    const unsigned char *p = (const unsigned char *)j->p, *e = (const unsigned char *)j->end;
    const unsigned char *start = p;
    int esc = 0;
    for (;;) {
        /* fast path over plain ASCII, 16 bytes at a time where they exist */
#ifdef __SSE2__
        while (e - p >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            /* signed compare: bytes >= 0x80 are negative, so "< 0x20" catches both */
            __m128i stop = _mm_or_si128(_mm_cmplt_epi8(x, _mm_set1_epi8(0x20)),
                                        _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                                     _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
            unsigned m = (unsigned)_mm_movemask_epi8(stop);
            if (m) {
                p += __builtin_ctz(m);
                break;
            }
            p += 16;
        }
#endif
        while (p < e && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80)
            p++;
        if (p >= e) {
            j->p = (const char *)p;
            return jp_fail(j, "unterminated string");
        }
        unsigned c = *p;
        if (c == '"') break;
        if (c == '\\') {
            esc = 1;
            if (p + 1 >= e) {
                j->p = (const char *)p;
                return jp_fail(j, "unterminated string");
            }
            p += 2; /* the escaped byte is checked when decoding */
            continue;
        }
        if (c < 0x20) {
            j->p = (const char *)p;
            return jp_fail(j, "control character in string");
        }
        size_t k = utf8_seq(p, e);
        if (!k) {
            j->p = (const char *)p;
            return jp_fail(j, "invalid UTF-8 in string");
        }
        p += k;
    }
    size_t raw_len = (size_t)(p - start);
    j->p = (const char *)p + 1;
    if (!esc) {
        *str = (const char *)start;
        *len = raw_len;
        *escaped = 0;
        return 0;
    }
    char *buf = j->a ? json_arena_alloc(j->a, raw_len + 1) : NULL;
    const char *after = j->p;
    long n = jp_unescape(j, (const char *)start, raw_len, buf);
    if (n < 0) return jp_fail(j, "invalid escape in string");
    j->p = after;
    if (buf) buf[n] = '\0';
    *str = buf;
    *len = (size_t)n;
    *escaped = 1;
    return 0;
}

static int jp_literal(jp_t *j, const char *lit, size_t n)
{
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0)
        return jp_fail(j, "invalid literal");
    j->p += n;
    return 0;
}

static int jp_number(jp_t *j, json_value_t *v)
{
    const char *p = j->p, *e = j->end, *start = p;
    int integer = 1;
    if (p < e && *p == '-') p++;
    if ((j->flags & JSON_ALLOW_NONFINITE) && p < e && *p == 'I') {
        j->p = p;
        if (jp_literal(j, "Infinity", 8)) return OCT_EPARSE;
        v->type = JSON_NUMBER;
        v->flags = JSON_F_NONFINITE;
        v->str = start;
        v->len = (size_t)(j->p - start);
        return 0;
    }
    if (p >= e || *p < '0' || *p > '9') {
        j->p = p;
        return jp_fail(j, "invalid number");
    }
    if (*p == '0') {
        p++;
    } else {
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && *p == '.') {
        integer = 0;
        p++;
        if (p >= e || *p < '0' || *p > '9') {
            j->p = p;
            return jp_fail(j, "invalid number");
        }
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') {
            j->p = p;
            return jp_fail(j, "invalid number");
        }
        while (p < e && *p >= '0' && *p <= '9')
            p++;
    }
    v->type = JSON_NUMBER;
    v->flags = integer ? JSON_F_INTEGER : 0;
    v->str = start;
    v->len = (size_t)(p - start);
    j->p = p;
    return 0;
}

static int jp_value(jp_t *j, json_value_t *v);

static int jp_array(jp_t *j, json_value_t *v)
{
    v->type = JSON_ARRAY;
    j->p++; /* '[' */
    jp_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return 0;
    }
    json_value_t **tail = &v->child;
    for (;;) {
        json_value_t tmp, *c = jp_node(j, &tmp);
        int rc = jp_value(j, c);
        if (rc) return rc;
        if (j->a) {
            *tail = c;
            tail = &c->next;
        }
        v->n++;
        jp_ws(j);
        if (j->p >= j->end) return jp_fail(j, "unterminated array");
        if (*j->p == ',') {
            j->p++;
            jp_ws(j);
            continue;
        }
        if (*j->p == ']') {
            j->p++;
            return 0;
        }
        return jp_fail(j, "expected ',' or ']'");
    }
}

static int jp_object(jp_t *j, json_value_t *v)
{
    v->type = JSON_OBJECT;
    j->p++; /* '{' */
    jp_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 0;
    }
    json_value_t **tail = &v->child;
    for (;;) {
        if (j->p >= j->end || *j->p != '"') return jp_fail(j, "expected a string key");
        j->p++;
        const char *key;
        size_t klen;
        int kesc;
        int rc = jp_string(j, &key, &klen, &kesc);
        if (rc) return rc;
        jp_ws(j);
        if (j->p >= j->end || *j->p != ':') return jp_fail(j, "expected ':'");
        j->p++;
        jp_ws(j);
        json_value_t tmp, *c = jp_node(j, &tmp);
        rc = jp_value(j, c);
        if (rc) return rc;
        c->key = key;
        c->key_len = klen;
        if (j->a) {
            *tail = c;
            tail = &c->next;
        }
        v->n++;
        jp_ws(j);
        if (j->p >= j->end) return jp_fail(j, "unterminated object");
        if (*j->p == ',') {
            j->p++;
            jp_ws(j);
            continue;
        }
        if (*j->p == '}') {
            j->p++;
            return 0;
        }
        return jp_fail(j, "expected ',' or '}'");
    }
}

/* j->p at the first byte of a value (whitespace already skipped). */
static int jp_value(jp_t *j, json_value_t *v)
{
    if (j->p >= j->end) return jp_fail(j, "unexpected end of input");
    int rc;
    switch (*j->p) {
    case '{':
    case '[':
        if (++j->depth > JSON_MAX_DEPTH) return jp_fail(j, "nesting too deep");
        rc = *j->p == '{' ? jp_object(j, v) : jp_array(j, v);
        j->depth--;
        return rc;
    case '"': {
        j->p++;
        int esc;
        rc = jp_string(j, &v->str, &v->len, &esc);
        if (rc) return rc;
        v->type = JSON_STRING;
        v->flags = esc ? JSON_F_ESCAPED : 0;
        return 0;
    }
    case 't':
        v->type = JSON_TRUE;
        return jp_literal(j, "true", 4);
    case 'f':
        v->type = JSON_FALSE;
        return jp_literal(j, "false", 5);
    case 'n':
        v->type = JSON_NULL;
        return jp_literal(j, "null", 4);
    case 'N':
        if (j->flags & JSON_ALLOW_NONFINITE) {
            const char *start = j->p;
            rc = jp_literal(j, "NaN", 3);
            if (rc) return rc;
            v->type = JSON_NUMBER;
            v->flags = JSON_F_NONFINITE;
            v->str = start;
            v->len = 3;
            return 0;
        }
        return jp_fail(j, "unexpected character");
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9') ||
            ((j->flags & JSON_ALLOW_NONFINITE) && *j->p == 'I'))
            return jp_number(j, v);
        return jp_fail(j, "unexpected character");
    }
}

static int jp_document(jp_t *j, json_value_t *v)
{
    jp_ws(j);
    int rc = jp_value(j, v);
    if (rc) return rc;
    jp_ws(j);
    if (j->p != j->end) return jp_fail(j, "trailing characters after the value");
    return 0;
}

int json_parse(json_arena_t *a, const char *s, size_t n, unsigned flags, json_value_t **out,
               oct_errbuf_t *eb)
{
    jp_t j = {s, s, s + n, a, flags, eb, 0};
    json_value_t *v = json_arena_alloc(a, sizeof *v);
    memset(v, 0, sizeof *v);
    int rc = jp_document(&j, v);
    if (rc) return rc;
    *out = v;
    return 0;
}

int json_validate(const char *s, size_t n, unsigned flags, oct_errbuf_t *eb)
{
    jp_t j = {s, s, s + n, NULL, flags, eb, 0};
    json_value_t v;
    memset(&v, 0, sizeof v);
    return jp_document(&j, &v);
}

/* ---- streaming ---------------------------------------------------------- */

int json_stream_open(json_stream_t *st, const char *s, size_t n, unsigned flags, oct_errbuf_t *eb)
{
    jp_t j = {s, s, s + n, NULL, flags, eb, 0};
    jp_ws(&j);
    if (j.p >= j.end || *j.p != '[') return jp_fail(&j, "expected '['");
    st->s = s;
    st->p = j.p + 1;
    st->end = s + n;
    st->flags = flags;
    st->state = 0;
    return 0;
}

int json_stream_next(json_stream_t *st, json_arena_t *a, json_value_t **out, oct_errbuf_t *eb)
{
    jp_t j = {st->s, st->p, st->end, a, st->flags, eb, 1};
    if (st->state == 2) return 0;
    jp_ws(&j);
    if (j.p >= j.end) return jp_fail(&j, "unterminated array");
    int closing = *j.p == ']';
    if (st->state == 1 && !closing) {
        if (*j.p != ',') return jp_fail(&j, "expected ',' or ']'");
        j.p++;
        jp_ws(&j); /* a ']' now is a trailing comma: jp_value rejects it */
    }
    if (closing) {
        j.p++;
        jp_ws(&j);
        if (j.p != j.end) return jp_fail(&j, "trailing characters after the value");
        st->p = j.p;
        st->state = 2;
        return 0;
    }
    json_value_t *v = json_arena_alloc(a, sizeof *v);
    memset(v, 0, sizeof *v);
    int rc = jp_value(&j, v);
    if (rc) return rc;
    st->p = j.p;
    st->state = 1;
    *out = v;
    return 1;
}

/* ---- accessors ---------------------------------------------------------- */

json_value_t *json_obj_get(const json_value_t *o, const char *key)
{
    if (!o || o->type != JSON_OBJECT) return NULL;
    size_t kl = strlen(key);
    json_value_t *found = NULL;
    for (json_value_t *c = o->child; c; c = c->next)
        if (c->key_len == kl && memcmp(c->key, key, kl) == 0) found = c;
    return found;
}

int json_number_i64(const json_value_t *v, int64_t *out)
{
    if (!v || v->type != JSON_NUMBER || !(v->flags & JSON_F_INTEGER)) return OCT_EPARSE;
    const char *p = v->str, *e = v->str + v->len;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= e) return OCT_EPARSE;
    uint64_t acc = 0;
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; p < e; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return OCT_EPARSE;
        if (acc > (lim - d) / 10) return OCT_ERANGE;
        acc = acc * 10 + d;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int json_number_double(const json_value_t *v, double *out)
{
    if (!v || v->type != JSON_NUMBER) return OCT_EPARSE;
    char buf[512];
    if (v->len >= sizeof buf) {
        char *h = xmalloc(v->len + 1);
        memcpy(h, v->str, v->len);
        h[v->len] = '\0';
        char *end;
        errno = 0;
        *out = strtod(h, &end);
        int ok = *end == '\0';
        free(h);
        return ok ? 0 : OCT_EPARSE;
    }
    memcpy(buf, v->str, v->len);
    buf[v->len] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return *end == '\0' ? 0 : OCT_EPARSE;
}

int json_str_eq(const json_value_t *v, const char *s)
{
    size_t n = strlen(s);
    return v && v->type == JSON_STRING && v->len == n && memcmp(v->str, s, n) == 0;
}

/* ---- writer ------------------------------------------------------------- */

void json_w_init(json_writer_t *w, oct_strbuf_t *sb)
{
    w->sb = sb;
    w->need_comma = 0;
    w->depth = 0;
    w->after_key = 0;
}

/* Called before every value or key. */
static void jw_item(json_writer_t *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    uint64_t bit = 1ull << (w->depth & 63);
    if (w->need_comma & bit) oct_strbuf_append(w->sb, ",", 1);
    w->need_comma |= bit;
}

static void jw_open(json_writer_t *w, char c)
{
    jw_item(w);
    oct_strbuf_append(w->sb, &c, 1);
    w->depth++;
    w->need_comma &= ~(1ull << (w->depth & 63));
}

static void jw_close(json_writer_t *w, char c)
{
    oct_strbuf_append(w->sb, &c, 1);
    w->depth--;
}

void json_w_obj_begin(json_writer_t *w)
{
    jw_open(w, '{');
}
void json_w_obj_end(json_writer_t *w)
{
    jw_close(w, '}');
}
void json_w_arr_begin(json_writer_t *w)
{
    jw_open(w, '[');
}
void json_w_arr_end(json_writer_t *w)
{
    jw_close(w, ']');
}

void json_w_keyn(json_writer_t *w, const char *key, size_t n)
{
    jw_item(w);
    oct_strbuf_json_string(w->sb, key, n);
    oct_strbuf_append(w->sb, ":", 1);
    w->after_key = 1;
}

void json_w_key(json_writer_t *w, const char *key)
{
    json_w_keyn(w, key, strlen(key));
}

void json_w_strn(json_writer_t *w, const char *s, size_t n)
{
    jw_item(w);
    oct_strbuf_json_string(w->sb, s, n);
}

void json_w_str(json_writer_t *w, const char *s)
{
    if (!s) {
        json_w_null(w);
        return;
    }
    json_w_strn(w, s, strlen(s));
}

void json_w_int(json_writer_t *w, int64_t v)
{
    jw_item(w);
    char buf[OCT_ITOA_MAX];
    oct_strbuf_append(w->sb, buf, oct_i64toa(v, buf));
}

void json_w_uint(json_writer_t *w, uint64_t v)
{
    jw_item(w);
    char buf[OCT_ITOA_MAX];
    oct_strbuf_append(w->sb, buf, oct_u64toa(v, buf));
}

void json_w_double(json_writer_t *w, double v)
{
    if (!isfinite(v)) {
        json_w_str(w, isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity"));
        return;
    }
    jw_item(w);
    char buf[OCT_DTOA_BUF];
    oct_strbuf_append(w->sb, buf, oct_dtoa(v, buf));
}

void json_w_bool(json_writer_t *w, int v)
{
    jw_item(w);
    oct_strbuf_puts(w->sb, v ? "true" : "false");
}

void json_w_null(json_writer_t *w)
{
    jw_item(w);
    oct_strbuf_puts(w->sb, "null");
}

void json_w_raw(json_writer_t *w, const char *json, size_t n)
{
    jw_item(w);
    oct_strbuf_append(w->sb, json, n);
}

void json_w_value(json_writer_t *w, const json_value_t *v)
{
    switch ((json_type_t)v->type) {
    case JSON_NULL:
        json_w_null(w);
        break;
    case JSON_FALSE:
        json_w_bool(w, 0);
        break;
    case JSON_TRUE:
        json_w_bool(w, 1);
        break;
    case JSON_NUMBER:
        if (v->flags & JSON_F_NONFINITE)
            json_w_strn(w, v->str, v->len);
        else
            json_w_raw(w, v->str, v->len);
        break;
    case JSON_STRING:
        json_w_strn(w, v->str, v->len);
        break;
    case JSON_ARRAY:
        json_w_arr_begin(w);
        for (const json_value_t *c = v->child; c; c = c->next)
            json_w_value(w, c);
        json_w_arr_end(w);
        break;
    case JSON_OBJECT:
        json_w_obj_begin(w);
        for (const json_value_t *c = v->child; c; c = c->next) {
            json_w_keyn(w, c->key, c->key_len);
            json_w_value(w, c);
        }
        json_w_obj_end(w);
        break;
    }
}
