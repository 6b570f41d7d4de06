/* peers.h -- the parts of bench_peers (bench/bench_peers.c has the usage and
 * how every figure is taken): the systems (server.c), sending a data set and
 * knowing it is stored (ingest.c), the query shapes (query.c), one system's
 * run over a data set (runs.c) and the tables (table.c).
 *
 * Single-threaded apart from loadgen's senders; errors are reported on
 * stderr by the run that met them and leave the figure at 0 ("n/a"), so a
 * failing system never stops the others' figures. Buffers returned are
 * malloc'd and owned by the caller. */
#ifndef OCT_BENCH_PEERS_H
#define OCT_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/benchutil.h"
#include "common/loadgen.h"
#include "common/putgen.h"

#define START_S   1700000000LL
#define MAX_CURVE 8
#define MAX_RUNS  9

enum { SYS_OCTSDB, SYS_VM, SYS_INFLUX, N_SYS };
extern const char *const sys_names[N_SYS];

/* The query shapes; those up to N_SCAN_Q - 1 read points. */
enum { Q_RAW, Q_SUM1M, Q_RATE, Q_GROUPBY, Q_MAXDC, Q_LOOKUP, Q_SUGGEST, N_QUERIES };
#define N_SCAN_Q (Q_MAXDC + 1)
extern const char *const query_names[N_QUERIES];

/* The disk-by-kind runs: the bar differs for gauges and for the
 * integer-valued series, so each is also ingested alone. */
enum { KIND_GAUGE, KIND_INT, N_KINDS };
extern const char *const kind_names[N_KINDS];
extern const unsigned kind_masks[N_KINDS];

typedef struct {
    size_t hosts, metrics, rounds, conns, new_series, reps, runs;
    const char *bin[N_SYS];
    const char *out;
    int smoke;
    size_t curve[MAX_CURVE], n_curve, curve_rounds, curve_reps; /* series per point */
    size_t curve_metrics; /* the curve's fleet: curve[k] / curve_metrics hosts */
    size_t restarts;      /* start-ups timed per curve point */
    int curve_only;
} opts_t;

/* Everything measured for one system; a figure of 0 is "not measured".
 * Every field from pps to the end is a double (result_median relies on it). */
typedef struct {
    int ran;
    double pps[LOADGEN_N_MODES];
    double cpu_per_m;      /* telnet: CPU seconds per million points */
    double hwm_mb;         /* telnet: peak RSS */
    double rss_per_series; /* bytes */
    double disk_per_point; /* bytes */
    double disk_compacted; /* octsdb: bytes per point after `octsdb compact` */
    double disk_kind[N_KINDS];
    double disk_kind_compacted[N_KINDS];
    double new_series_rate;  /* series/s */
    double q_med[N_QUERIES]; /* ms */
    double q_p99[N_QUERIES];
    double q_scan[N_QUERIES]; /* points read per second of median latency */
    /* the cost curve's extra figures */
    double new_pps;         /* points/s of the first round: every point a new series */
    double disk_per_series; /* bytes after a clean stop */
    double startup_s;       /* restart on the data dir until a one-series query answers */
    double startup_cpu_s;   /* the process's CPU seconds over that start-up */
    double end;             /* marks the end of the doubles */
} result_t;

/* out = per figure, the median of the runs that measured it. */
void result_median(result_t *out, const result_t *runs, size_t n);

/* ---- server.c ----------------------------------------------------------- */

typedef struct {
    int sys;
    int pid;
    int port;   /* octsdb: everything; VM: HTTP API; Influx: HTTP API */
    int telnet; /* telnet put port */
    int put;    /* /api/put port */
    const char *bin;
    char dir[256];
    char log[300];
    long rss_start_kb;
} server_t;

/* One request with Connection: close; the body into *out. Returns the
 * HTTP status or -1. */
int http_req(int port, const char *method, const char *target, const char *body, char **out);
/* CPU seconds the process has used (every thread), or -1. */
double proc_cpu_s(int pid);
/* Allocated bytes under dir (as du), RocksDB's info logs left out; -1 on error. */
long long du_bytes(const char *dir);
void print_log(const server_t *s);
/* Starts sys fresh on an empty data dir; 0 when it answers. */
int server_start(server_t *s, int sys, const char *bin);
/* Starts the stopped s again on its data dir and ports; returns at once
 * (0) once the process runs, the caller waits for what it needs. */
int server_respawn(server_t *s);
/* A clean stop (each flushes on SIGTERM/SIGINT); 0 if it exited. */
int server_stop(server_t *s);
/* Stops s and removes its data dir and log. */
void server_destroy(server_t *s);

/* ---- ingest.c ----------------------------------------------------------- */

/* The new-series run's payloads: every line a new series. */
void build_new_series(const opts_t *o, loadgen_payload_t *pl);
/* Sends the payloads and waits until the system reports `want` points
 * stored (octsdb, with names: a query sees them); seconds or -1, *cpu the
 * process's CPU seconds over it. */
double ingest(const opts_t *o, server_t *s, const loadgen_payload_t *pl, int http, long long want,
              char names[][64], size_t metrics, int64_t end_s, double *cpu);

/* ---- query.c ------------------------------------------------------------ */

/* The target of query q for sys (octsdb or VictoriaMetrics) into buf. */
void query_target(int sys, int q, char names[][64], size_t metrics, int64_t end_s, char *buf,
                  size_t cap);
/* Runs every query o->reps times into r's medians, p99s and points read/s. */
void run_queries(const opts_t *o, const server_t *s, char names[][64], int64_t end_s, result_t *r);

/* ---- runs.c ------------------------------------------------------------- */

void bench_mode(const opts_t *o, int sys, int m, const loadgen_payload_t *pl, char names[][64],
                result_t *r);
void bench_kind(const opts_t *o, int sys, int kind, const loadgen_payload_t *pl, result_t *r);
void bench_new_series(const opts_t *o, int sys, const loadgen_payload_t *pl, result_t *r);
/* The cost curve into cr[k][sys]. */
void bench_curve(const opts_t *o, char names[][64], result_t (*cr)[N_SYS]);

/* ---- table.c ------------------------------------------------------------ */

void machine(char *buf, size_t cap);
/* The bar of issue 11, one row per figure: octsdb, VM, ratio, bar, met. */
void bar_table(FILE *f, const opts_t *o, const result_t *r, const result_t (*cr)[N_SYS]);
/* Every figure of the main data set, every system. */
void table(FILE *f, const opts_t *o, const result_t *r);
void curve_table(FILE *f, const opts_t *o, const result_t (*cr)[N_SYS]);

#endif
