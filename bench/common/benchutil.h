/* benchutil.h -- what every benchmark program needs: a monotonic clock and
 * the median of repeated runs (the figure we quote; these machines are noisy). */
#ifndef OCT_BENCH_BENCHUTIL_H
#define OCT_BENCH_BENCHUTIL_H

#include <stddef.h>

/* Monotonic seconds. */
double bench_now_s(void);

/* Median of v[0..n) (sorts v in place); 0 if n == 0. */
double bench_median(double *v, size_t n);

#endif
