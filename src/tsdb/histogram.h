/* histogram.h -- OpenTSDB 2.4's histogram points (docs/histograms.md): the codec map of
 * tsd.core.histograms.config, storing a point, reading a series' points back.
 *
 * A histogram point is one cell of the series' ordinary data row (qualifier 06 + offset,
 * value = codec id + payload; docs/format/histogram.md). Unlike numeric points it does not
 * go through the write-ahead log and the head: it is written to the store at once, as 2.4
 * writes it to HBase, so it is visible and survives kill -9 when tsdb_put_histogram returns
 * (the store's own log, written before the call returns), and survives power loss with
 * sync. Flushes and compactions of the row's blocks leave the cell alone.
 *
 * Threads: every function is safe from any number of threads (a reader, read.h, belongs to
 * one thread at a time). */
#ifndef OCT_TSDB_HISTOGRAM_H
#define OCT_TSDB_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "tsdb/read.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

/* The class name 2.4 gives the simple codec, the only one octsdb implements. */
#define TSDB_HIST_SIMPLE_CLASS "net.opentsdb.core.SimpleHistogramDecoder"

/* tsd.core.histograms.config, read at open. */
typedef struct {
    int enabled;   /* the key is set (an empty map too: then no codec has an id) */
    int simple_id; /* the simple codec's id 0..255, or -1 */
} tsdb_hist_config_t;

/* Reads the key's value (NULL: histograms off): a JSON object {"<codec class>": id, ...}
 * inline, or the path of a file ending in ".json" holding one. Returns 0 or OCT_ECONFIG
 * naming the key: unreadable file or JSON, an id that is not an integer 0..255 ("ID for
 * codec '<c>' must be from 0 to 255."), two codecs on one id, or a class other than
 * TSDB_HIST_SIMPLE_CLASS. */
OCT_MUST_CHECK int tsdb_hist_config_parse(const char *value, tsdb_hist_config_t *out,
                                          oct_errbuf_t *eb);

/* The map db was opened with (borrowed, valid until tsdb_close). */
const tsdb_hist_config_t *tsdb_histograms(const tsdb_t *db);

/* Stores one histogram point: dp names the series and time (dp->pt.val is ignored), value
 * is the cell value (codec id byte + payload, already checked by the caller), at most
 * 1 MiB. A second point at the same time and precision replaces the first, as in 2.4.
 * With sync the store is synced before returning. Returns 0 or one of tsdb_put_batch's
 * rejection codes (write.h) with the text in eb; OCT_EINVAL also when db is read-only. */
OCT_MUST_CHECK int tsdb_put_histogram(tsdb_t *db, const tsdb_dp_t *dp, const uint8_t *value,
                                      size_t len, int sync, oct_errbuf_t *eb);

/* Syncs the store: every histogram point stored before the call survives power loss when
 * it returns 0 (one sync for a batch stored with sync 0). OCT_EIO with the text in eb. May
 * block. */
OCT_MUST_CHECK int tsdb_sync_histograms(tsdb_t *db, oct_errbuf_t *eb);

/* One stored histogram point: its time and cell value (borrowed for the call). Returning
 * nonzero stops the read. */
typedef int (*tsdb_hist_fn)(void *ctx, int64_t ts_ms, const uint8_t *value, size_t len);

/* Calls fn for every histogram cell of the series in [start_ms, end_ms], by row hour
 * (within an hour second and millisecond cells are not in time order). Returns 0, fn's
 * nonzero value, or an error as tsdb_reader_read. Implemented in read.c. */
OCT_MUST_CHECK int tsdb_reader_histograms(tsdb_reader_t *r, const uint8_t *tsuid, size_t tsuid_len,
                                          int64_t start_ms, int64_t end_ms, tsdb_hist_fn fn,
                                          void *ctx, oct_errbuf_t *eb);

#endif
