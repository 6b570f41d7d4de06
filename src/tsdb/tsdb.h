/* tsdb.h -- the database handle: one open store, its recorded layout, and
 * the UID registry over it. Everything above (CLI, TSD) starts here.
 *
 * Layout guard: OpenTSDB leaves it to the user to never change UID widths or
 * salting on existing data (doing so makes every row unreadable). octsdb
 * records them in the data dir when it is created (table octsdb-sys, see
 * docs/format/layout.md) and refuses to open it with different settings,
 * naming both values. */
#ifndef OCT_TSDB_TSDB_H
#define OCT_TSDB_TSDB_H

#include "common/config.h"
#include "common/err.h"
#include "store/store.h"
#include "uid/uid.h"

typedef struct tsdb tsdb_t;

typedef struct {
    unsigned uid_width[CODEC_UID_N_KINDS];
    unsigned salt_width;
    unsigned salt_buckets;
} tsdb_layout_t;

enum {
    TSDB_OPEN_READONLY = 1u << 0, /* do not create the data dir or record a layout */
    TSDB_OPEN_INDEX = 1u << 1,    /* with READONLY: still load the series index (a read-only
                                   * TSD's queries need it); no WAL, no flush thread, every
                                   * put fails */
};

/* Opens the data dir named by tsd.storage.data_dir with the settings in cfg
 * (borrowed for the call only). Returns 0, OCT_ELAYOUT (settings differ from
 * the recorded ones), OCT_ELOCKED, OCT_ECONFIG or OCT_EIO. May block. */
OCT_MUST_CHECK int tsdb_open(const oct_config_t *cfg, unsigned flags, tsdb_t **out,
                             oct_errbuf_t *eb);
void tsdb_close(tsdb_t *db);

/* Borrowed; valid until tsdb_close. */
store_t *tsdb_store(tsdb_t *db);
uid_registry_t *tsdb_uids(tsdb_t *db);
const tsdb_layout_t *tsdb_layout(const tsdb_t *db);

/* ---- internal to the tsdb module ------------------------------------- */

/* The write path's state (tsdb/write.c): series, head, WAL, flush thread.
 * Opened by tsdb_open after the UID registry (recovering the WAL, starting
 * the threads; not for TSDB_OPEN_READONLY, where it is NULL, unless
 * TSDB_OPEN_INDEX asks for the series index only: no WAL, no threads, on a
 * read-only store) and closed first
 * by tsdb_close (flushing every head). */
typedef struct tsdb_writer tsdb_writer_t;
OCT_MUST_CHECK int tsdb__writer_open(tsdb_t *db, const oct_config_t *cfg, tsdb_writer_t **out,
                                     oct_errbuf_t *eb);
void tsdb__writer_close(tsdb_writer_t *w);
tsdb_writer_t *tsdb__writer(tsdb_t *db);

/* The layout the configuration asks for. */
OCT_MUST_CHECK int tsdb_layout_from_config(const oct_config_t *cfg, tsdb_layout_t *out,
                                           oct_errbuf_t *eb);

#endif
