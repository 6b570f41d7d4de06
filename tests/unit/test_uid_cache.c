/* test_uid_cache.c -- uid/uid_cache: two-way lookups, replace/remove/clear, growth, deferred
 * reclamation, and readers racing writers.
 *
 * Expected values come from the test itself: fixed literals, a plain-array reference model, or
 * ids derived from names by a function the test knows (so any hit can be checked on its own). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "uid/uid_cache.h"

#define U8(s) ((const uint8_t *)(s))

/* Small deterministic PRNG (splitmix64) so runs are reproducible. */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int has_id(uid_cache_t *c, const char *name, uint64_t want)
{
    uint64_t id = 0;
    if (!uid_cache_get_id(c, U8(name), strlen(name), &id)) return 0;
    return id == want;
}

static int id_misses(uid_cache_t *c, const char *name)
{
    uint64_t id = 12345;
    int hit = uid_cache_get_id(c, U8(name), strlen(name), &id);
    return !hit && id == 12345; /* a miss must leave *id alone */
}

static int has_name(uid_cache_t *c, uint64_t id, const char *want)
{
    uint8_t buf[64];
    long n = uid_cache_get_name(c, id, buf, sizeof buf);
    return n == (long)strlen(want) && memcmp(buf, want, (size_t)n) == 0;
}

static void basic_hit_and_miss_both_ways(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    assert_int_equal(uid_cache_size(c), 0);
    assert_true(id_misses(c, "sys.cpu.user"));
    assert_int_equal(uid_cache_get_name(c, 1, NULL, 0), -1);

    uid_cache_put(c, U8("sys.cpu.user"), 12, 1);
    uid_cache_put(c, U8("host"), 4, 0x00FFFFFF);
    uid_cache_put(c, U8("big"), 3, UINT64_MAX);
    assert_int_equal(uid_cache_size(c), 3);
    assert_true(has_id(c, "sys.cpu.user", 1));
    assert_true(has_id(c, "host", 0x00FFFFFF));
    assert_true(has_id(c, "big", UINT64_MAX));
    assert_true(id_misses(c, "sys.cpu.use")); /* prefix */
    assert_true(id_misses(c, "sys.cpu.userx"));
    assert_true(id_misses(c, "Host"));
    assert_true(has_name(c, 1, "sys.cpu.user"));
    assert_true(has_name(c, 0x00FFFFFF, "host"));
    assert_true(has_name(c, UINT64_MAX, "big"));
    assert_int_equal(uid_cache_get_name(c, 2, NULL, 0), -1);
    assert_int_equal(uid_cache_get_name(c, 0, NULL, 0), -1);

    /* Short buffer: full length returned, only cap bytes written. */
    uint8_t buf[8];
    memset(buf, '#', sizeof buf);
    assert_int_equal(uid_cache_get_name(c, 1, buf, 4), 12);
    assert_memory_equal(buf, "sys.####", 8);
    assert_int_equal(uid_cache_get_name(c, 1, NULL, 0), 12);
    uid_cache_free(c);
}

static void names_with_nul_bytes_and_extreme_lengths(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    uint8_t long1[1000], long2[1000], long3[1000];
    for (int i = 0; i < 1000; i++)
        long1[i] = (uint8_t)(i * 7);
    memcpy(long2, long1, 1000);
    long2[999] ^= 1;
    memcpy(long3, long1, 1000);
    long3[0] ^= 0x80;

    uid_cache_put(c, U8(""), 0, 7);
    uid_cache_put(c, U8("\0"), 1, 8);
    uid_cache_put(c, U8("\0\0"), 2, 9);
    uid_cache_put(c, U8("a\0b"), 3, 10);
    uid_cache_put(c, long1, 1000, 11);
    uid_cache_put(c, long2, 1000, 12);
    assert_int_equal(uid_cache_size(c), 6);

    uint64_t id = 0;
    assert_true(uid_cache_get_id(c, U8(""), 0, &id) && id == 7);
    assert_true(uid_cache_get_id(c, U8("\0"), 1, &id) && id == 8);
    assert_true(uid_cache_get_id(c, U8("\0\0"), 2, &id) && id == 9);
    assert_true(uid_cache_get_id(c, U8("a\0b"), 3, &id) && id == 10);
    assert_false(uid_cache_get_id(c, U8("a\0c"), 3, &id));
    assert_false(uid_cache_get_id(c, U8("\0\0\0"), 3, &id));
    assert_false(uid_cache_get_id(c, U8("a"), 1, &id));
    assert_true(uid_cache_get_id(c, long1, 1000, &id) && id == 11);
    assert_true(uid_cache_get_id(c, long2, 1000, &id) && id == 12);
    assert_false(uid_cache_get_id(c, long3, 1000, &id));
    assert_false(uid_cache_get_id(c, long1, 999, &id));

    uint8_t buf[1024];
    assert_int_equal(uid_cache_get_name(c, 7, buf, sizeof buf), 0);
    assert_int_equal(uid_cache_get_name(c, 8, buf, sizeof buf), 1);
    assert_int_equal(buf[0], 0);
    assert_int_equal(uid_cache_get_name(c, 10, buf, sizeof buf), 3);
    assert_memory_equal(buf, "a\0b", 3);
    assert_int_equal(uid_cache_get_name(c, 12, buf, sizeof buf), 1000);
    assert_memory_equal(buf, long2, 1000);
    assert_int_equal(uid_cache_get_name(c, 11, buf, 10), 1000);
    assert_memory_equal(buf, long1, 10);
    uid_cache_free(c);
}

static void put_replaces_and_rename_is_put_then_remove(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    /* Rename "old" (id 5) to "new". */
    uid_cache_put(c, U8("old"), 3, 5);
    uid_cache_put(c, U8("new"), 3, 5);
    assert_true(has_name(c, 5, "new"));
    assert_true(has_id(c, "old", 5)); /* forward of the old name untouched until removed */
    assert_true(has_id(c, "new", 5));
    uid_cache_remove_name(c, U8("old"), 3);
    assert_true(id_misses(c, "old"));
    assert_true(has_id(c, "new", 5));
    assert_true(has_name(c, 5, "new"));
    assert_int_equal(uid_cache_size(c), 1);

    /* Same name, new id: forward follows, the old id's reverse stays. */
    uid_cache_put(c, U8("x"), 1, 6);
    uid_cache_put(c, U8("x"), 1, 7);
    assert_true(has_id(c, "x", 7));
    assert_true(has_name(c, 6, "x"));
    assert_true(has_name(c, 7, "x"));
    assert_int_equal(uid_cache_size(c), 2);

    /* Putting an existing pair again changes nothing. */
    uid_cache_put(c, U8("x"), 1, 7);
    assert_true(has_id(c, "x", 7));
    assert_int_equal(uid_cache_size(c), 2);
    uid_cache_free(c);
}

static void remove_touches_one_direction_only(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    uid_cache_put(c, U8("a"), 1, 1);
    uid_cache_put(c, U8("b"), 1, 2);
    uid_cache_remove_id(c, 1);
    assert_int_equal(uid_cache_get_name(c, 1, NULL, 0), -1);
    assert_true(has_id(c, "a", 1));
    assert_int_equal(uid_cache_size(c), 2);
    uid_cache_remove_name(c, U8("b"), 1);
    assert_true(id_misses(c, "b"));
    assert_true(has_name(c, 2, "b"));
    assert_int_equal(uid_cache_size(c), 1);
    /* Absent keys are no-ops. */
    uid_cache_remove_name(c, U8("zz"), 2);
    uid_cache_remove_id(c, 99);
    uid_cache_remove_name(c, U8("b"), 1);
    assert_int_equal(uid_cache_size(c), 1);
    /* Removed keys can come back (the tombstoned slot is reused). */
    uid_cache_put(c, U8("b"), 1, 3);
    assert_true(has_id(c, "b", 3));
    assert_true(has_name(c, 3, "b"));
    assert_true(has_name(c, 2, "b"));
    assert_int_equal(uid_cache_size(c), 2);
    uid_cache_free(c);
}

static void clear_drops_everything(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    char name[32];
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "tagv-%u", i);
        uid_cache_put(c, U8(name), strlen(name), i + 1);
    }
    uid_cache_remove_name(c, U8("tagv-3"), 6); /* entry linked by the id table only */
    assert_int_equal(uid_cache_size(c), 999);
    uid_cache_clear(c);
    assert_int_equal(uid_cache_size(c), 0);
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "tagv-%u", i);
        assert_true(id_misses(c, name));
        assert_int_equal(uid_cache_get_name(c, i + 1, NULL, 0), -1);
    }
    assert_int_equal(uid_cache_pending_bytes(c), 0); /* no reader: freed at once */
    uid_cache_put(c, U8("tagv-5"), 6, 42);
    assert_true(has_id(c, "tagv-5", 42));
    assert_true(has_name(c, 42, "tagv-5"));
    uid_cache_clear(c);
    uid_cache_clear(c);
    assert_int_equal(uid_cache_size(c), 0);
    uid_cache_free(c);
}

/* The test's id function for the growth test: odd multiplier, so distinct per i. */
static uint64_t grow_id(unsigned i)
{
    return (uint64_t)i * 0x9E3779B1u + 1;
}

static void growth_to_a_million_keeps_every_entry(void **state)
{
    (void)state;
    enum { N = 1000000 };
    uid_cache_t *c = uid_cache_new();
    char name[32];
    for (unsigned i = 0; i < N; i++) {
        int n = snprintf(name, sizeof name, "host%07u.example", i);
        uid_cache_put(c, U8(name), (size_t)n, grow_id(i));
    }
    assert_int_equal(uid_cache_size(c), N);
    uint8_t buf[32];
    for (unsigned i = 0; i < N; i++) {
        int n = snprintf(name, sizeof name, "host%07u.example", i);
        uint64_t id = 0;
        assert_true(uid_cache_get_id(c, U8(name), (size_t)n, &id));
        assert_true(id == grow_id(i));
        assert_int_equal(uid_cache_get_name(c, grow_id(i), buf, sizeof buf), n);
        assert_memory_equal(buf, name, (size_t)n);
    }
    assert_true(id_misses(c, "host1000000.example"));
    assert_int_equal(uid_cache_get_name(c, grow_id(N), NULL, 0), -1);
    /* Tombstones everywhere, then more inserts: survivors must still be found. */
    for (unsigned i = 0; i < N; i += 3) {
        int n = snprintf(name, sizeof name, "host%07u.example", i);
        uid_cache_remove_name(c, U8(name), (size_t)n);
        uid_cache_remove_id(c, grow_id(i));
    }
    assert_int_equal(uid_cache_size(c), N - (N + 2) / 3);
    for (unsigned i = N; i < N + N / 2; i++) {
        int n = snprintf(name, sizeof name, "host%07u.example", i);
        uid_cache_put(c, U8(name), (size_t)n, grow_id(i));
    }
    for (unsigned i = 0; i < N + N / 2; i++) {
        int n = snprintf(name, sizeof name, "host%07u.example", i);
        uint64_t id = 0;
        int hit = uid_cache_get_id(c, U8(name), (size_t)n, &id);
        long len = uid_cache_get_name(c, grow_id(i), NULL, 0);
        if (i < N && i % 3 == 0) {
            assert_false(hit);
            assert_int_equal(len, -1);
        } else {
            assert_true(hit && id == grow_id(i));
            assert_int_equal(len, n);
        }
    }
    uid_cache_free(c);
}

/* Random operations against a plain-array model of the two maps. */
static void random_ops_match_reference_model(void **state)
{
    (void)state;
    enum { NAMES = 300, IDS = 300, OPS = 200000 };
    int fwd[NAMES]; /* name index -> id, or -1 */
    int rev[IDS];   /* id -> name index, or -1 */
    char names[NAMES][24];
    for (int i = 0; i < NAMES; i++) {
        snprintf(names[i], sizeof names[i], "n%d%s", i, i % 2 ? "\x01\x02" : "");
        fwd[i] = -1;
    }
    for (int i = 0; i < IDS; i++)
        rev[i] = -1;
    uid_cache_t *c = uid_cache_new();
    uint64_t s = 42, want_hits = 0, want_misses = 0;
    for (int op = 0; op < OPS; op++) {
        int n = (int)(rnd(&s) % NAMES), id = (int)(rnd(&s) % IDS);
        unsigned kind = (unsigned)(rnd(&s) % 1000);
        if (kind < 500) {
            uid_cache_put(c, U8(names[n]), strlen(names[n]), (uint64_t)id);
            fwd[n] = id;
            rev[id] = n;
        } else if (kind < 740) {
            uid_cache_remove_name(c, U8(names[n]), strlen(names[n]));
            fwd[n] = -1;
        } else if (kind < 999) {
            uid_cache_remove_id(c, (uint64_t)id);
            rev[id] = -1;
        } else {
            uid_cache_clear(c);
            for (int i = 0; i < NAMES; i++)
                fwd[i] = -1;
            for (int i = 0; i < IDS; i++)
                rev[i] = -1;
        }
        if (op % 97 != 0) continue;
        size_t live = 0;
        for (int i = 0; i < NAMES; i++) {
            uint64_t got = 0;
            int hit = uid_cache_get_id(c, U8(names[i]), strlen(names[i]), &got);
            assert_int_equal(hit, fwd[i] >= 0);
            if (hit) assert_int_equal(got, (uint64_t)fwd[i]);
            want_hits += fwd[i] >= 0;
            want_misses += fwd[i] < 0;
            live += fwd[i] >= 0;
        }
        assert_int_equal(uid_cache_size(c), live);
        for (int i = 0; i < IDS; i++) {
            if (rev[i] < 0)
                assert_int_equal(uid_cache_get_name(c, (uint64_t)i, NULL, 0), -1);
            else
                assert_true(has_name(c, (uint64_t)i, names[rev[i]]));
            want_hits += rev[i] >= 0;
            want_misses += rev[i] < 0;
        }
    }
    /* every lookup above counted once, as the model says it hit or missed (clear keeps them) */
    uint64_t hits, misses;
    uid_cache_lookups(c, &hits, &misses);
    assert_int_equal(hits, want_hits);
    assert_int_equal(misses, want_misses);
    uid_cache_free(c);
}

static void hash_depends_on_every_byte_length_and_seed(void **state)
{
    (void)state;
    uint8_t b[80];
    for (int i = 0; i < 80; i++)
        b[i] = (uint8_t)(i * 13 + 1);
    for (size_t len = 0; len <= 80; len++) {
        uint64_t h = uid_cache_hash(b, len, 1);
        assert_true(h != uid_cache_hash(b, len, 2));
        if (len < 80) assert_true(h != uid_cache_hash(b, len + 1, 1));
        for (size_t i = 0; i < len; i++) {
            for (int bit = 0; bit < 8; bit++) {
                b[i] ^= (uint8_t)(1u << bit);
                assert_true(h != uid_cache_hash(b, len, 1));
                b[i] ^= (uint8_t)(1u << bit);
            }
        }
        assert_true(h == uid_cache_hash(b, len, 1));
    }
    /* All-zero names of different lengths must differ too. */
    uint8_t z[16] = {0};
    for (size_t len = 0; len < 16; len++)
        assert_true(uid_cache_hash(z, len, 9) != uid_cache_hash(z, len + 1, 9));
}

/* While a reader is inside a lookup, what it might hold is not freed; once it leaves, the next
 * writer call frees it. */
static void reclamation_waits_for_readers(void **state)
{
    (void)state;
    uid_cache_t *c = uid_cache_new();
    uid_cache_put(c, U8("a"), 1, 1);
    assert_int_equal(uid_cache_pending_bytes(c), 0);
    unsigned tok = uid_cache__reader_enter(c);
    uid_cache_put(c, U8("b"), 1, 1); /* id 1's entry still linked by "a": nothing retired */
    assert_int_equal(uid_cache_pending_bytes(c), 0);
    uid_cache_remove_name(c, U8("a"), 1); /* now unlinked from both tables */
    size_t pend = uid_cache_pending_bytes(c);
    assert_true(pend > 0);
    uid_cache_put(c, U8("c"), 1, 2);
    assert_int_equal(uid_cache_pending_bytes(c), pend);
    uid_cache__reader_exit(c, tok);
    uid_cache_put(c, U8("d"), 1, 3); /* nothing new retired, but the old batch goes */
    assert_int_equal(uid_cache_pending_bytes(c), 0);
    assert_true(has_name(c, 1, "b"));
    assert_true(has_id(c, "b", 1));
    uid_cache_free(c); /* ASan: frees what is pending and linked, once each */
}

struct pin_arg {
    uid_cache_t *c;
    atomic_int pinned, release;
};

static void *pin_thread(void *p)
{
    struct pin_arg *a = p;
    unsigned tok = uid_cache__reader_enter(a->c);
    atomic_store(&a->pinned, 1);
    while (!atomic_load(&a->release)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    uid_cache__reader_exit(a->c, tok);
    return NULL;
}

struct churn_arg {
    uid_cache_t *c;
    atomic_int done;
};

enum { CHURN = 10000 };

static void *churn_thread(void *p)
{
    struct churn_arg *a = p;
    uint8_t name[100];
    memset(name, 'q', sizeof name);
    for (int i = 0; i < CHURN; i++) {
        memcpy(name, &i, sizeof i);
        uid_cache_put(a->c, name, sizeof name, 1); /* replaces: retires one entry per call */
        uid_cache_remove_name(a->c, name, sizeof name);
        atomic_fetch_add(&a->done, 1);
    }
    return NULL;
}

/* A stalled reader makes a writer wait once UID_CACHE_RETIRE_LIMIT is reached, instead of letting
 * garbage grow: CHURN * ~130 bytes is far above the limit. */
static void stalled_reader_bounds_retired_memory(void **state)
{
    (void)state;
    assert_true((size_t)CHURN * 100 > 2 * UID_CACHE_RETIRE_LIMIT);
    uid_cache_t *c = uid_cache_new();
    struct pin_arg pa = {.c = c};
    struct churn_arg ca = {.c = c};
    pthread_t pt, ct;
    assert_int_equal(pthread_create(&pt, NULL, pin_thread, &pa), 0);
    while (!atomic_load(&pa.pinned))
        sched_yield();
    assert_int_equal(pthread_create(&ct, NULL, churn_thread, &ca), 0);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    /* Whatever the scheduling, the writer cannot have finished: it is blocked at the limit. */
    int before = atomic_load(&ca.done);
    assert_true(before < CHURN);
    atomic_store(&pa.release, 1);
    pthread_join(pt, NULL);
    pthread_join(ct, NULL);
    assert_int_equal(atomic_load(&ca.done), CHURN);
    assert_true(uid_cache_pending_bytes(c) <= UID_CACHE_RETIRE_LIMIT);
    assert_int_equal(uid_cache_size(c), 0);
    uid_cache_free(c);
}

/* ------------------------------------------------------------------------------------------------
 * Readers racing writers. Every name encodes its id: "t<16 hex id>.<gen>.<2 hex check>", with
 * check = (id * 31 + gen) & 0xff, so a reader can validate any hit in either direction. */

enum { HOT = 64, COLD = 20000, GENS = 4, READERS = 8, WRITERS = 2 };

static int make_name(char *out, uint64_t id, unsigned gen)
{
    return sprintf(out, "t%016llx.%u.%02x", (unsigned long long)id, gen,
                   (unsigned)((id * 31 + gen) & 0xff));
}

/* Returns 1 if name is well formed and encodes id. */
static int name_encodes(const uint8_t *name, long len, uint64_t id)
{
    char s[64];
    if (len <= 0 || len >= (long)sizeof s) return 0;
    memcpy(s, name, (size_t)len);
    s[len] = '\0';
    unsigned long long got;
    unsigned gen, chk;
    int used = 0;
    if (sscanf(s, "t%16llx.%u.%2x%n", &got, &gen, &chk, &used) != 3 || used != len) return 0;
    char again[64];
    return got == id && gen < GENS && make_name(again, id, gen) == len && strcmp(again, s) == 0;
}

struct race {
    uid_cache_t *c;
    atomic_int stop;
    atomic_long bad, id_hits, name_hits, lookups, writes, over_limit;
    char bad_msg[160];
    atomic_flag bad_once;
};

static void race_fail(struct race *r, const char *what, uint64_t id, const uint8_t *n, long len)
{
    if (!atomic_flag_test_and_set(&r->bad_once))
        snprintf(r->bad_msg, sizeof r->bad_msg, "%s id=%llu name=%.*s", what,
                 (unsigned long long)id, (int)(len > 0 && len < 60 ? len : 0), (const char *)n);
    atomic_fetch_add(&r->bad, 1);
}

struct reader_arg {
    struct race *r;
    uint64_t seed;
};

static void *reader_thread(void *p)
{
    struct reader_arg *a = p;
    struct race *r = a->r;
    uint64_t s = a->seed;
    long idh = 0, nh = 0, n = 0;
    char name[64];
    uint8_t buf[64];
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        uint64_t x = rnd(&s);
        uint64_t id = x % 4 ? 1 + x / 4 % HOT : 1 + HOT + x / 4 % COLD;
        unsigned gen = id <= HOT ? 0 : (unsigned)(x >> 40) % GENS;
        int len = make_name(name, id, gen);
        uint64_t got = 0;
        if (uid_cache_get_id(r->c, U8(name), (size_t)len, &got)) {
            idh++;
            if (got != id) race_fail(r, "name->id wrong", got, U8(name), len);
        }
        long nl = uid_cache_get_name(r->c, id, buf, sizeof buf);
        if (nl >= 0) {
            nh++;
            if (!name_encodes(buf, nl, id)) race_fail(r, "id->name wrong", id, buf, nl);
        }
        n++;
    }
    atomic_fetch_add(&r->id_hits, idh);
    atomic_fetch_add(&r->name_hits, nh);
    atomic_fetch_add(&r->lookups, n);
    return NULL;
}

static void put_hot(uid_cache_t *c)
{
    char name[64];
    for (uint64_t id = 1; id <= HOT; id++) {
        int len = make_name(name, id, 0);
        uid_cache_put(c, U8(name), (size_t)len, id);
    }
}

static void *writer_thread(void *p)
{
    struct reader_arg *a = p;
    struct race *r = a->r;
    uint64_t s = a->seed;
    int clears = a->seed & 1; /* one writer also clears and restores the hot set */
    char name[64], name2[64];
    long w = 0;
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        uint64_t x = rnd(&s);
        uint64_t id = 1 + HOT + x % COLD;
        unsigned gen = (unsigned)(x >> 32) % GENS, gen2 = (unsigned)(x >> 40) % GENS;
        int len = make_name(name, id, gen);
        switch ((x >> 48) % 8) {
        case 0:
        case 1:
        case 2:
            uid_cache_put(r->c, U8(name), (size_t)len, id);
            break;
        case 3:
        case 4: { /* rename */
            int len2 = make_name(name2, id, gen2);
            uid_cache_put(r->c, U8(name2), (size_t)len2, id);
            uid_cache_remove_name(r->c, U8(name), (size_t)len);
            break;
        }
        case 5:
            uid_cache_remove_name(r->c, U8(name), (size_t)len);
            break;
        case 6:
            uid_cache_remove_id(r->c, id);
            break;
        default:
            if (clears && w % 50 == 7) {
                uid_cache_clear(r->c);
                put_hot(r->c);
            } else {
                put_hot(r->c);
            }
            break;
        }
        if (uid_cache_pending_bytes(r->c) > UID_CACHE_RETIRE_LIMIT)
            atomic_fetch_add(&r->over_limit, 1);
        w++;
    }
    atomic_fetch_add(&r->writes, w);
    return NULL;
}

static void readers_never_see_a_wrong_pairing(void **state)
{
    (void)state;
    static struct race r; /* bad_msg is large-ish; keep it off the stack */
    memset(&r, 0, sizeof r);
    atomic_flag_clear(&r.bad_once);
    r.c = uid_cache_new();
    put_hot(r.c);
    const char *ms = getenv("OCT_UID_CACHE_RACE_MS");
    long ms_run = ms ? atol(ms) : 1500;

    pthread_t th[READERS + WRITERS];
    struct reader_arg args[READERS + WRITERS];
    for (int i = 0; i < READERS + WRITERS; i++) {
        args[i] = (struct reader_arg){.r = &r, .seed = 1000 + (uint64_t)i};
        void *(*fn)(void *) = i < READERS ? reader_thread : writer_thread;
        assert_int_equal(pthread_create(&th[i], NULL, fn, &args[i]), 0);
    }
    struct timespec ts = {ms_run / 1000, (ms_run % 1000) * 1000000};
    nanosleep(&ts, NULL);
    atomic_store(&r.stop, 1);
    for (int i = 0; i < READERS + WRITERS; i++)
        pthread_join(th[i], NULL);

    print_message("race: %ld lookups, %ld name->id hits, %ld id->name hits, %ld writes\n",
                  atomic_load(&r.lookups), atomic_load(&r.id_hits), atomic_load(&r.name_hits),
                  atomic_load(&r.writes));
    if (atomic_load(&r.bad)) fail_msg("%ld bad reads, first: %s", atomic_load(&r.bad), r.bad_msg);
    assert_int_equal(atomic_load(&r.over_limit), 0);
    /* The test must actually have raced: hot keys are present nearly all the time. */
    assert_true(atomic_load(&r.id_hits) > 0);
    assert_true(atomic_load(&r.name_hits) > 0);
    assert_true(atomic_load(&r.writes) > 0);
    /* The cache's own lookup counts (tsd.uid.cache-hit / cache-miss) are exact although the
     * lookups ran on 8 threads: two lookups per reader iteration, the hits as the readers saw
     * them. Writers look nothing up. */
    uint64_t hits, misses;
    uid_cache_lookups(r.c, &hits, &misses);
    long want_hits = atomic_load(&r.id_hits) + atomic_load(&r.name_hits);
    assert_int_equal(hits, (uint64_t)want_hits);
    assert_int_equal(misses, (uint64_t)(2 * atomic_load(&r.lookups) - want_hits));

    /* Quiescent again: the hot set is whole after one more restore. */
    put_hot(r.c);
    char name[64];
    for (uint64_t id = 1; id <= HOT; id++) {
        make_name(name, id, 0);
        assert_true(has_id(r.c, name, id));
        assert_true(has_name(r.c, id, name));
    }
    uid_cache_free(r.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(basic_hit_and_miss_both_ways),
        cmocka_unit_test(names_with_nul_bytes_and_extreme_lengths),
        cmocka_unit_test(put_replaces_and_rename_is_put_then_remove),
        cmocka_unit_test(remove_touches_one_direction_only),
        cmocka_unit_test(clear_drops_everything),
        cmocka_unit_test(growth_to_a_million_keeps_every_entry),
        cmocka_unit_test(random_ops_match_reference_model),
        cmocka_unit_test(hash_depends_on_every_byte_length_and_seed),
        cmocka_unit_test(reclamation_waits_for_readers),
        cmocka_unit_test(stalled_reader_bounds_retired_memory),
        cmocka_unit_test(readers_never_see_a_wrong_pairing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
