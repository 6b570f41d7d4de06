/* tsmeta.h -- TSMeta, stored as OpenTSDB stores it in tsdb-meta.
 *
 * Layout (docs/format/meta.md): row = TSUID bytes, family "name", qualifiers
 *   ts_meta  JSON: tsuid, displayName, description, notes, created, custom,
 *            units, dataType, retention, max, min (in that order; NaN max/min
 *            written as the string "NaN", as Jackson quotes them)
 *   ts_ctr   8-byte signed big-endian counter (data points seen)
 * The storage partition of a row is its metric UID bytes (the first
 * metric-width bytes of the TSUID), so all meta of one metric lives
 * together.
 *
 * Threads: every function may be called from any number of threads.
 * Errors: OCT_EPARSE (TSUID length does not fit the layout, stored JSON
 * unreadable), OCT_EIO; detail in eb. */
#ifndef OCT_TSDB_TSMETA_H
#define OCT_TSDB_TSMETA_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "tsdb/tsdb.h"

#define TSMETA_FAMILY    "name"
#define TSMETA_QUAL_META "ts_meta"
#define TSMETA_QUAL_CTR  "ts_ctr"

/* The editable fields. Strings are borrowed (NULL = ""); custom_json is a
 * JSON object's text or NULL (written as null). */
typedef struct {
    const char *display_name, *description, *notes, *units, *data_type;
    const char *custom_json;
    int64_t created;   /* Unix seconds */
    int64_t retention; /* days */
    double max, min;   /* NaN when unset */
} tsmeta_t;

/* Empty strings, created 0, retention 0, max/min NaN. */
void tsmeta_init(tsmeta_t *m);

/* Appends the stored JSON of m for TSUID tsuid[0..len) to out. */
void tsmeta_to_json(const uint8_t *tsuid, size_t len, const tsmeta_t *m, oct_strbuf_t *out);

/* Parses a stored ts_meta JSON (ours or OpenTSDB's) into m; strings are
 * copied into a. Unknown fields are ignored. Returns 0 or OCT_EPARSE. */
OCT_MUST_CHECK int tsmeta_from_json(const char *json, size_t n, json_arena_t *a, tsmeta_t *m,
                                    oct_errbuf_t *eb);

/* Reads the TSMeta of a series. Returns 1 (found: *m filled, strings in a;
 * *counter (may be NULL) = ts_ctr or 0 if absent), 0 (no ts_meta cell), or
 * an error. */
OCT_MUST_CHECK int tsmeta_get(tsdb_t *db, const uint8_t *tsuid, size_t len, json_arena_t *a,
                              tsmeta_t *m, int64_t *counter, oct_errbuf_t *eb);

/* Writes ts_meta (replacing it). With init_counter, also writes ts_ctr = 0
 * (OpenTSDB's create=true does). Returns 0 or an error. */
OCT_MUST_CHECK int tsmeta_put(tsdb_t *db, const uint8_t *tsuid, size_t len, const tsmeta_t *m,
                              int init_counter, oct_errbuf_t *eb);

/* Deletes the TSMeta cells ts_meta and ts_ctr, keeping the row's
 * octsdb_series cell (the series itself). Absent is fine. */
OCT_MUST_CHECK int tsmeta_delete(tsdb_t *db, const uint8_t *tsuid, size_t len, oct_errbuf_t *eb);

/* Atomically adds delta to ts_ctr (absent = 0); *out_new (may be NULL) gets
 * the new value. For the write path's realtime TS tracking. */
OCT_MUST_CHECK int tsmeta_incr(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t delta,
                               int64_t *out_new, oct_errbuf_t *eb);

#endif
