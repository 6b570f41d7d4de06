/* test_api_query_last.c -- /api/query/last against the real daemon
 * (docs/api-query-last.md). Points are written relative to the test's clock, so
 * every expected timestamp is computed here from `now`; UIDs are assigned
 * explicitly first, so every TSUID is known by hand. Value strings are what
 * Java's Long.toString / Double.toString print for the values written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "api_client.h"

/* metric last.m=000001; tagk host=000001 dc=000002;
 * tagv a=000001 b=000002 c=000003 d=000004 x=000005 */
#define TS_A  "000001000001000001"             /* {host=a} */
#define TS_AX "000001000001000001000002000005" /* {host=a,dc=x} */
#define TS_B  "000001000001000002"             /* {host=b} */
#define TS_C  "000001000001000003"             /* {host=c} */
#define TS_D  "000001000001000004"             /* {host=d} */

static tu_tsd_t T;
static long long NOW; /* seconds */

static int setup(void **state)
{
    (void)state;
    memset(&T, 0, sizeof T);
    if (tu_tsd_start(&T, NULL)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&T);
    return 0;
}

static void load(void **state)
{
    (void)state;
    AC_EXPECT(
        &T, "GET", "/api/uid/assign?metric=last.m&tagk=host,dc&tagv=a,b,c,d,x", NULL, 200,
        "{\"metric\":{\"last.m\":\"000001\"},\"tagk\":{\"host\":\"000001\",\"dc\":\"000002\"},"
        "\"tagv\":{\"a\":\"000001\",\"b\":\"000002\",\"c\":\"000003\",\"d\":\"000004\","
        "\"x\":\"000005\"}}");
    NOW = (long long)time(NULL);
    char body[2048];
    snprintf(
        body, sizeof body,
        "[{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":1,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":42,\"tags\":{\"host\":\"a\"}},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":-7,"
        "\"tags\":{\"host\":\"a\",\"dc\":\"x\"}},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":42.5,\"tags\":{\"host\":\"b\"}},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":123456789.25,"
        "\"tags\":{\"host\":\"c\"}},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":0.0001,\"tags\":{\"host\":\"d\"}}]",
        NOW - 100, NOW - 50, NOW - 20, NOW - 30, NOW * 1000 - 1500, NOW - 5 * 3600);
    AC_EXPECT(&T, "POST", "/api/put", body, 204, "");
}

/* Java's Double.toString at the edges of its two notations */
static void java_doubles(void **state)
{
    (void)state;
    AC_EXPECT(&T, "GET", "/api/uid/assign?tagv=e,f,g,h,i", NULL, 200,
              "{\"tagv\":{\"e\":\"000006\",\"f\":\"000007\",\"g\":\"000008\","
              "\"h\":\"000009\",\"i\":\"00000A\"}}");
    static const char *const vals[] = {"10000000.0", "0.001", "9999999.5", "100.0", "-0.00099"};
    static const char *const java[] = {"1.0E7", "0.001", "9999999.5", "100.0", "-9.9E-4"};
    static const char *const hosts[] = {"e", "f", "g", "h", "i"};
    char body[2048];
    size_t n = (size_t)snprintf(body, sizeof body, "[");
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":%s,"
                              "\"tags\":{\"host\":\"%s\"}}",
                              i ? "," : "", NOW - 10, vals[i], hosts[i]);
    snprintf(body + n, sizeof body - n, "]");
    AC_EXPECT(&T, "POST", "/api/put", body, 204, "");
    char want[2048];
    n = (size_t)snprintf(want, sizeof want, "[");
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(
            want + n, sizeof want - n,
            "%s{\"timestamp\":%lld,\"value\":\"%s\",\"tsuid\":\"00000100000100000%X\"}",
            i ? "," : "", (NOW - 10) * 1000, java[i], 6 + i);
    snprintf(want + n, sizeof want - n, "]");
    char *r;
    int st = ac_req(&T, "GET",
                    "/api/query/last?tsuids=000001000001000006,000001000001000007,"
                    "000001000001000008,000001000001000009,00000100000100000A",
                    NULL, &r);
    if (st != 200 || strcmp(r, want)) fail_msg("got %d <%s>, want <%s>", st, r, want);
    free(r);
}

static void expect(const char *method, const char *target, const char *body, int status,
                   const char *want)
{
    char *r;
    int st = ac_req(&T, method, target, body, &r);
    if (st != status || strcmp(r, want))
        fail_msg("%s %s: got %d <%s>, want %d <%s>", method, target, st, r, status, want);
    free(r);
}

static void by_timeseries(void **state)
{
    (void)state;
    char want[2048];
    /* back_scan > 0: the exact series {host=a}, not {host=a,dc=x} */
    snprintf(want, sizeof want, "[{\"timestamp\":%lld,\"value\":\"42\",\"tsuid\":\"" TS_A "\"}]",
             (NOW - 50) * 1000);
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=a%7D&back_scan=1", NULL, 200, want);
    snprintf(
        want, sizeof want,
        "[{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"42\",\"tags\":{\"host\":\"a\"},"
        "\"tsuid\":\"" TS_A "\"}]",
        (NOW - 50) * 1000);
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=a%7D&back_scan=1&resolve", NULL, 200,
           want);
    /* back_scan 0: every series carrying host=a, in TSUID order */
    snprintf(want, sizeof want,
             "[{\"timestamp\":%lld,\"value\":\"42\",\"tsuid\":\"" TS_A "\"},"
             "{\"timestamp\":%lld,\"value\":\"-7\",\"tsuid\":\"" TS_AX "\"}]",
             (NOW - 50) * 1000, (NOW - 20) * 1000);
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=a%7D", NULL, 200, want);
    /* the whole metric, resolved; floats as Java prints them */
    snprintf(
        want, sizeof want,
        "[{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"42\",\"tags\":{\"host\":\"a\"},"
        "\"tsuid\":\"" TS_A "\"},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"-7\","
        "\"tags\":{\"dc\":\"x\",\"host\":\"a\"},\"tsuid\":\"" TS_AX "\"},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"42.5\","
        "\"tags\":{\"host\":\"b\"},\"tsuid\":\"" TS_B "\"},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"1.2345678925E8\","
        "\"tags\":{\"host\":\"c\"},\"tsuid\":\"" TS_C "\"},"
        "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"1.0E-4\","
        "\"tags\":{\"host\":\"d\"},\"tsuid\":\"" TS_D "\"}]",
        (NOW - 50) * 1000, (NOW - 20) * 1000, (NOW - 30) * 1000, NOW * 1000 - 1500,
        (NOW - 5 * 3600) * 1000);
    expect("GET", "/api/query/last?timeseries=last.m&resolve", NULL, 200, want);
}

static void back_scan(void **state)
{
    (void)state;
    /* {host=d}'s point is exactly 5 hours back: in the 5th hour row before
     * the current one, so back_scan=4 misses it and 5 finds it */
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=d%7D&back_scan=4", NULL, 200, "[]");
    char want[512];
    snprintf(want, sizeof want,
             "[{\"timestamp\":%lld,\"value\":\"1.0E-4\",\"tsuid\":\"" TS_D "\"}]",
             (NOW - 5 * 3600) * 1000);
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=d%7D&back_scan=5", NULL, 200, want);
    expect("GET", "/api/query/last?tsuids=" TS_D "&back_scan=4", NULL, 200, "[]");
    expect("GET", "/api/query/last?tsuids=" TS_D "&back_scan=5", NULL, 200, want);
}

static void by_tsuid_and_post(void **state)
{
    (void)state;
    char want[2048];
    snprintf(want, sizeof want,
             "[{\"timestamp\":%lld,\"value\":\"42.5\",\"tsuid\":\"" TS_B "\"},"
             "{\"timestamp\":%lld,\"value\":\"1.2345678925E8\",\"tsuid\":\"" TS_C "\"}]",
             (NOW - 30) * 1000, NOW * 1000 - 1500);
    expect("GET", "/api/query/last?tsuids=" TS_B "," TS_C, NULL, 200, want);
    snprintf(want, sizeof want,
             "[{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"42.5\","
             "\"tags\":{\"host\":\"b\"},\"tsuid\":\"" TS_B "\"},"
             "{\"metric\":\"last.m\",\"timestamp\":%lld,\"value\":\"1.0E-4\","
             "\"tags\":{\"host\":\"d\"},\"tsuid\":\"" TS_D "\"}]",
             (NOW - 30) * 1000, (NOW - 5 * 3600) * 1000);
    expect("POST", "/api/query/last",
           "{\"queries\":[{\"metric\":\"last.m\",\"tags\":{\"host\":\"b\"}},"
           "{\"tsuids\":[\"" TS_D "\"]}],\"resolveNames\":true,\"backScan\":24}",
           200, want);
}

static void errors(void **state)
{
    (void)state;
    expect("GET", "/api/query/last", NULL, 400,
           "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}");
    expect("POST", "/api/query/last", "{\"queries\":[]}", 400,
           "{\"error\":{\"code\":400,\"message\":\"Missing sub queries\"}}");
    expect("GET", "/api/query/last?timeseries=last.m&back_scan=x", NULL, 400,
           "{\"error\":{\"code\":400,\"message\":\"Unable to parse back_scan parameter\"}}");
    expect("GET", "/api/query/last?timeseries=nope.m", NULL, 400,
           "{\"error\":{\"code\":400,\"message\":\"No such name for 'metrics': 'nope.m'\"}}");
    expect("GET", "/api/query/last?timeseries=last.m%7Bhost=zz%7D", NULL, 400,
           "{\"error\":{\"code\":400,\"message\":\"No such name for 'tagv': 'zz'\"}}");
    expect("DELETE", "/api/query/last?timeseries=last.m", NULL, 405,
           "{\"error\":{\"code\":405,\"message\":\"Method not allowed\",\"details\":"
           "\"The HTTP method [DELETE] is not permitted for this endpoint\"}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load),      cmocka_unit_test(by_timeseries),
        cmocka_unit_test(back_scan), cmocka_unit_test(by_tsuid_and_post),
        cmocka_unit_test(errors),    cmocka_unit_test(java_doubles),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
