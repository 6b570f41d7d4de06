/* bench_put_parse.c -- how fast telnet `put` lines are parsed, against a
 * memcpy of the same bytes.
 *
 * Usage: bench_put_parse [lines=200000] [runs=7] [--no-db]
 *
 * Generates a realistic stream of put lines (bench/common/putgen.h: 8 tags
 * per series, 10 s rounds) and times, as the median of 'runs' passes:
 *   memcpy     the whole stream copied once (the ceiling);
 *   parse      splitting into lines and tokens, tsdb_parse_timestamp,
 *              tsdb_parse_value and the k=v split, as telnet.c does them,
 *              without batching or storing;
 *   telnet     the real session (telnet_line + telnet_flush every 64 KiB,
 *              as the transport calls them) over a real tsdb in a temp dir
 *              with auto-created metrics: parse + batch + tsdb_put_batch.
 *              The first pass creates the series; the figure is the median
 *              of the later passes over the same lines (same timestamps:
 *              duplicates for the write path), so it is indicative only.
 * Prints lines/s and MB/s for each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/err.h"
#include "common/putgen.h"
#include "common/strbuf.h"
#include "server/telnet.h"
#include "server/tsd.h"
#include "tsdb/parse.h"
#include "tsdb/tsdb.h"

#define MAX_RUNS 64

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static volatile uint64_t sink;

/* The parse work of one put line, as telnet.c's do_put does it. */
static int parse_line(const char *p, size_t len)
{
    const char *end = p + len, *q = p, *tok[3] = {0};
    size_t tlen[3] = {0}, ntok = 0;
    oct_slice_t tags[64];
    size_t nt = 0;
    oct_errbuf_t eb;
    while (q < end && *q != ' ')
        q++; /* "put" */
    for (;;) {
        while (q < end && *q == ' ')
            q++;
        if (q == end) break;
        /* one pass finds the token's end and its '=' signs */
        const char *t = q, *eq = NULL;
        unsigned n_eq = 0;
        for (; q < end && *q != ' '; q++) {
            if (*q == '=' && n_eq++ == 0) eq = q;
        }
        size_t n = (size_t)(q - t);
        if (ntok < 3) {
            tok[ntok] = t;
            tlen[ntok] = n;
        } else {
            if (n_eq != 1 || eq == t || eq == t + n - 1) return -1;
            if (nt + 2 <= 64) {
                tags[nt++] = oct_slice(t, (size_t)(eq - t));
                tags[nt++] = oct_slice(eq + 1, (size_t)(t + n - eq - 1));
            }
        }
        ntok++;
    }
    if (ntok < 4) return -1;
    codec_point_t pt;
    int is_ms;
    if (tsdb_parse_timestamp(tok[1], tlen[1], 1, &pt.ts_ms, &is_ms, &eb) < 0) return -1;
    if (tsdb_parse_value(tok[2], tlen[2], &pt, &eb) < 0) return -1;
    sink += (uint64_t)pt.ts_ms + nt + (uint64_t)tags[0].len;
    return 0;
}

static size_t parse_all(const char *buf, size_t n)
{
    size_t lines = 0;
    const char *p = buf, *end = buf + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        if (parse_line(p, (size_t)(nl - p)) == 0) lines++;
        p = nl + 1;
    }
    return lines;
}

/* Feeds buf to a session in 64 KiB reads, as the transport would. */
static size_t telnet_all(telnet_session_t *s, const char *buf, size_t n, oct_strbuf_t *out)
{
    size_t lines = 0;
    const char *p = buf, *end = buf + n;
    while (p < end) {
        const char *chunk_end = p + 65536 < end ? p + 65536 : end;
        while (p < chunk_end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) nl = end;
            (void)telnet_line(s, p, (size_t)(nl - p), out);
            lines++;
            p = nl + 1;
        }
        telnet_flush(s, out);
    }
    return lines;
}

int main(int argc, char **argv)
{
    size_t n_lines = 200000;
    int runs = 7, use_db = 1, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-db"))
            use_db = 0;
        else if (pos++ == 0)
            n_lines = strtoull(argv[i], NULL, 10);
        else
            runs = atoi(argv[i]);
    }
    if (runs < 1) runs = 1;
    if (runs > MAX_RUNS) runs = MAX_RUNS;

    size_t metrics = 20, hosts = n_lines / (metrics * 10);
    if (hosts < 1) hosts = 1;
    putgen_cfg_t cfg = {
        .seed = 42, .hosts = hosts, .metrics = metrics, .start_s = 1700000000, .interval_s = 10};
    putgen_t *g = putgen_new(&cfg, 0, hosts);
    putgen_buf_t text = {0};
    putgen_point_t pt;
    for (size_t i = 0; i < n_lines; i++) {
        putgen_next(g, &pt);
        putgen_append_telnet(&text, &pt);
    }
    putgen_free(g);
    printf("put lines: %zu (%zu series, %.1f bytes/line, %.1f MB)\n", n_lines, hosts * metrics,
           (double)text.len / (double)n_lines, (double)text.len / 1e6);

    char *copy = malloc(text.len);
    /* Zeroed: cppcheck cannot see that runs >= 1 fills what median() reads. */
    double r_memcpy[MAX_RUNS] = {0}, r_parse[MAX_RUNS] = {0}, r_telnet[MAX_RUNS] = {0};
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        memcpy(copy, text.ptr, text.len);
        sink += (uint64_t)copy[text.len / 2];
        r_memcpy[r] = now_s() - t0;
        t0 = now_s();
        size_t ok = parse_all(text.ptr, text.len);
        r_parse[r] = now_s() - t0;
        if (ok != n_lines) {
            fprintf(stderr, "parse: %zu of %zu lines parsed\n", ok, n_lines);
            return 1;
        }
    }
    double tm = median(r_memcpy, runs), tp = median(r_parse, runs);
    printf("%-8s %12.0f lines/s %9.1f MB/s\n", "memcpy", (double)n_lines / tm,
           (double)text.len / tm / 1e6);
    printf("%-8s %12.0f lines/s %9.1f MB/s  (%.0f ns/line)\n", "parse", (double)n_lines / tp,
           (double)text.len / tp / 1e6, tp / (double)n_lines * 1e9);

    if (use_db) {
        char dir[] = "/tmp/bench_put_parse.XXXXXX";
        if (!mkdtemp(dir)) return 1;
        oct_config_t *c = oct_config_new();
        oct_errbuf_t eb;
        tsdb_t *db = NULL;
        if (oct_config_set(c, "tsd.storage.data_dir", dir, &eb) < 0 ||
            oct_config_set(c, "tsd.core.auto_create_metrics", "true", &eb) < 0 ||
            tsdb_open(c, 0, &db, &eb) < 0) {
            fprintf(stderr, "tsdb_open: %s\n", eb.msg);
            return 1;
        }
        static tsd_ctx_t tsd; /* counters are atomics: zero-initialised statically */
        tsd.db = db;
        tsd.cfg = c;
        snprintf(tsd.hostname, sizeof tsd.hostname, "bench");
        telnet_session_t *s = telnet_session_new(&tsd);
        oct_strbuf_t out = OCT_STRBUF_INIT;
        double t0 = now_s();
        telnet_all(s, text.ptr, text.len, &out);
        double first = now_s() - t0;
        if (out.len) fprintf(stderr, "first reply: %.200s\n", out.ptr);
        for (int r = 0; r < runs; r++) {
            oct_strbuf_reset(&out);
            t0 = now_s();
            telnet_all(s, text.ptr, text.len, &out);
            r_telnet[r] = now_s() - t0;
        }
        double tt = median(r_telnet, runs);
        printf("%-8s %12.0f lines/s %9.1f MB/s  (first pass, creating series: %.0f lines/s)\n",
               "telnet", (double)n_lines / tt, (double)text.len / tt / 1e6,
               (double)n_lines / first);
        oct_strbuf_free(&out);
        telnet_session_free(s);
        tsdb_close(db);
        oct_config_free(c);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    free(copy);
    putgen_buf_free(&text);
    return 0;
}
