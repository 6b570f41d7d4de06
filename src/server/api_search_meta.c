/* api_search_meta.c -- /api/search/{tsmeta,tsmeta_summary,tsuids,uidmeta,
 * annotation}, which OpenTSDB 2.4 answers only with a search plugin; octsdb
 * answers them itself through tsdb/search.h and tsdb/annotation.h (the
 * grammars and order are documented there and in docs/api-search.md). A query the grammar cannot
 * express is a 400 naming what was refused, never a silently different answer.
 *
 * Request: GET ?query=&limit=&startIndex= (also start_index), or POST
 * {"query","limit","startIndex"}. limit <= 0 means the default 25.
 * Response: {"type","query","limit","startIndex","time","totalResults",
 * "results"}; totalResults counts every match, results holds the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/uid_bytes.h"
#include "common/clock.h"
#include "server/api_int.h"
#include "tsdb/annotation.h"
#include "tsdb/search.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsmeta.h"

typedef enum { SM_TSMETA, SM_TSMETA_SUMMARY, SM_TSUIDS, SM_UIDMETA, SM_ANNOTATION } sm_type_t;

static const char *const sm_names[] = {"TSMETA", "TSMETA_SUMMARY", "TSUIDS", "UIDMETA",
                                       "ANNOTATION"};

typedef struct {
    api_call_t *c;
    json_writer_t *w;
    sm_type_t type;
} sm_ctx_t;

/* Parses a non-negative integer parameter; 1 on success, 0 (400 written). */
static int sm_int(api_call_t *c, const char *name, const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "Unable to parse '%s' as a non-negative number", name);
        http_error(c->resp, 400, msg, NULL);
        return 0;
    }
    *out = v;
    return 1;
}

static int sm_series_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    sm_ctx_t *s = ctx;
    char hex[2 * 8 * 64 + 1];
    if (codec_uid_to_hex(tsuid, len, hex, sizeof hex) < 0) return OCT_EINVAL;
    if (s->type == SM_TSUIDS) {
        json_w_str(s->w, hex);
        return 0;
    }
    oct_errbuf_t eb;
    if (s->type == SM_TSMETA) {
        tsmeta_t m;
        int64_t ctr = 0;
        int rc = tsmeta_get(s->c->tsd->db, tsuid, len, &s->c->arena, &m, &ctr, &eb);
        if (rc < 0) return rc;
        if (rc == 0) {
            tsmeta_init(&m);
            ctr = 0;
        }
        return api_write_tsmeta(s->c, s->w, tsuid, len, &m, ctr) ? OCT_ENOSUCHID : 0;
    }
    const tsdb_layout_t *lay = tsdb_layout(s->c->tsd->db);
    uint8_t name[UID_NAME_MAX];
    size_t nl;
    int rc = uid_get_name(tsdb_uids(s->c->tsd->db), CODEC_UID_METRIC,
                          codec_uid_decode(tsuid, lay->uid_width[CODEC_UID_METRIC]), name,
                          sizeof name, &nl, &eb);
    if (rc) return rc;
    json_w_obj_begin(s->w);
    json_w_key(s->w, "tsuid");
    json_w_str(s->w, hex);
    json_w_key(s->w, "metric");
    json_w_strn(s->w, (const char *)name, nl);
    json_w_key(s->w, "tags");
    rc = api_write_tsuid_tags(s->c, s->w, tsuid, len, &eb);
    if (rc) return rc;
    json_w_obj_end(s->w);
    return 0;
}

static int sm_uid_cb(void *ctx, codec_uid_kind_t kind, uint64_t id, const uint8_t *name, size_t len)
{
    (void)name;
    (void)len;
    sm_ctx_t *s = ctx;
    return api_write_uidmeta(s->c, s->w, kind, id) ? OCT_ENOSUCHID : 0;
}

static int sm_note_cb(void *ctx, const char *json, size_t len)
{
    sm_ctx_t *s = ctx;
    return api_write_annotation(s->c, s->w, json, len) ? OCT_ECORRUPT : 0;
}

static void sm_run(api_call_t *c, sm_type_t type)
{
    int64_t t0 = oct_clock_mono_ns();
    const char *query = "";
    long limit = 25, start = 0;
    if (c->verb == API_POST && api_has_body(c)) {
        json_value_t *b = api_body_json(c, 0);
        if (!b) return;
        const char *q = api_json_cstr(c, b, "query");
        if (q) query = q;
        const json_value_t *l = json_obj_get(b, "limit"), *si = json_obj_get(b, "startIndex");
        int64_t v;
        if (l) {
            if (json_number_i64(l, &v)) {
                http_error(c->resp, 400, "Unable to parse 'limit' as a number", NULL);
                return;
            }
            limit = (long)v;
        }
        if (si) {
            if (json_number_i64(si, &v) || v < 0) {
                http_error(c->resp, 400, "Unable to parse 'startIndex' as a non-negative number",
                           NULL);
                return;
            }
            start = (long)v;
        }
    } else {
        enum { QMAX = 8192 };
        char *q = json_arena_alloc(&c->arena, QMAX), ls[32];
        q[0] = '\0';
        if (http_param(c->req, "query", q, QMAX)) query = q;
        if (strlen(q) == QMAX - 1) { /* http_param truncates: refuse, never answer a prefix */
            http_error(c->resp, 400, "The search query is too long (8191 bytes at most in a GET)",
                       NULL);
            return;
        }
        if (http_param(c->req, "limit", ls, sizeof ls) && !sm_int(c, "limit", ls, &limit)) return;
        if ((http_param(c->req, "startIndex", ls, sizeof ls) ||
             http_param(c->req, "start_index", ls, sizeof ls)) &&
            !sm_int(c, "startIndex", ls, &start))
            return;
    }
    if (limit <= 0) limit = 25;

    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "type");
    json_w_str(&w, sm_names[type]);
    json_w_key(&w, "query");
    json_w_str(&w, query);
    json_w_key(&w, "limit");
    json_w_int(&w, limit);
    json_w_key(&w, "startIndex");
    json_w_int(&w, start);
    json_w_key(&w, "results");
    json_w_arr_begin(&w);
    sm_ctx_t s = {c, &w, type};
    size_t total = 0;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc;
    if (type == SM_ANNOTATION)
        rc = tsdb_annotation_search(c->tsd->db, query, (size_t)start, (size_t)limit, sm_note_cb, &s,
                                    &total, &eb);
    else if (type == SM_UIDMETA)
        rc = tsdb_search_uids(c->tsd->db, query, (size_t)start, (size_t)limit, sm_uid_cb, &s,
                              &total, &eb);
    else
        rc = tsdb_search_series(c->tsd->db, query, (size_t)start, (size_t)limit, sm_series_cb, &s,
                                &total, &eb);
    if (rc == OCT_EPARSE) {
        http_error(c->resp, 400, eb.msg, NULL);
        return;
    }
    if (rc) {
        http_error(c->resp, 500, "Unable to complete the search", eb.msg[0] ? eb.msg : NULL);
        return;
    }
    json_w_arr_end(&w);
    json_w_key(&w, "totalResults");
    json_w_uint(&w, total);
    json_w_key(&w, "time");
    json_w_double(&w, (double)(oct_clock_mono_ns() - t0) / 1e6);
    json_w_obj_end(&w);
}

void api_search_tsmeta(api_call_t *c)
{
    sm_run(c, SM_TSMETA);
}

void api_search_tsmeta_summary(api_call_t *c)
{
    sm_run(c, SM_TSMETA_SUMMARY);
}

void api_search_tsuids(api_call_t *c)
{
    sm_run(c, SM_TSUIDS);
}

void api_search_uidmeta(api_call_t *c)
{
    sm_run(c, SM_UIDMETA);
}

void api_search_annotation(api_call_t *c)
{
    sm_run(c, SM_ANNOTATION);
}
