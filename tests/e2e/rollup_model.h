/* rollup_model.h -- the model the rollup tests compare with: points as the
 * test sent them, and an aggregator's value over one bucket computed by
 * hand from them (never by the code under test). Header-only, for
 * tests/e2e/test_rollup*.c. */
#ifndef OCT_TEST_ROLLUP_MODEL_H
#define OCT_TEST_ROLLUP_MODEL_H

#include <math.h>
#include <string.h>

typedef struct {
    long long ts;
    int is_int;
    long long i;
    double f;
} rm_pt_t;

static inline double rm_pv(const rm_pt_t *p)
{
    return p->is_int ? (double)p->i : p->f;
}

/* <agg> (sum, count, min, max, else avg) of the points of p[0..n) in
 * [b, b + iv_s) into *v. Returns 0 when the bucket has no point. */
static inline int rm_bucket(const rm_pt_t *p, int n, long long b, long long iv_s, const char *agg,
                            double *v)
{
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    long long cnt = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].ts < b || p[i].ts >= b + iv_s) continue;
        sum += rm_pv(&p[i]);
        cnt++;
        mn = fmin(mn, rm_pv(&p[i]));
        mx = fmax(mx, rm_pv(&p[i]));
    }
    if (!cnt) return 0;
    *v = !strcmp(agg, "sum")     ? sum
         : !strcmp(agg, "count") ? (double)cnt
         : !strcmp(agg, "min")   ? mn
         : !strcmp(agg, "max")   ? mx
                                 : sum / (double)cnt;
    return 1;
}

#endif
