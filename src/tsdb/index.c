/* index.c -- the in-memory series index: metric -> series, (metric, tagk)
 * -> series, (metric, tagk, tagv) -> series.
 *
 * One open-addressing table from the (metric, tagk, tagv) triple (0 = any)
 * to a posting list of series pointers. It changes only when a series is
 * created (rare), under the write side of a rwlock; lookups take the read
 * side, copy the matching list, sort it by TSUID and call back without any
 * lock held. Rebuilt at open from the persisted series rows. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "tsdb/series.h"

/* A posting list holds series ids (tw_series_at), not pointers: each series
 * is on 1 + 2 * n_tags lists, so 4 bytes a reference instead of 8 is most
 * of what the index costs per series. cap > 0 marks a used slot. */
typedef struct {
    uint64_t m, k, v;
    uint32_t *s;
    uint32_t n, cap;
} tw_post_t;

/* The slot each key of the last series added went to, by position in its
 * key list (metric, then tagk and tagk=tagv of each tag): series come in
 * TSUID order at open, so most keys of one are the previous one's, and a
 * hit skips a hash and a probe. Valid while gen is the table's. */
#define TW_INDEX_MEMO 33
typedef struct {
    uint64_t m, k, v;
    size_t slot;
    uint64_t gen;
} tw_memo_t;

struct tw_index {
    pthread_rwlock_t lock;
    tsdb_writer_t *w; /* whose series list the ids index */
    tw_post_t *t;
    size_t mask, n;
    uint64_t
        gen; /* bumped when the table moves (grows); a change that drops a key must bump it too */
    tw_memo_t memo[TW_INDEX_MEMO];
};

tw_index_t *tw_index_new(tsdb_writer_t *w)
{
    tw_index_t *ix = xcalloc(1, sizeof *ix);
    ix->w = w;
    pthread_rwlock_init(&ix->lock, NULL);
    ix->mask = 255;
    ix->t = xcalloc(ix->mask + 1, sizeof *ix->t);
    ix->gen = 1; /* memo entries start at gen 0: invalid */
    return ix;
}

void tw_index_free(tw_index_t *ix)
{
    if (!ix) return;
    for (size_t i = 0; i <= ix->mask; i++)
        free(ix->t[i].s);
    free(ix->t);
    pthread_rwlock_destroy(&ix->lock);
    free(ix);
}

static size_t slot_of(const tw_index_t *ix, uint64_t m, uint64_t k, uint64_t v)
{
    uint64_t key[3] = {m, k, v};
    return (size_t)tw_hash_bytes(key, sizeof key, 0x3C6EF372FE94F82Bull) & ix->mask;
}

static tw_post_t *find(const tw_index_t *ix, uint64_t m, uint64_t k, uint64_t v)
{
    for (size_t i = slot_of(ix, m, k, v);; i = (i + 1) & ix->mask) {
        tw_post_t *p = &ix->t[i];
        if (!p->cap) return NULL;
        if (p->m == m && p->k == k && p->v == v) return p;
    }
}

static tw_post_t *get_or_add(tw_index_t *ix, uint64_t m, uint64_t k, uint64_t v)
{
    tw_post_t *p = find(ix, m, k, v);
    if (p) return p;
    if ((ix->n + 1) * 2 > ix->mask + 1) {
        tw_post_t *old = ix->t;
        size_t om = ix->mask;
        ix->mask = (om + 1) * 2 - 1;
        ix->t = xcalloc(ix->mask + 1, sizeof *ix->t);
        for (size_t i = 0; i <= om; i++) {
            if (!old[i].cap) continue;
            size_t j = slot_of(ix, old[i].m, old[i].k, old[i].v);
            while (ix->t[j].cap)
                j = (j + 1) & ix->mask;
            ix->t[j] = old[i];
        }
        free(old);
        ix->gen++;
    }
    size_t j = slot_of(ix, m, k, v);
    while (ix->t[j].cap)
        j = (j + 1) & ix->mask;
    p = &ix->t[j];
    p->cap = 2;
    p->s = xmalloc(p->cap * sizeof *p->s);
    p->n = 0;
    p->m = m;
    p->k = k;
    p->v = v;
    ix->n++;
    return p;
}

static void post_add(tw_post_t *p, const tw_series_t *s)
{
    if (p->n == p->cap) {
        /* 1.5x: the long lists (a metric's, a common tagk's) are what a
         * million series pay for, and doubling leaves a quarter unused */
        p->cap += p->cap / 2;
        p->s = xrealloc(p->s, p->cap * sizeof *p->s);
    }
    p->s[p->n++] = s->id;
}

/* The list of key (m, k, v), the key at position pos of a series' list. */
static tw_post_t *get_memo(tw_index_t *ix, size_t pos, uint64_t m, uint64_t k, uint64_t v)
{
    tw_memo_t *mo = pos < TW_INDEX_MEMO ? &ix->memo[pos] : NULL;
    if (mo && mo->gen == ix->gen && mo->m == m && mo->k == k && mo->v == v) return &ix->t[mo->slot];
    tw_post_t *p = get_or_add(ix, m, k, v);
    if (mo) *mo = (tw_memo_t){m, k, v, (size_t)(p - ix->t), ix->gen};
    return p;
}

void tw_index_add(tw_index_t *ix, tw_series_t *s)
{
    /* the tags from the TSUID: a series keeps no other copy once registered */
    const tsdb_writer_t *w = ix->w;
    unsigned kw = w->uid_w[CODEC_UID_TAGK], vw = w->uid_w[CODEC_UID_TAGV];
    const uint8_t *t = s->tsuid + w->uid_w[CODEC_UID_METRIC];
    pthread_rwlock_wrlock(&ix->lock);
    post_add(get_memo(ix, 0, s->metric, 0, 0), s);
    for (size_t i = 0; i < s->n_tags; i++, t += kw + vw) {
        uint64_t k = oct_get_be_n(t, kw), v = oct_get_be_n(t + kw, vw);
        /* a tagk appears once per series (normalised), so no double entries */
        post_add(get_memo(ix, 1 + 2 * i, s->metric, k, 0), s);
        post_add(get_memo(ix, 2 + 2 * i, s->metric, k, v), s);
    }
    pthread_rwlock_unlock(&ix->lock);
}

void tw_index_drop_gone(tw_index_t *ix, uint64_t metric)
{
    pthread_rwlock_wrlock(&ix->lock);
    for (size_t i = 0; i <= ix->mask; i++) {
        tw_post_t *p = &ix->t[i];
        if (!p->cap || p->m != metric) continue;
        uint32_t k = 0;
        for (uint32_t j = 0; j < p->n; j++)
            if (!atomic_load_explicit(&tw_series_at(ix->w, p->s[j])->gone, memory_order_relaxed))
                p->s[k++] = p->s[j];
        p->n = k;
    }
    pthread_rwlock_unlock(&ix->lock);
}

void tw_index_readd(tw_index_t *ix, tw_series_t *s)
{
    /* a registered series' tags are in its TSUID only (series_register) */
    const codec_rowkey_layout_t *l = &ix->w->rk;
    pthread_rwlock_wrlock(&ix->lock);
    post_add(get_or_add(ix, s->metric, 0, 0), s);
    for (size_t off = l->metric_w; off + l->tagk_w + l->tagv_w <= s->tsuid_len;
         off += l->tagk_w + l->tagv_w) {
        uint64_t k = oct_get_be_n(s->tsuid + off, l->tagk_w);
        uint64_t v = oct_get_be_n(s->tsuid + off + l->tagk_w, l->tagv_w);
        post_add(get_or_add(ix, s->metric, k, 0), s);
        post_add(get_or_add(ix, s->metric, k, v), s);
    }
    pthread_rwlock_unlock(&ix->lock);
}

static int cmp_tsuid(const void *a, const void *b)
{
    const tw_series_t *x = *(tw_series_t *const *)a, *y = *(tw_series_t *const *)b;
    return oct_slice_cmp(oct_slice(x->tsuid, x->tsuid_len), oct_slice(y->tsuid, y->tsuid_len));
}

int tw_index_find(tw_index_t *ix, uint64_t metric, uint64_t tagk, uint64_t tagv, tsdb_series_fn fn,
                  void *ctx)
{
    if (tagk == 0) tagv = 0;
    pthread_rwlock_rdlock(&ix->lock);
    tw_post_t *p = find(ix, metric, tagk, tagv);
    size_t n = p ? p->n : 0;
    tw_series_t **v = n ? xmalloc(n * sizeof *v) : NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = tw_series_at(ix->w, p->s[i]);
    pthread_rwlock_unlock(&ix->lock);
    if (n > 1) qsort(v, n, sizeof *v, cmp_tsuid);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = fn(ctx, v[i]->tsuid, v[i]->tsuid_len);
    free(v);
    return rc;
}

int tsdb_series_find(tsdb_t *db, uint64_t metric, uint64_t tagk, uint64_t tagv, tsdb_series_fn fn,
                     void *ctx)
{
    tsdb_writer_t *w = tsdb__writer(db);
    if (!w) return 0;
    return tw_index_find(w->index, metric, tagk, tagv, fn, ctx);
}
