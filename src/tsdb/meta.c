/* meta.c -- OpenTSDB's TSMeta tracking on the write path (docs/format/meta.md),
 * switched by tsd.core.meta.enable_tsuid_tracking, enable_realtime_ts and
 * enable_tsuid_incrementing:
 *
 *   tracking  realtime_ts  incrementing   OpenTSDB, per data point     octsdb
 *   off       -            -              nothing                      nothing
 *   on        off          -              PUT ts_ctr = 1               once per new series
 *   on        on           off            GET ts_meta, create if none  once per new series
 *   on        on           on             increment ts_ctr; create     one increment per
 *                                         TSMeta when it reaches 1     series per chunk
 *
 * OpenTSDB repeats the first two per data point only to refresh the HBase
 * cell timestamp, which our store does not have; doing them when the series
 * first appears gives the same rows (docs/compat.md). Meta failures never fail
 * a put (OpenTSDB logs them); they are counted in w->meta_errors. */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/clock.h"

#include "tsdb/series.h"
#include "tsdb/tree.h"
#include "tsdb/tsmeta.h"

static void meta_create_if_missing(tsdb_writer_t *w, const tw_series_t *s, int init_counter)
{
    oct_errbuf_t eb;
    json_arena_t a = JSON_ARENA_INIT;
    tsmeta_t m;
    int rc = tsmeta_get(w->db, s->tsuid, s->tsuid_len, &a, &m, NULL, &eb);
    if (rc == 0) {
        tsmeta_init(&m);
        m.created = oct_clock_wall_ms() / 1000;
        rc = tsmeta_put(w->db, s->tsuid, s->tsuid_len, &m, init_counter, &eb);
        /* as 2.4: a newly created TSMeta goes through every enabled tree */
        if (rc == 0 && w->tree_processing)
            rc = tsdb_tree_process_new(w->db, s->tsuid, s->tsuid_len, &eb);
    }
    json_arena_free(&a);
    if (rc < 0) atomic_fetch_add_explicit(&w->meta_errors, 1, memory_order_relaxed);
}

void tw_meta_new_series(tsdb_writer_t *w, const tw_series_t *s)
{
    if (!w->meta_tracking) return;
    if (!w->meta_realtime_ts) {
        uint8_t one[8];
        oct_put_be64(one, 1);
        oct_errbuf_t eb;
        store_op_t op = {STORE_OP_PUT,
                         oct_slice(s->tsuid, w->uid_w[CODEC_UID_METRIC]),
                         {oct_slice(s->tsuid, s->tsuid_len), oct_slice_str(TSMETA_FAMILY),
                          oct_slice_str(TSMETA_QUAL_CTR), oct_slice(one, 8)}};
        if (store_write(w->st, STORE_TABLE_META, &op, 1, 0, &eb) < 0)
            atomic_fetch_add_explicit(&w->meta_errors, 1, memory_order_relaxed);
        return;
    }
    if (!w->meta_incrementing) meta_create_if_missing(w, s, 0);
}

static int meta_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (tw_series_t *const *)a, y = (uintptr_t) * (tw_series_t *const *)b;
    return (x > y) - (x < y);
}

void tw_meta_points(tsdb_writer_t *w, tw_series_t *const *ser, size_t n)
{
    if (!w->meta_tracking || !w->meta_realtime_ts || !w->meta_incrementing || n == 0) return;
    /* One increment per series per chunk instead of one per point. */
    tw_series_t **v = malloc(n * sizeof *v);
    if (!v) {
        atomic_fetch_add_explicit(&w->meta_errors, 1, memory_order_relaxed);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ser[i]) v[k++] = ser[i];
    qsort(v, k, sizeof *v, meta_ptr_cmp);
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && v[j] == v[i])
            j++;
        oct_errbuf_t eb;
        int64_t now_ctr = 0;
        const tw_series_t *s = v[i];
        if (tsmeta_incr(w->db, s->tsuid, s->tsuid_len, (int64_t)(j - i), &now_ctr, &eb) < 0)
            atomic_fetch_add_explicit(&w->meta_errors, 1, memory_order_relaxed);
        else if (now_ctr == (int64_t)(j - i)) /* the counter was just born */
            meta_create_if_missing(w, s, 0);
        i = j;
    }
    free(v);
}
