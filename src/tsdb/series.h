/* series.h -- internal to the tsdb module (nothing outside src/tsdb may
 * include it): the write path's shared state.
 *
 * write.c owns the writer (series maps, head, put, recovery), series.c
 * series creation and loading, flush.c the flush thread, read.c
 * tsdb_read_series, index.c the series index. A series is
 * created once and lives until close (never freed earlier), which is what
 * lets the series maps be read without locks. Its head is a few hour
 * buckets under the series' own mutex. */
#ifndef OCT_TSDB_SERIES_H
#define OCT_TSDB_SERIES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "codec/point.h"
#include "codec/rowkey.h"
#include "query/rollup.h"
#include "tsdb/read.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/wal.h"
#include "tsdb/write.h"

#define TW_MAX_TSUID 255
#define TW_SHARDS    64
#define TW_FAMILY    "t"
#define TW_META_QUAL "octsdb_series"

/* Points of one series in one row hour, not yet in the store. */
typedef struct {
    int64_t base_s;
    codec_point_t *cur; /* sorted, one per timestamp; receives puts */
    uint32_t n, cap;
    codec_point_t *fl; /* being written by the flusher (immutable), or NULL */
    uint32_t nfl;
    uint64_t cur_min_seg, fl_min_seg; /* oldest WAL segment of their points */
    int64_t first_ms;                 /* arrival (wall ms) of the oldest point in cur */
    int64_t last_ms;                  /* arrival of the newest point */
    int32_t next_seq; /* next block seq for this row; -1 = not yet read from the store */
    /* local store: the row holds blocks not final (written before the hour
     * closed, maybe by an earlier run) and the open-rows registry names it,
     * so the hour is finalized when it closes even with no new point */
    uint8_t unfinal;
    /* A shared store only (shared.c): this writer's own cells of the row,
     * writer-form seqs own_lo .. wseq - 1, and the points they hold. */
    codec_point_t *sent; /* sorted, one per timestamp */
    uint32_t nsent, capsent;
    uint32_t own_lo, wseq;
} tw_bucket_t;

/* One tag pair of a series' text key: offsets into text. */
typedef struct {
    uint32_t koff, klen, voff, vlen;
} tw_pair_t;

/* A series' head lock: 4 bytes where a pthread_mutex_t takes 40, a
 * million series holding a million of them. v: 0 free, 1 held, 2 held and
 * maybe waited for; waiters sleep on the word (futex), so a holder that
 * blocks (a flush) costs them no CPU. Acquire/release atomics carry the
 * ordering (ThreadSanitizer sees it through them). Not recursive, no
 * timed wait, never used with a condition variable. head_lock.c. */
typedef struct {
    _Atomic uint32_t v;
} tw_lock_t;
void tw_lock_wait(tw_lock_t *l);
void tw_lock_wake(tw_lock_t *l);
static inline void tw_lock(tw_lock_t *l)
{
    uint32_t z = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->v, &z, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        tw_lock_wait(l);
}
/* 1 when taken, 0 when held elsewhere (nothing waits). */
static inline int tw_trylock(tw_lock_t *l)
{
    uint32_t z = 0;
    return atomic_compare_exchange_strong_explicit(&l->v, &z, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}
static inline void tw_unlock(tw_lock_t *l)
{
    if (atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2) tw_lock_wake(l);
}

typedef struct tw_series {
    /* Fields ordered widest first, the TSUID last: one allocation holds the
     * struct and the TSUID (tsuid_len bytes, not TW_MAX_TSUID), so a series
     * costs what its UIDs take, not the largest TSUID possible. Nothing
     * needed only until registration is kept in 8 bytes of its own (the
     * text key's hash: tkey_new computes it): 8 bytes less moves a series
     * with 8 tags down a malloc size class. */
    uint64_t tsuid_hash;
    uint64_t wal_seg; /* segment holding its SERIES record (under the WAL lock) */
    uint64_t metric;
    tw_bucket_t *b;
    /* Until registered (NULL after: the TSUID holds them) the tags as UIDs,
     * sorted by tagk UID once resolved, then in the same allocation the
     * pairs and the text (series_alloc; series_register frees it). */
    codec_tag_uid_t *tags;
    /* text key, until registered (absent for a series whose names could not
     * be resolved; NULL once registered: the text map holds its copy) */
    char *text;       /* metric then pairs, no separators */
    tw_pair_t *pairs; /* n_tags */
    uint32_t id;      /* process-local, names the series in WAL records */
    tw_lock_t mu;     /* head (b, nb, capb); in what was padding */
    uint32_t nb, capb;
    uint32_t mlen;
    uint16_t n_tags;
    uint8_t tsuid_len;
    /* forgotten by an all-time delete (delete_rollup.h): out of the index,
     * its record deleted, until its next point (tw_series_revive) */
    _Atomic uint8_t gone;
    uint8_t tsuid[]; /* the TSUID's full length once resolved (pending: tsuid_len 0) */
} tw_series_t;

/* Lock-free-read open-addressing table of series pointers. */
typedef struct {
    _Atomic(tw_series_t *) *slots;
    size_t mask;
} tw_tab_t;

typedef struct {
    pthread_mutex_t mu; /* writers */
    _Atomic(tw_tab_t *) tab;
    size_t n;
    tw_tab_t **old; /* retired tables, freed at close (readers may still hold one) */
    size_t nold;
    void **dead; /* text keys dropped by a rename/delete, freed at close (same reason) */
    size_t ndead;
} tw_shard_t;

typedef struct {
    tw_shard_t sh[TW_SHARDS];
    int by_tsuid;
} tw_map_t;

/* Series index (index.c). */
typedef struct tw_index tw_index_t;

#define TW_LIST_CHUNK 4096
#define TW_LIST_DIR   65536

struct tsdb_writer {
    tsdb_t *db;
    store_t *st;
    uid_registry_t *uids;
    codec_rowkey_layout_t rk;
    unsigned uid_w[CODEC_UID_N_KINDS];
    int max_tags;
    int fix_dups;
    char *specials;
    int64_t flush_every_ms;
    int64_t open_flush_ms;
    int64_t grace_ms;
    /* tsd.core.meta.*: OpenTSDB's TSMeta tracking (meta.c) */
    int meta_tracking, meta_realtime_ts, meta_incrementing;
    int tree_processing; /* tsd.core.tree.enable_processing: new TSMeta through the trees */

    tw_map_t by_text, by_tsuid;
    tw_index_t *index;
    /* Bumped (under create_mu) by each UID rename/delete: a text key made
     * from names read before a bump is not registered (tw_names_changed). */
    _Atomic uint64_t names_gen;

    /* every series, in creation order: chunks never move */
    pthread_mutex_t create_mu;
    tw_series_t **list[TW_LIST_DIR];
    _Atomic size_t n_series;
    /* a bit per series of list (same chunks): set while it has head buckets.
     * Set by the put adding its first bucket, cleared by the flush pass that
     * leaves it none, both under the series' lock; the pass visits only
     * these. A put logged before the pass's barrier set its bit before it. */
    _Atomic uint64_t *active[TW_LIST_DIR];

    tsdb_wal_t *wal;
    pthread_rwlock_t barrier; /* puts: read (log append .. head insert); flusher: write */

    /* A store other processes share (every backend but rocksdb: shared.c):
     * open hours go to the store every pass, as this writer's cells. */
    int shared;
    uint32_t writer_id;
    /* shared: the WAL position below which every accepted point is in the
     * store (under stop_mu; stored_cv signals an advance), and a request
     * for a pass now (kick, under stop_mu) */
    uint64_t stored_pos;
    pthread_cond_t stored_cv;
    int kick;
    int64_t journal_next; /* shared: the minute tw_shared_refresh reads from */
    /* shared: set by the close for its last pass, which writes what it holds
     * as writer cells and compacts nothing (the sweep does, docs/scale-out.md) */
    int closing;
    /* shared: the sweep thread (shared.c) compacting rows whose writers are
     * gone, and trimming the journal; its own lock so closing is prompt */
    int64_t sweep_delay_ms;
    int64_t trimmed_min; /* the last minute whose journal slot it trimmed */
    pthread_mutex_t sweep_mu;
    pthread_cond_t sweep_cv;
    int sweep_stop, sweep_started;
    pthread_t sweep_thr;

    pthread_mutex_t flush_mu; /* one flusher (or delete, delete.c) at a time */
    /* delete.c: odd while a delete of metric del_metric changes the head
     * and the store; a read of that metric that overlaps it starts again
     * (read.c; docs/delete.md) */
    _Atomic uint64_t del_gen, del_metric;
    pthread_t flush_thr;
    int flush_started;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    int stopping;

    /* recovery: segment-local id -> series */
    tw_series_t **rmap;
    size_t rmap_cap;

    _Atomic uint64_t points_accepted, points_rejected, duplicates, series_created, head_points,
        blocks_flushed, flush_errors, meta_errors;
    tsdb_wal_recovery_t recovery;
};

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines
 * (oct_clock_mono_ns), as every wait of the writer's threads does. */
static inline void tw_cond_init_mono(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

static inline tw_series_t *tw_series_at(tsdb_writer_t *w, size_t i)
{
    return w->list[i / TW_LIST_CHUNK][i % TW_LIST_CHUNK];
}

#define TW_ACTIVE_WORDS (TW_LIST_CHUNK / 64)

/* Marks series id as holding head buckets (caller holds its lock). */
static inline void tw_active_set(tsdb_writer_t *w, uint32_t id)
{
    atomic_fetch_or_explicit(&w->active[id / TW_LIST_CHUNK][id % TW_LIST_CHUNK / 64],
                             1ull << (id % 64), memory_order_relaxed);
}

/* Clears the mark of series id, whose head is empty (caller holds its lock). */
static inline void tw_active_clear(tsdb_writer_t *w, uint32_t id)
{
    atomic_fetch_and_explicit(&w->active[id / TW_LIST_CHUNK][id % TW_LIST_CHUNK / 64],
                              ~(1ull << (id % 64)), memory_order_relaxed);
}

/* The first marked series index in [i, n), or n. */
static inline size_t tw_active_next(tsdb_writer_t *w, size_t i, size_t n)
{
    while (i < n) {
        size_t c = i / TW_LIST_CHUNK, wd = i % TW_LIST_CHUNK / 64;
        uint64_t m = atomic_load_explicit(&w->active[c][wd], memory_order_relaxed) >> (i % 64);
        if (m) {
            i += (size_t)__builtin_ctzll(m);
            return i < n ? i : n;
        }
        i = (i / 64 + 1) * 64;
    }
    return n;
}

/* write.c: the series maps. tw_map_insert is called with create_mu held;
 * the finds take no lock. h is tw_text_hash of dp. */
tw_series_t *tw_map_find_tsuid(tw_map_t *m, const uint8_t *tsuid, size_t len);
tw_series_t *tw_map_find_text(tw_map_t *m, uint64_t h, const tsdb_dp_t *dp);
void tw_map_insert(tw_map_t *m, tw_series_t *s);
/* Makes the text key of named (a series not registered, with text) find s,
 * unless a key with that text is already there. Caller holds create_mu. */
void tw_map_link_text(tw_map_t *m, const tw_series_t *named, tw_series_t *s);
/* The uid_change_fn of the writer's registry (ctx the writer): drops from
 * the text map every key of a series holding that UID, so that the next put
 * with the old or the new name resolves its names again, as after a
 * restart; id 0: every key of the map. Takes create_mu; puts go on
 * meanwhile. Runs on the store's notification thread for another TSD's
 * change. */
void tw_names_changed(void *ctx, codec_uid_kind_t kind, uint64_t id);
uint64_t tw_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t tw_text_hash(const tsdb_dp_t *dp);
uint64_t tw_series_text_hash(const tw_series_t *s);

/* series.c: series creation and loading. */
typedef struct {
    oct_slice_t k, v;
} tw_kv_t;

/* The slow path of a put: validates and resolves dp's series. *out is
 * either a known series (*fresh = 0) or a new one, allocated but neither
 * persisted nor registered (*fresh = 1). */
int tw_series_prepare(tsdb_writer_t *w, const tsdb_dp_t *dp, tw_series_t **out, int *fresh,
                      oct_errbuf_t *eb);
/* Assigns the new names of one chunk's new series fresh[0..n), persists
 * and registers them in one store write, and replaces each by the series
 * the put must use, or NULL when it failed (return < 0, text in eb).
 * names_gen: w->names_gen read before the chunk's tw_series_prepare calls
 * (their text keys are registered only if no rename came between). */
int tw_series_commit(tsdb_writer_t *w, tw_series_t **fresh, size_t n, uint64_t names_gen,
                     oct_errbuf_t *eb);
/* The series of a TSUID (loaded at open or named by the WAL), created if
 * unknown (persisted first if persist) without a text key: the first put
 * naming it links one (tw_series_commit). */
int tw_series_from_tsuid(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int persist,
                         tw_series_t **out, oct_errbuf_t *eb);
void tw_series_free(tw_series_t *s);
/* A point was put to a gone series (tw_series_forget): its record is
 * persisted again and it rejoins the index. Call with no lock held. */
int tw_series_revive(tsdb_writer_t *w, tw_series_t *s, oct_errbuf_t *eb);

/* Loads the persisted series (tsdb-meta, name:octsdb_series) at open
 * (load.c): a thread reads the rows while the caller registers them. 0 or
 * the store's error. Nothing else may create series meanwhile. */
OCT_MUST_CHECK int tw_series_load(tsdb_writer_t *w, oct_errbuf_t *eb);
/* Registers the series of TSUID tsuid[0..len) unless known or not a TSUID
 * of this layout (skipped): one map probe, one allocation, no text key.
 * Caller holds create_mu. */
void tw_series_load_one(tsdb_writer_t *w, const uint8_t *tsuid, size_t len);
/* The same one series at a time, taking create_mu for each (a running TSD
 * on a shared store re-reading every series, shared.c): a
 * store_part_list callback over the meta table, ctx a tw_load_ctx_t. */
typedef struct {
    tsdb_writer_t *w;
    oct_errbuf_t *eb;
    int rc;
} tw_load_ctx_t;
int tw_load_part(void *ctx, oct_slice_t part);

/* meta.c: OpenTSDB's TSMeta tracking on the write path (docs/format/meta.md).
 * tw_meta_new_series runs once per series this TSD creates;
 * tw_meta_points after a chunk was accepted (ser[i] NULL = rejected).
 * Failures are counted, never fail the put (OpenTSDB logs them). */
void tw_meta_new_series(tsdb_writer_t *w, const tw_series_t *s);
void tw_meta_points(tsdb_writer_t *w, tw_series_t *const *ser, size_t n);

/* rollup.c: tsd.rollups.auto. The rollup cells (sum, count, min, max of
 * every interval that divides an hour) of one series' complete hour
 * pts[0..n) (sorted) starting at base_s, as store ops on
 * STORE_TABLE_ROLLUP (puts only: see tw_rollup_stale); computed, never added to what is stored, so
 * writing them again after a replay or a late point gives the same cells. out owns the ops' bytes
 * (tw_rollup_ops_free); n = 0 when auto is off. */
typedef struct {
    store_op_t *ops;
    size_t n;
    void *cells;
} tw_rollup_ops_t;
int tw_rollup_auto(tsdb_t *db, const tw_series_t *s, int64_t base_s, const codec_point_t *pts,
                   size_t n, tw_rollup_ops_t *out, oct_errbuf_t *eb);
void tw_rollup_ops_free(tw_rollup_ops_t *o);
/* One rollup cell, its bytes owned: partition, row, qualifier, value. */
#define TW_ROLLUP_PART_CAP (1 + 200 + 32) /* name length, name (<= 200), row prefix */
typedef struct {
    uint8_t part[TW_ROLLUP_PART_CAP];
    uint8_t row[TW_MAX_TSUID + 16];
    uint8_t qual[3];
    uint8_t val[8];
    size_t plen, rlen, vlen;
    const char *family; /* "t", or octsdb's own "o" (TSDB_ROLLUP_ID_SUMSQ) */
} tw_rollup_cell_t;
/* Makes the cell of aggregator id (or TSDB_ROLLUP_ID_SUMSQ) for the interval of iv starting at
 * start_s of series tsuid, with value v, into c. Returns 0, OCT_ERANGE (the
 * index does not fit a qualifier) or a row key error. */
int tw_rollup_cell(const codec_rowkey_layout_t *l, const uint8_t *tsuid, size_t tsuid_len,
                   const query_rollup_interval_t *iv, int id, int64_t start_s,
                   const codec_point_t *v, tw_rollup_cell_t *c, oct_errbuf_t *eb);
/* The put of cell c (borrowing its bytes). */
store_op_t tw_rollup_cell_put(const tw_rollup_cell_t *c);
/* Writes the rollup PUTs puts[0..n) (3-byte qualifiers) to
 * STORE_TABLE_ROLLUP keeping one value per slot (docs/format/rollup.md):
 * the flags of a rollup qualifier carry the value's width, so a slot
 * rewritten with another width would be two cells. Reads the puts' rows
 * and deletes, in the same write, every stored cell of the same aggregator
 * and index with other flags. Returns 0 or a storage error. */
int tw_rollup_write(tsdb_t *db, const store_op_t *puts, size_t n, oct_errbuf_t *eb);
/* The same for a series named by its TSUID (backfill: rollup_auto.c). */
int tw_rollup_auto_tsuid(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t base_s,
                         const codec_point_t *pts, size_t n, tw_rollup_ops_t *out,
                         oct_errbuf_t *eb);

/* rollup_auto.c: the intervals longer than an hour (query_rollup_is_auto_long).
 * The cells of every long period holding one of the hours t[0..n) are
 * recomputed from the source interval's cells as stored (sum of sums, sum
 * of counts, min of minima, max of maxima) and written; so the source
 * cells of those hours must be written first. *cells (may be NULL) counts
 * the cells written. */
typedef struct {
    const uint8_t *tsuid;
    size_t tsuid_len;
    int64_t hour_s;
} tw_rollup_touch_t;
int tw_rollup_long(tsdb_t *db, const tw_rollup_touch_t *t, size_t n, uint64_t *cells,
                   oct_errbuf_t *eb);

/* write.c: gives series s an empty head bucket for hour base_s marked
 * unfinal (or marks the one it has), so the flush finalizes that hour.
 * Before the flush thread starts (the open). */
void tw_head_reopen(tsdb_writer_t *w, tw_series_t *s, int64_t base_s);

/* flush.c */
OCT_MUST_CHECK int tw_flush_start(tsdb_writer_t *w, oct_errbuf_t *eb);
void tw_flush_stop(tsdb_writer_t *w);
/* One flush pass; force: every bucket with points (tsdb_flush). */
OCT_MUST_CHECK int tw_flush_pass(tsdb_writer_t *w, int force, oct_errbuf_t *eb);

/* shared.c: several TSDs on one store (docs/scale-out.md). */
/* Takes this TSD's writer id from the store (docs/format/layout.md). */
OCT_MUST_CHECK int tw_shared_open(tsdb_writer_t *w, oct_errbuf_t *eb);
/* Records new series (their TSUIDs) in the journal the other TSDs read. */
OCT_MUST_CHECK int tw_shared_journal(tsdb_writer_t *w, const oct_slice_t *tsuids, size_t n,
                                     oct_errbuf_t *eb);
/* Reads the journal since the last call and adds the series it does not
 * know (the flush thread only). */
OCT_MUST_CHECK int tw_shared_refresh(tsdb_writer_t *w, oct_errbuf_t *eb);
/* Starts / stops the sweep thread: every min(sweep_delay_ms, 60 s) it
 * compacts the closed rows of the open-rows registry (tw_shared_sweep) and
 * trims the journal (tw_journal_trim). */
OCT_MUST_CHECK int tw_shared_sweep_start(tsdb_writer_t *w, oct_errbuf_t *eb);
void tw_shared_sweep_stop(tsdb_writer_t *w);
/* One sweep at wall time now_ms: every registry entry of an hour that ended,
 * and was last written, at least sweep_delay_ms before now_ms; its row is
 * compacted (tw_shared_compact_row) and the entries deleted. Returns the
 * number of rows handled or < 0. */
OCT_MUST_CHECK int tw_shared_sweep(tsdb_writer_t *w, int64_t now_ms, oct_errbuf_t *eb);

/* The open-rows registry (docs/format/layout.md, "Open rows"): one entry
 * per (series-hour, writer) that holds writer cells. */
typedef struct {
    const uint8_t *tsuid;
    size_t len;
    int64_t base_s;
} tw_mark_t;
/* Puts (del 0, stamped now_ms) or deletes (del 1) this writer's entries
 * of m[0..n) in one store write. */
OCT_MUST_CHECK int tw_shared_mark(tsdb_writer_t *w, const tw_mark_t *m, size_t n, int del,
                                  int64_t now_ms, oct_errbuf_t *eb);

/* A local store, at open: every entry of this writer's (id 0) in the
 * registry gives its series-hour a bucket (tw_head_reopen); entries naming
 * an unknown series are deleted. 0 or the store's error. */
OCT_MUST_CHECK int tw_open_rows_reopen(tsdb_writer_t *w, oct_errbuf_t *eb);

/* The journal ring (docs/format/layout.md, "New series"), on the store
 * alone, at an explicit minute (tests drive it with their own clock).
 * put: records tsuids[0..n) as created in minute. read: calls fn for every
 * TSUID recorded in minute (a nonzero return stops and is returned). trim:
 * the once-a-minute trim at minute now_min. */
OCT_MUST_CHECK int tw_journal_put(store_t *st, int64_t minute, const oct_slice_t *tsuids, size_t n,
                                  oct_errbuf_t *eb);
OCT_MUST_CHECK int tw_journal_read(store_t *st, int64_t minute,
                                   int (*fn)(void *ctx, oct_slice_t tsuid), void *ctx,
                                   oct_errbuf_t *eb);
OCT_MUST_CHECK int tw_journal_trim(store_t *st, int64_t now_min, oct_errbuf_t *eb);

/* flush.c: the compare-and-set compaction of one row (every block cell of
 * series tsuid's hour base_s into the compacted cell), for rows this writer
 * holds no points of (the sweep). */
OCT_MUST_CHECK int tw_shared_compact_row(tsdb_writer_t *w, const uint8_t *tsuid, size_t len,
                                         int64_t base_s, oct_errbuf_t *eb);

/* Waits until every point accepted up to WAL position pos is in the store,
 * waking the flusher for it (timeout_ms < 0: no limit). 0, OCT_EAGAIN on
 * timeout, OCT_EIO when the writer is closing. */
OCT_MUST_CHECK int tw_shared_wait_stored(tsdb_writer_t *w, uint64_t pos, int timeout_ms,
                                         oct_errbuf_t *eb);

/* A point with the rank of its source: higher = written later (OpenTSDB
 * cells -1, blocks their seq, the head above every seq). */
typedef struct {
    codec_point_t p;
    int64_t rank; /* codec_block_qualifier_rank for blocks */
} tw_rpt_t;
#define TW_RANK_FLUSHING (INT64_MAX - 1)
#define TW_RANK_HEAD     INT64_MAX

/* Sorts v[0..n) and writes one point per timestamp into out (cap >= n): the
 * highest rank wins when last_wins, the lowest otherwise. Adds the losers
 * whose value differs from the winner's to *conflicts (may be NULL).
 * Returns the count written. */
size_t tw_merge_ranked(tw_rpt_t *v, size_t n, int last_wins, uint64_t *conflicts,
                       codec_point_t *out);

/* Appends the points of one data-table row (octsdb blocks and OpenTSDB
 * cells) within [lo, hi] ms to *v (grown as needed). Sets *max_seq to the
 * highest 3-byte block seq found (-1 if none). */
OCT_MUST_CHECK int tw_row_points(const store_result_t *row, size_t from, size_t to, uint32_t base_s,
                                 int64_t lo, int64_t hi, tw_rpt_t **v, size_t *n, size_t *cap,
                                 int32_t *max_seq, oct_errbuf_t *eb);

/* delete.c: drops the head points in [lo, hi] of every series whose TSUID
 * starts with prefix[0..len) (a TSUID, or a metric UID): a DELETE record
 * met by recovery. */
void tw_head_purge_prefix(tsdb_writer_t *w, const uint8_t *prefix, size_t len, int64_t lo,
                          int64_t hi);

/* index.c */
tw_index_t *tw_index_new(tsdb_writer_t *w);
void tw_index_free(tw_index_t *ix);
void tw_index_add(tw_index_t *ix, tw_series_t *s);
/* Removes every series of metric flagged gone from the index's lists. */
void tw_index_drop_gone(tw_index_t *ix, uint64_t metric);
/* Adds a registered series (its tags read from its TSUID) again. */
void tw_index_readd(tw_index_t *ix, tw_series_t *s);
int tw_index_find(tw_index_t *ix, uint64_t metric, uint64_t tagk, uint64_t tagv, tsdb_series_fn fn,
                  void *ctx);

#endif
