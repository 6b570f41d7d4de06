/* api_uid.c -- /api/uid/assign, /api/uid/uidmeta, /api/uid/tsmeta and
 * /api/uid/rename (docs/api-uid.md).
 *
 * assign creates names regardless of the auto-create switches (as OpenTSDB);
 * a name that exists is an error naming its UID. uidmeta and tsmeta read and
 * write the meta cells OpenTSDB writes (tsdb-uid name:<kind>_meta, tsdb-meta
 * ts_meta/ts_ctr): POST merges the given fields into what is stored, PUT
 * replaces them, and an update that changes nothing answers 304. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/rowkey.h"
#include "codec/uid_bytes.h"
#include "common/clock.h"
#include "common/log.h"
#include "server/api_int.h"
#include "tsdb/select.h"
#include "tsdb/tsdb.h"
#include "tsdb/tree.h"
#include "tsdb/tsmeta.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

static const char *const uid_api_keys[3] = {"metric", "tagk", "tagv"};

static void uid_hex(tsd_ctx_t *tsd, codec_uid_kind_t kind, uint64_t id, char *out, size_t cap)
{
    unsigned w = uid_width(tsdb_uids(tsd->db), kind);
    uint8_t b[8];
    if (codec_uid_encode(id, w, b) || codec_uid_to_hex(b, w, out, cap) < 0) snprintf(out, cap, "?");
}

/* ---- /api/uid/assign ---------------------------------------------------- */

typedef struct {
    const char **names;
    size_t n;
} uid_list_t;

void api_uid_assign(api_call_t *c)
{
    uid_list_t lists[3];
    memset(lists, 0, sizeof lists);
    int any = 0;
    if (c->verb == API_POST && api_has_body(c)) {
        json_value_t *b = api_body_json(c, 0);
        if (!b) return;
        for (int k = 0; k < 3; k++) {
            const json_value_t *a = json_obj_get(b, uid_api_keys[k]);
            if (!a || a->type != JSON_ARRAY) continue;
            lists[k].names = json_arena_alloc(&c->arena, (a->n ? a->n : 1) * sizeof(char *));
            for (const json_value_t *e = a->child; e; e = e->next)
                if (e->type == JSON_STRING)
                    lists[k].names[lists[k].n++] = json_arena_strndup(&c->arena, e->str, e->len);
            any |= lists[k].n > 0;
        }
    } else {
        for (int k = 0; k < 3; k++) {
            char *v = json_arena_alloc(&c->arena, 65536);
            if (!http_param(c->req, uid_api_keys[k], v, 65536) || !v[0]) continue;
            size_t cap = 1;
            for (char *p = v; *p; p++)
                cap += *p == ',';
            lists[k].names = json_arena_alloc(&c->arena, cap * sizeof(char *));
            for (char *tok = v;;) {
                char *comma = strchr(tok, ',');
                if (comma) *comma = '\0';
                if (*tok) lists[k].names[lists[k].n++] = tok;
                if (!comma) break;
                tok = comma + 1;
            }
            any |= lists[k].n > 0;
        }
    }
    if (!any) {
        http_error(c->resp, 400, "Missing values to assign UIDs", NULL);
        return;
    }
    uid_registry_t *u = tsdb_uids(c->tsd->db);
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    int errors = 0;
    for (int k = 0; k < 3; k++) {
        if (!lists[k].n) continue;
        /* Assign first, remembering each outcome, then write the two maps. */
        int *rcs = json_arena_alloc(&c->arena, lists[k].n * sizeof *rcs);
        char **out = json_arena_alloc(&c->arena, lists[k].n * sizeof *out);
        int nerr = 0;
        for (size_t i = 0; i < lists[k].n; i++) {
            const char *nm = lists[k].names[i];
            uint64_t id;
            int created = 0;
            oct_errbuf_t eb;
            char buf[OCT_ERRBUF_SIZE + 64];
            int rc = uid_get_or_create(u, (codec_uid_kind_t)k, (const uint8_t *)nm, strlen(nm), &id,
                                       &created, &eb);
            if (rc == 0 && created) {
                uid_hex(c->tsd, (codec_uid_kind_t)k, id, buf, sizeof buf);
            } else if (rc == 0) {
                char hex[40];
                uid_hex(c->tsd, (codec_uid_kind_t)k, id, hex, sizeof hex);
                snprintf(buf, sizeof buf, "Name already exists with UID: %s", hex);
                rc = OCT_EEXISTS;
            } else {
                snprintf(buf, sizeof buf, "%s", eb.msg);
            }
            rcs[i] = rc;
            out[i] = json_arena_strndup(&c->arena, buf, strlen(buf));
            nerr += rc != 0;
        }
        errors += nerr;
        json_w_key(&w, uid_api_keys[k]);
        json_w_obj_begin(&w);
        for (size_t i = 0; i < lists[k].n; i++) {
            if (rcs[i]) continue;
            json_w_key(&w, lists[k].names[i]);
            json_w_str(&w, out[i]);
        }
        json_w_obj_end(&w);
        if (nerr) {
            char key[32];
            snprintf(key, sizeof key, "%s_errors", uid_api_keys[k]);
            json_w_key(&w, key);
            json_w_obj_begin(&w);
            for (size_t i = 0; i < lists[k].n; i++) {
                if (!rcs[i]) continue;
                json_w_key(&w, lists[k].names[i]);
                json_w_str(&w, out[i]);
            }
            json_w_obj_end(&w);
        }
    }
    json_w_obj_end(&w);
    c->resp->status = errors ? 400 : 200;
}

/* ---- /api/uid/uidmeta --------------------------------------------------- */

typedef struct {
    const char *display_name, *description, *notes, *custom_json;
    int64_t created;
} uidm_t;

static void uidm_write(json_writer_t *w, const char *hex, codec_uid_kind_t kind, const char *name,
                       size_t name_len, const uidm_t *m)
{
    static const char *const tn[3] = {"METRIC", "TAGK", "TAGV"};
    json_w_obj_begin(w);
    json_w_key(w, "uid");
    json_w_str(w, hex);
    json_w_key(w, "type");
    json_w_str(w, tn[kind]);
    json_w_key(w, "name");
    json_w_strn(w, name, name_len);
    json_w_key(w, "displayName");
    json_w_str(w, m->display_name ? m->display_name : "");
    json_w_key(w, "description");
    json_w_str(w, m->description ? m->description : "");
    json_w_key(w, "notes");
    json_w_str(w, m->notes ? m->notes : "");
    json_w_key(w, "created");
    json_w_int(w, m->created);
    json_w_key(w, "custom");
    if (m->custom_json)
        json_w_raw(w, m->custom_json, strlen(m->custom_json));
    else
        json_w_null(w);
    json_w_obj_end(w);
}

static const char *jcustom(api_call_t *c, const json_value_t *o)
{
    const json_value_t *v = json_obj_get(o, "custom");
    if (!v || v->type != JSON_OBJECT) return NULL;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &sb);
    json_w_value(&w, v);
    const char *r = json_arena_strndup(&c->arena, sb.ptr, sb.len);
    oct_strbuf_free(&sb);
    return r;
}

/* Reads the stored UIDMeta (defaults if none). Returns 0, or -1 with the
 * response written. */
static int uidm_load(api_call_t *c, codec_uid_kind_t kind, uint64_t id, uidm_t *m, int *stored)
{
    memset(m, 0, sizeof *m);
    *stored = 0;
    char *json;
    size_t len;
    oct_errbuf_t eb;
    int rc = uid_meta_get(tsdb_uids(c->tsd->db), kind, id, &json, &len, &eb);
    if (rc < 0) {
        http_error(c->resp, 500, "Unable to read the UID meta data", eb.msg);
        return -1;
    }
    if (rc == 1) {
        json_value_t *o;
        const char *txt = json_arena_strndup(&c->arena, json, len);
        if (!json_parse(&c->arena, txt, len, 0, &o, &eb) && o->type == JSON_OBJECT) {
            m->display_name = api_json_cstr(c, o, "displayName");
            m->description = api_json_cstr(c, o, "description");
            m->notes = api_json_cstr(c, o, "notes");
            m->custom_json = jcustom(c, o);
            const json_value_t *cr = json_obj_get(o, "created");
            if (cr && json_number_i64(cr, &m->created)) m->created = 0;
            *stored = 1;
        }
    }
    free(json);
    return 0;
}

static int streq0(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int custom_eq(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return !strcmp(a, b);
}

void api_uid_uidmeta(api_call_t *c)
{
    json_value_t *body = NULL;
    char uid_s[64] = "", type_s[32] = "";
    int body_mode = (c->verb == API_POST || c->verb == API_PUT) && api_has_body(c);
    if (body_mode) {
        body = api_body_json(c, 0);
        if (!body) return;
        const char *u = api_json_cstr(c, body, "uid"), *t = api_json_cstr(c, body, "type");
        if (u) snprintf(uid_s, sizeof uid_s, "%s", u);
        if (t) snprintf(type_s, sizeof type_s, "%s", t);
    } else {
        http_param(c->req, "uid", uid_s, sizeof uid_s);
        http_param(c->req, "type", type_s, sizeof type_s);
    }
    if (!uid_s[0]) {
        http_error(c->resp, 400, "Missing parameter <code>uid</code>", NULL);
        return;
    }
    if (!type_s[0]) {
        http_error(c->resp, 400, "Missing parameter <code>type</code>", NULL);
        return;
    }
    int k = api_kind_from_type(type_s);
    if (k < 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "Invalid type requested: %s", type_s);
        http_error(c->resp, 400, msg, NULL);
        return;
    }
    codec_uid_kind_t kind = (codec_uid_kind_t)k;
    uid_registry_t *u = tsdb_uids(c->tsd->db);
    unsigned width = uid_width(u, kind);
    uint8_t idb[8];
    oct_errbuf_t eb;
    if (codec_uid_from_hex(uid_s, strlen(uid_s), width, idb, &eb)) {
        http_error(c->resp, 400, "Unable to parse the UID", eb.msg);
        return;
    }
    uint64_t id = codec_uid_decode(idb, width);
    uint8_t name[UID_NAME_MAX];
    size_t nl;
    int rc = uid_get_name(u, kind, id, name, sizeof name, &nl, &eb);
    if (rc) {
        if (rc == OCT_ENOSUCHID)
            http_error(c->resp, 404, "Could not find the requested UID", NULL);
        else
            http_error(c->resp, 500, "Unable to read the UID", eb.msg);
        return;
    }
    char hex[24];
    uid_hex(c->tsd, kind, id, hex, sizeof hex);

    if (c->verb == API_DELETE) {
        if (uid_meta_delete(u, kind, id, &eb)) {
            http_error(c->resp, 500, "Unable to delete the UID meta data", eb.msg);
            return;
        }
        c->resp->status = 204;
        oct_strbuf_reset(&c->resp->body);
        return;
    }
    uidm_t cur;
    int stored;
    if (uidm_load(c, kind, id, &cur, &stored)) return;
    if (c->verb == API_GET) {
        json_writer_t w;
        api_json_begin(c, &w);
        uidm_write(&w, hex, kind, (const char *)name, nl, &cur);
        return;
    }
    /* POST merges given fields, PUT replaces them all. */
    uidm_t nw = c->verb == API_PUT ? (uidm_t){0} : cur;
    nw.created = cur.created;
    const char *dn, *de, *no;
    if (body) {
        dn = api_json_cstr(c, body, "displayName");
        de = api_json_cstr(c, body, "description");
        no = api_json_cstr(c, body, "notes");
        if (json_obj_get(body, "custom")) nw.custom_json = jcustom(c, body);
        const json_value_t *cr = json_obj_get(body, "created");
        int64_t cv;
        if (cr && !json_number_i64(cr, &cv) && cv > 0) nw.created = cv;
    } else {
        char *b1 = json_arena_alloc(&c->arena, 4096), *b2 = json_arena_alloc(&c->arena, 4096),
             *b3 = json_arena_alloc(&c->arena, 4096);
        dn = http_param(c->req, "display_name", b1, 4096) ? b1 : NULL;
        de = http_param(c->req, "description", b2, 4096) ? b2 : NULL;
        no = http_param(c->req, "notes", b3, 4096) ? b3 : NULL;
    }
    if (dn || c->verb == API_PUT) nw.display_name = dn;
    if (de || c->verb == API_PUT) nw.description = de;
    if (no || c->verb == API_PUT) nw.notes = no;
    if (stored && streq0(nw.display_name, cur.display_name) &&
        streq0(nw.description, cur.description) && streq0(nw.notes, cur.notes) &&
        custom_eq(nw.custom_json, cur.custom_json) && nw.created == cur.created) {
        c->resp->status = 304;
        oct_strbuf_reset(&c->resp->body);
        return;
    }
    uid_meta_t um = {nw.display_name, nw.description, nw.notes, nw.created, nw.custom_json};
    if (uid_meta_put(u, kind, id, &um, &eb)) {
        http_error(c->resp, 500, "Unable to store the UID meta data", eb.msg);
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    uidm_write(&w, hex, kind, (const char *)name, nl, &nw);
}

/* ---- /api/uid/tsmeta ---------------------------------------------------- */

/* The UIDMeta object of one UID (api_int.h). */
int api_write_uidmeta(api_call_t *c, json_writer_t *w, codec_uid_kind_t kind, uint64_t id)
{
    uint8_t name[UID_NAME_MAX];
    size_t nl;
    oct_errbuf_t eb;
    if (uid_get_name(tsdb_uids(c->tsd->db), kind, id, name, sizeof name, &nl, &eb)) return -1;
    uidm_t m;
    int stored;
    if (uidm_load(c, kind, id, &m, &stored)) return -1;
    char hex[24];
    uid_hex(c->tsd, kind, id, hex, sizeof hex);
    uidm_write(w, hex, kind, (const char *)name, nl, &m);
    return 0;
}

int api_write_tsmeta(api_call_t *c, json_writer_t *w, const uint8_t *tsuid, size_t len,
                     const tsmeta_t *m, int64_t counter)
{
    const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
    unsigned mw = l->uid_width[0], kw = l->uid_width[1], vw = l->uid_width[2];
    char hex[1024];
    if (codec_uid_to_hex(tsuid, len, hex, sizeof hex) < 0) hex[0] = '\0';
    json_w_obj_begin(w);
    json_w_key(w, "tsuid");
    json_w_str(w, hex);
    json_w_key(w, "metric");
    if (api_write_uidmeta(c, w, CODEC_UID_METRIC, codec_uid_decode(tsuid, mw))) return -1;
    json_w_key(w, "tags");
    json_w_arr_begin(w);
    for (size_t off = mw; off + kw + vw <= len; off += kw + vw) {
        if (api_write_uidmeta(c, w, CODEC_UID_TAGK, codec_uid_decode(tsuid + off, kw)) ||
            api_write_uidmeta(c, w, CODEC_UID_TAGV, codec_uid_decode(tsuid + off + kw, vw)))
            return -1;
    }
    json_w_arr_end(w);
    json_w_key(w, "description");
    json_w_str(w, m->description ? m->description : "");
    json_w_key(w, "notes");
    json_w_str(w, m->notes ? m->notes : "");
    json_w_key(w, "created");
    json_w_int(w, m->created);
    json_w_key(w, "units");
    json_w_str(w, m->units ? m->units : "");
    json_w_key(w, "retention");
    json_w_int(w, m->retention);
    json_w_key(w, "max");
    json_w_double(w, m->max);
    json_w_key(w, "min");
    json_w_double(w, m->min);
    json_w_key(w, "displayName");
    json_w_str(w, m->display_name ? m->display_name : "");
    json_w_key(w, "dataType");
    json_w_str(w, m->data_type ? m->data_type : "");
    json_w_key(w, "lastReceived");
    json_w_int(w, 0); /* no cell timestamps in our store */
    json_w_key(w, "totalDatapoints");
    json_w_int(w, counter);
    json_w_key(w, "custom");
    if (m->custom_json)
        json_w_raw(w, m->custom_json, strlen(m->custom_json));
    else
        json_w_null(w);
    json_w_obj_end(w);
    return 0;
}

typedef struct {
    api_call_t *c;
    uint8_t *found;
    size_t found_len;
    size_t want_pairs;
    size_t n;
    uint8_t (*list)[256];
    size_t *lens;
    size_t cap;
} tsm_find_t;

static int tsm_find_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    tsm_find_t *f = ctx;
    if (f->n < f->cap && len <= 256) {
        memcpy(f->list[f->n], tsuid, len);
        f->lens[f->n++] = len;
    }
    return 0;
}

/* Resolves m=<metric>{k=v,...} to the series carrying those tags (and, if
 * exact, no others). Returns the number of series found (into f->list), or
 * -1 with the response written. */
static long tsm_resolve_m(api_call_t *c, const char *m, tsm_find_t *f, int exact)
{
    api_mexpr_t e;
    if (api_parse_mexpr(c, m, &e)) return -1;
    oct_errbuf_t eb;
    f->cap = 1024;
    f->list = json_arena_alloc(&c->arena, f->cap * sizeof *f->list);
    f->lens = json_arena_alloc(&c->arena, f->cap * sizeof *f->lens);
    f->n = 0;
    if (tsdb_select_names(c->tsd->db, e.metric, e.tagk, e.tagv, e.n_tags,
                          exact ? TSDB_SELECT_EXACT : TSDB_SELECT_SUBSET, tsm_find_cb, f, &eb)) {
        http_error(c->resp, 404, eb.msg, NULL);
        return -1;
    }
    return (long)f->n;
}

static const char *tsm_param(api_call_t *c, const char *name)
{
    char *b = json_arena_alloc(&c->arena, 4096);
    return http_param(c->req, name, b, 4096) ? b : NULL;
}

static int tsm_same(const tsmeta_t *a, const tsmeta_t *b)
{
    int maxeq = (isnan(a->max) && isnan(b->max)) || a->max == b->max;
    int mineq = (isnan(a->min) && isnan(b->min)) || a->min == b->min;
    return streq0(a->display_name, b->display_name) && streq0(a->description, b->description) &&
           streq0(a->notes, b->notes) && streq0(a->units, b->units) &&
           streq0(a->data_type, b->data_type) && custom_eq(a->custom_json, b->custom_json) &&
           a->created == b->created && a->retention == b->retention && maxeq && mineq;
}

void api_uid_tsmeta(api_call_t *c)
{
    tsdb_t *db = c->tsd->db;
    const tsdb_layout_t *l = tsdb_layout(db);
    codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                (uint8_t)l->uid_width[2], 0, 1};
    json_value_t *body = NULL;
    int body_mode = (c->verb == API_POST || c->verb == API_PUT) && api_has_body(c);
    const char *tsuid_s = NULL;
    if (body_mode) {
        body = api_body_json(c, JSON_ALLOW_NONFINITE);
        if (!body) return;
        tsuid_s = api_json_cstr(c, body, "tsuid");
    } else {
        tsuid_s = tsm_param(c, "tsuid");
    }
    const char *m = tsm_param(c, "m");
    oct_errbuf_t eb;
    uint8_t tsuid[256];
    int tlen = 0;
    if (tsuid_s && *tsuid_s) {
        tlen = codec_tsuid_from_hex(&rl, tsuid_s, strlen(tsuid_s), tsuid, sizeof tsuid, &eb);
        if (tlen < 0) {
            http_error(c->resp, 400, "Unable to parse the TSUID", eb.msg);
            return;
        }
    }

    if (c->verb == API_GET) {
        json_writer_t w;
        if (tlen > 0) {
            tsmeta_t tm;
            int64_t ctr;
            int rc = tsmeta_get(db, tsuid, (size_t)tlen, &c->arena, &tm, &ctr, &eb);
            if (rc < 0) {
                http_error(c->resp, 500, "Unable to read the TSMeta", eb.msg);
                return;
            }
            if (rc == 0) {
                http_error(c->resp, 404, "Could not find Timeseries meta data", NULL);
                return;
            }
            api_json_begin(c, &w);
            if (api_write_tsmeta(c, &w, tsuid, (size_t)tlen, &tm, ctr)) {
                http_error(c->resp, 404, "Could not find the requested UID", NULL);
            }
            return;
        }
        if (!m || !*m) {
            http_error(c->resp, 400, "Missing parameter <code>tsuid</code>", NULL);
            return;
        }
        tsm_find_t f = {.c = c};
        if (tsm_resolve_m(c, m, &f, 0) < 0) return;
        api_json_begin(c, &w);
        json_w_arr_begin(&w);
        for (size_t i = 0; i < f.n; i++) {
            tsmeta_t tm;
            int64_t ctr;
            if (tsmeta_get(db, f.list[i], f.lens[i], &c->arena, &tm, &ctr, &eb) == 1)
                (void)api_write_tsmeta(c, &w, f.list[i], f.lens[i], &tm, ctr);
        }
        json_w_arr_end(&w);
        return;
    }

    /* Writes identify one series: by tsuid, or by m= with exact tags. */
    if (tlen == 0) {
        if (!m || !*m) {
            http_error(c->resp, 400, "Missing parameter <code>tsuid</code>", NULL);
            return;
        }
        tsm_find_t f = {.c = c};
        long n = tsm_resolve_m(c, m, &f, 1);
        if (n < 0) return;
        if (n == 0) {
            http_error(c->resp, 404, "Could not find the requested time series", m);
            return;
        }
        memcpy(tsuid, f.list[0], f.lens[0]);
        tlen = (int)f.lens[0];
    }
    /* The series' UIDs must exist (OpenTSDB checks the metric and tags). */
    {
        uint8_t nm[UID_NAME_MAX];
        size_t nl;
        unsigned mw = rl.metric_w, kw = rl.tagk_w, vw = rl.tagv_w;
        int bad = uid_get_name(tsdb_uids(db), CODEC_UID_METRIC, codec_uid_decode(tsuid, mw), nm,
                               sizeof nm, &nl, &eb);
        for (size_t off = mw; !bad && off + kw + vw <= (size_t)tlen; off += kw + vw)
            bad = uid_get_name(tsdb_uids(db), CODEC_UID_TAGK, codec_uid_decode(tsuid + off, kw), nm,
                               sizeof nm, &nl, &eb) ||
                  uid_get_name(tsdb_uids(db), CODEC_UID_TAGV,
                               codec_uid_decode(tsuid + off + kw, vw), nm, sizeof nm, &nl, &eb);
        if (bad) {
            http_error(c->resp, 404, "Could not find the requested UID", NULL);
            return;
        }
    }
    if (c->verb == API_DELETE) {
        if (tsmeta_delete(db, tsuid, (size_t)tlen, &eb)) {
            http_error(c->resp, 500, "Unable to delete the TSMeta", eb.msg);
            return;
        }
        c->resp->status = 204;
        oct_strbuf_reset(&c->resp->body);
        return;
    }
    tsmeta_t cur;
    int64_t ctr = 0;
    int rc = tsmeta_get(db, tsuid, (size_t)tlen, &c->arena, &cur, &ctr, &eb);
    if (rc < 0) {
        http_error(c->resp, 500, "Unable to read the TSMeta", eb.msg);
        return;
    }
    int create = 0;
    if (rc == 0) {
        char cb[16];
        create = http_param(c->req, "create", cb, sizeof cb) && !strcasecmp(cb, "true");
        if (!create) {
            http_error(c->resp, 400,
                       "Could not find TSMeta, specify \"create=true\" to create a new one.", NULL);
            return;
        }
        tsmeta_init(&cur);
    }
    tsmeta_t nw;
    if (c->verb == API_PUT)
        tsmeta_init(&nw);
    else
        nw = cur;
    nw.created = cur.created;
    if (create && !nw.created) nw.created = oct_clock_wall_ms() / 1000;
    const char *sv[5];
    static const char *const bkeys[5] = {"displayName", "description", "notes", "units",
                                         "dataType"};
    static const char *const qkeys[5] = {"display_name", "description", "notes", "units",
                                         "data_type"};
    for (int i = 0; i < 5; i++)
        sv[i] = body ? api_json_cstr(c, body, bkeys[i]) : tsm_param(c, qkeys[i]);
    const char **dst[5] = {&nw.display_name, &nw.description, &nw.notes, &nw.units, &nw.data_type};
    for (int i = 0; i < 5; i++)
        if (sv[i] || c->verb == API_PUT) *dst[i] = sv[i];
    if (body) {
        const json_value_t *v;
        int64_t iv;
        double dv;
        if ((v = json_obj_get(body, "retention")) && !json_number_i64(v, &iv)) nw.retention = iv;
        if ((v = json_obj_get(body, "max")) && !json_number_double(v, &dv)) nw.max = dv;
        if ((v = json_obj_get(body, "min")) && !json_number_double(v, &dv)) nw.min = dv;
        if (json_obj_get(body, "custom")) nw.custom_json = jcustom(c, body);
    } else {
        const char *s;
        if ((s = tsm_param(c, "retention"))) nw.retention = strtoll(s, NULL, 10);
        if ((s = tsm_param(c, "max"))) nw.max = strtod(s, NULL);
        if ((s = tsm_param(c, "min"))) nw.min = strtod(s, NULL);
    }
    if (!create && tsm_same(&nw, &cur)) {
        c->resp->status = 304;
        oct_strbuf_reset(&c->resp->body);
        return;
    }
    if (tsmeta_put(db, tsuid, (size_t)tlen, &nw, create, &eb)) {
        http_error(c->resp, 500, "Unable to store the TSMeta", eb.msg);
        return;
    }
    /* as 2.4: a TSMeta created here goes through every enabled tree; a
     * failure there is logged, the TSMeta stands */
    if (create && oct_config_get_bool(c->tsd->cfg, "tsd.core.tree.enable_processing") &&
        tsdb_tree_process_new(db, tsuid, (size_t)tlen, &eb) < 0)
        oct_log(OCT_LOG_WARN, "tree", "new TSMeta: tree processing failed: %s", eb.msg);
    json_writer_t w;
    api_json_begin(c, &w);
    if (api_write_tsmeta(c, &w, tsuid, (size_t)tlen, &nw, create ? 0 : ctr))
        http_error(c->resp, 404, "Could not find the requested UID", NULL);
}

/* ---- /api/uid/rename ---------------------------------------------------- */

void api_uid_rename(api_call_t *c)
{
    const char *old = NULL, *nname = NULL;
    int kind = -1;
    json_value_t *body = NULL;
    if (c->verb == API_POST && api_has_body(c)) {
        body = api_body_json(c, 0);
        if (!body) return;
        nname = api_json_cstr(c, body, "name");
        for (int k = 0; k < 3 && kind < 0; k++)
            if ((old = api_json_cstr(c, body, uid_api_keys[k]))) kind = k;
    } else {
        nname = tsm_param(c, "name");
        for (int k = 0; k < 3 && kind < 0; k++)
            if ((old = tsm_param(c, uid_api_keys[k]))) kind = k;
    }
    if (kind < 0 || !old || !*old || !nname || !*nname) {
        http_error(c->resp, 400, "Missing necessary values to rename UID", NULL);
        return;
    }
    oct_errbuf_t eb;
    int rc = uid_rename(tsdb_uids(c->tsd->db), (codec_uid_kind_t)kind, (const uint8_t *)old,
                        strlen(old), (const uint8_t *)nname, strlen(nname), &eb);
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "result");
    json_w_str(&w, rc ? "false" : "true");
    if (rc) {
        json_w_key(&w, "error");
        json_w_str(&w, eb.msg);
    }
    json_w_obj_end(&w);
    c->resp->status = rc ? 400 : 200;
}
