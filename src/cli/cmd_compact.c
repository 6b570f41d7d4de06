/* cmd_compact.c -- `octsdb compact [flags]`: compacts the data dir fully,
 * what HBase's major compaction (`major_compact 'tsdb'`) does for OpenTSDB.
 *
 * OpenTSDB's own row compaction (merging a row's cells into one column) has
 * no work left here: octsdb writes one block cell per series-hour when it
 * flushes. What remains is the store's: files still holding overwritten or
 * deleted cells and data not yet in its final, most compressed level. The
 * command opens the data dir (so it needs the TSD stopped: the dir is
 * locked while a TSD runs), flushes what the write-ahead log still holds,
 * compacts the store (tsdb_compact) and prints the tables' bytes before and after:
 *   Table bytes before: N
 *   Table bytes after: M
 * Exit status 0, 2 usage, 3 storage error (e.g. the dir is locked). */
#include <inttypes.h>
#include <stdio.h>

#include "cli/cli_int.h"
#include "tsdb/maint.h"
#include "tsdb/write.h"

static void compact_usage(FILE *f)
{
    fprintf(f, "usage: octsdb compact [flags]\n"
               "Compacts the data dir fully (as a major compaction of HBase's tables): flushes\n"
               "the write-ahead log, then rewrites the store's files so that overwritten and\n"
               "deleted cells free their space and every table is in its most compact form.\n"
               "The TSD must be stopped (the data dir is locked while it runs). Prints the\n"
               "tables' bytes on disk before and after.\n"
               "\nExit status: 0 done, 2 usage, 3 storage error.\n");
    cli_print_common_flags(f);
}

int cli_cmd_compact(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        compact_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("compact", &argc, argv, &cfg);
    if (rc) return rc;
    if (argc > 1) {
        fprintf(stderr, "octsdb compact: unexpected argument '%s'\n", argv[1]);
        compact_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    rc = cli_open_db("compact", cfg, 0, &db);
    oct_config_free(cfg);
    if (rc) return rc;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    uint64_t before = 0, after = 0;
    /* the head first: points recovered from the log become blocks, so the
     * compaction sees every point in its final form */
    if ((rc = tsdb_flush(db, &eb)) == 0 && (rc = tsdb_disk_usage(db, &before, &eb)) == 0 &&
        (rc = tsdb_compact(db, &eb)) == 0)
        rc = tsdb_disk_usage(db, &after, &eb);
    tsdb_close(db);
    if (rc) {
        fprintf(stderr, "octsdb compact: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    printf("Table bytes before: %" PRIu64 "\nTable bytes after: %" PRIu64 "\n", before, after);
    return CLI_EXIT_OK;
}
