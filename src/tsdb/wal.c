/* wal.c -- write-ahead log segments, group-commit thread and recovery.
 *
 * Appenders copy framed records into one buffer under 'mu'; the thread swaps
 * that buffer for an empty spare, write(2)s it outside the lock and reports
 * the new written/synced positions through 'done'. A buffer may straddle one
 * segment rotation ('split'): the bytes before it go to the old file, which
 * is synced and closed, the rest (starting with the new header) to the new
 * one. Recovery reads each segment whole and stops at the first invalid
 * record (docs/format/wal.md), truncating the file there.
 *
 * Write errors (a full disk) are not fatal: the records of the failed write
 * and everything appended since are dropped from the buffer, their log
 * positions are remembered as a failed range (whose waiters get OCT_EIO;
 * those puts were not acknowledged), and appends are refused while the
 * thread retries, every WAL_RETRY_MS, to start a fresh segment (create it,
 * write and sync its header). The failed file is never written again, so a
 * torn record in it stays a torn tail for recovery; the series ids of the
 * fresh segment are defined anew by the appenders (a new segment number).
 * Positions stay monotonic: after a failure written = synced = appended, and
 * the failed range is what tells a waiter its records did not make it.
 *
 * Waiters (tsdb_wal_wait) do not share one condition: each puts a node on
 * its own stack into 'waiters' and sleeps on a futex word in it. After a
 * round the thread takes off the list only the nodes whose position is now
 * written (synced, for a sync waiter) or failed, and wakes each of them
 * alone, after leaving 'mu'. A broadcast woke every waiter on every round
 * (and on "space freed"), most of them only to sleep again, and each woke
 * into a mutex the thread still held: about two futex calls per put. */
#include "tsdb/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/xmalloc.h"

#define WAL_MAGIC        "octWAL01"
#define WAL_HDR          16u
#define WAL_URGENT_BYTES (4u << 20)  /* write at once past this */
#define WAL_MAX_PENDING  (64u << 20) /* appenders wait past this */
#define WAL_RETRY_MS     200u        /* after a write error: how often a fresh segment is tried */
#define WAL_FAIL_HIST    16          /* failed position ranges remembered for waiters */

typedef struct {
    uint8_t *data;
    size_t len, cap;
    size_t split; /* SIZE_MAX: all in 'seg'; else data[split..] is segment seg + 1 */
    uint64_t seg;
} wal_buf_t;

/* A thread in tsdb_wal_wait. 'next', 'listed' and 'err' change under mu;
 * the thread sets 'state' (release) last and never touches the node after:
 * the waiter returns, and its stack frame goes, once it sees state = 1. */
typedef struct wal_waiter {
    struct wal_waiter *next;
    uint64_t seq;
    int fsync;
    int listed; /* on w->waiters */
    int err;    /* the failed write's error, or 0: decided */
    _Atomic uint32_t state;
} wal_waiter_t;

struct tsdb_wal {
    char *dir;
    unsigned interval_ms;
    unsigned sync_interval_ms;
    int64_t last_sync; /* when the last fdatasync finished (oct_clock_mono_ns) */
    uint64_t seg_bytes_max;

    pthread_mutex_t mu;
    pthread_cond_t work;   /* to the thread: something to do */
    pthread_cond_t done;   /* from the thread: space freed, or failed/restarted (appenders) */
    wal_waiter_t *waiters; /* tsdb_wal_wait callers not yet decided */
    int kick;              /* an append wants 'work' signalled (by tsdb_wal_unlock) */
    wal_buf_t buf;         /* being filled */
    wal_buf_t spare;       /* owned by the thread while writing */
    uint64_t appended;     /* logical position after the last appended byte */
    uint64_t written, synced;
    uint64_t sync_req;    /* highest position a waiter wants synced */
    uint64_t write_req;   /* highest position a waiter wants written */
    uint64_t cur_seg;     /* segment of the next record */
    uint64_t cur_seg_len; /* bytes appended to it so far */
    uint64_t min_seg;     /* lowest segment that may still exist */
    int64_t first_at;     /* when buf went from empty to non-empty (oct_clock_mono_ns) */
    int failed;           /* error of the last write while it stands (appends refused) */
    struct {
        uint64_t lo_w, lo_s, hi; /* (lo_w, hi] not written, (lo_s, hi] not synced */
        int err;
    } fails[WAL_FAIL_HIST];
    unsigned n_fails;
    int stop;
    uint64_t bytes_written, syncs;
    int (*presync)(void *ctx); /* opts.presync */
    void *presync_ctx;

    int fd; /* file of the segment the thread writes; thread-owned */
    uint64_t fd_seg;
    pthread_t thr;
    int thr_started;
};

/* ---- CRC-32C ---------------------------------------------------------- */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_hw;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_tab[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xFF];
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw_run(uint32_t c, const uint8_t *p, size_t n)
{
    uint64_t c64 = c;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c64 = __builtin_ia32_crc32di(c64, v);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t tsdb_crc32c(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    uint32_t c = ~crc;
#if defined(__x86_64__)
    if (crc_hw) return ~crc_hw_run(c, p, n);
#endif
    while (n >= 8) {
        c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        c = crc_tab[7][c & 0xFF] ^ crc_tab[6][(c >> 8) & 0xFF] ^ crc_tab[5][(c >> 16) & 0xFF] ^
            crc_tab[4][c >> 24] ^ crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
            crc_tab[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xFF];
    return ~c;
}

size_t tsdb_wal_seal(uint8_t *rec, uint8_t type, size_t body_len)
{
    oct_put_be32(rec, (uint32_t)(body_len + 1));
    rec[8] = type;
    uint32_t c = tsdb_crc32c(0, rec, 4);
    c = tsdb_crc32c(c, rec + 8, body_len + 1);
    oct_put_be32(rec + 4, c);
    return TSDB_WAL_REC_HDR + body_len;
}

/* ---- files ------------------------------------------------------------ */

size_t tsdb_wal_delete_record(uint8_t *rec, const uint8_t *prefix, size_t len, int64_t start_ms,
                              int64_t end_ms)
{
    uint8_t *p = rec + TSDB_WAL_REC_HDR;
    p[0] = (uint8_t)len;
    memcpy(p + 1, prefix, len);
    size_t k = 1 + len;
    k += codec_varint_put(p + k, codec_zigzag(start_ms));
    k += codec_varint_put(p + k, codec_zigzag(end_ms));
    return tsdb_wal_seal(rec, TSDB_WAL_T_DELETE, k);
}

static void seg_path(const tsdb_wal_t *w, uint64_t seg, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%016" PRIx64 ".wal", w->dir, seg);
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = fsync(fd) ? -errno : 0;
    close(fd);
    return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Creates segment 'seg' (header only, not yet written: the header travels in
 * the buffer) and makes it the thread's current file. */
static int seg_create(tsdb_wal_t *w, uint64_t seg)
{
    char path[4096];
    seg_path(w, seg, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    int rc = fsync_dir(w->dir);
    if (rc) {
        close(fd);
        return rc;
    }
    w->fd = fd;
    w->fd_seg = seg;
    return 0;
}

static void hdr_make(uint8_t out[WAL_HDR], uint64_t seg)
{
    /* 8 magic bytes, not a C string */
    memcpy(out, WAL_MAGIC, 8); // NOLINT(bugprone-not-null-terminated-result)
    oct_put_be64(out + 8, seg);
}

/* ---- buffer ----------------------------------------------------------- */

static void buf_append(wal_buf_t *b, const uint8_t *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->len + n)
            c *= 2;
        b->data = xrealloc(b->data, c);
        b->cap = c;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* ms after from_ns, as the absolute time pthread_cond_timedwait takes (the
 * conditions wait on CLOCK_MONOTONIC, which oct_clock_mono_ns reads). */
static struct timespec deadline_after(int64_t from_ns, unsigned ms)
{
    int64_t ns = from_ns + (int64_t)ms * 1000000;
    return (struct timespec){.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
}

/* ---- waiters ---------------------------------------------------------- */

/* Sleeps while *word == val, until the absolute CLOCK_MONOTONIC time dl
 * (NULL: no limit). 0, or ETIMEDOUT; a spurious return is 0 too. */
static int futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *dl)
{
    long r = syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, dl, NULL,
                     FUTEX_BITSET_MATCH_ANY);
    return r < 0 && errno == ETIMEDOUT ? ETIMEDOUT : 0;
}

static void futex_wake_one(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

static int wal_failed_at(const tsdb_wal_t *w, uint64_t seq, int fsync);

/* Under mu: is position seq decided for this kind of waiter? Sets *err to
 * the failure that lost it (0 = written or synced as asked). */
static int wal_decided(const tsdb_wal_t *w, uint64_t seq, int fsync, int *err)
{
    /* A failed range is checked first: after a failure the positions move
     * past it, so "written >= seq" alone would read as success. */
    *err = wal_failed_at(w, seq, fsync);
    return *err || (fsync ? w->synced : w->written) >= seq;
}

/* Under mu: unlinks the waiters whose position is decided and returns them
 * (linked by next) for wal_wake, to be called after mu is released. */
static wal_waiter_t *wal_take_decided(tsdb_wal_t *w)
{
    wal_waiter_t *out = NULL;
    for (wal_waiter_t **pp = &w->waiters; *pp;) {
        wal_waiter_t *n = *pp;
        if (!wal_decided(w, n->seq, n->fsync, &n->err)) {
            pp = &n->next;
            continue;
        }
        *pp = n->next;
        n->listed = 0;
        n->next = out;
        out = n;
    }
    return out;
}

static void wal_wake(wal_waiter_t *n)
{
    while (n) {
        wal_waiter_t *next = n->next;
        atomic_store_explicit(&n->state, 1, memory_order_release);
        /* The frame may be gone already: a wake on a dead address is at
         * most a spurious wake-up, which every futex user tolerates. */
        futex_wake_one(&n->state);
        n = next;
    }
}

/* Under mu: wakes the decided waiters with mu released meanwhile. */
static void wal_wake_decided(tsdb_wal_t *w)
{
    wal_waiter_t *d = wal_take_decided(w);
    if (!d) return;
    pthread_mutex_unlock(&w->mu);
    wal_wake(d);
    pthread_mutex_lock(&w->mu);
}

/* ---- the group-commit thread ---------------------------------------- */

static int flush_buf(tsdb_wal_t *w, wal_buf_t *b, int want_sync)
{
    int rc = 0;
    size_t first = b->split == SIZE_MAX ? b->len : b->split;
    if (first) rc = write_all(w->fd, b->data, first);
    if (!rc && b->split != SIZE_MAX) {
        /* Rotation: the old segment is complete; sync it so that "synced"
         * never depends on a file we no longer hold open. */
        rc = fdatasync(w->fd) ? -errno : 0;
        close(w->fd);
        w->fd = -1;
        if (!rc) rc = seg_create(w, b->seg + 1);
        if (!rc) rc = write_all(w->fd, b->data + b->split, b->len - b->split);
    }
    if (!rc && want_sync) rc = fdatasync(w->fd) ? -errno : 0;
    return rc;
}

/* Is a periodic sync due (unsynced data older than sync_interval_ms)? */
static int periodic_sync_due(const tsdb_wal_t *w, int64_t now_ns)
{
    if (!w->sync_interval_ms || (w->written == w->synced && !w->buf.len)) return 0;
    return now_ns >= w->last_sync + (int64_t)w->sync_interval_ms * 1000000;
}

/* Starts segment seg after a write error: the failed file is closed unsynced
 * (its unsynced range was reported failed), the new one created with its
 * header written and synced. On error nothing of seg is left behind. */
static int seg_restart(tsdb_wal_t *w, uint64_t seg)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    int rc = seg_create(w, seg);
    if (!rc) {
        uint8_t h[WAL_HDR];
        hdr_make(h, seg);
        rc = write_all(w->fd, h, WAL_HDR);
        if (!rc) rc = fdatasync(w->fd) ? -errno : 0;
    }
    if (rc) {
        char path[4096];
        seg_path(w, seg, path, sizeof path);
        if (w->fd >= 0) close(w->fd);
        w->fd = -1;
        unlink(path); /* frees what the header took; ENOENT if never created */
    }
    return rc;
}

/* Under mu, after a write of everything up to 'appended' failed with err:
 * remember the range for the waiters, drop what was buffered since (it
 * would follow a torn record or define ids in a dead file), and refuse
 * appends until seg_restart succeeds. */
static void wal_fail(tsdb_wal_t *w, int err)
{
    if (w->n_fails == WAL_FAIL_HIST) {
        /* merge the two oldest: their gap reads as failed too, which only
         * ever turns a success into an error, never the reverse */
        w->fails[1].lo_w =
            w->fails[0].lo_w < w->fails[1].lo_w ? w->fails[0].lo_w : w->fails[1].lo_w;
        w->fails[1].lo_s =
            w->fails[0].lo_s < w->fails[1].lo_s ? w->fails[0].lo_s : w->fails[1].lo_s;
        memmove(&w->fails[0], &w->fails[1], (WAL_FAIL_HIST - 1) * sizeof w->fails[0]);
        w->n_fails--;
    }
    w->fails[w->n_fails].lo_w = w->written;
    w->fails[w->n_fails].lo_s = w->synced;
    w->fails[w->n_fails].hi = w->appended;
    w->fails[w->n_fails].err = err;
    w->n_fails++;
    w->buf.len = 0;
    w->buf.split = SIZE_MAX;
    w->written = w->synced = w->appended;
    w->failed = err;
}

/* The error of a failed range holding position seq (as a write or a sync
 * waiter sees it), or 0. */
static int wal_failed_at(const tsdb_wal_t *w, uint64_t seq, int fsync)
{
    for (unsigned i = w->n_fails; i-- > 0;) {
        uint64_t lo = fsync ? w->fails[i].lo_s : w->fails[i].lo_w;
        if (seq > lo && seq <= w->fails[i].hi) return w->fails[i].err;
    }
    return 0;
}

/* Runs the presync hook if flush_buf is about to fdatasync (a requested or
 * periodic sync, or a rotation syncing the old segment). The records that
 * sync covers (b and what earlier rounds wrote unsynced) were appended before
 * the thread took b, so whatever they depend on was written before this. */
static int wal_presync(tsdb_wal_t *w, const wal_buf_t *b, int want_sync)
{
    if (!w->presync || (!want_sync && b->split == SIZE_MAX)) return 0;
    return w->presync(w->presync_ctx);
}

static void *wal_thread(void *arg)
{
    tsdb_wal_t *w = arg;
    /* named for operators (top -H) and for the tests that find it */
    pthread_setname_np(pthread_self(), "tsdb-wal");
    pthread_mutex_lock(&w->mu);
    for (;;) {
        if (w->failed) {
            /* Retry a fresh segment now and then until the disk takes it. */
            struct timespec dl = deadline_after(oct_clock_mono_ns(), WAL_RETRY_MS);
            while (!w->stop && pthread_cond_timedwait(&w->work, &w->mu, &dl) != ETIMEDOUT)
                ;
            if (w->stop) break;
            uint64_t seg = w->cur_seg + 1;
            pthread_mutex_unlock(&w->mu);
            int rc = seg_restart(w, seg);
            pthread_mutex_lock(&w->mu);
            if (!rc) {
                /* buf is empty: appends were refused since the failure */
                w->cur_seg = seg;
                w->cur_seg_len = WAL_HDR;
                w->buf.seg = seg;
                w->buf.split = SIZE_MAX;
                w->appended += WAL_HDR;
                w->written = w->synced = w->appended;
                w->bytes_written += WAL_HDR;
                w->last_sync = oct_clock_mono_ns();
                w->failed = 0;
                pthread_cond_broadcast(&w->done);
                wal_wake_decided(w);
            }
            continue;
        }
        for (;;) {
            if (w->buf.len) {
                if (w->stop || w->sync_req > w->written || w->write_req > w->written ||
                    w->buf.len >= WAL_URGENT_BYTES)
                    break;
                if (oct_clock_mono_ns() >= w->first_at + (int64_t)w->interval_ms * 1000000) break;
                struct timespec dl = deadline_after(w->first_at, w->interval_ms);
                pthread_cond_timedwait(&w->work, &w->mu, &dl);
            } else if (w->sync_req > w->synced && w->written > w->synced) {
                break; /* everything written, a sync wanted */
            } else if (w->stop) {
                break;
            } else if (w->sync_interval_ms && w->written > w->synced) {
                if (oct_clock_mono_ns() >= w->last_sync + (int64_t)w->sync_interval_ms * 1000000)
                    break;
                struct timespec dl = deadline_after(w->last_sync, w->sync_interval_ms);
                pthread_cond_timedwait(&w->work, &w->mu, &dl);
            } else {
                pthread_cond_wait(&w->work, &w->mu);
            }
        }
        if (w->stop && !w->buf.len && w->synced == w->written) break;
        wal_buf_t tmp = w->spare;
        w->spare = w->buf;
        w->buf = tmp;
        w->buf.len = 0;
        w->buf.split = SIZE_MAX;
        w->buf.seg = w->cur_seg;
        uint64_t end = w->appended;
        int want_sync =
            w->sync_req > w->synced || w->stop || periodic_sync_due(w, oct_clock_mono_ns());
        pthread_cond_broadcast(&w->done); /* space freed */
        pthread_mutex_unlock(&w->mu);

        int rc = wal_presync(w, &w->spare, want_sync);
        if (!rc) rc = flush_buf(w, &w->spare, want_sync);

        pthread_mutex_lock(&w->mu);
        if (rc) {
            /* what was written before this batch keeps its status; the
             * batch and everything appended since failed */
            wal_fail(w, rc);
        } else {
            w->bytes_written += w->spare.len;
            w->written = end;
            if (want_sync) {
                w->synced = end;
                w->syncs++;
                w->last_sync = oct_clock_mono_ns();
            }
        }
        w->spare.len = 0;
        if (rc) pthread_cond_broadcast(&w->done); /* appenders see 'failed' */
        wal_wake_decided(w);
    }
    pthread_cond_broadcast(&w->done);
    wal_waiter_t *d = wal_take_decided(w);
    pthread_mutex_unlock(&w->mu);
    wal_wake(d);
    return NULL;
}

/* ---- appending ------------------------------------------------------- */

int tsdb_wal_lock(tsdb_wal_t *w, uint64_t *seg, oct_errbuf_t *eb)
{
    pthread_mutex_lock(&w->mu);
    while (!w->failed && w->buf.len >= WAL_MAX_PENDING)
        pthread_cond_wait(&w->done, &w->mu);
    if (w->failed) {
        int f = w->failed;
        pthread_mutex_unlock(&w->mu);
        return oct_err(eb, OCT_EIO, "write-ahead log failed: %s", oct_strerror(f));
    }
    if (w->cur_seg_len >= w->seg_bytes_max && w->buf.split == SIZE_MAX &&
        w->buf.seg == w->cur_seg) {
        /* Rotate: the rest of this buffer belongs to the next segment. */
        uint8_t h[WAL_HDR];
        w->buf.split = w->buf.len;
        w->cur_seg++;
        hdr_make(h, w->cur_seg);
        if (!w->buf.len) {
            w->first_at = oct_clock_mono_ns();
            w->kick = 1; /* the thread may be asleep with nothing to time */
        }
        buf_append(&w->buf, h, WAL_HDR);
        w->appended += WAL_HDR;
        w->cur_seg_len = WAL_HDR;
    }
    *seg = w->cur_seg;
    return 0;
}

void tsdb_wal_append_locked(tsdb_wal_t *w, const uint8_t *rec, size_t n)
{
    if (!w->buf.len) {
        w->first_at = oct_clock_mono_ns();
        w->kick = 1;
    }
    buf_append(&w->buf, rec, n);
    w->appended += n;
    w->cur_seg_len += n;
    if (w->buf.len >= WAL_URGENT_BYTES && w->buf.len - n < WAL_URGENT_BYTES) w->kick = 1;
}

uint64_t tsdb_wal_unlock(tsdb_wal_t *w)
{
    uint64_t pos = w->appended;
    int kick = w->kick;
    w->kick = 0;
    pthread_mutex_unlock(&w->mu);
    /* after unlocking, as in tsdb_wal_wait: the state it reacts to is set */
    if (kick) pthread_cond_signal(&w->work);
    return pos;
}

int tsdb_wal_wait(tsdb_wal_t *w, uint64_t seq, int fsync, int timeout_ms, oct_errbuf_t *eb)
{
    struct timespec dl = {0};
    if (timeout_ms >= 0) dl = deadline_after(oct_clock_mono_ns(), (unsigned)timeout_ms);
    int kick = 0, f;
    pthread_mutex_lock(&w->mu);
    if (seq > w->appended) seq = w->appended;
    if (fsync && w->sync_req < seq) {
        w->sync_req = seq;
        kick = 1;
    } else if (!fsync && w->written < seq && w->write_req < seq) {
        /* A waiter is a reason to write now rather than at the deadline. */
        w->write_req = seq;
        kick = 1;
    }
    if (wal_decided(w, seq, fsync, &f)) {
        pthread_mutex_unlock(&w->mu);
        return f ? oct_err(eb, OCT_EIO, "write-ahead log failed: %s", oct_strerror(f)) : 0;
    }
    wal_waiter_t me = {.next = w->waiters, .seq = seq, .fsync = fsync, .listed = 1};
    atomic_init(&me.state, 0);
    w->waiters = &me;
    pthread_mutex_unlock(&w->mu);
    /* Signalled after unlocking (the request was set under mu): a thread
     * woken while we held mu would only block on it. */
    if (kick) pthread_cond_signal(&w->work);

    const struct timespec *limit = timeout_ms >= 0 ? &dl : NULL;
    while (!atomic_load_explicit(&me.state, memory_order_acquire)) {
        if (futex_wait(&me.state, 0, limit) != ETIMEDOUT) continue;
        pthread_mutex_lock(&w->mu);
        if (me.listed) { /* still ours to decide: unlink and answer */
            for (wal_waiter_t **pp = &w->waiters; *pp; pp = &(*pp)->next)
                if (*pp == &me) {
                    *pp = me.next;
                    break;
                }
            int done = wal_decided(w, seq, fsync, &f);
            pthread_mutex_unlock(&w->mu);
            if (f) return oct_err(eb, OCT_EIO, "write-ahead log failed: %s", oct_strerror(f));
            return done ? 0 : oct_err(eb, OCT_EAGAIN, "timed out waiting for the write-ahead log");
        }
        pthread_mutex_unlock(&w->mu);
        limit = NULL; /* decided: the thread is about to set state */
    }
    if (me.err) return oct_err(eb, OCT_EIO, "write-ahead log failed: %s", oct_strerror(me.err));
    return 0;
}

uint64_t tsdb_wal_position(tsdb_wal_t *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t pos = w->appended;
    pthread_mutex_unlock(&w->mu);
    return pos;
}

uint64_t tsdb_wal_current_segment(tsdb_wal_t *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t s = w->cur_seg;
    pthread_mutex_unlock(&w->mu);
    return s;
}

void tsdb_wal_delete_below(tsdb_wal_t *w, uint64_t seg)
{
    pthread_mutex_lock(&w->mu);
    uint64_t lo = w->min_seg, hi = seg;
    /* never the segment being appended to, nor the one the thread holds */
    if (hi > w->cur_seg) hi = w->cur_seg;
    if (hi > w->buf.seg) hi = w->buf.seg;
    if (hi > lo) w->min_seg = hi;
    pthread_mutex_unlock(&w->mu);
    for (uint64_t s = lo; s < hi; s++) {
        char path[4096];
        seg_path(w, s, path, sizeof path);
        unlink(path);
    }
}

void tsdb_wal_counters(tsdb_wal_t *w, uint64_t *bytes_written, uint64_t *syncs)
{
    pthread_mutex_lock(&w->mu);
    *bytes_written = w->bytes_written;
    *syncs = w->syncs;
    pthread_mutex_unlock(&w->mu);
}

/* ---- recovery -------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Parses one POINTS body into pts (grown as needed). Returns the count or
 * -1 if the body is malformed. */
static long parse_points(const uint8_t *p, size_t n, tsdb_wal_point_t **pts, size_t *cap)
{
    uint64_t cnt;
    size_t k = codec_varint_get(p, n, &cnt);
    if (!k || cnt > n) return -1;
    size_t off = k;
    if (cnt > *cap) {
        *pts = xrealloc(*pts, cnt * sizeof **pts);
        *cap = cnt;
    }
    int64_t prev = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        tsdb_wal_point_t *pt = &(*pts)[i];
        uint64_t v;
        if (!(k = codec_varint_get(p + off, n - off, &pt->id))) return -1;
        off += k;
        if (!(k = codec_varint_get(p + off, n - off, &v))) return -1;
        off += k;
        prev = (int64_t)((uint64_t)prev + (uint64_t)codec_unzigzag(v));
        pt->ts_ms = prev;
        if (off >= n) return -1;
        pt->flags = p[off++];
        if (pt->flags & ~3u) return -1;
        if (pt->flags & 1) {
            if (n - off < 8) return -1;
            uint64_t bits = oct_get_be64(p + off);
            memcpy(&pt->val.f, &bits, 8);
            off += 8;
        } else {
            if (!(k = codec_varint_get(p + off, n - off, &v))) return -1;
            off += k;
            pt->val.i = codec_unzigzag(v);
        }
    }
    return off == n ? (long)cnt : -1;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st)) {
        int e = -errno;
        close(fd);
        return e;
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *b = xmalloc(n ? n : 1);
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    *out = b;
    *len = got;
    return 0;
}

static int replay_segment(tsdb_wal_t *w, uint64_t seg, const tsdb_wal_replay_t *rp, void *ctx,
                          tsdb_wal_recovery_t *rec, oct_errbuf_t *eb)
{
    char path[4096];
    seg_path(w, seg, path, sizeof path);
    uint8_t *d = NULL;
    size_t n = 0;
    int rc = read_file(path, &d, &n);
    if (rc) return oct_err(eb, OCT_EIO, "cannot read %s: %s", path, oct_strerror(rc));
    if (n < WAL_HDR || memcmp(d, WAL_MAGIC, 8) || oct_get_be64(d + 8) != seg) {
        /* A crash between create and the first write leaves an empty file:
         * that is a torn tail too. Anything else is not ours to judge. */
        if (n < WAL_HDR && (n == 0 || !memcmp(d, WAL_MAGIC, n < 8 ? n : 8))) {
            rec->torn_bytes += n;
            free(d);
            unlink(path);
            return 0;
        }
        rec->bad_segments++;
        free(d);
        return 0;
    }
    rec->segments++;
    if (rp && rp->segment && (rc = rp->segment(ctx, seg)) < 0) goto out;
    size_t off = WAL_HDR;
    tsdb_wal_point_t *pts = NULL;
    size_t cap = 0;
    while (off < n) {
        if (n - off < TSDB_WAL_REC_HDR) break;
        uint32_t len = oct_get_be32(d + off);
        if (len == 0 || len > TSDB_WAL_MAX_REC || n - off - 8 < len) break;
        uint32_t c = tsdb_crc32c(0, d + off, 4);
        c = tsdb_crc32c(c, d + off + 8, len);
        if (c != oct_get_be32(d + off + 4)) break;
        const uint8_t *body = d + off + TSDB_WAL_REC_HDR;
        size_t blen = len - 1;
        uint8_t type = d[off + 8];
        if (type == TSDB_WAL_T_SERIES) {
            uint64_t id;
            size_t k = codec_varint_get(body, blen, &id);
            if (!k || k >= blen || blen - k - 1 != body[k] || body[k] == 0) break;
            if (rp && rp->series && (rc = rp->series(ctx, seg, id, body + k + 1, body[k])) < 0)
                break;
        } else if (type == TSDB_WAL_T_DELETE) {
            uint64_t zs, ze;
            size_t k = blen ? 1u + body[0] : 0, a, b;
            if (!blen || body[0] == 0 || k > blen ||
                !(a = codec_varint_get(body + k, blen - k, &zs)) ||
                !(b = codec_varint_get(body + k + a, blen - k - a, &ze)) || k + a + b != blen)
                break;
            if (rp && rp->del &&
                (rc = rp->del(ctx, body + 1, body[0], codec_unzigzag(zs), codec_unzigzag(ze))) < 0)
                break;
        } else if (type == TSDB_WAL_T_POINTS) {
            long cnt = parse_points(body, blen, &pts, &cap);
            if (cnt < 0) break;
            if (rp && rp->points) {
                rc = rp->points(ctx, seg, pts, (size_t)cnt);
                if (rc < 0) break;
                if (rc == 1) {
                    rc = 0;
                    break;
                }
            }
        }
        rec->records++;
        off += 8 + len;
    }
    free(pts);
    if (rc < 0) goto out;
    if (off < n) {
        rec->torn_bytes += n - off;
        if (truncate(path, (off_t)off) != 0)
            rc = oct_err(eb, OCT_EIO, "cannot truncate %s: %s", path, strerror(errno));
    }
out:
    free(d);
    return rc;
}

uint64_t tsdb_wal_record_bytes(const char *dir)
{
    uint64_t total = 0;
    DIR *dh = opendir(dir);
    struct dirent *de;
    while (dh && (de = readdir(dh))) {
        const char *nm = de->d_name;
        struct stat sb;
        char path[4352];
        if (strlen(nm) != 20 || strcmp(nm + 16, ".wal")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        if (stat(path, &sb) == 0 && sb.st_size > (off_t)WAL_HDR)
            total += (uint64_t)sb.st_size - WAL_HDR;
    }
    if (dh) closedir(dh);
    return total;
}

int tsdb_wal_open(const tsdb_wal_opts_t *o, const tsdb_wal_replay_t *rp, void *ctx,
                  tsdb_wal_t **out, tsdb_wal_recovery_t *rec, oct_errbuf_t *eb)
{
    tsdb_wal_recovery_t dummy;
    if (!rec) rec = &dummy;
    memset(rec, 0, sizeof *rec);
    if (mkdir(o->dir, 0755) != 0 && errno != EEXIST)
        return oct_err(eb, OCT_EIO, "cannot create %s: %s", o->dir, strerror(errno));
    tsdb_wal_t *w = xcalloc(1, sizeof *w);
    w->dir = xstrdup(o->dir);
    w->interval_ms = o->flush_interval_ms ? o->flush_interval_ms : 10;
    w->sync_interval_ms = o->sync_interval_ms;
    w->presync = o->presync;
    w->presync_ctx = o->presync_ctx;
    w->seg_bytes_max = o->segment_bytes ? o->segment_bytes : 64u << 20;
    w->fd = -1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->work, &ca);
    pthread_cond_init(&w->done, &ca);
    pthread_condattr_destroy(&ca);

    /* Find the segments. */
    uint64_t *segs = NULL;
    size_t nseg = 0, cseg = 0;
    DIR *dh = opendir(o->dir);
    if (!dh) {
        int e = errno;
        tsdb_wal_close(w, 0);
        return oct_err(eb, OCT_EIO, "cannot open %s: %s", o->dir, strerror(e));
    }
    struct dirent *de;
    while ((de = readdir(dh))) {
        const char *nm = de->d_name;
        if (strlen(nm) != 20 || strcmp(nm + 16, ".wal")) continue;
        char *end;
        uint64_t s = strtoull(nm, &end, 16);
        if (end != nm + 16) continue;
        if (nseg == cseg) {
            cseg = cseg ? 2 * cseg : 16;
            segs = xrealloc(segs, cseg * sizeof *segs);
        }
        segs[nseg++] = s;
    }
    closedir(dh);
    if (nseg) qsort(segs, nseg, sizeof *segs, cmp_u64);
    int rc = 0;
    for (size_t i = 0; i < nseg && !rc; i++)
        rc = replay_segment(w, segs[i], rp, ctx, rec, eb);
    uint64_t next = nseg ? segs[nseg - 1] + 1 : 1;
    w->min_seg = nseg ? segs[0] : next;
    free(segs);
    if (rc) {
        tsdb_wal_close(w, 0);
        return rc;
    }

    /* The new segment; its header is the first thing the thread writes. */
    w->cur_seg = next;
    rc = seg_create(w, next);
    if (rc) {
        tsdb_wal_close(w, 0);
        return oct_err(eb, OCT_EIO, "cannot create a WAL segment in %s: %s", o->dir,
                       oct_strerror(rc));
    }
    uint8_t h[WAL_HDR];
    hdr_make(h, next);
    w->buf.split = w->spare.split = SIZE_MAX;
    w->buf.seg = next;
    buf_append(&w->buf, h, WAL_HDR);
    w->first_at = oct_clock_mono_ns();
    w->last_sync = w->first_at;
    w->appended = WAL_HDR;
    w->cur_seg_len = WAL_HDR;
    if (pthread_create(&w->thr, NULL, wal_thread, w) != 0) {
        tsdb_wal_close(w, 0);
        return oct_err(eb, OCT_EIO, "cannot start the WAL thread");
    }
    w->thr_started = 1;
    *out = w;
    return 0;
}

void tsdb_wal_close(tsdb_wal_t *w, int delete_all)
{
    if (!w) return;
    if (w->thr_started) {
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_signal(&w->work);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->thr, NULL);
    }
    if (w->fd >= 0) close(w->fd);
    if (delete_all) { /* everything is in the store, failed records included */
        for (uint64_t s = w->min_seg; s <= w->cur_seg; s++) {
            char path[4096];
            seg_path(w, s, path, sizeof path);
            unlink(path);
        }
        fsync_dir(w->dir);
    }
    free(w->buf.data);
    free(w->spare.data);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->mu);
    free(w->dir);
    free(w);
}
