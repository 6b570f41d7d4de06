/* parts.c -- the partition collector shared by the read path, annotations
 * and maintenance (see parts.h). */
#include "tsdb/parts.h"

#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/xmalloc.h"
#include "store/store.h"

typedef struct {
    tsdb_parts_t *pl;
    const uint8_t *first;
} collect_t;

static int parts_cb(void *ctx, oct_slice_t part)
{
    collect_t *c = ctx;
    tsdb_parts_t *pl = c->pl;
    if (part.len != pl->plen || memcmp(part.ptr, c->first, pl->plen - CODEC_ROWKEY_TS_BYTES))
        return 0;
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? 2 * pl->cap : 16;
        pl->buf = xrealloc(pl->buf, pl->cap * pl->plen);
    }
    memcpy(pl->buf + pl->n++ * pl->plen, part.ptr, pl->plen);
    return 0;
}

int tsdb__parts_collect(tsdb_t *db, const uint8_t *first, const uint8_t *last, size_t plen,
                        tsdb_parts_t *pl, oct_errbuf_t *eb)
{
    if (pl->plen != plen) {
        pl->cap = 0; /* the buffer is counted in prefixes of the old length */
        free(pl->buf);
        pl->buf = NULL;
        pl->plen = plen;
    }
    pl->n = 0;
    /* stop = last's prefix + 1 as a big-endian number (none past all 0xFF) */
    uint8_t stop[CODEC_ROWKEY_MAX_SALT + 8 + CODEC_ROWKEY_TS_BYTES];
    if (plen > sizeof stop) return oct_err(eb, OCT_EINVAL, "partition prefix too long");
    memcpy(stop, last, plen);
    size_t i = plen;
    while (i > 0 && stop[i - 1] == 0xFF)
        stop[--i] = 0;
    if (i) stop[i - 1]++;
    collect_t c = {pl, first};
    int rc = store_part_list(tsdb_store(db), STORE_TABLE_DATA, oct_slice(first, plen),
                             oct_slice(stop, i ? plen : 0), parts_cb, &c, eb);
    return rc < 0 ? rc : 0;
}

void tsdb__parts_free(tsdb_parts_t *pl)
{
    free(pl->buf);
    memset(pl, 0, sizeof *pl);
}
