/* delete_rollup.h -- internal to the tsdb module (nothing outside src/tsdb
 * may include it): the parts of octsdb's delete (delete.h) beyond the raw
 * data table, docs/delete.md "Rollups" and "Lookups".
 *
 * Threads: the caller holds the writer's flush lock (one delete or flush
 * pass at a time); tw_series_forget also needs the put barrier held for
 * writing, or the single-threaded WAL replay. Errors are returned with
 * their text in eb. */
#ifndef OCT_TSDB_DELETE_ROLLUP_H
#define OCT_TSDB_DELETE_ROLLUP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "tsdb/delete.h"
#include "tsdb/series.h"

/* Is series tsuid[0..len) one spec names (its metric, tsuids or tags)? */
int tsdb__delete_selected(const tsdb_writer_t *w, const tsdb_delete_spec_t *sp,
                          const uint8_t *tsuid, size_t len);

/* The cut cells of auto-made tables, kept between the two steps below. */
typedef struct tsdb_delru tsdb_delru_t;

/* Step 1, with the raw rows of the range already rewritten: in every rollup
 * and pre-aggregate table, each cell of a selected series whose interval
 * meets [lo_ms, hi_ms] is deleted (a row whose every cell goes, as a row).
 * A cell whose interval the range cuts is remembered in *redo (to be
 * recomputed) when the TSD makes its table and the raw data of the whole
 * interval is retained, else counted as dropped. dry_run: counts only (*redo
 * stays NULL). Counts go to c (rollup_rows, rollup_cells, rollup_recomputed,
 * rollup_dropped). *redo (may be NULL) is freed by step 2. */
OCT_MUST_CHECK int tsdb__delete_rollup_cells(tsdb_t *db, const tsdb_delete_spec_t *sp,
                                             int64_t lo_ms, int64_t hi_ms, tsdb_delete_counts_t *c,
                                             tsdb_delru_t **redo, oct_errbuf_t *eb);

/* Step 2, once reads of the metric no longer wait for the delete: the
 * hours of the remembered cells recomputed from the raw points left (the
 * head too), then the long periods holding them from their hour cells.
 * Frees redo (NULL is fine). */
OCT_MUST_CHECK int tsdb__delete_rollup_redo(tsdb_t *db, tsdb_delru_t *redo, oct_errbuf_t *eb);

/* An all-time delete of key[0..len) (a metric UID: every series of it; or
 * a TSUID: that series), or, with sp, of the series sp selects: each such
 * series whose head holds no point (one put after the delete's log record
 * keeps it) is flagged gone, leaves the series index, and its persisted
 * record is deleted, so neither a lookup nor a restart lists it. The next
 * point put to it brings it back (tw_series_revive). Returns the number of
 * series forgotten, or a storage error. */
OCT_MUST_CHECK long tw_series_forget(tsdb_writer_t *w, const tsdb_delete_spec_t *sp,
                                     const uint8_t *key, size_t len, oct_errbuf_t *eb);

/* Completes a delete a crash interrupted after its log record was durable
 * (its record in octsdb-sys, docs/format/layout.md "Pending delete"), at
 * open, once the log is replayed. Returns 0 (also when there is none) or
 * the error that stopped it (the record stays for the next open). */
OCT_MUST_CHECK int tsdb__delete_resume(tsdb_t *db, oct_errbuf_t *eb);

#endif
