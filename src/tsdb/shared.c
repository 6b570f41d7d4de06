/* shared.c -- what a TSD does differently when other TSDs share its store
 * (every backend but rocksdb, whose data dir one process holds): its writer
 * id, the sync wait for points to reach the store, and learning the series
 * other TSDs created. The flush side (writer cells, compaction by
 * compare-and-set) is in flush.c. Design: docs/scale-out.md. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
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

int tw_shared_refresh(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    tw_load_ctx_t lc = {w, eb, 0};
    return store_part_list(w->st, STORE_TABLE_META, oct_slice(NULL, 0), oct_slice(NULL, 0),
                           tw_load_part, &lc, eb);
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
