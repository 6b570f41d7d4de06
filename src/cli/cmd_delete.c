/* cmd_delete.c -- `octsdb delete --metric=M [--tags=k=v,..] [--start=T]
 * [--end=T] [--dry-run] [--delete-uid]`: octsdb's exact delete
 * (docs/delete.md, tsdb_delete). On a stopped data dir it opens the database
 * itself (replaying the write-ahead log first); beside a running TSD the TSD
 * does it (POST /api/delete, docs/cli-live.md), with the same output:
 *   series: N
 *   points: N
 *   ... (every count of tsdb_delete_counts_t), "would be" with --dry-run.
 * Exit status 0, 1 no such name, 2 usage (a bad time too), 3 storage error
 * or refused. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "tsdb/delete.h"

static void delete_usage(FILE *f)
{
    fprintf(f, "usage: octsdb delete --metric=M [--tags=k=v[,k=v..]] [--start=T [--end=T]]\n"
               "                     [--dry-run] [--delete-uid] [flags]\n"
               "Deletes exactly the points of metric M (the series carrying every given tag)\n"
               "with start <= time <= end (ms; 2.4 time strings or seconds/ms numbers; end\n"
               "defaults to now). Without tags and times: the whole metric (data in every\n"
               "table, histograms, annotations, TSMeta); --delete-uid then deletes its name.\n"
               "--dry-run prints what would go and changes nothing. Beside a running TSD the\n"
               "TSD deletes (it needs tsd.http.query.allow_delete). See docs/delete.md.\n"
               "\nExit status: 0 done, 1 no such name, 2 usage, 3 storage error or refused.\n");
    cli_print_common_flags(f);
}

typedef struct {
    const char *metric, *tags, *start, *end;
    int dry_run, delete_uid;
} del_args_t;

/* --name=value or --name value; returns the value or NULL. */
static const char *flag_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n)) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

static int parse_args(int argc, char **argv, del_args_t *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = flag_value(argc, argv, &i, "--metric")))
            a->metric = v;
        else if ((v = flag_value(argc, argv, &i, "--tags")))
            a->tags = v;
        else if ((v = flag_value(argc, argv, &i, "--start")))
            a->start = v;
        else if ((v = flag_value(argc, argv, &i, "--end")))
            a->end = v;
        else if (!strcmp(argv[i], "--dry-run"))
            a->dry_run = 1;
        else if (!strcmp(argv[i], "--delete-uid"))
            a->delete_uid = 1;
        else {
            fprintf(stderr, "octsdb delete: unexpected argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!a->metric || !a->metric[0]) {
        fprintf(stderr, "octsdb delete: --metric is required\n");
        return -1;
    }
    if (a->end && !a->start) {
        fprintf(stderr, "octsdb delete: --end needs --start\n");
        return -1;
    }
    return 0;
}

/* "k=v,k=v" into slices k0, v0, ... (pointing into s, which is modified). */
static int split_tags(char *s, oct_slice_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!s || !*s) return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    oct_slice_t *t = xmalloc(2 * cap * sizeof *t);
    for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            fprintf(stderr, "octsdb delete: bad tag '%s' (want k=v)\n", tok);
            free(t);
            return -1;
        }
        *eq = 0;
        t[2 * *n] = oct_slice_str(tok);
        t[2 * *n + 1] = oct_slice_str(eq + 1);
        (*n)++;
    }
    *out = t;
    return 0;
}

static void print_counts(const tsdb_delete_counts_t *c, int dry)
{
    const char *w = dry ? " (would be deleted)" : "";
    printf("series: %" PRIu64 "%s\npoints: %" PRIu64 "\nhistograms: %" PRIu64
           "\nannotations: %" PRIu64 "\nrows deleted: %" PRIu64 "\nrows rewritten: %" PRIu64
           "\nrollup rows: %" PRIu64 "\nrollup cells: %" PRIu64
           "\nrollup cells recomputed: %" PRIu64 "\nrollup cells dropped: %" PRIu64
           "\nmeta rows: %" PRIu64 "\nseries forgotten: %" PRIu64 "\nuid deleted: %s\n",
           c->series, w, c->points, c->histograms, c->annotations, c->rows_deleted,
           c->rows_rewritten, c->rollup_rows, c->rollup_cells, c->rollup_recomputed,
           c->rollup_dropped, c->meta_rows, c->forgotten, c->uid_deleted ? "yes" : "no");
}

/* Beside a running TSD: the request goes to POST /api/delete. */
static int delete_live(cli_live_t *l, const del_args_t *a, const oct_slice_t *tags, size_t nt,
                       tsdb_delete_counts_t *c, oct_errbuf_t *eb)
{
    oct_strbuf_t body = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    json_writer_t jw;
    json_w_init(&jw, &body);
    json_w_obj_begin(&jw);
    json_w_key(&jw, "metric");
    json_w_str(&jw, a->metric);
    if (nt) {
        json_w_key(&jw, "tags");
        json_w_obj_begin(&jw);
        for (size_t i = 0; i < nt; i++) {
            json_w_keyn(&jw, (const char *)tags[2 * i].ptr, tags[2 * i].len);
            json_w_strn(&jw, (const char *)tags[2 * i + 1].ptr, tags[2 * i + 1].len);
        }
        json_w_obj_end(&jw);
    }
    const char *tk[2] = {"start", "end"}, *tv[2] = {a->start, a->end};
    for (int i = 0; i < 2; i++)
        if (tv[i]) {
            json_w_key(&jw, tk[i]);
            json_w_str(&jw, tv[i]);
        }
    json_w_key(&jw, "dryRun");
    json_w_bool(&jw, a->dry_run);
    json_w_key(&jw, "deleteUid");
    json_w_bool(&jw, a->delete_uid);
    json_w_obj_end(&jw);
    int st = cli_live_http(l, "POST", "/api/delete", body.ptr, body.len, &resp, eb);
    int rc = st < 0 ? st : 0;
    json_arena_t ar = JSON_ARENA_INIT;
    if (st >= 0 && st != 200) {
        char msg[600];
        cli_live_error_message(&resp, msg, sizeof msg);
        rc = oct_err(eb, strstr(msg, "No such name") ? OCT_ENOSUCHNAME : OCT_EIO, "%s", msg);
    } else if (st == 200) {
        json_value_t *v;
        const char *k[] = {"series",
                           "points",
                           "histograms",
                           "annotations",
                           "rowsDeleted",
                           "rowsRewritten",
                           "rollupRows",
                           "rollupCells",
                           "rollupCellsRecomputed",
                           "rollupCellsDropped",
                           "metaRows",
                           "seriesForgotten"};
        uint64_t *f[] = {&c->series,         &c->points,       &c->histograms,
                         &c->annotations,    &c->rows_deleted, &c->rows_rewritten,
                         &c->rollup_rows,    &c->rollup_cells, &c->rollup_recomputed,
                         &c->rollup_dropped, &c->meta_rows,    &c->forgotten};
        rc = json_parse(&ar, resp.ptr, resp.len, 0, &v, eb);
        for (size_t i = 0; i < sizeof k / sizeof *k && rc == 0; i++) {
            const json_value_t *x = json_obj_get(v, k[i]);
            int64_t n;
            if (!x || json_number_i64(x, &n) || n < 0)
                rc = oct_err(eb, OCT_EIO, "unexpected answer from the TSD: %.200s", resp.ptr);
            else
                *f[i] = (uint64_t)n;
        }
        const json_value_t *u = rc == 0 ? json_obj_get(v, "uidDeleted") : NULL;
        c->uid_deleted = u && u->type == JSON_TRUE;
    }
    json_arena_free(&ar);
    oct_strbuf_free(&body);
    oct_strbuf_free(&resp);
    return rc;
}

static void progress_cb(void *ctx, uint64_t rows)
{
    cli_progress_update(ctx, 0, rows, 0);
}

/* On the data dir itself. */
static int delete_local(tsdb_t *db, const del_args_t *a, const oct_slice_t *tags, size_t nt,
                        tsdb_delete_counts_t *c, oct_errbuf_t *eb)
{
    tsdb_delete_spec_t sp = {.start_ms = 0, .end_ms = INT64_MAX};
    uint64_t *uids = xmalloc((2 * nt + 1) * sizeof *uids);
    int rc = tsdb_delete_resolve(db, oct_slice_str(a->metric), tags, nt, uids, &sp, eb);
    int64_t now = oct_clock_wall_ms();
    if (rc == 0 && a->start) {
        sp.end_ms = now;
        rc = query_parse_time(a->start, NULL, now, &sp.start_ms, eb);
        if (rc == 0 && a->end) rc = query_parse_time(a->end, NULL, now, &sp.end_ms, eb);
    }
    if (rc == 0) {
        sp.whole_metric = nt == 0 && !a->start;
        sp.dry_run = a->dry_run;
        sp.delete_uid = a->delete_uid;
        cli_progress_t p;
        cli_progress_init(&p, "rows", 0, 0);
        sp.progress = progress_cb;
        sp.progress_ctx = &p;
        rc = tsdb_delete(db, &sp, c, eb);
        cli_progress_update(&p, 0, 0, 1);
        cli_progress_break(&p);
    }
    free(uids);
    return rc;
}

int cli_cmd_delete(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        delete_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("delete", &argc, argv, &cfg);
    if (rc) return rc;
    del_args_t a;
    char *tagbuf = NULL;
    oct_slice_t *tags = NULL;
    size_t nt = 0;
    if (parse_args(argc, argv, &a) ||
        (tagbuf = a.tags ? xstrdup(a.tags) : NULL, split_tags(tagbuf, &tags, &nt))) {
        delete_usage(stderr);
        free(tagbuf);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    cli_live_t *live;
    rc = cli_open_or_live("delete", cfg, &db, &live);
    oct_config_free(cfg);
    if (rc) {
        free(tags);
        free(tagbuf);
        return rc;
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    tsdb_delete_counts_t c = {0};
    if (live) {
        rc = delete_live(live, &a, tags, nt, &c, &eb);
        cli_live_close(live);
    } else {
        rc = delete_local(db, &a, tags, nt, &c, &eb);
        tsdb_close(db);
    }
    free(tags);
    free(tagbuf);
    if (rc) {
        fprintf(stderr, "octsdb delete: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return rc == OCT_ENOSUCHNAME ? CLI_EXIT_NOTFOUND
               : rc == OCT_EPARSE    ? CLI_EXIT_USAGE
                                     : CLI_EXIT_STORAGE;
    }
    print_counts(&c, a.dry_run);
    return CLI_EXIT_OK;
}
