/* api_gexp.c -- GET /api/query/gexp: Graphite-style functions over metric
 * sub-queries (query/gexp.h; docs/expressions.md section 5), answered in
 * /api/query's shape: one object per output series with metric, tags,
 * aggregateTags and dps.
 *
 * Parameters: start (required), end, timezone, ms (millisecond
 * timestamps), arrays, use_calendar, no_annotations (there are none), and
 * one or more exp=. show_tsuids, show_query, show_stats, show_summary and
 * global_annotations are refused (400): expression results carry none of
 * those. An m= is refused: 2.4 runs it and
 * drops its results (and misaligns the rest), so a query that names one is
 * asking for something gexp does not answer. Every metric sub-query inside
 * an expression runs through exec_query_collect; syntax and argument errors
 * are 400 with 2.4's texts (2.4 answers them 500, docs/compat.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec.h"
#include "query/gexp.h"
#include "query/query_body.h"
#include "server/api_int.h"

typedef struct {
    api_call_t *c;
    const exec_opts_t *opts;
    int64_t start_ms, end_ms;
    const char *tz;
    int use_calendar;
    uint64_t held; /* points of every sub-query's series, held at once */
} gctx_t;

/* gexp_fetch_fn: one m= sub-query over the shifted window. */
static int fetch(void *ctx, const char *m, int64_t shift_ms, expr_set_t *out, oct_errbuf_t *eb)
{
    gctx_t *g = ctx;
    query_t q;
    memset(&q, 0, sizeof q);
    int rc = query_parse_m(&q, m, eb);
    if (!rc) {
        q.start_ms = g->start_ms - shift_ms;
        q.end_ms = g->end_ms - shift_ms;
        q.timezone = g->tz ? xstrdup(g->tz) : NULL;
        q.no_annotations = 1;
        for (size_t i = 0; i < q.n_subs; i++)
            if (g->use_calendar && q.subs[i].has_downsample) q.subs[i].ds.calendar = 1;
        rc = exec_query_collect(g->c->tsd->db, &q, g->opts, shift_ms, &g->held, out, eb);
    }
    query_free(&q);
    return rc;
}

static void write_value(json_writer_t *w, const query_dp_t *d)
{
    if (d->is_int)
        json_w_int(w, d->v.i);
    else
        api_w_double(w, d->v.f);
}

static void write_series(json_writer_t *w, const expr_series_t *s, int ms, int arrays)
{
    json_w_obj_begin(w);
    json_w_key(w, "metric");
    json_w_str(w, s->metric);
    api_w_tags(w, "tags", s->n_tags, (const char *const *)s->tagk, (const char *const *)s->tagv,
               "aggregateTags", s->n_agg, (const char *const *)s->agg);
    json_w_key(w, "dps");
    if (arrays) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < s->n; i++) {
            json_w_arr_begin(w);
            json_w_int(w, ms ? s->dps[i].ts_ms : s->dps[i].ts_ms / 1000);
            write_value(w, &s->dps[i]);
            json_w_arr_end(w);
        }
        json_w_arr_end(w);
    } else {
        json_w_obj_begin(w);
        char key[24];
        for (size_t i = 0; i < s->n; i++) {
            const query_dp_t *d = &s->dps[i];
            int kl =
                snprintf(key, sizeof key, "%lld", (long long)(ms ? d->ts_ms : d->ts_ms / 1000));
            json_w_keyn(w, key, (size_t)kl);
            write_value(w, d);
        }
        json_w_obj_end(w);
    }
    json_w_obj_end(w);
}

void api_query_gexp(api_call_t *c)
{
    if (c->verb != API_GET) {
        api_method_not_allowed(c);
        return;
    }
    char start[256], end[256], tz[128];
    if (!http_param(c->req, "start", start, sizeof start) || !start[0]) {
        http_error(c->resp, 400, "Missing parameter <code>start</code>", NULL);
        return;
    }
    if (api_flag(c, "m")) {
        http_error(c->resp, 400, "gexp answers exp= only; send m= sub-queries to /api/query", NULL);
        return;
    }
    /* expression results have no TSUIDs, sub-query or per-query stats */
    static const char *const refused[] = {"show_tsuids", "show_query", "show_stats", "show_summary",
                                          "global_annotations"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        if (api_flag(c, refused[i])) {
            char msg[128];
            snprintf(msg, sizeof msg, "%s is not supported by /api/query/gexp", refused[i]);
            http_error(c->resp, 400, msg, NULL);
            return;
        }
    api_strlist_t exps = {NULL, 0, &c->arena};
    http_param_each(c->req, "exp", api_strlist_collect, &exps);
    query_t q; /* only for the times, as /api/query parses them */
    memset(&q, 0, sizeof q);
    int have_end = http_param(c->req, "end", end, sizeof end);
    if (http_param(c->req, "timezone", tz, sizeof tz) && tz[0]) q.timezone = xstrdup(tz);
    query_body_err_t err;
    expr_set_t all = {0};
    oct_errbuf_t eb;
    if (query_body_set_times(&q, start, have_end ? end : NULL, oct_clock_wall_ms(), &err)) {
        http_error(c->resp, err.status, err.message, err.details[0] ? err.details : NULL);
        goto out;
    }
    if (exps.n == 0) {
        http_error(c->resp, 400, "Missing parameter <code>exp</code>", NULL);
        goto out;
    }
    exec_opts_t opts;
    exec_opts_from_config(&opts, c->tsd->cfg);
    gctx_t g = {c, &opts, q.start_ms, q.end_ms, q.timezone, api_flag(c, "use_calendar"), 0};
    for (size_t i = 0; i < exps.n; i++) {
        gexp_node_t *n;
        int rc = gexp_parse(exps.v[i], &n, &eb);
        if (!rc) {
            expr_set_t one = {0};
            rc = gexp_eval(n, q.start_ms, q.end_ms, fetch, &g, &one, &eb);
            expr_set_move(&all, &one);
            expr_set_free(&one);
            gexp_free(n);
        }
        if (rc) {
            api_query_error(c, rc, eb.msg);
            goto out;
        }
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    int ms = api_flag(c, "ms"), arrays = api_flag(c, "arrays");
    for (size_t i = 0; i < all.n; i++)
        write_series(&w, &all.s[i], ms, arrays);
    json_w_arr_end(&w);
    c->resp->status = 200;
out:
    expr_set_free(&all);
    free(exps.v);
    query_free(&q);
}
