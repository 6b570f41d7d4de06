/* test_stats_latency.c -- server/stats_latency.h: percentiles of known samples, in whole ms, at
 * most 1/8 above the true value (the bucket bound the header promises), computed here from the
 * samples the test itself recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>

#include "server/stats_latency.h"

static stats_latency_t h;

/* true <= got <= true * 9 / 8, in ms */
static void near(uint64_t got, uint64_t true_ms)
{
    if (got < true_ms || got * 8 > true_ms * 9)
        fail_msg("got %llu ms for a true %llu ms", (unsigned long long)got,
                 (unsigned long long)true_ms);
}

static void percentiles_of_1_to_100_ms(void **state)
{
    (void)state;
    stats_latency_init(&h);
    assert_int_equal(stats_latency_pct_ms(&h, 50), 0); /* no samples */
    for (uint64_t ms = 100; ms >= 1; ms--)             /* order must not matter */
        stats_latency_add(&h, ms * 1000);
    /* the p-th percentile of 1..100 is the p-th smallest: p ms */
    near(stats_latency_pct_ms(&h, 50), 50);
    near(stats_latency_pct_ms(&h, 75), 75);
    near(stats_latency_pct_ms(&h, 90), 90);
    near(stats_latency_pct_ms(&h, 95), 95);
    near(stats_latency_pct_ms(&h, 100), 100);
}

static void small_and_huge_samples(void **state)
{
    (void)state;
    stats_latency_init(&h);
    for (int i = 0; i < 9; i++)
        stats_latency_add(&h, 7);      /* 7 us: exact bucket, 0 whole ms */
    stats_latency_add(&h, UINT64_MAX); /* into the last bucket, not out of bounds */
    assert_int_equal(stats_latency_pct_ms(&h, 90), 0);
    assert_true(stats_latency_pct_ms(&h, 95) >= ((uint64_t)1 << 36) / 1000);
    /* 1 ms times every power of two below the cap (2^37 us, about 38 h) lands in a bucket
     * whose bound is within 1/8 above it */
    for (unsigned e = 0; e <= 27; e++) {
        stats_latency_init(&h);
        stats_latency_add(&h, (uint64_t)1000 << e);
        near(stats_latency_pct_ms(&h, 50), (uint64_t)1 << e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(percentiles_of_1_to_100_ms),
        cmocka_unit_test(small_and_huge_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
