/* xmalloc.c -- allocate or abort. */
#include "common/xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xmalloc_oom(size_t n)
{
    fprintf(stderr, "octsdb: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) xmalloc_oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) xmalloc_oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) xmalloc_oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xmemdup(s, strlen(s) + 1);
}

void *xmemdup(const void *p, size_t n)
{
    void *q = xmalloc(n);
    if (n) memcpy(q, p, n);
    return q;
}

char *xstrndup(const char *p, size_t n)
{
    char *q = xmalloc(n + 1);
    if (n) memcpy(q, p, n);
    q[n] = '\0';
    return q;
}
