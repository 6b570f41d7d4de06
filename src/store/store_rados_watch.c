/* store_rados_watch.c -- the rados backend's change notification (store.h,
 * "Change notification"; docs/format/rados.md, "Notify objects").
 *
 * A watch on (table, partition) is a RADOS watch (rados_watch3) on the
 * partition's notify object, table "/" hex(partition) "/watch", created
 * empty by the first writable store that watches it. store_notify is
 * rados_notify2 on that object: the OSD hands the message to every watch on
 * it, in every client, and the call returns when each has acknowledged; our
 * callback runs the caller's function first and acknowledges after, so a
 * store_notify that returns 0 means every watcher's callback has finished.
 *
 * A watch whose connection to the OSD broke for longer than the OSD keeps it
 * (RS_WATCH_TIMEOUT_S) is gone, and notifications meanwhile were lost.
 * librados reports that through the error callback (and rados_watch_check);
 * this file's thread then registers the watch again and delivers
 * STORE_WATCH_LOST, so the owner drops everything it cached. The error
 * callback only sets a flag: it runs on librados' callback thread, where a
 * blocking call could wait for itself. */
#include "store/store_rados_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xmalloc.h"

#define RS_WATCH_TIMEOUT_S 10  /* the OSD drops a disconnected watch after this */
#define RS_WATCH_POLL_MS   100 /* how often the thread looks for broken watches */

struct rs_watch {
    store_watch_t base; /* first: store.c dispatches store_unwatch through it */
    rs_store_t *st;
    char oid[RS_OID_MAX + 8];
    uint64_t cookie; /* valid while registered (under st->w_mu) */
    int registered;
    atomic_int broken;
    store_watch_fn fn;
    void *ctx;
    rs_watch_t *next;
};

static uint32_t le32(const char *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void notify_oid(const rs_store_t *st, store_table_t t, oct_slice_t part, char *oid)
{
    rs_data_oid(st, t, part, oid);
    strcat(oid, "/watch");
}

static void on_notify(void *arg, uint64_t notify_id, uint64_t handle, uint64_t notifier_id,
                      void *data, size_t len)
{
    (void)notifier_id;
    rs_watch_t *w = arg;
    w->fn(w->ctx, 0, oct_slice(data, len));
    /* after the callback: the notifier's wait covers it */
    if (rados_notify_ack(w->st->io, w->oid, notify_id, handle, NULL, 0) < 0) {
        /* the notifier times out on us; nothing else to do here */
    }
}

static void on_error(void *arg, uint64_t cookie, int err)
{
    (void)cookie;
    (void)err;
    rs_watch_t *w = arg;
    atomic_store(&w->broken, 1);
}

/* Registers w (st->w_mu held or w not yet shared). */
static int watch_register(rs_watch_t *w)
{
    rs_store_t *st = w->st;
    if (!st->read_only) {
        rados_write_op_t op = rados_create_write_op();
        rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
        int rc = rados_write_op_operate(op, st->io, w->oid, NULL, 0);
        rados_release_write_op(op);
        if (rc < 0) return rc;
    }
    atomic_store(&w->broken, 0);
    int rc = rados_watch3(st->io, w->oid, &w->cookie, on_notify, on_error, RS_WATCH_TIMEOUT_S, w);
    w->registered = rc == 0;
    return rc;
}

/* The re-registration thread: every RS_WATCH_POLL_MS, each watch that
 * librados reported broken (or whose rados_watch_check fails) is
 * unregistered, registered again (retried each round until it works), and
 * then told STORE_WATCH_LOST. */
static void *watch_thread(void *arg)
{
    rs_store_t *st = arg;
    pthread_mutex_lock(&st->w_mu);
    while (!st->w_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += RS_WATCH_POLL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&st->w_cv, &st->w_mu, &ts);
        for (rs_watch_t *w = st->watches; w && !st->w_stop; w = w->next) {
            if (w->registered && !atomic_load(&w->broken) &&
                rados_watch_check(st->io, w->cookie) >= 0)
                continue;
            if (w->registered) {
                if (rados_unwatch2(st->io, w->cookie) < 0) {
                    /* already gone on the OSD: that is why we are here */
                }
                w->registered = 0;
            }
            if (watch_register(w) != 0) continue; /* next round */
            /* registered first, so a change after this event is notified */
            w->fn(w->ctx, STORE_WATCH_LOST, oct_slice(NULL, 0));
        }
    }
    pthread_mutex_unlock(&st->w_mu);
    return NULL;
}

void rs_watch_init(rs_store_t *st)
{
    pthread_mutex_init(&st->w_mu, NULL);
    pthread_cond_init(&st->w_cv, NULL);
}

int rs_watch(store_t *base, store_table_t t, oct_slice_t part, store_watch_fn fn, void *ctx,
             store_watch_t **out, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    rs_watch_t *w = xcalloc(1, sizeof *w);
    w->base.methods = &store_rados_methods;
    w->st = st;
    w->fn = fn;
    w->ctx = ctx;
    notify_oid(st, t, part, w->oid);
    pthread_mutex_lock(&st->w_mu);
    int rc = watch_register(w);
    if (rc == 0 && !st->w_thr_started) {
        if (pthread_create(&st->w_thr, NULL, watch_thread, st) == 0)
            st->w_thr_started = 1;
        else
            rc = -EAGAIN;
        if (rc && rados_unwatch2(st->io, w->cookie) < 0) {
            /* the watch times out on the OSD */
        }
    }
    if (rc == 0) {
        w->next = st->watches;
        st->watches = w;
    }
    pthread_mutex_unlock(&st->w_mu);
    if (rc) {
        if (rc == -ENOENT)
            rc = oct_err(eb, OCT_EIO,
                         "rados: cannot watch %s: no such object (a read-only store watches "
                         "only what a writable one created)",
                         w->oid);
        else
            rc = rs_fail(eb, rc, "watch", w->oid);
        free(w);
        return rc;
    }
    *out = &w->base;
    return 0;
}

void rs_unwatch(store_watch_t *base)
{
    rs_watch_t *w = (rs_watch_t *)base;
    rs_store_t *st = w->st;
    pthread_mutex_lock(&st->w_mu);
    for (rs_watch_t **p = &st->watches; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (w->registered && rados_unwatch2(st->io, w->cookie) < 0) {
        /* gone already */
    }
    pthread_mutex_unlock(&st->w_mu);
    /* a callback already queued for w runs before this returns */
    if (rados_watch_flush(st->cluster) < 0) {
        /* the cluster handle is shutting down: no callbacks left either */
    }
    free(w);
}

int rs_notify(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t msg, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    char oid[RS_OID_MAX + 8];
    notify_oid(st, t, part, oid);
    char *reply = NULL;
    size_t reply_len = 0;
    int rc = rados_notify2(st->io, oid, (const char *)msg.ptr, (int)msg.len,
                           STORE_NOTIFY_TIMEOUT_MS, &reply, &reply_len);
    size_t timeouts = 0;
    if (reply) {
        /* le32 acks, {le64 gid, le64 cookie, le32 len, bytes}..., le32 timeouts */
        size_t pos = 0;
        if (reply_len >= 4) {
            uint32_t n = le32(reply);
            pos = 4;
            for (uint32_t i = 0; i < n && pos + 20 <= reply_len; i++)
                pos += 20 + le32(reply + pos + 16);
            if (pos + 4 <= reply_len) timeouts = le32(reply + pos);
        }
        rados_buffer_free(reply);
    }
    if (rc == -ENOENT) return 0; /* nobody ever watched it: nobody to tell */
    if (rc == -ETIMEDOUT)
        return oct_err(eb, OCT_EIO,
                       "rados: notify %s: %zu watch(es) did not answer within %d ms (they learn "
                       "it late or see a lost watch)",
                       oid, timeouts, STORE_NOTIFY_TIMEOUT_MS);
    if (rc < 0) return rs_fail(eb, rc, "notify", oid);
    return 0;
}

void rs_watch_destroy(rs_store_t *st)
{
    pthread_mutex_lock(&st->w_mu);
    st->w_stop = 1;
    pthread_cond_broadcast(&st->w_cv);
    pthread_mutex_unlock(&st->w_mu);
    if (st->w_thr_started) pthread_join(st->w_thr, NULL);
    st->w_thr_started = 0;
    /* the contract says unwatch first; a watch left behind is dropped here */
    while (st->watches) {
        rs_watch_t *w = st->watches;
        st->watches = w->next;
        if (w->registered && st->io && rados_unwatch2(st->io, w->cookie) < 0) {
            /* gone already */
        }
        free(w);
    }
    if (st->cluster && rados_watch_flush(st->cluster) < 0) {
        /* shutting down */
    }
    pthread_cond_destroy(&st->w_cv);
    pthread_mutex_destroy(&st->w_mu);
}

int rs__watch_break(store_watch_t *base)
{
    rs_watch_t *w = (rs_watch_t *)base;
    pthread_mutex_lock(&w->st->w_mu);
    int rc = w->registered ? rados_unwatch2(w->st->io, w->cookie) : 0;
    w->registered = 0;
    atomic_store(&w->broken, 1);
    pthread_mutex_unlock(&w->st->w_mu);
    return rc;
}
