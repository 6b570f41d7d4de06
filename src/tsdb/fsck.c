/* fsck.c -- the data-table checker behind `octsdb fsck` (contract in fsck.h).
 *
 * A row is checked in three steps, as OpenTSDB's Fsck does: the key, then
 * each cell (collecting every decodable point with the cell it came from),
 * then the points (duplicates). Single cells are validated from their raw
 * bytes, not through the codec's lenient decoder, because the legacy
 * fix-ups the reader applies are exactly what fsck must report. Repairs are
 * gathered as store ops and applied at the end of the row in one
 * store_write: its ops all lie in the row's partition, so they are atomic. */
#include "tsdb/fsck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "codec/cell.h"
#include "codec/rowkey.h"
#include "common/xmalloc.h"
#include "tsdb/tsdb_int.h"

#define FSCK_FAMILY "t"

/* One point found in the row. */
typedef struct {
    codec_point_t p;
    uint32_t cell; /* index in the row */
    int32_t rank;  /* age: OpenTSDB cells 0, block seq s -> 1 + s */
} fsck_pt_t;

typedef struct {
    tsdb_t *db;
    const tsdb_fsck_opts_t *o;
    tsdb_fsck_stats_t *st;
    tsdb_fsck_report_fn report;
    void *ctx;
    oct_slice_t part, key;
    char keyhex[2 * 512 + 1];
    uint32_t base;
    /* points */
    fsck_pt_t *pts;
    size_t n, cap;
    /* repairs: ops, plus bytes they point to (offsets until the end) */
    store_op_t *ops;
    uint8_t *is_point_fix; /* per op: a rewrite of a point cell, dropped if the row is rewritten */
    size_t n_ops, ops_cap;
    uint8_t *bytes;
    size_t bytes_len, bytes_cap;
    size_t *q_off, *v_off;    /* per op */
    uint8_t *cell_has_points; /* per cell: contributed points (deleted by a row rewrite) */
    int bad_kept;             /* bad values left in place */
} fsck_row_t;

static void say(fsck_row_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(fsck_row_t *r, const char *fmt, ...)
{
    if (!r->report) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->report(r->ctx, msg);
}

static const char *hex(const uint8_t *b, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 3 <= cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%02X", b[i]);
    if (k < cap) out[k] = '\0';
    return out;
}

static size_t bytes_add(fsck_row_t *r, const void *p, size_t n)
{
    if (r->bytes_len + n > r->bytes_cap) {
        r->bytes_cap = (r->bytes_len + n) * 2 + 256;
        r->bytes = xrealloc(r->bytes, r->bytes_cap);
    }
    size_t off = r->bytes_len;
    if (n) memcpy(r->bytes + off, p, n);
    r->bytes_len += n;
    return off;
}

static void op_add(fsck_row_t *r, store_op_kind_t kind, const uint8_t *q, size_t ql,
                   const uint8_t *v, size_t vl, int point_fix)
{
    if (r->n_ops == r->ops_cap) {
        r->ops_cap = r->ops_cap ? 2 * r->ops_cap : 16;
        r->ops = xrealloc(r->ops, r->ops_cap * sizeof *r->ops);
        r->is_point_fix = xrealloc(r->is_point_fix, r->ops_cap);
        r->q_off = xrealloc(r->q_off, r->ops_cap * sizeof *r->q_off);
        r->v_off = xrealloc(r->v_off, r->ops_cap * sizeof *r->v_off);
    }
    size_t i = r->n_ops++;
    memset(&r->ops[i], 0, sizeof r->ops[i]);
    r->ops[i].kind = kind;
    r->ops[i].part = r->part;
    r->ops[i].cell.row = r->key;
    r->ops[i].cell.family = oct_slice_str(FSCK_FAMILY);
    r->ops[i].cell.qualifier.len = ql;
    r->ops[i].cell.value.len = vl;
    r->q_off[i] = bytes_add(r, q, ql);
    r->v_off[i] = bytes_add(r, v, vl);
    r->is_point_fix[i] = (uint8_t)point_fix;
}

static int apply_ops(fsck_row_t *r, int drop_point_fixes, oct_errbuf_t *eb)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_ops; i++) {
        if (drop_point_fixes && r->is_point_fix[i]) continue;
        store_op_t op = r->ops[i];
        op.cell.qualifier.ptr = r->bytes + r->q_off[i];
        op.cell.value.ptr = r->bytes + r->v_off[i];
        r->ops[k++] = op;
    }
    if (!k) return 0;
    return store_write(tsdb_store(r->db), STORE_TABLE_DATA, r->ops, k, 0, eb);
}

static void pt_add(fsck_row_t *r, const codec_point_t *p, size_t cell, int32_t rank)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->pts = xrealloc(r->pts, r->cap * sizeof *r->pts);
    }
    r->pts[r->n++] = (fsck_pt_t){*p, (uint32_t)cell, rank};
    r->cell_has_points[cell] = 1;
}

static int fits_smaller(int64_t v)
{
    return v >= INT32_MIN && v <= INT32_MAX;
}

/* A single-point cell from its raw bytes. */
static void check_single(fsck_row_t *r, size_t ci, const store_cell_t *c)
{
    const uint8_t *q = c->qualifier.ptr, *v = c->value.ptr;
    size_t ql = c->qualifier.len, vl = c->value.len;
    const tsdb_fsck_opts_t *o = r->o;
    tsdb_fsck_stats_t *st = r->st;
    char qh[16];
    hex(q, ql, qh, sizeof qh);
    uint8_t flags = q[ql - 1] & CODEC_FLAGS_MASK;
    unsigned len = (flags & CODEC_FLAGS_LEN_MASK) + 1u;
    int is_float = (flags & CODEC_FLAG_FLOAT) != 0;
    uint32_t off_ms =
        ql == 2 ? (uint32_t)(oct_get_be16(q) >> 4) * 1000u : (oct_get_be32(q) & 0x0FFFFFC0u) >> 6;
    codec_point_t p = {.ts_ms = (int64_t)r->base * 1000 + off_ms, .is_float = (uint8_t)is_float};
    int bad = 0;
    if (off_ms > CODEC_MAX_OFFSET_MS) {
        say(r, "Offset out of the row's hour: key %s qualifier %s", r->keyhex, qh);
        bad = 1;
    } else if (!is_float) {
        if (vl != len || (len != 1 && len != 2 && len != 4 && len != 8)) {
            say(r,
                "The integer value is %zu bytes long but should be %u bytes: key %s qualifier %s",
                vl, len, r->keyhex, qh);
            bad = 1;
        } else {
            p.val.i = (int64_t)oct_get_be_n(v, len);
            if (len < 8) /* sign-extend */
                p.val.i = (int64_t)((uint64_t)p.val.i << (64 - 8 * len)) >> (64 - 8 * len);
            if (len == 8 && fits_smaller(p.val.i)) {
                uint8_t nv[8];
                unsigned w = codec_value_encode_int(p.val.i, nv);
                st->vle++;
                st->vle_bytes += 8 - w;
                if (o->fix) {
                    uint8_t nq[4];
                    memcpy(nq, q, ql);
                    nq[ql - 1] = (uint8_t)((q[ql - 1] & 0xF0) | codec_flags(0, w));
                    op_add(r, STORE_OP_DELETE_CELL, q, ql, NULL, 0, 1);
                    op_add(r, STORE_OP_PUT, nq, ql, nv, w, 1);
                    st->vle_fixed++;
                }
            }
        }
    } else {
        if (len == 4 && vl == 8) {
            int ff = v[0] == 0xFF && v[1] == 0xFF && v[2] == 0xFF && v[3] == 0xFF && ql == 2;
            int zero = !v[0] && !v[1] && !v[2] && !v[3];
            if (ff || zero) {
                st->value_encoding++;
                say(r,
                    "Floating point value marked as 4 bytes long but stored on 8%s: key %s "
                    "qualifier %s",
                    ff ? " with 0xFF most significant bytes" : "", r->keyhex, qh);
                if (o->fix) {
                    op_add(r, STORE_OP_PUT, q, ql, v + 4, 4, 1);
                    st->value_encoding_fixed++;
                }
                float f;
                uint32_t bits = oct_get_be32(v + 4);
                memcpy(&f, &bits, 4);
                p.val.f = f;
            } else {
                say(r,
                    "Floating point value marked as 4 bytes long but stored on 8 with non-zero "
                    "high bytes: key %s qualifier %s",
                    r->keyhex, qh);
                bad = 1;
            }
        } else if (vl != len || (len != 4 && len != 8)) {
            say(r,
                "The floating point value is %zu bytes long but should be %u bytes (4 or 8): "
                "key %s qualifier %s",
                vl, len, r->keyhex, qh);
            bad = 1;
        } else if (len == 4) {
            float f;
            uint32_t bits = oct_get_be32(v);
            memcpy(&f, &bits, 4);
            p.val.f = f;
        } else {
            uint64_t bits = oct_get_be64(v);
            memcpy(&p.val.f, &bits, 8);
        }
    }
    if (bad) {
        st->bad_values++;
        if (o->fix && o->delete_bad_values) {
            op_add(r, STORE_OP_DELETE_CELL, q, ql, NULL, 0, 0);
            st->bad_values_deleted++;
        } else {
            r->bad_kept = 1;
        }
        return;
    }
    pt_add(r, &p, ci, 0);
}

/* A compacted or append column. Returns 1 if it was out of order. */
static int check_multi(fsck_row_t *r, size_t ci, const store_cell_t *c, int append)
{
    const uint8_t *q = c->qualifier.ptr, *v = c->value.ptr;
    size_t ql = c->qualifier.len, vl = c->value.len;
    tsdb_fsck_stats_t *st = r->st;
    char qh[64];
    hex(q, ql > 24 ? 24 : ql, qh, sizeof qh);
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int bad = 0;
    if (!append && (vl == 0 || v[vl - 1] > CODEC_META_MIXED)) {
        say(r, "The last byte of a compacted column should be 0 or 1: key %s qualifier %s%s",
            r->keyhex, qh, ql > 24 ? "..." : "");
        bad = 1;
    }
    codec_cell_iter_t it;
    size_t first = r->n;
    if (!bad && codec_cell_iter_init(&it, q, ql, v, vl, &eb) < 0) bad = 2;
    int unordered = 0;
    if (!bad) {
        codec_dp_t dp;
        int rc;
        int64_t prev = -1;
        while ((rc = codec_cell_iter_next(&it, &dp, &eb)) == 1) {
            codec_point_t p = {.ts_ms = (int64_t)r->base * 1000 + dp.offset_ms,
                               .is_float = dp.is_float};
            if (dp.is_float)
                p.val.f = dp.val.f;
            else
                p.val.i = dp.val.i;
            if (!dp.is_float && dp.width == 8 && fits_smaller(dp.val.i)) {
                st->vle++;
                st->vle_bytes += 8 - codec_value_encode_int(dp.val.i, (uint8_t[8]){0});
            }
            if ((int64_t)dp.offset_ms <= prev) unordered = 1;
            prev = dp.offset_ms;
            pt_add(r, &p, ci, 0);
        }
        if (rc < 0) bad = 2;
    }
    if (bad) {
        r->n = first;
        r->cell_has_points[ci] = 0;
        if (bad == 2)
            say(r, "Unparseable %s column: key %s qualifier %s%s: %s",
                append ? "append" : "compacted", r->keyhex, qh, ql > 24 ? "..." : "", eb.msg);
        st->bad_compacted++;
        if (r->o->fix && r->o->delete_bad_compacts) {
            op_add(r, STORE_OP_DELETE_CELL, q, ql, NULL, 0, 0);
            st->bad_compacted_deleted++;
        }
        return 0;
    }
    if (unordered && !append) {
        /* appends are unordered by design: arrival order */
        st->fixable_compacted++;
        say(r, "Compacted column was out of order or requires a fixup: key %s qualifier %s%s",
            r->keyhex, qh, ql > 24 ? "..." : "");
        return 1;
    }
    return 0;
}

/* seq: the 3-byte form's seq, or 65536 + the writer form's (its rank). */
static void check_block(fsck_row_t *r, size_t ci, const store_cell_t *c, int32_t seq)
{
    const uint8_t *v = c->value.ptr;
    size_t vl = c->value.len;
    tsdb_fsck_stats_t *st = r->st;
    int cnt = codec_block_count(v, vl);
    codec_point_t *tmp = NULL;
    int n = cnt;
    const char *why = "it does not decode";
    if (cnt >= 0) {
        tmp = xmalloc((size_t)(cnt ? cnt : 1) * sizeof *tmp);
        n = codec_block_decode(v, vl, tmp, (size_t)cnt);
    }
    if (n >= 0) {
        int64_t lo = (int64_t)r->base * 1000, hi = lo + CODEC_ROWKEY_SPAN_S * 1000;
        for (int i = 0; i < n; i++) {
            if (tmp[i].ts_ms < lo || tmp[i].ts_ms >= hi) {
                why = "a point lies outside the row's hour";
                n = -1;
                break;
            }
        }
    }
    if (n < 0) {
        st->bad_blocks++;
        say(r, "Unparseable block cell (seq %d): %s: key %s", (int)seq, why, r->keyhex);
        if (r->o->fix && r->o->delete_bad_compacts) {
            op_add(r, STORE_OP_DELETE_CELL, c->qualifier.ptr, c->qualifier.len, NULL, 0, 0);
            st->bad_blocks_deleted++;
        }
        free(tmp);
        return;
    }
    st->blocks++;
    for (int i = 0; i < n; i++)
        pt_add(r, &tmp[i], ci, 1 + (int32_t)seq);
    free(tmp);
}

static int pt_cmp(const void *a, const void *b)
{
    const fsck_pt_t *x = a, *y = b;
    if (x->p.ts_ms != y->p.ts_ms) return x->p.ts_ms < y->p.ts_ms ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

/* Checks the key; returns 1 if the row's cells should be checked. */
static int check_key(fsck_row_t *r, const codec_rowkey_layout_t *lay, codec_rowkey_t *rk, int *err,
                     oct_errbuf_t *eb)
{
    tsdb_fsck_stats_t *st = r->st;
    const char *why = NULL;
    if (codec_rowkey_parse(lay, r->key.ptr, r->key.len, rk, NULL)) {
        why = "bad length";
    } else if (rk->metric_uid == 0 && rk->n_tags == 0) {
        return 2; /* a global annotation row: only annotations expected */
    } else if (rk->n_tags == 0) {
        why = "no tags";
    } else {
        size_t plen = codec_rowkey_partition_prefix_len(lay);
        if (r->part.len != plen || memcmp(r->part.ptr, r->key.ptr, plen)) {
            why = "stored outside its partition";
        } else if (lay->salt_w) {
            uint8_t k[1024];
            if (r->key.len <= sizeof k) {
                memcpy(k, r->key.ptr, r->key.len);
                if (codec_rowkey_apply_salt(lay, k, r->key.len) < 0 ||
                    memcmp(k, r->key.ptr, lay->salt_w))
                    why = "wrong salt";
            }
        }
    }
    if (why) {
        st->bad_key++;
        say(r, "Invalid row key (%s): %s", why, r->keyhex);
        if (r->o->fix && r->o->delete_bad_rows) {
            op_add(r, STORE_OP_DELETE_ROW, NULL, 0, NULL, 0, 0);
            st->bad_key_fixed++;
        }
        return 0;
    }
    /* orphans: every UID of the key must have a name */
    uid_registry_t *u = tsdb_uids(r->db);
    struct {
        codec_uid_kind_t k;
        const uint8_t *p;
    } ids[1 + 2 * 64];
    size_t nid = 0;
    ids[nid].k = CODEC_UID_METRIC;
    ids[nid++].p = rk->metric;
    for (size_t i = 0; i < rk->n_tags && nid + 2 <= sizeof ids / sizeof ids[0]; i++) {
        ids[nid].k = CODEC_UID_TAGK;
        ids[nid++].p = codec_rowkey_tagk(rk, i);
        ids[nid].k = CODEC_UID_TAGV;
        ids[nid++].p = codec_rowkey_tagv(rk, i);
    }
    for (size_t i = 0; i < nid; i++) {
        unsigned w = uid_width(u, ids[i].k);
        uint64_t id = codec_uid_decode(ids[i].p, w);
        uint8_t name[8];
        size_t len;
        int rc = uid_get_name(u, ids[i].k, id, name, sizeof name, &len, eb);
        if (rc == 0 || rc == OCT_ENOSPC) continue;
        if (rc != OCT_ENOSUCHID) {
            *err = rc;
            return 0;
        }
        char uh[20];
        st->orphans++;
        say(r, "Unable to resolve the %s UID %s of row key %s", codec_uid_kind_qualifier(ids[i].k),
            hex(ids[i].p, w, uh, sizeof uh), r->keyhex);
        if (r->o->fix && r->o->delete_orphans) {
            op_add(r, STORE_OP_DELETE_ROW, NULL, 0, NULL, 0, 0);
            st->orphans_fixed++;
        }
        return 0;
    }
    return 1;
}

int tsdb_fsck_row(tsdb_t *db, const tsdb_fsck_opts_t *opts, oct_slice_t part,
                  const store_result_t *row, tsdb_fsck_stats_t *st, tsdb_fsck_report_fn report,
                  void *ctx, oct_errbuf_t *eb)
{
    if (row->n == 0) return 0;
    codec_rowkey_layout_t lay = tsdb__rowkey_layout(db);
    fsck_row_t r = {.db = db,
                    .o = opts,
                    .st = st,
                    .report = report,
                    .ctx = ctx,
                    .part = part,
                    .key = row->cells[0].row};
    hex(r.key.ptr, r.key.len > 512 ? 512 : r.key.len, r.keyhex, sizeof r.keyhex);
    r.cell_has_points = xcalloc(row->n, 1);
    st->rows++;
    st->kvs += row->n;
    codec_rowkey_t rk;
    int err = 0;
    int k = check_key(&r, &lay, &rk, &err, eb);
    if (err) goto out;
    if (k == 2) { /* global annotations */
        for (size_t i = 0; i < row->n; i++)
            if (codec_qual_classify(row->cells[i].qualifier.ptr, row->cells[i].qualifier.len) ==
                CODEC_QUAL_ANNOTATION)
                st->annotations++;
        goto out;
    }
    if (k == 0) {
        err = apply_ops(&r, 0, eb);
        goto out;
    }
    r.base = rk.base_time;

    int fixable = 0;
    for (size_t i = 0; i < row->n; i++) {
        const store_cell_t *c = &row->cells[i];
        const uint8_t *q = c->qualifier.ptr;
        size_t ql = c->qualifier.len;
        uint16_t seq;
        uint32_t wseq;
        char qh[32];
        if (codec_block_writer_qualifier_parse(q, ql, NULL, &wseq)) {
            /* an open hour's block of one of several TSDs (format/block.md):
             * ranked above the 3-byte blocks, as the read path does */
            check_block(&r, i, c, 65536 + (int32_t)(wseq < 0x3FFFFFFF ? wseq : 0x3FFFFFFF));
            continue;
        }
        if (ql < 2 || (ql % 2 && ql != 3 && ql != 5)) {
            st->unknown++;
            say(&r,
                "Unknown qualifier %s (must be 2, 3, 5 or an even number of "
                "bytes): key %s",
                hex(q, ql > 12 ? 12 : ql, qh, sizeof qh), r.keyhex);
            if (opts->fix && opts->delete_unknown) {
                op_add(&r, STORE_OP_DELETE_CELL, q, ql, NULL, 0, 0);
                st->unknown_fixed++;
            }
            continue;
        }
        if (codec_block_qualifier_parse(q, ql, &seq)) {
            check_block(&r, i, c, seq);
            continue;
        }
        if (ql % 2) {
            if (q[0] == CODEC_PREFIX_ANNOTATION) {
                st->annotations++;
            } else if (q[0] == CODEC_PREFIX_APPEND && ql == 3) {
                check_multi(&r, i, c, 1);
            } else {
                st->future++;
                say(&r, "Found an object possibly from a future version: key %s qualifier %s",
                    r.keyhex, hex(q, ql, qh, sizeof qh));
            }
            continue;
        }
        if (ql == 2 || (ql == 4 && (q[0] & CODEC_MS_PREFIX) == CODEC_MS_PREFIX))
            check_single(&r, i, c);
        else
            fixable += check_multi(&r, i, c, 0);
    }

    /* duplicates */
    qsort(r.pts, r.n, sizeof *r.pts, pt_cmp);
    size_t dups = 0, kept = 0;
    for (size_t i = 0; i < r.n;) {
        size_t j = i + 1;
        while (j < r.n && r.pts[j].p.ts_ms == r.pts[i].p.ts_ms)
            j++;
        size_t keep = opts->last_write_wins ? j - 1 : i;
        if (j - i > 1) {
            dups += j - i - 1;
            say(&r,
                "More than one column had a value for the same timestamp: (%" PRId64
                ") row key: (%s), %zu values, keeping the %s",
                r.pts[i].p.ts_ms, r.keyhex, j - i, opts->last_write_wins ? "newest" : "oldest");
        }
        r.pts[kept++] = r.pts[keep];
        i = j;
    }
    st->valid_dps += kept;
    st->duplicates += dups;

    int rewrite = opts->fix && ((dups && opts->resolve_dups) || fixable);
    if (dups && !opts->resolve_dups) rewrite = 0;
    if (r.bad_kept) rewrite = 0;
    if (rewrite && kept > 0) {
        codec_point_t *pts = xmalloc(kept * sizeof *pts);
        for (size_t i = 0; i < kept; i++)
            pts[i] = r.pts[i].p;
        size_t cap = codec_block_encode_bound(kept);
        uint8_t *blk = xmalloc(cap);
        ssize_t bl = codec_block_encode(pts, kept, blk, cap, CODEC_BLOCK_ENC_AUTO, NULL);
        free(pts);
        if (bl < 0) {
            free(blk);
            err = oct_err(eb, (int)bl, "fsck: cannot encode the repaired row %s", r.keyhex);
            goto out;
        }
        for (size_t i = 0; i < row->n; i++)
            if (r.cell_has_points[i])
                op_add(&r, STORE_OP_DELETE_CELL, row->cells[i].qualifier.ptr,
                       row->cells[i].qualifier.len, NULL, 0, 0);
        uint8_t bq[CODEC_BLOCK_QUAL_LEN];
        codec_block_qualifier(0, bq);
        op_add(&r, STORE_OP_PUT, bq, sizeof bq, blk, (size_t)bl, 0);
        free(blk);
        if (opts->resolve_dups) st->duplicates_fixed += dups;
        st->fixable_compacted_fixed += (uint64_t)fixable;
    }
    err = apply_ops(&r, rewrite && kept > 0, eb);
out:
    free(r.pts);
    free(r.ops);
    free(r.is_point_fix);
    free(r.q_off);
    free(r.v_off);
    free(r.bytes);
    free(r.cell_has_points);
    return err;
}

uint64_t tsdb_fsck_total_errors(const tsdb_fsck_stats_t *s)
{
    return s->bad_key + s->duplicates + s->orphans + s->unknown + s->bad_values + s->bad_compacted +
           s->fixable_compacted + s->value_encoding + s->bad_blocks;
}

uint64_t tsdb_fsck_total_fixed(const tsdb_fsck_stats_t *s)
{
    return s->bad_key_fixed + s->duplicates_fixed + s->orphans_fixed + s->unknown_fixed +
           s->value_encoding_fixed + s->bad_values_deleted + s->bad_compacted_deleted +
           s->fixable_compacted_fixed + s->bad_blocks_deleted;
}

int tsdb_fsck_row_at(tsdb_t *db, const tsdb_fsck_opts_t *opts, oct_slice_t part, oct_slice_t key,
                     tsdb_fsck_stats_t *st, tsdb_fsck_report_fn report, void *ctx, oct_errbuf_t *eb)
{
    store_result_t row = STORE_RESULT_INIT;
    int rc = store_get(tsdb_store(db), STORE_TABLE_DATA, part, key, oct_slice_str(FSCK_FAMILY),
                       &row, eb);
    if (rc > 0) rc = tsdb_fsck_row(db, opts, part, &row, st, report, ctx, eb);
    store_result_free(&row);
    return rc < 0 ? rc : 0;
}
