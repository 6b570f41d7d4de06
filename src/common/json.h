/* json.h -- a strict, zero-copy JSON parser (RFC 8259) and a writer on top
 * of strbuf.
 *
 * Design: the parser turns a document (or, for large bodies, one element of
 * a top-level array at a time, see json_stream_t) into a small DOM whose
 * nodes live in a json_arena_t. Nothing is copied that need not be: a
 * string without escapes points straight into the input, and every number is
 * kept as its literal text (so /api/put's "value" keeps the text the client
 * sent, as OpenTSDB binds it to a String). Only strings with escapes are
 * decoded (\uXXXX and surrogate pairs to UTF-8) into the arena. Strictness:
 * no comments, no trailing commas, no leading zeros / '+' / bare '.', no
 * control characters or invalid UTF-8 inside strings, no lone surrogates,
 * nothing but whitespace after the value. Nesting deeper than
 * JSON_MAX_DEPTH fails with an error instead of recursing without bound.
 * Object members keep their order; duplicate keys are kept and
 * json_obj_get returns the LAST one (Jackson's binding: the last setter
 * wins).
 *
 * Lifetimes: values borrow the input text (which must outlive them) and the
 * arena (until json_arena_reset/free).
 *
 * Threads: no shared state; an arena, a stream or a writer belongs to one
 * thread at a time. */
#ifndef OCT_COMMON_JSON_H
#define OCT_COMMON_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

#define JSON_MAX_DEPTH 128

/* ---- arena -------------------------------------------------------------- */

/* A bump allocator: blocks chained, freed all at once. Aborts on OOM. */
typedef struct json_arena_block json_arena_block_t;
typedef struct {
    json_arena_block_t *head; /* current block (first in chain) */
    size_t block_size;        /* default size of new blocks */
    size_t bytes;             /* bytes handed out since the last reset */
} json_arena_t;

#define JSON_ARENA_INIT                                                                            \
    {                                                                                              \
        0                                                                                          \
    }
/* Memory of n bytes aligned for any type; valid until reset/free. */
void *json_arena_alloc(json_arena_t *a, size_t n);
/* Copy of p[0..n) plus a NUL. */
char *json_arena_strndup(json_arena_t *a, const char *p, size_t n);
/* Forgets every allocation but keeps one block for reuse. */
void json_arena_reset(json_arena_t *a);
void json_arena_free(json_arena_t *a);

/* ---- values ------------------------------------------------------------- */

typedef enum {
    JSON_NULL = 0,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER, /* str/len = the literal text, e.g. "-1.5e3" */
    JSON_STRING, /* str/len = decoded UTF-8 (NUL-terminated only if JSON_ESCAPED) */
    JSON_ARRAY,
    JSON_OBJECT,
} json_type_t;

enum {
    JSON_F_ESCAPED = 1u << 0,   /* string: decoded into the arena (had escapes) */
    JSON_F_INTEGER = 1u << 1,   /* number: no fraction, no exponent */
    JSON_F_NONFINITE = 1u << 2, /* number: the NaN/Infinity token (JSON_ALLOW_NONFINITE) */
};

typedef struct json_value json_value_t;
struct json_value {
    uint8_t type;    /* json_type_t */
    uint8_t flags;   /* JSON_F_* */
    uint32_t n;      /* array: elements; object: members */
    const char *str; /* number text or string bytes (not NUL-terminated in general) */
    size_t len;
    const char *key; /* member key when inside an object (decoded), else NULL */
    size_t key_len;
    json_value_t *child; /* first element / member */
    json_value_t *next;  /* next sibling */
};

/* Parser options. */
enum {
    /* Accept NaN, Infinity, -Infinity as number tokens (Jackson's
     * ALLOW_NON_NUMERIC_NUMBERS, which OpenTSDB turns on). */
    JSON_ALLOW_NONFINITE = 1u << 0,
};

/* Parses the whole document s[0..n). Returns 0 and *out, or OCT_EPARSE with
 * "<reason> at offset <k>" in eb (reasons include "nesting too deep"). */
OCT_MUST_CHECK int json_parse(json_arena_t *a, const char *s, size_t n, unsigned flags,
                              json_value_t **out, oct_errbuf_t *eb);

/* Checks that s[0..n) is one valid document without building anything.
 * Returns 0 or OCT_EPARSE (as json_parse). */
OCT_MUST_CHECK int json_validate(const char *s, size_t n, unsigned flags, oct_errbuf_t *eb);

/* Member `key` of an object (last occurrence), or NULL (also if o is not an
 * object). */
json_value_t *json_obj_get(const json_value_t *o, const char *key);

/* Number text -> integer with JSON integer rules (optional '-', digits; no
 * fraction/exponent), overflow rejected. Returns 0 or OCT_EPARSE/OCT_ERANGE. */
OCT_MUST_CHECK int json_number_i64(const json_value_t *v, int64_t *out);
/* Number text -> double (strtod on a bounded copy). 0 or OCT_EPARSE. */
OCT_MUST_CHECK int json_number_double(const json_value_t *v, double *out);
/* 1 if v is a string equal to s. */
int json_str_eq(const json_value_t *v, const char *s);

/* ---- streaming a top-level array ------------------------------------------ */

/* For large bodies (/api/put): walks a document whose top level is an array,
 * building one element at a time into an arena the caller may reset between
 * elements, so memory stays bounded by the largest element. */
typedef struct {
    const char *s, *p, *end;
    unsigned flags;
    int state; /* 0 = before first element, 1 = after an element, 2 = done */
} json_stream_t;

/* Skips leading whitespace and opens the top-level '['. Returns 0, or
 * OCT_EPARSE if the document does not start with '['. */
OCT_MUST_CHECK int json_stream_open(json_stream_t *st, const char *s, size_t n, unsigned flags,
                                    oct_errbuf_t *eb);
/* Next element into *out: 1, 0 at the end (the closing ']' and only
 * whitespace after it), or OCT_EPARSE. */
OCT_MUST_CHECK int json_stream_next(json_stream_t *st, json_arena_t *a, json_value_t **out,
                                    oct_errbuf_t *eb);

/* ---- writer ------------------------------------------------------------- */

/* Appends JSON to a strbuf, inserting commas itself. Keys and values are
 * written with oct_strbuf_json_string (UTF-8 passed through, controls
 * escaped). Nesting up to 64 levels. */
typedef struct {
    oct_strbuf_t *sb;
    uint64_t need_comma; /* bit d: the container at depth d already has an item */
    int depth;
    int after_key;
} json_writer_t;

void json_w_init(json_writer_t *w, oct_strbuf_t *sb);
void json_w_obj_begin(json_writer_t *w);
void json_w_obj_end(json_writer_t *w);
void json_w_arr_begin(json_writer_t *w);
void json_w_arr_end(json_writer_t *w);
void json_w_key(json_writer_t *w, const char *key);
void json_w_keyn(json_writer_t *w, const char *key, size_t n);
void json_w_str(json_writer_t *w, const char *s); /* NULL writes null */
void json_w_strn(json_writer_t *w, const char *s, size_t n);
void json_w_int(json_writer_t *w, int64_t v);
void json_w_uint(json_writer_t *w, uint64_t v);
/* Shortest text that reads back to the same double; NaN/Inf as "NaN" strings
 * (Jackson's quoting of non-finite doubles). */
void json_w_double(json_writer_t *w, double v);
void json_w_bool(json_writer_t *w, int v);
void json_w_null(json_writer_t *w);
/* Pre-serialized JSON text (must be one valid value). */
void json_w_raw(json_writer_t *w, const char *json, size_t n);
/* Re-serializes a parsed value compactly. */
void json_w_value(json_writer_t *w, const json_value_t *v);

#endif
