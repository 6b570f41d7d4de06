/* ingest.c -- sending a data set and knowing when a system has stored it (see peers.h). */
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

/* ---- how many points a system has stored ------------------------------ */

/* Sums every number after `key` up to the next `stop` character, for every
 * occurrence of key: the values of OpenTSDB's "dps":{...} maps, or the last
 * element of InfluxDB's "values":[[t,n]]. */
static double sum_after(const char *s, const char *key, int last_of_pair)
{
    double total = 0;
    size_t kl = strlen(key);
    for (const char *p = strstr(s, key); p; p = strstr(p, key)) {
        p += kl;
        const char *end = strchr(p, last_of_pair ? ']' : '}');
        if (!end) break;
        if (last_of_pair) {
            const char *c = memchr(p, ',', (size_t)(end - p));
            if (c) total += strtod(c + 1 + (c[1] == '"'), NULL);
        } else {
            for (const char *q = p; q < end; q++)
                if (*q == ':') total += strtod(q + 1, NULL);
        }
        p = end;
    }
    return total;
}

/* octsdb: the points a query sees (sum over metrics of 0all-count). */
static long long octsdb_query_count(int port, char metric_names[][64], size_t metrics,
                                    int64_t end_s)
{
    char target[8192];
    size_t n = (size_t)snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld",
                                START_S - 1, (long long)end_s + 1);
    for (size_t m = 0; m < metrics && n < sizeof target - 128; m++)
        n += (size_t)snprintf(target + n, sizeof target - n, "&m=sum:0all-count:%s",
                              metric_names[m]);
    char *body;
    int st = http_req(port, "GET", target, NULL, &body);
    long long v = st == 200 && body ? (long long)(sum_after(body, "\"dps\":{", 0) + 0.5) : -1;
    if (st != 200 && body) fprintf(stderr, "octsdb count query: %d %.300s\n", st, body);
    free(body);
    return v;
}

static long long vm_added(int port)
{
    char *body;
    int st = http_req(port, "GET", "/metrics", NULL, &body);
    long long v = -1;
    if (st == 200) {
        const char *l = strstr(body, "\nvm_rows_added_to_storage_total ");
        if (l) v = (long long)strtod(l + 32, NULL);
    }
    free(body);
    return v;
}

static long long influx_count(int port)
{
    char *body;
    int st = http_req(port, "GET", "/query?db=bench&q=SELECT+count(value)+FROM+/.*/", NULL, &body);
    long long v = st == 200 && body ? (long long)(sum_after(body, "\"values\":[[", 1) + 0.5) : -1;
    free(body);
    return v;
}

/* ---- the load ----------------------------------------------------------- */

/* The new-series run: every line a new series (a fresh host with the
 * fleet's 8 tag keys), one slice of them per connection. */
void build_new_series(const opts_t *o, loadgen_payload_t *pl)
{
    for (size_t c = 0; c < o->conns; c++) {
        loadgen_payload_t *j = &pl[c];
        memset(j, 0, sizeof *j);
        size_t lo = o->new_series * c / o->conns, hi = o->new_series * (c + 1) / o->conns;
        char line[400];
        for (size_t i = lo; i < hi; i++) {
            int n =
                snprintf(line, sizeof line,
                         "put bench.new %lld %zu host=new-%08zu region=r%zu "
                         "datacenter=dc%zu rack=r%zu os=os%zu arch=a%zu team=t%zu "
                         "service=s%zu\n",
                         START_S, i % 977, i, i % 6, i % 18, i % 720, i % 4, i % 2, i % 12, i % 40);
            loadgen_append_telnet(j, line, (size_t)n, 1);
        }
    }
}

/* How many points the system has stored: its own counter (octsdb: and then
 * the count query once the counter is complete). */
static long long stored(const server_t *s, long long want, char names[][64], size_t metrics,
                        int64_t end_s)
{
    switch (s->sys) {
    case SYS_OCTSDB: {
        long long a = bench_octsdb_points_added(s->port);
        if (a < want || !names) return a;
        return octsdb_query_count(s->port, names, metrics, end_s);
    }
    case SYS_VM:
        return vm_added(s->port);
    default:
        return influx_count(s->port);
    }
}

/* Sends the payloads and waits until the system reports `want` points
 * stored. Returns the seconds, or -1; *cpu gets the process's CPU seconds. */
double ingest(const opts_t *o, server_t *s, const loadgen_payload_t *pl, int http, long long want,
              char names[][64], size_t metrics, int64_t end_s, double *cpu)
{
    loadgen_conn_t *jobs = calloc(o->conns, sizeof *jobs);
    for (size_t c = 0; c < o->conns; c++) {
        jobs[c].pl = &pl[c];
        jobs[c].port = http ? s->put : s->telnet;
        jobs[c].http = http;
        /* the peers answer nothing to `version`: the end is their close */
        jobs[c].telnet_end = LOADGEN_TELNET_CLOSE;
        jobs[c].ok_status = 0;
        jobs[c].timeout_ms = 60000;
    }
    double cpu0 = proc_cpu_s(s->pid);
    double t0 = bench_now_s();
    if (loadgen_start(jobs, o->conns) < 0) {
        free(jobs);
        return -1;
    }
    /* generous: InfluxDB takes ~15,000 points/s here; a stall ends it sooner */
    double limit = 60.0 + (double)want / 4000.0, t_end = -1;
    long long got = -1, last = -1;
    double t_change = t0; /* when the count last moved */
    int poll_ms = s->sys == SYS_OCTSDB ? 10 : s->sys == SYS_VM ? 20 : 50;
    while (bench_now_s() - t0 < limit) {
        got = stored(s, want, names, metrics, end_s);
        if (got >= want) {
            t_end = bench_now_s();
            break;
        }
        if (got < 0 && kill(s->pid, 0) != 0) break;
        if (got != last) {
            last = got;
            t_change = bench_now_s();
        }
        /* every sender finished and nothing moved for a while: lost points */
        if (loadgen_finished(jobs, o->conns) == o->conns && bench_now_s() - t_change > 10.0) break;
        bench_sleep_ms(poll_ms);
    }
    *cpu = proc_cpu_s(s->pid) - cpu0;
    loadgen_totals_t tot;
    loadgen_join(jobs, o->conns, &tot);
    size_t failed = tot.failed;
    int err = tot.err;
    free(jobs);
    if (err || failed || t_end < 0 || got != want) {
        fprintf(stderr, "%s: stored %lld of %lld points (%s%zu rejected)\n", sys_names[s->sys], got,
                want, err ? strerror(err) : "", failed);
        print_log(s);
        return -1;
    }
    return t_end - t0;
}
