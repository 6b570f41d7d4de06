/* benchutil.h -- what every benchmark program needs: a monotonic clock and
 * the median of repeated runs (the figure we quote; these machines are noisy). */
#ifndef OCT_BENCH_BENCHUTIL_H
#define OCT_BENCH_BENCHUTIL_H

#include <stddef.h>

/* Monotonic seconds. */
double bench_now_s(void);
/* CPU seconds of the whole process (every thread: the store's background
 * work too): the figure that does not depend on the machine's load. */
double bench_cpu_s(void);

/* Median of v[0..n) (sorts v in place); 0 if n == 0. */
double bench_median(double *v, size_t n);

void bench_sleep_ms(int ms);

/* A loopback TCP port the kernel considers free right now, or -1. */
int bench_free_port(void);

/* A connected TCP socket (TCP_NODELAY) to 127.0.0.1:port, or -1. */
int bench_connect(int port);

/* A "<field>: <n> kB" value of /proc/<pid>/status (VmRSS, VmHWM...), or -1. */
long bench_proc_status_kb(int pid, const char *field);

/* The octsdb binary a benchmark runs: $OCTSDB_BIN if set, else `octsdb` in
 * the directory of argv0 (static storage). */
const char *bench_octsdb_bin(const char *argv0);

/* tsd.datapoints.added from octsdb's telnet `stats` on 127.0.0.1:port, or -1. */
long long bench_octsdb_points_added(int port);

#endif
