/* api_search.c -- /api/suggest and /api/search/lookup.
 *
 * Suggest is a prefix query of one UID kind (uid_suggest). Lookup answers from
 * the series index that the write path keeps for every series
 * (tsdb_select), never from tsdb-meta: OpenTSDB's default use_meta=true
 * only finds something when TSUID tracking doubles its write load, whereas
 * ours always works. The use_meta parameter is accepted and ignored.
 *
 * Lookup semantics (docs/api-search.md): the metric (optional, "*" = any) AND,
 * for each tag key, one of its values ("*" = any value; a key "*" means any
 * key with that value). Candidates come from the index for the most
 * selective condition we can name (one concrete key with concrete values,
 * else one key, else the whole metric); each candidate TSUID is then checked
 * against every condition on its UIDs. Results are in TSUID byte order,
 * at most `limit` (default 25), and totalResults is the number returned, as
 * in OpenTSDB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/uid_bytes.h"
#include "common/bytes.h"
#include "common/clock.h"
#include "server/api_int.h"
#include "tsdb/select.h"
#include "tsdb/tsdb.h"

/* ---- /api/suggest --------------------------------------------------------- */

static int suggest_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    (void)id;
    json_w_strn(ctx, (const char *)name, len);
    return 0;
}

void api_suggest(api_call_t *c)
{
    char type[64] = "", q[UID_NAME_MAX + 1] = "", max_s[64] = "";
    int have_type, have_max;
    if (c->verb == API_POST && api_has_body(c)) {
        json_value_t *b = api_body_json(c, 0);
        if (!b) return;
        const json_value_t *t = json_obj_get(b, "type"), *qq = json_obj_get(b, "q"),
                           *m = json_obj_get(b, "max");
        have_type = t && t->type == JSON_STRING;
        if (have_type) snprintf(type, sizeof type, "%.*s", (int)t->len, t->str);
        if (qq && qq->type == JSON_STRING) snprintf(q, sizeof q, "%.*s", (int)qq->len, qq->str);
        have_max = m && (m->type == JSON_NUMBER || m->type == JSON_STRING);
        if (have_max) snprintf(max_s, sizeof max_s, "%.*s", (int)m->len, m->str);
    } else {
        have_type = http_param(c->req, "type", type, sizeof type);
        http_param(c->req, "q", q, sizeof q);
        have_max = http_param(c->req, "max", max_s, sizeof max_s);
    }
    if (!have_type || !type[0]) {
        http_error(c->resp, 400, "Missing parameter <code>type</code>", NULL);
        return;
    }
    codec_uid_kind_t kind;
    if (!strcmp(type, "metrics")) {
        kind = CODEC_UID_METRIC;
    } else if (!strcmp(type, "tagk")) {
        kind = CODEC_UID_TAGK;
    } else if (!strcmp(type, "tagv")) {
        kind = CODEC_UID_TAGV;
    } else {
        char msg[128];
        snprintf(msg, sizeof msg, "Invalid 'type' parameter:%s", type);
        http_error(c->resp, 400, msg, NULL);
        return;
    }
    long max = 25;
    if (have_max && max_s[0]) {
        char *end;
        max = strtol(max_s, &end, 10);
        if (*end || end == max_s) {
            http_error(c->resp, 400, "Unable to parse 'max' as a number", NULL);
            return;
        }
        if (max <= 0) max = 25;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    oct_errbuf_t eb;
    int rc = uid_suggest(tsdb_uids(c->tsd->db), kind, (const uint8_t *)q, strlen(q), (size_t)max,
                         suggest_cb, &w, &eb);
    if (rc < 0) {
        http_error(c->resp, 500, "Unable to complete the suggestion", eb.msg);
        return;
    }
    json_w_arr_end(&w);
}

/* ---- /api/search/lookup --------------------------------------------------- */

typedef struct {
    uint64_t k;     /* 0 = any key ("*") */
    uint64_t *vals; /* empty + any_val = any value */
    size_t n_vals;
    int any_val;
} lk_cond_t;

typedef struct {
    api_call_t *c;
    unsigned mw;
    lk_cond_t *conds;
    size_t n_conds;
    uint8_t **tsuids; /* arena copies */
    size_t *lens;
    size_t n, cap;
} lk_state_t;

static int lk_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    lk_state_t *s = ctx;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        uint8_t **nt = json_arena_alloc(&s->c->arena, nc * sizeof *nt);
        size_t *nl = json_arena_alloc(&s->c->arena, nc * sizeof *nl);
        if (s->n) {
            memcpy(nt, s->tsuids, s->n * sizeof *nt);
            memcpy(nl, s->lens, s->n * sizeof *nl);
        }
        s->tsuids = nt;
        s->lens = nl;
        s->cap = nc;
    }
    uint8_t *cp = json_arena_alloc(&s->c->arena, len);
    memcpy(cp, tsuid, len);
    s->tsuids[s->n] = cp;
    s->lens[s->n++] = len;
    return 0;
}

typedef struct {
    const uint8_t *t;
    size_t len;
} lk_key_t;

static int lk_key_cmp(const void *a, const void *b)
{
    const lk_key_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(x->t, x->len), oct_slice(y->t, y->len));
}

/* Resolves a name; on failure writes a 404 and returns -1. */
static int lk_resolve(api_call_t *c, codec_uid_kind_t kind, const char *name, uint64_t *id)
{
    oct_errbuf_t eb;
    int rc = uid_get_id(tsdb_uids(c->tsd->db), kind, (const uint8_t *)name, strlen(name), id, &eb);
    if (rc == 0) return 0;
    if (rc == OCT_ENOSUCHNAME || rc == OCT_EBADNAME)
        http_error(c->resp, 404, eb.msg, NULL);
    else
        http_error(c->resp, 500, "Unable to resolve a name", eb.msg);
    return -1;
}

typedef struct {
    uint64_t *ids;
    size_t n, cap;
    api_call_t *c;
} lk_ids_t;

static int lk_metric_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    (void)name;
    (void)len;
    lk_ids_t *m = ctx;
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        uint64_t *ni = json_arena_alloc(&m->c->arena, nc * sizeof *ni);
        if (m->n) memcpy(ni, m->ids, m->n * sizeof *ni);
        m->ids = ni;
        m->cap = nc;
    }
    m->ids[m->n++] = id;
    return 0;
}

void api_search_lookup(api_call_t *c)
{
    int64_t t0 = oct_clock_mono_ns();
    api_mexpr_t e;
    long limit = 25;
    if (c->verb == API_POST && api_has_body(c)) {
        json_value_t *b = api_body_json(c, 0);
        if (!b) return;
        memset(&e, 0, sizeof e);
        const char *m = api_json_cstr(c, b, "metric");
        e.metric = m ? m : "";
        const json_value_t *tags = json_obj_get(b, "tags");
        if (tags && tags->type == JSON_ARRAY && tags->n) {
            e.tagk = json_arena_alloc(&c->arena, tags->n * sizeof *e.tagk);
            e.tagv = json_arena_alloc(&c->arena, tags->n * sizeof *e.tagv);
            for (const json_value_t *t = tags->child; t; t = t->next) {
                const char *k = api_json_cstr(c, t, "key"), *v = api_json_cstr(c, t, "value");
                e.tagk[e.n_tags] = k && *k ? k : "*";
                e.tagv[e.n_tags++] = v && *v ? v : "*";
            }
        }
        const json_value_t *l = json_obj_get(b, "limit");
        int64_t li;
        if (l && !json_number_i64(l, &li)) limit = (long)li;
    } else {
        char *m = json_arena_alloc(&c->arena, 8192);
        if (!http_param(c->req, "m", m, 8192)) {
            http_error(c->resp, 400, "Missing parameter <code>m</code>", NULL);
            return;
        }
        if (api_parse_mexpr(c, m, &e)) return;
        char ls[32];
        if (http_param(c->req, "limit", ls, sizeof ls) && ls[0]) {
            char *end;
            limit = strtol(ls, &end, 10);
            if (*end) {
                http_error(c->resp, 400, "Unable to parse 'limit' as a number", NULL);
                return;
            }
        }
    }
    int any_metric = !e.metric[0] || !strcmp(e.metric, "*");
    if (any_metric && e.n_tags == 0) {
        http_error(c->resp, 400, "Missing metric and tags. Please supply at least one value.",
                   NULL);
        return;
    }
    if (limit <= 0) limit = 25;

    tsdb_t *db = c->tsd->db;
    const tsdb_layout_t *lay = tsdb_layout(db);
    lk_state_t s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.mw = lay->uid_width[CODEC_UID_METRIC];

    /* Group conditions by key: values of one key are OR'd, "*" wins. */
    s.conds = json_arena_alloc(&c->arena, (e.n_tags ? e.n_tags : 1) * sizeof *s.conds);
    for (size_t i = 0; i < e.n_tags; i++) {
        uint64_t k = 0, v = 0;
        int kany = !strcmp(e.tagk[i], "*"), vany = !strcmp(e.tagv[i], "*");
        if (kany && vany) continue; /* matches everything */
        if (!kany && lk_resolve(c, CODEC_UID_TAGK, e.tagk[i], &k)) return;
        if (!vany && lk_resolve(c, CODEC_UID_TAGV, e.tagv[i], &v)) return;
        lk_cond_t *cd = NULL;
        for (size_t j = 0; j < s.n_conds && !kany; j++)
            if (s.conds[j].k == k) cd = &s.conds[j];
        if (!cd) {
            cd = &s.conds[s.n_conds++];
            memset(cd, 0, sizeof *cd);
            cd->k = k;
            cd->vals = json_arena_alloc(&c->arena, e.n_tags * sizeof *cd->vals);
        }
        if (vany)
            cd->any_val = 1;
        else
            cd->vals[cd->n_vals++] = v;
    }

    lk_ids_t metrics = {.c = c};
    if (any_metric) {
        oct_errbuf_t eb;
        if (uid_foreach(tsdb_uids(db), CODEC_UID_METRIC, lk_metric_cb, &metrics, &eb) < 0) {
            http_error(c->resp, 500, "Unable to list the metrics", eb.msg);
            return;
        }
    } else {
        uint64_t mid;
        if (lk_resolve(c, CODEC_UID_METRIC, e.metric, &mid)) return;
        lk_metric_cb(&metrics, NULL, 0, mid);
    }

    tsdb_tag_match_t *tm = json_arena_alloc(&c->arena, (s.n_conds ? s.n_conds : 1) * sizeof *tm);
    for (size_t j = 0; j < s.n_conds; j++)
        tm[j] = (tsdb_tag_match_t){s.conds[j].k, s.conds[j].vals,
                                   s.conds[j].any_val ? 0 : s.conds[j].n_vals};
    for (size_t mi = 0; mi < metrics.n; mi++)
        tsdb_select(db, metrics.ids[mi], tm, s.n_conds, TSDB_SELECT_SUBSET, (size_t)limit, lk_cb,
                    &s);
    /* tsdb_select yields each series of a metric once, in TSUID order; sort
     * across metrics (listed in name order, not UID order) and drop any
     * repeats. */
    lk_key_t *keys = json_arena_alloc(&c->arena, (s.n ? s.n : 1) * sizeof *keys);
    for (size_t i = 0; i < s.n; i++)
        keys[i] = (lk_key_t){s.tsuids[i], s.lens[i]};
    size_t n = s.n;
    if (metrics.n > 1) {
        if (s.n > 1) qsort(keys, s.n, sizeof *keys, lk_key_cmp);
        n = 0;
        for (size_t i = 0; i < s.n; i++)
            if (!n || lk_key_cmp(&keys[n - 1], &keys[i])) keys[n++] = keys[i];
    }
    if (n > (size_t)limit) n = (size_t)limit;

    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "type");
    json_w_str(&w, "LOOKUP");
    json_w_key(&w, "metric");
    json_w_str(&w, any_metric ? "*" : e.metric);
    json_w_key(&w, "tags");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < e.n_tags; i++) {
        json_w_obj_begin(&w);
        json_w_key(&w, "key");
        json_w_str(&w, e.tagk[i]);
        json_w_key(&w, "value");
        json_w_str(&w, e.tagv[i]);
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "limit");
    json_w_int(&w, limit);
    json_w_key(&w, "startIndex");
    json_w_int(&w, 0);
    json_w_key(&w, "totalResults");
    json_w_uint(&w, n);
    json_w_key(&w, "results");
    json_w_arr_begin(&w);
    api_names_expect(c, n);
    size_t body0 = c->resp->body.len;
    for (size_t i = 0; i < n; i++) {
        if (i == 64 && n > 128) /* room for the rest, at the first ones' size */
            oct_strbuf_reserve(&c->resp->body,
                               (c->resp->body.len - body0) / 64 * (n - 64) * 9 / 8 + 256);
        char hex[2 * 8 * 64 + 3]; /* hex needs no escaping */
        oct_errbuf_t eb;
        const char *name;
        size_t nl;
        int hl = codec_uid_to_hex(keys[i].t, keys[i].len, hex, sizeof hex);
        if (hl < 0) continue;
        if (api_name_json(c, CODEC_UID_METRIC, codec_uid_decode(keys[i].t, s.mw), &name, &nl,
                          &eb)) {
            http_error(c->resp, 404, eb.msg, NULL);
            return;
        }
        /* {"tsuid":"..","metric":"..","tags":{..}} written as one value */
        static const char k_tsuid[] = "{\"tsuid\":\"",
                          k_metric[] = "\",\"metric\":", k_tags[] = ",\"tags\":";
        json_w_raw(&w, k_tsuid, sizeof k_tsuid - 1);
        oct_strbuf_t *b = &c->resp->body;
        oct_strbuf_append(b, hex, (size_t)hl);
        oct_strbuf_append(b, k_metric, sizeof k_metric - 1);
        oct_strbuf_append(b, name, nl);
        oct_strbuf_append(b, k_tags, sizeof k_tags - 1);
        if (api_append_tsuid_tags(c, b, keys[i].t, keys[i].len, &eb)) {
            http_error(c->resp, 404, eb.msg, NULL);
            return;
        }
        oct_strbuf_append(b, "}", 1);
    }
    json_w_arr_end(&w);
    json_w_key(&w, "time");
    json_w_double(&w, (double)(oct_clock_mono_ns() - t0) / 1e6);
    json_w_obj_end(&w);
}
