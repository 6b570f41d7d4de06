/* test_query_agg_kind.c -- query/: every aggregator /api/aggregators lists
 * has the kind (the function it applies) written down here by hand, from
 * what each name means in OpenTSDB: the zim/mim/pf prefixes change only the
 * interpolation, p<n> and ep<n>r<3|7> are percentiles. The executor's fast
 * downsampler picks its path from this kind, so a wrong kind would compute
 * wrong buckets silently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "query/query.h"

static const struct {
    const char *name;
    query_agg_kind_t kind;
} want[] = {
    {"avg", QUERY_AGG_AVG},
    {"count", QUERY_AGG_COUNT},
    {"dev", QUERY_AGG_DEV},
    {"diff", QUERY_AGG_DIFF},
    {"ep50r3", QUERY_AGG_PERCENTILE},
    {"ep50r7", QUERY_AGG_PERCENTILE},
    {"ep75r3", QUERY_AGG_PERCENTILE},
    {"ep75r7", QUERY_AGG_PERCENTILE},
    {"ep90r3", QUERY_AGG_PERCENTILE},
    {"ep90r7", QUERY_AGG_PERCENTILE},
    {"ep95r3", QUERY_AGG_PERCENTILE},
    {"ep95r7", QUERY_AGG_PERCENTILE},
    {"ep999r3", QUERY_AGG_PERCENTILE},
    {"ep999r7", QUERY_AGG_PERCENTILE},
    {"ep99r3", QUERY_AGG_PERCENTILE},
    {"ep99r7", QUERY_AGG_PERCENTILE},
    {"first", QUERY_AGG_FIRST},
    {"last", QUERY_AGG_LAST},
    {"max", QUERY_AGG_MAX},
    {"median", QUERY_AGG_MEDIAN},
    {"mimmax", QUERY_AGG_MAX},
    {"mimmin", QUERY_AGG_MIN},
    {"min", QUERY_AGG_MIN},
    {"mult", QUERY_AGG_MULT},
    {"none", QUERY_AGG_NONE},
    {"p50", QUERY_AGG_PERCENTILE},
    {"p75", QUERY_AGG_PERCENTILE},
    {"p90", QUERY_AGG_PERCENTILE},
    {"p95", QUERY_AGG_PERCENTILE},
    {"p99", QUERY_AGG_PERCENTILE},
    {"p999", QUERY_AGG_PERCENTILE},
    {"pfsum", QUERY_AGG_SUM},
    {"squareSum", QUERY_AGG_SQUARESUM},
    {"sum", QUERY_AGG_SUM},
    {"zimsum", QUERY_AGG_SUM},
};
#define N_WANT (sizeof want / sizeof want[0])

/* Every listed name has a hand-written kind, and it matches. */
static void every_listed_aggregator_has_its_kind(void **state)
{
    (void)state;
    size_t n = 0;
    for (const char *const *p = query_agg_names(); *p; p++, n++) {
        size_t i = 0;
        while (i < N_WANT && strcmp(want[i].name, *p))
            i++;
        if (i == N_WANT) fail_msg("aggregator %s has no expected kind here: add it", *p);
        const query_agg_t *a = query_agg_find(*p);
        assert_non_null(a);
        if (query_agg_kind(a) != want[i].kind)
            fail_msg("%s: kind %d, expected %d", *p, (int)query_agg_kind(a), (int)want[i].kind);
    }
    /* and nothing expected here is missing from the list */
    assert_int_equal(n, N_WANT);
}

/* The aliases the fast downsampler folds together, spelled out. */
static void aliases_share_their_kind(void **state)
{
    (void)state;
    assert_int_equal(query_agg_kind(query_agg_find("zimsum")), QUERY_AGG_SUM);
    assert_int_equal(query_agg_kind(query_agg_find("pfsum")), QUERY_AGG_SUM);
    assert_int_equal(query_agg_kind(query_agg_find("mimmin")), QUERY_AGG_MIN);
    assert_int_equal(query_agg_kind(query_agg_find("mimmax")), QUERY_AGG_MAX);
    /* an alias keeps its own interpolation */
    assert_int_equal(query_agg_interp(query_agg_find("zimsum")), QUERY_INTERP_ZIM);
    assert_int_equal(query_agg_interp(query_agg_find("mimmin")), QUERY_INTERP_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_listed_aggregator_has_its_kind),
        cmocka_unit_test(aliases_share_their_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
