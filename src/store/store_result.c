/* store_result.c -- the owning cell list shared by every backend. */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

static const char *const store_default_names[STORE_TABLE_COUNT] = {
    "tsdb", "tsdb-uid", "tsdb-meta", "tsdb-tree", "octsdb-sys", "octsdb-rollup",
};

const char *store_table_default_name(store_table_t t)
{
    return (unsigned)t < STORE_TABLE_COUNT ? store_default_names[t] : NULL;
}

void store_result_init(store_result_t *r)
{
    memset(r, 0, sizeof *r);
}

void store_result_reset(store_result_t *r)
{
    r->n = 0;
    r->buf_len = 0;
}

void store_result_free(store_result_t *r)
{
    free(r->cells);
    free(r->buf);
    memset(r, 0, sizeof *r);
}

/* Slices point into buf; before buf moves they are turned into offsets and
 * back into pointers after, so callers always see valid slices (and no
 * freed pointer is ever used). */
void store_result_add(store_result_t *r, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier,
                      oct_slice_t value)
{
    size_t need = row.len + family.len + qualifier.len + value.len;
    if (r->buf_len + need > r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap : 256;
        while (cap < r->buf_len + need)
            cap *= 2;
        size_t *offs = r->n ? xmalloc(4 * r->n * sizeof *offs) : NULL;
        for (size_t i = 0; i < r->n; i++) {
            store_cell_t *c = &r->cells[i];
            offs[4 * i] = (size_t)(c->row.ptr - r->buf);
            offs[4 * i + 1] = (size_t)(c->family.ptr - r->buf);
            offs[4 * i + 2] = (size_t)(c->qualifier.ptr - r->buf);
            offs[4 * i + 3] = (size_t)(c->value.ptr - r->buf);
        }
        r->buf = xrealloc(r->buf, cap);
        r->buf_cap = cap;
        for (size_t i = 0; i < r->n; i++) {
            store_cell_t *c = &r->cells[i];
            c->row.ptr = r->buf + offs[4 * i];
            c->family.ptr = r->buf + offs[4 * i + 1];
            c->qualifier.ptr = r->buf + offs[4 * i + 2];
            c->value.ptr = r->buf + offs[4 * i + 3];
        }
        free(offs);
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->cells = xrealloc(r->cells, r->cap * sizeof *r->cells);
    }
    store_cell_t *c = &r->cells[r->n++];
    oct_slice_t *parts[4] = {&c->row, &c->family, &c->qualifier, &c->value};
    const oct_slice_t src[4] = {row, family, qualifier, value};
    for (int i = 0; i < 4; i++) {
        uint8_t *dst = r->buf + r->buf_len;
        if (src[i].len) memcpy(dst, src[i].ptr, src[i].len);
        parts[i]->ptr = dst;
        parts[i]->len = src[i].len;
        r->buf_len += src[i].len;
    }
}
