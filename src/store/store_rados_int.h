/* store_rados_int.h -- private to the rados backend (store_rados.c, the
 * store.h operations; store_rados_io.c, the omap key encoding, object and
 * aio helpers, the partition index and the namespace binding). Nothing
 * outside these two files includes it. Layout: docs/format/rados.md. */
#ifndef OCT_STORE_STORE_RADOS_INT_H
#define OCT_STORE_STORE_RADOS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <rados/librados.h>

#include "store/store_builtin.h"
#include "store/store_util.h"

#define STORE_PART_MAX      255
#define STORE_FAMILY_MAX    255
#define STORE_ROW_MAX       65535
#define STORE_QUALIFIER_MAX 65535
#define RS_TABLE_NAME_MAX   200
#define RS_OID_MAX          (RS_TABLE_NAME_MAX + 2 + 2 * STORE_PART_MAX)
#define RS_PAGE             1024 /* the OSD returns at most this many omap entries per op */
#define RS_INFLIGHT         64
#define RS_RETRIES          16 /* reads restarted because the object changed */
#define RS_INCR_RETRIES     100000
#define RS_CELL_V1          0x01       /* the version byte in front of every stored value */
#define RS_IDX_MAX          (1u << 20) /* indexed partitions remembered, then forgotten */

/* Counters of this process: increments of one counter are serialised here
 * (threads of one process would otherwise only make each other retry), and
 * the stripe remembers the last value it wrote, so the usual increment is
 * one compare-and-set round trip without a read first. */
#define RS_STRIPES 64
typedef struct {
    pthread_mutex_t mu;
    uint8_t *key; /* oid | 00 | omap key of the remembered counter, or NULL */
    size_t key_len;
    uint8_t val[9]; /* its stored value (version byte and 8 bytes) */
} rs_stripe_t;

typedef struct rs_watch rs_watch_t;

typedef struct {
    store_t base; /* first: store.c dispatches through base.methods */
    rados_t cluster;
    rados_ioctx_t io;
    char *names[STORE_TABLE_COUNT];
    char *dir, *ns;
    int read_only;
    int lock_fd;
    /* partitions this process has put in an index object: open addressing,
     * each key malloc'd as [table][len][part bytes] */
    pthread_mutex_t idx_mu;
    uint8_t **idx;
    size_t idx_n, idx_cap;
    rs_stripe_t stripes[RS_STRIPES];
    /* change notification (store_rados_watch.c): the watches of this store,
     * and the thread that registers a broken one again */
    pthread_mutex_t w_mu;
    pthread_cond_t w_cv;
    rs_watch_t *watches;
    pthread_t w_thr;
    int w_thr_started, w_stop;
} rs_store_t;

typedef struct {
    store_scanner_t base; /* first, as in rs_store_t */
    store_result_t raw;   /* the range at open: row = omap key, value = omap value */
    size_t pos;
    uint8_t *family;
    size_t family_len;
    store_row_filter_fn filter;
    void *filter_ctx;
    uint8_t *scratch;
    size_t scratch_cap;
} rs_scanner_t;

size_t rs_enc1_len(oct_slice_t x);

uint8_t *rs_enc1(uint8_t *d, oct_slice_t x);

long rs_dec1(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len);

void rs_buf_enc1(store_buf_t *b, oct_slice_t x);

void rs_buf_put(store_buf_t *b, const void *p, size_t n);

void rs_cell_key(store_buf_t *b, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier);

int rs_split_key(const uint8_t *k, size_t kl, uint8_t *scratch, oct_slice_t *row, oct_slice_t *fam,
                 oct_slice_t *qual);

int rs_fail(oct_errbuf_t *eb, int rc, const char *what, const char *oid);

void rs_data_oid(const rs_store_t *st, store_table_t t, oct_slice_t part, char *oid);

int rs_read_op_wait(rs_store_t *st, rados_read_op_t op, const char *oid, uint64_t *ver);

int rs_aio_start(rs_store_t *st, rados_read_op_t rop, rados_write_op_t wop, const char *oid,
                 rados_completion_t *c);

void rs_take_entries(rados_omap_iter_t it, const uint8_t *stop, size_t stop_len,
                     store_result_t *raw, char **last_key, int *hit_stop);

int rs_read_range(rs_store_t *st, const char *oid, const char *prefix, const char *start_after,
                  const uint8_t *stop, size_t stop_len, int consistent, store_result_t *raw,
                  oct_errbuf_t *eb);

int rs_add_cells(const store_result_t *raw, store_result_t *out, const char *oid, oct_errbuf_t *eb);

int rs_index_parts(rs_store_t *st, store_table_t t, const oct_slice_t *parts, size_t n,
                   oct_errbuf_t *eb);

/* Forgets which partitions this process put in an index (after keys were
 * removed from one), so the next write of each indexes it again. */
void rs_index_forget(rs_store_t *st);

int rs_bind_namespace(const char *dir, const char *want, int read_only, char **out,
                      oct_errbuf_t *eb);

void rs_destroy(rs_store_t *st);

/* store_rados_watch.c: the version-2 methods, and their part of rs_destroy
 * (stops the re-registration thread, drops watches left behind). */
int rs_watch(store_t *base, store_table_t t, oct_slice_t part, store_watch_fn fn, void *ctx,
             store_watch_t **out, oct_errbuf_t *eb);
void rs_unwatch(store_watch_t *w);
int rs_notify(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t msg, oct_errbuf_t *eb);
void rs_watch_init(rs_store_t *st);
void rs_watch_destroy(rs_store_t *st);

/* Test hook (tests/unit/test_store_watch_rados.c): drops the watch's
 * registration on the OSD and reports it broken, as a lost connection does,
 * so that the re-registration and the LOST event run for real. */
int rs__watch_break(store_watch_t *w);

#endif
