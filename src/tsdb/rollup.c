/* rollup.c -- OpenTSDB 2.4's rollup and pre-aggregate writes (its
 * addAggregatePoint rules, in its order) and reads, over the store table
 * octsdb-rollup (docs/format/rollup.md: one partition prefix per 2.4 table
 * name, 2.4's row keys and qualifiers inside). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/cell.h"
#include "codec/rollup.h"
#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "tsdb/retention.h"
#include "tsdb/rollup.h"
#include "tsdb/series.h"

#define RU_FAMILY   "t"
#define RU_MAX_NAME 200 /* table names; the partition is at most 255 bytes */
#define RU_KEY_CAP  TW_ROLLUP_PART_CAP
#define RU_BATCH    512 /* rows per multi-get */
/* a row with fewer rollup puts than this is probed slot by slot, not read
 * (tw_rollup_stale): 5 point reads per put against a row of any length */
#define RU_PROBE_MAX 8

/* ---- messages in 2.4's shapes ---------------------------------------------- */

/* "{k=v, k2=v2}" (Java's map text; in the order given, 2.4's is its hash map's). */
static void tags_text(oct_strbuf_t *sb, const oct_slice_t *tags, size_t n)
{
    oct_strbuf_append(sb, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) oct_strbuf_append(sb, ", ", 2);
        oct_strbuf_append(sb, tags[2 * i].ptr, tags[2 * i].len);
        oct_strbuf_append(sb, "=", 1);
        oct_strbuf_append(sb, tags[2 * i + 1].ptr, tags[2 * i + 1].len);
    }
    oct_strbuf_append(sb, "}", 1);
}

static int has_ci(oct_slice_t s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && !strncasecmp((const char *)s.ptr, lit, n);
}

static void upper(char *dst, oct_slice_t s, size_t cap)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)toupper(((const unsigned char *)s.ptr)[i]);
    dst[n] = '\0';
}

/* The value as 2.4 prints it in "bad timestamp": Java's byte list and the
 * flags, e.g. "[42]/0". */
static void value_text(oct_strbuf_t *sb, const codec_point_t *p)
{
    uint8_t v[8];
    unsigned w =
        p->is_float ? codec_value_encode_float(p->val.f, v) : codec_value_encode_int(p->val.i, v);
    char b[16];
    oct_strbuf_append(sb, "[", 1);
    for (unsigned i = 0; i < w; i++) {
        int n = snprintf(b, sizeof b, "%s%d", i ? ", " : "", (int)(int8_t)v[i]);
        oct_strbuf_append(sb, b, (size_t)n);
    }
    int n = snprintf(b, sizeof b, "]/%u", (unsigned)codec_flags(p->is_float, w));
    oct_strbuf_append(sb, b, (size_t)n);
}

/* ---- keys ------------------------------------------------------------------- */

/* The partition of row key rk[0..rklen) in 2.4 table `table`: the name,
 * then the row key up to its base time. Returns the length. */
static size_t part_of(const codec_rowkey_layout_t *l, const char *table, const uint8_t *rk,
                      uint8_t *out)
{
    size_t tl = strlen(table);
    size_t pl = codec_rowkey_partition_prefix_len(l);
    out[0] = (uint8_t)tl; /* callers keep names within RU_MAX_NAME */
    memcpy(out + 1, table, out[0]);
    memcpy(out + 1 + tl, rk, pl);
    return 1 + tl + pl;
}

/* ---- writing ---------------------------------------------------------------- */

int tsdb_rollup_put(tsdb_t *db, const tsdb_rollup_dp_t *dp, oct_errbuf_t *eb)
{
    const query_rollup_config_t *c = tsdb_rollups(db);
    tsdb_writer_t *w = tsdb__writer(db);
    oct_strbuf_t tt = OCT_STRBUF_INIT;
    oct_slice_t stack[34];
    oct_slice_t *tags = dp->n_tags + 1 <= 17 ? stack : xmalloc(2 * (dp->n_tags + 1) * sizeof *tags);
    char gb_up[64] = "";
    char agg_tag[64];
    int rc = 0;
    const int m_len = (int)(dp->metric.len > 200 ? 200 : dp->metric.len);
    const char *m = (const char *)dp->metric.ptr;
    if (!w) {
        rc = oct_err(eb, OCT_EIO, "this TSD is read-only");
        goto out;
    }
    /* 1 */
    if (!c) {
        rc = oct_err(eb, OCT_EINVAL, "No rollup or aggregations were configured");
        goto out;
    }
    tags_text(&tt, dp->tags, dp->n_tags);
    /* 2 */
    if (dp->group_by && dp->gb_agg.len == 0) {
        rc = oct_err(eb, OCT_EINVAL,
                     "Cannot write a group by data point without specifying the aggregation "
                     "function. Metric=%.*s tags=%s",
                     m_len, m, tt.ptr);
        goto out;
    }
    /* 3: seconds only, also for pre-aggregates */
    if (dp->ts < 0 || dp->ts > (int64_t)UINT32_MAX) {
        oct_strbuf_t vt = OCT_STRBUF_INIT;
        value_text(&vt, &dp->value);
        rc =
            oct_err(eb, OCT_EINVAL,
                    "bad timestamp=%" PRId64 " when trying to add value=%s to metric=%.*s, tags=%s",
                    dp->ts, vt.ptr, m_len, m, tt.ptr);
        oct_strbuf_free(&vt);
        goto out;
    }
    /* 4: the aggregate tag */
    if (dp->group_by) upper(gb_up, dp->gb_agg, sizeof gb_up);
    size_t nt = 0, key_at = SIZE_MAX;
    oct_slice_t key = oct_slice_str(c->agg_tag_key);
    for (size_t i = 0; i < dp->n_tags; i++) {
        tags[2 * nt] = dp->tags[2 * i];
        tags[2 * nt + 1] = dp->tags[2 * i + 1];
        if (oct_slice_eq(dp->tags[2 * i], key)) key_at = nt;
        nt++;
    }
    if (key_at == SIZE_MAX) {
        if (dp->group_by) {
            tags[2 * nt] = key;
            tags[2 * nt + 1] = oct_slice_str(gb_up);
            nt++;
        } else if (c->tag_raw) {
            tags[2 * nt] = key;
            tags[2 * nt + 1] = oct_slice_str(c->raw_agg_tag_value);
            nt++;
        }
    } else {
        oct_slice_t v = tags[2 * key_at + 1];
        if (!dp->group_by || !has_ci(v, gb_up)) {
            rc = oct_err(eb, OCT_EINVAL,
                         "Given tag value for %s of %.*s did not match the group by aggregator "
                         "of %s for %.*s %s",
                         c->agg_tag_key, (int)v.len, (const char *)v.ptr,
                         dp->group_by ? gb_up : "null", m_len, m, tt.ptr);
            goto out;
        }
        upper(agg_tag, v, sizeof agg_tag);
        tags[2 * key_at + 1] = oct_slice_str(agg_tag);
    }
    /* 5 */
    if (dp->group_by) {
        char lower[64];
        size_t n = strlen(gb_up);
        for (size_t i = 0; i <= n; i++)
            lower[i] = (char)tolower((unsigned char)gb_up[i]);
        if (!query_agg_find(lower) || dp->gb_agg.len >= sizeof gb_up) {
            rc = oct_err(eb, OCT_EINVAL, "Invalid group by aggregator %.*s with metric %.*s %s",
                         (int)dp->gb_agg.len, (const char *)dp->gb_agg.ptr, m_len, m, tt.ptr);
            goto out;
        }
        if (c->block_derived && (!strcmp(gb_up, "AVG") || !strcmp(gb_up, "DEV"))) {
            rc = oct_err(eb, OCT_EINVAL,
                         "Derived group by aggregations are not allowed %s with metric %.*s %s",
                         gb_up, m_len, m, tt.ptr);
            goto out;
        }
    }
    /* 6: names (the added tag counts toward tsd.storage.max_tags) */
    uint64_t names_gen = atomic_load(&w->names_gen);
    tsdb_dp_t sdp = {.metric = dp->metric, .tags = tags, .n_tags = nt};
    tw_series_t *s = NULL;
    int fresh = 0;
    rc = tw_series_prepare(w, &sdp, &s, &fresh, eb);
    if (rc) goto out;
    /* 7 */
    const query_rollup_interval_t *iv = NULL;
    int agg_id = -1;
    if (dp->interval.len) {
        iv = query_rollup_interval_find(c, (const char *)dp->interval.ptr, dp->interval.len);
        if (!iv)
            rc = oct_err(eb, OCT_ENOTFOUND, "No rollups configured for the interval: %.*s",
                         (int)dp->interval.len, (const char *)dp->interval.ptr);
        else if (dp->agg.len == 0)
            rc = oct_err(eb, OCT_EINVAL, "Aggregator cannot be null or empty.");
        else if ((agg_id = query_rollup_agg_id(c, (const char *)dp->agg.ptr, dp->agg.len)) < 0)
            rc = oct_err(eb, OCT_EINVAL, "No ID found mapping to aggregator: %.*s",
                         (int)dp->agg.len, (const char *)dp->agg.ptr);
    }
    if (rc) {
        if (fresh) tw_series_free(s);
        goto out;
    }
    /* 8 */
    if (fresh) {
        rc = tw_series_commit(w, &s, 1, names_gen, eb);
        if (rc || !s) {
            if (!rc) rc = oct_err(eb, OCT_EIO, "the series could not be created");
            goto out;
        }
    }
    /* 9 */
    if (iv && c->block_derived && (has_ci(dp->agg, "avg") || has_ci(dp->agg, "dev"))) {
        char a[64];
        upper(a, dp->agg, sizeof a);
        rc = oct_err(eb, OCT_EINVAL,
                     "Derived rollup aggregations are not allowed %s with metric %.*s %s", a, m_len,
                     m, tt.ptr);
        goto out;
    }
    /* 10: one cell */
    const char *table =
        iv ? (dp->group_by ? iv->preagg_table : iv->table) : c->iv[c->default_iv].preagg_table;
    int64_t base = iv ? query_rollup_base_time(iv, dp->ts) : codec_rowkey_base_time(dp->ts);
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    uint8_t rk[TW_MAX_TSUID + 16], part[RU_KEY_CAP], qual[4], val[8];
    int kl = codec_rowkey_from_tsuid(&l, s->tsuid, s->tsuid_len, base, rk, sizeof rk, eb);
    if (kl < 0) {
        rc = kl;
        goto out;
    }
    size_t ql, vl;
    if (iv) {
        int64_t index = (dp->ts - base) / iv->interval_s;
        if (codec_rollup_encode((unsigned)agg_id, (uint32_t)index, &dp->value, qual, val, &vl)) {
            rc = oct_err(eb, OCT_EINVAL,
                         "Interval index %" PRId64 " of timestamp=%" PRId64
                         " does not fit the 12 bits of a rollup qualifier (interval %s, row span "
                         "%d%c)",
                         index, dp->ts, iv->interval, iv->span_mult, iv->span_unit);
            goto out;
        }
        ql = CODEC_ROLLUP_QUAL_LEN;
    } else {
        codec_cell_buf_t cb;
        codec_point_t p = dp->value;
        p.ts_ms = dp->ts * 1000;
        rc = codec_point_encode(&p, (uint32_t)base, 0, &cb, eb);
        if (rc) goto out;
        memcpy(qual, cb.qual, cb.qual_len);
        memcpy(val, cb.val, cb.val_len);
        ql = cb.qual_len;
        vl = cb.val_len;
    }
    size_t pl = part_of(&l, table, rk, part);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(part, pl),
                     {oct_slice(rk, (size_t)kl), oct_slice_str(RU_FAMILY), oct_slice(qual, ql),
                      oct_slice(val, vl)}};
    /* a client's sum or count no longer matches the TSD's sum of squares of
     * that interval: it goes in the same write (docs/format/rollup.md s. 5) */
    uint8_t sq[CODEC_ROLLUP_QUAL_LEN], sv[8];
    store_op_t ops[2] = {op, {0}};
    size_t nops = 1;
    if (iv &&
        (agg_id == query_rollup_agg_id(c, "sum", 3) ||
         agg_id == query_rollup_agg_id(c, "count", 5)) &&
        !codec_rollup_encode_sumsq((uint32_t)((dp->ts - base) / iv->interval_s), 0, sq, sv))
        ops[nops++] = (store_op_t){STORE_OP_DELETE_CELL,
                                   op.part,
                                   {op.cell.row, oct_slice_str(CODEC_ROLLUP_OWN_FAMILY),
                                    oct_slice(sq, sizeof sq), oct_slice(NULL, 0)}};
    if (iv) /* one value per slot, whatever its width (docs/format/rollup.md) */
        rc = tw_rollup_write(db, ops, nops, eb);
    else
        rc = store_write(tsdb_store(db), STORE_TABLE_ROLLUP, &op, 1, 0, eb);
out:
    if (tags != stack) free(tags);
    oct_strbuf_free(&tt);
    return rc;
}

int tsdb_rollup_sync(tsdb_t *db, oct_errbuf_t *eb)
{
    return store_sync(tsdb_store(db), eb);
}

/* ---- reading ---------------------------------------------------------------- */

static int cmp_pt(const void *a, const void *b)
{
    const codec_point_t *x = a, *y = b;
    return (x->ts_ms > y->ts_ms) - (x->ts_ms < y->ts_ms);
}

int tsdb_rollup_read(tsdb_t *db, const char *table, const query_rollup_interval_t *iv,
                     const int *ids, size_t n_ids, const uint8_t *tsuid, size_t len, int64_t lo_ms,
                     int64_t hi_ms, codec_point_t **out, size_t *n, oct_errbuf_t *eb)
{
    size_t cap[TSDB_ROLLUP_MAX_IDS] = {0};
    if (n_ids > TSDB_ROLLUP_MAX_IDS) n_ids = TSDB_ROLLUP_MAX_IDS;
    for (size_t k = 0; k < n_ids; k++) {
        out[k] = NULL;
        n[k] = 0;
    }
    if (strlen(table) > RU_MAX_NAME || n_ids == 0) return 0;
    if (tsdb_retention_enabled(db)) {
        int64_t cut = tsdb_retention_cut_ms(db, table, 0, oct_clock_wall_ms());
        if (lo_ms < cut) lo_ms = cut;
        if (hi_ms < lo_ms) return 0;
    }
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    size_t boff = (size_t)l.salt_w + l.metric_w;
    int64_t lo_s = lo_ms >= 0 ? lo_ms / 1000 : 0, hi_s = hi_ms / 1000;
    int64_t b = iv ? query_rollup_base_time(iv, lo_s) : codec_rowkey_base_time(lo_s);
    size_t klen = codec_rowkey_len(&l, 0) + (len - l.metric_w);
    size_t plen = 1 + strlen(table) + codec_rowkey_partition_prefix_len(&l);
    /* room for the rows this read needs (a day of 1d rows is 1, not 512) */
    size_t rows = 0;
    for (int64_t x = b; rows < RU_BATCH && x <= hi_s && x <= (int64_t)UINT32_MAX;
         x = iv ? query_rollup_next_base(iv, x) : x + 3600)
        rows++;
    uint8_t *keys = xmalloc((rows ? rows : 1) * (klen + plen));
    store_key_t sk[RU_BATCH];
    store_result_t res = STORE_RESULT_INIT;
    int rc = 0;
    /* octsdb's own column is another family of the same rows: read all of
     * them then, else family t only */
    int own = 0;
    for (size_t k = 0; k < n_ids; k++)
        own |= ids[k] == TSDB_ROLLUP_ID_SUMSQ;
    oct_slice_t fam = own ? oct_slice(NULL, 0) : oct_slice_str(RU_FAMILY);
    while (rc == 0 && b <= hi_s && b <= (int64_t)UINT32_MAX) {
        size_t nk = 0;
        for (; nk < rows && b <= hi_s && b <= (int64_t)UINT32_MAX;
             nk++, b = iv ? query_rollup_next_base(iv, b) : b + 3600) {
            uint8_t *k = keys + nk * (klen + plen), *p = k + klen;
            int kl = codec_rowkey_from_tsuid(&l, tsuid, len, b, k, klen, eb);
            if (kl < 0) {
                rc = kl;
                break;
            }
            sk[nk].row = oct_slice(k, (size_t)kl);
            sk[nk].part = oct_slice(p, part_of(&l, table, k, p));
        }
        store_result_reset(&res);
        if (rc == 0 && nk)
            rc = store_multi_get(tsdb_store(db), STORE_TABLE_ROLLUP, sk, nk, fam, &res, eb);
        if (rc > 0) rc = 0;
        for (size_t i = 0; rc == 0 && i < res.n; i++) {
            const store_cell_t *ce = &res.cells[i];
            if (ce->row.len < boff + 4) continue;
            int64_t base = oct_get_be32(ce->row.ptr + boff);
            codec_point_t p;
            size_t k = 0;
            if (iv) {
                unsigned id;
                uint32_t idx;
                if (ce->qualifier.len != CODEC_ROLLUP_QUAL_LEN) continue; /* not a rollup cell */
                int q0 = ce->qualifier.ptr[0] & 0x7F;
                if (own && !oct_slice_eq(ce->family, oct_slice_str(RU_FAMILY))) {
                    if (!oct_slice_eq(ce->family, oct_slice_str(CODEC_ROLLUP_OWN_FAMILY)) ||
                        ce->qualifier.ptr[0] != CODEC_ROLLUP_SUMSQ)
                        continue; /* a column code this reader does not know */
                    q0 = TSDB_ROLLUP_ID_SUMSQ;
                }
                while (k < n_ids && q0 != ids[k])
                    k++;
                if (k == n_ids) continue;
                if (codec_rollup_decode(ce->qualifier.ptr, ce->qualifier.len, ce->value.ptr,
                                        ce->value.len, &id, &idx, &p)) {
                    rc = oct_err(eb, OCT_ECORRUPT, "corrupt rollup cell in table %s", table);
                    break;
                }
                p.ts_ms = (base + (int64_t)idx * iv->interval_s) * 1000;
            } else {
                codec_dp_t d;
                if (ce->qualifier.len != 2 && ce->qualifier.len != 4) continue;
                if (codec_cell_decode_single(ce->qualifier.ptr, ce->qualifier.len, ce->value.ptr,
                                             ce->value.len, &d, eb)) {
                    rc = OCT_ECORRUPT;
                    break;
                }
                p.ts_ms = base * 1000 + d.offset_ms;
                p.is_float = d.is_float;
                if (d.is_float)
                    p.val.f = d.val.f;
                else
                    p.val.i = d.val.i;
            }
            if (p.ts_ms < lo_ms || p.ts_ms > hi_ms) continue;
            if (n[k] == cap[k]) {
                cap[k] = cap[k] ? 2 * cap[k] : 64;
                out[k] = xrealloc(out[k], cap[k] * sizeof *out[k]);
            }
            out[k][n[k]++] = p;
        }
    }
    free(keys);
    store_result_free(&res);
    for (size_t k = 0; k < n_ids; k++) {
        if (rc) {
            free(out[k]);
            out[k] = NULL;
            n[k] = 0;
        } else if (!iv && n[k]) {
            /* second and millisecond qualifiers sort apart: restore time order */
            qsort(out[k], n[k], sizeof *out[k], cmp_pt);
        }
    }
    return rc;
}

/* ---- rollups made by the TSD (tsd.rollups.auto) --------------------------- */

int64_t tsdb_rollup_pending_s(tsdb_t *db, const uint8_t *tsuid, size_t len)
{
    const query_rollup_config_t *c = tsdb_rollups(db);
    tsdb_writer_t *w = tsdb__writer(db);
    int64_t first = INT64_MAX;
    if (!c || !c->auto_rollup || !w) return first;
    /* an hour that has not closed (ended a grace ago) is never rolled up:
     * its blocks may be in the store with no bucket left (after a restart) */
    first = codec_rowkey_base_time((oct_clock_wall_ms() - w->grace_ms) / 1000);
    tw_series_t *s = tw_map_find_tsuid(&w->by_tsuid, tsuid, len);
    if (!s) return first;
    /* a bucket leaves the head only after its final flush wrote its rollups */
    tw_lock(&s->mu);
    for (uint32_t i = 0; i < s->nb; i++)
        if (s->b[i].base_s < first) first = s->b[i].base_s;
    tw_unlock(&s->mu);
    return first;
}

/* One interval's aggregates, as values 2.4's readers expect: integers
 * while every input is one (and the sum does not overflow), else doubles. */
typedef struct {
    int64_t isum;
    double dsum;
    int sum_is_int;
    uint64_t count;
    double sumsq;
    codec_point_t min, max;
} ru_acc_t;

static double pv(const codec_point_t *p)
{
    return p->is_float ? p->val.f : (double)p->val.i;
}

static void acc_add(ru_acc_t *a, const codec_point_t *p)
{
    if (a->count == 0) {
        a->sum_is_int = 1;
        a->isum = 0;
        a->dsum = 0;
        a->min = a->max = *p;
    } else {
        if (pv(p) < pv(&a->min)) a->min = *p;
        if (pv(p) > pv(&a->max)) a->max = *p;
    }
    a->count++;
    a->dsum += pv(p);
    a->sumsq += pv(p) * pv(p);
    if (a->sum_is_int && (p->is_float || __builtin_add_overflow(a->isum, p->val.i, &a->isum)))
        a->sum_is_int = 0;
}

store_op_t tw_rollup_cell_put(const tw_rollup_cell_t *c)
{
    return (store_op_t){STORE_OP_PUT,
                        oct_slice(c->part, c->plen),
                        {oct_slice(c->row, c->rlen), oct_slice_str(c->family),
                         oct_slice(c->qual, CODEC_ROLLUP_QUAL_LEN), oct_slice(c->val, c->vlen)}};
}

int tw_rollup_cell(const codec_rowkey_layout_t *l, const uint8_t *tsuid, size_t tsuid_len,
                   const query_rollup_interval_t *iv, int id, int64_t start_s,
                   const codec_point_t *v, tw_rollup_cell_t *c, oct_errbuf_t *eb)
{
    int64_t base = query_rollup_base_time(iv, start_s);
    int kl = codec_rowkey_from_tsuid(l, tsuid, tsuid_len, base, c->row, sizeof c->row, eb);
    if (kl < 0) return kl;
    c->rlen = (size_t)kl;
    c->plen = part_of(l, iv->table, c->row, c->part);
    c->family = RU_FAMILY;
    if (id == TSDB_ROLLUP_ID_SUMSQ) {
        c->family = CODEC_ROLLUP_OWN_FAMILY;
        c->vlen = 8;
        if (!codec_rollup_encode_sumsq((uint32_t)((start_s - base) / iv->interval_s),
                                       v->is_float ? v->val.f : (double)v->val.i, c->qual, c->val))
            return 0;
        return oct_err(eb, OCT_ERANGE, "rollup index out of range for interval %s", iv->interval);
    }
    if (codec_rollup_encode((unsigned)id, (uint32_t)((start_s - base) / iv->interval_s), v, c->qual,
                            c->val, &c->vlen))
        return oct_err(eb, OCT_ERANGE, "rollup index out of range for interval %s", iv->interval);
    return 0;
}

int tw_rollup_auto(tsdb_t *db, const tw_series_t *s, int64_t base_s, const codec_point_t *pts,
                   size_t n, tw_rollup_ops_t *out, oct_errbuf_t *eb)
{
    return tw_rollup_auto_tsuid(db, s->tsuid, s->tsuid_len, base_s, pts, n, out, eb);
}

int tw_rollup_auto_tsuid(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t base_s,
                         const codec_point_t *pts, size_t n, tw_rollup_ops_t *out, oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    const query_rollup_config_t *c = tsdb_rollups(db);
    if (!c || !c->auto_rollup || n == 0) return 0;
    /* aggregators the config gives ids: sum, count, min, max; and octsdb's
     * sum of squares (docs/format/rollup.md section 5), always */
    static const char *const names[4] = {"sum", "count", "min", "max"};
    int ids[5];
    for (int a = 0; a < 4; a++)
        ids[a] = query_rollup_agg_id(c, names[a], strlen(names[a]));
    ids[4] = TSDB_ROLLUP_ID_SUMSQ;
    size_t cap = 0;
    for (size_t i = 0; i < c->n_iv; i++)
        if (query_rollup_is_auto(c, &c->iv[i]))
            cap += 5 * (n < (size_t)(3600 / c->iv[i].interval_s)
                            ? n
                            : (size_t)(3600 / c->iv[i].interval_s));
    tw_rollup_cell_t *cells = xmalloc((cap ? cap : 1) * sizeof *cells);
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    size_t nc = 0;
    int rc = 0;
    for (size_t i = 0; i < c->n_iv && !rc; i++) {
        const query_rollup_interval_t *iv = &c->iv[i];
        if (!query_rollup_is_auto(c, iv)) continue;
        for (size_t p = 0; p < n && !rc;) {
            int64_t ts = pts[p].ts_ms >= 0 ? pts[p].ts_ms / 1000 : (pts[p].ts_ms - 999) / 1000;
            int64_t start = base_s + (ts - base_s) / iv->interval_s * iv->interval_s;
            ru_acc_t acc = {0};
            for (; p < n; p++) {
                int64_t t = pts[p].ts_ms >= 0 ? pts[p].ts_ms / 1000 : (pts[p].ts_ms - 999) / 1000;
                if (t >= start + iv->interval_s) break;
                acc_add(&acc, &pts[p]);
            }
            codec_point_t v[5];
            v[0].is_float = (uint8_t)!acc.sum_is_int;
            if (acc.sum_is_int)
                v[0].val.i = acc.isum;
            else
                v[0].val.f = acc.dsum;
            v[1].is_float = 0;
            v[1].val.i = (int64_t)acc.count;
            v[2] = acc.min;
            v[3] = acc.max;
            v[4].is_float = 1;
            v[4].val.f = acc.sumsq;
            for (int a = 0; a < 5 && !rc; a++)
                if (ids[a] >= 0)
                    rc = tw_rollup_cell(&l, tsuid, tsuid_len, iv, ids[a], start, &v[a],
                                        &cells[nc++], eb);
        }
    }
    if (rc) {
        free(cells);
        return rc;
    }
    out->cells = cells;
    out->ops = xmalloc((nc ? nc : 1) * sizeof *out->ops);
    for (size_t i = 0; i < nc; i++) {
        out->ops[i] = tw_rollup_cell_put(&cells[i]);
    }
    out->n = nc;
    return 0;
}

void tw_rollup_ops_free(tw_rollup_ops_t *o)
{
    free(o->ops);
    free(o->cells);
    memset(o, 0, sizeof *o);
}

/* ---- one value per slot ------------------------------------------------------ */

/* Orders ops by partition, row, then the slot (aggregator id and index, the
 * flags left out) of their qualifier. */
static int slot_cmp(const store_op_t *x, const oct_slice_t *row, const oct_slice_t *part,
                    const uint8_t *q)
{
    int c = oct_slice_cmp(x->part, *part);
    if (c) return c;
    if ((c = oct_slice_cmp(x->cell.row, *row))) return c;
    if (!q) return 0;
    unsigned a = x->cell.qualifier.ptr[0], b = q[0];
    if (a != b) return a < b ? -1 : 1;
    unsigned ia = oct_get_be16(x->cell.qualifier.ptr + 1) >> 4, ib = oct_get_be16(q + 1) >> 4;
    return (ia > ib) - (ia < ib);
}

static int key_cmp(const void *a, const void *b)
{
    const store_key_t *x = a, *y = b;
    int c = oct_slice_cmp(x->row, y->row);
    return c ? c : oct_slice_cmp(x->part, y->part);
}

static int op_cmp(const void *a, const void *b)
{
    const store_op_t *x = a, *y = b;
    return slot_cmp(x, &y->cell.row, &y->part, y->cell.qualifier.ptr);
}

/* The puts followed by the deletes of the stale widths (tw_rollup_write). */
typedef struct {
    store_op_t *ops;
    size_t n;
    uint8_t *quals;    /* the deletes' qualifiers */
    store_op_t *parts; /* the put each delete belongs to */
} tw_rollup_stale_t;

static void tw_rollup_stale_free(tw_rollup_stale_t *s)
{
    free(s->ops);
    free(s->quals);
    free(s->parts);
    memset(s, 0, sizeof *s);
}

/* Records qualifier q (a stored width of the slot of put op) as a delete. */
static void stale_add(tw_rollup_stale_t *out, size_t *nd, size_t *capd, const uint8_t *q,
                      const store_op_t *op)
{
    if (*nd == *capd) {
        *capd = *capd ? 2 * *capd : 16;
        out->quals = xrealloc(out->quals, *capd * CODEC_ROLLUP_QUAL_LEN);
        out->parts = xrealloc(out->parts, *capd * sizeof *out->parts);
    }
    memcpy(out->quals + *nd * CODEC_ROLLUP_QUAL_LEN, q, CODEC_ROLLUP_QUAL_LEN);
    out->parts[(*nd)++] = *op;
}

/* The value flags a rollup cell may carry (codec_rollup_decode accepts
 * these and no others): integers of 1, 2, 4, 8 bytes, floats of 4, 8. */
static const uint8_t stale_flags[] = {
    0x0, 0x1, 0x3, 0x7, CODEC_FLAG_FLOAT | 0x3, CODEC_FLAG_FLOAT | 0x7};

/* Point reads of the other widths of op's slot; each found is a delete. */
static int stale_probe(tsdb_t *db, const store_op_t *op, store_result_t *res,
                       tw_rollup_stale_t *out, size_t *nd, size_t *capd, oct_errbuf_t *eb)
{
    const uint8_t *q = op->cell.qualifier.ptr;
    for (size_t f = 0; f < sizeof stale_flags; f++) {
        uint8_t o[CODEC_ROLLUP_QUAL_LEN] = {q[0], q[1], (uint8_t)((q[2] & 0xF0) | stale_flags[f])};
        if (o[2] == q[2]) continue; /* the same width: the put replaces it */
        store_result_reset(res);
        int rc = store_get_cell(tsdb_store(db), STORE_TABLE_ROLLUP, op->part, op->cell.row,
                                oct_slice_str(RU_FAMILY), oct_slice(o, sizeof o), res, eb);
        if (rc < 0) return rc;
        if (rc > 0) stale_add(out, nd, capd, o, op);
    }
    return 0;
}

static int tw_rollup_stale(tsdb_t *db, const store_op_t *puts, size_t n, tw_rollup_stale_t *out,
                           oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return 0;
    /* family t only: octsdb's own cells have one width (docs/format/rollup.md) */
    store_op_t *srt = xmalloc(n * sizeof *srt);
    size_t nt = 0;
    for (size_t i = 0; i < n; i++)
        if (oct_slice_eq(puts[i].cell.family, oct_slice_str(RU_FAMILY))) srt[nt++] = puts[i];
    size_t n_all = n;
    n = nt;
    qsort(srt, n, sizeof *srt, op_cmp);
    store_key_t *keys = xmalloc((n ? n : 1) * sizeof *keys);
    store_result_t res = STORE_RESULT_INIT;
    size_t nk = 0, nd = 0, capd = 0;
    int rc = 0;
    /* A row with few puts (a long period's cells in a row of a year, a
     * client's one cell) is probed width by width: point reads of a local
     * store cost the same whatever the row holds, where reading the row
     * grows with it (a year of 1d cells). A row with many puts, and every
     * row of a shared store (a point read is a round trip there), is read
     * whole. */
    const int probe = !tsdb__writer(db) || !tsdb__writer(db)->shared;
    for (size_t i = 0, e; i < n && rc == 0; i = e) {
        for (e = i + 1; e < n && !slot_cmp(&srt[e - 1], &srt[e].cell.row, &srt[e].part, NULL); e++)
            ;
        if (probe && e - i < RU_PROBE_MAX) {
            for (size_t k = i; k < e && rc == 0; k++)
                if (k == i || slot_cmp(&srt[k - 1], &srt[k].cell.row, &srt[k].part,
                                       srt[k].cell.qualifier.ptr))
                    rc = stale_probe(db, &srt[k], &res, out, &nd, &capd, eb);
        } else {
            keys[nk++] = (store_key_t){.part = srt[i].part, .row = srt[i].cell.row};
        }
    }
    /* by row, then partition: a batch holds each row once (the same row key
     * may be in two tables), so a result cell's row names its key */
    qsort(keys, nk, sizeof *keys, key_cmp);
    for (size_t k0 = 0, kn = 0; k0 < nk && rc == 0; k0 += kn) {
        for (kn = 1; k0 + kn < nk && kn < RU_BATCH; kn++)
            if (oct_slice_eq(keys[k0 + kn].row, keys[k0 + kn - 1].row)) break;
        store_result_reset(&res);
        rc = store_multi_get(tsdb_store(db), STORE_TABLE_ROLLUP, keys + k0, kn,
                             oct_slice_str(RU_FAMILY), &res, eb);
        if (rc > 0) rc = 0;
        size_t kk = k0;
        for (size_t i = 0; rc == 0 && i < res.n; i++) {
            const store_cell_t *ce = &res.cells[i];
            while (kk < k0 + kn && !oct_slice_eq(keys[kk].row, ce->row))
                kk++;
            if (kk == k0 + kn) break; /* not in key order: cannot be */
            if (ce->qualifier.len != CODEC_ROLLUP_QUAL_LEN) continue;
            oct_slice_t part = keys[kk].part;
            size_t lo = 0, hi = n;
            while (lo < hi) { /* first op of the slot */
                size_t mid = (lo + hi) / 2;
                if (slot_cmp(&srt[mid], &ce->row, &part, ce->qualifier.ptr) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || slot_cmp(&srt[lo], &ce->row, &part, ce->qualifier.ptr)) continue;
            if (!memcmp(srt[lo].cell.qualifier.ptr, ce->qualifier.ptr, CODEC_ROLLUP_QUAL_LEN))
                continue; /* the same width: the put replaces it */
            stale_add(out, &nd, &capd, ce->qualifier.ptr, &srt[lo]);
        }
    }
    store_result_free(&res);
    free(keys);
    free(srt);
    if (rc) {
        tw_rollup_stale_free(out);
        return rc;
    }
    /* the puts, then the deletes (a later op on the same cell wins: none is) */
    out->ops = xmalloc((n_all + nd) * sizeof *out->ops);
    memcpy(out->ops, puts, n_all * sizeof *out->ops);
    for (size_t i = 0; i < nd; i++)
        out->ops[n_all + i] =
            (store_op_t){STORE_OP_DELETE_CELL,
                         out->parts[i].part,
                         {out->parts[i].cell.row, out->parts[i].cell.family,
                          oct_slice(out->quals + i * CODEC_ROLLUP_QUAL_LEN, CODEC_ROLLUP_QUAL_LEN),
                          oct_slice(NULL, 0)}};
    out->n = n_all + nd;
    return 0;
}

/* Orders ops by cell (partition, row, qualifier), then by their place in the
 * batch: a later op on the same cell stays later. */
typedef struct {
    const store_op_t *op;
    size_t at;
} ru_sorted_t;

static int sorted_cmp(const void *a, const void *b)
{
    const ru_sorted_t *x = a, *y = b;
    int c = oct_slice_cmp(x->op->part, y->op->part);
    if (!c) c = oct_slice_cmp(x->op->cell.row, y->op->cell.row);
    if (!c) c = oct_slice_cmp(x->op->cell.qualifier, y->op->cell.qualifier);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The store write of ops in key order: RocksDB inserts a batch in sorted
 * order at a fraction of the cost of the same cells scattered (its memtable
 * resumes each insert where the previous one ended). */
static int ru_write_sorted(tsdb_t *db, const store_op_t *ops, size_t n, oct_errbuf_t *eb)
{
    ru_sorted_t *ix = xmalloc(n * sizeof *ix);
    store_op_t *srt = xmalloc(n * sizeof *srt);
    for (size_t i = 0; i < n; i++)
        ix[i] = (ru_sorted_t){&ops[i], i};
    qsort(ix, n, sizeof *ix, sorted_cmp);
    for (size_t i = 0; i < n; i++)
        srt[i] = *ix[i].op;
    int rc = store_write(tsdb_store(db), STORE_TABLE_ROLLUP, srt, n, 0, eb);
    free(srt);
    free(ix);
    return rc;
}

int tw_rollup_write(tsdb_t *db, const store_op_t *puts, size_t n, oct_errbuf_t *eb)
{
    tw_rollup_stale_t one;
    int rc = tw_rollup_stale(db, puts, n, &one, eb);
    if (!rc && one.n) rc = ru_write_sorted(db, one.ops, one.n, eb);
    tw_rollup_stale_free(&one);
    return rc;
}
