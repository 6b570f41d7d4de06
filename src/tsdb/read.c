/* read.c -- reading one series back: store rows (octsdb blocks and
 * OpenTSDB cells) merged with the head.
 *
 * Every point carries the rank of its source (series.h), and the merge keeps
 * one point per timestamp: the latest source with tsd.storage.fix_duplicates,
 * the earliest without. The head is copied first and the store read second,
 * so a flush completing in between shows a point twice (merged away), never
 * not at all. The rows are found with store_part_list over the series'
 * partitions [salt][metric][hour] in the range, so a wide range costs one
 * ordered walk over the hours that exist, not one probe per hour.
 *
 * Ranges of up to DIRECT_HOURS hours skip the listing: every hour's row key
 * is known, so they are fetched with one multi-get.
 *
 * When the head has nothing in range and every row is one block cell (a
 * flushed store, the common case) the blocks decode straight into the
 * result: rows come by hour and a block is sorted, so no ranks, sort or
 * merge are needed. A reader (tsdb_reader_t) keeps every buffer between
 * calls so a query over many series allocates nothing per series, and keeps
 * the rows of its last read, whose annotation cells the query executor
 * takes from there (tsdb_reader_annotations) instead of reading them again.
 *
 * tsdb_reader_scan (read.h) is the same read handed over as columns: in the
 * common case every block decodes into the reader's column buffers
 * (codec_block_decode_cols) and goes to the callback block by block, so a
 * consumer that folds points (fixed-interval downsampling) never sees a
 * point array; otherwise the merged points are handed over in slices. */
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "codec/cell.h"
#include "codec/histogram.h"
#include "common/clock.h"
#include "common/xmalloc.h"
#include "tsdb/annotation.h"
#include "tsdb/histogram.h"
#include "tsdb/parts.h"
#include "tsdb/read.h"
#include "tsdb/retention.h"
#include "tsdb/series.h"
#include "tsdb/tsdb_int.h"

static int rpt_cmp(const void *a, const void *b)
{
    const tw_rpt_t *x = a, *y = b;
    if (x->p.ts_ms != y->p.ts_ms) return x->p.ts_ms < y->p.ts_ms ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int same_value(const codec_point_t *a, const codec_point_t *b)
{
    if (a->is_float != b->is_float) return 0;
    if (a->is_float) { /* bit for bit: NaN payloads and -0.0 count */
        uint64_t x, y;
        memcpy(&x, &a->val.f, sizeof x);
        memcpy(&y, &b->val.f, sizeof y);
        return x == y;
    }
    return a->val.i == b->val.i;
}

size_t tw_merge_ranked(tw_rpt_t *v, size_t n, int last_wins, uint64_t *conflicts,
                       codec_point_t *out)
{
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = rpt_cmp(&v[i - 1], &v[i]) <= 0;
    if (!sorted) qsort(v, n, sizeof *v, rpt_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].p.ts_ms == v[i].p.ts_ms)
            j++;
        const tw_rpt_t *win = last_wins ? &v[j - 1] : &v[i];
        if (conflicts)
            for (size_t t = i; t < j; t++)
                if (&v[t] != win && !same_value(&v[t].p, &win->p)) ++*conflicts;
        out[k++] = win->p;
        i = j;
    }
    return k;
}

static void rpt_reserve(tw_rpt_t **v, size_t *cap, size_t need)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    *v = xrealloc(*v, c * sizeof **v);
    *cap = c;
}

int tw_row_points(const store_result_t *row, size_t from, size_t to, uint32_t base_s, int64_t lo,
                  int64_t hi, tw_rpt_t **v, size_t *n, size_t *cap, int32_t *max_seq,
                  oct_errbuf_t *eb)
{
    *max_seq = -1;
    size_t nc = to - from, n_other = 0;
    codec_cell_t *cells = xmalloc((nc ? nc : 1) * sizeof *cells);
    int rc = 0;
    for (size_t i = from; i < to; i++) {
        const store_cell_t *c = &row->cells[i];
        int64_t rank;
        if (codec_block_qualifier_rank(c->qualifier.ptr, c->qualifier.len, &rank)) {
            uint16_t seq = 0; /* 3-byte form: its seq; the writer form: 0 */
            codec_block_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &seq);
            int cnt = codec_block_count(c->value.ptr, c->value.len);
            if (cnt < 0) {
                rc = oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u) in row of hour %u", seq,
                             base_s);
                goto out;
            }
            rpt_reserve(v, cap, *n + (size_t)cnt);
            codec_block_iter_t it;
            if (codec_block_iter_init(&it, c->value.ptr, c->value.len) < 0) {
                rc = oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u)", seq);
                goto out;
            }
            codec_point_t p;
            int r;
            while ((r = codec_block_iter_next(&it, &p)) == 1) {
                if (p.ts_ms < lo || p.ts_ms > hi) continue;
                (*v)[*n].p = p;
                (*v)[*n].rank = rank;
                ++*n;
            }
            if (r < 0) {
                rc = oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u)", seq);
                goto out;
            }
            if (rank < 65536 && (int32_t)seq > *max_seq) *max_seq = seq;
        } else {
            cells[n_other].qual = c->qualifier.ptr;
            cells[n_other].qual_len = c->qualifier.len;
            cells[n_other].val = c->value.ptr;
            cells[n_other].val_len = c->value.len;
            n_other++;
        }
    }
    if (n_other) {
        /* OpenTSDB's own cells (written by OpenTSDB, or imported) */
        codec_row_stats_t st;
        size_t want = 64;
        for (;;) {
            codec_point_t *tmp = xmalloc(want * sizeof *tmp);
            memset(&st, 0, sizeof st);
            int r = codec_row_decode(base_s, cells, n_other, tmp, want, &st, eb);
            if (r == OCT_ENOSPC) {
                free(tmp);
                want = st.needed > want ? st.needed : want * 2;
                continue;
            }
            if (r < 0) {
                free(tmp);
                rc = r;
                goto out;
            }
            rpt_reserve(v, cap, *n + (size_t)r);
            for (int i = 0; i < r; i++) {
                if (tmp[i].ts_ms < lo || tmp[i].ts_ms > hi) continue;
                (*v)[*n].p = tmp[i];
                (*v)[*n].rank = -1;
                ++*n;
            }
            free(tmp);
            break;
        }
    }
out:
    free(cells);
    return rc;
}

static void head_copy(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                      tw_rpt_t **v, size_t *n, size_t *cap)
{
    tw_series_t *s = tw_map_find_tsuid(&w->by_tsuid, tsuid, len);
    if (!s) return;
    tw_lock(&s->mu);
    for (uint32_t i = 0; i < s->nb; i++) {
        const tw_bucket_t *b = &s->b[i];
        if ((b->base_s + 3600) * 1000 <= lo || b->base_s * 1000 > hi) continue;
        rpt_reserve(v, cap, *n + b->n + b->nfl);
        for (uint32_t j = 0; j < b->nfl; j++)
            if (b->fl[j].ts_ms >= lo && b->fl[j].ts_ms <= hi)
                (*v)[(*n)++] = (tw_rpt_t){b->fl[j], TW_RANK_FLUSHING};
        for (uint32_t j = 0; j < b->n; j++)
            if (b->cur[j].ts_ms >= lo && b->cur[j].ts_ms <= hi)
                (*v)[(*n)++] = (tw_rpt_t){b->cur[j], TW_RANK_HEAD};
    }
    tw_unlock(&s->mu);
}

/* Reusable buffers of one reader (write.h): after warm-up a read allocates
 * nothing, so a query over thousands of series neither mallocs per series
 * nor faults in fresh pages for every one. */
/* Up to this many hours in range, a read probes every hour's row key; beyond,
 * it lists the partitions that exist first (sparse data over long ranges). */
#define DIRECT_HOURS 48

/* One decoded block in the scan columns. */
typedef struct {
    size_t off, n;
    int types;
} tsdb_rblk_t;

struct tsdb_reader {
    tsdb_t *db;
    tw_rpt_t *v; /* ranked points (general path) */
    size_t vcap;
    codec_point_t *out; /* the result */
    size_t ocap;
    tsdb_parts_t parts;
    store_key_t *keys;
    uint8_t *rows;
    size_t kcap;
    store_result_t res;
    /* tsdb_reader_scan's columns and blocks */
    int64_t *cts;
    uint64_t *cval;
    uint8_t *cisf;
    size_t ccap;
    tsdb_rblk_t *blk;
    size_t bcap;
};

tsdb_reader_t *tsdb_reader_new(tsdb_t *db)
{
    tsdb_reader_t *r = xcalloc(1, sizeof *r);
    r->db = db;
    store_result_init(&r->res);
    return r;
}

void tsdb_reader_free(tsdb_reader_t *r)
{
    if (!r) return;
    free(r->v);
    free(r->out);
    tsdb__parts_free(&r->parts);
    free(r->keys);
    free(r->rows);
    free(r->cts);
    free(r->cval);
    free(r->cisf);
    free(r->blk);
    store_result_free(&r->res);
    free(r);
}

static void out_reserve(tsdb_reader_t *r, size_t need)
{
    if (need <= r->ocap) return;
    size_t c = r->ocap ? r->ocap : 1024;
    while (c < need)
        c *= 2;
    r->out = xrealloc(r->out, c * sizeof *r->out);
    r->ocap = c;
}

/* Points in the fetched cells when every row holds exactly one octsdb
 * block (the direct paths' precondition), else -2: the general path takes
 * over and reports what is wrong. */
static long direct_total(const store_result_t *res)
{
    size_t total = 0;
    for (size_t a = 0; a < res->n; a++) {
        const store_cell_t *c = &res->cells[a];
        if (a + 1 < res->n && oct_slice_eq(res->cells[a + 1].row, c->row)) return -2;
        if (!codec_block_qualifier_rank(c->qualifier.ptr, c->qualifier.len, NULL)) return -2;
        int cnt = codec_block_count(c->value.ptr, c->value.len);
        if (cnt < 0) return -2;
        total += (size_t)cnt;
    }
    return (long)total;
}

/* The common case: every row holds exactly one block cell and the head has
 * nothing in range. Rows come in key order, i.e. by hour, and an hour's
 * block is sorted, so the blocks decode straight into the result with no
 * ranks and no merge. Returns the count, -2 if the rows are not of that
 * shape (or not ascending: the caller takes the general path), or an error. */
static long read_blocks_direct(tsdb_reader_t *r, int64_t lo, int64_t hi, oct_errbuf_t *eb)
{
    const store_result_t *res = &r->res;
    long n_total = direct_total(res);
    if (n_total < 0) return n_total;
    size_t total = (size_t)n_total;
    out_reserve(r, total);
    codec_point_t *o = r->out;
    size_t n = 0;
    for (size_t a = 0; a < res->n; a++) {
        const store_cell_t *c = &res->cells[a];
        int got = codec_block_decode(c->value.ptr, c->value.len, o + n, total - n);
        if (got < 0) {
            uint16_t seq = 0;
            codec_block_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &seq);
            return oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u)", seq);
        }
        size_t first = n;
        /* a block is sorted: when its ends are in [lo, hi], all of it is */
        if (got == 0 || (o[first].ts_ms >= lo && o[first + (size_t)got - 1].ts_ms <= hi)) {
            n += (size_t)got;
        } else {
            for (size_t k = first; k < first + (size_t)got; k++)
                if (o[k].ts_ms >= lo && o[k].ts_ms <= hi) o[n++] = o[k];
        }
        if (first > 0 && n > first && o[first].ts_ms <= o[first - 1].ts_ms) return -2;
    }
    return (long)n;
}

/* The part of a read before decoding: clamps the range, copies the head's
 * points in range into rd->v (*n of them) and fetches the series' rows in
 * range into rd->res (*plen = the partition prefix length). Returns 0, 1
 * when the range is empty (nothing fetched), or an error. */
static int reader_fetch_once(tsdb_reader_t *rd, const uint8_t *tsuid, size_t tsuid_len,
                             int64_t *start_io, int64_t *end_io, size_t *n_head, size_t *plen_out,
                             oct_errbuf_t *eb)
{
    tsdb_t *db = rd->db;
    int64_t start_ms = *start_io, end_ms = *end_io;
    *n_head = 0;
    store_result_reset(&rd->res); /* tsdb_reader_annotations sees this read's rows only */
    codec_rowkey_layout_t rk = tsdb__rowkey_layout(db);
    int rc = codec_tsuid_check(&rk, tsuid, tsuid_len, eb);
    if (rc < 0) return rc;
    out_reserve(rd, 1);
    /* Row base times are 32-bit unsigned seconds. */
    const int64_t max_ms = (int64_t)UINT32_MAX * 1000 + 999;
    if (start_ms < 0) start_ms = 0;
    if (end_ms > max_ms) end_ms = max_ms;
    if (tsdb_retention_enabled(db)) {
        /* nothing before the retention cut, whatever the store still holds */
        int64_t cut =
            tsdb_retention_cut_ms(db, NULL, oct_get_be_n(tsuid, rk.metric_w), oct_clock_wall_ms());
        if (start_ms < cut) start_ms = cut;
    }
    *start_io = start_ms;
    *end_io = end_ms;
    if (end_ms < start_ms) return 1;
    tsdb_writer_t *w = tsdb__writer(db);
    size_t n = 0;
    if (w) head_copy(w, tsuid, tsuid_len, start_ms, end_ms, &rd->v, &n, &rd->vcap);
    *n_head = n;

    /* The partitions of this series' rows in range. */
    size_t klen = codec_rowkey_len(&rk, (size_t)rc);
    size_t plen = codec_rowkey_partition_prefix_len(&rk);
    *plen_out = plen;
    uint8_t k0[512], k1[512];
    if (klen > sizeof k0) return oct_err(eb, OCT_EINVAL, "row key too long");
    int64_t b0 = codec_rowkey_base_time(start_ms / 1000),
            b1 = codec_rowkey_base_time(end_ms / 1000);
    int r = codec_rowkey_from_tsuid(&rk, tsuid, tsuid_len, b0, k0, klen, eb);
    if (r < 0) return r;
    r = codec_rowkey_from_tsuid(&rk, tsuid, tsuid_len, b1, k1, klen, eb);
    if (r < 0) return r;
    size_t nk = 0;
    int64_t n_hours = (b1 - b0) / CODEC_ROWKEY_SPAN_S + 1;
    if (n_hours <= DIRECT_HOURS) {
        /* Few hours: their row keys are known, so one multi-get of all of
         * them (absent rows cost a probe) beats listing partitions first. */
        if ((size_t)n_hours > rd->kcap) {
            rd->kcap = (size_t)n_hours;
            rd->keys = xrealloc(rd->keys, rd->kcap * sizeof *rd->keys);
            rd->rows = xrealloc(rd->rows, rd->kcap * 512);
        }
        for (int64_t h = 0; h < n_hours; h++) {
            uint8_t *row = rd->rows + nk * 512;
            memcpy(row, k0, klen);
            oct_put_be32(row + plen - CODEC_ROWKEY_TS_BYTES,
                         (uint32_t)(b0 + h * CODEC_ROWKEY_SPAN_S));
            rd->keys[nk].part = oct_slice(row, plen);
            rd->keys[nk].row = oct_slice(row, klen);
            nk++;
        }
    } else {
        rc = tsdb__parts_collect(db, k0, k1, plen, &rd->parts, eb);
        if (rc < 0) return rc;
        if (rd->parts.n > rd->kcap) {
            rd->kcap = rd->parts.n;
            rd->keys = xrealloc(rd->keys, rd->kcap * sizeof *rd->keys);
            rd->rows = xrealloc(rd->rows, rd->kcap * 512);
        }
        for (size_t j = 0; j < rd->parts.n; j++) {
            const uint8_t *part = tsdb__part(&rd->parts, j).ptr;
            uint8_t *row = rd->rows + nk * 512;
            /* the row key of this series in that hour: its prefix, then the TSUID's tags */
            memcpy(row, part, plen);
            memcpy(row + plen, k0 + plen, klen - plen);
            rd->keys[nk].part = oct_slice(part, plen);
            rd->keys[nk].row = oct_slice(row, klen);
            nk++;
        }
    }
    store_result_reset(&rd->res);
    if (nk) {
        rc = store_multi_get(tsdb_store(db), STORE_TABLE_DATA, rd->keys, nk,
                             oct_slice_str(TW_FAMILY), &rd->res, eb);
        if (rc < 0) return rc;
    }
    return 0;
}

/* reader_fetch_once, so that the head and the rows it reads are both from
 * before or both from after a delete of the series' metric (delete.c,
 * docs/delete.md): a read that a delete overlapped starts again, one that
 * finds a delete of its metric running waits for it. */
static int reader_fetch(tsdb_reader_t *rd, const uint8_t *tsuid, size_t tsuid_len,
                        int64_t *start_io, int64_t *end_io, size_t *n_head, size_t *plen_out,
                        oct_errbuf_t *eb)
{
    tsdb_writer_t *w = tsdb__writer(rd->db);
    if (!w || tsuid_len < w->rk.metric_w)
        return reader_fetch_once(rd, tsuid, tsuid_len, start_io, end_io, n_head, plen_out, eb);
    uint64_t metric = oct_get_be_n(tsuid, w->rk.metric_w);
    int64_t s0 = *start_io, e0 = *end_io;
    for (;;) {
        uint64_t g = atomic_load(&w->del_gen);
        if ((g & 1) && atomic_load(&w->del_metric) == metric) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
            continue;
        }
        *start_io = s0;
        *end_io = e0;
        int rc = reader_fetch_once(rd, tsuid, tsuid_len, start_io, end_io, n_head, plen_out, eb);
        if (rc < 0 || atomic_load(&w->del_gen) == g) return rc;
    }
}

/* The general path after reader_fetch: every row's points ranked with the
 * head's, merged into rd->out. */
static int reader_merge(tsdb_reader_t *rd, size_t n, size_t plen, int64_t start_ms, int64_t end_ms,
                        size_t *n_out, oct_errbuf_t *eb)
{
    tsdb_writer_t *w = tsdb__writer(rd->db);
    int last_wins = w ? w->fix_dups : 0;
    const store_result_t *res = &rd->res;
    for (size_t a = 0; a < res->n;) {
        size_t z = a + 1;
        while (z < res->n && oct_slice_eq(res->cells[z].row, res->cells[a].row))
            z++;
        uint32_t base = oct_get_be32(res->cells[a].row.ptr + plen - CODEC_ROWKEY_TS_BYTES);
        int32_t ms;
        int rc = tw_row_points(res, a, z, base, start_ms, end_ms, &rd->v, &n, &rd->vcap, &ms, eb);
        if (rc) return rc;
        a = z;
    }
    out_reserve(rd, n ? n : 1);
    *n_out = tw_merge_ranked(rd->v, n, last_wins, NULL, rd->out);
    return 0;
}

int tsdb_reader_read(tsdb_reader_t *rd, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                     int64_t end_ms, codec_point_t **out, size_t *n_out, oct_errbuf_t *eb)
{
    *out = NULL;
    *n_out = 0;
    size_t n = 0, plen = 0;
    int rc = reader_fetch(rd, tsuid, tsuid_len, &start_ms, &end_ms, &n, &plen, eb);
    if (rc < 0) return rc;
    *out = rd->out;
    if (rc == 1) return 0;
    if (rd->res.n && n == 0) {
        long d = read_blocks_direct(rd, start_ms, end_ms, eb);
        if (d >= 0) {
            *out = rd->out;
            *n_out = (size_t)d;
            return 0;
        }
        if (d != -2) return (int)d;
    }
    rc = reader_merge(rd, n, plen, start_ms, end_ms, n_out, eb);
    *out = rd->out;
    return rc;
}

static void cols_reserve(tsdb_reader_t *r, size_t need)
{
    if (need <= r->ccap) return;
    size_t c = r->ccap ? r->ccap : 1024;
    while (c < need)
        c *= 2;
    r->cts = xrealloc(r->cts, c * sizeof *r->cts);
    r->cval = xrealloc(r->cval, c * sizeof *r->cval);
    r->cisf = xrealloc(r->cisf, c);
    r->ccap = c;
}

/* read_blocks_direct into columns: every block decoded and checked first
 * (the shape can still turn out general), then handed to fn block by block.
 * Returns the point count, -2 (not that shape), or an error. */
static long scan_blocks_direct(tsdb_reader_t *r, int64_t lo, int64_t hi, tsdb_cols_fn fn, void *ctx,
                               oct_errbuf_t *eb)
{
    const store_result_t *res = &r->res;
    long n_total = direct_total(res);
    if (n_total < 0) return n_total;
    size_t total = (size_t)n_total;
    cols_reserve(r, total ? total : 1);
    if (res->n > r->bcap) {
        r->bcap = res->n;
        r->blk = xrealloc(r->blk, r->bcap * sizeof *r->blk);
    }
    int64_t *ts = r->cts;
    uint64_t *val = r->cval;
    uint8_t *isf = r->cisf;
    size_t n = 0, nb = 0;
    for (size_t a = 0; a < res->n; a++) {
        const store_cell_t *c = &res->cells[a];
        int types = 0;
        int got = codec_block_decode_cols(c->value.ptr, c->value.len, ts + n, val + n, isf + n,
                                          total - n, &types);
        if (got < 0) {
            uint16_t seq = 0;
            codec_block_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &seq);
            return oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u)", seq);
        }
        size_t first = n;
        /* a block is sorted: when its ends are in [lo, hi], all of it is */
        if (got == 0 || (ts[first] >= lo && ts[first + (size_t)got - 1] <= hi)) {
            n += (size_t)got;
        } else {
            for (size_t k = first; k < first + (size_t)got; k++)
                if (ts[k] >= lo && ts[k] <= hi) {
                    ts[n] = ts[k];
                    val[n] = val[k];
                    if (types == 2) isf[n] = isf[k];
                    n++;
                }
        }
        if (first > 0 && n > first && ts[first] <= ts[first - 1]) return -2;
        if (n > first) r->blk[nb++] = (tsdb_rblk_t){first, n - first, types};
    }
    for (size_t b = 0; b < nb; b++) {
        const tsdb_rblk_t *k = &r->blk[b];
        int rc =
            fn(ctx, ts + k->off, val + k->off, k->types == 2 ? isf + k->off : NULL, k->types, k->n);
        if (rc) return rc;
    }
    return (long)n;
}

int tsdb_reader_scan(tsdb_reader_t *rd, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                     int64_t end_ms, tsdb_cols_fn fn, void *ctx, size_t *n_out, oct_errbuf_t *eb)
{
    *n_out = 0;
    size_t n = 0, plen = 0;
    int rc = reader_fetch(rd, tsuid, tsuid_len, &start_ms, &end_ms, &n, &plen, eb);
    if (rc < 0) return rc;
    if (rc == 1) return 0;
    if (rd->res.n && n == 0) {
        long d = scan_blocks_direct(rd, start_ms, end_ms, fn, ctx, eb);
        if (d >= 0) {
            *n_out = (size_t)d;
            return 0;
        }
        if (d != -2) return (int)d;
    }
    size_t nm = 0;
    rc = reader_merge(rd, n, plen, start_ms, end_ms, &nm, eb);
    if (rc) return rc;
    /* into columns, a slice at a time */
    enum { SLICE = 4096 };
    cols_reserve(rd, nm < SLICE ? nm : SLICE);
    for (size_t i = 0; i < nm; i += SLICE) {
        size_t m = nm - i < SLICE ? nm - i : SLICE;
        const codec_point_t *p = rd->out + i;
        for (size_t k = 0; k < m; k++) {
            rd->cts[k] = p[k].ts_ms;
            memcpy(&rd->cval[k], &p[k].val, sizeof rd->cval[k]);
            rd->cisf[k] = p[k].is_float;
        }
        rc = fn(ctx, rd->cts, rd->cval, rd->cisf, 2, m);
        if (rc) return rc;
    }
    *n_out = nm;
    return 0;
}

int tsdb_reader_annotations(const tsdb_reader_t *r, int64_t start_ms, int64_t end_ms,
                            tsdb_annotation_fn cb, void *ctx)
{
    return tsdb_annotation_scan_cells(r->res.cells, r->res.n, start_ms, end_ms, cb, ctx);
}

int tsdb_reader_histograms(tsdb_reader_t *r, const uint8_t *tsuid, size_t tsuid_len,
                           int64_t start_ms, int64_t end_ms, tsdb_hist_fn fn, void *ctx,
                           oct_errbuf_t *eb)
{
    size_t n_head, plen;
    int rc = reader_fetch(r, tsuid, tsuid_len, &start_ms, &end_ms, &n_head, &plen, eb);
    if (rc) return rc < 0 ? rc : 0;
    for (size_t i = 0; i < r->res.n; i++) {
        const store_cell_t *c = &r->res.cells[i];
        uint32_t off;
        int ms;
        if (c->qualifier.len == 0 || c->qualifier.ptr[0] != CODEC_PREFIX_HISTOGRAM ||
            codec_hist_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &off, &ms) ||
            c->row.len < plen)
            continue;
        int64_t ts =
            (int64_t)oct_get_be32(c->row.ptr + plen - CODEC_ROWKEY_TS_BYTES) * 1000 + (int64_t)off;
        if (ts < start_ms || ts > end_ms) continue;
        rc = fn(ctx, ts, c->value.ptr, c->value.len);
        if (rc) return rc;
    }
    return 0;
}

int tsdb_read_series(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                     int64_t end_ms, codec_point_t **out, size_t *n_out, oct_errbuf_t *eb)
{
    *out = NULL;
    *n_out = 0;
    tsdb_reader_t *rd = tsdb_reader_new(db);
    codec_point_t *pts;
    size_t n;
    int rc = tsdb_reader_read(rd, tsuid, tsuid_len, start_ms, end_ms, &pts, &n, eb);
    if (rc == 0) {
        /* hand the reader's buffer over instead of copying it */
        *out = pts;
        *n_out = n;
        rd->out = NULL;
    }
    tsdb_reader_free(rd);
    return rc;
}
