/* api_legacy.c -- OpenTSDB 2.4's UI-era routes, still read by old scripts
 * and monitoring: /version (text; /version.json or a URI ending in "json":
 * the /api/version object), /logs (recent log lines), /stats (the telnet
 * stats lines) and /q (queries as text or JSON; png drawn by gnuplot,
 * api_graph.c). Shapes are 2.4's (docs/http-api.md, "Legacy
 * routes"); the deviations are in docs/compat.md. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/clock.h"
#include "common/log.h"
#include "exec/exec.h"
#include "server/api_int.h"
#include "server/build_info.h"
#include "server/stats_text.h"

#define TEXT_PLAIN "text/plain; charset=UTF-8"

/* ---- /version ----------------------------------------------------------- */

void api_legacy_version(api_call_t *c)
{
    /* 2.4 answers JSON when the request URI ends in "json" */
    const char *path = c->req->path ? c->req->path : "",
               *query = c->req->query ? c->req->query : "";
    size_t pl = strlen(path), ql = strlen(query);
    const char *tail = ql ? query : path;
    size_t tl = ql ? ql : pl;
    if (tl >= 4 && !strcasecmp(tail + tl - 4, "json")) {
        json_writer_t w;
        api_json_begin(c, &w);
        build_info_json(&w);
        return;
    }
    oct_strbuf_reset(&c->resp->body);
    build_info_text(&c->resp->body);
    c->resp->content_type = TEXT_PLAIN;
}

/* ---- /logs -------------------------------------------------------------- */

typedef struct {
    json_writer_t *w; /* ?json, else text into out */
    oct_strbuf_t *out;
    oct_strbuf_t line;
} logs_out_t;

/* 2.4's line: seconds, level, thread, logger, message, tab-separated. */
static int logs_line(void *ctx, const oct_log_entry_t *e)
{
    logs_out_t *o = ctx;
    oct_strbuf_reset(&o->line);
    oct_strbuf_printf(&o->line, "%" PRId64 "\t%s\t%s\t%s\t%s", e->ts_ms / 1000, e->level_name,
                      e->thread, e->component, e->msg);
    if (o->w) {
        json_w_strn(o->w, o->line.ptr, o->line.len);
    } else {
        oct_strbuf_append(o->out, o->line.ptr, o->line.len);
        oct_strbuf_append(o->out, "\n", 1);
    }
    return 0;
}

void api_legacy_logs(api_call_t *c)
{
    json_writer_t w;
    logs_out_t o = {NULL, &c->resp->body, OCT_STRBUF_INIT};
    if (api_flag(c, "json")) {
        api_json_begin(c, &w);
        json_w_arr_begin(&w);
        o.w = &w;
    } else {
        oct_strbuf_reset(&c->resp->body);
        c->resp->content_type = TEXT_PLAIN;
    }
    (void)oct_log_recent(logs_line, &o); /* newest first, as 2.4 */
    if (o.w) json_w_arr_end(&w);
    oct_strbuf_free(&o.line);
}

/* ---- /stats ------------------------------------------------------------- */

void api_legacy_stats(api_call_t *c)
{
    const oct_config_t *cfg = c->tsd->cfg;
    int fqdn = oct_config_get_bool(cfg, "tsd.stats.canonical");
    long long port = oct_config_get_bool(cfg, "tsd.core.stats_with_port")
                         ? (long long)oct_config_get_int(cfg, "tsd.network.port")
                         : -1;
    oct_strbuf_t text = OCT_STRBUF_INIT;
    stats_text(c->tsd, fqdn, port, &text);
    if (!api_flag(c, "json")) {
        oct_strbuf_free(&c->resp->body);
        c->resp->body = text;
        c->resp->content_type = TEXT_PLAIN;
        return;
    }
    /* ?json: the same lines as an array of strings, without their '\n' */
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    const char *p = text.ptr ? text.ptr : "";
    for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1)
        json_w_strn(&w, p, (size_t)(nl - p));
    json_w_arr_end(&w);
    oct_strbuf_free(&text);
}

/* ---- /q ----------------------------------------------------------------- */

/* A double as Java's Double.toString prints it (2.4 prints /q?ascii values
 * so): the shortest digits that read back, plain between 1e-3 and 1e7
 * (always with a fraction, "2.0"), else "d.dddE<exp>" ("1.0E7", "1.5E-4"). */
static size_t legacy_java_double(double v, char *out, size_t cap)
{
    if (v == 0) return (size_t)snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
    if (isinf(v)) return (size_t)snprintf(out, cap, v < 0 ? "-Infinity" : "Infinity");
    char e[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v) break;
    }
    /* e = "[-]d[.ddd]e[+-]xx": collect the digits and the exponent */
    char dig[20];
    size_t nd = 0;
    const char *p = e;
    int neg = *p == '-';
    if (neg) p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.') dig[nd++] = *p;
    int x = atoi(p + 1);
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    dig[nd] = '\0';
    double a = fabs(v);
    char *o = out;
    size_t left = cap;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(o, left, __VA_ARGS__);                                                   \
        if (k_ < 0 || (size_t)k_ >= left) return cap - 1;                                          \
        o += k_;                                                                                   \
        left -= (size_t)k_;                                                                        \
    } while (0)
    if (neg) PUT("-");
    if (a >= 1e-3 && a < 1e7) {
        if (x >= 0) { /* integer part: digits 0..x (zero-padded), then the rest */
            for (int i = 0; i <= x; i++)
                PUT("%c", i < (int)nd ? dig[i] : '0');
            PUT(".");
            if ((int)nd > x + 1)
                PUT("%s", dig + x + 1);
            else
                PUT("0");
        } else {
            PUT("0.");
            for (int i = 0; i < -x - 1; i++)
                PUT("0");
            PUT("%s", dig);
        }
    } else {
        PUT("%c.%s", dig[0], nd > 1 ? dig + 1 : "0");
        PUT("E%d", x);
    }
#undef PUT
    return (size_t)(o - out);
}

typedef struct {
    api_call_t *c;
    const query_t *q;
    int json;
    uint64_t plotted, points;
    /* per sub-query: the tags aggregated away, as a sorted set of names */
    char ***etags;
    size_t *n_etags;
} q_out_t;

static void q_add_etag(q_out_t *o, size_t sub, const char *name)
{
    char **set = o->etags[sub];
    size_t n = o->n_etags[sub], i = 0;
    while (i < n && strcmp(set[i], name) < 0)
        i++;
    if (i < n && !strcmp(set[i], name)) return;
    set = json_arena_alloc(&o->c->arena, (n + 1) * sizeof *set);
    if (n) { /* the first name: o->etags[sub] is still NULL, and memcpy from NULL is UB */
        memcpy(set, o->etags[sub], i * sizeof *set);
        memcpy(set + i + 1, o->etags[sub] + i, (n - i) * sizeof *set);
    }
    set[i] = json_arena_strndup(&o->c->arena, name, strlen(name));
    o->etags[sub] = set;
    o->n_etags[sub] = n + 1;
}

static int q_result(void *ctx, const exec_result_t *r)
{
    q_out_t *o = ctx;
    oct_strbuf_t *b = &o->c->resp->body;
    size_t sub = (size_t)(r->sub - o->q->subs);
    for (size_t i = 0; i < r->n_agg_tags; i++)
        q_add_etag(o, sub, r->agg_tags[i]);
    o->points += r->sub_raw_points;
    for (size_t i = 0; i < r->n_dps; i++) {
        const query_dp_t *d = &r->dps[i];
        if (d->is_null || (!d->is_int && isnan(d->v.f))) continue; /* 2.4 skips NaN */
        o->plotted++;
        if (o->json) continue;
        char num[64];
        if (d->is_int)
            snprintf(num, sizeof num, "%" PRId64, d->v.i);
        else
            legacy_java_double(d->v.f, num, sizeof num);
        oct_strbuf_printf(b, "%s %" PRId64 " %s", r->metric, d->ts_ms / 1000, num);
        for (size_t t = 0; t < r->n_tags; t++)
            oct_strbuf_printf(b, " %s=%s", r->tagk[t], r->tagv[t]);
        oct_strbuf_append(b, "\n", 1);
    }
    return 0;
}

static void legacy_q(api_call_t *c)
{
    int64_t t0 = oct_clock_mono_ns();
    int ascii = api_flag(c, "ascii"), json = api_flag(c, "json"), png = api_flag(c, "png");
    if (!ascii && !json && !png) {
        /* the HTML page around a png: the UI is octsdb's own */
        http_error(c->resp, 501, "The graph page is not served",
                   "Use /q with png, ascii or json, or /api/query; or the UI at /");
        return;
    }
    char m[4];
    if (!http_param(c->req, "m", m, sizeof m)) {
        http_error(c->resp, 400, "Missing parameter <code>m</code>", NULL);
        return;
    }
    query_t q;
    memset(&q, 0, sizeof q);
    if (api_query_parse_get(c, &q)) {
        query_free(&q);
        return;
    }
    q.no_annotations = 1;
    if (png && !ascii && !json) {
        (void)api_graph_png(c, &q);
        query_free(&q);
        return;
    }
    q_out_t o = {c, &q, json && !ascii, 0, 0, NULL, NULL};
    o.etags = json_arena_alloc(&c->arena, q.n_subs * sizeof *o.etags);
    o.n_etags = json_arena_alloc(&c->arena, q.n_subs * sizeof *o.n_etags);
    memset(o.etags, 0, q.n_subs * sizeof *o.etags);
    memset(o.n_etags, 0, q.n_subs * sizeof *o.n_etags);
    oct_strbuf_reset(&c->resp->body);
    exec_opts_t opts;
    exec_opts_from_config(&opts, c->tsd->cfg);
    oct_errbuf_t eb;
    int rc = exec_query(c->tsd->db, &q, &opts, q_result, &o, NULL, &eb);
    if (rc) {
        api_query_error(c, rc, eb.msg);
        query_free(&q);
        return;
    }
    if (!o.json) {
        c->resp->content_type = TEXT_PLAIN;
        query_free(&q);
        return;
    }
    /* 2.4's fields in 2.4's order; "timing" last (its disk cache relies on it) */
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "plotted");
    json_w_uint(&w, o.plotted);
    json_w_key(&w, "points");
    json_w_uint(&w, o.points);
    json_w_key(&w, "etags");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < q.n_subs; i++) {
        json_w_arr_begin(&w);
        for (size_t k = 0; k < o.n_etags[i]; k++)
            json_w_str(&w, o.etags[i][k]);
        json_w_arr_end(&w);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "timing");
    json_w_int(&w, (oct_clock_mono_ns() - t0) / 1000000);
    json_w_obj_end(&w);
    query_free(&q);
}

void api_legacy_q(api_call_t *c)
{
    int64_t t0 = oct_clock_mono_ns();
    legacy_q(c);
    /* tsd.http.latency_*pct type=graph: answered graphs only, as 2.4 counts them */
    if (c->resp->status < 300)
        stats_latency_add(&c->tsd->lat_graph, (uint64_t)(oct_clock_mono_ns() - t0) / 1000);
}
