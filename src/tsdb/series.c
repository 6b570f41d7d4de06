/* series.c -- the write path's series: creating one from a put (OpenTSDB's
 * checks in OpenTSDB's order, tags normalised), resolving and assigning its
 * UIDs in one batch per put chunk, persisting it (tsdb-meta, row = TSUID,
 * name:octsdb_series) before any of its points is acknowledged, and
 * loading the persisted series at open or a series named by the WAL (by
 * TSUID, names from the UID table). The maps it registers series in are
 * write.c's. */
#include <stdlib.h>
#include <string.h>

#include "codec/name.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "tsdb/series.h"

static int kv_cmp(const void *a, const void *b)
{
    const tw_kv_t *x = a, *y = b;
    int c = oct_slice_cmp(x->k, y->k);
    return c ? c : oct_slice_cmp(x->v, y->v);
}

static void tags_text(oct_strbuf_t *sb, const tw_kv_t *kv, size_t n)
{
    oct_strbuf_puts(sb, "{");
    for (size_t i = 0; i < n; i++)
        oct_strbuf_printf(sb, "%s%.*s=%.*s", i ? ", " : "", (int)kv[i].k.len,
                          (const char *)kv[i].k.ptr, (int)kv[i].v.len, (const char *)kv[i].v.ptr);
    oct_strbuf_puts(sb, "}");
}

static int tag_uid_cmp(const void *a, const void *b)
{
    const codec_tag_uid_t *x = a, *y = b;
    return (x->tagk > y->tagk) - (x->tagk < y->tagk);
}

/* Allocates a series for metric/tags (UIDs; tags sorted by tagk) and, if
 * kv != NULL, the text key from kv[0..n) (sorted by key). */
static tw_series_t *series_alloc(tsdb_writer_t *w, oct_slice_t metric, uint64_t muid,
                                 const codec_tag_uid_t *tags, const tw_kv_t *kv, size_t n)
{
    /* Two allocations: the struct with its TSUID, which lives as long as
     * the series; and the tags as UIDs, the text key and its pairs, needed
     * only until the series is registered (series_register indexes the tags,
     * copies the text into the text map's key and frees them all: puts match
     * the map's copy, and the TSUID holds the tags from then on). */
    size_t tsuid_len =
        w->uid_w[CODEC_UID_METRIC] + n * (w->uid_w[CODEC_UID_TAGK] + w->uid_w[CODEC_UID_TAGV]);
    size_t tlen = 0;
    if (kv) {
        tlen = metric.len + 1;
        for (size_t i = 0; i < n; i++)
            tlen += kv[i].k.len + kv[i].v.len;
    }
    size_t tags_sz = (n ? n : 1) * sizeof(codec_tag_uid_t);
    size_t pairs_sz = kv ? (n ? n : 1) * sizeof(tw_pair_t) : 0;
    tw_series_t *s = xcalloc(1, sizeof *s + tsuid_len);
    s->metric = muid;
    s->n_tags = (uint16_t)n;
    char *tx = xmalloc(tags_sz + pairs_sz + tlen);
    s->tags = (codec_tag_uid_t *)(void *)tx;
    memcpy(s->tags, tags, n * sizeof *tags);
    size_t tl = 0;
    oct_put_be_n(s->tsuid, muid, w->uid_w[CODEC_UID_METRIC]);
    tl += w->uid_w[CODEC_UID_METRIC];
    for (size_t i = 0; i < n; i++) {
        oct_put_be_n(s->tsuid + tl, tags[i].tagk, w->uid_w[CODEC_UID_TAGK]);
        tl += w->uid_w[CODEC_UID_TAGK];
        oct_put_be_n(s->tsuid + tl, tags[i].tagv, w->uid_w[CODEC_UID_TAGV]);
        tl += w->uid_w[CODEC_UID_TAGV];
    }
    s->tsuid_len = (uint8_t)tl;
    s->tsuid_hash = tw_hash_bytes(s->tsuid, tl, 0x452821E638D01377ull);
    if (kv) {
        s->pairs = (tw_pair_t *)(void *)(tx + tags_sz);
        s->text = tx + tags_sz + pairs_sz;
        memcpy(s->text, metric.ptr, metric.len);
        s->mlen = (uint32_t)metric.len;
        size_t off = metric.len;
        for (size_t i = 0; i < n; i++) {
            s->pairs[i].koff = (uint32_t)off;
            s->pairs[i].klen = (uint32_t)kv[i].k.len;
            memcpy(s->text + off, kv[i].k.ptr, kv[i].k.len);
            off += kv[i].k.len;
            s->pairs[i].voff = (uint32_t)off;
            s->pairs[i].vlen = (uint32_t)kv[i].v.len;
            memcpy(s->text + off, kv[i].v.ptr, kv[i].v.len);
            off += kv[i].v.len;
        }
    }
    return s;
}

void tw_series_free(tw_series_t *s)
{
    for (uint32_t i = 0; i < s->nb; i++) {
        free(s->b[i].cur);
        free(s->b[i].fl);
        free(s->b[i].sent);
    }
    free(s->b);
    free(s->tags); /* and the pairs and text after them; NULL once registered */
    /* the TSUID is part of s's allocation */
    free(s);
}

/* Registers a new series everywhere (caller holds create_mu); its text key
 * only if with_text (no rename since its names were read). */
static void series_register(tsdb_writer_t *w, tw_series_t *s, int with_text)
{
    size_t i = atomic_load_explicit(&w->n_series, memory_order_relaxed);
    if (!w->list[i / TW_LIST_CHUNK]) {
        w->active[i / TW_LIST_CHUNK] = xcalloc(TW_ACTIVE_WORDS, sizeof(uint64_t));
        w->list[i / TW_LIST_CHUNK] = xcalloc(TW_LIST_CHUNK, sizeof(tw_series_t *));
    }
    w->list[i / TW_LIST_CHUNK][i % TW_LIST_CHUNK] = s;
    s->id = (uint32_t)i;
    atomic_store_explicit(&w->n_series, i + 1, memory_order_release);
    tw_map_insert(&w->by_tsuid, s);
    if (s->text && with_text) tw_map_insert(&w->by_text, s);
    tw_index_add(w->index, s);
    /* The text map holds its own copy of the text and the TSUID the tags: a
     * registered series' tags and text are never read again (a rename
     * links the new text of a fresh series). */
    free(s->tags);
    s->tags = NULL;
    s->pairs = NULL;
    s->text = NULL;
}

static int series_persist(tsdb_writer_t *w, const tw_series_t *s, oct_errbuf_t *eb)
{
    static const uint8_t ver = 1;
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(s->tsuid, w->uid_w[CODEC_UID_METRIC]),
                     {oct_slice(s->tsuid, s->tsuid_len), oct_slice_str("name"),
                      oct_slice_str(TW_META_QUAL), oct_slice(&ver, 1)}};
    int rc = store_write(w->st, STORE_TABLE_META, &op, 1, 0, eb);
    if (!rc && w->shared) {
        oct_slice_t ts = op.cell.row;
        rc = tw_shared_journal(w, &ts, 1, eb);
    }
    return rc;
}

int tw_series_revive(tsdb_writer_t *w, tw_series_t *s, oct_errbuf_t *eb)
{
    int rc = 0;
    pthread_mutex_lock(&w->create_mu);
    if (atomic_load(&s->gone)) {
        rc = series_persist(w, s, eb);
        if (rc == 0) {
            /* cleared first: a drop meanwhile (another delete) finds it
             * either not listed or not gone */
            atomic_store(&s->gone, 0);
            tw_index_readd(w->index, s);
        }
    }
    pthread_mutex_unlock(&w->create_mu);
    return rc;
}

/* Fills in s's TSUID from s->metric and s->tags (sorted by tagk UID). */
static void series_set_tsuid(tsdb_writer_t *w, tw_series_t *s)
{
    size_t tl = 0;
    oct_put_be_n(s->tsuid, s->metric, w->uid_w[CODEC_UID_METRIC]);
    tl += w->uid_w[CODEC_UID_METRIC];
    for (size_t i = 0; i < s->n_tags; i++) {
        oct_put_be_n(s->tsuid + tl, s->tags[i].tagk, w->uid_w[CODEC_UID_TAGK]);
        tl += w->uid_w[CODEC_UID_TAGK];
        oct_put_be_n(s->tsuid + tl, s->tags[i].tagv, w->uid_w[CODEC_UID_TAGV]);
        tl += w->uid_w[CODEC_UID_TAGV];
    }
    s->tsuid_len = (uint8_t)tl;
    s->tsuid_hash = tw_hash_bytes(s->tsuid, tl, 0x452821E638D01377ull);
}

/* The pending series s's missing UIDs, one name at a time. */
static int series_resolve_one(tsdb_writer_t *w, tw_series_t *s, oct_errbuf_t *eb)
{
    int rc = 0;
    if (!s->metric)
        rc = uid_resolve_for_write_deferred(w->uids, CODEC_UID_METRIC, (const uint8_t *)s->text,
                                            s->mlen, &s->metric, eb);
    for (size_t t = 0; !rc && t < s->n_tags; t++) {
        const tw_pair_t *p = &s->pairs[t];
        if (!s->tags[t].tagk)
            rc = uid_resolve_for_write_deferred(w->uids, CODEC_UID_TAGK,
                                                (const uint8_t *)s->text + p->koff, p->klen,
                                                &s->tags[t].tagk, eb);
        if (!rc && !s->tags[t].tagv)
            rc = uid_resolve_for_write_deferred(w->uids, CODEC_UID_TAGV,
                                                (const uint8_t *)s->text + p->voff, p->vlen,
                                                &s->tags[t].tagv, eb);
    }
    return rc;
}

/* Assigns the new names of the pending series in fresh[0..n) (tsuid_len 0:
 * UID 0 where tw_series_prepare found no name), one uid_resolve_batch_deferred
 * per kind, and completes their TSUIDs. A series whose names cannot be
 * assigned is freed and its slot set to NULL; returns the first such error. */
static int series_resolve(tsdb_writer_t *w, tw_series_t **fresh, size_t n, oct_errbuf_t *eb)
{
    size_t cnt[CODEC_UID_N_KINDS] = {0}, npend = 0;
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = fresh[i];
        if (s->tsuid_len) continue;
        npend++;
        cnt[CODEC_UID_METRIC] += !s->metric;
        for (size_t t = 0; t < s->n_tags; t++) {
            cnt[CODEC_UID_TAGK] += !s->tags[t].tagk;
            cnt[CODEC_UID_TAGV] += !s->tags[t].tagv;
        }
    }
    if (!npend) return 0;
    oct_slice_t *names[CODEC_UID_N_KINDS];
    uint64_t **slots[CODEC_UID_N_KINDS], *ids[CODEC_UID_N_KINDS];
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        names[k] = xmalloc((cnt[k] + 1) * sizeof *names[k]);
        slots[k] = xmalloc((cnt[k] + 1) * sizeof *slots[k]);
        ids[k] = xmalloc((cnt[k] + 1) * sizeof *ids[k]);
        cnt[k] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = fresh[i];
        if (s->tsuid_len) continue;
        if (!s->metric) {
            names[CODEC_UID_METRIC][cnt[CODEC_UID_METRIC]] =
                oct_slice((const uint8_t *)s->text, s->mlen);
            slots[CODEC_UID_METRIC][cnt[CODEC_UID_METRIC]++] = &s->metric;
        }
        for (size_t t = 0; t < s->n_tags; t++) {
            const tw_pair_t *p = &s->pairs[t];
            if (!s->tags[t].tagk) {
                names[CODEC_UID_TAGK][cnt[CODEC_UID_TAGK]] =
                    oct_slice((const uint8_t *)s->text + p->koff, p->klen);
                slots[CODEC_UID_TAGK][cnt[CODEC_UID_TAGK]++] = &s->tags[t].tagk;
            }
            if (!s->tags[t].tagv) {
                names[CODEC_UID_TAGV][cnt[CODEC_UID_TAGV]] =
                    oct_slice((const uint8_t *)s->text + p->voff, p->vlen);
                slots[CODEC_UID_TAGV][cnt[CODEC_UID_TAGV]++] = &s->tags[t].tagv;
            }
        }
    }
    int rc = 0;
    for (int k = 0; k < CODEC_UID_N_KINDS && !rc; k++) {
        rc = uid_resolve_batch_deferred(w->uids, (codec_uid_kind_t)k, names[k], cnt[k], ids[k], eb);
        for (size_t j = 0; !rc && j < cnt[k]; j++)
            *slots[k][j] = ids[k][j];
    }
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        free(names[k]);
        free(slots[k]);
        free(ids[k]);
    }
    int frc = 0;
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = fresh[i];
        if (s->tsuid_len) continue;
        /* A failed batch (UIDs running out part way, a store error) leaves
         * each series to its own names, one by one, as before batching: the
         * series that fit still get their UIDs. */
        int r = rc ? series_resolve_one(w, s, eb) : 0;
        if (r) {
            if (!frc) frc = r;
            tw_series_free(s);
            fresh[i] = NULL;
            continue;
        }
        qsort(s->tags, s->n_tags, sizeof *s->tags, tag_uid_cmp);
        series_set_tsuid(w, s);
    }
    return frc;
}

/* Assigns the chunk's new names (series_resolve), persists and registers
 * the new series fresh[0..n) of one chunk, in one store write, and replaces
 * each by the series the put must use: itself,
 * one registered meanwhile (or earlier in fresh) with the same TSUID (the
 * duplicate is freed), or NULL if the store write failed or its new names
 * could not be assigned (the message in eb, return value < 0). The series
 * text -> TSUID mapping is a function, so
 * the TSUID decides identity. */
int tw_series_commit(tsdb_writer_t *w, tw_series_t **fresh, size_t n, uint64_t names_gen,
                     oct_errbuf_t *eb)
{
    static const uint8_t ver = 1;
    /* New names first, outside create_mu (store writes): a failure fails the
     * series that needed them (NULL), the others go on. */
    int urc = series_resolve(w, fresh, n, eb);
    store_op_t ops_stack[64];
    uint8_t new_stack[64];
    store_op_t *ops = n <= 64 ? ops_stack : xmalloc(n * sizeof *ops);
    uint8_t *is_new = n <= 64 ? new_stack : xmalloc(n);
    size_t nops = 0;
    pthread_mutex_lock(&w->create_mu);
    int names_ok = atomic_load(&w->names_gen) == names_gen;
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = fresh[i];
        is_new[i] = 0;
        if (!s) continue;
        tw_series_t *have = tw_map_find_tsuid(&w->by_tsuid, s->tsuid, s->tsuid_len);
        /* A known series under names its text key does not have: renamed
         * names (or ones it never had); let them find it from now on. */
        if (have && names_ok && s->text) tw_map_link_text(&w->by_text, s, have);
        for (size_t j = 0; !have && j < i; j++) {
            tw_series_t *o = fresh[j];
            if (o && o->tsuid_hash == s->tsuid_hash && o->tsuid_len == s->tsuid_len &&
                !memcmp(o->tsuid, s->tsuid, s->tsuid_len))
                have = o;
        }
        is_new[i] = !have;
        if (have) {
            tw_series_free(s);
            fresh[i] = have;
            continue;
        }
        store_op_t op = {STORE_OP_PUT,
                         oct_slice(s->tsuid, w->uid_w[CODEC_UID_METRIC]),
                         {oct_slice(s->tsuid, s->tsuid_len), oct_slice_str("name"),
                          oct_slice_str(TW_META_QUAL), oct_slice(&ver, 1)}};
        ops[nops++] = op;
    }
    oct_errbuf_t web;
    int rc = nops ? store_write(w->st, STORE_TABLE_META, ops, nops, 0, &web) : 0;
    if (!rc && nops && w->shared) {
        /* the other TSDs learn of them from the journal (docs/scale-out.md) */
        oct_slice_t ts_stack[64];
        oct_slice_t *ts = nops <= 64 ? ts_stack : xmalloc(nops * sizeof *ts);
        for (size_t i = 0; i < nops; i++)
            ts[i] = ops[i].cell.row;
        rc = tw_shared_journal(w, ts, nops, &web);
        if (ts != ts_stack) free(ts);
    }
    size_t created = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_new[i]) continue;
        tw_series_t *s = fresh[i];
        if (rc) {
            /* every point naming it fails, duplicates of it included */
            for (size_t j = i + 1; j < n; j++)
                if (fresh[j] == s) fresh[j] = NULL;
            tw_series_free(s);
            fresh[i] = NULL;
            is_new[i] = 0;
            continue;
        }
        series_register(w, s, names_ok);
        created++;
    }
    pthread_mutex_unlock(&w->create_mu);
    if (created) {
        atomic_fetch_add_explicit(&w->series_created, created, memory_order_relaxed);
        for (size_t i = 0; i < n; i++)
            if (is_new[i]) tw_meta_new_series(w, fresh[i]);
    }
    if (ops != ops_stack) free(ops);
    if (is_new != new_stack) free(is_new);
    if (rc) {
        if (eb) *eb = web;
        return rc;
    }
    return urc;
}

/* The slow path: validates and resolves the put's series. *out is either a
 * known series (*fresh = 0) or a new one, allocated but neither persisted
 * nor registered (*fresh = 1): put_chunk persists the new series of a whole
 * chunk in one store write (tw_series_commit). */
int tw_series_prepare(tsdb_writer_t *w, const tsdb_dp_t *dp, tw_series_t **out, int *fresh,
                      oct_errbuf_t *eb)
{
    *fresh = 0;
    size_t n = dp->n_tags;
    tw_kv_t stack_kv[16];
    tw_kv_t *kv = n <= 16 ? stack_kv : xmalloc(n * sizeof *kv);
    codec_tag_uid_t stack_t[16];
    codec_tag_uid_t *tags = NULL;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    int rc = 0;
    /* No configuration allows more than 255 distinct tags; refusing longer
     * lists before the quadratic duplicate scan keeps a 10,000-tag put cheap. */
    if (n > 255) {
        rc = oct_err(eb, OCT_EINVAL, "Too many tags: %zu maximum allowed: %d", n, w->max_tags);
        goto out;
    }
    /* Tags.parse: identical repeats collapse, a key with two values fails. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        oct_slice_t k = dp->tags[2 * i], v = dp->tags[2 * i + 1];
        size_t j = 0;
        for (; j < m; j++)
            if (oct_slice_eq(kv[j].k, k)) break;
        if (j < m) {
            if (oct_slice_eq(kv[j].v, v)) continue;
            tags_text(&sb, kv, m);
            rc =
                oct_err(eb, OCT_EINVAL, "duplicate tag: %.*s=%.*s, tags=%s", (int)k.len,
                        (const char *)k.ptr, (int)v.len, (const char *)v.ptr, oct_strbuf_cstr(&sb));
            goto out;
        }
        kv[m].k = k;
        kv[m].v = v;
        m++;
    }
    if (m == 0) {
        rc = oct_err(eb, OCT_EINVAL, "Need at least one tag (metric=%.*s, tags={})",
                     (int)dp->metric.len, (const char *)dp->metric.ptr);
        goto out;
    }
    if (m > (size_t)w->max_tags) {
        tags_text(&sb, kv, m);
        rc = oct_err(eb, OCT_EINVAL, "Too many tags: %zu maximum allowed: %d, tags: %s", m,
                     w->max_tags, oct_strbuf_cstr(&sb));
        goto out;
    }
    rc = codec_name_validate_metric((const char *)dp->metric.ptr, dp->metric.len, w->specials, eb);
    if (rc) goto out;
    for (size_t i = 0; i < m; i++) {
        const char *k = (const char *)kv[i].k.ptr, *v = (const char *)kv[i].v.ptr;
        rc = codec_name_validate_tagk(k, kv[i].k.len, v, kv[i].v.len, w->specials, eb);
        if (!rc) rc = codec_name_validate_tagv(v, kv[i].v.len, k, kv[i].k.len, w->specials, eb);
        if (rc) goto out;
    }
    qsort(kv, m, sizeof *kv, kv_cmp);
    /* The normalised text may be known (the put repeated a pair). */
    tsdb_dp_t norm = *dp;
    oct_slice_t stack_sl[32];
    oct_slice_t *sl = 2 * m <= 32 ? stack_sl : xmalloc(2 * m * sizeof *sl);
    for (size_t i = 0; i < m; i++) {
        sl[2 * i] = kv[i].k;
        sl[2 * i + 1] = kv[i].v;
    }
    norm.tags = sl;
    norm.n_tags = m;
    tw_series_t *s = tw_map_find_text(&w->by_text, tw_text_hash(&norm), &norm);
    if (sl != stack_sl) free(sl);
    if (s) {
        *out = s;
        goto out;
    }
    /* Known names resolve here; a new one is left as UID 0 (never assigned)
     * for tw_series_commit, which assigns the chunk's new names in one batch per
     * kind, unsynced: nothing naming them is durable before the WAL's next
     * fdatasync, which syncs them first (tw_presync). */
    uint64_t muid;
    rc = uid_peek_for_write(w->uids, CODEC_UID_METRIC, dp->metric.ptr, dp->metric.len, &muid, eb);
    if (rc) goto out;
    int pending = muid == 0;
    tags = m <= 16 ? stack_t : xmalloc(m * sizeof *tags);
    for (size_t i = 0; i < m; i++) {
        rc = uid_peek_for_write(w->uids, CODEC_UID_TAGK, kv[i].k.ptr, kv[i].k.len, &tags[i].tagk,
                                eb);
        if (!rc)
            rc = uid_peek_for_write(w->uids, CODEC_UID_TAGV, kv[i].v.ptr, kv[i].v.len,
                                    &tags[i].tagv, eb);
        if (rc) goto out;
        pending |= !tags[i].tagk || !tags[i].tagv;
    }
    /* The text key keeps kv's order; the TSUID wants tagk UID order. A
     * pending series keeps tags[i] beside pairs[i] until its UIDs are known. */
    if (!pending) qsort(tags, m, sizeof *tags, tag_uid_cmp);
    s = series_alloc(w, dp->metric, muid, tags, kv, m);
    if (pending) s->tsuid_len = 0; /* no TSUID yet: series_resolve */
    *out = s;
    *fresh = 1;
out:
    if (kv != stack_kv) free(kv);
    if (tags && tags != stack_t) free(tags);
    oct_strbuf_free(&sb);
    return rc;
}

/* A series for TSUID tsuid[0..len) (nt tags, checked), no text key: one
 * allocation, nothing else (its index entries come from the TSUID). */
static tw_series_t *series_alloc_tsuid(tsdb_writer_t *w, const uint8_t *tsuid, size_t len,
                                       size_t nt)
{
    tw_series_t *s = xcalloc(1, sizeof *s + len);
    s->metric = oct_get_be_n(tsuid, w->uid_w[CODEC_UID_METRIC]);
    s->n_tags = (uint16_t)nt;
    memcpy(s->tsuid, tsuid, len);
    s->tsuid_len = (uint8_t)len;
    s->tsuid_hash = tw_hash_bytes(tsuid, len, 0x452821E638D01377ull);
    return s;
}

/* The number of tags of TSUID tsuid[0..len), or < 0 when it is not one of
 * this layout. */
static int series_tsuid_tags(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, oct_errbuf_t *eb)
{
    int nt = codec_tsuid_check(&w->rk, tsuid, len, eb);
    if (nt < 0) return nt;
    if (nt > 255 || len > TW_MAX_TSUID) return oct_err(eb, OCT_ECORRUPT, "TSUID too long");
    return nt;
}

/* A series known only by its TSUID (named by the WAL or by the shared
 * journal): registered without a text key. */
int tw_series_from_tsuid(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int persist,
                         tw_series_t **out, oct_errbuf_t *eb)
{
    tw_series_t *s = tw_map_find_tsuid(&w->by_tsuid, tsuid, len);
    if (s) {
        *out = s;
        return 0;
    }
    uint64_t names_gen = atomic_load(&w->names_gen);
    int nt = series_tsuid_tags(w, tsuid, len, eb);
    if (nt < 0) return nt;
    /* No text key: the first put naming this series misses the text map,
     * resolves its names to this TSUID and links its text then
     * (tw_series_commit), as after a rename. Building a million text keys
     * from the UID names was most of a TSD's start-up (docs/architecture.md,
     * "Start-up"). */
    s = series_alloc_tsuid(w, tsuid, len, (size_t)nt);
    int rc = 0;
    pthread_mutex_lock(&w->create_mu);
    tw_series_t *have = tw_map_find_tsuid(&w->by_tsuid, tsuid, len);
    if (have) {
        tw_series_free(s);
        s = have;
    } else {
        if (persist) rc = series_persist(w, s, eb);
        if (rc)
            tw_series_free(s);
        else
            series_register(w, s, atomic_load(&w->names_gen) == names_gen);
    }
    pthread_mutex_unlock(&w->create_mu);
    if (!rc) *out = s;
    return rc;
}

void tw_series_load_one(tsdb_writer_t *w, const uint8_t *tsuid, size_t len)
{
    oct_errbuf_t eb;
    int nt = series_tsuid_tags(w, tsuid, len, &eb);
    /* A row that is not a TSUID of this layout is not ours: skip. */
    if (nt < 0 || tw_map_find_tsuid(&w->by_tsuid, tsuid, len)) return;
    series_register(w, series_alloc_tsuid(w, tsuid, len, (size_t)nt), 1);
}

int tw_load_part(void *ctx, oct_slice_t part)
{
    tw_load_ctx_t *lc = ctx;
    store_scan_spec_t spec = {0};
    spec.part = part;
    spec.family = oct_slice_str("name");
    store_scanner_t *sc;
    int rc = store_scan_open(lc->w->st, STORE_TABLE_META, &spec, &sc, lc->eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    oct_slice_t q = oct_slice_str(TW_META_QUAL);
    while ((rc = store_scan_next(sc, &row, lc->eb)) == 1) {
        for (size_t i = 0; i < row.n; i++) {
            if (!oct_slice_eq(row.cells[i].qualifier, q)) continue;
            tw_series_t *s;
            oct_errbuf_t e2;
            /* A row that is not a TSUID of this layout is not ours: skip. */
            (void)tw_series_from_tsuid(lc->w, row.cells[i].row.ptr, row.cells[i].row.len, 0, &s,
                                       &e2);
        }
    }
    store_result_free(&row);
    store_scan_close(sc);
    return rc < 0 ? rc : 0;
}
