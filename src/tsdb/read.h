/* read.h -- reading series back: the points of one series in a range,
 * merged from the store (octsdb blocks and OpenTSDB cells) and the
 * in-memory head, either as a point array or handed over as columns block
 * by block (tsdb_reader_scan, for consumers that fold the points as they
 * come, such as fixed-interval downsampling); and the in-memory series
 * index that names the series of a metric and tag.
 *
 * Errors: negative codes of common/err.h (OCT_EIO, OCT_ECORRUPT from the
 * store, OCT_EINVAL for a bad TSUID) with the text in eb.
 *
 * Threads: tsdb_read_series and tsdb_series_find are safe from any number
 * of threads; a reader belongs to one thread at a time. */
#ifndef OCT_TSDB_READ_H
#define OCT_TSDB_READ_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"
#include "tsdb/tsdb.h"

/* Points of one series in [start_ms, end_ms] (inclusive), sorted by time,
 * one per timestamp, merged from the store (octsdb blocks and OpenTSDB
 * cells) and the head. *out is malloc'd (free it); *n its count. */
OCT_MUST_CHECK int tsdb_read_series(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len,
                                    int64_t start_ms, int64_t end_ms, codec_point_t **out,
                                    size_t *n, oct_errbuf_t *eb);

/* A reader: tsdb_read_series with buffers kept from call to call, for
 * reading many series (the query executor). One reader belongs to one thread
 * at a time; any number of readers may run at once. */
typedef struct tsdb_reader tsdb_reader_t;

tsdb_reader_t *tsdb_reader_new(tsdb_t *db);
void tsdb_reader_free(tsdb_reader_t *r); /* NULL is fine */

/* As tsdb_read_series, but *out points into the reader's buffer: valid (and
 * writable by the caller, e.g. to convert the points in place) until the
 * next call on r or tsdb_reader_free. */
OCT_MUST_CHECK int tsdb_reader_read(tsdb_reader_t *r, const uint8_t *tsuid, size_t tsuid_len,
                                    int64_t start_ms, int64_t end_ms, codec_point_t **out,
                                    size_t *n, oct_errbuf_t *eb);

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
 * for tsdb_reader_annotations (annotation.h) as after tsdb_reader_read. Same
 * threading as tsdb_reader_read. */
OCT_MUST_CHECK int tsdb_reader_scan(tsdb_reader_t *r, const uint8_t *tsuid, size_t tsuid_len,
                                    int64_t start_ms, int64_t end_ms, tsdb_cols_fn fn, void *ctx,
                                    size_t *n, oct_errbuf_t *eb);

/* ---- the series index ----------------------------------------------- */

typedef int (*tsdb_series_fn)(void *ctx, const uint8_t *tsuid, size_t tsuid_len);

/* Calls fn for every series of a metric carrying tag tagk=tagv (tagv 0 =
 * any value; tagk 0 = every series of the metric), in TSUID byte order. A
 * nonzero return from fn stops and is returned. Answers from memory (no
 * series at all on a database opened TSDB_OPEN_READONLY without
 * TSDB_OPEN_INDEX). */
int tsdb_series_find(tsdb_t *db, uint64_t metric, uint64_t tagk, uint64_t tagv, tsdb_series_fn fn,
                     void *ctx);

#endif
