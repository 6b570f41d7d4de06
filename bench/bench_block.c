/* bench_block.c -- size and speed of the block codec on a generated fleet.
 *
 * Usage: bench_block [n_series=4000] [runs=7] [seed=42]
 *
 * Generates one hour of every series of the fleet (bench/common/datagen.h),
 * encodes each series as one block and prints, per class and overall: bytes
 * per point (also with the values forced to Gorilla XOR, timestamps as
 * chosen), encode and decode throughput in points per second (median of
 * 'runs' timed passes), how often each value encoding was chosen, and bytes
 * per point by cadence. A memcpy of the same points and of
 * the same encoded bytes gives the ceiling to compare with. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/block.h"
#include "common/benchutil.h"
#include "common/datagen.h"
#include "common/err.h"
#include "common/xmalloc.h"

#define HOUR_MS  1356998400000LL
#define MAX_RUNS 64

typedef struct {
    codec_point_t *pts;
    size_t n;
    uint8_t *blk;
    size_t blen;
    datagen_class_t cls;
} series_t;

static volatile uint64_t sink;

/* Times 'runs' passes of op over the series of class cls (-1 = all) and
 * returns the median points per second. op: 0 encode, 1 decode, 2 memcpy of
 * the points, 3 memcpy of the encoded bytes. */
static double time_op(series_t *ser, size_t ns, int cls, int op, int runs, uint8_t *tmp,
                      size_t tmpcap, codec_point_t *dec)
{
    double rate[MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        size_t pts = 0;
        double t0 = bench_now_s();
        for (size_t s = 0; s < ns; s++) {
            if (cls >= 0 && (int)ser[s].cls != cls) continue;
            pts += ser[s].n;
            switch (op) {
            case 0: {
                ssize_t len = codec_block_encode(ser[s].pts, ser[s].n, tmp, tmpcap,
                                                 CODEC_BLOCK_ENC_AUTO, NULL);
                if (len < 0) abort();
                sink += (uint64_t)len;
                break;
            }
            case 1: {
                int n =
                    codec_block_decode(ser[s].blk, ser[s].blen, dec, DATAGEN_MAX_POINTS_PER_HOUR);
                if (n < 0) abort();
                sink += (uint64_t)dec[n - 1].ts_ms;
                break;
            }
            case 2:
                memcpy(dec, ser[s].pts, ser[s].n * sizeof *dec);
                sink += (uint64_t)dec[ser[s].n - 1].ts_ms;
                break;
            default:
                memcpy(tmp, ser[s].blk, ser[s].blen);
                sink += tmp[ser[s].blen - 1];
                break;
            }
        }
        double dt = bench_now_s() - t0;
        rate[r] = dt > 0 ? (double)pts / dt : 0;
    }
    return bench_median(rate, (size_t)(runs));
}

int main(int argc, char **argv)
{
    size_t ns = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 42;
    if (ns == 0 || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_block [n_series] [runs<=%d] [seed]\n", MAX_RUNS);
        return 2;
    }

    size_t cap = codec_block_encode_bound(DATAGEN_MAX_POINTS_PER_HOUR);
    uint8_t *tmp = xmalloc(cap);
    codec_point_t *dec = xmalloc(DATAGEN_MAX_POINTS_PER_HOUR * sizeof *dec);
    series_t *ser = xmalloc(ns * sizeof *ser);

    /* per class (index DATAGEN_N_CLASSES = overall) */
    enum { ALL = DATAGEN_N_CLASSES };
    size_t n_series[ALL + 1] = {0}, n_pts[ALL + 1] = {0}, bytes[ALL + 1] = {0};
    size_t xor_bytes[ALL + 1] = {0}, chose[ALL + 1][2] = {{0}}, dec_exp_hist[ALL + 1][19] = {{0}};
    /* bytes and points by class x cadence: 10 s whole seconds, 1 s whole
     * seconds, millisecond timestamps */
    size_t cad_bytes[ALL + 1][3] = {{0}}, cad_pts[ALL + 1][3] = {{0}};

    for (size_t s = 0; s < ns; s++) {
        codec_point_t *pts = xmalloc(DATAGEN_MAX_POINTS_PER_HOUR * sizeof *pts);
        size_t n = datagen_series_hour(seed, s, HOUR_MS, pts, DATAGEN_MAX_POINTS_PER_HOUR);
        datagen_series_t info;
        datagen_series_init(&info, seed, s, HOUR_MS);
        codec_block_info_t bi;
        ssize_t len = codec_block_encode(pts, n, tmp, cap, CODEC_BLOCK_ENC_AUTO, &bi);
        ssize_t xlen = codec_block_encode(pts, n, tmp + 0, cap, CODEC_BLOCK_ENC_XOR, NULL);
        len = codec_block_encode(pts, n, tmp, cap, CODEC_BLOCK_ENC_AUTO, &bi);
        if (len < 0 || xlen < 0 || n == 0) {
            fprintf(stderr, "encode failed: %s\n", oct_strerror((int)(len < 0 ? len : xlen)));
            return 1;
        }
        ser[s] = (series_t){pts, n, xmalloc((size_t)len), (size_t)len, info.cls};
        memcpy(ser[s].blk, tmp, (size_t)len);
        /* verify the round trip before timing anything */
        int got = codec_block_decode(ser[s].blk, ser[s].blen, dec, DATAGEN_MAX_POINTS_PER_HOUR);
        if (got != (int)n) {
            fprintf(stderr, "decode failed on series %zu: %d\n", s, got);
            return 1;
        }
        for (size_t i = 0; i < n; i++)
            if (dec[i].ts_ms != pts[i].ts_ms || dec[i].is_float != pts[i].is_float ||
                dec[i].val.i != pts[i].val.i) {
                fprintf(stderr, "mismatch series %zu point %zu\n", s, i);
                return 1;
            }
        int cad = info.ms_precision ? 2 : info.interval_ms == 1000 ? 1 : 0;
        for (int k = 0; k < 2; k++) {
            size_t c = k ? ALL : info.cls;
            cad_bytes[c][cad] += (size_t)len;
            cad_pts[c][cad] += n;
            n_series[c]++;
            n_pts[c] += n;
            bytes[c] += (size_t)len;
            xor_bytes[c] += (size_t)xlen;
            chose[c][bi.enc]++;
            if (bi.enc == CODEC_BLOCK_ENC_INT) dec_exp_hist[c][bi.dec_exp]++;
        }
    }

    printf("bench_block: %zu series x 1 hour, seed %llu, median of %d runs\n", ns,
           (unsigned long long)seed, runs);
    printf("%-10s %7s %9s %8s %8s %11s %11s  %s\n", "class", "series", "points", "B/pt", "xor B/pt",
           "enc pts/s", "dec pts/s", "chosen (int[dec exp:count] / xor)");
    for (int c = 0; c <= ALL; c++) {
        if (n_series[c] == 0) continue;
        double enc = time_op(ser, ns, c == ALL ? -1 : c, 0, runs, tmp, cap, dec);
        double decr = time_op(ser, ns, c == ALL ? -1 : c, 1, runs, tmp, cap, dec);
        char hist[160] = "";
        size_t off = 0;
        for (int e = 0; e < 19; e++)
            if (dec_exp_hist[c][e] && off < sizeof hist)
                off += (size_t)snprintf(hist + off, sizeof hist - off, "%se%d:%zu", off ? " " : "",
                                        e, dec_exp_hist[c][e]);
        printf("%-10s %7zu %9zu %8.3f %8.3f %11.3g %11.3g  int %zu [%s] / xor %zu\n",
               c == ALL ? "overall" : datagen_class_name((datagen_class_t)c), n_series[c], n_pts[c],
               (double)bytes[c] / (double)n_pts[c], (double)xor_bytes[c] / (double)n_pts[c], enc,
               decr, chose[c][0], hist, chose[c][1]);
    }
    printf("\nbytes/point by cadence\n%-10s %10s %10s %10s\n", "class", "10s", "1s", "ms-jitter");
    for (int c = 0; c <= ALL; c++) {
        printf("%-10s", c == ALL ? "overall" : datagen_class_name((datagen_class_t)c));
        for (int k = 0; k < 3; k++)
            if (cad_pts[c][k])
                printf(" %10.3f", (double)cad_bytes[c][k] / (double)cad_pts[c][k]);
            else
                printf(" %10s", "-");
        printf("\n");
    }
    double mc_pts = time_op(ser, ns, -1, 2, runs, tmp, cap, dec);
    double mc_blk = time_op(ser, ns, -1, 3, runs, tmp, cap, dec);
    printf("ceiling: memcpy of the points (%zu B each) %.3g pts/s; memcpy of the encoded "
           "bytes %.3g pts/s\n",
           sizeof(codec_point_t), mc_pts, mc_blk);

    for (size_t s = 0; s < ns; s++) {
        free(ser[s].pts);
        free(ser[s].blk);
    }
    free(ser);
    free(dec);
    free(tmp);
    return 0;
}
