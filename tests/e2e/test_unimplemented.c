/* test_unimplemented.c -- what octsdb does not implement yet (histogram
 * codecs other than the simple one: issue 12), and rollup questions to a TSD without
 * rollups, are clear errors, never a silent wrong answer, over the real
 * daemon and the real binary (rollups themselves: test_rollup.c):
 *
 *  - /api/query, GET and POST: pre-agg / preAggregate and every rollup usage
 *    but ROLLUP_RAW while tsd.rollups.enable is false, and an unknown usage,
 *    are 400s in OpenTSDB's error shape; an m= part 2.4 would silently drop
 *    is a 400 too; ROLLUP_RAW (raw data) answers exactly the plain query,
 *    checked against sums worked out here; a histogram query (percentiles,
 *    showHistogramBuckets) over numeric data answers nothing;
 *  - /api/rollup refuses every point while rollups are off, /api/histogram
 *    without tsd.core.histograms.config is 503 (any verb, as 2.4); both 404
 *    in ro mode, where 2.4 does not register them;
 *  - telnet rollup and histogram (test_telnet.c checks their rw replies;
 *    here: unknown in ro mode);
 *  - a tsd.core.histograms.config naming a codec other than the simple one
 *    stops start-up naming the key (split rollup queries are implemented:
 *    test_rollup_split.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

#define T0 1356998400LL

static tu_tsd_t g_t;

/* u.m host=a: T0 1, T0+60 2; host=b: T0 10, T0+60 20 */
static const int64_t k_a[] = {1, 2}, k_b[] = {10, 20};

static int setup(void **state)
{
    (void)state;
    /* off is accepted */
    static const char *const ex[] = {"--auto-metric",
                                     "--set",
                                     "tsd.rollups.enable=false",
                                     "--set",
                                     "tsd.core.histograms.config=",
                                     NULL};
    char body[1024];
    size_t n = (size_t)snprintf(body, sizeof body, "[");
    for (int i = 0; i < 2; i++)
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"metric\":\"u.m\",\"timestamp\":%lld,\"value\":%lld,"
                              "\"tags\":{\"host\":\"a\"}},"
                              "{\"metric\":\"u.m\",\"timestamp\":%lld,\"value\":%lld,"
                              "\"tags\":{\"host\":\"b\"}}",
                              i ? "," : "", T0 + 60 * i, (long long)k_a[i], T0 + 60 * i,
                              (long long)k_b[i]);
    snprintf(body + n, sizeof body - n, "]");
    return ac_start_put(&g_t, ex, body);
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

#define Q           "/api/query?start=1356998400&end=1356998700&m="
#define ERR400      "{\"error\":{\"code\":400,\"message\":\""
#define END         "\"}}"
#define ROLLUP_TAIL " queries need rollups: tsd.rollups.enable is false on this TSD"
#define USAGE_TAIL  " (one of ROLLUP_RAW, ROLLUP_NOFALLBACK, ROLLUP_FALLBACK, ROLLUP_FALLBACK_RAW)"

static char *post_body(const char *extra)
{
    static char b[512];
    snprintf(b, sizeof b,
             "{\"start\":1356998400,\"end\":1356998700,\"queries\":[{\"aggregator\":\"sum\","
             "\"metric\":\"u.m\"%s}]}",
             extra);
    return b;
}

static void get_refused(void **state)
{
    (void)state;
    /* a histogram query reads histogram cells only: u.m's numbers are not an answer */
    AC_EXPECT(&g_t, "GET", Q "sum:percentiles[50,99]:u.m", NULL, 200, "[]");
    AC_EXPECT(&g_t, "GET", Q "sum:show-histogram-buckets:u.m", NULL, 200, "[]");
    AC_EXPECT(&g_t, "GET", Q "sum:pre-agg:u.m", NULL, 400, ERR400 "Pre-aggregate" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "GET", Q "sum:1m-sum:rollup_nofallback:u.m", NULL, 400,
              ERR400 "ROLLUP_NOFALLBACK" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "GET", Q "sum:rollup_fallback:u.m", NULL, 400,
              ERR400 "ROLLUP_FALLBACK" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "GET", Q "sum:rollup_fallback_raw:u.m", NULL, 400,
              ERR400 "ROLLUP_FALLBACK_RAW" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "GET", Q "sum:rollup_typo:u.m", NULL, 400,
              ERR400 "Unknown rollup usage: rollup_typo" USAGE_TAIL END);
    /* 2.4 drops a part it does not know: "rat" would answer without the rate */
    AC_EXPECT(&g_t, "GET", Q "sum:rat:u.m", NULL, 400,
              ERR400 "Unknown part of the sub-query: rat" END);
    /* the tsuid= form too */
    AC_EXPECT(&g_t, "GET",
              "/api/query?start=1356998400&end=1356998700&tsuid=sum:pre-agg:000001000001000001",
              NULL, 400, ERR400 "Pre-aggregate" ROLLUP_TAIL END);
}

static void post_refused(void **state)
{
    (void)state;
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"percentiles\":[50,99]"), 200, "[]");
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"showHistogramBuckets\":true"), 200, "[]");
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"preAggregate\":true"), 400,
              ERR400 "Pre-aggregate" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"rollupUsage\":\"ROLLUP_NOFALLBACK\""), 400,
              ERR400 "ROLLUP_NOFALLBACK" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "POST", "/api/query",
              post_body(",\"downsample\":\"1m-avg\",\"rollupUsage\":\"ROLLUP_FALLBACK\""), 400,
              ERR400 "ROLLUP_FALLBACK" ROLLUP_TAIL END);
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"rollupUsage\":\"ROLLUP_FALLBACK_RAW\""),
              400, ERR400 "ROLLUP_FALLBACK_RAW" ROLLUP_TAIL END);
    /* 2.4 reads an unknown usage as ROLLUP_NOFALLBACK without a word */
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"rollupUsage\":\"RAW\""), 400,
              ERR400 "Unknown rollup usage: RAW" USAGE_TAIL END);
    /* a wrong type is a JSON error, as any field's */
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(",\"percentiles\":50"), 400,
              ERR400 "Unable to parse the given JSON\",\"details\":\"a field has the wrong "
                     "type" END);
}

/* What the options mean when they ask for nothing, and ROLLUP_RAW: the plain
 * answer, the sums of the points put. */
static void raw_answers(void **state)
{
    (void)state;
    char want[512];
    snprintf(want, sizeof want,
             "[{\"metric\":\"u.m\",\"tags\":{},\"aggregateTags\":[\"host\"],\"dps\":{"
             "\"%lld\":%lld,\"%lld\":%lld}}]",
             T0, (long long)(k_a[0] + k_b[0]), T0 + 60, (long long)(k_a[1] + k_b[1]));
    AC_EXPECT(&g_t, "GET", Q "sum:u.m", NULL, 200, want);
    AC_EXPECT(&g_t, "GET", Q "sum:rollup_raw:u.m", NULL, 200, want);
    AC_EXPECT(&g_t, "GET", Q "sum:ROLLUP_RAW:u.m", NULL, 200, want);
    AC_EXPECT(&g_t, "POST", "/api/query", post_body(""), 200, want);
    AC_EXPECT(&g_t, "POST", "/api/query",
              post_body(",\"rollupUsage\":\"rollup_raw\",\"percentiles\":[],"
                        "\"showHistogramBuckets\":false,\"preAggregate\":false,"
                        "\"useFuzzyFilter\":false,\"useMultiGets\":true"),
              200, want);
}

static void endpoints(void **state)
{
    (void)state;
    /* rollups off: 2.4's first write rule refuses the point */
    AC_EXPECT(&g_t, "POST", "/api/rollup?details",
              "{\"metric\":\"u.m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":"
              "\"a\"},\"interval\":\"1h\",\"aggregator\":\"SUM\"}",
              400,
              "{\"success\":0,\"failed\":1,\"errors\":[{\"datapoint\":{\"metric\":\"u.m\","
              "\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"a\"},\"interval\":"
              "\"1h\",\"aggregator\":\"SUM\"},\"error\":\"No rollup or aggregations were "
              "configured\"}]}");
    /* histograms are off without tsd.core.histograms.config: 2.4's 503, before the verb */
    static const char h503[] =
        "{\"error\":{\"code\":503,\"message\":\"Histogram storage has not been enabled. Check "
        "the 'tsd.core.histograms.config' configuration.\"}}";
    AC_EXPECT(&g_t, "POST", "/api/histogram",
              "{\"metric\":\"u.m\",\"timestamp\":1356998400,\"tags\":{\"host\":\"a\"},"
              "\"buckets\":{\"0,1.5\":42}}",
              503, h503);
    AC_EXPECT(&g_t, "GET", "/api/v1/histogram", NULL, 503, h503);
    char *r;
    assert_int_equal(ac_req(&g_t, "GET", "/api/rollup", NULL, &r), 405);
    free(r);
    /* nothing was stored: host=a still holds its two raw points */
    char want[256];
    snprintf(want, sizeof want,
             "[{\"metric\":\"u.m\",\"tags\":{\"host\":\"a\"},\"aggregateTags\":[],\"dps\":{"
             "\"%lld\":%lld,\"%lld\":%lld}}]",
             T0, (long long)k_a[0], T0 + 60, (long long)k_a[1]);
    AC_EXPECT(&g_t, "GET", Q "sum:u.m{host=a}", NULL, 200, want);
}

/* In ro mode 2.4 registers neither the endpoints nor the telnet commands. */
static void ro_mode(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    static const char *const ex[] = {"--set", "tsd.mode=ro", NULL};
    assert_int_equal(tu_tsd_start(&t, ex), 0);
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/rollup", "{}", &r), 404);
    free(r);
    assert_int_equal(ac_req(&t, "POST", "/api/histogram", "{}", &r), 404);
    free(r);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    /* exit closes the connection, so the read ends at EOF */
    const char lines[] = "rollup 1h-sum x 1 1 a=b\nhistogram x 1 0,1=1 a=b\nexit\n";
    assert_int_equal(tu_send_all(fd, lines, sizeof lines - 1), 0);
    static const char want[] = "unknown command: rollup.  Try `help'.\n"
                               "unknown command: histogram.  Try `help'.\n";
    char got[256];
    tu_recv_some(fd, got, sizeof got, 2000);
    close(fd);
    assert_string_equal(got, want);
    tu_tsd_destroy(&t);
}

/* Runs `octsdb tsd <args>` (it must stop at once) and returns its stderr
 * and stdout together; *status its exit status. */
static char *run_tsd(const char *args, int *status)
{
    const char *bin = getenv("OCTSDB_BIN");
    assert_non_null(bin);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "timeout 20 '%s' tsd --bind=127.0.0.1 --port=1 %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

static void startup_refused(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char args[4096];
    int st;
    char conf[1100];
    snprintf(conf, sizeof conf, "%s/opentsdb.conf", dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    /* a codec octsdb does not implement (2.4 would load the class) */
    fputs("tsd.core.histograms.config = {\"net.opentsdb.core.OtherHistogramDecoder\": 1}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "--datadir=%s --config=%s", dir, conf);
    assert_non_null(strstr(run_tsd(args, &st),
                           "ERROR tsd: tsd.core.histograms.config={\"net.opentsdb.core."
                           "OtherHistogramDecoder\": 1}: unknown histogram codec "
                           "'net.opentsdb.core.OtherHistogramDecoder': octsdb implements "
                           "net.opentsdb.core.SimpleHistogramDecoder only\n"));
    assert_int_equal(st, 2);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_refused), cmocka_unit_test(post_refused),
        cmocka_unit_test(raw_answers), cmocka_unit_test(endpoints),
        cmocka_unit_test(ro_mode),     cmocka_unit_test(startup_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
