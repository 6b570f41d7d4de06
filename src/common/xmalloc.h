/* xmalloc.h -- allocation that aborts on failure (Redis's zmalloc policy).
 * Use these for internal bookkeeping; allocations sized by outside input use
 * plain malloc and report -ENOMEM instead. */
#ifndef OCT_COMMON_XMALLOC_H
#define OCT_COMMON_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
void *xmemdup(const void *p, size_t n);
/* A NUL-terminated copy of p[0..n) (p need not be terminated). */
char *xstrndup(const char *p, size_t n);

#endif
