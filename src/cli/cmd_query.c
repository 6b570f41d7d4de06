/* cmd_query.c -- `octsdb query [+gnuplot opts] START [END] <q>...`, as
 * OpenTSDB's `tsdb query` (CliQuery): runs each query through the executor
 * (exec/exec.h) and prints one line per point,
 * "<metric> <ts_ms> <value> {k=v, ...}": timestamps always in milliseconds,
 * integers as integers, other values with "%f", and the tags common to the
 * series of the result.
 *
 * Each <q> (AGG [rate] [counter[,max[,reset]]] [downsample N AGG] METRIC
 * [k=v...]) is turned into the equivalent /api/query `m=` expression
 * ("AGG:Nms-AGG:rate{counter,max,reset}:METRIC{k=v,...}"; N is in ms as
 * OpenTSDB passes it) and parsed by query_parse_m, so the CLI and the HTTP
 * API share one grammar and one executor. START and END are truncated to
 * whole seconds, as OpenTSDB does.
 *
 * Differences (docs/compat.md): --graph (gnuplot files) is not supported;
 * "+option" gnuplot arguments are accepted and ignored; tags are printed
 * sorted by name; a value of fill policy null prints "null". */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "exec/exec.h"

static void query_usage(FILE *f)
{
    fprintf(f, "usage: octsdb query [Gnuplot opts] START-DATE [END-DATE] <query> [queries...]\n"
               "A query has the form:\n"
               "  FUNC [rate] [counter,max,reset] [downsample N FUNC] SERIES [TAGS]\n"
               "For example:\n"
               " 2010/03/11-20:57 sum my.awsum.metric host=blah"
               " sum some.other.metric host=blah state=foo\n"
               "Dates must follow this format: YYYY/MM/DD-HH:MM[:SS] or Unix Epoch\n"
               " or relative time such as 1y-ago, 2d-ago, etc.\n"
               "N (downsample interval) is in milliseconds.\n"
               "Supported values for FUNC:");
    for (const char *const *a = query_agg_names(); *a; a++)
        fprintf(f, " %s", *a);
    fprintf(f, "\nGnuplot options are of the form: +option=value (accepted, ignored)\n");
    cli_print_common_flags(f);
}

/* The `m=` expression of one CLI query. */
static void m_expr(const cli_query_t *q, oct_strbuf_t *sb)
{
    oct_strbuf_reset(sb);
    oct_strbuf_printf(sb, "%s:", q->agg);
    if (q->has_downsample) oct_strbuf_printf(sb, "%" PRId64 "ms-%s:", q->ds_ms, q->ds_agg);
    if (q->rate) {
        oct_strbuf_puts(sb, "rate");
        if (q->counter) {
            oct_strbuf_puts(sb, "{counter");
            if (q->counter_max != INT64_MAX || q->reset_value != 0) {
                oct_strbuf_puts(sb, ",");
                if (q->counter_max != INT64_MAX) oct_strbuf_printf(sb, "%" PRId64, q->counter_max);
                if (q->reset_value != 0) oct_strbuf_printf(sb, ",%" PRId64, q->reset_value);
            }
            oct_strbuf_puts(sb, "}");
        }
        oct_strbuf_puts(sb, ":");
    }
    oct_strbuf_puts(sb, q->metric);
    if (q->n_tags) {
        oct_strbuf_puts(sb, "{");
        for (size_t i = 0; i < q->n_tags; i++)
            oct_strbuf_printf(sb, "%s%s=%s", i ? "," : "", q->tagk[i], q->tagv[i]);
        oct_strbuf_puts(sb, "}");
    }
}

typedef struct {
    oct_strbuf_t line, tags;
} query_out_t;

static int print_result(void *ctx, const exec_result_t *r)
{
    query_out_t *o = ctx;
    oct_strbuf_reset(&o->tags);
    oct_strbuf_puts(&o->tags, "{");
    for (size_t i = 0; i < r->n_tags; i++)
        oct_strbuf_printf(&o->tags, "%s%s=%s", i ? ", " : "", r->tagk[i], r->tagv[i]);
    oct_strbuf_puts(&o->tags, "}");
    const char *tags = oct_strbuf_cstr(&o->tags);
    for (size_t i = 0; i < r->n_dps; i++) {
        const query_dp_t *d = &r->dps[i];
        oct_strbuf_t *l = &o->line;
        oct_strbuf_reset(l);
        oct_strbuf_printf(l, "%s %" PRId64 " ", r->metric, d->ts_ms);
        if (d->is_null)
            oct_strbuf_puts(l, "null");
        else if (d->is_int)
            oct_strbuf_printf(l, "%" PRId64, d->v.i);
        else if (isnan(d->v.f))
            oct_strbuf_puts(l, "NaN");
        else if (isinf(d->v.f))
            oct_strbuf_puts(l, d->v.f > 0 ? "Infinity" : "-Infinity");
        else
            oct_strbuf_printf(l, "%f", d->v.f);
        oct_strbuf_printf(l, " %s\n", tags);
        fwrite(l->ptr, 1, l->len, stdout);
    }
    return 0;
}

int cli_cmd_query(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        query_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("query", &argc, argv, &cfg);
    if (rc) return rc;
    char **pos = xmalloc((size_t)argc * sizeof(char *));
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "octsdb query: %s %s\n", argv[i],
                    !strncmp(argv[i], "--graph", 7) ? "is not supported" : ": unknown flag");
            query_usage(stderr);
            free(pos);
            oct_config_free(cfg);
            return CLI_EXIT_USAGE;
        }
        pos[npos++] = argv[i];
    }
    const char *tz = oct_config_get(cfg, "tsd.core.timezone");
    cli_queries_t qs;
    rc = cli_queries_parse("query", pos, npos, tz, &qs);
    free(pos);
    if (rc) {
        query_usage(stderr);
        oct_config_free(cfg);
        return rc;
    }
    /* OpenTSDB's CLI queries in whole seconds */
    query_t q = {0};
    q.start_ms = qs.start_ms / 1000 * 1000;
    q.end_ms = qs.end_ms / 1000 * 1000;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    oct_strbuf_t m = OCT_STRBUF_INIT;
    int status = CLI_EXIT_OK;
    for (size_t i = 0; i < qs.n && status == CLI_EXIT_OK; i++) {
        m_expr(&qs.q[i], &m);
        if (query_parse_m(&q, oct_strbuf_cstr(&m), &eb)) {
            fprintf(stderr, "octsdb query: %s\n", eb.msg);
            status = CLI_EXIT_USAGE;
        }
    }
    tsdb_t *db = NULL;
    if (status == CLI_EXIT_OK)
        status = cli_open_db_beside("query", cfg, TSDB_OPEN_INDEX, &db, NULL);
    if (status == CLI_EXIT_OK) {
        exec_opts_t opts;
        exec_opts_from_config(&opts, cfg);
        query_out_t out = {OCT_STRBUF_INIT, OCT_STRBUF_INIT};
        rc = exec_query(db, &q, &opts, print_result, &out, NULL, &eb);
        if (rc) {
            fprintf(stderr, "octsdb query: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
            status = rc == OCT_ENOSUCHNAME                 ? CLI_EXIT_NOTFOUND
                     : rc == OCT_EIO || rc == OCT_ECORRUPT ? CLI_EXIT_STORAGE
                                                           : CLI_EXIT_NOTFOUND;
        }
        fflush(stdout);
        oct_strbuf_free(&out.line);
        oct_strbuf_free(&out.tags);
    }
    if (db) tsdb_close(db);
    oct_strbuf_free(&m);
    query_free(&q);
    cli_queries_free(&qs);
    oct_config_free(cfg);
    return status;
}
