/* table.c -- the Markdown tables of bench_peers (see peers.h). */
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

/* ---- the table -------------------------------------------------------- */

void machine(char *buf, size_t cap)
{
    char model[256] = "unknown CPU", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    long mem_kb = -1;
    f = fopen("/proc/meminfo", "r");
    if (f) {
        if (fgets(line, sizeof line, f)) sscanf(line, "MemTotal: %ld", &mem_kb);
        fclose(f);
    }
    /* the machine is often shared: its load says how far to trust wall clocks */
    double load = -1;
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1;
        fclose(f);
    }
    snprintf(buf, cap, "%s, %ld cores, %.1f GiB memory; load average %.1f at start", model,
             sysconf(_SC_NPROCESSORS_ONLN), (double)mem_kb / 1048576.0, load);
}

static void cell(FILE *f, double v, int decimals)
{
    if (v > 0)
        fprintf(f, "%.*f", decimals, v);
    else
        fprintf(f, "n/a");
}

static void row(FILE *f, const char *name, const result_t *r, size_t off, int decimals)
{
    double v[N_SYS];
    for (int s = 0; s < N_SYS; s++)
        memcpy(&v[s], (const char *)&r[s] + off, sizeof v[s]);
    fprintf(f, "| %s | ", name);
    for (int s = 0; s < N_SYS; s++) {
        if (!r[s].ran && s) continue;
        cell(f, v[s], decimals);
        fprintf(f, " | ");
    }
    for (int s = 1; s < N_SYS; s++) {
        if (!r[s].ran) continue;
        if (v[0] > 0 && v[s] > 0)
            fprintf(f, "%.2f | ", v[0] / v[s]);
        else
            fprintf(f, "n/a | ");
    }
    fprintf(f, "\n");
}

void table(FILE *f, const opts_t *o, const result_t *r)
{
    fprintf(f, "| figure | ");
    for (int s = 0; s < N_SYS; s++)
        if (!s || r[s].ran) fprintf(f, "%s | ", sys_names[s]);
    for (int s = 1; s < N_SYS; s++)
        if (r[s].ran) fprintf(f, "octsdb / %s | ", sys_names[s]);
    fprintf(f, "\n|---|");
    for (int s = 0; s < N_SYS; s++)
        if (!s || r[s].ran) fprintf(f, "---:|");
    for (int s = 1; s < N_SYS; s++)
        if (r[s].ran) fprintf(f, "---:|");
    fprintf(f, "\n");
    char name[128];
    for (int m = 0; m < LOADGEN_N_MODES; m++) {
        snprintf(name, sizeof name, "ingest %s, points/s (higher is better)",
                 loadgen_mode_name((loadgen_mode_t)m));
        row(f, name, r, offsetof(result_t, pps) + (size_t)m * sizeof(double), 0);
    }
    row(f, "CPU s per million points, telnet", r, offsetof(result_t, cpu_per_m), 2);
    row(f, "peak RSS MB, telnet", r, offsetof(result_t, hwm_mb), 1);
    row(f, "RSS bytes per active series", r, offsetof(result_t, rss_per_series), 0);
    row(f, "disk bytes per point after flush", r, offsetof(result_t, disk_per_point), 2);
    row(f, "disk bytes per point after compaction (octsdb compact)", r,
        offsetof(result_t, disk_compacted), 2);
    for (int k = 0; k < N_KINDS; k++) {
        snprintf(name, sizeof name, "disk bytes per point, %s, after flush", kind_names[k]);
        row(f, name, r, offsetof(result_t, disk_kind) + (size_t)k * sizeof(double), 2);
        snprintf(name, sizeof name, "disk bytes per point, %s, after compaction", kind_names[k]);
        row(f, name, r, offsetof(result_t, disk_kind_compacted) + (size_t)k * sizeof(double), 2);
    }
    snprintf(name, sizeof name, "new series/s, %zu new series (higher is better)", o->new_series);
    row(f, name, r, offsetof(result_t, new_series_rate), 0);
    for (int q = 0; q < N_QUERIES; q++) {
        snprintf(name, sizeof name, "query %s, median ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_med) + (size_t)q * sizeof(double), 2);
        snprintf(name, sizeof name, "query %s, p99 ms", query_names[q]);
        row(f, name, r, offsetof(result_t, q_p99) + (size_t)q * sizeof(double), 2);
        if (q < N_SCAN_Q) {
            snprintf(name, sizeof name, "query %s, points read/s (higher is better)",
                     query_names[q]);
            row(f, name, r, offsetof(result_t, q_scan) + (size_t)q * sizeof(double), 0);
        }
    }
}

static void curve_cell(FILE *f, double o, double v, int decimals)
{
    cell(f, o, decimals);
    fprintf(f, " | ");
    cell(f, v, decimals);
    fprintf(f, " | ");
    if (o > 0 && v > 0)
        fprintf(f, "%.2f | ", o / v);
    else
        fprintf(f, "n/a | ");
}

/* The curve as one Markdown table: a row per number of series; per figure
 * octsdb, VictoriaMetrics and their ratio. */
void curve_table(FILE *f, const opts_t *o, const result_t (*cr)[N_SYS])
{
    static const struct {
        const char *name;
        size_t off;
        int decimals;
    } figs[] = {
        {"new-series points/s", offsetof(result_t, new_pps), 0},
        {"points/s", offsetof(result_t, pps), 0}, /* pps[LOADGEN_TELNET] */
        {"RSS B/series", offsetof(result_t, rss_per_series), 0},
        {"disk B/series", offsetof(result_t, disk_per_series), 0},
        {"start-up s", offsetof(result_t, startup_s), 2},
        {"start-up CPU s", offsetof(result_t, startup_cpu_s), 2},
    };
    size_t nf = sizeof figs / sizeof figs[0];
    fprintf(f, "| series |");
    for (size_t i = 0; i < nf; i++)
        fprintf(f, " %s octsdb | VM | ratio |", figs[i].name);
    for (int q = 0; q < N_QUERIES; q++)
        fprintf(f, " %s ms octsdb | VM | ratio |", query_names[q]);
    fprintf(f, "\n|---:|");
    for (size_t i = 0; i < 3 * (nf + N_QUERIES); i++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (size_t k = 0; k < o->n_curve; k++) {
        const char *a = (const char *)&cr[k][SYS_OCTSDB], *b = (const char *)&cr[k][SYS_VM];
        fprintf(f, "| %zu | ", o->curve[k]);
        for (size_t i = 0; i < nf; i++)
            curve_cell(f, *(const double *)(a + figs[i].off), *(const double *)(b + figs[i].off),
                       figs[i].decimals);
        for (int q = 0; q < N_QUERIES; q++)
            curve_cell(f, cr[k][SYS_OCTSDB].q_med[q], cr[k][SYS_VM].q_med[q], 2);
        fprintf(f, "\n");
    }
}

/* ---- the bar of issue 11 ------------------------------------------------ */

enum { BAR_NONE, BAR_RATIO_MIN, BAR_RATIO_MAX, BAR_ABS_BELOW };

typedef struct {
    int curve; /* 0: the main data set; 1: the largest curve point */
    const char *name;
    size_t off; /* of the double in result_t */
    int decimals;
    int kind;
    double bar;
} bar_row_t;

#define QMED(q) (offsetof(result_t, q_med) + (size_t)(q) * sizeof(double))
#define PPS(m)  (offsetof(result_t, pps) + (size_t)(m) * sizeof(double))

static const bar_row_t bar_rows[] = {
    {0, "telnet ingest, points/s (octsdb's end: a query sees every point)", PPS(LOADGEN_TELNET), 0,
     BAR_RATIO_MIN, 2.5},
    {0, "/api/put gzip'd 50-point batches, points/s", PPS(LOADGEN_JSON50GZ), 0, BAR_RATIO_MIN, 1.5},
    {0, "/api/put 50-point batches, points/s", PPS(LOADGEN_JSON50), 0, BAR_NONE, 0},
    {0, "/api/put 500-point batches, points/s", PPS(LOADGEN_JSON500), 0, BAR_NONE, 0},
    {0, "/api/put gzip'd 500-point batches, points/s", PPS(LOADGEN_JSON500GZ), 0, BAR_NONE, 0},
    {1, "RSS bytes per active series", offsetof(result_t, rss_per_series), 0, BAR_RATIO_MAX, 1},
    {1, "disk bytes per series after a clean stop", offsetof(result_t, disk_per_series), 0,
     BAR_RATIO_MAX, 1},
    {1, "new-series ingest, points/s (every point a new series)", offsetof(result_t, new_pps), 0,
     BAR_RATIO_MIN, 2},
    {1, "start-up over the data dir until a one-series query answers, s",
     offsetof(result_t, startup_s), 2, BAR_ABS_BELOW, 5},
    {1, "start-up, CPU s of the process", offsetof(result_t, startup_cpu_s), 2, BAR_NONE, 0},
    {1, "/api/search/lookup {host=*} (VM: /api/v1/series), median ms", QMED(Q_LOOKUP), 2,
     BAR_RATIO_MAX, 1},
    {1, "/api/suggest tag values (VM: /api/v1/label/host/values), median ms", QMED(Q_SUGGEST), 2,
     BAR_RATIO_MAX, 1},
};

/* The five query shapes, each at no more than half VictoriaMetrics' median
 * on both sets (after each set's other rows). */
static const struct {
    int q;
    const char *name;
} bar_queries[] = {
    {Q_RAW, "query one series raw, median ms"},
    {Q_SUM1M, "query sum 1m-avg over every series, median ms"},
    {Q_GROUPBY, "query {host=*} group-by 1m-avg, median ms"},
    {Q_MAXDC, "query max 10m-max by datacenter, median ms"},
    {Q_RATE, "query sum:rate 1m-avg over every series, median ms"},
};

static void bar_row(FILE *f, const opts_t *o, const result_t *set, const bar_row_t *b)
{
    double x = *(const double *)((const char *)&set[SYS_OCTSDB] + b->off);
    double y = *(const double *)((const char *)&set[SYS_VM] + b->off);
    fprintf(f, "| %zu series: %s | ", b->curve ? o->curve[o->n_curve - 1] : o->hosts * o->metrics,
            b->name);
    cell(f, x, b->decimals);
    fprintf(f, " | ");
    cell(f, y, b->decimals);
    double ratio = x > 0 && y > 0 ? x / y : 0;
    if (ratio > 0)
        fprintf(f, " | %.2f | ", ratio);
    else
        fprintf(f, " | n/a | ");
    const char *met = "n/a";
    switch (b->kind) {
    case BAR_NONE:
        fprintf(f, "— | — |\n");
        return;
    case BAR_RATIO_MIN:
        fprintf(f, "ratio ≥ %.1f | ", b->bar);
        if (ratio > 0) met = ratio >= b->bar ? "met" : "**not met**";
        break;
    case BAR_RATIO_MAX:
        fprintf(f, "ratio ≤ %.1f | ", b->bar);
        if (ratio > 0) met = ratio <= b->bar ? "met" : "**not met**";
        break;
    default:
        fprintf(f, "octsdb < %.0f s | ", b->bar);
        if (x > 0) met = x < b->bar ? "met" : "**not met**";
    }
    fprintf(f, "%s |\n", met);
}

void bar_table(FILE *f, const opts_t *o, const result_t *r, const result_t (*cr)[N_SYS])
{
    fprintf(f, "| figure | octsdb | VictoriaMetrics | ratio | bar | met |\n"
               "|---|---:|---:|---:|---|---|\n");
    for (int c = 0; c < 2; c++) {
        const result_t *set = c ? (cr ? cr[o->n_curve - 1] : NULL) : r;
        if (!set) continue;
        for (size_t i = 0; i < sizeof bar_rows / sizeof bar_rows[0]; i++)
            if (bar_rows[i].curve == c) bar_row(f, o, set, &bar_rows[i]);
        for (size_t i = 0; i < sizeof bar_queries / sizeof bar_queries[0]; i++) {
            bar_row_t b = {c, bar_queries[i].name, QMED(bar_queries[i].q), 2, BAR_RATIO_MAX, 0.5};
            bar_row(f, o, set, &b);
        }
    }
}
