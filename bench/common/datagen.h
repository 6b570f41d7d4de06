/* datagen.h -- deterministic generator of a devops-style fleet of series.
 *
 * A fleet is (seed, number of series); series 'idx' of a fleet always has the
 * same class, cadence and values, so benchmarks are reproducible and any
 * series can be generated alone, in any order, from any thread. Classes are
 * what monitoring agents send: random-walk gauges printed with 1, 2 or 4
 * decimals (the doubles are exactly what parsing the printed text gives),
 * integer gauges, counters with occasional resets, and mostly-constant
 * series. Cadence is 10 s or 1 s, timestamps on whole seconds with occasional
 * +-1 s slips or missed scrapes, or in milliseconds with +-5 ms of jitter.
 * No allocation; all state lives in the caller's datagen_series_t. */
#ifndef OCT_BENCH_DATAGEN_H
#define OCT_BENCH_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"

typedef enum {
    DATAGEN_GAUGE_D2,  /* float random walk, 2 decimals (cpu %, load) */
    DATAGEN_GAUGE_D1,  /* float random walk, 1 decimal (temperature) */
    DATAGEN_GAUGE_D4,  /* float random walk, 4 decimals (ratios) */
    DATAGEN_INT_GAUGE, /* integer random walk (threads, connections) */
    DATAGEN_COUNTER,   /* monotonic int64 counter with rare resets */
    DATAGEN_CONST,     /* mostly constant (status flags, limits) */
    DATAGEN_N_CLASSES
} datagen_class_t;

/* One series' parameters and generator state. */
typedef struct {
    datagen_class_t cls;
    int64_t interval_ms; /* nominal spacing: 10000 or 1000 */
    int ms_precision;    /* 1: ms timestamps with jitter; 0: whole seconds */
    unsigned decimals;   /* gauges: digits after the point */
    /* state */
    uint64_t rng;
    int64_t slot_ms; /* nominal time of the next point */
    int64_t last_ms;
    double level; /* gauges: current walk position */
    double step;  /* gauges: walk volatility; counters: rate per interval */
    int64_t ival; /* integer classes: current value */
} datagen_series_t;

/* Name of a class ("gauge_d2", ...). */
const char *datagen_class_name(datagen_class_t cls);

/* Sets up series 'idx' of fleet 'seed' so that its first point is the first
 * slot at or after start_ms. */
void datagen_series_init(datagen_series_t *s, uint64_t seed, uint64_t idx, int64_t start_ms);

/* Produces the series' next point (strictly increasing timestamps). */
void datagen_series_next(datagen_series_t *s, codec_point_t *pt);

/* Generates the points of series 'idx' of fleet 'seed' in the hour
 * [hour_start_ms, hour_start_ms + 3600000): into out[0..cap). Returns the
 * number of points, at most DATAGEN_MAX_POINTS_PER_HOUR. */
#define DATAGEN_MAX_POINTS_PER_HOUR 3600
size_t datagen_series_hour(uint64_t seed, uint64_t idx, int64_t hour_start_ms, codec_point_t *out,
                           size_t cap);

/* splitmix64: the generator's PRNG, exposed for benchmarks' own needs. */
uint64_t datagen_rand(uint64_t *state);

#endif
