/* test_histogram.c -- histograms over the real daemon (docs/histograms.md): written through
 * telnet `histogram` (the text form and the base64 form) and /api/histogram, read back by
 * /api/query with percentiles and show-histogram-buckets, downsampled, grouped and one series
 * at a time; 2.4's errors; kept across kill -9 and a clean restart; the stored cells byte for
 * byte as docs/format/histogram.md's worked example spells them.
 *
 * The data (codec id 7; T0 = 2013-01-01 00:00 UTC, on an hour):
 *   host=a  T0, T0+60:  [0,1.5)=42 [1.5,5.75)=24 overflow 1   (2.4's example, both forms)
 *   host=b  T0:         [0,1.5)=3  [1.5,5.75)=1  overflow 2   (/api/histogram, buckets)
 *           T0+60:      [5.75,10)=10                          (/api/histogram, base64)
 *   and one numeric point h.lat{host=a} T0 = 5, which histogram queries never see.
 * Every expected value below is worked out by hand in the comment beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "tsdb/histogram.h"

#define T0  1356998400LL
#define T1  (T0 + 60)
#define Q   "/api/query?start=1356998400&end=1356999000&m="
#define CFG "tsd.core.histograms.config={\"net.opentsdb.core.SimpleHistogramDecoder\": 7}"

/* 2.4's example payload (without the id byte), docs/format/histogram.md section 3 */
#define EX_B64 "AAIAAAAAP8AAACo/wAAAQLgAABgAAQ=="
/* [5.75,10)=10, no under/overflow: 00 01 | 40B80000 41200000 0A | 00 | 00, in base64 */
#define B_T1_B64 "AAFAuAAAQSAAAAoAAA=="

static tu_tsd_t g_t;

static void write_all(void)
{
    const char *extra[] = {"--auto-metric", "--set", CFG, NULL};
    memset(&g_t, 0, sizeof g_t);
    assert_int_equal(tu_tsd_start(&g_t, extra), 0);
    int fd = tu_connect(g_t.port);
    assert_true(fd >= 0);
    /* both telnet forms store; the errors are 2.4's lines */
    const char *got = tu_telnet_tx(fd, NULL,
                                   "histogram h.lat %lld u=0:o=1:0,1.5=42:1.5,5.75=24 host=a\n"
                                   "histogram h.lat %lld 7 " EX_B64 " host=a\n"
                                   "histogram h.lat %lld 0 " EX_B64 " host=a\n"
                                   "histogram h.lat %lld 0,1.5=1:x host=a\n"
                                   "histogram h.lat %lld 0;1.5=1 host=a\n"
                                   "histogram h.lat %lld\n"
                                   "histogram h.lat %lld 7 AAI= host=a\n",
                                   T0, T1, T1, T1, T1, T0, T1);
    assert_string_equal(got, "histogram: illegal argument: No codec found mapped to ID 0\n"
                             "histogram: illegal argument: Improperly formatted bucket: x\n"
                             "histogram: illegal argument: Improperly formatted bounds: 0;1.5=1\n"
                             "histogram: illegal argument: not enough arguments (need least 5, "
                             "got 3)\n"
                             "histogram: illegal argument: Byte array shorter than 6 bytes "
                             "detected: 2 bytes\n");
    close(fd);

    char body[1024];
    snprintf(body, sizeof body,
             "[{\"metric\":\"h.lat\",\"timestamp\":%lld,\"tags\":{\"host\":\"b\"},\"id\":7,"
             "\"buckets\":{\"0,1.5\":3,\"1.5,5.75\":1},\"overflow\":2},"
             "{\"metric\":\"h.lat\",\"timestamp\":%lld,\"tags\":{\"host\":\"b\"},\"id\":7,"
             "\"value\":\"" B_T1_B64 "\"}]",
             T0, T1);
    AC_EXPECT(&g_t, "POST", "/api/histogram", body, 204, "");
    /* a numeric point of the same metric */
    snprintf(body, sizeof body,
             "{\"metric\":\"h.lat\",\"timestamp\":%lld,\"value\":5,\"tags\":{\"host\":\"a\"}}", T0);
    AC_EXPECT(&g_t, "POST", "/api/put", body, 204, "");
}

static int setup(void **state)
{
    (void)state;
    write_all();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

static void http_errors(void **state)
{
    (void)state;
    static const char body[] =
        "[{\"metric\":\"h.e\",\"timestamp\":1356998400,\"buckets\":{\"0,1\":1}},"
        "{\"metric\":\"h.e\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},\"buckets\":{}},"
        "{\"metric\":\"h.e\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},\"id\":7,"
        "\"buckets\":{\"0-1\":1}},"
        "{\"metric\":\"h.e\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},\"id\":7,"
        "\"buckets\":{\"0,x\":1}},"
        "{\"metric\":\"h.e\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},\"id\":300,"
        "\"buckets\":{\"0,1\":1}},"
        "{\"metric\":\"h.e\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},"
        "\"buckets\":{\"0,1\":1}},"
        "{\"metric\":\"\",\"timestamp\":1356998400,\"tags\":{\"h\":\"a\"},\"value\":\"AA\"}]";
    char *r = ac_req_ok(&g_t, "POST", "/api/histogram?details", body, 400);
    assert_non_null(strstr(r, "\"success\":0,\"failed\":7,"));
    static const char *const want[] = {
        "\"error\":\"Missing tags\"",
        "\"error\":\"Histogram buckets cannot be null or empty if 'value' is empty.\"",
        "\"error\":\"Unable to parse bucket bounds: 0-1\"",
        "\"error\":\"Unable to parse value to a number\"",
        "\"error\":\"Invalid type. Must be from 0 to 255.\"",
        "\"error\":\"No codec found mapped to ID 0\"", /* id defaults to 0 */
        "\"error\":\"Metric name was empty\"",
    };
    const char *p = r;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *q = strstr(p, want[i]);
        if (!q) fail_msg("missing %s in %s", want[i], r);
        p = q + 1;
    }
    free(r);
    /* POST only, once histograms are on */
    assert_int_equal(ac_req(&g_t, "GET", "/api/histogram", NULL, &r), 405);
    free(r);
}

/* The queries and their hand-computed answers. */
static void check_queries(void)
{
    char want[4096];
    /* sum across hosts, per timestamp:
     *   T0: [0,1.5)=42+3=45 [1.5,5.75)=24+1=25, total 70: p50 45/70=64% -> 0.75, p99 -> 3.625
     *   T1: [0,1.5)=42 [1.5,5.75)=24 [5.75,10)=10, total 76: p50 42/76=55% -> 0.75,
     *       p99: 66/76=87% < 99 -> [5.75,10) -> 7.875 */
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat_pct_50.0\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":0.75,\"%lld\":0.75}},"
             "{\"metric\":\"h.lat_pct_99.0\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":3.625,\"%lld\":7.875}}]",
             T0, T1, T0, T1);
    AC_EXPECT(&g_t, "GET", Q "sum:percentiles[99,50]:h.lat", NULL, 200, want);
    /* the buckets of the first summed point ([0,1.5), [1.5,5.75)); overflow 1+2=3, then 1 */
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat_UNDERFLOW\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":0,\"%lld\":0}},"
             "{\"metric\":\"h.lat_0.0_1.5\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":45,\"%lld\":42}},"
             "{\"metric\":\"h.lat_1.5_5.75\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":25,\"%lld\":24}},"
             "{\"metric\":\"h.lat_OVERFLOW\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":3,\"%lld\":1}}]",
             T0, T1, T0, T1, T0, T1, T0, T1);
    AC_EXPECT(&g_t, "GET", Q "sum:show-histogram-buckets:h.lat", NULL, 200, want);
    /* 1h-sum: every point in the hour of T0: [0,1.5)=87 [1.5,5.75)=49 [5.75,10)=10, total
     * 146: p50 87/146=60% -> 0.75; p90 136/146=93% -> 3.625; p99 -> 7.875 */
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat_pct_50.0\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":0.75}},"
             "{\"metric\":\"h.lat_pct_90.0\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":3.625}},"
             "{\"metric\":\"h.lat_pct_99.0\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":7.875}}]",
             T0, T0, T0);
    AC_EXPECT(&g_t, "GET", Q "sum:1h-sum:percentiles[50,90,99]:h.lat", NULL, 200, want);
    /* POST, group by host, percentiles sorted: host=a T0 and T1 as 2.4's example (p75: 42/66
     * = 64% < 75 -> 3.625); host=b T0: 3 of 4 -> p75 0.75, T1: all in [5.75,10) -> 7.875 */
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat_pct_75.0\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],"
             "\"dps\":{\"%lld\":3.625,\"%lld\":3.625}},"
             "{\"metric\":\"h.lat_pct_99.9\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],"
             "\"dps\":{\"%lld\":3.625,\"%lld\":3.625}},"
             "{\"metric\":\"h.lat_pct_75.0\",\"tags\":{\"host\":\"b\"},\"aggregateTags\":[],"
             "\"dps\":{\"%lld\":0.75,\"%lld\":7.875}},"
             "{\"metric\":\"h.lat_pct_99.9\",\"tags\":{\"host\":\"b\"},\"aggregateTags\":[],"
             "\"dps\":{\"%lld\":3.625,\"%lld\":7.875}}]",
             T0, T1, T0, T1, T0, T1, T0, T1);
    AC_EXPECT(&g_t, "POST", "/api/query",
              "{\"start\":1356998400,\"end\":1356999000,\"queries\":[{\"aggregator\":\"sum\","
              "\"metric\":\"h.lat\",\"percentiles\":[99.9,75],\"filters\":[{\"type\":"
              "\"wildcard\",\"tagk\":\"host\",\"filter\":\"*\",\"groupBy\":true}]}]}",
              200, want);
    /* the numeric point is all a plain query sees */
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],\"dps\":{"
             "\"%lld\":5}}]",
             T0);
    AC_EXPECT(&g_t, "GET", Q "sum:h.lat", NULL, 200, want);
}

static void queries(void **state)
{
    (void)state;
    check_queries();
    /* none: one output per series, host=b's T0 with its own buckets ([0,1.5)=3 of 4: p50
     * 0.75) */
    char want[1024];
    snprintf(want, sizeof want,
             "[{\"metric\":\"h.lat_pct_50.0\",\"tags\":{\"host\":\"b\"},\"aggregateTags\":[],"
             "\"dps\":{\"%lld\":0.75,\"%lld\":7.875}}]",
             T0, T1);
    AC_EXPECT(&g_t, "GET", Q "none:percentiles[50]:h.lat{host=b}", NULL, 200, want);
    AC_EXPECT(&g_t, "GET", Q "avg:percentiles[50]:h.lat", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Only NONE or SUM aggregation function "
              "supported for histogram query\"}}");
    AC_EXPECT(&g_t, "GET", Q "sum:1m-avg:percentiles[50]:h.lat", NULL, 400,
              "{\"error\":{\"code\":400,\"message\":\"Only SUM downsampling aggregation supported "
              "for histogram query\"}}");
}

/* Millisecond timestamps get 5-byte qualifiers; a whole second given in seconds a 3-byte one.
 * Each point is one bucket, so its p50 is that bucket's midpoint: [0,2) -> 1, [2,4) -> 3. */
static void ms_timestamps(void **state)
{
    (void)state;
    AC_EXPECT(&g_t, "POST", "/api/histogram?sync",
              "[{\"metric\":\"h.ms\",\"timestamp\":1356998400250,\"tags\":{\"host\":\"a\"},"
              "\"id\":7,\"buckets\":{\"0,2\":1}},"
              "{\"metric\":\"h.ms\",\"timestamp\":1356998401,\"tags\":{\"host\":\"a\"},"
              "\"id\":7,\"buckets\":{\"2,4\":3}}]",
              204, "");
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998400&end=1356998500&ms=true&m=sum:percentiles[50]:h.ms", NULL,
              200,
              "[{\"metric\":\"h.ms_pct_50.0\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],"
              "\"dps\":{\"1356998400250\":1.0,\"1356998401000\":3.0}}]");
}

/* Read back from the stopped daemon's data dir: host=a's T0 cell is 2.4's example with
 * id 7, under a 3-byte qualifier (06 + offset 0 s). */
static int cell_cb(void *ctx, int64_t ts, const uint8_t *v, size_t len)
{
    char *out = ctx;
    size_t k = strlen(out);
    snprintf(out + k, 256 - k, "%lld:%s;", (long long)ts, tu_hex(v, len));
    return 0;
}

static void survives_kill9_and_restart(void **state)
{
    (void)state;
    const char *extra[] = {"--auto-metric", "--set", CFG, NULL};
    tu_tsd_kill(&g_t);
    assert_int_equal(tu_tsd_start(&g_t, extra), 0);
    check_queries();
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    assert_int_equal(tu_tsd_start(&g_t, extra), 0);
    check_queries();
    assert_int_equal(tu_tsd_stop(&g_t), 0);

    tsdb_t *db = ac_open_dir(g_t.dir);
    const char *tags[] = {"host=a"};
    uint8_t tsuid[64];
    int tl = ac_tsuid(db, "h.lat", tags, 1, tsuid);
    assert_true(tl > 0);
    tsdb_reader_t *rd = tsdb_reader_new(db);
    char got[256] = "";
    oct_errbuf_t eb;
    assert_int_equal(tsdb_reader_histograms(rd, tsuid, (size_t)tl, T0 * 1000, T0 * 1000 + 3599999,
                                            cell_cb, got, &eb),
                     0);
    char want[256];
    snprintf(want, sizeof want, "%lld:070002000000003FC000002A3FC0000040B80000180001;", T0 * 1000);
    /* both of host=a's cells (T0 and T1) hold the same bytes */
    char want2[512];
    snprintf(want2, sizeof want2, "%s%lld:%s", want, T1 * 1000, strchr(want, ':') + 1);
    for (char *c = got; *c; c++)
        if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
    assert_string_equal(got, want2);
    tsdb_reader_free(rd);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(http_errors),
        cmocka_unit_test(queries),
        cmocka_unit_test(ms_timestamps),
        cmocka_unit_test(survives_kill9_and_restart),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
