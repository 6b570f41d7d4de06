/* cmd_tsd.c -- `octsdb tsd`: the daemon, as OpenTSDB's `tsdb tsd`, with the
 * same flags (--port, --bind, --datadir, --config, --auto-metric,
 * --worker-threads, --read-only, --max-connections, ...; see
 * oct_config_flags_help) and the tsd.* keys. Runs in the foreground, logs
 * to stderr, exits 0 after a clean shutdown (SIGTERM/SIGINT/diediedie). */
#include <stdio.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/log.h"
#include "server/tsd.h"

static void tsd_usage(FILE *f)
{
    fprintf(f, "usage: octsdb tsd [flags]\n"
               "Starts the TSD: the telnet-style protocol and the HTTP API on one port.\n"
               "It runs in the foreground and logs to stderr; SIGTERM or SIGINT stop it\n"
               "cleanly, writing out everything it holds.\n"
               "\nExample: octsdb tsd --port=4242 --datadir=./data --auto-metric\n");
    cli_print_common_flags(f);
}

int cli_cmd_tsd(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        tsd_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg = NULL;
    int status = cli_config("tsd", &argc, argv, &cfg);
    if (status) return status;
    if (argc > 1) {
        fprintf(stderr, "octsdb tsd: unexpected argument '%s'\n", argv[1]);
        tsd_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsd_run(cfg, &eb);
    if (rc) {
        oct_log_error("tsd", "%s", eb.msg[0] ? eb.msg : oct_strerror(rc));
        status = rc == OCT_ECONFIG                                           ? CLI_EXIT_USAGE
                 : (rc == OCT_ELOCKED || rc == OCT_ELAYOUT || rc == OCT_EIO) ? CLI_EXIT_STORAGE
                                                                             : 1;
    }
    oct_config_free(cfg);
    return status;
}
