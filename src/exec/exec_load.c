/* exec_load.c -- reading a group's series: each series is read through a
 * per-thread tsdb_reader_t (buffers reused, so no allocation per series),
 * converted in place to query_dp_t (same layout but the flag byte),
 * downsampled -- a day-aligned chunk at a time for fixed intervals, whose
 * buckets never straddle a day-multiple boundary -- and rated. Fixed-interval
 * downsampling with an aggregator exec_fast.c computes skips the point
 * arrays: the reader hands over each block as columns (tsdb_reader_scan) a
 * CHUNK_MS chunk at a time. Annotations, only when asked for, come out of
 * the rows the series' read fetched anyway (tsdb_reader_annotations), not a
 * second read.
 *
 * A group of at least PARALLEL_MIN_SER series is loaded by up to
 * MAX_WORKERS threads (one per CPU online) pulling series from a shared
 * counter; each result lands in its series' slot, so the output does not
 * depend on the threads. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec_int.h"
#include "tsdb/annotation.h"

_Static_assert(sizeof(codec_point_t) == sizeof(query_dp_t) &&
                   offsetof(codec_point_t, ts_ms) == offsetof(query_dp_t, ts_ms) &&
                   offsetof(codec_point_t, val) == offsetof(query_dp_t, v) &&
                   offsetof(codec_point_t, is_float) == offsetof(query_dp_t, is_int),
               "points are converted to query_dp_t in place: only the flag bytes change");

/* ---- reading one series ------------------------------------------------- */

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

void exec__xnotes_free(xnotes_t *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->json[i]);
    free(ns->json);
    free(ns->len);
    memset(ns, 0, sizeof *ns);
}

/* Counts nr more raw points read against max_points; then, with notes, takes
 * the series' annotations in the query range from the rows just read (also
 * from a read without points: a chunk of a series may hold notes only; a
 * series without any point is dropped with its notes). */
int exec__after_read(ex_t *x, xworker_t *w, size_t nr, xnotes_t *notes)
{
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
    return 0;
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
    rc = exec__after_read(x, w, nr, notes);
    if (rc) return rc;
    *out = raw;
    *n = nr;
    return 0;
}

/* As read_raw, but the points go to the downsampler b run by run
 * (tsdb_reader_scan); *n is their count. */
static int scan_raw(ex_t *x, xworker_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                    xnotes_t *notes, dsb_t *b, size_t *n)
{
    size_t nr = 0;
    int rc = tsdb_reader_scan(w->rd, tsuid, len, lo, hi, exec__dsb_run, b, &nr, &w->eb);
    if (rc) return rc;
    rc = exec__after_read(x, w, nr, notes);
    if (rc) return rc;
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
    if (x->ru) {
        *out = NULL;
        *n_out = 0;
        return exec__load_rollup(x, w, sub, tsuid, len, lo, hi, out, n_out);
    }
    return exec__load_raw(x, w, sub, tsuid, len, lo, hi, notes, out, n_out);
}

int exec__load_raw(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid, size_t len,
                   int64_t lo, int64_t hi, xnotes_t *notes, query_dp_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    query_dp_t *raw = NULL, *res = NULL;
    size_t nr = 0, n = 0;
    int fn = exec__fast_kind(sub);
    if (fn != EXEC_FAST_NO) {
        /* Fixed interval, common aggregator: the reader hands over its
         * points block by block as columns (tsdb_reader_scan) and exec__dsb_run
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
        exec__dsb_finish(b, hi);
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
    } else {
        rc = exec__downsample(x, w, &sub->ds, lo, hi, raw, nr, &res, &n);
        if (rc) return rc;
    }
    if (sub->rate) n = query_rate(&sub->rate_opts, res, n);
    *out = res;
    *n_out = n;
    return 0;
}

int exec__downsample(ex_t *x, xworker_t *w, const query_downsample_t *ds, int64_t lo, int64_t hi,
                     const query_dp_t *raw, size_t nr, query_dp_t **out, size_t *n_out)
{
    const query_t *q = x->q;
    query_dp_t *res = NULL;
    size_t n = 0;
    if (ds->all || ds->calendar) {
        /* "all" covers the query range; calendar buckets fill the scan window */
        int64_t s = ds->all ? q->start_ms : lo, e = ds->all ? q->end_ms : hi;
        size_t cap = query_downsample_bound(ds, s, e, nr);
        res = xmalloc((cap ? cap : 1) * sizeof *res);
        long r = query_downsample(ds, x->tz, s, e, raw, nr, res, cap);
        if (r < 0) {
            free(res);
            return ds_error(&w->eb, r);
        }
        n = (size_t)r;
    } else {
        /* Fixed intervals: buckets are epoch multiples of the interval, so
         * chunks whose bounds are such multiples downsample independently;
         * each chunk gets exactly the points a read of its range returns. */
        int64_t iv = ds->interval_ms;
        int64_t chunk = iv >= DAY_MS ? iv : (DAY_MS + iv - 1) / iv * iv;
        size_t cap = 0, p = 0;
        for (int64_t c = floor_div(lo, chunk) * chunk; c <= hi; c += chunk) {
            int64_t s = c > lo ? c : lo, e = c + chunk - 1 < hi ? c + chunk - 1 : hi;
            while (p < nr && raw[p].ts_ms < s)
                p++;
            size_t p1 = p;
            while (p1 < nr && raw[p1].ts_ms <= e)
                p1++;
            size_t b = query_downsample_bound(ds, s, e, p1 - p);
            if (n + b > cap) {
                cap = (n + b) * 2;
                res = xrealloc(res, (cap ? cap : 1) * sizeof *res);
            }
            long r = b ? query_downsample(ds, x->tz, s, e, raw + p, p1 - p, res + n, b) : 0;
            if (r < 0) {
                free(res);
                return ds_error(&w->eb, r);
            }
            n += (size_t)r;
            p = p1;
        }
    }
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
        if (x->deadline && oct_clock_mono_ns() > x->deadline)
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

unsigned exec__n_workers(void)
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
int exec__load_all(ex_t *x, const query_sub_t *sub, const xseries_t *ser, size_t n, int64_t lo,
                   int64_t hi, query_dp_t **arr, xnotes_t *notes, size_t *lens, uint8_t *empty)
{
    xjob_t j = {x, sub, ser, n, lo, hi, arr, notes, lens, empty, 0, 0, 0};
    unsigned nw = n >= PARALLEL_MIN_SER ? exec__n_workers() : 1;
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
