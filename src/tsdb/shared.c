/* shared.c -- what a TSD does differently when other TSDs share its store
 * (every backend but rocksdb, whose data dir one process holds): its writer
 * id, the sync wait for points to reach the store, learning the series
 * other TSDs created (a journal of new series, read every pass, trimmed
 * every minute), and the sweep that compacts the rows whose writers are
 * gone (the open-rows registry). The flush side (writer cells, compaction
 * by compare-and-set) is in flush.c. Design: docs/scale-out.md. A local
 * store uses the same registry for its hours not final, read back at open
 * (tw_open_rows_reopen; docs/format/layout.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/block.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "tsdb/series.h"

/* docs/format/layout.md, "Writer ids" */
#define TW_WRITERS "writers"

int tw_shared_open(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    int64_t id;
    oct_slice_t k = oct_slice_str(TW_WRITERS);
    int rc = store_incr(w->st, STORE_TABLE_SYS, k, k, oct_slice_str("w"), oct_slice_str("next"), 1,
                        &id, STORE_SYNC, eb);
    if (rc < 0) return rc;
    if (id < 1 || id > (int64_t)UINT32_MAX)
        return oct_err(eb, OCT_ELAYOUT, "writer id %lld out of range (octsdb-sys writers)",
                       (long long)id);
    w->writer_id = (uint32_t)id;
    return 0;
}

/* The journal of new series (docs/format/layout.md, "New series"): a ring
 * of partitions, one per minute mod TW_JOURNAL_SLOTS, rows minute | TSUID. */
#define TW_JOURNAL       "series/"
#define TW_JOURNAL_LEN   7
#define TW_JOURNAL_SLOTS 64
/* rows of minutes this far behind now are trimmed */
#define TW_JOURNAL_KEEP 30
/* minutes read behind the last one read, and ahead of now: the clock skew
 * between TSDs this tolerates */
#define TW_JOURNAL_SKEW 2

static oct_slice_t journal_part(uint8_t buf[TW_JOURNAL_LEN + 1], int64_t minute)
{
    memcpy(buf, TW_JOURNAL, TW_JOURNAL_LEN);
    buf[TW_JOURNAL_LEN] = (uint8_t)(minute % TW_JOURNAL_SLOTS);
    return oct_slice(buf, TW_JOURNAL_LEN + 1);
}

int tw_journal_put(store_t *st, int64_t minute, const oct_slice_t *tsuids, size_t n,
                   oct_errbuf_t *eb)
{
    uint8_t pb[TW_JOURNAL_LEN + 1];
    oct_slice_t part = journal_part(pb, minute);
    static const uint8_t one = 1;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += 4 + tsuids[i].len;
    uint8_t *keys = xmalloc(bytes ? bytes : 1), *k = keys;
    store_op_t *ops = xmalloc((n ? n : 1) * sizeof *ops);
    for (size_t i = 0; i < n; i++) {
        oct_put_be32(k, (uint32_t)minute);
        memcpy(k + 4, tsuids[i].ptr, tsuids[i].len);
        ops[i] = (store_op_t){STORE_OP_PUT,
                              part,
                              {oct_slice(k, 4 + tsuids[i].len), oct_slice_str("s"),
                               oct_slice(NULL, 0), oct_slice(&one, 1)}};
        k += 4 + tsuids[i].len;
    }
    int rc = store_write(st, STORE_TABLE_SYS, ops, n, 0, eb);
    free(ops);
    free(keys);
    return rc;
}

/* Scans the rows of partition part in [start, stop) and calls fn with each
 * row key (rows of the registries: no value is needed, only the key). */
static int scan_rows(store_t *st, oct_slice_t part, oct_slice_t start, oct_slice_t stop,
                     int relaxed, int (*fn)(void *ctx, const store_result_t *row), void *ctx,
                     oct_errbuf_t *eb)
{
    store_scan_spec_t spec = {0};
    spec.relaxed = relaxed;
    spec.part = part;
    spec.start_row = start;
    spec.stop_row = stop;
    store_scanner_t *sc;
    int rc = store_scan_open(st, STORE_TABLE_SYS, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    while ((rc = store_scan_next(sc, &row, eb)) == 1)
        if (row.n && (rc = fn(ctx, &row)) != 0) break;
    store_result_free(&row);
    store_scan_close(sc);
    return rc;
}

typedef struct {
    int (*fn)(void *ctx, oct_slice_t tsuid);
    void *ctx;
} journal_read_ctx_t;

static int journal_row(void *ctx, const store_result_t *row)
{
    journal_read_ctx_t *c = ctx;
    oct_slice_t k = row->cells[0].row;
    if (k.len <= 4) return 0; /* not a journal row */
    return c->fn(c->ctx, oct_slice(k.ptr + 4, k.len - 4));
}

int tw_journal_read(store_t *st, int64_t minute, int (*fn)(void *ctx, oct_slice_t tsuid), void *ctx,
                    oct_errbuf_t *eb)
{
    uint8_t pb[TW_JOURNAL_LEN + 1], lo[4], hi[4];
    oct_put_be32(lo, (uint32_t)minute);
    oct_put_be32(hi, (uint32_t)(minute + 1));
    journal_read_ctx_t c = {fn, ctx};
    /* relaxed: a row written during this read and missed is read by the next
     * pass, which starts TW_JOURNAL_SKEW minutes back (tw_shared_refresh); a
     * snapshot of a minute thousands of new series are landing in could
     * start over until it gave up */
    return scan_rows(st, journal_part(pb, minute), oct_slice(lo, 4), oct_slice(hi, 4), 1,
                     journal_row, &c, eb);
}

/* Collected row keys (copies) of a scan. */
typedef struct {
    oct_slice_t *k;
    size_t n, cap;
} rowkeys_t;

static int collect_row(void *ctx, const store_result_t *row)
{
    rowkeys_t *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->k = xrealloc(c->k, c->cap * sizeof *c->k);
    }
    oct_slice_t k = row->cells[0].row;
    uint8_t *p = xmalloc(k.len);
    memcpy(p, k.ptr, k.len);
    c->k[c->n++] = oct_slice(p, k.len);
    return 0;
}

static void rowkeys_free(rowkeys_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free((void *)c->k[i].ptr);
    free(c->k);
    memset(c, 0, sizeof *c);
}

/* Deletes rows k[from, to) of partition part, 1,024 per write. */
static int delete_rows(store_t *st, oct_slice_t part, const oct_slice_t *k, size_t from, size_t to,
                       oct_errbuf_t *eb)
{
    store_op_t ops[1024];
    int rc = 0;
    while (from < to && !rc) {
        size_t n = 0;
        for (; from < to && n < 1024; from++)
            ops[n++] =
                (store_op_t){STORE_OP_DELETE_ROW,
                             part,
                             {k[from], oct_slice(NULL, 0), oct_slice(NULL, 0), oct_slice(NULL, 0)}};
        rc = store_write(st, STORE_TABLE_SYS, ops, n, 0, eb);
    }
    return rc;
}

int tw_journal_trim(store_t *st, int64_t now_min, oct_errbuf_t *eb)
{
    /* the slot furthest from the minutes written and read; rows of minutes
     * KEEP or more behind (every row there unless a clock runs far ahead) */
    uint8_t pb[TW_JOURNAL_LEN + 1], hi[4];
    oct_slice_t part = journal_part(pb, now_min + TW_JOURNAL_SLOTS / 2);
    if (now_min - TW_JOURNAL_KEEP + 1 <= 0) return 0;
    oct_put_be32(hi, (uint32_t)(now_min - TW_JOURNAL_KEEP + 1));
    rowkeys_t c = {0};
    int rc = scan_rows(st, part, oct_slice(NULL, 0), oct_slice(hi, 4), 0, collect_row, &c, eb);
    if (!rc) rc = delete_rows(st, part, c.k, 0, c.n, eb);
    rowkeys_free(&c);
    return rc;
}

int tw_shared_journal(tsdb_writer_t *w, const oct_slice_t *tsuids, size_t n, oct_errbuf_t *eb)
{
    return tw_journal_put(w->st, oct_clock_wall_ms() / 60000, tsuids, n, eb);
}

static int journal_learn(void *ctx, oct_slice_t tsuid)
{
    tsdb_writer_t *w = ctx;
    tw_series_t *s;
    oct_errbuf_t e2;
    /* known: a map probe; else created from the UID names (not persisted:
     * its creator did that first) */
    (void)tw_series_from_tsuid(w, tsuid.ptr, tsuid.len, 0, &s, &e2);
    return 0;
}

int tw_shared_refresh(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    int64_t now = oct_clock_wall_ms() / 60000;
    if (!w->journal_next) w->journal_next = now; /* the open loaded everything before */
    int rc = 0;
    if (now - w->journal_next > TW_JOURNAL_KEEP - TW_JOURNAL_SKEW - 1) {
        /* fallen behind the trim (store calls failing that long): the
         * entries may be gone, so read every series as the open does */
        tw_load_ctx_t lc = {w, eb, 0};
        rc = store_part_list(w->st, STORE_TABLE_META, oct_slice(NULL, 0), oct_slice(NULL, 0),
                             tw_load_part, &lc, eb);
        if (!rc) w->journal_next = now;
        return rc;
    }
    for (int64_t m = w->journal_next - TW_JOURNAL_SKEW; m <= now + TW_JOURNAL_SKEW && !rc; m++)
        rc = tw_journal_read(w->st, m, journal_learn, w, eb);
    if (!rc) w->journal_next = now;
    return rc;
}

/* ---- the open-rows registry and its sweep ------------------------------- */

/* docs/format/layout.md, "Open rows" */
#define TW_OPEN        "open/"
#define TW_OPEN_LEN    5
#define TW_OPEN_SLOTS  16 /* hours mod */
#define TW_OPEN_SHARDS 16 /* the TSUID's last byte mod: one hour's rows over 16 objects */
#define TW_OPEN_FAM    "o"

static oct_slice_t open_part(uint8_t buf[TW_OPEN_LEN + 2], int64_t hour, unsigned shard)
{
    memcpy(buf, TW_OPEN, TW_OPEN_LEN);
    buf[TW_OPEN_LEN] = (uint8_t)(hour % TW_OPEN_SLOTS);
    buf[TW_OPEN_LEN + 1] = (uint8_t)(shard % TW_OPEN_SHARDS);
    return oct_slice(buf, TW_OPEN_LEN + 2);
}

static unsigned open_shard(const uint8_t *tsuid, size_t len)
{
    return len ? tsuid[len - 1] : 0;
}

int tw_shared_mark(tsdb_writer_t *w, const tw_mark_t *m, size_t n, int del, int64_t now_ms,
                   oct_errbuf_t *eb)
{
    if (!n) return 0;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += 8 + m[i].len + TW_OPEN_LEN + 2;
    uint8_t *buf = xmalloc(bytes), *p = buf, stamp[8];
    oct_put_be64(stamp, (uint64_t)now_ms);
    store_op_t *ops = xmalloc(n * sizeof *ops);
    for (size_t i = 0; i < n; i++) {
        int64_t hour = m[i].base_s / 3600;
        oct_slice_t part = open_part(p, hour, open_shard(m[i].tsuid, m[i].len));
        p += TW_OPEN_LEN + 2;
        oct_put_be32(p, (uint32_t)hour);
        memcpy(p + 4, m[i].tsuid, m[i].len);
        oct_put_be32(p + 4 + m[i].len, w->writer_id);
        oct_slice_t row = oct_slice(p, 8 + m[i].len);
        p += 8 + m[i].len;
        /* local: the entry's one cell (a RocksDB row delete is a range
         * tombstone, 36 % of a final flush's instructions in callgrind) */
        store_op_kind_t dk = w->shared ? STORE_OP_DELETE_ROW : STORE_OP_DELETE_CELL;
        ops[i] = (store_op_t){del ? dk : STORE_OP_PUT,
                              part,
                              {row, oct_slice_str(TW_OPEN_FAM), oct_slice(NULL, 0),
                               del ? oct_slice(NULL, 0) : oct_slice(stamp, 8)}};
    }
    int rc = store_write(w->st, STORE_TABLE_SYS, ops, n, 0, eb);
    free(ops);
    free(buf);
    return rc;
}

/* ---- the same registry on a local store: hours not final ---------------- */

typedef struct {
    tsdb_writer_t *w;
    rowkeys_t unknown; /* entries naming no series of this data dir */
} reopen_ctx_t;

static int reopen_row(void *ctx, const store_result_t *row)
{
    reopen_ctx_t *c = ctx;
    oct_slice_t k = row->cells[0].row;
    if (k.len < 9 || oct_get_be32(k.ptr + k.len - 4) != c->w->writer_id) return 0;
    tw_series_t *s = tw_map_find_tsuid(&c->w->by_tsuid, k.ptr + 4, k.len - 8);
    if (s)
        tw_head_reopen(c->w, s, (int64_t)oct_get_be32(k.ptr) * 3600);
    else
        collect_row(&c->unknown, row);
    return 0;
}

int tw_open_rows_reopen(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    int rc = 0;
    for (int slot = 0; slot < TW_OPEN_SLOTS * TW_OPEN_SHARDS && !rc; slot++) {
        uint8_t pb[TW_OPEN_LEN + 2];
        oct_slice_t part = open_part(pb, slot / TW_OPEN_SHARDS, (unsigned)slot);
        reopen_ctx_t c = {w, {0}};
        rc = scan_rows(w->st, part, oct_slice(NULL, 0), oct_slice(NULL, 0), 0, reopen_row, &c, eb);
        if (!rc) rc = delete_rows(w->st, part, c.unknown.k, 0, c.unknown.n, eb);
        rowkeys_free(&c.unknown);
    }
    return rc;
}

/* A registry row read by the sweep: its key and its stamp. */
typedef struct {
    rowkeys_t keys;
    int64_t *stamp;
    size_t cap;
} open_rows_t;

static int open_row(void *ctx, const store_result_t *row)
{
    open_rows_t *o = ctx;
    const store_cell_t *c = &row->cells[0];
    if (c->row.len < 9 || c->value.len != 8) return 0; /* not an entry: left alone */
    collect_row(&o->keys, row);
    if (o->cap < o->keys.cap) {
        o->cap = o->keys.cap;
        o->stamp = xrealloc(o->stamp, o->cap * sizeof *o->stamp);
    }
    o->stamp[o->keys.n - 1] = (int64_t)oct_get_be64(c->value.ptr);
    return 0;
}

/* 1 when the row holds a block cell other than the compacted one. */
static int row_has_writer_cells(tsdb_writer_t *w, const uint8_t *tsuid, size_t len, int64_t base_s,
                                int *out, oct_errbuf_t *eb)
{
    uint8_t key[CODEC_ROWKEY_MAX_SALT + 8 + 4 + TW_MAX_TSUID];
    int r = codec_rowkey_from_tsuid(&w->rk, tsuid, len, base_s, key, sizeof key, eb);
    if (r < 0) return r;
    store_result_t row = STORE_RESULT_INIT;
    int rc = store_get(w->st, STORE_TABLE_DATA,
                       oct_slice(key, codec_rowkey_partition_prefix_len(&w->rk)),
                       oct_slice(key, (size_t)r), oct_slice_str(TW_FAMILY), &row, eb);
    *out = 0;
    for (size_t i = 0; !rc && i < row.n; i++) {
        uint16_t seq = 1;
        const store_cell_t *c = &row.cells[i];
        if (!codec_block_qualifier_rank(c->qualifier.ptr, c->qualifier.len, NULL)) continue;
        if (c->qualifier.len == CODEC_BLOCK_QUAL_LEN &&
            codec_block_qualifier_parse(c->qualifier.ptr, c->qualifier.len, &seq) && seq == 0)
            continue;
        *out = 1;
    }
    store_result_free(&row);
    return rc;
}

/* The entries k[from, to) name one series-hour: compact its row, delete
 * them, and put them back if the row holds writer cells again (a writer
 * that wrote meanwhile: format/layout.md explains why this loses none). */
static int sweep_row(tsdb_writer_t *w, const open_rows_t *o, size_t from, size_t to,
                     oct_errbuf_t *eb)
{
    oct_slice_t k = o->keys.k[from];
    int64_t hour = (int64_t)oct_get_be32(k.ptr);
    const uint8_t *tsuid = k.ptr + 4;
    size_t len = k.len - 8;
    uint8_t pb[TW_OPEN_LEN + 2];
    oct_slice_t part = open_part(pb, hour, open_shard(tsuid, len));
    int rc = tw_shared_compact_row(w, tsuid, len, hour * 3600, eb);
    if (rc == OCT_EINVAL || rc == OCT_ECORRUPT) {
        /* not a row of this layout: nothing to compact, drop the entries */
        return delete_rows(w->st, part, o->keys.k, from, to, eb);
    }
    if (rc) return rc;
    rc = delete_rows(w->st, part, o->keys.k, from, to, eb);
    int again = 0;
    if (!rc) rc = row_has_writer_cells(w, tsuid, len, hour * 3600, &again, eb);
    if (!rc && again) {
        uint8_t stamp[8];
        oct_put_be64(stamp, (uint64_t)o->stamp[from]);
        store_op_t *ops = xmalloc((to - from) * sizeof *ops);
        for (size_t i = from; i < to; i++)
            ops[i - from] = (store_op_t){STORE_OP_PUT,
                                         part,
                                         {o->keys.k[i], oct_slice_str(TW_OPEN_FAM),
                                          oct_slice(NULL, 0), oct_slice(stamp, 8)}};
        rc = store_write(w->st, STORE_TABLE_SYS, ops, to - from, 0, eb);
        free(ops);
    }
    return rc;
}

static int sweep_stopping(tsdb_writer_t *w)
{
    pthread_mutex_lock(&w->sweep_mu);
    int s = w->sweep_stop;
    pthread_mutex_unlock(&w->sweep_mu);
    return s;
}

int tw_shared_sweep(tsdb_writer_t *w, int64_t now_ms, oct_errbuf_t *eb)
{
    /* hours h with (h + 1) * 3600 s + delay <= now */
    int64_t last_hour = (now_ms - w->sweep_delay_ms) / 3600000 - 1;
    if (last_hour < 0) return 0;
    uint8_t hi[4];
    oct_put_be32(hi, (uint32_t)(last_hour + 1));
    int rc = 0, done = 0;
    for (int slot = 0; slot < TW_OPEN_SLOTS * TW_OPEN_SHARDS && !rc && !sweep_stopping(w); slot++) {
        uint8_t pb[TW_OPEN_LEN + 2];
        open_rows_t o = {0};
        rc = scan_rows(w->st, open_part(pb, slot / TW_OPEN_SHARDS, (unsigned)slot),
                       oct_slice(NULL, 0), oct_slice(hi, 4), 0, open_row, &o, eb);
        /* rows are sorted: the entries of one series-hour (one per writer)
         * are neighbours, the same key but the last 4 bytes */
        for (size_t i = 0, j; !rc && i < o.keys.n; i = j) {
            oct_slice_t a = o.keys.k[i];
            int64_t newest = o.stamp[i];
            for (j = i + 1; j < o.keys.n; j++) {
                oct_slice_t b = o.keys.k[j];
                if (b.len != a.len || memcmp(a.ptr, b.ptr, a.len - 4) != 0) break;
                if (o.stamp[j] > newest) newest = o.stamp[j];
            }
            if (newest + w->sweep_delay_ms > now_ms) continue; /* written lately */
            if (sweep_stopping(w)) break;
            rc = sweep_row(w, &o, i, j, eb);
            done += !rc;
        }
        rowkeys_free(&o.keys);
        free(o.stamp);
    }
    return rc < 0 ? rc : done;
}

static void *sweep_thread(void *arg)
{
    tsdb_writer_t *w = arg;
    int64_t every = w->sweep_delay_ms < 60000 ? w->sweep_delay_ms : 60000;
    int failing = 0;
    pthread_mutex_lock(&w->sweep_mu);
    while (!w->sweep_stop) {
        int64_t dl_ns = oct_clock_mono_ns() + every * 1000000;
        struct timespec dl = {.tv_sec = dl_ns / 1000000000, .tv_nsec = dl_ns % 1000000000};
        while (!w->sweep_stop &&
               pthread_cond_timedwait(&w->sweep_cv, &w->sweep_mu, &dl) != ETIMEDOUT)
            ;
        if (w->sweep_stop) break;
        pthread_mutex_unlock(&w->sweep_mu);
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int64_t now = oct_clock_wall_ms();
        int rc = tw_shared_sweep(w, now, &eb);
        /* the journal: every minute's slot once (at most a ring's worth) */
        int64_t min = now / 60000;
        if (!w->trimmed_min || min - w->trimmed_min > TW_JOURNAL_SLOTS) w->trimmed_min = min - 1;
        while (rc >= 0 && w->trimmed_min < min) {
            rc = tw_journal_trim(w->st, w->trimmed_min + 1, &eb);
            if (!rc) w->trimmed_min++;
        }
        if (rc < 0) {
            if (!failing) oct_log_warn("sweep", "%s; retrying at the next sweep", eb.msg);
            failing = 1;
        } else {
            failing = 0;
        }
        pthread_mutex_lock(&w->sweep_mu);
    }
    pthread_mutex_unlock(&w->sweep_mu);
    return NULL;
}

int tw_shared_sweep_start(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    pthread_mutex_init(&w->sweep_mu, NULL);
    tw_cond_init_mono(&w->sweep_cv);
    w->sweep_stop = 0;
    if (pthread_create(&w->sweep_thr, NULL, sweep_thread, w) != 0) {
        pthread_cond_destroy(&w->sweep_cv);
        pthread_mutex_destroy(&w->sweep_mu);
        return oct_err(eb, OCT_EIO, "cannot start the sweep thread");
    }
    w->sweep_started = 1;
    return 0;
}

void tw_shared_sweep_stop(tsdb_writer_t *w)
{
    if (!w->sweep_started) return;
    pthread_mutex_lock(&w->sweep_mu);
    w->sweep_stop = 1;
    pthread_cond_signal(&w->sweep_cv);
    pthread_mutex_unlock(&w->sweep_mu);
    pthread_join(w->sweep_thr, NULL);
    pthread_cond_destroy(&w->sweep_cv);
    pthread_mutex_destroy(&w->sweep_mu);
    w->sweep_started = 0;
}

int tw_shared_wait_stored(tsdb_writer_t *w, uint64_t pos, int timeout_ms, oct_errbuf_t *eb)
{
    int64_t dl_ns = oct_clock_mono_ns() + (int64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000;
    struct timespec dl = {.tv_sec = dl_ns / 1000000000, .tv_nsec = dl_ns % 1000000000};
    int rc = 0;
    pthread_mutex_lock(&w->stop_mu);
    if (w->stored_pos < pos) {
        w->kick = 1; /* a pass now, not at the next tick */
        pthread_cond_signal(&w->stop_cv);
    }
    while (w->stored_pos < pos && !w->stopping) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&w->stored_cv, &w->stop_mu);
        } else if (pthread_cond_timedwait(&w->stored_cv, &w->stop_mu, &dl) == ETIMEDOUT) {
            rc = w->stored_pos < pos ? OCT_EAGAIN : 0;
            break;
        }
    }
    if (!rc && w->stored_pos < pos) rc = OCT_EIO;
    pthread_mutex_unlock(&w->stop_mu);
    if (rc == OCT_EAGAIN) return oct_err(eb, rc, "the points are not in the store yet");
    if (rc) return oct_err(eb, rc, "the TSD is closing before the points reached the store");
    return 0;
}
