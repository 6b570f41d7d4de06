/* api_query_last.c -- /api/query/last (docs/api-query-last.md): the latest
 * point of each series a sub-query names.
 *
 * Sub-queries: by metric and tags (GET timeseries=<metric>{k=v,...}, POST
 * {"metric","tags"}) or by TSUIDs (GET tsuids=a,b, POST {"tsuids":[..]}).
 * With backScan > 0 a metric query names the one series with exactly those
 * tags, and its rows are searched from the current hour back backScan
 * hours, as OpenTSDB does. With backScan = 0 OpenTSDB needs TSUID meta
 * tracking (it scans tsdb-meta for series carrying the tags and reads the
 * hour of their last write); octsdb answers from its series index instead,
 * so it works without meta tracking: every series carrying the tags, and
 * its latest point at or before the end of the current hour however old.
 *
 * The series come from tsdb_select_names, the point from tsdb_last_point
 * (tsdb/select.h); this file only binds the request and writes the answer.
 *
 * Values print as Java's Long.toString / Double.toString (the shortest
 * decimal that reads back to the same double, ".0" on whole numbers, and
 * computerized scientific notation below 1e-3 and from 1e7 on). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/clock.h"
#include "common/dtoa.h"
#include "common/xmalloc.h"
#include "server/api_int.h"
#include "tsdb/select.h"
#include "tsdb/tsdb.h"

#define LAST_TSUID_MAX 256

/* Java's Double.toString(d) into out (>= 32 bytes). */
static void java_double(double d, char *out, size_t cap)
{
    if (isnan(d)) {
        snprintf(out, cap, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(out, cap, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (d == 0) {
        snprintf(out, cap, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    /* Shortest round-tripping digits, but never fewer than two candidates'
     * worth: when one digit would do, Java picks the closest of the one- and
     * two-digit decimals (Double.MIN_VALUE prints 4.9E-324, not 5.0E-324);
     * the correctly rounded two-digit decimal is that closest one, and
     * oct_dtoa_digits (the "%.*e" loop from two digits up) strips its
     * trailing zero when the one-digit form is exact enough. */
    int neg = signbit(d) != 0;
    char dig[24];
    int exp, prec;
    size_t nd = (size_t)oct_dtoa_digits(d, 2, dig, &exp, &prec);
    char *o = out;
    size_t left = cap;
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (left > 1) {                                                                            \
            *o++ = (ch);                                                                           \
            left--;                                                                                \
        }                                                                                          \
    } while (0)
    if (neg) PUT('-');
    double a = fabs(d);
    if (a >= 1e-3 && a < 1e7) {
        if (exp >= 0) {
            for (int i = 0; i <= exp; i++)
                PUT((size_t)i < nd ? dig[i] : '0');
            PUT('.');
            if ((size_t)exp + 1 < nd)
                for (size_t i = (size_t)exp + 1; i < nd; i++)
                    PUT(dig[i]);
            else
                PUT('0');
        } else {
            PUT('0');
            PUT('.');
            for (int i = 0; i < -exp - 1; i++)
                PUT('0');
            for (size_t i = 0; i < nd; i++)
                PUT(dig[i]);
        }
    } else {
        PUT(dig[0]);
        PUT('.');
        if (nd > 1)
            for (size_t i = 1; i < nd; i++)
                PUT(dig[i]);
        else
            PUT('0');
        PUT('E');
        char e[8];
        snprintf(e, sizeof e, "%d", exp);
        for (char *q = e; *q; q++)
            PUT(*q);
    }
#undef PUT
    *o = '\0';
}

typedef struct {
    uint8_t (*ids)[LAST_TSUID_MAX];
    size_t *lens;
    size_t n, cap;
} series_list_t;

static void sl_add(series_list_t *l, const uint8_t *tsuid, size_t len)
{
    if (len > LAST_TSUID_MAX) return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->ids = xrealloc(l->ids, l->cap * sizeof *l->ids);
        l->lens = xrealloc(l->lens, l->cap * sizeof *l->lens);
    }
    memcpy(l->ids[l->n], tsuid, len);
    l->lens[l->n++] = len;
}

static int sl_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    sl_add(ctx, tsuid, len);
    return 0;
}

typedef struct {
    api_call_t *c;
    json_writer_t *w;
    int resolve;
    int64_t back_scan;
    int64_t now_ms;
} last_ctx_t;

/* Emits the latest point of every listed series. Returns 0 or -1 (error
 * response written). */
static int last_emit(last_ctx_t *x, const series_list_t *sl)
{
    tsdb_t *db = x->c->tsd->db;
    oct_errbuf_t eb;
    for (size_t i = 0; i < sl->n; i++) {
        codec_point_t p;
        int rc = tsdb_last_point(db, sl->ids[i], sl->lens[i], x->now_ms, x->back_scan, &p, &eb);
        if (rc < 0) {
            http_error(x->c->resp, 500, "Unable to read the series", eb.msg);
            return -1;
        }
        if (rc == 0) continue;
        char hex[2 * LAST_TSUID_MAX + 1];
        if (codec_uid_to_hex(sl->ids[i], sl->lens[i], hex, sizeof hex) < 0) hex[0] = '\0';
        /* names first: an unresolvable UID must not leave half an object */
        oct_strbuf_t tags = OCT_STRBUF_INIT;
        char metric[UID_NAME_MAX + 1];
        if (x->resolve) {
            const tsdb_layout_t *l = tsdb_layout(db);
            unsigned mw = l->uid_width[CODEC_UID_METRIC];
            size_t ml;
            rc = uid_get_name(tsdb_uids(db), CODEC_UID_METRIC, codec_uid_decode(sl->ids[i], mw),
                              (uint8_t *)metric, sizeof metric - 1, &ml, &eb);
            if (rc == 0) {
                metric[ml] = '\0';
                json_writer_t tw;
                json_w_init(&tw, &tags);
                rc = api_write_tsuid_tags(x->c, &tw, sl->ids[i], sl->lens[i], &eb);
            }
            if (rc) {
                oct_strbuf_free(&tags);
                http_error(x->c->resp, rc == OCT_ENOSUCHID ? 404 : 500,
                           rc == OCT_ENOSUCHID ? eb.msg : "Unable to resolve the series",
                           rc == OCT_ENOSUCHID ? NULL : eb.msg);
                return -1;
            }
        }
        json_writer_t *w = x->w;
        json_w_obj_begin(w);
        if (x->resolve) {
            json_w_key(w, "metric");
            json_w_str(w, metric);
        }
        json_w_key(w, "timestamp");
        json_w_int(w, p.ts_ms);
        char val[64];
        if (p.is_float)
            java_double(p.val.f, val, sizeof val);
        else
            snprintf(val, sizeof val, "%lld", (long long)p.val.i);
        json_w_key(w, "value");
        json_w_str(w, val);
        if (x->resolve) {
            json_w_key(w, "tags");
            json_w_raw(w, tags.ptr, tags.len);
        }
        oct_strbuf_free(&tags);
        json_w_key(w, "tsuid");
        json_w_str(w, hex);
        json_w_obj_end(w);
    }
    return 0;
}

/* A metric sub-query: the series of metric carrying every tag (exactly
 * those tags when exact). Returns 0 or -1 (error written). */
static int last_metric(last_ctx_t *x, const char *metric, size_t n_tags, const char *const *tagk,
                       const char *const *tagv)
{
    api_call_t *c = x->c;
    oct_errbuf_t eb;
    if (!metric || !*metric) {
        http_error(c->resp, 400, "The metric cannot be empty", NULL);
        return -1;
    }
    series_list_t sl = {0};
    if (tsdb_select_names(c->tsd->db, metric, tagk, tagv, n_tags,
                          x->back_scan > 0 ? TSDB_SELECT_EXACT : TSDB_SELECT_SUBSET, sl_cb, &sl,
                          &eb)) {
        http_error(c->resp, 400, eb.msg, NULL);
        return -1;
    }
    int rc = last_emit(x, &sl);
    free(sl.ids);
    free(sl.lens);
    return rc;
}

/* A TSUID sub-query: each listed TSUID (hex). Returns 0 or -1. */
static int last_tsuids(last_ctx_t *x, const char *const *hex, size_t n)
{
    const tsdb_layout_t *l = tsdb_layout(x->c->tsd->db);
    codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                (uint8_t)l->uid_width[2], 0, 1};
    series_list_t sl = {0};
    oct_errbuf_t eb;
    for (size_t i = 0; i < n; i++) {
        uint8_t b[LAST_TSUID_MAX];
        int r = codec_tsuid_from_hex(&rl, hex[i], strlen(hex[i]), b, sizeof b, &eb);
        if (r < 1) {
            char msg[LAST_TSUID_MAX + 32];
            snprintf(msg, sizeof msg, "Invalid TSUID: %.*s", LAST_TSUID_MAX, hex[i]);
            http_error(x->c->resp, 400, msg, r < 0 ? eb.msg : NULL);
            free(sl.ids);
            free(sl.lens);
            return -1;
        }
        sl_add(&sl, b, (size_t)r);
    }
    int rc = last_emit(x, &sl);
    free(sl.ids);
    free(sl.lens);
    return rc;
}

/* ---- GET ------------------------------------------------------------------ */

typedef struct {
    api_call_t *c;
    const char **v;
    size_t n, cap;
} str_list_t;

static void str_list_cb(void *ctx, const char *value, size_t len)
{
    str_list_t *s = ctx;
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        const char **p = json_arena_alloc(&s->c->arena, nc * sizeof *p);
        if (s->n) memcpy(p, s->v, s->n * sizeof *p);
        s->v = p;
        s->cap = nc;
    }
    s->v[s->n++] = json_arena_strndup(&s->c->arena, value, len);
}

/* Splits "a,b" into the list (empty pieces dropped). */
static void split_commas(api_call_t *c, const char *s, str_list_t *out)
{
    out->c = c;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len) str_list_cb(out, p, len);
        if (!comma) break;
        p = comma + 1;
    }
}

static int parse_int(const char *s, int64_t *out)
{
    char *end;
    if (!*s) return -1;
    long long v = strtoll(s, &end, 10);
    if (*end || v < INT32_MIN || v > INT32_MAX) return -1; /* Integer.parseInt */
    *out = v;
    return 0;
}

void api_query_last(api_call_t *c)
{
    last_ctx_t x = {c, NULL, 0, 0, oct_clock_wall_ms()};
    json_value_t *body = NULL;
    str_list_t ts = {c, NULL, 0, 0}, tu = {c, NULL, 0, 0};
    if (c->verb == API_POST) {
        body = api_body_json(c, 0);
        if (!body) return;
        if (body->type != JSON_OBJECT) {
            http_error(c->resp, 400, "Unable to parse the given JSON", "expected an object");
            return;
        }
        json_value_t *v;
        if ((v = json_obj_get(body, "resolveNames"))) x.resolve = v->type == JSON_TRUE;
        if ((v = json_obj_get(body, "backScan")) && v->type != JSON_NULL) {
            if (v->type != JSON_NUMBER || json_number_i64(v, &x.back_scan)) {
                http_error(c->resp, 400, "Unable to parse the given JSON",
                           "backScan must be an integer");
                return;
            }
        }
    } else {
        x.resolve = api_flag(c, "resolve");
        char b[32];
        if (http_param(c->req, "back_scan", b, sizeof b) && parse_int(b, &x.back_scan)) {
            http_error(c->resp, 400, "Unable to parse back_scan parameter", NULL);
            return;
        }
        http_param_each(c->req, "timeseries", str_list_cb, &ts);
        str_list_t raw = {c, NULL, 0, 0};
        http_param_each(c->req, "tsuids", str_list_cb, &raw);
        tu = raw;
    }
    const json_value_t *qs = body ? json_obj_get(body, "queries") : NULL;
    size_t nsub = body ? (qs && qs->type == JSON_ARRAY ? qs->n : 0) : ts.n + tu.n;
    if (nsub == 0) {
        http_error(c->resp, 400, "Missing sub queries", NULL);
        return;
    }
    if (x.back_scan < 0) x.back_scan = 0;
    if (x.back_scan > 24 * 366 * 200) x.back_scan = 24 * 366 * 200; /* no overflow below */
    oct_strbuf_t out = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &out);
    x.w = &w;
    json_w_arr_begin(&w);
    int rc = 0;
    if (body) {
        for (const json_value_t *q = qs->child; q && !rc; q = q->next) {
            const json_value_t *t = json_obj_get(q, "tsuids");
            if (t && t->type == JSON_ARRAY && t->n) {
                const char **hex = json_arena_alloc(&c->arena, t->n * sizeof *hex);
                size_t k = 0;
                for (const json_value_t *e = t->child; e; e = e->next)
                    if (e->type == JSON_STRING)
                        hex[k++] = json_arena_strndup(&c->arena, e->str, e->len);
                rc = last_tsuids(&x, hex, k);
                continue;
            }
            const char *metric = api_json_cstr(c, q, "metric");
            const json_value_t *tg = json_obj_get(q, "tags");
            size_t nt = tg && tg->type == JSON_OBJECT ? tg->n : 0;
            const char **tk = json_arena_alloc(&c->arena, (nt + 1) * sizeof *tk);
            const char **tv = json_arena_alloc(&c->arena, (nt + 1) * sizeof *tv);
            size_t k = 0;
            for (const json_value_t *m = nt ? tg->child : NULL; m; m = m->next) {
                if (m->type != JSON_STRING) continue;
                tk[k] = json_arena_strndup(&c->arena, m->key, m->key_len);
                tv[k++] = json_arena_strndup(&c->arena, m->str, m->len);
            }
            rc = last_metric(&x, metric, k, tk, tv);
        }
    } else {
        for (size_t i = 0; i < ts.n && !rc; i++) {
            api_mexpr_t e;
            if (api_parse_mexpr(c, ts.v[i], &e)) {
                rc = -1;
                break;
            }
            rc = last_metric(&x, e.metric, e.n_tags, e.tagk, e.tagv);
        }
        for (size_t i = 0; i < tu.n && !rc; i++) {
            str_list_t one = {c, NULL, 0, 0};
            split_commas(c, tu.v[i], &one);
            rc = last_tsuids(&x, one.v, one.n);
        }
    }
    if (rc) {
        oct_strbuf_free(&out);
        return;
    }
    json_w_arr_end(&w);
    oct_strbuf_reset(&c->resp->body);
    oct_strbuf_append(&c->resp->body, out.ptr, out.len);
    oct_strbuf_free(&out);
}
