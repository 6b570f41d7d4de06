/* query_body.c -- the /api/query JSON body bound into a query_t, as Jackson
 * binds OpenTSDB's TSQuery (query_body.h).
 *
 * Numbers where strings are expected keep their text (a Grafana start of
 * 1356998400000 is a ms timestamp by the 10-character rule), booleans may be
 * strings or 0/1, unknown fields are ignored (2.4's fields octsdb does not
 * implement are refused when set: an unknown rollupUsage), and of `tags` and `filters` the
 * member written last wins (Jackson calls the setters in document order).
 * Validation follows TSQuery.validateAndSetQuery's order and texts: wrong
 * field types, then the times, then "Missing queries", then each sub-query
 * (TSSubQuery.validateAndSetQuery), then the timezone. Strings taken from
 * the document live in a scratch arena freed before returning; the query_t
 * keeps copies (query/query.h: parsers never keep pointers into input). */
#include "query/query_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "common/xmalloc.h"
#include "query/tz.h"

static const char bad_json[] = "Unable to parse the given JSON";

/* Returns -1 after filling *err, so callers can `return fail(...)`. */
static int fail(query_body_err_t *err, const char *message, const char *details)
{
    err->status = 400;
    snprintf(err->message, sizeof err->message, "%s", message);
    snprintf(err->details, sizeof err->details, "%s", details ? details : "");
    return -1;
}

int query_body_set_times(query_t *q, const char *start, const char *end, int64_t now_ms,
                         query_body_err_t *err)
{
    oct_errbuf_t eb;
    if (!start || !*start) return fail(err, "Missing start time", NULL);
    if (query_parse_time(start, q->timezone, now_ms, &q->start_ms, &eb) < 0)
        return fail(err, eb.msg, NULL);
    if (end && *end) {
        if (query_parse_time(end, q->timezone, now_ms, &q->end_ms, &eb) < 0)
            return fail(err, eb.msg, NULL);
    } else {
        q->end_ms = now_ms;
    }
    if (q->end_ms <= q->start_ms) {
        char msg[160];
        snprintf(msg, sizeof msg, "End time [%lld] must be greater than the start time [%lld]",
                 (long long)q->end_ms, (long long)q->start_ms);
        return fail(err, msg, NULL);
    }
    return 0;
}

int query_body_check_timezone(const query_t *q, query_body_err_t *err)
{
    if (!q->timezone || !*q->timezone) return 0;
    for (size_t i = 0; i < q->n_subs; i++) {
        if (!q->subs[i].has_downsample) continue;
        const query_tz_t *tz;
        if (query_tz_get(q->timezone, &tz, NULL) < 0)
            return fail(err, "The timezone specification could not be found", NULL);
        break;
    }
    return 0;
}

/* ---- Jackson's coercions -------------------------------------------------- */

/* String binding: strings and the text of numbers; NULL when absent. */
static const char *jstr(json_arena_t *a, const json_value_t *o, const char *key, int *bad)
{
    const json_value_t *v = json_obj_get(o, key);
    if (!v || v->type == JSON_NULL) return NULL;
    if (v->type == JSON_STRING || v->type == JSON_NUMBER)
        return json_arena_strndup(a, v->str, v->len);
    if (v->type == JSON_TRUE) return "true";
    if (v->type == JSON_FALSE) return "false";
    *bad = 1;
    return NULL;
}

/* boolean binding: true/false, "true"/"false"/"" (any case), numbers 0/1. */
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

/* long binding: integer numbers or their text ("65535", as Jackson coerces
 * scalars); def when absent. */
static void jlong(const json_value_t *o, const char *key, int64_t def, int64_t *out, int *bad)
{
    const json_value_t *v = json_obj_get(o, key);
    *out = def;
    if (!v || v->type == JSON_NULL) return;
    if (v->type == JSON_NUMBER || v->type == JSON_STRING) {
        /* A string's text is checked digit by digit by json_number_i64. */
        json_value_t t = *v;
        if (t.type == JSON_STRING) t.flags = JSON_F_INTEGER;
        t.type = JSON_NUMBER;
        if (json_number_i64(&t, out) == 0) return;
    }
    *bad = 1;
}

/* ---- sub-queries ---------------------------------------------------------- */

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

/* "tags": {"k": "v", ...}, the legacy map (group-by on every key). */
static int bind_tags(json_arena_t *a, const json_value_t *m, query_sub_t *s, query_body_err_t *err)
{
    oct_errbuf_t eb;
    if (m->type != JSON_OBJECT) return fail(err, bad_json, "tags must be a map");
    clear_filters(s);
    for (const json_value_t *t = m->child; t; t = t->next) {
        if (t->type != JSON_STRING) return fail(err, bad_json, "tag values must be strings");
        char *k = json_arena_strndup(a, t->key, t->key_len);
        char *v = json_arena_strndup(a, t->str, t->len);
        query_filter_t f;
        if (query_filter_from_tag(&f, k, v, 1, &eb) < 0) return fail(err, eb.msg, NULL);
        add_filter(s, &f);
    }
    return 0;
}

/* "filters": [{"type","tagk","filter","groupBy"}, ...]. */
static int bind_filters(json_arena_t *a, const json_value_t *m, query_sub_t *s,
                        query_body_err_t *err)
{
    oct_errbuf_t eb;
    if (m->type != JSON_ARRAY) return fail(err, bad_json, "filters must be an array");
    clear_filters(s);
    for (const json_value_t *fv = m->child; fv; fv = fv->next) {
        if (fv->type != JSON_OBJECT) return fail(err, bad_json, "a filter is not an object");
        int bad = 0;
        const char *type = jstr(a, fv, "type", &bad), *tagk = jstr(a, fv, "tagk", &bad),
                   *expr = jstr(a, fv, "filter", &bad);
        int gb =
            json_obj_get(fv, "groupBy") ? jbool(fv, "groupBy", &bad) : jbool(fv, "group_by", &bad);
        if (bad) return fail(err, bad_json, "bad field in a filter");
        if (!tagk || !*tagk) return fail(err, "Tagk cannot be null or empty", NULL);
        if (!expr) return fail(err, "Filter cannot be null or empty", NULL);
        query_filter_t f;
        if (query_filter_init(&f, type ? type : "", tagk, expr, gb, &eb) < 0)
            return fail(err, eb.msg, NULL);
        add_filter(s, &f);
    }
    return 0;
}

/* One element of "queries" into s (already owned by the query). */
static int bind_sub(json_arena_t *a, const json_value_t *o, query_sub_t *s, query_body_err_t *err)
{
    oct_errbuf_t eb;
    int bad = 0;
    if (o->type != JSON_OBJECT) return fail(err, bad_json, "a sub-query is not an object");
    for (const json_value_t *m = o->child; m; m = m->next) {
        if (m->type == JSON_NULL) continue;
        if (m->key_len == 4 && !memcmp(m->key, "tags", 4)) {
            if (bind_tags(a, m, s, err)) return -1;
        } else if (m->key_len == 7 && !memcmp(m->key, "filters", 7)) {
            if (bind_filters(a, m, s, err)) return -1;
        }
    }

    const char *agg = jstr(a, o, "aggregator", &bad);
    const char *metric = jstr(a, o, "metric", &bad);
    const char *ds = jstr(a, o, "downsample", &bad);
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
            char *t = xmalloc(e->len + 1); /* owned by the query (query_free) */
            memcpy(t, e->str, e->len);
            t[e->len] = '\0';
            s->tsuids[s->n_tsuids++] = t;
        }
    } else if (tv && tv->type != JSON_NULL) {
        bad = 1;
    }
    /* 2.4's histogram fields (docs/histograms.md). The two scan hints
     * change how 2.4 reads HBase, never the answer. */
    const json_value_t *pct = json_obj_get(o, "percentiles");
    if (pct && pct->type != JSON_ARRAY && pct->type != JSON_NULL) bad = 1;
    int buckets = jbool(o, "showHistogramBuckets", &bad);
    int pre_agg = jbool(o, "preAggregate", &bad);
    const char *usage = jstr(a, o, "rollupUsage", &bad);
    (void)jbool(o, "useFuzzyFilter", &bad);
    (void)jbool(o, "useMultiGets", &bad);
    if (bad) return fail(err, bad_json, "a field has the wrong type");
    /* TSSubQuery.validateAndSetQuery */
    if (!agg || !*agg) return fail(err, "Missing the aggregation function", NULL);
    s->agg = query_agg_find(agg);
    if (!s->agg) {
        char msg[256];
        snprintf(msg, sizeof msg, "No such aggregation function: %s", agg);
        return fail(err, msg, NULL);
    }
    if (s->n_tsuids == 0 && (!metric || !*metric))
        return fail(err, "Missing the metric or tsuids, provide at least one", NULL);
    if (s->n_tsuids == 0) s->metric = xstrdup(metric);
    if (ds && *ds) {
        if (query_parse_downsample(ds, &s->ds, &eb) < 0) return fail(err, eb.msg, NULL);
        s->has_downsample = 1;
    }
    if (pct && pct->type == JSON_ARRAY && pct->n > 0) {
        s->percentiles = xmalloc(pct->n * sizeof(double));
        for (const json_value_t *e = pct->child; e; e = e->next) {
            double d;
            if (e->type != JSON_NUMBER || json_number_double(e, &d))
                return fail(err, bad_json, "percentiles must be numbers");
            s->percentiles[s->n_percentiles++] = d;
        }
    }
    s->show_histogram_buckets = buckets;
    if (query_hist_check(s, &eb) < 0) return fail(err, eb.msg, NULL);
    s->pre_agg = pre_agg;
    if (usage && *usage &&
        query_parse_rollup_usage(usage, strlen(usage), &s->rollup_usage, &eb) < 0)
        return fail(err, eb.msg, NULL);
    return 0;
}

/* Duplicate sub-queries are dropped (HttpJsonSerializer's LinkedHashSet);
 * indexes follow the remaining order. */
static void drop_duplicates(query_t *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->n_subs; i++) {
        int dup = 0;
        for (size_t j = 0; j < k && !dup; j++)
            dup = query_sub_equal(&q->subs[j], &q->subs[i]);
        if (dup) {
            query_sub_free(&q->subs[i]);
            continue;
        }
        if (k != i) q->subs[k] = q->subs[i];
        q->subs[k].index = (int)k;
        k++;
    }
    q->n_subs = k;
}

/* ---- the body ------------------------------------------------------------- */

static int bind_body(json_arena_t *a, const char *body, size_t len, int64_t now_ms, query_t *q,
                     query_body_err_t *err)
{
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    if (i == len)
        return fail(err, "Missing message content",
                    "Supply valid JSON formatted data in the body of your request");
    json_value_t *b;
    oct_errbuf_t eb;
    if (json_parse(a, body, len, JSON_ALLOW_NONFINITE, &b, &eb)) return fail(err, bad_json, eb.msg);
    if (b->type != JSON_OBJECT) return fail(err, bad_json, "the body is not an object");

    int bad = 0;
    const char *start = jstr(a, b, "start", &bad), *end = jstr(a, b, "end", &bad),
               *tz = jstr(a, b, "timezone", &bad);
    q->use_calendar = jbool(b, "useCalendar", &bad);
    q->ms_resolution = jbool(b, "msResolution", &bad);
    q->show_tsuids = jbool(b, "showTSUIDs", &bad);
    q->no_annotations = jbool(b, "noAnnotations", &bad);
    q->global_annotations = jbool(b, "globalAnnotations", &bad);
    q->show_query = jbool(b, "showQuery", &bad);
    q->show_stats = jbool(b, "showStats", &bad);
    q->show_summary = jbool(b, "showSummary", &bad);
    q->delete_data = jbool(b, "delete", &bad);
    (void)jbool(b, "padding", &bad); /* no effect in 2.4 either */
    const json_value_t *qs = json_obj_get(b, "queries");
    if (qs && qs->type != JSON_ARRAY && qs->type != JSON_NULL) bad = 1;
    if (bad) return fail(err, bad_json, "a field has the wrong type");
    if (tz && *tz) q->timezone = xstrdup(tz);
    if (query_body_set_times(q, start, end, now_ms, err)) return -1;
    if (!qs || qs->type != JSON_ARRAY || qs->n == 0) return fail(err, "Missing queries", NULL);

    q->subs = xcalloc(qs->n, sizeof *q->subs);
    for (const json_value_t *e = qs->child; e; e = e->next) {
        query_sub_t *s = &q->subs[q->n_subs];
        memset(s, 0, sizeof *s);
        s->index = (int)q->n_subs;
        q->n_subs++; /* owned by q from here, so query_free releases a half-built one */
        if (bind_sub(a, e, s, err)) return -1;
    }
    drop_duplicates(q);
    if (q->use_calendar)
        for (size_t j = 0; j < q->n_subs; j++)
            if (q->subs[j].has_downsample) q->subs[j].ds.calendar = 1;
    return query_body_check_timezone(q, err);
}

int query_body_parse(const char *body, size_t len, int64_t now_ms, query_t *q,
                     query_body_err_t *err)
{
    json_arena_t a = JSON_ARENA_INIT;
    int rc = bind_body(&a, body, len, now_ms, q, err);
    json_arena_free(&a);
    return rc;
}
