/* uid_int.h -- internal to the uid module: the registry's state, shared by
 * uid.c, uid_meta.c and uid_watch.c. Nothing outside src/uid may include it. */
#ifndef OCT_UID_UID_INT_H
#define OCT_UID_UID_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "store/store.h"
#include "uid/uid.h"
#include "uid/uid_cache.h"

typedef struct {
    unsigned width;
    uint64_t max;
    int auto_create;
    int random;
    uid_cache_t *cache;
    oct_slice_t qual;      /* "metrics" / "tagk" / "tagv": qualifier and partition */
    oct_slice_t meta_qual; /* "metric_meta" / ... */
    /* 1 + the counter as this registry last wrote it (0 = unknown): the
     * next assignment tries counter + 1 without reading counter and reverse
     * first; the CAS checks both, and a failure clears the hint. */
    atomic_uint_fast64_t counter_hint;
    /* Serialises this registry's batch assignments of the kind, so that
     * they do not fail each other's CAS (each retry re-reads every name). */
    pthread_mutex_t batch_mu;
    /* Bumped before every invalidation of this kind (rename, delete, a
     * remote change, a lost watch): a lookup that read the store before a
     * bump must not leave what it read in the cache (uid__cache_fill). */
    atomic_uint_fast64_t inval_gen;
    /* every name of the kind in byte order, for uid_suggest (uid_names.c);
     * built on first use; the pointer and the snapshots' counts under names_mu */
    struct uid_names *names;
    pthread_mutex_t names_mu;
} uid_kind_state_t;

struct uid_registry {
    store_t *st;
    uid_kind_state_t k[CODEC_UID_N_KINDS];
    char *allow_special;
    int realtime_uid_meta;
    /* Deferred (unsynced) assignments, for uid_sync_deferred: in flight
     * now, finished so far, finished as of the last sync's start. */
    atomic_uint_fast64_t def_inflight, def_done, def_synced;
    atomic_uint_fast64_t def_syncs; /* store syncs made by uid_sync_deferred */
    pthread_mutex_t sync_mu;        /* one uid_sync_deferred at a time */
    uid_change_fn on_change;        /* uid_set_change_hook, under hook_mu */
    void *on_change_ctx;
    pthread_mutex_t hook_mu;
    /* the change channel (uid_watch.c) */
    uint64_t sender;                           /* random: our own messages */
    store_watch_t *watch[CODEC_UID_N_KINDS];   /* NULL: not watching */
    atomic_uint_fast64_t remote_changes, lost; /* messages applied, lost events */
    struct uid_watch_ctx {
        uid_registry_t *r;
        codec_uid_kind_t kind;
    } wctx[CODEC_UID_N_KINDS];
};

static const oct_slice_t UID_FAM_ID = {(const uint8_t *)"id", 2};
static const oct_slice_t UID_FAM_NAME = {(const uint8_t *)"name", 4};
static const oct_slice_t UID_COUNTER_ROW = {(const uint8_t *)"", 1}; /* the single byte 0x00 */

static inline const char *uid_kind_str(const uid_kind_state_t *s)
{
    return (const char *)s->qual.ptr;
}

/* The store the registry was opened on (borrowed). */
store_t *uid__store(uid_registry_t *r);

/* Puts name <-> id into the kind's cache after a store read that started
 * when inval_gen was gen; takes it out again if an invalidation came
 * meanwhile (the read may have seen the old mapping). */
void uid__cache_fill(uid_kind_state_t *s, uint64_t gen, const uint8_t *name, size_t len,
                     uint64_t id);

/* uid_watch.c: the change channel between registries on one data set
 * (docs/format/uid.md, section 6). uid__watch_open registers a watch per
 * kind (at registry open; on a read-only store a failure is ignored: that
 * store may hold no notify object yet). uid__watch_close removes them.
 * uid__changed runs after a rename or delete of ours took effect in the
 * store: it invalidates locally (inval_gen, the caches, the change hook) and
 * tells the other registries, waiting for them (STORE_NOTIFY_TIMEOUT_MS at
 * most); a failed notification is not an error of the rename (the store
 * holds the change; a registry that missed it sees a lost watch). */
int uid__watch_open(uid_registry_t *r, oct_errbuf_t *eb);
void uid__watch_close(uid_registry_t *r);
void uid__changed(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, oct_slice_t old_name,
                  oct_slice_t new_name, int drop_id);

/* uid.c: calls cb for the kind's names starting with prefix, in byte
 * order, at most max of them, read from the store's forward map. */
int uid__scan_forward(uid_registry_t *r, uid_kind_state_t *s, const uint8_t *prefix, size_t plen,
                      size_t max, uid_name_fn cb, void *ctx, oct_errbuf_t *eb);

/* uid_names.c: uid_suggest from the kind's in-memory sorted name list
 * (not for random metric UIDs, which have no counter to follow), and its
 * release at close. */
int uid__names_suggest(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *prefix, size_t plen,
                       size_t max, uid_name_fn cb, void *ctx, oct_errbuf_t *eb);
void uid__names_free(uid_kind_state_t *s);

#endif
