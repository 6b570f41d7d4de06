/* cmd_tree.c -- `octsdb uid treesync` and `octsdb uid treepurge <id> [true]`
 * (tsdb/tree.h; docs/trees.md), on a stopped data dir or through a running
 * TSD (docs/cli-live.md): treesync as POST /api/octsdb/tree/sync, treepurge
 * as 2.4's DELETE /api/tree. Exit codes as 2.4's tools: 0 done, 2 usage,
 * 3 failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli_int.h"
#include "common/json.h"
#include "tsdb/tree.h"

static void tree_sync_progress(void *ctx, const tsdb_tree_sync_stats_t *st)
{
    cli_progress_update(ctx, 0, st->series, 0);
}

static void tree_sync_summary(const tsdb_tree_sync_stats_t *st)
{
    printf("treesync: %llu series; %llu stored, %llu collisions, %llu not matched, "
           "%llu without a branch\n",
           (unsigned long long)st->series, (unsigned long long)st->stored,
           (unsigned long long)st->collisions, (unsigned long long)st->not_matched,
           (unsigned long long)st->no_branch);
}

static void tree_purge_summary(int id, int definition)
{
    printf("treepurge: tree %d: branches, leaves, collisions and not-matched deleted%s\n", id,
           definition ? ", and the definition and rules" : "");
}

/* The arguments: 0 and *id / *definition, or CLI_EXIT_USAGE (printed). */
static int tree_args(int argc, char **argv, int *id, int *definition)
{
    int sync = !strcmp(argv[0], "treesync");
    if (sync ? argc != 1 : argc < 2 || argc > 3) {
        fprintf(stderr, "usage: octsdb uid %s\n",
                sync ? "treesync" : "treepurge <tree id> [true (also the definition)]");
        return CLI_EXIT_USAGE;
    }
    if (sync) return 0;
    char *end;
    long v = strtol(argv[1], &end, 10);
    if (!argv[1][0] || *end || v < 1 || v > TSDB_TREE_MAX_ID) {
        fprintf(stderr, "octsdb uid treepurge: invalid tree id '%s' (1..%d)\n", argv[1],
                TSDB_TREE_MAX_ID);
        return CLI_EXIT_USAGE;
    }
    *id = (int)v;
    *definition = argc == 3 && !strcasecmp(argv[2], "true");
    return 0;
}

/* 2.4 does nothing (and succeeds) when tree processing is off. */
static int tree_disabled(const oct_config_t *cfg, const char *sub)
{
    if (strcmp(sub, "treesync") || oct_config_get_bool(cfg, "tsd.core.tree.enable_processing"))
        return 0;
    fprintf(stderr, "octsdb uid treesync: Tree processing is disabled "
                    "(tsd.core.tree.enable_processing = false)\n");
    return 1;
}

int cli_uid_tree(tsdb_t *db, const oct_config_t *cfg, int argc, char **argv)
{
    int id = 0, definition = 0;
    int st = tree_args(argc, argv, &id, &definition);
    if (st || tree_disabled(cfg, argv[0])) return st;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc;
    if (!strcmp(argv[0], "treesync")) {
        cli_progress_t p;
        cli_progress_init(&p, "series", 0, 0);
        tsdb_tree_sync_stats_t s;
        rc = tsdb_tree_sync(db, tree_sync_progress, &p, &s, &eb);
        cli_progress_update(&p, 0, s.series, 1);
        cli_progress_break(&p);
        if (!rc) tree_sync_summary(&s);
    } else {
        tsdb_tree_t t;
        rc = tsdb_tree_get(db, id, &t, &eb);
        if (rc == 0) rc = oct_err(&eb, OCT_ENOTFOUND, "Unable to locate tree: %d", id);
        if (rc > 0) {
            tsdb_tree_clear(&t);
            rc = tsdb_tree_purge(db, id, definition, NULL, &eb);
        }
        if (!rc) tree_purge_summary(id, definition);
    }
    if (rc) {
        fprintf(stderr, "octsdb uid %s: %s\n", argv[0], eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    return CLI_EXIT_OK;
}

int cli_uid_tree_live(cli_live_t *l, const oct_config_t *cfg, int argc, char **argv)
{
    int id = 0, definition = 0;
    int st = tree_args(argc, argv, &id, &definition);
    if (st || tree_disabled(cfg, argv[0])) return st;
    int sync = !strcmp(argv[0], "treesync");
    char target[96];
    if (sync)
        snprintf(target, sizeof target, "/api/octsdb/tree/sync");
    else
        snprintf(target, sizeof target, "/api/tree?treeid=%d%s", id,
                 definition ? "&definition=true" : "");
    oct_strbuf_t resp = OCT_STRBUF_INIT;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int code = cli_live_http(l, sync ? "POST" : "DELETE", target, NULL, 0, &resp, &eb);
    int ok = code == (sync ? 200 : 204);
    if (ok && sync) {
        json_arena_t a = JSON_ARENA_INIT;
        json_value_t *v;
        tsdb_tree_sync_stats_t s = {0};
        uint64_t *f[] = {&s.series, &s.stored, &s.collisions, &s.not_matched, &s.no_branch};
        const char *k[] = {"series", "stored", "collisions", "notMatched", "noBranch"};
        ok = !json_parse(&a, resp.ptr, resp.len, 0, &v, &eb);
        for (size_t i = 0; ok && i < 5; i++) {
            const json_value_t *x = json_obj_get(v, k[i]);
            int64_t n = 0;
            if (x && !json_number_i64(x, &n)) *f[i] = (uint64_t)n;
        }
        json_arena_free(&a);
        if (ok) tree_sync_summary(&s);
    } else if (ok) {
        tree_purge_summary(id, definition);
    }
    if (!ok) {
        char msg[512];
        if (code > 0)
            cli_live_error_message(&resp, msg, sizeof msg);
        else
            snprintf(msg, sizeof msg, "%s", eb.msg);
        fprintf(stderr, "octsdb uid %s: %s\n", argv[0], msg);
    }
    oct_strbuf_free(&resp);
    return ok ? CLI_EXIT_OK : CLI_EXIT_STORAGE;
}
