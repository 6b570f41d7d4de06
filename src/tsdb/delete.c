/* delete.c -- octsdb's delete (delete.h; the design and its ordering
 * against the write path are docs/delete.md): a DELETE record in the log and
 * the head purged under the put barrier, the record synced, then the rows of
 * the range rewritten or deleted, with the flush lock held throughout. */
#include "tsdb/delete.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "codec/cell.h"
#include "codec/histogram.h"
#include "common/xmalloc.h"
#include "tsdb/annotation.h"
#include "tsdb/delete_rollup.h"
#include "tsdb/maint.h"
#include "tsdb/parts.h"
#include "tsdb/series.h"
#include "tsdb/tsmeta.h"
#include "uid/uid.h"

#define HOUR_MS ((int64_t)CODEC_ROWKEY_SPAN_S * 1000)

/* ---- which series --------------------------------------------------- */

static int has_pair(const tsdb_writer_t *w, const uint8_t *tsuid, size_t len, uint64_t k,
                    uint64_t v)
{
    unsigned mw = w->rk.metric_w, kw = w->rk.tagk_w, vw = w->rk.tagv_w;
    for (size_t off = mw; off + kw + vw <= len; off += kw + vw)
        if (oct_get_be_n(tsuid + off, kw) == k && oct_get_be_n(tsuid + off + kw, vw) == v) return 1;
    return 0;
}

int tsdb__delete_selected(const tsdb_writer_t *w, const tsdb_delete_spec_t *sp,
                          const uint8_t *tsuid, size_t len)
{
    if (len < w->rk.metric_w || oct_get_be_n(tsuid, w->rk.metric_w) != sp->metric) return 0;
    if (sp->n_tsuids) {
        for (size_t i = 0; i < sp->n_tsuids; i++)
            if (sp->tsuids[i].len == len && !memcmp(sp->tsuids[i].ptr, tsuid, len)) return 1;
        return 0;
    }
    for (size_t i = 0; i < sp->n_tags; i++)
        if (!has_pair(w, tsuid, len, sp->tags[2 * i], sp->tags[2 * i + 1])) return 0;
    return 1;
}

/* ---- the head ------------------------------------------------------- */

/* Removes (or, count_only, counts) the points of s's head in [lo, hi].
 * With forget_seq its buckets in range also forget their next block seq:
 * the store's row was rewritten. Caller holds the flush lock (no bucket is
 * being flushed). */
static uint64_t head_purge(tsdb_writer_t *w, tw_series_t *s, int64_t lo, int64_t hi, int count_only,
                           int forget_seq)
{
    uint64_t gone = 0;
    tw_lock(&s->mu);
    for (uint32_t i = 0; i < s->nb; i++) {
        tw_bucket_t *b = &s->b[i];
        if (b->base_s * 1000 + HOUR_MS <= lo || b->base_s * 1000 > hi) continue;
        if (forget_seq) b->next_seq = -1;
        uint32_t k = 0;
        for (uint32_t j = 0; j < b->n; j++) {
            if (b->cur[j].ts_ms >= lo && b->cur[j].ts_ms <= hi) {
                gone++;
                continue;
            }
            if (!count_only) b->cur[k] = b->cur[j];
            k++;
        }
        if (!count_only) b->n = k;
    }
    tw_unlock(&s->mu);
    if (!count_only && gone) atomic_fetch_sub(&w->head_points, gone);
    return gone;
}

/* Does a DELETE record's key (a metric UID, or a whole TSUID) name s? A
 * TSUID is not a prefix match: {host=a} must not take {host=a,dc=b}. */
static int key_names(const tsdb_writer_t *w, const tw_series_t *s, const uint8_t *key, size_t len)
{
    if (len > w->rk.metric_w && s->tsuid_len != len) return 0;
    return s->tsuid_len >= len && !memcmp(s->tsuid, key, len);
}

void tw_head_purge_prefix(tsdb_writer_t *w, const uint8_t *prefix, size_t len, int64_t lo,
                          int64_t hi)
{
    size_t ns = atomic_load_explicit(&w->n_series, memory_order_acquire);
    for (size_t i = 0; i < ns; i++) {
        tw_series_t *s = tw_series_at(w, i);
        if (key_names(w, s, prefix, len)) (void)head_purge(w, s, lo, hi, 0, 0);
    }
}

static int head_empty(tw_series_t *s)
{
    int empty = 1;
    tw_lock(&s->mu);
    for (uint32_t i = 0; i < s->nb && empty; i++)
        empty = s->b[i].n == 0 && s->b[i].nfl == 0;
    tw_unlock(&s->mu);
    return empty;
}

long tw_series_forget(tsdb_writer_t *w, const tsdb_delete_spec_t *sp, const uint8_t *key,
                      size_t len, oct_errbuf_t *eb)
{
    size_t ns = atomic_load_explicit(&w->n_series, memory_order_acquire);
    store_op_t *ops = NULL;
    size_t nops = 0, cap = 0;
    uint64_t metric = sp ? sp->metric : oct_get_be_n(key, w->rk.metric_w);
    /* create_mu: a revive (a put to a series being forgotten) is either
     * wholly before or wholly after */
    pthread_mutex_lock(&w->create_mu);
    for (size_t i = 0; i < ns; i++) {
        tw_series_t *s = tw_series_at(w, i);
        if (!s->tsuid_len || atomic_load(&s->gone)) continue;
        if (sp ? !tsdb__delete_selected(w, sp, s->tsuid, s->tsuid_len) : !key_names(w, s, key, len))
            continue;
        if (!head_empty(s)) continue; /* put to after the delete: a new write */
        atomic_store(&s->gone, 1);
        if (nops == cap) {
            cap = cap ? 2 * cap : 16;
            ops = xrealloc(ops, cap * sizeof *ops);
        }
        ops[nops++] = (store_op_t){STORE_OP_DELETE_CELL,
                                   oct_slice(s->tsuid, w->rk.metric_w),
                                   {oct_slice(s->tsuid, s->tsuid_len), oct_slice_str("name"),
                                    oct_slice_str(TW_META_QUAL), oct_slice(NULL, 0)}};
    }
    if (nops) tw_index_drop_gone(w->index, metric);
    pthread_mutex_unlock(&w->create_mu);
    int rc = nops ? store_write(w->st, STORE_TABLE_META, ops, nops, 0, eb) : 0;
    free(ops);
    return rc ? rc : (long)nops;
}

/* ---- the store ------------------------------------------------------ */

typedef struct {
    tsdb_t *db;
    tsdb_writer_t *w;
    const tsdb_delete_spec_t *sp;
    tsdb_delete_counts_t *c;
    oct_errbuf_t *eb;
    uint64_t rows_seen;
    tw_rpt_t *v;
    size_t vcap;
    codec_point_t *keep;
    size_t kcap;
    store_op_t *ops;
    size_t ocap;
    uint8_t *val;
    size_t valcap;
    uint8_t *last_tsuid; /* the series of the row being looked at */
    size_t last_len;
    uint64_t *seen; /* hashes of the series counted (open addressing, 0 = empty) */
    size_t seen_mask, nseen;
    uint8_t q0[CODEC_BLOCK_QUAL_LEN];
    /* (tsuid, start) of the notes to delete, after the scan */
    struct ann {
        uint8_t tsuid[TW_MAX_TSUID];
        size_t len;
        int64_t start;
    } * anns;
    size_t nann, capann;
} del_ctx_t;

/* Counts the series of tsuid once (rows come hour by hour, the head apart). */
static void count_series(del_ctx_t *x, const uint8_t *tsuid, size_t len)
{
    uint64_t h = tw_hash_bytes(tsuid, len, 0x9E3779B97F4A7C15ull) | 1;
    if (2 * (x->nseen + 1) > x->seen_mask + 1) {
        size_t nm = x->seen_mask ? 2 * x->seen_mask + 1 : 255;
        uint64_t *t = xcalloc(nm + 1, sizeof *t);
        for (size_t i = 0; x->seen && i <= x->seen_mask; i++) {
            if (!x->seen[i]) continue;
            size_t j = x->seen[i] & nm;
            while (t[j])
                j = (j + 1) & nm;
            t[j] = x->seen[i];
        }
        free(x->seen);
        x->seen = t;
        x->seen_mask = nm;
    }
    size_t j = h & x->seen_mask;
    while (x->seen[j] && x->seen[j] != h)
        j = (j + 1) & x->seen_mask;
    if (x->seen[j]) return;
    x->seen[j] = h;
    x->nseen++;
    x->c->series++;
}

static void ops_reserve(del_ctx_t *x, size_t need)
{
    if (need <= x->ocap) return;
    x->ocap = need * 2;
    x->ops = xrealloc(x->ops, x->ocap * sizeof *x->ops);
}

static int64_t json_start(const char *json, size_t len)
{
    static const char key[] = "\"startTime\":";
    const char *p = memmem(json, len, key, sizeof key - 1);
    return p ? strtoll(p + sizeof key - 1, NULL, 10) : -1;
}

static int note_cb(void *ctx, const char *json, size_t len)
{
    del_ctx_t *x = ctx;
    int64_t st = json_start(json, len);
    if (st < 0) return 0;
    if (x->nann == x->capann) {
        x->capann = x->capann ? 2 * x->capann : 16;
        x->anns = xrealloc(x->anns, x->capann * sizeof *x->anns);
    }
    struct ann *a = &x->anns[x->nann++];
    memcpy(a->tsuid, x->last_tsuid, x->last_len);
    a->len = x->last_len;
    a->start = st;
    x->c->annotations++;
    return 0;
}

/* One data row of the metric in the range's hours. */
static int row_cb(void *ctx, const tsdb_row_t *row)
{
    del_ctx_t *x = ctx;
    tsdb_writer_t *w = x->w;
    const tsdb_delete_spec_t *sp = x->sp;
    if (x->sp->progress && (++x->rows_seen & 255) == 0)
        sp->progress(sp->progress_ctx, x->rows_seen);
    uint8_t tsuid[TW_MAX_TSUID];
    oct_errbuf_t ieb;
    int tl = codec_tsuid_from_rowkey(&w->rk, row->key.ptr, row->key.len, tsuid, sizeof tsuid, &ieb);
    if (tl < 0 || !tsdb__delete_selected(w, sp, tsuid, (size_t)tl)) return 0;
    if (!x->last_tsuid || x->last_len != (size_t)tl || memcmp(x->last_tsuid, tsuid, (size_t)tl)) {
        x->last_tsuid = xrealloc(x->last_tsuid, (size_t)tl);
        memcpy(x->last_tsuid, tsuid, (size_t)tl);
        x->last_len = (size_t)tl;
    }
    size_t plen = codec_rowkey_partition_prefix_len(&w->rk);
    uint32_t base = oct_get_be32(row->key.ptr + plen - CODEC_ROWKEY_TS_BYTES);
    int64_t h0 = (int64_t)base * 1000, h1 = h0 + HOUR_MS - 1;
    int64_t lo = sp->start_ms > h0 ? sp->start_ms : h0, hi = sp->end_ms < h1 ? sp->end_ms : h1;
    if (hi < lo) return 0;
    const store_result_t *raw = row->raw;

    /* the row's points: every one, ranked, then the visible ones */
    size_t n = 0;
    int32_t ms;
    int rc = tw_row_points(raw, 0, raw->n, base, h0, h1, &x->v, &n, &x->vcap, &ms, x->eb);
    if (rc) return rc;
    if (n > x->kcap) {
        x->kcap = n * 2;
        x->keep = xrealloc(x->keep, x->kcap * sizeof *x->keep);
    }
    size_t nv = tw_merge_ranked(x->v, n, w->fix_dups, NULL, x->keep);
    size_t nk = 0, gone = 0;
    for (size_t i = 0; i < nv; i++) {
        if (x->keep[i].ts_ms >= lo && x->keep[i].ts_ms <= hi)
            gone++;
        else
            x->keep[nk++] = x->keep[i];
    }
    size_t hist = 0, others = 0;
    for (size_t i = 0; i < raw->n; i++) {
        const store_cell_t *c = &raw->cells[i];
        codec_qual_kind_t k = codec_qual_classify(c->qualifier.ptr, c->qualifier.len);
        uint32_t off;
        int hms;
        if (k == CODEC_QUAL_HISTOGRAM &&
            !codec_hist_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &off, &hms)) {
            if (h0 + off >= lo && h0 + off <= hi)
                hist++;
            else
                others++;
        } else if (k == CODEC_QUAL_ANNOTATION || k == CODEC_QUAL_UNKNOWN) {
            others++; /* notes in range are deleted after the scan, with their index */
        }
    }
    size_t nann0 = x->nann;
    rc = tsdb_annotation_scan_cells(raw->cells, raw->n, lo, hi, note_cb, x);
    if (rc) return rc;
    if (!gone && !hist && x->nann == nann0) return 0;
    count_series(x, tsuid, (size_t)tl);
    x->c->points += gone;
    x->c->histograms += hist;
    int whole = nk == 0 && others == 0;
    if (whole)
        x->c->rows_deleted++;
    else if (gone || hist)
        x->c->rows_rewritten++;
    if (sp->dry_run || (!gone && !hist)) return 0;

    oct_slice_t part = oct_slice(row->key.ptr, plen);
    size_t nops = 0;
    if (whole) {
        ops_reserve(x, 1);
        x->ops[nops++] = (store_op_t){STORE_OP_DELETE_ROW, part, {row->key, {0}, {0}, {0}}};
    } else {
        /* every point cell goes; what is left becomes one block, seq 0 */
        ops_reserve(x, raw->n + 1);
        for (size_t i = 0; i < raw->n; i++) {
            const store_cell_t *c = &raw->cells[i];
            codec_qual_kind_t k = codec_qual_classify(c->qualifier.ptr, c->qualifier.len);
            int drop = k == CODEC_QUAL_SECONDS || k == CODEC_QUAL_MS || k == CODEC_QUAL_COMPACTED ||
                       k == CODEC_QUAL_APPEND || k == CODEC_QUAL_BLOCK;
            uint32_t off;
            int hms;
            if (k == CODEC_QUAL_HISTOGRAM &&
                !codec_hist_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &off, &hms))
                drop = h0 + off >= lo && h0 + off <= hi;
            if (drop && !(gone == 0 && k != CODEC_QUAL_HISTOGRAM))
                x->ops[nops++] = (store_op_t){
                    STORE_OP_DELETE_CELL, part, {row->key, c->family, c->qualifier, {0}}};
        }
        if (gone && nk) {
            size_t cap = codec_block_encode_bound(nk);
            if (cap > x->valcap) {
                x->valcap = cap;
                x->val = xrealloc(x->val, cap);
            }
            ssize_t r = codec_block_encode(x->keep, nk, x->val, cap, CODEC_BLOCK_ENC_AUTO, NULL);
            if (r < 0) return oct_err(x->eb, (int)r, "cannot encode a block of %zu points", nk);
            uint8_t *q0 = x->q0;
            codec_block_qualifier(0, q0);
            /* a put after the deletes of the same cell wins in one batch */
            x->ops[nops++] =
                (store_op_t){STORE_OP_PUT,
                             part,
                             {row->key, oct_slice_str(TW_FAMILY),
                              oct_slice(q0, CODEC_BLOCK_QUAL_LEN), oct_slice(x->val, (size_t)r)}};
        }
    }
    return nops ? store_write(w->st, STORE_TABLE_DATA, x->ops, nops, 0, x->eb) : 0;
}

/* Whole metric: its rows in every rollup and pre-aggregate table. */
static int delete_rollups(del_ctx_t *x)
{
    tsdb_writer_t *w = x->w;
    tsdb_parts_t pl = {0};
    int rc = tsdb__parts_list(w->st, STORE_TABLE_ROLLUP, oct_slice(NULL, 0), oct_slice(NULL, 0),
                              &pl, x->eb);
    store_result_t res = STORE_RESULT_INIT;
    for (size_t i = 0; i < pl.n && rc == 0; i++) {
        oct_slice_t p = tsdb__part(&pl, i);
        size_t off = p.len ? 1u + p.ptr[0] + w->rk.salt_w : 0;
        if (!p.len || off + w->rk.metric_w > p.len ||
            oct_get_be_n(p.ptr + off, w->rk.metric_w) != x->sp->metric)
            continue;
        store_scan_spec_t spec = {.part = p};
        store_scanner_t *sc;
        if ((rc = store_scan_open(w->st, STORE_TABLE_ROLLUP, &spec, &sc, x->eb))) break;
        int r;
        while ((r = store_scan_next(sc, &res, x->eb)) == 1) {
            if (!res.n) continue;
            x->c->rollup_rows++;
            if (x->sp->dry_run) continue;
            store_op_t op = {STORE_OP_DELETE_ROW, p, {res.cells[0].row, {0}, {0}, {0}}};
            if ((rc = store_write(w->st, STORE_TABLE_ROLLUP, &op, 1, 0, x->eb))) break;
        }
        if (r < 0 && !rc) rc = r;
        store_scan_close(sc);
    }
    store_result_free(&res);
    tsdb__parts_free(&pl);
    return rc;
}

/* All-time deletes: the TSMeta and counter cells of the series (the series
 * record, name:octsdb_series, is tw_series_forget's). */
static int delete_meta(del_ctx_t *x)
{
    tsdb_writer_t *w = x->w;
    uint8_t pb[8];
    oct_put_be_n(pb, x->sp->metric, w->rk.metric_w);
    store_scan_spec_t spec = {.part = oct_slice(pb, w->rk.metric_w),
                              .family = oct_slice_str(TSMETA_FAMILY)};
    store_scanner_t *sc;
    store_result_t res = STORE_RESULT_INIT;
    int rc = store_scan_open(w->st, STORE_TABLE_META, &spec, &sc, x->eb);
    if (rc) return rc;
    int r;
    while ((r = store_scan_next(sc, &res, x->eb)) == 1) {
        int had = 0;
        /* a TSMeta row's key is its TSUID (docs/format/meta.md) */
        if (!res.n ||
            (!x->sp->whole_metric &&
             !tsdb__delete_selected(w, x->sp, res.cells[0].row.ptr, res.cells[0].row.len)))
            continue;
        for (size_t i = 0; i < res.n; i++) {
            oct_slice_t q = res.cells[i].qualifier;
            if (!oct_slice_eq(q, oct_slice_str(TSMETA_QUAL_META)) &&
                !oct_slice_eq(q, oct_slice_str(TSMETA_QUAL_CTR)))
                continue;
            had = 1;
            if (x->sp->dry_run) continue;
            store_op_t op = {
                STORE_OP_DELETE_CELL, spec.part, {res.cells[i].row, res.cells[i].family, q, {0}}};
            if ((rc = store_write(w->st, STORE_TABLE_META, &op, 1, 0, x->eb))) break;
        }
        x->c->meta_rows += (uint64_t)had;
        if (rc) break;
    }
    if (r < 0 && !rc) rc = r;
    store_scan_close(sc);
    store_result_free(&res);
    return rc;
}

/* ---- an interrupted delete (docs/format/layout.md, "Pending delete") -- */

#define PENDING_PART "delete"
#define PENDING_ROW  "pending"
#define PENDING_FAM  "d"
#define PENDING_QUAL "spec"

static store_op_t pending_op(store_op_kind_t k, oct_slice_t val)
{
    return (store_op_t){
        k,
        oct_slice_str(PENDING_PART),
        {oct_slice_str(PENDING_ROW), oct_slice_str(PENDING_FAM), oct_slice_str(PENDING_QUAL), val}};
}

/* Records the delete about to change the store, synced: a crash before it
 * is done leaves the record, and the next open completes the delete
 * (tsdb__delete_resume). */
static int pending_put(tsdb_writer_t *w, const tsdb_delete_spec_t *sp, int64_t lo, int64_t hi,
                       oct_errbuf_t *eb)
{
    size_t cap = 31 + 16 * sp->n_tags + 4;
    for (size_t i = 0; i < sp->n_tsuids; i++)
        cap += 1 + sp->tsuids[i].len;
    uint8_t *v = xmalloc(cap), *p = v;
    *p++ = 1; /* version */
    *p++ = (uint8_t)(sp->whole_metric ? 1 : 0);
    oct_put_be64(p, sp->metric);
    oct_put_be64(p + 8, (uint64_t)lo);
    oct_put_be64(p + 16, (uint64_t)hi);
    p += 24;
    oct_put_be16(p, (uint16_t)sp->n_tags);
    p += 2;
    for (size_t i = 0; i < 2 * sp->n_tags; i++, p += 8)
        oct_put_be64(p, sp->tags[i]);
    oct_put_be32(p, (uint32_t)sp->n_tsuids);
    p += 4;
    for (size_t i = 0; i < sp->n_tsuids; i++) {
        *p++ = (uint8_t)sp->tsuids[i].len;
        memcpy(p, sp->tsuids[i].ptr, sp->tsuids[i].len);
        p += sp->tsuids[i].len;
    }
    store_op_t op = pending_op(STORE_OP_PUT, oct_slice(v, (size_t)(p - v)));
    int rc = store_write(w->st, STORE_TABLE_SYS, &op, 1, 1, eb);
    free(v);
    return rc;
}

static int pending_del(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    store_op_t op = pending_op(STORE_OP_DELETE_CELL, oct_slice(NULL, 0));
    return store_write(w->st, STORE_TABLE_SYS, &op, 1, 0, eb);
}

/* The delete's part in the store (docs/delete.md, step 4, and the rollup
 * and meta tables), for a delete whose log record is durable and whose head
 * points are gone: inhead[0..ns) marks the series that had head points in
 * the range (NULL: none). Caller holds the flush lock; del_gen is odd
 * unless dry (this makes it even). *rows: data rows looked at. */
static int store_part(tsdb_t *db, const tsdb_delete_spec_t *sp, int64_t lo, int64_t hi,
                      const uint8_t *inhead, size_t ns, tsdb_delete_counts_t *out, uint64_t *rows,
                      oct_errbuf_t *eb)
{
    tsdb_writer_t *w = tsdb__writer(db);
    int all_time = lo <= 0 && hi >= TSDB_DELETE_ALL_TIME_END;
    int rc = 0;
    del_ctx_t x = {.db = db, .w = w, .sp = sp, .c = out, .eb = eb};
    for (size_t i = 0; i < ns; i++)
        if (inhead && inhead[i])
            count_series(&x, tw_series_at(w, i)->tsuid, tw_series_at(w, i)->tsuid_len);
    if (rc == 0) {
        /* rows come partition by partition (hour by hour): count a series
         * once by remembering which series had any */
        tsdb_rows_spec_t rs = {.metric = sp->metric, .start_ms = lo, .end_ms = hi};
        rc = tsdb_scan_rows(db, &rs, row_cb, &x, eb);
    }
    /* the notes of the range, with their index entries */
    for (size_t i = 0; i < x.nann && rc == 0 && !sp->dry_run; i++) {
        int r = tsdb_annotation_delete(db, x.anns[i].tsuid, x.anns[i].len, x.anns[i].start, eb);
        if (r < 0) rc = r;
    }
    tsdb_delru_t *redo = NULL;
    if (rc == 0 && sp->whole_metric)
        rc = delete_rollups(&x);
    else if (rc == 0)
        rc = tsdb__delete_rollup_cells(db, sp, lo, hi, out, &redo, eb);
    if (rc == 0 && all_time) rc = delete_meta(&x);
    if (rc == 0 && !sp->dry_run) rc = store_sync(w->st, eb);
    if (!sp->dry_run) {
        for (size_t i = 0; i < ns; i++) {
            tw_series_t *s = tw_series_at(w, i);
            if (s->tsuid_len && tsdb__delete_selected(w, sp, s->tsuid, s->tsuid_len))
                (void)head_purge(w, s, lo, hi, 1, 1);
        }
        atomic_fetch_add(&w->del_gen, 1);
    }
    /* the cut rollup intervals, from the raw points left: reads of the
     * metric no longer wait (del_gen even); no flush writes rollups meanwhile */
    int had_redo = redo != NULL;
    int r2 = tsdb__delete_rollup_redo(db, redo, eb);
    if (rc == 0) rc = r2;
    if (rc == 0 && had_redo) rc = store_sync(w->st, eb);
    *rows = x.rows_seen;
    free(x.v);
    free(x.keep);
    free(x.ops);
    free(x.val);
    free(x.last_tsuid);
    free(x.anns);
    free(x.seen);
    return rc;
}

int tsdb_delete_resolve(tsdb_t *db, oct_slice_t metric, const oct_slice_t *tags, size_t n_tags,
                        uint64_t *tag_uids, tsdb_delete_spec_t *sp, oct_errbuf_t *eb)
{
    static const char *const kn[] = {"metrics", "tagk", "tagv"};
    for (size_t i = 0; i <= 2 * n_tags; i++) {
        codec_uid_kind_t k = i == 0 ? CODEC_UID_METRIC : i % 2 ? CODEC_UID_TAGK : CODEC_UID_TAGV;
        oct_slice_t name = i == 0 ? metric : tags[i - 1];
        uint64_t id;
        int rc = uid_get_id(tsdb_uids(db), k, name.ptr, name.len, &id, eb);
        if (rc == OCT_ENOSUCHNAME)
            return oct_err(eb, rc, "No such name for '%s': '%.*s'", kn[k], (int)name.len,
                           (const char *)name.ptr);
        if (rc) return rc;
        if (i == 0)
            sp->metric = id;
        else
            tag_uids[i - 1] = id;
    }
    sp->tags = tag_uids;
    sp->n_tags = n_tags;
    return 0;
}

/* ---- the delete ----------------------------------------------------- */

int tsdb_delete(tsdb_t *db, const tsdb_delete_spec_t *sp, tsdb_delete_counts_t *out,
                oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    tsdb_writer_t *w = tsdb__writer(db);
    if (!w || !w->wal) return oct_err(eb, OCT_EINVAL, "the database is open read-only");
    if (w->shared)
        return oct_err(
            eb, OCT_EINVAL,
            "deleting from a store several TSDs share is not supported (docs/delete.md)");
    if (sp->start_ms > sp->end_ms) return oct_err(eb, OCT_EINVAL, "start must not be after end");
    if (sp->whole_metric && (sp->n_tsuids || sp->n_tags || sp->start_ms > 0 ||
                             sp->end_ms < (int64_t)UINT32_MAX * 1000 + 999))
        return oct_err(eb, OCT_EINVAL, "a whole-metric delete takes no tags, series or range");
    if (sp->delete_uid && !sp->whole_metric)
        return oct_err(eb, OCT_EINVAL,
                       "deleteUid needs a whole-metric delete (no tags, tsuids, start or end)");
    for (size_t i = 0; i < sp->n_tsuids; i++) {
        int r = codec_tsuid_check(&w->rk, sp->tsuids[i].ptr, sp->tsuids[i].len, eb);
        if (r < 0) return r;
        if (sp->tsuids[i].len > TW_MAX_TSUID ||
            oct_get_be_n(sp->tsuids[i].ptr, w->rk.metric_w) != sp->metric)
            return oct_err(eb, OCT_EINVAL, "every TSUID of a delete must be of the one metric");
    }
    int64_t lo = sp->start_ms < 0 ? 0 : sp->start_ms, hi = sp->end_ms;
    int all_time = lo <= 0 && hi >= TSDB_DELETE_ALL_TIME_END;

    pthread_mutex_lock(&w->flush_mu);
    int rc = 0;
    size_t ns = atomic_load_explicit(&w->n_series, memory_order_acquire);
    uint8_t *inhead = xcalloc(ns ? ns : 1, 1); /* series with head points in range */
    if (!sp->dry_run) {
        /* readers of this metric wait for the delete (docs/delete.md) */
        atomic_store(&w->del_metric, sp->metric);
        atomic_fetch_add(&w->del_gen, 1);
        pthread_rwlock_wrlock(&w->barrier);
        uint64_t seg;
        rc = tsdb_wal_lock(w->wal, &seg, eb);
        if (rc == 0) {
            uint8_t rec[TSDB_WAL_REC_HDR + 1 + TW_MAX_TSUID + 20];
            if (sp->n_tsuids == 0 && sp->n_tags == 0) {
                uint8_t m[8];
                oct_put_be_n(m, sp->metric, w->rk.metric_w);
                size_t rl = tsdb_wal_delete_record(rec, m, w->rk.metric_w, lo, hi);
                tsdb_wal_append_locked(w->wal, rec, rl);
            } else {
                for (size_t i = 0; i < ns; i++) {
                    tw_series_t *s = tw_series_at(w, i);
                    if (!s->tsuid_len || !tsdb__delete_selected(w, sp, s->tsuid, s->tsuid_len))
                        continue;
                    size_t rl = tsdb_wal_delete_record(rec, s->tsuid, s->tsuid_len, lo, hi);
                    tsdb_wal_append_locked(w->wal, rec, rl);
                }
            }
            uint64_t pos = tsdb_wal_unlock(w->wal);
            for (size_t i = 0; i < ns; i++) {
                tw_series_t *s = tw_series_at(w, i);
                if (!s->tsuid_len || !tsdb__delete_selected(w, sp, s->tsuid, s->tsuid_len))
                    continue;
                uint64_t g = head_purge(w, s, lo, hi, 0, 0);
                out->points += g;
                inhead[i] = g > 0;
            }
            pthread_rwlock_unlock(&w->barrier);
            rc = tsdb_wal_wait(w->wal, pos, 1, -1, eb);
            if (rc == 0 && all_time) {
                /* after the record is durable: a crash before it must not
                 * lose a series the log does not say was deleted */
                pthread_rwlock_wrlock(&w->barrier);
                long f = tw_series_forget(w, sp, NULL, 0, eb);
                pthread_rwlock_unlock(&w->barrier);
                if (f < 0)
                    rc = (int)f;
                else
                    out->forgotten = (uint64_t)f;
            }
        } else {
            pthread_rwlock_unlock(&w->barrier);
        }
    } else {
        for (size_t i = 0; i < ns; i++) {
            tw_series_t *s = tw_series_at(w, i);
            if (!s->tsuid_len || !tsdb__delete_selected(w, sp, s->tsuid, s->tsuid_len)) continue;
            uint64_t g = head_purge(w, s, lo, hi, 1, 0);
            out->points += g;
            inhead[i] = g > 0;
            out->forgotten += all_time && !atomic_load(&s->gone);
        }
    }

    if (rc == 0 && !sp->dry_run) rc = pending_put(w, sp, lo, hi, eb);
    uint64_t rows = 0;
    if (rc == 0)
        rc = store_part(db, sp, lo, hi, inhead, ns, out, &rows, eb);
    else if (!sp->dry_run)
        atomic_fetch_add(&w->del_gen, 1); /* even again: readers go on */
    if (!sp->dry_run) {
        /* even on an error: the caller hears of it and may run it again */
        int r = pending_del(w, eb);
        if (rc == 0) rc = r;
    }
    pthread_mutex_unlock(&w->flush_mu);
    if (sp->progress) sp->progress(sp->progress_ctx, rows);
    if (rc == 0 && sp->delete_uid && !sp->dry_run) {
        /* after the data: a failure leaves the name, which a retry deletes */
        uint8_t name[1024];
        size_t nl = 0;
        rc = uid_get_name(w->uids, CODEC_UID_METRIC, sp->metric, name, sizeof name, &nl, eb);
        if (rc == 0) rc = uid_delete(w->uids, CODEC_UID_METRIC, name, nl, eb);
        out->uid_deleted = rc == 0;
    }
    free(inhead);
    return rc;
}

int tsdb__delete_resume(tsdb_t *db, oct_errbuf_t *eb)
{
    tsdb_writer_t *w = tsdb__writer(db);
    if (!w || !w->wal || w->shared) return 0;
    store_result_t r = STORE_RESULT_INIT;
    int rc = store_get(w->st, STORE_TABLE_SYS, oct_slice_str(PENDING_PART),
                       oct_slice_str(PENDING_ROW), oct_slice_str(PENDING_FAM), &r, eb);
    if (rc < 0 || r.n == 0) {
        store_result_free(&r);
        return rc < 0 ? rc : 0;
    }
    const uint8_t *v = r.cells[0].value.ptr, *end = v + r.cells[0].value.len;
    tsdb_delete_spec_t sp = {0};
    uint64_t *tags = NULL;
    oct_slice_t *tsuids = NULL;
    int bad = end - v < 32 || v[0] != 1;
    if (!bad) {
        sp.whole_metric = v[1] & 1;
        sp.metric = oct_get_be64(v + 2);
        sp.start_ms = (int64_t)oct_get_be64(v + 10);
        sp.end_ms = (int64_t)oct_get_be64(v + 18);
        sp.n_tags = oct_get_be16(v + 26);
        v += 28;
        bad = (size_t)(end - v) < 16 * sp.n_tags + 4;
    }
    if (!bad) {
        tags = xmalloc((2 * sp.n_tags + 1) * sizeof *tags);
        for (size_t i = 0; i < 2 * sp.n_tags; i++, v += 8)
            tags[i] = oct_get_be64(v);
        sp.tags = tags;
        sp.n_tsuids = oct_get_be32(v);
        v += 4;
        bad = (size_t)(end - v) < sp.n_tsuids;
    }
    if (!bad) {
        tsuids = xmalloc((sp.n_tsuids + 1) * sizeof *tsuids);
        for (size_t i = 0; i < sp.n_tsuids && !bad; i++) {
            bad = v >= end || (size_t)(end - v - 1) < v[0];
            if (!bad) tsuids[i] = oct_slice(v + 1, v[0]);
            if (!bad) v += 1 + v[0];
        }
        sp.tsuids = tsuids;
    }
    if (bad) {
        rc = oct_err(eb, OCT_ECORRUPT, "the record of an interrupted delete is corrupt");
    } else {
        /* the log's DELETE record emptied the head on replay; the store
         * part is idempotent: run it again, then forget the record */
        tsdb_delete_counts_t c = {0};
        uint64_t rows;
        pthread_mutex_lock(&w->flush_mu);
        atomic_store(&w->del_metric, sp.metric);
        atomic_fetch_add(&w->del_gen, 1);
        rc = store_part(db, &sp, sp.start_ms, sp.end_ms, NULL, 0, &c, &rows, eb);
        if (rc == 0) rc = pending_del(w, eb);
        pthread_mutex_unlock(&w->flush_mu);
        if (rc) {
            char m[sizeof eb->msg];
            memcpy(m, eb->msg, sizeof m);
            oct_err(eb, rc, "completing an interrupted delete: %s", m);
        }
    }
    free(tags);
    free(tsuids);
    store_result_free(&r);
    return rc;
}
