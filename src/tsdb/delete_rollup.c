/* delete_rollup.c -- a range or series delete in the rollup and
 * pre-aggregate tables (delete_rollup.h; the rule is docs/delete.md,
 * "Rollups"): cells whose interval lies in the range go; a cut interval of
 * a table the TSD makes is recomputed from the raw points left, any other
 * cut cell goes whole and is counted as dropped. An old value of a cut
 * interval would be a wrong answer; a missing one is not. */
#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"
#include "codec/rollup.h"
#include "common/clock.h"
#include "common/xmalloc.h"
#include "tsdb/delete_rollup.h"
#include "tsdb/parts.h"
#include "tsdb/retention.h"
#include "tsdb/rollup.h"

#define HOUR_S 3600

/* One (series, hour) to recompute. */
typedef struct {
    uint8_t tsuid[TW_MAX_TSUID];
    size_t len;
    int64_t hour_s;
} dr_hour_t;

struct tsdb_delru {
    dr_hour_t *h; /* hours whose sub-hour cells were cut */
    size_t nh, caph;
    dr_hour_t *p; /* hours of long periods that were cut */
    size_t np, capp;
};

static void redo_add(dr_hour_t **v, size_t *n, size_t *cap, const uint8_t *tsuid, size_t len,
                     int64_t hour_s)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *v = xrealloc(*v, *cap * sizeof **v);
    }
    dr_hour_t *h = &(*v)[(*n)++];
    memcpy(h->tsuid, tsuid, len);
    h->len = len;
    h->hour_s = hour_s;
}

/* One configured table name and how its cells are read. */
typedef struct {
    const char *name;
    const query_rollup_interval_t *iv; /* NULL: the default interval's pre-aggregates (points) */
    int auto_made;                     /* the TSD computes its cells (tsd.rollups.auto) */
    int is_long;                       /* ... from the hour cells (query_rollup_is_auto_long) */
} dr_table_t;

static size_t tables_of(const query_rollup_config_t *c, dr_table_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_iv; i++) {
        const query_rollup_interval_t *iv = &c->iv[i];
        for (int pre = 0; pre < 2; pre++) {
            const char *name = pre ? iv->preagg_table : iv->table;
            if (i == c->default_iv && !pre) continue; /* the raw data table */
            size_t k = 0;
            while (k < n && strcmp(t[k].name, name))
                k++;
            if (k < n) {
                if (pre) t[k].auto_made = 0; /* it also holds pre-aggregates */
                continue;
            }
            t[n].name = name;
            t[n].iv = i == c->default_iv ? NULL : iv;
            t[n].is_long = !pre && query_rollup_is_auto_long(c, iv);
            t[n].auto_made = !pre && (query_rollup_is_auto(c, iv) || t[n].is_long);
            n++;
        }
    }
    /* a name that is also a pre-aggregate table holds client cells too */
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < c->n_iv; i++)
            if (!strcmp(t[k].name, c->iv[i].preagg_table)) t[k].auto_made = 0;
    return n;
}

typedef struct {
    tsdb_t *db;
    tsdb_writer_t *w;
    const tsdb_delete_spec_t *sp;
    int64_t lo, hi, raw_cut; /* the range (ms); the first retained raw ms */
    tsdb_delete_counts_t *c;
    tsdb_delru_t *redo;
    store_op_t *ops;
    size_t ocap;
    oct_errbuf_t *eb;
} dr_ctx_t;

/* The cells of one rollup row: deletes into x->ops, counts, cut intervals
 * into x->redo. Returns the number of ops, or < 0. */
static long row_cells(dr_ctx_t *x, const dr_table_t *t, oct_slice_t part, const store_result_t *row,
                      const uint8_t *tsuid, size_t tl)
{
    const codec_rowkey_layout_t *l = &x->w->rk;
    size_t boff = (size_t)l->salt_w + l->metric_w;
    if (row->cells[0].row.len < boff + 4) return 0;
    int64_t base = oct_get_be32(row->cells[0].row.ptr + boff);
    if (row->n + 1 > x->ocap) {
        x->ocap = 2 * (row->n + 1);
        x->ops = xrealloc(x->ops, x->ocap * sizeof *x->ops);
    }
    size_t nops = 0;
    for (size_t i = 0; i < row->n; i++) {
        const store_cell_t *ce = &row->cells[i];
        int64_t t0, t1; /* the cell's interval, ms, inclusive */
        if (t->iv && ce->qualifier.len == CODEC_ROLLUP_QUAL_LEN) {
            uint32_t idx = oct_get_be16(ce->qualifier.ptr + 1) >> 4;
            int64_t s0 = base + (int64_t)idx * t->iv->interval_s;
            int64_t s1 = s0 + t->iv->interval_s, next = query_rollup_next_base(t->iv, base);
            t0 = s0 * 1000;
            t1 = (s1 < next ? s1 : next) * 1000 - 1;
        } else if (!t->iv && (ce->qualifier.len == 2 || ce->qualifier.len == 4)) {
            codec_dp_t d;
            if (codec_cell_decode_single(ce->qualifier.ptr, ce->qualifier.len, ce->value.ptr,
                                         ce->value.len, &d, x->eb))
                continue; /* not a point of ours */
            t0 = t1 = base * 1000 + d.offset_ms;
        } else {
            continue;
        }
        if (t1 < x->lo || t0 > x->hi) continue;
        if (t0 >= x->lo && t1 <= x->hi) {
            x->c->rollup_cells++;
        } else if (t->auto_made && t0 >= x->raw_cut) {
            x->c->rollup_recomputed++;
            if (x->redo) {
                tsdb_delru_t *r = x->redo;
                if (t->is_long)
                    redo_add(&r->p, &r->np, &r->capp, tsuid, tl, t0 / 1000);
                else
                    redo_add(&r->h, &r->nh, &r->caph, tsuid, tl, codec_rowkey_base_time(t0 / 1000));
            }
        } else {
            x->c->rollup_dropped++;
        }
        x->ops[nops++] = (store_op_t){
            STORE_OP_DELETE_CELL, part, {ce->row, ce->family, ce->qualifier, oct_slice(NULL, 0)}};
    }
    /* a row whose whole span is in the range goes as a row (a client's
     * rollup written into it meanwhile is in the range too) */
    int64_t end = t->iv ? query_rollup_next_base(t->iv, base) : base + HOUR_S;
    if (nops && nops == row->n && base * 1000 >= x->lo && end * 1000 - 1 <= x->hi) {
        x->c->rollup_rows++;
        x->ops[0] = (store_op_t){STORE_OP_DELETE_ROW, part, {row->cells[0].row, {0}, {0}, {0}}};
        nops = 1;
    }
    return (long)nops;
}

/* The partitions of table t holding rows of the metric that may meet the range. */
static int table_cells(dr_ctx_t *x, const dr_table_t *t)
{
    const codec_rowkey_layout_t *l = &x->w->rk;
    size_t tl = strlen(t->name), moff = 1 + tl + l->salt_w;
    size_t plen = moff + l->metric_w + 4;
    uint8_t start[TW_ROLLUP_PART_CAP + 8], stop[TW_ROLLUP_PART_CAP + 8];
    if (tl > 200) return 0; /* never written (rollup.c) */
    start[0] = (uint8_t)tl;
    memcpy(start + 1, t->name, tl);
    memcpy(stop, start, 1 + tl);
    memset(stop + 1 + tl, 0xFF, plen + 1 - (1 + tl));
    tsdb_parts_t pl = {0};
    int rc = tsdb__parts_list(x->w->st, STORE_TABLE_ROLLUP, oct_slice(start, 1 + tl),
                              oct_slice(stop, plen + 1), &pl, x->eb);
    int64_t lo_s = x->lo / 1000, hi_s = x->hi / 1000;
    store_result_t res = STORE_RESULT_INIT;
    uint8_t tsuid[TW_MAX_TSUID];
    for (size_t i = 0; i < pl.n && rc == 0; i++) {
        oct_slice_t p = tsdb__part(&pl, i);
        if (p.len != plen || oct_get_be_n(p.ptr + moff, l->metric_w) != x->sp->metric) continue;
        int64_t base = oct_get_be32(p.ptr + plen - 4);
        int64_t end = t->iv ? query_rollup_next_base(t->iv, base) : base + HOUR_S;
        if (end <= lo_s || base > hi_s) continue;
        store_scan_spec_t spec = {.part = p};
        store_scanner_t *sc;
        if ((rc = store_scan_open(x->w->st, STORE_TABLE_ROLLUP, &spec, &sc, x->eb))) break;
        int r;
        while ((r = store_scan_next(sc, &res, x->eb)) == 1) {
            if (!res.n) continue;
            oct_errbuf_t ieb;
            int n = codec_tsuid_from_rowkey(l, res.cells[0].row.ptr, res.cells[0].row.len, tsuid,
                                            sizeof tsuid, &ieb);
            if (n < 0 || !tsdb__delete_selected(x->w, x->sp, tsuid, (size_t)n)) continue;
            long nops = row_cells(x, t, p, &res, tsuid, (size_t)n);
            if (nops < 0) {
                rc = (int)nops;
                break;
            }
            if (nops && !x->sp->dry_run &&
                (rc = store_write(x->w->st, STORE_TABLE_ROLLUP, x->ops, (size_t)nops, 0, x->eb)))
                break;
        }
        if (r < 0 && !rc) rc = r;
        store_scan_close(sc);
    }
    store_result_free(&res);
    tsdb__parts_free(&pl);
    return rc;
}

int tsdb__delete_rollup_cells(tsdb_t *db, const tsdb_delete_spec_t *sp, int64_t lo_ms,
                              int64_t hi_ms, tsdb_delete_counts_t *c, tsdb_delru_t **redo,
                              oct_errbuf_t *eb)
{
    *redo = NULL;
    const query_rollup_config_t *cf = tsdb_rollups(db);
    if (!cf) return 0;
    dr_table_t *t = xcalloc(2 * cf->n_iv + 1, sizeof *t);
    size_t nt = tables_of(cf, t);
    dr_ctx_t x = {
        .db = db, .w = tsdb__writer(db), .sp = sp, .lo = lo_ms, .hi = hi_ms, .c = c, .eb = eb};
    x.raw_cut = INT64_MIN;
    if (tsdb_retention_enabled(db))
        x.raw_cut = tsdb_retention_cut_ms(db, NULL, sp->metric, oct_clock_wall_ms());
    if (!sp->dry_run) x.redo = xcalloc(1, sizeof *x.redo);
    int rc = 0;
    for (size_t i = 0; i < nt && rc == 0; i++)
        rc = table_cells(&x, &t[i]);
    /* The hours the range cuts at its ends, whatever cells are stored now:
     * a run the crash interrupted may have deleted the cut cells already,
     * and its rerun (tsdb__delete_resume) must still recompute them. */
    int any_auto = 0;
    for (size_t i = 0; i < nt; i++)
        any_auto |= t[i].auto_made;
    int64_t ends[2] = {lo_ms, hi_ms};
    int cut_end[2] = {lo_ms > 0 && lo_ms % (HOUR_S * 1000) != 0,
                      hi_ms < TSDB_DELETE_ALL_TIME_END && (hi_ms + 1) % (HOUR_S * 1000) != 0};
    size_t ns = atomic_load_explicit(&x.w->n_series, memory_order_acquire);
    int in_time[2] = {lo_ms > 0, hi_ms < TSDB_DELETE_ALL_TIME_END};
    for (int e = 0; e < 2 && rc == 0 && x.redo && any_auto; e++) {
        if (!in_time[e] || ends[e] < x.raw_cut) continue;
        int64_t hour = codec_rowkey_base_time(ends[e] / 1000);
        for (size_t i = 0; i < ns; i++) {
            tw_series_t *s = tw_series_at(x.w, i);
            if (!s->tsuid_len || !tsdb__delete_selected(x.w, sp, s->tsuid, s->tsuid_len)) continue;
            if (cut_end[e]) /* its long periods follow (redo) */
                redo_add(&x.redo->h, &x.redo->nh, &x.redo->caph, s->tsuid, s->tsuid_len, hour);
            else /* a long period the range may cut on an hour boundary */
                redo_add(&x.redo->p, &x.redo->np, &x.redo->capp, s->tsuid, s->tsuid_len, hour);
        }
    }
    free(x.ops);
    free(t);
    *redo = x.redo;
    return rc;
}

static int hour_cmp(const void *a, const void *b)
{
    const dr_hour_t *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    int c = memcmp(x->tsuid, y->tsuid, x->len);
    return c ? c : (x->hour_s > y->hour_s) - (x->hour_s < y->hour_s);
}

int tsdb__delete_rollup_redo(tsdb_t *db, tsdb_delru_t *r, oct_errbuf_t *eb)
{
    if (!r) return 0;
    int rc = 0;
    if (r->nh) qsort(r->h, r->nh, sizeof *r->h, hour_cmp);
    tsdb_reader_t *rd = r->nh ? tsdb_reader_new(db) : NULL;
    for (size_t i = 0; i < r->nh && rc == 0; i++) {
        const dr_hour_t *h = &r->h[i];
        if (i && !hour_cmp(&r->h[i - 1], h)) continue;
        codec_point_t *pts;
        size_t n;
        rc = tsdb_reader_read(rd, h->tsuid, h->len, h->hour_s * 1000,
                              (h->hour_s + HOUR_S) * 1000 - 1, &pts, &n, eb);
        tw_rollup_ops_t ops = {0};
        if (rc == 0) rc = tw_rollup_auto_tsuid(db, h->tsuid, h->len, h->hour_s, pts, n, &ops, eb);
        if (rc == 0 && ops.n) rc = tw_rollup_write(db, ops.ops, ops.n, eb);
        tw_rollup_ops_free(&ops);
        /* the hour's long periods follow its new cells */
        redo_add(&r->p, &r->np, &r->capp, h->tsuid, h->len, h->hour_s);
    }
    tsdb_reader_free(rd);
    if (rc == 0 && r->np) {
        tw_rollup_touch_t *t = xmalloc(r->np * sizeof *t);
        for (size_t i = 0; i < r->np; i++)
            t[i] = (tw_rollup_touch_t){r->p[i].tsuid, r->p[i].len, r->p[i].hour_s};
        rc = tw_rollup_long(db, t, r->np, NULL, eb);
        free(t);
    }
    free(r->h);
    free(r->p);
    free(r);
    return rc;
}
