/* maint.c -- compaction, disk usage, raw row scans and window deletes over
 * the data table (see maint.h). */
#include "tsdb/maint.h"

#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/parts.h"
#include "tsdb/write.h"
#include "tsdb/tsdb_int.h"

#define MAINT_FAMILY "t"

int tsdb_compact(tsdb_t *db, oct_errbuf_t *eb)
{
    return store_compact(tsdb_store(db), eb);
}

int tsdb_disk_usage(tsdb_t *db, uint64_t *bytes, oct_errbuf_t *eb)
{
    *bytes = 0;
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        uint64_t b = 0;
        int rc = store_disk_usage(tsdb_store(db), (store_table_t)t, &b, eb);
        if (rc) return rc;
        *bytes += b;
    }
    return 0;
}

/* Every row of the listed partitions, to fn. */
static int scan_parts(tsdb_t *db, const tsdb_parts_t *pl, tsdb_row_fn fn, void *ctx,
                      oct_errbuf_t *eb)
{
    store_result_t res = STORE_RESULT_INIT;
    tsdb_cell_t *cells = NULL;
    size_t ccap = 0;
    int rc = 0;
    for (size_t i = 0; i < pl->n && rc == 0; i++) {
        store_scan_spec_t spec = {.part = tsdb__part(pl, i), .family = oct_slice_str(MAINT_FAMILY)};
        store_scanner_t *sc;
        rc = store_scan_open(tsdb_store(db), STORE_TABLE_DATA, &spec, &sc, eb);
        if (rc) break;
        int r;
        while ((r = store_scan_next(sc, &res, eb)) == 1) {
            if (res.n == 0) continue;
            if (res.n > ccap) {
                ccap = res.n * 2;
                cells = xrealloc(cells, ccap * sizeof *cells);
            }
            for (size_t c = 0; c < res.n; c++)
                cells[c] = (tsdb_cell_t){res.cells[c].qualifier, res.cells[c].value};
            tsdb_row_t row = {spec.part, res.cells[0].row, cells, res.n, &res};
            if ((rc = fn(ctx, &row))) break;
        }
        if (r < 0 && rc == 0) rc = r;
        store_scan_close(sc);
    }
    free(cells);
    store_result_free(&res);
    return rc;
}

int tsdb_scan_rows(tsdb_t *db, const tsdb_rows_spec_t *spec, tsdb_row_fn fn, void *ctx,
                   oct_errbuf_t *eb)
{
    tsdb_parts_t pl = {0};
    int rc = 0;
    if (spec->every_row) {
        rc = tsdb__parts_collect(db, NULL, NULL, 0, &pl, eb);
        if (rc == 0) rc = scan_parts(db, &pl, fn, ctx, eb);
        tsdb__parts_free(&pl);
        return rc;
    }
    codec_rowkey_layout_t lay = tsdb__rowkey_layout(db);
    int64_t b0 = codec_rowkey_base_time(spec->start_ms / 1000);
    int64_t b1 = codec_rowkey_base_time(spec->end_ms / 1000);
    if (b0 < 0) b0 = 0;
    if (b1 > (int64_t)UINT32_MAX) b1 = codec_rowkey_base_time(UINT32_MAX);
    if (b1 < b0) return 0;
    size_t plen = codec_rowkey_partition_prefix_len(&lay);
    uint8_t first[CODEC_ROWKEY_MAX_SALT + 8 + CODEC_ROWKEY_TS_BYTES], last[sizeof first];
    uint32_t nb = lay.salt_w ? lay.salt_buckets : 1;
    for (uint32_t b = 0; b < nb && rc == 0; b++) {
        if (lay.salt_w) codec_rowkey_salt_write(b, lay.salt_w, first);
        oct_put_be_n(first + lay.salt_w, spec->metric, lay.metric_w);
        memcpy(last, first, plen);
        oct_put_be32(first + plen - CODEC_ROWKEY_TS_BYTES, (uint32_t)b0);
        oct_put_be32(last + plen - CODEC_ROWKEY_TS_BYTES, (uint32_t)b1);
        rc = tsdb__parts_collect(db, first, last, plen, &pl, eb);
        if (rc == 0) rc = scan_parts(db, &pl, fn, ctx, eb);
    }
    tsdb__parts_free(&pl);
    return rc;
}

/* Deletes the rows of one series whose base hour is in [lo, hi] (ms). */
static int delete_rows(tsdb_t *db, const codec_rowkey_layout_t *rk, const tsdb_window_t *w,
                       tsdb_parts_t *pl, uint64_t *rows, oct_errbuf_t *eb)
{
    int n_tags = codec_tsuid_check(rk, w->tsuid, w->tsuid_len, eb);
    if (n_tags < 0) return n_tags;
    const int64_t max_ms = (int64_t)UINT32_MAX * 1000 + 999;
    int64_t lo = w->start_ms < 0 ? 0 : w->start_ms, hi = w->end_ms > max_ms ? max_ms : w->end_ms;
    if (hi < lo) return 0;
    size_t klen = codec_rowkey_len(rk, (size_t)n_tags),
           plen = codec_rowkey_partition_prefix_len(rk);
    uint8_t *k0 = xmalloc(klen), *k1 = xmalloc(klen);
    uint8_t *keys = NULL;
    store_op_t *ops = NULL;
    int rc = codec_rowkey_from_tsuid(rk, w->tsuid, w->tsuid_len, lo / 1000, k0, klen, eb);
    if (rc >= 0) rc = codec_rowkey_from_tsuid(rk, w->tsuid, w->tsuid_len, hi / 1000, k1, klen, eb);
    if (rc >= 0) rc = tsdb__parts_collect(db, k0, k1, plen, pl, eb);
    if (rc < 0) goto out;
    keys = xmalloc((pl->n ? pl->n : 1) * klen);
    ops = xcalloc(pl->n ? pl->n : 1, sizeof *ops);
    for (size_t j = 0; j < pl->n; j++) {
        /* the series' row in that hour: the partition, then its tags */
        uint8_t *key = keys + j * klen;
        memcpy(key, tsdb__part(pl, j).ptr, plen);
        memcpy(key + plen, k0 + plen, klen - plen);
        ops[j].kind = STORE_OP_DELETE_ROW;
        ops[j].part = tsdb__part(pl, j);
        ops[j].cell.row = oct_slice(key, klen);
    }
    rc = pl->n ? store_write(tsdb_store(db), STORE_TABLE_DATA, ops, pl->n, 0, eb) : 0;
    if (rc >= 0) {
        *rows += pl->n;
        rc = 0;
    }
out:
    free(keys);
    free(ops);
    free(k0);
    free(k1);
    return rc;
}

int tsdb_delete_window(tsdb_t *db, const tsdb_window_t *w, size_t n, uint64_t *rows,
                       oct_errbuf_t *eb)
{
    uint64_t nrows = 0;
    if (rows) *rows = 0;
    if (n == 0) return 0;
    /* Unflushed points live in the head: write them out so they go too. */
    int rc = tsdb_flush(db, eb);
    codec_rowkey_layout_t rk = tsdb__rowkey_layout(db);
    tsdb_parts_t pl = {0};
    for (size_t i = 0; i < n && !rc; i++)
        rc = delete_rows(db, &rk, &w[i], &pl, &nrows, eb);
    tsdb__parts_free(&pl);
    if (rows) *rows = nrows;
    return rc;
}
