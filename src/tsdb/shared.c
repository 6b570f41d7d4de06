/* shared.c -- what a TSD does differently when other TSDs share its store
 * (every backend but rocksdb, whose data dir one process holds): its writer
 * id, the sync wait for points to reach the store, and learning the series
 * other TSDs created (a journal of new series, read every pass). The flush side (writer cells,
 * compaction by compare-and-set) is in flush.c. Design: docs/scale-out.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
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

/* The journal of new series (docs/format/layout.md, "New series"): one
 * partition per minute of the creating TSD's clock. */
#define TW_JOURNAL     "series/"
#define TW_JOURNAL_LEN 7
/* minutes read behind the last one read, and ahead of now: the clock skew
 * between TSDs this tolerates */
#define TW_JOURNAL_SKEW 2

static oct_slice_t journal_part(uint8_t buf[TW_JOURNAL_LEN + 4], int64_t minute)
{
    memcpy(buf, TW_JOURNAL, TW_JOURNAL_LEN);
    oct_put_be32(buf + TW_JOURNAL_LEN, (uint32_t)minute);
    return oct_slice(buf, TW_JOURNAL_LEN + 4);
}

int tw_shared_journal(tsdb_writer_t *w, const oct_slice_t *tsuids, size_t n, oct_errbuf_t *eb)
{
    uint8_t pb[TW_JOURNAL_LEN + 4];
    oct_slice_t part = journal_part(pb, oct_clock_wall_ms() / 60000);
    static const uint8_t one = 1;
    store_op_t stack[64];
    store_op_t *ops = n <= 64 ? stack : xmalloc(n * sizeof *ops);
    for (size_t i = 0; i < n; i++)
        ops[i] =
            (store_op_t){STORE_OP_PUT,
                         part,
                         {tsuids[i], oct_slice_str("s"), oct_slice(NULL, 0), oct_slice(&one, 1)}};
    int rc = store_write(w->st, STORE_TABLE_SYS, ops, n, 0, eb);
    if (ops != stack) free(ops);
    return rc;
}

int tw_shared_refresh(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    int64_t now = oct_clock_wall_ms() / 60000;
    if (!w->journal_next) w->journal_next = now; /* the open loaded everything before */
    store_result_t row = STORE_RESULT_INIT;
    int rc = 0;
    for (int64_t m = w->journal_next - TW_JOURNAL_SKEW; m <= now + TW_JOURNAL_SKEW && !rc; m++) {
        uint8_t pb[TW_JOURNAL_LEN + 4];
        store_scan_spec_t spec = {0};
        spec.part = journal_part(pb, m);
        store_scanner_t *sc;
        rc = store_scan_open(w->st, STORE_TABLE_SYS, &spec, &sc, eb);
        if (rc) break;
        while ((rc = store_scan_next(sc, &row, eb)) == 1) {
            if (!row.n) continue;
            tw_series_t *s;
            oct_errbuf_t e2;
            /* known: a map probe; else created from the UID names (not persisted:
             * its creator did that first) */
            (void)tw_series_from_tsuid(w, row.cells[0].row.ptr, row.cells[0].row.len, 0, &s, &e2);
        }
        store_scan_close(sc);
        rc = rc < 0 ? rc : 0;
    }
    store_result_free(&row);
    if (!rc) w->journal_next = now;
    return rc;
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
