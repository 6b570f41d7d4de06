/* api_query.c -- /api/query (GET, POST, DELETE) as OpenTSDB 2.4's QueryRpc
 * and HttpJsonSerializer answer it (docs/api-query-json.md); /api/query/last is
 * routed to api_query_last (api_query_last.c).
 *
 * Parsing. GET takes start (required: "Missing parameter <code>start</code>"),
 * end, repeatable tsuid= then m= (query/query.h parses them and drops
 * duplicates, as OpenTSDB's LinkedHashSet does), the presence flags and --
 * unlike OpenTSDB, which ignores it on GET -- timezone. POST binds the JSON
 * body as Jackson binds TSQuery (query/query_body.h, a pure function the
 * fuzzer drives too); the query string's flags are ORed in afterwards.
 * Validation follows TSQuery.validateAndSetQuery's order and texts.
 *
 * Answer. The executor (exec/exec.h) calls back once per output
 * series; each becomes one object written straight into the response body
 * (metric, tags, aggregateTags, query, tsuids, annotations,
 * globalAnnotations, dps, stats in OpenTSDB's order). A failure after some
 * objects were written replaces the body with the error. Timestamps are in
 * seconds (integer division) unless ms/msResolution; values are JSON
 * integers for integer results, numbers otherwise, "NaN" for NaN and null
 * for fill policy null. showSummary appends {"statsSummary":{...}} with
 * octsdb's counters and timings (documented in docs/compat.md by the lead):
 *   queries, series, rawDPs, emittedDPs, results, resolveTimeMs, scanTimeMs,
 *   aggregationTimeMs, serializationTimeMs, totalTimeMs;
 * showStats adds "stats":{"queryIndex","series","rawDPs","emittedDPs"} per
 * result.
 *
 * Delete. The DELETE verb (or method_override=delete) needs
 * tsd.http.query.allow_delete, as in OpenTSDB; so does a POST body with
 * "delete":true, which OpenTSDB lets through unchecked (a deviation). The
 * data is returned, then the scanned rows are deleted. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/dtoa.h"
#include "common/itoa.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "server/api_int.h"
#include "server/stats_query.h"
#include "query/query_body.h"
#include "tsdb/annotation.h"
#include "exec/exec.h"

/* ---- request parsing ------------------------------------------------------ */

void api_strlist_collect(void *ctx, const char *value, size_t len)
{
    api_strlist_t *l = ctx;
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = json_arena_strndup(l->a, value, len);
}

/* Writes the error answer of query_body.h. Returns -1. */
static int body_error(api_call_t *c, const query_body_err_t *err)
{
    http_error(c->resp, err->status, err->message, err->details[0] ? err->details : NULL);
    return -1;
}

int api_query_parse_get(api_call_t *c, query_t *q)
{
    char start[256], end[256], tz[128];
    if (!http_param(c->req, "start", start, sizeof start) || !start[0]) {
        http_error(c->resp, 400, "Missing parameter <code>start</code>", NULL);
        return -1;
    }
    int have_end = http_param(c->req, "end", end, sizeof end);
    if (http_param(c->req, "timezone", tz, sizeof tz) && tz[0]) q->timezone = xstrdup(tz);
    q->ms_resolution = api_flag(c, "ms");
    q->show_tsuids = api_flag(c, "show_tsuids");
    q->no_annotations = api_flag(c, "no_annotations");
    q->global_annotations = api_flag(c, "global_annotations");
    q->show_query = api_flag(c, "show_query");
    q->show_stats = api_flag(c, "show_stats");
    q->show_summary = api_flag(c, "show_summary");
    q->use_calendar = api_flag(c, "use_calendar");

    api_strlist_t ts = {NULL, 0, &c->arena}, ms = {NULL, 0, &c->arena};
    http_param_each(c->req, "tsuid", api_strlist_collect, &ts);
    http_param_each(c->req, "m", api_strlist_collect, &ms);
    oct_errbuf_t eb;
    int rc = 0;
    for (size_t i = 0; i < ts.n && !rc; i++)
        rc = query_parse_tsuid(q, ts.v[i], &eb);
    for (size_t i = 0; i < ms.n && !rc; i++)
        rc = query_parse_m(q, ms.v[i], &eb);
    free(ts.v);
    free(ms.v);
    if (rc < 0) {
        http_error(c->resp, 400, eb.msg, NULL);
        return -1;
    }
    if (q->n_subs == 0) {
        http_error(c->resp, 400, "Missing sub queries", NULL);
        return -1;
    }
    query_body_err_t err;
    if (query_body_set_times(q, start, have_end ? end : NULL, oct_clock_wall_ms(), &err) ||
        query_body_check_timezone(q, &err))
        return body_error(c, &err);
    return 0;
}

/* The JSON body (query_body.c binds it), then the query string's flags,
 * which apply to POST too (OpenTSDB sets them after parsing the body). */
static int parse_post(api_call_t *c, query_t *q)
{
    query_body_err_t err;
    if (query_body_parse((const char *)c->req->body, c->req->body ? c->req->body_len : 0,
                         oct_clock_wall_ms(), q, &err))
        return body_error(c, &err);
    if (api_flag(c, "ms")) q->ms_resolution = 1;
    if (api_flag(c, "show_tsuids")) q->show_tsuids = 1;
    if (api_flag(c, "no_annotations")) q->no_annotations = 1;
    if (api_flag(c, "global_annotations")) q->global_annotations = 1;
    if (api_flag(c, "show_query")) q->show_query = 1;
    if (api_flag(c, "show_stats")) q->show_stats = 1;
    if (api_flag(c, "show_summary")) q->show_summary = 1;
    return 0;
}

/* ---- response ----------------------------------------------------------- */

typedef struct {
    api_call_t *c;
    const query_t *q;
    json_writer_t w;
    char **globals; /* global annotations' JSON */
    size_t *glens;
    size_t n_globals;
    int64_t ser_ns;
} out_t;

static int collect_global(void *ctx, const char *json, size_t len)
{
    out_t *o = ctx;
    o->globals = xrealloc(o->globals, (o->n_globals + 1) * sizeof *o->globals);
    o->glens = xrealloc(o->glens, (o->n_globals + 1) * sizeof *o->glens);
    o->globals[o->n_globals] = json_arena_strndup(&o->c->arena, json, len);
    o->glens[o->n_globals++] = len;
    return 0;
}

static void unit_text(char *buf, size_t cap, const query_downsample_t *d)
{
    static const char *fills[] = {"", "-nan", "-null", "-zero"};
    if (d->all) {
        snprintf(buf, cap, "0all-%s", query_agg_name(d->agg));
        return;
    }
    const char *u = d->unit == 'S'   ? "ms"
                    : d->unit == 's' ? "s"
                    : d->unit == 'm' ? "m"
                    : d->unit == 'h' ? "h"
                    : d->unit == 'd' ? "d"
                    : d->unit == 'w' ? "w"
                    : d->unit == 'n' ? "n"
                                     : "y";
    snprintf(buf, cap, "%lld%s%s-%s%s", (long long)d->count, u, d->calendar ? "c" : "",
             query_agg_name(d->agg), fills[d->fill]);
}

/* The sub-query as Jackson serializes TSSubQuery (showQuery). */
static void write_sub(json_writer_t *w, const query_sub_t *s)
{
    json_w_obj_begin(w);
    json_w_key(w, "aggregator");
    json_w_str(w, query_agg_name(s->agg));
    json_w_key(w, "metric");
    json_w_str(w, s->metric);
    json_w_key(w, "tsuids");
    if (s->n_tsuids) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < s->n_tsuids; i++)
            json_w_str(w, s->tsuids[i]);
        json_w_arr_end(w);
    } else {
        json_w_null(w);
    }
    json_w_key(w, "downsample");
    if (s->has_downsample) {
        char ds[128];
        unit_text(ds, sizeof ds, &s->ds);
        json_w_str(w, ds);
    } else {
        json_w_null(w);
    }
    json_w_key(w, "rate");
    json_w_bool(w, s->rate);
    json_w_key(w, "filters");
    json_w_arr_begin(w);
    for (size_t i = 0; i < s->n_filters; i++) {
        const query_filter_t *f = &s->filters[i];
        json_w_obj_begin(w);
        json_w_key(w, "tagk");
        json_w_str(w, f->tagk);
        json_w_key(w, "filter");
        json_w_str(w, f->expr);
        json_w_key(w, "group_by");
        json_w_bool(w, f->group_by);
        json_w_key(w, "type");
        json_w_str(w, query_filter_type_name(f->type));
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
    json_w_key(w, "index");
    json_w_int(w, s->index);
    json_w_key(w, "tags");
    json_w_obj_begin(w);
    for (size_t i = 0; i < s->n_filters; i++) {
        const query_filter_t *f = &s->filters[i];
        if (!f->group_by) continue;
        char buf[64];
        snprintf(buf, sizeof buf, "%s(", query_filter_type_name(f->type));
        json_w_key(w, f->tagk);
        oct_strbuf_t tmp = {0};
        oct_strbuf_puts(&tmp, buf);
        oct_strbuf_puts(&tmp, f->expr);
        oct_strbuf_puts(&tmp, ")");
        json_w_str(w, oct_strbuf_cstr(&tmp));
        oct_strbuf_free(&tmp);
    }
    json_w_obj_end(w);
    json_w_key(w, "rateOptions");
    json_w_obj_begin(w);
    json_w_key(w, "counter");
    json_w_bool(w, s->rate_opts.counter);
    json_w_key(w, "counterMax");
    json_w_int(w, s->rate_opts.counter_max);
    json_w_key(w, "resetValue");
    json_w_int(w, s->rate_opts.reset_value);
    json_w_key(w, "dropResets");
    json_w_bool(w, s->rate_opts.drop_resets);
    json_w_obj_end(w);
    json_w_key(w, "explicitTags");
    json_w_bool(w, s->explicit_tags);
    json_w_key(w, "useFuzzyFilter");
    json_w_bool(w, 1);
    json_w_key(w, "useMultiGets");
    json_w_bool(w, 1);
    json_w_key(w, "percentiles"); /* 2.4's List<Float> */
    if (s->n_percentiles) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < s->n_percentiles; i++) {
            char pb[32];
            json_w_raw(w, pb, query_java_float((float)s->percentiles[i], pb));
        }
        json_w_arr_end(w);
    } else {
        json_w_null(w);
    }
    json_w_key(w, "showHistogramBuckets");
    json_w_bool(w, s->show_histogram_buckets);
    json_w_key(w, "preAggregate");
    json_w_bool(w, s->pre_agg);
    json_w_key(w, "rollupUsage");
    json_w_str(w, query_rollup_usage_name(s->rollup_usage));
    json_w_obj_end(w);
}

size_t api_fmt_double(double v, char *buf)
{
    if (!isfinite(v)) { /* json_w_double's quoted forms */
        const char *s = isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        size_t n = strlen(s);
        memcpy(buf, s, n + 1);
        return n;
    }
    size_t n = oct_dtoa(v, buf), k = 0;
    while (k < n && buf[k] != '.' && buf[k] != 'e') /* '.' comes early: few digits before it */
        k++;
    if (k == n) {
        buf[n++] = '.';
        buf[n++] = '0';
        buf[n] = '\0';
    }
    return n;
}

void api_w_double(json_writer_t *w, double v)
{
    char buf[API_DOUBLE_BUF];
    json_w_raw(w, buf, api_fmt_double(v, buf));
}

void api_w_tags(json_writer_t *w, const char *tags_key, size_t n, const char *const *tagk,
                const char *const *tagv, const char *agg_key, size_t n_agg, const char *const *agg)
{
    json_w_key(w, tags_key);
    json_w_obj_begin(w);
    for (size_t i = 0; i < n; i++) {
        json_w_key(w, tagk[i]);
        json_w_str(w, tagv[i]);
    }
    json_w_obj_end(w);
    json_w_key(w, agg_key);
    json_w_arr_begin(w);
    for (size_t i = 0; i < n_agg; i++)
        json_w_str(w, agg[i]);
    json_w_arr_end(w);
}

/* A result's dps, an object of "ts":value or (arrays) an array of
 * [ts,value], written in runs of up to 8 KB straight into the body: the keys
 * are decimal timestamps and the values numbers, which never need escaping,
 * so a point costs two conversions and a share of one copy (a 1,000-group
 * answer holds ~166,000 points). The same text as the json_w_* calls. */
static void write_dps(json_writer_t *w, const exec_result_t *r, int ms, int nullfill, int arrays)
{
    char buf[8192];
    size_t n = 0;
    json_w_raw(w, arrays ? "[" : "{", 1); /* one value to the writer's commas */
    for (size_t i = 0; i < r->n_dps; i++) {
        if (n > sizeof buf - 2 * OCT_ITOA_MAX - API_DOUBLE_BUF - 8) {
            oct_strbuf_append(w->sb, buf, n);
            n = 0;
        }
        const query_dp_t *d = &r->dps[i];
        if (i) buf[n++] = ',';
        buf[n++] = arrays ? '[' : '"';
        n += oct_i64toa(ms ? d->ts_ms : d->ts_ms / 1000, buf + n);
        if (!arrays) buf[n++] = '"';
        buf[n++] = arrays ? ',' : ':';
        if (d->is_int) {
            n += oct_i64toa(d->v.i, buf + n);
        } else if (d->is_null || (nullfill && isnan(d->v.f))) {
            memcpy(buf + n, "null", 4);
            n += 4;
        } else {
            n += api_fmt_double(d->v.f, buf + n);
        }
        if (arrays) buf[n++] = ']';
    }
    buf[n++] = arrays ? ']' : '}';
    oct_strbuf_append(w->sb, buf, n);
}

static int write_result(void *ctx, const exec_result_t *r)
{
    out_t *o = ctx;
    const query_t *q = o->q;
    json_writer_t *w = &o->w;
    int64_t t0 = oct_clock_mono_ns();
    json_w_obj_begin(w);
    json_w_key(w, "metric");
    json_w_str(w, r->metric);
    api_w_tags(w, "tags", r->n_tags, r->tagk, r->tagv, "aggregateTags", r->n_agg_tags, r->agg_tags);
    if (q->show_query) {
        json_w_key(w, "query");
        write_sub(w, r->sub);
    }
    if (q->show_tsuids) {
        json_w_key(w, "tsuids");
        json_w_arr_begin(w);
        for (size_t i = 0; i < r->n_tsuids; i++)
            json_w_str(w, r->tsuids[i]);
        json_w_arr_end(w);
    }
    if (!q->no_annotations) {
        if (r->n_annotations) {
            json_w_key(w, "annotations");
            json_w_arr_begin(w);
            for (size_t i = 0; i < r->n_annotations; i++)
                json_w_raw(w, r->annotations[i], r->annotation_lens[i]);
            json_w_arr_end(w);
        }
        if (o->n_globals) {
            json_w_key(w, "globalAnnotations");
            json_w_arr_begin(w);
            for (size_t i = 0; i < o->n_globals; i++)
                json_w_raw(w, o->globals[i], o->glens[i]);
            json_w_arr_end(w);
        }
    }
    json_w_key(w, "dps");
    write_dps(w, r, q->ms_resolution, r->sub->has_downsample && r->sub->ds.fill == QUERY_FILL_NULL,
              q->arrays);
    if (q->show_stats) {
        json_w_key(w, "stats");
        json_w_obj_begin(w);
        json_w_key(w, "queryIndex");
        json_w_int(w, r->sub->index);
        json_w_key(w, "series");
        json_w_uint(w, r->sub_series);
        json_w_key(w, "rawDPs");
        json_w_uint(w, r->sub_raw_points);
        json_w_key(w, "emittedDPs");
        json_w_uint(w, r->n_dps);
        json_w_obj_end(w);
    }
    json_w_obj_end(w);
    /* the points a query gave out: the status page's "points/s out" */
    tsd_count(o->c->tsd, TSD_CTR_QUERY_DPS, r->n_dps);
    o->ser_ns += oct_clock_mono_ns() - t0;
    return 0;
}

void api_query_error(api_call_t *c, int rc, const char *msg)
{
    int status;
    switch (rc) {
    case OCT_ENOSUCHNAME:
    case OCT_ENOSUCHID:
    case OCT_EPARSE:
    case OCT_EINVAL:
        status = 400;
        break;
    case OCT_ERANGE:
        status = 413;
        break;
    case -ETIMEDOUT:
        status = 408;
        break;
    case OCT_EIO:
        status = 424;
        break;
    default:
        status = 500;
        break;
    }
    http_error(c->resp, status, msg && *msg ? msg : oct_strerror(rc), NULL);
}

/* The whole query as 2.4 shows a TSQuery in /api/stats/query: start and end
 * as resolved (ms), the flags, the sub-queries as showQuery writes them. */
static void write_tsquery(oct_strbuf_t *out, const query_t *q)
{
    json_writer_t w;
    json_w_init(&w, out);
    json_w_obj_begin(&w);
    json_w_key(&w, "start");
    json_w_int(&w, q->start_ms);
    json_w_key(&w, "end");
    json_w_int(&w, q->end_ms);
    json_w_key(&w, "timezone");
    json_w_str(&w, q->timezone);
    json_w_key(&w, "useCalendar");
    json_w_bool(&w, q->use_calendar);
    json_w_key(&w, "queries");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < q->n_subs; i++)
        write_sub(&w, &q->subs[i]);
    json_w_arr_end(&w);
    static const char *const flag_names[] = {"msResolution",      "showTSUIDs", "noAnnotations",
                                             "globalAnnotations", "showQuery",  "showStats",
                                             "showSummary",       "delete"};
    const int flags[] = {q->ms_resolution, q->show_tsuids, q->no_annotations, q->global_annotations,
                         q->show_query,    q->show_stats,  q->show_summary,   q->delete_data};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        json_w_key(&w, flag_names[i]);
        json_w_bool(&w, flags[i]);
    }
    json_w_obj_end(&w);
}

/* Ends the query's /api/stats/query entry and counts it in
 * tsd.http.query.success / invalid_requests / exceptions by its status. */
static void track_end(api_call_t *c, stats_query_t *sq, const exec_stats_t *st, int64_t ser_ns)
{
    int status = c->resp->status;
    tsd_count(c->tsd,
              status < 300   ? TSD_CTR_QUERY_SUCCESS
              : status < 500 ? TSD_CTR_QUERY_INVALID
                             : TSD_CTR_QUERY_EXCEPTIONS,
              1);
    stats_query_figures_t f = {0};
    if (st) {
        f.series = st->series;
        f.raw_points = st->raw_points;
        f.emitted_points = st->emitted_points;
        f.resolve_ns = st->resolve_ns;
        f.scan_ns = st->scan_ns;
        f.agg_ns = st->agg_ns;
    }
    f.serialization_ns = ser_ns;
    char msg[512] = "";
    if (status >= 300) { /* the message of the error body http_error wrote */
        json_arena_t a = JSON_ARENA_INIT;
        json_value_t *v;
        oct_errbuf_t eb;
        if (!json_parse(&a, c->resp->body.ptr, c->resp->body.len, 0, &v, &eb) &&
            v->type == JSON_OBJECT) {
            const json_value_t *e = json_obj_get(v, "error");
            const json_value_t *m = e && e->type == JSON_OBJECT ? json_obj_get(e, "message") : NULL;
            if (m && m->type == JSON_STRING) snprintf(msg, sizeof msg, "%.*s", (int)m->len, m->str);
        }
        json_arena_free(&a);
    }
    stats_query_end(c->tsd->queries, sq, status, msg, &f);
}

static double ms_of(int64_t ns)
{
    return (double)ns / 1e6;
}

static void run_query(api_call_t *c, query_t *q)
{
    tsd_ctx_t *tsd = c->tsd;
    exec_opts_t opts;
    exec_opts_from_config(&opts, tsd->cfg);
    out_t o;
    memset(&o, 0, sizeof o);
    o.c = c;
    o.q = q;
    oct_errbuf_t eb;
    int64_t t0 = oct_clock_mono_ns();
    oct_strbuf_t qj = OCT_STRBUF_INIT;
    write_tsquery(&qj, q);
    stats_query_t *sq = stats_query_begin(tsd->queries, qj.ptr, qj.len, c->req);
    oct_strbuf_free(&qj);
    exec_stats_t st;
    memset(&st, 0, sizeof st);

    if (q->global_annotations && !q->no_annotations) {
        int rc =
            tsdb_annotation_scan(tsd->db, NULL, 0, q->start_ms, q->end_ms, collect_global, &o, &eb);
        if (rc) {
            api_query_error(c, rc, eb.msg);
            goto out;
        }
    }

    api_json_begin(c, &o.w); /* jsonp= is wrapped by api_handle */
    json_w_arr_begin(&o.w);
    int rc = exec_query(tsd->db, q, &opts, write_result, &o, &st, &eb);
    if (rc) {
        api_query_error(c, rc, eb.msg);
        goto out;
    }
    if (q->show_summary) {
        json_writer_t *w = &o.w;
        json_w_obj_begin(w);
        json_w_key(w, "statsSummary");
        json_w_obj_begin(w);
        json_w_key(w, "queries");
        json_w_uint(w, q->n_subs);
        json_w_key(w, "series");
        json_w_uint(w, st.series);
        json_w_key(w, "rawDPs");
        json_w_uint(w, st.raw_points);
        json_w_key(w, "emittedDPs");
        json_w_uint(w, st.emitted_points);
        json_w_key(w, "results");
        json_w_uint(w, st.results);
        json_w_key(w, "resolveTimeMs");
        json_w_double(w, ms_of(st.resolve_ns));
        json_w_key(w, "scanTimeMs");
        json_w_double(w, ms_of(st.scan_ns));
        json_w_key(w, "aggregationTimeMs");
        json_w_double(w, ms_of(st.agg_ns));
        json_w_key(w, "serializationTimeMs");
        json_w_double(w, ms_of(o.ser_ns));
        json_w_key(w, "totalTimeMs");
        json_w_double(w, ms_of(oct_clock_mono_ns() - t0));
        json_w_obj_end(w);
        json_w_obj_end(w);
    }
    json_w_arr_end(&o.w);
    c->resp->status = 200;
out:
    track_end(c, sq, &st, o.ser_ns);
    free(o.globals);
    free(o.glens);
}

void api_query(api_call_t *c, const char *sub)
{
    if (!strcasecmp(sub, "last")) { /* api.c routes it directly; kept for safety */
        api_query_last(c);
        return;
    }
    if (!strcasecmp(sub, "exp")) {
        api_query_exp(c);
        return;
    }
    if (!strcasecmp(sub, "gexp")) {
        api_query_gexp(c);
        return;
    }
    if (!(c->verb & (API_GET | API_POST | API_DELETE))) {
        api_method_not_allowed(c);
        return;
    }
    int is_delete = c->verb == API_DELETE;
    char ov[16];
    if (http_param(c->req, "method_override", ov, sizeof ov) && !strcasecmp(ov, "delete"))
        is_delete = 1;
    int allow_delete = oct_config_get_bool(c->tsd->cfg, "tsd.http.query.allow_delete");
    if (is_delete && !allow_delete) {
        http_error(c->resp, 400, "Bad request",
                   "Deleting data is not enabled (tsd.http.query.allow_delete=false)");
        return;
    }

    query_t q;
    memset(&q, 0, sizeof q);
    int rc = c->verb == API_POST ? parse_post(c, &q) : api_query_parse_get(c, &q);
    if (rc == 0) {
        q.arrays = api_flag(c, "arrays");
        if (is_delete) q.delete_data = 1;
        if (q.delete_data && !allow_delete) {
            /* DEVIATION: OpenTSDB deletes for a POST "delete":true unchecked. */
            http_error(c->resp, 400, "Bad request",
                       "Deleting data is not enabled (tsd.http.query.allow_delete=false)");
        } else {
            run_query(c, &q);
        }
    } else {
        tsd_count(c->tsd, TSD_CTR_QUERY_INVALID, 1);
    }
    query_free(&q);
}
