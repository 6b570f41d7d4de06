/* cmd_fsck.c -- `octsdb fsck [flags] [START [END] <q>...] | --full-scan`, as
 * OpenTSDB's `tsdb fsck`: checks every selected row of the data table with
 * tsdb_fsck_row (tsdb/fsck.h), prints one line per finding, then the
 * counters under OpenTSDB's names ("Key Values Processed: ...", ...,
 * "Total Errors: N", "Total Correctable Errors: N", "Total Errors Fixed: N"),
 * plus octsdb's block counters. Exit status 0 when no error was found, 1
 * otherwise (as OpenTSDB), 2 usage, 3 storage error.
 *
 * Differences (docs/compat.md): findings and counters go to stdout (OpenTSDB
 * logs them); repairs of duplicates and of out-of-order compacted columns
 * rewrite the row as one octsdb block cell; "Total Errors Fixed" also counts
 * deleted compacted columns and blocks and rewritten out-of-order columns
 * (OpenTSDB leaves them out of its sum); --threads, --sync and --compact are
 * accepted and ignored (one thread; every repair is written before the next
 * row; rows are compacted by octsdb's flush).
 *
 * Beside a running TSD (docs/cli-live.md) the TSD first flushes, the rows
 * are checked read-only here, and with --fix each row that has errors is
 * sent to the TSD, which reads it again and repairs it with the same
 * tsdb_fsck_row; its findings and counters replace the read-only ones, so
 * the output is that of a local --fix. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "tsdb/fsck.h"
#include "tsdb/write.h"

static void fsck_usage(FILE *f)
{
    fprintf(
        f,
        "usage: octsdb fsck [flags] [START-DATE [END-DATE] query [queries...]]\n"
        "Scans the data table for errors. Use --full-scan to scan the entire table or give\n"
        "a command line query (see `octsdb query --help`) to scan a subset.\n"
        "The --fix or --fix-all flags repair errors; be careful when using them.\n"
        "\nFlags:\n"
        "  --full-scan               Scan the entire data table.\n"
        "  --fix                     Fix errors as they are found (with the flags below).\n"
        "  --fix-all                 --fix with every flag below.\n"
        "  --resolve-duplicates      Keep the oldest (default) or newest duplicate.\n"
        "  --last-write-wins         Keep the newest duplicate (or tsd.storage.fix_duplicates).\n"
        "  --delete-orphans          Delete rows whose UIDs have no name.\n"
        "  --delete-unknown-columns  Delete cells of no known kind.\n"
        "  --delete-bad-values       Delete single points with bad values.\n"
        "  --delete-bad-rows         Delete rows with invalid keys.\n"
        "  --delete-bad-compacts     Delete compacted columns and blocks that do not decode.\n"
        "  --quiet                   No progress line (drawn on stderr, with rows and\n"
        "                            rate, when stderr is a terminal and stdout is not).\n"
        "  --compact, --sync, --threads N   Accepted for compatibility; no effect.\n"
        "\nExit status: 0 no errors, 1 errors found, 2 usage, 3 storage error.\n");
    cli_print_common_flags(f);
}

typedef struct {
    tsdb_t *db;
    tsdb_fsck_opts_t o;
    tsdb_fsck_stats_t st;
    oct_errbuf_t eb;
    cli_progress_t prog; /* rows checked; no total, so no ETA */
    /* --fix beside a running TSD: rows are checked read-only here, and a
     * row with errors is repaired by the TSD (POST /api/octsdb/fsck) */
    cli_live_t *live;
    oct_strbuf_t held; /* the findings of the row being checked */
} fsck_run_t;

static void fsck_report(void *ctx, const char *msg)
{
    fsck_run_t *f = ctx;
    cli_progress_break(&f->prog);
    printf("%s\n", msg);
    fflush(stdout);
}

static void fsck_hold(void *ctx, const char *msg)
{
    fsck_run_t *f = ctx;
    oct_strbuf_puts(&f->held, msg);
    oct_strbuf_puts(&f->held, "\n");
}

static void fsck_hex_param(oct_strbuf_t *sb, const char *name, oct_slice_t s)
{
    oct_strbuf_printf(sb, "%s=", name);
    for (size_t i = 0; i < s.len; i++)
        oct_strbuf_printf(sb, "%02X", ((const uint8_t *)s.ptr)[i]);
}

/* The TSD repairs the row: its findings are printed, its counters added. */
static int fsck_row_live_fix(fsck_run_t *f, const tsdb_row_t *row)
{
    oct_strbuf_t t = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    oct_strbuf_puts(&t, "/api/octsdb/fsck?");
    fsck_hex_param(&t, "part", row->part);
    fsck_hex_param(&t, "&key", row->key);
    static const struct {
        const char *name;
        size_t off;
    } flags[] = {
        {"resolve_dups", offsetof(tsdb_fsck_opts_t, resolve_dups)},
        {"last_write_wins", offsetof(tsdb_fsck_opts_t, last_write_wins)},
        {"delete_orphans", offsetof(tsdb_fsck_opts_t, delete_orphans)},
        {"delete_unknown", offsetof(tsdb_fsck_opts_t, delete_unknown)},
        {"delete_bad_values", offsetof(tsdb_fsck_opts_t, delete_bad_values)},
        {"delete_bad_rows", offsetof(tsdb_fsck_opts_t, delete_bad_rows)},
        {"delete_bad_compacts", offsetof(tsdb_fsck_opts_t, delete_bad_compacts)},
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (*(const int *)((const char *)&f->o + flags[i].off))
            oct_strbuf_printf(&t, "&%s", flags[i].name);
    int st = cli_live_http(f->live, "POST", t.ptr, NULL, 0, &resp, &f->eb);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    const json_value_t *msgs = NULL, *stats = NULL;
    if (st == 200 && json_parse(&a, resp.ptr, resp.len, 0, &v, &f->eb) == 0) {
        msgs = json_obj_get(v, "messages");
        stats = json_obj_get(v, "stats");
    }
    int rc = st < 0 ? st : 0;
    const size_t nst = sizeof f->st / sizeof(uint64_t);
    if (!rc && (!msgs || !stats || stats->n != nst)) {
        char msg[600];
        cli_live_error_message(&resp, msg, sizeof msg);
        rc = oct_err(&f->eb, OCT_EIO, "the TSD could not repair a row: %s", msg);
    }
    if (!rc) {
        for (const json_value_t *m = msgs->child; m; m = m->next)
            if (m->type == JSON_STRING) printf("%.*s\n", (int)m->len, m->str);
        fflush(stdout);
        uint64_t *sum = (uint64_t *)&f->st;
        size_t i = 0;
        for (const json_value_t *x = stats->child; x && i < nst; x = x->next, i++) {
            int64_t n = 0;
            if (x->type == JSON_NUMBER && json_number_i64(x, &n) == 0 && n > 0)
                sum[i] += (uint64_t)n;
        }
    }
    json_arena_free(&a);
    oct_strbuf_free(&t);
    oct_strbuf_free(&resp);
    return rc;
}

/* Beside a TSD: check read-only; a row with errors goes to the TSD, which
 * reads it again and repairs it as a local --fix would. */
static int fsck_row_live(fsck_run_t *f, const tsdb_row_t *row)
{
    tsdb_fsck_opts_t ro = f->o;
    ro.fix = 0;
    tsdb_fsck_stats_t one = {0};
    oct_strbuf_reset(&f->held);
    int rc = tsdb_fsck_row(f->db, &ro, row->part, row->raw, &one, fsck_hold, f, &f->eb);
    if (rc) return rc;
    if (tsdb_fsck_total_errors(&one)) return fsck_row_live_fix(f, row);
    if (f->held.len) {
        cli_progress_break(&f->prog);
        fputs(f->held.ptr, stdout);
        fflush(stdout);
    }
    uint64_t *sum = (uint64_t *)&f->st;
    const uint64_t *add = (const uint64_t *)&one;
    for (size_t i = 0; i < sizeof one / sizeof *add; i++)
        sum[i] += add[i];
    return 0;
}

static int fsck_row_cb(void *ctx, const tsdb_row_t *row)
{
    fsck_run_t *f = ctx;
    if (f->live) {
        int rc = fsck_row_live(f, row);
        cli_progress_update(&f->prog, 0, f->st.rows, 0);
        return rc;
    }
    int rc = tsdb_fsck_row(f->db, &f->o, row->part, row->raw, &f->st, fsck_report, f, &f->eb);
    cli_progress_update(&f->prog, 0, f->st.rows, 0);
    return rc;
}

static void fsck_print(const tsdb_fsck_stats_t *s)
{
#define L(name, v) printf("%s: %" PRIu64 "\n", name, (uint64_t)(v))
    L("Key Values Processed", s->kvs);
    L("Rows Processed", s->rows);
    L("Valid Datapoints", s->valid_dps);
    L("Annotations", s->annotations);
    L("Invalid Row Keys Found", s->bad_key);
    L("Invalid Rows Deleted", s->bad_key_fixed);
    L("Duplicate Datapoints", s->duplicates);
    L("Duplicate Datapoints Resolved", s->duplicates_fixed);
    L("Orphaned UID Rows", s->orphans);
    L("Orphaned UID Rows Deleted", s->orphans_fixed);
    L("Possible Future Objects", s->future);
    L("Unknown Objects", s->unknown);
    L("Unknown Objects Deleted", s->unknown_fixed);
    L("Unparseable Datapoint Values", s->bad_values);
    L("Unparseable Datapoint Values Deleted", s->bad_values_deleted);
    L("Improperly Encoded Floating Point Values", s->value_encoding);
    L("Improperly Encoded Floating Point Values Fixed", s->value_encoding_fixed);
    L("Unparseable Compacted Columns", s->bad_compacted);
    L("Unparseable Compacted Columns Deleted", s->bad_compacted_deleted);
    L("Out of Order Compacted Columns", s->fixable_compacted);
    L("Out of Order Compacted Columns Fixed", s->fixable_compacted_fixed);
    L("Block Cells", s->blocks);
    L("Unparseable Block Cells", s->bad_blocks);
    L("Unparseable Block Cells Deleted", s->bad_blocks_deleted);
    L("Datapoints Qualified for VLE ", s->vle);
    L("Datapoints Compressed with VLE", s->vle_fixed);
    L("Bytes Saved with VLE", s->vle_bytes);
    L("Total Errors", tsdb_fsck_total_errors(s));
    L("Total Correctable Errors", tsdb_fsck_total_errors(s));
    L("Total Errors Fixed", tsdb_fsck_total_fixed(s));
#undef L
}

int cli_cmd_fsck(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fsck_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("fsck", &argc, argv, &cfg);
    if (rc) return rc;
    fsck_run_t f = {0};
    int full = 0, fix_all = 0, quiet = 0;
    char **pos = xmalloc((size_t)argc * sizeof(char *));
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--full-scan"))
            full = 1;
        else if (!strcmp(a, "--fix"))
            f.o.fix = 1;
        else if (!strcmp(a, "--fix-all"))
            fix_all = 1;
        else if (!strcmp(a, "--resolve-duplicates"))
            f.o.resolve_dups = 1;
        else if (!strcmp(a, "--last-write-wins"))
            f.o.last_write_wins = 1;
        else if (!strcmp(a, "--delete-orphans"))
            f.o.delete_orphans = 1;
        else if (!strcmp(a, "--delete-unknown-columns"))
            f.o.delete_unknown = 1;
        else if (!strcmp(a, "--delete-bad-values"))
            f.o.delete_bad_values = 1;
        else if (!strcmp(a, "--delete-bad-rows"))
            f.o.delete_bad_rows = 1;
        else if (!strcmp(a, "--delete-bad-compacts"))
            f.o.delete_bad_compacts = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strcmp(a, "--compact") || !strcmp(a, "--sync"))
            ;
        else if (!strcmp(a, "--threads") && i + 1 < argc)
            i++;
        else if (!strncmp(a, "--threads=", 10))
            ;
        else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "octsdb fsck: unknown flag %s\n", a);
            fsck_usage(stderr);
            free(pos);
            oct_config_free(cfg);
            return CLI_EXIT_USAGE;
        } else
            pos[npos++] = argv[i];
    }
    if (fix_all)
        f.o.fix = f.o.resolve_dups = f.o.delete_orphans = f.o.delete_unknown =
            f.o.delete_bad_values = f.o.delete_bad_rows = f.o.delete_bad_compacts = 1;
    if (oct_config_get_bool(cfg, "tsd.storage.fix_duplicates")) f.o.last_write_wins = 1;
    cli_queries_t qs = {0};
    if (npos > 0) {
        rc = cli_queries_parse("fsck", pos, npos, oct_config_get(cfg, "tsd.core.timezone"), &qs);
        if (rc) {
            fsck_usage(stderr);
            free(pos);
            oct_config_free(cfg);
            return rc;
        }
    } else if (!full) {
        fprintf(stderr, "octsdb fsck: Must supply a query or use the '--full-scan' flag\n");
        fsck_usage(stderr);
        free(pos);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    free(pos);
    tsdb_t *db;
    if (f.o.fix) {
        /* read-write, or read-only beside a TSD that repairs (f.live) */
        rc = cli_open_db_beside("fsck", cfg, 0, &db, &f.live);
    } else {
        rc = cli_open_db_for_read("fsck", cfg, &db);
    }
    if (rc) {
        cli_queries_free(&qs);
        oct_config_free(cfg);
        return rc;
    }
    f.db = db;
    oct_errbuf_clear(&f.eb);
    /* Progress only when stdout (the report) is not the same terminal. */
    cli_progress_init(&f.prog, "rows", 0, quiet || isatty(1));
    rc = cli_rows_foreach(db, npos > 0 ? &qs : NULL, fsck_row_cb, &f, &f.eb);
    cli_progress_update(&f.prog, 0, f.st.rows, 1);
    cli_progress_break(&f.prog);
    int status;
    if (rc) {
        fprintf(stderr, "octsdb fsck: %s\n", f.eb.msg[0] ? f.eb.msg : oct_strerror(rc));
        status = rc == OCT_ENOSUCHNAME ? CLI_EXIT_NOTFOUND : CLI_EXIT_STORAGE;
    } else {
        fsck_print(&f.st);
        status = tsdb_fsck_total_errors(&f.st) ? 1 : 0;
    }
    fflush(stdout);
    tsdb_close(db);
    cli_live_close(f.live);
    oct_strbuf_free(&f.held);
    cli_queries_free(&qs);
    oct_config_free(cfg);
    return status;
}
