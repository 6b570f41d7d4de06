/* runs.c -- one system over one data set: ingest, memory, queries, disk, start-up (see peers.h). */
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

/* ---- one system, one mode ---------------------------------------------- */

/* Runs `octsdb compact --datadir=dir` on the stopped data dir (its output to
 * the log); returns 0 when it succeeded. */
static int octsdb_compact(const char *bin, const server_t *s)
{
    char datadir[300];
    snprintf(datadir, sizeof datadir, "--datadir=%s", s->dir);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(bin, bin, "compact", datadir, (char *)NULL);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "octsdb compact failed\n");
        print_log(s);
        return -1;
    }
    return 0;
}

/* Stops the system (flushing it) and measures its data dir: bytes per point
 * into *flushed and, for octsdb, again after `octsdb compact` into *compacted. */
static void measure_disk(const opts_t *o, server_t *s, long long points, double *flushed,
                         double *compacted)
{
    if (server_stop(s) != 0) return;
    long long d = du_bytes(s->dir);
    if (d > 0) *flushed = (double)d / (double)points;
    if (s->sys == SYS_OCTSDB && octsdb_compact(o->bin[SYS_OCTSDB], s) == 0) {
        d = du_bytes(s->dir);
        if (d > 0) *compacted = (double)d / (double)points;
    }
}

/* Ingests one mode's payloads into a fresh instance of sys; after the telnet
 * mode also takes memory, queries and disk. */
void bench_mode(const opts_t *o, int sys, int m, const loadgen_payload_t *pl, char names[][64],
                result_t *r)
{
    int64_t end_s = START_S + (int64_t)(o->rounds - 1) * 10;
    long long want = (long long)(o->hosts * o->metrics * o->rounds);
    size_t series = o->hosts * o->metrics;
    server_t s;
    r->ran = 1;
    if (server_start(&s, sys, o->bin[sys]) < 0) {
        fprintf(stderr, "%s: could not start %s\n", sys_names[sys], o->bin[sys]);
        server_destroy(&s);
        return;
    }
    double cpu = 0;
    double secs = ingest(o, &s, pl, m != LOADGEN_TELNET, want, sys == SYS_OCTSDB ? names : NULL,
                         o->metrics, end_s, &cpu);
    if (secs > 0) {
        r->pps[m] = (double)want / secs;
        printf("  %-16s %-9s %10.0f points/s (%.2f s, %.2f CPU s)\n", sys_names[sys],
               loadgen_mode_name((loadgen_mode_t)m), r->pps[m], secs, cpu);
        fflush(stdout);
    }
    if (m == LOADGEN_TELNET && secs > 0) {
        r->cpu_per_m = cpu / ((double)want / 1e6);
        long hwm = bench_proc_status_kb(s.pid, "VmHWM");
        r->hwm_mb = (double)hwm / 1024.0;
        r->rss_per_series = (double)(hwm - s.rss_start_kb) * 1024.0 / (double)series;
        if (sys == SYS_VM) { /* make the in-memory rows searchable */
            char *b;
            http_req(s.port, "GET", "/internal/force_flush", NULL, &b);
            free(b);
            bench_sleep_ms(200);
        }
        if (sys != SYS_INFLUX) run_queries(o, &s, names, end_s, r);
        measure_disk(o, &s, want, &r->disk_per_point, &r->disk_compacted);
    }
    server_destroy(&s);
}

/* One kind's series alone (telnet), for their bytes per point. Completion
 * is the system's own count: octsdb's count query would name metrics that
 * this subset may not have. */
void bench_kind(const opts_t *o, int sys, int kind, const loadgen_payload_t *pl, result_t *r)
{
    long long want = 0;
    for (size_t c = 0; c < o->conns; c++)
        want += (long long)pl[c].points;
    if (want <= 0) return;
    server_t s;
    if (server_start(&s, sys, o->bin[sys]) == 0) {
        double cpu;
        double secs = ingest(o, &s, pl, 0, want, NULL, 0, START_S, &cpu);
        if (secs > 0) {
            measure_disk(o, &s, want, &r->disk_kind[kind], &r->disk_kind_compacted[kind]);
            printf("  %-16s %s: %lld points, %.2f bytes/point", sys_names[sys], kind_names[kind],
                   want, r->disk_kind[kind]);
            if (r->disk_kind_compacted[kind] > 0)
                printf(", %.2f after compaction", r->disk_kind_compacted[kind]);
            printf("\n");
            fflush(stdout);
        }
    }
    server_destroy(&s);
}

void bench_new_series(const opts_t *o, int sys, const loadgen_payload_t *pl, result_t *r)
{
    server_t s;
    if (server_start(&s, sys, o->bin[sys]) == 0) {
        double cpu;
        double secs = ingest(o, &s, pl, 0, (long long)o->new_series, NULL, 0, START_S, &cpu);
        if (secs > 0) {
            r->new_series_rate = (double)o->new_series / secs;
            printf("  %-16s new series %7.0f series/s (%.2f s, %.2f CPU s)\n", sys_names[sys],
                   r->new_series_rate, secs, cpu);
            fflush(stdout);
        }
    }
    server_destroy(&s);
}

/* ---- the cost curve ---------------------------------------------------- */

/* Has the one-series raw query an answer with points? */
static int raw_answers(const server_t *s, const char *target)
{
    char *body = NULL;
    int st = http_req(s->port, "GET", target, NULL, &body);
    int ok = st == 200 && body &&
             strstr(body, s->sys == SYS_OCTSDB ? "\"dps\":{\"" : "\"values\":[[") != NULL;
    free(body);
    return ok;
}

/* Stops s cleanly (its figure: disk per series), then restarts it on its
 * data dir c->restarts times, each timed until the one-series raw query
 * answers with points: the medians into r. */
static void measure_restarts(const opts_t *c, server_t *s, char names[][64], int64_t end_s,
                             result_t *r)
{
    size_t series = c->hosts * c->metrics;
    if (server_stop(s) != 0) return;
    long long d = du_bytes(s->dir);
    if (d > 0) r->disk_per_series = (double)d / (double)series;
    char target[16384];
    query_target(s->sys, Q_RAW, names, c->metrics, end_s, target, sizeof target);
    double wall[MAX_RUNS], cpu[MAX_RUNS];
    size_t n = 0;
    for (size_t i = 0; i < c->restarts; i++) {
        double t0 = bench_now_s(), t = -1, u = -1;
        if (server_respawn(s) != 0) break;
        while (bench_now_s() - t0 < 600) {
            if (raw_answers(s, target)) {
                t = bench_now_s() - t0;
                u = proc_cpu_s(s->pid);
                break;
            }
            if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
                s->pid = 0;
                break;
            }
            bench_sleep_ms(20);
        }
        if (t < 0) {
            fprintf(stderr, "%s: no answer after a restart\n", sys_names[s->sys]);
            print_log(s);
            break;
        }
        wall[n] = t;
        cpu[n++] = u;
        if (server_stop(s) != 0) break;
    }
    if (n == c->restarts) {
        r->startup_s = bench_median(wall, n);
        r->startup_cpu_s = bench_median(cpu, n);
    }
}

/* One point of the curve for one system: telnet ingest of c's fleet into a
 * fresh instance, first round (pl1: every point a new series) and the rest
 * (pl2) timed apart, its RSS per series, the queries (c->reps runs), its
 * disk after a clean stop and its start-up over that data dir. */
static void bench_curve_point(const opts_t *c, int sys, const loadgen_payload_t *pl1,
                              const loadgen_payload_t *pl2, char names[][64], result_t *r)
{
    int64_t end_s = START_S + (int64_t)(c->rounds - 1) * 10;
    size_t series = c->hosts * c->metrics;
    long long want = (long long)(series * c->rounds);
    /* every system's end is its own stored-points counter here: octsdb's
     * counting query over a million series costs more than the ingest it
     * would time (it is the 2,000-series set's end, where it does not) */
    server_t s;
    r->ran = 1;
    if (server_start(&s, sys, c->bin[sys]) == 0) {
        double cpu1 = 0, cpu2 = 0;
        double secs1 = ingest(c, &s, pl1, 0, (long long)series, NULL, c->metrics, START_S, &cpu1);
        double secs2 = secs1 > 0 ? ingest(c, &s, pl2, 0, want, NULL, c->metrics, end_s, &cpu2) : -1;
        if (secs1 > 0) r->new_pps = (double)series / secs1;
        if (secs2 > 0) {
            r->pps[LOADGEN_TELNET] = (double)want / (secs1 + secs2);
            r->cpu_per_m = (cpu1 + cpu2) / ((double)want / 1e6);
            long hwm = bench_proc_status_kb(s.pid, "VmHWM");
            r->hwm_mb = (double)hwm / 1024.0;
            r->rss_per_series = (double)(hwm - s.rss_start_kb) * 1024.0 / (double)series;
            if (sys == SYS_VM) {
                char *b;
                http_req(s.port, "GET", "/internal/force_flush", NULL, &b);
                free(b);
                bench_sleep_ms(200);
            }
            run_queries(c, &s, names, end_s, r);
            measure_restarts(c, &s, names, end_s, r);
            printf("  %-16s %8zu series: %10.0f new-series points/s, %10.0f points/s, %6.0f "
                   "B/series RSS, %6.0f B/series disk, start-up %.2f s (%.2f CPU s), raw %.2f "
                   "ms, sum 1m-avg %.2f ms, group-by %.2f ms\n",
                   sys_names[sys], series, r->new_pps, r->pps[LOADGEN_TELNET], r->rss_per_series,
                   r->disk_per_series, r->startup_s, r->startup_cpu_s, r->q_med[Q_RAW],
                   r->q_med[Q_SUM1M], r->q_med[Q_GROUPBY]);
            fflush(stdout);
        }
    } else {
        fprintf(stderr, "%s: could not start %s\n", sys_names[sys], c->bin[sys]);
    }
    server_destroy(&s);
}

/* Runs the curve into cr[k][sys]. */
void bench_curve(const opts_t *o, char names[][64], result_t (*cr)[N_SYS])
{
    loadgen_payload_t *pl1 = calloc(o->conns, sizeof(loadgen_payload_t));
    loadgen_payload_t *pl2 = calloc(o->conns, sizeof(loadgen_payload_t));
    for (size_t k = 0; k < o->n_curve; k++) {
        opts_t c = *o;
        c.metrics = o->curve_metrics;
        c.hosts = o->curve[k] / c.metrics;
        if (c.hosts < c.conns) c.hosts = c.conns;
        c.rounds = o->curve_rounds;
        c.reps = o->curve_reps;
        printf("cost curve: %zu series (%zu hosts x %zu metrics), %zu rounds, telnet\n",
               c.hosts * c.metrics, c.hosts, c.metrics, c.rounds);
        fflush(stdout);
        putgen_cfg_t cfg = {.seed = 42,
                            .hosts = c.hosts,
                            .metrics = c.metrics,
                            .start_s = START_S,
                            .interval_s = 10};
        loadgen_build(&cfg, LOADGEN_TELNET, c.conns, 1, 0, pl1);
        cfg.start_s = START_S + 10;
        loadgen_build(&cfg, LOADGEN_TELNET, c.conns, c.rounds - 1, 0, pl2);
        for (int s = 0; s < N_SYS; s++)
            if (o->bin[s] && s != SYS_INFLUX) bench_curve_point(&c, s, pl1, pl2, names, &cr[k][s]);
        loadgen_payloads_free(pl1, o->conns);
        loadgen_payloads_free(pl2, o->conns);
    }
    free(pl1);
    free(pl2);
}
