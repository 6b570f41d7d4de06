/* copy.h -- copying a whole data set between two stores (`octsdb copy`),
 * e.g. from an embedded data dir up to a RADOS pool and back.
 *
 * An endpoint is a spec string: a data dir path (the embedded store,
 * tsd.storage.backend = rocksdb) or "rados:POOL/NAMESPACE" (the RADOS
 * backend; "rados:POOL" takes tsd.storage.rados.namespace from the
 * configuration). The configuration gives everything else (rados conf and
 * user, table names). See docs/scale-out.md.
 *
 * The copy goes through the store contract only (store_part_list, scans,
 * batched store_write), table by table, partition by partition, so any two
 * backends work. Every cell is copied as it is, UID counters and maps,
 * meta, trees, annotations (data-table cells) and the layout record
 * included, so the copy opens with the same settings as the original.
 *
 * Source: a data dir is opened read-write first (so a write-ahead log left
 * by a stopped TSD is replayed and flushed into the store) and held locked
 * for the whole copy; one held by a running TSD fails with OCT_ELOCKED.
 *
 * Destination: must hold no cell, or be a copy of the same source left
 * unfinished. After each partition, a checkpoint (octsdb-sys, partition
 * "copy") records the last partition done, durably; a second run with the
 * same source continues after it. When every table is copied the cells of
 * every table are counted on both sides; if they agree the checkpoint is
 * removed, otherwise it stays (so a re-run counts again) and the result is
 * TSDB_COPY_MISMATCH.
 *
 * Threads: one call at a time per destination; the progress callback runs
 * on the caller's thread. */
#ifndef OCT_TSDB_COPY_H
#define OCT_TSDB_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

enum {
    TSDB_COPY_NTABLES = 6
}; /* tsdb, tsdb-uid, tsdb-meta, tsdb-tree, octsdb-sys, octsdb-rollup */

/* Default table name of table i (for messages), i < TSDB_COPY_NTABLES. */
const char *tsdb_copy_table_name(unsigned i);

typedef void (*tsdb_copy_progress_fn)(void *ctx, uint64_t parts_done, uint64_t cells_done);

typedef struct {
    const char *from, *to;          /* endpoint specs, borrowed */
    const oct_config_t *cfg;        /* borrowed: rados conf/user, table names, layout keys */
    size_t batch;                   /* cells per store_write; 0 = 1000 */
    uint64_t max_parts;             /* stop after copying this many partitions; 0 = no limit */
    int check_only;                 /* copy nothing: count both sides and compare */
    tsdb_copy_progress_fn progress; /* NULL = none */
    void *progress_ctx;
} tsdb_copy_opts_t;

typedef struct {
    uint64_t src_cells[TSDB_COPY_NTABLES], dst_cells[TSDB_COPY_NTABLES]; /* after the check */
    uint64_t parts_copied, cells_copied;                                 /* by this run */
    int resumed; /* a checkpoint of an earlier run was found */
} tsdb_copy_stats_t;

enum {
    TSDB_COPY_DONE = 0,
    TSDB_COPY_PARTIAL = 1,  /* stopped at max_parts: run again to continue */
    TSDB_COPY_MISMATCH = 2, /* copied, but the cell counts differ (in stats) */
};

/* Runs the copy. Returns a TSDB_COPY_* value, or a negative error (detail
 * in eb): OCT_ELOCKED (source or destination in use), OCT_ENOTFOUND (the
 * source holds no cell, e.g. a mistyped namespace), OCT_EEXISTS
 * (destination holds another data set), OCT_ECONFIG (bad spec), OCT_EIO. */
OCT_MUST_CHECK int tsdb_copy(const tsdb_copy_opts_t *o, tsdb_copy_stats_t *stats, oct_errbuf_t *eb);

#endif
