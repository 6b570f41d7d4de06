/* cli_int.h -- what the CLI's command files share: the command table entry,
 * config/flag parsing and opening the database with errors reported. */
#ifndef OCT_CLI_CLI_INT_H
#define OCT_CLI_CLI_INT_H

#include <stdio.h>

#include "codec/rowkey.h"
#include "common/config.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "tsdb/maint.h"
#include "tsdb/tsdb.h"

/* Exit statuses, as OpenTSDB's tools use them. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_NOTFOUND = 1, /* nothing matched / no such name */
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_STORAGE = 3,
};

/* A running TSD that commands work through (live.c). */
typedef struct cli_live cli_live_t;

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
int cli_cmd_import(int argc, char **argv);
int cli_cmd_scan(int argc, char **argv);
int cli_cmd_fsck(int argc, char **argv);
int cli_cmd_query(int argc, char **argv);
int cli_cmd_search(int argc, char **argv);
int cli_cmd_compact(int argc, char **argv);
int cli_cmd_rollup(int argc, char **argv);
int cli_cmd_copy(int argc, char **argv);
int cli_cmd_expire(int argc, char **argv);
int cli_cmd_delete(int argc, char **argv);
int cli_cmd_passwd(int argc, char **argv);

/* ---- the positional query syntax of scan, fsck and query ----
 * START [END] [+gnuplot opts] <q>...; <q> = AGG [rate] [counter[,max[,reset]]]
 * [downsample N AGG] METRIC [k=v ...] (OpenTSDB's CliQuery); these helpers live in cmd_scan.c. */
typedef struct {
    char *agg; /* aggregator name as given */
    int rate;
    int counter;
    int64_t counter_max; /* INT64_MAX unless given */
    int64_t reset_value; /* 0 unless given */
    int has_downsample;
    int64_t ds_ms; /* N, in milliseconds */
    char *ds_agg;
    char *metric;
    char **tagk, **tagv; /* n_tags tags as given (values may be filters: *, a|b, ...) */
    size_t n_tags;
} cli_query_t;

typedef struct {
    int64_t start_ms, end_ms; /* end = now when not given */
    int has_end;
    char **plot_opts; /* "+k=v" arguments, as given */
    size_t n_plot_opts;
    cli_query_t *q;
    size_t n;
} cli_queries_t;

/* Parses args[0..n) (positional arguments only). tz names the zone of
 * absolute dates (NULL = UTC). Returns 0, or prints the error (prefixed by
 * "octsdb <cmd>: ") and returns CLI_EXIT_USAGE. Free with cli_queries_free. */
int cli_queries_parse(const char *cmd, char **args, int n, const char *tz, cli_queries_t *out);
void cli_queries_free(cli_queries_t *qs);

/* Opens the database for a command that only reads: read-write when the
 * data dir is free (so the write-ahead log is replayed and flushed, and
 * nothing written before is missed), else read-only next to the running TSD,
 * after asking that TSD (found by cli_live_find) to flush everything it
 * holds, so the command sees what it would see with the TSD stopped. Without
 * a live TSD to ask (no address record) it opens read-only as it is. */
int cli_open_db_for_read(const char *cmd, const oct_config_t *cfg, tsdb_t **db);
/* The same with ro_flags added to the read-only open (TSDB_OPEN_INDEX for a
 * command that selects series, like query), and for a command that reads
 * locally and writes through the TSD (scan --delete) live != NULL: beside a
 * live TSD *live is set (close it with cli_live_close) and *db is read-only;
 * without a TSD to write through, a locked data dir is an error
 * (CLI_EXIT_STORAGE). */
int cli_open_db_beside(const char *cmd, const oct_config_t *cfg, unsigned ro_flags, tsdb_t **db,
                       cli_live_t **live);

/* Calls fn for every row of the data table that one of the queries selects
 * (metric, tags, base hours in [start, end]), salt bucket by salt bucket, in
 * row-key order (tsdb_scan_rows); with qs == NULL for every row of the
 * table. 'row' is valid during the call. A nonzero return stops the walk and
 * is returned. Rows whose key does not parse are given to fn only in the
 * full-table walk. */
typedef tsdb_row_fn cli_row_fn;
int cli_rows_foreach(tsdb_t *db, const cli_queries_t *qs, cli_row_fn fn, void *ctx,
                     oct_errbuf_t *eb);

/* Name of a UID as "name", or "<kind>:<HEX>" when it has none; NUL-terminated
 * into buf. Returns 1 if the name was found, 0 if not, or a negative error. */
int cli_uid_name(tsdb_t *db, codec_uid_kind_t kind, const uint8_t *uid, char *buf, size_t cap);

/* Appends the row's tags as OpenTSDB prints a tag map, sorted by name:
 * "{host=web01, dc=lga}" (sep ", ", braces) or import style " host=web01"
 * (import != 0). Returns 0, or 1 if a UID has no name (printed as above). */
int cli_format_tags(tsdb_t *db, const codec_rowkey_t *rk, int import, oct_strbuf_t *sb);

/* `uid metasync` / `uid metapurge` (argv[0]) over an open db; cmd_metasync.c. */
int cli_uid_meta(tsdb_t *db, int argc, char **argv);
/* `uid treesync` / `uid treepurge <id> [true]` (cmd_tree.c) on an open data
 * dir, or through a live TSD; argv[0] is the subcommand. */
int cli_uid_tree(tsdb_t *db, const oct_config_t *cfg, int argc, char **argv);
int cli_uid_tree_live(cli_live_t *l, const oct_config_t *cfg, int argc, char **argv);

/* ---- progress of long commands (progress.c) ----
 * A line on stderr, redrawn in place at most 4 times a second: with a total
 * "42.0% 1.2 MiB/2.9 MiB, 120000 points, 98000 points/s, ETA 0:00:02",
 * without one the count and rate only. Drawn only when stderr is a
 * terminal and not quiet, so pipes and logs never see it. One thread. */
typedef struct {
    int on, drawn;
    const char *unit; /* what count counts ("points"), static */
    uint64_t total;   /* bytes of input, 0 = unknown (no percentage, no ETA) */
    double t0, last;
} cli_progress_t;

void cli_progress_init(cli_progress_t *p, const char *unit, uint64_t total_bytes, int quiet);
/* Redraws if the period has passed (or force). */
void cli_progress_update(cli_progress_t *p, uint64_t done_bytes, uint64_t count, int force);
/* Ends the line (if one was drawn), before other stderr output or the end. */
void cli_progress_break(cli_progress_t *p);

/* Work that reports nothing until it ends (a store compaction, a UID table
 * check, a request to the TSD): an indeterminate spinner with the elapsed
 * time, "compact: working /, 0:00:03 elapsed", redrawn by a thread of its
 * own 4 times a second, drawn at once (so even short work shows one frame),
 * and on stop replaced by "compact: done in 0:00:03". Same conditions as
 * the progress line (stderr a terminal, not quiet). Start returns NULL when
 * nothing is drawn (all the functions take NULL). While the work runs,
 * output to the terminal goes between cli_spinner_hold (clears the line and
 * stops redraws) and cli_spinner_release. */
typedef struct cli_spinner cli_spinner_t;
cli_spinner_t *cli_spinner_start(const char *what, int quiet);
void cli_spinner_hold(cli_spinner_t *s);
void cli_spinner_release(cli_spinner_t *s);
/* Ends the thread and the line; frees s. ok = 0 prints "failed after". */
void cli_spinner_stop(cli_spinner_t *s, int ok);

/* ---- working through the running TSD that holds the data dir (live.c,
 * docs/cli-live.md) ---- */

/* After tsdb_open said OCT_ELOCKED: the TSD named by the data dir's address
 * record. Returns 0 with *out (the notice "data dir held by the running
 * TSD (pid N at host:port); working through it" printed on stderr), 1 when
 * there is no live TSD to work through (no record, or a stale one: the
 * caller reports the lock), or CLI_EXIT_STORAGE after printing why the TSD
 * cannot be used (it needs TLS, or credentials that are not configured). */
int cli_live_find(const char *cmd, const oct_config_t *cfg, cli_live_t **out);
void cli_live_close(cli_live_t *l);

/* One HTTP request to the TSD (target: path and encoded query; body JSON,
 * may be NULL). Returns the HTTP status with the body in resp (reset
 * first), or OCT_EIO with the reason in eb. Blocks; one thread. */
int cli_live_http(cli_live_t *l, const char *method, const char *target, const void *body,
                  size_t len, oct_strbuf_t *resp, oct_errbuf_t *eb);

/* The message (": details" appended) of an OpenTSDB error body, or the
 * body's start if it is not one, NUL-terminated into buf. */
void cli_live_error_message(const oct_strbuf_t *resp, char *buf, size_t cap);

/* POST target (no body) to the TSD, which must answer 200 with a JSON
 * object: 0 with *v parsed into a (the caller frees a and resp, which holds
 * the text), or OCT_EIO with the TSD's message (or what was wrong) in eb. */
int cli_live_post_json(cli_live_t *l, const char *target, oct_strbuf_t *resp, json_arena_t *a,
                       json_value_t **v, oct_errbuf_t *eb);

/* Asks the TSD to write everything it holds to the store (POST
 * /api/octsdb/flush). Returns 0, or prints the error and returns
 * CLI_EXIT_STORAGE. */
int cli_live_flush(const char *cmd, cli_live_t *l);

/* Opens the data dir read-write (*db) or, when a live TSD holds it, finds
 * that TSD (*live, the notice printed). Returns 0 with exactly one of them
 * set, or prints the error and returns CLI_EXIT_STORAGE. */
int cli_open_or_live(const char *cmd, const oct_config_t *cfg, tsdb_t **db, cli_live_t **live);

/* The row-key layout of an open database. */
void cli_rowkey_layout(tsdb_t *db, codec_rowkey_layout_t *out);

#endif
