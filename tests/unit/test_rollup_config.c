/* test_rollup_config.c -- the rollup configuration's checks with 2.4's
 * start-up texts, the row base times of each span unit, table candidates,
 * and the rollup qualifier bytes of 2.4's worked example
 * (docs/format/rollup.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rollup.h"
#include "common/config.h"
#include "common/xmalloc.h"
#include "query/rollup.h"
#include "testutil.h"

#define AGGS "\"aggregationIds\":{\"sum\":0,\"count\":1,\"min\":2,\"max\":3}"
#define DEF                                                                                        \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true}"
#define IV(i, s)                                                                                   \
    "{\"table\":\"r\",\"preAggregationTable\":\"p\",\"interval\":\"" i "\",\"rowSpan\":\"" s "\"}"

static void want_err(const char *json, const char *msg)
{
    query_rollup_config_t c;
    oct_errbuf_t eb;
    int rc = query_rollup_config_parse(json, strlen(json), &c, &eb);
    if (rc != OCT_ECONFIG) fail_msg("%s: rc %d", json, rc);
    if (strcmp(eb.msg, msg)) fail_msg("%s: got '%s' want '%s'", json, eb.msg, msg);
}

static void config_errors(void **state)
{
    (void)state;
    want_err("{}", "Rollup config given but no aggegation ID mappings found.");
    want_err("{\"aggregationIds\":{\"sum\":128}}",
             "ID for aggregator must be between 0 and 127: sum=128");
    want_err("{\"aggregationIds\":{\"sum\":1,\"MAX\":1}}",
             "Multiple mappings for the ID '1' are not allowed.");
    want_err("{\"aggregationIds\":{\"summ\":1}}", "No such aggregator found for summ");
    want_err("{" AGGS "}", "Rollup config given but no intervals were found.");
    want_err("{" AGGS ",\"intervals\":[]}", "Rollup config given but no intervals were found.");
    want_err("{" AGGS ",\"intervals\":[" IV("1h", "1ms") "]}", "Milliseconds are not supported");
    want_err("{" AGGS ",\"intervals\":[{\"interval\":\"1h\",\"rowSpan\":\"1d\"}]}",
             "The rollup table cannot be null or empty");
    want_err("{" AGGS ",\"intervals\":[{\"table\":\"t\",\"interval\":\"1h\",\"rowSpan\":\"1d\"}]}",
             "The pre-aggregate rollup table cannot be null or empty");
    want_err("{" AGGS ",\"intervals\":[" IV("1h", "2d") "]}",
             "Multipliers are only usable with the 'h' unit");
    want_err("{" AGGS ",\"intervals\":[" IV("1m", "3h") "]}",
             "The multiplier must be 1 or an even value");
    want_err("{" AGGS ",\"intervals\":[" IV("1h", "1w") "]}", "Unrecogznied span 'w'");
    want_err("{" AGGS ",\"intervals\":[" IV("1d", "1d") "]}",
             "Interval [86400] is too large for the span [d]");
    want_err("{" AGGS ",\"intervals\":[" IV("1s", "1d") "]}",
             "Too many intervals [86400] in the span. Must be smaller than [7774] to fit in 14 "
             "bits");
    want_err("{" AGGS ",\"intervals\":[" IV("6h", "1d") "]}",
             "Not enough intervals [4] for the span. Must be at least [12]");
    want_err("{" AGGS ",\"intervals\":[" DEF "," DEF "]}",
             "Only one interval of each type can be configured: 1m");
    want_err("{" AGGS ",\"intervals\":[" DEF ",{\"table\":\"x\",\"preAggregationTable\":\"y\","
             "\"interval\":\"2m\",\"rowSpan\":\"1h\",\"defaultInterval\":true}]}",
             "Multiple default intervals configured. Only one is allowed: 2m");
    want_err("{" AGGS ",\"intervals\":[" IV("1h", "1d") "]}",
             "None of the rollup intervals were marked as the \"default\".");
    want_err("{" AGGS ",\"intervals\":[" DEF ",{\"table\":\"r\",\"preAggregationTable\":\"p\","
             "\"interval\":\"1h\",\"rowSpan\":\"1d\",\"delaySla\":\"10ms\"}]}",
             "Milliseconds are not supported as the maximum delay");
}

static void config_good(void **state)
{
    (void)state;
    const char *json =
        "{" AGGS ",\"intervals\":[" DEF ",{\"table\":\"tsdb-rollup-1h\","
        "\"preAggregationTable\":\"tsdb-rollup-preagg-1h\",\"interval\":\"1h\","
        "\"rowSpan\":\"1d\",\"delaySla\":\"2h\"}," IV(
            "10m", "2h") ","
                         "{\"table\":\"m\",\"preAggregationTable\":\"m\",\"interval\":\"1d\","
                         "\"rowSpan\":\"1y\"}]}";
    query_rollup_config_t c;
    oct_errbuf_t eb;
    assert_int_equal(query_rollup_config_parse(json, strlen(json), &c, &eb), 0);
    assert_int_equal(c.n_iv, 4);
    assert_int_equal(c.default_iv, 0);
    assert_int_equal(c.iv[1].interval_s, 3600);
    assert_int_equal(c.iv[1].delay_sla_s, 7200);
    assert_int_equal(c.iv[1].intervals, 24);
    assert_int_equal(query_rollup_agg_id(&c, "MAX", 3), 3);
    assert_int_equal(query_rollup_agg_id(&c, "avg", 3), -1);
    assert_null(query_rollup_interval_find(&c, "60m", 3));
    assert_ptr_equal(query_rollup_interval_find(&c, "1h", 2), &c.iv[1]);
    /* base times: 2013-03-15 13:45:10 UTC = 1363355110 */
    assert_int_equal(query_rollup_base_time(&c.iv[0], 1363355110), 1363352400);
    assert_int_equal(query_rollup_base_time(&c.iv[1], 1363355110), 1363305600);
    assert_int_equal(query_rollup_base_time(&c.iv[2], 1363355110), 1363348800); /* 12:00 */
    assert_int_equal(query_rollup_base_time(&c.iv[3], 1363355110), 1356998400); /* Jan 1 */
    assert_int_equal(query_rollup_next_base(&c.iv[3], 1356998400), 1388534400);
    /* candidates for 1d: 1d, 1h, 10m, 1m (largest first); for 30m: 10m, 1m */
    size_t idx[8];
    assert_int_equal(query_rollup_candidates(&c, 86400, idx), 4);
    assert_int_equal(idx[0], 3);
    assert_int_equal(idx[1], 1);
    assert_int_equal(idx[2], 2);
    assert_int_equal(idx[3], 0);
    assert_int_equal(query_rollup_candidates(&c, 1800, idx), 2);
    assert_int_equal(idx[0], 2);
    query_rollup_config_t *cp = xcalloc(1, sizeof *cp);
    *cp = c;
    query_rollup_config_free(cp);
}

static void config_keys(void **state)
{
    (void)state;
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    query_rollup_config_t *c = (void *)1;
    assert_int_equal(query_rollup_config_load(cfg, &c, &eb), 0);
    assert_null(c);
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.auto", "true", &eb), 0);
    assert_int_equal(query_rollup_config_load(cfg, &c, &eb), OCT_ECONFIG);
    assert_string_equal(eb.msg, "tsd.rollups.auto=true needs tsd.rollups.enable=true");
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.auto", "false", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.enable", "true", &eb), 0);
    assert_int_equal(query_rollup_config_load(cfg, &c, &eb), OCT_ECONFIG);
    assert_string_equal(eb.msg, "Rollups were enabled but 'tsd.rollups.config' is null or empty.");
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.config", "/nonexistent/r.json", &eb), 0);
    assert_int_equal(query_rollup_config_load(cfg, &c, &eb), OCT_ECONFIG);
    assert_string_equal(eb.msg, "Failed to open conf file: /nonexistent/r.json");
    assert_int_equal(
        oct_config_set(cfg, "tsd.rollups.config", "{" AGGS ",\"intervals\":[" DEF "]}", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.agg_tag_key", "_agg", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.rollups.block_derived", "false", &eb), 0);
    assert_int_equal(query_rollup_config_load(cfg, &c, &eb), 0);
    assert_string_equal(c->agg_tag_key, "_agg");
    assert_string_equal(c->raw_agg_tag_value, "RAW");
    assert_int_equal(c->block_derived, 0);
    assert_int_equal(c->tag_raw, 0);
    query_rollup_config_free(c);
    oct_config_free(cfg);
}

/* 2.4's worked example: 1h-sum of 42 at 05:00 on a 1d row -> 00 00 50 / 2A;
 * 1h-count -> 01 00 50; a float and a wide integer round-trip. */
static void qualifier_bytes(void **state)
{
    (void)state;
    uint8_t q[3], v[8];
    size_t vl;
    codec_point_t p = {.val.i = 42, .is_float = 0}, back;
    assert_int_equal(codec_rollup_encode(0, 5, &p, q, v, &vl), 0);
    assert_memory_equal(q, "\x00\x00\x50", 3);
    assert_int_equal(vl, 1);
    assert_int_equal(v[0], 0x2A);
    assert_int_equal(codec_rollup_encode(1, 5, &p, q, v, &vl), 0);
    assert_memory_equal(q, "\x01\x00\x50", 3);
    unsigned id;
    uint32_t idx;
    p.val.i = -70000;
    assert_int_equal(codec_rollup_encode(3, 4095, &p, q, v, &vl), 0);
    assert_memory_equal(q, "\x03\xFF\xF3", 3); /* 4-byte int: flags 3 */
    assert_int_equal(codec_rollup_decode(q, 3, v, vl, &id, &idx, &back), 0);
    assert_int_equal(id, 3);
    assert_int_equal(idx, 4095);
    assert_int_equal(back.val.i, -70000);
    p.is_float = 1;
    p.val.f = 0.1;
    assert_int_equal(codec_rollup_encode(2, 1, &p, q, v, &vl), 0);
    assert_int_equal(vl, 8);
    assert_int_equal(q[2], 0x1F);
    assert_int_equal(codec_rollup_decode(q, 3, v, vl, &id, &idx, &back), 0);
    assert_true(back.is_float && back.val.f == 0.1);
    assert_int_equal(codec_rollup_encode(128, 1, &p, q, v, &vl), OCT_ERANGE);
    assert_int_equal(codec_rollup_encode(1, 4096, &p, q, v, &vl), OCT_ERANGE);
    assert_int_equal(codec_rollup_decode(q, 2, v, vl, &id, &idx, &back), OCT_ECORRUPT);
    assert_int_equal(codec_rollup_decode(q, 3, v, 4, &id, &idx, &back), OCT_ECORRUPT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_errors),
        cmocka_unit_test(config_good),
        cmocka_unit_test(config_keys),
        cmocka_unit_test(qualifier_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
