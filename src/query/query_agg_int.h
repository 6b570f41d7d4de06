/* query_agg_int.h -- private to src/query: the aggregators' entry point with a
 * caller-owned scratch buffer, so the downsampler and the cross-series merge
 * (query_math.c) run median and percentiles without a malloc per bucket or
 * per output timestamp. */
#ifndef OCT_QUERY_AGG_INT_H
#define OCT_QUERY_AGG_INT_H

#include <stddef.h>

#include "query/query.h"

/* Does the aggregator need query__agg_apply's scratch (n 8-byte slots)? */
int query__agg_needs_scratch(const query_agg_t *a);

/* query_agg_apply with scratch: 'scratch' holds at least n 8-byte slots when
 * query__agg_needs_scratch(a), else it may be NULL. Returns 1 (set), 0 (n == 0)
 * or OCT_EINVAL (`none` given more than one value). */
int query__agg_apply(const query_agg_t *a, const query_dp_t *vals, size_t n, query_dp_t *out,
                     void *scratch);

/* Is this the `none` aggregator (no aggregation; the caller emits every series)? */
int query__agg_is_none(const query_agg_t *a);

#endif
