/* bench_expr.c -- throughput of expression evaluation (query/expr.h): the
 * join and the per-row arithmetic of /api/query/exp and the gexp
 * arithmetic functions over many series.
 *
 * Usage: bench_expr [n_series=1000] [points=360] [runs=7]
 *
 * Three variables of n_series series each (tags host=h<i>, the same hosts
 * in each), `points` points per series at a 10 s cadence; variable b's
 * series are offset by 5 s and c has every other point missing, so the
 * timestamp pairing and the fills both work. The expression is
 * "a * 2 + b / c" with a union join. Figures: input points per second and
 * ns per output value, the median of `runs` timed passes; a plain loop
 * computing the same arithmetic over pre-aligned arrays is the ceiling. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/benchutil.h"
#include "common/err.h"
#include "query/expr.h"

#define T0      1356998400000LL
#define MAX_RUN 64

static volatile double sink;

static void fill_var(expr_set_t *set, const char *metric, size_t n_series, size_t points,
                     int64_t offset_ms, size_t step)
{
    for (size_t s = 0; s < n_series; s++) {
        expr_series_t *x = expr_set_add(set, metric);
        char host[32];
        snprintf(host, sizeof host, "h%05zu", s);
        const char *k[] = {"host", "dc"}, *v[] = {host, "lga"};
        expr_series_set_tags(x, 2, k, v);
        x->dps = calloc(points + 1, sizeof *x->dps);
        for (size_t i = 0; i < points; i += step) {
            query_dp_t *d = &x->dps[x->n++];
            d->ts_ms = T0 + (int64_t)i * 10000 + offset_ms;
            d->v.f = (double)((s * 31 + i * 7) % 1000) / 8.0 + 1;
        }
    }
}

int main(int argc, char **argv)
{
    size_t n_series = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    size_t points = argc > 2 ? strtoul(argv[2], NULL, 10) : 360;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    if (runs < 1 || runs > MAX_RUN) runs = 7;
    expr_set_t a = {0}, b = {0}, c = {0};
    fill_var(&a, "m.a", n_series, points, 0, 1);
    fill_var(&b, "m.b", n_series, points, 5000, 1);
    fill_var(&c, "m.c", n_series, points, 0, 2);
    size_t in_points = 0;
    for (size_t s = 0; s < n_series; s++)
        in_points += a.s[s].n + b.s[s].n + c.s[s].n;

    expr_t *e;
    oct_errbuf_t eb;
    if (expr_parse("a * 2 + b / c", &e, &eb)) {
        fprintf(stderr, "bench_expr: %s\n", eb.msg);
        return 1;
    }
    const expr_set_t *in[] = {&a, &b, &c};
    double fill[] = {0, 0, 1};
    expr_join_t j = {.op = EXPR_JOIN_UNION, .include_agg_tags = 1};
    double t_join[MAX_RUN], t_base[MAX_RUN];
    size_t out_values = 0;
    for (int r = 0; r < runs; r++) {
        expr_set_t out = {0};
        double t0 = bench_now_s();
        if (expr_join_eval(e, in, fill, &j, T0, T0 + (int64_t)points * 10000, "e", &out, &eb)) {
            fprintf(stderr, "bench_expr: %s\n", eb.msg);
            return 1;
        }
        t_join[r] = bench_now_s() - t0;
        out_values = 0;
        double acc = 0;
        for (size_t s = 0; s < out.n; s++) {
            out_values += out.s[s].n;
            acc += out.s[s].n ? out.s[s].dps[0].v.f : 0;
        }
        sink = acc;
        expr_set_free(&out);

        /* the ceiling: the same arithmetic over aligned arrays */
        t0 = bench_now_s();
        acc = 0;
        for (size_t s = 0; s < n_series; s++)
            for (size_t i = 0; i < a.s[s].n; i++) {
                double cv = i < c.s[s].n ? c.s[s].dps[i].v.f : 1;
                acc += a.s[s].dps[i].v.f * 2 + (cv == 0 ? 0 : b.s[s].dps[i].v.f / cv);
            }
        sink = acc;
        t_base[r] = bench_now_s() - t0;
    }
    double tj = bench_median(t_join, (size_t)runs), tb = bench_median(t_base, (size_t)runs);
    printf("expr join+eval \"a * 2 + b / c\", union, %zu series x 3 variables, %zu points each\n",
           n_series, points);
    printf("  %-34s %12.0f input points/s  %8.1f ns/output value  (%zu values, median of %d)\n",
           "expr_join_eval", (double)in_points / tj, tj * 1e9 / (double)out_values, out_values,
           runs);
    printf("  %-34s %12.0f input points/s\n", "aligned arrays (ceiling)", (double)in_points / tb);
    expr_free(e);
    expr_set_free(&a);
    expr_set_free(&b);
    expr_set_free(&c);
    return 0;
}
