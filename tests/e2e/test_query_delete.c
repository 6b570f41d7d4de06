/* test_query_delete.c -- which hours DELETE /api/query removes, over the real
 * daemon (tsd.http.query.allow_delete on).
 *
 * The query delete removes whole hour rows of the matched series: the hours
 * from start (aligned down to the downsample interval, then to the hour) to
 * the hour holding end (or, downsampling, to end aligned up to the next
 * interval boundary, then up to the hour). Regression: an end at hh:59:59
 * used to delete the following hour too.
 *
 * Every case puts the same points (the table below) into its own metric for
 * two hosts, deletes for host=a, and reads both series back. What is left
 * is computed here from the table and the hours the case names: nothing is
 * taken from the daemon's own window arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "api_client.h"

#define H0 1356998400LL /* 2013-01-01T00:00:00Z, a multiple of 2 h */

/* seconds after H0: two points in each of the hours 0..3, with the last
 * second of hour 1 and the first of hour 2 */
static const int64_t k_off[] = {0, 1800, 3600, 5400, 7199, 7200, 9000, 10800, 12600};
#define NPTS (sizeof k_off / sizeof k_off[0])

static tu_tsd_t g_t;

static int setup(void **state)
{
    (void)state;
    static const char *const ex[] = {"--auto-metric", "--set", "tsd.http.query.allow_delete=true",
                                     NULL};
    memset(&g_t, 0, sizeof g_t);
    return tu_tsd_start(&g_t, ex) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_tsd_destroy(&g_t);
    return 0;
}

/* The value of point i for host a and b. */
static long val(size_t i, char host)
{
    return (long)(i + 1) * (host == 'a' ? 1 : 100);
}

static void put_points(const char *metric)
{
    char body[4096];
    size_t n = (size_t)snprintf(body, sizeof body, "[");
    for (size_t i = 0; i < NPTS; i++)
        for (char h = 'a'; h <= 'b'; h++)
            n += (size_t)snprintf(body + n, sizeof body - n,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%ld,"
                                  "\"tags\":{\"host\":\"%c\"}}",
                                  n > 1 ? "," : "", metric, (long long)(H0 + k_off[i]), val(i, h),
                                  h);
    snprintf(body + n, sizeof body - n, "]");
    char *r;
    assert_int_equal(ac_req(&g_t, "POST", "/api/put", body, &r), 204);
    free(r);
}

/* The query answer for host h holding the points whose hour (0..3) has its
 * bit clear in gone_hours and whose offset is in [lo, hi]. */
static void expect_body(char *out, size_t cap, const char *metric, char h, unsigned gone_hours,
                        int64_t lo, int64_t hi)
{
    size_t n = (size_t)snprintf(out, cap,
                                "[{\"metric\":\"%s\",\"tags\":{\"host\":\"%c\"},"
                                "\"aggregateTags\":[],\"dps\":{",
                                metric, h);
    int first = 1;
    for (size_t i = 0; i < NPTS; i++) {
        if (gone_hours & (1u << (k_off[i] / 3600)) || k_off[i] < lo || k_off[i] > hi) continue;
        n += (size_t)snprintf(out + n, cap - n, "%s\"%lld\":%ld", first ? "" : ",",
                              (long long)(H0 + k_off[i]), val(i, h));
        first = 0;
    }
    snprintf(out + n, cap - n, "}}]");
}

/* Both series over all four hours: host=a without gone_hours, host=b whole. */
static void expect_left(const char *metric, unsigned gone_hours)
{
    char target[256], want[2048];
    for (char h = 'a'; h <= 'b'; h++) {
        snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:%s{host=%c}",
                 (long long)H0, (long long)(H0 + 4 * 3600 - 1), metric, h);
        expect_body(want, sizeof want, metric, h, h == 'a' ? gone_hours : 0, 0, 4 * 3600);
        AC_EXPECT(&g_t, "GET", target, NULL, 200, want);
    }
}

/* DELETE over [s_off, e_off] (offsets from H0) on a fresh metric: the
 * answer is the data as read, before the delete; then the hours in
 * gone_hours are gone for host=a and nothing else. */
static void delete_range(const char *metric, int64_t s_off, int64_t e_off, unsigned gone_hours)
{
    put_points(metric);
    char target[256], want[2048];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:%s{host=a}",
             (long long)(H0 + s_off), (long long)(H0 + e_off), metric);
    expect_body(want, sizeof want, metric, 'a', 0, s_off, e_off);
    AC_EXPECT(&g_t, "DELETE", target, NULL, 200, want);
    expect_left(metric, gone_hours);
}

/* start 01:00:00, end 01:59:59: hour 1 only (it used to take hour 2 too). */
static void test_end_last_second_of_hour(void **state)
{
    (void)state;
    delete_range("del.last", 3600, 7199, 1u << 1);
}

/* The same through POST "delete":true. */
static void test_post_delete(void **state)
{
    (void)state;
    put_points("del.post");
    char body[512], want[2048];
    snprintf(body, sizeof body,
             "{\"start\":%lld,\"end\":%lld,\"delete\":true,\"queries\":[{\"aggregator\":\"sum\","
             "\"metric\":\"del.post\",\"tags\":{\"host\":\"a\"}}]}",
             (long long)(H0 + 3600), (long long)(H0 + 7199));
    expect_body(want, sizeof want, "del.post", 'a', 0, 3600, 7199);
    AC_EXPECT(&g_t, "POST", "/api/query", body, 200, want);
    expect_left("del.post", 1u << 1);
}

/* end exactly 02:00:00 holds a point of hour 2: hours 1 and 2 go. */
static void test_end_on_hour(void **state)
{
    (void)state;
    delete_range("del.edge", 3600, 7200, 1u << 1 | 1u << 2);
}

/* Downsampling widens the window to whole intervals: 2h-sum over 01:00 ..
 * 01:59:59 reaches back to 00:00 (the 2 h bucket's start) and forward only
 * to 02:00 (the next boundary), so hours 0 and 1 go, hour 2 stays. */
static void test_downsample_widens(void **state)
{
    (void)state;
    put_points("del.ds");
    char target[256], *r;
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:2h-sum:del.ds{host=a}",
             (long long)(H0 + 3600), (long long)(H0 + 7199));
    assert_int_equal(ac_req(&g_t, "DELETE", target, NULL, &r), 200);
    free(r);
    expect_left("del.ds", 1u << 0 | 1u << 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_last_second_of_hour),
        cmocka_unit_test(test_post_delete),
        cmocka_unit_test(test_end_on_hour),
        cmocka_unit_test(test_downsample_widens),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
