/* stats_latency.h -- a latency histogram for the stats (tsd.http.latency_50pct ... _95pct),
 * cheap enough to feed from every request: one relaxed atomic add per sample, no lock.
 *
 * Buckets are in microseconds: exact below 16 us, then 8 per power of two, so a reported
 * percentile is the upper bound of its bucket and at most 1/8 above the true value (OpenTSDB
 * 2.4's Histogram has 2 ms linear buckets up to 100 ms, then exponential ones; the stat names and
 * the unit, whole milliseconds, are the same; docs/stats.md). Samples from 2^37 us (38 h) up go
 * into the last bucket. Any thread. */
#ifndef OCT_SERVER_STATS_LATENCY_H
#define OCT_SERVER_STATS_LATENCY_H

#include <stdatomic.h>
#include <stdint.h>

#define STATS_LAT_BUCKETS (16 + 33 * 8)

typedef struct {
    atomic_uint_fast64_t n[STATS_LAT_BUCKETS];
} stats_latency_t;

/* Zeroes h (before any thread uses it). */
void stats_latency_init(stats_latency_t *h);
/* Records one sample of us microseconds. */
void stats_latency_add(stats_latency_t *h, uint64_t us);
/* The pct-th percentile (1..100) of what was recorded, in whole milliseconds (rounded down from
 * its bucket's upper bound); 0 with no samples. */
uint64_t stats_latency_pct_ms(const stats_latency_t *h, unsigned pct);

#endif
