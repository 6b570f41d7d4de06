/* write.c -- the write path: the series maps, the head, put, WAL recovery,
 * open and close (series creation is series.c).
 *
 * The hot path of a put is: hash the point's text (metric + tags, combined
 * order-independently so that tags may come in any order), probe a
 * lock-free table for the series, verify the text, and queue the point.
 * Per batch chunk (<= 512 points) one POINTS record is built without locks
 * and copied into the WAL buffer in one short critical section; then each
 * point is inserted into its series' head under that series' mutex. Nothing
 * is allocated per point (head arrays grow geometrically).
 *
 * A miss (tw_series_prepare) normalises the tags (sorted, identical repeats
 * dropped, conflicting ones rejected), applies OpenTSDB's checks in OpenTSDB's order, resolves
 * known UIDs, and leaves the chunk's new names to tw_series_commit, which
 * assigns them in one unsynced batch per kind (the WAL syncs the store
 * before its own fdatasync: tw_presync) and persists the new series
 * (tsdb-meta, row = TSUID, name:octsdb_series) in one store write, before
 * any of their points is acknowledged. The WAL names series by a
 * process-local id defined per segment by a SERIES record (docs/format/wal.md),
 * which recovery maps back to series through the TSUID.
 *
 * A UID rename or delete (tw_names_changed, the registry's change hook)
 * turns the text keys of the series holding that UID into tombstones, which
 * no put matches; the next put with either name misses, resolves its names
 * as after a restart, and the new names are linked to the same series
 * (tw_map_link_text). The hot path pays nothing for it but one atomic load
 * per chunk. */
#include "tsdb/write.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "tsdb/delete_rollup.h"
#include "tsdb/rollup.h"
#include "tsdb/series.h"
#include "tsdb/tsdb_int.h"

#define TW_CHUNK 512
#define TW_WIN   64 /* points per lookup window (put_chunk) */
/* bytes per point in a POINTS record, at most: id, ts, flags, value */
#define TW_PT_MAX (10 + 10 + 1 + 10)

/* ---- hashing ---------------------------------------------------------- */

static inline uint64_t tw_mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint64_t tw_hash_bytes(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data;
    uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = tw_mix(h ^ v, 0xA0761D6478BD642Full);
        p += 8;
        n -= 8;
    }
    uint64_t v = 0;
    if (n) memcpy(&v, p, n);
    return tw_mix(h ^ v ^ 0xE7037ED1A0B428DBull, 0x8EBC6AF09C88C6E3ull);
}

/* Up to 8 bytes of p[0..n) as one word, without reading past the end
 * (wyhash's trick: two overlapping loads for 4..8 bytes). */
static inline uint64_t tw_tail(const uint8_t *p, size_t n)
{
    uint32_t a, b;
    if (n >= 4) {
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        return (uint64_t)a << 32 | b;
    }
    if (n == 0) return 0;
    return (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
}

static inline uint64_t tw_absorb(uint64_t h, const uint8_t *p, size_t n, uint64_t k)
{
    while (n > 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = tw_mix(h ^ v, k);
        p += 8;
        n -= 8;
    }
    return tw_mix(h ^ tw_tail(p, n), k ^ 0x589965CC75374CC3ull);
}

/* One tag pair in one pass: both lengths go in first, so the boundary
 * between key and value is unambiguous. Short names (the common case) cost
 * three multiplications. */
static inline uint64_t tw_pair_hash(const void *k, size_t kl, const void *v, size_t vl)
{
    uint64_t h = 0x243F6A8885A308D3ull ^ (((uint64_t)kl << 32 | vl) * 0x9E3779B97F4A7C15ull);
    h = tw_absorb(h, k, kl, 0xA0761D6478BD642Full);
    h = tw_absorb(h, v, vl, 0xE7037ED1A0B428DBull);
    return tw_mix(h, 0x8EBC6AF09C88C6E3ull) | 1;
}

/* Order-independent: the metric's hash plus the sum of the pairs' hashes. */
uint64_t tw_text_hash(const tsdb_dp_t *dp)
{
    uint64_t h = tw_hash_bytes(dp->metric.ptr, dp->metric.len, 0xA4093822299F31D0ull);
    for (size_t i = 0; i < dp->n_tags; i++)
        h += tw_pair_hash(dp->tags[2 * i].ptr, dp->tags[2 * i].len, dp->tags[2 * i + 1].ptr,
                          dp->tags[2 * i + 1].len);
    return h ? h : 1;
}

uint64_t tw_series_text_hash(const tw_series_t *s)
{
    uint64_t h = tw_hash_bytes(s->text, s->mlen, 0xA4093822299F31D0ull);
    for (size_t i = 0; i < s->n_tags; i++)
        h += tw_pair_hash(s->text + s->pairs[i].koff, s->pairs[i].klen, s->text + s->pairs[i].voff,
                          s->pairs[i].vlen);
    return h ? h : 1;
}

/* Equality of two short byte strings without a call: names are mostly
 * under 16 bytes, where memcmp's call and dispatch cost more than the
 * comparison (tw_tail covers every byte of up to 8). */
static inline int tw_bytes_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    while (n > 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
        a += 8;
        b += 8;
        n -= 8;
    }
    return tw_tail(a, n) == tw_tail(b, n);
}

static inline int sl_eq(const char *a, size_t al, oct_slice_t b)
{
    return al == b.len && tw_bytes_eq((const uint8_t *)a, b.ptr, al);
}

/* ---- the text map's entries ---------------------------------------- */

/* The text map holds compact copies of the series' text keys, not the
 * series: one allocation with the hash, the series, the lengths, a learned
 * tag-order hint and the bytes, so a probe reads a few adjacent cache lines
 * instead of the series struct, its pair table and its text (three places,
 * each a cache miss at 20,000 series). Layout after the header:
 * uint32_t len[2 * n_tags] (klen, vlen of each pair, pairs sorted by key as
 * in the series), uint8_t hint[n_tags], then the text: metric, k0, v0, k1,
 * v1, ... */
typedef struct {
    uint64_t hash;
    tw_series_t *s;
    uint32_t id; /* s->id, here so that the WAL record needs no read of s */
    uint32_t mlen, n_tags;
} tw_tkey_t;

static inline const uint32_t *tkey_lens(const tw_tkey_t *k)
{
    return (const uint32_t *)(const void *)(k + 1);
}

/* hint[i]: which of the key's pairs the put's i-th tag matched last time.
 * Clients repeat their tag order, so this makes the common match one
 * comparison per tag whatever that order is. Written by concurrent probes
 * (relaxed atomics): any value is only a guess, the match is always exact. */
static inline _Atomic uint8_t *tkey_hint(const tw_tkey_t *k)
{
    /* the hints are written racily on purpose: const is dropped */
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    return (_Atomic uint8_t *)(void *)((char *)(uintptr_t)(k + 1) +
                                       2 * (size_t)k->n_tags * sizeof(uint32_t));
}

static inline const char *tkey_text(const tw_tkey_t *k)
{
    return (const char *)(k + 1) + 2 * (size_t)k->n_tags * sizeof(uint32_t) + k->n_tags;
}

static tw_tkey_t *tkey_new(const tw_series_t *s)
{
    size_t n = s->n_tags, tlen = s->mlen;
    for (size_t i = 0; i < n; i++)
        tlen += s->pairs[i].klen + s->pairs[i].vlen;
    tw_tkey_t *k = xmalloc(sizeof *k + 2 * n * sizeof(uint32_t) + n + tlen);
    k->hash = tw_series_text_hash(s); /* computed here: the series keeps no copy */
    k->s = (tw_series_t *)s;
    k->id = s->id;
    k->mlen = s->mlen;
    k->n_tags = (uint32_t)n;
    uint32_t *len = (uint32_t *)(void *)(k + 1);
    _Atomic uint8_t *hint = tkey_hint(k);
    char *t = (char *)tkey_text(k);
    memcpy(t, s->text, s->mlen);
    size_t off = s->mlen;
    for (size_t i = 0; i < n; i++) {
        const tw_pair_t *p = &s->pairs[i];
        len[2 * i] = p->klen;
        len[2 * i + 1] = p->vlen;
        atomic_init(&hint[i], (uint8_t)(i < 256 ? i : 0));
        memcpy(t + off, s->text + p->koff, p->klen);
        off += p->klen;
        memcpy(t + off, s->text + p->voff, p->vlen);
        off += p->vlen;
    }
    return k;
}

/* Does the put's text name key k's series? Each put pair must match a
 * distinct pair of k (so a repeated pair falls to the slow path, which
 * normalises). */
static int tkey_matches(const tw_tkey_t *k, const tsdb_dp_t *dp)
{
    size_t n = k->n_tags;
    if (n != dp->n_tags || n > 64) return 0;
    const char *text = tkey_text(k);
    if (!sl_eq(text, k->mlen, dp->metric)) return 0;
    const uint32_t *len = tkey_lens(k);
    _Atomic uint8_t *hint = tkey_hint(k);
    uint32_t off[64];
    size_t o = k->mlen;
    for (size_t j = 0; j < n; j++) {
        off[j] = (uint32_t)o;
        o += (size_t)len[2 * j] + len[2 * j + 1];
    }
    uint64_t used = 0;
    for (size_t i = 0; i < n; i++) {
        oct_slice_t kk = dp->tags[2 * i], vv = dp->tags[2 * i + 1];
        size_t j = atomic_load_explicit(&hint[i], memory_order_relaxed);
        if (j >= n || (used >> j & 1) || !sl_eq(text + off[j], len[2 * j], kk)) {
            for (j = 0; j < n; j++)
                if (!(used >> j & 1) && sl_eq(text + off[j], len[2 * j], kk)) break;
            if (j == n) return 0;
            atomic_store_explicit(&hint[i], (uint8_t)j, memory_order_relaxed);
        }
        if (!sl_eq(text + off[j] + len[2 * j], len[2 * j + 1], vv)) return 0;
        used |= 1ull << j;
    }
    return 1;
}

/* A dropped text key's slot: matches no put (n_tags above any put's),
 * keeps probes going past it, and is left behind when the table grows. */
static tw_tkey_t tw_tomb = {0, NULL, 0, 0, UINT32_MAX};

/* ---- the lock-free tables ------------------------------------------- */

static tw_tab_t *tab_new(size_t cap)
{
    tw_tab_t *t = xmalloc(sizeof *t);
    t->slots = xcalloc(cap, sizeof *t->slots);
    t->mask = cap - 1;
    return t;
}

static void map_init(tw_map_t *m, int by_tsuid)
{
    m->by_tsuid = by_tsuid;
    for (int i = 0; i < TW_SHARDS; i++) {
        pthread_mutex_init(&m->sh[i].mu, NULL);
        atomic_init(&m->sh[i].tab, tab_new(64));
        m->sh[i].n = 0;
        m->sh[i].old = NULL;
        m->sh[i].nold = 0;
        m->sh[i].dead = NULL;
        m->sh[i].ndead = 0;
    }
}

static inline tw_series_t *slot_ptr(const tw_series_t *v);

static void map_free(tw_map_t *m)
{
    for (int i = 0; i < TW_SHARDS; i++) {
        tw_tab_t *t = atomic_load(&m->sh[i].tab);
        if (!m->by_tsuid) /* the text map owns its entries (tw_tkey_t) */
            for (size_t j = 0; j <= t->mask; j++) {
                tw_series_t *x = slot_ptr(atomic_load_explicit(&t->slots[j], memory_order_relaxed));
                if (x != (tw_series_t *)(void *)&tw_tomb) free(x);
            }
        for (size_t j = 0; j < m->sh[i].ndead; j++)
            free(m->sh[i].dead[j]);
        free(m->sh[i].dead);
        free(t->slots);
        free(t);
        for (size_t j = 0; j < m->sh[i].nold; j++) {
            free(m->sh[i].old[j]->slots);
            free(m->sh[i].old[j]);
        }
        free(m->sh[i].old);
        pthread_mutex_destroy(&m->sh[i].mu);
    }
}

/* The hash of an entry: a series in the TSUID map, a tw_tkey_t in the text map. */
static inline uint64_t map_key(const tw_map_t *m, const tw_series_t *s)
{
    return m->by_tsuid ? s->tsuid_hash : ((const tw_tkey_t *)(const void *)s)->hash;
}

/* A slot holds the series pointer with 16 bits of its key's hash in the
 * pointer's unused top bits, so a probe rejects a different series without
 * touching it (each series is a cache miss of its own). Tag 0 means "no
 * tag": such a slot is always checked in full. Only where user-space
 * pointers are known to fit in 48 bits. */
#if defined(__x86_64__) || defined(__aarch64__)
#define TW_TAGGED 1
#else
#define TW_TAGGED 0
#endif
#define TW_PTR_MASK ((UINT64_C(1) << 48) - 1)

static inline uintptr_t slot_tag(uint64_t h)
{
    /* bits 42..57: the index uses the low bits, the shard the top six */
    return TW_TAGGED ? (uintptr_t)((h >> 42) & 0xFFFF) : 0;
}

static inline tw_series_t *slot_make(tw_series_t *s, uint64_t h)
{
    uintptr_t v = (uintptr_t)s;
    if (TW_TAGGED && !(v >> 48)) v |= slot_tag(h) << 48;
    /* a tagged pointer: the hash tag rides in the top 16 bits */
    return (tw_series_t *)v; // NOLINT(performance-no-int-to-ptr)
}

static inline tw_series_t *slot_ptr(const tw_series_t *v)
{
    // NOLINTNEXTLINE(performance-no-int-to-ptr): untags a tagged pointer
    return (tw_series_t *)(TW_TAGGED ? (uintptr_t)v & TW_PTR_MASK : (uintptr_t)v);
}

/* 0 when the slot's tag rules out hash h. */
static inline int slot_may_be(const tw_series_t *v, uint64_t h)
{
    uintptr_t t = TW_TAGGED ? (uintptr_t)v >> 48 : 0;
    return !t || t == slot_tag(h);
}

static void tab_put(tw_tab_t *t, uint64_t h, tw_series_t *s)
{
    size_t i = (size_t)h & t->mask;
    while (atomic_load_explicit(&t->slots[i], memory_order_relaxed))
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slots[i], slot_make(s, h), memory_order_release);
}

/* Inserts entry s (a series, or a tw_tkey_t in the text map); its key must
 * be absent. */
static void map_insert_entry(tw_map_t *m, tw_series_t *s)
{
    uint64_t h = map_key(m, s);
    tw_shard_t *sh = &m->sh[h >> 58];
    pthread_mutex_lock(&sh->mu);
    tw_tab_t *t = atomic_load_explicit(&sh->tab, memory_order_relaxed);
    if ((sh->n + 1) * 4 > (t->mask + 1) * 3) {
        /* Grow: readers holding the old table still find everything in it
         * that existed; the old one is retired, not freed, until close. */
        tw_tab_t *nt = tab_new((t->mask + 1) * 2);
        sh->n = 0;
        for (size_t i = 0; i <= t->mask; i++) {
            tw_series_t *x = slot_ptr(atomic_load_explicit(&t->slots[i], memory_order_relaxed));
            if (!x || x == (tw_series_t *)(void *)&tw_tomb) continue;
            tab_put(nt, map_key(m, x), x);
            sh->n++;
        }
        atomic_store_explicit(&sh->tab, nt, memory_order_release);
        sh->old = xrealloc(sh->old, (sh->nold + 1) * sizeof *sh->old);
        sh->old[sh->nold++] = t;
        t = nt;
    }
    tab_put(t, h, s);
    sh->n++;
    pthread_mutex_unlock(&sh->mu);
}

void tw_map_insert(tw_map_t *m, tw_series_t *s)
{
    map_insert_entry(m, m->by_tsuid ? s : (tw_series_t *)(void *)tkey_new(s));
}

/* Same text (hash, lengths and bytes; the hints aside)? */
static int tkey_same(const tw_tkey_t *a, const tw_tkey_t *b)
{
    if (a->hash != b->hash || a->mlen != b->mlen || a->n_tags != b->n_tags) return 0;
    size_t n = a->n_tags, tl = a->mlen;
    const uint32_t *la = tkey_lens(a), *lb = tkey_lens(b);
    if (memcmp(la, lb, 2 * n * sizeof *la)) return 0;
    for (size_t i = 0; i < 2 * n; i++)
        tl += la[i];
    return !memcmp(tkey_text(a), tkey_text(b), tl);
}

void tw_map_link_text(tw_map_t *m, const tw_series_t *named, tw_series_t *s)
{
    tw_tkey_t *k = tkey_new(named);
    k->s = s;
    k->id = s->id;
    tw_tab_t *t = atomic_load_explicit(&m->sh[k->hash >> 58].tab, memory_order_acquire);
    for (size_t i = (size_t)k->hash & t->mask;; i = (i + 1) & t->mask) {
        tw_series_t *v = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!v) break;
        if (tkey_same(k, (const tw_tkey_t *)(const void *)slot_ptr(v))) {
            free(k);
            return;
        }
    }
    map_insert_entry(m, (tw_series_t *)(void *)k);
}

/* Does registered series s name UID id of kind? Its tags are read from
 * its TSUID (a registered series keeps no other copy). */
static int series_holds(const tsdb_writer_t *w, const tw_series_t *s, codec_uid_kind_t kind,
                        uint64_t id)
{
    if (id == 0) return 1; /* "any UID of the kind" (uid.h: a lost notification) */
    if (kind == CODEC_UID_METRIC) return s->metric == id;
    unsigned kw = w->uid_w[CODEC_UID_TAGK], vw = w->uid_w[CODEC_UID_TAGV];
    const uint8_t *p = s->tsuid + w->uid_w[CODEC_UID_METRIC] + (kind == CODEC_UID_TAGK ? 0 : kw);
    unsigned width = kind == CODEC_UID_TAGK ? kw : vw;
    for (size_t i = 0; i < s->n_tags; i++, p += kw + vw)
        if (oct_get_be_n(p, width) == id) return 1;
    return 0;
}

void tw_names_changed(void *ctx, codec_uid_kind_t kind, uint64_t id)
{
    tsdb_writer_t *w = ctx;
    tw_map_t *m = &w->by_text;
    pthread_mutex_lock(&w->create_mu);
    atomic_fetch_add(&w->names_gen, 1);
    for (int i = 0; i < TW_SHARDS; i++) {
        tw_shard_t *sh = &m->sh[i];
        pthread_mutex_lock(&sh->mu);
        tw_tab_t *t = atomic_load_explicit(&sh->tab, memory_order_relaxed);
        for (size_t j = 0; j <= t->mask; j++) {
            tw_series_t *x = slot_ptr(atomic_load_explicit(&t->slots[j], memory_order_relaxed));
            if (!x || x == (tw_series_t *)(void *)&tw_tomb) continue;
            tw_tkey_t *k = (tw_tkey_t *)(void *)x;
            if (!series_holds(w, k->s, kind, id)) continue;
            /* a probe may be reading k: it is retired, not freed */
            atomic_store_explicit(&t->slots[j], slot_make((tw_series_t *)(void *)&tw_tomb, k->hash),
                                  memory_order_release);
            sh->dead = xrealloc(sh->dead, (sh->ndead + 1) * sizeof *sh->dead);
            sh->dead[sh->ndead++] = k;
        }
        pthread_mutex_unlock(&sh->mu);
    }
    pthread_mutex_unlock(&w->create_mu);
}

static const tw_tkey_t *map_find_key(tw_map_t *m, uint64_t h, const tsdb_dp_t *dp)
{
    tw_tab_t *t = atomic_load_explicit(&m->sh[h >> 58].tab, memory_order_acquire);
    for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
        tw_series_t *v = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!v) return NULL;
        if (!slot_may_be(v, h)) continue;
        const tw_tkey_t *k = (const tw_tkey_t *)(const void *)slot_ptr(v);
        if (k->hash == h && tkey_matches(k, dp)) return k;
    }
}

tw_series_t *tw_map_find_text(tw_map_t *m, uint64_t h, const tsdb_dp_t *dp)
{
    const tw_tkey_t *k = map_find_key(m, h, dp);
    return k ? k->s : NULL;
}

tw_series_t *tw_map_find_tsuid(tw_map_t *m, const uint8_t *tsuid, size_t len)
{
    uint64_t h = tw_hash_bytes(tsuid, len, 0x452821E638D01377ull);
    tw_tab_t *t = atomic_load_explicit(&m->sh[h >> 58].tab, memory_order_acquire);
    for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
        tw_series_t *v = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!v) return NULL;
        if (!slot_may_be(v, h)) continue;
        tw_series_t *s = slot_ptr(v);
        if (s->tsuid_hash == h && s->tsuid_len == len && !memcmp(s->tsuid, tsuid, len)) return s;
    }
}

/* ---- the head --------------------------------------------------------- */

/* Prefetches where head_insert will put a point at ts_ms (caller holds s->mu). */
static inline void head_prefetch(const tw_series_t *s, int64_t ts_ms)
{
    int64_t base = codec_rowkey_base_time_ms(ts_ms);
    for (uint32_t i = s->nb; i-- > 0;)
        if (s->b[i].base_s == base) {
            const tw_bucket_t *b = &s->b[i];
            if (b->n) __builtin_prefetch(&b->cur[b->n - 1]);
            return;
        }
}

/* A new empty bucket of hour base in s's head (caller holds s->mu). */
static tw_bucket_t *bucket_add(tsdb_writer_t *w, tw_series_t *s, int64_t base)
{
    if (s->nb == s->capb) {
        /* one open hour is the common case; a second comes at the turn */
        s->capb = s->capb ? 2 * s->capb : 1;
        s->b = xrealloc(s->b, s->capb * sizeof *s->b);
    }
    if (!s->nb) tw_active_set(w, s->id);
    tw_bucket_t *b = &s->b[s->nb++];
    memset(b, 0, sizeof *b);
    b->base_s = base;
    b->cur_min_seg = b->fl_min_seg = UINT64_MAX;
    b->next_seq = -1;
    return b;
}

void tw_head_reopen(tsdb_writer_t *w, tw_series_t *s, int64_t base_s)
{
    tw_lock(&s->mu);
    tw_bucket_t *b = NULL;
    for (uint32_t i = 0; i < s->nb && !b; i++)
        if (s->b[i].base_s == base_s) b = &s->b[i];
    if (!b) b = bucket_add(w, s, base_s); /* idle since 0: final once the hour closed */
    b->unfinal = 1;
    tw_unlock(&s->mu);
}

/* Inserts pt into s's head (caller holds s->mu). Returns 1 if a new point,
 * 0 if it hit an existing timestamp (a duplicate). */
static int head_insert(tsdb_writer_t *w, tw_series_t *s, const codec_point_t *pt, uint64_t seg,
                       int64_t now_ms)
{
    int64_t base = codec_rowkey_base_time_ms(pt->ts_ms);
    tw_bucket_t *b = NULL;
    for (uint32_t i = s->nb; i-- > 0;)
        if (s->b[i].base_s == base) {
            b = &s->b[i];
            break;
        }
    if (!b) b = bucket_add(w, s, base);
    uint32_t pos = b->n;
    if (b->n && pt->ts_ms <= b->cur[b->n - 1].ts_ms) {
        uint32_t lo = 0, hi = b->n;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (b->cur[mid].ts_ms < pt->ts_ms)
                lo = mid + 1;
            else
                hi = mid;
        }
        pos = lo;
        if (b->cur[pos].ts_ms == pt->ts_ms) {
            if (w->fix_dups) b->cur[pos] = *pt;
            b->last_ms = now_ms;
            if (seg < b->cur_min_seg) b->cur_min_seg = seg;
            return 0;
        }
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->cur = xrealloc(b->cur, b->cap * sizeof *b->cur);
    }
    if (pos < b->n) memmove(&b->cur[pos + 1], &b->cur[pos], (b->n - pos) * sizeof *b->cur);
    b->cur[pos] = *pt;
    if (!b->n++) b->first_ms = now_ms;
    b->last_ms = now_ms;
    if (seg < b->cur_min_seg) b->cur_min_seg = seg;
    return 1;
}

/* ---- recovery -------------------------------------------------------- */

static int rp_segment(void *ctx, uint64_t seg)
{
    (void)seg;
    tsdb_writer_t *w = ctx;
    if (w->rmap) memset(w->rmap, 0, w->rmap_cap * sizeof *w->rmap);
    return 0;
}

/* Did a UID of this (not yet known) series get lost? The write path assigns
 * UIDs unsynced and syncs them before each WAL fdatasync, so a record naming
 * a lost assignment was never synced by us: it reached the disk only by the
 * kernel's own writeback, ahead of the store's log, before a power loss. It
 * and everything after it in its segment were never acknowledged as durable.
 * A lost assignment shows as a UID with no name above its kind's counter (the
 * counter is in the same atomic batch); a deleted name keeps its UID below. */
static int rp_uids_lost(tsdb_writer_t *w, const uint8_t *tsuid, size_t len)
{
    /* A known series was persisted after its UIDs, in the store's ordered log. */
    if (tw_map_find_tsuid(&w->by_tsuid, tsuid, len)) return 0;
    oct_errbuf_t eb;
    int nt = codec_tsuid_check(&w->rk, tsuid, len, &eb);
    if (nt < 0) return 0; /* tw_series_from_tsuid refuses it */
    for (int i = 0; i <= 2 * nt; i++) {
        codec_uid_kind_t k = i == 0 ? CODEC_UID_METRIC : i % 2 ? CODEC_UID_TAGK : CODEC_UID_TAGV;
        size_t off = i == 0 ? 0
                            : w->uid_w[CODEC_UID_METRIC] +
                                  (size_t)((i - 1) / 2) *
                                      (w->uid_w[CODEC_UID_TAGK] + w->uid_w[CODEC_UID_TAGV]) +
                                  (i % 2 ? 0 : w->uid_w[CODEC_UID_TAGK]);
        if (uid_lost_assignment(w->uids, k, oct_get_be_n(tsuid + off, w->uid_w[k]), &eb) == 1)
            return 1;
    }
    return 0;
}

static int rp_series(void *ctx, uint64_t seg, uint64_t id, const uint8_t *tsuid, size_t len)
{
    (void)seg;
    tsdb_writer_t *w = ctx;
    if (id >= (1u << 30)) return 0; /* absurd id: points naming it will fail */
    if (id >= w->rmap_cap) {
        size_t c = w->rmap_cap ? w->rmap_cap : 1024;
        while (c <= id)
            c *= 2;
        w->rmap = xrealloc(w->rmap, c * sizeof *w->rmap);
        memset(w->rmap + w->rmap_cap, 0, (c - w->rmap_cap) * sizeof *w->rmap);
        w->rmap_cap = c;
    }
    tw_series_t *s;
    oct_errbuf_t eb;
    if (rp_uids_lost(w, tsuid, len)) {
        w->rmap[id] = NULL; /* its points end the segment's replay: a torn tail */
        return 0;
    }
    int rc = tw_series_from_tsuid(w, tsuid, len, 1, &s, &eb);
    w->rmap[id] = rc ? NULL : s;
    return 0;
}

static int rp_points(void *ctx, uint64_t seg, const tsdb_wal_point_t *pts, size_t n)
{
    tsdb_writer_t *w = ctx;
    for (size_t i = 0; i < n; i++)
        if (pts[i].id >= w->rmap_cap || !w->rmap[pts[i].id]) return 1;
    int64_t now = oct_clock_wall_ms();
    uint64_t added = 0;
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = w->rmap[pts[i].id];
        codec_point_t p;
        p.ts_ms = pts[i].ts_ms;
        p.is_float = pts[i].flags & 1;
        if (p.is_float)
            p.val.f = pts[i].val.f;
        else
            p.val.i = pts[i].val.i;
        added += (uint64_t)head_insert(w, s, &p, seg, now);
        oct_errbuf_t e;
        if (atomic_load(&s->gone) && tw_series_revive(w, s, &e))
            atomic_fetch_add(&w->meta_errors, 1);
    }
    atomic_fetch_add(&w->head_points, added);
    return 0;
}

/* A DELETE record (docs/delete.md): the points replayed so far in its range
 * go; the records after it are replayed as usual. */
static int rp_delete(void *ctx, const uint8_t *prefix, size_t len, int64_t lo, int64_t hi)
{
    tw_head_purge_prefix(ctx, prefix, len, lo, hi);
    if (lo <= 0 && hi >= TSDB_DELETE_ALL_TIME_END) { /* an all-time delete: lookups too */
        oct_errbuf_t eb;
        long r = tw_series_forget(ctx, NULL, prefix, len, &eb);
        if (r < 0) return (int)r;
    }
    return 0;
}

/* ---- open / close ----------------------------------------------------- */

/* The WAL's pre-sync hook: the UIDs that logged records name were assigned
 * without a sync (tw_series_prepare); they reach stable storage before the
 * records do. */
static int tw_presync(void *ctx)
{
    tsdb_writer_t *w = ctx;
    oct_errbuf_t eb;
    int rc = uid_sync_deferred(w->uids, &eb);
    return rc < 0 ? rc : 0;
}

int tsdb__writer_open(tsdb_t *db, const oct_config_t *cfg, tsdb_writer_t **out, oct_errbuf_t *eb)
{
    tsdb_writer_t *w = xcalloc(1, sizeof *w);
    w->db = db;
    w->st = tsdb_store(db);
    w->uids = tsdb_uids(db);
    const tsdb_layout_t *lay = tsdb_layout(db);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++)
        w->uid_w[k] = lay->uid_width[k];
    w->rk.metric_w = (uint8_t)lay->uid_width[CODEC_UID_METRIC];
    w->rk.tagk_w = (uint8_t)lay->uid_width[CODEC_UID_TAGK];
    w->rk.tagv_w = (uint8_t)lay->uid_width[CODEC_UID_TAGV];
    w->rk.salt_w = (uint8_t)lay->salt_width;
    w->rk.salt_buckets = lay->salt_buckets ? lay->salt_buckets : 1;
    w->max_tags = (int)oct_config_get_int(cfg, "tsd.storage.max_tags");
    if (w->max_tags < 1) w->max_tags = 8;
    w->fix_dups = oct_config_get_bool(cfg, "tsd.storage.fix_duplicates");
    w->meta_tracking = oct_config_get_bool(cfg, "tsd.core.meta.enable_tsuid_tracking");
    w->meta_realtime_ts = oct_config_get_bool(cfg, "tsd.core.meta.enable_realtime_ts");
    w->meta_incrementing = oct_config_get_bool(cfg, "tsd.core.meta.enable_tsuid_incrementing");
    w->tree_processing = oct_config_get_bool(cfg, "tsd.core.tree.enable_processing");
    const char *sp = oct_config_get(cfg, "tsd.core.tag.allow_specialchars");
    if (sp) w->specials = xstrdup(sp);
    w->flush_every_ms = oct_config_get_int(cfg, "tsd.storage.flush_interval");
    if (w->flush_every_ms <= 0) w->flush_every_ms = 1000;
    w->open_flush_ms = oct_config_get_int(cfg, "tsd.storage.head.open_flush_ms");
    w->grace_ms = oct_config_get_int(cfg, "tsd.storage.head.grace_ms");
    /* RocksDB holds its data dir for one process; any other engine may be
     * shared by several TSDs (docs/scale-out.md) */
    w->shared = strcmp(store_backend_name(w->st), "rocksdb") != 0;
    const query_rollup_config_t *ru = tsdb_rollups(db);
    if (w->shared && ru && ru->auto_rollup && !store_is_read_only(w->st)) {
        /* a shared store's rows are compacted by compare-and-set, which
         * computes no rollups: accepting the key would leave the tables
         * silently empty (docs/rollups.md) */
        free(w->specials);
        free(w);
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.rollups.auto=true is not supported on a shared store "
                       "(tsd.storage.backend=%s): its compactions compute none; write rollups "
                       "through /api/rollup instead",
                       store_backend_name(tsdb_store(db)));
    }
    if (w->shared) {
        /* every accepted point in the store within half the bound */
        int64_t vis = oct_config_get_int(cfg, "tsd.storage.shared.visibility_ms");
        w->flush_every_ms = vis / 2 > 0 ? vis / 2 : 1;
        w->sweep_delay_ms = oct_config_get_int(cfg, "tsd.storage.shared.sweep_delay_ms");
        if (w->sweep_delay_ms < 1000) w->sweep_delay_ms = 1000;
    }
    map_init(&w->by_text, 0);
    map_init(&w->by_tsuid, 1);
    w->index = tw_index_new(w);
    pthread_mutex_init(&w->create_mu, NULL);
    pthread_mutex_init(&w->flush_mu, NULL);
    pthread_mutex_init(&w->stop_mu, NULL);
    pthread_cond_init(&w->stop_cv, NULL);
    tw_cond_init_mono(&w->stored_cv); /* tw_shared_wait_stored's deadlines */
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&w->barrier, &ra);
    pthread_rwlockattr_destroy(&ra);

    int rc = tw_series_load(w, eb);
    if (rc) goto fail;
    /* a rename or delete through this registry reaches the text map */
    uid_set_change_hook(w->uids, tw_names_changed, w);
    if (store_is_read_only(w->st)) {
        /* TSDB_OPEN_INDEX: the series index only; puts are refused (writer_of) */
        *out = w;
        return 0;
    }
    if (w->shared) {
        rc = tw_shared_open(w, eb);
        if (rc) goto fail;
    }

    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    oct_strbuf_t path = OCT_STRBUF_INIT;
    oct_strbuf_printf(&path, "%s/wal", dir ? dir : ".");
    tsdb_wal_opts_t wo = {0};
    wo.dir = oct_strbuf_cstr(&path);
    wo.flush_interval_ms = (unsigned)oct_config_get_int(cfg, "tsd.storage.wal.flush_interval_ms");
    wo.sync_interval_ms = (unsigned)oct_config_get_int(cfg, "tsd.storage.wal.sync_interval_ms");
    wo.segment_bytes = (uint64_t)oct_config_get_int(cfg, "tsd.storage.wal.segment_mb") << 20;
    wo.presync = tw_presync;
    wo.presync_ctx = w;
    tsdb_wal_replay_t rp = {rp_segment, rp_series, rp_points, rp_delete};
    rc = tsdb_wal_open(&wo, &rp, w, &w->wal, &w->recovery, eb);
    oct_strbuf_free(&path);
    free(w->rmap);
    w->rmap = NULL;
    w->rmap_cap = 0;
    if (rc) goto fail;
    /* the hours whose blocks an earlier run left not final (docs/rollups.md) */
    if (!w->shared) rc = tw_open_rows_reopen(w, eb);
    if (rc) goto fail;
    rc = tw_flush_start(w, eb);
    if (!rc && w->shared) rc = tw_shared_sweep_start(w, eb);
    if (rc) goto fail;
    *out = w;
    return 0;
fail:
    tsdb__writer_close(w);
    return rc;
}

void tsdb__writer_close(tsdb_writer_t *w)
{
    if (!w) return;
    if (w->uids) uid_set_change_hook(w->uids, NULL, NULL);
    tw_shared_sweep_stop(w);
    tw_flush_stop(w);
    int clean = 0;
    if (w->wal) {
        oct_errbuf_t eb;
        /* Everything into the store, so the log can go. */
        w->closing = 1;
        clean = tw_flush_pass(w, 1, &eb) == 0 && atomic_load(&w->head_points) == 0;
        tsdb_wal_close(w->wal, clean);
    }
    size_t n = atomic_load(&w->n_series);
    for (size_t i = 0; i < n; i++)
        tw_series_free(tw_series_at(w, i));
    for (size_t i = 0; i < TW_LIST_DIR && w->list[i]; i++) {
        free(w->list[i]);
        free((void *)w->active[i]);
    }
    map_free(&w->by_text);
    map_free(&w->by_tsuid);
    tw_index_free(w->index);
    free(w->rmap);
    free(w->specials);
    pthread_rwlock_destroy(&w->barrier);
    pthread_mutex_destroy(&w->create_mu);
    pthread_mutex_destroy(&w->flush_mu);
    pthread_mutex_destroy(&w->stop_mu);
    pthread_cond_destroy(&w->stop_cv);
    pthread_cond_destroy(&w->stored_cv);
    free(w);
}

/* ---- put -------------------------------------------------------------- */

static int writer_of(tsdb_t *db, tsdb_writer_t **w, oct_errbuf_t *eb)
{
    *w = tsdb__writer(db);
    if (!*w || !(*w)->wal) return oct_err(eb, OCT_EINVAL, "the database is open read-only");
    return 0;
}

/* One chunk of at most TW_CHUNK points. Returns accepted count or <0 if the
 * log failed (nothing of this chunk accepted). */
static long put_chunk(tsdb_writer_t *w, const tsdb_dp_t *dps, size_t n, size_t base_index,
                      tsdb_put_error_fn on_error, void *ctx, uint64_t *seq, oct_errbuf_t *eb)
{
    tw_series_t *ser[TW_CHUNK];
    uint8_t rec[TSDB_WAL_REC_HDR + 10 + TW_CHUNK * TW_PT_MAX];
    uint64_t hs[TW_CHUNK];
    size_t acc = 0, rej = 0;
    uint32_t sid[TW_CHUNK]; /* series ids for the WAL record */
    uint8_t sid_ok[TW_CHUNK];
    /* New series are collected and persisted together (one store write
     * per chunk, not per series); fi[i] is point i's entry in fresh. */
    tw_series_t *fresh[TW_CHUNK];
    uint16_t fi[TW_CHUNK];
    size_t nfresh = 0;
    uint64_t names_gen = atomic_load(&w->names_gen);
    /* The lookups go in passes over windows of TW_WIN points so that the
     * cache misses of different points overlap instead of queueing one after
     * another: hash every point and prefetch its shard's table header;
     * prefetch its home slot; prefetch the text key (tw_tkey_t) each home
     * slot holds; then probe. A window's keys fit in L1 (a whole chunk's
     * did not: they were evicted before the probe reached them). */
    for (size_t w0 = 0; w0 < n; w0 += TW_WIN) {
        size_t we = n - w0 < TW_WIN ? n : w0 + TW_WIN;
        for (size_t i = w0; i < we; i++) {
            uint64_t h = tw_text_hash(&dps[i]);
            hs[i] = h;
            __builtin_prefetch(
                atomic_load_explicit(&w->by_text.sh[h >> 58].tab, memory_order_relaxed));
        }
        for (size_t i = w0; i < we; i++) {
            uint64_t h = hs[i];
            tw_tab_t *t = atomic_load_explicit(&w->by_text.sh[h >> 58].tab, memory_order_acquire);
            __builtin_prefetch(&t->slots[(size_t)h & t->mask]);
        }
        for (size_t i = w0; i < we; i++) {
            uint64_t h = hs[i];
            tw_tab_t *t = atomic_load_explicit(&w->by_text.sh[h >> 58].tab, memory_order_acquire);
            tw_series_t *v =
                atomic_load_explicit(&t->slots[(size_t)h & t->mask], memory_order_acquire);
            if (!v || !slot_may_be(v, h)) continue;
            const char *p = (const char *)slot_ptr(v); /* a tw_tkey_t */
            for (size_t off = 0; off < 256; off += 64)
                __builtin_prefetch(p + off);
        }
        for (size_t i = w0; i < we; i++) {
            const tsdb_dp_t *dp = &dps[i];
            const tw_tkey_t *key = map_find_key(&w->by_text, hs[i], dp);
            tw_series_t *s = key ? key->s : NULL;
            sid[i] = key ? key->id : 0;
            sid_ok[i] = key != NULL;
            if (s) { /* what the head insert below reads */
                __builtin_prefetch((const char *)s + offsetof(tw_series_t, mu));
                __builtin_prefetch((const char *)s + offsetof(tw_series_t, b));
            }
            fi[i] = UINT16_MAX;
            if (!s) {
                oct_errbuf_t e;
                e.msg[0] = 0;
                int is_fresh;
                int rc = tw_series_prepare(w, dp, &s, &is_fresh, &e);
                if (rc) {
                    s = NULL;
                    rej++;
                    if (on_error) on_error(ctx, base_index + i, rc, e.msg);
                } else if (is_fresh) {
                    fi[i] = (uint16_t)nfresh;
                    fresh[nfresh++] = s;
                    s = NULL; /* resolved below */
                }
            }
            ser[i] = s;
        }
    }
    if (nfresh) {
        oct_errbuf_t e;
        e.msg[0] = 0;
        int rc = tw_series_commit(w, fresh, nfresh, names_gen, &e);
        for (size_t i = 0; i < n; i++) {
            if (fi[i] == UINT16_MAX) continue;
            ser[i] = fresh[fi[i]];
            if (!ser[i]) {
                rej++;
                if (on_error) on_error(ctx, base_index + i, rc, e.msg);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        acc += ser[i] != NULL;
        if (ser[i] && !sid_ok[i]) sid[i] = ser[i]->id; /* found or created the slow way */
    }
    if (rej) atomic_fetch_add_explicit(&w->points_rejected, rej, memory_order_relaxed);
    if (!acc) return 0;

    /* The POINTS record, built without locks. */
    uint8_t *p = rec + TSDB_WAL_REC_HDR;
    p += codec_varint_put(p, acc);
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ser[i]) continue;
        const tsdb_dp_t *dp = &dps[i];
        p += codec_varint_put(p, sid[i]);
        p += codec_varint_put(p, codec_zigzag((int64_t)((uint64_t)dp->pt.ts_ms - (uint64_t)prev)));
        prev = dp->pt.ts_ms;
        *p++ = (uint8_t)((dp->pt.is_float ? 1 : 0) | (dp->ts_is_ms ? 2 : 0));
        if (dp->pt.is_float) {
            uint64_t bits;
            memcpy(&bits, &dp->pt.val.f, 8);
            oct_put_be64(p, bits);
            p += 8;
        } else {
            p += codec_varint_put(p, codec_zigzag(dp->pt.val.i));
        }
    }
    size_t rlen = tsdb_wal_seal(rec, TSDB_WAL_T_POINTS, (size_t)(p - rec) - TSDB_WAL_REC_HDR);

    pthread_rwlock_rdlock(&w->barrier);
    uint64_t seg;
    int rc = tsdb_wal_lock(w->wal, &seg, eb);
    if (rc) {
        pthread_rwlock_unlock(&w->barrier);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = ser[i];
        if (!s || s->wal_seg == seg) continue;
        uint8_t def[TSDB_WAL_REC_HDR + 10 + 1 + TW_MAX_TSUID];
        uint8_t *q = def + TSDB_WAL_REC_HDR;
        q += codec_varint_put(q, s->id);
        *q++ = s->tsuid_len;
        memcpy(q, s->tsuid, s->tsuid_len);
        q += s->tsuid_len;
        size_t dl = tsdb_wal_seal(def, TSDB_WAL_T_SERIES, (size_t)(q - def) - TSDB_WAL_REC_HDR);
        tsdb_wal_append_locked(w->wal, def, dl);
        s->wal_seg = seg;
    }
    tsdb_wal_append_locked(w->wal, rec, rlen);
    *seq = tsdb_wal_unlock(w->wal);

    int64_t now = oct_clock_wall_ms();
    uint64_t added = 0, dups = 0;
    /* Each insert misses the cache on the end of its series' head (a point
     * array of its own). The next point's series is locked ahead with a
     * trylock and its head end prefetched, so that miss overlaps this
     * insert. Only a trylock is taken while a lock is held, so two writers
     * can never wait for each other; a busy series is simply not
     * prefetched. */
    tw_series_t *held = NULL; /* locked ahead for the next point */
    int revive = 0;           /* a series an all-time delete forgot got a point */
    for (size_t i = 0; i < n; i++) {
        tw_series_t *s = ser[i];
        if (!s) continue;
        if (held != s) tw_lock(&s->mu);
        held = NULL;
        size_t j = i + 1;
        while (j < n && !ser[j])
            j++;
        if (j < n && ser[j] != s && tw_trylock(&ser[j]->mu)) {
            held = ser[j];
            head_prefetch(held, dps[j].pt.ts_ms);
        }
        int r = head_insert(w, s, &dps[i].pt, seg, now);
        revive |= atomic_load_explicit(&s->gone, memory_order_relaxed);
        tw_unlock(&s->mu);
        added += (uint64_t)r;
        dups += (uint64_t)!r;
    }
    pthread_rwlock_unlock(&w->barrier);
    for (size_t i = 0; revive && i < n; i++) {
        oct_errbuf_t e;
        if (ser[i] && atomic_load(&ser[i]->gone) && tw_series_revive(w, ser[i], &e))
            atomic_fetch_add_explicit(&w->meta_errors, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&w->points_accepted, acc, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->head_points, added, memory_order_relaxed);
    if (w->meta_incrementing) tw_meta_points(w, ser, n);
    if (dups) atomic_fetch_add_explicit(&w->duplicates, dups, memory_order_relaxed);
    return (long)acc;
}

long tsdb_put_batch(tsdb_t *db, const tsdb_dp_t *dps, size_t n, tsdb_put_error_fn on_error,
                    void *ctx, uint64_t *seq, oct_errbuf_t *eb)
{
    tsdb_writer_t *w;
    int rc = writer_of(db, &w, eb);
    if (rc) return rc;
    long total = 0;
    uint64_t last = 0;
    for (size_t off = 0; off < n; off += TW_CHUNK) {
        size_t k = n - off < TW_CHUNK ? n - off : TW_CHUNK;
        uint64_t s = 0;
        long r = put_chunk(w, dps + off, k, off, on_error, ctx, &s, eb);
        if (r < 0) {
            if (total == 0) return r;
            /* Earlier chunks are in; report the rest as failed. */
            for (size_t i = off; i < n; i++)
                if (on_error) on_error(ctx, i, (int)r, eb ? eb->msg : "write-ahead log failed");
            atomic_fetch_add_explicit(&w->points_rejected, n - off, memory_order_relaxed);
            break;
        }
        total += r;
        if (s) last = s;
    }
    if (seq) *seq = last;
    return total;
}

typedef struct {
    int rc;
    oct_errbuf_t *eb;
} tw_one_ctx_t;

static void put_one_err(void *ctx, size_t index, int rc, const char *msg)
{
    (void)index;
    tw_one_ctx_t *c = ctx;
    c->rc = rc;
    oct_err(c->eb, rc, "%s", msg);
}

int tsdb_put(tsdb_t *db, const tsdb_dp_t *dp, uint64_t *seq, oct_errbuf_t *eb)
{
    tw_one_ctx_t c = {0, eb};
    long r = tsdb_put_batch(db, dp, 1, put_one_err, &c, seq, eb);
    if (r < 0) return (int)r;
    return c.rc;
}

int tsdb_wait_durable(tsdb_t *db, uint64_t seq, int fsync, int timeout_ms, oct_errbuf_t *eb)
{
    tsdb_writer_t *w;
    int rc = writer_of(db, &w, eb);
    if (rc) return rc;
    rc = tsdb_wal_wait(w->wal, seq, fsync, timeout_ms, eb);
    /* shared store: sync means in the store, replicated (docs/scale-out.md) */
    if (!rc && fsync && w->shared) rc = tw_shared_wait_stored(w, seq, timeout_ms, eb);
    return rc;
}

int tsdb_flush(tsdb_t *db, oct_errbuf_t *eb)
{
    tsdb_writer_t *w;
    int rc = writer_of(db, &w, eb);
    if (rc) return rc;
    return tw_flush_pass(w, 1, eb);
}

void tsdb_stats(tsdb_t *db, tsdb_stats_t *out)
{
    memset(out, 0, sizeof *out);
    tsdb_writer_t *w = tsdb__writer(db);
    if (!w) return;
    out->points_accepted = atomic_load(&w->points_accepted);
    out->points_rejected = atomic_load(&w->points_rejected);
    out->duplicates = atomic_load(&w->duplicates);
    out->series = atomic_load(&w->n_series);
    out->series_created = atomic_load(&w->series_created);
    out->head_points = atomic_load(&w->head_points);
    out->blocks_flushed = atomic_load(&w->blocks_flushed);
    out->flush_errors = atomic_load(&w->flush_errors);
    if (w->wal) tsdb_wal_counters(w->wal, &out->wal_bytes_written, &out->wal_syncs);
    out->wal_replayed_records = w->recovery.records;
    out->wal_torn_bytes = w->recovery.torn_bytes;
}
