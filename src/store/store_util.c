/* store_util.c -- the argument checks, data-dir creation and scratch
 * buffer every backend shares (store_util.h). */
#include "store/store_util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xmalloc.h"

int store__check_part(oct_slice_t part, oct_errbuf_t *eb)
{
    if (part.len < 1 || part.len > STORE_PART_MAX)
        return oct_err(eb, OCT_EINVAL, "partition length %zu not in 1..%d", part.len,
                       STORE_PART_MAX);
    return 0;
}

int store__check_row(oct_slice_t row, oct_errbuf_t *eb)
{
    if (row.len < 1 || row.len > STORE_ROW_MAX)
        return oct_err(eb, OCT_EINVAL, "row key length %zu not in 1..%d", row.len, STORE_ROW_MAX);
    return 0;
}

int store__check_family(oct_slice_t f, int allow_empty, oct_errbuf_t *eb)
{
    if (f.len == 0 && allow_empty) return 0;
    if (f.len < 1 || f.len > STORE_FAMILY_MAX)
        return oct_err(eb, OCT_EINVAL, "family length %zu not in 1..%d", f.len, STORE_FAMILY_MAX);
    if (memchr(f.ptr, 0, f.len)) return oct_err(eb, OCT_EINVAL, "family contains a NUL byte");
    return 0;
}

int store__check_qualifier(oct_slice_t q, oct_errbuf_t *eb)
{
    if (q.len > STORE_QUALIFIER_MAX)
        return oct_err(eb, OCT_EINVAL, "qualifier length %zu over %d", q.len, STORE_QUALIFIER_MAX);
    return 0;
}

int store__check_table(const void *st, store_table_t t, oct_errbuf_t *eb)
{
    if (!st || (unsigned)t >= STORE_TABLE_COUNT)
        return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return 0;
}

int store__check_writable(int read_only, const char *dir, oct_errbuf_t *eb)
{
    if (read_only) return oct_err(eb, OCT_EINVAL, "store %s is open read-only", dir);
    return 0;
}

int store__check_op(const store_op_t *op, oct_errbuf_t *eb)
{
    int rc;
    if (op->kind < STORE_OP_PUT || op->kind > STORE_OP_DELETE_ROW)
        return oct_err(eb, OCT_EINVAL, "bad op kind %d", (int)op->kind);
    if ((rc = store__check_row(op->cell.row, eb))) return rc;
    if (op->kind == STORE_OP_DELETE_ROW) return 0;
    if ((rc = store__check_family(op->cell.family, 0, eb))) return rc;
    return store__check_qualifier(op->cell.qualifier, eb);
}

int store__check_scan_spec(const store_scan_spec_t *spec, oct_errbuf_t *eb)
{
    int rc;
    if ((rc = store__check_part(spec->part, eb)) || (rc = store__check_family(spec->family, 1, eb)))
        return rc;
    if (spec->start_row.len > STORE_ROW_MAX || spec->stop_row.len > STORE_ROW_MAX)
        return oct_err(eb, OCT_EINVAL, "scan bound longer than %d bytes", STORE_ROW_MAX);
    return 0;
}

int store__dir_has(const char *dir, const char *name)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return 0;
    return access(path, F_OK) == 0;
}

int store__mkdir_p(const char *dir)
{
    char *p = xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            rc = -errno;
            break;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return rc;
}

uint8_t *store__buf_reserve(store_buf_t *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->len + n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}
