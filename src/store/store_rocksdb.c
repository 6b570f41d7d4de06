/* store_rocksdb.c -- the store.h contract on one embedded RocksDB database:
 * the backend "rocksdb", seen from outside only as store_rocksdb_methods.
 *
 * One database per data dir, one column family per table. Every cell is one
 * key/value pair whose key is enc(partition) | enc(row) | family | 00 |
 * qualifier (docs/format/store-keys.md); the escape enc() keeps RocksDB's
 * bytewise order equal to the contract's row/family/qualifier order, and
 * makes partitions, rows and families contiguous key ranges, so a row read, a
 * scan, a row deletion and the step to the next partition are each one range
 * or one seek.
 *
 * Atomicity: a RocksDB WriteBatch is atomic, but store_cas and store_incr
 * read before they write. Every mutating call therefore holds the stripe
 * mutexes of the partitions it touches (hash of table and partition into
 * STORE_STRIPES); store_write takes all of its stripes in ascending order so
 * two writers can never wait on each other. Plain writes lock too, otherwise
 * one could land between a CAS's check and its write. Reads take no lock:
 * RocksDB makes a write visible once Write() returns, and an iterator reads
 * one implicit snapshot, which is what a scan promises.
 *
 * Durability: the WAL is always on (a write survives kill -9 once the call
 * returns); STORE_SYNC adds an fsync of the WAL. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "common/xmalloc.h"
#include "store/store_builtin.h"
#include "store/store_int.h"
#include "store/store_util.h"

/* A write batch holds all of its stripes at once; ThreadSanitizer's
 * deadlock detector aborts a thread holding 64 locks, so its builds use
 * fewer stripes (more contention, same correctness). */
#if defined(__SANITIZE_THREAD__)
#define STORE_STRIPES 16
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STORE_STRIPES 16
#endif
#endif
#ifndef STORE_STRIPES
#define STORE_STRIPES 256
#endif
#define STORE_DEFAULT_CACHE_MB 64
/* Memtable size of every table but the data table. The meta table gets one
 * row per series as series are created (a million series: ~100 MB of rows),
 * and RocksDB keeps up to two 64 MB memtables of it in memory; 8 MB bounds
 * that at 16 MB, for a few more small level-0 files. */
#define STORE_SMALL_MEMTABLE_MB 8

typedef struct {
    store_t base; /* first: store.c dispatches through base.methods */
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_options_t *opts_small; /* the tables other than data: smaller memtables */
    rocksdb_cache_t *cache;
    rocksdb_readoptions_t *ro;
    rocksdb_writeoptions_t *wo, *wo_sync;
    rocksdb_column_family_handle_t **handles; /* every CF opened, for destroy */
    size_t n_handles;
    rocksdb_column_family_handle_t *cf[STORE_TABLE_COUNT];
    char *dir;
    int read_only;
    pthread_mutex_t stripes[STORE_STRIPES];
} rdb_store_t;

typedef struct {
    store_scanner_t base; /* first, as in rdb_store_t */
    rdb_store_t *st;
    rocksdb_readoptions_t *ro;
    rocksdb_iterator_t *it;
    uint8_t *lower, *upper; /* iterator bounds; must outlive the iterator */
    size_t lower_len, upper_len;
    uint8_t *family;
    size_t family_len;
    store_row_filter_fn filter;
    void *filter_ctx;
    size_t plen;  /* length of enc(partition), common to every key */
    uint8_t *rp;  /* enc(part) | enc(row) of the current row, then a spare byte */
    uint8_t *row; /* decoded row key of the current row */
    size_t cap;   /* capacity of rp and row */
} rdb_scanner_t;

static int rdb_flush(store_t *base, oct_errbuf_t *eb);

/* ---------- key encoding (store_int.h) ---------- */

size_t store__enc_len(oct_slice_t x)
{
    size_t n = x.len + 2;
    for (size_t i = 0; i < x.len; i++)
        n += x.ptr[i] == 0;
    return n;
}

uint8_t *store__enc(uint8_t *dst, oct_slice_t x)
{
    for (size_t i = 0; i < x.len; i++) {
        *dst++ = x.ptr[i];
        if (x.ptr[i] == 0) *dst++ = 0xFF;
    }
    *dst++ = 0x00;
    *dst++ = 0x01;
    return dst;
}

long store__dec(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            if (out) out[o] = p[i];
            o++;
            continue;
        }
        if (i + 1 >= n) return -1;
        if (p[i + 1] == 0x01) {
            if (out_len) *out_len = o;
            return (long)(i + 2);
        }
        if (p[i + 1] != 0xFF) return -1;
        if (out) out[o] = 0;
        o++;
        i++;
    }
    return -1;
}

size_t store__key_len(oct_slice_t part, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier)
{
    return store__enc_len(part) + store__enc_len(row) + family.len + 1 + qualifier.len;
}

uint8_t *store__key(uint8_t *dst, oct_slice_t part, oct_slice_t row, oct_slice_t family,
                    oct_slice_t qualifier)
{
    dst = store__enc(dst, part);
    dst = store__enc(dst, row);
    if (family.len) memcpy(dst, family.ptr, family.len);
    dst += family.len;
    *dst++ = 0x00;
    if (qualifier.len) memcpy(dst, qualifier.ptr, qualifier.len);
    return dst + qualifier.len;
}

/* ---------- helpers ---------- */

static int rdb_fail(oct_errbuf_t *eb, char *err, const char *what)
{
    int rc = oct_err(eb, OCT_EIO, "rocksdb %s: %s", what, err);
    rocksdb_free(err);
    return rc;
}

static unsigned stripe_of(store_table_t t, oct_slice_t part)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    h = (h ^ (uint8_t)t) * 1099511628211ull;
    for (size_t i = 0; i < part.len; i++)
        h = (h ^ part.ptr[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 32)) % STORE_STRIPES;
}

/* Builds the key of a cell in scratch (replacing its contents). */
static void build_key(store_buf_t *b, oct_slice_t part, const store_cell_t *c)
{
    b->len = 0;
    uint8_t *end =
        store__key(store__buf_reserve(b, store__key_len(part, c->row, c->family, c->qualifier)),
                   part, c->row, c->family, c->qualifier);
    b->len = (size_t)(end - b->p);
}

/* Builds [lower, upper) covering one row (family.len == 0) or one family of
 * it: R..succ(R) or R|f|00..R|f|01. Both land in b: lower at 0, upper after. */
static void build_row_range(store_buf_t *b, oct_slice_t part, oct_slice_t row, oct_slice_t family,
                            size_t *lower_len, size_t *upper_off)
{
    size_t rl = store__enc_len(part) + store__enc_len(row);
    size_t n = rl + (family.len ? family.len + 1 : 0);
    b->len = 0;
    uint8_t *p = store__buf_reserve(b, 2 * n);
    uint8_t *e = store__enc(store__enc(p, part), row);
    if (family.len) {
        memcpy(e, family.ptr, family.len);
        e[family.len] = 0x00;
    }
    memcpy(p + n, p, n);
    p[2 * n - 1] = family.len ? 0x01 : 0x02;
    *lower_len = n;
    *upper_off = n;
    b->len = 2 * n;
}

/* Adds the ops to the batch, all in 'part' if part.ptr is set, else each in
 * its own .part. */
static void batch_ops(rocksdb_writebatch_t *wb, rocksdb_column_family_handle_t *cf,
                      const store_op_t *ops, size_t n, const oct_slice_t *part, store_buf_t *b)
{
    for (size_t i = 0; i < n; i++) {
        const store_op_t *op = &ops[i];
        oct_slice_t p = part ? *part : op->part;
        size_t ll, uo;
        switch (op->kind) {
        case STORE_OP_PUT:
            build_key(b, p, &op->cell);
            rocksdb_writebatch_put_cf(wb, cf, (const char *)b->p, b->len,
                                      (const char *)op->cell.value.ptr, op->cell.value.len);
            break;
        case STORE_OP_DELETE_CELL:
            build_key(b, p, &op->cell);
            rocksdb_writebatch_delete_cf(wb, cf, (const char *)b->p, b->len);
            break;
        case STORE_OP_DELETE_FAMILY:
        case STORE_OP_DELETE_ROW:
            /* One range tombstone; it also covers PUTs earlier in this batch,
             * which keeps "a later op on the same cell wins". */
            build_row_range(b, p, op->cell.row,
                            op->kind == STORE_OP_DELETE_FAMILY ? op->cell.family
                                                               : oct_slice(NULL, 0),
                            &ll, &uo);
            rocksdb_writebatch_delete_range_cf(wb, cf, (const char *)b->p, ll,
                                               (const char *)b->p + uo, b->len - uo);
            break;
        }
    }
}

/* ---------- open / close ---------- */

/* RocksDB reports a held LOCK file as "IO error: While lock file: <dir>/LOCK:
 * ..." (other process) or "... lock hold by current process ..." (same one).
 * A bare "lock" would also match "block checksum mismatch". */
static int is_lock_error(const char *err)
{
    return strstr(err, "While lock file") || strstr(err, "lock hold by") || strstr(err, "/LOCK");
}

/* Tuning for a TSDB on one machine:
 *  - LZ4 on upper levels (cheap), ZSTD on the bottommost level, where most
 *    bytes end up after compaction. Data cell values are already compact, but
 *    keys are not: every key repeats the salt/metric/base-hour prefix and the
 *    family, and block compression takes most of that away.
 *  - A full bloom filter (10 bits/key) on every table: point reads
 *    (store_get_cell, CAS checks, UID lookups) skip files that lack the key.
 *    Scans do not use it; the cost is ~1.25 bytes per key.
 *  - One LRU block cache shared by every table, sized by the caller.
 *  - Dynamic level sizing keeps space amplification near 1.1 on a store
 *    that mostly grows.
 *  - A WAL file lives until every table with data in it has flushed; the
 *    small tables (uid, meta) rarely fill a memtable, so cap the WAL at
 *    256 MB, past which RocksDB flushes whichever table holds it back.
 * Measured on 720k cells shaped like tsdb data (20-byte rows, 2-byte
 * qualifiers, 8-byte values): 25.8 B/cell on disk uncompressed, 12.3 with
 * LZ4, 8.6 with ZSTD; scans ran at 3.9M, 2.9M and 2.7M cells/s. */
static rocksdb_options_t *make_options(const store_options_t *o, rocksdb_cache_t **cache_out)
{
    rocksdb_options_t *opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(opts, 1);
    rocksdb_options_set_create_missing_column_families(opts, 1);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    rocksdb_options_increase_parallelism(opts, ncpu > 1 ? (int)(ncpu < 8 ? ncpu : 8) : 2);
    rocksdb_options_set_level_compaction_dynamic_level_bytes(opts, 1);
    rocksdb_options_set_bytes_per_sync(opts, 1 << 20);
    rocksdb_options_set_max_total_wal_size(opts, 256ull << 20);
    rocksdb_options_set_compression(opts, rocksdb_zstd_compression);
    rocksdb_options_set_bottommost_compression(opts, rocksdb_zstd_compression);
    /* RocksDB's info LOG lives in the data dir. Once one of its writes
     * fails (a full disk), the next message trips an assertion in RocksDB's
     * file writer (Debian's librocksdb keeps asserts: "sync_without_flush_
     * called_", abort), and RocksDB logs plenty while it recovers from
     * ENOSPC (SstFileManagerImpl::ClearError) and at shutdown. So only
     * fatal messages (and the option header at open) are logged. */
    rocksdb_options_set_info_log_level(opts, 4 /* FATAL_LEVEL */);

    size_t mb = o->block_cache_mb ? o->block_cache_mb : STORE_DEFAULT_CACHE_MB;
    rocksdb_cache_t *cache = rocksdb_cache_create_lru(mb << 20);
    rocksdb_block_based_table_options_t *bbto = rocksdb_block_based_options_create();
    rocksdb_block_based_options_set_block_cache(bbto, cache);
    /* the table options take ownership of the filter policy */
    rocksdb_block_based_options_set_filter_policy(bbto, rocksdb_filterpolicy_create_bloom_full(10));
    rocksdb_block_based_options_set_format_version(bbto, 5);
    rocksdb_options_set_block_based_table_factory(opts, bbto); /* copies bbto */
    rocksdb_block_based_options_destroy(bbto);
    *cache_out = cache;
    return opts;
}

static void rdb_destroy(rdb_store_t *st)
{
    for (size_t i = 0; i < st->n_handles; i++)
        rocksdb_column_family_handle_destroy(st->handles[i]);
    if (st->db) rocksdb_close(st->db);
    free(st->handles);
    if (st->ro) rocksdb_readoptions_destroy(st->ro);
    if (st->wo) rocksdb_writeoptions_destroy(st->wo);
    if (st->wo_sync) rocksdb_writeoptions_destroy(st->wo_sync);
    if (st->opts) rocksdb_options_destroy(st->opts);
    if (st->opts_small) rocksdb_options_destroy(st->opts_small);
    if (st->cache) rocksdb_cache_destroy(st->cache);
    for (int i = 0; i < STORE_STRIPES; i++)
        pthread_mutex_destroy(&st->stripes[i]);
    free(st->dir);
    free(st);
}

/* A read-only open must not write in the data dir, but RocksDB creates its
 * info LOG there at every open, read-only ones included, renaming the old
 * one first (which fails on a read-only file system). The C API cannot
 * install a null logger, so a read-only open points the LOG at a private
 * temporary dir, which log_dir_discard empties and removes once the store
 * is open: RocksDB keeps writing to the unlinked file, freed at close.
 * Returns the dir (malloc'd) or NULL if none could be made (the LOG then
 * goes to the data dir, as before). */
static char *log_dir_make(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/octsdb-ro-log.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(path)) return xstrdup(path);
    snprintf(path, sizeof path, "/dev/shm/octsdb-ro-log.XXXXXX");
    return mkdtemp(path) ? xstrdup(path) : NULL;
}

static void log_dir_discard(char *dir)
{
    if (!dir) return;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char p[4352];
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* RocksDB writes CURRENT when it creates a database. */
static int rdb_exists(const store_options_t *opts, oct_errbuf_t *eb)
{
    (void)eb;
    return store__dir_has(opts->dir, "CURRENT");
}

static int rdb_open(const store_options_t *opts, store_t **out, oct_errbuf_t *eb)
{
    *out = NULL;

    const char *names[STORE_TABLE_COUNT];
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        names[t] = opts->table_names[t] ? opts->table_names[t]
                                        : store_table_default_name((store_table_t)t);
        if (!*names[t] || strcmp(names[t], "default") == 0)
            return oct_err(eb, OCT_EINVAL, "bad table name '%s'", names[t]);
        for (int u = 0; u < t; u++)
            if (strcmp(names[t], names[u]) == 0)
                return oct_err(eb, OCT_EINVAL, "two tables named '%s'", names[t]);
    }
    if (!opts->read_only) {
        int rc = store__mkdir_p(opts->dir);
        if (rc)
            return oct_err(eb, OCT_EIO, "cannot create data dir %s: %s", opts->dir, strerror(-rc));
    }

    rdb_store_t *st = xcalloc(1, sizeof *st);
    st->dir = xstrdup(opts->dir);
    st->read_only = opts->read_only;
    for (int i = 0; i < STORE_STRIPES; i++)
        pthread_mutex_init(&st->stripes[i], NULL);
    st->opts = make_options(opts, &st->cache);
    char *log_dir = NULL;
    if (opts->read_only) {
        rocksdb_options_set_create_if_missing(st->opts, 0);
        rocksdb_options_set_create_missing_column_families(st->opts, 0);
        log_dir = log_dir_make();
        if (log_dir) rocksdb_options_set_db_log_dir(st->opts, log_dir);
    }
    st->ro = rocksdb_readoptions_create();
    st->wo = rocksdb_writeoptions_create();
    st->wo_sync = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(st->wo_sync, 1);

    /* RocksDB insists that every existing CF be opened, so the list is the
     * union of what is on disk and our tables. A missing db has no list. */
    size_t n_exist = 0;
    char *err = NULL;
    char **exist = rocksdb_list_column_families(st->opts, opts->dir, &n_exist, &err);
    if (err) {
        /* on error RocksDB still returns an (empty) malloc'd array */
        if (exist) rocksdb_list_column_families_destroy(exist, n_exist);
        rocksdb_free(err);
        err = NULL;
        exist = NULL;
        n_exist = 0;
    }
    size_t cap = n_exist + STORE_TABLE_COUNT + 1;
    const char **cf_names = xcalloc(cap, sizeof *cf_names);
    size_t n = 0;
    cf_names[n++] = "default";
    for (size_t i = 0; i < n_exist; i++)
        if (strcmp(exist[i], "default") != 0) cf_names[n++] = exist[i];
    int idx[STORE_TABLE_COUNT];
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        size_t j;
        for (j = 0; j < n && strcmp(cf_names[j], names[t]) != 0; j++)
            continue;
        if (j == n) cf_names[n++] = names[t];
        idx[t] = (int)j;
    }
    st->opts_small = rocksdb_options_create_copy(st->opts);
    rocksdb_options_set_write_buffer_size(st->opts_small, (size_t)STORE_SMALL_MEMTABLE_MB << 20);
    const rocksdb_options_t **cf_opts = xcalloc(n, sizeof *cf_opts);
    /* the rollup table takes as many cells as the data with tsd.rollups.auto
     * (4 per series-hour): 8 MB memtables there meant 8x the flushes and L0
     * files, each overlapping the year-long 1d rows, which compactions then
     * rewrote (bench_rollup 100 90: 10% of the CPU; docs/rollups.md) */
    for (size_t i = 0; i < n; i++)
        cf_opts[i] = (int)i == idx[STORE_TABLE_DATA] || (int)i == idx[STORE_TABLE_ROLLUP]
                         ? st->opts
                         : st->opts_small;
    st->handles = xcalloc(n, sizeof *st->handles);

    int rc = 0;
    if (opts->read_only && n_exist > 0 && n > n_exist) {
        /* A store made by an older octsdb lacks the tables added since
         * (octsdb-rollup), and a read-only open cannot create them: open
         * what exists and read each missing table as RocksDB's "default"
         * family, which octsdb never writes, so it reads as empty. The next
         * read-write open creates them. */
        for (int t = 0; t < STORE_TABLE_COUNT; t++)
            if ((size_t)idx[t] >= n_exist) idx[t] = 0;
        n = n_exist;
    }
    if (opts->read_only && n_exist == 0) {
        rc = oct_err(eb, OCT_EIO, "cannot open %s read-only: no database there", opts->dir);
    } else {
        if (opts->read_only)
            st->db = rocksdb_open_for_read_only_column_families(
                st->opts, opts->dir, (int)n, cf_names, cf_opts, st->handles, 0, &err);
        else
            st->db = rocksdb_open_column_families(st->opts, opts->dir, (int)n, cf_names, cf_opts,
                                                  st->handles, &err);
        if (err) {
            if (is_lock_error(err))
                rc = oct_err(eb, OCT_ELOCKED, "data dir %s is locked by another user (%s)",
                             opts->dir, err);
            else
                rc = oct_err(eb, OCT_EIO, "cannot open %s: %s", opts->dir, err);
            rocksdb_free(err);
            st->db = NULL;
        } else {
            st->n_handles = n;
            for (int t = 0; t < STORE_TABLE_COUNT; t++)
                st->cf[t] = st->handles[idx[t]];
        }
    }
    free(cf_opts);
    free(cf_names);
    if (exist) rocksdb_list_column_families_destroy(exist, n_exist);
    log_dir_discard(log_dir);
    if (rc) {
        rdb_destroy(st);
        return rc;
    }
    st->base.methods = &store_rocksdb_methods;
    *out = &st->base;
    return 0;
}

static int rdb_is_read_only(const store_t *base)
{
    const rdb_store_t *st = (const rdb_store_t *)base;
    return st->read_only;
}

/* Syncs RocksDB's WAL files as rocksdb_flush_wal(sync) would, but safe after
 * a WAL write error (a full disk): rocksdb_flush_wal syncs the failed log
 * writer unchecked, which trips RocksDB's assertion
 * "sync_without_flush_called_" (Debian's librocksdb keeps asserts) and
 * aborts. A synced write syncs the same logs but first checks RocksDB's
 * background error and just fails. The tombstone goes to the default
 * column family, which holds no table. Returns NULL or RocksDB's error
 * (free with rocksdb_free). */
static char *rdb_sync_wal(rdb_store_t *st)
{
    static const char key[] = "octsdb-sync";
    char *err = NULL;
    rocksdb_delete(st->db, st->wo_sync, key, sizeof key - 1, &err);
    return err;
}

static void rdb_close(store_t *base)
{
    rdb_store_t *st = (rdb_store_t *)base;
    if (!st) return;
    if (!st->read_only) {
        /* Memtables to table files, as store.h promises: a data dir at rest
         * holds compressed tables, not a log to replay at the next open
         * (and its size on disk is what it will stay). A flush that fails
         * (disk full) leaves the data in RocksDB's log, still replayed. */
        oct_errbuf_t feb;
        if (rdb_flush(&st->base, &feb) != 0) {
            /* nothing lost: RocksDB's log still holds it */
        }
        /* Writes made without STORE_SYNC are in the OS page cache; make them
         * durable now rather than whenever the kernel gets to them. */
        char *err = rdb_sync_wal(st);
        if (err) rocksdb_free(err);
    }
    rdb_destroy(st);
}

/* ---------- reads ---------- */

/* Appends every cell whose key is in [lower, upper) of the table, where all
 * keys share the prefix enc(part)|enc(row) of length rp_len. */
/* Appends the cells of the row whose keys lie in [lower, upper) of b, read
 * through it: seeks to the lower bound and stops at the upper one itself, so
 * one iterator serves every row of a multi-get (RocksDB's iterator creation
 * and bound set-up cost more than the seek, per row). */
static int read_row_with(rdb_store_t *st, rocksdb_iterator_t *it, oct_slice_t row, size_t rp_len,
                         const store_buf_t *b, size_t lower_len, size_t upper_off,
                         store_result_t *out, oct_errbuf_t *eb)
{
    const uint8_t *upper = b->p + upper_off;
    size_t upper_len = b->len - upper_off;
    int count = 0, rc = 0;
    for (rocksdb_iter_seek(it, (const char *)b->p, lower_len); rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kl, vl;
        const uint8_t *k = (const uint8_t *)rocksdb_iter_key(it, &kl);
        size_t cl = kl < upper_len ? kl : upper_len;
        int c = memcmp(k, upper, cl);
        if (c > 0 || (c == 0 && kl >= upper_len)) break; /* at or past the upper bound */
        const uint8_t *v = (const uint8_t *)rocksdb_iter_value(it, &vl);
        const uint8_t *f = k + rp_len;
        const uint8_t *z = kl > rp_len ? memchr(f, 0, kl - rp_len) : NULL;
        if (!z) {
            rc = oct_err(eb, OCT_ECORRUPT, "malformed key in %s", st->dir);
            break;
        }
        store_result_add(out, row, oct_slice(f, (size_t)(z - f)),
                         oct_slice(z + 1, kl - (size_t)(z + 1 - k)), oct_slice(v, vl));
        count++;
    }
    if (!rc) {
        char *err = NULL;
        rocksdb_iter_get_error(it, &err);
        if (err) rc = rdb_fail(eb, err, "iterate");
    }
    return rc ? rc : count;
}

static int get_one(rdb_store_t *st, rocksdb_iterator_t *it, oct_slice_t part, oct_slice_t row,
                   oct_slice_t family, store_result_t *out, store_buf_t *b, oct_errbuf_t *eb)
{
    int rc;
    if ((rc = store__check_part(part, eb)) || (rc = store__check_row(row, eb)) ||
        (rc = store__check_family(family, 1, eb)))
        return rc;
    size_t ll, uo;
    build_row_range(b, part, row, family, &ll, &uo);
    size_t rp_len = store__enc_len(part) + store__enc_len(row);
    return read_row_with(st, it, row, rp_len, b, ll, uo, out, eb);
}

static int rdb_get(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                   oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    store_buf_t b = {0};
    rocksdb_iterator_t *it = rocksdb_create_iterator_cf(st->db, st->ro, st->cf[t]);
    rc = get_one(st, it, part, row, family, out, &b, eb);
    rocksdb_iter_destroy(it);
    free(b.p);
    return rc;
}

static int rdb_multi_get(store_t *base, store_table_t t, const store_key_t *keys, size_t n,
                         oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    store_buf_t b = {0};
    long total = 0;
    /* one iterator (one consistent view) for every row */
    rocksdb_iterator_t *it = rocksdb_create_iterator_cf(st->db, st->ro, st->cf[t]);
    for (size_t i = 0; i < n; i++) {
        rc = get_one(st, it, keys[i].part, keys[i].row, family, out, &b, eb);
        if (rc < 0) break;
        total += rc;
        if (total > INT32_MAX) {
            rc = oct_err(eb, OCT_ERANGE, "multi_get result too large");
            break;
        }
        rc = 0;
    }
    rocksdb_iter_destroy(it);
    free(b.p);
    return rc < 0 ? rc : (int)total;
}

/* Point read under RocksDB's default read options: the latest committed
 * value. *val is malloc'd by RocksDB (free with rocksdb_free), NULL if absent. */
static int read_cell(rdb_store_t *st, store_table_t t, oct_slice_t part, const store_cell_t *c,
                     store_buf_t *b, char **val, size_t *vl, oct_errbuf_t *eb)
{
    char *err = NULL;
    build_key(b, part, c);
    *val = rocksdb_get_cf(st->db, st->ro, st->cf[t], (const char *)b->p, b->len, vl, &err);
    if (err) return rdb_fail(eb, err, "get");
    return 0;
}

static int rdb_get_cell(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                        oct_slice_t family, oct_slice_t qualifier, store_result_t *out,
                        oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) || (rc = store__check_part(part, eb)) ||
        (rc = store__check_row(row, eb)) || (rc = store__check_family(family, 0, eb)) ||
        (rc = store__check_qualifier(qualifier, eb)))
        return rc;
    store_cell_t c = {row, family, qualifier, {NULL, 0}};
    store_buf_t b = {0};
    char *val;
    size_t vl;
    rc = read_cell(st, t, part, &c, &b, &val, &vl, eb);
    free(b.p);
    if (rc) return rc;
    if (!val) return 0;
    store_result_add(out, row, family, qualifier, oct_slice(val, vl));
    rocksdb_free(val);
    return 1;
}

/* ---------- writes ---------- */

static int commit(rdb_store_t *st, rocksdb_writebatch_t *wb, unsigned flags, oct_errbuf_t *eb)
{
    char *err = NULL;
    rocksdb_write(st->db, (flags & STORE_SYNC) ? st->wo_sync : st->wo, wb, &err);
    if (err) return rdb_fail(eb, err, "write");
    return 0;
}

static int rdb_write(store_t *base, store_table_t t, const store_op_t *ops, size_t n,
                     unsigned flags, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)))
        return rc;
    uint64_t want[(STORE_STRIPES + 63) / 64] = {0};
    for (size_t i = 0; i < n; i++) {
        if ((rc = store__check_part(ops[i].part, eb)) || (rc = store__check_op(&ops[i], eb)))
            return rc;
        unsigned s = stripe_of(t, ops[i].part);
        want[s / 64] |= 1ull << (s % 64);
    }
    if (n == 0) return 0;

    store_buf_t b = {0};
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    batch_ops(wb, st->cf[t], ops, n, NULL, &b);
    free(b.p);
    /* ascending stripe order: two writers can never hold-and-wait in a cycle */
    for (unsigned s = 0; s < STORE_STRIPES; s++)
        if (want[s / 64] >> (s % 64) & 1) pthread_mutex_lock(&st->stripes[s]);
    rc = commit(st, wb, flags, eb);
    for (unsigned s = 0; s < STORE_STRIPES; s++)
        if (want[s / 64] >> (s % 64) & 1) pthread_mutex_unlock(&st->stripes[s]);
    rocksdb_writebatch_destroy(wb);
    return rc;
}

/* Evaluates the checks; 0 if all hold, OCT_ECASFAIL or an error otherwise.
 * Caller holds the partition's stripe. */
static int eval_checks(rdb_store_t *st, store_table_t t, oct_slice_t part,
                       const store_check_t *checks, size_t n, store_buf_t *b, oct_errbuf_t *eb)
{
    for (size_t i = 0; i < n; i++) {
        char *val;
        size_t vl;
        int rc = read_cell(st, t, part, &checks[i].cell, b, &val, &vl, eb);
        if (rc) return rc;
        int ok = checks[i].kind == STORE_CHECK_ABSENT
                     ? val == NULL
                     : val != NULL && oct_slice_eq(oct_slice(val, vl), checks[i].cell.value);
        rocksdb_free(val);
        if (!ok)
            return oct_err(eb, OCT_ECASFAIL, "check %zu failed: cell %s", i,
                           checks[i].kind == STORE_CHECK_ABSENT ? "exists" : "differs");
    }
    return 0;
}

static int rdb_cas(store_t *base, store_table_t t, oct_slice_t part, const store_check_t *checks,
                   size_t n_checks, const store_op_t *ops, size_t n_ops, unsigned flags,
                   oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)) ||
        (rc = store__check_part(part, eb)))
        return rc;
    for (size_t i = 0; i < n_checks; i++) {
        const store_check_t *c = &checks[i];
        if (c->kind != STORE_CHECK_ABSENT && c->kind != STORE_CHECK_EQUALS)
            return oct_err(eb, OCT_EINVAL, "bad check kind %d", (int)c->kind);
        if ((rc = store__check_row(c->cell.row, eb)) ||
            (rc = store__check_family(c->cell.family, 0, eb)) ||
            (rc = store__check_qualifier(c->cell.qualifier, eb)))
            return rc;
    }
    for (size_t i = 0; i < n_ops; i++)
        if ((rc = store__check_op(&ops[i], eb))) return rc;

    store_buf_t b = {0};
    pthread_mutex_t *mu = &st->stripes[stripe_of(t, part)];
    pthread_mutex_lock(mu);
    rc = eval_checks(st, t, part, checks, n_checks, &b, eb);
    if (rc == 0 && n_ops > 0) {
        rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
        batch_ops(wb, st->cf[t], ops, n_ops, &part, &b);
        rc = commit(st, wb, flags, eb);
        rocksdb_writebatch_destroy(wb);
    }
    pthread_mutex_unlock(mu);
    free(b.p);
    return rc;
}

static int rdb_incr(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                    oct_slice_t family, oct_slice_t qualifier, int64_t delta, int64_t *out_new,
                    unsigned flags, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)) ||
        (rc = store__check_part(part, eb)) || (rc = store__check_row(row, eb)) ||
        (rc = store__check_family(family, 0, eb)) || (rc = store__check_qualifier(qualifier, eb)))
        return rc;
    store_cell_t c = {row, family, qualifier, {NULL, 0}};
    store_buf_t b = {0};
    pthread_mutex_t *mu = &st->stripes[stripe_of(t, part)];
    pthread_mutex_lock(mu);
    char *val;
    size_t vl;
    rc = read_cell(st, t, part, &c, &b, &val, &vl, eb);
    if (rc == 0 && val && vl != 8)
        rc = oct_err(eb, OCT_ECORRUPT, "counter cell holds %zu bytes, not 8", vl);
    if (rc == 0) {
        /* two's-complement wrap, as Java's long addition in HBase */
        uint64_t nv = (val ? oct_get_be64((const uint8_t *)val) : 0) + (uint64_t)delta;
        uint8_t enc[8];
        oct_put_be64(enc, nv);
        char *err = NULL;
        build_key(&b, part, &c);
        rocksdb_put_cf(st->db, (flags & STORE_SYNC) ? st->wo_sync : st->wo, st->cf[t],
                       (const char *)b.p, b.len, (const char *)enc, 8, &err);
        if (err)
            rc = rdb_fail(eb, err, "put");
        else if (out_new)
            *out_new = (int64_t)nv;
    }
    pthread_mutex_unlock(mu);
    rocksdb_free(val);
    free(b.p);
    return rc;
}

/* ---------- scans ---------- */

static int rdb_scan_open(store_t *base, store_table_t t, const store_scan_spec_t *spec,
                         store_scanner_t **out, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    *out = NULL;
    if ((rc = store__check_table(st, t, eb)) || (rc = store__check_scan_spec(spec, eb))) return rc;

    rdb_scanner_t *sc = xcalloc(1, sizeof *sc);
    sc->st = st;
    sc->plen = store__enc_len(spec->part);
    /* lower = P|enc(start) (or P); upper = P|enc(stop) (or succ(P)) */
    sc->lower = xmalloc(sc->plen + store__enc_len(spec->start_row));
    uint8_t *e = store__enc(sc->lower, spec->part);
    if (spec->start_row.len) e = store__enc(e, spec->start_row);
    sc->lower_len = (size_t)(e - sc->lower);
    sc->upper = xmalloc(sc->plen + store__enc_len(spec->stop_row));
    e = store__enc(sc->upper, spec->part);
    if (spec->stop_row.len)
        e = store__enc(e, spec->stop_row);
    else
        e[-1] = 0x02;
    sc->upper_len = (size_t)(e - sc->upper);
    if (spec->family.len) {
        sc->family = xmemdup(spec->family.ptr, spec->family.len);
        sc->family_len = spec->family.len;
    }
    sc->filter = spec->row_filter;
    sc->filter_ctx = spec->filter_ctx;

    sc->ro = rocksdb_readoptions_create();
    rocksdb_readoptions_set_iterate_lower_bound(sc->ro, (const char *)sc->lower, sc->lower_len);
    rocksdb_readoptions_set_iterate_upper_bound(sc->ro, (const char *)sc->upper, sc->upper_len);
    /* The iterator pins one sequence number at creation: the scan's snapshot. */
    sc->it = rocksdb_create_iterator_cf(st->db, sc->ro, st->cf[t]);
    rocksdb_iter_seek(sc->it, (const char *)sc->lower, sc->lower_len);
    sc->base.methods = &store_rocksdb_methods;
    *out = &sc->base;
    return 0;
}

/* Seeks to the first key after the current row (succ(R), R in sc->rp). */
static void scan_skip_row(rdb_scanner_t *sc, size_t rp_len)
{
    uint8_t last = sc->rp[rp_len - 1];
    sc->rp[rp_len - 1] = 0x02;
    rocksdb_iter_seek(sc->it, (const char *)sc->rp, rp_len);
    sc->rp[rp_len - 1] = last;
}

static int in_row(const uint8_t *k, size_t kl, const uint8_t *rp, size_t rp_len)
{
    return kl > rp_len && memcmp(k, rp, rp_len) == 0;
}

static int rdb_scan_next(store_scanner_t *base, store_result_t *row, oct_errbuf_t *eb)
{
    rdb_scanner_t *sc = (rdb_scanner_t *)base;
    store_result_reset(row);
    for (;;) {
        if (!rocksdb_iter_valid(sc->it)) {
            char *err = NULL;
            rocksdb_iter_get_error(sc->it, &err);
            return err ? rdb_fail(eb, err, "scan") : 0;
        }
        size_t kl;
        const uint8_t *k = (const uint8_t *)rocksdb_iter_key(sc->it, &kl);
        if (kl + sc->family_len + 1 > sc->cap) {
            sc->cap = 2 * (kl + sc->family_len + 1);
            sc->rp = xrealloc(sc->rp, sc->cap);
            sc->row = xrealloc(sc->row, sc->cap);
        }
        size_t row_len;
        long used = store__dec(k + sc->plen, kl - sc->plen, sc->row, &row_len);
        if (used < 0) return oct_err(eb, OCT_ECORRUPT, "malformed key in %s", sc->st->dir);
        size_t rp_len = sc->plen + (size_t)used;
        memcpy(sc->rp, k, rp_len);
        oct_slice_t rkey = oct_slice(sc->row, row_len);

        if (sc->filter && !sc->filter(sc->filter_ctx, rkey)) {
            scan_skip_row(sc, rp_len);
            continue;
        }
        if (sc->family_len) {
            /* Compare the row's first family | 00 with the wanted one: below
             * it, jump straight to R|family|00; above it, the row has none. */
            size_t fl = kl - rp_len, wl = sc->family_len + 1;
            memcpy(sc->rp + rp_len, sc->family, sc->family_len);
            sc->rp[rp_len + sc->family_len] = 0x00;
            int c = memcmp(k + rp_len, sc->rp + rp_len, fl < wl ? fl : wl);
            if (c > 0) {
                scan_skip_row(sc, rp_len);
                continue;
            }
            if (c < 0) rocksdb_iter_seek(sc->it, (const char *)sc->rp, rp_len + wl);
        }
        for (; rocksdb_iter_valid(sc->it); rocksdb_iter_next(sc->it)) {
            size_t vl;
            k = (const uint8_t *)rocksdb_iter_key(sc->it, &kl);
            if (!in_row(k, kl, sc->rp, rp_len)) break;
            const uint8_t *f = k + rp_len;
            const uint8_t *z = memchr(f, 0, kl - rp_len);
            if (!z) return oct_err(eb, OCT_ECORRUPT, "malformed key in %s", sc->st->dir);
            oct_slice_t fam = oct_slice(f, (size_t)(z - f));
            if (sc->family_len && !oct_slice_eq(fam, oct_slice(sc->family, sc->family_len))) {
                scan_skip_row(sc, rp_len);
                break;
            }
            const uint8_t *v = (const uint8_t *)rocksdb_iter_value(sc->it, &vl);
            store_result_add(row, rkey, fam, oct_slice(z + 1, kl - (size_t)(z + 1 - k)),
                             oct_slice(v, vl));
        }
        if (row->n) return 1;
    }
}

static void rdb_scan_close(store_scanner_t *base)
{
    rdb_scanner_t *sc = (rdb_scanner_t *)base;
    if (!sc) return;
    rocksdb_iter_destroy(sc->it);
    rocksdb_readoptions_destroy(sc->ro);
    free(sc->lower);
    free(sc->upper);
    free(sc->family);
    free(sc->rp);
    free(sc->row);
    free(sc);
}

static int rdb_part_list(store_t *base, store_table_t t, oct_slice_t start, oct_slice_t stop,
                         store_part_fn cb, void *ctx, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    if (start.len > STORE_PART_MAX || stop.len > STORE_PART_MAX)
        return oct_err(eb, OCT_EINVAL, "partition bound longer than %d bytes", STORE_PART_MAX);
    uint8_t lower[2 * STORE_PART_MAX + 2], upper[2 * STORE_PART_MAX + 2];
    uint8_t seek[2 * STORE_PART_MAX + 2], raw[2 * STORE_PART_MAX + 2];
    size_t lower_len = start.len ? (size_t)(store__enc(lower, start) - lower) : 0;
    size_t upper_len = stop.len ? (size_t)(store__enc(upper, stop) - upper) : 0;

    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    if (upper_len) rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)upper, upper_len);
    rocksdb_iterator_t *it = rocksdb_create_iterator_cf(st->db, ro, st->cf[t]);
    if (lower_len)
        rocksdb_iter_seek(it, (const char *)lower, lower_len);
    else
        rocksdb_iter_seek_to_first(it);
    while (rocksdb_iter_valid(it)) {
        size_t kl, plen;
        const uint8_t *k = (const uint8_t *)rocksdb_iter_key(it, &kl);
        size_t scan = kl < sizeof seek ? kl : sizeof seek;
        long used = store__dec(k, scan, raw, &plen);
        if (used < 0 || plen > STORE_PART_MAX) {
            rc = oct_err(eb, OCT_ECORRUPT, "malformed key in %s", st->dir);
            break;
        }
        memcpy(seek, k, (size_t)used);
        /* store__dec returns -1 or at least 2 (the terminator pair). */
        /* cppcheck-suppress negativeIndex */
        seek[used - 1] = 0x02; /* succ(enc(part)): the next partition */
        rc = cb(ctx, oct_slice(raw, plen));
        if (rc) break;
        rocksdb_iter_seek(it, (const char *)seek, (size_t)used);
    }
    if (!rc) {
        char *err = NULL;
        rocksdb_iter_get_error(it, &err);
        if (err) rc = rdb_fail(eb, err, "iterate");
    }
    rocksdb_iter_destroy(it);
    rocksdb_readoptions_destroy(ro);
    return rc;
}

/* ---------- maintenance ---------- */

static int rdb_flush(store_t *base, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    if (st->read_only) return 0;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    int rc = 0;
    /* Every column family, RocksDB's "default" included: a log file is
     * deleted only once no family still needs it. */
    for (size_t i = 0; i < st->n_handles && !rc; i++) {
        char *err = NULL;
        rocksdb_flush_cf(st->db, fo, st->handles[i], &err);
        if (err) rc = rdb_fail(eb, err, "flush");
    }
    rocksdb_flushoptions_destroy(fo);
    return rc;
}

static int rdb_disk_usage(store_t *base, store_table_t t, uint64_t *out_bytes, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    uint64_t v = 0;
    /* live-sst-files-size: the files of the current version only, so files
     * that compaction already replaced are not counted twice. */
    if (rocksdb_property_int_cf(st->db, st->cf[t], "rocksdb.live-sst-files-size", &v) != 0)
        return oct_err(eb, OCT_EIO, "rocksdb: no live-sst-files-size property");
    *out_bytes = v;
    return 0;
}

/* Compacts [lower, upper) (len 0 = unbounded) of tables [t0, t1), the
 * bottommost files too (kForce). rocksdb_compact_range_cf_opt reports no
 * error: a failed compaction shows only in the count of background errors. */
static int compact_range(rdb_store_t *st, int t0, int t1, const uint8_t *lower, size_t lower_len,
                         const uint8_t *upper, size_t upper_len, oct_errbuf_t *eb)
{
    uint64_t bg0 = 0, bg1 = 0;
    if (rocksdb_property_int(st->db, "rocksdb.background-errors", &bg0) != 0) bg0 = 0;
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
    for (int t = t0; t < t1; t++)
        rocksdb_compact_range_cf_opt(st->db, st->cf[t], co, (const char *)lower, lower_len,
                                     (const char *)upper, upper_len);
    rocksdb_compactoptions_destroy(co);
    if (rocksdb_property_int(st->db, "rocksdb.background-errors", &bg1) == 0 && bg1 > bg0)
        return oct_err(eb, OCT_EIO, "rocksdb compact: %" PRIu64 " background errors", bg1 - bg0);
    return 0;
}

/* A manual compaction of each column family's whole key range. Bottommost
 * files are rewritten too (kForce): without it RocksDB skips a bottom level
 * that no upper file overlaps, and a store whose data was flushed straight
 * down would keep its LZ4 files and its tombstones. The result lands in the
 * last level, where ZSTD applies (make_options). */
static int rdb_compact(store_t *base, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    int rc = store__check_writable(st->read_only, st->dir, eb);
    if (rc) return rc;
    if ((rc = rdb_flush(&st->base, eb))) return rc;
    return compact_range(st, 0, STORE_TABLE_COUNT, NULL, 0, NULL, 0, eb);
}

static int count_part(void *ctx, oct_slice_t part)
{
    (void)part;
    ++*(uint64_t *)ctx;
    return 0;
}

/* One range deletion over [enc(start), enc(stop)) -- every key of those
 * partitions and nothing else (store-keys.md, "partitions in [start, stop)")
 * -- under every stripe, so no compare-and-set sees half of it; then a
 * compaction of that key range (flushing the memtable if it overlaps, and
 * rewriting the bottommost files as rdb_compact does), after which the
 * dropped cells take no space. */
static int rdb_part_drop(store_t *base, store_table_t t, oct_slice_t start, oct_slice_t stop,
                         uint64_t *n_parts, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)))
        return rc;
    uint64_t n = 0;
    if ((rc = rdb_part_list(base, t, start, stop, count_part, &n, eb))) return rc;
    *n_parts = n;
    if (n == 0) return 0; /* no tombstone, no compaction for nothing */
    uint8_t lower[2 * STORE_PART_MAX + 2], upper[2 * STORE_PART_MAX + 2];
    size_t lower_len = (size_t)(store__enc(lower, start) - lower);
    size_t upper_len = (size_t)(store__enc(upper, stop) - upper);
    char *err = NULL;
    for (unsigned s = 0; s < STORE_STRIPES; s++)
        pthread_mutex_lock(&st->stripes[s]);
    rocksdb_delete_range_cf(st->db, st->wo, st->cf[t], (const char *)lower, lower_len,
                            (const char *)upper, upper_len, &err);
    for (unsigned s = STORE_STRIPES; s-- > 0;)
        pthread_mutex_unlock(&st->stripes[s]);
    if (err) return rdb_fail(eb, err, "delete range");
    return compact_range(st, (int)t, (int)t + 1, lower, lower_len, upper, upper_len, eb);
}

/* ---------- durability ---------- */

static int rdb_sync(store_t *base, oct_errbuf_t *eb)
{
    rdb_store_t *st = (rdb_store_t *)base;
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    if (st->read_only) return 0;
    /* One fsync of RocksDB's WAL files: the log is ordered, so every write
     * appended before this point becomes durable together. */
    char *err = rdb_sync_wal(st);
    if (err) return rdb_fail(eb, err, "sync");
    return 0;
}

const store_methods_t store_rocksdb_methods = {
    .version = 3, /* no watch methods: one process per data dir, store.c fans out */
    .name = "rocksdb",
    .open = rdb_open,
    .close = rdb_close,
    .is_read_only = rdb_is_read_only,
    .get = rdb_get,
    .get_cell = rdb_get_cell,
    .multi_get = rdb_multi_get,
    .write = rdb_write,
    .cas = rdb_cas,
    .incr = rdb_incr,
    .scan_open = rdb_scan_open,
    .scan_next = rdb_scan_next,
    .scan_close = rdb_scan_close,
    .part_list = rdb_part_list,
    .flush = rdb_flush,
    .sync = rdb_sync,
    .disk_usage = rdb_disk_usage,
    .compact = rdb_compact,
    .exists = rdb_exists,
    .part_drop = rdb_part_drop,
};
