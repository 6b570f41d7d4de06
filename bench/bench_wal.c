/* bench_wal.c -- the write path's throughput: raw WAL appends and
 * tsdb_put_batch with 1 and 2 threads, against a memcpy ceiling.
 *
 * Data: a datagen fleet (bench/common/datagen.h) of S series, P points each,
 * interleaved round-robin as collectors send them (every series' next point,
 * then again), in batches of 500 points as a telnet read buffer would give.
 * Each series is a metric named after its class with tags host and cpu.
 * Figures: WAL append (records built as the write path builds them, copied
 * into the group-commit buffer and written to a segment; points/s and MB/s),
 * memcpy of the same record bytes (the ceiling of any log), and
 * tsdb_put_batch end to end (series lookup, WAL, head) until the log is
 * written, in a fresh data dir under $TMPDIR.
 *
 * Usage: bench_wal [series] [points_per_series]   (default 20000 100) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/datagen.h"
#include "common/xmalloc.h"
#include "tsdb/tsdb.h"
#include "tsdb/wal.h"
#include "tsdb/write.h"
#include "common/benchutil.h"

#define BATCH 500

typedef struct {
    char metric[32];
    char host[32];
    char cpu[24];
    oct_slice_t tags[4];
} bseries_t;

static bseries_t *ser;
static tsdb_dp_t *dps;
static size_t n_pts;

static void gen(size_t S, size_t P)
{
    ser = xcalloc(S, sizeof *ser);
    dps = xmalloc(S * P * sizeof *dps);
    datagen_series_t *g = xmalloc(S * sizeof *g);
    int64_t start = 1700000000000LL;
    for (size_t i = 0; i < S; i++) {
        datagen_series_init(&g[i], 42, i, start);
        snprintf(ser[i].metric, sizeof ser[i].metric, "sys.%s", datagen_class_name(g[i].cls));
        snprintf(ser[i].host, sizeof ser[i].host, "host-%05zu", i / 8);
        snprintf(ser[i].cpu, sizeof ser[i].cpu, "%zu", i % 8);
        ser[i].tags[0] = oct_slice_str("host");
        ser[i].tags[1] = oct_slice_str(ser[i].host);
        ser[i].tags[2] = oct_slice_str("cpu");
        ser[i].tags[3] = oct_slice_str(ser[i].cpu);
    }
    for (size_t p = 0; p < P; p++)
        for (size_t i = 0; i < S; i++) {
            tsdb_dp_t *d = &dps[n_pts++];
            d->metric = oct_slice_str(ser[i].metric);
            d->tags = ser[i].tags;
            d->n_tags = 2;
            datagen_series_next(&g[i], &d->pt);
            d->ts_is_ms = (uint8_t)g[i].ms_precision;
        }
    free(g);
}

/* Builds the POINTS records as write.c does: ids = series index. */
static uint8_t *build_records(size_t S, size_t *out_len, size_t *n_rec)
{
    size_t cap = n_pts * 31 + (n_pts / BATCH + 1) * 32;
    uint8_t *buf = xmalloc(cap), *p = buf;
    *n_rec = 0;
    for (size_t off = 0; off < n_pts; off += BATCH) {
        size_t k = n_pts - off < BATCH ? n_pts - off : BATCH;
        uint8_t *rec = p, *q = rec + TSDB_WAL_REC_HDR;
        q += codec_varint_put(q, k);
        int64_t prev = 0;
        for (size_t j = 0; j < k; j++) {
            const tsdb_dp_t *d = &dps[off + j];
            q += codec_varint_put(q, (off + j) % S);
            q += codec_varint_put(q, codec_zigzag(d->pt.ts_ms - prev));
            prev = d->pt.ts_ms;
            *q++ = (uint8_t)(d->pt.is_float | (d->ts_is_ms << 1));
            if (d->pt.is_float) {
                memcpy(q, &d->pt.val.f, 8);
                q += 8;
            } else {
                q += codec_varint_put(q, codec_zigzag(d->pt.val.i));
            }
        }
        p += tsdb_wal_seal(rec, TSDB_WAL_T_POINTS, (size_t)(q - rec) - TSDB_WAL_REC_HDR);
        ++*n_rec;
    }
    *out_len = (size_t)(p - buf);
    return buf;
}

typedef struct {
    tsdb_t *db;
    int t, nt;
    uint64_t seq;
} thr_t;

static void *putter(void *arg)
{
    thr_t *a = arg;
    oct_errbuf_t eb;
    size_t nb = (n_pts + BATCH - 1) / BATCH;
    for (size_t b = (size_t)a->t; b < nb; b += (size_t)a->nt) {
        size_t off = b * BATCH, k = n_pts - off < BATCH ? n_pts - off : BATCH;
        uint64_t seq;
        long r = tsdb_put_batch(a->db, dps + off, k, NULL, NULL, &seq, &eb);
        if (r != (long)k) {
            fprintf(stderr, "put_batch: %ld of %zu: %s\n", r, k, eb.msg);
            exit(1);
        }
        if (seq > a->seq) a->seq = seq;
    }
    return NULL;
}

static char *mkdir_tmp(void)
{
    const char *t = getenv("TMPDIR");
    char *d = xmalloc(4096);
    snprintf(d, 4096, "%s/bench_wal.XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(d)) {
        perror("mkdtemp");
        exit(1);
    }
    return d;
}

static void rmrf(const char *d)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", d);
}

static void run_put(int nt, int second_pass)
{
    char *dir = mkdir_tmp();
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb) ||
        oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb)) {
        fprintf(stderr, "%s\n", eb.msg);
        exit(1);
    }
    tsdb_t *db;
    if (tsdb_open(cfg, 0, &db, &eb)) {
        fprintf(stderr, "open: %s\n", eb.msg);
        exit(1);
    }
    for (int pass = 0; pass < 1 + second_pass; pass++) {
        thr_t th[8];
        pthread_t pt[8];
        double t0 = bench_now_s();
        for (int t = 0; t < nt; t++) {
            th[t] = (thr_t){db, t, nt, 0};
            pthread_create(&pt[t], NULL, putter, &th[t]);
        }
        uint64_t seq = 0;
        for (int t = 0; t < nt; t++) {
            pthread_join(pt[t], NULL);
            if (th[t].seq > seq) seq = th[t].seq;
        }
        double t1 = bench_now_s();
        if (tsdb_wait_durable(db, seq, 0, -1, &eb)) {
            fprintf(stderr, "wait: %s\n", eb.msg);
            exit(1);
        }
        double t2 = bench_now_s();
        tsdb_stats_t st;
        tsdb_stats(db, &st);
        printf("tsdb_put_batch %d thread%s, %s: %.2f M points/s accepted, %.2f M points/s "
               "written to the WAL (%.1f B/point in the WAL)\n",
               nt, nt > 1 ? "s" : " ", pass ? "known series  " : "new series   ",
               (double)n_pts / (t1 - t0) / 1e6, (double)n_pts / (t2 - t0) / 1e6,
               (double)st.wal_bytes_written / (double)st.points_accepted);
        /* the next pass: the same series an hour later (new points, not duplicates) */
        for (size_t i = 0; i < n_pts; i++)
            dps[i].pt.ts_ms += 3600000;
    }
    tsdb_close(db);
    oct_config_free(cfg);
    rmrf(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    size_t S = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    size_t P = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
    gen(S, P);
    printf("data: %zu series x %zu points = %zu points, batches of %d\n", S, P, n_pts, BATCH);

    size_t rlen, nrec;
    uint8_t *recs = build_records(S, &rlen, &nrec);
    printf("records: %zu bytes, %.1f B/point\n", rlen, (double)rlen / (double)n_pts);

    /* memcpy ceiling: the same bytes, same record granularity */
    uint8_t *dst = xmalloc(rlen);
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = bench_now_s();
        size_t off = 0;
        for (size_t i = 0; i < nrec; i++) {
            size_t len = 9 + (size_t)(oct_get_be32(recs + off) - 1);
            memcpy(dst + off, recs + off, len);
            off += len;
        }
        double t1 = bench_now_s();
        if (t1 - t0 < best) best = t1 - t0;
    }
    if (dst[rlen - 1] != recs[rlen - 1]) return 1;
    printf("memcpy ceiling:   %8.1f M points/s  %8.1f MB/s\n", (double)n_pts / best / 1e6,
           (double)rlen / best / 1e6);
    free(dst);

    /* raw WAL append: lock, copy, unlock per record; then wait until written */
    char *dir = mkdir_tmp();
    tsdb_wal_opts_t wo = {.dir = dir, .flush_interval_ms = 10, .segment_bytes = 64u << 20};
    tsdb_wal_t *w;
    oct_errbuf_t eb;
    if (tsdb_wal_open(&wo, NULL, NULL, &w, NULL, &eb)) {
        fprintf(stderr, "wal: %s\n", eb.msg);
        return 1;
    }
    double t0 = bench_now_s();
    size_t off = 0;
    uint64_t pos = 0;
    for (size_t i = 0; i < nrec; i++) {
        size_t len = 9 + (size_t)(oct_get_be32(recs + off) - 1);
        uint64_t seg;
        if (tsdb_wal_lock(w, &seg, &eb)) return 1;
        tsdb_wal_append_locked(w, recs + off, len);
        pos = tsdb_wal_unlock(w);
        off += len;
    }
    double t1 = bench_now_s();
    if (tsdb_wal_wait(w, pos, 0, -1, &eb)) return 1;
    double t2 = bench_now_s();
    if (tsdb_wal_wait(w, pos, 1, -1, &eb)) return 1;
    double t3 = bench_now_s();
    printf("WAL append:       %8.1f M points/s  %8.1f MB/s (appended); written: %.1f M points/s "
           "%.1f MB/s; + fdatasync: %.1f ms\n",
           (double)n_pts / (t1 - t0) / 1e6, (double)rlen / (t1 - t0) / 1e6,
           (double)n_pts / (t2 - t0) / 1e6, (double)rlen / (t2 - t0) / 1e6, (t3 - t2) * 1e3);
    tsdb_wal_close(w, 1);
    rmrf(dir);
    free(dir);
    free(recs);

    run_put(1, 1);
    run_put(2, 1);
    free(dps);
    free(ser);
    return 0;
}
