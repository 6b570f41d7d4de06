/* cli_int.h -- what the CLI's command files share: the command table entry,
 * config/flag parsing and opening the database with errors reported. */
#ifndef OCT_CLI_CLI_INT_H
#define OCT_CLI_CLI_INT_H

#include <stdio.h>

#include "common/config.h"
#include "tsdb/tsdb.h"

/* Exit statuses, as OpenTSDB's tools use them. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_NOTFOUND = 1, /* nothing matched / no such name */
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_STORAGE = 3,
};

/* argv[0] is the command name. Returns an exit status. */
typedef int (*cli_cmd_fn)(int argc, char **argv);

/* Builds the configuration from the common flags (which are removed from
 * argv). Returns 0, or prints the error and returns CLI_EXIT_USAGE. *cfg is
 * owned by the caller (oct_config_free). */
int cli_config(const char *cmd, int *argc, char **argv, oct_config_t **cfg);

/* Opens the database, printing any error. Returns 0 or CLI_EXIT_STORAGE. */
int cli_open_db(const char *cmd, const oct_config_t *cfg, unsigned flags, tsdb_t **db);

/* True if any argument is --help or -h. */
int cli_wants_help(int argc, char **argv);

/* Prints the common flags block for a command's --help. */
void cli_print_common_flags(FILE *f);

int cli_cmd_uid(int argc, char **argv);
int cli_cmd_mkmetric(int argc, char **argv);
int cli_cmd_tsd(int argc, char **argv);

#endif
