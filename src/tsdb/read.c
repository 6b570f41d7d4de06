/* read.c -- reading one series back: store rows (octsdb blocks and
 * OpenTSDB cells) merged with the head.
 *
 * Every point carries the rank of its source (series.h), and the merge keeps
 * one point per timestamp: the latest source with tsd.storage.fix_duplicates,
 * the earliest without. The head is copied first and the store read second,
 * so a flush completing in between shows a point twice (merged away), never
 * not at all. The rows are found with store_part_list over the series'
 * partitions [salt][metric][hour] in the range, so a wide range costs one
 * ordered walk over the hours that exist, not one probe per hour. */
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "codec/cell.h"
#include "common/xmalloc.h"
#include "tsdb/series.h"

static int rpt_cmp(const void *a, const void *b)
{
    const tw_rpt_t *x = a, *y = b;
    if (x->p.ts_ms != y->p.ts_ms) return x->p.ts_ms < y->p.ts_ms ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int same_value(const codec_point_t *a, const codec_point_t *b)
{
    if (a->is_float != b->is_float) return 0;
    if (a->is_float) return memcmp(&a->val.f, &b->val.f, sizeof a->val.f) == 0;
    return a->val.i == b->val.i;
}

size_t tw_merge_ranked(tw_rpt_t *v, size_t n, int last_wins, uint64_t *conflicts,
                       codec_point_t *out)
{
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++) sorted = rpt_cmp(&v[i - 1], &v[i]) <= 0;
    if (!sorted) qsort(v, n, sizeof *v, rpt_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].p.ts_ms == v[i].p.ts_ms) j++;
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
    while (c < need) c *= 2;
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
        uint16_t seq;
        if (codec_block_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &seq)) {
            int cnt = codec_block_count(c->value.ptr, c->value.len);
            if (cnt < 0) {
                rc = oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u) in row of hour %u",
                             seq, base_s);
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
                (*v)[*n].rank = seq;
                ++*n;
            }
            if (r < 0) {
                rc = oct_err(eb, OCT_ECORRUPT, "corrupt block cell (seq %u)", seq);
                goto out;
            }
            if ((int32_t)seq > *max_seq) *max_seq = seq;
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

typedef struct {
    oct_slice_t *parts;
    size_t n, cap;
} tw_parts_t;

static int collect_part(void *ctx, oct_slice_t part)
{
    tw_parts_t *pl = ctx;
    if (pl->n == pl->cap) {
        pl->cap = pl->cap ? 2 * pl->cap : 16;
        pl->parts = xrealloc(pl->parts, pl->cap * sizeof *pl->parts);
    }
    pl->parts[pl->n++] = oct_slice(xmemdup(part.ptr, part.len), part.len);
    return 0;
}

static void head_copy(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi,
                      tw_rpt_t **v, size_t *n, size_t *cap)
{
    tw_series_t *s = tw_map_find_tsuid(&w->by_tsuid, tsuid, len);
    if (!s) return;
    pthread_mutex_lock(&s->mu);
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
    pthread_mutex_unlock(&s->mu);
}

int tsdb_read_series(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                     int64_t end_ms, codec_point_t **out, size_t *n_out, oct_errbuf_t *eb)
{
    *out = NULL;
    *n_out = 0;
    const tsdb_layout_t *lay = tsdb_layout(db);
    codec_rowkey_layout_t rk = {(uint8_t)lay->uid_width[CODEC_UID_METRIC],
                                (uint8_t)lay->uid_width[CODEC_UID_TAGK],
                                (uint8_t)lay->uid_width[CODEC_UID_TAGV],
                                (uint8_t)lay->salt_width,
                                lay->salt_buckets ? lay->salt_buckets : 1};
    int rc = codec_tsuid_check(&rk, tsuid, tsuid_len, eb);
    if (rc < 0) return rc;
    /* Row base times are 32-bit unsigned seconds. */
    const int64_t max_ms = (int64_t)UINT32_MAX * 1000 + 999;
    if (start_ms < 0) start_ms = 0;
    if (end_ms > max_ms) end_ms = max_ms;
    if (end_ms < start_ms) {
        *out = xmalloc(sizeof **out);
        return 0;
    }
    tsdb_writer_t *w = tsdb__writer(db);
    int last_wins = w ? w->fix_dups : 0;
    tw_rpt_t *v = NULL;
    size_t n = 0, cap = 0;
    if (w) head_copy(w, tsuid, tsuid_len, start_ms, end_ms, &v, &n, &cap);

    /* The partitions of this series' rows in range. */
    size_t klen = codec_rowkey_len(&rk, (size_t)rc);
    size_t plen = codec_rowkey_partition_prefix_len(&rk);
    uint8_t *k0 = xmalloc(klen), *k1 = xmalloc(klen);
    int64_t b0 = codec_rowkey_base_time(start_ms / 1000), b1 = codec_rowkey_base_time(end_ms / 1000);
    tw_parts_t pl = {0};
    store_result_t res = STORE_RESULT_INIT;
    store_key_t *keys = NULL;
    uint8_t *rows = NULL;
    int r = codec_rowkey_from_tsuid(&rk, tsuid, tsuid_len, b0, k0, klen, eb);
    if (r < 0) {
        rc = r;
        goto out;
    }
    r = codec_rowkey_from_tsuid(&rk, tsuid, tsuid_len, b1, k1, klen, eb);
    if (r < 0) {
        rc = r;
        goto out;
    }
    /* stop = the last partition's prefix + 1 (as a big-endian number) */
    size_t i = plen;
    while (i > 0 && k1[i - 1] == 0xFF) k1[--i] = 0;
    oct_slice_t stop = oct_slice(k1, i ? plen : 0);
    if (i) k1[i - 1]++;
    rc = store_part_list(tsdb_store(db), STORE_TABLE_DATA, oct_slice(k0, plen), stop,
                         collect_part, &pl, eb);
    if (rc < 0) goto out;
    keys = xmalloc((pl.n ? pl.n : 1) * sizeof *keys);
    rows = xmalloc((pl.n ? pl.n : 1) * klen);
    size_t nk = 0;
    for (size_t j = 0; j < pl.n; j++) {
        if (pl.parts[j].len != plen) continue;
        uint8_t *row = rows + nk * klen;
        /* the row key of this series in that hour: its prefix, then the TSUID's tags */
        if (memcmp(pl.parts[j].ptr, k0, plen - CODEC_ROWKEY_TS_BYTES)) continue;
        memcpy(row, pl.parts[j].ptr, plen);
        memcpy(row + plen, k0 + plen, klen - plen);
        keys[nk].part = pl.parts[j];
        keys[nk].row = oct_slice(row, klen);
        nk++;
    }
    if (nk) {
        rc = store_multi_get(tsdb_store(db), STORE_TABLE_DATA, keys, nk, oct_slice_str(TW_FAMILY),
                             &res, eb);
        if (rc < 0) goto out;
        rc = 0;
        for (size_t a = 0; a < res.n;) {
            size_t z = a + 1;
            while (z < res.n && oct_slice_eq(res.cells[z].row, res.cells[a].row)) z++;
            uint32_t base = oct_get_be32(res.cells[a].row.ptr + plen - CODEC_ROWKEY_TS_BYTES);
            int32_t ms;
            rc = tw_row_points(&res, a, z, base, start_ms, end_ms, &v, &n, &cap, &ms, eb);
            if (rc) goto out;
            a = z;
        }
    }
    codec_point_t *o = xmalloc((n ? n : 1) * sizeof *o);
    *n_out = tw_merge_ranked(v, n, last_wins, NULL, o);
    *out = o;
    rc = 0;
out:
    for (size_t j = 0; j < pl.n; j++) free((void *)pl.parts[j].ptr);
    free(pl.parts);
    free(keys);
    free(rows);
    free(k0);
    free(k1);
    free(v);
    store_result_free(&res);
    return rc;
}
