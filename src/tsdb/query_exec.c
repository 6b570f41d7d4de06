/* query_exec.c -- runs a query_t against the database: series selection from
 * the in-memory index, grouping, per-series reading and the pure pipeline of
 * query/ (downsample, rate, aggregate), one group at a time.
 *
 * Design. Selection never touches the store: the series index answers
 * "series of metric m with tagk k (= v)" from memory, so a candidate set is
 * one posting list (the union of the postings of the shortest case-sensitive
 * literal_or, else the postings of one filtered key, else the metric's), and
 * every candidate is then checked on its TSUID bytes: keys present, explicit
 * tags, and the filters. Literal filters compare UIDs; the others compare
 * names, resolved once per tag value and query (a small open-addressing map
 * caches names and per-filter verdicts), so 10,000 candidates with 50
 * distinct hosts cost 50 name lookups. The matches are sorted by (group key,
 * TSUID), which makes each group a contiguous run in OpenTSDB's output
 * order. Groups are then materialised one at a time: each series is read
 * through a per-thread tsdb_reader_t (buffers reused, so no allocation per
 * series), converted in place to query_dp_t (same layout but the flag
 * byte), downsampled -- a day-aligned chunk at a time for fixed intervals,
 * whose buckets never straddle a day-multiple boundary -- and rated. A
 * group of at least PARALLEL_MIN_SER series is loaded by up to MAX_WORKERS
 * threads (one per CPU online) pulling series from a shared counter; each
 * result lands in its series' slot, so the output does not depend on the
 * threads. The group is then aggregated, handed to the callback and freed
 * before the next group is read.
 *
 * Fixed-interval downsampling with sum, avg, min, max or count (and their
 * aliases) skips the point arrays and query_downsample: the reader hands
 * over each flushed block decoded into columns (tsdb_reader_scan, read.h)
 * and dsb_run buckets it while it is still in the cache, with query_agg.c's
 * arithmetic (same bits); a bucket that goes on into the next block waits
 * in a small carry buffer. A series is read CHUNK_MS at a time. Annotations, only when asked for,
 * come out of the rows the series' read fetched anyway (tsdb_reader_annotations), not a second
 * read.
 *
 * Deleting (delete_data) flushes the head, then removes the rows of every
 * matched series in its scan window, after the last callback, as OpenTSDB
 * deletes the rows it scanned. */
#include "tsdb/query_exec.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/rowkey.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "tsdb/annotation.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

#define DAY_MS    86400000LL
#define CHUNK_MS  (4 * 3600000LL) /* fast downsampling reads this much at a time */
#define HOUR_S    3600LL
#define MAX_PAIRS 128 /* a TSUID is at most 255 bytes: 255 / 2 pairs */

_Static_assert(sizeof(codec_point_t) == sizeof(query_dp_t) &&
                   offsetof(codec_point_t, ts_ms) == offsetof(query_dp_t, ts_ms) &&
                   offsetof(codec_point_t, val) == offsetof(query_dp_t, v) &&
                   offsetof(codec_point_t, is_float) == offsetof(query_dp_t, is_int),
               "points are converted to query_dp_t in place: only the flag bytes change");

/* ---- small helpers ------------------------------------------------------ */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t floor_div(int64_t a, int64_t b)
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

static size_t nm_hash(uint32_t tag, uint64_t id)
{
    uint64_t h = (id ^ ((uint64_t)tag << 56)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static nm_slot_t *nm_find(nmap_t *m, uint32_t tag, uint64_t id)
{
    if (!m->t) return NULL;
    for (size_t i = nm_hash(tag, id) & m->mask;; i = (i + 1) & m->mask) {
        nm_slot_t *s = &m->t[i];
        if (!s->used) return NULL;
        if (s->tag == tag && s->id == id) return s;
    }
}

static nm_slot_t *nm_add(nmap_t *m, uint32_t tag, uint64_t id)
{
    if (!m->t || (m->n + 1) * 2 > m->mask + 1) {
        size_t om = m->t ? m->mask : 0;
        nm_slot_t *old = m->t;
        m->mask = old ? (om + 1) * 2 - 1 : 255;
        m->t = xcalloc(m->mask + 1, sizeof *m->t);
        for (size_t i = 0; old && i <= om; i++) {
            if (!old[i].used) continue;
            size_t j = nm_hash(old[i].tag, old[i].id) & m->mask;
            while (m->t[j].used)
                j = (j + 1) & m->mask;
            m->t[j] = old[i];
        }
        free(old);
    }
    size_t j = nm_hash(tag, id) & m->mask;
    while (m->t[j].used)
        j = (j + 1) & m->mask;
    nm_slot_t *s = &m->t[j];
    memset(s, 0, sizeof *s);
    s->used = 1;
    s->tag = tag;
    s->id = id;
    m->n++;
    return s;
}

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

static void tl_add(tlist_t *l, const uint8_t *p, size_t len)
{
    if (l->n + len > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        while (l->cap < l->n + len)
            l->cap *= 2;
        l->buf = xrealloc(l->buf, l->cap);
    }
    if (l->nv == l->capv) {
        l->capv = l->capv ? l->capv * 2 : 256;
        l->v = xrealloc(l->v, l->capv * sizeof *l->v);
    }
    if (len) memcpy(l->buf + l->n, p, len);
    l->v[l->nv].off = (uint32_t)l->n;
    l->v[l->nv].len = (uint16_t)len;
    l->nv++;
    l->n += len;
}

static void tl_free(tlist_t *l)
{
    free(l->buf);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int tl_collect(void *ctx, const uint8_t *tsuid, size_t len)
{
    tl_add(ctx, tsuid, len);
    return 0;
}

/* ---- the executor's state --------------------------------------------- */

#define MAX_WORKERS      4  /* loading threads per query (capped by the CPUs online) */
#define PARALLEL_MIN_SER 16 /* fewer series in a group: not worth a thread */

/* The fixed-interval downsampler of one series, fed the runs of
 * tsdb_reader_scan: what query_downsample computes over the scan window
 * [lo, hi] (without fill one bucket per run of points in a bucket, with
 * fill every bucket from the one holding lo to the one holding hi). A
 * bucket is computed from the run's columns where it lies in one run; the
 * last bucket of a run may go on in the next, so its points wait in carry
 * (a few dozen at 1 s data and 1 m buckets). */
typedef struct {
    const query_downsample_t *ds;
    int fn;
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

typedef struct {
    tsdb_t *db;
    uid_registry_t *uids;
    codec_rowkey_layout_t rk;
    unsigned mw, kw, vw;
    const query_t *q;
    const query_exec_opts_t *o;
    query_result_fn fn;
    void *ctx;
    query_exec_stats_t st;
    oct_errbuf_t *eb;
    int64_t t0, deadline;
    json_arena_t names;        /* cached names: live for the whole query */
    xworker_t wk[MAX_WORKERS]; /* loading threads' readers, made on first use */
    nmap_t nm;
    const char *tz;
    /* delete_data: every matched series and its scan window */
    tlist_t del;
    int64_t *del_lo, *del_hi;
    size_t del_cap;
} ex_t;

static int ex_check_time(ex_t *x)
{
    if (x->deadline && mono_ns() > x->deadline)
        return oct_err(x->eb, -ETIMEDOUT, "Query timed out after %lld ms",
                       (long long)x->o->timeout_ms);
    return 0;
}

static int ex_name(ex_t *x, codec_uid_kind_t kind, uint64_t id, const char **s, size_t *len)
{
    uint32_t tag = kind == CODEC_UID_TAGK ? 1 : kind == CODEC_UID_TAGV ? 2 : 3;
    nm_slot_t *sl = nm_find(&x->nm, tag, id);
    if (sl) {
        *s = sl->s;
        *len = sl->len;
        return 0;
    }
    uint8_t buf[UID_NAME_MAX];
    size_t bl;
    int rc = uid_get_name(x->uids, kind, id, buf, sizeof buf, &bl, x->eb);
    if (rc) return rc;
    sl = nm_add(&x->nm, tag, id);
    sl->s = json_arena_strndup(&x->names, (const char *)buf, bl);
    sl->len = bl;
    *s = sl->s;
    *len = bl;
    return 0;
}

/* ---- options ------------------------------------------------------------ */

void query_exec_opts_default(query_exec_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->max_series = 1000000;
    o->max_held_points = 50000000;
    o->expansion_limit = 4096;
}

void query_exec_opts_from_config(query_exec_opts_t *o, const oct_config_t *cfg)
{
    query_exec_opts_default(o);
    if (!cfg) return;
    if (oct_config_is_known("tsd.query.timeout"))
        o->timeout_ms = oct_config_get_int(cfg, "tsd.query.timeout");
    o->max_points = (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.data_points.default");
    if (oct_config_is_known("tsd.query.limits.series.default"))
        o->max_series = (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.series.default");
    if (oct_config_is_known("tsd.query.limits.held_points.default"))
        o->max_held_points =
            (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.held_points.default");
    o->skip_unresolved_tagvs = oct_config_get_bool(cfg, "tsd.query.skip_unresolved_tagvs");
    o->expansion_limit = (size_t)oct_config_get_int(cfg, "tsd.query.filter.expansion_limit");
    const char *tz = oct_config_get(cfg, "tsd.core.timezone");
    o->timezone = tz && *tz ? tz : NULL;
}

/* ---- scan window (TsdbQuery.getScanStartTimeSeconds / EndTimeSeconds) -- */

void query_exec_scan_window(const query_t *q, const query_sub_t *sub, int64_t *lo, int64_t *hi)
{
    int64_t iv = sub && sub->has_downsample && !sub->ds.all ? sub->ds.interval_ms : 0;
    int64_t start = floor_div(q->start_ms, 1000);
    if (iv > 0) start -= ((1000 * start) % iv) / 1000;
    start -= start % HOUR_S;
    if (start < 0) start = 0;
    /* OpenTSDB keeps the end in ms and bumps the second it divides to. */
    int64_t end = floor_div(q->end_ms, 1000) + 1;
    if (iv > 0) {
        end += (iv - (1000 * end) % iv) / 1000;
        if (end % HOUR_S) end += HOUR_S - end % HOUR_S;
    } else {
        end += HOUR_S - end % HOUR_S;
    }
    *lo = start * 1000;
    *hi = end * 1000 - 1;
}

/* ---- selection ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Splits a literal_or expression as Java's split("\\|") (trailing empties
 * dropped) and resolves each literal to a tag value UID. */
static int resolve_literals(ex_t *x, xfilter_t *xf)
{
    const char *e = xf->f->expr;
    size_t cap = 1;
    for (const char *p = e; *p; p++)
        cap += *p == '|';
    if (cap > x->o->expansion_limit) return 0; /* OpenTSDB: post-filter on names only */
    xf->lits = xmalloc(cap * sizeof *xf->lits);
    size_t n_items = 0, last_nonempty = 0;
    const char *start = e;
    /* Count items first to know which trailing empties to drop. */
    for (const char *p = e;; p++) {
        if (*p == '|' || !*p) {
            n_items++;
            if (p > start) last_nonempty = n_items;
            if (!*p) break;
            start = p + 1;
        }
    }
    start = e;
    size_t item = 0;
    for (const char *p = e;; p++) {
        if (*p == '|' || !*p) {
            item++;
            if (item > last_nonempty) break;
            uint64_t id;
            oct_errbuf_t leb;
            int rc = uid_get_id(x->uids, CODEC_UID_TAGV, (const uint8_t *)start,
                                (size_t)(p - start), &id, &leb);
            if (rc == OCT_ENOSUCHNAME && x->o->skip_unresolved_tagvs) {
                /* dropped */
            } else if (rc) {
                return oct_err(x->eb, rc, "%s", leb.msg);
            } else {
                xf->lits[xf->n_lits++] = id;
            }
            if (!*p) break;
            start = p + 1;
        }
    }
    qsort(xf->lits, xf->n_lits, sizeof *xf->lits, cmp_u64);
    xf->pushed = 1;
    return 0;
}

typedef struct {
    size_t n;
    uint64_t k[MAX_PAIRS], v[MAX_PAIRS];
} pairs_t;

static void tsuid_pairs(const ex_t *x, const uint8_t *t, size_t len, pairs_t *p)
{
    size_t pw = x->kw + x->vw;
    p->n = len > x->mw ? (len - x->mw) / pw : 0;
    if (p->n > MAX_PAIRS) p->n = MAX_PAIRS;
    for (size_t i = 0; i < p->n; i++) {
        p->k[i] = codec_uid_decode(t + x->mw + i * pw, x->kw);
        p->v[i] = codec_uid_decode(t + x->mw + i * pw + x->kw, x->vw);
    }
}

static int pair_find(const pairs_t *p, uint64_t k, uint64_t *v)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->k[i] == k) {
            *v = p->v[i];
            return 1;
        }
    return 0;
}

/* 1 if the series passes every filter, 0 if not, negative on error. */
static int series_passes(ex_t *x, const xfilter_t *xf, size_t nf, const pairs_t *p,
                         const uint64_t *fkeys, size_t nfk, int explicit_tags)
{
    if (explicit_tags) {
        for (size_t i = 0; i < p->n; i++) {
            int found = 0;
            for (size_t j = 0; j < nfk && !found; j++)
                found = fkeys[j] == p->k[i];
            if (!found) return 0;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        uint64_t v;
        int has = pair_find(p, xf[i].tagk, &v);
        if (xf[i].f->type == QUERY_FILTER_NOT_KEY) {
            if (has) return 0;
            continue;
        }
        if (!has) return 0;
        if (xf[i].pushed) {
            if (!bsearch(&v, xf[i].lits, xf[i].n_lits, sizeof v, cmp_u64)) return 0;
            continue;
        }
        nm_slot_t *sl = nm_find(&x->nm, 16 + (uint32_t)i, v);
        int ok;
        if (sl) {
            ok = (int)sl->len;
        } else {
            const char *name;
            size_t nl;
            int rc = ex_name(x, CODEC_UID_TAGV, v, &name, &nl);
            if (rc) return rc;
            ok = query_filter_match(xf[i].f, name, nl) ? 1 : 0;
            sl = nm_add(&x->nm, 16 + (uint32_t)i, v);
            sl->len = (size_t)ok;
        }
        if (!ok) return 0;
    }
    return 1;
}

static int cmp_series(const void *a, const void *b)
{
    const xseries_t *x = a, *y = b;
    int c = oct_slice_cmp(oct_slice(x->gkey, x->glen), oct_slice(y->gkey, y->glen));
    if (c) return c;
    return oct_slice_cmp(oct_slice(x->tsuid, x->len), oct_slice(y->tsuid, y->len));
}

static int cmp_tref(const void *a, const void *b, void *ctx)
{
    const uint8_t *buf = ctx;
    const tref_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(buf + x->off, x->len), oct_slice(buf + y->off, y->len));
}

/* ---- reading one series ------------------------------------------------- */

/* One series' annotations, copied out of its read (read.c hands out the
 * rows it fetched, so notes cost no second read of the rows). */
typedef struct {
    char **json;
    size_t *len;
    size_t n, cap;
} xnotes_t;

static int xnotes_add(void *ctx, const char *json, size_t len)
{
    xnotes_t *ns = ctx;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 4;
        ns->json = xrealloc(ns->json, ns->cap * sizeof *ns->json);
        ns->len = xrealloc(ns->len, ns->cap * sizeof *ns->len);
    }
    ns->json[ns->n] = xmemdup(json, len);
    ns->len[ns->n++] = len;
    return 0;
}

static void xnotes_free(xnotes_t *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->json[i]);
    free(ns->json);
    free(ns->len);
    memset(ns, 0, sizeof *ns);
}

/* Reads [lo, hi] of a series as the reader's points (valid until the
 * worker's next read), counting them against max_points; with notes, also
 * the series' annotations in the query range. */
static int read_raw(ex_t *x, xworker_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                    xnotes_t *notes, codec_point_t **out, size_t *n)
{
    codec_point_t *raw = NULL;
    size_t nr = 0;
    int rc = tsdb_reader_read(w->rd, tsuid, len, lo, hi, &raw, &nr, &w->eb);
    if (rc) return rc;
    uint64_t total = __atomic_add_fetch(&x->st.raw_points, (uint64_t)nr, __ATOMIC_RELAXED);
    if (x->o->max_points && total > x->o->max_points) {
        return oct_err(&w->eb, OCT_ERANGE,
                       "Sorry, you have attempted to fetch more than our limit of %llu data "
                       "points. Please try filtering using more tags or decrease your time "
                       "range.",
                       (unsigned long long)x->o->max_points);
    }
    /* also from a read without points: a chunk of a series may hold notes
     * only (a series without any point is dropped with its notes) */
    if (notes)
        (void)tsdb_reader_annotations(w->rd, x->q->start_ms, x->q->end_ms, xnotes_add, notes);
    *out = raw;
    *n = nr;
    return 0;
}

static int dsb_run(void *ctx, const int64_t *ts, const uint64_t *v, const uint8_t *isf, int types,
                   size_t n);

/* As read_raw, but the points go to the downsampler b run by run
 * (tsdb_reader_scan); *n is their count. */
static int scan_raw(ex_t *x, xworker_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                    xnotes_t *notes, dsb_t *b, size_t *n)
{
    size_t nr = 0;
    int rc = tsdb_reader_scan(w->rd, tsuid, len, lo, hi, dsb_run, b, &nr, &w->eb);
    if (rc) return rc;
    uint64_t total = __atomic_add_fetch(&x->st.raw_points, (uint64_t)nr, __ATOMIC_RELAXED);
    if (x->o->max_points && total > x->o->max_points) {
        return oct_err(&w->eb, OCT_ERANGE,
                       "Sorry, you have attempted to fetch more than our limit of %llu data "
                       "points. Please try filtering using more tags or decrease your time "
                       "range.",
                       (unsigned long long)x->o->max_points);
    }
    if (notes)
        (void)tsdb_reader_annotations(w->rd, x->q->start_ms, x->q->end_ms, xnotes_add, notes);
    *n = nr;
    return 0;
}

/* As read_raw, as query_dp_t converted in place. */
static int read_dps(ex_t *x, xworker_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                    xnotes_t *notes, query_dp_t **out, size_t *n)
{
    codec_point_t *raw = NULL;
    size_t nr = 0;
    int rc = read_raw(x, w, tsuid, len, lo, hi, notes, &raw, &nr);
    if (rc) return rc;
    /* Same layout but for the type byte (asserted above): the timestamp and
     * the value's 8 bytes stay where they are, only the flags change. */
    query_dp_t *d = (query_dp_t *)(void *)raw;
    for (size_t i = 0; i < nr; i++) {
        uint8_t is_float = raw[i].is_float;
        d[i].is_int = (uint8_t)!is_float;
        d[i].is_null = 0;
    }
    *out = d;
    *n = nr;
    return 0;
}

/* ---- fixed-interval downsampling straight from the read points ----------- */

/* Aggregators that dsf_bucket computes itself (query_agg.c's sum, avg, min,
 * max and count, whatever their interpolation); DSF_NO = the general path. */
enum { DSF_NO = -1, DSF_SUM, DSF_AVG, DSF_MIN, DSF_MAX, DSF_COUNT };

static int dsf_kind(const query_sub_t *sub)
{
    if (!sub->has_downsample || sub->ds.all || sub->ds.calendar || sub->ds.interval_ms <= 0 ||
        !sub->ds.agg)
        return DSF_NO;
    static const struct {
        const char *name;
        int fn;
    } t[] = {{"sum", DSF_SUM}, {"zimsum", DSF_SUM}, {"pfsum", DSF_SUM},
             {"avg", DSF_AVG}, {"min", DSF_MIN},    {"mimmin", DSF_MIN},
             {"max", DSF_MAX}, {"mimmax", DSF_MAX}, {"count", DSF_COUNT}};
    const char *n = query_agg_name(sub->ds.agg);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(n, t[i].name)) return t[i].fn;
    return DSF_NO;
}

static inline double col_double(const uint64_t *v, const uint8_t *isf, int types, size_t i)
{
    double d;
    if (types == 0 || (types == 2 && isf && !isf[i])) return (double)(int64_t)v[i];
    memcpy(&d, &v[i], sizeof d);
    return d;
}

/* One bucket of n >= 1 raw points in columns (tsdb_reader_scan's form), as
 * query__agg_apply followed by the downsampler's conversion to a double
 * computes it: the exact integer path when every point is an integer
 * (falling back to doubles on an int64 overflow, as apply_int does), else
 * the doubles with NaN skipped, in order. */
static void dsf_bucket(int fn, const uint64_t *v, const uint8_t *isf, int types, size_t n,
                       int64_t ts, query_dp_t *out)
{
    double r = 0.0;
    int all_int = types == 0;
    if (types == 2 && isf) { /* types 2 (mixed) always comes with its flags */
        unsigned any = 0;
        for (size_t i = 0; i < n; i++)
            any |= isf[i];
        all_int = !any;
    }
    if (all_int) {
        const int64_t *p = (const int64_t *)(const void *)v;
        int64_t a = p[0];
        switch (fn) {
        case DSF_SUM:
        case DSF_AVG: {
            int64_t sum = 0;
            size_t i = 0;
            for (; i < n; i++)
                if (__builtin_add_overflow(sum, p[i], &sum)) break;
            if (i < n) {
                if (fn == DSF_SUM) goto dbl;
                __int128 s128 = 0;
                for (size_t k = 0; k < n; k++)
                    s128 += p[k];
                r = s128 % (__int128)n == 0 ? (double)(int64_t)(s128 / (__int128)n)
                                            : (double)s128 / (double)n;
            } else if (fn == DSF_SUM) {
                r = (double)sum;
            } else {
                /* an exact quotient stays exact: the integer division */
                int64_t q = sum / (int64_t)n;
                r = sum % (int64_t)n == 0 ? (double)q : (double)sum / (double)n;
            }
            break;
        }
        case DSF_MIN:
            for (size_t i = 1; i < n; i++)
                if (p[i] < a) a = p[i];
            r = (double)a;
            break;
        case DSF_MAX:
            for (size_t i = 1; i < n; i++)
                if (p[i] > a) a = p[i];
            r = (double)a;
            break;
        default:
            r = (double)n;
            break;
        }
        goto done;
    }
dbl:;
    size_t m = 0;
    switch (fn) {
    case DSF_SUM:
    case DSF_AVG:
        if (types == 1) {
            const double *d = (const double *)(const void *)v;
            for (size_t i = 0; i < n; i++)
                if (!isnan(d[i])) {
                    r += d[i];
                    m++;
                }
        } else {
            for (size_t i = 0; i < n; i++) {
                double x = col_double(v, isf, types, i);
                if (!isnan(x)) {
                    r += x;
                    m++;
                }
            }
        }
        if (m && fn == DSF_AVG) r /= (double)m;
        break;
    case DSF_MIN:
    case DSF_MAX:
        for (size_t i = 0; i < n; i++) {
            double x = col_double(v, isf, types, i);
            if (isnan(x)) continue;
            if (!m++ || (fn == DSF_MIN ? x < r : x > r)) r = x;
        }
        break;
    default:
        for (size_t i = 0; i < n; i++)
            m += !isnan(col_double(v, isf, types, i));
        r = (double)m;
        m = 1;
        break;
    }
    if (!m) r = NAN;
done:
    out->ts_ms = ts;
    out->v.f = r;
    out->is_int = 0;
    out->is_null = 0;
}

static query_dp_t *dsb_slot(dsb_t *b)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 256;
        b->res = xrealloc(b->res, b->cap * sizeof *b->res);
    }
    return &b->res[b->n++];
}

static void dsb_fill_to(dsb_t *b, int64_t s)
{
    for (; b->next_fill < s; b->next_fill += b->iv) {
        query_dp_t *o = dsb_slot(b);
        o->ts_ms = b->next_fill;
        o->v.f = b->ds->fill == QUERY_FILL_ZERO ? 0.0 : NAN;
        o->is_int = 0;
        o->is_null = b->ds->fill == QUERY_FILL_NULL;
    }
}

static void dsb_emit(dsb_t *b, int64_t s, const uint64_t *v, const uint8_t *isf, int types,
                     size_t n)
{
    if (b->ds->fill != QUERY_FILL_NONE) {
        dsb_fill_to(b, s);
        b->next_fill = s + b->iv;
    }
    dsf_bucket(b->fn, v, isf, types, n, s, dsb_slot(b));
}

static void dsb_carry(dsb_t *b, const uint64_t *v, const uint8_t *isf, int types, size_t n)
{
    if (b->nc + n > b->ccap) {
        b->ccap = (b->nc + n) * 2;
        b->cv = xrealloc(b->cv, b->ccap * sizeof *b->cv);
        b->cf = xrealloc(b->cf, b->ccap);
    }
    memcpy(b->cv + b->nc, v, n * sizeof *v);
    if (types == 2 && isf) /* mixed: always with its flags */
        memcpy(b->cf + b->nc, isf, n);
    else
        memset(b->cf + b->nc, types, n);
    b->ctypes = b->nc == 0 ? types : b->ctypes == types ? types : 2;
    b->nc += n;
}

static int dsb_run(void *ctx, const int64_t *ts, const uint64_t *v, const uint8_t *isf, int types,
                   size_t n)
{
    dsb_t *b = ctx;
    int64_t iv = b->iv;
    size_t i = 0;
    if (b->nc) {
        int64_t e = b->carry_s + iv;
        while (i < n && ts[i] < e)
            i++;
        dsb_carry(b, v, isf, types, i);
        if (i == n) return 0;
        dsb_emit(b, b->carry_s, b->cv, b->cf, b->ctypes, b->nc);
        b->nc = 0;
    }
    int64_t s = 0, e = 0; /* the last bucket's bounds, once there is one */
    int have = 0;
    while (i < n) {
        /* points are dense: the next bucket is most often the adjacent one,
         * which needs no division */
        if (have && ts[i] >= e && e <= INT64_MAX - iv && ts[i] < e + iv)
            s = e;
        else
            s = floor_div(ts[i], iv) * iv;
        e = s + iv;
        have = 1;
        size_t j = i + 1;
        while (j < n && ts[j] < e)
            j++;
        if (j == n) {
            b->carry_s = s;
            dsb_carry(b, v + i, isf ? isf + i : NULL, types, n - i);
            break;
        }
        dsb_emit(b, s, v + i, isf ? isf + i : NULL, types, j - i);
        i = j;
    }
    return 0;
}

/* Ends the series: the waiting bucket, then (fill) the buckets up to the
 * one holding hi. */
static void dsb_finish(dsb_t *b, int64_t hi)
{
    if (b->nc) {
        dsb_emit(b, b->carry_s, b->cv, b->cf, b->ctypes, b->nc);
        b->nc = 0;
    }
    if (b->ds->fill != QUERY_FILL_NONE) dsb_fill_to(b, floor_div(hi, b->iv) * b->iv + b->iv);
}

static int ds_error(oct_errbuf_t *eb, long r)
{
    if (r == OCT_ENOTFOUND)
        return oct_err(eb, OCT_EPARSE, "The timezone specification could not be found");
    return oct_err(eb, (int)r, "downsampling failed: %s", oct_strerror((int)r));
}

/* The series' points after downsampling and rate, over the scan window
 * [lo, hi]. *out is malloc'd. Returns 1 when the series has no point in the
 * window. */
static int load_series(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid,
                       size_t len, int64_t lo, int64_t hi, xnotes_t *notes, query_dp_t **out,
                       size_t *n_out)
{
    const query_t *q = x->q;
    *out = NULL;
    *n_out = 0;
    query_dp_t *raw = NULL, *res = NULL;
    size_t nr = 0, n = 0;
    int fn = dsf_kind(sub);
    if (fn != DSF_NO) {
        /* Fixed interval, common aggregator: the reader hands over its
         * points block by block as columns (tsdb_reader_scan) and dsb_run
         * buckets each block while it is in the cache; no point array.
         * Read CHUNK_MS at a time (when the interval divides it), so a
         * series the general read path merges is held a chunk at a time. */
        int64_t iv = sub->ds.interval_ms;
        int64_t chunk = CHUNK_MS % iv == 0 ? CHUNK_MS : 0;
        int64_t c = chunk ? floor_div(lo, chunk) * chunk : lo;
        dsb_t *b = &w->dsb;
        b->ds = &sub->ds;
        b->fn = fn;
        b->iv = iv;
        b->next_fill = floor_div(lo, iv) * iv;
        /* room for every bucket of the window up front (up to a bound): one
         * allocation per series instead of a doubling series */
        int64_t nb = floor_div(hi, iv) - floor_div(lo, iv) + 1;
        b->cap = nb < 1 ? 1 : nb < 4096 ? (size_t)nb : 4096;
        b->res = xmalloc(b->cap * sizeof *b->res);
        b->n = 0;
        b->nc = 0;
        size_t total = 0;
        for (; c <= hi; c += chunk ? chunk : hi - lo + 1) {
            int64_t s = c > lo ? c : lo, e = chunk && c + chunk - 1 < hi ? c + chunk - 1 : hi;
            size_t np = 0;
            int rc = scan_raw(x, w, tsuid, len, s, e, notes, b, &np);
            if (rc) {
                free(b->res);
                b->res = NULL;
                return rc;
            }
            total += np;
        }
        if (total == 0) {
            free(b->res);
            b->res = NULL;
            return 1;
        }
        dsb_finish(b, hi);
        res = b->res;
        n = b->n;
        b->res = NULL;
        if (sub->rate) n = query_rate(&sub->rate_opts, res, n);
        *out = res;
        *n_out = n;
        return 0;
    }
    int rc = read_dps(x, w, tsuid, len, lo, hi, notes, &raw, &nr);
    if (rc) return rc;
    if (nr == 0) {
        /* No row of this series in the scan window: OpenTSDB has no span
         * for it, so it is no part of any output (not even by fill). */
        return 1;
    }
    if (!sub->has_downsample) {
        res = xmalloc(nr * sizeof *res);
        memcpy(res, raw, nr * sizeof *res);
        n = nr;
    } else if (sub->ds.all || sub->ds.calendar) {
        /* "all" covers the query range; calendar buckets fill the scan window */
        int64_t s = sub->ds.all ? q->start_ms : lo, e = sub->ds.all ? q->end_ms : hi;
        size_t cap = query_downsample_bound(&sub->ds, s, e, nr);
        res = xmalloc((cap ? cap : 1) * sizeof *res);
        long r = query_downsample(&sub->ds, x->tz, s, e, raw, nr, res, cap);
        if (r < 0) {
            free(res);
            return ds_error(&w->eb, r);
        }
        n = (size_t)r;
    } else {
        /* Fixed intervals: buckets are epoch multiples of the interval, so
         * chunks whose bounds are such multiples downsample independently;
         * each chunk gets exactly the points a read of its range returns. */
        int64_t iv = sub->ds.interval_ms;
        int64_t chunk = iv >= DAY_MS ? iv : (DAY_MS + iv - 1) / iv * iv;
        size_t cap = 0, p = 0;
        for (int64_t c = floor_div(lo, chunk) * chunk; c <= hi; c += chunk) {
            int64_t s = c > lo ? c : lo, e = c + chunk - 1 < hi ? c + chunk - 1 : hi;
            while (p < nr && raw[p].ts_ms < s)
                p++;
            size_t p1 = p;
            while (p1 < nr && raw[p1].ts_ms <= e)
                p1++;
            size_t b = query_downsample_bound(&sub->ds, s, e, p1 - p);
            if (n + b > cap) {
                cap = (n + b) * 2;
                res = xrealloc(res, (cap ? cap : 1) * sizeof *res);
            }
            long r = b ? query_downsample(&sub->ds, x->tz, s, e, raw + p, p1 - p, res + n, b) : 0;
            if (r < 0) {
                free(res);
                return ds_error(&w->eb, r);
            }
            n += (size_t)r;
            p = p1;
        }
    }
    if (sub->rate) n = query_rate(&sub->rate_opts, res, n);
    *out = res;
    *n_out = n;
    return 0;
}

/* ---- loading a group's series, in parallel ------------------------------ */

typedef struct {
    ex_t *x;
    const query_sub_t *sub;
    const xseries_t *ser;
    size_t n;
    int64_t lo, hi;
    query_dp_t **arr;
    xnotes_t *notes; /* per series, NULL without annotations */
    size_t *lens;
    uint8_t *empty; /* per series: no point in the window */
    size_t next;    /* atomic: next series to load */
    int stop;       /* atomic: an error occurred */
    uint64_t held;  /* atomic */
} xjob_t;

typedef struct {
    xjob_t *j;
    xworker_t *w;
    int rc;
    size_t err_at; /* series index of rc */
} xrun_t;

static void *load_worker(void *arg)
{
    xrun_t *r = arg;
    xjob_t *j = r->j;
    ex_t *x = j->x;
    for (;;) {
        if (__atomic_load_n(&j->stop, __ATOMIC_RELAXED)) break;
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n) break;
        int rc = 0;
        if (x->deadline && mono_ns() > x->deadline)
            rc = oct_err(&r->w->eb, -ETIMEDOUT, "Query timed out after %lld ms",
                         (long long)x->o->timeout_ms);
        if (!rc)
            rc = load_series(x, r->w, j->sub, j->ser[i].tsuid, j->ser[i].len, j->lo, j->hi,
                             j->notes ? &j->notes[i] : NULL, &j->arr[i], &j->lens[i]);
        if (rc == 1) {
            j->empty[i] = 1;
            continue;
        }
        if (!rc) {
            uint64_t h = __atomic_add_fetch(&j->held, (uint64_t)j->lens[i], __ATOMIC_RELAXED);
            if (x->o->max_held_points && h > x->o->max_held_points)
                rc = oct_err(&r->w->eb, OCT_ERANGE,
                             "Sorry, this query needs to hold more than our limit of %llu data "
                             "points at once. Please try filtering using more tags, "
                             "downsampling or decrease your time range.",
                             (unsigned long long)x->o->max_held_points);
        }
        if (rc) {
            r->rc = rc;
            r->err_at = i;
            __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

static unsigned n_workers(void)
{
    static unsigned cached;
    unsigned c = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (!c) {
        long p = sysconf(_SC_NPROCESSORS_ONLN);
        c = p < 1 ? 1 : p > MAX_WORKERS ? MAX_WORKERS : (unsigned)p;
        __atomic_store_n(&cached, c, __ATOMIC_RELAXED);
    }
    return c;
}

static xworker_t *ex_worker(ex_t *x, unsigned i)
{
    if (!x->wk[i].rd) x->wk[i].rd = tsdb_reader_new(x->db);
    return &x->wk[i];
}

/* Loads ser[0..n) into arr/lens (empty[i] set for series without points)
 * and, with notes, each series' annotations. On error, the error of the
 * lowest failing series index is in x->eb. */
static int load_all(ex_t *x, const query_sub_t *sub, const xseries_t *ser, size_t n, int64_t lo,
                    int64_t hi, query_dp_t **arr, xnotes_t *notes, size_t *lens, uint8_t *empty)
{
    xjob_t j = {x, sub, ser, n, lo, hi, arr, notes, lens, empty, 0, 0, 0};
    unsigned nw = n >= PARALLEL_MIN_SER ? n_workers() : 1;
    xrun_t runs[MAX_WORKERS];
    pthread_t th[MAX_WORKERS];
    unsigned started = 1;
    runs[0] = (xrun_t){&j, ex_worker(x, 0), 0, 0}; /* the calling thread's */
    for (unsigned i = 1; i < nw; i++)
        runs[i] = (xrun_t){&j, ex_worker(x, i), 0, 0};
    for (unsigned i = 1; i < nw; i++)
        if (pthread_create(&th[i], NULL, load_worker, &runs[i]) == 0)
            started = i + 1;
        else
            break;
    load_worker(&runs[0]);
    for (unsigned i = 1; i < started; i++)
        pthread_join(th[i], NULL);
    int rc = 0;
    size_t at = SIZE_MAX;
    for (unsigned i = 0; i < started; i++)
        if (runs[i].rc && runs[i].err_at < at) {
            at = runs[i].err_at;
            rc = runs[i].rc;
            *x->eb = runs[i].w->eb;
        }
    return rc;
}

/* ---- aggregating a group, in parallel ------------------------------------ */

#define PARALLEL_MIN_AGG 100000 /* fewer points in a group: aggregate in one thread */

typedef struct {
    const query_sub_t *sub;
    const query_dp_t *const *arr;
    const size_t *lens;
    size_t n;
    int64_t from, to;
    query_dp_t *out;
    long na;
} xagg_t;

static void *agg_worker(void *arg)
{
    xagg_t *g = arg;
    g->na = query_aggregate_range(g->sub->agg, g->sub->rate, g->arr, g->lens, g->n, g->from, g->to,
                                  &g->out);
    return NULL;
}

/* query_aggregate of the group; a big group in two halves of its time span
 * at once (query_aggregate_range: the halves put together are exactly the
 * whole). */
static long aggregate_group(const query_sub_t *sub, const query_dp_t *const *arr,
                            const size_t *lens, size_t n, query_dp_t **agg)
{
    size_t total = 0;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (!lens[i] || !arr[i]) continue; /* a series with points has its array */
        total += lens[i];
        if (arr[i][0].ts_ms < tmin) tmin = arr[i][0].ts_ms;
        if (arr[i][lens[i] - 1].ts_ms > tmax) tmax = arr[i][lens[i] - 1].ts_ms;
    }
    if (n_workers() < 2 || n < PARALLEL_MIN_SER || total < PARALLEL_MIN_AGG || tmax <= tmin ||
        !strcmp(query_agg_name(sub->agg), "none"))
        return query_aggregate(sub->agg, sub->rate, arr, lens, n, agg);
    int64_t mid = tmin + (tmax - tmin) / 2 + 1;
    xagg_t g[2] = {{sub, arr, lens, n, INT64_MIN, mid, NULL, 0},
                   {sub, arr, lens, n, mid, INT64_MAX, NULL, 0}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, agg_worker, &g[1]) == 0;
    agg_worker(&g[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        agg_worker(&g[1]);
    long rc = g[0].na < 0 ? g[0].na : g[1].na < 0 ? g[1].na : 0;
    if (rc == 0) {
        size_t na = (size_t)g[0].na + (size_t)g[1].na;
        *agg = xmalloc((na ? na : 1) * sizeof **agg);
        if (g[0].na) memcpy(*agg, g[0].out, (size_t)g[0].na * sizeof **agg);
        if (g[1].na) memcpy(*agg + g[0].na, g[1].out, (size_t)g[1].na * sizeof **agg);
        rc = (long)na;
    }
    free(g[0].out);
    free(g[1].out);
    return rc;
}

/* ---- one output series -------------------------------------------------- */

typedef struct {
    uint64_t k, v;
    int agg;
} ctag_t;

typedef struct {
    const char *k, *v;
} kv_t;

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const kv_t *)a)->k, ((const kv_t *)b)->k);
}

static int cmp_cstrp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct {
    int64_t start;
    size_t seq;
    const char *json;
    size_t len;
} note_t;

typedef struct {
    note_t *v;
    size_t n, cap;
    json_arena_t *a;
} notes_t;

static int note_cb(void *ctx, const char *json, size_t len)
{
    notes_t *ns = ctx;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 8;
        ns->v = xrealloc(ns->v, ns->cap * sizeof *ns->v);
    }
    note_t *nt = &ns->v[ns->n];
    nt->json = json_arena_strndup(ns->a, json, len);
    nt->len = len;
    nt->seq = ns->n;
    nt->start = 0;
    json_arena_t tmp = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t jeb;
    if (json_parse(&tmp, json, len, 0, &v, &jeb) == 0) {
        json_value_t *st = json_obj_get(v, "startTime");
        int64_t s;
        if (st && st->type == JSON_NUMBER && json_number_i64(st, &s) == 0) nt->start = s;
    }
    json_arena_free(&tmp);
    ns->n++;
    return 0;
}

static int cmp_note(const void *a, const void *b)
{
    const note_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Aggregates series[0..n) (one group) and calls back. */
static int emit_group(ex_t *x, const query_sub_t *sub, const char *metric, const xseries_t *ser,
                      size_t n, int64_t lo, int64_t hi)
{
    xseries_t *live = NULL;
    const query_t *q = x->q;
    json_arena_t ga = JSON_ARENA_INIT;
    query_dp_t **arr = xcalloc(n, sizeof *arr);
    size_t *lens = xcalloc(n, sizeof *lens);
    query_dp_t *agg = NULL;
    notes_t notes = {0};
    notes.a = &ga;
    uint64_t raw0 = x->st.raw_points;
    int rc = 0;
    size_t n_all = n;
    xnotes_t *sn = q->no_annotations ? NULL : xcalloc(n, sizeof *sn);

    int64_t t_scan = mono_ns();
    /* Series without data in the window are dropped (compacting ser into
     * live, arr and lens in step). */
    live = xmalloc(n * sizeof *live);
    uint8_t *empty = xcalloc(n, 1);
    rc = ex_check_time(x);
    if (!rc) rc = load_all(x, sub, ser, n, lo, hi, arr, sn, lens, empty);
    size_t nl0 = 0;
    for (size_t i = 0; i < n; i++) {
        if (empty[i] || (!arr[i] && rc)) continue;
        live[nl0] = ser[i];
        arr[nl0] = arr[i];
        if (sn && nl0 != i) {
            sn[nl0] = sn[i];
            memset(&sn[i], 0, sizeof sn[i]);
        }
        lens[nl0++] = lens[i];
        if (nl0 - 1 != i) arr[i] = NULL;
    }
    free(empty);
    if (rc) {
        n = nl0;
        goto out;
    }
    int64_t t_agg = mono_ns();
    x->st.scan_ns += t_agg - t_scan;
    n = nl0;
    ser = live;
    if (n == 0) goto out;

    long na = aggregate_group(sub, (const query_dp_t *const *)arr, lens, n, &agg);
    if (na < 0) {
        rc = oct_err(x->eb, na == OCT_EINVAL ? OCT_EINVAL : (int)na, "aggregation failed: %s",
                     oct_strerror((int)na));
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        free(arr[i]);
        arr[i] = NULL;
    }
    size_t a0 = 0, a1 = (size_t)na;
    while (a0 < a1 && agg[a0].ts_ms < q->start_ms)
        a0++;
    while (a1 > a0 && agg[a1 - 1].ts_ms > q->end_ms)
        a1--;
    x->st.agg_ns += mono_ns() - t_agg;

    /* tags common to every series, and the keys whose values differ */
    ctag_t *ct = NULL;
    size_t nct = 0, capct = 0;
    for (size_t i = 0; i < n; i++) {
        pairs_t p;
        tsuid_pairs(x, ser[i].tsuid, ser[i].len, &p);
        for (size_t j = 0; j < p.n; j++) {
            size_t t = 0;
            while (t < nct && ct[t].k != p.k[j])
                t++;
            if (t == nct) {
                if (nct == capct) {
                    capct = capct ? capct * 2 : 16;
                    ct = xrealloc(ct, capct * sizeof *ct);
                }
                ct[nct++] = (ctag_t){p.k[j], p.v[j], 0};
            } else if (ct[t].v != p.v[j]) {
                ct[t].agg = 1;
            }
        }
    }
    size_t ntags = 0, nagg = 0;
    for (size_t t = 0; t < nct; t++)
        ct[t].agg ? nagg++ : ntags++;
    kv_t *kv = json_arena_alloc(&ga, (ntags ? ntags : 1) * sizeof *kv);
    const char **aggk = json_arena_alloc(&ga, (nagg ? nagg : 1) * sizeof *aggk);
    size_t ik = 0, ia = 0;
    for (size_t t = 0; t < nct && !rc; t++) {
        const char *kn, *vn;
        size_t kl, vl;
        rc = ex_name(x, CODEC_UID_TAGK, ct[t].k, &kn, &kl);
        if (rc) break;
        if (ct[t].agg) {
            aggk[ia++] = kn;
        } else {
            rc = ex_name(x, CODEC_UID_TAGV, ct[t].v, &vn, &vl);
            if (rc) break;
            kv[ik].k = kn;
            kv[ik++].v = vn;
        }
    }
    free(ct);
    if (rc) goto out;
    qsort(kv, ik, sizeof *kv, cmp_kv);
    qsort(aggk, ia, sizeof *aggk, cmp_cstrp);
    const char **tk = json_arena_alloc(&ga, (ik ? ik : 1) * sizeof *tk);
    const char **tv = json_arena_alloc(&ga, (ik ? ik : 1) * sizeof *tv);
    for (size_t i = 0; i < ik; i++) {
        tk[i] = kv[i].k;
        tv[i] = kv[i].v;
    }

    const char **hex = NULL;
    if (q->show_tsuids) {
        hex = json_arena_alloc(&ga, n * sizeof *hex);
        for (size_t i = 0; i < n; i++) {
            char *h = json_arena_alloc(&ga, 2 * ser[i].len + 1);
            if (codec_tsuid_to_hex(ser[i].tsuid, ser[i].len, h, 2 * ser[i].len + 1) < 0) h[0] = 0;
            hex[i] = h;
        }
        qsort(hex, n, sizeof *hex, cmp_cstrp);
    }

    const char **nj = NULL;
    size_t *nl = NULL;
    if (!q->no_annotations) {
        /* each series' notes came with its rows (load_series), in time order */
        for (size_t i = 0; sn && i < n; i++)
            for (size_t k = 0; k < sn[i].n; k++)
                note_cb(&notes, sn[i].json[k], sn[i].len[k]);
        if (notes.n > 1) qsort(notes.v, notes.n, sizeof *notes.v, cmp_note);
        nj = json_arena_alloc(&ga, (notes.n ? notes.n : 1) * sizeof *nj);
        nl = json_arena_alloc(&ga, (notes.n ? notes.n : 1) * sizeof *nl);
        for (size_t i = 0; i < notes.n; i++) {
            nj[i] = notes.v[i].json;
            nl[i] = notes.v[i].len;
        }
    }

    query_result_t r = {
        .sub = sub,
        .metric = metric,
        .n_tags = ik,
        .tagk = tk,
        .tagv = tv,
        .n_agg_tags = ia,
        .agg_tags = aggk,
        .n_tsuids = q->show_tsuids ? n : 0,
        .tsuids = hex,
        .n_dps = a1 - a0,
        .dps = agg ? agg + a0 : NULL,
        .n_annotations = notes.n,
        .annotations = nj,
        .annotation_lens = nl,
        .sub_series = n,
        .sub_raw_points = x->st.raw_points - raw0,
    };
    x->st.emitted_points += r.n_dps;
    x->st.results++;
    rc = x->fn(x->ctx, &r);

out:
    for (size_t i = 0; i < n; i++)
        free(arr[i]);
    for (size_t i = 0; sn && i < n_all; i++)
        xnotes_free(&sn[i]);
    free(sn);
    free(live);
    free(arr);
    free(lens);
    free(agg);
    free(notes.v);
    json_arena_free(&ga);
    return rc;
}

/* ---- one sub-query ------------------------------------------------------ */

static void del_add(ex_t *x, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi)
{
    if (x->del.nv == x->del_cap) {
        x->del_cap = x->del_cap ? x->del_cap * 2 : 64;
        x->del_lo = xrealloc(x->del_lo, x->del_cap * sizeof *x->del_lo);
        x->del_hi = xrealloc(x->del_hi, x->del_cap * sizeof *x->del_hi);
    }
    x->del_lo[x->del.nv] = lo;
    x->del_hi[x->del.nv] = hi;
    tl_add(&x->del, tsuid, len);
}

static int run_sub(ex_t *x, const query_sub_t *sub)
{
    int64_t t_res = mono_ns();
    int rc = 0;
    uint64_t metric = 0;
    tlist_t cand = {0};
    xfilter_t *xf = NULL;
    uint64_t *fkeys = NULL, *gkeys = NULL;
    xseries_t *ser = NULL;
    size_t nf = sub->n_filters, nfk = 0, ngk = 0, nser = 0;
    char *metric_name = NULL;

    if (sub->n_tsuids > 0) {
        /* TSUID sub-query: the given series, which must share one metric. */
        uint8_t buf[256];
        for (size_t i = 0; i < sub->n_tsuids; i++) {
            int len = codec_tsuid_from_hex(&x->rk, sub->tsuids[i], strlen(sub->tsuids[i]), buf,
                                           sizeof buf, x->eb);
            if (len < 0) {
                rc = len;
                goto out;
            }
            uint64_t m = codec_uid_decode(buf, x->mw);
            if (i > 0 && m != metric) {
                rc = oct_err(x->eb, OCT_EPARSE, "One or more TSUIDs did not share the same metric");
                goto out;
            }
            metric = m;
            tl_add(&cand, buf, (size_t)len);
        }
        qsort_r(cand.v, cand.nv, sizeof *cand.v, cmp_tref, cand.buf);
        const char *mn;
        size_t ml;
        rc = ex_name(x, CODEC_UID_METRIC, metric, &mn, &ml);
        if (rc) goto out;
        metric_name = xstrdup(mn);
    } else {
        rc = uid_get_id(x->uids, CODEC_UID_METRIC, (const uint8_t *)sub->metric,
                        strlen(sub->metric), &metric, x->eb);
        if (rc) goto out;
        metric_name = xstrdup(sub->metric);
        xf = xcalloc(nf ? nf : 1, sizeof *xf);
        fkeys = xcalloc(nf ? nf : 1, sizeof *fkeys);
        gkeys = xcalloc(nf ? nf : 1, sizeof *gkeys);
        for (size_t i = 0; i < nf; i++) {
            const query_filter_t *f = &sub->filters[i];
            xf[i].f = f;
            rc = uid_get_id(x->uids, CODEC_UID_TAGK, (const uint8_t *)f->tagk, strlen(f->tagk),
                            &xf[i].tagk, x->eb);
            if (rc) goto out;
            if (f->type == QUERY_FILTER_LITERAL_OR) {
                rc = resolve_literals(x, &xf[i]);
                if (rc) goto out;
            }
            size_t j = 0;
            while (j < nfk && fkeys[j] != xf[i].tagk)
                j++;
            if (j == nfk) fkeys[nfk++] = xf[i].tagk;
            if (f->group_by) {
                j = 0;
                while (j < ngk && gkeys[j] != xf[i].tagk)
                    j++;
                if (j == ngk) gkeys[ngk++] = xf[i].tagk;
            }
        }
        qsort(gkeys, ngk, sizeof *gkeys, cmp_u64);

        /* Candidates: the shortest pushed literal list, else one filtered key. */
        const xfilter_t *best = NULL;
        for (size_t i = 0; i < nf; i++)
            if (xf[i].pushed && (!best || xf[i].n_lits < best->n_lits)) best = &xf[i];
        if (best) {
            for (size_t i = 0; i < best->n_lits; i++)
                tsdb_series_find(x->db, metric, best->tagk, best->lits[i], tl_collect, &cand);
            if (best->n_lits > 1) qsort_r(cand.v, cand.nv, sizeof *cand.v, cmp_tref, cand.buf);
        } else {
            uint64_t k = 0;
            for (size_t i = 0; i < nf && !k; i++)
                if (xf[i].f->type != QUERY_FILTER_NOT_KEY) k = xf[i].tagk;
            tsdb_series_find(x->db, metric, k, 0, tl_collect, &cand);
        }
    }
    x->st.resolve_ns += mono_ns() - t_res;

    /* Check the candidates, build group keys. */
    size_t gw = ngk * x->vw;
    uint8_t *gbuf = xmalloc((cand.nv ? cand.nv : 1) * (gw ? gw : 1));
    ser = xmalloc((cand.nv ? cand.nv : 1) * sizeof *ser);
    for (size_t i = 0; i < cand.nv; i++) {
        const uint8_t *t = cand.buf + cand.v[i].off;
        size_t len = cand.v[i].len;
        if (i > 0 && len == cand.v[i - 1].len && !memcmp(t, cand.buf + cand.v[i - 1].off, len))
            continue; /* duplicate from a union of postings */
        pairs_t p;
        tsuid_pairs(x, t, len, &p);
        if (sub->n_tsuids == 0) {
            int ok = series_passes(x, xf, nf, &p, fkeys, nfk, sub->explicit_tags);
            if (ok < 0) {
                rc = ok;
                free(gbuf);
                goto out;
            }
            if (!ok) continue;
        }
        uint8_t *g = gbuf + nser * gw;
        int complete = 1;
        for (size_t j = 0; j < ngk && complete; j++) {
            uint64_t v;
            complete = pair_find(&p, gkeys[j], &v);
            if (complete && codec_uid_encode(v, x->vw, g + j * x->vw) < 0) complete = 0;
        }
        if (!complete) continue; /* lacks a group-by key (not_key grouping): no group */
        ser[nser++] = (xseries_t){t, len, g, gw};
        if (x->o->max_series && x->st.series + nser > x->o->max_series) {
            rc = oct_err(x->eb, OCT_ERANGE,
                         "Sorry, you have attempted to fetch more than our limit of %llu time "
                         "series. Please try filtering using more tags.",
                         (unsigned long long)x->o->max_series);
            free(gbuf);
            goto out;
        }
    }
    x->st.series += nser;
    int none = !strcmp(query_agg_name(sub->agg), "none");
    if (!none && ngk > 0) qsort(ser, nser, sizeof *ser, cmp_series);

    int64_t lo, hi;
    query_exec_scan_window(x->q, sub, &lo, &hi);
    for (size_t i = 0; i < nser && !rc;) {
        size_t j = i + 1;
        if (!none)
            while (j < nser && !memcmp(ser[j].gkey, ser[i].gkey, gw))
                j++;
        rc = emit_group(x, sub, metric_name, ser + i, j - i, lo, hi);
        i = j;
    }
    if (!rc && x->q->delete_data)
        for (size_t i = 0; i < nser; i++)
            del_add(x, ser[i].tsuid, ser[i].len, lo, hi);
    free(gbuf);

out:
    if (xf)
        for (size_t i = 0; i < nf; i++)
            free(xf[i].lits);
    free(xf);
    free(fkeys);
    free(gkeys);
    free(ser);
    free(metric_name);
    tl_free(&cand);
    return rc;
}

/* ---- delete ------------------------------------------------------------- */

typedef struct {
    oct_slice_t *v;
    size_t n, cap;
} parts_t;

static int part_cb(void *ctx, oct_slice_t part)
{
    parts_t *pl = ctx;
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? pl->cap * 2 : 16;
        pl->v = xrealloc(pl->v, pl->cap * sizeof *pl->v);
    }
    pl->v[pl->n++] = oct_slice(xmemdup(part.ptr, part.len), part.len);
    return 0;
}

/* Deletes the rows of one series whose base hour is in [lo, hi]. */
static int delete_rows(ex_t *x, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi)
{
    size_t n_tags = (len - x->mw) / (x->kw + x->vw);
    size_t klen = codec_rowkey_len(&x->rk, n_tags),
           plen = codec_rowkey_partition_prefix_len(&x->rk);
    uint8_t *k0 = xmalloc(klen), *k1 = xmalloc(klen);
    parts_t pl = {0};
    uint8_t *rows = NULL;
    store_op_t *ops = NULL;
    int rc = codec_rowkey_from_tsuid(&x->rk, tsuid, len, lo / 1000, k0, klen, x->eb);
    if (rc >= 0) rc = codec_rowkey_from_tsuid(&x->rk, tsuid, len, hi / 1000, k1, klen, x->eb);
    if (rc < 0) goto out;
    size_t i = plen;
    while (i > 0 && k1[i - 1] == 0xFF)
        k1[--i] = 0;
    if (i) k1[i - 1]++;
    rc = store_part_list(tsdb_store(x->db), STORE_TABLE_DATA, oct_slice(k0, plen),
                         oct_slice(k1, i ? plen : 0), part_cb, &pl, x->eb);
    if (rc < 0) goto out;
    rows = xmalloc((pl.n ? pl.n : 1) * klen);
    ops = xcalloc(pl.n ? pl.n : 1, sizeof *ops);
    size_t nops = 0;
    for (size_t j = 0; j < pl.n; j++) {
        if (pl.v[j].len != plen || memcmp(pl.v[j].ptr, k0, plen - CODEC_ROWKEY_TS_BYTES)) continue;
        uint8_t *row = rows + nops * klen;
        memcpy(row, pl.v[j].ptr, plen);
        memcpy(row + plen, k0 + plen, klen - plen);
        ops[nops].kind = STORE_OP_DELETE_ROW;
        ops[nops].part = pl.v[j];
        ops[nops].cell.row = oct_slice(row, klen);
        nops++;
    }
    rc = nops ? store_write(tsdb_store(x->db), STORE_TABLE_DATA, ops, nops, 0, x->eb) : 0;
    if (rc >= 0) {
        x->st.deleted_rows += nops;
        rc = 0;
    }
out:
    for (size_t j = 0; j < pl.n; j++)
        free((void *)pl.v[j].ptr);
    free(pl.v);
    free(rows);
    free(ops);
    free(k0);
    free(k1);
    return rc;
}

static int run_delete(ex_t *x)
{
    if (x->del.nv == 0) return 0;
    /* Unflushed points live in the head: write them out so they go too. */
    int rc = tsdb_flush(x->db, x->eb);
    for (size_t i = 0; i < x->del.nv && !rc; i++)
        rc = delete_rows(x, x->del.buf + x->del.v[i].off, x->del.v[i].len, x->del_lo[i],
                         x->del_hi[i]);
    return rc;
}

/* ---- entry -------------------------------------------------------------- */

int query_exec(tsdb_t *db, const query_t *q, const query_exec_opts_t *opts, query_result_fn fn,
               void *ctx, query_exec_stats_t *stats, oct_errbuf_t *eb)
{
    query_exec_opts_t defo;
    if (!opts) {
        query_exec_opts_default(&defo);
        opts = &defo;
    }
    ex_t x;
    memset(&x, 0, sizeof x);
    x.db = db;
    x.uids = tsdb_uids(db);
    const tsdb_layout_t *lay = tsdb_layout(db);
    x.mw = lay->uid_width[CODEC_UID_METRIC];
    x.kw = lay->uid_width[CODEC_UID_TAGK];
    x.vw = lay->uid_width[CODEC_UID_TAGV];
    x.rk = (codec_rowkey_layout_t){(uint8_t)x.mw, (uint8_t)x.kw, (uint8_t)x.vw,
                                   (uint8_t)lay->salt_width,
                                   lay->salt_buckets ? lay->salt_buckets : 1};
    x.q = q;
    x.o = opts;
    x.fn = fn;
    x.ctx = ctx;
    x.eb = eb;
    x.t0 = mono_ns();
    x.deadline = opts->timeout_ms > 0 ? x.t0 + opts->timeout_ms * 1000000LL : 0;
    x.tz = q->timezone && *q->timezone ? q->timezone : opts->timezone;
    oct_errbuf_clear(eb);

    int rc = 0;
    for (size_t i = 0; i < q->n_subs && !rc; i++)
        rc = run_sub(&x, &q->subs[i]);
    if (!rc && q->delete_data) rc = run_delete(&x);

    x.st.total_ns = mono_ns() - x.t0;
    if (stats) *stats = x.st;
    free(x.nm.t);
    for (unsigned i = 0; i < MAX_WORKERS; i++) {
        tsdb_reader_free(x.wk[i].rd);
        free(x.wk[i].dsb.cv);
        free(x.wk[i].dsb.cf);
    }
    json_arena_free(&x.names);
    tl_free(&x.del);
    free(x.del_lo);
    free(x.del_hi);
    return rc;
}
