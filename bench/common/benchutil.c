/* benchutil.c -- see benchutil.h. */
#include "common/benchutil.h"

#include <stdlib.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int bench_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, bench_cmp_d);
    return v[n / 2];
}
