/* select.c -- series selection over the series index, and the last point
 * of a series (see select.h). */
#include "tsdb/select.h"

#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "codec/uid_bytes.h"
#include "common/xmalloc.h"
#include "tsdb/retention.h"
#include "tsdb/tsdb_int.h"

typedef struct {
    unsigned mw, kw, vw;
    const tsdb_tag_match_t *conds;
    size_t n_conds;
    const tsdb_tag_match_t *src; /* the condition the index already answered */
    int exact;
    /* streaming (one ordered source): forward to fn, up to limit */
    tsdb_series_fn fn;
    void *ctx;
    size_t limit, sent;
    /* union of several sources: collected, sorted and deduplicated later */
    int collect;
    uint8_t *buf;
    size_t used, bcap;
    size_t *off;
    size_t n, cap;
} sel_t;

static int sel_match(const sel_t *s, const uint8_t *t, size_t len)
{
    size_t pw = s->kw + s->vw, np = (len - s->mw) / pw;
    if (s->exact && np != s->n_conds) return 0;
    for (size_t ci = 0; ci < s->n_conds; ci++) {
        const tsdb_tag_match_t *cd = &s->conds[ci];
        if (cd == s->src) continue; /* every series the index names meets it */
        int ok = 0;
        for (size_t i = 0; i < np && !ok; i++) {
            const uint8_t *p = t + s->mw + i * pw;
            if (cd->tagk && codec_uid_decode(p, s->kw) != cd->tagk) continue;
            if (!cd->n_tagv) {
                ok = 1;
                break;
            }
            uint64_t v = codec_uid_decode(p + s->kw, s->vw);
            for (size_t j = 0; j < cd->n_tagv && !ok; j++)
                ok = cd->tagv[j] == v;
        }
        if (!ok) return 0;
    }
    return 1;
}

static int sel_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    sel_t *s = ctx;
    if (len < s->mw || (len - s->mw) % (s->kw + s->vw)) return 0;
    if (!sel_match(s, tsuid, len)) return 0;
    if (!s->collect) {
        int rc = s->fn(s->ctx, tsuid, len);
        if (rc) return rc;
        return s->limit && ++s->sent >= s->limit ? -1 : 0;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->off = xrealloc(s->off, s->cap * sizeof *s->off);
    }
    if (s->used + 1 + len > s->bcap) {
        s->bcap = s->bcap ? 2 * s->bcap : 4096;
        if (s->bcap < s->used + 1 + len) s->bcap = s->used + 1 + len;
        s->buf = xrealloc(s->buf, s->bcap);
    }
    s->off[s->n++] = s->used;
    s->buf[s->used] = (uint8_t)len; /* a TSUID is at most 255 bytes */
    memcpy(s->buf + s->used + 1, tsuid, len);
    s->used += 1 + len;
    return 0;
}

static int sel_cmp(const void *a, const void *b, void *arg)
{
    const uint8_t *buf = arg, *x = buf + *(const size_t *)a, *y = buf + *(const size_t *)b;
    size_t n = x[0] < y[0] ? x[0] : y[0];
    int c = memcmp(x + 1, y + 1, n);
    return c ? c : (x[0] > y[0]) - (x[0] < y[0]);
}

int tsdb_select(tsdb_t *db, uint64_t metric, const tsdb_tag_match_t *conds, size_t n_conds,
                tsdb_select_mode_t mode, size_t limit, tsdb_series_fn fn, void *ctx)
{
    const tsdb_layout_t *l = tsdb_layout(db);
    sel_t s = {.mw = l->uid_width[CODEC_UID_METRIC],
               .kw = l->uid_width[CODEC_UID_TAGK],
               .vw = l->uid_width[CODEC_UID_TAGV],
               .conds = conds,
               .n_conds = n_conds,
               .exact = mode == TSDB_SELECT_EXACT,
               .fn = fn,
               .ctx = ctx,
               .limit = limit};
    /* The index source: a key with the fewest listed values, else a key with
     * any value, else every series of the metric. */
    const tsdb_tag_match_t *src = NULL;
    for (size_t i = 0; i < n_conds; i++) {
        const tsdb_tag_match_t *cd = &conds[i];
        if (!cd->tagk) continue;
        if (!src || (cd->n_tagv && (!src->n_tagv || cd->n_tagv < src->n_tagv))) src = cd;
    }
    s.src = src;
    if (!src || src->n_tagv <= 1) {
        int rc = tsdb_series_find(db, metric, src ? src->tagk : 0,
                                  src && src->n_tagv ? src->tagv[0] : 0, sel_cb, &s);
        return rc < 0 ? 0 : rc; /* -1: the limit was reached */
    }
    /* A union of postings lists: each in TSUID order, but not together, and
     * a series may carry several of the values (then it comes once each). */
    s.collect = 1;
    for (size_t i = 0; i < src->n_tagv; i++)
        tsdb_series_find(db, metric, src->tagk, src->tagv[i], sel_cb, &s);
    if (s.n > 1) qsort_r(s.off, s.n, sizeof *s.off, sel_cmp, s.buf);
    int rc = 0;
    size_t sent = 0;
    for (size_t i = 0; i < s.n && !rc && (!limit || sent < limit); i++) {
        if (i && !sel_cmp(&s.off[i - 1], &s.off[i], s.buf)) continue;
        const uint8_t *t = s.buf + s.off[i];
        rc = fn(ctx, t + 1, t[0]);
        sent++;
    }
    free(s.buf);
    free(s.off);
    return rc;
}

int tsdb_select_names(tsdb_t *db, const char *metric, const char *const *tagk,
                      const char *const *tagv, size_t n_tags, tsdb_select_mode_t mode,
                      tsdb_series_fn fn, void *ctx, oct_errbuf_t *eb)
{
    uid_registry_t *u = tsdb_uids(db);
    uint64_t mid;
    int rc = uid_get_id(u, CODEC_UID_METRIC, (const uint8_t *)metric, strlen(metric), &mid, eb);
    if (rc) return rc;
    uint64_t *vs = xmalloc((n_tags ? n_tags : 1) * sizeof *vs);
    tsdb_tag_match_t *cs = xmalloc((n_tags ? n_tags : 1) * sizeof *cs);
    for (size_t i = 0; i < n_tags && !rc; i++) {
        rc = uid_get_id(u, CODEC_UID_TAGK, (const uint8_t *)tagk[i], strlen(tagk[i]), &cs[i].tagk,
                        eb);
        if (!rc)
            rc = uid_get_id(u, CODEC_UID_TAGV, (const uint8_t *)tagv[i], strlen(tagv[i]), &vs[i],
                            eb);
        cs[i].tagv = &vs[i];
        cs[i].n_tagv = 1;
    }
    if (!rc) rc = tsdb_select(db, mid, cs, n_tags, mode, 0, fn, ctx);
    free(cs);
    free(vs);
    return rc;
}

int tsdb_last_point(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t now_ms,
                    int64_t back_scan_h, codec_point_t *out, oct_errbuf_t *eb)
{
    int64_t hour = codec_rowkey_base_time(now_ms / 1000);
    int64_t hi = (hour + CODEC_ROWKEY_SPAN_S) * 1000 - 1; /* end of the current hour */
    int64_t floor_s = back_scan_h > 0 ? hour - back_scan_h * CODEC_ROWKEY_SPAN_S : 0;
    if (floor_s < 0) floor_s = 0;
    codec_rowkey_layout_t rk = tsdb__rowkey_layout(db);
    if (tsdb_retention_enabled(db) && tsuid_len >= rk.metric_w) {
        /* the reads stop at the cut anyway: no need to look further back */
        int64_t cut = tsdb_retention_cut_ms(db, NULL, oct_get_be_n(tsuid, rk.metric_w), now_ms);
        if (floor_s < cut / 1000) floor_s = cut / 1000;
    }
    int64_t span_h = 1;
    int64_t lo_s = hour;
    for (;;) {
        if (lo_s < floor_s) lo_s = floor_s;
        codec_point_t *pts = NULL;
        size_t n = 0;
        int rc = tsdb_read_series(db, tsuid, tsuid_len, lo_s * 1000, hi, &pts, &n, eb);
        if (rc < 0) return rc;
        if (n) {
            *out = pts[n - 1];
            free(pts);
            return 1;
        }
        free(pts);
        if (lo_s <= floor_s) return 0;
        hi = lo_s * 1000 - 1;
        lo_s -= span_h * CODEC_ROWKEY_SPAN_S;
        if (span_h < (1 << 20)) span_h *= 2;
    }
}
