/* exec_int.h -- private to src/exec: the executor's state shared by its
 * files. exec.c drives a query (options, selection, grouping, delete),
 * exec_load.c reads a group's series (in parallel), exec_fast.c is the
 * fixed-interval downsampler fed by tsdb_reader_scan, exec_group.c
 * aggregates a group and hands it to the callback, exec_hist.c does the same
 * for histogram sub-queries. */
#ifndef OCT_EXEC_EXEC_INT_H
#define OCT_EXEC_EXEC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/rowkey.h"
#include "common/json.h"
#include "exec/exec.h"
#include "tsdb/read.h"
#include "tsdb/rollup.h"

#define DAY_MS    86400000LL
#define CHUNK_MS  (4 * 3600000LL) /* fast downsampling reads this much at a time */
#define MAX_PAIRS 128             /* a TSUID is at most 255 bytes: 255 / 2 pairs */

#define MAX_WORKERS      4  /* loading threads per query (capped by the CPUs online) */
#define PARALLEL_MIN_SER 16 /* fewer series in a group: not worth a thread */

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* Name / verdict cache: (tag, id) -> string or small int. tag 1 = tagk name,
 * 2 = tagv name, 16 + i = verdict of filter i for tag value id. */
typedef struct {
    uint64_t id;
    uint32_t tag;
    uint32_t used;
    const char *s;
    size_t len;
} nm_slot_t;

typedef struct {
    nm_slot_t *t;
    size_t mask, n;
} nmap_t;

/* A list of TSUIDs in one byte buffer (offsets, so it may grow). */
typedef struct {
    uint32_t off;
    uint16_t len;
} tref_t;

typedef struct {
    uint8_t *buf;
    size_t n, cap;
    tref_t *v;
    size_t nv, capv;
} tlist_t;

/* The fixed-interval downsampler of one series, fed the runs of
 * tsdb_reader_scan: what query_downsample computes over the scan window
 * [lo, hi] (without fill one bucket per run of points in a bucket, with
 * fill every bucket from the one holding lo to the one holding hi). A
 * bucket is computed from the run's columns where it lies in one run; the
 * last bucket of a run may go on in the next, so its points wait in carry
 * (a few dozen at 1 s data and 1 m buckets). */
typedef struct {
    const query_downsample_t *ds;
    int fn; /* the aggregator kind, one exec__fast_kind returns */
    int64_t iv;
    int64_t next_fill; /* fill: the next bucket to emit */
    query_dp_t *res;   /* output, malloc'd */
    size_t n, cap;
    int64_t carry_s; /* carry's bucket; valid when nc > 0 */
    uint64_t *cv;    /* carry: values, */
    uint8_t *cf;     /* their float flags */
    int ctypes;      /* and kind as in tsdb_cols_fn */
    size_t nc, ccap;
} dsb_t;

/* One loading thread's state: its reader (buffers reused across series) and
 * its own error buffer. */
typedef struct {
    tsdb_reader_t *rd;
    oct_errbuf_t eb;
    dsb_t dsb; /* its carry buffers are reused from series to series */
} xworker_t;

/* A filter resolved for one sub-query. */
typedef struct {
    const query_filter_t *f;
    uint64_t tagk;
    int pushed;     /* case-sensitive literal_or resolved to UIDs: match on UIDs */
    uint64_t *lits; /* sorted */
    size_t n_lits;
} xfilter_t;

/* A matched series: its TSUID and group key (pointers into a tlist buffer
 * that no longer grows). */
typedef struct {
    const uint8_t *tsuid;
    size_t len;
    const uint8_t *gkey;
    size_t glen;
} xseries_t;

/* Where a sub-query's points come from when rollups are configured
 * (exec_rollup.c, docs/rollups.md "Querying"): a 2.4 rollup or
 * pre-aggregate table instead of the data table. */
enum {
    EXEC_RU_PLAIN, /* the values of aggregator `id`, through the user's downsampler */
    EXEC_RU_AVG,   /* per bucket: sum of the `id` (sum) values / sum of the `id2` (count) ones */
    EXEC_RU_COUNT, /* per bucket: the sum of the `id` (count) values */
    EXEC_RU_DEV,   /* per bucket: population std-dev from the sums of `id` (sum), `id2`
                    * (count) and `id3` (octsdb's sum of squares) */
};
typedef struct {
    const char *table;                 /* 2.4 table name; NULL = the raw data table */
    const query_rollup_interval_t *iv; /* NULL: hour rows of ordinary cells (pre-aggregates
                                        * written without an interval) */
    int id, id2;
    int mode;
    int id3;
    /* tsd.rollups.split_query.enable: the table answers before split_ms
     * (now - delaySla; INT64_MAX: no SLA) and, split_auto, before the
     * series' first hour not rolled up yet; raw data the rest */
    int64_t split_ms;
    int split_auto;
} exec_ru_t;

typedef struct {
    tsdb_t *db;
    uid_registry_t *uids;
    codec_rowkey_layout_t rk;
    unsigned mw, kw, vw;
    const query_t *q;
    const exec_opts_t *o;
    exec_result_fn fn;
    void *ctx;
    exec_stats_t st;
    oct_errbuf_t *eb;
    int64_t t0, deadline;
    json_arena_t names;        /* cached names: live for the whole query */
    xworker_t wk[MAX_WORKERS]; /* loading threads' readers, made on first use */
    nmap_t nm;
    const char *tz;
    const exec_ru_t *ru;     /* the current sub-query's source; NULL = raw data */
    const exec_ru_t *ru_end; /* the end of its plans (ru + 1 .. ru_end: its fallbacks) */
    /* delete_data: every matched series and its scan window */
    tlist_t del;
    int64_t *del_lo, *del_hi;
    size_t del_cap;
} ex_t;

typedef struct {
    size_t n;
    uint64_t k[MAX_PAIRS], v[MAX_PAIRS];
} pairs_t;

/* One series' annotations, copied out of its read (the reader hands out the
 * rows it fetched, so notes cost no second read of the rows). */
typedef struct {
    char **json;
    size_t *len;
    size_t n, cap;
} xnotes_t;

/* exec.c */
int exec__check_time(ex_t *x);
/* The name of a UID, cached for the whole query (x->names). */
int exec__name(ex_t *x, codec_uid_kind_t kind, uint64_t id, const char **s, size_t *len);
void exec__tsuid_pairs(const ex_t *x, const uint8_t *t, size_t len, pairs_t *p);

/* exec_load.c */
unsigned exec__n_workers(void);
/* Counts nr more raw points read against max_points (OCT_ERANGE with OpenTSDB's text in
 * w->eb); with notes, takes the annotations of w's last read. */
int exec__after_read(ex_t *x, xworker_t *w, size_t nr, xnotes_t *notes);
void exec__xnotes_free(xnotes_t *ns);
/* Loads ser[0..n) into arr/lens (empty[i] set for series without points)
 * and, with notes, each series' annotations. On error, the error of the
 * lowest failing series index is in x->eb. */
int exec__load_all(ex_t *x, const query_sub_t *sub, const xseries_t *ser, size_t n, int64_t lo,
                   int64_t hi, query_dp_t **arr, xnotes_t *notes, size_t *lens, uint8_t *empty);

/* load_series on the raw data table whatever x->ru says (a rollup source
 * falls back to it for one series); 1 when the series has no point. */
int exec__load_raw(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid, size_t len,
                   int64_t lo, int64_t hi, xnotes_t *notes, query_dp_t **out, size_t *n_out);

/* The downsampling of nr points (sorted) over the scan window [lo, hi] by
 * ds, fixed or calendar intervals or "all"; *out is malloc'd. 0 or an error
 * in w->eb. */
int exec__downsample(ex_t *x, xworker_t *w, const query_downsample_t *ds, int64_t lo, int64_t hi,
                     const query_dp_t *raw, size_t nr, query_dp_t **out, size_t *n_out);

/* exec_rollup.c */
#define EXEC_RU_MAX_PLANS 16
/* The sources to try for sub, in order (each next one only when the
 * previous answered nothing: rollupUsage's fallbacks): *n = 0 means the raw
 * data table only. OCT_EPARSE (a 400) for what cannot be answered. */
int exec__rollup_plan(ex_t *x, const query_sub_t *sub, exec_ru_t *plans, size_t *n);
/* load_series for x->ru: the series' downsampled (and rated) points from
 * its rollup table; 1 when it has none in the window. */
int exec__load_rollup(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid,
                      size_t len, int64_t lo, int64_t hi, query_dp_t **out, size_t *n_out);

/* exec_fast.c: fixed-interval downsampling straight from the read columns */
#define EXEC_FAST_NO (-1)
/* The aggregator kind (QUERY_AGG_SUM, _AVG, _MIN, _MAX or _COUNT) whose
 * buckets exec_fast.c computes itself for this sub-query, or EXEC_FAST_NO
 * (the general path through query_downsample). */
int exec__fast_kind(const query_sub_t *sub);
/* A tsdb_cols_fn: buckets one run of points into ctx, a dsb_t. */
int exec__dsb_run(void *ctx, const int64_t *ts, const uint64_t *v, const uint8_t *isf, int types,
                  size_t n);
/* Ends the series: the waiting bucket, then (fill) the buckets up to the
 * one holding hi. */
void exec__dsb_finish(dsb_t *b, int64_t hi);

/* exec_group.c */
/* Aggregates series[0..n) (one group) and calls back (a histogram sub-query goes to
 * exec__emit_hist_group). */
int exec__emit_group(ex_t *x, const query_sub_t *sub, const char *metric, const xseries_t *ser,
                     size_t n, int64_t lo, int64_t hi);
/* Names r's tags, aggregated tag keys and (show_tsuids) TSUIDs from the series ser[0..n)
 * of one output; the arrays live in ga, the names in x->names. */
int exec__group_names(ex_t *x, const xseries_t *ser, size_t n, json_arena_t *ga, exec_result_t *r);

/* exec_hist.c */
/* A histogram sub-query's group (docs/histograms.md): its series' histogram points summed
 * per timestamp (or per downsample interval), then one output per percentile and, with
 * showHistogramBuckets, one per bucket. */
int exec__emit_hist_group(ex_t *x, const query_sub_t *sub, const char *metric, const xseries_t *ser,
                          size_t n, int64_t lo, int64_t hi);

#endif
