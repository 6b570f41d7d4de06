/* strbuf.c -- see strbuf.h. */
#include "common/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

static void strbuf_reserve(oct_strbuf_t *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    sb->ptr = xrealloc(sb->ptr, cap);
    sb->cap = cap;
}

void oct_strbuf_free(oct_strbuf_t *sb)
{
    free(sb->ptr);
    sb->ptr = NULL;
    sb->len = sb->cap = 0;
}

void oct_strbuf_reset(oct_strbuf_t *sb)
{
    sb->len = 0;
    if (sb->ptr) sb->ptr[0] = '\0';
}

void oct_strbuf_reserve(oct_strbuf_t *sb, size_t extra)
{
    strbuf_reserve(sb, extra);
}

void oct_strbuf_append(oct_strbuf_t *sb, const void *p, size_t n)
{
    strbuf_reserve(sb, n);
    if (n) memcpy(sb->ptr + sb->len, p, n);
    sb->len += n;
    sb->ptr[sb->len] = '\0';
}

void oct_strbuf_puts(oct_strbuf_t *sb, const char *s)
{
    oct_strbuf_append(sb, s, strlen(s));
}

void oct_strbuf_printf(oct_strbuf_t *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    strbuf_reserve(sb, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(sb->ptr + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void oct_strbuf_json_string(oct_strbuf_t *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    /* Runs of bytes that need no escape are copied whole: names are almost
     * always one such run, and a call per byte was most of a lookup's CPU. */
    strbuf_reserve(sb, n + 2);
    oct_strbuf_append(sb, "\"", 1);
    size_t run = 0; /* start of the pending unescaped run */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        oct_strbuf_append(sb, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            oct_strbuf_append(sb, "\\\"", 2);
            break;
        case '\\':
            oct_strbuf_append(sb, "\\\\", 2);
            break;
        case '\n':
            oct_strbuf_append(sb, "\\n", 2);
            break;
        case '\r':
            oct_strbuf_append(sb, "\\r", 2);
            break;
        case '\t':
            oct_strbuf_append(sb, "\\t", 2);
            break;
        default: {
            const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            oct_strbuf_append(sb, esc, 6);
        }
        }
    }
    oct_strbuf_append(sb, s + run, n - run);
    oct_strbuf_append(sb, "\"", 1);
}

const char *oct_strbuf_cstr(const oct_strbuf_t *sb)
{
    return sb->ptr ? sb->ptr : "";
}

int oct_strbuf_read_file(oct_strbuf_t *sb, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? -errno : -EIO;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        oct_strbuf_append(sb, buf, n);
    int err = ferror(f);
    fclose(f);
    return err ? -EIO : 0;
}
