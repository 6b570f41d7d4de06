/* test_telnet_parse.c -- telnet_parse_put, the pure tokenizer of a `put` line.
 *
 * Expected tokens are read off the literal lines by hand; messages are
 * OpenTSDB's texts (docs/telnet.md) as the telnet e2e tests expect them. The
 * long lines check the 64-byte block boundaries of the bit-mask tokenizer:
 * tokens, '=' signs and runs of spaces straddling byte 64 and 128, built by
 * a simple model (a list of tags joined by single spaces) in the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "server/telnet.h"

static int sl_is(oct_slice_t s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static void simple_line(void **state)
{
    (void)state;
    const char *l = "put sys.cpu.user 1356998400 42.5 host=web01 cpu=0";
    tsdb_dp_t dp;
    oct_slice_t tags[16];
    char err[256];
    assert_int_equal(telnet_parse_put(l, strlen(l), &dp, tags, 16, err, sizeof err), 0);
    assert_true(sl_is(dp.metric, "sys.cpu.user"));
    assert_int_equal(dp.pt.ts_ms, 1356998400000LL);
    assert_int_equal(dp.ts_is_ms, 0);
    assert_true(dp.pt.is_float);
    assert_true(dp.pt.val.f == 42.5);
    assert_int_equal(dp.n_tags, 2);
    assert_ptr_equal(dp.tags, tags);
    assert_true(sl_is(tags[0], "host"));
    assert_true(sl_is(tags[1], "web01"));
    assert_true(sl_is(tags[2], "cpu"));
    assert_true(sl_is(tags[3], "0"));
}

static void spaces_and_ms(void **state)
{
    (void)state;
    /* leading, double and trailing spaces (collectd) separate like one */
    const char *l = "  put  m  1356998400123   -7  a=b   ";
    tsdb_dp_t dp;
    oct_slice_t tags[4];
    assert_int_equal(telnet_parse_put(l, strlen(l), &dp, tags, 4, NULL, 0), 0);
    assert_true(sl_is(dp.metric, "m"));
    assert_int_equal(dp.pt.ts_ms, 1356998400123LL);
    assert_int_equal(dp.ts_is_ms, 1);
    assert_false(dp.pt.is_float);
    assert_int_equal(dp.pt.val.i, -7);
    assert_int_equal(dp.n_tags, 1);
    assert_true(sl_is(tags[0], "a"));
    assert_true(sl_is(tags[1], "b"));
}

static void errors(void **state)
{
    (void)state;
    tsdb_dp_t dp;
    oct_slice_t tags[4];
    char err[256];
    struct {
        const char *line;
        int rc;
        const char *msg;
    } cases[] = {
        {"put m 1356998400", OCT_EINVAL, "not enough arguments (need least 4, got 2)"},
        {"put m 1356998400 1 a", OCT_EINVAL, "invalid tag: a"},
        {"put m 1356998400 1 a=b=c", OCT_EINVAL, "invalid tag: a=b=c"},
        {"put m 1356998400 1 =b", OCT_EINVAL, "invalid tag: =b"},
        {"put m 1356998400 1 a=", OCT_EINVAL, "invalid tag: a="},
        {"put m 1356998400 x a=b", OCT_EPARSE, "Invalid character 'x' in x"},
        {"put m 1356998400 1.x a=b", OCT_EPARSE, "For input string: \"1.x\""},
        {"puts m 1356998400 1 a=b", OCT_EINVAL, "not a put line"},
        {"put m 1 1 a=b b=c c=d", OCT_ENOSPC, "too many tags"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *l = cases[i].line;
        int rc = telnet_parse_put(l, strlen(l), &dp, tags, 4, err, sizeof err);
        if (rc != cases[i].rc) fail_msg("%s: rc %d want %d", l, rc, cases[i].rc);
        if (strcmp(err, cases[i].msg) != 0) fail_msg("%s: '%s' want '%s'", l, err, cases[i].msg);
    }
    /* "x" has no '.', so it is read as an integer (Tags.parseLong's message) */
}

/* Lines of every length across the 64-byte blocks: a model joins tags
 * "kNN=vNN..." with one or three spaces; the parse must give them back. */
static void block_boundaries(void **state)
{
    (void)state;
    for (int pad = 0; pad < 70; pad++) {
        for (int sep = 1; sep <= 3; sep += 2) {
            char line[1024];
            char want[12][64];
            char metric[80];
            memset(metric, 'm', (size_t)pad + 1);
            metric[pad + 1] = '\0';
            int n = snprintf(line, sizeof line, "put %s 1356998400 1", metric);
            for (int t = 0; t < 12; t++) {
                snprintf(want[t], sizeof want[t], "k%02d=v%0*d", t, 1 + (t * 7 + pad) % 9, t);
                n += snprintf(line + n, sizeof line - (size_t)n, "%*s%s", sep, "", want[t]);
            }
            tsdb_dp_t dp;
            oct_slice_t tags[24];
            char err[256];
            int rc = telnet_parse_put(line, (size_t)n, &dp, tags, 24, err, sizeof err);
            if (rc) fail_msg("%s: %s", line, err);
            assert_int_equal(dp.metric.len, (size_t)pad + 1);
            assert_int_equal(dp.n_tags, 12);
            for (int t = 0; t < 12; t++) {
                char *eq = strchr(want[t], '=');
                *eq = '\0';
                if (!sl_is(tags[2 * t], want[t]) || !sl_is(tags[2 * t + 1], eq + 1))
                    fail_msg("pad %d sep %d tag %d", pad, sep, t);
            }
            /* a second '=' anywhere in the last tag is caught across blocks */
            line[n++] = '=';
            assert_int_equal(telnet_parse_put(line, (size_t)n, &dp, tags, 24, err, sizeof err),
                             OCT_EINVAL);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simple_line),
        cmocka_unit_test(spaces_and_ms),
        cmocka_unit_test(errors),
        cmocka_unit_test(block_boundaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
