/* uid_watch.c -- keeping the UID caches of several registries on one data
 * set coherent (several TSDs on one RADOS namespace; uid_int.h).
 *
 * Assignment needs nothing here: it is one conditional batch in the store,
 * so racing registries agree on every UID, and a name another registry
 * assigned is found in the store on a cache miss (there is no negative
 * cache to go stale). What a cache can get wrong is a name that went away
 * or moved: a rename or delete. The registry that made it sends, once the
 * store holds it, a message (docs/format/uid.md, section 6) through the
 * store's change channel on the kind's partition, and waits until every
 * watcher has run its callback (store_notify), so when the rename returns
 * to its caller no other TSD still resolves the old name from its cache.
 * A receiver drops the two mappings and tells its write path through the
 * change hook, as a local rename does. A lost watch (notifications may have
 * been missed) drops the whole kind and tells the hook "UID 0": everything.
 *
 * Callbacks run on the store's notification thread: they only take the
 * cache's writer mutex and the hook mutex, never call the store. */
#include "uid/uid_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/bytes.h"
#include "common/xmalloc.h"

#define UID_MSG_V1   0x01
#define UID_MSG_HEAD 20 /* version, kind, op, sender 8, id 8; then oldlen 2 */

enum { UID_OP_RENAME = 1, UID_OP_DELETE = 2 };

static void call_hook(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id)
{
    pthread_mutex_lock(&r->hook_mu);
    if (r->on_change) r->on_change(r->on_change_ctx, kind, id);
    pthread_mutex_unlock(&r->hook_mu);
}

static void forget_kind(uid_registry_t *r, codec_uid_kind_t kind)
{
    uid_kind_state_t *s = &r->k[kind];
    atomic_fetch_add(&s->inval_gen, 1);
    uid_cache_clear(s->cache);
    /* the next assignment reads the counter instead of trusting our last one */
    atomic_store(&s->counter_hint, 0);
    call_hook(r, kind, 0);
    atomic_fetch_add(&r->lost, 1);
}

static void on_message(void *ctx, unsigned events, oct_slice_t msg)
{
    struct uid_watch_ctx *c = ctx;
    uid_registry_t *r = c->r;
    codec_uid_kind_t kind = c->kind;
    if (events & STORE_WATCH_LOST) {
        forget_kind(r, kind);
        return;
    }
    const uint8_t *p = msg.ptr;
    if (msg.len < UID_MSG_HEAD + 2 || p[0] != UID_MSG_V1 || p[1] != (uint8_t)kind ||
        (p[2] != UID_OP_RENAME && p[2] != UID_OP_DELETE)) {
        /* a message we cannot read: assume the worst */
        forget_kind(r, kind);
        return;
    }
    if (oct_get_be64(p + 3) == r->sender) return; /* ours: applied before sending */
    uint64_t id = oct_get_be64(p + 11);
    size_t old_len = oct_get_be16(p + UID_MSG_HEAD);
    if (UID_MSG_HEAD + 2 + old_len > msg.len) {
        forget_kind(r, kind);
        return;
    }
    uid_kind_state_t *s = &r->k[kind];
    atomic_fetch_add(&s->inval_gen, 1);
    uid_cache_remove_name(s->cache, p + UID_MSG_HEAD + 2, old_len);
    uid_cache_remove_id(s->cache, id);
    call_hook(r, kind, id);
    atomic_fetch_add(&r->remote_changes, 1);
}

int uid__watch_open(uid_registry_t *r, oct_errbuf_t *eb)
{
    while (r->sender == 0)
        if (getrandom(&r->sender, sizeof r->sender, 0) != (ssize_t)sizeof r->sender)
            return oct_err(eb, OCT_EIO, "getrandom failed");
    int ro = store_is_read_only(r->st);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        r->wctx[k].r = r;
        r->wctx[k].kind = (codec_uid_kind_t)k;
        oct_errbuf_t web;
        int rc = store_watch(r->st, STORE_TABLE_UID, r->k[k].qual, on_message, &r->wctx[k],
                             &r->watch[k], ro ? &web : eb);
        if (rc && !ro) {
            uid__watch_close(r);
            return rc;
        }
    }
    return 0;
}

void uid__watch_close(uid_registry_t *r)
{
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        store_unwatch(r->watch[k]);
        r->watch[k] = NULL;
    }
}

void uid__changed(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, oct_slice_t old_name,
                  oct_slice_t new_name, int drop_id)
{
    uid_kind_state_t *s = &r->k[kind];
    atomic_fetch_add(&s->inval_gen, 1);
    uid_cache_remove_name(s->cache, old_name.ptr, old_name.len);
    if (new_name.len)
        uid_cache_put(s->cache, new_name.ptr, new_name.len, id);
    else if (drop_id)
        uid_cache_remove_id(s->cache, id);
    call_hook(r, kind, id);

    size_t n = UID_MSG_HEAD + 2 + old_name.len + new_name.len;
    uint8_t *m = xmalloc(n);
    m[0] = UID_MSG_V1;
    m[1] = (uint8_t)kind;
    m[2] = new_name.len ? UID_OP_RENAME : UID_OP_DELETE;
    oct_put_be64(m + 3, r->sender);
    oct_put_be64(m + 11, id);
    oct_put_be16(m + UID_MSG_HEAD, (uint16_t)old_name.len);
    memcpy(m + UID_MSG_HEAD + 2, old_name.ptr, old_name.len);
    if (new_name.len) memcpy(m + UID_MSG_HEAD + 2 + old_name.len, new_name.ptr, new_name.len);
    oct_errbuf_t eb;
    if (store_notify(r->st, STORE_TABLE_UID, s->qual, oct_slice(m, n), &eb) != 0) {
        /* the change stands in the store; a registry that did not answer
         * gets the message late or a lost watch (store.h) */
    }
    free(m);
}

void uid__cache_fill(uid_kind_state_t *s, uint64_t gen, const uint8_t *name, size_t len,
                     uint64_t id)
{
    uid_cache_put(s->cache, name, len, id);
    if (atomic_load(&s->inval_gen) != gen) {
        uid_cache_remove_name(s->cache, name, len);
        uid_cache_remove_id(s->cache, id);
    }
}
