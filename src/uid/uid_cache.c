/* uid_cache.c -- lock-free two-way name<->UID cache with epoch-deferred reclamation.
 *
 * See uid_cache.h for the contract, the reclamation rule and the memory bound. Notes on the
 * implementation:
 *
 * - A slot holds NULL (never used), TOMB (removed; probing continues past it) or an entry. Writers
 *   reuse the first TOMB on a probe path only after checking the key is absent further on.
 * - Entries are shared by both tables. 'refs' (0..2) counts the tables that link an entry; it is
 *   touched by writers only, under the mutex, and readers never read it, so it needs no atomics.
 * - Memory ordering. Readers increment their slot counter, then load the table and slots; writers
 *   store the new slot value, then load every slot counter. All four are seq_cst, so for any reader
 *   that loaded an entry before it was unlinked, the writer's later scans see that reader's
 *   increment until its release decrement (which the scan's load then synchronises with, ordering
 *   the reader's accesses before the free). Freeing needs two epoch advances after the unlink and
 *   the two advances scan both parities, so a reader is caught whichever parity it chose; the
 *   epoch a reader reads only steers it away from the parity the writer is draining.
 * - Growth: when live + tombstones would exceed half the slots, the table is rebuilt at a power of
 *   two >= 2.5x the live count (which also drops tombstones) and the old array is retired. */
#include "uid/uid_cache.h"

#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xmalloc.h"

#define READ_SLOTS 64
#define CACHE_LINE 64
#define MIN_CAP    16

struct entry {
    uint64_t hash; /* uid_cache_hash(name, len, c->seed) */
    uint64_t id;
    size_t len;
    unsigned refs; /* writer-only: number of tables linking this entry */
    uint8_t name[];
};

struct table {
    size_t mask; /* capacity - 1, capacity a power of two */
    _Atomic(struct entry *) slot[];
};

/* One reader slot per cache line so threads on different slots share nothing. The lookup
 * counters live on the same line, which the lookup already owns: counting costs one uncontended
 * relaxed add, no extra cache miss. */
struct rslot {
    alignas(CACHE_LINE) atomic_ulong cnt[2];
    atomic_ulong hits, misses;
};

enum retire_kind {
    RETIRE_ENTRY,      /* one entry */
    RETIRE_TABLE,      /* a table array; its entries live on elsewhere */
    RETIRE_TABLE_DEEP, /* a table array and one reference to each entry in it (clear) */
};

struct retired {
    struct retired *next;
    uint64_t tag; /* epoch read right after the object was unlinked */
    enum retire_kind kind;
    void *p;
    size_t bytes;
};

/* Writer-side bookkeeping for one table. */
struct tstat {
    size_t live; /* slots holding an entry */
    size_t fill; /* slots holding an entry or TOMB */
};

struct uid_cache {
    /* Read-mostly: touched by every lookup, written only on growth/clear/epoch advance. */
    alignas(CACHE_LINE) _Atomic(struct table *) names;
    _Atomic(struct table *) ids;
    _Atomic uint64_t epoch;
    uint64_t seed;

    /* Writer side. */
    alignas(CACHE_LINE) pthread_mutex_t mu;
    struct tstat nstat, istat;
    struct retired *pending; /* newest first */
    size_t pending_bytes;
    atomic_size_t size; /* == nstat.live, readable without the mutex */

    struct rslot rd[READ_SLOTS];
};

/* Address of a static object: never a real entry, never dereferenced. */
static struct entry tomb_storage;
#define TOMB (&tomb_storage)

/* ------------------------------------------------------------------------------------------------
 * Hashing */

static inline uint64_t mulfold(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

#define K0 0x9E3779B97F4A7C15ull
#define K1 0xC2B2AE3D27D4EB4Full
#define K2 0x165667B19E3779F9ull

uint64_t uid_cache_hash(const uint8_t *p, size_t len, uint64_t seed)
{
    uint64_t h = mulfold(seed ^ K0, (uint64_t)len ^ K1);
    uint64_t a, b;
    if (len <= 16) {
        if (len >= 4) {
            /* Two possibly overlapping 4-byte reads from each end cover 4..16 bytes. */
            size_t mid = (len >> 3) << 2;
            a = (rd32(p) << 32) | rd32(p + mid);
            b = (rd32(p + len - 4) << 32) | rd32(p + len - 4 - mid);
        } else if (len > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
            b = 0;
        } else {
            a = b = 0;
        }
    } else {
        const uint8_t *q = p;
        size_t left = len;
        while (left > 16) {
            h = mulfold(rd64(q) ^ K1, rd64(q + 8) ^ h);
            q += 16;
            left -= 16;
        }
        /* The last 16 bytes of the name, overlapping the final block if it was short. */
        a = rd64(p + len - 16);
        b = rd64(p + len - 8);
    }
    return mulfold(K2 ^ (uint64_t)len, mulfold(a ^ K1, b ^ h));
}

static inline uint64_t hash_id(uint64_t id, uint64_t seed)
{
    return mulfold(id ^ seed, K0);
}

/* ------------------------------------------------------------------------------------------------
 * Reader slots */

static atomic_uint next_slot;
static _Thread_local unsigned tls_slot_plus1;

static inline unsigned my_slot(void)
{
    unsigned s = tls_slot_plus1;
    if (s == 0) {
        s = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed) % READ_SLOTS + 1;
        tls_slot_plus1 = s;
    }
    return s - 1;
}

/* Token = slot * 2 + parity. */
static inline unsigned reader_enter(uid_cache_t *c)
{
    unsigned s = my_slot();
    unsigned par = (unsigned)(atomic_load_explicit(&c->epoch, memory_order_relaxed) & 1);
    atomic_fetch_add_explicit(&c->rd[s].cnt[par], 1, memory_order_seq_cst);
    return s * 2 + par;
}

static inline void reader_exit(uid_cache_t *c, unsigned tok)
{
    atomic_fetch_sub_explicit(&c->rd[tok / 2].cnt[tok & 1], 1, memory_order_release);
}

static inline void count_lookup(uid_cache_t *c, unsigned tok, int hit)
{
    struct rslot *r = &c->rd[tok / 2];
    atomic_fetch_add_explicit(hit ? &r->hits : &r->misses, 1, memory_order_relaxed);
}

unsigned uid_cache__reader_enter(uid_cache_t *c)
{
    return reader_enter(c);
}

void uid_cache__reader_exit(uid_cache_t *c, unsigned token)
{
    reader_exit(c, token);
}

/* ------------------------------------------------------------------------------------------------
 * Lookups */

static inline struct entry *find_name(const struct table *t, const uint8_t *name, size_t len,
                                      uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        struct entry *e = atomic_load_explicit(&t->slot[i], memory_order_seq_cst);
        if (e == NULL) return NULL;
        if (e != TOMB && e->hash == h && e->len == len && memcmp(e->name, name, len) == 0) return e;
    }
}

static inline struct entry *find_id(const struct table *t, uint64_t id, uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        struct entry *e = atomic_load_explicit(&t->slot[i], memory_order_seq_cst);
        if (e == NULL) return NULL;
        if (e != TOMB && e->id == id) return e;
    }
}

int uid_cache_get_id(uid_cache_t *c, const uint8_t *name, size_t len, uint64_t *id)
{
    uint64_t h = uid_cache_hash(name, len, c->seed);
    unsigned tok = reader_enter(c);
    struct table *t = atomic_load_explicit(&c->names, memory_order_seq_cst);
    struct entry *e = find_name(t, name, len, h);
    if (e) *id = e->id;
    count_lookup(c, tok, e != NULL);
    reader_exit(c, tok);
    return e != NULL;
}

long uid_cache_get_name(uid_cache_t *c, uint64_t id, uint8_t *buf, size_t cap)
{
    uint64_t h = hash_id(id, c->seed);
    unsigned tok = reader_enter(c);
    struct table *t = atomic_load_explicit(&c->ids, memory_order_seq_cst);
    struct entry *e = find_id(t, id, h);
    long n = -1;
    if (e) {
        n = (long)e->len;
        if (cap > 0) memcpy(buf, e->name, e->len < cap ? e->len : cap);
    }
    count_lookup(c, tok, e != NULL);
    reader_exit(c, tok);
    return n;
}

size_t uid_cache_size(uid_cache_t *c)
{
    return atomic_load_explicit(&c->size, memory_order_relaxed);
}

void uid_cache_lookups(uid_cache_t *c, uint64_t *hits, uint64_t *misses)
{
    uint64_t h = 0, m = 0;
    for (unsigned i = 0; i < READ_SLOTS; i++) {
        h += atomic_load_explicit(&c->rd[i].hits, memory_order_relaxed);
        m += atomic_load_explicit(&c->rd[i].misses, memory_order_relaxed);
    }
    *hits = h;
    *misses = m;
}

/* ------------------------------------------------------------------------------------------------
 * Reclamation (writer mutex held) */

static size_t table_bytes(const struct table *t)
{
    return sizeof(*t) + (t->mask + 1) * sizeof(t->slot[0]);
}

static size_t entry_bytes(const struct entry *e)
{
    return sizeof(*e) + e->len;
}

static void retire(uid_cache_t *c, enum retire_kind kind, void *p, size_t bytes)
{
    struct retired *r = xmalloc(sizeof(*r));
    r->tag = atomic_load_explicit(&c->epoch, memory_order_relaxed); /* only writers store it */
    r->kind = kind;
    r->p = p;
    r->bytes = bytes;
    r->next = c->pending;
    c->pending = r;
    c->pending_bytes += bytes;
}

/* Drops one table's reference to e; retires it when no table links it any more. */
static void unref_entry(uid_cache_t *c, struct entry *e)
{
    if (--e->refs == 0) retire(c, RETIRE_ENTRY, e, entry_bytes(e));
}

static size_t entries_bytes(const struct table *t)
{
    size_t n = 0;
    for (size_t i = 0; i <= t->mask; i++) {
        struct entry *e = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (e != NULL && e != TOMB) n += entry_bytes(e);
    }
    return n;
}

static void free_table_deep(struct table *t)
{
    for (size_t i = 0; i <= t->mask; i++) {
        struct entry *e = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (e != NULL && e != TOMB && --e->refs == 0) free(e);
    }
    free(t);
}

static void free_retired(struct retired *r)
{
    switch (r->kind) {
    case RETIRE_ENTRY:
    case RETIRE_TABLE:
        free(r->p);
        break;
    case RETIRE_TABLE_DEEP:
        free_table_deep(r->p);
        break;
    }
    free(r);
}

/* Moves the epoch on by one if no reader is left in the parity the next epoch will use. */
static bool try_advance(uid_cache_t *c)
{
    uint64_t e = atomic_load_explicit(&c->epoch, memory_order_relaxed);
    unsigned par = (unsigned)((e + 1) & 1);
    for (int i = 0; i < READ_SLOTS; i++)
        if (atomic_load_explicit(&c->rd[i].cnt[par], memory_order_seq_cst) != 0) return false;
    atomic_store_explicit(&c->epoch, e + 1, memory_order_seq_cst);
    return true;
}

/* Frees what every reader is done with: objects tagged at least two epochs ago. */
static void collect(uid_cache_t *c)
{
    uint64_t e = atomic_load_explicit(&c->epoch, memory_order_relaxed);
    struct retired **pp = &c->pending;
    while (*pp) {
        struct retired *r = *pp;
        if (r->tag + 2 <= e) {
            *pp = r->next;
            c->pending_bytes -= r->bytes;
            free_retired(r);
        } else {
            pp = &r->next;
        }
    }
}

/* End of every writer call: reclaim what can be, and enforce UID_CACHE_RETIRE_LIMIT. */
static void reclaim(uid_cache_t *c)
{
    if (!c->pending) return;
    if (try_advance(c)) try_advance(c);
    collect(c);
    while (c->pending_bytes > UID_CACHE_RETIRE_LIMIT) {
        if (!try_advance(c)) sched_yield();
        collect(c);
    }
}

size_t uid_cache_pending_bytes(uid_cache_t *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->pending_bytes;
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ------------------------------------------------------------------------------------------------
 * Writers (mutex held) */

static struct table *table_new(size_t cap)
{
    struct table *t = xcalloc(1, sizeof(*t) + cap * sizeof(t->slot[0]));
    t->mask = cap - 1;
    return t;
}

static size_t cap_for(size_t live)
{
    size_t cap = MIN_CAP;
    while (cap < (live + 1) * 5 / 2)
        cap *= 2;
    return cap;
}

/* Stores e into a table under construction (no TOMBs, key known absent). */
static void place(struct table *t, struct entry *e, uint64_t h)
{
    size_t i = h & t->mask;
    while (atomic_load_explicit(&t->slot[i], memory_order_relaxed) != NULL)
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slot[i], e, memory_order_relaxed);
}

/* Makes room for one more key in *tp: rebuilds when live + tombstones + 1 > capacity / 2. */
static void ensure_room(uid_cache_t *c, _Atomic(struct table *) *tp, struct tstat *st, bool by_name)
{
    struct table *old = atomic_load_explicit(tp, memory_order_relaxed);
    if ((st->fill + 1) * 2 <= old->mask + 1) return;
    struct table *t = table_new(cap_for(st->live));
    for (size_t i = 0; i <= old->mask; i++) {
        struct entry *e = atomic_load_explicit(&old->slot[i], memory_order_relaxed);
        if (e == NULL || e == TOMB) continue;
        place(t, e, by_name ? e->hash : hash_id(e->id, c->seed));
    }
    st->fill = st->live;
    /* seq_cst: the entries' contents and the new slots are visible to whoever loads t. */
    atomic_store_explicit(tp, t, memory_order_seq_cst);
    retire(c, RETIRE_TABLE, old, table_bytes(old));
}

/* Links e (whose key is e's name or id) into the table, replacing the entry with the same key. */
static void link_entry(uid_cache_t *c, _Atomic(struct table *) *tp, struct tstat *st, bool by_name,
                       struct entry *e)
{
    ensure_room(c, tp, st, by_name);
    struct table *t = atomic_load_explicit(tp, memory_order_relaxed);
    uint64_t h = by_name ? e->hash : hash_id(e->id, c->seed);
    size_t free_at = SIZE_MAX;
    size_t i = h & t->mask;
    for (;; i = (i + 1) & t->mask) {
        struct entry *o = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (o == NULL) break;
        if (o == TOMB) {
            if (free_at == SIZE_MAX) free_at = i;
            continue;
        }
        bool same = by_name ? (o->hash == e->hash && o->len == e->len &&
                               memcmp(o->name, e->name, e->len) == 0)
                            : o->id == e->id;
        if (same) {
            e->refs++;
            atomic_store_explicit(&t->slot[i], e, memory_order_seq_cst);
            unref_entry(c, o);
            return;
        }
    }
    if (free_at == SIZE_MAX) {
        free_at = i;
        st->fill++;
    }
    st->live++;
    e->refs++;
    atomic_store_explicit(&t->slot[free_at], e, memory_order_seq_cst);
}

/* Replaces slot i (holding entry o) of the current table with TOMB and drops its reference. */
static void unlink_slot(uid_cache_t *c, struct table *t, struct tstat *st, size_t i,
                        struct entry *o)
{
    atomic_store_explicit(&t->slot[i], TOMB, memory_order_seq_cst);
    st->live--;
    unref_entry(c, o);
}

void uid_cache_put(uid_cache_t *c, const uint8_t *name, size_t len, uint64_t id)
{
    uint64_t h = uid_cache_hash(name, len, c->seed);
    pthread_mutex_lock(&c->mu);
    struct table *nt = atomic_load_explicit(&c->names, memory_order_relaxed);
    struct table *it = atomic_load_explicit(&c->ids, memory_order_relaxed);
    struct entry *on = find_name(nt, name, len, h);
    if (on && on->id == id && find_id(it, id, hash_id(id, c->seed)) == on) {
        pthread_mutex_unlock(&c->mu); /* already mapped both ways: nothing to publish */
        return;
    }
    struct entry *e = xmalloc(sizeof(*e) + len);
    e->hash = h;
    e->id = id;
    e->len = len;
    e->refs = 0;
    if (len) memcpy(e->name, name, len);
    link_entry(c, &c->names, &c->nstat, true, e);
    link_entry(c, &c->ids, &c->istat, false, e);
    atomic_store_explicit(&c->size, c->nstat.live, memory_order_relaxed);
    reclaim(c);
    pthread_mutex_unlock(&c->mu);
}

void uid_cache_remove_name(uid_cache_t *c, const uint8_t *name, size_t len)
{
    uint64_t h = uid_cache_hash(name, len, c->seed);
    pthread_mutex_lock(&c->mu);
    struct table *t = atomic_load_explicit(&c->names, memory_order_relaxed);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        struct entry *o = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (o == NULL) break;
        if (o != TOMB && o->hash == h && o->len == len && memcmp(o->name, name, len) == 0) {
            unlink_slot(c, t, &c->nstat, i, o);
            break;
        }
    }
    atomic_store_explicit(&c->size, c->nstat.live, memory_order_relaxed);
    reclaim(c);
    pthread_mutex_unlock(&c->mu);
}

void uid_cache_remove_id(uid_cache_t *c, uint64_t id)
{
    uint64_t h = hash_id(id, c->seed);
    pthread_mutex_lock(&c->mu);
    struct table *t = atomic_load_explicit(&c->ids, memory_order_relaxed);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        struct entry *o = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
        if (o == NULL) break;
        if (o != TOMB && o->id == id) {
            unlink_slot(c, t, &c->istat, i, o);
            break;
        }
    }
    reclaim(c);
    pthread_mutex_unlock(&c->mu);
}

void uid_cache_clear(uid_cache_t *c)
{
    pthread_mutex_lock(&c->mu);
    struct table *nt = atomic_load_explicit(&c->names, memory_order_relaxed);
    struct table *it = atomic_load_explicit(&c->ids, memory_order_relaxed);
    atomic_store_explicit(&c->names, table_new(MIN_CAP), memory_order_seq_cst);
    atomic_store_explicit(&c->ids, table_new(MIN_CAP), memory_order_seq_cst);
    /* Both arrays go in one batch with the same tag; the deep free drops one reference per
     * linking table, so an entry linked in both is freed exactly once, by the second. */
    retire(c, RETIRE_TABLE_DEEP, nt, table_bytes(nt) + entries_bytes(nt));
    retire(c, RETIRE_TABLE_DEEP, it, table_bytes(it) + entries_bytes(it));
    c->nstat = (struct tstat){0, 0};
    c->istat = (struct tstat){0, 0};
    atomic_store_explicit(&c->size, 0, memory_order_relaxed);
    reclaim(c);
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------------------------------------------------
 * Life cycle */

static uint64_t make_seed(const void *salt)
{
    /* Per-cache seed so clients cannot precompute names that collide in every process. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)salt;
    return mulfold(x ^ K2, K1);
}

uid_cache_t *uid_cache_new(void)
{
    uid_cache_t *c = aligned_alloc(CACHE_LINE, sizeof(*c));
    if (!c) abort();
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    atomic_init(&c->names, table_new(MIN_CAP));
    atomic_init(&c->ids, table_new(MIN_CAP));
    atomic_init(&c->epoch, 0);
    atomic_init(&c->size, 0);
    for (int i = 0; i < READ_SLOTS; i++) {
        atomic_init(&c->rd[i].cnt[0], 0);
        atomic_init(&c->rd[i].cnt[1], 0);
    }
    c->seed = make_seed(c);
    return c;
}

void uid_cache_free(uid_cache_t *c)
{
    if (!c) return;
    /* Pending objects first: a pending deep table may hold the last reference to an entry. */
    while (c->pending) {
        struct retired *r = c->pending;
        c->pending = r->next;
        free_retired(r);
    }
    free_table_deep(atomic_load_explicit(&c->names, memory_order_relaxed));
    free_table_deep(atomic_load_explicit(&c->ids, memory_order_relaxed));
    pthread_mutex_destroy(&c->mu);
    free(c);
}
