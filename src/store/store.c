/* store.c -- the backend registry and the store.h entry points, each one
 * indirect call into the backend that opened the store.
 *
 * NULL stores get the errors the RocksDB backend gave them before there was
 * a dispatch, so callers see no change. */
#include "store/store.h"

#include <stdio.h>
#include <string.h>

#include "store/store_backend.h"
#include "store/store_builtin.h"

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
    return m->exists(opts, eb);
}

int store_open(const store_options_t *opts, store_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    const char *name = opts ? opts->backend : NULL;
    const store_methods_t *m = store_backend_find(name);
    if (!m) return unknown_backend(name, eb);
    if (m->version < 1 || m->version > STORE_METHODS_VERSION)
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.storage.backend: backend '%s' implements version %d of the store "
                       "methods, this build knows 1..%d",
                       m->name, m->version, STORE_METHODS_VERSION);
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
