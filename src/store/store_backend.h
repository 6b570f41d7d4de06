/* store_backend.h -- the contract a storage backend implements, and the
 * registry that store_open picks a backend from.
 *
 * Callers use store.h only; this header is for backends and for tests that
 * run the contract suite over every backend. A backend is a versioned table
 * of functions, one per operation of store.h, with exactly the semantics,
 * arguments and errors that store.h documents for that operation (argument
 * checks included: the dispatch in store.c only forwards).
 *
 * Objects: a backend's store and scanner structs start with a store_t /
 * store_scanner_t member (the "base"), which its open / scan_open fill with
 * its own table; the store_* functions dispatch through that pointer, one
 * indirect call each. open is called with *out already NULL.
 *
 * Versions: 'version' is the STORE_METHODS_VERSION the backend was written
 * against. Operations added later are appended to the struct with the
 * version that added them; store.c calls one only if the backend's version
 * is at least that, so an older backend keeps building and working. A
 * backend with version 0 or a version newer than this header is refused.
 *
 * Adding a backend: write src/store/store_<name>.c with every function
 * static and one `const store_methods_t store_<name>_methods`; declare it in
 * store_builtin.h, add it to the list in store.c and its name to
 * OCT_STORE_BACKENDS in CMakeLists.txt (contract/test_store_backends checks
 * the two agree). Its own settings come from opts->cfg (keys
 * tsd.storage.<name>.*, declared in common/config_keys.c). The contract
 * suite (tests/contract) then runs over it as contract/<program>@<name>; a
 * backend that needs outside resources is skipped there unless its test
 * config is given (tests/contract/store_fixture.h); one that needs only the
 * data dir goes in that file's fx_local_backends.
 *
 * Threads: the registry is constant; every function here may be called from
 * any thread. */
#ifndef OCT_STORE_STORE_BACKEND_H
#define OCT_STORE_STORE_BACKEND_H

#include "store/store.h"

#define STORE_METHODS_VERSION 3

typedef struct store_methods store_methods_t;

/* The first member of every backend's store and scanner. */
struct store {
    const store_methods_t *methods;
};
struct store_scanner {
    const store_methods_t *methods;
};
/* A backend's watch starts with this too; methods NULL marks store.c's own
 * in-process watches (below). */
struct store_watch {
    const store_methods_t *methods;
};

struct store_methods {
    int version;      /* STORE_METHODS_VERSION the backend implements */
    const char *name; /* the value of tsd.storage.backend that selects it */

    /* version 1. open and exists are called with opts->dir non-empty
     * (store.c checks it once for every backend). */
    int (*open)(const store_options_t *opts, store_t **out, oct_errbuf_t *eb);
    void (*close)(store_t *st); /* never called with NULL */
    int (*is_read_only)(const store_t *st);
    int (*get)(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row, oct_slice_t family,
               store_result_t *out, oct_errbuf_t *eb);
    int (*get_cell)(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                    oct_slice_t family, oct_slice_t qualifier, store_result_t *out,
                    oct_errbuf_t *eb);
    int (*multi_get)(store_t *st, store_table_t t, const store_key_t *keys, size_t n,
                     oct_slice_t family, store_result_t *out, oct_errbuf_t *eb);
    int (*write)(store_t *st, store_table_t t, const store_op_t *ops, size_t n, unsigned flags,
                 oct_errbuf_t *eb);
    int (*cas)(store_t *st, store_table_t t, oct_slice_t part, const store_check_t *checks,
               size_t n_checks, const store_op_t *ops, size_t n_ops, unsigned flags,
               oct_errbuf_t *eb);
    int (*incr)(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row, oct_slice_t family,
                oct_slice_t qualifier, int64_t delta, int64_t *out_new, unsigned flags,
                oct_errbuf_t *eb);
    int (*scan_open)(store_t *st, store_table_t t, const store_scan_spec_t *spec,
                     store_scanner_t **out, oct_errbuf_t *eb);
    int (*scan_next)(store_scanner_t *sc, store_result_t *row, oct_errbuf_t *eb);
    void (*scan_close)(store_scanner_t *sc); /* never called with NULL */
    int (*part_list)(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                     store_part_fn cb, void *ctx, oct_errbuf_t *eb);
    int (*flush)(store_t *st, oct_errbuf_t *eb);
    int (*sync)(store_t *st, oct_errbuf_t *eb);
    int (*disk_usage)(store_t *st, store_table_t t, uint64_t *out_bytes, oct_errbuf_t *eb);
    int (*compact)(store_t *st, oct_errbuf_t *eb);
    /* store_exists: 1 if opts name a store this backend created, else 0;
     * never creates anything */
    int (*exists)(const store_options_t *opts, oct_errbuf_t *eb);

    /* version 2: change notification (store.h, "Change notification"). A
     * backend whose data set admits only one process (RocksDB: the data
     * dir's lock) leaves all three NULL, as does every version-1 backend:
     * store.c then fans notifications out in-process, to the watches on the
     * same store_t, calling them on the notifying thread. A backend shared
     * by processes sets all three; its watch fills (*out)->methods. */
    int (*watch)(store_t *st, store_table_t t, oct_slice_t part, store_watch_fn fn, void *ctx,
                 store_watch_t **out, oct_errbuf_t *eb);
    void (*unwatch)(store_watch_t *w); /* never called with NULL */
    int (*notify)(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t msg,
                  oct_errbuf_t *eb);

    /* version 3: store_part_drop, called with 1..255-byte bounds, start <
     * stop (store.c checks them). An older backend has none: store_part_drop
     * then fails with OCT_EINVAL naming the backend. */
    int (*part_drop)(store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                     uint64_t *n_parts, oct_errbuf_t *eb);
};

/* The backend used when tsd.storage.backend is unset or empty. */
#define STORE_BACKEND_DEFAULT "rocksdb"

/* The built-in backends, in a fixed order: store_backend_at(i) for
 * i < store_backend_count() (NULL past the end). The tables are static. */
size_t store_backend_count(void);
const store_methods_t *store_backend_at(size_t i);

/* The backend named 'name' (NULL or "" = STORE_BACKEND_DEFAULT), or NULL if
 * there is none by that name. */
const store_methods_t *store_backend_find(const char *name);

#endif
