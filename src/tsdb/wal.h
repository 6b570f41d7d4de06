/* wal.h -- the write-ahead log of the write path: segment files of
 * CRC-checked records under <data_dir>/wal/, filled by group commit.
 *
 * Internal to the tsdb module (write.c is the only user). The byte format,
 * the torn-tail rule and the truncation rule are in docs/format/wal.md.
 * Appenders build a framed record (tsdb_wal_seal) outside any lock, then
 * copy it into the shared buffer between tsdb_wal_lock and tsdb_wal_unlock
 * (one short critical section per put batch). A dedicated thread write(2)s
 * the buffer at most flush_interval_ms later, and fdatasync(2)s it when a
 * waiter asks. Threads: every function may be called from any thread. */
#ifndef OCT_TSDB_WAL_H
#define OCT_TSDB_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/varint.h" /* the record's integers (docs/format/wal.md) */
#include "common/err.h"

#define TSDB_WAL_REC_HDR  9u          /* len(4) crc(4) type(1) */
#define TSDB_WAL_MAX_REC  (16u << 20) /* largest len (type + body) */
#define TSDB_WAL_T_SERIES 1
#define TSDB_WAL_T_POINTS 2
#define TSDB_WAL_T_DELETE 3 /* docs/format/wal.md; docs/delete.md */

typedef struct tsdb_wal tsdb_wal_t;

typedef struct {
    const char *dir;            /* the wal directory (created if missing) */
    unsigned flush_interval_ms; /* group-commit delay */
    unsigned sync_interval_ms;  /* fdatasync at least this often while unsynced data exists
                                 * (0 = only on request): bounds what power loss can take */
    uint64_t segment_bytes;     /* rotate after this many bytes */
    /* Called by the WAL thread before each fdatasync of records (NULL =
     * none), after it has taken the records that sync will cover: what those
     * records depend on outside the log (UIDs in the store) is made durable
     * here first. 0, or a negative code that fails the sync as a write
     * error would. */
    int (*presync)(void *ctx);
    void *presync_ctx;
} tsdb_wal_opts_t;

/* One decoded point of a POINTS record. */
typedef struct {
    uint64_t id; /* segment-local series id */
    int64_t ts_ms;
    union {
        int64_t i;
        double f;
    } val;
    uint8_t flags; /* bit 0 float, bit 1 ts given in ms */
} tsdb_wal_point_t;

/* Replay callbacks; a negative return aborts the open with that error. */
typedef struct {
    int (*segment)(void *ctx, uint64_t seg); /* a new segment begins: ids restart */
    int (*series)(void *ctx, uint64_t seg, uint64_t id, const uint8_t *tsuid, size_t len);
    /* returns 0, or 1 if a point names an undefined id (the record counts as bad) */
    int (*points)(void *ctx, uint64_t seg, const tsdb_wal_point_t *pts, size_t n);
    /* a DELETE record: prefix is a TSUID or a metric UID (may be NULL) */
    int (*del)(void *ctx, const uint8_t *prefix, size_t len, int64_t start_ms, int64_t end_ms);
} tsdb_wal_replay_t;

/* Writes the body of a DELETE record into rec + TSDB_WAL_REC_HDR and seals
 * it; rec holds at least TSDB_WAL_REC_HDR + 1 + 255 + 20 bytes. Returns the
 * framed length. */
size_t tsdb_wal_delete_record(uint8_t *rec, const uint8_t *prefix, size_t len, int64_t start_ms,
                              int64_t end_ms);

typedef struct {
    uint64_t segments;     /* segments replayed */
    uint64_t records;      /* valid records replayed */
    uint64_t torn_bytes;   /* bytes cut off (torn tails, corruption) */
    uint64_t bad_segments; /* files with a bad header, skipped */
} tsdb_wal_recovery_t;

/* Replays every segment in opts->dir through rp (may be NULL), cutting torn
 * tails, then starts a new segment and the group-commit thread. */
OCT_MUST_CHECK int tsdb_wal_open(const tsdb_wal_opts_t *opts, const tsdb_wal_replay_t *rp,
                                 void *ctx, tsdb_wal_t **out, tsdb_wal_recovery_t *rec,
                                 oct_errbuf_t *eb);

/* Writes and syncs what is buffered, stops the thread; with delete_all
 * (everything is in the store) removes every segment. NULL ok. */
void tsdb_wal_close(tsdb_wal_t *w, int delete_all);

/* Fills the 9-byte header of rec (rec[9..9+body_len) holds the body) and
 * returns the framed length. */
size_t tsdb_wal_seal(uint8_t *rec, uint8_t type, size_t body_len);

/* Enters the append section (blocking while 64 MiB wait to be written) and
 * sets *seg to the segment the next records go to. OCT_EIO (then not
 * locked) while the log is failing: from a write or sync error until the
 * thread has started a fresh segment (it retries by itself, so appends
 * resume when the disk has room again). */
OCT_MUST_CHECK int tsdb_wal_lock(tsdb_wal_t *w, uint64_t *seg, oct_errbuf_t *eb);
void tsdb_wal_append_locked(tsdb_wal_t *w, const uint8_t *rec, size_t n);
/* Leaves the section; returns the log position after the last record. */
uint64_t tsdb_wal_unlock(tsdb_wal_t *w);

/* Waits until written (fsync: synced) up to seq. 0, OCT_EAGAIN, or OCT_EIO
 * when a write (sync) error lost records up to seq: they were not logged
 * and must not be acknowledged. */
OCT_MUST_CHECK int tsdb_wal_wait(tsdb_wal_t *w, uint64_t seq, int fsync, int timeout_ms,
                                 oct_errbuf_t *eb);

/* The log position after the last record appended (what tsdb_wal_unlock
 * returned last). */
uint64_t tsdb_wal_position(tsdb_wal_t *w);

/* The segment new records currently go to. */
uint64_t tsdb_wal_current_segment(tsdb_wal_t *w);
/* Deletes every segment numbered below seg (and not current). */
void tsdb_wal_delete_below(tsdb_wal_t *w, uint64_t seg);

void tsdb_wal_counters(tsdb_wal_t *w, uint64_t *bytes_written, uint64_t *syncs);

/* Bytes of records (headers left out) in the segments under dir, read
 * without opening the log: what a daemon left unflushed. 0 without a log. */
uint64_t tsdb_wal_record_bytes(const char *dir);

/* CRC-32C of p[0..n) continued from crc (start with 0). */
uint32_t tsdb_crc32c(uint32_t crc, const void *p, size_t n);

#endif
