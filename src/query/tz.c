/* tz.c -- IANA time zones from the system's TZif files, without touching TZ.
 *
 * A zone is loaded once from /usr/share/zoneinfo/<name> (or $TZDIR/<name>):
 * the 64-bit (v2+) transition table and local-time types, plus the footer's
 * POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3"), which governs every
 * instant after the last listed transition (slim TZif files list none past
 * the rule's introduction, so the footer is required, not decoration).
 * Loaded zones live in a mutex-protected list and are never freed, so the
 * pointer query_tz_get hands out stays valid for the process lifetime and
 * lookups after the first are a short walk under the lock (queries call this
 * once per request, never per point).
 *
 * "UTC", "GMT", "Z" and their aliases, and fixed offsets ("+05:30", "-0800",
 * "GMT+2", "UTC-03:30" with Java's sign: '+' is east of Greenwich) need no
 * file. Everything else is a file name, refused when it could escape the
 * zoneinfo directory (a leading '/', "..", or an unusual character).
 *
 * Civil-date arithmetic uses the proleptic Gregorian days-from-civil
 * algorithm, exact for any int64 range we meet. */
#include "query/tz.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

/* ---- civil dates -------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t query_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = floor_div(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void query_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = floor_div(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* 0 = Sunday; 1970-01-01 was a Thursday. */
static int weekday(int64_t days)
{
    return (int)(((days % 7) + 7 + 4) % 7);
}

/* ---- POSIX TZ rules (the TZif footer) ----------------------------------- */

typedef struct {
    char kind; /* 'M' (Mm.w.d), 'J' (Jn, 1..365, no Feb 29), 'D' (n, 0..365) */
    int month, week, wday;
    int day;
    int32_t time_s; /* local time of day of the change; may be negative or > 24h */
} tz_rule_date_t;

typedef struct {
    int32_t std_off; /* seconds east of UTC */
    int32_t dst_off;
    int has_dst;
    tz_rule_date_t start, end;
} tz_posix_t;

struct query_tz {
    struct query_tz *next;
    char *name;
    int64_t *trans;      /* UTC seconds, ascending */
    uint8_t *trans_type; /* index into offs */
    size_t n_trans;
    int32_t *offs; /* utoff of each local-time type */
    size_t n_types;
    int has_posix;
    tz_posix_t posix;
};

/* [+-]hh[:mm[:ss]] with hours up to max_h. Returns chars consumed or -1. */
static int parse_hms(const char *s, int max_h, int32_t *out)
{
    const char *p = s;
    int sign = 1;
    if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
    int h = 0, nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 3)
        h = h * 10 + (*p++ - '0'), nd++;
    if (nd == 0 || h > max_h) return -1;
    int mi = 0, se = 0;
    if (*p == ':') {
        p++;
        if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9')) return -1;
        mi = (p[0] - '0') * 10 + (p[1] - '0');
        p += 2;
        if (*p == ':') {
            p++;
            if (!(p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9')) return -1;
            se = (p[0] - '0') * 10 + (p[1] - '0');
            p += 2;
        }
    }
    if (mi > 59 || se > 59) return -1;
    *out = sign * (h * 3600 + mi * 60 + se);
    return (int)(p - s);
}

static int parse_tz_name(const char *s)
{
    const char *p = s;
    if (*p == '<') {
        while (*p && *p != '>')
            p++;
        if (*p != '>') return -1;
        return (int)(p - s + 1);
    }
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
        p++;
    return p - s >= 3 ? (int)(p - s) : -1;
}

static int parse_num(const char **pp, int *out)
{
    const char *p = *pp;
    int v = 0, nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 4)
        v = v * 10 + (*p++ - '0'), nd++;
    if (nd == 0) return -1;
    *pp = p;
    *out = v;
    return 0;
}

static int parse_rule_date(const char **pp, tz_rule_date_t *r)
{
    const char *p = *pp;
    if (*p == 'M') {
        p++;
        r->kind = 'M';
        if (parse_num(&p, &r->month) < 0 || *p++ != '.') return -1;
        if (parse_num(&p, &r->week) < 0 || *p++ != '.') return -1;
        if (parse_num(&p, &r->wday) < 0) return -1;
        if (r->month < 1 || r->month > 12 || r->week < 1 || r->week > 5 || r->wday > 6) return -1;
    } else if (*p == 'J') {
        p++;
        r->kind = 'J';
        if (parse_num(&p, &r->day) < 0 || r->day < 1 || r->day > 365) return -1;
    } else {
        r->kind = 'D';
        if (parse_num(&p, &r->day) < 0 || r->day > 365) return -1;
    }
    r->time_s = 7200;
    if (*p == '/') {
        p++;
        int n = parse_hms(p, 167, &r->time_s);
        if (n < 0) return -1;
        p += n;
    }
    *pp = p;
    return 0;
}

/* Parses a POSIX TZ string as found in TZif footers. Returns 0 or -1. */
static int parse_posix(const char *s, tz_posix_t *out)
{
    memset(out, 0, sizeof(*out));
    int n = parse_tz_name(s);
    if (n < 0) return -1;
    s += n;
    int32_t off;
    n = parse_hms(s, 24, &off);
    if (n < 0) return -1;
    s += n;
    out->std_off = -off; /* POSIX offsets count westward */
    if (*s == '\0') return 0;
    n = parse_tz_name(s);
    if (n < 0) return -1;
    s += n;
    out->has_dst = 1;
    out->dst_off = out->std_off + 3600;
    if (*s != ',' && *s != '\0') {
        n = parse_hms(s, 24, &off);
        if (n < 0) return -1;
        s += n;
        out->dst_off = -off;
    }
    if (*s == '\0') {
        /* POSIX leaves the default rule to the implementation; the US rule is
         * what glibc and tzcode use. */
        s = ",M3.2.0,M11.1.0";
    }
    if (*s++ != ',') return -1;
    if (parse_rule_date(&s, &out->start) < 0) return -1;
    if (*s++ != ',') return -1;
    if (parse_rule_date(&s, &out->end) < 0) return -1;
    return *s == '\0' ? 0 : -1;
}

/* Local seconds (wall clock taken as UTC) at which rule date r falls in year y. */
static int64_t rule_local(const tz_rule_date_t *r, int64_t y)
{
    int64_t days;
    if (r->kind == 'M') {
        int64_t first = query_days_from_civil(y, r->month, 1);
        int d = 1 + (r->wday - weekday(first) + 7) % 7 + (r->week - 1) * 7;
        while (d > days_in_month(y, r->month))
            d -= 7;
        days = first + d - 1;
    } else if (r->kind == 'J') {
        days = query_days_from_civil(y, 1, 1) + r->day - 1 + (is_leap(y) && r->day >= 60);
    } else {
        days = query_days_from_civil(y, 1, 1) + r->day;
    }
    return days * 86400 + r->time_s;
}

static int32_t posix_offset_at(const tz_posix_t *p, int64_t t)
{
    if (!p->has_dst) return p->std_off;
    int64_t y;
    int m, d;
    query_civil_from_days(floor_div(t + p->std_off, 86400), &y, &m, &d);
    /* The start is given in standard time, the end in daylight time. */
    int64_t start = rule_local(&p->start, y) - p->std_off;
    int64_t end = rule_local(&p->end, y) - p->dst_off;
    int in_dst = start < end ? (t >= start && t < end) : (t < end || t >= start);
    return in_dst ? p->dst_off : p->std_off;
}

/* ---- TZif --------------------------------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* Parses a whole TZif file into z. Returns 0 or -1 (malformed). */
static int tzif_parse(const uint8_t *buf, size_t len, struct query_tz *z)
{
    if (len < 44 || memcmp(buf, "TZif", 4) != 0) return -1;
    int version = buf[4];
    const uint8_t *p = buf;
    size_t tsize = 4;
    if (version >= '2') {
        /* Skip the v1 block to the 64-bit one. */
        uint32_t isut = be32(p + 20), isstd = be32(p + 24), leap = be32(p + 28),
                 timecnt = be32(p + 32), typecnt = be32(p + 36), charcnt = be32(p + 40);
        size_t skip = 44 + (size_t)timecnt * 5 + (size_t)typecnt * 6 + charcnt + (size_t)leap * 8 +
                      isstd + isut;
        if (skip + 44 > len || memcmp(buf + skip, "TZif", 4) != 0) return -1;
        p = buf + skip;
        tsize = 8;
    }
    uint32_t isut = be32(p + 20), isstd = be32(p + 24), leap = be32(p + 28), timecnt = be32(p + 32),
             typecnt = be32(p + 36), charcnt = be32(p + 40);
    if (typecnt == 0 || typecnt > 256 || timecnt > 1000000 || leap > 1000000) return -1;
    size_t need = 44 + (size_t)timecnt * (tsize + 1) + (size_t)typecnt * 6 + charcnt +
                  (size_t)leap * (tsize + 4) + isstd + isut;
    if ((size_t)(p - buf) + need > len) return -1;
    const uint8_t *q = p + 44;
    z->n_trans = timecnt;
    z->trans = xcalloc(timecnt ? timecnt : 1, sizeof(int64_t));
    z->trans_type = xcalloc(timecnt ? timecnt : 1, 1);
    for (uint32_t i = 0; i < timecnt; i++, q += tsize)
        z->trans[i] = tsize == 8 ? be64(q) : (int64_t)(int32_t)be32(q);
    for (uint32_t i = 0; i < timecnt; i++, q++) {
        if (*q >= typecnt) return -1;
        z->trans_type[i] = *q;
    }
    z->n_types = typecnt;
    z->offs = xcalloc(typecnt, sizeof(int32_t));
    for (uint32_t i = 0; i < typecnt; i++, q += 6)
        z->offs[i] = (int32_t)be32(q);
    const uint8_t *end = p + need;
    /* Footer: "\n<POSIX TZ>\n" (v2+ only). An unparsable one is ignored:
     * the table alone is still right up to its last transition. */
    if (tsize == 8 && end < buf + len && *end == '\n') {
        const uint8_t *nl = memchr(end + 1, '\n', (size_t)(buf + len - end - 1));
        if (nl && nl > end + 1 && nl - end < 128) {
            char tzs[128];
            memcpy(tzs, end + 1, (size_t)(nl - end - 1));
            tzs[nl - end - 1] = '\0';
            if (parse_posix(tzs, &z->posix) == 0) z->has_posix = 1;
        }
    }
    return 0;
}

static void tz_free_parts(struct query_tz *z)
{
    free(z->trans);
    free(z->trans_type);
    free(z->offs);
    free(z->name);
}

static int valid_file_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '/' || strstr(name, "..") || strlen(name) > 200) return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '+' || c == '.'))
            return 0;
    }
    return 1;
}

static int tz_load_file(const char *name, struct query_tz *z)
{
    if (!valid_file_name(name)) return -1;
    const char *dir = getenv("TZDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 8192, len = 0;
    uint8_t *buf = xmalloc(cap);
    for (;;) {
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
        if (len == cap) {
            if (cap >= (1u << 22)) break; /* no real zone is this large */
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? -1 : tzif_parse(buf, len, z);
    free(buf);
    return rc;
}

/* "+05:30", "-0800", "+5", optionally after "UTC"/"GMT"/"UT": Java's custom
 * IDs, '+' east. Returns 1 with *off set, 0 if not that form. */
static int parse_fixed(const char *name, int32_t *off)
{
    const char *p = name;
    if (!strncmp(p, "UTC", 3) || !strncmp(p, "GMT", 3))
        p += 3;
    else if (!strncmp(p, "UT", 2))
        p += 2;
    if (*p != '+' && *p != '-') return 0;
    int sign = *p++ == '-' ? -1 : 1;
    int digits[4], nd = 0, colon = 0;
    for (; *p; p++) {
        if (*p == ':' && nd > 0 && nd <= 2 && !colon) {
            colon = nd;
            continue;
        }
        if (*p < '0' || *p > '9' || nd == 4) return 0;
        digits[nd++] = *p - '0';
    }
    int h, m = 0;
    if (colon) {
        if (nd - colon != 2) return 0;
        h = colon == 1 ? digits[0] : digits[0] * 10 + digits[1];
        m = digits[colon] * 10 + digits[colon + 1];
    } else if (nd == 1 || nd == 2) {
        h = nd == 1 ? digits[0] : digits[0] * 10 + digits[1];
    } else if (nd == 4) {
        h = digits[0] * 10 + digits[1];
        m = digits[2] * 10 + digits[3];
    } else {
        return 0;
    }
    if (h > 18 || m > 59) return 0;
    *off = sign * (h * 3600 + m * 60);
    return 1;
}

static int is_utc_alias(const char *name)
{
    static const char *const names[] = {
        "UTC",           "Z",        "GMT",       "UCT",  "UT",   "Etc/UTC",  "Etc/GMT",  "Etc/UCT",
        "Etc/Universal", "Etc/Zulu", "Universal", "Zulu", "GMT0", "Etc/GMT0", "Greenwich"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(names[i], name)) return 1;
    return 0;
}

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;
static struct query_tz *tz_list;

int query_tz_get(const char *name, const query_tz_t **out, oct_errbuf_t *eb)
{
    if (!name) name = "UTC";
    pthread_mutex_lock(&tz_lock);
    for (struct query_tz *z = tz_list; z; z = z->next) {
        if (!strcmp(z->name, name)) {
            pthread_mutex_unlock(&tz_lock);
            *out = z;
            return 0;
        }
    }
    struct query_tz *z = xcalloc(1, sizeof(*z));
    int32_t off = 0;
    int ok = 1;
    if (is_utc_alias(name) || parse_fixed(name, &off)) {
        z->has_posix = 1;
        z->posix.std_off = off;
    } else if (tz_load_file(name, z) < 0) {
        ok = 0;
    }
    if (!ok) {
        pthread_mutex_unlock(&tz_lock);
        tz_free_parts(z);
        free(z);
        return oct_err(eb, OCT_ENOTFOUND, "Unknown time zone: %s", name);
    }
    z->name = xstrdup(name);
    z->next = tz_list;
    tz_list = z;
    pthread_mutex_unlock(&tz_lock);
    *out = z;
    return 0;
}

int32_t query_tz_offset_at(const query_tz_t *tz, int64_t t_s)
{
    if (tz->n_trans == 0) return tz->has_posix ? posix_offset_at(&tz->posix, t_s) : tz->offs[0];
    if (t_s < tz->trans[0]) return tz->offs[0];
    if (t_s >= tz->trans[tz->n_trans - 1] && tz->has_posix) return posix_offset_at(&tz->posix, t_s);
    size_t lo = 0, hi = tz->n_trans; /* largest i with trans[i] <= t_s */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->trans[mid] <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    return tz->offs[tz->trans_type[lo]];
}

int64_t query_tz_local_to_utc(const query_tz_t *tz, int year, int month, int day, int hour, int min,
                              int sec)
{
    /* Normalise the month so callers may step months arithmetically. */
    int64_t y = year + floor_div(month - 1, 12);
    int mo = (int)(month - 1 - floor_div(month - 1, 12) * 12) + 1;
    int64_t local = query_days_from_civil(y, mo, 1) * 86400 + (int64_t)(day - 1) * 86400 +
                    (int64_t)hour * 3600 + (int64_t)min * 60 + sec;
    /* The offsets in force a day before and a day after bracket any single
     * transition near 'local' (zones never change twice within two days). */
    int32_t before = query_tz_offset_at(tz, local - 86400 - 14 * 3600);
    int32_t after = query_tz_offset_at(tz, local + 86400 + 14 * 3600);
    int64_t t1 = local - before, t2 = local - after;
    int ok1 = query_tz_offset_at(tz, t1) == before;
    int ok2 = query_tz_offset_at(tz, t2) == after;
    if (ok1 && ok2) return t1 < t2 ? t1 : t2; /* overlap: the earlier instant */
    if (ok1) return t1;
    if (ok2) return t2;
    /* Gap: keep the offset from before it, which pushes the wall clock
     * forward by the gap's length (java.time's rule). */
    return t1;
}

void query_tz_utc_to_local(const query_tz_t *tz, int64_t t_s, int *year, int *month, int *day,
                           int *hour, int *min, int *sec, int *wday)
{
    int64_t local = t_s + query_tz_offset_at(tz, t_s);
    int64_t days = floor_div(local, 86400);
    int64_t rem = local - days * 86400;
    int64_t y;
    int m, d;
    query_civil_from_days(days, &y, &m, &d);
    if (year) *year = (int)y;
    if (month) *month = m;
    if (day) *day = d;
    if (hour) *hour = (int)(rem / 3600);
    if (min) *min = (int)(rem / 60 % 60);
    if (sec) *sec = (int)(rem % 60);
    if (wday) *wday = weekday(days);
}
