/* metasync.h -- `octsdb uid metasync` and `uid metapurge`: TSMeta and
 * UIDMeta backfilled for series written while meta tracking was off, or
 * removed (docs/meta-sync.md).
 *
 * metasync walks every series of the series index and reads its points
 * (store and head, as a query does). For a series with points:
 *   - no TSMeta: one is written, created = the first point's time (s);
 *   - TSMeta with created 0 or later than the first point: created is set
 *     to the first point's time, the other fields kept;
 *   - ts_ctr absent or 0: set to the number of points read (a counter the
 *     write path kept is left alone: it counts what was received);
 *   - the metric, each tag key and tag value: UIDMeta created (created =
 *     the earliest first point of the series using it) or its created
 *     corrected the same way, other fields kept.
 * Series without points are skipped. metapurge deletes every ts_meta and
 * ts_ctr cell of tsdb-meta (never octsdb's series list beside them) and
 * every UIDMeta.
 *
 * Threads: one caller; safe beside other writers of the same handle (a
 * TSD is not: the CLI opens the data dir itself). Errors: storage errors,
 * OCT_ECORRUPT for stored meta that does not parse, with text in eb. */
#ifndef OCT_TSDB_METASYNC_H
#define OCT_TSDB_METASYNC_H

#include <stdint.h>

#include "common/err.h"
#include "tsdb/tsdb.h"

typedef struct {
    uint64_t series, points;               /* series read (with points), points counted */
    uint64_t tsmeta_created, tsmeta_fixed; /* TSMeta written new / created corrected */
    uint64_t counters_set;                 /* ts_ctr set from the points counted */
    uint64_t uidmeta_created, uidmeta_fixed;
} tsdb_metasync_stats_t;

/* Called after each series with the totals so far (may be NULL). */
typedef void (*tsdb_metasync_progress_fn)(void *ctx, const tsdb_metasync_stats_t *st);

OCT_MUST_CHECK int tsdb_metasync(tsdb_t *db, tsdb_metasync_progress_fn progress, void *ctx,
                                 tsdb_metasync_stats_t *st, oct_errbuf_t *eb);

typedef struct {
    uint64_t tsmeta;  /* rows whose ts_meta and/or ts_ctr were deleted */
    uint64_t uidmeta; /* UIDMeta deleted */
} tsdb_metapurge_stats_t;

OCT_MUST_CHECK int tsdb_metapurge(tsdb_t *db, tsdb_metapurge_stats_t *st, oct_errbuf_t *eb);

#endif
