/* rollup.h -- storing and reading OpenTSDB 2.4's rollups and
 * pre-aggregates (docs/rollups.md; bytes in docs/format/rollup.md).
 *
 * The configuration is loaded by tsdb_open (tsd.rollups.*, checked there
 * with 2.4's start-up errors) and lives as long as the handle. A rollup
 * point is stored at once as one cell of the store table octsdb-rollup, in
 * the partition of its 2.4 table name and row; there is no head and no
 * write-ahead log record for it: the store's own log makes a returned put
 * survive kill -9, and tsdb_rollup_sync makes every returned put survive
 * power loss (what ?sync=true waits for).
 *
 * The series of a rollup point is an ordinary series (created, persisted
 * and indexed as a put's), so /api/query selects it by metric and tags.
 *
 * Threads: every function may be called from any number of threads. */
#ifndef OCT_TSDB_ROLLUP_H
#define OCT_TSDB_ROLLUP_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/bytes.h"
#include "common/err.h"
#include "query/rollup.h"
#include "tsdb/tsdb.h"

/* The rollup configuration, or NULL when tsd.rollups.enable is false.
 * Borrowed; valid until tsdb_close. */
const query_rollup_config_t *tsdb_rollups(const tsdb_t *db);

/* One rollup or pre-aggregate point as a client sent it. Slices are
 * borrowed for the call. */
typedef struct {
    oct_slice_t metric;
    const oct_slice_t *tags; /* 2 * n_tags slices: k0, v0, k1, v1, ... */
    size_t n_tags;
    int64_t ts;           /* as given (seconds; milliseconds are refused) */
    codec_point_t value;  /* ts_ms unused */
    oct_slice_t interval; /* len 0 = none */
    oct_slice_t agg;      /* the rollup aggregator; len 0 = none */
    oct_slice_t gb_agg;   /* the group-by aggregator (when group_by) */
    int group_by;         /* a group-by aggregator was given (even empty) */
} tsdb_rollup_dp_t;

/* Stores one point, checking 2.4's rules in 2.4's order (docs/rollups.md,
 * "Writing"). Returns 0, or with 2.4's text in eb:
 *   OCT_EINVAL       a rule refused it (an IllegalArgument in 2.4)
 *   OCT_ENOTFOUND    "No rollups configured for the interval: <i>"
 *   OCT_EBADNAME     a bad metric or tag name
 *   OCT_ENOSUCHNAME  unknown metric with auto-create off
 *   OCT_EIO          storage failure */
OCT_MUST_CHECK int tsdb_rollup_put(tsdb_t *db, const tsdb_rollup_dp_t *dp, oct_errbuf_t *eb);

/* Makes every rollup put that returned before it durable on stable
 * storage. Returns 0 or OCT_EIO. May block. */
OCT_MUST_CHECK int tsdb_rollup_sync(tsdb_t *db, oct_errbuf_t *eb);

#define TSDB_ROLLUP_MAX_IDS 5
/* An id beyond 2.4's 0..127 naming octsdb's own sum-of-squares column
 * (docs/format/rollup.md section 5), written by the TSD's auto rollups
 * beside sum and count; readable through tsdb_rollup_read's ids. */
#define TSDB_ROLLUP_ID_SUMSQ 0x100

/* The values of one series stored in 2.4 table `table` over
 * [lo_ms, hi_ms], in time order. With iv, the rows are iv's row spans and
 * the rollup cells of aggregator ids[k] go to out[k] (k < n_ids <=
 * TSDB_ROLLUP_MAX_IDS; one read of the rows for all, as avg needs sum and
 * count; TSDB_ROLLUP_ID_SUMSQ reads octsdb's sum of squares), each stamped
 * with its interval's start; with iv NULL, hour rows of ordinary
 * second/millisecond cells (a pre-aggregate written without interval) go
 * to out[0]. out[k] is malloc'd (NULL when empty), n[k] its length.
 * Returns 0, OCT_ECORRUPT or OCT_EIO (nothing to free then). */
OCT_MUST_CHECK int tsdb_rollup_read(tsdb_t *db, const char *table,
                                    const query_rollup_interval_t *iv, const int *ids, size_t n_ids,
                                    const uint8_t *tsuid, size_t len, int64_t lo_ms, int64_t hi_ms,
                                    codec_point_t **out, size_t *n, oct_errbuf_t *eb);

/* The start (UTC seconds) of the earliest hour of series tsuid whose auto
 * rollups (tsd.rollups.auto) are not written yet: an hour still in the
 * series' head, whose final block (and with it its rollups) has not been
 * flushed, or else the hour that has not closed yet (ended a flush grace
 * ago): only a closed hour is ever rolled up. INT64_MAX when auto rollups
 * are off or the handle has no writer. What a split query reads from raw data instead of
 * an auto rollup table (docs/rollups.md). */
int64_t tsdb_rollup_pending_s(tsdb_t *db, const uint8_t *tsuid, size_t len);

/* ---- rollups made by the TSD: backfill (`octsdb rollup --backfill`) ---- */

/* What to backfill: the series in creation order from index `from`, at
 * most `limit` of them (0: all), those of `metric` only (a name, borrowed;
 * NULL: every metric), their hours in [start_ms, end_ms], widened to whole periods of
 * the long auto intervals. Called again with from = the stats' next, it
 * resumes; a caller shows progress between calls. */
typedef struct {
    const char *metric;
    int64_t start_ms, end_ms;
    size_t from, limit;
} tsdb_rollup_backfill_t;

typedef struct {
    size_t next;     /* the series index to go on from; == total when done */
    size_t total;    /* series in the data set when the call began */
    uint64_t series; /* series that had raw points in range */
    uint64_t hours;  /* series-hours rolled up */
    uint64_t cells;  /* rollup cells written */
} tsdb_rollup_backfill_stats_t;

/* Computes the auto rollups (tsd.rollups.auto: the intervals within an hour
 * from raw points, head included; then the longer ones from them) of the
 * selected series and hours and writes them over what is stored: a
 * recomputation, never an addition, so running it twice (or beside the
 * flush, which it excludes while it writes a series) gives the same cells.
 * Returns 0; OCT_EINVAL when auto rollups are off; OCT_ENOSUCHNAME for an
 * unknown metric (uid_get_id's text); OCT_EIO (read-only
 * handle, storage) or OCT_ECORRUPT -- st->next then names the series that
 * failed. May block for long. */
OCT_MUST_CHECK int tsdb_rollup_backfill(tsdb_t *db, const tsdb_rollup_backfill_t *o,
                                        tsdb_rollup_backfill_stats_t *st, oct_errbuf_t *eb);

#endif
