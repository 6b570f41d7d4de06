/* api_exp.c -- POST /api/query/exp, OpenTSDB 2.3+'s expression query
 * (docs/expressions.md section 4): a time span, named filters, metrics
 * (each one /api/query sub-query run by exec_query_collect), expressions
 * over metric and expression ids (query/expr.h), and the outputs to return.
 *
 * Order of work: bind and validate the whole body (2.4's checks and texts,
 * answered 400 in its error JSON), run every metric, then evaluate the
 * expressions an output needs, depth first (an expression's inputs before
 * it; a cycle is an error), then write each output as rows
 * [ts, v1, ..., vn] with dpsMeta and meta, and the query echoed.
 *
 * Where 2.4 ignores what it was asked (a downsampler's fillPolicy, a
 * metric's timeOffset), octsdb applies it (docs/compat.md). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec.h"
#include "query/expr.h"
#include "query/query.h"
#include "server/api_int.h"

typedef struct {
    const char *id;
    query_filter_t *f;
    size_t n;
    int explicit_tags;
} xfilter_t;

typedef struct {
    const char *id, *metric;
    int filter; /* index into filters, -1 = none */
    const query_agg_t *agg;
    double fill;
    int64_t offset_ms;
    expr_set_t set;
} xmetric_t;

typedef struct {
    const char *id;
    expr_t *e;
    expr_join_t join;
    double fill;
    int state;    /* 0 not evaluated, 1 being evaluated, 2 done */
    size_t *vars; /* per variable: metric index, or n_metrics + expression index */
    expr_set_t set;
} xexpr_t;

typedef struct {
    api_call_t *c;
    const json_value_t *body;
    int64_t start_ms, end_ms;
    char *tz;
    const query_agg_t *agg;
    int has_ds, rate;
    query_downsample_t ds;
    double ds_scalar; /* fill value of a "scalar" downsampler fill, else NaN */
    query_rate_t rate_opts;
    xfilter_t *filters;
    size_t n_filters;
    xmetric_t *metrics;
    size_t n_metrics;
    xexpr_t *exprs;
    size_t n_exprs;
    uint64_t held; /* points of every metric's series, held at once */
    oct_errbuf_t eb;
} xq_t;

/* Writes the 400 answer with a printf message; returns -1. */
__attribute__((format(printf, 2, 3))) static int bad(xq_t *x, const char *fmt, ...)
{
    char msg[OCT_ERRBUF_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    http_error(x->c->resp, 400, msg, NULL);
    return -1;
}

/* A string member (numbers as their text), NULL when absent or null. */
static const char *mstr(xq_t *x, const json_value_t *o, const char *key)
{
    const json_value_t *v = json_obj_get(o, key);
    if (!v || (v->type != JSON_STRING && v->type != JSON_NUMBER)) return NULL;
    return json_arena_strndup(&x->c->arena, v->str, v->len);
}

static int mbool(const json_value_t *o, const char *key)
{
    const json_value_t *v = json_obj_get(o, key);
    if (!v) return 0;
    if (v->type == JSON_STRING) return v->len == 4 && !strncasecmp(v->str, "true", 4);
    return v->type == JSON_TRUE;
}

/* Query.validateId: letters and digits, not a lone digit. */
static int check_id(xq_t *x, const char *id)
{
    if (!id || !*id) return bad(x, "missing or empty id");
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p))
            return bad(x, "Invalid id (\"%s\"): illegal character: %c", id, *p);
    if (!id[1] && isdigit((unsigned char)id[0])) return bad(x, "The ID cannot be an integer");
    return 0;
}

enum { FILL_NONE, FILL_NAN, FILL_NULL, FILL_ZERO, FILL_SCALAR };

/* {"policy": none|nan|null|zero|scalar, "value": v} into *out (a double,
 * NaN for none/nan/null) and *kind (FILL_*; FILL_NONE when absent). */
static int bind_fill(xq_t *x, const json_value_t *o, double def, double *out, int *kind)
{
    *out = def;
    *kind = FILL_NONE;
    if (!o || o->type == JSON_NULL) return 0;
    if (o->type != JSON_OBJECT) return bad(x, "fillPolicy must be an object");
    const char *pol = mstr(x, o, "policy");
    const json_value_t *vv = json_obj_get(o, "value");
    double v = NAN;
    int has_v = vv && vv->type == JSON_NUMBER;
    if (has_v && json_number_double(vv, &v)) return bad(x, "Invalid fill value");
    if (!pol || !*pol) { /* inferred from the value */
        if (!has_v) return bad(x, "Missing fill policy");
        pol = v == 0 ? "zero" : isnan(v) ? "nan" : "scalar";
    }
    if (!strcasecmp(pol, "none") || !strcasecmp(pol, "nan") || !strcasecmp(pol, "null")) {
        *out = NAN;
        *kind = !strcasecmp(pol, "none")  ? FILL_NONE
                : !strcasecmp(pol, "nan") ? FILL_NAN
                                          : FILL_NULL;
    } else if (!strcasecmp(pol, "zero")) {
        if (has_v && v != 0) return bad(x, "The value for a zero fill policy must be 0");
        *out = 0;
        *kind = FILL_ZERO;
    } else if (!strcasecmp(pol, "scalar")) {
        if (!has_v || isnan(v)) return bad(x, "A scalar fill policy needs a numeric value");
        *out = v;
        *kind = FILL_SCALAR;
    } else {
        return bad(x, "Unrecognized fill policy: %s", pol);
    }
    return 0;
}

/* "<n><unit>" (ms s m h d w) as ms, for timeOffset. */
static int parse_offset(const char *s, int64_t *out)
{
    char *end;
    long long n = strtoll(s, &end, 10);
    if (end == s || n < 0) return -1;
    static const struct {
        const char *u;
        int64_t ms;
    } units[] = {{"ms", 1},      {"s", 1000},     {"m", 60000},
                 {"h", 3600000}, {"d", 86400000}, {"w", 604800000}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (!strcmp(end, units[i].u)) {
            *out = (int64_t)n * units[i].ms;
            return 0;
        }
    return -1;
}

static int bind_time(xq_t *x)
{
    const json_value_t *t = json_obj_get(x->body, "time");
    if (!t || t->type == JSON_NULL) return bad(x, "missing time");
    if (t->type != JSON_OBJECT) return bad(x, "time must be an object");
    const char *start = mstr(x, t, "start"), *end = mstr(x, t, "end"), *tz = mstr(x, t, "timezone");
    if (tz && *tz) x->tz = xstrdup(tz);
    int64_t now = oct_clock_wall_ms();
    if (!start || !*start) return bad(x, "missing or empty start");
    if (query_parse_time(start, x->tz, now, &x->start_ms, &x->eb) < 0)
        return bad(x, "%s", x->eb.msg);
    x->end_ms = now;
    if (end && *end && query_parse_time(end, x->tz, now, &x->end_ms, &x->eb) < 0)
        return bad(x, "%s", x->eb.msg);
    if (x->end_ms <= x->start_ms)
        return bad(x, "End time [%lld] must be greater than the start time [%lld]",
                   (long long)x->end_ms, (long long)x->start_ms);
    const json_value_t *d = json_obj_get(t, "downsampler");
    if (d && d->type == JSON_OBJECT) {
        const char *iv = mstr(x, d, "interval"), *da = mstr(x, d, "aggregator");
        if (!iv || !*iv) return bad(x, "Missing interval");
        if (!da || !*da) return bad(x, "Missing or empty aggregator");
        double fv;
        int kind;
        if (bind_fill(x, json_obj_get(d, "fillPolicy"), NAN, &fv, &kind)) return -1;
        /* a scalar fill downsamples with NaN fill, then replaces the NaNs (run_metric) */
        static const char *const sfx[] = {"", "-nan", "-null", "-zero", "-nan"};
        const char *fill = sfx[kind];
        char spec[160];
        snprintf(spec, sizeof spec, "%s-%s%s", iv, da, fill);
        if (query_parse_downsample(spec, &x->ds, &x->eb) < 0) return bad(x, "%s", x->eb.msg);
        x->has_ds = 1;
        x->ds_scalar = kind == FILL_SCALAR ? fv : NAN;
    } else if (d && d->type != JSON_NULL) {
        return bad(x, "downsampler must be an object");
    }
    const char *agg = mstr(x, t, "aggregator");
    if (!agg || !*agg) return bad(x, "Missing or empty aggregator");
    if (!(x->agg = query_agg_find(agg))) return bad(x, "Invalid aggregator");
    x->rate = mbool(t, "rate");
    x->rate_opts = (query_rate_t){0, INT64_MAX, 0, 0};
    const json_value_t *ro = json_obj_get(t, "rateOptions");
    if (ro && ro->type == JSON_OBJECT) {
        x->rate_opts.counter = mbool(ro, "counter");
        x->rate_opts.drop_resets = mbool(ro, "dropResets");
        const json_value_t *v;
        if ((v = json_obj_get(ro, "counterMax")) && v->type == JSON_NUMBER &&
            json_number_i64(v, &x->rate_opts.counter_max))
            return bad(x, "Invalid counterMax");
        if ((v = json_obj_get(ro, "resetValue")) && v->type == JSON_NUMBER &&
            json_number_i64(v, &x->rate_opts.reset_value))
            return bad(x, "Invalid resetValue");
    }
    return 0;
}

static int bind_filters(xq_t *x)
{
    const json_value_t *fs = json_obj_get(x->body, "filters");
    if (!fs || fs->type == JSON_NULL) return 0;
    if (fs->type != JSON_ARRAY) return bad(x, "filters must be an array");
    x->filters = xcalloc(fs->n + 1, sizeof *x->filters);
    for (const json_value_t *f = fs->child; f; f = f->next) {
        if (f->type != JSON_OBJECT) return bad(x, "a filter must be an object");
        xfilter_t *xf = &x->filters[x->n_filters++];
        xf->id = mstr(x, f, "id");
        for (size_t i = 0; i + 1 < x->n_filters; i++)
            if (xf->id && x->filters[i].id && !strcmp(x->filters[i].id, xf->id))
                return bad(x, "duplicated filter id: %s", xf->id);
        if (check_id(x, xf->id)) return -1;
        xf->explicit_tags = mbool(f, "explicitTags");
        const json_value_t *tags = json_obj_get(f, "tags");
        if (!tags || tags->type == JSON_NULL) continue;
        if (tags->type != JSON_ARRAY) return bad(x, "filter tags must be an array");
        xf->f = xcalloc(tags->n + 1, sizeof *xf->f);
        for (const json_value_t *t = tags->child; t; t = t->next) {
            if (t->type != JSON_OBJECT) return bad(x, "a tag filter must be an object");
            const char *type = mstr(x, t, "type"), *tagk = mstr(x, t, "tagk"),
                       *expr = mstr(x, t, "filter");
            if (!tagk || !*tagk) return bad(x, "Tagk cannot be null or empty");
            if (!expr) return bad(x, "Filter cannot be null or empty");
            if (query_filter_init(&xf->f[xf->n], type ? type : "", tagk, expr, mbool(t, "groupBy"),
                                  &x->eb) < 0)
                return bad(x, "%s", x->eb.msg);
            xf->n++;
        }
    }
    return 0;
}

static int bind_metrics(xq_t *x)
{
    const json_value_t *ms = json_obj_get(x->body, "metrics");
    if (!ms || ms->type != JSON_ARRAY || ms->n == 0) return bad(x, "missing or empty metrics");
    x->metrics = xcalloc(ms->n, sizeof *x->metrics);
    for (const json_value_t *m = ms->child; m; m = m->next) {
        if (m->type != JSON_OBJECT) return bad(x, "a metric must be an object");
        xmetric_t *xm = &x->metrics[x->n_metrics++];
        xm->filter = -1;
        xm->id = mstr(x, m, "id");
        for (size_t i = 0; i + 1 < x->n_metrics; i++)
            if (xm->id && x->metrics[i].id && !strcmp(x->metrics[i].id, xm->id))
                return bad(x, "duplicated metric id: %s", xm->id);
        if (check_id(x, xm->id)) return -1;
        xm->metric = mstr(x, m, "metric");
        if (!xm->metric || !*xm->metric) return bad(x, "missing or empty metric");
        const char *agg = mstr(x, m, "aggregator");
        xm->agg = x->agg;
        if (agg && *agg && !(xm->agg = query_agg_find(agg))) return bad(x, "Invalid aggregator");
        int kind;
        if (bind_fill(x, json_obj_get(m, "fillPolicy"), 0, &xm->fill, &kind)) return -1;
        const char *off = mstr(x, m, "timeOffset");
        if (off && *off && parse_offset(off, &xm->offset_ms))
            return bad(x, "Invalid timeOffset: %s (expected <n><unit>, unit ms s m h d w)", off);
        const char *f = mstr(x, m, "filter");
        if (f && *f) {
            for (size_t i = 0; i < x->n_filters && xm->filter < 0; i++)
                if (!strcmp(x->filters[i].id, f)) xm->filter = (int)i;
            if (xm->filter < 0) return bad(x, "unrecognized filter id %s in metric %s", f, xm->id);
        }
    }
    return 0;
}

/* The id's variable index: metric i, or n_metrics + expression i; -1. */
static long find_var(const xq_t *x, const char *id)
{
    for (size_t i = 0; i < x->n_metrics; i++)
        if (!strcmp(x->metrics[i].id, id)) return (long)i;
    for (size_t i = 0; i < x->n_exprs; i++)
        if (x->exprs[i].id && !strcmp(x->exprs[i].id, id)) return (long)(x->n_metrics + i);
    return -1;
}

static int bind_exprs(xq_t *x)
{
    const json_value_t *es = json_obj_get(x->body, "expressions");
    if (!es || es->type == JSON_NULL) return 0;
    if (es->type != JSON_ARRAY) return bad(x, "expressions must be an array");
    x->exprs = xcalloc(es->n + 1, sizeof *x->exprs);
    for (const json_value_t *e = es->child; e; e = e->next) {
        if (e->type != JSON_OBJECT) return bad(x, "an expression must be an object");
        const char *id = mstr(x, e, "id");
        if (id && find_var(x, id) >= 0)
            return bad(x, "Duplicated variable or expression id: %s", id);
        xexpr_t *xe = &x->exprs[x->n_exprs++];
        xe->id = id;
        if (check_id(x, id)) return -1;
        const char *text = mstr(x, e, "expr");
        if (!text || !*text) return bad(x, "missing or empty expr");
        if (expr_parse(text, &xe->e, &x->eb)) return bad(x, "%s", x->eb.msg);
        int kind;
        if (bind_fill(x, json_obj_get(e, "fillPolicy"), NAN, &xe->fill, &kind)) return -1;
        xe->join.include_agg_tags = 1;
        const json_value_t *j = json_obj_get(e, "join");
        if (j && j->type == JSON_OBJECT) {
            const char *op = mstr(x, j, "operator");
            if (op && !strcasecmp(op, "intersection"))
                xe->join.op = EXPR_JOIN_INTERSECTION;
            else if (op && *op && strcasecmp(op, "union"))
                return bad(x, "Unrecognized join operator: %s", op);
            xe->join.use_keys = mbool(j, "useQueryTags");
            const json_value_t *ia = json_obj_get(j, "includeAggTags");
            if (ia && ia->type != JSON_NULL) xe->join.include_agg_tags = mbool(j, "includeAggTags");
        }
    }
    for (size_t i = 0; i < x->n_exprs; i++) { /* every variable names an id */
        xexpr_t *xe = &x->exprs[i];
        size_t nv = expr_n_vars(xe->e);
        xe->vars = xcalloc(nv + 1, sizeof *xe->vars);
        for (size_t v = 0; v < nv; v++) {
            long k = find_var(x, expr_var(xe->e, v));
            if (k < 0)
                return bad(x, "Expression [%s] was missing input %s", expr_text(xe->e),
                           expr_var(xe->e, v));
            xe->vars[v] = (size_t)k;
        }
    }
    return 0;
}

/* ---- running -------------------------------------------------------------- */

static int run_metric(xq_t *x, xmetric_t *m, const exec_opts_t *opts)
{
    query_t q;
    memset(&q, 0, sizeof q);
    q.start_ms = x->start_ms - m->offset_ms;
    q.end_ms = x->end_ms - m->offset_ms;
    q.timezone = x->tz ? xstrdup(x->tz) : NULL;
    q.no_annotations = 1;
    q.subs = xcalloc(1, sizeof *q.subs);
    q.n_subs = 1;
    query_sub_t *s = &q.subs[0];
    s->agg = m->agg;
    s->metric = xstrdup(m->metric);
    s->has_downsample = x->has_ds;
    s->ds = x->ds;
    s->rate = x->rate;
    s->rate_opts = x->rate_opts;
    int rc = 0;
    if (m->filter >= 0) {
        const xfilter_t *f = &x->filters[m->filter];
        s->explicit_tags = f->explicit_tags;
        s->filters = xcalloc(f->n + 1, sizeof *s->filters);
        for (size_t i = 0; i < f->n && !rc; i++) {
            const query_filter_t *src = &f->f[i];
            rc = query_filter_init(&s->filters[i], query_filter_type_name(src->type), src->tagk,
                                   src->expr, src->group_by, &x->eb);
            if (!rc) s->n_filters++;
        }
    }
    if (!rc)
        rc = exec_query_collect(x->c->tsd->db, &q, opts, m->offset_ms, &x->held, &m->set, &x->eb);
    query_free(&q);
    if (rc) {
        api_query_error(x->c, rc, x->eb.msg);
        return -1;
    }
    if (!isnan(x->ds_scalar)) /* a scalar downsampler fill: the empty buckets came as NaN */
        for (size_t i = 0; i < m->set.n; i++)
            for (size_t k = 0; k < m->set.s[i].n; k++) {
                query_dp_t *d = &m->set.s[i].dps[k];
                if (!d->is_int && isnan(d->v.f)) d->v.f = x->ds_scalar;
            }
    return 0;
}

/* The tag keys the filters of the metrics under variable k name (for a
 * join with useQueryTags), appended to *keys. */
static void query_tag_keys(const xq_t *x, size_t k, const char ***keys, size_t *n, int depth)
{
    if (depth > 64) return;
    if (k < x->n_metrics) {
        const xmetric_t *m = &x->metrics[k];
        if (m->filter < 0) return;
        const xfilter_t *f = &x->filters[m->filter];
        for (size_t i = 0; i < f->n; i++) {
            *keys = xrealloc(*keys, (*n + 1) * sizeof **keys);
            (*keys)[(*n)++] = f->f[i].tagk;
        }
        return;
    }
    const xexpr_t *e = &x->exprs[k - x->n_metrics];
    for (size_t v = 0; v < expr_n_vars(e->e); v++)
        query_tag_keys(x, e->vars[v], keys, n, depth + 1);
}

static int eval_expr(xq_t *x, size_t i)
{
    xexpr_t *xe = &x->exprs[i];
    if (xe->state == 2) return 0;
    if (xe->state == 1)
        return bad(x, "Expression %s refers to itself (a circular reference)", xe->id);
    xe->state = 1;
    size_t nv = expr_n_vars(xe->e);
    const expr_set_t **in = xcalloc(nv + 1, sizeof *in);
    double *fill = xcalloc(nv + 1, sizeof *fill);
    const char **keys = NULL;
    size_t n_keys = 0;
    int rc = 0;
    for (size_t v = 0; v < nv && !rc; v++) {
        size_t k = xe->vars[v];
        if (k < x->n_metrics) {
            in[v] = &x->metrics[k].set;
            fill[v] = x->metrics[k].fill;
        } else {
            rc = eval_expr(x, k - x->n_metrics);
            in[v] = &x->exprs[k - x->n_metrics].set;
            fill[v] = x->exprs[k - x->n_metrics].fill;
        }
        query_tag_keys(x, k, &keys, &n_keys, 0);
    }
    if (!rc) {
        expr_join_t j = xe->join;
        j.keys = keys;
        j.n_keys = n_keys;
        if (expr_join_eval(xe->e, in, fill, &j, x->start_ms, x->end_ms, xe->id, &xe->set, &x->eb))
            rc = bad(x, "%s", x->eb.msg);
    }
    free(in);
    free(fill);
    free(keys);
    xe->state = 2;
    return rc;
}

/* ---- the answer ----------------------------------------------------------- */

/* The sorted, distinct metric names under variable k into *names. */
static void metric_names(const xq_t *x, size_t k, const char ***names, size_t *n, int depth)
{
    if (depth > 64) return;
    if (k >= x->n_metrics) {
        const xexpr_t *e = &x->exprs[k - x->n_metrics];
        for (size_t v = 0; v < expr_n_vars(e->e); v++)
            metric_names(x, e->vars[v], names, n, depth + 1);
        return;
    }
    const char *m = x->metrics[k].metric;
    size_t at = 0;
    while (at < *n && strcmp((*names)[at], m) < 0)
        at++;
    if (at < *n && !strcmp((*names)[at], m)) return;
    *names = xrealloc(*names, (*n + 1) * sizeof **names);
    memmove(*names + at + 1, *names + at, (*n - at) * sizeof **names);
    (*names)[at] = m;
    (*n)++;
}

static double dp_double(const query_dp_t *d)
{
    if (d->is_null) return NAN;
    return d->is_int ? (double)d->v.i : d->v.f;
}

static void write_output(xq_t *x, json_writer_t *w, const char *id, const char *alias, size_t k)
{
    const expr_set_t *set = k < x->n_metrics ? &x->metrics[k].set : &x->exprs[k - x->n_metrics].set;
    json_w_obj_begin(w);
    json_w_key(w, "id");
    json_w_str(w, id);
    if (alias) {
        json_w_key(w, "alias");
        json_w_str(w, alias);
    }
    /* rows: every timestamp of any series, a series without a point there NaN */
    size_t ns = set->n, rows = 0;
    size_t *pos = xcalloc(ns + 1, sizeof *pos);
    int64_t first = 0, last = 0;
    json_w_key(w, "dps");
    json_w_arr_begin(w);
    for (;;) {
        int64_t ts = INT64_MAX;
        for (size_t i = 0; i < ns; i++)
            if (pos[i] < set->s[i].n && set->s[i].dps[pos[i]].ts_ms < ts)
                ts = set->s[i].dps[pos[i]].ts_ms;
        if (ts == INT64_MAX) break;
        json_w_arr_begin(w);
        json_w_int(w, ts);
        for (size_t i = 0; i < ns; i++) {
            double v = NAN;
            if (pos[i] < set->s[i].n && set->s[i].dps[pos[i]].ts_ms == ts)
                v = dp_double(&set->s[i].dps[pos[i]++]);
            api_w_double(w, v);
        }
        json_w_arr_end(w);
        if (!rows++) first = ts;
        last = ts;
    }
    json_w_arr_end(w);
    free(pos);
    json_w_key(w, "dpsMeta");
    json_w_obj_begin(w);
    json_w_key(w, "firstTimestamp");
    json_w_int(w, first);
    json_w_key(w, "lastTimestamp");
    json_w_int(w, last);
    json_w_key(w, "setCount");
    json_w_uint(w, rows);
    json_w_key(w, "series");
    json_w_uint(w, ns);
    json_w_obj_end(w);
    json_w_key(w, "meta");
    json_w_arr_begin(w);
    if (ns) {
        const char **names = NULL;
        size_t nn = 0;
        metric_names(x, k, &names, &nn, 0);
        json_w_obj_begin(w);
        json_w_key(w, "index");
        json_w_int(w, 0);
        json_w_key(w, "metrics");
        json_w_arr_begin(w);
        json_w_str(w, "timestamp");
        json_w_arr_end(w);
        json_w_obj_end(w);
        for (size_t i = 0; i < ns; i++) {
            const expr_series_t *s = &set->s[i];
            json_w_obj_begin(w);
            json_w_key(w, "index");
            json_w_uint(w, i + 1);
            json_w_key(w, "metrics");
            json_w_arr_begin(w);
            for (size_t m = 0; m < nn; m++)
                json_w_str(w, names[m]);
            json_w_arr_end(w);
            api_w_tags(w, "commonTags", s->n_tags, (const char *const *)s->tagk,
                       (const char *const *)s->tagv, "aggregatedTags", s->n_agg,
                       (const char *const *)s->agg);
            json_w_obj_end(w);
        }
        free(names);
    }
    json_w_arr_end(w);
    json_w_obj_end(w);
}

/* The request's members as 2.4 echoes its Query object: the known fields
 * in its order, null when absent. */
static void echo_query(const xq_t *x, json_writer_t *w)
{
    static const char *const keys[] = {"name",    "time",        "filters",
                                       "metrics", "expressions", "outputs"};
    json_w_obj_begin(w);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_w_key(w, keys[i]);
        const json_value_t *v = json_obj_get(x->body, keys[i]);
        if (v)
            json_w_value(w, v);
        else
            json_w_null(w);
    }
    json_w_obj_end(w);
}

/* The outputs asked for: (id, alias, variable) triples. */
typedef struct {
    const char *id, *alias;
    size_t var;
} xout_t;

static int bind_outputs(xq_t *x, xout_t **out, size_t *n)
{
    const json_value_t *os = json_obj_get(x->body, "outputs");
    *out = NULL;
    *n = 0;
    if (os && os->type == JSON_ARRAY && os->n) {
        *out = xcalloc(os->n, sizeof **out);
        for (const json_value_t *o = os->child; o; o = o->next) {
            if (o->type != JSON_OBJECT) return bad(x, "an output must be an object");
            const char *id = mstr(x, o, "id");
            if (check_id(x, id)) return -1;
            long k = find_var(x, id);
            if (k < 0) return bad(x, "Output %s names no metric or expression", id);
            (*out)[(*n)++] = (xout_t){id, mstr(x, o, "alias"), (size_t)k};
        }
        return 0;
    }
    if (os && os->type != JSON_NULL && os->type != JSON_ARRAY)
        return bad(x, "outputs must be an array");
    size_t cnt = x->n_exprs ? x->n_exprs : x->n_metrics;
    *out = xcalloc(cnt, sizeof **out);
    for (size_t i = 0; i < cnt; i++) {
        size_t k = x->n_exprs ? x->n_metrics + i : i;
        const char *id = x->n_exprs ? x->exprs[i].id : x->metrics[i].id;
        (*out)[(*n)++] = (xout_t){id, NULL, k};
    }
    return 0;
}

static void xq_free(xq_t *x)
{
    for (size_t i = 0; i < x->n_filters; i++) {
        for (size_t k = 0; k < x->filters[i].n; k++)
            query_filter_free(&x->filters[i].f[k]);
        free(x->filters[i].f);
    }
    free(x->filters);
    for (size_t i = 0; i < x->n_metrics; i++)
        expr_set_free(&x->metrics[i].set);
    free(x->metrics);
    for (size_t i = 0; i < x->n_exprs; i++) {
        expr_free(x->exprs[i].e);
        free(x->exprs[i].vars);
        expr_set_free(&x->exprs[i].set);
    }
    free(x->exprs);
    free(x->tz);
}

void api_query_exp(api_call_t *c)
{
    if (c->verb != API_POST) {
        api_method_not_allowed(c);
        return;
    }
    xq_t x;
    memset(&x, 0, sizeof x);
    x.c = c;
    x.ds_scalar = NAN;
    xout_t *outs = NULL;
    size_t n_outs = 0;
    if (!(x.body = api_body_json(c, JSON_ALLOW_NONFINITE))) goto out;
    if (x.body->type != JSON_OBJECT) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "expected an object");
        goto out;
    }
    if (bind_time(&x) || bind_filters(&x) || bind_metrics(&x) || bind_exprs(&x) ||
        bind_outputs(&x, &outs, &n_outs))
        goto out;
    exec_opts_t opts;
    exec_opts_from_config(&opts, c->tsd->cfg);
    for (size_t i = 0; i < x.n_metrics; i++)
        if (run_metric(&x, &x.metrics[i], &opts)) goto out;
    for (size_t i = 0; i < n_outs; i++)
        if (outs[i].var >= x.n_metrics && eval_expr(&x, outs[i].var - x.n_metrics)) goto out;
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "outputs");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n_outs; i++)
        write_output(&x, &w, outs[i].id, outs[i].alias, outs[i].var);
    json_w_arr_end(&w);
    json_w_key(&w, "query");
    echo_query(&x, &w);
    json_w_obj_end(&w);
    c->resp->status = 200;
out:
    free(outs);
    xq_free(&x);
}
