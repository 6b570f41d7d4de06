/* retention.h -- expiring data by its own time, not by write time
 * (docs/retention.md).
 *
 * Rules (tsd.storage.retention.*, loaded and checked by tsdb_open; a bad
 * one stops it with OCT_ECONFIG naming the key):
 *   raw              the data table
 *   table.<name>     a 2.4 rollup or pre-aggregate table of tsd.rollups.config
 *   metric.<prefix>  the data table, for metrics whose name starts with
 *                    <prefix> (the longest matching prefix wins; 0 keeps
 *                    them forever whatever raw says)
 * each a duration <n>h|d|w|n|y (n = 30 days, y = 365 days) or 0 (keep
 * forever, the default).
 *
 * Hour-aligned: with a rule keeping R, at time now the CUT is the start of
 * now's hour minus R. A point (or a rollup value, stamped with its
 * interval's start) before the cut is never shown: the reads of read.h,
 * select.h's last point and rollup.h begin at the cut, so an hour is
 * wholly visible or wholly gone, at once, whatever the store still holds.
 * The store gives the space back in passes (tsdb_retention_run, in the
 * TSD every tsd.storage.retention.interval_ms): every partition of a table
 * wholly before its cut (a data-table hour, a rollup row span) is dropped
 * with store_part_drop, one range per salt bucket and metric.
 *
 * Not expired: UIDs, TSMeta and UIDMeta, global annotations (their rows
 * have metric UID 0) and the annotation index. A series' own annotations
 * live in its data rows (2.4's layout) and go with their hour.
 *
 * Threads: every function may be called from any thread; one pass runs at
 * a time (a second caller waits). Errors are returned with text in eb. */
#ifndef OCT_TSDB_RETENTION_H
#define OCT_TSDB_RETENTION_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "tsdb/tsdb.h"

/* 1 if any rule keeps data for a limited time, else 0. */
int tsdb_retention_enabled(const tsdb_t *db);

/* The first millisecond visible at now_ms in the data table for metric
 * UID `metric` (table NULL), or in 2.4 table `table` (metric unused), or
 * INT64_MIN when that data is kept forever. */
int64_t tsdb_retention_cut_ms(tsdb_t *db, const char *table, uint64_t metric, int64_t now_ms);

/* What one pass dropped (or, dry, would drop): partitions, as the store
 * lays them out: one per salt bucket, metric and hour of the data table,
 * one per salt bucket, metric and row span of a rollup table. */
typedef struct {
    uint64_t raw_parts;
    uint64_t rollup_parts;
} tsdb_retention_report_t;

/* One pass at now_ms: drops every partition wholly before its table's cut
 * (dry_run: only counts them). Returns 0 or a storage error (what was
 * dropped before it stays dropped; *rep counts it). May block for long. */
OCT_MUST_CHECK int tsdb_retention_run(tsdb_t *db, int64_t now_ms, int dry_run,
                                      tsdb_retention_report_t *rep, oct_errbuf_t *eb);

/* Starts the background thread of the TSD: a pass at once, then every
 * tsd.storage.retention.interval_ms, until tsdb_close. Nothing to do (0)
 * when no rule limits anything or the store is read-only. Returns 0 or
 * OCT_EIO (no thread). */
OCT_MUST_CHECK int tsdb_retention_start(tsdb_t *db, oct_errbuf_t *eb);

/* Counters since open, for /api/stats. */
typedef struct {
    uint64_t passes;       /* passes finished (the background's and tsdb_retention_run's) */
    uint64_t errors;       /* passes that failed */
    uint64_t raw_parts;    /* data-table partitions dropped */
    uint64_t rollup_parts; /* rollup and pre-aggregate partitions dropped */
} tsdb_retention_stats_t;

void tsdb_retention_stats(tsdb_t *db, tsdb_retention_stats_t *out);

#endif
