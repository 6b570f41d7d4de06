/* store.h -- the HBase-shaped storage contract that every backend implements.
 *
 * The layers above (uid, tsdb, query) see OpenTSDB's model: named tables made
 * of rows, each row a sorted set of family:qualifier -> value cells. They never
 * see the engine. store_open picks one by name (store_options_t.backend, the
 * key tsd.storage.backend) from the registry in store_backend.h; every call
 * on the store then goes to that backend: RocksDB in one data dir
 * (store_rocksdb.c, the default) or a Ceph RADOS pool (store_rados.c).
 * What makes both possible is the PARTITION:
 *
 *   - Every cell belongs to exactly one partition of its table, and the caller
 *     always names it. The layer that owns a table defines them:
 *       tsdb       [salt][metric UID][base hour]   (a prefix of the row key)
 *       tsdb-uid   the UID kind: "metrics", "tagk", "tagv" (counter, forward
 *                  and reverse cells of one kind live together)
 *       tsdb-meta  the metric UID (a prefix of the TSUID row key)
 *       tsdb-tree  the 2-byte tree id
 *   - Atomicity is per partition: a conditional batch (store_cas) and the
 *     ops of one partition inside a store_write are all-or-nothing. Nothing is
 *     promised across partitions (RocksDB happens to give it; RADOS won't).
 *   - Scans run inside one partition, over rows in byte order. A caller that
 *     wants a whole table enumerates partitions with store_part_list, the way
 *     OpenTSDB opens one scanner per salt bucket.
 *   On RADOS a partition becomes one object whose omap holds its cells, and
 *   store_cas one compound object operation.
 *
 * Ordering: within a partition, rows are ordered by memcmp of the row key
 * (a shorter key that is a prefix of a longer one comes first); inside a row,
 * cells are ordered by family, then qualifier, both by memcmp.
 *
 * Visibility and durability: every successful mutating call is visible to all
 * later reads from any thread (read-your-writes, linearizable per partition).
 * A call made with STORE_SYNC has reached stable storage when it returns; one
 * without it survives a process crash (kill -9) but may be lost on power loss
 * or an OS crash.
 *
 * Names: families are 1..255 bytes and contain no NUL byte. Row keys are
 * 1..65535 bytes, any bytes. Qualifiers 0..65535 bytes, values any length.
 * Partitions 1..255 bytes, any bytes.
 *
 * Threads: a store_t may be used from any number of threads at once. A
 * store_scanner_t or store_result_t belongs to one thread at a time.
 *
 * Errors: 0 / a positive count on success; negative codes from common/err.h:
 * OCT_EIO (engine failure, detail in eb), OCT_EINVAL (caller broke the
 * contract: empty row, bad family...), OCT_EPARTITION (cells of store_cas in
 * another partition), OCT_ECASFAIL, OCT_ECORRUPT, OCT_ELOCKED, OCT_ELAYOUT. */
#ifndef OCT_STORE_STORE_H
#define OCT_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"
#include "common/config.h"
#include "common/err.h"

typedef enum {
    STORE_TABLE_DATA = 0, /* tsd.storage.hbase.data_table, default "tsdb" */
    STORE_TABLE_UID,      /* tsd.storage.hbase.uid_table,  default "tsdb-uid" */
    STORE_TABLE_META,     /* tsd.storage.hbase.meta_table, default "tsdb-meta" */
    STORE_TABLE_TREE,     /* tsd.storage.hbase.tree_table, default "tsdb-tree" */
    STORE_TABLE_SYS,      /* octsdb's own bookkeeping ("octsdb-sys"): data-dir layout */
    STORE_TABLE_ROLLUP,   /* 2.4's rollup and pre-aggregate tables ("octsdb-rollup"), each
                           * a partition prefix (docs/format/rollup.md) */
    STORE_TABLE_COUNT
} store_table_t;

typedef struct store store_t;
typedef struct store_scanner store_scanner_t;

typedef struct {
    const char *dir;                            /* data dir; created if missing */
    const char *table_names[STORE_TABLE_COUNT]; /* NULL entries take the defaults */
    int read_only;                              /* open without the write lock */
    size_t block_cache_mb;                      /* 0 = backend default */
    const char *backend;                        /* tsd.storage.backend; NULL or "" = "rocksdb" */
    const oct_config_t *cfg;                    /* borrowed for store_open only: the backend's
                                                 * own settings; NULL = its defaults */
} store_options_t;

/* Defaults: "tsdb", "tsdb-uid", "tsdb-meta", "tsdb-tree", "octsdb-sys", "octsdb-rollup". */
const char *store_table_default_name(store_table_t t);

/* One cell. In results, the slices point into memory owned by the
 * store_result_t that holds them. In ops and checks, they are borrowed from
 * the caller for the duration of the call only. */
typedef struct {
    oct_slice_t row;
    oct_slice_t family;
    oct_slice_t qualifier;
    oct_slice_t value;
} store_cell_t;

/* A growable list of cells that owns their bytes. Initialise with
 * STORE_RESULT_INIT or store_result_init; store_result_free releases it;
 * store_result_reset empties it for reuse without freeing. Pointers into it
 * stay valid until the next reset/free or the next call that appends to it. */
typedef struct {
    store_cell_t *cells;
    size_t n;
    /* private */
    size_t cap;
    uint8_t *buf;
    size_t buf_len, buf_cap;
} store_result_t;

#define STORE_RESULT_INIT                                                                          \
    {                                                                                              \
        0                                                                                          \
    }
void store_result_init(store_result_t *r);
void store_result_reset(store_result_t *r);
void store_result_free(store_result_t *r);
/* Appends a copy of the cell (used by backends; also handy in tests). */
void store_result_add(store_result_t *r, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier,
                      oct_slice_t value);

typedef enum {
    STORE_OP_PUT = 1,       /* set row/family:qualifier to value */
    STORE_OP_DELETE_CELL,   /* remove row/family:qualifier (absent is fine) */
    STORE_OP_DELETE_FAMILY, /* remove every cell of row in family */
    STORE_OP_DELETE_ROW,    /* remove every cell of row */
} store_op_kind_t;

typedef struct {
    store_op_kind_t kind;
    oct_slice_t part;  /* partition of the row */
    store_cell_t cell; /* value used by PUT only; qualifier by PUT/DELETE_CELL */
} store_op_t;

typedef enum {
    STORE_CHECK_ABSENT = 1, /* the cell must not exist */
    STORE_CHECK_EQUALS,     /* the cell must exist with exactly this value */
} store_check_kind_t;

typedef struct {
    store_check_kind_t kind;
    store_cell_t cell; /* value used by EQUALS only */
} store_check_t;

enum {
    STORE_SYNC = 1u << 0, /* durable on stable storage before returning */
};

/* Opens (creating if needed) the store in opts->dir with the backend named
 * opts->backend; every table exists after a successful open. Returns
 * OCT_ECONFIG for an unknown backend (nothing is created; eb names
 * tsd.storage.backend and the known backends), OCT_ELOCKED if another
 * process holds the dir, OCT_EIO otherwise, with detail in eb. *out is owned
 * by the caller and must be released with store_close. May block. */
OCT_MUST_CHECK int store_open(const store_options_t *opts, store_t **out, oct_errbuf_t *eb);

/* 1 if opts name a store that exists (a store_open of it would not create
 * one), 0 if not, or OCT_ECONFIG for an unknown backend. Creates nothing:
 * for callers that must not make an empty store (a read-only TSD, the
 * source of a copy). */
OCT_MUST_CHECK int store_exists(const store_options_t *opts, oct_errbuf_t *eb);

/* Flushes what the backend holds in memory and releases everything. NULL ok. */
void store_close(store_t *st);

/* 1 if st was opened with read_only (every write fails), else 0. */
int store_is_read_only(const store_t *st);
/* The name of st's backend (tsd.storage.backend's value that chose it). */
const char *store_backend_name(const store_t *st);

/* Appends the cells of one row (only 'family' if its len > 0) to 'out', in
 * (family, qualifier) order. Returns the number of cells appended (0 = no such
 * row), or a negative error. */
OCT_MUST_CHECK int store_get(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                             oct_slice_t family, store_result_t *out, oct_errbuf_t *eb);

/* Appends the single cell row/family:qualifier to 'out' if it exists.
 * Returns 1 if found, 0 if not, or a negative error. */
OCT_MUST_CHECK int store_get_cell(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                                  oct_slice_t family, oct_slice_t qualifier, store_result_t *out,
                                  oct_errbuf_t *eb);

typedef struct {
    oct_slice_t part;
    oct_slice_t row;
} store_key_t;

/* store_get for n rows, in the order given, into one result. Returns the total
 * number of cells appended or a negative error. Rows may be in different
 * partitions; the read is not a snapshot across them. */
OCT_MUST_CHECK int store_multi_get(store_t *st, store_table_t t, const store_key_t *keys, size_t n,
                                   oct_slice_t family, store_result_t *out, oct_errbuf_t *eb);

/* Applies n ops in order (a later op on the same cell wins). The ops of each
 * partition are applied atomically; ops may span partitions (e.g. a flush of
 * many series) with no atomicity across them. Returns 0 or a negative error. */
OCT_MUST_CHECK int store_write(store_t *st, store_table_t t, const store_op_t *ops, size_t n,
                               unsigned flags, oct_errbuf_t *eb);

/* Conditional batch: atomically, if every check holds, applies every op;
 * otherwise changes nothing and returns OCT_ECASFAIL. All ops must be in
 * partition 'part' (their .part is ignored) and so must the checks; no other
 * writer to that partition can interleave. Returns 0, OCT_ECASFAIL, or another
 * negative error. */
OCT_MUST_CHECK int store_cas(store_t *st, store_table_t t, oct_slice_t part,
                             const store_check_t *checks, size_t n_checks, const store_op_t *ops,
                             size_t n_ops, unsigned flags, oct_errbuf_t *eb);

/* Atomic increment of an 8-byte signed big-endian counter cell (absent = 0),
 * as HBase's atomicIncrement. Stores and returns (in *out_new) the new value.
 * OCT_ECORRUPT if the existing value is not 8 bytes. */
OCT_MUST_CHECK int store_incr(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                              oct_slice_t family, oct_slice_t qualifier, int64_t delta,
                              int64_t *out_new, unsigned flags, oct_errbuf_t *eb);

/* Keep a row when this returns nonzero. Must be thread-safe w.r.t. its ctx
 * only for the scanner that uses it. */
typedef int (*store_row_filter_fn)(void *ctx, oct_slice_t row);

typedef struct {
    oct_slice_t part;               /* required */
    oct_slice_t start_row;          /* inclusive; len 0 = from the first row */
    oct_slice_t stop_row;           /* exclusive; len 0 = to the last row */
    oct_slice_t family;             /* len 0 = all families */
    store_row_filter_fn row_filter; /* NULL = every row */
    void *filter_ctx;
    /* nonzero: no snapshot needed. Each row is still whole, but rows written
     * during the scan may or may not be seen. For append-only rows read again
     * later (the new-series journal), where a partition busy with writers
     * would otherwise make a snapshot read on RADOS start over again and again.
     * A backend may give a snapshot anyway. */
    int relaxed;
} store_scan_spec_t;

/* Opens an ordered scan over rows of one partition. The spec's slices are
 * copied; the caller may free them after the call. The scanner sees a
 * consistent snapshot of the partition taken at open (unless spec->relaxed). */
OCT_MUST_CHECK int store_scan_open(store_t *st, store_table_t t, const store_scan_spec_t *spec,
                                   store_scanner_t **out, oct_errbuf_t *eb);

/* Resets 'row' and fills it with the next row's cells (all with the same row
 * key). Returns 1 if a row was produced, 0 at the end, or a negative error. */
OCT_MUST_CHECK int store_scan_next(store_scanner_t *sc, store_result_t *row, oct_errbuf_t *eb);

void store_scan_close(store_scanner_t *sc);

/* Calls cb for every partition of table t that holds at least one cell and
 * whose bytes are in [start, stop) (len 0 = unbounded), in byte order. A
 * nonzero return from cb stops the walk and is returned. */
typedef int (*store_part_fn)(void *ctx, oct_slice_t part);
OCT_MUST_CHECK int store_part_list(store_t *st, store_table_t t, oct_slice_t start,
                                   oct_slice_t stop, store_part_fn cb, void *ctx, oct_errbuf_t *eb);

/* Forces everything written so far onto stable storage (memtables flushed).
 * May block for a long time. */
OCT_MUST_CHECK int store_flush(store_t *st, oct_errbuf_t *eb);

/* Makes every write that returned before this call durable on stable
 * storage, as if each had been made with STORE_SYNC (and any later write
 * that a concurrent reader could already see). Much cheaper than store_flush:
 * nothing is flushed out of memory, the backend's log is synced once.
 * 0 on a read-only store. Returns 0 or OCT_EIO. */
OCT_MUST_CHECK int store_sync(store_t *st, oct_errbuf_t *eb);

/* Bytes the backend uses on disk for table t (live files, after flush). */
OCT_MUST_CHECK int store_disk_usage(store_t *st, store_table_t t, uint64_t *out_bytes,
                                    oct_errbuf_t *eb);

/* Compacts every table fully, as HBase's major compaction does: what is in
 * memory is flushed, then every file is rewritten so that overwritten and
 * deleted cells no longer take space and the data sits in its final, most
 * compressed form. Every cell reads the same before and after. Other calls
 * may run meanwhile (they see the data unchanged). May block for a long time
 * (it reads and writes the whole store). Returns 0, OCT_EINVAL on a store
 * opened read-only, or OCT_EIO. */
OCT_MUST_CHECK int store_compact(store_t *st, oct_errbuf_t *eb);

/* Removes every cell of every partition of table t whose bytes are in
 * [start, stop) (both 1..255 bytes, start < stop) as one step, and gives
 * the space back before returning: RocksDB deletes the key range and
 * compacts it, RADOS removes the partitions' objects. Partitions outside the
 * range are untouched. Meant for expiring whole partitions (retention): a
 * write racing with the call into a partition it drops may or may not
 * survive. *n_parts (may be NULL) receives the number of partitions that
 * held cells. Returns 0, OCT_EINVAL (bad bounds, read-only store) or
 * OCT_EIO. May block for a long time. */
OCT_MUST_CHECK int store_part_drop(store_t *st, store_table_t t, oct_slice_t start,
                                   oct_slice_t stop, uint64_t *n_parts, oct_errbuf_t *eb);

/* ---- Change notification ----------------------------------------------
 *
 * A channel beside the data, for caches above the store (the UID registry's):
 * store_notify(t, part, msg) hands msg to every watch on (t, part) of every
 * store handle on the same data set -- other processes' (several TSDs on one
 * RADOS namespace) and this process's, the notifier's own watches included.
 * Nothing is stored: a watch sees the notifications sent while it is
 * registered and connected, in the order one notifier sent them; there is no
 * order between notifiers.
 *
 * Delivery and the bound: store_notify returns 0 once every watch registered
 * on (t, part) has run its callback for msg (so a caller that notifies after
 * changing the data knows every other cache has dropped what it held when
 * store_notify returns), or OCT_EIO when some did not answer within the
 * backend's timeout (RADOS: STORE_NOTIFY_TIMEOUT_MS) or the notification
 * could not be sent; the data change stands either way, and a watch that
 * missed msg is told so (STORE_WATCH_LOST) once its connection is back, or
 * still gets msg late.
 *
 * A LOST event (events & STORE_WATCH_LOST, msg empty) means notifications may
 * have been missed (RADOS: the watch's connection to the OSD broke and the
 * backend registered it again): treat it as "everything on (t, part) may have
 * changed". The backend re-registers by itself; the watch stays valid.
 *
 * Threads: callbacks run on a backend thread (RADOS: librados' callback
 * thread) or on the notifying thread (a single-process backend fans out
 * in place), one at a time per watch. A callback must be quick and must not
 * call any store function (the thread it runs on may be the one other store
 * calls wait for): drop cached state, return. Backends whose data dir admits
 * one process (RocksDB) deliver in-process only.
 *
 * Limits: msg is 0..STORE_NOTIFY_MAX bytes. Every watch must be removed
 * (store_unwatch) before store_close. */
#define STORE_NOTIFY_MAX        65536
#define STORE_NOTIFY_TIMEOUT_MS 5000
enum {
    STORE_WATCH_LOST = 1u << 0, /* notifications may have been missed */
};
typedef struct store_watch store_watch_t;
/* msg is borrowed for the call only. */
typedef void (*store_watch_fn)(void *ctx, unsigned events, oct_slice_t msg);

/* Registers fn(ctx, ...) for notifications on (t, part) (1..255 bytes); *out
 * is released with store_unwatch. On a read-only store it watches what
 * writable stores notify (RADOS: the notify object must exist, i.e. some
 * writer watched first). Returns 0, OCT_EINVAL, or OCT_EIO. May block (one
 * round trip). */
OCT_MUST_CHECK int store_watch(store_t *st, store_table_t t, oct_slice_t part, store_watch_fn fn,
                               void *ctx, store_watch_t **out, oct_errbuf_t *eb);

/* Removes a watch: when it returns, its callback is not running and will not
 * run again. NULL ok. Must not be called from a watch callback. May block. */
void store_unwatch(store_watch_t *w);

/* Sends msg to every watch on (t, part) and waits for their callbacks (see
 * above). Allowed on a read-only store (it changes no data). Returns 0,
 * OCT_EINVAL (msg too long, bad part), or OCT_EIO. May block up to
 * STORE_NOTIFY_TIMEOUT_MS. */
OCT_MUST_CHECK int store_notify(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t msg,
                                oct_errbuf_t *eb);

#endif
