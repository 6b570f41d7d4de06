/* exec.h -- the query executor: runs a parsed query_t (query/query.h)
 * against a database (through tsdb/read.h) and hands back one result per
 * output series, as OpenTSDB 2.4's TsdbQuery + SpanGroup do (semantics in
 * docs/exec.md).
 *
 * Per sub-query:
 *   1. resolve the metric and every filter's tag key to UIDs (case-sensitive
 *      literal_or values too, as OpenTSDB pushes them into its row-key
 *      regexp): an unknown name is a 400-class error with OpenTSDB's text
 *      "No such name for 'metrics': 'x'" (unknown literal tag values are
 *      dropped instead with skip_unresolved_tagvs);
 *   2. select series from the in-memory series index (tsdb_series_find):
 *      candidates from the most selective posting list we can name, then
 *      every filter's key present (not_key: absent), explicitTags, and the
 *      filters ANDed on the resolved tag values (names cached per query);
 *   3. group by the group-by tag keys: series with the same tuple of tag
 *      value UIDs (ordered by tag key UID) form a group; groups come out in
 *      byte order of that tuple (aggregator `none`: one output per series,
 *      in TSUID order);
 *   4. per group, per series: read the points of the scan window (the query
 *      range widened to whole hours and downsample intervals, docs/exec.md),
 *      convert, downsample (+fill), rate; then aggregate the group with
 *      interpolation and keep the points with start <= ts <= end.
 *
 * Memory: one group is materialised at a time, and within it one series'
 * raw points at a time (the fast downsampler, exec_fast.c, reads a series
 * four hours at a time and holds no long range of raw points at all).
 * Limits bound the rest: at most max_series series per query, max_points
 * raw points read, and max_held_points points held for the group being
 * aggregated; crossing one stops the query with OCT_ERANGE (the API answers
 * 413). timeout_ms stops it with -ETIMEDOUT (408).
 *
 * Threads: exec_query may run in any number of threads at once; it only
 * reads shared state (plus the store deletes of delete_data). */
#ifndef OCT_EXEC_EXEC_H
#define OCT_EXEC_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "query/expr.h"
#include "query/query.h"
#include "tsdb/tsdb.h"

typedef struct {
    int64_t timeout_ms;  /* 0 = none (tsd.query.timeout) */
    uint64_t max_series; /* 0 = unlimited (tsd.query.limits.series.default) */
    uint64_t max_points; /* raw points read; 0 = unlimited (tsd.query.limits.data_points.default) */
    uint64_t max_held_points;  /* points held for one group; 0 = unlimited
                                * (tsd.query.limits.held_points.default) */
    int skip_unresolved_tagvs; /* tsd.query.skip_unresolved_tagvs */
    size_t expansion_limit;    /* tsd.query.filter.expansion_limit */
    const char *timezone;      /* calendar downsampling when the query names none; NULL = UTC */
} exec_opts_t;

/* Defaults (limits as in the config table, UTC). */
void exec_opts_default(exec_opts_t *o);
/* From the tsd.query.* keys; cfg (and the timezone string) must outlive o. */
void exec_opts_from_config(exec_opts_t *o, const oct_config_t *cfg);

/* One output series. Everything is borrowed for the duration of the
 * callback only. */
typedef struct {
    const query_sub_t *sub;
    const char *metric;
    size_t n_tags; /* tags common to every series of the group, by name */
    const char *const *tagk;
    const char *const *tagv;
    size_t n_agg_tags; /* keys whose values differ (sorted by name) */
    const char *const *agg_tags;
    size_t n_tsuids; /* upper-case hex, sorted */
    const char *const *tsuids;
    size_t n_dps; /* only start <= ts <= end, in time order */
    const query_dp_t *dps;
    size_t n_annotations; /* stored JSON of the series' annotations in
                           * [start, end], by startTime (empty if
                           * no_annotations) */
    const char *const *annotations;
    const size_t *annotation_lens;
    /* counters of the sub-query so far (for showStats) */
    uint64_t sub_series;     /* series this result aggregates */
    uint64_t sub_raw_points; /* raw points read for this result */
} exec_result_t;

/* Returning nonzero stops the query; the value is returned by exec_query. */
typedef int (*exec_result_fn)(void *ctx, const exec_result_t *r);

typedef struct {
    uint64_t series;         /* series matched (all sub-queries) */
    uint64_t raw_points;     /* points read from storage */
    uint64_t emitted_points; /* points handed to the callback */
    uint64_t results;        /* callbacks made */
    uint64_t deleted_rows;   /* rows deleted (delete_data) */
    int64_t resolve_ns, scan_ns, agg_ns, total_ns;
} exec_stats_t;

/* Runs every sub-query of q in order and calls fn once per output series.
 * q->start_ms/end_ms must be set and valid; q->delete_data deletes the rows
 * of every matched series in its delete window (below) after all callbacks (a flush of
 * the in-memory head first, so unflushed points go too). stats may be NULL.
 * Returns 0, or: OCT_ENOSUCHNAME (unknown metric/tagk/tagv, OpenTSDB's text),
 * OCT_EPARSE (bad TSUID, TSUIDs of different metrics), OCT_ERANGE (a limit;
 * OpenTSDB's text for the data points one), -ETIMEDOUT, OCT_EIO/OCT_ECORRUPT
 * (storage), or the callback's nonzero value. The message is in eb. */
int exec_query(tsdb_t *db, const query_t *q, const exec_opts_t *opts, exec_result_fn fn, void *ctx,
               exec_stats_t *stats, oct_errbuf_t *eb);

/* Runs q as exec_query does and appends every output series to *out (the
 * series-set form the expression endpoints compute with, query/expr.h):
 * metric, tags, aggregated tag keys and points, with shift_ms added to
 * every timestamp (a time-shifted query asks for [start - shift, end -
 * shift] and shows it at the original times). *held counts the points the
 * caller already holds across calls (an expression keeps every input at
 * once): past opts->max_held_points the call fails with OCT_ERANGE, as a
 * single query does. exec_collect.c. Returns as exec_query; on error *out
 * keeps what was collected (expr_set_free it). */
int exec_query_collect(tsdb_t *db, const query_t *q, const exec_opts_t *opts, int64_t shift_ms,
                       uint64_t *held, expr_set_t *out, oct_errbuf_t *eb);

/* The scan window of a sub-query in ms, [*lo, *hi] inclusive: the query
 * range widened as OpenTSDB widens its HBase scan (docs/exec.md). Exposed for
 * tests and the delete path. */
void exec_scan_window(const query_t *q, const query_sub_t *sub, int64_t *lo, int64_t *hi);

/* The hours a delete removes, in ms, [*lo, *hi] inclusive: the scan window
 * without 2.4.1's extra end second, so it stops at the hour holding end (or
 * at end's next downsample boundary, rounded up to the hour). An end at
 * hh:59:59 does not take the next hour (docs/compat.md). */
void exec_delete_window(const query_t *q, const query_sub_t *sub, int64_t *lo, int64_t *hi);

#endif
