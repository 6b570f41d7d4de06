/* exec_collect.c -- exec_query's results gathered into a series set
 * (exec.h: exec_query_collect), for the expression endpoints, which need
 * every series of a metric before they can join them. */
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "exec/exec.h"

typedef struct {
    expr_set_t *out;
    int64_t shift_ms;
    uint64_t *held, max_held;
    oct_errbuf_t *eb;
} collect_t;

static int collect_one(void *ctx, const exec_result_t *r)
{
    collect_t *c = ctx;
    *c->held += r->n_dps;
    if (c->max_held && *c->held > c->max_held)
        return oct_err(c->eb, OCT_ERANGE,
                       "Sorry, this query needs to hold more than our limit of %llu data points "
                       "at once. Please try filtering using more tags, downsampling or decrease "
                       "your time range.",
                       (unsigned long long)c->max_held);
    expr_series_t *s = expr_set_add(c->out, r->metric);
    expr_series_set_tags(s, r->n_tags, r->tagk, r->tagv);
    expr_series_set_agg(s, r->n_agg_tags, r->agg_tags);
    s->dps = xmalloc((r->n_dps ? r->n_dps : 1) * sizeof *s->dps);
    if (r->n_dps) memcpy(s->dps, r->dps, r->n_dps * sizeof *s->dps);
    s->n = r->n_dps;
    for (size_t i = 0; i < s->n; i++)
        s->dps[i].ts_ms += c->shift_ms;
    return 0;
}

int exec_query_collect(tsdb_t *db, const query_t *q, const exec_opts_t *opts, int64_t shift_ms,
                       uint64_t *held, expr_set_t *out, oct_errbuf_t *eb)
{
    collect_t c = {out, shift_ms, held, opts->max_held_points, eb};
    return exec_query(db, q, opts, collect_one, &c, NULL, eb);
}
