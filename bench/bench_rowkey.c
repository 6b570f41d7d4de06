/* bench_rowkey.c -- row-key build throughput (codec_rowkey_build), 4 tags, unsalted vs salted.
 *
 * Prints builds/s as the median of 5 runs of 2M builds each, for the default 3/3/3 layout
 * unsalted and with a 1-byte salt over 20 buckets (which adds the Java hash over metric+tags).
 * Tag pairs are given unsorted, so the in-place sort is part of what is measured. A program that
 * prints figures, not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "codec/rowkey.h"
#include "common/benchutil.h"

#define RUNS  5
#define ITERS 2000000

/* Returns the median builds/s; *sink defeats dead-code elimination. */
static double run(const codec_rowkey_layout_t *l, unsigned *sink)
{
    double rates[RUNS];
    uint8_t key[64];
    for (int r = 0; r < RUNS; r++) {
        codec_tag_uid_t tags[4] = {{40, 7}, {3, 9}, {17, 1}, {5, 123456}};
        double t0 = bench_now_s();
        for (uint32_t i = 0; i < ITERS; i++) {
            tags[0].tagv = i & 0xFFFFFF; /* vary the series so the salt varies */
            int n = codec_rowkey_build(l, 1 + (i & 0xFF), tags, 4, 1356998400 + (int64_t)i, key,
                                       sizeof key, NULL);
            if (n <= 0) {
                fprintf(stderr, "build failed: %d\n", n);
                exit(1);
            }
            *sink += key[0] + key[n - 1];
        }
        rates[r] = ITERS / (bench_now_s() - t0);
    }
    return bench_median(rates, RUNS);
}

int main(void)
{
    unsigned sink = 0;
    codec_rowkey_layout_t plain = {3, 3, 3, 0, 20};
    codec_rowkey_layout_t salted = {3, 3, 3, 1, 20};
    double a = run(&plain, &sink);
    double b = run(&salted, &sink);
    printf("bench_rowkey: 4 tags, widths 3/3/3, median of %d runs x %d builds\n", RUNS, ITERS);
    printf("  unsalted            %8.2f M builds/s  (%.1f ns/build)\n", a / 1e6, 1e9 / a);
    printf("  salted (1 B, 20)    %8.2f M builds/s  (%.1f ns/build)\n", b / 1e6, 1e9 / b);
    printf("  salted/unsalted     %8.2f\n", b / a);
    printf("  (checksum %u)\n", sink);
    return 0;
}
