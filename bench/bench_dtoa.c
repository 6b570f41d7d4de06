/* bench_dtoa.c -- double formatting: the old printf/strtod loop vs oct_dtoa.
 *
 * Both format the same values in the same run; ns/value is process CPU time
 * (robust on a shared machine), median of 5 passes. Three value sets: 1m-avg
 * style averages of 60 random readings (what a downsampled query prints),
 * short decimals as collectors send them (1..6 digits), and random bit
 * patterns (all exponents, the slow corner). Outputs are compared, so a
 * mismatch is also reported. A program that prints figures, not a test. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/dtoa.h"

#define RUNS 5
#define NVAL 200000

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t old_loop(double v, char *buf)
{
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, 40, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return (size_t)n;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_ns(const double *vals, size_t (*f)(double, char *), unsigned *sink)
{
    double t[RUNS];
    char buf[48];
    for (int r = 0; r < RUNS; r++) {
        double t0 = cpu_s();
        for (int i = 0; i < NVAL; i++)
            *sink += (unsigned)f(vals[i], buf) + (unsigned char)buf[0];
        t[r] = (cpu_s() - t0) * 1e9 / NVAL;
    }
    qsort(t, RUNS, sizeof t[0], cmp_d);
    return t[RUNS / 2];
}

int main(void)
{
    static double vals[NVAL];
    static const char *names[] = {"1m-avg of 60 readings", "1..6-digit decimals",
                                  "random bit patterns"};
    unsigned sink = 0;
    printf("bench_dtoa: ns/value (CPU time), median of %d passes x %d values\n", RUNS, NVAL);
    for (int set = 0; set < 3; set++) {
        for (int i = 0; i < NVAL; i++) {
            uint64_t r = next_rand();
            double v;
            if (set == 0) {
                double s = 0;
                for (int k = 0; k < 60; k++)
                    s += (double)(next_rand() % 100000) / 100.0;
                v = s / 60;
            } else if (set == 1) {
                v = (double)(r % 1000000) / pow(10, (double)(r >> 32 & 7));
            } else {
                do {
                    memcpy(&v, &r, sizeof v);
                    r = next_rand();
                } while (!isfinite(v));
            }
            vals[i] = v;
        }
        long bad = 0;
        for (int i = 0; i < NVAL; i++) {
            char a[48], b[48];
            old_loop(vals[i], a);
            oct_dtoa(vals[i], b);
            bad += strcmp(a, b) != 0;
        }
        double o = median_ns(vals, old_loop, &sink);
        double n = median_ns(vals, oct_dtoa, &sink);
        printf("  %-24s old %7.1f  new %7.1f  old/new %5.2fx  mismatches %ld\n", names[set], o, n,
               o / n, bad);
    }
    printf("  (checksum %u)\n", sink);
    return 0;
}
