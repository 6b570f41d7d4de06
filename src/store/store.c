/* store.c -- the backend registry and the store.h entry points, each one
 * indirect call into the backend that opened the store.
 *
 * NULL stores get the errors the RocksDB backend gave them before there was
 * a dispatch, so callers see no change. */
#include "store/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_backend.h"
#include "store/store_builtin.h"
#include "common/xmalloc.h"

static const store_methods_t *const store_backends[] = {
    &store_rocksdb_methods,
    &store_rados_methods,
};

#define STORE_N_BACKENDS (sizeof store_backends / sizeof store_backends[0])

size_t store_backend_count(void)
{
    return STORE_N_BACKENDS;
}

const store_methods_t *store_backend_at(size_t i)
{
    return i < STORE_N_BACKENDS ? store_backends[i] : NULL;
}

const store_methods_t *store_backend_find(const char *name)
{
    if (!name || !*name) name = STORE_BACKEND_DEFAULT;
    for (size_t i = 0; i < STORE_N_BACKENDS; i++)
        if (strcmp(store_backends[i]->name, name) == 0) return store_backends[i];
    return NULL;
}

static int unknown_backend(const char *name, oct_errbuf_t *eb)
{
    char known[256];
    size_t len = 0;
    known[0] = '\0';
    for (size_t i = 0; i < STORE_N_BACKENDS && len < sizeof known; i++) {
        int n = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                         store_backends[i]->name);
        if (n < 0) break;
        len += (size_t)n;
    }
    return oct_err(eb, OCT_ECONFIG, "tsd.storage.backend: unknown storage backend '%s' (known: %s)",
                   name, known);
}

int store_exists(const store_options_t *opts, oct_errbuf_t *eb)
{
    const char *name = opts ? opts->backend : NULL;
    const store_methods_t *m = store_backend_find(name);
    if (!m) return unknown_backend(name, eb);
    if (!opts || !opts->dir || !*opts->dir) return 0;
    return m->exists(opts, eb);
}

int store_open(const store_options_t *opts, store_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    const char *name = opts ? opts->backend : NULL;
    const store_methods_t *m = store_backend_find(name);
    if (!m) return unknown_backend(name, eb);
    if (m->version < 1 || m->version > STORE_METHODS_VERSION ||
        (m->version >= 2 && (!m->watch != !m->unwatch || !m->watch != !m->notify)))
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.storage.backend: backend '%s' implements version %d of the store "
                       "methods, this build knows 1..%d (watch, unwatch and notify: all or none)",
                       m->name, m->version, STORE_METHODS_VERSION);
    if (!opts || !opts->dir || !*opts->dir)
        return oct_err(eb, OCT_EINVAL, "store_open: no data dir given");
    return m->open(opts, out, eb);
}

void store_close(store_t *st)
{
    if (st) st->methods->close(st);
}

int store_is_read_only(const store_t *st)
{
    return st->methods->is_read_only(st);
}

const char *store_backend_name(const store_t *st)
{
    return st->methods->name;
}

int store_get(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row, oct_slice_t family,
              store_result_t *out, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->get(st, t, part, row, family, out, eb);
}

int store_get_cell(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                   oct_slice_t family, oct_slice_t qualifier, store_result_t *out, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->get_cell(st, t, part, row, family, qualifier, out, eb);
}

int store_multi_get(store_t *st, store_table_t t, const store_key_t *keys, size_t n,
                    oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->multi_get(st, t, keys, n, family, out, eb);
}

int store_write(store_t *st, store_table_t t, const store_op_t *ops, size_t n, unsigned flags,
                oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->write(st, t, ops, n, flags, eb);
}

int store_cas(store_t *st, store_table_t t, oct_slice_t part, const store_check_t *checks,
              size_t n_checks, const store_op_t *ops, size_t n_ops, unsigned flags,
              oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->cas(st, t, part, checks, n_checks, ops, n_ops, flags, eb);
}

int store_incr(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row, oct_slice_t family,
               oct_slice_t qualifier, int64_t delta, int64_t *out_new, unsigned flags,
               oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->incr(st, t, part, row, family, qualifier, delta, out_new, flags, eb);
}

int store_scan_open(store_t *st, store_table_t t, const store_scan_spec_t *spec,
                    store_scanner_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->scan_open(st, t, spec, out, eb);
}

int store_scan_next(store_scanner_t *sc, store_result_t *row, oct_errbuf_t *eb)
{
    return sc->methods->scan_next(sc, row, eb);
}

void store_scan_close(store_scanner_t *sc)
{
    if (sc) sc->methods->scan_close(sc);
}

int store_part_list(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                    store_part_fn cb, void *ctx, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->part_list(st, t, start, stop, cb, ctx, eb);
}

int store_flush(store_t *st, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    return st->methods->flush(st, eb);
}

int store_sync(store_t *st, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    return st->methods->sync(st, eb);
}

int store_disk_usage(store_t *st, store_table_t t, uint64_t *out_bytes, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    return st->methods->disk_usage(st, t, out_bytes, eb);
}

int store_compact(store_t *st, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    return st->methods->compact(st, eb);
}

int store_part_drop(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                    uint64_t *n_parts, oct_errbuf_t *eb)
{
    if (n_parts) *n_parts = 0;
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    if ((int)t < 0 || t >= STORE_TABLE_COUNT)
        return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    if (start.len < 1 || start.len > 255 || stop.len < 1 || stop.len > 255)
        return oct_err(eb, OCT_EINVAL, "store_part_drop: bounds must be 1..255 bytes");
    size_t m = start.len < stop.len ? start.len : stop.len;
    int c = memcmp(start.ptr, stop.ptr, m);
    if (c > 0 || (c == 0 && start.len >= stop.len))
        return oct_err(eb, OCT_EINVAL, "store_part_drop: start is not below stop");
    if (st->methods->version < 3 || !st->methods->part_drop)
        return oct_err(eb, OCT_EINVAL, "store backend '%s' cannot drop partitions",
                       st->methods->name);
    uint64_t n = 0;
    int rc = st->methods->part_drop(st, t, start, stop, &n, eb);
    if (rc == 0 && n_parts) *n_parts = n;
    return rc;
}

/* ---- change notification ----------------------------------------------
 * Backends with watch/notify get the calls; the others admit one process per
 * data set, so the watches on the same store_t are everyone to tell: a list
 * of them, walked under one mutex (which also makes store_unwatch wait for a
 * callback in progress). Notifications are rare (UID renames and deletes),
 * so one list for the process is enough. */

typedef struct local_watch {
    store_watch_t base; /* methods NULL: one of ours */
    store_t *st;
    store_table_t t;
    uint8_t part[255];
    size_t part_len;
    store_watch_fn fn;
    void *ctx;
    struct local_watch *next;
} local_watch_t;

static pthread_mutex_t local_mu = PTHREAD_MUTEX_INITIALIZER;
static local_watch_t *local_watches;

static int has_watch_methods(const store_t *st)
{
    return st->methods->version >= 2 && st->methods->watch;
}

static int check_watch_args(store_table_t t, oct_slice_t part, oct_errbuf_t *eb)
{
    if ((int)t < 0 || t >= STORE_TABLE_COUNT)
        return oct_err(eb, OCT_EINVAL, "no such table %d", (int)t);
    if (part.len < 1 || part.len > 255)
        return oct_err(eb, OCT_EINVAL, "partition must be 1..255 bytes, got %zu", part.len);
    return 0;
}

int store_watch(store_t *st, store_table_t t, oct_slice_t part, store_watch_fn fn, void *ctx,
                store_watch_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    if (!st || !fn) return oct_err(eb, OCT_EINVAL, "store_watch: no store or no callback");
    int rc = check_watch_args(t, part, eb);
    if (rc) return rc;
    if (has_watch_methods(st)) return st->methods->watch(st, t, part, fn, ctx, out, eb);
    local_watch_t *w = xcalloc(1, sizeof *w);
    w->st = st;
    w->t = t;
    memcpy(w->part, part.ptr, part.len);
    w->part_len = part.len;
    w->fn = fn;
    w->ctx = ctx;
    pthread_mutex_lock(&local_mu);
    w->next = local_watches;
    local_watches = w;
    pthread_mutex_unlock(&local_mu);
    *out = &w->base;
    return 0;
}

void store_unwatch(store_watch_t *w)
{
    if (!w) return;
    if (w->methods) {
        w->methods->unwatch(w);
        return;
    }
    pthread_mutex_lock(&local_mu);
    for (local_watch_t **p = &local_watches; *p; p = &(*p)->next) {
        if (&(*p)->base == w) {
            *p = (*p)->next;
            break;
        }
    }
    pthread_mutex_unlock(&local_mu);
    free(w);
}

int store_notify(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t msg, oct_errbuf_t *eb)
{
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    int rc = check_watch_args(t, part, eb);
    if (rc) return rc;
    if (msg.len > STORE_NOTIFY_MAX)
        return oct_err(eb, OCT_EINVAL, "notification of %zu bytes, at most %d", msg.len,
                       STORE_NOTIFY_MAX);
    if (has_watch_methods(st)) return st->methods->notify(st, t, part, msg, eb);
    pthread_mutex_lock(&local_mu);
    for (local_watch_t *w = local_watches; w; w = w->next)
        if (w->st == st && w->t == t && w->part_len == part.len &&
            memcmp(w->part, part.ptr, part.len) == 0)
            w->fn(w->ctx, 0, msg);
    pthread_mutex_unlock(&local_mu);
    return 0;
}
