/* clock.h -- the two clocks octsdb reads: monotonic, for durations, deadlines
 * and timeouts (never jumps), and wall, for timestamps a user sees (the
 * default "now" of a put or a query, annotation times).
 *
 * Threads: every function is safe from any thread. Errors: none (the clocks
 * Linux guarantees cannot fail). */
#ifndef OCT_COMMON_CLOCK_H
#define OCT_COMMON_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds / milliseconds since an arbitrary origin. */
int64_t oct_clock_mono_ns(void);
int64_t oct_clock_mono_ms(void);

/* CLOCK_REALTIME in milliseconds since the Unix epoch. */
int64_t oct_clock_wall_ms(void);

#endif
