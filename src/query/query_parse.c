/* query_parse.c -- the textual parts of an OpenTSDB 2.4 query
 * (docs/query.md sections 2-4): date strings, downsampling specs, and the URI sub-queries `m=` and
 * `tsuid=`.
 *
 * The error texts are OpenTSDB's (DateTime.parseDateTimeString,
 * DateTime.parseDuration, DownsamplingSpecification, QueryRpc,
 * Tags.parseWithMetricAndFilters), since clients and users grep for them.
 * Validation order follows OpenTSDB's too: the metric and its filters are
 * parsed first, then the middle parts (rate options), then the aggregator and
 * the downsampling spec are validated, so a query with several mistakes
 * reports the same one.
 *
 * Where OpenTSDB's parser is plainly broken we do the right thing instead
 * (each listed in docs/compat.md):
 *  - "1356998400.5" is 1356998400 s + 0.5 s, not 13569984005 ms;
 *  - a duration's unit must be exactly one of ms s m h d w n y (any case);
 *    OpenTSDB looks only at the last character, so "1min" was a month;
 *  - `:`, `,`, `=` and braces inside a filter's parentheses do not split the
 *    sub-query (regexp(a{2,3}) and regexp(a:b) work in a URI);
 *  - empty `::` parts are ignored instead of failing with an internal error;
 *  - fill policy "scalar" is refused when parsed (OpenTSDB fails at run time);
 *  - a middle part octsdb does not implement is refused, never ignored:
 *    a rollup_* that names no usage, and any part 2.4 does not
 *    know (2.4 ignores it: a typo such as "rat" would silently answer
 *    without the rate). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/xmalloc.h"
#include "query/query.h"
#include "query/tz.h"

/* ---- integers ------------------------------------------------------------ */

/* Tags.parseLong: optional sign, ASCII digits, overflow rejected. Returns 0
 * or -1 with OpenTSDB's NumberFormatException text in msg. */
static int parse_long(const char *s, size_t n, int64_t *out, char *msg, size_t msg_cap)
{
    if (n == 0) {
        snprintf(msg, msg_cap, "Empty string");
        return -1;
    }
    size_t i = 0;
    int neg = 0;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        if (n == 1) {
            snprintf(msg, msg_cap, "Just a sign, no value: %.*s", (int)n, s);
            return -1;
        }
        if (n > 20) {
            snprintf(msg, msg_cap, "Value too long: %.*s", (int)n, s);
            return -1;
        }
        i = 1;
    } else if (n > 19) {
        snprintf(msg, msg_cap, "Value too long: %.*s", (int)n, s);
        return -1;
    }
    uint64_t v = 0;
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            snprintf(msg, msg_cap, "Invalid character '%c' in %.*s", s[i], (int)n, s);
            return -1;
        }
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10) {
            snprintf(msg, msg_cap, "Overflow in %.*s", (int)n, s);
            return -1;
        }
        v = v * 10 + d;
    }
    *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return 0;
}

/* Java's Long.parseLong for the rate options: same digits rule, no length
 * message. Returns 0 or -1. */
static int java_parse_long(const char *s, size_t n, int64_t *out)
{
    char msg[8];
    return parse_long(s, n, out, msg, sizeof(msg));
}

/* ---- durations (DateTime.parseDuration) ---------------------------------- */

/* Parses "<n><unit>" (s[0..len)) into milliseconds, the count and the unit
 * letter ('S' for ms). Errors carry OpenTSDB's texts. */
int query_parse_duration(const char *s, size_t len, int64_t *ms, int64_t *count, char *unit,
                         oct_errbuf_t *eb)
{
    size_t nd = 0;
    while (nd < len && s[nd] >= '0' && s[nd] <= '9')
        nd++;
    if (len > 0 && nd == len)
        return oct_err(eb, OCT_EPARSE, "Invalid duration, must have an integer and unit: %.*s",
                       (int)len, s);
    int64_t n;
    if (nd == 0 || java_parse_long(s, nd, &n) < 0)
        return oct_err(eb, OCT_EPARSE, "Invalid duration (number): %.*s", (int)len, s);
    if (n <= 0) return oct_err(eb, OCT_EPARSE, "Zero or negative duration: %.*s", (int)len, s);
    const char *u = s + nd;
    size_t ulen = len - nd;
    int64_t mult;
    char letter = ulen == 1 ? (char)tolower((unsigned char)u[0]) : 0;
    if (ulen == 2 && tolower((unsigned char)u[0]) == 'm' && tolower((unsigned char)u[1]) == 's') {
        letter = 'S';
        mult = 1;
    } else {
        switch (letter) {
        case 's':
            mult = 1000;
            break;
        case 'm':
            mult = 60 * 1000;
            break;
        case 'h':
            mult = 3600 * 1000;
            break;
        case 'd':
            mult = 86400 * 1000LL;
            break;
        case 'w':
            mult = 7 * 86400 * 1000LL;
            break;
        case 'n':
            mult = 30 * 86400 * 1000LL;
            break;
        case 'y':
            mult = 365 * 86400 * 1000LL;
            break;
        default:
            return oct_err(eb, OCT_EPARSE, "Invalid duration (suffix): %.*s", (int)len, s);
        }
    }
    if (n > INT64_MAX / mult)
        return oct_err(eb, OCT_EPARSE, "Duration must be < Long.MAX_VALUE ms: %.*s", (int)len, s);
    *ms = n * mult;
    if (count) *count = n;
    if (unit) *unit = letter;
    return 0;
}

/* ---- times (DateTime.parseDateTimeString) -------------------------------- */

static int all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return n > 0;
}

static int num2(const char *s)
{
    return (s[0] - '0') * 10 + (s[1] - '0');
}

static int parse_absolute(const char *s, size_t len, const char *tzname, int64_t *out_ms,
                          oct_errbuf_t *eb)
{
    if (len != 10 && len != 16 && len != 19)
        return oct_err(eb, OCT_EPARSE, "Invalid absolute date: %s", s);
    const query_tz_t *tz;
    if (tzname && *tzname) {
        oct_errbuf_t tzeb;
        if (query_tz_get(tzname, &tz, &tzeb) < 0)
            return oct_err(eb, OCT_EPARSE, "Invalid timezone name: %s", tzname);
    } else if (query_tz_get("UTC", &tz, eb) < 0) {
        return OCT_EPARSE; /* cannot happen: UTC needs no file */
    }
    /* yyyy/MM/dd[(-| )HH:mm[:ss]]; out-of-range fields roll over, as the
     * lenient SimpleDateFormat does ("2013/01/32" is February 1st). */
    int ok = all_digits(s, 4) && s[4] == '/' && all_digits(s + 5, 2) && s[7] == '/' &&
             all_digits(s + 8, 2);
    if (ok && len >= 16)
        ok = (s[10] == '-' || s[10] == ' ') && all_digits(s + 11, 2) && s[13] == ':' &&
             all_digits(s + 14, 2);
    if (ok && len == 19) ok = s[16] == ':' && all_digits(s + 17, 2);
    if (!ok) return oct_err(eb, OCT_EPARSE, "Invalid date: %s. Unparseable date: \"%s\"", s, s);
    int year = num2(s) * 100 + num2(s + 2), mon = num2(s + 5), day = num2(s + 8);
    int hour = len >= 16 ? num2(s + 11) : 0, min = len >= 16 ? num2(s + 14) : 0;
    int sec = len == 19 ? num2(s + 17) : 0;
    *out_ms = query_tz_local_to_utc(tz, year, mon, day, hour, min, sec) * 1000;
    return 0;
}

int query_parse_time(const char *s, const char *tz, int64_t now_ms, int64_t *out_ms,
                     oct_errbuf_t *eb)
{
    if (!s || !*s) return oct_err(eb, OCT_EPARSE, "Missing time");
    size_t len = strlen(s);
    char msg[200];

    /* "<digits>ms": milliseconds since the epoch. */
    if (len > 2 && s[len - 2] == 'm' && s[len - 1] == 's' && all_digits(s, len - 2)) {
        if (parse_long(s, len - 2, out_ms, msg, sizeof(msg)) < 0)
            return oct_err(eb, OCT_EPARSE, "Invalid time: %s. %s", s, msg);
        return 0;
    }
    if (len == 3 && tolower((unsigned char)s[0]) == 'n' && tolower((unsigned char)s[1]) == 'o' &&
        tolower((unsigned char)s[2]) == 'w') {
        *out_ms = now_ms;
        return 0;
    }
    if (len >= 4 && !strncasecmp(s + len - 4, "-ago", 4)) {
        int64_t d;
        int rc = query_parse_duration(s, len - 4, &d, NULL, NULL, eb);
        if (rc < 0) return rc;
        /* Clamp: "1000y-ago" means "from the beginning", not a negative time. */
        *out_ms = now_ms - d < 0 ? 0 : now_ms - d;
        return 0;
    }
    if (strchr(s, '/') || strchr(s, ':')) return parse_absolute(s, len, tz, out_ms, eb);

    const char *dot = strchr(s, '.');
    if (dot) {
        /* <10 digits>.<1..3 digits>: seconds with a fraction. OpenTSDB deletes
         * the dot, which is right only for exactly 3 digits. */
        size_t frac = len - 11;
        if (!(len >= 12 && len <= 14 && dot == s + 10 && all_digits(s, 10) &&
              all_digits(s + 11, frac)))
            return oct_err(eb, OCT_EPARSE,
                           "Invalid time: %s. Millisecond timestamps must be in the format "
                           "<seconds>.<ms> where the milliseconds are limited to 3 digits",
                           s);
        int64_t sec, f;
        (void)java_parse_long(s, 10, &sec);
        (void)java_parse_long(s + 11, frac, &f);
        for (size_t i = frac; i < 3; i++)
            f *= 10;
        *out_ms = sec * 1000 + f;
        return 0;
    }
    int64_t t;
    if (parse_long(s, len, &t, msg, sizeof(msg)) < 0)
        return oct_err(eb, OCT_EPARSE, "Invalid time: %s. %s", s, msg);
    if (t < 0)
        return oct_err(eb, OCT_EPARSE, "Invalid time: %s. Negative timestamps are not supported.",
                       s);
    /* OpenTSDB's rule: up to 10 characters are seconds, longer is ms. */
    if (len <= 10) t *= 1000;
    *out_ms = t;
    return 0;
}

/* ---- downsampling (DownsamplingSpecification) ---------------------------- */

int query_parse_downsample(const char *s, query_downsample_t *out, oct_errbuf_t *eb)
{
    if (!s) return oct_err(eb, OCT_EPARSE, "Downsampling specifier cannot be null");
    memset(out, 0, sizeof(*out));
    /* Java's split("-"): trailing empty parts are dropped. */
    const char *parts[4];
    size_t lens[4];
    size_t np = 0, slen = strlen(s);
    while (slen > 0 && s[slen - 1] == '-')
        slen--;
    const char *start = s;
    for (size_t i = 0;; i++) {
        if (i == slen || s[i] == '-') {
            if (np < 4) {
                parts[np] = start;
                lens[np] = (size_t)(s + i - start);
            }
            np++;
            if (i == slen) break;
            start = s + i + 1;
        }
    }
    if (np < 2)
        return oct_err(eb, OCT_EPARSE,
                       "Invalid downsampling specifier '%s': must provide at least interval and "
                       "function",
                       s);
    if (np > 3)
        return oct_err(eb, OCT_EPARSE,
                       "Invalid downsampling specifier '%s': must consist of interval, function, "
                       "and optional fill policy",
                       s);
    /* Interval: anything containing "all" is one bucket for the whole query. */
    int has_all = 0;
    for (size_t i = 0; i + 3 <= lens[0]; i++)
        if (!strncmp(parts[0] + i, "all", 3)) has_all = 1;
    if (has_all) {
        out->all = 1;
    } else {
        size_t ilen = lens[0];
        if (ilen > 0 && parts[0][ilen - 1] == 'c') {
            out->calendar = 1;
            ilen--;
        }
        int rc =
            query_parse_duration(parts[0], ilen, &out->interval_ms, &out->count, &out->unit, eb);
        if (rc < 0) return rc;
    }
    char agg[64];
    if (lens[1] >= sizeof(agg))
        return oct_err(eb, OCT_EPARSE, "No such downsampling function: %.*s", (int)lens[1],
                       parts[1]);
    memcpy(agg, parts[1], lens[1]);
    agg[lens[1]] = '\0';
    out->agg = query_agg_find(agg);
    if (!out->agg) return oct_err(eb, OCT_EPARSE, "No such downsampling function: %s", agg);
    if (!strcmp(agg, "none"))
        return oct_err(eb, OCT_EPARSE, "cannot use the NONE aggregator for downsampling");
    out->fill = QUERY_FILL_NONE;
    if (np == 3) {
        static const struct {
            const char *name;
            query_fill_t fill;
        } fills[] = {{"none", QUERY_FILL_NONE},
                     {"zero", QUERY_FILL_ZERO},
                     {"nan", QUERY_FILL_NAN},
                     {"null", QUERY_FILL_NULL}};
        size_t i;
        for (i = 0; i < sizeof(fills) / sizeof(fills[0]); i++)
            if (strlen(fills[i].name) == lens[2] && !strncasecmp(parts[2], fills[i].name, lens[2]))
                break;
        if (i < sizeof(fills) / sizeof(fills[0])) {
            out->fill = fills[i].fill;
        } else if (lens[2] == 6 && !strncasecmp(parts[2], "scalar", 6)) {
            /* OpenTSDB parses it, then fails every query with this text. */
            return oct_err(eb, OCT_EPARSE, "unhandled fill policy: %.*s", (int)lens[2], parts[2]);
        } else {
            return oct_err(eb, OCT_EPARSE, "Unrecognized fill policy: %.*s", (int)lens[2],
                           parts[2]);
        }
    }
    return 0;
}

/* ---- query_t lifetime ---------------------------------------------------- */

void query_sub_free(query_sub_t *s)
{
    free(s->metric);
    for (size_t i = 0; i < s->n_tsuids; i++)
        free(s->tsuids[i]);
    free(s->tsuids);
    for (size_t i = 0; i < s->n_filters; i++)
        query_filter_free(&s->filters[i]);
    free(s->filters);
    free(s->percentiles);
    memset(s, 0, sizeof(*s));
}

void query_free(query_t *q)
{
    if (!q) return;
    for (size_t i = 0; i < q->n_subs; i++)
        query_sub_free(&q->subs[i]);
    free(q->subs);
    free(q->timezone);
    memset(q, 0, sizeof(*q));
}

static int filters_equal(const query_filter_t *a, const query_filter_t *b)
{
    return a->type == b->type && a->group_by == b->group_by && !strcmp(a->tagk, b->tagk) &&
           !strcmp(a->expr, b->expr);
}

int query_sub_equal(const query_sub_t *a, const query_sub_t *b)
{
    if (a->agg != b->agg || a->rate != b->rate || a->explicit_tags != b->explicit_tags ||
        a->has_downsample != b->has_downsample || a->n_tsuids != b->n_tsuids ||
        a->n_filters != b->n_filters || a->n_percentiles != b->n_percentiles ||
        a->show_histogram_buckets != b->show_histogram_buckets ||
        a->rollup_usage != b->rollup_usage || a->pre_agg != b->pre_agg)
        return 0;
    for (size_t i = 0; i < a->n_percentiles; i++)
        if (a->percentiles[i] != b->percentiles[i]) return 0;
    if ((a->metric == NULL) != (b->metric == NULL) || (a->metric && strcmp(a->metric, b->metric)))
        return 0;
    for (size_t i = 0; i < a->n_tsuids; i++)
        if (strcmp(a->tsuids[i], b->tsuids[i])) return 0;
    if (a->has_downsample) {
        const query_downsample_t *x = &a->ds, *y = &b->ds;
        if (x->interval_ms != y->interval_ms || x->all != y->all || x->calendar != y->calendar ||
            x->count != y->count || x->unit != y->unit || x->agg != y->agg || x->fill != y->fill)
            return 0;
    }
    if (a->rate) {
        const query_rate_t *x = &a->rate_opts, *y = &b->rate_opts;
        if (x->counter != y->counter || x->counter_max != y->counter_max ||
            x->reset_value != y->reset_value || x->drop_resets != y->drop_resets)
            return 0;
    }
    for (size_t i = 0; i < a->n_filters; i++)
        if (!filters_equal(&a->filters[i], &b->filters[i])) return 0;
    return 1;
}

/* Appends *sub to q (taking ownership) unless an equal one is there already
 * (OpenTSDB removes duplicate sub-queries), in which case *sub is freed. */
static void push_sub(query_t *q, query_sub_t *sub)
{
    for (size_t i = 0; i < q->n_subs; i++) {
        if (query_sub_equal(&q->subs[i], sub)) {
            query_sub_free(sub);
            return;
        }
    }
    q->subs = xrealloc(q->subs, (q->n_subs + 1) * sizeof(*q->subs));
    sub->index = (int)q->n_subs;
    q->subs[q->n_subs++] = *sub;
}

/* ---- m= and tsuid= -------------------------------------------------------- */

/* Splits s[0..len) on 'sep' where it is outside parentheses, so a filter
 * expression such as regexp(a:b|c,d) stays whole. Empty parts are kept.
 * Returns the count; at most cap spans are stored. */
typedef struct {
    const char *p;
    size_t n;
} span_t;

static size_t split_outside(const char *s, size_t len, char sep, span_t *out, size_t cap)
{
    size_t count = 0;
    int paren = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? s[i] : sep;
        if (i < len) {
            if (c == '(')
                paren++;
            else if (c == ')' && paren > 0)
                paren--;
        }
        if (i == len || (c == sep && paren == 0)) {
            if (count < cap) {
                out[count].p = s + start;
                out[count].n = i - start;
            }
            count++;
            start = i + 1;
        }
    }
    return count;
}

static int span_starts_ci(span_t sp, const char *prefix)
{
    size_t n = strlen(prefix);
    return sp.n >= n && !strncasecmp(sp.p, prefix, n);
}

static char *span_dup(span_t sp)
{
    char *s = xmalloc(sp.n + 1);
    memcpy(s, sp.p, sp.n);
    s[sp.n] = '\0';
    return s;
}

/* QueryRpc.parseRateOptions: "rate{counter[,max[,reset]]}". */
static int parse_rate_options(span_t sp, query_rate_t *r, oct_errbuf_t *eb)
{
    if (sp.n < 6)
        return oct_err(eb, OCT_EPARSE, "Invalid rate options specification: %.*s", (int)sp.n, sp.p);
    span_t parts[4];
    size_t np = split_outside(sp.p + 5, sp.n - 6, ',', parts, 4);
    if (np > 3)
        return oct_err(eb, OCT_EPARSE,
                       "Incorrect number of values in rate options specification, must be "
                       "counter[,counter max value,reset value], recieved: %zu parts",
                       np);
    r->counter = parts[0].n >= 7 && !strncmp(parts[0].p + parts[0].n - 7, "counter", 7);
    r->drop_resets = parts[0].n == 11 && !strncmp(parts[0].p, "dropcounter", 11);
    r->counter_max = INT64_MAX;
    r->reset_value = 0;
    if (np >= 2 && parts[1].n > 0 && java_parse_long(parts[1].p, parts[1].n, &r->counter_max) < 0)
        return oct_err(eb, OCT_EPARSE, "Max value of counter was not a number, received '%.*s'",
                       (int)parts[1].n, parts[1].p);
    if (np >= 3 && parts[2].n > 0 && java_parse_long(parts[2].p, parts[2].n, &r->reset_value) < 0)
        return oct_err(eb, OCT_EPARSE, "Reset value of counter was not a number, received '%.*s'",
                       (int)parts[2].n, parts[2].p);
    return 0;
}

static void add_filter(query_sub_t *sub, query_filter_t *f)
{
    sub->filters = xrealloc(sub->filters, (sub->n_filters + 1) * sizeof(*sub->filters));
    sub->filters[sub->n_filters++] = *f;
}

/* Parses one "{k=v,...}" body into filters. group_by: first group. stop_on_empty:
 * OpenTSDB stops at an empty item instead of failing, in the filter group and
 * in the tag group when a filter group follows. */
static int parse_filter_group(query_sub_t *sub, span_t body, int group_by, int stop_on_empty,
                              oct_errbuf_t *eb)
{
    const char *what = group_by ? "tag" : "filter";
    size_t n = split_outside(body.p, body.n, ',', NULL, 0);
    span_t *items = xcalloc(n, sizeof(*items));
    split_outside(body.p, body.n, ',', items, n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        span_t it = items[i];
        if (it.n == 0 && stop_on_empty) break;
        const char *eq = memchr(it.p, '=', it.n);
        size_t klen = eq ? (size_t)(eq - it.p) : 0;
        size_t vlen = eq ? it.n - klen - 1 : 0;
        /* Tags.parse wants exactly one '='; a second one is allowed only
         * inside a type(...) expression, where it is part of the pattern. */
        int bad = !eq || klen == 0 || vlen == 0 ||
                  (memchr(eq + 1, '=', vlen) && !memchr(eq + 1, '(', vlen));
        if (bad) {
            rc = oct_err(eb, OCT_EPARSE, "When parsing %s '%.*s': invalid tag: %.*s", what,
                         (int)it.n, it.p, (int)it.n, it.p);
            break;
        }
        char *k = span_dup((span_t){it.p, klen});
        char *v = span_dup((span_t){eq + 1, vlen});
        query_filter_t f;
        oct_errbuf_t feb;
        rc = query_filter_from_tag(&f, k, v, group_by, &feb);
        if (rc < 0) {
            rc = oct_err(eb, rc, "When parsing %s '%.*s': %s", what, (int)it.n, it.p, feb.msg);
        } else if (group_by) {
            /* A group-by filter equal to one already there (also from the
             * second group) just marks that one as group-by. */
            int dup = 0;
            for (size_t j = 0; j < sub->n_filters && !dup; j++) {
                query_filter_t *e = &sub->filters[j];
                if (e->type == f.type && !strcmp(e->tagk, f.tagk) && !strcmp(e->expr, f.expr)) {
                    e->group_by = 1;
                    dup = 1;
                }
            }
            if (dup)
                query_filter_free(&f);
            else
                add_filter(sub, &f);
        } else {
            add_filter(sub, &f);
        }
        free(k);
        free(v);
    }
    free(items);
    return rc;
}

/* Finds the '}' closing the group opened at s[open] ('{'), outside
 * parentheses. Returns its index or -1. */
static long group_end(const char *s, size_t len, size_t open)
{
    int paren = 0;
    for (size_t i = open + 1; i < len; i++) {
        if (s[i] == '(')
            paren++;
        else if (s[i] == ')' && paren > 0)
            paren--;
        else if (s[i] == '}' && paren == 0)
            return (long)i;
    }
    return -1;
}

/* Tags.parseWithMetricAndFilters: "metric{groupby}{others}". */
static int parse_metric_part(query_sub_t *sub, span_t sp, oct_errbuf_t *eb)
{
    if (sp.n == 0) return oct_err(eb, OCT_EPARSE, "Metric cannot be null or empty");
    const char *s = sp.p;
    size_t len = sp.n;
    const char *curly = memchr(s, '{', len);
    if (!curly) {
        sub->metric = span_dup(sp);
        return 0;
    }
    size_t c1 = (size_t)(curly - s);
    if (s[len - 1] != '}')
        return oct_err(eb, OCT_EPARSE, "Missing '}' at the end of: %.*s", (int)len, s);
    long e1 = group_end(s, len, c1);
    span_t g1, g2 = {NULL, 0};
    int has_g2 = 0;
    if (e1 < 0) {
        return oct_err(eb, OCT_EPARSE, "Missing '}' at the end of: %.*s", (int)len, s);
    } else if ((size_t)e1 != len - 1) {
        if (s[e1 + 1] != '{' || group_end(s, len, (size_t)e1 + 1) != (long)len - 1)
            return oct_err(eb, OCT_EPARSE, "Invalid filter groups in: %.*s", (int)len, s);
        has_g2 = 1;
        g2 = (span_t){s + e1 + 2, len - (size_t)e1 - 3};
    }
    g1 = (span_t){curly + 1, (size_t)e1 - c1 - 1};
    sub->metric = span_dup((span_t){s, c1});
    if (c1 == 0) return oct_err(eb, OCT_EPARSE, "Metric cannot be null or empty");
    int rc = 0;
    /* OpenTSDB parses the second (non-group-by) group first: its filters come
     * first in the list. */
    if (has_g2) rc = parse_filter_group(sub, g2, 0, 1, eb);
    if (rc == 0 && g1.n > 0) rc = parse_filter_group(sub, g1, 1, has_g2, eb);
    return rc;
}

typedef struct {
    int rate, has_ds;
    int has_pct, show_buckets; /* percentiles[...] (span pct), show-histogram-buckets */
    span_t pct;
    query_rate_t rate_opts;
    span_t ds;
    int explicit_tags;
    query_rollup_usage_t rollup_usage;
    int pre_agg;
} middle_t;

static int parse_middle(span_t *parts, size_t np, int m_form, middle_t *mid, oct_errbuf_t *eb)
{
    memset(mid, 0, sizeof(*mid));
    mid->rate_opts.counter_max = INT64_MAX;
    for (size_t x = 1; x + 1 < np; x++) {
        span_t p = parts[x];
        if (p.n == 0) continue;
        if (span_starts_ci(p, "rate")) {
            mid->rate = 1;
            query_rate_t r = {0, INT64_MAX, 0, 0};
            if (memchr(p.p, '{', p.n)) {
                int rc = parse_rate_options(p, &r, eb);
                if (rc < 0) return rc;
            }
            mid->rate_opts = r;
        } else if (p.p[0] >= '0' && p.p[0] <= '9') {
            mid->has_ds = 1;
            mid->ds = p;
        } else if (span_starts_ci(p, "percentiles")) {
            mid->has_pct = 1;
            mid->pct = p;
        } else if (span_starts_ci(p, "show-histogram-buckets")) {
            mid->show_buckets = 1;
        } else if (p.n == 7 && span_starts_ci(p, "pre-agg")) {
            mid->pre_agg = 1;
        } else if (span_starts_ci(p, "rollup_")) {
            int rc = query_parse_rollup_usage(p.p, p.n, &mid->rollup_usage, eb);
            if (rc < 0) return rc;
        } else if (span_starts_ci(p, "explicit_tags")) {
            /* tsuid= names its series exactly: nothing left to restrict */
            if (m_form) mid->explicit_tags = 1;
        } else {
            return oct_err(eb, OCT_EPARSE, "Unknown part of the sub-query: %.*s", (int)p.n, p.p);
        }
    }
    return 0;
}

static const char *const rollup_usage_names[] = {NULL, "ROLLUP_NOFALLBACK", "ROLLUP_RAW",
                                                 "ROLLUP_FALLBACK", "ROLLUP_FALLBACK_RAW"};

const char *query_rollup_usage_name(query_rollup_usage_t u)
{
    return (unsigned)u < 5 ? rollup_usage_names[u] : NULL;
}

int query_parse_rollup_usage(const char *usage, size_t n, query_rollup_usage_t *out,
                             oct_errbuf_t *eb)
{
    for (int u = QUERY_ROLLUP_NOFALLBACK; u <= QUERY_ROLLUP_FALLBACK_RAW; u++) {
        const char *name = rollup_usage_names[u];
        if (strlen(name) == n && !strncasecmp(usage, name, n)) {
            *out = (query_rollup_usage_t)u;
            return 0;
        }
    }
    return oct_err(eb, OCT_EPARSE,
                   "Unknown rollup usage: %.*s (one of ROLLUP_RAW, ROLLUP_NOFALLBACK, "
                   "ROLLUP_FALLBACK, ROLLUP_FALLBACK_RAW)",
                   (int)(n > 200 ? 200 : n), usage);
}

/* Validation common to m= and tsuid= (TSSubQuery.validateAndSetQuery order). */
static int finish_sub(query_sub_t *sub, span_t agg, const middle_t *mid, oct_errbuf_t *eb)
{
    if (agg.n == 0) return oct_err(eb, OCT_EPARSE, "Missing the aggregation function");
    char *name = span_dup(agg);
    sub->agg = query_agg_find(name);
    if (!sub->agg) {
        int rc = oct_err(eb, OCT_EPARSE, "No such aggregation function: %s", name);
        free(name);
        return rc;
    }
    free(name);
    sub->rate = mid->rate;
    sub->rate_opts = mid->rate_opts;
    sub->explicit_tags = mid->explicit_tags;
    sub->rollup_usage = mid->rollup_usage;
    sub->pre_agg = mid->pre_agg;
    if (mid->has_ds) {
        char *ds = span_dup(mid->ds);
        int rc = query_parse_downsample(ds, &sub->ds, eb);
        free(ds);
        if (rc < 0) return rc;
        sub->has_downsample = 1;
    }
    if (mid->has_pct) {
        int rc = query_hist_parse_m_part(sub, mid->pct.p, mid->pct.n, eb);
        if (rc < 0) return rc;
    }
    sub->show_histogram_buckets = mid->show_buckets;
    return query_hist_check(sub, eb);
}

static int split_parts(const char *m, span_t *parts, size_t *np, oct_errbuf_t *eb)
{
    size_t n = split_outside(m, strlen(m), ':', parts, 5);
    if (n < 2 || n > 5)
        return oct_err(eb, OCT_EPARSE, "Invalid parameter m=%s (%s :-separated parts)", m,
                       n < 2 ? "not enough" : "too many");
    *np = n;
    return 0;
}

int query_parse_m(query_t *q, const char *m, oct_errbuf_t *eb)
{
    if (!m || !*m) return oct_err(eb, OCT_EPARSE, "The query string was empty");
    span_t parts[5];
    size_t np;
    int rc = split_parts(m, parts, &np, eb);
    if (rc < 0) return rc;
    query_sub_t sub;
    memset(&sub, 0, sizeof(sub));
    middle_t mid;
    rc = parse_metric_part(&sub, parts[np - 1], eb);
    if (rc == 0) rc = parse_middle(parts, np, 1, &mid, eb);
    if (rc == 0) rc = finish_sub(&sub, parts[0], &mid, eb);
    if (rc < 0) {
        query_sub_free(&sub);
        return rc;
    }
    push_sub(q, &sub);
    return 0;
}

int query_parse_tsuid(query_t *q, const char *spec, oct_errbuf_t *eb)
{
    if (!spec || !*spec) return oct_err(eb, OCT_EPARSE, "The tsuid query string was empty");
    span_t parts[5];
    size_t np;
    int rc = split_parts(spec, parts, &np, eb);
    if (rc < 0) return rc;
    query_sub_t sub;
    memset(&sub, 0, sizeof(sub));
    /* The TSUID list: Java's split(",") drops trailing empty items. */
    span_t last = parts[np - 1];
    size_t nt = split_outside(last.p, last.n, ',', NULL, 0);
    span_t *ts = xcalloc(nt, sizeof(*ts));
    split_outside(last.p, last.n, ',', ts, nt);
    while (nt > 0 && ts[nt - 1].n == 0)
        nt--;
    sub.tsuids = xcalloc(nt ? nt : 1, sizeof(char *));
    for (size_t i = 0; i < nt; i++)
        sub.tsuids[sub.n_tsuids++] = span_dup(ts[i]);
    free(ts);
    middle_t mid;
    rc = parse_middle(parts, np, 0, &mid, eb);
    if (rc == 0) rc = finish_sub(&sub, parts[0], &mid, eb);
    if (rc == 0 && sub.n_tsuids == 0)
        rc = oct_err(eb, OCT_EPARSE, "Missing the metric or tsuids, provide at least one");
    if (rc < 0) {
        query_sub_free(&sub);
        return rc;
    }
    push_sub(q, &sub);
    return 0;
}
