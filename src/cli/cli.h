/* cli.h -- the `octsdb` command line, mirroring OpenTSDB's `tsdb` script:
 * `octsdb <command> [flags] [args]`. Commands print to stdout, diagnostics to
 * stderr, and return a process exit status. */
#ifndef OCT_CLI_CLI_H
#define OCT_CLI_CLI_H

/* Runs the command line; returns the process exit status. */
int cli_main(int argc, char **argv);

#endif
