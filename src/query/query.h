/* query.h -- OpenTSDB 2.4's query model and its pure semantics
 * (docs/query.md): what a /api/query asks for, and the per-series and
 * cross-series arithmetic that answers it. No storage here: the executor
 * that selects series and reads their points lives in tsdb/ (the layer
 * above); this module parses, validates and computes.
 *
 * Pipeline for one sub-query (docs/query.md section 1):
 *   raw points of each series -> [downsample (+fill)] -> [rate]
 *     -> cross-series aggregation with interpolation, per group
 *     -> points with start <= ts <= end.
 *
 * Ownership: a query_t owns every string and array it points to
 * (query_free). Parsing functions never keep pointers into their input. */
#ifndef OCT_QUERY_QUERY_H
#define OCT_QUERY_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"

/* ---- values flowing through the pipeline ------------------------------ */

/* A point after raw decoding: integer or double. Downsampled and rate values
 * are always doubles (as OpenTSDB). is_null marks fill policy `null` (emitted
 * as JSON null); a NaN double is emitted as "NaN". */
typedef struct {
    int64_t ts_ms;
    union {
        int64_t i;
        double f;
    } v;
    uint8_t is_int;
    uint8_t is_null;
} query_dp_t;

/* ---- aggregators (docs/query.md section 6) -------------------------- */

typedef enum {
    QUERY_INTERP_LERP, /* linear interpolation */
    QUERY_INTERP_ZIM,  /* missing -> 0 */
    QUERY_INTERP_MAX,  /* missing -> max sentinel (mimmin) */
    QUERY_INTERP_MIN,  /* missing -> min sentinel (mimmax) */
    QUERY_INTERP_PREV, /* missing -> previous value of that series (pfsum) */
} query_interp_t;

typedef struct query_agg query_agg_t; /* opaque, static: never freed */

/* The function an aggregator applies, whatever its name and interpolation
 * (zimsum and pfsum are sums, mimmin a min, the p* and ep* names
 * percentiles). Code that treats some aggregators specially (the executor's
 * fast downsampler) tests this, never the name. */
typedef enum {
    QUERY_AGG_SUM,
    QUERY_AGG_MIN,
    QUERY_AGG_MAX,
    QUERY_AGG_AVG,
    QUERY_AGG_MEDIAN,
    QUERY_AGG_DEV,
    QUERY_AGG_DIFF,
    QUERY_AGG_MULT,
    QUERY_AGG_SQUARESUM,
    QUERY_AGG_COUNT,
    QUERY_AGG_FIRST,
    QUERY_AGG_LAST,
    QUERY_AGG_NONE,
    QUERY_AGG_PERCENTILE,
} query_agg_kind_t;

/* The aggregator named `name` (exact, as /api/aggregators lists), or NULL. */
const query_agg_t *query_agg_find(const char *name);
const char *query_agg_name(const query_agg_t *a);
query_agg_kind_t query_agg_kind(const query_agg_t *a);
query_interp_t query_agg_interp(const query_agg_t *a);
/* All names, NULL-terminated, in a stable order (for /api/aggregators). */
const char *const *query_agg_names(void);

/* Aggregates n values (each int or double) into *out per the aggregator's
 * function. Integer result iff every input is an integer and the function
 * keeps integers (sum, min, max, ...). NaN inputs are skipped by the double
 * path; all-NaN -> NaN. Used both across series and inside downsampling
 * buckets. n == 0 -> returns 0 (no value). Returns 1 if *out was set.
 * avg/dev/percentiles of integers are integers only when exactly integral
 * (never truncated); `none` with n > 1 -> OCT_EINVAL; -ENOMEM possible for
 * median/percentiles of more than 256 values. */
int query_agg_apply(const query_agg_t *a, const query_dp_t *vals, size_t n, query_dp_t *out);

/* ---- sub-query specification ---------------------------------------- */

typedef enum { QUERY_FILL_NONE = 0, QUERY_FILL_NAN, QUERY_FILL_NULL, QUERY_FILL_ZERO } query_fill_t;

typedef struct {
    int64_t interval_ms; /* fixed interval; for calendar specs, the nominal length */
    int all;             /* "0all-<agg>": one bucket for the whole query */
    int calendar;        /* "1dc", or useCalendar: align to the calendar in 'timezone' */
    int64_t count;       /* calendar: number of units */
    char unit;           /* 'S' ms, 's', 'm', 'h', 'd', 'w', 'n' (month), 'y' */
    const query_agg_t *agg;
    query_fill_t fill;
} query_downsample_t;

typedef struct {
    int counter;
    int64_t counter_max; /* default INT64_MAX */
    int64_t reset_value; /* default 0 */
    int drop_resets;
} query_rate_t;

typedef enum {
    QUERY_FILTER_LITERAL_OR = 0,
    QUERY_FILTER_ILITERAL_OR,
    QUERY_FILTER_NOT_LITERAL_OR,
    QUERY_FILTER_NOT_ILITERAL_OR,
    QUERY_FILTER_WILDCARD,
    QUERY_FILTER_IWILDCARD,
    QUERY_FILTER_REGEXP,
    QUERY_FILTER_NOT_KEY,
    QUERY_FILTER_TYPE_COUNT
} query_filter_type_t;

typedef struct query_filter {
    query_filter_type_t type;
    char *tagk;
    char *expr; /* as given, e.g. "web01|web02", "web*", "^web[0-9]+$" */
    int group_by;
    void *compiled; /* private: literals, pattern parts, PCRE2 code */
} query_filter_t;

/* rollupUsage (docs/rollups.md, "Querying"): UNSET reads as NOFALLBACK when
 * rollups are configured and as raw when they are not. */
typedef enum {
    QUERY_ROLLUP_UNSET = 0,
    QUERY_ROLLUP_NOFALLBACK,
    QUERY_ROLLUP_RAW,
    QUERY_ROLLUP_FALLBACK,
    QUERY_ROLLUP_FALLBACK_RAW,
} query_rollup_usage_t;

typedef struct {
    const query_agg_t *agg;
    char *metric;  /* NULL when tsuids are given */
    char **tsuids; /* hex strings */
    size_t n_tsuids;
    int has_downsample;
    query_downsample_t ds;
    int rate;
    query_rate_t rate_opts;
    query_filter_t *filters;
    size_t n_filters;
    int explicit_tags;
    int index;                         /* position in the request (query.index in showQuery) */
    query_rollup_usage_t rollup_usage; /* rollupUsage / m= rollup_<usage> */
    int pre_agg;                       /* preAggregate / m= pre-agg */
    /* a histogram sub-query (docs/histograms.md) when either is set */
    double *percentiles; /* ascending (query_hist_check sorts them) */
    size_t n_percentiles;
    int show_histogram_buckets;
} query_sub_t;

typedef struct {
    int64_t start_ms, end_ms; /* inclusive */
    char *timezone;           /* NULL = tsd.core.timezone / UTC */
    int use_calendar;
    int ms_resolution, show_tsuids, no_annotations, global_annotations, show_query, show_stats,
        show_summary, delete_data, arrays;
    query_sub_t *subs;
    size_t n_subs;
} query_t;

/* Frees everything q owns (not q itself) and zeroes it. */
void query_free(query_t *q);
/* The same for one sub-query. */
void query_sub_free(query_sub_t *s);
/* Do two sub-queries ask for the same thing? (OpenTSDB drops duplicate
 * sub-queries; query_parse_m/query_parse_tsuid already do.) */
int query_sub_equal(const query_sub_t *a, const query_sub_t *b);

/* ---- parsing (query_parse.c) ------------------------------------------ */

/* OpenTSDB's date strings (docs/query.md section 2): "now", "<n><unit>-ago"
 * (ms s m h d w n y), "<digits>ms", absolute "yyyy/MM/dd[-HH:mm[:ss]]" (also with a
 * space) in 'tz' (NULL = UTC), numeric seconds (<= 10 chars) or ms, and
 * "<10 digits>.<1..3 digits>" as seconds with a fraction. now_ms is the
 * clock. Returns 0 or OCT_EPARSE with OpenTSDB's message. */
OCT_MUST_CHECK int query_parse_time(const char *s, const char *tz, int64_t now_ms, int64_t *out_ms,
                                    oct_errbuf_t *eb);

/* A duration "<n><unit>" (ms s m h d w n y, any case), s[0..len), in ms,
 * with its count and unit letter ('S' for ms; both may be NULL). Returns 0
 * or OCT_EPARSE with OpenTSDB's text. */
OCT_MUST_CHECK int query_parse_duration(const char *s, size_t len, int64_t *ms, int64_t *count,
                                        char *unit, oct_errbuf_t *eb);

/* "<n><unit>[c]-<agg>[-<fill>]" or "0all-<agg>". */
OCT_MUST_CHECK int query_parse_downsample(const char *s, query_downsample_t *out, oct_errbuf_t *eb);

/* One `m=` parameter value (docs/query.md section 3) appended to q->subs. */
OCT_MUST_CHECK int query_parse_m(query_t *q, const char *m, oct_errbuf_t *eb);
/* One `tsuid=` parameter value. */
OCT_MUST_CHECK int query_parse_tsuid(query_t *q, const char *spec, oct_errbuf_t *eb);

/* A rollup usage, usage[0..n): "ROLLUP_RAW", "ROLLUP_NOFALLBACK",
 * "ROLLUP_FALLBACK" or "ROLLUP_FALLBACK_RAW" (the `rollupUsage` of a POST or
 * the `rollup_*` part of `m=`), any case, into *out. Anything else is
 * OCT_EPARSE with a message naming it (2.4 silently reads it as
 * ROLLUP_NOFALLBACK). */
OCT_MUST_CHECK int query_parse_rollup_usage(const char *usage, size_t n, query_rollup_usage_t *out,
                                            oct_errbuf_t *eb);
/* The name of a usage ("ROLLUP_RAW"...), NULL for UNSET. */
const char *query_rollup_usage_name(query_rollup_usage_t u);

/* Builds a filter (compiling its expression); "type(expr)" text forms too.
 * OCT_EPARSE on an unknown type or a bad regexp. */
OCT_MUST_CHECK int query_filter_init(query_filter_t *f, const char *type, const char *tagk,
                                     const char *expr, int group_by, oct_errbuf_t *eb);
void query_filter_free(query_filter_t *f);
/* Does tag value v (of the filter's tagk) pass? For NOT_KEY, v == NULL means
 * the series lacks the key. */
int query_filter_match(const query_filter_t *f, const char *v, size_t len);
/* Name ("literal_or"...), description and examples for /api/config/filters. */
const char *query_filter_type_name(query_filter_type_t t);
const char *query_filter_type_description(query_filter_type_t t);
const char *query_filter_type_examples(query_filter_type_t t);

/* The legacy tag map / `{}` form: k=v, k=a|b, k=*, k=web*, k=type(expr). */
OCT_MUST_CHECK int query_filter_from_tag(query_filter_t *f, const char *tagk, const char *value,
                                         int group_by, oct_errbuf_t *eb);

/* ---- histogram sub-queries (query_hist.c, docs/histograms.md) ---------- */

/* Does s read histograms (percentiles or showHistogramBuckets asked for)? */
int query_sub_is_histogram(const query_sub_t *s);

/* The m= part "percentiles[<p>,<p>...]" (p[0..n)) into s->percentiles. OCT_EPARSE
 * "Malformated percentile query paramater: <part>" (2.4's spelling) when the brackets or a
 * number are wrong. */
OCT_MUST_CHECK int query_hist_parse_m_part(query_sub_t *s, const char *p, size_t n,
                                           oct_errbuf_t *eb);

/* 2.4's checks of a histogram sub-query, then octsdb's (a no-op for other sub-queries):
 * aggregator sum or none, downsampling by sum, every percentile in [0, 100] (2.4's texts),
 * and neither rate nor a fill policy (not implemented for histograms). Sorts the
 * percentiles. OCT_EPARSE with the message. */
OCT_MUST_CHECK int query_hist_check(query_sub_t *s, oct_errbuf_t *eb);

/* A histogram's buckets, ascending, with their counts: the input of the percentile. */
typedef struct {
    float lo, hi;
    uint64_t n;
} query_hbucket_t;

/* The p-th percentile (0 <= p <= 100) of buckets b[0..n) (ascending; under- and overflow
 * are not passed): the midpoint of the first bucket whose cumulative count c, with total
 * count T, has c > 0 and c * 100 / T >= p. NaN when T is 0. */
double query_hist_percentile(const query_hbucket_t *b, size_t n, double p);

/* Java's Float.toString(f), which 2.4 uses in output names ("75.0", "99.9", "1.0E-4"):
 * into buf (>= 24 bytes), returns its length. */
size_t query_java_float(float f, char *buf);

/* ---- per-series and cross-series math (query_math.c) ------------------- */

/* Downsamples n raw points (sorted) of one series into buckets aligned as
 * OpenTSDB aligns them (epoch multiples of the interval, or the calendar in
 * tz), filling empty buckets between start_ms and end_ms per ds->fill.
 * Returns the number written to out (cap >= query_downsample_bound), or a
 * negative error (OCT_EINVAL for the `none` aggregator or a bad interval,
 * OCT_ENOSPC, OCT_ENOTFOUND for an unknown tz). Without fill every point is
 * bucketed; with fill only [bucket(start_ms), bucket(end_ms)] are emitted.
 * "all": one bucket stamped start_ms over the points in [start_ms, end_ms]. */
size_t query_downsample_bound(const query_downsample_t *ds, int64_t start_ms, int64_t end_ms,
                              size_t n_in);
long query_downsample(const query_downsample_t *ds, const char *tz, int64_t start_ms,
                      int64_t end_ms, const query_dp_t *in, size_t n, query_dp_t *out, size_t cap);

/* Rate of change per second (docs/query.md section 5), in place: returns
 * the number of output points (the first point yields none). */
size_t query_rate(const query_rate_t *r, query_dp_t *pts, size_t n);

/* Aggregates n_series series (each sorted) into one, with the aggregator's
 * interpolation, as OpenTSDB's AggregationIterator (docs/query.md section 6).
 * 'rate' selects step instead of LERP for non-aligned series. *out is malloc'd.
 * A series contributes only between its first and last point; MAX/MIN
 * interpolation (mimmin/mimmax) leaves a missing series out. `none` is the
 * caller's job (emit each series): OCT_EINVAL for more than one series.
 * Returns the count or a negative error (-ENOMEM). */
long query_aggregate(const query_agg_t *a, int rate, const query_dp_t *const *series,
                     const size_t *lens, size_t n_series, query_dp_t **out);

/* As query_aggregate, but only the output points with t_from <= ts < t_to:
 * ranges that tile the time line give query_aggregate's output in pieces,
 * so pieces can be computed at once in several threads. */
long query_aggregate_range(const query_agg_t *a, int rate, const query_dp_t *const *series,
                           const size_t *lens, size_t n_series, int64_t t_from, int64_t t_to,
                           query_dp_t **out);

#endif
