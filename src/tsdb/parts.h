/* parts.h -- internal to the tsdb module (nothing outside src/tsdb may
 * include it): the partitions of the data table that hold a series' rows,
 * or a metric's, over a range of hours.
 *
 * A data-table partition is the row key's prefix: salt, metric UID, base
 * hour (codec_rowkey_partition_prefix_len bytes). Listing the partitions
 * between the first and the last hour's prefix and keeping those of the
 * same salt and metric gives every hour that has rows, without probing the
 * empty ones.
 *
 * Threads: a tsdb_parts_t belongs to one thread at a time. */
#ifndef OCT_TSDB_PARTS_H
#define OCT_TSDB_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/err.h"
#include "store/store.h"
#include "tsdb/tsdb.h"

/* Partition keys, back to back. Zero-initialise; the buffers are kept from
 * one collect to the next. */
typedef struct {
    uint8_t *buf;
    size_t used, bcap;
    size_t *off; /* key i is buf[off[i] .. off[i + 1]) */
    size_t n, ocap;
} tsdb_parts_t;

/* Replaces the list by the data table's partitions from first[0..plen) to
 * last[0..plen) inclusive that share first's salt and metric (all but the
 * timestamp bytes) and are plen long. first and last may be whole row keys:
 * only their prefixes are read. With first == NULL: every partition of the
 * table (last and plen unused). Returns 0 or a storage error. */
OCT_MUST_CHECK int tsdb__parts_collect(tsdb_t *db, const uint8_t *first, const uint8_t *last,
                                       size_t plen, tsdb_parts_t *pl, oct_errbuf_t *eb);

/* Replaces the list by every partition of table t of store st in
 * [start, stop) (len 0 = unbounded), in byte order: any table, any store
 * (`octsdb copy` walks two). Returns 0 or a storage error. */
OCT_MUST_CHECK int tsdb__parts_list(store_t *st, store_table_t t, oct_slice_t start,
                                    oct_slice_t stop, tsdb_parts_t *pl, oct_errbuf_t *eb);

/* The i-th partition key. */
static inline oct_slice_t tsdb__part(const tsdb_parts_t *pl, size_t i)
{
    return oct_slice(pl->buf + pl->off[i], pl->off[i + 1] - pl->off[i]);
}

void tsdb__parts_free(tsdb_parts_t *pl);

#endif
