/* tsdb.h -- the database handle: one open store, its recorded layout, and
 * the UID registry over it. Everything above (CLI, TSD) starts here.
 *
 * Layout guard: OpenTSDB leaves it to the user to never change UID widths or
 * salting on existing data (doing so makes every row unreadable). octsdb
 * records them in the data dir when it is created (table octsdb-sys, see
 * docs/format/layout.md) and refuses to open it with different settings,
 * naming both values.
 *
 * The rest of the module has its own contract headers: write.h (put,
 * durability, flush, counters), read.h (reading series back, the series
 * index), annotation.h, fsck.h, tsmeta.h, parse.h. tsdb_int.h is private.
 *
 * Threads: tsdb_open and tsdb_close are called once each; the accessors
 * may be called from any thread in between. */
#ifndef OCT_TSDB_TSDB_H
#define OCT_TSDB_TSDB_H

#include "common/config.h"
#include "common/err.h"
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

/* 1 if the data dir cfg names already holds a database (opening it would
 * not create one), 0 if not, or OCT_ECONFIG. Touches nothing. */
OCT_MUST_CHECK int tsdb_exists(const oct_config_t *cfg, oct_errbuf_t *eb);

/* Bytes of write-ahead log records in the data dir cfg names: what a
 * daemon left there without flushing it (one that crashed, or one still
 * running). A TSDB_OPEN_READONLY open does not replay the log, so their
 * points are not shown (docs/reliability.md, "Read-only mode"). 0 when
 * there is no log. Touches nothing. */
uint64_t tsdb_wal_unreplayed_bytes(const oct_config_t *cfg);

/* Borrowed; valid until tsdb_close. */
uid_registry_t *tsdb_uids(tsdb_t *db);
const tsdb_layout_t *tsdb_layout(const tsdb_t *db);

#endif
