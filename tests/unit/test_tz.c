/* test_tz.c -- query/tz: offsets around DST changes, beyond the TZif table
 * (POSIX footer rules), wall-clock conversion in gaps and overlaps, fixed
 * zones and errors. Expected instants were computed by hand (days since
 * 1970 × 86400) and cross-checked with Python's zoneinfo, an independent
 * implementation; they are literals here. Civil day numbers too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "query/tz.h"

static const query_tz_t *zone(const char *name)
{
    const query_tz_t *z = NULL;
    oct_errbuf_t eb;
    assert_int_equal(query_tz_get(name, &z, &eb), 0);
    assert_non_null(z);
    return z;
}

static void berlin_spring_and_fall(void **state)
{
    (void)state;
    const query_tz_t *z = zone("Europe/Berlin");
    /* 2023-03-26 01:00:00 UTC = 1672531200 (2023-01-01) + 84 d + 1 h */
    assert_int_equal(query_tz_offset_at(z, 1679792400 - 1), 3600);
    assert_int_equal(query_tz_offset_at(z, 1679792400), 7200);
    /* 2023-10-29 01:00:00 UTC = 1672531200 + 301 d + 1 h */
    assert_int_equal(query_tz_offset_at(z, 1698541200 - 1), 7200);
    assert_int_equal(query_tz_offset_at(z, 1698541200), 3600);
    /* mid-winter and mid-summer */
    assert_int_equal(query_tz_offset_at(z, 1672531200), 3600);
    assert_int_equal(query_tz_offset_at(z, 1688169600), 7200); /* 2023-07-01 */
    /* Same zone again: the cached pointer. */
    assert_ptr_equal(zone("Europe/Berlin"), z);
}

static void berlin_beyond_table_uses_footer_rule(void **state)
{
    (void)state;
    const query_tz_t *z = zone("Europe/Berlin");
    /* 2040: last Sundays are March 25 and October 28; change at 01:00 UTC. */
    assert_int_equal(query_tz_offset_at(z, 2216250000 - 1), 3600);
    assert_int_equal(query_tz_offset_at(z, 2216250000), 7200);
    assert_int_equal(query_tz_offset_at(z, 2234998800 - 1), 7200);
    assert_int_equal(query_tz_offset_at(z, 2234998800), 3600);
}

static void new_york(void **state)
{
    (void)state;
    const query_tz_t *z = zone("America/New_York");
    /* 2023-03-12 07:00 UTC (02:00 EST) and 2023-11-05 06:00 UTC (02:00 EDT) */
    assert_int_equal(query_tz_offset_at(z, 1678604400 - 1), -18000);
    assert_int_equal(query_tz_offset_at(z, 1678604400), -14400);
    assert_int_equal(query_tz_offset_at(z, 1699164000 - 1), -14400);
    assert_int_equal(query_tz_offset_at(z, 1699164000), -18000);
    int y, mo, d, h, mi, s, wd;
    /* 1699164000 - 1 is 01:59:59 EDT, the first pass through that hour. */
    query_tz_utc_to_local(z, 1699164000 - 1, &y, &mo, &d, &h, &mi, &s, &wd);
    assert_int_equal(y, 2023);
    assert_int_equal(mo, 11);
    assert_int_equal(d, 5);
    assert_int_equal(h, 1);
    assert_int_equal(mi, 59);
    assert_int_equal(s, 59);
    assert_int_equal(wd, 0);
}

static void lord_howe_half_hour_dst(void **state)
{
    (void)state;
    const query_tz_t *z = zone("Australia/Lord_Howe");
    /* +11:00 -> +10:30 on 2023-04-01 15:00 UTC; back on 2023-09-30 15:30 UTC */
    assert_int_equal(query_tz_offset_at(z, 1680361200 - 1), 39600);
    assert_int_equal(query_tz_offset_at(z, 1680361200), 37800);
    assert_int_equal(query_tz_offset_at(z, 1696087800 - 1), 37800);
    assert_int_equal(query_tz_offset_at(z, 1696087800), 39600);
    /* 2045 (footer rule, southern hemisphere: DST spans the new year) */
    assert_int_equal(query_tz_offset_at(z, 2374671600 - 1), 39600);
    assert_int_equal(query_tz_offset_at(z, 2374671600), 37800);
    assert_int_equal(query_tz_offset_at(z, 2390398200 - 1), 37800);
    assert_int_equal(query_tz_offset_at(z, 2390398200), 39600);
    /* local 2023-10-01 02:15 is in the 30-minute gap: pushed to 02:45 LHDT,
     * i.e. 02:15 at +10:30 = 2023-09-30 15:45 UTC */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 10, 1, 2, 15, 0), 1696087800 + 900);
}

static void local_to_utc_gap_overlap_plain(void **state)
{
    (void)state;
    const query_tz_t *z = zone("Europe/Berlin");
    /* Ordinary: 2023-07-01 12:00 CEST = 10:00 UTC */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 7, 1, 12, 0, 0), 1688169600 + 36000);
    /* Gap: 2023-03-26 02:30 does not exist; java.time moves it to 03:30 CEST
     * = 01:30 UTC */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 3, 26, 2, 30, 0), 1679792400 + 1800);
    /* Overlap: 2023-10-29 02:30 happens twice (00:30 and 01:30 UTC): earlier */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 10, 29, 2, 30, 0), 1698539400);
    /* Just after the overlap: 03:00 CET = 02:00 UTC */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 10, 29, 3, 0, 0), 1698541200 + 3600);
    /* Month 13 and day 0 roll over: 2023-13-01 = 2024-01-01 00:00 CET */
    assert_int_equal(query_tz_local_to_utc(z, 2023, 13, 1, 0, 0, 0), 1704067200 - 3600);
    assert_int_equal(query_tz_local_to_utc(z, 2024, 3, 0, 0, 0, 0), 1709164800 - 3600);
}

static void utc_to_local_fields(void **state)
{
    (void)state;
    const query_tz_t *z = zone("Europe/Berlin");
    int y, mo, d, h, mi, s, wd;
    query_tz_utc_to_local(z, 1679792400, &y, &mo, &d, &h, &mi, &s, &wd);
    assert_int_equal(y, 2023);
    assert_int_equal(mo, 3);
    assert_int_equal(d, 26);
    assert_int_equal(h, 3);
    assert_int_equal(mi, 0);
    assert_int_equal(s, 0);
    assert_int_equal(wd, 0); /* Sunday */
    /* One second earlier: 01:59:59 CET */
    query_tz_utc_to_local(z, 1679792399, &y, &mo, &d, &h, &mi, &s, &wd);
    assert_int_equal(h, 1);
    assert_int_equal(mi, 59);
    assert_int_equal(s, 59);
    /* Epoch in UTC: Thursday 1970-01-01; a negative instant: 1969-12-31 23:59:59 Wed */
    const query_tz_t *u = zone("UTC");
    query_tz_utc_to_local(u, 0, &y, &mo, &d, &h, &mi, &s, &wd);
    assert_int_equal(y, 1970);
    assert_int_equal(mo, 1);
    assert_int_equal(d, 1);
    assert_int_equal(wd, 4);
    query_tz_utc_to_local(u, -1, &y, &mo, &d, &h, &mi, &s, &wd);
    assert_int_equal(y, 1969);
    assert_int_equal(mo, 12);
    assert_int_equal(d, 31);
    assert_int_equal(h, 23);
    assert_int_equal(wd, 3);
    /* Leap day 2024-02-29 12:00 UTC = 1709208000 */
    query_tz_utc_to_local(u, 1709208000, &y, &mo, &d, &h, NULL, NULL, &wd);
    assert_int_equal(mo, 2);
    assert_int_equal(d, 29);
    assert_int_equal(h, 12);
    assert_int_equal(wd, 4);
}

static void fixed_zones_without_files(void **state)
{
    (void)state;
    static const char *const utc[] = {"UTC", "Z", "GMT", "Etc/UTC"};
    for (size_t i = 0; i < 4; i++) {
        const query_tz_t *z = zone(utc[i]);
        assert_int_equal(query_tz_offset_at(z, 1679792400), 0);
        assert_int_equal(query_tz_local_to_utc(z, 2023, 3, 26, 1, 0, 0), 1679792400);
    }
    assert_int_equal(query_tz_offset_at(zone("+05:30"), 0), 19800);
    assert_int_equal(query_tz_offset_at(zone("-0800"), 0), -28800);
    assert_int_equal(query_tz_offset_at(zone("GMT+2"), 0), 7200);
    assert_int_equal(query_tz_offset_at(zone("UTC-03:30"), 0), -12600);
    /* The tzdata file Etc/GMT+5 uses POSIX's inverted sign: UTC-5. */
    assert_int_equal(query_tz_offset_at(zone("Etc/GMT+5"), 0), -18000);
    assert_int_equal(query_tz_offset_at(zone("Asia/Kolkata"), 2000000000), 19800);
}

static void unknown_and_unsafe_names(void **state)
{
    (void)state;
    static const char *const bad[] = {"Mars/Olympus_Mons",
                                      "../../etc/passwd",
                                      "/etc/localtime",
                                      "Europe/../Europe/Berlin",
                                      "",
                                      "Europe",
                                      "+25:00",
                                      "Europe/Berlin "};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const query_tz_t *z = NULL;
        oct_errbuf_t eb;
        assert_int_equal(query_tz_get(bad[i], &z, &eb), OCT_ENOTFOUND);
        char want[128];
        snprintf(want, sizeof(want), "Unknown time zone: %s", bad[i]);
        assert_string_equal(eb.msg, want);
    }
}

/* Day numbers worked by hand: 30 years 1970..1999 hold 7 leap days (72..96),
 * so 2000-01-01 is 30 * 365 + 7 = 10957 and 2000-03-01 (2000 is leap) is
 * 10957 + 31 + 29 = 11017; 1356998400 s / 86400 = 15706 is 2013-01-01;
 * 1900-01-01 lies 70 * 365 + 17 (1904..1968) = 25567 days back, and 1900 is
 * no leap year, so 1900-03-01 is -25567 + 31 + 28 = -25508. */
static void civil_day_numbers(void **state)
{
    (void)state;
    static const struct {
        int64_t y;
        int m, d;
        int64_t days;
    } c[] = {{1970, 1, 1, 0},      {1969, 12, 31, -1},   {2000, 1, 1, 10957},
             {2000, 2, 29, 11016}, {2000, 3, 1, 11017},  {2013, 1, 1, 15706},
             {1900, 1, 1, -25567}, {1900, 3, 1, -25508}, {1900, 2, 28, -25509}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        assert_int_equal(query_days_from_civil(c[i].y, c[i].m, c[i].d), c[i].days);
        int64_t y;
        int m, d;
        query_civil_from_days(c[i].days, &y, &m, &d);
        assert_int_equal(y, c[i].y);
        assert_int_equal(m, c[i].m);
        assert_int_equal(d, c[i].d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(berlin_spring_and_fall),
        cmocka_unit_test(berlin_beyond_table_uses_footer_rule),
        cmocka_unit_test(new_york),
        cmocka_unit_test(lord_howe_half_hour_dst),
        cmocka_unit_test(local_to_utc_gap_overlap_plain),
        cmocka_unit_test(utc_to_local_fields),
        cmocka_unit_test(fixed_zones_without_files),
        cmocka_unit_test(unknown_and_unsafe_names),
        cmocka_unit_test(civil_day_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
