/* annotation.h -- OpenTSDB's annotations, stored as OpenTSDB stores them
 * (docs/format/annotations.md): a cell in the data table under the row key of the
 * series' hour of startTime, qualifier 0x01 + offset (2 bytes seconds / 4
 * bytes ms, no flags), value = the annotation's JSON. Global annotations
 * (no TSUID) live in rows keyed salt(zeros) + metric(zeros) + base hour.
 *
 * Stored/API JSON fields (nulls omitted): tsuid (omitted for global),
 * startTime, endTime (Unix seconds), description, notes, custom (object). */
#ifndef OCT_TSDB_ANNOTATION_H
#define OCT_TSDB_ANNOTATION_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "store/store.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"

typedef struct {
    const uint8_t *tsuid; /* NULL for a global annotation */
    size_t tsuid_len;
    int64_t start_time; /* seconds (OpenTSDB also accepts ms: > 9999999999 means ms) */
    int64_t end_time;   /* 0 = none */
    const char *description;
    const char *notes;
    const char *custom_json; /* JSON object or NULL */
} tsdb_annotation_t;

/* Writes (replaces) the annotation at (tsuid, start_time). */
OCT_MUST_CHECK int tsdb_annotation_put(tsdb_t *db, const tsdb_annotation_t *a, oct_errbuf_t *eb);

/* Reads the one at (tsuid, start_time) as stored JSON, appended to out
 * (NUL-terminated). Returns 1 found, 0 not, or an error. */
OCT_MUST_CHECK int tsdb_annotation_get(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len,
                                       int64_t start_time, char **json_out, oct_errbuf_t *eb);

/* Deletes one; returns 1 if it existed, 0 if not, or an error. */
OCT_MUST_CHECK int tsdb_annotation_delete(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len,
                                          int64_t start_time, oct_errbuf_t *eb);

/* Calls cb with the stored JSON of every annotation of one series (or the
 * global ones when tsuid is NULL) whose startTime is in [start_ms, end_ms],
 * in time order. A nonzero return from cb stops and is returned. */
typedef int (*tsdb_annotation_fn)(void *ctx, const char *json, size_t len);
int tsdb_annotation_scan(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                         int64_t end_ms, tsdb_annotation_fn cb, void *ctx, oct_errbuf_t *eb);

/* As tsdb_annotation_scan, over cells already read: whole rows of one
 * series (or of the global notes) covering at least the hours of
 * [start_ms, end_ms]. Other cells are ignored. Pure: no store access. */
int tsdb_annotation_scan_cells(const store_cell_t *cells, size_t n, int64_t start_ms,
                               int64_t end_ms, tsdb_annotation_fn cb, void *ctx);

/* The notes of the series that r's last tsdb_reader_read read, from the
 * rows that read fetched (no second read): those of the hours of its range
 * whose startTime is in [start_ms, end_ms], in time order, as
 * tsdb_annotation_scan gives them. Reads of consecutive ranges thus give
 * the notes of their union, each once. The JSON passed to cb is valid until
 * r's next read. Implemented in read.c. */
int tsdb_reader_annotations(const tsdb_reader_t *r, int64_t start_ms, int64_t end_ms,
                            tsdb_annotation_fn cb, void *ctx);

/* ---- the annotation index and search (annotation_index.c) --------------
 * docs/format/annotation-index.md: one octsdb-sys row per note, kept by
 * tsdb_annotation_put/delete, so a search never scans the data rows. */

/* The notes matching query (docs/api-search.md, annotation: terms ANDed;
 * PAT (description or notes), description:, notes:, custom:, custom.KEY:,
 * tsuid:, metric:; '*' globs), global notes by time first, then series by
 * TSUID bytes and time. cb gets the stored JSON of those from the start-th
 * match on, at most limit of them (0: all); *total counts every match.
 * Errors: OCT_EPARSE (a refused query, named in eb), storage errors. */
OCT_MUST_CHECK int tsdb_annotation_search(tsdb_t *db, const char *query, size_t start, size_t limit,
                                          tsdb_annotation_fn cb, void *ctx, size_t *total,
                                          oct_errbuf_t *eb);

typedef struct {
    uint64_t notes;   /* notes found in the data table (each indexed) */
    uint64_t dropped; /* index rows whose note was gone */
} tsdb_annidx_stats_t;

/* Rebuilds the index: drops rows whose note is gone, then reads every data
 * row once and indexes each note (notes written before the index existed,
 * or by OpenTSDB). Needs a writable db; safe beside writers (a note put
 * meanwhile is indexed by its put). */
OCT_MUST_CHECK int tsdb_annotation_reindex(tsdb_t *db, tsdb_annidx_stats_t *st, oct_errbuf_t *eb);

#endif
