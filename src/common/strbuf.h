/* strbuf.h -- a growable byte string for building output (CLI lines, JSON).
 * Owns its memory (xmalloc: aborts on OOM); always NUL-terminated. */
#ifndef OCT_COMMON_STRBUF_H
#define OCT_COMMON_STRBUF_H

#include <stddef.h>

typedef struct {
    char *ptr; /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;
} oct_strbuf_t;

#define OCT_STRBUF_INIT                                                                            \
    {                                                                                              \
        0                                                                                          \
    }

void oct_strbuf_free(oct_strbuf_t *sb);
void oct_strbuf_reset(oct_strbuf_t *sb);
void oct_strbuf_append(oct_strbuf_t *sb, const void *p, size_t n);
/* Makes room for extra more bytes at once (a big answer whose size is
 * known ahead is not copied at every doubling). */
void oct_strbuf_reserve(oct_strbuf_t *sb, size_t extra);
void oct_strbuf_puts(oct_strbuf_t *sb, const char *s);
void oct_strbuf_printf(oct_strbuf_t *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. Bytes >= 0x80 are
 * copied as is (the input is expected to be UTF-8); controls are escaped. */
void oct_strbuf_json_string(oct_strbuf_t *sb, const char *s, size_t n);
/* The string so far ("" if empty); valid until the next append or free. */
const char *oct_strbuf_cstr(const oct_strbuf_t *sb);
/* Appends the whole file at path. Returns 0, or a negative errno (never 0
 * on failure) with what was read so far left in sb. */
int oct_strbuf_read_file(oct_strbuf_t *sb, const char *path);

#endif
