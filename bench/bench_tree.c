/* bench_tree.c -- the tree rule engine (query/tree_rule.c): series run
 * through a rule set per second, the cost tsd.core.tree.enable_processing
 * adds to each new series before any storage.
 *
 * Two rule sets, each over 100,000 distinct series (metric
 * sys.cpu.<n%64>.user, tags dc, host=web<n>): 2.4's documented example (L0
 * TAGK host, L1 METRIC split on "\."), and one with a regex (L0 METRIC
 * "^(\w+)\.", L1 TAGK dc with a display format, L2 TAGK host). Prints the
 * median of 5 runs. A program that prints figures, not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/benchutil.h"
#include "query/tree_rule.h"

#define RUNS   5
#define SERIES 100000

static tree_rule_t rule(int type, int level, const char *field, const char *regex, const char *sep,
                        const char *fmt)
{
    tree_rule_t r;
    tree_rule_init(&r);
    r.type = type;
    r.level = level;
    r.tree_id = 1;
    tree_rule_set(&r.field, field);
    tree_rule_set(&r.regex, regex);
    tree_rule_set(&r.separator, sep);
    tree_rule_set(&r.display_format, fmt);
    oct_errbuf_t eb;
    if (tree_rule_validate(&r, &eb)) {
        fprintf(stderr, "rule: %s\n", eb.msg);
        exit(1);
    }
    return r;
}

static double run(const tree_rule_t *rules, size_t n, size_t *sink)
{
    double rates[RUNS];
    char metric[64], host[32];
    tree_uid_view_t tagk[2] = {{"dc", NULL}, {"host", NULL}};
    tree_uid_view_t tagv[2] = {{"lga", NULL}, {host, NULL}};
    for (int r = 0; r < RUNS; r++) {
        double t0 = bench_now_s();
        for (int i = 0; i < SERIES; i++) {
            snprintf(metric, sizeof metric, "sys.cpu.%d.user", i % 64);
            snprintf(host, sizeof host, "web%05d", i);
            tree_series_view_t s = {
                "000001000001000001000002000002", {metric, NULL}, 2, tagk, tagv};
            tree_build_result_t out = {0};
            oct_errbuf_t eb;
            if (tree_build(rules, n, &s, 0, &out, &eb)) {
                fprintf(stderr, "build: %s\n", eb.msg);
                exit(1);
            }
            *sink += out.n_branches + (out.leaf ? strlen(out.leaf) : 0);
            tree_build_result_free(&out);
        }
        rates[r] = SERIES / (bench_now_s() - t0);
    }
    return bench_median(rates, RUNS);
}

int main(void)
{
    size_t sink = 0;
    tree_rule_t doc[] = {rule(TREE_RULE_TAGK, 0, "host", "", "", ""),
                         rule(TREE_RULE_METRIC, 1, "", "", "\\.", "")};
    tree_rule_t re[] = {rule(TREE_RULE_METRIC, 0, "", "^(\\w+)\\.", "", ""),
                        rule(TREE_RULE_TAGK, 1, "dc", "", "", "dc={value}"),
                        rule(TREE_RULE_TAGK, 2, "host", "", "", "")};
    double a = run(doc, 2, &sink), b = run(re, 3, &sink);
    printf("bench_tree: tree_build over %d series, median of %d runs\n", SERIES, RUNS);
    printf("  host + metric split   %8.0f series/s  (%.2f us/series)\n", a, 1e6 / a);
    printf("  regex + format + tag  %8.0f series/s  (%.2f us/series)\n", b, 1e6 / b);
    printf("  (checksum %zu)\n", sink);
    for (size_t i = 0; i < 2; i++)
        tree_rule_clear(&doc[i]);
    for (size_t i = 0; i < 3; i++)
        tree_rule_clear(&re[i]);
    return 0;
}
