/* cli.c -- `octsdb <command>`: dispatch and the helpers every command uses. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli_int.h"

typedef struct {
    const char *name;
    cli_cmd_fn fn;
    const char *summary;
} cli_cmd_t;

static int cli_cmd_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("octsdb %s\n", OCT_VERSION);
    return CLI_EXIT_OK;
}

static const cli_cmd_t cli_cmds[] = {
    {"compact", cli_cmd_compact, "Compact the data dir fully (through the TSD if one runs)"},
    {"copy", cli_cmd_copy, "Copy a whole data set between data dirs and RADOS (resumable)"},
    {"delete", cli_cmd_delete, "Delete a metric, series or exact time range (--dry-run counts)"},
    {"expire", cli_cmd_expire, "Remove data older than the retention rules now (--dry-run)"},
    {"fsck", cli_cmd_fsck, "Check the data table for errors and repair them (--fix)"},
    {"import", cli_cmd_import, "Import data points from files (plain or gzip, - for stdin)"},
    {"mkmetric", cli_cmd_mkmetric, "Assign UIDs to metric names (same as `uid assign metrics`)"},
    {"passwd", cli_cmd_passwd, "Make a credentials-file line (slow password hash or new token)"},
    {"query", cli_cmd_query, "Run a query and print the data points"},
    {"rollup", cli_cmd_rollup, "Compute the TSD's auto rollups of stored data (--backfill)"},
    {"scan", cli_cmd_scan, "Dump raw rows of the data table (--import, --delete)"},
    {"search", cli_cmd_search, "Search series and UIDs as /api/search does (no plugin)"},
    {"tsd", cli_cmd_tsd, "Run the TSD daemon (telnet and HTTP on one port)"},
    {"uid", cli_cmd_uid, "Look up, assign, rename, delete, grep and fsck UIDs"},
    {"version", cli_cmd_version, "Print the version"},
};

static void cli_usage(FILE *f)
{
    fprintf(f, "usage: octsdb <command> [flags] [args]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof cli_cmds / sizeof cli_cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cli_cmds[i].name, cli_cmds[i].summary);
    fprintf(f, "\nRun `octsdb <command> --help` for a command's flags.\n");
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        cli_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) return cli_cmd_version(0, NULL);
    for (size_t i = 0; i < sizeof cli_cmds / sizeof cli_cmds[0]; i++)
        if (!strcmp(cmd, cli_cmds[i].name)) return cli_cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "octsdb: unknown command '%s'\n", cmd);
    cli_usage(stderr);
    return CLI_EXIT_USAGE;
}

int cli_config(const char *cmd, int *argc, char **argv, oct_config_t **cfg)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    oct_config_t *c = oct_config_new();
    if (oct_config_parse_args(c, argc, argv, &eb) != 0) {
        fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg);
        oct_config_free(c);
        return CLI_EXIT_USAGE;
    }
    *cfg = c;
    return 0;
}

int cli_open_db(const char *cmd, const oct_config_t *cfg, unsigned flags, tsdb_t **db)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_open(cfg, flags, db, &eb);
    if (rc) {
        fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    return 0;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    }
    return 0;
}

void cli_print_common_flags(FILE *f)
{
    fprintf(f, "\nCommon flags:\n%s", oct_config_flags_help());
}
