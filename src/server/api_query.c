/* api_query.c -- /api/query (GET, POST, DELETE) as OpenTSDB 2.4's QueryRpc
 * and HttpJsonSerializer answer it (reference §7.5); /api/query/last is
 * routed to api_query_last (api_query_last.c).
 *
 * Parsing. GET takes start (required: "Missing parameter <code>start</code>"),
 * end, repeatable tsuid= then m= (query/query.h parses them and drops
 * duplicates, as OpenTSDB's LinkedHashSet does), the presence flags and --
 * unlike OpenTSDB, which ignores it on GET -- timezone. POST binds the JSON
 * body as Jackson binds TSQuery: numbers where strings are expected keep
 * their text (a Grafana start of 1356998400000 is a ms timestamp by the
 * 10-character rule), booleans may be strings, unknown fields are ignored,
 * and of `tags` and `filters` the one written last wins. Validation follows
 * TSQuery.validateAndSetQuery's order and texts.
 *
 * Answer. The executor (tsdb/query_exec.h) calls back once per output
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
#include <time.h>

#include "common/xmalloc.h"
#include "query/query.h"
#include "query/tz.h"
#include "server/api_int.h"
#include "tsdb/annotation.h"
#include "tsdb/query_exec.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- request parsing ------------------------------------------------------ */

typedef struct {
    char **v;
    size_t n;
    json_arena_t *a;
} strlist_t;

static void collect_param(void *ctx, const char *value, size_t len)
{
    strlist_t *l = ctx;
    l->v = xrealloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n++] = json_arena_strndup(l->a, value, len);
}

/* The request's times and the checks of TSQuery.validateAndSetQuery that
 * precede the sub-queries'. Returns 0 or -1 with a 400 written. */
static int set_times(api_call_t *c, query_t *q, const char *start, const char *end)
{
    oct_errbuf_t eb;
    if (!start || !*start) {
        http_error(c->resp, 400, "Missing start time", NULL);
        return -1;
    }
    int64_t now = wall_ms();
    if (query_parse_time(start, q->timezone, now, &q->start_ms, &eb) < 0) {
        http_error(c->resp, 400, eb.msg, NULL);
        return -1;
    }
    if (end && *end) {
        if (query_parse_time(end, q->timezone, now, &q->end_ms, &eb) < 0) {
            http_error(c->resp, 400, eb.msg, NULL);
            return -1;
        }
    } else {
        q->end_ms = now;
    }
    if (q->end_ms <= q->start_ms) {
        char msg[160];
        snprintf(msg, sizeof msg, "End time [%lld] must be greater than the start time [%lld]",
                 (long long)q->end_ms, (long long)q->start_ms);
        http_error(c->resp, 400, msg, NULL);
        return -1;
    }
    return 0;
}

/* A named timezone must exist when a sub-query downsamples (TSQuery). */
static int check_timezone(api_call_t *c, const query_t *q)
{
    if (!q->timezone || !*q->timezone) return 0;
    for (size_t i = 0; i < q->n_subs; i++) {
        if (!q->subs[i].has_downsample) continue;
        const query_tz_t *tz;
        if (query_tz_get(q->timezone, &tz, NULL) < 0) {
            http_error(c->resp, 400, "The timezone specification could not be found", NULL);
            return -1;
        }
        break;
    }
    return 0;
}

static int parse_get(api_call_t *c, query_t *q)
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

    strlist_t ts = {NULL, 0, &c->arena}, ms = {NULL, 0, &c->arena};
    http_param_each(c->req, "tsuid", collect_param, &ts);
    http_param_each(c->req, "m", collect_param, &ms);
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
    if (set_times(c, q, start, have_end ? end : NULL)) return -1;
    return check_timezone(c, q);
}

/* Jackson's String binding: strings and the text of numbers. */
static const char *jstr(api_call_t *c, const json_value_t *o, const char *key, int *bad)
{
    const json_value_t *v = json_obj_get(o, key);
    if (!v || v->type == JSON_NULL) return NULL;
    if (v->type == JSON_STRING || v->type == JSON_NUMBER)
        return json_arena_strndup(&c->arena, v->str, v->len);
    if (v->type == JSON_TRUE) return "true";
    if (v->type == JSON_FALSE) return "false";
    *bad = 1;
    return NULL;
}

/* Jackson's boolean binding: true/false, "true"/"false", numbers 0/1. */
static int jbool(const json_value_t *o, const char *key, int *bad)
{
    const json_value_t *v = json_obj_get(o, key);
    if (!v || v->type == JSON_NULL || v->type == JSON_FALSE) return 0;
    if (v->type == JSON_TRUE) return 1;
    if (v->type == JSON_STRING) {
        if (v->len == 4 && !strncasecmp(v->str, "true", 4)) return 1;
        if ((v->len == 5 && !strncasecmp(v->str, "false", 5)) || v->len == 0) return 0;
    }
    if (v->type == JSON_NUMBER) {
        int64_t i;
        if (json_number_i64(v, &i) == 0) return i != 0;
    }
    *bad = 1;
    return 0;
}

static int jlong(const json_value_t *o, const char *key, int64_t def, int64_t *out, int *bad)
{
    const json_value_t *v = json_obj_get(o, key);
    *out = def;
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type == JSON_NUMBER || v->type == JSON_STRING) {
        json_value_t t = *v;
        t.type = JSON_NUMBER;
        if (json_number_i64(&t, out) == 0) return 0;
    }
    *bad = 1;
    return -1;
}

static void add_filter(query_sub_t *s, const query_filter_t *f)
{
    s->filters = xrealloc(s->filters, (s->n_filters + 1) * sizeof *s->filters);
    s->filters[s->n_filters++] = *f;
}

static void clear_filters(query_sub_t *s)
{
    for (size_t i = 0; i < s->n_filters; i++)
        query_filter_free(&s->filters[i]);
    s->n_filters = 0;
}

/* One element of "queries". Returns 0, or -1 with a 400 written. */
static int parse_post_sub(api_call_t *c, const json_value_t *o, query_sub_t *s)
{
    oct_errbuf_t eb;
    int bad = 0;
    if (o->type != JSON_OBJECT) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "a sub-query is not an object");
        return -1;
    }
    /* tags and filters: the member written last wins (Jackson's setters). */
    for (const json_value_t *m = o->child; m; m = m->next) {
        if (m->key_len == 4 && !memcmp(m->key, "tags", 4)) {
            if (m->type == JSON_NULL) continue;
            if (m->type != JSON_OBJECT) {
                http_error(c->resp, 400, "Unable to parse the given JSON", "tags must be a map");
                return -1;
            }
            clear_filters(s);
            for (const json_value_t *t = m->child; t; t = t->next) {
                if (t->type != JSON_STRING) {
                    http_error(c->resp, 400, "Unable to parse the given JSON",
                               "tag values must be strings");
                    return -1;
                }
                char *k = json_arena_strndup(&c->arena, t->key, t->key_len);
                char *v = json_arena_strndup(&c->arena, t->str, t->len);
                query_filter_t f;
                if (query_filter_from_tag(&f, k, v, 1, &eb) < 0) {
                    http_error(c->resp, 400, eb.msg, NULL);
                    return -1;
                }
                add_filter(s, &f);
            }
        } else if (m->key_len == 7 && !memcmp(m->key, "filters", 7)) {
            if (m->type == JSON_NULL) continue;
            if (m->type != JSON_ARRAY) {
                http_error(c->resp, 400, "Unable to parse the given JSON",
                           "filters must be an array");
                return -1;
            }
            clear_filters(s);
            for (const json_value_t *fv = m->child; fv; fv = fv->next) {
                if (fv->type != JSON_OBJECT) {
                    http_error(c->resp, 400, "Unable to parse the given JSON",
                               "a filter is not an object");
                    return -1;
                }
                const char *type = jstr(c, fv, "type", &bad), *tagk = jstr(c, fv, "tagk", &bad),
                           *expr = jstr(c, fv, "filter", &bad);
                int gb = json_obj_get(fv, "groupBy") ? jbool(fv, "groupBy", &bad)
                                                     : jbool(fv, "group_by", &bad);
                if (bad) {
                    http_error(c->resp, 400, "Unable to parse the given JSON",
                               "bad field in a filter");
                    return -1;
                }
                if (!tagk || !*tagk) {
                    http_error(c->resp, 400, "Tagk cannot be null or empty", NULL);
                    return -1;
                }
                if (!expr) {
                    http_error(c->resp, 400, "Filter cannot be null or empty", NULL);
                    return -1;
                }
                query_filter_t f;
                if (query_filter_init(&f, type ? type : "", tagk, expr, gb, &eb) < 0) {
                    http_error(c->resp, 400, eb.msg, NULL);
                    return -1;
                }
                add_filter(s, &f);
            }
        }
    }

    const char *agg = jstr(c, o, "aggregator", &bad);
    const char *metric = jstr(c, o, "metric", &bad);
    const char *ds = jstr(c, o, "downsample", &bad);
    s->rate = jbool(o, "rate", &bad);
    s->explicit_tags = jbool(o, "explicitTags", &bad);
    s->rate_opts = (query_rate_t){0, INT64_MAX, 0, 0};
    const json_value_t *ro = json_obj_get(o, "rateOptions");
    if (ro && ro->type == JSON_OBJECT) {
        s->rate_opts.counter = jbool(ro, "counter", &bad);
        s->rate_opts.drop_resets = jbool(ro, "dropResets", &bad);
        jlong(ro, "counterMax", INT64_MAX, &s->rate_opts.counter_max, &bad);
        jlong(ro, "resetValue", 0, &s->rate_opts.reset_value, &bad);
    } else if (ro && ro->type != JSON_NULL) {
        bad = 1;
    }
    const json_value_t *tv = json_obj_get(o, "tsuids");
    if (tv && tv->type == JSON_ARRAY) {
        s->tsuids = xcalloc(tv->n ? tv->n : 1, sizeof *s->tsuids);
        for (const json_value_t *e = tv->child; e; e = e->next) {
            if (e->type != JSON_STRING) {
                bad = 1;
                break;
            }
            char *t = xmalloc(e->len + 1); /* owned by q (query_free) */
            memcpy(t, e->str, e->len);
            t[e->len] = '\0';
            s->tsuids[s->n_tsuids++] = t;
        }
    } else if (tv && tv->type != JSON_NULL) {
        bad = 1;
    }
    if (bad) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "a field has the wrong type");
        return -1;
    }
    /* TSSubQuery.validateAndSetQuery */
    if (!agg || !*agg) {
        http_error(c->resp, 400, "Missing the aggregation function", NULL);
        return -1;
    }
    s->agg = query_agg_find(agg);
    if (!s->agg) {
        char msg[256];
        snprintf(msg, sizeof msg, "No such aggregation function: %s", agg);
        http_error(c->resp, 400, msg, NULL);
        return -1;
    }
    if (s->n_tsuids == 0 && (!metric || !*metric)) {
        http_error(c->resp, 400, "Missing the metric or tsuids, provide at least one", NULL);
        return -1;
    }
    if (s->n_tsuids == 0) s->metric = xstrdup(metric);
    if (ds && *ds) {
        if (query_parse_downsample(ds, &s->ds, &eb) < 0) {
            http_error(c->resp, 400, eb.msg, NULL);
            return -1;
        }
        s->has_downsample = 1;
    }
    return 0;
}

/* What query_free does for one sub-query. */
static void free_sub(query_sub_t *s)
{
    free(s->metric);
    for (size_t i = 0; i < s->n_tsuids; i++)
        free(s->tsuids[i]);
    free(s->tsuids);
    clear_filters(s);
    free(s->filters);
    memset(s, 0, sizeof *s);
}

static int parse_post(api_call_t *c, query_t *q)
{
    if (!api_has_body(c)) {
        http_error(c->resp, 400, "Missing message content",
                   "Supply valid JSON formatted data in the body of your request");
        return -1;
    }
    json_value_t *b = api_body_json(c, JSON_ALLOW_NONFINITE);
    if (!b) return -1;
    if (b->type != JSON_OBJECT) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "the body is not an object");
        return -1;
    }
    int bad = 0;
    const char *start = jstr(c, b, "start", &bad), *end = jstr(c, b, "end", &bad),
               *tz = jstr(c, b, "timezone", &bad);
    q->use_calendar = jbool(b, "useCalendar", &bad);
    q->ms_resolution = jbool(b, "msResolution", &bad);
    q->show_tsuids = jbool(b, "showTSUIDs", &bad);
    q->no_annotations = jbool(b, "noAnnotations", &bad);
    q->global_annotations = jbool(b, "globalAnnotations", &bad);
    q->show_query = jbool(b, "showQuery", &bad);
    q->show_stats = jbool(b, "showStats", &bad);
    q->show_summary = jbool(b, "showSummary", &bad);
    q->delete_data = jbool(b, "delete", &bad);
    const json_value_t *qs = json_obj_get(b, "queries");
    if (qs && qs->type != JSON_ARRAY && qs->type != JSON_NULL) bad = 1;
    if (bad) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "a field has the wrong type");
        return -1;
    }
    /* The ms flag of the query string applies to POST too (OpenTSDB sets it
     * after parsing the body). */
    if (api_flag(c, "ms")) q->ms_resolution = 1;
    if (api_flag(c, "show_tsuids")) q->show_tsuids = 1;
    if (api_flag(c, "no_annotations")) q->no_annotations = 1;
    if (api_flag(c, "global_annotations")) q->global_annotations = 1;
    if (api_flag(c, "show_query")) q->show_query = 1;
    if (api_flag(c, "show_stats")) q->show_stats = 1;
    if (api_flag(c, "show_summary")) q->show_summary = 1;
    if (tz && *tz) q->timezone = xstrdup(tz);
    if (set_times(c, q, start, end)) return -1;
    if (!qs || qs->type != JSON_ARRAY || qs->n == 0) {
        http_error(c->resp, 400, "Missing queries", NULL);
        return -1;
    }
    q->subs = xcalloc(qs->n, sizeof *q->subs);
    for (const json_value_t *e = qs->child; e; e = e->next) {
        query_sub_t *s = &q->subs[q->n_subs];
        memset(s, 0, sizeof *s);
        s->index = (int)q->n_subs;
        q->n_subs++; /* owned by q from here, so query_free releases a half-built one */
        if (parse_post_sub(c, e, s)) return -1;
    }
    /* Duplicate sub-queries are dropped (HttpJsonSerializer's LinkedHashSet);
     * indexes follow the remaining order. */
    size_t k = 0;
    for (size_t i = 0; i < q->n_subs; i++) {
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = query_sub_equal(&q->subs[j], &q->subs[i]);
        if (dup) {
            free_sub(&q->subs[i]);
            continue;
        }
        if (k != i) q->subs[k] = q->subs[i];
        q->subs[k].index = (int)k;
        k++;
    }
    q->n_subs = k;
    if (q->use_calendar)
        for (size_t i = 0; i < q->n_subs; i++)
            if (q->subs[i].has_downsample) q->subs[i].ds.calendar = 1;
    return check_timezone(c, q);
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
    json_w_key(w, "percentiles");
    json_w_null(w);
    json_w_key(w, "showHistogramBuckets");
    json_w_bool(w, 0);
    json_w_key(w, "preAggregate");
    json_w_bool(w, 0);
    json_w_key(w, "rollupUsage");
    json_w_null(w);
    json_w_obj_end(w);
}

/* A double as Jackson prints one: shortest text that reads back, and a
 * ".0" on integral values so clients can tell doubles from integers. */
static void w_double(json_writer_t *w, double v)
{
    if (!isfinite(v)) {
        json_w_double(w, v);
        return;
    }
    char buf[48];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, sizeof buf - 2, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".e")) {
        buf[n++] = '.';
        buf[n++] = '0';
        buf[n] = '\0';
    }
    json_w_raw(w, buf, (size_t)n);
}

static int write_result(void *ctx, const query_result_t *r)
{
    out_t *o = ctx;
    const query_t *q = o->q;
    json_writer_t *w = &o->w;
    int64_t t0 = mono_ns();
    json_w_obj_begin(w);
    json_w_key(w, "metric");
    json_w_str(w, r->metric);
    json_w_key(w, "tags");
    json_w_obj_begin(w);
    for (size_t i = 0; i < r->n_tags; i++) {
        json_w_key(w, r->tagk[i]);
        json_w_str(w, r->tagv[i]);
    }
    json_w_obj_end(w);
    json_w_key(w, "aggregateTags");
    json_w_arr_begin(w);
    for (size_t i = 0; i < r->n_agg_tags; i++)
        json_w_str(w, r->agg_tags[i]);
    json_w_arr_end(w);
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
    int nullfill = r->sub->has_downsample && r->sub->ds.fill == QUERY_FILL_NULL;
    char key[24];
    if (q->arrays) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < r->n_dps; i++) {
            const query_dp_t *d = &r->dps[i];
            json_w_arr_begin(w);
            json_w_int(w, q->ms_resolution ? d->ts_ms : d->ts_ms / 1000);
            if (d->is_int)
                json_w_int(w, d->v.i);
            else if (d->is_null || (nullfill && isnan(d->v.f)))
                json_w_null(w);
            else
                w_double(w, d->v.f);
            json_w_arr_end(w);
        }
        json_w_arr_end(w);
    } else {
        json_w_obj_begin(w);
        for (size_t i = 0; i < r->n_dps; i++) {
            const query_dp_t *d = &r->dps[i];
            int kl = snprintf(key, sizeof key, "%lld",
                              (long long)(q->ms_resolution ? d->ts_ms : d->ts_ms / 1000));
            json_w_keyn(w, key, (size_t)kl);
            if (d->is_int)
                json_w_int(w, d->v.i);
            else if (d->is_null || (nullfill && isnan(d->v.f)))
                json_w_null(w);
            else
                w_double(w, d->v.f);
        }
        json_w_obj_end(w);
    }
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
    o->ser_ns += mono_ns() - t0;
    return 0;
}

static void exec_error(api_call_t *c, int rc, const char *msg)
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

static double ms_of(int64_t ns)
{
    return (double)ns / 1e6;
}

static void run_query(api_call_t *c, query_t *q)
{
    tsd_ctx_t *tsd = c->tsd;
    query_exec_opts_t opts;
    query_exec_opts_from_config(&opts, tsd->cfg);
    out_t o;
    memset(&o, 0, sizeof o);
    o.c = c;
    o.q = q;
    oct_errbuf_t eb;
    int64_t t0 = mono_ns();

    if (q->global_annotations && !q->no_annotations) {
        int rc =
            tsdb_annotation_scan(tsd->db, NULL, 0, q->start_ms, q->end_ms, collect_global, &o, &eb);
        if (rc) {
            exec_error(c, rc, eb.msg);
            goto out;
        }
    }

    char jsonp[128] = "";
    http_param(c->req, "jsonp", jsonp, sizeof jsonp);
    api_json_begin(c, &o.w);
    if (jsonp[0]) {
        oct_strbuf_puts(&c->resp->body, jsonp);
        oct_strbuf_puts(&c->resp->body, "(");
    }
    json_w_arr_begin(&o.w);
    query_exec_stats_t st;
    int rc = query_exec(tsd->db, q, &opts, write_result, &o, &st, &eb);
    if (rc) {
        exec_error(c, rc, eb.msg);
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
        json_w_double(w, ms_of(mono_ns() - t0));
        json_w_obj_end(w);
        json_w_obj_end(w);
    }
    json_w_arr_end(&o.w);
    if (jsonp[0]) oct_strbuf_puts(&c->resp->body, ")");
    c->resp->status = 200;
out:
    free(o.globals);
    free(o.glens);
}

void api_query(api_call_t *c, const char *sub)
{
    if (!strcasecmp(sub, "last")) { /* api.c routes it directly; kept for safety */
        api_query_last(c);
        return;
    }
    if (!strcasecmp(sub, "exp") || !strcasecmp(sub, "gexp")) {
        http_error(c->resp, 501, "Expression queries are not implemented", NULL);
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
    int rc = c->verb == API_POST ? parse_post(c, &q) : parse_get(c, &q);
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
    }
    query_free(&q);
}
