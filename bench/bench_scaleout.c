/* bench_scaleout.c -- ingest and query through 1, 2 and 3 TSDs sharing one
 * data set on a Ceph RADOS cluster, beside one TSD on the embedded store.
 *
 * Usage: bench_scaleout [--rados CONF] [--points N] [--hosts N] [--metrics N]
 *                       [--conns N] [--tsds N] [--runs N] [--bin PATH]
 *   --rados    the octsdb config file naming the cluster (tsd.storage.backend
 *              = rados, tsd.storage.rados.*), as scripts/ceph-cluster.sh
 *              writes it (default $OCTSDB_TEST_STORE_RADOS); without one only
 *              the embedded store is measured
 *   --points   points per setup (default 400000)
 *   --hosts, --metrics   the fleet (default 500 x 10 = 5,000 series, 8 tags)
 *   --conns    connections per TSD (default 2)
 *   --tsds     the most TSDs on RADOS (default 3)
 *   --runs     runs of every setup, taken in turns (embedded, rados 1, 2, 3,
 *              embedded, ...) so that the machine's load spreads over all;
 *              the table gives the medians (default 1)
 *   --bin      the octsdb binary (default $OCTSDB_BIN, else next to this program)
 *
 * Not part of `make bench`: it needs a cluster that bench.sh does not start
 * (scripts/ceph-cluster.sh start DIR gives one, stopped with stop DIR).
 *
 * Per setup: starts the TSDs (on RADOS: one fresh namespace shared by all,
 * each TSD its own data dir), sends the fleet as POST /api/put with 500
 * points per request (bench/common/loadgen.h), connection c to TSD c mod N,
 * and reports
 *   accepted   points/s until every request is answered (204);
 *   stored     points/s until a following sync put returned on every TSD:
 *              on RADOS everything accepted is then in the cluster,
 *              replicated (docs/scale-out.md); embedded: in the synced log;
 *   query      `sum:1m-avg:<first metric>` over the whole range through
 *              each TSD, median of 3 per TSD, the slowest TSD's median
 *              (every TSD must give the same answer: checked).
 * Everything -- the 3 OSDs and the monitor, the TSDs and this client --
 * runs on one machine, so the figures say what the software costs, not
 * how a cluster of machines scales. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/benchutil.h"
#include "common/loadgen.h"
#include "common/putgen.h"
#include "common/tsdproc.h"

#define MAX_TSDS 8
#define MAX_RUNS 15

typedef struct {
    size_t points, hosts, metrics, conns;
    int tsds, runs;
    const char *bin, *rados;
} opts_t;

typedef struct {
    double acc_pps, stored_pps, query_ms;
} result_t;

/* GET target from 127.0.0.1:port; the body (malloc'd) and the status. */
static char *http_get(int port, const char *target, int *status)
{
    *status = -1;
    int fd = bench_connect(port);
    if (fd < 0) return NULL;
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", target);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 60000) <= 0) break;
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    if (len > 12) *status = atoi(buf + 9);
    char *body = strstr(buf, "\r\n\r\n");
    char *out = strdup(body ? body + 4 : "");
    free(buf);
    return out;
}

/* A config file: the cluster's, plus namespace ns. Returns its path (malloc'd). */
static char *rados_config(const char *cluster, const char *ns)
{
    char *path = strdup("/tmp/bench_scaleout.conf.XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    FILE *in = fopen(cluster, "r"), *out = fdopen(fd, "w");
    if (!in || !out) {
        if (in) fclose(in);
        if (out) fclose(out);
        free(path);
        return NULL;
    }
    char line[4096];
    while (fgets(line, sizeof line, in))
        fputs(line, out);
    fprintf(out, "\ntsd.storage.rados.namespace = %s\n", ns);
    fclose(in);
    fclose(out);
    return path;
}

static int run_setup(const opts_t *o, int ntsd, const char *cfgpath, result_t *res)
{
    tsdproc_t d[MAX_TSDS];
    char cfgarg[300];
    const char *extra[] = {cfgpath ? cfgarg : NULL, NULL};
    if (cfgpath) snprintf(cfgarg, sizeof cfgarg, "--config=%s", cfgpath);
    int started = 0, rc = 0;
    for (; started < ntsd; started++)
        if (tsdproc_start(&d[started], o->bin, "bench_scaleout", extra) < 0) {
            rc = -1;
            goto out;
        }
    size_t conns = o->conns * (size_t)ntsd, series = o->hosts * o->metrics;
    putgen_cfg_t cfg = {.seed = 42,
                        .hosts = o->hosts,
                        .metrics = o->metrics,
                        .start_s = 1700000000,
                        .interval_s = 10};
    loadgen_payload_t *pl = calloc(conns, sizeof *pl);
    loadgen_conn_t *jobs = calloc(conns, sizeof *jobs);
    size_t rounds = (o->points + series - 1) / series;
    loadgen_build(&cfg, LOADGEN_JSON500, conns, rounds, o->points, pl);
    size_t total = 0;
    for (size_t c = 0; c < conns; c++) {
        total += pl[c].points;
        jobs[c].pl = &pl[c];
        jobs[c].port = d[c % (size_t)ntsd].port;
        jobs[c].http = 1;
        jobs[c].ok_status = 204;
        jobs[c].timeout_ms = 60000;
    }
    double t0 = bench_now_s();
    loadgen_totals_t tot = {0};
    if (loadgen_start(jobs, conns) < 0) {
        rc = -1;
    } else {
        loadgen_join(jobs, conns, &tot);
        double t_acc = tot.last_s > t0 ? tot.last_s : t0;
        for (int i = 0; i < ntsd && !rc; i++) {
            int st = tsdproc_sync_put(d[i].port);
            if (st != 204 && st != 200) {
                fprintf(stderr, "sync put on TSD %d: %d\n", i, st);
                rc = -1;
            }
        }
        double t_st = bench_now_s();
        res->acc_pps = (double)total / (t_acc - t0);
        res->stored_pps = (double)total / (t_st - t0);
        if (tot.failed || tot.err) {
            fprintf(stderr, "%zu requests failed (%s)\n", tot.failed, strerror(tot.err));
            rc = -1;
        }
    }
    loadgen_payloads_free(pl, conns);
    free(pl);
    free(jobs);
    if (rc) goto out;

    /* the first metric of the fleet, over every round */
    putgen_t *g = putgen_new(&cfg, 0, 1);
    putgen_point_t p;
    putgen_next(g, &p);
    char target[512];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:1m-avg:%s",
             (long long)cfg.start_s, (long long)cfg.start_s + (long long)rounds * cfg.interval_s,
             p.metric);
    putgen_free(g);
    bench_sleep_ms(1000); /* past the visibility bound */
    char *first = NULL;
    double slowest = 0;
    for (int i = 0; i < ntsd && !rc; i++) {
        double ms[3];
        for (int r = 0; r < 3 && !rc; r++) {
            int st;
            double q0 = bench_now_s();
            char *body = http_get(d[i].port, target, &st);
            ms[r] = (bench_now_s() - q0) * 1000;
            if (st != 200 || !body || strlen(body) < 20) {
                fprintf(stderr, "query on TSD %d: %d\n", i, st);
                rc = -1;
            } else if (!first) {
                first = body;
                body = NULL;
            } else if (strcmp(first, body)) {
                fprintf(stderr, "TSD %d answers differently from TSD 0\n", i);
                rc = -1;
            }
            free(body);
        }
        double m = bench_median(ms, 3);
        if (m > slowest) slowest = m;
    }
    free(first);
    res->query_ms = slowest;
out:
    if (rc)
        for (int i = 0; i < started; i++)
            tsdproc_print_log(&d[i]);
    for (int i = 0; i < started; i++)
        tsdproc_stop(&d[i]);
    return rc;
}

static void print_row(const char *name, int ntsd, const result_t *r, const result_t *base)
{
    printf("| %-9s | %d | %10.0f | %5.2f | %10.0f | %5.2f | %8.1f |\n", name, ntsd, r->acc_pps,
           r->acc_pps / base->acc_pps, r->stored_pps, r->stored_pps / base->stored_pps,
           r->query_ms);
}

int main(int argc, char **argv)
{
    opts_t o = {.points = 400000, .hosts = 500, .metrics = 10, .conns = 2, .tsds = 3, .runs = 1};
    o.bin = bench_octsdb_bin(argv[0]);
    o.rados = getenv("OCTSDB_TEST_STORE_RADOS");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(a, "--rados"))
            o.rados = v;
        else if (!strcmp(a, "--points"))
            o.points = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--hosts"))
            o.hosts = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--metrics"))
            o.metrics = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--conns"))
            o.conns = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--tsds"))
            o.tsds = atoi(v);
        else if (!strcmp(a, "--runs"))
            o.runs = atoi(v);
        else if (!strcmp(a, "--bin"))
            o.bin = v;
        else
            goto usage;
        i++;
    }
    if (o.conns < 1) o.conns = 1;
    if (o.tsds < 1) o.tsds = 1;
    if (o.tsds > MAX_TSDS) o.tsds = MAX_TSDS;
    if (o.runs < 1) o.runs = 1;
    if (o.runs > MAX_RUNS) o.runs = MAX_RUNS;
    if (o.metrics < 1) o.metrics = 1;
    if (o.metrics > putgen_max_metrics()) o.metrics = putgen_max_metrics();
    if (o.hosts < o.conns * (size_t)o.tsds) o.hosts = o.conns * (size_t)o.tsds;
    struct stat sb;
    if (stat(o.bin, &sb) < 0) {
        fprintf(stderr, "octsdb binary not found: %s (set $OCTSDB_BIN or --bin)\n", o.bin);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    printf("scale-out: %zu hosts x %zu metrics = %zu series, %zu points per setup, /api/put "
           "500 points a request, %zu connections per TSD; median of %d run(s), setups in turns; "
           "one machine runs everything\n\n",
           o.hosts, o.metrics, o.hosts * o.metrics, o.points, o.conns, o.runs);
    int rados = o.rados && *o.rados;
    int nset = rados ? 1 + o.tsds : 1;
    /* setup 0: the embedded store, 1 TSD; setup n: n TSDs on RADOS */
    static result_t res[1 + MAX_TSDS][MAX_RUNS];
    int rc = 0;
    for (int r = 0; r < o.runs && !rc; r++)
        for (int s = 0; s < nset && !rc; s++) {
            char *cfg = NULL;
            if (s) {
                char ns[80];
                snprintf(ns, sizeof ns, "bench-scaleout-%ld-%d-%d-%lld", (long)getpid(), s, r,
                         (long long)time(NULL));
                if (!(cfg = rados_config(o.rados, ns))) rc = 1;
            }
            if (!rc && run_setup(&o, s ? s : 1, cfg, &res[s][r])) rc = 1;
            if (!rc)
                fprintf(stderr, "run %d: %s x%d: accepted %.0f, stored %.0f pts/s, query %.1f ms\n",
                        r + 1, s ? "rados" : "embedded", s ? s : 1, res[s][r].acc_pps,
                        res[s][r].stored_pps, res[s][r].query_ms);
            if (cfg) unlink(cfg);
            free(cfg);
        }
    if (rc) return 1;
    result_t med[1 + MAX_TSDS];
    for (int s = 0; s < nset; s++) {
        double a[MAX_RUNS], st[MAX_RUNS], q[MAX_RUNS];
        for (int r = 0; r < o.runs; r++) {
            a[r] = res[s][r].acc_pps;
            st[r] = res[s][r].stored_pps;
            q[r] = res[s][r].query_ms;
        }
        med[s] = (result_t){bench_median(a, (size_t)o.runs), bench_median(st, (size_t)o.runs),
                            bench_median(q, (size_t)o.runs)};
    }
    printf("| store     | TSDs | accepted pts/s | ratio | stored pts/s | ratio | query ms |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    print_row("embedded", 1, &med[0], &med[0]);
    for (int s = 1; s < nset; s++)
        print_row("rados", s, &med[s], &med[0]);
    if (!rados) printf("\n(no RADOS cluster: --rados CONF or $OCTSDB_TEST_STORE_RADOS)\n");
    return 0;
usage:
    fprintf(stderr,
            "usage: %s [--rados CONF] [--points N] [--hosts N] [--metrics N] [--conns N] "
            "[--tsds N] [--runs N] [--bin PATH]\n",
            argv[0]);
    return 2;
}
