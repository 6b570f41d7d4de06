/* test_query_parse.c -- query/ parsing: every date form of docs/query.md section 2
 * with a fixed clock, downsampling specs, the m= grammar (as Grafana sends
 * it, and every part), tsuid=, and OpenTSDB's error texts. Expected values
 * are hand arithmetic: 2013-01-01 00:00:00 UTC = 1356998400 s (15706 days
 * since 1970), now = 1700000000000 ms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "query/query.h"

#define NOW 1700000000000LL

static void want_time(const char *s, const char *tz, int64_t want)
{
    int64_t got = -42;
    oct_errbuf_t eb;
    memset(&eb, 0, sizeof(eb));
    int rc = query_parse_time(s, tz, NOW, &got, &eb);
    if (rc != 0) fail_msg("'%s': rc %d: %s", s, rc, eb.msg);
    if (got != want) fail_msg("'%s': got %lld want %lld", s, (long long)got, (long long)want);
}

static void want_time_err(const char *s, const char *tz, const char *want)
{
    int64_t got = -42;
    oct_errbuf_t eb;
    memset(&eb, 0, sizeof(eb));
    int rc = query_parse_time(s, tz, NOW, &got, &eb);
    if (rc != OCT_EPARSE) fail_msg("'%s': rc %d (value %lld)", s, rc, (long long)got);
    if (strcmp(eb.msg, want) != 0) fail_msg("'%s': got '%s' want '%s'", s, eb.msg, want);
}

static void times_relative(void **state)
{
    (void)state;
    want_time("now", NULL, NOW);
    want_time("NOW", NULL, NOW);
    want_time("5ms-ago", NULL, NOW - 5);
    want_time("30s-ago", NULL, NOW - 30000);
    want_time("2m-ago", NULL, NOW - 120000);
    want_time("1h-ago", NULL, NOW - 3600000);
    want_time("1H-AGO", NULL, NOW - 3600000);
    want_time("1d-ago", NULL, NOW - 86400000);
    want_time("2w-ago", NULL, NOW - 2 * 604800000LL);
    want_time("1n-ago", NULL, NOW - 2592000000LL);
    want_time("1y-ago", NULL, NOW - 31536000000LL);
    want_time("1000y-ago", NULL, 0); /* clamped, not negative */
}

static void times_numeric(void **state)
{
    (void)state;
    want_time("1356998400", NULL, 1356998400000LL);
    want_time("1356998400000", NULL, 1356998400000LL);
    want_time("1356998400.123", NULL, 1356998400123LL);
    want_time("1356998400.12", NULL, 1356998400120LL);
    /* OpenTSDB gives 13569984005 here; half a second is 500 ms. */
    want_time("1356998400.5", NULL, 1356998400500LL);
    want_time("123ms", NULL, 123);
    want_time("1356998400000ms", NULL, 1356998400000LL);
    want_time("0", NULL, 0);
    want_time("+5", NULL, 5000);
    /* 10 characters are seconds, 11 are milliseconds */
    want_time("9999999999", NULL, 9999999999000LL);
    want_time("10000000000", NULL, 10000000000LL);
}

static void times_absolute(void **state)
{
    (void)state;
    want_time("2013/01/01", NULL, 1356998400000LL);
    want_time("2013/01/01-12:34", NULL, (1356998400LL + 45240) * 1000);
    want_time("2013/01/01 12:34", NULL, (1356998400LL + 45240) * 1000);
    want_time("2013/01/01-12:34:56", NULL, (1356998400LL + 45296) * 1000);
    want_time("2013/01/01 12:34:56", "UTC", (1356998400LL + 45296) * 1000);
    /* Berlin is UTC+1 in winter */
    want_time("2013/01/01-00:00:00", "Europe/Berlin", (1356998400LL - 3600) * 1000);
    /* and UTC+2 in summer: 2013-07-01 = 1356998400 + 181 days */
    want_time("2013/07/01", "Europe/Berlin", (1356998400LL + 181 * 86400 - 7200) * 1000);
    want_time("2013/07/01", "America/New_York", (1356998400LL + 181 * 86400 + 14400) * 1000);
    /* 02:30 on 2023-03-26 does not exist in Berlin: 03:30 CEST = 01:30 UTC */
    want_time("2023/03/26-02:30", "Europe/Berlin", 1679794200000LL);
    /* lenient fields roll over like Java's: January 32nd is February 1st */
    want_time("2013/01/32", NULL, (1356998400LL + 31 * 86400) * 1000);
    want_time("2013/01/01-24:00", NULL, (1356998400LL + 86400) * 1000);
    /* empty tz means the default (UTC here) */
    want_time("2013/01/01", "", 1356998400000LL);
}

static void times_errors(void **state)
{
    (void)state;
    want_time_err("", NULL, "Missing time");
    want_time_err("h-ago", NULL, "Invalid duration (number): h");
    want_time_err("1-ago", NULL, "Invalid duration, must have an integer and unit: 1");
    want_time_err("0h-ago", NULL, "Zero or negative duration: 0h");
    want_time_err("1x-ago", NULL, "Invalid duration (suffix): 1x");
    want_time_err("1min-ago", NULL, "Invalid duration (suffix): 1min");
    want_time_err("99999999999999999h-ago", NULL,
                  "Duration must be < Long.MAX_VALUE ms: 99999999999999999h");
    want_time_err("99999999999999999999h-ago", NULL,
                  "Invalid duration (number): 99999999999999999999h");
    want_time_err("2013/01/01-12", NULL, "Invalid absolute date: 2013/01/01-12");
    want_time_err("2013-01-01 12:00", NULL,
                  "Invalid date: 2013-01-01 12:00. Unparseable date: \"2013-01-01 12:00\"");
    want_time_err("2013/01/01", "Mars/Olympus", "Invalid timezone name: Mars/Olympus");
    const char *ms_msg = ". Millisecond timestamps must be in the format <seconds>.<ms> where "
                         "the milliseconds are limited to 3 digits";
    char want[256];
    static const char *const dotted[] = {"1356998400.1234", "1356998400.", "135699840.5",
                                         "1356998400.1.2", "1356998400.x"};
    for (size_t i = 0; i < sizeof(dotted) / sizeof(dotted[0]); i++) {
        snprintf(want, sizeof(want), "Invalid time: %s%s", dotted[i], ms_msg);
        want_time_err(dotted[i], NULL, want);
    }
    want_time_err("-5", NULL, "Invalid time: -5. Negative timestamps are not supported.");
    want_time_err("abc", NULL, "Invalid time: abc. Invalid character 'a' in abc");
    want_time_err("1h-agoo", NULL, "Invalid time: 1h-agoo. Invalid character 'h' in 1h-agoo");
    want_time_err("12345678901234567890", NULL,
                  "Invalid time: 12345678901234567890. Value too long: 12345678901234567890");
    want_time_err("9999999999999999999", NULL,
                  "Invalid time: 9999999999999999999. Overflow in 9999999999999999999");
    want_time_err("-", NULL, "Invalid time: -. Just a sign, no value: -");
}

/* ---- downsampling ------------------------------------------------------ */

static void want_ds(const char *s, int64_t interval_ms, int all, int calendar, int64_t count,
                    char unit, const char *agg, query_fill_t fill)
{
    query_downsample_t ds;
    oct_errbuf_t eb;
    if (query_parse_downsample(s, &ds, &eb) != 0) fail_msg("'%s': %s", s, eb.msg);
    assert_true(ds.interval_ms == interval_ms);
    assert_int_equal(ds.all, all);
    assert_int_equal(ds.calendar, calendar);
    if (!all) {
        assert_true(ds.count == count);
        assert_int_equal(ds.unit, unit);
    }
    assert_ptr_equal(ds.agg, query_agg_find(agg));
    assert_string_equal(query_agg_name(ds.agg), agg);
    assert_int_equal(ds.fill, fill);
}

static void want_ds_err(const char *s, const char *want)
{
    query_downsample_t ds;
    oct_errbuf_t eb;
    memset(&eb, 0, sizeof(eb));
    assert_int_equal(query_parse_downsample(s, &ds, &eb), OCT_EPARSE);
    if (strcmp(eb.msg, want) != 0) fail_msg("'%s': got '%s' want '%s'", s, eb.msg, want);
}

static void downsample_specs(void **state)
{
    (void)state;
    want_ds("1m-avg", 60000, 0, 0, 1, 'm', "avg", QUERY_FILL_NONE);
    want_ds("1h-sum-zero", 3600000, 0, 0, 1, 'h', "sum", QUERY_FILL_ZERO);
    want_ds("10s-max-NaN", 10000, 0, 0, 10, 's', "max", QUERY_FILL_NAN);
    want_ds("1m-avg-null", 60000, 0, 0, 1, 'm', "avg", QUERY_FILL_NULL);
    want_ds("1m-avg-none", 60000, 0, 0, 1, 'm', "avg", QUERY_FILL_NONE);
    want_ds("1m-avg-", 60000, 0, 0, 1, 'm', "avg", QUERY_FILL_NONE); /* Java split */
    want_ds("500ms-avg", 500, 0, 0, 500, 'S', "avg", QUERY_FILL_NONE);
    want_ds("2n-count", 2 * 2592000000LL, 0, 0, 2, 'n', "count", QUERY_FILL_NONE);
    want_ds("1y-dev", 31536000000LL, 0, 0, 1, 'y', "dev", QUERY_FILL_NONE);
    want_ds("1w-p99", 604800000LL, 0, 0, 1, 'w', "p99", QUERY_FILL_NONE);
    want_ds("1dc-sum", 86400000LL, 0, 1, 1, 'd', "sum", QUERY_FILL_NONE);
    want_ds("3hc-min-zero", 3 * 3600000LL, 0, 1, 3, 'h', "min", QUERY_FILL_ZERO);
    want_ds("1nc-max", 2592000000LL, 0, 1, 1, 'n', "max", QUERY_FILL_NONE);
    want_ds("0all-avg", 0, 1, 0, 0, 0, "avg", QUERY_FILL_NONE);
    want_ds("all-sum", 0, 1, 0, 0, 0, "sum", QUERY_FILL_NONE);
    want_ds("1all-zimsum-nan", 0, 1, 0, 0, 0, "zimsum", QUERY_FILL_NAN);
}

static void downsample_errors(void **state)
{
    (void)state;
    want_ds_err("1m", "Invalid downsampling specifier '1m': must provide at least interval and "
                      "function");
    want_ds_err("1m-avg-zero-x", "Invalid downsampling specifier '1m-avg-zero-x': must consist "
                                 "of interval, function, and optional fill policy");
    want_ds_err("1m-foo", "No such downsampling function: foo");
    want_ds_err("1m-", "Invalid downsampling specifier '1m-': must provide at least interval and "
                       "function");
    want_ds_err("1m-none", "cannot use the NONE aggregator for downsampling");
    want_ds_err("1m-avg-bogus", "Unrecognized fill policy: bogus");
    want_ds_err("1m-avg-scalar", "unhandled fill policy: scalar");
    want_ds_err("1x-avg", "Invalid duration (suffix): 1x");
    want_ds_err("0m-avg", "Zero or negative duration: 0m");
    want_ds_err("m-avg", "Invalid duration (number): m");
    want_ds_err("1c-avg", "Invalid duration, must have an integer and unit: 1");
}

/* ---- m= ------------------------------------------------------------------ */

static void want_m_err(const char *m, const char *want)
{
    query_t q;
    memset(&q, 0, sizeof(q));
    oct_errbuf_t eb;
    memset(&eb, 0, sizeof(eb));
    int rc = query_parse_m(&q, m, &eb);
    if (rc != OCT_EPARSE) fail_msg("'%s': rc %d", m, rc);
    if (strcmp(eb.msg, want) != 0) fail_msg("'%s': got '%s' want '%s'", m, eb.msg, want);
    assert_int_equal(q.n_subs, 0);
    query_free(&q);
}

static const query_sub_t *parse_one(query_t *q, const char *m)
{
    oct_errbuf_t eb;
    size_t before = q->n_subs;
    if (query_parse_m(q, m, &eb) != 0) fail_msg("'%s': %s", m, eb.msg);
    assert_int_equal(q->n_subs, before + 1);
    return &q->subs[before];
}

static void want_filter(const query_filter_t *f, query_filter_type_t type, const char *tagk,
                        const char *expr, int group_by)
{
    assert_int_equal(f->type, type);
    assert_string_equal(f->tagk, tagk);
    assert_string_equal(f->expr, expr);
    assert_int_equal(f->group_by, group_by);
}

static void m_grafana(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof(q));
    const query_sub_t *s = parse_one(
        &q, "sum:1m-avg-null:rate{counter,,1000}:sys.cpu{host=*}{dc=literal_or(lga|sjc)}");
    assert_ptr_equal(s->agg, query_agg_find("sum"));
    assert_string_equal(s->metric, "sys.cpu");
    assert_int_equal(s->n_tsuids, 0);
    assert_int_equal(s->has_downsample, 1);
    assert_true(s->ds.interval_ms == 60000);
    assert_ptr_equal(s->ds.agg, query_agg_find("avg"));
    assert_int_equal(s->ds.fill, QUERY_FILL_NULL);
    assert_int_equal(s->rate, 1);
    assert_int_equal(s->rate_opts.counter, 1);
    assert_true(s->rate_opts.counter_max == INT64_MAX); /* empty = default */
    assert_true(s->rate_opts.reset_value == 1000);
    assert_int_equal(s->rate_opts.drop_resets, 0);
    assert_int_equal(s->explicit_tags, 0);
    assert_int_equal(s->index, 0);
    /* OpenTSDB lists the second group's filters first */
    assert_int_equal(s->n_filters, 2);
    want_filter(&s->filters[0], QUERY_FILTER_LITERAL_OR, "dc", "lga|sjc", 0);
    want_filter(&s->filters[1], QUERY_FILTER_WILDCARD, "host", "*", 1);
    query_free(&q);
    assert_int_equal(q.n_subs, 0);
    assert_null(q.subs);
}

static void m_every_part(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof(q));
    const query_sub_t *s = parse_one(&q, "avg:sys.cpu");
    assert_string_equal(s->metric, "sys.cpu");
    assert_int_equal(s->rate, 0);
    assert_int_equal(s->has_downsample, 0);
    assert_int_equal(s->n_filters, 0);

    s = parse_one(&q, "sum:rate:sys.cpu{host=web01|web02,dc=lga}");
    assert_int_equal(s->index, 1);
    assert_int_equal(s->rate, 1);
    assert_int_equal(s->rate_opts.counter, 0);
    assert_true(s->rate_opts.counter_max == INT64_MAX);
    assert_true(s->rate_opts.reset_value == 0);
    assert_int_equal(s->n_filters, 2);
    want_filter(&s->filters[0], QUERY_FILTER_LITERAL_OR, "host", "web01|web02", 1);
    want_filter(&s->filters[1], QUERY_FILTER_LITERAL_OR, "dc", "lga", 1);

    s = parse_one(&q, "sum:rate{dropcounter,100,5}:m1");
    assert_int_equal(s->rate_opts.counter, 1);
    assert_int_equal(s->rate_opts.drop_resets, 1);
    assert_true(s->rate_opts.counter_max == 100);
    assert_true(s->rate_opts.reset_value == 5);

    s = parse_one(&q, "sum:RATE{counter}:m2");
    assert_int_equal(s->rate, 1);
    assert_int_equal(s->rate_opts.counter, 1);
    assert_int_equal(s->rate_opts.drop_resets, 0);
    assert_true(s->rate_opts.counter_max == INT64_MAX);

    s = parse_one(&q, "sum:explicit_tags:m3{host=a}");
    assert_int_equal(s->explicit_tags, 1);

    s = parse_one(&q, "max:1h-sum:rate:explicit_tags:m4");
    assert_ptr_equal(s->agg, query_agg_find("max"));
    assert_int_equal(s->has_downsample, 1);
    assert_true(s->ds.interval_ms == 3600000);
    assert_int_equal(s->rate, 1);
    assert_int_equal(s->explicit_tags, 1);

    /* the rollup usages and pre-agg are parts of their own (any case) */
    s = parse_one(&q, "sum:rollup_raw:m5");
    assert_string_equal(s->metric, "m5");
    assert_int_equal(s->rate, 0);
    assert_int_equal(s->has_downsample, 0);
    assert_int_equal(s->rollup_usage, QUERY_ROLLUP_RAW);
    assert_int_equal(s->pre_agg, 0);
    s = parse_one(&q, "sum:1h-sum:Rollup_Fallback_Raw:PRE-AGG:m7");
    assert_int_equal(s->rollup_usage, QUERY_ROLLUP_FALLBACK_RAW);
    assert_int_equal(s->pre_agg, 1);
    s = parse_one(&q, "sum:rollup_nofallback:m8");
    assert_int_equal(s->rollup_usage, QUERY_ROLLUP_NOFALLBACK);
    s = parse_one(&q, "sum:m8");
    assert_int_equal(s->rollup_usage, QUERY_ROLLUP_UNSET);

    s = parse_one(&q, "zimsum:m6{host=web*}");
    assert_int_equal(s->n_filters, 1);
    want_filter(&s->filters[0], QUERY_FILTER_IWILDCARD, "host", "web*", 1);

    s = parse_one(&q, "sum:m7{}");
    assert_string_equal(s->metric, "m7");
    assert_int_equal(s->n_filters, 0);

    s = parse_one(&q, "sum:m8{}{dc=lga,host=not_key()}");
    assert_int_equal(s->n_filters, 2);
    want_filter(&s->filters[0], QUERY_FILTER_LITERAL_OR, "dc", "lga", 0);
    want_filter(&s->filters[1], QUERY_FILTER_NOT_KEY, "host", "", 0);

    /* the same filter in both groups: one filter, group-by */
    s = parse_one(&q, "sum:m9{host=a}{host=a}");
    assert_int_equal(s->n_filters, 1);
    want_filter(&s->filters[0], QUERY_FILTER_LITERAL_OR, "host", "a", 1);

    /* braces, commas, '=' and ':' inside a filter's parentheses */
    s = parse_one(&q, "sum:m10{host=regexp(web[0-9]{2,3}),dc=regexp(a:b=c)}");
    assert_int_equal(s->n_filters, 2);
    want_filter(&s->filters[0], QUERY_FILTER_REGEXP, "host", "web[0-9]{2,3}", 1);
    want_filter(&s->filters[1], QUERY_FILTER_REGEXP, "dc", "a:b=c", 1);
    assert_int_equal(query_filter_match(&s->filters[0], "web123", 6), 1);
    assert_int_equal(query_filter_match(&s->filters[0], "web1", 4), 0);

    /* an empty item ends the tag group when a filter group follows */
    s = parse_one(&q, "sum:m11{host=a,,dc=b}{x=y}");
    assert_int_equal(s->n_filters, 2);
    want_filter(&s->filters[0], QUERY_FILTER_LITERAL_OR, "x", "y", 0);
    want_filter(&s->filters[1], QUERY_FILTER_LITERAL_OR, "host", "a", 1);

    /* calendar downsampling */
    s = parse_one(&q, "sum:1dc-avg-zero:m12");
    assert_int_equal(s->ds.calendar, 1);
    assert_int_equal(s->ds.fill, QUERY_FILL_ZERO);
    assert_int_equal(q.n_subs, 17);
    for (size_t i = 0; i < q.n_subs; i++)
        assert_int_equal(q.subs[i].index, (int)i);
    query_free(&q);
}

static void m_duplicates_removed(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof(q));
    oct_errbuf_t eb;
    assert_int_equal(query_parse_m(&q, "sum:m{host=a}", &eb), 0);
    assert_int_equal(query_parse_m(&q, "sum:m{host=a}", &eb), 0);
    assert_int_equal(q.n_subs, 1);
    assert_int_equal(query_parse_m(&q, "avg:m{host=a}", &eb), 0);
    assert_int_equal(query_parse_m(&q, "sum:m{host=b}", &eb), 0);
    assert_int_equal(query_parse_m(&q, "sum:rate:m{host=a}", &eb), 0);
    assert_int_equal(q.n_subs, 4);
    assert_int_equal(q.subs[3].index, 3);
    assert_true(query_sub_equal(&q.subs[0], &q.subs[0]));
    assert_false(query_sub_equal(&q.subs[0], &q.subs[1]));
    query_free(&q);
}

static void m_errors(void **state)
{
    (void)state;
    want_m_err("", "The query string was empty");
    want_m_err("sum", "Invalid parameter m=sum (not enough :-separated parts)");
    want_m_err("sum:a:b:c:d:m", "Invalid parameter m=sum:a:b:c:d:m (too many :-separated parts)");
    want_m_err("foo:m", "No such aggregation function: foo");
    want_m_err(":m", "Missing the aggregation function");
    want_m_err("sum:", "Metric cannot be null or empty");
    want_m_err("sum:{host=a}", "Metric cannot be null or empty");
    want_m_err("sum:m{host=a", "Missing '}' at the end of: m{host=a");
    want_m_err("sum:m{host}", "When parsing tag 'host': invalid tag: host");
    want_m_err("sum:m{host=}", "When parsing tag 'host=': invalid tag: host=");
    want_m_err("sum:m{=a}", "When parsing tag '=a': invalid tag: =a");
    want_m_err("sum:m{host=a=b}", "When parsing tag 'host=a=b': invalid tag: host=a=b");
    want_m_err("sum:m{host=a,}", "When parsing tag '': invalid tag: ");
    want_m_err("sum:m{}{dc}", "When parsing filter 'dc': invalid tag: dc");
    want_m_err("sum:m{host=bogus(x)}",
               "When parsing tag 'host=bogus(x)': Could not find a tag value filter of the "
               "type: bogus");
    want_m_err("sum:m{}{host=wildcard(web)}",
               "When parsing filter 'host=wildcard(web)': Filter must contain an asterisk");
    want_m_err("sum:rate{counter,x}:m", "Max value of counter was not a number, received 'x'");
    want_m_err("sum:rate{counter,1,y}:m", "Reset value of counter was not a number, received 'y'");
    want_m_err("sum:rate{counter,1,2,3}:m",
               "Incorrect number of values in rate options specification, must be "
               "counter[,counter max value,reset value], recieved: 4 parts");
    want_m_err("sum:rate{:m", "Invalid rate options specification: rate{");
    want_m_err("sum:1m-foo:m", "No such downsampling function: foo");
    /* histogram sub-queries: 2.4's checks, then what octsdb does not implement for them */
    want_m_err("avg:percentiles[99]:m",
               "Only NONE or SUM aggregation function supported for histogram query");
    want_m_err("zimsum:show-histogram-buckets:m",
               "Only NONE or SUM aggregation function supported for histogram query");
    want_m_err("sum:1m-avg:percentiles[99]:m",
               "Only SUM downsampling aggregation supported for histogram query");
    want_m_err("sum:percentiles[50,100.5]:m", "Invalid percentile parameters: 100.5");
    want_m_err("sum:percentiles[99:m", "Malformated percentile query paramater: percentiles[99");
    want_m_err("sum:percentiles[x]:m", "Malformated percentile query paramater: percentiles[x]");
    want_m_err("sum:rate:show-histogram-buckets:m", "Rate is not supported for histogram queries");
    want_m_err("sum:1m-sum-zero:percentiles[50]:m",
               "Fill policies are not supported for histogram queries (use none)");
    /* what octsdb does not implement is refused, never ignored */
    /* 2.4 reads an unknown usage as ROLLUP_NOFALLBACK */
    want_m_err("sum:rollup_rawx:m", "Unknown rollup usage: rollup_rawx (one of ROLLUP_RAW, "
                                    "ROLLUP_NOFALLBACK, ROLLUP_FALLBACK, ROLLUP_FALLBACK_RAW)");
    want_m_err("sum:pre-aggx:m", "Unknown part of the sub-query: pre-aggx");
    want_m_err("sum:rat:m", "Unknown part of the sub-query: rat");
    /* OpenTSDB's order: filters, then rate options, then aggregator, then downsample */
    want_m_err("foo:1m-bar:m{host=}", "When parsing tag 'host=': invalid tag: host=");
    want_m_err("foo:1m-bar:rate{counter,x}:m",
               "Max value of counter was not a number, received 'x'");
    want_m_err("foo:1m-bar:m", "No such aggregation function: foo");
}

/* ---- tsuid= -------------------------------------------------------------- */

static void tsuid_queries(void **state)
{
    (void)state;
    query_t q;
    memset(&q, 0, sizeof(q));
    oct_errbuf_t eb;
    assert_int_equal(query_parse_tsuid(&q, "sum:000001000001000001", &eb), 0);
    assert_int_equal(q.n_subs, 1);
    assert_null(q.subs[0].metric);
    assert_int_equal(q.subs[0].n_tsuids, 1);
    assert_string_equal(q.subs[0].tsuids[0], "000001000001000001");
    assert_int_equal(
        query_parse_tsuid(&q, "avg:rate:1h-avg:000001000001000001,000001000001000002", &eb), 0);
    const query_sub_t *s = &q.subs[1];
    assert_ptr_equal(s->agg, query_agg_find("avg"));
    assert_int_equal(s->rate, 1);
    assert_int_equal(s->has_downsample, 1);
    assert_true(s->ds.interval_ms == 3600000);
    assert_int_equal(s->n_tsuids, 2);
    assert_string_equal(s->tsuids[1], "000001000001000002");
    /* trailing empty items dropped; explicit_tags is not read in this form */
    assert_int_equal(query_parse_tsuid(&q, "max:explicit_tags:AA,BB,", &eb), 0);
    assert_int_equal(q.subs[2].n_tsuids, 2);
    assert_int_equal(q.subs[2].explicit_tags, 0);
    assert_int_equal(q.subs[2].index, 2);
    /* a duplicate is dropped */
    assert_int_equal(query_parse_tsuid(&q, "sum:000001000001000001", &eb), 0);
    assert_int_equal(q.n_subs, 3);
    query_free(&q);

    assert_int_equal(query_parse_tsuid(&q, "", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "The tsuid query string was empty");
    assert_int_equal(query_parse_tsuid(&q, "sum", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Invalid parameter m=sum (not enough :-separated parts)");
    assert_int_equal(query_parse_tsuid(&q, "foo:0001", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "No such aggregation function: foo");
    assert_int_equal(query_parse_tsuid(&q, "sum:,", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Missing the metric or tsuids, provide at least one");
    assert_int_equal(query_parse_tsuid(&q, "sum:rate{counter,z}:0001", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Max value of counter was not a number, received 'z'");
    assert_int_equal(query_parse_tsuid(&q, "sum:rollup_fallback_rawx:0001", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg, "Unknown rollup usage: rollup_fallback_rawx (one of ROLLUP_RAW, "
                                "ROLLUP_NOFALLBACK, ROLLUP_FALLBACK, ROLLUP_FALLBACK_RAW)");
    assert_int_equal(query_parse_tsuid(&q, "avg:percentiles[50]:0001", &eb), OCT_EPARSE);
    assert_string_equal(eb.msg,
                        "Only NONE or SUM aggregation function supported for histogram query");
    assert_int_equal(q.n_subs, 0);
    query_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(times_relative),
        cmocka_unit_test(times_numeric),
        cmocka_unit_test(times_absolute),
        cmocka_unit_test(times_errors),
        cmocka_unit_test(downsample_specs),
        cmocka_unit_test(downsample_errors),
        cmocka_unit_test(m_grafana),
        cmocka_unit_test(m_every_part),
        cmocka_unit_test(m_duplicates_removed),
        cmocka_unit_test(m_errors),
        cmocka_unit_test(tsuid_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
