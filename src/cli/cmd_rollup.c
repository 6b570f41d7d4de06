/* cmd_rollup.c -- `octsdb rollup --backfill [--start=T] [--end=T]
 * [--metric=M] [--quiet]`: computes the auto rollups (tsd.rollups.auto) of
 * data already stored -- flushed before auto was turned on, or a range to
 * recompute -- and writes them over what the rollup tables hold
 * (tsdb_rollup_backfill, docs/rollups.md). A recomputation, never an
 * addition: running it twice gives the same cells.
 *
 * The series go in slices of CLI_ROLLUP_SLICE, a progress line on a
 * terminal between slices, then one summary line on stdout:
 *   Backfilled N series, H series-hours, C rollup cells (of T series) in S s
 * When a running TSD holds the data dir, the TSD does each slice (POST
 * /api/octsdb/rollup/backfill, docs/cli-live.md) while it keeps serving;
 * its own configuration decides the rollups then.
 * Exit status 0, 1 unknown metric, 2 usage, 3 storage error or auto
 * rollups off. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "query/query.h"
#include "tsdb/rollup.h"

#define CLI_ROLLUP_SLICE 64 /* series per call: a progress step */

static void rollup_usage(FILE *f)
{
    fprintf(f,
            "usage: octsdb rollup --backfill [--start=TIME] [--end=TIME] [--metric=NAME] [flags]\n"
            "Computes the rollups the TSD makes itself (tsd.rollups.auto) from the raw data\n"
            "already stored and writes them over the rollup tables' cells: for data flushed\n"
            "before auto rollups were on, or to recompute a range. Running it twice gives the\n"
            "same cells. The hours are widened to whole periods of the longer intervals.\n"
            "Beside a running TSD, the TSD does it while it keeps serving.\n"
            "  --backfill      Required (the one action)\n"
            "  --start=TIME    From (as `octsdb query` takes: 2013/01/01-00:00:00, epoch\n"
            "                  seconds or ms, 1d-ago); default: the beginning\n"
            "  --end=TIME      To; default: now\n"
            "  --metric=NAME   That metric's series only\n"
            "  --quiet         No progress line (drawn on stderr only when it is a terminal)\n"
            "\nExit status: 0 done, 1 unknown metric, 2 usage, 3 storage error or auto\n"
            "rollups off.\n");
    cli_print_common_flags(f);
}

/* One slice through the TSD: the body of tsdb_rollup_backfill_t, the
 * answer into st. */
static int rollup_live(cli_live_t *l, const tsdb_rollup_backfill_t *o,
                       tsdb_rollup_backfill_stats_t *st, int *status, oct_errbuf_t *eb)
{
    oct_strbuf_t body = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &body);
    json_w_obj_begin(&w);
    json_w_key(&w, "start");
    json_w_int(&w, o->start_ms);
    json_w_key(&w, "end");
    json_w_int(&w, o->end_ms);
    json_w_key(&w, "from");
    json_w_uint(&w, o->from);
    json_w_key(&w, "limit");
    json_w_uint(&w, o->limit);
    if (o->metric) {
        json_w_key(&w, "metric");
        json_w_str(&w, o->metric);
    }
    json_w_obj_end(&w);
    int st_http =
        cli_live_http(l, "POST", "/api/octsdb/rollup/backfill", body.ptr, body.len, &resp, eb);
    int rc = st_http < 0 ? st_http : 0;
    *status = st_http;
    json_arena_t a = JSON_ARENA_INIT;
    if (st_http >= 0 && st_http != 200) {
        char msg[600];
        cli_live_error_message(&resp, msg, sizeof msg);
        rc = oct_err(eb, st_http == 400 ? OCT_EINVAL : OCT_EIO, "%s", msg);
    } else if (st_http == 200) {
        json_value_t *v = NULL;
        static const char *const keys[] = {"next", "total", "series", "hours", "cells"};
        int64_t x[5];
        int ok = json_parse(&a, resp.ptr, resp.len, 0, &v, eb) == 0;
        for (int i = 0; ok && i < 5; i++) {
            const json_value_t *f = json_obj_get(v, keys[i]);
            ok = f && f->type == JSON_NUMBER && !json_number_i64(f, &x[i]) && x[i] >= 0;
        }
        if (!ok) {
            rc = oct_err(eb, OCT_EIO, "unexpected answer from the TSD: %.200s", resp.ptr);
        } else {
            st->next = (size_t)x[0];
            st->total = (size_t)x[1];
            st->series = (uint64_t)x[2];
            st->hours = (uint64_t)x[3];
            st->cells = (uint64_t)x[4];
        }
    }
    json_arena_free(&a);
    oct_strbuf_free(&body);
    oct_strbuf_free(&resp);
    return rc;
}

static int rollup_time(const char *flag, const char *s, int64_t now_ms, int64_t *out)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (query_parse_time(s, NULL, now_ms, out, &eb) == 0 && *out >= 0) return 0;
    fprintf(stderr, "octsdb rollup: bad %s '%s': %s\n", flag, s,
            eb.msg[0] ? eb.msg : "before the epoch");
    return CLI_EXIT_USAGE;
}

int cli_cmd_rollup(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        rollup_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("rollup", &argc, argv, &cfg);
    if (rc) return rc;
    int64_t now_ms = oct_clock_wall_ms();
    tsdb_rollup_backfill_t o = {.start_ms = 0, .end_ms = now_ms, .limit = CLI_ROLLUP_SLICE};
    int backfill = 0, quiet = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--backfill"))
            backfill = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else if (!strncmp(a, "--start=", 8))
            rc = rollup_time("--start", a + 8, now_ms, &o.start_ms);
        else if (!strncmp(a, "--end=", 6))
            rc = rollup_time("--end", a + 6, now_ms, &o.end_ms);
        else if (!strncmp(a, "--metric=", 9) && a[9])
            o.metric = a + 9;
        else {
            fprintf(stderr, "octsdb rollup: unexpected argument '%s'\n", a);
            rc = CLI_EXIT_USAGE;
        }
    }
    if (!rc && !backfill) {
        fprintf(stderr, "octsdb rollup: --backfill is required (the one action implemented)\n");
        rc = CLI_EXIT_USAGE;
    }
    if (!rc && o.end_ms < o.start_ms) {
        fprintf(stderr, "octsdb rollup: --end is before --start\n");
        rc = CLI_EXIT_USAGE;
    }
    if (rc) {
        if (rc == CLI_EXIT_USAGE) rollup_usage(stderr);
        oct_config_free(cfg);
        return rc;
    }
    tsdb_t *db;
    cli_live_t *live;
    rc = cli_open_or_live("rollup", cfg, &db, &live);
    oct_config_free(cfg);
    if (rc) return rc;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    cli_progress_t prog;
    cli_progress_init(&prog, "series", 0, quiet);
    tsdb_rollup_backfill_stats_t sum = {0};
    int64_t t0 = oct_clock_mono_ns();
    int status = 0;
    for (;;) {
        tsdb_rollup_backfill_stats_t st = {0};
        rc = live ? rollup_live(live, &o, &st, &status, &eb)
                  : tsdb_rollup_backfill(db, &o, &st, &eb);
        sum.series += st.series;
        sum.hours += st.hours;
        sum.cells += st.cells;
        sum.total = st.total;
        if (rc) break;
        o.from = st.next;
        cli_progress_update(&prog, 0, st.next, 0);
        if (st.next >= st.total) break;
    }
    cli_progress_update(&prog, 0, o.from, 1);
    cli_progress_break(&prog);
    if (live)
        cli_live_close(live);
    else
        tsdb_close(db);
    if (rc) {
        fprintf(stderr, "octsdb rollup: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        int unknown = rc == OCT_ENOSUCHNAME || (status == 400 && strstr(eb.msg, "No such name"));
        return unknown ? CLI_EXIT_NOTFOUND : CLI_EXIT_STORAGE;
    }
    printf("Backfilled %" PRIu64 " series, %" PRIu64 " series-hours, %" PRIu64
           " rollup cells (of %zu series) in %.1f s\n",
           sum.series, sum.hours, sum.cells, sum.total, (double)(oct_clock_mono_ns() - t0) / 1e9);
    return CLI_EXIT_OK;
}
