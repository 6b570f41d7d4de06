/* uid.c -- name <-> UID registry over the tsdb-uid table (see uid.h).
 *
 * Every mutation is a store_cas in the kind's partition, so it is atomic with
 * respect to every other writer of that kind; reads go cache-first. The
 * retry loops are bounded: a CAS only fails when another writer changed the
 * partition, and every retry re-reads what it compares against. */
#include "uid/uid.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "codec/name.h"
#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "uid/uid_cache.h"
#include "uid/uid_int.h"

#define UID_CAS_ATTEMPTS    1000
#define UID_RANDOM_ATTEMPTS 10

void uid_options_default(uid_options_t *o)
{
    memset(o, 0, sizeof *o);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        o->width[k] = 3;
        o->auto_create[k] = k != CODEC_UID_METRIC;
    }
}

int uid_registry_open(store_t *st, const uid_options_t *opts, uid_registry_t **out,
                      oct_errbuf_t *eb)
{
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        if (opts->width[k] < 1 || opts->width[k] > 8)
            return oct_err(eb, OCT_EINVAL, "UID width for %s must be 1..8, got %u",
                           codec_uid_kind_qualifier((codec_uid_kind_t)k), opts->width[k]);
    }
    if (opts->random_metrics && opts->width[CODEC_UID_METRIC] > 7)
        return oct_err(eb, OCT_EINVAL, "random metric UIDs need a metric width of at most 7 bytes");
    uid_registry_t *r = xcalloc(1, sizeof *r);
    r->st = st;
    r->allow_special = xstrdup(opts->allow_specialchars ? opts->allow_specialchars : "");
    r->realtime_uid_meta = opts->realtime_uid_meta;
    pthread_mutex_init(&r->sync_mu, NULL);
    pthread_mutex_init(&r->hook_mu, NULL);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        uid_kind_state_t *s = &r->k[k];
        s->width = opts->width[k];
        s->max = codec_uid_max(s->width);
        s->auto_create = opts->auto_create[k];
        s->random = k == CODEC_UID_METRIC && opts->random_metrics;
        s->cache = uid_cache_new();
        pthread_mutex_init(&s->batch_mu, NULL);
        pthread_mutex_init(&s->names_mu, NULL);
        s->qual = oct_slice_str(codec_uid_kind_qualifier((codec_uid_kind_t)k));
        s->meta_qual = oct_slice_str(codec_uid_kind_meta_qualifier((codec_uid_kind_t)k));
    }
    /* renames and deletes of other registries on this data set reach our caches */
    int rc = uid__watch_open(r, eb);
    if (rc) {
        uid_registry_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void uid_registry_close(uid_registry_t *r)
{
    if (!r) return;
    uid__watch_close(r);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        uid_cache_free(r->k[k].cache);
        uid__names_free(&r->k[k]);
        pthread_mutex_destroy(&r->k[k].names_mu);
        pthread_mutex_destroy(&r->k[k].batch_mu);
    }
    free(r->allow_special);
    pthread_mutex_destroy(&r->sync_mu);
    pthread_mutex_destroy(&r->hook_mu);
    free(r);
}

store_t *uid__store(uid_registry_t *r)
{
    return r->st;
}

unsigned uid_width(const uid_registry_t *r, codec_uid_kind_t kind)
{
    return r->k[kind].width;
}

void uid_drop_caches(uid_registry_t *r)
{
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        atomic_fetch_add(&r->k[k].inval_gen, 1);
        uid_cache_clear(r->k[k].cache);
    }
}

void uid_kind_stats(uid_registry_t *r, codec_uid_kind_t kind, uid_kind_stats_t *out)
{
    uid_cache_t *c = r->k[kind].cache;
    uid_cache_lookups(c, &out->hits, &out->misses);
    out->size = uid_cache_size(c);
}

/* Callers only pass ids they checked against s->max. */
static void uid_encode(const uid_kind_state_t *s, uint64_t id, uint8_t *out)
{
    oct_put_be_n(out, id, s->width);
}

/* "[0, 0, 1]" for an in-range id, the decimal number otherwise. */
static const char *uid_javabytes(const uid_kind_state_t *s, uint64_t id, char *out, size_t cap)
{
    uint8_t b[8];
    if (id <= s->max) {
        uid_encode(s, id, b);
        if (codec_uid_to_javabytes(b, s->width, out, cap) >= 0) return out;
    }
    snprintf(out, cap, "%llu", (unsigned long long)id);
    return out;
}

static int uid_no_such_name(oct_errbuf_t *eb, const uid_kind_state_t *s, const uint8_t *name,
                            size_t len)
{
    return oct_err(eb, OCT_ENOSUCHNAME, "No such name for '%s': '%.*s'", uid_kind_str(s),
                   (int)(len > 1024 ? 1024 : len), (const char *)name);
}

static int uid_no_such_id(oct_errbuf_t *eb, const uid_kind_state_t *s, uint64_t id)
{
    char jb[64];
    return oct_err(eb, OCT_ENOSUCHID, "No such unique ID for '%s': %s", uid_kind_str(s),
                   uid_javabytes(s, id, jb, sizeof jb));
}

/* Reads the forward cell straight from the store (bypassing the cache).
 * Returns 1 found, 0 absent, <0 error. */
static int uid_read_forward(uid_registry_t *r, uid_kind_state_t *s, oct_slice_t name, uint64_t *id,
                            oct_errbuf_t *eb)
{
    store_result_t res = STORE_RESULT_INIT;
    *id = 0;
    int rc = store_get_cell(r->st, STORE_TABLE_UID, s->qual, name, UID_FAM_ID, s->qual, &res, eb);
    if (rc == 1) {
        oct_slice_t v = res.cells[0].value;
        if (v.len != s->width) {
            rc = oct_err(eb, OCT_ECORRUPT,
                         "Found id.length = %zu which is != %u required for '%s' (name '%.*s')",
                         v.len, s->width, uid_kind_str(s), (int)name.len, (const char *)name.ptr);
        } else {
            *id = codec_uid_decode(v.ptr, s->width);
        }
    }
    store_result_free(&res);
    return rc;
}

/* Reads the reverse cell of 'id' into res (appended). 1 found, 0 absent, <0 error. */
static int uid_read_reverse(uid_registry_t *r, uid_kind_state_t *s, uint64_t id,
                            store_result_t *res, oct_errbuf_t *eb)
{
    uint8_t b[8];
    uid_encode(s, id, b);
    return store_get_cell(r->st, STORE_TABLE_UID, s->qual, oct_slice(b, s->width), UID_FAM_NAME,
                          s->qual, res, eb);
}

/* Reads the counter: 1 and *c if present, 0 if absent (then *c = 0). */
static int uid_read_counter(uid_registry_t *r, uid_kind_state_t *s, uint64_t *c, oct_errbuf_t *eb)
{
    store_result_t res = STORE_RESULT_INIT;
    *c = 0;
    int rc = store_get_cell(r->st, STORE_TABLE_UID, s->qual, UID_COUNTER_ROW, UID_FAM_ID, s->qual,
                            &res, eb);
    if (rc == 1) {
        if (res.cells[0].value.len != 8) {
            rc = oct_err(eb, OCT_ECORRUPT, "Invalid maximum ID for %s: should be on 8 bytes",
                         uid_kind_str(s));
        } else {
            int64_t v = (int64_t)oct_get_be64(res.cells[0].value.ptr);
            *c = v < 0 ? 0 : (uint64_t)v;
        }
    }
    store_result_free(&res);
    return rc;
}

int uid_get_id(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name, size_t len,
               uint64_t *id, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    if (uid_cache_get_id(s->cache, name, len, id)) return 0;
    if (len == 0 || len > UID_NAME_MAX) return uid_no_such_name(eb, s, name, len);
    uint64_t gen = atomic_load(&s->inval_gen);
    int rc = uid_read_forward(r, s, oct_slice(name, len), id, eb);
    if (rc < 0) return rc;
    if (rc == 0) return uid_no_such_name(eb, s, name, len);
    uid__cache_fill(s, gen, name, len, *id);
    return 0;
}

int uid_get_name(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, uint8_t *buf, size_t cap,
                 size_t *len, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    long n = uid_cache_get_name(s->cache, id, buf, cap);
    if (n >= 0) {
        *len = (size_t)n;
        return (size_t)n > cap ? oct_err(eb, OCT_ENOSPC, "name longer than %zu bytes", cap) : 0;
    }
    if (id == 0 || id > s->max) return uid_no_such_id(eb, s, id);
    store_result_t res = STORE_RESULT_INIT;
    uint64_t gen = atomic_load(&s->inval_gen);
    int rc = uid_read_reverse(r, s, id, &res, eb);
    if (rc == 1) {
        oct_slice_t v = res.cells[0].value;
        uid__cache_fill(s, gen, v.ptr, v.len, id);
        *len = v.len;
        if (v.len > cap) {
            rc = oct_err(eb, OCT_ENOSPC, "name longer than %zu bytes", cap);
        } else {
            if (v.len) memcpy(buf, v.ptr, v.len);
            rc = 0;
        }
    } else if (rc == 0) {
        rc = uid_no_such_id(eb, s, id);
    }
    store_result_free(&res);
    return rc;
}

static int uid_validate(uid_registry_t *r, uid_kind_state_t *s, codec_uid_kind_t kind,
                        const uint8_t *name, size_t len, oct_errbuf_t *eb)
{
    if (len > UID_NAME_MAX)
        return oct_err(eb, OCT_EBADNAME, "Invalid %s name: longer than %d bytes", uid_kind_str(s),
                       UID_NAME_MAX);
    static const char *const what[CODEC_UID_N_KINDS] = {"metric name", "tag name", "tag value"};
    return codec_name_validate(what[kind], (const char *)name, len, r->allow_special, eb);
}

/* One sequential assignment attempt. Returns 0 (assigned, *id set),
 * OCT_ECASFAIL (raced: retry), or an error. */
static int uid_assign_sequential(uid_registry_t *r, uid_kind_state_t *s, oct_slice_t name,
                                 uint64_t *id, int deferred, oct_errbuf_t *eb)
{
    uint64_t c, hint = atomic_load_explicit(&s->counter_hint, memory_order_relaxed);
    int have_counter = 1;
    if (hint && hint - 1 < s->max) {
        c = hint - 1;
    } else {
        hint = 0;
        have_counter = uid_read_counter(r, s, &c, eb);
        if (have_counter < 0) return have_counter;
    }
    /* Skip UIDs whose reverse cell is taken (a store written by OpenTSDB can
     * hold leaked reverse rows above its counter). */
    uint64_t cand = c + 1;
    for (; !hint;) {
        if (cand > s->max || cand == 0)
            return oct_err(eb, OCT_EEXHAUSTED,
                           "All Unique IDs for %s on %u bytes are already "
                           "assigned!",
                           uid_kind_str(s), s->width);
        store_result_t res = STORE_RESULT_INIT;
        int rc = uid_read_reverse(r, s, cand, &res, eb);
        store_result_free(&res);
        if (rc < 0) return rc;
        if (rc == 0) break;
        cand++;
    }
    uint8_t cbuf[8], nbuf[8], idb[8];
    oct_put_be64(cbuf, c);
    oct_put_be64(nbuf, cand);
    uid_encode(s, cand, idb);
    oct_slice_t ids = oct_slice(idb, s->width);
    store_check_t checks[3] = {
        {STORE_CHECK_ABSENT, {name, UID_FAM_ID, s->qual, {0}}},
        {have_counter ? STORE_CHECK_EQUALS : STORE_CHECK_ABSENT,
         {UID_COUNTER_ROW, UID_FAM_ID, s->qual, oct_slice(cbuf, 8)}},
        {STORE_CHECK_ABSENT, {ids, UID_FAM_NAME, s->qual, {0}}},
    };
    /* Same outcome as OpenTSDB's increment, reverse, forward; in one step. */
    store_op_t ops[3] = {
        {STORE_OP_PUT, s->qual, {UID_COUNTER_ROW, UID_FAM_ID, s->qual, oct_slice(nbuf, 8)}},
        {STORE_OP_PUT, s->qual, {ids, UID_FAM_NAME, s->qual, name}},
        {STORE_OP_PUT, s->qual, {name, UID_FAM_ID, s->qual, ids}},
    };
    int rc;
    if (deferred) {
        /* Counted as in flight before the write: a racer may read the new
         * cells from the store before this call returns (uid_sync_deferred). */
        atomic_fetch_add(&r->def_inflight, 1);
        rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, 3, ops, 3, 0, eb);
        atomic_fetch_add(&r->def_done, 1);
        atomic_fetch_sub(&r->def_inflight, 1);
    } else {
        rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, 3, ops, 3, STORE_SYNC, eb);
    }
    if (rc == 0) *id = cand;
    if (hint || rc == 0)
        atomic_store_explicit(&s->counter_hint, rc == 0 ? cand + 1 : 0, memory_order_relaxed);
    return rc;
}

static int uid_assign_random(uid_registry_t *r, uid_kind_state_t *s, oct_slice_t name, uint64_t *id,
                             oct_errbuf_t *eb)
{
    uint64_t cand = 0;
    while (cand == 0) {
        if (getrandom(&cand, sizeof cand, 0) != (ssize_t)sizeof cand)
            return oct_err(eb, OCT_EIO, "getrandom failed");
        cand &= s->max;
    }
    uint8_t idb[8];
    uid_encode(s, cand, idb);
    oct_slice_t ids = oct_slice(idb, s->width);
    store_check_t checks[2] = {
        {STORE_CHECK_ABSENT, {name, UID_FAM_ID, s->qual, {0}}},
        {STORE_CHECK_ABSENT, {ids, UID_FAM_NAME, s->qual, {0}}},
    };
    store_op_t ops[2] = {
        {STORE_OP_PUT, s->qual, {ids, UID_FAM_NAME, s->qual, name}},
        {STORE_OP_PUT, s->qual, {name, UID_FAM_ID, s->qual, ids}},
    };
    int rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, 2, ops, 2, STORE_SYNC, eb);
    if (rc == 0) *id = cand;
    return rc;
}

/* uid_get_or_create; 'deferred' leaves a sequential assignment unsynced. */
static int uid_get_or_create_impl(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                                  size_t len, uint64_t *id, int *created, int deferred,
                                  oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    if (created) *created = 0;
    if (uid_cache_get_id(s->cache, name, len, id)) return 0;
    int rc = uid_validate(r, s, kind, name, len, eb);
    if (rc) return rc;
    oct_slice_t nm = oct_slice(name, len);
    uint64_t gen = atomic_load(&s->inval_gen);
    int attempts = s->random ? UID_RANDOM_ATTEMPTS : UID_CAS_ATTEMPTS;
    for (int i = 0; i < attempts; i++) {
        rc = uid_read_forward(r, s, nm, id, eb);
        if (rc < 0) return rc;
        if (rc == 1) break; /* exists (possibly just assigned by a racer) */
        /* Random UIDs stay synced: with no counter in the batch, a lost
         * assignment could not be told from a deleted one at WAL replay. */
        rc = s->random ? uid_assign_random(r, s, nm, id, eb)
                       : uid_assign_sequential(r, s, nm, id, deferred, eb);
        if (rc == 0) {
            if (created) *created = 1;
            if (r->realtime_uid_meta) {
                /* As OpenTSDB: a failed meta write does not undo the UID. */
                oct_errbuf_t meb;
                uid__cache_fill(s, gen, name, len, *id);
                uid_meta_t m = {NULL, NULL, NULL, oct_clock_wall_ms() / 1000, NULL};
                if (uid_meta_put(r, kind, *id, &m, &meb) != 0) {
                    /* the UID stands; /api/uid/uidmeta can write its meta later */
                }
            }
            break;
        }
        if (rc != OCT_ECASFAIL) return rc;
    }
    if (rc == OCT_ECASFAIL)
        return oct_err(eb, OCT_EIO, "Failed to assign an ID for %s '%.*s' after %d attempts",
                       uid_kind_str(s), (int)len, (const char *)name, attempts);
    uid__cache_fill(s, gen, name, len, *id);
    return 0;
}

int uid_get_or_create(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name, size_t len,
                      uint64_t *id, int *created, oct_errbuf_t *eb)
{
    int rc = uid_get_or_create_impl(r, kind, name, len, id, created, 0, eb);
    /* The caller acknowledges the UID as durable: if the write path assigned
     * it (unsynced), make that durable first. Nothing to do in the common
     * case (two atomic loads). */
    if (rc == 0 && (!created || !*created)) {
        int s = uid_sync_deferred(r, eb);
        if (s < 0) return s;
    }
    return rc;
}

int uid_resolve_for_write(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name, size_t len,
                          uint64_t *id, oct_errbuf_t *eb)
{
    if (r->k[kind].auto_create) return uid_get_or_create(r, kind, name, len, id, NULL, eb);
    return uid_get_id(r, kind, name, len, id, eb);
}

int uid_resolve_for_write_deferred(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                                   size_t len, uint64_t *id, oct_errbuf_t *eb)
{
    if (r->k[kind].auto_create) return uid_get_or_create_impl(r, kind, name, len, id, NULL, 1, eb);
    return uid_get_id(r, kind, name, len, id, eb);
}

int uid_peek_for_write(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name, size_t len,
                       uint64_t *id, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    if (!s->auto_create) return uid_get_id(r, kind, name, len, id, eb);
    if (uid_cache_get_id(s->cache, name, len, id)) return 0;
    /* Not read from the store: the batch's CAS checks that the name is
     * absent, and only a failure reads (a name in the store, not yet in the
     * cache, is rare after the first puts). */
    int rc = uid_validate(r, s, kind, name, len, eb);
    if (rc == 0) *id = 0;
    return rc;
}

/* Index sort by name, for the batch's duplicate check. */
typedef struct {
    const oct_slice_t *names;
    size_t i;
} uid_nref_t;

static int uid_nref_cmp(const void *a, const void *b)
{
    const uid_nref_t *x = a, *y = b;
    int c = oct_slice_cmp(x->names[x->i], y->names[y->i]);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The first k UIDs above c whose reverse cell is free (a store written by
 * OpenTSDB may hold leaked reverse rows above its counter), into out[]:
 * one multi-get per window of the UIDs still missing. */
static int uid_free_after(uid_registry_t *r, uid_kind_state_t *s, uint64_t c, size_t k,
                          uint64_t *out, oct_errbuf_t *eb)
{
    uint8_t *kb = xmalloc(k * 8);
    store_key_t *keys = xmalloc(k * sizeof *keys);
    store_result_t res = STORE_RESULT_INIT;
    size_t got = 0;
    uint64_t next = c + 1;
    int rc = 0;
    while (!rc && got < k) {
        size_t w = k - got;
        if (next == 0 || next > s->max || w - 1 > s->max - next) {
            rc = oct_err(eb, OCT_EEXHAUSTED,
                         "All Unique IDs for %s on %u bytes are already assigned!", uid_kind_str(s),
                         s->width);
            break;
        }
        for (size_t j = 0; j < w; j++) {
            uid_encode(s, next + j, kb + 8 * j);
            keys[j] = (store_key_t){s->qual, oct_slice(kb + 8 * j, s->width)};
        }
        store_result_reset(&res);
        rc = store_multi_get(r->st, STORE_TABLE_UID, keys, w, UID_FAM_NAME, &res, eb);
        if (rc < 0) break;
        rc = 0;
        size_t ci = 0; /* cells come in key order */
        for (size_t j = 0; j < w; j++) {
            int taken = 0;
            for (; ci < res.n && oct_slice_eq(res.cells[ci].row, keys[j].row); ci++)
                taken |= oct_slice_eq(res.cells[ci].qualifier, s->qual);
            if (!taken) out[got++] = next + j;
        }
        next += w;
    }
    store_result_free(&res);
    free(keys);
    free(kb);
    return rc;
}

/* One attempt at assigning todo[0..k) (distinct names, none in the store
 * when last read) the next k free UIDs in one deferred CAS. */
static int uid_assign_batch(uid_registry_t *r, uid_kind_state_t *s, const oct_slice_t *names,
                            const size_t *todo, size_t k, uint64_t *ids, oct_errbuf_t *eb)
{
    uint64_t c, hint = atomic_load_explicit(&s->counter_hint, memory_order_relaxed);
    int have_counter = 1;
    if (hint && k <= s->max && hint - 1 <= s->max - k) {
        c = hint - 1;
    } else {
        hint = 0;
        have_counter = uid_read_counter(r, s, &c, eb);
        if (have_counter < 0) return have_counter;
    }
    uint8_t *idb = xmalloc(k * 8);
    store_check_t *checks = xmalloc((2 * k + 1) * sizeof *checks);
    store_op_t *ops = xmalloc((2 * k + 1) * sizeof *ops);
    uint64_t *free_ids = hint ? NULL : xmalloc(k * sizeof *free_ids);
    uint8_t cbuf[8], nbuf[8];
    uint64_t cand = c;
    /* With a hint the CAS checks the reverse cells; without, skip the taken
     * ones as uid_assign_sequential does (read in one go: after a lost race
     * with another TSD this is the usual path). */
    int rc = hint ? 0 : uid_free_after(r, s, c, k, free_ids, eb);
    for (size_t j = 0; j < k && !rc; j++) {
        cand = hint ? cand + 1 : free_ids[j];
        if (cand > s->max || cand == 0) {
            rc = oct_err(eb, OCT_EEXHAUSTED,
                         "All Unique IDs for %s on %u bytes are already assigned!", uid_kind_str(s),
                         s->width);
            break;
        }
        ids[todo[j]] = cand;
        uid_encode(s, cand, idb + 8 * j);
        oct_slice_t id = oct_slice(idb + 8 * j, s->width), nm = names[todo[j]];
        checks[2 * j] = (store_check_t){STORE_CHECK_ABSENT, {nm, UID_FAM_ID, s->qual, {0}}};
        checks[2 * j + 1] = (store_check_t){STORE_CHECK_ABSENT, {id, UID_FAM_NAME, s->qual, {0}}};
        ops[2 * j] = (store_op_t){STORE_OP_PUT, s->qual, {id, UID_FAM_NAME, s->qual, nm}};
        ops[2 * j + 1] = (store_op_t){STORE_OP_PUT, s->qual, {nm, UID_FAM_ID, s->qual, id}};
    }
    if (!rc) {
        oct_put_be64(cbuf, c);
        oct_put_be64(nbuf, cand);
        checks[2 * k] = (store_check_t){have_counter ? STORE_CHECK_EQUALS : STORE_CHECK_ABSENT,
                                        {UID_COUNTER_ROW, UID_FAM_ID, s->qual, oct_slice(cbuf, 8)}};
        ops[2 * k] = (store_op_t){
            STORE_OP_PUT, s->qual, {UID_COUNTER_ROW, UID_FAM_ID, s->qual, oct_slice(nbuf, 8)}};
        atomic_fetch_add(&r->def_inflight, 1);
        rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, 2 * k + 1, ops, 2 * k + 1, 0, eb);
        atomic_fetch_add(&r->def_done, 1);
        atomic_fetch_sub(&r->def_inflight, 1);
        if (hint || rc == 0)
            atomic_store_explicit(&s->counter_hint, rc == 0 ? cand + 1 : 0, memory_order_relaxed);
    }
    free(idb);
    free(checks);
    free(ops);
    free(free_ids);
    return rc;
}

/* After a lost race: reads the forward cells of names[todo[0..*k)] in one
 * multi-get (another registry, maybe another TSD, may have assigned them),
 * caches those found and keeps in todo the ones still absent. */
static int uid_read_forwards(uid_registry_t *r, uid_kind_state_t *s, uint64_t gen,
                             const oct_slice_t *names, size_t *todo, size_t *k, uint64_t *ids,
                             oct_errbuf_t *eb)
{
    store_key_t *keys = xmalloc(*k * sizeof *keys);
    for (size_t j = 0; j < *k; j++)
        keys[j] = (store_key_t){s->qual, names[todo[j]]};
    store_result_t res = STORE_RESULT_INIT;
    int rc = store_multi_get(r->st, STORE_TABLE_UID, keys, *k, UID_FAM_ID, &res, eb);
    size_t c = 0, left = 0; /* cells come in key order, at most one per name */
    for (size_t j = 0; rc >= 0 && j < *k; j++) {
        const oct_slice_t *nm = &names[todo[j]];
        int found = 0;
        for (; rc >= 0 && c < res.n && oct_slice_eq(res.cells[c].row, *nm); c++) {
            oct_slice_t v = res.cells[c].value;
            if (!oct_slice_eq(res.cells[c].qualifier, s->qual)) continue;
            if (v.len != s->width)
                rc = oct_err(eb, OCT_ECORRUPT,
                             "Found id.length = %zu which is != %u required for '%s'", v.len,
                             s->width, uid_kind_str(s));
            else
                ids[todo[j]] = codec_uid_decode(v.ptr, s->width);
            found = 1;
        }
        if (!found)
            todo[left++] = todo[j];
        else if (rc >= 0)
            uid__cache_fill(s, gen, nm->ptr, nm->len, ids[todo[j]]);
    }
    *k = left;
    store_result_free(&res);
    free(keys);
    return rc < 0 ? rc : 0;
}

int uid_resolve_batch_deferred(uid_registry_t *r, codec_uid_kind_t kind, const oct_slice_t *names,
                               size_t n, uint64_t *ids, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    if (n == 0) return 0;
    if (!s->auto_create || s->random || n == 1) {
        for (size_t i = 0; i < n; i++) {
            int rc =
                uid_resolve_for_write_deferred(r, kind, names[i].ptr, names[i].len, &ids[i], eb);
            if (rc) return rc;
        }
        return 0;
    }
    /* dup[i]: the first index with the same name (i itself if first) */
    size_t *dup = xmalloc(n * sizeof *dup), *todo = xmalloc(n * sizeof *todo);
    uid_nref_t *refs = xmalloc(n * sizeof *refs);
    for (size_t i = 0; i < n; i++)
        refs[i] = (uid_nref_t){names, i};
    qsort(refs, n, sizeof *refs, uid_nref_cmp);
    for (size_t i = 0; i < n; i++)
        dup[refs[i].i] = i && oct_slice_eq(names[refs[i].i], names[refs[i - 1].i])
                             ? dup[refs[i - 1].i]
                             : refs[i].i;
    free(refs);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (dup[i] == i) rc = uid_validate(r, s, kind, names[i].ptr, names[i].len, eb);
    size_t k = 0;
    int locked = !rc;
    if (locked) pthread_mutex_lock(&s->batch_mu);
    for (int attempt = 0; !rc && attempt < UID_CAS_ATTEMPTS; attempt++) {
        uint64_t gen = atomic_load(&s->inval_gen);
        /* What is unknown, in order of first appearance (the UIDs come out
         * as one-by-one assignment in put order would give them). The first
         * attempt trusts the cache, which batches of this registry fill
         * before they let go of batch_mu: its CAS checks that every name is
         * absent, and if one is in the store after all, the next attempt
         * reads them all. */
        k = 0;
        for (size_t i = 0; i < n; i++)
            if (dup[i] == i && !uid_cache_get_id(s->cache, names[i].ptr, names[i].len, &ids[i]))
                todo[k++] = i;
        if (attempt > 0 && k > 0) rc = uid_read_forwards(r, s, gen, names, todo, &k, ids, eb);
        if (rc || k == 0) break;
        rc = uid_assign_batch(r, s, names, todo, k, ids, eb);
        if (rc == 0) {
            for (size_t j = 0; j < k; j++) {
                const oct_slice_t *nm = &names[todo[j]];
                uid__cache_fill(s, gen, nm->ptr, nm->len, ids[todo[j]]);
                if (r->realtime_uid_meta) {
                    /* As OpenTSDB: a failed meta write does not undo the UID. */
                    oct_errbuf_t meb;
                    uid_meta_t m = {NULL, NULL, NULL, oct_clock_wall_ms() / 1000, NULL};
                    if (uid_meta_put(r, kind, ids[todo[j]], &m, &meb) != 0) {
                        /* the UID stands; /api/uid/uidmeta can write its meta later */
                    }
                }
            }
            k = 0;
            break;
        }
        if (rc == OCT_ECASFAIL) rc = 0;
    }
    if (locked) pthread_mutex_unlock(&s->batch_mu);
    if (!rc && k)
        rc = oct_err(eb, OCT_EIO, "Failed to assign IDs for %zu %s names after %d attempts", k,
                     uid_kind_str(s), UID_CAS_ATTEMPTS);
    for (size_t i = 0; !rc && i < n; i++)
        ids[i] = ids[dup[i]];
    free(dup);
    free(todo);
    return rc;
}

int uid_sync_deferred(uid_registry_t *r, oct_errbuf_t *eb)
{
    /* An assignment bumps def_done before it leaves def_inflight, so reading
     * in the other order cannot miss one that ends between the loads. Any
     * assignment whose cells a caller could have seen before this call has
     * either finished (def_done moved past def_synced, or a sync started
     * after it finished) or is still in flight: both sync. */
    uint64_t inflight = atomic_load(&r->def_inflight);
    uint64_t done = atomic_load(&r->def_done);
    if (!inflight && done == atomic_load(&r->def_synced)) return 0;
    pthread_mutex_lock(&r->sync_mu);
    inflight = atomic_load(&r->def_inflight);
    done = atomic_load(&r->def_done);
    int rc = 0;
    if (inflight || done != atomic_load(&r->def_synced)) {
        rc = store_sync(r->st, eb);
        if (rc == 0) {
            atomic_store(&r->def_synced, done);
            atomic_fetch_add(&r->def_syncs, 1);
            rc = 1;
        }
    }
    pthread_mutex_unlock(&r->sync_mu);
    return rc;
}

uint64_t uid_deferred_syncs(const uid_registry_t *r)
{
    return atomic_load(&((uid_registry_t *)r)->def_syncs);
}

void uid_set_change_hook(uid_registry_t *r, uid_change_fn fn, void *ctx)
{
    pthread_mutex_lock(&r->hook_mu);
    r->on_change = fn;
    r->on_change_ctx = ctx;
    pthread_mutex_unlock(&r->hook_mu);
}

int uid_rename(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *old_name, size_t old_len,
               const uint8_t *new_name, size_t new_len, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    int rc = uid_validate(r, s, kind, new_name, new_len, eb);
    if (rc) return rc;
    oct_slice_t on = oct_slice(old_name, old_len), nn = oct_slice(new_name, new_len);
    for (int i = 0; i < UID_CAS_ATTEMPTS; i++) {
        uint64_t id, other;
        rc = uid_read_forward(r, s, on, &id, eb);
        if (rc < 0) return rc;
        if (rc == 0) return uid_no_such_name(eb, s, old_name, old_len);
        rc = uid_read_forward(r, s, nn, &other, eb);
        if (rc < 0) return rc;
        if (rc == 1) {
            char jb[64];
            return oct_err(eb, OCT_EEXISTS,
                           "An UID with name %.*s for %s already exists: new "
                           "name already assigned ID=%s",
                           (int)new_len, (const char *)new_name, uid_kind_str(s),
                           uid_javabytes(s, other, jb, sizeof jb));
        }
        uint8_t idb[8];
        uid_encode(s, id, idb);
        oct_slice_t ids = oct_slice(idb, s->width);
        store_check_t checks[2] = {
            {STORE_CHECK_EQUALS, {on, UID_FAM_ID, s->qual, ids}},
            {STORE_CHECK_ABSENT, {nn, UID_FAM_ID, s->qual, {0}}},
        };
        store_op_t ops[3] = {
            {STORE_OP_PUT, s->qual, {ids, UID_FAM_NAME, s->qual, nn}},
            {STORE_OP_PUT, s->qual, {nn, UID_FAM_ID, s->qual, ids}},
            {STORE_OP_DELETE_CELL, s->qual, {on, UID_FAM_ID, s->qual, {0}}},
        };
        rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, 2, ops, 3, STORE_SYNC, eb);
        if (rc == OCT_ECASFAIL) continue;
        if (rc) return rc;
        uid__changed(r, kind, id, on, nn, 0);
        return 0;
    }
    return oct_err(eb, OCT_EIO, "rename of '%.*s' kept racing with other writers", (int)old_len,
                   (const char *)old_name);
}

int uid_delete(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name, size_t len,
               oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    oct_slice_t nm = oct_slice(name, len);
    for (int i = 0; i < UID_CAS_ATTEMPTS; i++) {
        uint64_t id;
        int rc = uid_read_forward(r, s, nm, &id, eb);
        if (rc < 0) return rc;
        if (rc == 0) return uid_no_such_name(eb, s, name, len);
        store_result_t rev = STORE_RESULT_INIT;
        rc = uid_read_reverse(r, s, id, &rev, eb);
        if (rc < 0) {
            store_result_free(&rev);
            return rc;
        }
        /* Only drop the reverse cell if it really names us: a damaged store
         * may have it pointing at another name. */
        int reverse_is_ours = rc == 1 && oct_slice_eq(rev.cells[0].value, nm);
        store_result_free(&rev);
        uint8_t idb[8];
        uid_encode(s, id, idb);
        oct_slice_t ids = oct_slice(idb, s->width);
        store_check_t checks[2] = {
            {STORE_CHECK_EQUALS, {nm, UID_FAM_ID, s->qual, ids}},
            {STORE_CHECK_EQUALS, {ids, UID_FAM_NAME, s->qual, nm}},
        };
        store_op_t ops[3] = {
            {STORE_OP_DELETE_CELL, s->qual, {nm, UID_FAM_ID, s->qual, {0}}},
            {STORE_OP_DELETE_CELL, s->qual, {ids, UID_FAM_NAME, s->qual, {0}}},
            {STORE_OP_DELETE_CELL, s->qual, {ids, UID_FAM_NAME, s->meta_qual, {0}}},
        };
        rc = store_cas(r->st, STORE_TABLE_UID, s->qual, checks, reverse_is_ours ? 2 : 1, ops,
                       reverse_is_ours ? 3 : 1, STORE_SYNC, eb);
        if (rc == OCT_ECASFAIL) continue;
        if (rc) return rc;
        uid__changed(r, kind, id, nm, oct_slice(NULL, 0), reverse_is_ours);
        return 0;
    }
    return oct_err(eb, OCT_EIO, "delete of '%.*s' kept racing with other writers", (int)len,
                   (const char *)name);
}

/* The smallest key greater than every key starting with p: p with its last
 * non-0xFF byte incremented and the rest dropped. Returns the length (0 when
 * p is all 0xFF: no upper bound). */
static size_t uid_prefix_end(const uint8_t *p, size_t n, uint8_t *out)
{
    while (n > 0 && p[n - 1] == 0xFF)
        n--;
    if (n == 0) return 0;
    memcpy(out, p, n);
    out[n - 1]++;
    return n;
}

int uid__scan_forward(uid_registry_t *r, uid_kind_state_t *s, const uint8_t *prefix, size_t plen,
                      size_t max, uid_name_fn cb, void *ctx, oct_errbuf_t *eb)
{
    uint8_t endb[UID_NAME_MAX];
    if (plen > UID_NAME_MAX) return 0;
    /* Row 0x00 is the counter; every valid name starts above it. Unlike
     * OpenTSDB, an empty prefix is not limited to ["!", "~"): names that start
     * with a non-ASCII letter are suggested too. */
    static const uint8_t first_name_row[1] = {0x01};
    store_scan_spec_t spec = {
        .part = s->qual,
        .start_row = plen ? oct_slice(prefix, plen) : oct_slice(first_name_row, 1),
        .stop_row = oct_slice(endb, plen ? uid_prefix_end(prefix, plen, endb) : 0),
        .family = UID_FAM_ID,
    };
    store_scanner_t *sc;
    int rc = store_scan_open(r->st, STORE_TABLE_UID, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    size_t n = 0;
    while (n < max && (rc = store_scan_next(sc, &row, eb)) == 1) {
        for (size_t i = 0; i < row.n; i++) {
            store_cell_t *c = &row.cells[i];
            if (!oct_slice_eq(c->qualifier, s->qual) || c->value.len != s->width) continue;
            uint64_t id = codec_uid_decode(c->value.ptr, s->width);
            n++;
            int stop = cb(ctx, c->row.ptr, c->row.len, id);
            if (stop) {
                rc = 0;
                goto done;
            }
            break;
        }
    }
    if (rc == 1) rc = 0;
done:
    store_result_free(&row);
    store_scan_close(sc);
    return rc;
}

int uid_suggest(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *prefix, size_t prefix_len,
                size_t max, uid_name_fn cb, void *ctx, oct_errbuf_t *eb)
{
    if (max < 1) return oct_err(eb, OCT_EINVAL, "Count must be greater than 0");
    if (prefix_len > UID_NAME_MAX) return 0;
    if (r->k[kind].random) /* no counter tells a list what is new */
        return uid__scan_forward(r, &r->k[kind], prefix, prefix_len, max, cb, ctx, eb);
    return uid__names_suggest(r, kind, prefix, prefix_len, max, cb, ctx, eb);
}

int uid_foreach(uid_registry_t *r, codec_uid_kind_t kind, uid_name_fn cb, void *ctx,
                oct_errbuf_t *eb)
{
    return uid__scan_forward(r, &r->k[kind], NULL, 0, SIZE_MAX, cb, ctx, eb);
}

int uid_counter(uid_registry_t *r, codec_uid_kind_t kind, uint64_t *out, oct_errbuf_t *eb)
{
    int rc = uid_read_counter(r, &r->k[kind], out, eb);
    return rc < 0 ? rc : 0;
}

int uid_lost_assignment(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    if (s->random) return 0; /* assigned synced, and no counter to compare with */
    uint8_t name[64];
    size_t len;
    int rc = uid_get_name(r, kind, id, name, sizeof name, &len, eb);
    if (rc != OCT_ENOSUCHID) return rc == 0 || rc == OCT_ENOSPC ? 0 : rc;
    uint64_t c;
    rc = uid_read_counter(r, s, &c, eb);
    if (rc < 0) return rc;
    return id > c;
}
