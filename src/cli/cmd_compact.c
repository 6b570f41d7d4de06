/* cmd_compact.c -- `octsdb compact [flags]`: compacts the data dir fully,
 * what HBase's major compaction (`major_compact 'tsdb'`) does for OpenTSDB.
 *
 * OpenTSDB's own row compaction (merging a row's cells into one column) has
 * no work left here: octsdb writes one block cell per series-hour when it
 * flushes. What remains is the store's: files still holding overwritten or
 * deleted cells and data not yet in its final, most compressed level. The
 * command opens the data dir, flushes what the write-ahead log still holds,
 * compacts the store (tsdb_compact) and prints the tables' bytes before and after:
 *   Table bytes before: N
 *   Table bytes after: M
 * When a running TSD holds the data dir, the TSD does the same steps
 * (POST /api/octsdb/compact, docs/cli-live.md) while it keeps serving.
 * Exit status 0, 2 usage, 3 storage error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/json.h"
#include "tsdb/maint.h"
#include "tsdb/write.h"

static void compact_usage(FILE *f)
{
    fprintf(f, "usage: octsdb compact [--quiet] [flags]\n"
               "Compacts the data dir fully (as a major compaction of HBase's tables): flushes\n"
               "the write-ahead log, then rewrites the store's files so that overwritten and\n"
               "deleted cells free their space and every table is in its most compact form.\n"
               "Beside a running TSD, the TSD does it while it keeps serving. Prints the\n"
               "tables' bytes on disk before and after. On a terminal, stderr shows a spinner\n"
               "with the elapsed time while it works and the time it took at the end.\n"
               "\n  --quiet   no spinner\n"
               "\nExit status: 0 done, 2 usage, 3 storage error.\n");
    cli_print_common_flags(f);
}

/* The TSD compacts (api_admin.c) and answers {"before":N,"after":M}. */
static int compact_live(cli_live_t *l, uint64_t *before, uint64_t *after, oct_errbuf_t *eb)
{
    oct_strbuf_t resp = OCT_STRBUF_INIT;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    int64_t b = -1, e = -1;
    int rc = cli_live_post_json(l, "/api/octsdb/compact", &resp, &a, &v, eb);
    if (rc == 0) {
        const json_value_t *jb = json_obj_get(v, "before"), *je = json_obj_get(v, "after");
        if (!jb || !je || jb->type != JSON_NUMBER || je->type != JSON_NUMBER ||
            json_number_i64(jb, &b) || json_number_i64(je, &e) || b < 0 || e < 0)
            rc = oct_err(eb, OCT_EIO, "unexpected answer from the TSD: %.200s", resp.ptr);
        *before = (uint64_t)b;
        *after = (uint64_t)e;
    }
    json_arena_free(&a);
    oct_strbuf_free(&resp);
    return rc;
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
    int quiet = argc > 1 && !strcmp(argv[1], "--quiet");
    if (argc > 1 + quiet) {
        fprintf(stderr, "octsdb compact: unexpected argument '%s'\n", argv[1 + quiet]);
        compact_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    cli_live_t *live;
    rc = cli_open_or_live("compact", cfg, &db, &live);
    oct_config_free(cfg);
    if (rc) return rc;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    uint64_t before = 0, after = 0;
    cli_spinner_t *spin = cli_spinner_start("compact", quiet);
    if (live) {
        rc = compact_live(live, &before, &after, &eb);
        cli_live_close(live);
        cli_spinner_stop(spin, rc == 0);
        if (rc) {
            fprintf(stderr, "octsdb compact: %s\n", eb.msg);
            return CLI_EXIT_STORAGE;
        }
        printf("Table bytes before: %" PRIu64 "\nTable bytes after: %" PRIu64 "\n", before, after);
        return CLI_EXIT_OK;
    }
    /* the head first: points recovered from the log become blocks, so the
     * compaction sees every point in its final form */
    if ((rc = tsdb_flush(db, &eb)) == 0 && (rc = tsdb_disk_usage(db, &before, &eb)) == 0 &&
        (rc = tsdb_compact(db, &eb)) == 0)
        rc = tsdb_disk_usage(db, &after, &eb);
    tsdb_close(db);
    cli_spinner_stop(spin, rc == 0);
    if (rc) {
        fprintf(stderr, "octsdb compact: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    printf("Table bytes before: %" PRIu64 "\nTable bytes after: %" PRIu64 "\n", before, after);
    return CLI_EXIT_OK;
}
