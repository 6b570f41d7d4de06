/* stats.h -- the TSD's stats, one table for every form they take: /api/stats (JSON, api_misc.c),
 * the telnet `stats` command and the legacy /stats (text lines, stats_text.h) and /metrics
 * (Prometheus, api_metrics.c). Names and tags are OpenTSDB 2.4's where 2.4 has the figure
 * ("tsd.rpc.received" type=put, "tsd.uid.cache-hit" kind=metrics, ...), octsdb's own figures
 * (write-ahead log, head, flush, storage) in the same style; every name, what it counts and its
 * 2.4 twin are listed in docs/stats.md. */
#ifndef OCT_SERVER_STATS_H
#define OCT_SERVER_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "server/tsd.h"

/* One stat: the metric name ("tsd.rpc.received", static), one "k=v" tag or "" (static), the
 * value, and whether it is a gauge (a level that also goes down) rather than a counter. The
 * host (and port) tags are the renderer's. */
typedef struct {
    const char *metric;
    const char *tag;
    uint64_t value;
    int gauge;
} tsd_stat_t;

/* The most entries stats_collect fills. */
#define STATS_MAX 96

/* Fills out[0..STATS_MAX) with the TSD's stats in their documented order and returns how many.
 * Any thread: counters are read with relaxed atomics; the storage size is asked of the store at
 * most every 10 s per TSD. */
size_t stats_collect(tsd_ctx_t *t, tsd_stat_t *out);

#endif
