/* gexp.h -- the Graphite-style expressions of /api/query/gexp, pure
 * (docs/expressions.md section 5): "func(arg, ...)" where an argument is a
 * nested call, a metric sub-query in /api/query's m= syntax
 * ("sum:1m-avg:rate:sys.cpu{host=*}") or a plain token (a number, a
 * 'quoted' string, an alias template).
 *
 * gexp_parse builds a tree; gexp_eval computes it bottom-up over series
 * sets (query/expr.h), asking the caller for the points of each metric
 * sub-query through a fetch callback (the executor, above this module), so
 * this module stays free of storage. Functions: sum/sumSeries,
 * difference/diffSeries, multiply/multiplySeries, divide/divideSeries,
 * scale, absolute, alias, movingAverage, highestCurrent, highestMax,
 * timeShift/shift.
 *
 * Ownership: a gexp_node_t tree owns its strings (gexp_free); results are
 * appended to the caller's set. Errors: OCT_EPARSE (syntax, 2.4's
 * "Failed to parse <exp>"), OCT_EINVAL (unknown function, bad arguments)
 * with the message in eb, or whatever the fetch callback returns.
 * Threads: no shared state. */
#ifndef OCT_QUERY_GEXP_H
#define OCT_QUERY_GEXP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "query/expr.h"

typedef enum { GEXP_CALL, GEXP_METRIC, GEXP_TOKEN } gexp_kind_t;

typedef struct gexp_node gexp_node_t;
struct gexp_node {
    gexp_kind_t kind;
    char *text; /* function name, metric sub-query or token (quotes kept) */
    gexp_node_t **args;
    size_t n_args;
};

/* Parses one exp= value. The whole text must be one function call. */
OCT_MUST_CHECK int gexp_parse(const char *s, gexp_node_t **out, oct_errbuf_t *eb);
void gexp_free(gexp_node_t *n);

/* Appends the series of the metric sub-query m (m= syntax) over
 * [start_ms - shift_ms, end_ms - shift_ms] to *out, their timestamps moved
 * forward by shift_ms. Returns 0 or a negative error with eb set. */
typedef int (*gexp_fetch_fn)(void *ctx, const char *m, int64_t shift_ms, expr_set_t *out,
                             oct_errbuf_t *eb);

/* Evaluates n (a call) for the query range [start_ms, end_ms], appending
 * its series to *out. */
OCT_MUST_CHECK int gexp_eval(const gexp_node_t *n, int64_t start_ms, int64_t end_ms,
                             gexp_fetch_fn fetch, void *ctx, expr_set_t *out, oct_errbuf_t *eb);

/* A time span "<n><unit>" (quotes allowed around it): unit s sec secs
 * second seconds, m min mins minute minutes, h hr hrs hour hours, d day
 * days, w week weeks. Returns 0 and *ms, or OCT_EINVAL. */
OCT_MUST_CHECK int gexp_parse_span(const char *s, int64_t *ms, oct_errbuf_t *eb);

/* The moving average of n points in place (docs/expressions.md 5.3): with
 * window_ms == 0, the mean of the newest `count` non-NaN points, 0 until
 * there are `count`; otherwise the mean of the non-NaN points in
 * (ts - window_ms, ts], 0 while ts - first ts < window_ms. Values become
 * doubles. */
void gexp_moving_average(query_dp_t *dps, size_t n, size_t count, int64_t window_ms);

#endif
