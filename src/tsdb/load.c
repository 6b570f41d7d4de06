/* load.c -- the persisted series at open, on two cores: a reader thread
 * scans the series rows of tsdb-meta (the store's iteration and decoding,
 * about 40 % of a million-series start-up) and hands their TSUIDs over in
 * batches; the opening thread registers them (the TSUID map, the series
 * index) meanwhile. docs/architecture.md, "Start-up". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "tsdb/series.h"

#define TW_LOAD_BATCH (256 * 1024) /* bytes of TSUIDs per hand-over */
#define TW_LOAD_QUEUE 4            /* batches read ahead at most */

/* A batch: records of a length byte and that many TSUID bytes. */
typedef struct {
    uint8_t *buf;
    size_t len;
} tw_load_batch_t;

typedef struct {
    tsdb_writer_t *w;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a batch queued or taken, or the reader done */
    tw_load_batch_t q[TW_LOAD_QUEUE];
    size_t head, n;
    int done, rc; /* the reader finished, with rc (its message in eb) */
    oct_errbuf_t eb;
    tw_load_batch_t cur; /* the reader's batch being filled */
} tw_loader_t;

/* Reader: queues the batch being filled (waits while the queue is full). */
static void load_hand_over(tw_loader_t *ld)
{
    if (!ld->cur.len) return;
    pthread_mutex_lock(&ld->mu);
    while (ld->n == TW_LOAD_QUEUE)
        pthread_cond_wait(&ld->cv, &ld->mu);
    ld->q[(ld->head + ld->n++) % TW_LOAD_QUEUE] = ld->cur;
    pthread_cond_broadcast(&ld->cv);
    pthread_mutex_unlock(&ld->mu);
    ld->cur.buf = xmalloc(TW_LOAD_BATCH);
    ld->cur.len = 0;
}

static int load_part(void *ctx, oct_slice_t part)
{
    tw_loader_t *ld = ctx;
    store_scan_spec_t spec = {0};
    spec.part = part;
    spec.family = oct_slice_str("name");
    store_scanner_t *sc;
    int rc = store_scan_open(ld->w->st, STORE_TABLE_META, &spec, &sc, &ld->eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    oct_slice_t q = oct_slice_str(TW_META_QUAL);
    while ((rc = store_scan_next(sc, &row, &ld->eb)) == 1) {
        for (size_t i = 0; i < row.n; i++) {
            oct_slice_t r = row.cells[i].row;
            /* longer than any TSUID: not ours (tw_series_load_one skips the rest) */
            if (!oct_slice_eq(row.cells[i].qualifier, q) || r.len > TW_MAX_TSUID) continue;
            if (ld->cur.len + 1 + r.len > TW_LOAD_BATCH) load_hand_over(ld);
            ld->cur.buf[ld->cur.len++] = (uint8_t)r.len;
            memcpy(ld->cur.buf + ld->cur.len, r.ptr, r.len);
            ld->cur.len += r.len;
        }
    }
    store_result_free(&row);
    store_scan_close(sc);
    return rc < 0 ? rc : 0;
}

static void *load_reader(void *arg)
{
    tw_loader_t *ld = arg;
    int rc = store_part_list(ld->w->st, STORE_TABLE_META, oct_slice(NULL, 0), oct_slice(NULL, 0),
                             load_part, ld, &ld->eb);
    load_hand_over(ld);
    free(ld->cur.buf);
    pthread_mutex_lock(&ld->mu);
    ld->rc = rc;
    ld->done = 1;
    pthread_cond_broadcast(&ld->cv);
    pthread_mutex_unlock(&ld->mu);
    return NULL;
}

int tw_series_load(tsdb_writer_t *w, oct_errbuf_t *eb)
{
    tw_loader_t ld;
    memset(&ld, 0, sizeof ld);
    ld.w = w;
    ld.cur.buf = xmalloc(TW_LOAD_BATCH);
    pthread_mutex_init(&ld.mu, NULL);
    pthread_cond_init(&ld.cv, NULL);
    pthread_t thr;
    if (pthread_create(&thr, NULL, load_reader, &ld)) {
        /* no second thread: read on this one, then register */
        free(ld.cur.buf);
        ld.cur.buf = NULL;
        tw_load_ctx_t lc = {w, eb, 0};
        pthread_mutex_destroy(&ld.mu);
        pthread_cond_destroy(&ld.cv);
        return store_part_list(w->st, STORE_TABLE_META, oct_slice(NULL, 0), oct_slice(NULL, 0),
                               tw_load_part, &lc, eb);
    }
    for (;;) {
        pthread_mutex_lock(&ld.mu);
        while (!ld.n && !ld.done)
            pthread_cond_wait(&ld.cv, &ld.mu);
        if (!ld.n) { /* done and drained */
            pthread_mutex_unlock(&ld.mu);
            break;
        }
        tw_load_batch_t b = ld.q[ld.head];
        ld.head = (ld.head + 1) % TW_LOAD_QUEUE;
        ld.n--;
        pthread_cond_broadcast(&ld.cv);
        pthread_mutex_unlock(&ld.mu);
        pthread_mutex_lock(&w->create_mu);
        for (size_t o = 0; o < b.len; o += 1 + (size_t)b.buf[o])
            tw_series_load_one(w, b.buf + o + 1, b.buf[o]);
        pthread_mutex_unlock(&w->create_mu);
        free(b.buf);
    }
    pthread_join(thr, NULL);
    int rc = ld.rc;
    if (rc && eb) *eb = ld.eb;
    pthread_mutex_destroy(&ld.mu);
    pthread_cond_destroy(&ld.cv);
    return rc;
}
