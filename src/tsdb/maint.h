/* maint.h -- maintenance of a data dir for the command-line tools: full
 * compaction and bytes on disk (`octsdb compact`), the data table's rows as
 * stored (`octsdb scan`, `fsck`, `query` over raw rows), and deleting a
 * series' rows over a window of hours (`scan --delete`, query delete).
 *
 * These are the only ways above src/tsdb reach the store's data table.
 *
 * Threads: safe from any thread; a row scan's callback runs on the caller's
 * thread. Errors are returned (common/err.h) with their text in eb. */
#ifndef OCT_TSDB_MAINT_H
#define OCT_TSDB_MAINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/err.h"
#include "tsdb/tsdb.h"

/* Compacts every table fully, as HBase's major compaction does; every cell
 * reads the same afterwards. May block for a long time. */
OCT_MUST_CHECK int tsdb_compact(tsdb_t *db, oct_errbuf_t *eb);

/* *bytes = the bytes on disk of every table together. */
OCT_MUST_CHECK int tsdb_disk_usage(tsdb_t *db, uint64_t *bytes, oct_errbuf_t *eb);

/* ---- the data table's rows, as stored ---------------------------------- */

/* One cell of a data row (family t): an OpenTSDB qualifier and value, an
 * octsdb block cell, an annotation... (codec/cell.h classifies them). */
typedef struct {
    oct_slice_t qualifier;
    oct_slice_t value;
} tsdb_cell_t;

/* A row handed to a tsdb_row_fn; everything is borrowed for the call. */
typedef struct {
    oct_slice_t part; /* the partition it was read from */
    oct_slice_t key;  /* the row key (codec/rowkey.h) */
    const tsdb_cell_t *cells;
    size_t n_cells; /* >= 1, in qualifier order */
    /* The same row as the store hands it, for tsdb_fsck_row (tsdb/fsck.h)
     * only: opaque to everything else. */
    const store_result_t *raw;
} tsdb_row_t;

/* Returns 0 to go on, nonzero to stop the scan (which returns it). */
typedef int (*tsdb_row_fn)(void *ctx, const tsdb_row_t *row);

typedef struct {
    int every_row;            /* 1: every row of the table; the rest is ignored */
    uint64_t metric;          /* else the rows of this metric ... */
    int64_t start_ms, end_ms; /* ... whose base hour is in [hour(start), hour(end)] */
} tsdb_rows_spec_t;

/* Calls fn for each selected row, salt bucket by salt bucket, partition by
 * partition, in row-key order. The head (points not yet flushed) is not
 * looked at: flush first (tsdb_flush) to see them. Returns 0, fn's nonzero
 * value, or a storage error. */
OCT_MUST_CHECK int tsdb_scan_rows(tsdb_t *db, const tsdb_rows_spec_t *spec, tsdb_row_fn fn,
                                  void *ctx, oct_errbuf_t *eb);

/* ---- deleting ---------------------------------------------------------- */

/* The rows of one series whose base hour is in [hour(start_ms),
 * hour(end_ms)]. The TSUID is borrowed for the call. */
typedef struct {
    const uint8_t *tsuid;
    size_t tsuid_len;
    int64_t start_ms, end_ms;
} tsdb_window_t;

/* Deletes the rows of n series windows, whole rows as OpenTSDB's query
 * delete does. When n > 0 the head is flushed first, so points not yet
 * written to the store go too (points put while this runs may stay).
 * *rows (may be NULL) receives the number of row deletions issued: one per
 * hour that had a partition of the series' metric and salt. Returns 0 or an
 * error (then some windows may already be deleted). */
OCT_MUST_CHECK int tsdb_delete_window(tsdb_t *db, const tsdb_window_t *w, size_t n, uint64_t *rows,
                                      oct_errbuf_t *eb);

#endif
