/* api.c -- the HTTP API router and the helpers its endpoints share.
 *
 * Routing follows OpenTSDB's RpcManager: the path is split into segments,
 * lower-cased; "/api/<endpoint>[/<sub>]" with an optional version segment
 * "/api/v<N>/..." (only 1 exists: a higher N is 501, a malformed one 400);
 * the legacy routes of 2.4's UI (/aggregators, /suggest as their /api
 * twins; /version, /logs, /stats, /q in their own shapes, api_legacy.c); /s/<file> serves static
 * files (api_static.c), / and /ui/<file> the web UI (api_ui.c). Endpoints are registered per
 * tsd.mode as OpenTSDB does (put and uid in
 * rw/wo, suggest/search/query in rw/ro), so in the wrong mode they simply
 * do not exist (404). A known endpoint called with a verb it does not take
 * gets OpenTSDB's 405.
 *
 * Optional authentication (server/auth.h) is checked before routing, so
 * with it on every path -- unknown ones included -- answers 401 without
 * valid credentials; a read-only credential gets 403 on the writes that
 * its route marks as writes (api_route_t.writes).
 *
 * Every request gets an arena (api_call_t.arena) for parsed JSON and
 * scratch, freed when the handler returns: no per-point allocation in the
 * handlers. */
#include "server/api_int.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/xmalloc.h"
#include "server/auth.h"
#include "tsdb/tsdb.h"

/* /api/query* is the query engine's (another module); it links in when it
 * exists. sub is "" for /api/query, else "last", "exp", "gexp", ... */

enum { MODE_RW = 1u << TSD_MODE_RW, MODE_RO = 1u << TSD_MODE_RO, MODE_WO = 1u << TSD_MODE_WO };
#define MODE_ALL   (MODE_RW | MODE_RO | MODE_WO)
#define MODE_WRITE (MODE_RW | MODE_WO)
#define MODE_READ  (MODE_RW | MODE_RO)

typedef struct {
    const char *path; /* after "api/" */
    unsigned verbs;
    unsigned modes;
    int override;    /* honours ?method_override= */
    unsigned writes; /* the verbs a read-only credential may not use (403) */
    void (*fn)(api_call_t *c);
} api_route_t;

/* writes: every verb (GET on uid/assign and uid/rename writes: its
 * parameters are the request; dropcaches is an operator action), or every
 * verb but GET (a GET reads the object the other verbs change). */
#define API_WRITES_ALL     (API_GET | API_POST | API_PUT | API_DELETE)
#define API_WRITES_NOT_GET (API_POST | API_PUT | API_DELETE)

static const api_route_t api_routes[] = {
    {"aggregators", API_GET | API_POST, MODE_ALL, 0, 0, api_aggregators},
    {"annotation", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_annotation},
    {"annotation/bulk", API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_ALL,
     api_annotation_bulk},
    {"annotations", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_annotations},
    {"config", API_GET | API_POST, MODE_ALL, 0, 0, api_config},
    {"config/filters", API_GET | API_POST, MODE_ALL, 0, 0, api_config_filters},
    {"delete", API_POST | API_DELETE, MODE_WRITE, 0, API_WRITES_ALL, api_delete},
    {"dropcaches", API_GET | API_DELETE, MODE_ALL, 0, API_WRITES_ALL, api_dropcaches},
    /* all verbs: without histograms every verb is 503, as in 2.4 (api_histogram.c) */
    {"histogram", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 0, API_WRITES_ALL,
     api_histogram},
    {"octsdb/compact", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_compact},
    {"octsdb/delete", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_delete},
    {"octsdb/expire", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_expire},
    {"octsdb/flush", API_POST, MODE_ALL, 0, 0, api_octsdb_flush},
    {"octsdb/fsck", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_fsck},
    {"octsdb/rollup/backfill", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_rollup_backfill},
    {"octsdb/tree/sync", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_tree_sync},
    {"octsdb/uid/delete", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_uid_delete},
    {"octsdb/uid/fsck", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_octsdb_uid_fsck},
    {"put", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_put},
    {"query/last", API_GET | API_POST, MODE_READ, 0, 0, api_query_last},
    {"rollup", API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_rollup},
    {"search/lookup", API_GET | API_POST, MODE_READ, 1, 0, api_search_lookup},
    {"search/tsmeta", API_GET | API_POST, MODE_READ, 1, 0, api_search_tsmeta},
    {"search/tsmeta_summary", API_GET | API_POST, MODE_READ, 1, 0, api_search_tsmeta_summary},
    {"search/tsuids", API_GET | API_POST, MODE_READ, 1, 0, api_search_tsuids},
    {"search/uidmeta", API_GET | API_POST, MODE_READ, 1, 0, api_search_uidmeta},
    {"search/annotation", API_GET | API_POST, MODE_READ, 1, 0, api_search_annotation},
    {"serializers", API_GET | API_POST, MODE_ALL, 0, 0, api_serializers},
    {"stats", API_GET | API_POST, MODE_ALL, 0, 0, api_stats},
    {"stats/query", API_GET | API_POST, MODE_ALL, 0, 0, api_stats_query},
    {"stats/threads", API_GET | API_POST, MODE_ALL, 0, 0, api_stats_threads},
    {"stats/jvm", API_GET | API_POST, MODE_ALL, 0, 0, api_stats_jvm},
    {"suggest", API_GET | API_POST, MODE_READ, 0, 0, api_suggest},
    {"tree", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_tree},
    {"tree/branch", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, 0, api_tree_branch},
    {"tree/collisions", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, 0,
     api_tree_collisions},
    {"tree/notmatched", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, 0,
     api_tree_notmatched},
    {"tree/rule", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_tree_rule},
    {"tree/rules", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_tree_rules},
    {"tree/test", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, 0, api_tree_test},
    {"uid/assign", API_GET | API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_uid_assign},
    {"uid/rename", API_GET | API_POST, MODE_WRITE, 0, API_WRITES_ALL, api_uid_rename},
    {"uid/tsmeta", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_uid_tsmeta},
    {"uid/uidmeta", API_GET | API_POST | API_PUT | API_DELETE, MODE_WRITE, 1, API_WRITES_NOT_GET,
     api_uid_uidmeta},
    {"version", API_GET | API_POST, MODE_ALL, 0, 0, api_version},
};

/* Legacy (non-/api) routes: 2.4's UI-era paths (api_legacy.c), two that
 * answer the API's JSON, and /metrics (Prometheus' text format,
 * api_metrics.c). */
static const api_route_t api_legacy_routes[] = {
    {"aggregators", API_GET | API_POST, MODE_ALL, 0, 0, api_aggregators},
    {"metrics", API_GET, MODE_ALL, 0, 0, api_metrics},
    {"suggest", API_GET | API_POST, MODE_READ, 0, 0, api_suggest},
    {"logs", API_GET | API_POST, MODE_ALL, 0, 0, api_legacy_logs},
    {"q", API_GET | API_POST, MODE_READ, 0, 0, api_legacy_q},
    {"stats", API_GET | API_POST, MODE_ALL, 0, 0, api_legacy_stats},
    {"version", API_GET | API_POST, MODE_ALL, 0, 0, api_legacy_version},
    {"version.json", API_GET | API_POST, MODE_ALL, 0, 0, api_legacy_version},
};

static unsigned api_verb_bit(const char *m)
{
    if (!strcmp(m, "GET")) return API_GET;
    if (!strcmp(m, "POST")) return API_POST;
    if (!strcmp(m, "PUT")) return API_PUT;
    if (!strcmp(m, "DELETE")) return API_DELETE;
    return 0;
}

void api_method_not_allowed(api_call_t *c)
{
    char det[128];
    snprintf(det, sizeof det, "The HTTP method [%s] is not permitted for this endpoint", c->method);
    http_error(c->resp, 405, "Method not allowed", det);
}

size_t api_route_list(api_route_info_t *out, size_t cap)
{
    size_t n = 0;
    const size_t na = sizeof api_routes / sizeof *api_routes;
    const size_t nl = sizeof api_legacy_routes / sizeof *api_legacy_routes;
    for (size_t i = 0; i < na + nl; i++, n++) {
        if (n >= cap) continue;
        const api_route_t *r = i < na ? &api_routes[i] : &api_legacy_routes[i - na];
        out[n].path = r->path;
        out[n].legacy = i >= na;
        out[n].verbs = r->verbs;
        out[n].write_verbs = 0;
        for (unsigned b = API_GET; b <= API_DELETE; b <<= 1)
            if ((r->verbs & b) && (r->writes & b)) out[n].write_verbs |= b;
    }
    return n;
}

/* /api/query* as a read-only credential sees it: DELETE, method_override
 * =delete and a POST body with a "delete" member are writes. */
static int api_query_deletes(api_call_t *c)
{
    char ov[16];
    if (c->verb == API_DELETE) return 1;
    if (http_param(c->req, "method_override", ov, sizeof ov) && !strcasecmp(ov, "delete")) return 1;
    if (c->verb != API_POST || !api_has_body(c)) return 0;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&c->arena, (const char *)c->req->body, c->req->body_len, JSON_ALLOW_NONFINITE,
                   &v, &eb))
        return 0; /* the handler answers 400 */
    const json_value_t *d = v->type == JSON_OBJECT ? json_obj_get(v, "delete") : NULL;
    /* conservative: the handler also takes "true", 1, ...; only an absent,
     * null or false member is surely not a delete */
    return d && d->type != JSON_NULL && d->type != JSON_FALSE;
}

static void api_dispatch(api_call_t *c, const api_route_t *r, auth_role_t role)
{
    if (r->override) {
        char ov[16];
        if (http_param(c->req, "method_override", ov, sizeof ov) && ov[0]) {
            for (char *p = ov; *p; p++)
                *p = (char)toupper((unsigned char)*p);
            unsigned b = api_verb_bit(ov);
            if (b) {
                c->verb = b;
                c->method = b == API_GET    ? "GET"
                            : b == API_POST ? "POST"
                            : b == API_PUT  ? "PUT"
                                            : "DELETE";
            }
        }
    }
    if (!(c->verb & r->verbs)) {
        api_method_not_allowed(c);
        return;
    }
    if (role != AUTH_ROLE_RW && (r->writes & c->verb)) {
        auth_http_forbidden(c->resp);
        return;
    }
    r->fn(c);
}

static const api_route_t *api_find(const api_route_t *tab, size_t n, const char *path,
                                   unsigned mode_bit)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(tab[i].path, path) && (tab[i].modes & mode_bit)) return &tab[i];
    return NULL;
}

static void api_route(tsd_ctx_t *tsd, const http_request_t *req, http_response_t *resp)
{
    api_call_t c;
    memset(&c, 0, sizeof c);
    c.tsd = tsd;
    c.req = req;
    c.resp = resp;
    c.method = req->method ? req->method : "";
    c.verb = api_verb_bit(c.method);
    auth_role_t role;
    if (auth_http(tsd, req, resp, &role)) return;

    /* / and /ui/<file>: the web UI (api_ui.c); names keep their case */
    if (req->path && (!strcmp(req->path, "/") || !strncmp(req->path, "/ui/", 4))) {
        api_ui(&c, req->path[1] ? req->path + 4 : "index.html");
        return;
    }
    /* /s/<file>: static files; the file's name keeps its case */
    if (req->path && req->path[0] == '/' && (req->path[1] == 's' || req->path[1] == 'S') &&
        req->path[2] == '/') {
        api_static(&c, req->path + 3);
        return;
    }

    /* Lower-cased segments joined by '/', without empty segments. */
    char path[512];
    size_t pl = 0;
    const char *segs[16];
    size_t nseg = 0;
    const char *p = req->path ? req->path : "/";
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p) break;
        if (nseg == 16 || pl + 2 >= sizeof path) {
            http_error(resp, 404, "Endpoint not found", NULL);
            return;
        }
        segs[nseg++] = path + pl;
        while (*p && *p != '/' && pl + 1 < sizeof path)
            path[pl++] = (char)tolower((unsigned char)*p++);
        path[pl++] = '\0';
        while (*p && *p != '/')
            p++; /* overlong segment: truncated, won't match */
    }

    unsigned mode_bit = 1u << tsd->mode;
    size_t first = 0;
    int api = nseg > 0 && !strcmp(segs[0], "api");
    /* --disable-api / --disable-ui: as in 2.4 the routes are not there */
    if (api ? !tsd->enable_api : !tsd->enable_ui) {
        http_error(resp, 404, "Endpoint not found", NULL);
        return;
    }
    if (api) {
        first = 1;
        if (nseg > 1 && segs[1][0] == 'v' && isdigit((unsigned char)segs[1][1])) {
            char *end;
            long v = strtol(segs[1] + 1, &end, 10);
            if (*end || strlen(segs[1] + 1) > 9) {
                http_error(resp, 400, "Invalid API version format supplied", segs[1]);
                return;
            }
            if (v > 1) {
                http_error(resp, 501, "Requested API version is greater than the max implemented",
                           NULL);
                return;
            }
            first = 2;
        }
    }
    /* The route key: the remaining segments joined with '/'. */
    char key[256];
    size_t kl = 0;
    for (size_t i = first; i < nseg; i++) {
        size_t sl = strlen(segs[i]);
        if (kl + sl + 2 >= sizeof key) break;
        if (kl) key[kl++] = '/';
        memcpy(key + kl, segs[i], sl);
        kl += sl;
    }
    key[kl] = '\0';

    const api_route_t *r = NULL;
    if (api) {
        r = api_find(api_routes, sizeof api_routes / sizeof *api_routes, key, mode_bit);
        if (!r && nseg > first && !strcmp(segs[first], "query") && (mode_bit & MODE_READ)) {
            if (role != AUTH_ROLE_RW && api_query_deletes(&c))
                auth_http_forbidden(resp);
            else
                api_query(&c, nseg > first + 1 ? key + 6 : "");
            json_arena_free(&c.arena);
            return;
        }
        if (!r && nseg > first + 1 && !strcmp(segs[first], "tree") && (mode_bit & MODE_WRITE)) {
            api_tree_unknown(&c);
            return;
        }
        if (!r && nseg > first + 1 && !strcmp(segs[first], "uid") && (mode_bit & MODE_WRITE)) {
            http_error(resp, 501, "Other UID endpoints have not been implemented yet", NULL);
            return;
        }
    } else if (nseg == 1) {
        r = api_find(api_legacy_routes, sizeof api_legacy_routes / sizeof *api_legacy_routes, key,
                     mode_bit);
    }
    if (!r) {
        http_error(resp, 404, "Endpoint not found", NULL);
        return;
    }
    api_dispatch(&c, r, role);
    json_arena_free(&c.arena);
}

/* jsonp=<fn>: 2.4 wraps its JSON answers, errors included, as <fn>(...).
 * Only JavaScript name characters are taken (a deviation: 2.4 echoes any
 * text, which lets a link inject script into a page that loads it). */
static void api_jsonp(const http_request_t *req, http_response_t *resp)
{
    char fn[256];
    if (!http_param(req, "jsonp", fn, sizeof fn) || !fn[0]) return;
    if (resp->content_type || resp->body.len == 0) return; /* not JSON, or 204 */
    size_t n = strlen(fn);
    int ok = n < sizeof fn - 1 && !isdigit((unsigned char)fn[0]);
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)fn[i]) || fn[i] == '_' || fn[i] == '$' || fn[i] == '.';
    if (!ok) {
        http_error(resp, 400, "Invalid jsonp callback name",
                   "Only letters, digits, '_', '$' and '.' are allowed");
        return;
    }
    oct_strbuf_t b = {0};
    oct_strbuf_append(&b, fn, n);
    oct_strbuf_append(&b, "(", 1);
    oct_strbuf_append(&b, resp->body.ptr, resp->body.len);
    oct_strbuf_append(&b, ")", 1);
    oct_strbuf_free(&resp->body);
    resp->body = b;
}

void api_handle(tsd_ctx_t *tsd, const http_request_t *req, http_response_t *resp)
{
    api_route(tsd, req, resp);
    api_jsonp(req, resp);
}

/* ---- helpers ------------------------------------------------------------ */

int api_flag(const api_call_t *c, const char *name)
{
    char b[2];
    return http_param(c->req, name, b, sizeof b);
}

int api_has_body(const api_call_t *c)
{
    if (!c->req->body || c->req->body_len == 0) return 0;
    for (size_t i = 0; i < c->req->body_len; i++) {
        uint8_t ch = c->req->body[i];
        if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') return 1;
    }
    return 0;
}

json_value_t *api_body_json(api_call_t *c, unsigned flags)
{
    if (!api_has_body(c)) {
        http_error(c->resp, 400, "Missing request content", NULL);
        return NULL;
    }
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&c->arena, (const char *)c->req->body, c->req->body_len, flags, &v, &eb)) {
        http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
        return NULL;
    }
    return v;
}

const char *api_json_cstr(api_call_t *c, const json_value_t *o, const char *key)
{
    json_value_t *v = json_obj_get(o, key);
    if (!v || v->type != JSON_STRING) return NULL;
    return json_arena_strndup(&c->arena, v->str, v->len);
}

void api_json_begin(api_call_t *c, json_writer_t *w)
{
    oct_strbuf_reset(&c->resp->body);
    json_w_init(w, &c->resp->body);
}

int api_kind_from_type(const char *s)
{
    if (!strcasecmp(s, "metric") || !strcasecmp(s, "metrics")) return CODEC_UID_METRIC;
    if (!strcasecmp(s, "tagk")) return CODEC_UID_TAGK;
    if (!strcasecmp(s, "tagv")) return CODEC_UID_TAGV;
    return -1;
}

const char *api_kind_type_name(int kind)
{
    static const char *names[] = {"metric", "tagk", "tagv"};
    return kind >= 0 && kind < 3 ? names[kind] : "";
}

int api_parse_mexpr(api_call_t *c, const char *m, api_mexpr_t *e)
{
    memset(e, 0, sizeof *e);
    char *s = json_arena_strndup(&c->arena, m, strlen(m));
    char *brace = strchr(s, '{');
    if (!brace) {
        e->metric = s;
        return 0;
    }
    size_t len = strlen(s);
    if (s[len - 1] != '}') {
        http_error(c->resp, 400, "Missing '}' at the end of the tags", m);
        return -1;
    }
    s[len - 1] = '\0';
    *brace = '\0';
    e->metric = s;
    char *t = brace + 1;
    size_t cap = 1;
    for (char *q = t; *q; q++)
        cap += *q == ',';
    e->tagk = json_arena_alloc(&c->arena, cap * sizeof *e->tagk);
    e->tagv = json_arena_alloc(&c->arena, cap * sizeof *e->tagv);
    while (*t) {
        char *comma = strchr(t, ',');
        if (comma) *comma = '\0';
        if (*t) {
            char *eq = strchr(t, '=');
            if (!eq || eq == t || !eq[1] || strchr(eq + 1, '=')) {
                char msg[256];
                snprintf(msg, sizeof msg, "Invalid tag: %s", t);
                http_error(c->resp, 400, msg, NULL);
                return -1;
            }
            *eq = '\0';
            e->tagk[e->n_tags] = t;
            e->tagv[e->n_tags++] = eq + 1;
        }
        if (!comma) break;
        t = comma + 1;
    }
    return 0;
}
