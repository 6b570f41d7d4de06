/* cli.c -- top-level dispatch of `octsdb <command>`. */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

static void cli_usage(FILE *f)
{
    fprintf(f, "usage: octsdb <command> [args]\n"
               "Valid commands: uid, mkmetric, version\n"
               "Run `octsdb <command> --help` for a command's flags.\n");
}

int cli_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        cli_usage(stdout);
        return argc < 2 ? 1 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("octsdb %s\n", OCT_VERSION);
        return 0;
    }
    fprintf(stderr, "octsdb: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
