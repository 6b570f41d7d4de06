/* parts.c -- the partition collector shared by the read path, annotations,
 * maintenance and copy (see parts.h). */
#include "tsdb/parts.h"

#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/tsdb_int.h"

typedef struct {
    tsdb_parts_t *pl;
    const uint8_t *first; /* NULL: keep every partition */
    size_t plen;
} collect_t;

static int parts_cb(void *ctx, oct_slice_t part)
{
    collect_t *c = ctx;
    tsdb_parts_t *pl = c->pl;
    if (c->first &&
        (part.len != c->plen || memcmp(part.ptr, c->first, c->plen - CODEC_ROWKEY_TS_BYTES)))
        return 0;
    if (pl->used + part.len > pl->bcap) {
        pl->bcap = pl->bcap ? 2 * pl->bcap : 1024;
        while (pl->bcap < pl->used + part.len)
            pl->bcap *= 2;
        pl->buf = xrealloc(pl->buf, pl->bcap);
    }
    if (pl->n + 2 > pl->ocap) {
        pl->ocap = pl->ocap ? 2 * pl->ocap : 64;
        pl->off = xrealloc(pl->off, pl->ocap * sizeof *pl->off);
    }
    memcpy(pl->buf + pl->used, part.ptr, part.len);
    pl->used += part.len;
    pl->off[++pl->n] = pl->used;
    return 0;
}

static int parts_list(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                      collect_t *c, oct_errbuf_t *eb)
{
    tsdb_parts_t *pl = c->pl;
    pl->n = pl->used = 0;
    if (!pl->off) {
        pl->ocap = 64;
        pl->off = xmalloc(pl->ocap * sizeof *pl->off);
    }
    pl->off[0] = 0;
    int rc = store_part_list(st, t, start, stop, parts_cb, c, eb);
    return rc < 0 ? rc : 0;
}

int tsdb__parts_list(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                     tsdb_parts_t *pl, oct_errbuf_t *eb)
{
    collect_t c = {pl, NULL, 0};
    return parts_list(st, t, start, stop, &c, eb);
}

int tsdb__parts_collect(tsdb_t *db, const uint8_t *first, const uint8_t *last, size_t plen,
                        tsdb_parts_t *pl, oct_errbuf_t *eb)
{
    collect_t c = {pl, first, plen};
    oct_slice_t start = oct_slice(NULL, 0), stop = oct_slice(NULL, 0);
    /* stop = last's prefix + 1 as a big-endian number (none past all 0xFF) */
    uint8_t s[CODEC_ROWKEY_MAX_SALT + 8 + CODEC_ROWKEY_TS_BYTES];
    if (first) {
        if (plen > sizeof s) return oct_err(eb, OCT_EINVAL, "partition prefix too long");
        memcpy(s, last, plen);
        size_t i = plen;
        while (i > 0 && s[i - 1] == 0xFF)
            s[--i] = 0;
        if (i) s[i - 1]++;
        start = oct_slice(first, plen);
        stop = oct_slice(s, i ? plen : 0);
    }
    return parts_list(tsdb_store(db), STORE_TABLE_DATA, start, stop, &c, eb);
}

void tsdb__parts_free(tsdb_parts_t *pl)
{
    free(pl->buf);
    free(pl->off);
    memset(pl, 0, sizeof *pl);
}
