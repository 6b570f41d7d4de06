/* delete.h -- octsdb's delete (docs/delete.md): exactly the points of a
 * range of some series of one metric, or everything of a whole metric, from
 * the write-ahead log, the head and the store, never to come back.
 *
 * 2.4's query delete (whole hour rows) is tsdb_delete_window in maint.h.
 *
 * Threads: safe from any thread; deletes run one at a time (each holds the
 * writer's flush lock), concurrent puts and reads go on (a read of a series
 * of the metric being deleted waits for the delete: it sees the old or the
 * new state, docs/delete.md). Errors are returned with their text in eb. */
#ifndef OCT_TSDB_DELETE_H
#define OCT_TSDB_DELETE_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/err.h"
#include "tsdb/tsdb.h"

/* An end_ms at or past this (the last ms a row key can hold) with a start_ms
 * <= 0 is all time: such a delete also forgets the series (docs/delete.md,
 * "Lookups"). */
#define TSDB_DELETE_ALL_TIME_END ((int64_t)UINT32_MAX * 1000 + 999)

/* Rows looked at so far (called every few rows, on the caller's thread). */
typedef void (*tsdb_delete_progress_fn)(void *ctx, uint64_t rows);

typedef struct {
    uint64_t metric; /* the metric's UID */
    /* Which series of it: the listed TSUIDs (n_tsuids > 0, each of this
     * metric; borrowed), else those carrying every (tagk, tagv) UID pair of
     * tags[0 .. 2 * n_tags) (n_tags 0: every series). */
    const oct_slice_t *tsuids;
    size_t n_tsuids;
    const uint64_t *tags;
    size_t n_tags;
    int64_t start_ms, end_ms; /* inclusive; 0 .. INT64_MAX for all time */
    /* Every series, all time, and also the metric's rollup and pre-aggregate
     * rows and its TSMeta (needs n_tsuids == n_tags == 0 and all time). */
    int whole_metric;
    int dry_run;    /* count only */
    int delete_uid; /* whole metric: its name too (uid_delete: every TSD hears it) */
    tsdb_delete_progress_fn progress; /* may be NULL */
    void *progress_ctx;
} tsdb_delete_spec_t;

/* What a delete removed (or, dry, would remove). */
typedef struct {
    uint64_t series;         /* series with at least one point or row removed */
    uint64_t points;         /* numeric points */
    uint64_t histograms;     /* histogram points */
    uint64_t annotations;    /* notes whose start time was in the range */
    uint64_t rows_deleted;   /* data rows deleted whole */
    uint64_t rows_rewritten; /* data rows rewritten without the range's points */
    uint64_t rollup_rows;    /* rollup and pre-aggregate rows deleted whole */
    /* rollup and pre-aggregate cells (docs/delete.md, "Rollups"): whose
     * interval lies in the range; cut by it and recomputed from the raw
     * points left; cut by it and deleted whole (client-written,
     * pre-aggregates, or raw data expired) */
    uint64_t rollup_cells, rollup_recomputed, rollup_dropped;
    uint64_t meta_rows; /* series whose TSMeta was deleted (all-time deletes) */
    uint64_t forgotten; /* series no longer listed (all-time deletes) */
    int uid_deleted;    /* delete_uid: the name was deleted */
} tsdb_delete_counts_t;

/* Fills spec's metric and tags from names: metric[0..), tags = 2 * n_tags
 * slices k0, v0, k1, v1... (borrowed); tag_uids (2 * n_tags) receives the
 * UIDs spec->tags then points to. Returns 0, OCT_ENOSUCHNAME with 2.4's
 * text ("No such name for 'metrics': 'x'"), or a storage error. */
OCT_MUST_CHECK int tsdb_delete_resolve(tsdb_t *db, oct_slice_t metric, const oct_slice_t *tags,
                                       size_t n_tags, uint64_t *tag_uids, tsdb_delete_spec_t *spec,
                                       oct_errbuf_t *eb);

/* Deletes what spec names (docs/delete.md), synced before it returns. On a
 * database opened read-only: OCT_EINVAL; on a store several TSDs share:
 * OCT_EINVAL too. An error after the log record was written leaves the delete
 * partly done (the head and some rows): running it again completes it; a
 * crash there is completed by the next open (docs/delete.md, step 5). Rollup
 * and pre-aggregate cells follow docs/delete.md "Rollups"; a delete of all
 * time forgets its series (docs/delete.md "Lookups").
 * delete_uid needs whole_metric (else OCT_EINVAL); the name is deleted
 * after the data, so a failure there leaves the data deleted and the name. */
OCT_MUST_CHECK int tsdb_delete(tsdb_t *db, const tsdb_delete_spec_t *spec,
                               tsdb_delete_counts_t *out, oct_errbuf_t *eb);

#endif
