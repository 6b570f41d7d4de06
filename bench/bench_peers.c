/* bench_peers.c -- octsdb side by side with VictoriaMetrics (and InfluxDB on
 * request): ingest, CPU, memory, disk, new series, start-up and query
 * latency; first the bar of issue 11 (figure | octsdb | VM | ratio | bar |
 * met), then every figure, then the cost curve.
 *
 * Usage: bench_peers [--hosts N] [--metrics N] [--hours H] [--rounds N]
 *                    [--conns N] [--new-series N] [--reps N] [--runs N]
 *                    [--octsdb PATH] [--vm PATH] [--influx PATH] [--out FILE]
 *                    [--smoke] [--curve N,N,...] [--curve-rounds N]
 *                    [--curve-reps N] [--curve-metrics N] [--restarts N]
 *                    [--curve-only]
 *   --hosts/--metrics/--rounds  the data set: hosts x metrics series with 8
 *              tags each (bench/common/putgen.h), one point per series every
 *              10 s for N rounds (--hours H: H x 360 rounds). The default is
 *              the 2,000-series set: 1,000 hosts x 2 metrics x 1,000
 *              rounds = 2 M points per mode.
 *   --conns    parallel sending connections (default 4)
 *   --new-series  points of the new-series run, each one a new series (default 20000)
 *   --reps     runs of each query (default 20)
 *   --runs     repetitions of every ingest mode, each into a fresh data dir
 *              (default 3); every figure of the main table is the median of
 *              the runs' figures (queries: of each run's median)
 *   --octsdb   the octsdb binary (default $OCTSDB_BIN, else ./octsdb next to this program)
 *   --vm, --influx  the peers' binaries (victoria-metrics, influxd); a peer
 *              without a binary is left out of the table
 *   --out      also write the tables as Markdown to FILE, with the machine
 *   --smoke    a tiny run of octsdb alone (seconds): every figure, no peers
 *   --curve N,N,...  also the cost curve: for each number of series N
 *              (10000 ... 1000000), the same fleet scaled to N series
 *              (N / --curve-metrics hosts, default 10 metrics),
 *              --curve-rounds rounds of telnet puts (default 3) into a
 *              fresh octsdb and VictoriaMetrics each: new-series points/s
 *              (the first round alone), points/s over every round, RSS per
 *              series, the query medians over --curve-reps runs (default 3:
 *              a query over 1 M series takes seconds), disk per series
 *              after a clean stop, and start-up: the stopped system
 *              restarted on its data dir --restarts times (default 3), timed
 *              until a one-series query answers (median). The largest point
 *              is also the "1,000,000 series" part of the bar table.
 *   --curve-only  only the cost curve (the main table is skipped)
 *
 * Design: the data set is generated once per mode as the exact bytes that go
 * on the wire (telnet `put` lines; POST /api/put requests with JSON arrays of
 * 50 and 500 points, plain and gzip'd), split by host over the connections,
 * and the same bytes are sent to every system, each started fresh on
 * 127.0.0.1 with an empty data dir and stopped by its PID; the systems take
 * turns within each run, so a load change on the machine hits both. The
 * clock stops when the system itself reports every point stored, not when
 * the sender is done. octsdb: its tsd.datapoints.added (telnet `stats`, one
 * short line of counters, polled every 10 ms) and only once that counter is
 * complete a query counting every point (sum of 0all-count per metric),
 * repeated until it sees them all: the counting query never runs while
 * points are still coming in, so it does not slow the ingest it times.
 * VictoriaMetrics: vm_rows_added_to_storage_total (/metrics, every 20 ms);
 * InfluxDB: SELECT count(value). CPU seconds are the system process's
 * CPU-time clock (clock_getcpuclockid: every thread, in ns) over the ingest;
 * peak RSS is VmHWM, and RSS per series is VmHWM minus the RSS when it
 * started listening, over the number of series. Disk is the allocated size
 * (st_blocks, as du) of the data dir after a clean stop, which flushes
 * octsdb's head and VictoriaMetrics' in-memory parts (InfluxDB keeps its WAL
 * until a cache snapshot: counted as it lies), without RocksDB's info log
 * files; octsdb is measured again after `octsdb compact` on the stopped dir,
 * and the gauge and the integer-valued series are each also ingested alone
 * (telnet, first run only) for their own bytes per point. Queries run on the
 * telnet data set with equivalent PromQL for VictoriaMetrics (its result
 * cache is off so repeated runs compute); each is run --reps times over a
 * fresh connection, median and p99 reported, with the points one run reads
 * from storage (octsdb: rawDPs of show_summary on one more run;
 * VictoriaMetrics: the growth of vm_rows_read_per_query_sum over the runs,
 * per run), which over the median latency gives points read per second.
 * The cost curve's ingest ends at each system's own counter (octsdb's
 * tsd.datapoints.added too): a query counting a million series' points would
 * cost more than the ingest it times. Start-up (curve) is wall time from the restart's fork to the
 * first 200 answer with points to the one-series raw query, polled every 20 ms; its CPU seconds are
 * the process's at that moment. The senders are bench/common/loadgen.h; the parts are
 * bench/peers/peers.h. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "peers/peers.h"

const char *const sys_names[N_SYS] = {"octsdb", "VictoriaMetrics", "InfluxDB"};

const char *const query_names[N_QUERIES] = {"one series raw",
                                            "sum 1m-avg, every series",
                                            "sum:rate 1m-avg, every series",
                                            "{host=*} group-by 1m-avg",
                                            "max 10m-max by datacenter",
                                            "/api/search/lookup",
                                            "/api/suggest"};

const char *const kind_names[N_KINDS] = {
    "gauge series only (random walks, 1/2/4 decimals)",
    "integer series only (integer gauges, counters, mostly-constant)"};
const unsigned kind_masks[N_KINDS] = {
    (1u << DATAGEN_GAUGE_D2) | (1u << DATAGEN_GAUGE_D1) | (1u << DATAGEN_GAUGE_D4),
    (1u << DATAGEN_INT_GAUGE) | (1u << DATAGEN_COUNTER) | (1u << DATAGEN_CONST)};

void result_median(result_t *out, const result_t *runs, size_t n)
{
    memset(out, 0, sizeof *out);
    size_t first = offsetof(result_t, pps) / sizeof(double),
           last = offsetof(result_t, end) / sizeof(double);
    for (size_t i = 0; i < n; i++)
        out->ran |= runs[i].ran;
    for (size_t k = first; k < last; k++) {
        double v[MAX_RUNS];
        size_t m = 0;
        for (size_t i = 0; i < n && i < MAX_RUNS; i++) {
            double x = ((const double *)&runs[i])[k];
            if (x > 0) v[m++] = x;
        }
        if (!m) continue;
        /* an even count (a run failed) takes the mean of the middle two */
        double med = bench_median(v, m);
        if (m % 2 == 0) med = (v[m / 2 - 1] + v[m / 2]) / 2;
        ((double *)out)[k] = med;
    }
}

/* The tables: the bar, every figure of the main set, the curve; with
 * kind_points (the results file), the notes on how figures are taken. */
static void report(FILE *f, const opts_t *o, const result_t *r, const result_t (*cr)[N_SYS],
                   const size_t *kind_points)
{
    if (!o->curve_only || o->n_curve) {
        fprintf(f,
                "## The bar (issue 11)\n\n"
                "2,000-series rows: the main data set (%zu series x %zu points), each "
                "figure the median of %zu runs, each run a fresh data dir per system and "
                "mode (queries: the median of %zu runs of the query within each run). "
                "1,000,000-series rows: the largest point of the cost curve (%zu series), "
                "one ingest per system, start-up the median of %zu restarts, queries "
                "medians of %zu runs. ratio = octsdb / VictoriaMetrics.\n\n",
                o->hosts * o->metrics, o->rounds, o->runs, o->reps,
                o->n_curve ? o->curve[o->n_curve - 1] : 0, o->restarts, o->curve_reps);
        bar_table(f, o, o->curve_only ? NULL : r, o->n_curve ? cr : NULL);
    }
    if (!o->curve_only) {
        fprintf(f, "\n## Every figure (main data set, medians of %zu runs)\n\n", o->runs);
        table(f, o, r);
    }
    if (o->n_curve) {
        fprintf(f,
                "\n## Cost curve\n\nThe same fleet scaled to each number of series "
                "(series / %zu metrics hosts), %zu rounds of 10 s over telnet into a "
                "fresh instance of each system (one run): new-series points/s is the "
                "first round alone (every point a new series), points/s all rounds; RSS per "
                "series as above; query medians of %zu runs; disk per series after a clean "
                "stop; start-up the median of %zu restarts on that data dir until a "
                "one-series query answers; ratio = octsdb / VictoriaMetrics.\n\n",
                o->curve_metrics, o->curve_rounds, o->curve_reps, o->restarts);
        curve_table(f, o, cr);
    }
    if (!kind_points) return;
    fprintf(f,
            "\nNotes:\n"
            "- points read/s: the points the system read from storage for one run of "
            "the query, divided by its median latency; octsdb counts them itself "
            "(rawDPs of `show_summary`), VictoriaMetrics by the growth of its "
            "`vm_rows_read_per_query_sum` over the repeated runs, per run. "
            "/api/search/lookup and "
            "/api/suggest read no points: no such row. InfluxDB runs no queries "
            "(no equivalent of these queries is set up for it): n/a.\n"
            "- disk: the data dir's allocated bytes after a clean stop, over the points "
            "sent; RocksDB's info log files (LOG, LOG.old.*) are not counted, as the "
            "peers' logs (stderr) are not.\n"
            "- after compaction: octsdb's stopped data dir after `octsdb compact "
            "--datadir=DIR`, a full compaction of its store (its rows already hold one "
            "block per series-hour, so OpenTSDB's row compaction has nothing left to "
            "do). The peers have no such step to run: VictoriaMetrics merges its parts "
            "and InfluxDB its TSM files in the background on their own schedule, so "
            "their figure is the one after flush (n/a here).\n"
            "- by kind: the same fleet's series of one kind only, ingested alone over "
            "telnet into a fresh instance (first run only): %zu gauge points, %zu integer "
            "points; InfluxDB not run (n/a).\n"
            "- ingest end: octsdb's when a query counting every point sees them all (polled "
            "only after its stored-points counter is complete); VictoriaMetrics' when its "
            "vm_rows_added_to_storage_total has them all. The cost curve: each system's own "
            "counter (octsdb's tsd.datapoints.added).\n"
            "\nHow figures are taken: see the header of bench/bench_peers.c.\n",
            kind_points[KIND_GAUGE], kind_points[KIND_INT]);
}

int main(int argc, char **argv)
{
    opts_t o = {.hosts = 1000,
                .metrics = 2,
                .rounds = 1000,
                .conns = 4,
                .new_series = 20000,
                .reps = 20,
                .runs = 3,
                .curve_rounds = 3,
                .curve_reps = 3,
                .curve_metrics = 10,
                .restarts = 3};
    o.bin[SYS_OCTSDB] = bench_octsdb_bin(argv[0]);
    char cmdline[2048];
    size_t cl = 0;
    for (int i = 0; i < argc && cl < sizeof cmdline - 256; i++)
        cl += (size_t)snprintf(cmdline + cl, sizeof cmdline - cl, "%s%s", i ? " " : "",
                               i ? argv[i] : "bench_peers");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            o.smoke = 1;
            o.hosts = 20;
            o.metrics = 5;
            o.rounds = 20;
            o.conns = 2;
            o.new_series = 500;
            o.reps = 3;
            o.runs = 2; /* the medians' code path */
            o.restarts = 2;
            o.curve_metrics = 5;
            o.curve[0] = 200; /* the curve's code path, octsdb alone */
            o.n_curve = 1;
            continue;
        }
        if (!strcmp(a, "--curve-only")) {
            o.curve_only = 1;
            continue;
        }
        if (!v) goto usage;
        i++;
        if (!strcmp(a, "--hosts"))
            o.hosts = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--metrics"))
            o.metrics = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--hours"))
            o.rounds = (size_t)(strtod(v, NULL) * 360.0 + 0.5);
        else if (!strcmp(a, "--rounds"))
            o.rounds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--runs"))
            o.runs = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--restarts"))
            o.restarts = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--conns"))
            o.conns = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--new-series"))
            o.new_series = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--reps"))
            o.reps = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--octsdb"))
            o.bin[SYS_OCTSDB] = v;
        else if (!strcmp(a, "--vm"))
            o.bin[SYS_VM] = *v ? v : NULL;
        else if (!strcmp(a, "--influx"))
            o.bin[SYS_INFLUX] = *v ? v : NULL;
        else if (!strcmp(a, "--out"))
            o.out = v;
        else if (!strcmp(a, "--curve")) {
            o.n_curve = 0;
            for (const char *p = v; *p && o.n_curve < MAX_CURVE;) {
                char *end;
                unsigned long long n = strtoull(p, &end, 10);
                if (end == p) goto usage;
                if (n) o.curve[o.n_curve++] = (size_t)n;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') goto usage;
            }
        } else if (!strcmp(a, "--curve-rounds"))
            o.curve_rounds = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--curve-metrics"))
            o.curve_metrics = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--curve-reps"))
            o.curve_reps = strtoull(v, NULL, 10);
        else
            goto usage;
    }
    if (o.smoke) o.bin[SYS_VM] = o.bin[SYS_INFLUX] = NULL;
    if (o.conns < 1) o.conns = 1;
    if (o.hosts < o.conns) o.hosts = o.conns;
    if (o.metrics < 1) o.metrics = 1;
    if (o.metrics > putgen_max_metrics()) o.metrics = putgen_max_metrics();
    if (o.curve_metrics < 1) o.curve_metrics = 1;
    if (o.curve_metrics > putgen_max_metrics()) o.curve_metrics = putgen_max_metrics();
    if (o.rounds < 2) o.rounds = 2;
    if (o.reps < 1) o.reps = 1;
    if (o.runs < 1) o.runs = 1;
    if (o.runs > MAX_RUNS) o.runs = MAX_RUNS;
    if (o.restarts < 1) o.restarts = 1;
    if (o.restarts > MAX_RUNS) o.restarts = MAX_RUNS;
    if (o.new_series < o.conns) o.new_series = o.conns;
    if (o.curve_rounds < 2) o.curve_rounds = 2;
    if (o.curve_reps < 1) o.curve_reps = 1;
    if (o.curve_only && !o.n_curve) goto usage;
    for (int s = 0; s < N_SYS; s++) {
        struct stat sb;
        if (o.bin[s] && stat(o.bin[s], &sb) < 0) {
            fprintf(stderr, "%s binary not found: %s\n", sys_names[s], o.bin[s]);
            if (s == SYS_OCTSDB) return 2;
            o.bin[s] = NULL;
        }
    }
    signal(SIGPIPE, SIG_IGN);

    /* the metric names, in the generator's order */
    size_t all_metrics = putgen_max_metrics();
    char(*names)[64] = calloc(all_metrics, sizeof *names);
    {
        putgen_cfg_t cfg = {.seed = 42, .hosts = 1, .metrics = all_metrics, .start_s = START_S};
        putgen_t *g = putgen_new(&cfg, 0, 1);
        putgen_point_t pt;
        for (size_t m = 0; m < all_metrics; m++) {
            putgen_next(g, &pt);
            snprintf(names[m], sizeof names[m], "%s", pt.metric);
        }
        putgen_free(g);
    }
    size_t points = o.hosts * o.metrics * o.rounds;
    char mach[512];
    machine(mach, sizeof mach);
    printf("bench_peers: %zu hosts x %zu metrics = %zu series (8 tags each), %zu rounds of 10 s "
           "(%.2f h) = %zu points per mode, %zu connections\nmachine: %s\n",
           o.hosts, o.metrics, o.hosts * o.metrics, o.rounds, (double)o.rounds / 360.0, points,
           o.conns, mach);
    fflush(stdout);

    result_t r[N_SYS], (*rr)[N_SYS] = calloc(o.runs, sizeof *rr);
    memset(r, 0, sizeof r);
    size_t kind_points[N_KINDS] = {0};
    if (!o.curve_only) {
        /* every mode's bytes, generated once and sent to every system in turn */
        loadgen_payload_t *pl = calloc(o.conns, sizeof(loadgen_payload_t));
        for (int m = 0; m < LOADGEN_N_MODES; m++) {
            putgen_cfg_t cfg = {.seed = 42,
                                .hosts = o.hosts,
                                .metrics = o.metrics,
                                .start_s = START_S,
                                .interval_s = 10};
            loadgen_build(&cfg, (loadgen_mode_t)m, o.conns, o.rounds, 0, pl);
            for (size_t run = 0; run < o.runs; run++)
                for (int s = 0; s < N_SYS; s++)
                    if (o.bin[s]) bench_mode(&o, s, m, pl, names, &rr[run][s]);
            loadgen_payloads_free(pl, o.conns);
        }
        build_new_series(&o, pl);
        for (size_t run = 0; run < o.runs; run++)
            for (int s = 0; s < N_SYS; s++)
                if (o.bin[s]) bench_new_series(&o, s, pl, &rr[run][s]);
        loadgen_payloads_free(pl, o.conns);
        /* each kind of series alone, for its bytes per point (InfluxDB left out:
         * at its ~15,000 points/s it would double the run for a figure the bar
         * does not compare against) */
        for (int k = 0; k < N_KINDS; k++) {
            putgen_cfg_t cfg = {.seed = 42,
                                .hosts = o.hosts,
                                .metrics = o.metrics,
                                .start_s = START_S,
                                .interval_s = 10,
                                .class_mask = kind_masks[k]};
            loadgen_build(&cfg, LOADGEN_TELNET, o.conns, o.rounds, 0, pl);
            kind_points[k] = 0;
            for (size_t c = 0; c < o.conns; c++)
                kind_points[k] += pl[c].points;
            for (int s = 0; s < N_SYS; s++)
                if (o.bin[s] && s != SYS_INFLUX) bench_kind(&o, s, k, pl, &rr[0][s]);
            loadgen_payloads_free(pl, o.conns);
        }
        free(pl);
        for (int s = 0; s < N_SYS; s++) {
            result_t one[MAX_RUNS];
            for (size_t run = 0; run < o.runs; run++)
                one[run] = rr[run][s];
            result_median(&r[s], one, o.runs);
        }
        r[0].ran = 1;
    }
    free(rr);
    result_t(*cr)[N_SYS] = calloc(MAX_CURVE, sizeof *cr);
    if (o.n_curve) bench_curve(&o, names, cr);

    printf("\n");
    report(stdout, &o, r, cr, NULL);
    int rc = 0;
    if (o.out) {
        FILE *f = fopen(o.out, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s: %s\n", o.out, strerror(errno));
            rc = 1;
        } else {
            time_t t = time(NULL);
            char date[64];
            strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
            fprintf(f,
                    "# octsdb vs peers, %s\n\n"
                    "- machine: %s\n- command: `%s`\n"
                    "- data set: %zu hosts x %zu metrics = %zu series with 8 tags, %zu rounds "
                    "of 10 s (%.2f h) = %zu points per mode, seed 42, %zu connections\n"
                    "- ratios are octsdb / peer; every system ran alone on the same cores, "
                    "sender on the same machine\n\n",
                    date, mach, cmdline, o.hosts, o.metrics, o.hosts * o.metrics, o.rounds,
                    (double)o.rounds / 360.0, points, o.conns);
            report(f, &o, r, cr, kind_points);
            fclose(f);
        }
    }
    free(names);
    /* smoke: every octsdb figure must have been produced; the table says
     * which one is missing (n/a) */
    if (o.smoke) {
        const result_t *x = &r[0];
        int missing = !o.curve_only &&
                      (x->cpu_per_m <= 0 || x->hwm_mb <= 0 || x->rss_per_series <= 0 ||
                       x->disk_per_point <= 0 || x->disk_compacted <= 0 || x->new_series_rate <= 0);
        for (int m = 0; !o.curve_only && m < LOADGEN_N_MODES; m++)
            missing |= x->pps[m] <= 0;
        for (int k = 0; !o.curve_only && k < N_KINDS; k++)
            missing |= x->disk_kind[k] <= 0 || x->disk_kind_compacted[k] <= 0;
        for (int q = 0; !o.curve_only && q < N_QUERIES; q++)
            missing |= x->q_med[q] <= 0 || x->q_p99[q] <= 0 || (q < N_SCAN_Q && x->q_scan[q] <= 0);
        for (size_t k = 0; k < o.n_curve; k++) {
            const result_t *c = &cr[k][SYS_OCTSDB];
            missing |= c->pps[LOADGEN_TELNET] <= 0 || c->rss_per_series <= 0 || c->new_pps <= 0 ||
                       c->disk_per_series <= 0 || c->startup_s <= 0 || c->startup_cpu_s <= 0;
            for (int q = 0; q < N_QUERIES; q++)
                missing |= c->q_med[q] <= 0;
        }
        if (missing) {
            fprintf(stderr, "bench_peers --smoke: a figure is missing:\n");
            report(stderr, &o, r, cr, NULL);
            rc = 1;
        }
    }
    free(cr);
    return rc;

usage:
    fprintf(stderr,
            "usage: %s [--hosts N] [--metrics N] [--hours H] [--rounds N] [--conns N] "
            "[--new-series N] [--reps N] [--runs N] [--restarts N] [--octsdb PATH] [--vm PATH] "
            "[--influx PATH] [--out FILE] [--smoke] "
            "[--curve N,N,...] [--curve-rounds N] [--curve-reps N] [--curve-metrics N] "
            "[--curve-only]\n",
            argv[0]);
    return 2;
}
