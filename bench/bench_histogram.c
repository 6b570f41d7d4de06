/* bench_histogram.c -- the histogram paths (docs/histograms.md): a telnet text form parsed
 * and encoded into a cell value, tsdb_put_histogram storing it (series lookup, row key, one
 * store write), and a `sum:1h-sum:percentiles[50,99]` query over what was stored.
 *
 * Data: S series (h.lat, host=h<i>), P points each 10 s apart from 2013-01-01 00:00 UTC,
 * each a histogram of B buckets [k, k+1) with pseudo-random counts, written round-robin in a
 * fresh data dir under $TMPDIR. Figures: ns per histogram (parse + encode), points/s and
 * ns/point (store), the query's ms and histogram points read per second. Medians of 3 runs
 * of the encode and the query; the store is written once.
 *
 * Usage: bench_histogram [series] [points_per_series] [buckets]   (default 100 360 20) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "common/benchutil.h"
#include "common/config.h"
#include "common/xmalloc.h"
#include "exec/exec.h"
#include "query/query.h"
#include "tsdb/histogram.h"
#include "tsdb/tsdb.h"

#define T0_MS 1356998400000LL

static int count_cb(void *ctx, const exec_result_t *r)
{
    *(size_t *)ctx += r->n_dps;
    return 0;
}

int main(int argc, char **argv)
{
    size_t S = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    size_t P = argc > 2 ? strtoul(argv[2], NULL, 10) : 360;
    size_t B = argc > 3 ? strtoul(argv[3], NULL, 10) : 20;
    size_t N = S * P;

    /* the text forms, as telnet lines carry them */
    char **text = xmalloc(N * sizeof *text);
    uint64_t rnd = 42;
    for (size_t i = 0; i < N; i++) {
        size_t cap = 32 + B * 24, l = 0;
        text[i] = xmalloc(cap);
        l += (size_t)snprintf(text[i] + l, cap - l, "u=0:o=%zu", i % 3);
        for (size_t k = 0; k < B; k++) {
            rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
            l += (size_t)snprintf(text[i] + l, cap - l, ":%zu,%zu=%llu", k, k + 1,
                                  (unsigned long long)(rnd >> 54));
        }
    }
    codec_hist_bucket_t *b = xmalloc((B + 1) * sizeof *b);
    size_t vcap = 1 + 2 + B * 17 + 18;
    uint8_t *vals = xmalloc(N * vcap);
    size_t *vlen = xmalloc(N * sizeof *vlen);
    double enc[3];
    for (int run = 0; run < 3; run++) {
        double t0 = bench_now_s();
        for (size_t i = 0; i < N; i++) {
            codec_hist_t h;
            oct_errbuf_t eb;
            uint8_t *v = vals + i * vcap;
            size_t n;
            if (codec_hist_parse_text(text[i], strlen(text[i]), b, B + 1, &h, &eb) ||
                codec_hist_encode(&h, v + 1, vcap - 1, &n, &eb)) {
                fprintf(stderr, "encode: %s\n", eb.msg);
                return 1;
            }
            v[0] = 0;
            vlen[i] = n + 1;
        }
        enc[run] = (bench_now_s() - t0) * 1e9 / (double)N;
    }
    printf("histogram text form parse + encode (%zu buckets): %.0f ns/histogram\n", B,
           bench_median(enc, 3));

    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/bench_histogram.XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    tsdb_t *db = NULL;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) ||
        oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb) ||
        oct_config_set(cfg, "tsd.core.histograms.config", "{\"" TSDB_HIST_SIMPLE_CLASS "\": 0}",
                       &eb) ||
        tsdb_open(cfg, 0, &db, &eb)) {
        fprintf(stderr, "open: %s\n", eb.msg);
        return 1;
    }
    char(*host)[24] = xmalloc(S * sizeof *host);
    oct_slice_t *tags = xmalloc(2 * S * sizeof *tags);
    for (size_t s = 0; s < S; s++) {
        snprintf(host[s], sizeof host[s], "h%zu", s);
        tags[2 * s] = oct_slice_str("host");
        tags[2 * s + 1] = oct_slice_str(host[s]);
    }
    double t0 = bench_now_s();
    for (size_t i = 0; i < N; i++) {
        size_t s = i % S, p = i / S;
        tsdb_dp_t dp = {oct_slice_str("h.lat"), &tags[2 * s], 1, {0}, 0};
        dp.pt.ts_ms = T0_MS + (int64_t)p * 10000;
        if (tsdb_put_histogram(db, &dp, vals + i * vcap, vlen[i], 0, &eb)) {
            fprintf(stderr, "put: %s\n", eb.msg);
            return 1;
        }
    }
    double dt = bench_now_s() - t0;
    printf("tsdb_put_histogram, %zu series x %zu points: %.0f points/s, %.0f ns/point\n", S, P,
           (double)N / dt, dt * 1e9 / (double)N);

    query_t q;
    memset(&q, 0, sizeof q);
    if (query_parse_m(&q, "sum:1h-sum:percentiles[50,99]:h.lat", &eb)) {
        fprintf(stderr, "query: %s\n", eb.msg);
        return 1;
    }
    q.start_ms = T0_MS;
    q.end_ms = T0_MS + (int64_t)P * 10000;
    double qt[3];
    size_t emitted = 0;
    exec_stats_t st;
    for (int run = 0; run < 3; run++) {
        emitted = 0;
        double q0 = bench_now_s();
        if (exec_query(db, &q, NULL, count_cb, &emitted, &st, &eb)) {
            fprintf(stderr, "exec: %s\n", eb.msg);
            return 1;
        }
        qt[run] = bench_now_s() - q0;
    }
    double qm = bench_median(qt, 3);
    printf("query sum:1h-sum:percentiles[50,99] over %zu histogram points: %.2f ms, %.0f "
           "histograms read/s (%zu points out)\n",
           (size_t)st.raw_points, qm * 1e3, (double)st.raw_points / qm, emitted);
    query_free(&q);
    tsdb_close(db);
    oct_config_free(cfg);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    for (size_t i = 0; i < N; i++)
        free(text[i]);
    free(text);
    free(b);
    free(vals);
    free(vlen);
    free(host);
    free(tags);
    return 0;
}
