/* rollup_auto.c -- rollups made by the TSD beyond the hour: the intervals
 * longer than an hour (query_rollup_is_auto_long) and the backfill of data
 * flushed before tsd.rollups.auto was on (docs/rollups.md).
 *
 * A long period (a day, 6 hours...) is never accumulated: whenever one of
 * its hours' source cells is (re)written -- the flush of the hour's final
 * block, a backfill -- the period's cells are recomputed from every source
 * cell stored for it (sum of sums, sum of counts, min of minima, max of
 * maxima; exact, as each source cell is) and written over the old ones. A
 * replay after kill -9 or a late point rewrites the hour, so the period is
 * recomputed again, never added to: exactly once without bookkeeping, as
 * for the hourly cells. Until its last hour has closed a period holds the
 * rollup of its hours closed so far. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rollup.h"
#include "common/xmalloc.h"
#include "tsdb/parts.h"
#include "tsdb/rollup.h"
#include "tsdb/series.h"
#include "uid/uid.h"

#define RA_BATCH 4096 /* rollup ops per store write */

/* the last one is octsdb's sum of squares (TSDB_ROLLUP_ID_SUMSQ), summed
 * like the sums */
static const char *const ra_names[TSDB_ROLLUP_MAX_IDS] = {"sum", "count", "min", "max", NULL};

typedef struct {
    tw_rollup_cell_t *c;
    size_t n, cap;
    uint64_t written;
} ra_out_t;

static int ra_flush(tsdb_t *db, ra_out_t *o, oct_errbuf_t *eb)
{
    if (o->n == 0) return 0;
    store_op_t *ops = xmalloc(o->n * sizeof *ops);
    for (size_t i = 0; i < o->n; i++) {
        ops[i] = tw_rollup_cell_put(&o->c[i]);
        if (o->c[i].vlen == 0) ops[i].kind = STORE_OP_DELETE_CELL; /* ra_add's del */
    }
    int rc = tw_rollup_write(db, ops, o->n, eb);
    free(ops);
    if (!rc) o->written += o->n;
    o->n = 0;
    return rc;
}

static int ra_add(tsdb_t *db, ra_out_t *o, const codec_rowkey_layout_t *l, const uint8_t *tsuid,
                  size_t len, const query_rollup_interval_t *iv, int id, int64_t start_s,
                  const codec_point_t *v, int del, oct_errbuf_t *eb)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 64;
        o->c = xrealloc(o->c, o->cap * sizeof *o->c);
    }
    int rc = tw_rollup_cell(l, tsuid, len, iv, id, start_s, v, &o->c[o->n], eb);
    if (rc) return rc;
    if (del) o->c[o->n].vlen = 0; /* ra_flush deletes the cell instead */
    o->n++;
    return o->n >= RA_BATCH ? ra_flush(db, o, eb) : 0;
}

static double ra_pv(const codec_point_t *p)
{
    return p->is_float ? p->val.f : (double)p->val.i;
}

/* The aggregate of the source cells src[k][0..n[k]) (k: sum, count, min,
 * max, sum of squares) into v[k]; has[k] says whether there was any. Integer sums stay
 * integers until a double or an overflow. */
static void ra_combine(codec_point_t *const *src, const size_t *n, codec_point_t *v, int *has)
{
    for (int k = 0; k < TSDB_ROLLUP_MAX_IDS; k++) {
        has[k] = n[k] > 0;
        if (!has[k]) continue;
        v[k] = src[k][0];
        for (size_t i = 1; i < n[k]; i++) {
            const codec_point_t *p = &src[k][i];
            if (k == 2 || k == 3) {
                if (k == 2 ? ra_pv(p) < ra_pv(&v[k]) : ra_pv(p) > ra_pv(&v[k])) v[k] = *p;
                continue;
            }
            int64_t r;
            if (!v[k].is_float && !p->is_float &&
                !__builtin_add_overflow(v[k].val.i, p->val.i, &r)) {
                v[k].val.i = r;
                continue;
            }
            double d = ra_pv(&v[k]) + ra_pv(p);
            v[k].is_float = 1;
            v[k].val.f = d;
        }
    }
}

typedef struct {
    const uint8_t *tsuid;
    size_t len;
    int64_t start;
} ra_period_t;

static int ra_cmp_period(const void *a, const void *b)
{
    const ra_period_t *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    int c = memcmp(x->tsuid, y->tsuid, x->len);
    if (c) return c;
    return (x->start > y->start) - (x->start < y->start);
}

/* The start of the period of iv holding hour_s, and its end (clipped at the
 * row's end; with the intervals query_rollup_is_auto_long accepts it never
 * is, but a period must not reach into the next row's index space). */
static int64_t ra_period(const query_rollup_interval_t *iv, int64_t hour_s, int64_t *end)
{
    int64_t base = query_rollup_base_time(iv, hour_s);
    int64_t start = base + (hour_s - base) / iv->interval_s * iv->interval_s;
    int64_t next = query_rollup_next_base(iv, base);
    *end = start + iv->interval_s < next ? start + iv->interval_s : next;
    return start;
}

int tw_rollup_long(tsdb_t *db, const tw_rollup_touch_t *t, size_t n, uint64_t *cells,
                   oct_errbuf_t *eb)
{
    const query_rollup_config_t *c = tsdb_rollups(db);
    if (!c || !c->auto_rollup || n == 0) return 0;
    const query_rollup_interval_t *src = query_rollup_auto_source(c);
    if (!src) return 0;
    int ids[TSDB_ROLLUP_MAX_IDS];
    for (int k = 0; k < TSDB_ROLLUP_MAX_IDS; k++)
        ids[k] = ra_names[k] ? query_rollup_agg_id(c, ra_names[k], strlen(ra_names[k]))
                             : TSDB_ROLLUP_ID_SUMSQ;
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    ra_period_t *p = xmalloc(n * sizeof *p);
    ra_out_t o = {0};
    int rc = 0;
    for (size_t i = 0; i < c->n_iv && !rc; i++) {
        const query_rollup_interval_t *iv = &c->iv[i];
        if (!query_rollup_is_auto_long(c, iv)) continue;
        int64_t end;
        for (size_t k = 0; k < n; k++)
            p[k] = (ra_period_t){t[k].tsuid, t[k].tsuid_len, ra_period(iv, t[k].hour_s, &end)};
        qsort(p, n, sizeof *p, ra_cmp_period);
        for (size_t k = 0; k < n && !rc; k++) {
            if (k && !ra_cmp_period(&p[k - 1], &p[k])) continue;
            int64_t start = ra_period(iv, p[k].start, &end);
            codec_point_t *sv[TSDB_ROLLUP_MAX_IDS];
            size_t sn[TSDB_ROLLUP_MAX_IDS];
            /* the sum and count ids exist (query_rollup_config_load checks);
             * min and max may not: read those that do */
            int rid[TSDB_ROLLUP_MAX_IDS], map[TSDB_ROLLUP_MAX_IDS];
            size_t nr = 0;
            for (int a = 0; a < TSDB_ROLLUP_MAX_IDS; a++)
                if (ids[a] >= 0) {
                    map[nr] = a;
                    rid[nr++] = ids[a];
                }
            codec_point_t *rv[TSDB_ROLLUP_MAX_IDS];
            size_t rn[TSDB_ROLLUP_MAX_IDS];
            rc = tsdb_rollup_read(db, src->table, src, rid, nr, p[k].tsuid, p[k].len, start * 1000,
                                  end * 1000 - 1, rv, rn, eb);
            if (rc) break;
            for (int a = 0; a < TSDB_ROLLUP_MAX_IDS; a++) {
                sv[a] = NULL;
                sn[a] = 0;
            }
            for (size_t r = 0; r < nr; r++) {
                sv[map[r]] = rv[r];
                sn[map[r]] = rn[r];
            }
            codec_point_t v[TSDB_ROLLUP_MAX_IDS];
            int has[TSDB_ROLLUP_MAX_IDS];
            ra_combine(sv, sn, v, has);
            /* a sum of squares only when every source interval has one (an
             * hour rolled up before octsdb kept it, or whose sum a client
             * rewrote, has not): a partial one would be a wrong dev */
            int partial = sn[4] != sn[0] || sn[4] != sn[1];
            if (partial) has[4] = 0;
            for (int a = 0; a < TSDB_ROLLUP_MAX_IDS && !rc; a++)
                if (has[a])
                    rc = ra_add(db, &o, &l, p[k].tsuid, p[k].len, iv, ids[a], start, &v[a], 0, eb);
            if (!rc && partial) { /* and none left from an earlier computation */
                rc = ra_add(db, &o, &l, p[k].tsuid, p[k].len, iv, TSDB_ROLLUP_ID_SUMSQ, start,
                            &v[0], 1, eb);
            }
            for (size_t r = 0; r < nr; r++)
                free(rv[r]);
        }
    }
    if (!rc) rc = ra_flush(db, &o, eb);
    if (cells) *cells += o.written;
    free(o.c);
    free(p);
    return rc;
}

/* ---- backfill ---------------------------------------------------------------- */

/* The hours of one series in [lo_s, hi_s) (whole hours), read in windows of
 * RA_WINDOW_H hours so a year of minutes is never held at once. */
#define RA_WINDOW_H (24 * 7)

static int ra_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The hours in [lo_s, hi_s) that may hold points of s: those with a row of
 * its salt and metric in the data table, and those in its head. Sorted,
 * unique, malloc'd into *out. So a backfill from the epoch reads only
 * hours that exist. */
static int ra_hours(tsdb_t *db, tw_series_t *s, int64_t lo_s, int64_t hi_s, int64_t **out,
                    size_t *n, oct_errbuf_t *eb)
{
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    uint8_t first[TW_MAX_TSUID + 16], last[TW_MAX_TSUID + 16];
    int kl = codec_rowkey_from_tsuid(&l, s->tsuid, s->tsuid_len, lo_s, first, sizeof first, eb);
    if (kl < 0) return kl;
    kl = codec_rowkey_from_tsuid(&l, s->tsuid, s->tsuid_len, hi_s - 3600, last, sizeof last, eb);
    if (kl < 0) return kl;
    size_t plen = codec_rowkey_partition_prefix_len(&l);
    tsdb_parts_t pl = {0};
    int rc = tsdb__parts_collect(db, first, last, plen, &pl, eb);
    if (rc) {
        tsdb__parts_free(&pl);
        return rc;
    }
    tw_lock(&s->mu);
    size_t cap = pl.n + s->nb, k = 0;
    int64_t *h = xmalloc((cap ? cap : 1) * sizeof *h);
    for (uint32_t i = 0; i < s->nb; i++)
        if (s->b[i].base_s >= lo_s && s->b[i].base_s < hi_s) h[k++] = s->b[i].base_s;
    tw_unlock(&s->mu);
    for (size_t i = 0; i < pl.n; i++) {
        oct_slice_t p = tsdb__part(&pl, i);
        h[k++] = oct_get_be32(p.ptr + p.len - 4);
    }
    tsdb__parts_free(&pl);
    qsort(h, k, sizeof *h, ra_cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || h[u - 1] != h[i]) h[u++] = h[i];
    *out = h;
    *n = u;
    return 0;
}

static int ra_backfill_series(tsdb_t *db, tsdb_reader_t *rd, tw_series_t *s, int64_t lo_s,
                              int64_t hi_s, tsdb_rollup_backfill_stats_t *st, oct_errbuf_t *eb)
{
    int rc = 0;
    uint64_t hours = 0;
    tw_rollup_touch_t *touch = NULL;
    size_t nt = 0, capt = 0;
    int64_t *hrs = NULL;
    size_t nhrs = 0;
    rc = ra_hours(db, s, lo_s, hi_s, &hrs, &nhrs, eb);
    for (size_t hx = 0; hx < nhrs && !rc;) {
        int64_t w = hrs[hx];
        int64_t we = w + 3600LL * RA_WINDOW_H < hi_s ? w + 3600LL * RA_WINDOW_H : hi_s;
        while (hx < nhrs && hrs[hx] < we)
            hx++;
        codec_point_t *pts;
        size_t np;
        rc = tsdb_reader_read(rd, s->tsuid, s->tsuid_len, w * 1000, we * 1000 - 1, &pts, &np, eb);
        if (rc) break;
        /* the window's hours in one store write */
        tw_rollup_ops_t hr[RA_WINDOW_H];
        size_t nh = 0, nops = 0;
        for (size_t i = 0; i < np && !rc && nh < RA_WINDOW_H;) {
            int64_t h = codec_rowkey_base_time(pts[i].ts_ms >= 0 ? pts[i].ts_ms / 1000
                                                                 : (pts[i].ts_ms - 999) / 1000);
            size_t j = i;
            while (j < np && pts[j].ts_ms < (h + 3600) * 1000)
                j++;
            rc = tw_rollup_auto_tsuid(db, s->tsuid, s->tsuid_len, h, pts + i, j - i, &hr[nh], eb);
            if (rc) break;
            nops += hr[nh++].n;
            if (nt == capt) {
                capt = capt ? 2 * capt : 64;
                touch = xrealloc(touch, capt * sizeof *touch);
            }
            touch[nt++] = (tw_rollup_touch_t){s->tsuid, s->tsuid_len, h};
            i = j;
        }
        if (!rc && nops) {
            store_op_t *ops = xmalloc(nops * sizeof *ops);
            size_t k = 0;
            for (size_t x = 0; x < nh; x++) {
                memcpy(ops + k, hr[x].ops, hr[x].n * sizeof *ops);
                k += hr[x].n;
            }
            rc = tw_rollup_write(db, ops, nops, eb);
            free(ops);
        }
        if (!rc) {
            st->cells += nops;
            hours += nh;
        }
        for (size_t x = 0; x < nh; x++)
            tw_rollup_ops_free(&hr[x]);
    }
    if (!rc) rc = tw_rollup_long(db, touch, nt, &st->cells, eb);
    free(touch);
    free(hrs);
    if (!rc && hours) {
        st->series++;
        st->hours += hours;
    }
    return rc;
}

int tsdb_rollup_backfill(tsdb_t *db, const tsdb_rollup_backfill_t *o,
                         tsdb_rollup_backfill_stats_t *st, oct_errbuf_t *eb)
{
    const query_rollup_config_t *c = tsdb_rollups(db);
    tsdb_writer_t *w = tsdb__writer(db);
    memset(st, 0, sizeof *st);
    if (!c || !c->auto_rollup)
        return oct_err(eb, OCT_EINVAL,
                       "rollup backfill needs tsd.rollups.enable=true and tsd.rollups.auto=true");
    if (!w) return oct_err(eb, OCT_EIO, "this TSD is read-only");
    uint64_t mid = 0;
    if (o->metric) {
        int rc = uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)o->metric,
                            strlen(o->metric), &mid, eb);
        if (rc) return rc;
    }
    /* whole hours, widened to whole periods of every long interval, so a
     * period is never recomputed from a part of its hours */
    int64_t lo = o->start_ms >= 0 ? o->start_ms / 1000 : 0;
    int64_t hi = o->end_ms / 1000;
    if (hi > (int64_t)UINT32_MAX) hi = (int64_t)UINT32_MAX;
    lo = codec_rowkey_base_time(lo);
    hi = codec_rowkey_base_time(hi) + 3600;
    for (size_t i = 0; i < c->n_iv; i++)
        if (query_rollup_is_auto_long(c, &c->iv[i])) {
            int64_t e;
            int64_t s0 = ra_period(&c->iv[i], lo, &e);
            if (s0 < lo) lo = s0;
            ra_period(&c->iv[i], hi - 3600, &e);
            if (e > hi) hi = e;
        }
    /* row keys end with 2106 (32-bit base times) */
    int64_t top = codec_rowkey_base_time((int64_t)UINT32_MAX) + 3600;
    if (hi > top) hi = top;
    size_t total = atomic_load(&w->n_series);
    st->total = total;
    size_t end = o->limit && o->from + o->limit < total ? o->from + o->limit : total;
    tsdb_reader_t *rd = tsdb_reader_new(db);
    int rc = 0;
    size_t i = o->from;
    for (; i < end && !rc; i++) {
        tw_series_t *s = tw_series_at(w, i);
        if (!s || s->tsuid_len == 0 || (mid && s->metric != mid)) continue;
        /* one flush pass at a time writes rollup cells: a flush of an hour
         * this reads cannot slip its newer cells under older ones */
        pthread_mutex_lock(&w->flush_mu);
        rc = ra_backfill_series(db, rd, s, lo, hi, st, eb);
        pthread_mutex_unlock(&w->flush_mu);
    }
    st->next = rc ? i - 1 : i;
    tsdb_reader_free(rd);
    return rc;
}
