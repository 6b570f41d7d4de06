/* read.h -- a series read handed over as columns, block by block
 * (tsdb_reader_scan), for consumers that fold the points as they come (the
 * query executor's fixed-interval downsampling) instead of holding them. */
#ifndef OCT_TSDB_READ_H
#define OCT_TSDB_READ_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "tsdb/write.h"

/* A run of n >= 1 points, ascending by timestamp and after every point of
 * the previous run: ts[i], val[i] = the value's 8 bytes (an int64, or a
 * double's bits), types = 0 (all integers), 1 (all doubles) or 2 (mixed:
 * is_float[i] says which; is_float is NULL otherwise). The arrays are the
 * reader's, valid during the call. Returns 0, or nonzero to stop the scan
 * (tsdb_reader_scan returns that value). */
typedef int (*tsdb_cols_fn)(void *ctx, const int64_t *ts, const uint64_t *val,
                            const uint8_t *is_float, int types, size_t n);

/* Exactly the points tsdb_reader_read(r, tsuid, ..., start_ms, end_ms)
 * returns, in order, handed to fn in runs (one per block when the series'
 * rows are plain flushed blocks and the head holds nothing in range, so no
 * run is materialised as points). *n is their count. Returns 0, fn's nonzero
 * value, or an error (as tsdb_reader_read). The reader's last rows are kept
 * for tsdb_reader_annotations as after tsdb_reader_read. Same threading as
 * tsdb_reader_read. */
OCT_MUST_CHECK int tsdb_reader_scan(tsdb_reader_t *r, const uint8_t *tsuid, size_t tsuid_len,
                                    int64_t start_ms, int64_t end_ms, tsdb_cols_fn fn, void *ctx,
                                    size_t *n, oct_errbuf_t *eb);

#endif
