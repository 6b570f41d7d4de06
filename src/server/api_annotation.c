/* api_annotation.c -- /api/annotation, /api/annotation/bulk, /api/annotations
 * (docs/http-api.md, Annotations), over the annotation cells of tsdb/annotation.h.
 *
 * OpenTSDB's update rules are kept: a note "changes" a field only when the
 * request sets it to something other than its default ("" / 0 / no custom
 * map), and a request that changes nothing answers 304 without writing.
 * POST merges the changed fields into the stored note, PUT replaces every
 * field; either answers the note as stored. Query-string times go through
 * the query date parser and are kept in seconds (OpenTSDB divides them by
 * 1000); JSON times are taken as given (seconds, or ms when they do not fit
 * in 32 bits).
 *
 * API JSON of a note: tsuid (omitted for global notes), description, notes,
 * custom (omitted when null), endTime, startTime -- the order OpenTSDB's
 * Jackson serializer produces for its Annotation class. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/clock.h"
#include "query/query.h"
#include "server/api_int.h"
#include "tsdb/annotation.h"
#include "tsdb/tsdb.h"

#define ANN_TSUID_MAX 256

enum { CH_END = 1u << 0, CH_DESC = 1u << 1, CH_NOTES = 1u << 2, CH_CUSTOM = 1u << 3 };

typedef struct {
    const char *tsuid_s; /* as given, NULL or "" = global */
    uint8_t tsuid[ANN_TSUID_MAX];
    size_t tsuid_len;
    int64_t start_time, end_time;
    const char *description, *notes; /* never NULL */
    const char *custom;              /* JSON object text or NULL */
    unsigned changed;
} note_t;

static void note_init(note_t *n)
{
    memset(n, 0, sizeof *n);
    n->description = "";
    n->notes = "";
}

static const char *ann_param(api_call_t *c, const char *name)
{
    char *b = json_arena_alloc(&c->arena, 4096);
    return http_param(c->req, name, b, 4096) ? b : NULL;
}

/* OpenTSDB's DateTime.parseDateTimeString: absent/empty = -1. */
static int ann_parse_time(api_call_t *c, const char *s, int64_t *out_ms)
{
    if (!s || !*s) {
        *out_ms = -1;
        return 0;
    }
    oct_errbuf_t eb;
    const char *tz = oct_config_get(c->tsd->cfg, "tsd.core.timezone");
    if (query_parse_time(s, tz, oct_clock_wall_ms(), out_ms, &eb)) {
        http_error(c->resp, 400, eb.msg, NULL);
        return -1;
    }
    return 0;
}

/* A long the way Jackson binds one: a JSON integer, or a string holding one. */
static int ann_json_long(const json_value_t *v, int64_t *out)
{
    if (v->type == JSON_NUMBER) return json_number_i64(v, out) ? -1 : 0;
    if (v->type == JSON_STRING) {
        char buf[32];
        if (v->len == 0 || v->len >= sizeof buf) return -1;
        memcpy(buf, v->str, v->len);
        buf[v->len] = '\0';
        char *end;
        long long x = strtoll(buf, &end, 10);
        if (*end) return -1;
        *out = x;
        return 0;
    }
    if (v->type == JSON_NULL) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* custom -> a JSON object of strings (Map<String,String>): scalars become
 * their text, the last of duplicate keys wins. NULL for null. Returns 0 or
 * -1 (not an object of scalars). */
static int ann_custom(api_call_t *c, const json_value_t *v, const char **out)
{
    *out = NULL;
    if (v->type == JSON_NULL) return 0;
    if (v->type != JSON_OBJECT) return -1;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &sb);
    json_w_obj_begin(&w);
    for (const json_value_t *m = v->child; m; m = m->next) {
        int later = 0;
        for (const json_value_t *x = m->next; x && !later; x = x->next)
            later = x->key_len == m->key_len && !memcmp(x->key, m->key, m->key_len);
        if (later) continue;
        json_w_keyn(&w, m->key, m->key_len);
        switch (m->type) {
        case JSON_STRING:
        case JSON_NUMBER:
            json_w_strn(&w, m->str, m->len);
            break;
        case JSON_TRUE:
            json_w_str(&w, "true");
            break;
        case JSON_FALSE:
            json_w_str(&w, "false");
            break;
        case JSON_NULL:
            json_w_null(&w);
            break;
        default:
            oct_strbuf_free(&sb);
            return -1;
        }
    }
    json_w_obj_end(&w);
    *out = json_arena_strndup(&c->arena, sb.ptr, sb.len);
    oct_strbuf_free(&sb);
    return 0;
}

/* Binds a JSON object to a note as Jackson binds OpenTSDB's Annotation
 * (unknown fields ignored). Returns 0 or -1 with a 400 written. */
static int note_from_json(api_call_t *c, const json_value_t *o, note_t *n)
{
    note_init(n);
    if (!o || o->type != JSON_OBJECT) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "expected an object");
        return -1;
    }
    for (const json_value_t *m = o->child; m; m = m->next) {
        char key[16];
        if (m->key_len >= sizeof key) continue;
        memcpy(key, m->key, m->key_len);
        key[m->key_len] = '\0';
        const char *bad = NULL;
        if (!strcmp(key, "tsuid")) {
            if (m->type == JSON_STRING)
                n->tsuid_s = json_arena_strndup(&c->arena, m->str, m->len);
            else if (m->type == JSON_NULL)
                n->tsuid_s = NULL;
            else
                bad = "tsuid";
        } else if (!strcmp(key, "startTime")) {
            if (ann_json_long(m, &n->start_time)) bad = "startTime";
        } else if (!strcmp(key, "endTime")) {
            int64_t e;
            if (ann_json_long(m, &e))
                bad = "endTime";
            else if (e != n->end_time) {
                n->end_time = e;
                n->changed |= CH_END;
            }
        } else if (!strcmp(key, "description") || !strcmp(key, "notes")) {
            int d = key[0] == 'd';
            if (m->type == JSON_NULL) continue;
            if (m->type != JSON_STRING) {
                bad = key;
            } else {
                const char *s = json_arena_strndup(&c->arena, m->str, m->len);
                const char **f = d ? &n->description : &n->notes;
                if (strcmp(*f, s)) {
                    *f = s;
                    n->changed |= d ? CH_DESC : CH_NOTES;
                }
            }
        } else if (!strcmp(key, "custom")) {
            if (ann_custom(c, m, &n->custom))
                bad = "custom";
            else if (n->custom)
                n->changed |= CH_CUSTOM;
        }
        if (bad) {
            char det[96];
            snprintf(det, sizeof det, "bad value for the field \"%s\"", bad);
            http_error(c->resp, 400, "Unable to parse the given JSON", det);
            return -1;
        }
    }
    return 0;
}

/* The query-string form: tsuid, start_time (required), end_time,
 * description, notes; times in seconds. Returns 0 or -1 (400 written). */
static int note_from_qs(api_call_t *c, note_t *n)
{
    note_init(n);
    n->tsuid_s = ann_param(c, "tsuid");
    int64_t ms;
    if (ann_parse_time(c, ann_param(c, "start_time"), &ms)) return -1;
    if (ms < 1) {
        http_error(c->resp, 400, "Missing start time", NULL);
        return -1;
    }
    n->start_time = ms / 1000;
    if (ann_parse_time(c, ann_param(c, "end_time"), &ms)) return -1;
    if (ms / 1000 != 0) {
        n->end_time = ms / 1000;
        n->changed |= CH_END;
    }
    const char *d = ann_param(c, "description"), *t = ann_param(c, "notes");
    if (d && *d) {
        n->description = d;
        n->changed |= CH_DESC;
    }
    if (t && *t) {
        n->notes = t;
        n->changed |= CH_NOTES;
    }
    return 0;
}

/* Parses n->tsuid_s into bytes. Returns 0 or -1 with a 400 written. */
static int note_tsuid(api_call_t *c, note_t *n)
{
    n->tsuid_len = 0;
    if (!n->tsuid_s || !*n->tsuid_s) return 0;
    const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
    codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                (uint8_t)l->uid_width[2], 0, 1};
    oct_errbuf_t eb;
    int r =
        codec_tsuid_from_hex(&rl, n->tsuid_s, strlen(n->tsuid_s), n->tsuid, sizeof n->tsuid, &eb);
    if (r < 0) {
        char msg[ANN_TSUID_MAX + 64];
        snprintf(msg, sizeof msg, "Invalid TSUID: %.*s", ANN_TSUID_MAX, n->tsuid_s);
        http_error(c->resp, 400, msg, eb.msg);
        return -1;
    }
    n->tsuid_len = (size_t)r;
    return 0;
}

int api_write_annotation(api_call_t *c, json_writer_t *w, const char *json, size_t len)
{
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&c->arena, json, len, JSON_ALLOW_NONFINITE, &v, &eb) || v->type != JSON_OBJECT)
        return -1;
    json_w_obj_begin(w);
    const json_value_t *t = json_obj_get(v, "tsuid");
    if (t && t->type == JSON_STRING && t->len) {
        json_w_key(w, "tsuid");
        json_w_strn(w, t->str, t->len);
    }
    static const char *const strs[2] = {"description", "notes"};
    for (int i = 0; i < 2; i++) {
        const json_value_t *s = json_obj_get(v, strs[i]);
        json_w_key(w, strs[i]);
        if (s && s->type == JSON_STRING)
            json_w_strn(w, s->str, s->len);
        else
            json_w_str(w, "");
    }
    const json_value_t *cu = json_obj_get(v, "custom");
    if (cu && cu->type == JSON_OBJECT) {
        json_w_key(w, "custom");
        json_w_value(w, cu);
    }
    static const char *const nums[2] = {"endTime", "startTime"};
    for (int i = 0; i < 2; i++) {
        const json_value_t *s = json_obj_get(v, nums[i]);
        int64_t x = 0;
        if (s && s->type == JSON_NUMBER && json_number_i64(s, &x)) x = 0;
        json_w_key(w, nums[i]);
        json_w_int(w, x);
    }
    json_w_obj_end(w);
    return 0;
}

/* Stored JSON -> note fields (for merging). Strings into the arena. */
static void note_from_stored(api_call_t *c, const char *json, note_t *s)
{
    note_init(s);
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&c->arena, json, strlen(json), JSON_ALLOW_NONFINITE, &v, &eb)) return;
    const json_value_t *x;
    if ((x = json_obj_get(v, "startTime")) && x->type == JSON_NUMBER &&
        json_number_i64(x, &s->start_time))
        s->start_time = 0;
    if ((x = json_obj_get(v, "endTime")) && x->type == JSON_NUMBER &&
        json_number_i64(x, &s->end_time))
        s->end_time = 0;
    if ((x = json_obj_get(v, "description")) && x->type == JSON_STRING)
        s->description = json_arena_strndup(&c->arena, x->str, x->len);
    if ((x = json_obj_get(v, "notes")) && x->type == JSON_STRING)
        s->notes = json_arena_strndup(&c->arena, x->str, x->len);
    if ((x = json_obj_get(v, "custom")) && x->type == JSON_OBJECT) {
        oct_strbuf_t sb = OCT_STRBUF_INIT;
        json_writer_t w;
        json_w_init(&w, &sb);
        json_w_value(&w, x);
        s->custom = json_arena_strndup(&c->arena, sb.ptr, sb.len);
        oct_strbuf_free(&sb);
    }
}

/* ctx + OpenTSDB's Annotation.toString(), for error details. */
static void note_describe(const note_t *n, const char *ctx, char *buf, size_t cap)
{
    snprintf(buf, cap, "%sTSUID: %.*s Start: %lld  Description: %.128s", ctx, ANN_TSUID_MAX,
             n->tsuid_s ? n->tsuid_s : "", (long long)n->start_time, n->description);
}

/* Merge (POST) or replace (PUT) one note and store it; the stored JSON
 * (malloc'd) into *stored. Returns 200, 304 (nothing changed), or another
 * status with the error response written (then *stored is NULL). */
static int note_sync(api_call_t *c, note_t *n, int overwrite, char **stored, const char *ctx)
{
    *stored = NULL;
    char det[ANN_TSUID_MAX + 256];
    note_describe(n, ctx, det, sizeof det);
    if (n->start_time < 1) {
        http_error(c->resp, 400, "The start timestamp has not been set", det);
        return 400;
    }
    if (!n->changed) return 304;
    if (note_tsuid(c, n)) return 400;
    tsdb_t *db = c->tsd->db;
    oct_errbuf_t eb;
    char *old = NULL;
    int rc = tsdb_annotation_get(db, n->tsuid_len ? n->tsuid : NULL, n->tsuid_len, n->start_time,
                                 &old, &eb);
    if (rc < 0) {
        if (rc == OCT_ERANGE || rc == OCT_EPARSE) {
            http_error(c->resp, 400, eb.msg, det);
            return 400;
        }
        http_error(c->resp, 500, "Unable to read the annotation", eb.msg);
        return 500;
    }
    tsdb_annotation_t a = {n->tsuid_len ? n->tsuid : NULL,
                           n->tsuid_len,
                           n->start_time,
                           n->end_time,
                           n->description,
                           n->notes,
                           n->custom};
    if (old) {
        note_t s;
        note_from_stored(c, old, &s);
        free(old);
        /* the same instant may be stored in s and asked in ms: keep the smaller */
        if (s.start_time > 0 && s.start_time < a.start_time) a.start_time = s.start_time;
        if (!overwrite) {
            if (!(n->changed & CH_END)) a.end_time = s.end_time;
            if (!(n->changed & CH_DESC)) a.description = s.description;
            if (!(n->changed & CH_NOTES)) a.notes = s.notes;
            if (!(n->changed & CH_CUSTOM)) a.custom_json = s.custom;
        }
    }
    rc = tsdb_annotation_put(db, &a, &eb);
    if (rc == 0) rc = tsdb_annotation_get(db, a.tsuid, a.tsuid_len, a.start_time, stored, &eb);
    if (rc == 1 && *stored) return 200;
    if (rc == OCT_EEXISTS) {
        http_error(c->resp, 409, eb.msg, det);
        return 409;
    }
    http_error(c->resp, 500, "Failed to save the Annotation to storage", eb.msg);
    return 500;
}

void api_annotation(api_call_t *c)
{
    note_t n;
    int body = c->verb != API_GET && api_has_body(c);
    if (body) {
        json_value_t *v = api_body_json(c, JSON_ALLOW_NONFINITE);
        if (!v || note_from_json(c, v, &n)) return;
    } else if (note_from_qs(c, &n)) {
        return;
    }
    tsdb_t *db = c->tsd->db;
    oct_errbuf_t eb;
    json_writer_t w;
    if (c->verb == API_GET) {
        if (note_tsuid(c, &n)) return;
        char *js = NULL;
        int rc = tsdb_annotation_get(db, n.tsuid_len ? n.tsuid : NULL, n.tsuid_len, n.start_time,
                                     &js, &eb);
        if (rc < 0 && rc != OCT_ERANGE) {
            http_error(c->resp, 500, "Unable to read the annotation", eb.msg);
            return;
        }
        if (rc != 1) {
            http_error(c->resp, 404, "Unable to locate annotation in storage", NULL);
            return;
        }
        api_json_begin(c, &w);
        if (api_write_annotation(c, &w, js, strlen(js)))
            http_error(c->resp, 500, "Unable to parse the stored annotation", NULL);
        free(js);
        return;
    }
    if (c->verb == API_DELETE) {
        if (n.start_time < 1) {
            http_error(c->resp, 400, "Unable to delete Annotation information",
                       "The start timestamp has not been set");
            return;
        }
        if (note_tsuid(c, &n)) return;
        int rc = tsdb_annotation_delete(db, n.tsuid_len ? n.tsuid : NULL, n.tsuid_len, n.start_time,
                                        &eb);
        if (rc < 0) {
            if (rc == OCT_ERANGE)
                http_error(c->resp, 400, "Unable to delete Annotation information", eb.msg);
            else
                http_error(c->resp, 500, "Unable to delete the annotation", eb.msg);
            return;
        }
        oct_strbuf_reset(&c->resp->body);
        c->resp->status = 204;
        return;
    }
    char *stored;
    int st = note_sync(c, &n, c->verb == API_PUT, &stored, "");
    if (st == 304) {
        oct_strbuf_reset(&c->resp->body);
        c->resp->status = 304;
        return;
    }
    if (st != 200) return;
    api_json_begin(c, &w);
    if (api_write_annotation(c, &w, stored, strlen(stored)))
        http_error(c->resp, 500, "Unable to parse the stored annotation", NULL);
    free(stored);
}

/* ---- bulk ----------------------------------------------------------------- */

static void bulk_update(api_call_t *c)
{
    json_value_t *v = api_body_json(c, JSON_ALLOW_NONFINITE);
    if (!v) return;
    if (v->type != JSON_ARRAY) {
        http_error(c->resp, 400, "Unable to parse the given JSON", "expected an array of notes");
        return;
    }
    size_t cnt = v->n ? v->n : 1;
    note_t *notes = json_arena_alloc(&c->arena, cnt * sizeof *notes);
    size_t k = 0;
    for (const json_value_t *e = v->child; e; e = e->next)
        if (note_from_json(c, e, &notes[k++])) return;
    /* Validate everything before writing anything, as OpenTSDB rejects the
     * whole request on a note without a start time. */
    for (size_t i = 0; i < k; i++) {
        if (notes[i].start_time < 1) {
            char det[ANN_TSUID_MAX + 256];
            note_describe(&notes[i], "Annotation error: ", det, sizeof det);
            http_error(c->resp, 400, "The start timestamp has not been set", det);
            return;
        }
        if (note_tsuid(c, &notes[i])) return;
    }
    oct_strbuf_t out = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &out);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < k; i++) {
        char *stored;
        int st = note_sync(c, &notes[i], c->verb == API_PUT, &stored, "Annotation error: ");
        if (st == 304) continue; /* OpenTSDB skips notes without changes */
        if (st != 200) {
            oct_strbuf_free(&out);
            return;
        }
        int bad = api_write_annotation(c, &w, stored, strlen(stored));
        free(stored);
        if (bad) {
            oct_strbuf_free(&out);
            http_error(c->resp, 500, "Unable to parse the stored annotation", NULL);
            return;
        }
    }
    json_w_arr_end(&w);
    oct_strbuf_reset(&c->resp->body);
    oct_strbuf_append(&c->resp->body, out.ptr, out.len);
    oct_strbuf_free(&out);
}

typedef struct {
    int64_t *starts;
    size_t n, cap;
} starts_t;

static int collect_start(void *ctx, const char *json, size_t len)
{
    starts_t *s = ctx;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&a, json, len, JSON_ALLOW_NONFINITE, &v, &eb) == 0) {
        json_value_t *x = json_obj_get(v, "startTime");
        int64_t t;
        if (x && x->type == JSON_NUMBER && json_number_i64(x, &t) == 0) {
            if (s->n == s->cap) {
                s->cap = s->cap ? 2 * s->cap : 16;
                int64_t *p = realloc(s->starts, s->cap * sizeof *p);
                if (!p) abort();
                s->starts = p;
            }
            s->starts[s->n++] = t;
        }
    }
    json_arena_free(&a);
    return 0;
}

/* Deletes every note of one series (or the global ones) whose startTime is
 * in [start_ms, end_ms]; returns the count or a negative error. */
static long delete_range(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start_ms,
                         int64_t end_ms, oct_errbuf_t *eb)
{
    starts_t s = {0};
    int rc = tsdb_annotation_scan(db, tsuid, len, start_ms, end_ms, collect_start, &s, eb);
    long n = 0;
    for (size_t i = 0; rc >= 0 && i < s.n; i++) {
        int r = tsdb_annotation_delete(db, tsuid, len, s.starts[i], eb);
        if (r < 0)
            rc = r;
        else
            n += r;
    }
    free(s.starts);
    return rc < 0 ? rc : n;
}

typedef struct {
    api_call_t *c;
    const char **list;
    size_t n, cap;
} tsuid_list_t;

static void tsuid_list_add(tsuid_list_t *t, const char *s, size_t len)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 8;
        const char **p = json_arena_alloc(&t->c->arena, nc * sizeof *p);
        if (t->n) memcpy(p, t->list, t->n * sizeof *p);
        t->list = p;
        t->cap = nc;
    }
    t->list[t->n++] = json_arena_strndup(&t->c->arena, s, len);
}

static void bulk_delete(api_call_t *c)
{
    const char *start_s = NULL, *end_s = NULL;
    int global = 0, have_tsuids = 0;
    tsuid_list_t tl = {c, NULL, 0, 0};
    if (api_has_body(c)) {
        json_value_t *v = api_body_json(c, JSON_ALLOW_NONFINITE);
        if (!v) return;
        if (v->type != JSON_OBJECT) {
            http_error(c->resp, 400, "Unable to parse the given JSON", "expected an object");
            return;
        }
        const json_value_t *x;
        /* startTime/endTime are strings in OpenTSDB's binding; numbers coerce */
        if ((x = json_obj_get(v, "startTime")) &&
            (x->type == JSON_STRING || x->type == JSON_NUMBER))
            start_s = json_arena_strndup(&c->arena, x->str, x->len);
        if ((x = json_obj_get(v, "endTime")) && (x->type == JSON_STRING || x->type == JSON_NUMBER))
            end_s = json_arena_strndup(&c->arena, x->str, x->len);
        if ((x = json_obj_get(v, "global"))) global = x->type == JSON_TRUE;
        if ((x = json_obj_get(v, "tsuids")) && x->type == JSON_ARRAY) {
            have_tsuids = 1;
            for (const json_value_t *e = x->child; e; e = e->next) {
                if (e->type != JSON_STRING) {
                    http_error(c->resp, 400, "Unable to parse the given JSON",
                               "tsuids must be strings");
                    return;
                }
                tsuid_list_add(&tl, e->str, e->len);
            }
        }
    } else {
        start_s = ann_param(c, "start_time");
        if (!start_s) {
            http_error(c->resp, 400, "Missing parameter <code>start_time</code>", NULL);
            return;
        }
        end_s = ann_param(c, "end_time");
        const char *ts = ann_param(c, "tsuids");
        if (ts) {
            have_tsuids = 1;
            for (const char *p = ts;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                const char *a = p, *b = p + len;
                while (a < b && (*a == ' ' || *a == '\t'))
                    a++;
                while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
                    b--;
                tsuid_list_add(&tl, a, (size_t)(b - a));
                if (!comma) break;
                p = comma + 1;
            }
        }
        global = api_flag(c, "global");
    }
    if (!start_s || !*start_s) {
        http_error(c->resp, 400, "Missing the start time value", NULL);
        return;
    }
    if (!global && (!have_tsuids || tl.n == 0)) {
        http_error(c->resp, 400, "Missing the TSUIDs or global annotations flag", NULL);
        return;
    }
    int64_t start_ms, end_ms;
    if (ann_parse_time(c, start_s, &start_ms)) return;
    if (end_s && *end_s) {
        if (ann_parse_time(c, end_s, &end_ms)) return;
    } else {
        end_ms = oct_clock_wall_ms();
    }
    if (end_ms < 1) {
        http_error(c->resp, 400, "The end timestamp has not been set", NULL);
        return;
    }
    if (end_ms < start_ms) {
        http_error(c->resp, 400, "The end timestamp cannot be less than the start timestamp", NULL);
        return;
    }
    tsdb_t *db = c->tsd->db;
    const tsdb_layout_t *l = tsdb_layout(db);
    codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                (uint8_t)l->uid_width[2], 0, 1};
    /* parse every TSUID before deleting anything */
    uint8_t(*bin)[ANN_TSUID_MAX] = json_arena_alloc(&c->arena, (tl.n ? tl.n : 1) * sizeof *bin);
    size_t *blen = json_arena_alloc(&c->arena, (tl.n ? tl.n : 1) * sizeof *blen);
    oct_errbuf_t eb;
    for (size_t i = 0; i < tl.n; i++) {
        int r =
            codec_tsuid_from_hex(&rl, tl.list[i], strlen(tl.list[i]), bin[i], ANN_TSUID_MAX, &eb);
        if (r < 1) {
            char msg[ANN_TSUID_MAX + 64];
            snprintf(msg, sizeof msg, "Invalid TSUID: %.*s", ANN_TSUID_MAX, tl.list[i]);
            http_error(c->resp, 400, msg, r < 0 ? eb.msg : NULL);
            return;
        }
        blen[i] = (size_t)r;
    }
    long total = 0;
    if (global) {
        long r = delete_range(db, NULL, 0, start_ms, end_ms, &eb);
        if (r < 0) goto fail;
        total += r;
    }
    for (size_t i = 0; i < tl.n; i++) {
        long r = delete_range(db, bin[i], blen[i], start_ms, end_ms, &eb);
        if (r < 0) goto fail;
        total += r;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "startTime");
    json_w_int(&w, start_ms);
    json_w_key(&w, "endTime");
    json_w_int(&w, end_ms);
    json_w_key(&w, "tsuids");
    if (have_tsuids) {
        json_w_arr_begin(&w);
        for (size_t i = 0; i < tl.n; i++)
            json_w_str(&w, tl.list[i]);
        json_w_arr_end(&w);
    } else {
        json_w_null(&w);
    }
    json_w_key(&w, "global");
    json_w_bool(&w, global);
    json_w_key(&w, "totalDeleted");
    json_w_int(&w, total);
    json_w_obj_end(&w);
    return;
fail:
    http_error(c->resp, 500, "Unable to delete the annotations", eb.msg);
}

void api_annotation_bulk(api_call_t *c)
{
    if (c->verb == API_DELETE)
        bulk_delete(c);
    else
        bulk_update(c);
}

/* ---- /api/annotations: the global notes of a time range ---------------- */

typedef struct {
    api_call_t *c;
    json_writer_t *w;
} glob_ctx_t;

static int glob_cb(void *ctx, const char *json, size_t len)
{
    glob_ctx_t *g = ctx;
    (void)api_write_annotation(g->c, g->w, json, len); /* unreadable notes are skipped */
    return 0;
}

void api_annotations(api_call_t *c)
{
    if (c->verb != API_GET) {
        api_annotation(c);
        return;
    }
    const char *s = ann_param(c, "start_time");
    if (!s || !*s) {
        http_error(c->resp, 400, "Missing parameter <code>start_time</code>", NULL);
        return;
    }
    int64_t start_ms, end_ms;
    if (ann_parse_time(c, s, &start_ms)) return;
    const char *e = ann_param(c, "end_time");
    if (e && *e) {
        if (ann_parse_time(c, e, &end_ms)) return;
    } else {
        end_ms = oct_clock_wall_ms();
    }
    if (end_ms < start_ms) {
        http_error(c->resp, 400, "The end timestamp cannot be less than the start timestamp", NULL);
        return;
    }
    oct_strbuf_t out = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &out);
    json_w_arr_begin(&w);
    glob_ctx_t g = {c, &w};
    oct_errbuf_t eb;
    int rc = tsdb_annotation_scan(c->tsd->db, NULL, 0, start_ms, end_ms, glob_cb, &g, &eb);
    if (rc < 0) {
        oct_strbuf_free(&out);
        http_error(c->resp, 500, "Unable to scan the global annotations", eb.msg);
        return;
    }
    json_w_arr_end(&w);
    oct_strbuf_reset(&c->resp->body);
    oct_strbuf_append(&c->resp->body, out.ptr, out.len);
    oct_strbuf_free(&out);
}
