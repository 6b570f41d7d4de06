/* fuzz_dtoa.c -- libFuzzer target: oct_dtoa_g / oct_dtoa_digits against the
 * printf/strtod loops they replaced.
 *
 * Input: 8 bytes (shorter is zero-padded, longer is cut), little-endian bits
 * of a double. Every finite value must format byte for byte as the old loop
 * "%.*g" from 15 (the API) and from 1 (tsdb scan) digits up, and its digits
 * must equal /api/query/last's "%.*e" loop from two digits up. A mismatch
 * aborts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtoa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ref_g(double v, int min_prec, char *buf, size_t cap)
{
    for (int prec = min_prec; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < size && i < 8; i++)
        bits |= (uint64_t)data[i] << (8 * i);
    double v;
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v)) {
        char buf[OCT_DTOA_BUF];
        if (oct_dtoa(v, buf) != 0 || buf[0] != '\0') abort();
        return 0;
    }
    char want[48], got[OCT_DTOA_BUF];
    for (int p = 1; p <= 15; p += 14) {
        ref_g(v, p, want, sizeof want);
        size_t n = oct_dtoa_g(v, p, got);
        if (strcmp(want, got) != 0 || n != strlen(want)) {
            fprintf(stderr, "%a p%d: want %s got %s\n", v, p, want, got);
            abort();
        }
    }
    if (v != 0) {
        char buf[48], wd[24], gd[24];
        int prec, ge, gp;
        for (prec = 2; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
            if (strtod(buf, NULL) == v) break;
        }
        const char *p = buf + (buf[0] == '-');
        int nd = 0;
        for (; *p != 'e'; p++)
            if (*p != '.') wd[nd++] = *p;
        int we = atoi(p + 1);
        while (nd > 1 && wd[nd - 1] == '0')
            nd--;
        wd[nd] = '\0';
        int gn = oct_dtoa_digits(v, 2, gd, &ge, &gp);
        if (gn != nd || ge != we || strcmp(wd, gd) != 0) {
            fprintf(stderr, "%a last: want %se%d got %se%d\n", v, wd, we, gd, ge);
            abort();
        }
    }
    return 0;
}
