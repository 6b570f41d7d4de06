/* fsck.h -- checking and repairing rows of the data table, as OpenTSDB's
 * `tsdb fsck` does (docs/fsck.md), extended to octsdb's block cells.
 *
 * One call checks one row: the key's shape for the data dir's layout (length,
 * at least one tag, the salt, the partition it is stored in), orphan UIDs
 * (a metric, tagk or tagv with no name), then every cell: qualifiers of no
 * known kind, single points whose value length disagrees with their flags,
 * floats encoded on the wrong width (OpenTSDB's old 8-byte float32 cells),
 * 8-byte integers that fit in fewer bytes (counted, not an error), compacted
 * and append columns (meta byte, parse, order), octsdb block cells (decode,
 * points inside the row's hour), and finally duplicates: several points at
 * one timestamp across cells.
 *
 * Repairs (opts->fix plus the flag naming each kind, as OpenTSDB's options):
 * bad rows, orphans, unknown cells, bad single values, unparseable compacted
 * columns and blocks are deleted; float and integer encodings are rewritten
 * in place; duplicates (with resolve_dups) and out-of-order compacted columns
 * are repaired by rewriting all the row's points as ONE block cell (seq 0),
 * keeping per timestamp the oldest point -- OpenTSDB cells before blocks,
 * blocks by sequence, as the read path orders them -- or, with
 * last_write_wins, the newest. A row that has duplicates without
 * resolve_dups, or bad values without delete_bad_values, is not rewritten
 * (as OpenTSDB). The repairs of one row are one atomic store_write (one
 * partition).
 *
 * Threads: tsdb_fsck_row may run on several threads at once with distinct
 * stats. The head of the write path is not looked at: callers flush first. */
#ifndef OCT_TSDB_FSCK_H
#define OCT_TSDB_FSCK_H

#include <stdint.h>

#include "common/err.h"
#include "store/store.h"
#include "tsdb/tsdb.h"

typedef struct {
    int fix;                 /* repair (with the flags below) */
    int resolve_dups;        /* --resolve-duplicates */
    int last_write_wins;     /* keep the newest duplicate instead of the oldest */
    int delete_orphans;      /* --delete-orphans */
    int delete_unknown;      /* --delete-unknown-columns */
    int delete_bad_values;   /* --delete-bad-values */
    int delete_bad_rows;     /* --delete-bad-rows */
    int delete_bad_compacts; /* --delete-bad-compacts (also corrupt blocks) */
} tsdb_fsck_opts_t;

/* Counters, named after OpenTSDB's fsck report lines. */
typedef struct {
    uint64_t kvs, rows, valid_dps, annotations, blocks, future;
    uint64_t bad_key, bad_key_fixed;
    uint64_t duplicates, duplicates_fixed;
    uint64_t orphans, orphans_fixed;
    uint64_t unknown, unknown_fixed;
    uint64_t bad_values, bad_values_deleted;
    uint64_t value_encoding, value_encoding_fixed;
    uint64_t fixable_compacted, fixable_compacted_fixed;
    uint64_t bad_compacted, bad_compacted_deleted;
    uint64_t bad_blocks, bad_blocks_deleted;
    uint64_t vle, vle_bytes, vle_fixed;
} tsdb_fsck_stats_t;

/* Called once per finding with a one-line description (no newline). */
typedef void (*tsdb_fsck_report_fn)(void *ctx, const char *msg);

/* Checks (and with opts->fix repairs) one row of the data table: 'row' holds
 * all its cells (family t), 'part' is the partition it was read from.
 * Counters are added to *st. Returns 0, or a storage error (OCT_EIO...)
 * from a UID lookup or a repair. */
OCT_MUST_CHECK int tsdb_fsck_row(tsdb_t *db, const tsdb_fsck_opts_t *opts, oct_slice_t part,
                                 const store_result_t *row, tsdb_fsck_stats_t *st,
                                 tsdb_fsck_report_fn report, void *ctx, oct_errbuf_t *eb);

/* tsdb_fsck_row for the row 'key' of partition 'part', read here from the
 * store (a TSD repairing, with the data it holds, a row a command found
 * while it read the store read-only: docs/cli-live.md). A row that no
 * longer exists adds nothing. Returns 0 or a storage error. */
OCT_MUST_CHECK int tsdb_fsck_row_at(tsdb_t *db, const tsdb_fsck_opts_t *opts, oct_slice_t part,
                                    oct_slice_t key, tsdb_fsck_stats_t *st,
                                    tsdb_fsck_report_fn report, void *ctx, oct_errbuf_t *eb);

/* Errors found: bad keys, duplicates, orphans, unknown cells, bad values,
 * bad and fixable compacted columns, float encodings, bad blocks. */
uint64_t tsdb_fsck_total_errors(const tsdb_fsck_stats_t *st);
/* Errors repaired (every *_fixed / *_deleted counter except VLE). */
uint64_t tsdb_fsck_total_fixed(const tsdb_fsck_stats_t *st);

#endif
