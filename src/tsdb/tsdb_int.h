/* tsdb_int.h -- private to the tsdb module: nothing outside src/tsdb may
 * include it. The hooks tsdb.c uses to open and close the write path, and
 * the layout the configuration asks for. */
#ifndef OCT_TSDB_TSDB_INT_H
#define OCT_TSDB_TSDB_INT_H

#include "codec/rowkey.h"
#include "common/config.h"
#include "common/err.h"
#include "query/rollup.h"
#include "store/store.h"
#include "tsdb/tsdb.h"

/* The write path's state (tsdb/write.c): series, head, WAL, flush thread.
 * Opened by tsdb_open after the UID registry (recovering the WAL, starting
 * the threads; not for TSDB_OPEN_READONLY, where it is NULL, unless
 * TSDB_OPEN_INDEX asks for the series index only: no WAL, no threads, on a
 * read-only store) and closed first by tsdb_close (flushing every head). */
typedef struct tsdb_writer tsdb_writer_t;
OCT_MUST_CHECK int tsdb__writer_open(tsdb_t *db, const oct_config_t *cfg, tsdb_writer_t **out,
                                     oct_errbuf_t *eb);
void tsdb__writer_close(tsdb_writer_t *w);
tsdb_writer_t *tsdb__writer(tsdb_t *db);

/* The retention rules and their background pass (retention.c): loaded by
 * tsdb_open after the rollup config (whose table names table.<name> rules
 * must match), freed (the thread stopped) first by tsdb_close. Never NULL
 * on an open handle. */
typedef struct tsdb_retention tsdb_retention_t;
OCT_MUST_CHECK int tsdb__retention_load(const oct_config_t *cfg, const query_rollup_config_t *ru,
                                        tsdb_retention_t **out, oct_errbuf_t *eb);
/* Joins the expiry thread; the rules stay readable (reads during the
 * writer's last flush use them) until tsdb__retention_free. */
void tsdb__retention_stop(tsdb_retention_t *r);
void tsdb__retention_free(tsdb_retention_t *r);
tsdb_retention_t *tsdb__retention(const tsdb_t *db);

/* The open store (borrowed; valid until tsdb_close). Only src/tsdb reaches
 * it: the layers above use tsdb's operations (read.h, select.h, maint.h),
 * so a second store backend changes nothing above. Tests may plant raw
 * cells through it. */
store_t *tsdb_store(tsdb_t *db);

/* The store options the configuration names for data dir 'dir' (borrowed
 * from cfg and dir), read-write. */
void tsdb__store_options(const oct_config_t *cfg, const char *dir, store_options_t *so);

/* The layout the configuration asks for. */
OCT_MUST_CHECK int tsdb_layout_from_config(const oct_config_t *cfg, tsdb_layout_t *out,
                                           oct_errbuf_t *eb);

/* The row-key layout (codec/rowkey.h) of db's layout: its UID and salt
 * widths, salt_buckets 1 when unsalted. */
codec_rowkey_layout_t tsdb__rowkey_layout(const tsdb_t *db);

/* The annotation index (docs/format/annotation-index.md; annotation_index.c):
 * an entry for the note (tsuid or NULL for a global one, start time as
 * written) is written before the note and removed after it. */
OCT_MUST_CHECK int tsdb__annidx_put(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start,
                                    oct_errbuf_t *eb);
OCT_MUST_CHECK int tsdb__annidx_delete(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start,
                                       oct_errbuf_t *eb);

/* '*'-glob p (the only wildcard, any run of bytes) against s[0..n); icase
 * folds ASCII case. search.c. */
int tsdb__glob_match(const char *p, const uint8_t *s, size_t n, int icase);

/* A search query (search.h's grammar) split into its terms, "AND"s left
 * out: *buf (free it) holds the text the n *words (free the array) point
 * into; field is NULL for a bare pattern. OCT_EPARSE, naming it in eb, for
 * an operator or character the grammar refuses or an empty field or
 * pattern (*buf and *words are allocated then too). search.c. */
typedef struct {
    const char *field, *pat;
} tsdb__word_t;
OCT_MUST_CHECK int tsdb__search_split(const char *q, char **buf, tsdb__word_t **words, size_t *n,
                                      oct_errbuf_t *eb);

#endif
