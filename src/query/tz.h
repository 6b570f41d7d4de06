/* tz.h -- time zones by IANA name, read from the system's TZif files
 * (/usr/share/zoneinfo, Debian's tzdata), thread-safe and without touching
 * the process's TZ. Used for absolute query dates and calendar downsampling
 * ("1dc" in Europe/Berlin across a DST change). */
#ifndef OCT_QUERY_TZ_H
#define OCT_QUERY_TZ_H

#include <stdint.h>

#include "common/err.h"

typedef struct query_tz query_tz_t;

/* Loads a zone ("UTC", "Europe/Berlin", ...). Zones are cached and shared:
 * the returned pointer stays valid for the process lifetime (never free it).
 * Returns 0 or OCT_ENOTFOUND ("Unknown time zone: <name>"). Thread-safe. */
OCT_MUST_CHECK int query_tz_get(const char *name, const query_tz_t **out, oct_errbuf_t *eb);

/* Offset from UTC in seconds at UTC instant t_s. */
int32_t query_tz_offset_at(const query_tz_t *tz, int64_t t_s);

/* UTC instant of a local wall-clock time. Ambiguous times (fall back) take
 * the earlier instant; times in a gap (spring forward) move forward by the
 * gap, as java.time does. */
int64_t query_tz_local_to_utc(const query_tz_t *tz, int year, int month, int day, int hour, int min,
                              int sec);

/* Breaks UTC instant t_s into local fields (month 1..12, wday 0=Sunday). */
void query_tz_utc_to_local(const query_tz_t *tz, int64_t t_s, int *year, int *month, int *day,
                           int *hour, int *min, int *sec, int *wday);

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (month
 * 1..12; Hinnant's days_from_civil), and back. Pure, thread-safe. */
int64_t query_days_from_civil(int64_t y, int m, int d);
void query_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif
