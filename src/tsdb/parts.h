/* parts.h -- internal to the tsdb module (nothing outside src/tsdb may
 * include it): the partitions of the data table that hold a series' rows,
 * or a metric's, over a range of hours.
 *
 * A data-table partition is the row key's prefix: salt, metric UID, base
 * hour (codec_rowkey_partition_prefix_len bytes). Listing the partitions
 * between the first and the last hour's prefix and keeping those of the
 * same salt and metric gives every hour that has rows, without probing the
 * empty ones. */
#ifndef OCT_TSDB_PARTS_H
#define OCT_TSDB_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "tsdb/tsdb.h"

/* Partition prefixes, plen bytes each, back to back. Zero-initialise; the
 * buffer is kept from one collect to the next. */
typedef struct {
    uint8_t *buf;
    size_t plen;
    size_t n, cap; /* prefixes held, room for */
} tsdb_parts_t;

/* Replaces the list by the data table's partitions from first[0..plen) to
 * last[0..plen) inclusive that share first's salt and metric (all but the
 * timestamp bytes). first and last may be whole row keys: only their
 * prefixes are read. Returns 0 or a storage error. */
OCT_MUST_CHECK int tsdb__parts_collect(tsdb_t *db, const uint8_t *first, const uint8_t *last,
                                       size_t plen, tsdb_parts_t *pl, oct_errbuf_t *eb);

/* The i-th prefix (plen bytes). */
static inline const uint8_t *tsdb__part(const tsdb_parts_t *pl, size_t i)
{
    return pl->buf + i * pl->plen;
}

void tsdb__parts_free(tsdb_parts_t *pl);

#endif
