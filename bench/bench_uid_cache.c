/* bench_uid_cache.c -- lookups/s of the lock-free uid cache against a mutex-protected hash map.
 *
 * Data set: 100,000 tag values ("web-00042.prod.dc3.example.com"-like, 20..40 bytes) with ids
 * 1..100000; lookups follow a Zipf(s = 1.0) distribution over a random permutation of the keys, as
 * a few hosts dominate real write traffic. Each figure is the median of 5 runs; a run has every
 * thread do the given number of lookups after a common start, and counts total lookups over wall
 * time from that start to the last thread's end. The peer is a plain chained hash map (same hash
 * function, same key set) behind one pthread mutex. Every lookup must hit; the program checks it.
 *
 * Usage: bench_uid_cache [lookups_per_thread (default 2000000)] */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xmalloc.h"
#include "uid/uid_cache.h"
#include "common/benchutil.h"

#define NKEYS       100000
#define RUNS        5
#define SEQ_LEN     (1u << 20)
#define MAX_THREADS 8

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static char *names[NKEYS];
static size_t lens[NKEYS];
static uint32_t *seqs[MAX_THREADS]; /* key indices, Zipf-distributed */

/* ---- Peer: chained hash map under a mutex ---- */

struct node {
    struct node *next_n, *next_i;
    uint64_t hash, id;
    size_t len;
    const char *name;
};

static struct {
    pthread_mutex_t mu;
    struct node **by_name, **by_id;
    size_t mask;
} peer = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t peer_id_hash(uint64_t id)
{
    return id * 0x9E3779B97F4A7C15ull >> 17;
}

static void peer_build(void)
{
    size_t cap = 1;
    while (cap < NKEYS * 2)
        cap *= 2;
    peer.mask = cap - 1;
    peer.by_name = xcalloc(cap, sizeof(*peer.by_name));
    peer.by_id = xcalloc(cap, sizeof(*peer.by_id));
    for (size_t i = 0; i < NKEYS; i++) {
        struct node *n = xmalloc(sizeof(*n));
        n->hash = uid_cache_hash((const uint8_t *)names[i], lens[i], 0);
        n->id = i + 1;
        n->len = lens[i];
        n->name = names[i];
        n->next_n = peer.by_name[n->hash & peer.mask];
        peer.by_name[n->hash & peer.mask] = n;
        n->next_i = peer.by_id[peer_id_hash(n->id) & peer.mask];
        peer.by_id[peer_id_hash(n->id) & peer.mask] = n;
    }
}

static int peer_get_id(const char *name, size_t len, uint64_t *id)
{
    uint64_t h = uid_cache_hash((const uint8_t *)name, len, 0);
    int hit = 0;
    pthread_mutex_lock(&peer.mu);
    for (struct node *n = peer.by_name[h & peer.mask]; n; n = n->next_n) {
        if (n->hash == h && n->len == len && memcmp(n->name, name, len) == 0) {
            *id = n->id;
            hit = 1;
            break;
        }
    }
    pthread_mutex_unlock(&peer.mu);
    return hit;
}

static long peer_get_name(uint64_t id, uint8_t *buf, size_t cap)
{
    long r = -1;
    pthread_mutex_lock(&peer.mu);
    for (struct node *n = peer.by_id[peer_id_hash(id) & peer.mask]; n; n = n->next_i) {
        if (n->id == id) {
            memcpy(buf, n->name, n->len < cap ? n->len : cap);
            r = (long)n->len;
            break;
        }
    }
    pthread_mutex_unlock(&peer.mu);
    return r;
}

/* ---- Runs ---- */

enum mode { CACHE_NAME2ID, CACHE_ID2NAME, PEER_NAME2ID, PEER_ID2NAME };

static const char *mode_text[] = {"uid_cache name->id", "uid_cache id->name", "mutex map name->id",
                                  "mutex map id->name"};

struct run {
    uid_cache_t *c;
    enum mode mode;
    int nthreads;
    long ops;
    atomic_int ready;
    atomic_int go;
    atomic_long misses;
    atomic_ulong sink;
};

struct warg {
    struct run *r;
    int t;
};

static void *worker(void *p)
{
    struct warg *a = p;
    struct run *r = a->r;
    const uint32_t *seq = seqs[a->t];
    uint64_t sum = 0;
    long miss = 0;
    uint8_t buf[64];
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load_explicit(&r->go, memory_order_acquire))
        sched_yield();
    for (long i = 0; i < r->ops; i++) {
        uint32_t k = seq[(size_t)i & (SEQ_LEN - 1)];
        uint64_t id = 0;
        long n;
        switch (r->mode) {
        case CACHE_NAME2ID:
            miss += !uid_cache_get_id(r->c, (const uint8_t *)names[k], lens[k], &id);
            sum += id;
            break;
        case CACHE_ID2NAME:
            n = uid_cache_get_name(r->c, k + 1, buf, sizeof buf);
            miss += n != (long)lens[k];
            sum += buf[0];
            break;
        case PEER_NAME2ID:
            miss += !peer_get_id(names[k], lens[k], &id);
            sum += id;
            break;
        case PEER_ID2NAME:
            n = peer_get_name(k + 1, buf, sizeof buf);
            miss += n != (long)lens[k];
            sum += buf[0];
            break;
        }
    }
    atomic_fetch_add(&r->misses, miss);
    atomic_fetch_add(&r->sink, sum);
    return NULL;
}

/* One timed run; returns lookups per second. */
static double run_once(uid_cache_t *c, enum mode mode, int nthreads, long ops)
{
    struct run r = {.c = c, .mode = mode, .nthreads = nthreads, .ops = ops};
    pthread_t th[MAX_THREADS];
    struct warg args[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        args[t] = (struct warg){&r, t};
        if (pthread_create(&th[t], NULL, worker, &args[t]) != 0) abort();
    }
    while (atomic_load(&r.ready) < nthreads)
        sched_yield();
    double t0 = bench_now_s();
    atomic_store_explicit(&r.go, 1, memory_order_release);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double dt = bench_now_s() - t0;
    if (atomic_load(&r.misses) != 0) {
        fprintf(stderr, "bench_uid_cache: %ld unexpected misses in %s\n", atomic_load(&r.misses),
                mode_text[mode]);
        exit(1);
    }
    return (double)ops * nthreads / dt;
}

static double median_run(uid_cache_t *c, enum mode mode, int nthreads, long ops)
{
    double v[RUNS];
    for (int i = 0; i < RUNS; i++)
        v[i] = run_once(c, mode, nthreads, ops);
    return bench_median(v, RUNS);
}

/* ---- Data set ---- */

static void build_keys(void)
{
    static const char *const roles[] = {"web", "db", "cache", "api", "worker", "lb"};
    uint64_t s = 7;
    for (size_t i = 0; i < NKEYS; i++) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%s-%05zu.%s.dc%u.example.com", roles[rnd(&s) % 6], i,
                         rnd(&s) % 2 ? "prod" : "stage", (unsigned)(rnd(&s) % 8));
        names[i] = xmemdup(buf, (size_t)n);
        lens[i] = (size_t)n;
    }
}

/* Zipf(s = 1) over ranks 1..NKEYS, rank r mapped to a random key by a permutation. */
static void build_sequences(void)
{
    double *cdf = xmalloc(NKEYS * sizeof(*cdf));
    double acc = 0;
    for (size_t r = 0; r < NKEYS; r++)
        cdf[r] = acc += 1.0 / (double)(r + 1);
    uint32_t *perm = xmalloc(NKEYS * sizeof(*perm));
    uint64_t s = 99;
    for (uint32_t i = 0; i < NKEYS; i++)
        perm[i] = i;
    for (uint32_t i = NKEYS - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rnd(&s) % (i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int t = 0; t < MAX_THREADS; t++) {
        seqs[t] = xmalloc(SEQ_LEN * sizeof(uint32_t));
        for (uint32_t i = 0; i < SEQ_LEN; i++) {
            double u = (double)(rnd(&s) >> 11) * 0x1.0p-53 * acc;
            size_t lo = 0, hi = NKEYS - 1;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (cdf[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            seqs[t][i] = perm[lo];
        }
    }
    free(perm);
    free(cdf);
}

int main(int argc, char **argv)
{
    long ops = argc > 1 ? atol(argv[1]) : 2000000;
    if (ops <= 0) {
        fprintf(stderr, "usage: %s [lookups_per_thread]\n", argv[0]);
        return 2;
    }
    build_keys();
    build_sequences();
    uid_cache_t *c = uid_cache_new();
    for (size_t i = 0; i < NKEYS; i++)
        uid_cache_put(c, (const uint8_t *)names[i], lens[i], i + 1);
    peer_build();

    printf("uid cache lookups: %d keys, Zipf(1.0), %ld lookups/thread, median of %d runs\n", NKEYS,
           ops, RUNS);
    printf("%-20s %8s %16s\n", "what", "threads", "lookups/s");
    double single[4] = {0};
    static const int thread_counts[] = {1, 8};
    for (int m = 0; m < 4; m++) {
        for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
            int nt = thread_counts[k];
            double v = median_run(c, (enum mode)m, nt, ops);
            if (nt == 1) single[m] = v;
            printf("%-20s %8d %16.0f\n", mode_text[m], nt, v);
        }
    }
    printf("single-thread ratio uid_cache / mutex map: name->id %.2fx, id->name %.2fx\n",
           single[CACHE_NAME2ID] / single[PEER_NAME2ID],
           single[CACHE_ID2NAME] / single[PEER_ID2NAME]);
    uid_cache_free(c);
    return 0;
}
