/* cmd_expire.c -- `octsdb expire [--dry-run] [flags]`: one retention pass
 * now (docs/retention.md): drops every partition wholly before its table's
 * cut under the tsd.storage.retention.* rules of the configuration, as the
 * TSD does by itself every tsd.storage.retention.interval_ms, and prints
 *   Partitions expired: raw N, rollup M
 * With --dry-run nothing is removed and the line reads "Partitions to
 * expire". When a running TSD holds the data dir, the TSD runs the pass
 * (POST /api/octsdb/expire, docs/cli-live.md) under ITS rules; otherwise
 * the data dir is opened and the head left by the write-ahead log flushed
 * first. Exit status 0, 2 usage, 3 storage error. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/clock.h"
#include "common/json.h"
#include "tsdb/retention.h"
#include "tsdb/write.h"

static void expire_usage(FILE *f)
{
    fprintf(f, "usage: octsdb expire [--dry-run] [flags]\n"
               "Removes the data older than the retention rules allow (tsd.storage.retention.*,\n"
               "docs/retention.md) now, instead of at the TSD's next pass; beside a running\n"
               "TSD, the TSD does it under its own rules. Prints the partitions removed.\n"
               "  --dry-run  only count what would be removed\n"
               "\nExit status: 0 done, 2 usage, 3 storage error.\n");
    cli_print_common_flags(f);
}

/* The TSD runs the pass (api_retention.c). */
static int expire_live(cli_live_t *l, int dry, int64_t *raw, int64_t *rollup, oct_errbuf_t *eb)
{
    oct_strbuf_t resp = OCT_STRBUF_INIT;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    int rc = cli_live_post_json(l, dry ? "/api/octsdb/expire?dry_run" : "/api/octsdb/expire", &resp,
                                &a, &v, eb);
    if (rc == 0) {
        const json_value_t *p = json_obj_get(v, "partitions");
        const json_value_t *jr = p ? json_obj_get(p, "raw") : NULL;
        const json_value_t *ju = p ? json_obj_get(p, "rollup") : NULL;
        if (!jr || !ju || json_number_i64(jr, raw) || json_number_i64(ju, rollup))
            rc = oct_err(eb, OCT_EIO, "unexpected answer from the TSD: %.200s", resp.ptr);
    }
    json_arena_free(&a);
    oct_strbuf_free(&resp);
    return rc;
}

int cli_cmd_expire(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        expire_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("expire", &argc, argv, &cfg);
    if (rc) return rc;
    int dry = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dry-run") == 0) {
            dry = 1;
            continue;
        }
        fprintf(stderr, "octsdb expire: unexpected argument '%s'\n", argv[i]);
        expire_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    cli_live_t *live;
    rc = cli_open_or_live("expire", cfg, &db, &live);
    oct_config_free(cfg);
    if (rc) return rc;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int64_t raw = 0, rollup = 0;
    if (live) {
        rc = expire_live(live, dry, &raw, &rollup, &eb);
        cli_live_close(live);
    } else {
        tsdb_retention_report_t rep = {0, 0};
        /* points the log still held become rows first, so they expire too */
        if ((rc = tsdb_flush(db, &eb)) == 0)
            rc = tsdb_retention_run(db, oct_clock_wall_ms(), dry, &rep, &eb);
        tsdb_close(db);
        raw = (int64_t)rep.raw_parts;
        rollup = (int64_t)rep.rollup_parts;
    }
    if (rc) {
        fprintf(stderr, "octsdb expire: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    printf("Partitions %s: raw %" PRId64 ", rollup %" PRId64 "\n", dry ? "to expire" : "expired",
           raw, rollup);
    return CLI_EXIT_OK;
}
