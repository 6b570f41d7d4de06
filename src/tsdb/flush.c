/* flush.c -- moving the head into the store as block cells.
 *
 * A background thread runs a pass every tsd.storage.flush_interval ms (and
 * tsdb_flush runs one with force). A pass visits every series; for each hour
 * bucket it decides:
 *   - final: the hour ended more than a grace (60 s) ago and the bucket has
 *     been idle that long (or force): the row is compacted to ONE block cell
 *     with seq 0 -- written directly when the row holds no block yet,
 *     otherwise read, merged (duplicates as tsd.storage.fix_duplicates says)
 *     and rewritten with the other seqs deleted, atomically (one partition).
 *   - open: the oldest unflushed point is older than
 *     tsd.storage.head.open_flush_ms (or force): the new points become an
 *     extra block with the row's next seq; the final flush compacts them.
 * A bucket's points move to its 'fl' array while being written, so puts go
 * on into 'cur' and reads see both. Jobs are written in groups of up to 256
 * rows per store_write; the last write of a pass is synced, then the WAL
 * segments below the oldest one still referenced by the head are deleted.
 * With tsd.rollups.auto a final job also yields the hour's rollup cells
 * (tw_rollup_auto, computed from every point of the hour), written before
 * the group's data write, so a crash before the WAL is cut replays into a
 * recomputation of the same cells: exactly once without bookkeeping. The
 * periods longer than an hour holding those hours are then recomputed from
 * the hours' cells as stored (tw_rollup_long), before the data write too.
 * On a local store a series-hour's first block that is not final is named
 * in the open-rows registry first, and the final write deletes the entry:
 * the open reads it back (tw_open_rows_reopen), so an hour left open by a
 * stop or a crash is still finalized (docs/rollups.md).
 * Only one pass runs at a time (flush_mu). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/block.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "tsdb/series.h"

#define TW_JOBS 256
/* shared store: a writer's cells per series-hour before it rewrites them as one */
#define TW_OWN_MAX 16
/* shared store: compactions per pass (not forced) */
#define TW_COMPACT_PER_PASS 64

typedef struct {
    uint8_t b[CODEC_BLOCK_WQUAL_LEN];
    uint8_t len;
} tw_qual_t;

typedef struct {
    tw_series_t *s;
    int64_t base_s;
    const codec_point_t *pts; /* the bucket's fl */
    uint32_t n;
    int final;
    int32_t next_seq; /* as known at pick time */
    int32_t new_next; /* after the write */
    uint64_t min_seg;
    /* shared store: the bucket's own cells at pick time */
    uint32_t own_lo, wseq;
    const codec_point_t *sent;
    uint32_t nsent;
    int rc;             /* a compaction's own result (shared store: one CAS per row) */
    int unfinal;        /* the bucket's, at pick time (local store) */
    int none;           /* final, no points and no block in the row: nothing to write */
    tw_rollup_ops_t ru; /* final jobs with tsd.rollups.auto: the hour's rollup cells */
    /* owned buffers for the store ops */
    uint8_t key[CODEC_ROWKEY_MAX_SALT + 8 + 4 + TW_MAX_TSUID];
    size_t klen;
    uint8_t *val;
    uint8_t qual[CODEC_BLOCK_WQUAL_LEN];
    size_t qlen;
    tw_qual_t *dels; /* cells the write deletes */
    size_t ndels;
    size_t vlen;
} tw_job_t;

typedef struct {
    tw_job_t jobs[TW_JOBS];
    size_t n;
    store_op_t *ops;
    size_t ops_cap;
} tw_pass_t;

static tw_bucket_t *bucket_of(tw_series_t *s, int64_t base)
{
    for (uint32_t i = 0; i < s->nb; i++)
        if (s->b[i].base_s == base) return &s->b[i];
    return NULL;
}

/* Encodes pts into job->val. */
static int encode_into(tw_job_t *j, const codec_point_t *pts, size_t n, oct_errbuf_t *eb)
{
    size_t cap = codec_block_encode_bound(n);
    j->val = xmalloc(cap);
    ssize_t r = codec_block_encode(pts, n, j->val, cap, CODEC_BLOCK_ENC_AUTO, NULL);
    if (r < 0) return oct_err(eb, (int)r, "cannot encode a block of %zu points", n);
    j->vlen = (size_t)r;
    return 0;
}

/* Encodes the points of the block cells in blk merged with the job's
 * points (ranked above every cell) into job->val. */
static int merge_encode(tsdb_writer_t *w, tw_job_t *j, const store_result_t *blk,
                        uint64_t *conflicts, int with_rollups, oct_errbuf_t *eb)
{
    tw_rpt_t *v = NULL;
    size_t n = 0, cap = 0;
    int32_t ms;
    int rc = tw_row_points(blk, 0, blk->n, (uint32_t)j->base_s, INT64_MIN, INT64_MAX, &v, &n, &cap,
                           &ms, eb);
    if (rc) goto out;
    if (n + j->n > cap) {
        cap = n + j->n;
        v = xrealloc(v, cap * sizeof *v);
    }
    for (uint32_t i = 0; i < j->n; i++)
        v[n++] = (tw_rpt_t){j->pts[i], TW_RANK_FLUSHING};
    codec_point_t *m = xmalloc((n ? n : 1) * sizeof *m);
    size_t k = tw_merge_ranked(v, n, w->fix_dups, conflicts, m);
    rc = encode_into(j, m, k, eb);
    if (!rc && with_rollups) rc = tw_rollup_auto(w->db, j->s, j->base_s, m, k, &j->ru, eb);
    free(m);
out:
    free(v);
    return rc;
}

/* Sorted union of a and b (one point per timestamp; on a tie b's point
 * with fix_dups, else a's) into a new array; *n_out its length. */
static codec_point_t *points_union(const codec_point_t *a, size_t na, const codec_point_t *b,
                                   size_t nb, int fix_dups, size_t *n_out)
{
    codec_point_t *o = xmalloc((na + nb ? na + nb : 1) * sizeof *o);
    size_t i = 0, k = 0, n = 0;
    while (i < na || k < nb) {
        if (k == nb || (i < na && a[i].ts_ms < b[k].ts_ms)) {
            o[n++] = a[i++];
        } else if (i == na || b[k].ts_ms < a[i].ts_ms) {
            o[n++] = b[k++];
        } else {
            o[n++] = fix_dups ? b[k] : a[i];
            i++;
            k++;
        }
    }
    *n_out = n;
    return o;
}

/* Shared store, an open hour: the job's points become a cell of this
 * writer's (next seq); once it holds TW_OWN_MAX cells in the row, one cell
 * with everything it sent to the row replaces them, in the same atomic
 * write (one partition). No read: no other TSD writes this writer's cells. */
static int shared_prepare_open(tsdb_writer_t *w, tw_job_t *j, oct_errbuf_t *eb)
{
    int r = codec_rowkey_from_tsuid(&w->rk, j->s->tsuid, j->s->tsuid_len, j->base_s, j->key,
                                    sizeof j->key, eb);
    if (r < 0) return r;
    j->klen = (size_t)r;
    codec_block_writer_qualifier(w->writer_id, j->wseq, j->qual);
    j->qlen = CODEC_BLOCK_WQUAL_LEN;
    if (j->wseq - j->own_lo < TW_OWN_MAX) return encode_into(j, j->pts, j->n, eb);
    size_t n;
    codec_point_t *all = points_union(j->sent, j->nsent, j->pts, j->n, w->fix_dups, &n);
    int rc = encode_into(j, all, n, eb);
    free(all);
    j->dels = xmalloc((j->wseq - j->own_lo) * sizeof *j->dels);
    for (uint32_t q = j->own_lo; q < j->wseq; q++) {
        tw_qual_t *d = &j->dels[j->ndels++];
        codec_block_writer_qualifier(w->writer_id, q, d->b);
        d->len = CODEC_BLOCK_WQUAL_LEN;
    }
    return rc;
}

/* Shared store, a closed hour: compaction, exactly once whichever TSDs
 * wrote the row (docs/scale-out.md). Reads every block cell of the row,
 * merges them with the job's points and writes one compare-and-set: every
 * cell read still as read (the compacted one absent if none was read) ->
 * delete them, put the merged block as 4F 00 00. A racing compaction or
 * rewrite fails the comparison: read again. Sets j->rc. */
static void shared_compact(tsdb_writer_t *w, tw_job_t *j, const uint8_t *tsuid, size_t tsuid_len,
                           uint64_t *conflicts, oct_errbuf_t *eb)
{
    int r = codec_rowkey_from_tsuid(&w->rk, tsuid, tsuid_len, j->base_s, j->key, sizeof j->key, eb);
    if (r < 0) {
        j->rc = r;
        return;
    }
    j->klen = (size_t)r;
    oct_slice_t part = oct_slice(j->key, codec_rowkey_partition_prefix_len(&w->rk));
    oct_slice_t rowk = oct_slice(j->key, j->klen), fam = oct_slice_str(TW_FAMILY);
    uint8_t q0[CODEC_BLOCK_QUAL_LEN];
    codec_block_qualifier(0, q0);
    int rc = OCT_ECASFAIL;
    for (int attempt = 0; attempt < 32 && rc == OCT_ECASFAIL; attempt++) {
        store_result_t row = STORE_RESULT_INIT, blk = STORE_RESULT_INIT;
        rc = store_get(w->st, STORE_TABLE_DATA, part, rowk, fam, &row, eb);
        if (rc < 0) {
            store_result_free(&row);
            break;
        }
        int have0 = 0;
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *c = &row.cells[i];
            if (!codec_block_qualifier_rank(c->qualifier.ptr, c->qualifier.len, NULL)) continue;
            store_result_add(&blk, c->row, c->family, c->qualifier, c->value);
            if (oct_slice_eq(c->qualifier, oct_slice(q0, sizeof q0))) have0 = 1;
        }
        if (j->n == 0 && (blk.n == 0 || (blk.n == 1 && have0))) {
            rc = 0; /* compact already (or nothing here): nothing to write */
        } else {
            free(j->val);
            j->val = NULL;
            uint64_t conf = 0;
            rc = merge_encode(w, j, &blk, &conf, 0, eb); /* no auto rollups on a shared store */
            if (!rc) {
                store_check_t *ck = xmalloc((blk.n + 1) * sizeof *ck);
                store_op_t *ops = xmalloc((blk.n + 1) * sizeof *ops);
                size_t nck = 0, nops = 0;
                for (size_t i = 0; i < blk.n; i++) {
                    const store_cell_t *c = &blk.cells[i];
                    ck[nck++] = (store_check_t){STORE_CHECK_EQUALS, *c};
                    if (!oct_slice_eq(c->qualifier, oct_slice(q0, sizeof q0)))
                        ops[nops++] = (store_op_t){
                            STORE_OP_DELETE_CELL, part, {rowk, fam, c->qualifier, {NULL, 0}}};
                }
                if (!have0)
                    ck[nck++] = (store_check_t){STORE_CHECK_ABSENT,
                                                {rowk, fam, oct_slice(q0, sizeof q0), {NULL, 0}}};
                ops[nops++] =
                    (store_op_t){STORE_OP_PUT,
                                 part,
                                 {rowk, fam, oct_slice(q0, sizeof q0), oct_slice(j->val, j->vlen)}};
                rc = store_cas(w->st, STORE_TABLE_DATA, part, ck, nck, ops, nops, 0, eb);
                free(ck);
                free(ops);
                if (!rc) *conflicts += conf;
            }
        }
        store_result_free(&row);
        store_result_free(&blk);
    }
    if (rc == OCT_ECASFAIL)
        rc = oct_err(eb, OCT_EIO, "compacting a row of hour %lld kept racing other writers",
                     (long long)j->base_s);
    j->rc = rc < 0 ? rc : 0;
}

int tw_shared_compact_row(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int64_t base_s,
                          oct_errbuf_t *eb)
{
    tw_job_t *j = xcalloc(1, sizeof *j);
    j->base_s = base_s; /* and no points of its own */
    uint64_t conflicts = 0;
    shared_compact(w, j, tsuid, len, &conflicts, eb);
    int rc = j->rc;
    free(j->val);
    free(j);
    if (conflicts) atomic_fetch_add(&w->duplicates, conflicts);
    return rc;
}

/* Prepares the store ops of one job (reading the row when needed). */
static int job_prepare(tsdb_writer_t *w, tw_job_t *j, uint64_t *conflicts, oct_errbuf_t *eb)
{
    int r = codec_rowkey_from_tsuid(&w->rk, j->s->tsuid, j->s->tsuid_len, j->base_s, j->key,
                                    sizeof j->key, eb);
    if (r < 0) return r;
    j->klen = (size_t)r;
    size_t plen = codec_rowkey_partition_prefix_len(&w->rk);
    int32_t next = j->next_seq;
    store_result_t row = STORE_RESULT_INIT;
    int rc = 0;
    int have_row = 0;
    if (next < 0 || (j->final && next > 0) || next > 65535) {
        rc = store_get(w->st, STORE_TABLE_DATA, oct_slice(j->key, plen), oct_slice(j->key, j->klen),
                       oct_slice_str(TW_FAMILY), &row, eb);
        if (rc < 0) goto out;
        have_row = 1;
        next = -1;
        for (size_t i = 0; i < row.n; i++) {
            uint16_t seq;
            if (codec_block_qualifier_parse(row.cells[i].qualifier.ptr, row.cells[i].qualifier.len,
                                            &seq) &&
                (int32_t)seq > next)
                next = seq;
        }
        next++; /* 0 when the row holds no block */
    }
    j->qlen = CODEC_BLOCK_QUAL_LEN;
    if (!j->final && next <= 65535) {
        /* an extra block with the next seq */
        codec_block_qualifier((uint16_t)next, j->qual);
        rc = encode_into(j, j->pts, j->n, eb);
        j->new_next = next + 1;
        goto out;
    }
    codec_block_qualifier(0, j->qual);
    j->new_next = 1;
    if (next == 0 && j->n == 0) {
        j->none = 1; /* a reopened hour whose row is gone (a delete, retention) */
        goto out;
    }
    if (next == 0) {
        rc = encode_into(j, j->pts, j->n, eb);
        if (!rc) rc = tw_rollup_auto(w->db, j->s, j->base_s, j->pts, j->n, &j->ru, eb);
        goto out;
    }
    /* Compaction: every block of the row plus the flushed points -> seq 0. */
    (void)have_row;
    size_t nblk = 0;
    for (size_t i = 0; i < row.n; i++) {
        uint16_t seq;
        if (!codec_block_qualifier_parse(row.cells[i].qualifier.ptr, row.cells[i].qualifier.len,
                                         &seq))
            continue;
        nblk++;
    }
    /* only the block cells: OpenTSDB cells in the row stay as they are */
    store_result_t blk = STORE_RESULT_INIT;
    j->dels = xmalloc((nblk ? nblk : 1) * sizeof *j->dels);
    for (size_t i = 0; i < row.n; i++) {
        uint16_t seq;
        if (!codec_block_qualifier_parse(row.cells[i].qualifier.ptr, row.cells[i].qualifier.len,
                                         &seq))
            continue;
        store_result_add(&blk, row.cells[i].row, row.cells[i].family, row.cells[i].qualifier,
                         row.cells[i].value);
        if (seq != 0) {
            tw_qual_t *d = &j->dels[j->ndels++];
            codec_block_qualifier(seq, d->b);
            d->len = CODEC_BLOCK_QUAL_LEN;
        }
    }
    rc = merge_encode(w, j, &blk, conflicts, 1, eb);
    store_result_free(&blk);
out:
    store_result_free(&row);
    return rc;
}

/* 1 when the job's hour has ended by the clock reading now (ms). */
static int job_ended(const tw_job_t *j, int64_t now)
{
    return now >= (j->base_s + CODEC_ROWKEY_SPAN_S) * 1000;
}

/* Puts the points of a failed flush back into the head (cur is newer). */
static void bucket_restore(tsdb_writer_t *w, tw_bucket_t *b)
{
    for (uint32_t i = 0; i < b->nfl; i++) {
        const codec_point_t *p = &b->fl[i];
        uint32_t lo = 0, hi = b->n;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (b->cur[mid].ts_ms < p->ts_ms)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < b->n && b->cur[lo].ts_ms == p->ts_ms) {
            if (!w->fix_dups) b->cur[lo] = *p; /* the first written stays */
            continue;
        }
        if (b->n == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 8;
            b->cur = xrealloc(b->cur, b->cap * sizeof *b->cur);
        }
        if (lo < b->n) memmove(&b->cur[lo + 1], &b->cur[lo], (b->n - lo) * sizeof *b->cur);
        b->cur[lo] = *p;
        b->n++;
    }
    if (b->fl_min_seg < b->cur_min_seg) b->cur_min_seg = b->fl_min_seg;
    free(b->fl);
    b->fl = NULL;
    b->nfl = 0;
    b->fl_min_seg = UINT64_MAX;
}

static int run_jobs(tsdb_writer_t *w, tw_pass_t *ps, int sync, oct_errbuf_t *eb)
{
    int rc = 0, wrc = 0;
    uint64_t conflicts = 0;
    size_t nops = 0;
    size_t plen = codec_rowkey_partition_prefix_len(&w->rk);
    /* the open-rows registry (docs/format/layout.md, "Open rows"), before
     * the write. shared: it names every row this writer is about to write
     * its first cell to, and every row of an hour that has ended. local: the
     * rows about to get their first block that is not final */
    int64_t now = oct_clock_wall_ms();
    tw_mark_t *marks = xmalloc((ps->n ? ps->n : 1) * sizeof *marks);
    size_t nmarks = 0;
    for (size_t i = 0; i < ps->n; i++) {
        tw_job_t *j = &ps->jobs[i];
        if (!j->final && (w->shared ? j->wseq == 0 || job_ended(j, now) : !j->unfinal))
            marks[nmarks++] = (tw_mark_t){j->s->tsuid, j->s->tsuid_len, j->base_s};
    }
    if (nmarks) wrc = tw_shared_mark(w, marks, nmarks, 0, now, eb);
    for (size_t i = 0; i < ps->n; i++) {
        tw_job_t *j = &ps->jobs[i];
        if (w->shared && j->final) {
            /* one compare-and-set of its own, outside the batch */
            shared_compact(w, j, j->s->tsuid, j->s->tsuid_len, &conflicts, eb);
            if (j->rc && !rc) rc = j->rc;
            continue;
        }
        if (wrc) {
            j->rc = wrc;
            continue;
        }
        wrc = w->shared && !j->final ? shared_prepare_open(w, j, eb)
                                     : job_prepare(w, j, &conflicts, eb);
        if (wrc) {
            j->rc = wrc;
            continue;
        }
        if (j->none) continue;
        size_t need = nops + 1 + j->ndels;
        if (need > ps->ops_cap) {
            ps->ops_cap = need * 2;
            ps->ops = xrealloc(ps->ops, ps->ops_cap * sizeof *ps->ops);
        }
        oct_slice_t part = oct_slice(j->key, plen), rowk = oct_slice(j->key, j->klen);
        ps->ops[nops++] = (store_op_t){STORE_OP_PUT,
                                       part,
                                       {rowk, oct_slice_str(TW_FAMILY), oct_slice(j->qual, j->qlen),
                                        oct_slice(j->val, j->vlen)}};
        for (size_t d = 0; d < j->ndels; d++)
            ps->ops[nops++] =
                (store_op_t){STORE_OP_DELETE_CELL,
                             part,
                             {rowk, oct_slice_str(TW_FAMILY),
                              oct_slice(j->dels[d].b, j->dels[d].len), oct_slice(NULL, 0)}};
    }
    /* The hours' rollup cells first: if the data write then fails, the
     * points stay in the head and the next pass writes both again. */
    size_t nru = 0;
    for (size_t i = 0; i < ps->n && !wrc; i++)
        nru += ps->jobs[i].ru.n;
    if (!wrc && nru) {
        store_op_t *rops = xmalloc(nru * sizeof *rops);
        size_t k = 0;
        for (size_t i = 0; i < ps->n; i++) {
            if (!ps->jobs[i].ru.n) continue; /* its ops may be NULL */
            memcpy(rops + k, ps->jobs[i].ru.ops, ps->jobs[i].ru.n * sizeof *rops);
            k += ps->jobs[i].ru.n;
        }
        wrc = tw_rollup_write(w->db, rops, nru, eb);
        free(rops);
        /* then the longer periods holding these hours, from those cells */
        tw_rollup_touch_t *t = xmalloc(ps->n * sizeof *t);
        size_t nt = 0;
        for (size_t i = 0; i < ps->n; i++)
            if (ps->jobs[i].ru.n)
                t[nt++] = (tw_rollup_touch_t){ps->jobs[i].s->tsuid, ps->jobs[i].s->tsuid_len,
                                              ps->jobs[i].base_s};
        if (!wrc) wrc = tw_rollup_long(w->db, t, nt, NULL, eb);
        free(t);
    }
    if (!wrc && nops)
        wrc = store_write(w->st, STORE_TABLE_DATA, ps->ops, nops, sync ? STORE_SYNC : 0, eb);
    if (wrc) {
        rc = wrc;
        for (size_t i = 0; i < ps->n; i++)
            if (!(w->shared && ps->jobs[i].final)) ps->jobs[i].rc = wrc;
    }
    if (w->shared) {
        /* after the write: the ended hours' entries again (so a sweep that
         * deleted them meanwhile cannot miss the new cells), and the
         * entries of the rows this writer compacted with all its cells */
        nmarks = 0;
        for (size_t i = 0; !wrc && i < ps->n; i++) {
            tw_job_t *j = &ps->jobs[i];
            if (!j->final && job_ended(j, now))
                marks[nmarks++] = (tw_mark_t){j->s->tsuid, j->s->tsuid_len, j->base_s};
        }
        int mrc = tw_shared_mark(w, marks, nmarks, 0, now, eb);
        nmarks = 0;
        for (size_t i = 0; i < ps->n; i++) {
            tw_job_t *j = &ps->jobs[i];
            if (j->final && !j->rc && j->wseq > 0)
                marks[nmarks++] = (tw_mark_t){j->s->tsuid, j->s->tsuid_len, j->base_s};
        }
        if (!mrc) mrc = tw_shared_mark(w, marks, nmarks, 1, now, eb);
        if (mrc && !rc)
            rc = mrc; /* the sweep deletes leftovers; an entry missing after a
                       * failed second put is the only exposure (a log line) */
    } else {
        /* local, after the write: the entries of the hours now final (a
         * failed delete leaves one: the next open finalizes that hour
         * again, the same block and rollups) */
        nmarks = 0;
        for (size_t i = 0; !wrc && i < ps->n; i++) {
            tw_job_t *j = &ps->jobs[i];
            if (j->final && !j->rc && j->unfinal)
                marks[nmarks++] = (tw_mark_t){j->s->tsuid, j->s->tsuid_len, j->base_s};
        }
        int mrc = tw_shared_mark(w, marks, nmarks, 1, now, eb);
        if (mrc && !rc) rc = mrc;
    }
    free(marks);
    uint64_t flushed = 0, blocks = 0;
    for (size_t i = 0; i < ps->n; i++) {
        tw_job_t *j = &ps->jobs[i];
        tw_series_t *s = j->s;
        tw_lock(&s->mu);
        tw_bucket_t *b = bucket_of(s, j->base_s);
        if (b) {
            if (j->rc) {
                bucket_restore(w, b);
            } else {
                flushed += b->nfl;
                blocks++;
                if (w->shared && !j->final) {
                    /* its points are in this writer's cells now */
                    size_t n;
                    codec_point_t *u =
                        points_union(b->sent, b->nsent, b->fl, b->nfl, w->fix_dups, &n);
                    free(b->sent);
                    b->sent = u;
                    b->nsent = b->capsent = (uint32_t)n;
                    if (j->ndels) b->own_lo = j->wseq;
                    b->wseq = j->wseq + 1;
                }
                free(b->fl);
                b->fl = NULL;
                b->nfl = 0;
                b->fl_min_seg = UINT64_MAX;
                b->next_seq = j->new_next;
                b->unfinal = !j->final;
                if (j->final && w->shared) {
                    /* every cell of ours was compacted with the rest */
                    free(b->sent);
                    b->sent = NULL;
                    b->nsent = b->capsent = 0;
                    b->own_lo = b->wseq = 0;
                }
                if (j->final && b->n == 0) {
                    free(b->cur);
                    *b = s->b[--s->nb];
                }
            }
        }
        tw_unlock(&s->mu);
        free(j->val);
        free(j->dels);
        tw_rollup_ops_free(&j->ru);
    }
    if (rc) atomic_fetch_add(&w->flush_errors, 1);
    atomic_fetch_sub(&w->head_points, flushed);
    atomic_fetch_add(&w->blocks_flushed, blocks);
    if (conflicts) atomic_fetch_add(&w->duplicates, conflicts);
    ps->n = 0;
    return rc;
}

int tw_flush_pass(tsdb_writer_t *w, int force, oct_errbuf_t *eb)
{
    pthread_mutex_lock(&w->flush_mu);
    /* Every put that logged to a segment below S has reached the head. */
    pthread_rwlock_wrlock(&w->barrier);
    uint64_t min_seg = tsdb_wal_current_segment(w->wal);
    /* and every put logged below pos (shared: stored when this pass succeeds) */
    uint64_t pos = w->shared ? tsdb_wal_position(w->wal) : 0;
    pthread_rwlock_unlock(&w->barrier);
    int skipped = 0;
    size_t n_compact = 0;

    tw_pass_t *ps = xcalloc(1, sizeof *ps);
    int64_t now = oct_clock_wall_ms();
    size_t ns = atomic_load_explicit(&w->n_series, memory_order_acquire);
    int rc = 0, any_write = 0;
    /* only the series with head buckets (tw_active_*): an idle pass over a
     * million series used to take each one's lock */
    for (size_t i = tw_active_next(w, 0, ns); i < ns; i = tw_active_next(w, i + 1, ns)) {
        tw_series_t *s = tw_series_at(w, i);
        tw_lock(&s->mu);
        for (uint32_t bi = 0; bi < s->nb;) {
            tw_bucket_t *b = &s->b[bi];
            int closed = now >= (b->base_s + CODEC_ROWKEY_SPAN_S) * 1000 + w->grace_ms;
            int final = closed && (force || now - b->last_ms >= w->grace_ms);
            /* shared, closing: a compaction is a CAS per row (50,000 rows took
             * 136 s); the rows keep their writer cells, named in the open-rows
             * registry, and any TSD's sweep compacts them */
            if (w->shared && w->closing) final = 0;
            /* shared: compactions take two round trips each; a few per pass
             * keep the pass (visibility, sync puts) short, the rest wait */
            if (w->shared && final && !force && n_compact >= TW_COMPACT_PER_PASS) final = 0;
            n_compact += w->shared && final;
            int go = b->n && (force || final || w->shared ||
                              (w->open_flush_ms && now - b->first_ms >= w->open_flush_ms));
            /* shared: this writer's cells in the row wait for compaction;
             * local: blocks not final (one alone is seq 0, hence unfinal) */
            int extra = w->shared ? b->wseq > 0 : b->next_seq > 1 || b->unfinal;
            if (!b->n && final && !extra) {
                /* nothing left and the row is compact: forget the bucket */
                free(b->cur);
                free(b->fl);
                free(b->sent);
                *b = s->b[--s->nb];
                continue;
            }
            if (!b->n && final && extra) go = 1; /* compact the extra blocks */
            if (go && ps->n < TW_JOBS) {
                tw_job_t *j = &ps->jobs[ps->n++];
                memset(j, 0, offsetof(tw_job_t, key));
                j->dels = NULL;
                j->ndels = 0;
                j->val = NULL;
                j->s = s;
                j->base_s = b->base_s;
                j->final = final;
                j->next_seq = b->next_seq;
                j->unfinal = b->unfinal;
                j->own_lo = b->own_lo;
                j->wseq = b->wseq;
                j->sent = b->sent;
                j->nsent = b->nsent;
                b->fl = b->cur;
                b->nfl = b->n;
                b->fl_min_seg = b->cur_min_seg;
                b->cur = NULL;
                b->n = b->cap = 0;
                b->cur_min_seg = UINT64_MAX;
                j->pts = b->fl;
                j->n = b->nfl;
            } else {
                skipped |= go; /* no room in this group: the next pass */
                if (b->n && b->cur_min_seg < min_seg) min_seg = b->cur_min_seg;
            }
            bi++;
        }
        if (!s->nb) tw_active_clear(w, s->id);
        tw_unlock(&s->mu);
        if (ps->n > TW_JOBS - 16) {
            any_write = 1;
            int r = run_jobs(w, ps, 0, eb);
            if (r && !rc) rc = r;
        }
    }
    if (ps->n) {
        int r = run_jobs(w, ps, 1, eb);
        if (r && !rc) rc = r;
    } else if (any_write && !rc) {
        /* the earlier groups were not synced */
        rc = store_flush(w->st, eb);
    }
    free(ps->ops);
    free(ps);
    /* A failed job's points went back to the head with their segments,
     * which this pass did not count: keep the whole log then. */
    if (!rc) tsdb_wal_delete_below(w->wal, min_seg);
    if (w->shared && !rc && !skipped) {
        pthread_mutex_lock(&w->stop_mu);
        if (pos > w->stored_pos) w->stored_pos = pos;
        pthread_cond_broadcast(&w->stored_cv);
        pthread_mutex_unlock(&w->stop_mu);
    }
    pthread_mutex_unlock(&w->flush_mu);
    return rc;
}

/* ---- the thread ------------------------------------------------------ */

static void *flush_thread(void *arg)
{
    tsdb_writer_t *w = arg;
    int failing = 0;
    pthread_mutex_lock(&w->stop_mu);
    while (!w->stopping) {
        /* stop_cv waits on CLOCK_MONOTONIC, which oct_clock_mono_ns reads */
        int64_t dl_ns = oct_clock_mono_ns() + w->flush_every_ms * 1000000;
        struct timespec dl = {.tv_sec = dl_ns / 1000000000, .tv_nsec = dl_ns % 1000000000};
        while (!w->stopping && !w->kick &&
               pthread_cond_timedwait(&w->stop_cv, &w->stop_mu, &dl) != ETIMEDOUT)
            ;
        if (w->stopping) break;
        w->kick = 0;
        pthread_mutex_unlock(&w->stop_mu);
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int prc = tw_flush_pass(w, 0, &eb);
        /* shared: series other TSDs created, for this TSD's index */
        if (!prc && w->shared) prc = tw_shared_refresh(w, &eb);
        if (prc < 0) {
            /* Counted in flush_errors; the points stay in the head (and their
             * log segments on disk) for the next pass. Said once per streak. */
            if (!failing) oct_log_warn("flush", "%s; the points stay in memory, retrying", eb.msg);
            failing = 1;
        } else if (failing) {
            oct_log_info("flush", "flushing works again");
            failing = 0;
        }
        pthread_mutex_lock(&w->stop_mu);
    }
    pthread_mutex_unlock(&w->stop_mu);
    return NULL;
}

int tw_flush_start(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    pthread_cond_destroy(&w->stop_cv);
    tw_cond_init_mono(&w->stop_cv);
    if (pthread_create(&w->flush_thr, NULL, flush_thread, w) != 0)
        return oct_err(eb, OCT_EIO, "cannot start the flush thread");
    w->flush_started = 1;
    return 0;
}

void tw_flush_stop(tsdb_writer_t *w)
{
    if (!w->flush_started) return;
    pthread_mutex_lock(&w->stop_mu);
    w->stopping = 1;
    pthread_cond_signal(&w->stop_cv);
    pthread_cond_broadcast(&w->stored_cv); /* sync waiters give up */
    pthread_mutex_unlock(&w->stop_mu);
    pthread_join(w->flush_thr, NULL);
    w->flush_started = 0;
}
