/* query.c -- the query shapes in each system's language, and their latency (see peers.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peers/peers.h"

/* ---- queries ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The target of query q for system sys (octsdb or VM), into buf. */
void query_target(int sys, int q, char names[][64], size_t metrics, int64_t end_s, char *buf,
                  size_t cap)
{
    long long s0 = START_S, e0 = (long long)end_s;
    size_t n = 0;
    if (sys == SYS_OCTSDB) {
        switch (q) {
        case Q_RAW:
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=sum:%s{host=web-00000.prod}", s0,
                     e0, names[0]);
            break;
        case Q_SUM1M: /* one sum per metric: every series */
        case Q_RATE:
            n = (size_t)snprintf(buf, cap, "/api/query?start=%lld&end=%lld", s0, e0);
            for (size_t m = 0; m < metrics && n < cap - 128; m++)
                n += (size_t)snprintf(buf + n, cap - n, "&m=sum:1m-avg:%s%s",
                                      q == Q_RATE ? "rate:" : "", names[m]);
            break;
        case Q_GROUPBY:
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=sum:1m-avg:%s{host=*}", s0, e0,
                     names[0]);
            break;
        case Q_MAXDC: /* datacenter: 18 values in putgen's fleet */
            snprintf(buf, cap, "/api/query?start=%lld&end=%lld&m=max:10m-max:%s{datacenter=*}", s0,
                     e0, names[0]);
            break;
        case Q_LOOKUP:
            snprintf(buf, cap, "/api/search/lookup?m=%s{host=*}&limit=1000000", names[0]);
            break;
        default:
            snprintf(buf, cap, "/api/suggest?type=tagv&q=web-&max=1000000");
        }
        return;
    }
    /* VictoriaMetrics: PromQL over /api/v1/query_range, the series API and
     * label values (the metric names hold dots: selected by __name__). */
    switch (q) {
    case Q_RAW:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=%%7B__name__%%3D%%22%s%%22,host%%3D%%22web-00000.prod"
                 "%%22%%7D&start=%lld&end=%lld&step=10s",
                 names[0], s0, e0);
        break;
    case Q_SUM1M:
    case Q_RATE: /* sum by (__name__)(FN({__name__=~"m0|m1|..."}[1m])) */
        n = (size_t)snprintf(buf, cap,
                             "/api/v1/query_range?query=sum%%20by%%20(__name__)(%s(%%7B__name__"
                             "%%3D~%%22",
                             q == Q_RATE ? "rate" : "avg_over_time");
        for (size_t m = 0; m < metrics && n < cap - 256; m++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", m ? "%7C" : "", names[m]);
        snprintf(buf + n, cap - n, "%%22%%7D%%5B1m%%5D))&start=%lld&end=%lld&step=60s", s0, e0);
        break;
    case Q_GROUPBY:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=sum%%20by%%20(host)(avg_over_time(%%7B__name__%%3D"
                 "%%22%s%%22%%7D%%5B1m%%5D))&start=%lld&end=%lld&step=60s",
                 names[0], s0, e0);
        break;
    case Q_MAXDC:
        snprintf(buf, cap,
                 "/api/v1/query_range?query=max%%20by%%20(datacenter)(max_over_time(%%7B__name__"
                 "%%3D%%22%s%%22%%7D%%5B10m%%5D))&start=%lld&end=%lld&step=600s",
                 names[0], s0, e0);
        break;
    case Q_LOOKUP:
        snprintf(buf, cap,
                 "/api/v1/series?match%%5B%%5D=%%7B__name__%%3D%%22%s%%22%%7D&start=%lld&end=%lld",
                 names[0], s0, e0);
        break;
    default:
        snprintf(buf, cap, "/api/v1/label/host/values?start=%lld&end=%lld", s0, e0);
    }
}

/* VictoriaMetrics' rows read from storage by its queries so far (the _sum
 * of its vm_rows_read_per_query histogram) into *sum and the number of
 * queries counted (_count) into *count; -1 when absent. */
static void vm_rows_read(int port, double *sum, double *count)
{
    char *body;
    *sum = *count = -1;
    int st = http_req(port, "GET", "/metrics", NULL, &body);
    if (st == 200) {
        static const char ks[] = "\nvm_rows_read_per_query_sum ";
        static const char kc[] = "\nvm_rows_read_per_query_count ";
        const char *l = strstr(body, ks);
        if (l) *sum = strtod(l + sizeof ks - 1, NULL);
        l = strstr(body, kc);
        if (l) *count = strtod(l + sizeof kc - 1, NULL);
    }
    free(body);
}

/* The points one run of the query reads from storage by octsdb's own
 * count (rawDPs of show_summary, one more run), or -1. */
static double octsdb_points_read(const server_t *s, const char *target)
{
    char *body = NULL, t[16500];
    double v = -1;
    snprintf(t, sizeof t, "%s&show_summary=true", target);
    if (http_req(s->port, "GET", t, NULL, &body) == 200) {
        const char *p = strstr(body, "\"rawDPs\":");
        if (p) v = strtod(p + 9, NULL);
    }
    free(body);
    return v;
}

/* The rows each of the last n queries read in VictoriaMetrics, given its
 * rows-read sum and count before them, or -1. Its /metrics shows a query a
 * second or two after it answered: waits (at most 10 s) for the count to
 * take all n, so the next query starts from settled counters. */
static double vm_points_read(const server_t *s, double s0, double c0, size_t n)
{
    double s1 = -1, c1 = -1;
    for (int i = 0; i < 100; i++) {
        vm_rows_read(s->port, &s1, &c1);
        if (c1 >= c0 + (double)n) break;
        bench_sleep_ms(100);
    }
    return c1 == c0 + (double)n && s1 >= s0 ? (s1 - s0) / (double)n : -1;
}

/* Runs every query reps times; fills median and p99 (ms), and for the
 * queries that read points, points read per second of median latency. A
 * query that fails or answers nothing leaves its figures at 0. */
void run_queries(const opts_t *o, const server_t *s, char names[][64], int64_t end_s, result_t *r)
{
    char target[16384];
    double *lat = calloc(o->reps, sizeof *lat);
    for (int q = 0; q < N_QUERIES; q++) {
        query_target(s->sys, q, names, o->metrics, end_s, target, sizeof target);
        double vm_s0 = 0, vm_c0 = 0; /* VictoriaMetrics' rows-read counters before */
        if (s->sys == SYS_VM && q < N_SCAN_Q) {
            vm_rows_read(s->port, &vm_s0, &vm_c0);
            if (vm_s0 < 0) vm_s0 = vm_c0 = 0; /* no query counted yet */
        }
        size_t ok = 0;
        for (size_t i = 0; i < o->reps; i++) {
            char *body;
            double t0 = bench_now_s();
            int st = http_req(s->port, "GET", target, NULL, &body);
            double dt = bench_now_s() - t0;
            /* an empty answer would make the figure meaningless */
            int empty = !body || strlen(body) < 16;
            if (st != 200 || empty) {
                /* an error's reason follows the query it repeats: its tail */
                size_t bl = body ? strlen(body) : 0;
                fprintf(stderr, "%s %s: HTTP %d %s%.400s\n", sys_names[s->sys], query_names[q], st,
                        bl > 400 ? "..." : "", body ? body + (bl > 400 ? bl - 400 : 0) : "");
                free(body);
                break;
            }
            free(body);
            lat[ok++] = dt * 1000.0;
        }
        if (ok == o->reps) {
            qsort(lat, ok, sizeof *lat, cmp_double);
            r->q_med[q] = ok % 2 ? lat[ok / 2] : (lat[ok / 2 - 1] + lat[ok / 2]) / 2;
            size_t k = (size_t)((double)ok * 0.99 + 0.999999);
            r->q_p99[q] = lat[(k ? k : 1) - 1];
            double pts = -1;
            if (q < N_SCAN_Q && s->sys == SYS_OCTSDB) pts = octsdb_points_read(s, target);
            if (q < N_SCAN_Q && s->sys == SYS_VM) pts = vm_points_read(s, vm_s0, vm_c0, ok);
            if (pts > 0 && r->q_med[q] > 0) r->q_scan[q] = pts / (r->q_med[q] / 1000.0);
        }
    }
    free(lat);
}
