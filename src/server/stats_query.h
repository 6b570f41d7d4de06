/* stats_query.h -- the queries the TSD is running and those it ran lately, for
 * /api/stats/query (OpenTSDB 2.4's QueryStats: "running" and "completed", docs/stats.md).
 *
 * A query is registered when its execution starts (after it parsed) and moves to a bounded ring
 * of completed queries when its answer is ready; the ring keeps the newest STATS_QUERY_KEEP. As
 * in 2.4, a query that completes with the same query text, remote address and HTTP status as
 * one still in the ring is not added again: that entry's "executed" count goes up. Thread-safe:
 * one mutex per TSD, taken twice per query and by the readers of the list. */
#ifndef OCT_SERVER_STATS_QUERY_H
#define OCT_SERVER_STATS_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"
#include "server/http.h"

#define STATS_QUERY_KEEP 256
/* A query whose JSON is longer is kept as null (with "queryTruncated": true). */
#define STATS_QUERY_MAX_JSON (64 * 1024)

typedef struct stats_queries stats_queries_t;
typedef struct stats_query stats_query_t;

/* What a query did, as the completed entry's "stats" map reports it. */
typedef struct {
    uint64_t series, raw_points, emitted_points;
    int64_t resolve_ns, scan_ns, agg_ns, serialization_ns;
} stats_query_figures_t;

/* New empty registry; stats_queries_free frees it (NULL is fine; no query may be running). */
stats_queries_t *stats_queries_new(void);
void stats_queries_free(stats_queries_t *qs);

/* Registers a running query: query_json[0..len) (its TSQuery form, copied), the request's
 * remote address and headers (copied). Returns the handle for stats_query_end. */
stats_query_t *stats_query_begin(stats_queries_t *qs, const char *query_json, size_t len,
                                 const http_request_t *req);

/* The query finished with HTTP status (and, when status is not 2xx, the error message
 * exception, may be NULL) and the figures f (may be NULL). Moves it to the completed ring; q is
 * owned by the registry from here on. */
void stats_query_end(stats_queries_t *qs, stats_query_t *q, int status, const char *exception,
                     const stats_query_figures_t *f);

/* Queries running now. */
uint64_t stats_queries_running(stats_queries_t *qs);

/* Writes {"completed":[...],"running":[...]} (oldest first in each). */
void stats_queries_json(stats_queries_t *qs, json_writer_t *w);

#endif
