/* write.h -- the write path: put -> validate -> UIDs (cached) -> series ->
 * write-ahead log -> in-memory head (visible to reads at once) -> flushed to
 * the store as compressed block cells in the series' OpenTSDB row.
 *
 * Design (docs/format/wal.md, docs/architecture.md):
 *   - A series is identified by its TSUID (metric UID + tag UID pairs sorted
 *     by tagk UID). A hash map from the put's text (metric + sorted tags) to
 *     the series lets the hot path skip UID lookups entirely for known
 *     series; a new series resolves UIDs (creating tagk/tagv, and metrics
 *     only if tsd.core.auto_create_metrics), is recorded in the series index
 *     and persisted before any of its points are acknowledged.
 *   - Every accepted point is appended to the write-ahead log. The log is
 *     written (write(2)) by a group-commit thread at most
 *     tsd.storage.wal.flush_interval_ms after the put, and fsync'ed on
 *     request. A point whose seq has been reported written survives kill -9;
 *     one reported synced survives power loss.
 *   - Points live in a per-series head, by hour, in any order; reads merge the
 *     head with the store. Closed hours (and, every
 *     tsd.storage.flush_interval_ms, open ones, so other TSDs sharing a
 *     store see them within about a second) are flushed as one block cell
 *     per series-hour under the series' row key. Late points for an hour
 *     already flushed are merged on the next flush.
 *   - A second value at the same timestamp: with tsd.storage.fix_duplicates
 *     the last written wins; without it the first stays and the duplicate is
 *     counted (OpenTSDB fails the query instead; we never lose the data).
 *
 * Reading back (and the series index) is tsdb/read.h.
 *
 * Threads: every function is safe to call from any number of threads. */
#ifndef OCT_TSDB_WRITE_H
#define OCT_TSDB_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/bytes.h"
#include "common/err.h"
#include "tsdb/tsdb.h"

/* One data point as it arrives, already parsed (tsdb/parse.h). The slices
 * are borrowed for the duration of the call. */
typedef struct {
    oct_slice_t metric;
    const oct_slice_t *tags; /* 2 * n_tags slices: k0, v0, k1, v1, ... in any order */
    size_t n_tags;
    codec_point_t pt; /* absolute ts_ms, value */
    uint8_t ts_is_ms; /* the timestamp was given in milliseconds */
} tsdb_dp_t;

/* Per-point rejection, reported by tsdb_put_batch. 'rc' is one of:
 *   OCT_EINVAL, OCT_EBADNAME  bad point: "Need at least one tag ...",
 *                             "Too many tags: ...", "duplicate tag: ...",
 *                             "Invalid metric name (...)..." (OpenTSDB's texts)
 *   OCT_ENOSUCHNAME           unknown metric/tagk/tagv with auto-create off:
 *                             "No such name for 'metrics': 'x'"
 *   OCT_EEXHAUSTED            UID space full
 *   OCT_EIO                   storage failure
 * 'msg' is valid during the call only. */
typedef void (*tsdb_put_error_fn)(void *ctx, size_t index, int rc, const char *msg);

/* Accepts n points. Each point is accepted or rejected on its own (rejects
 * go to on_error, may be NULL); accepted points are visible to reads when
 * this returns. *seq (may be NULL) receives the log position covering every
 * point accepted by this call, for tsdb_wait_durable. Returns the number of
 * points accepted (>= 0) or a negative error if the whole batch failed
 * (e.g. the log could not be written: nothing accepted). */
long tsdb_put_batch(tsdb_t *db, const tsdb_dp_t *dps, size_t n, tsdb_put_error_fn on_error,
                    void *ctx, uint64_t *seq, oct_errbuf_t *eb);

/* One point: 0, or the rejection code with its message in eb. */
OCT_MUST_CHECK int tsdb_put(tsdb_t *db, const tsdb_dp_t *dp, uint64_t *seq, oct_errbuf_t *eb);

/* Blocks until the log is written (and with fsync, synced) up to seq, or
 * timeout_ms passes (< 0: no limit). On a store several TSDs share (rados),
 * fsync also waits until those points are in the store itself, replicated
 * (docs/scale-out.md). Returns 0, OCT_EAGAIN on timeout, or OCT_EIO if the
 * log failed (or the TSD closed before the points reached the store). */
OCT_MUST_CHECK int tsdb_wait_durable(tsdb_t *db, uint64_t seq, int fsync, int timeout_ms,
                                     oct_errbuf_t *eb);

/* Flushes every head (open hours included) to the store and syncs it. Used
 * at shutdown, by tests and by benchmarks measuring bytes on disk. May block. */
OCT_MUST_CHECK int tsdb_flush(tsdb_t *db, oct_errbuf_t *eb);

/* ---- counters for /api/stats and the telnet `stats` command ----------- */

typedef struct {
    uint64_t points_accepted; /* since open */
    uint64_t points_rejected;
    uint64_t duplicates;     /* same timestamp written twice */
    uint64_t series;         /* known series */
    uint64_t series_created; /* since open */
    uint64_t head_points;    /* points held in memory, not yet flushed */
    uint64_t wal_bytes_written;
    uint64_t wal_syncs;
    uint64_t blocks_flushed;
    uint64_t flush_errors;
    uint64_t wal_replayed_records; /* valid WAL records replayed at open */
    uint64_t wal_torn_bytes;       /* WAL bytes cut off at open (torn tail, corruption) */
} tsdb_stats_t;

void tsdb_stats(tsdb_t *db, tsdb_stats_t *out);

#endif
