/* api_delete.c -- POST (or DELETE) /api/delete: octsdb's exact delete of a
 * metric, some of its series, or a range of them (docs/delete.md, tsdb_delete),
 * gated by tsd.http.query.allow_delete like 2.4's query delete.
 *
 *   {"metric":M | "tsuids":[HEX..], "tags":{k:v..}, "start":T, "end":T,
 *    "dryRun":bool, "deleteUid":bool}
 *   -> 200 {"dryRun":..,"series":N,"points":N,"histograms":N,"annotations":N,
 *           "rowsDeleted":N,"rowsRewritten":N,"rollupRows":N,"rollupCells":N,
 *           "rollupCellsRecomputed":N,"rollupCellsDropped":N,"metaRows":N,
 *           "seriesForgotten":N,"uidDeleted":bool}
 *
 * Protocol only: the body is parsed and checked here, names resolved through
 * uid/, the delete is tsdb's. */
#include <stdio.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/clock.h"
#include "query/query.h"
#include "server/api_int.h"
#include "tsdb/delete.h"
#include "tsdb/tsdb.h"

#define API_DEL_TSUID_MAX 256

/* A time member: a number (seconds, or ms past 10 digits) or a 2.4 time
 * string ("1h-ago", "2013/01/01-00:00:00"). 0, or -1 with the answer made. */
static int del_time(api_call_t *c, const json_value_t *v, const char *name, int64_t now,
                    int64_t *out)
{
    char buf[64];
    if (!v || (v->type != JSON_NUMBER && v->type != JSON_STRING) || v->len >= sizeof buf) {
        snprintf(buf, sizeof buf, "Invalid %s", name);
        http_error(c->resp, 400, buf, "a number (seconds or ms) or a time string");
        return -1;
    }
    memcpy(buf, v->str, v->len);
    buf[v->len] = 0;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (query_parse_time(buf, NULL, now, out, &eb)) {
        http_error(c->resp, 400, eb.msg[0] ? eb.msg : "Invalid time", NULL);
        return -1;
    }
    return 0;
}

static const char *const del_fields[] = {"metric", "tsuids",    "tags",  "start",
                                         "end",    "deleteUid", "dryRun"};

void api_delete(api_call_t *c)
{
    if (!oct_config_get_bool(c->tsd->cfg, "tsd.http.query.allow_delete")) {
        http_error(c->resp, 400, "Deleting data is not enabled (tsd.http.query.allow_delete=false)",
                   NULL);
        return;
    }
    json_value_t *b = api_body_json(c, 0);
    if (!b) return;
    if (b->type != JSON_OBJECT) {
        http_error(c->resp, 400, "The delete body must be a JSON object", NULL);
        return;
    }
    for (const json_value_t *m = b->child; m; m = m->next) {
        size_t i = 0;
        while (i < sizeof del_fields / sizeof *del_fields &&
               (strlen(del_fields[i]) != m->key_len || memcmp(del_fields[i], m->key, m->key_len)))
            i++;
        if (i == sizeof del_fields / sizeof *del_fields) {
            char msg[256];
            snprintf(msg, sizeof msg, "Unknown field: %.*s", (int)m->key_len, m->key);
            http_error(c->resp, 400, msg,
                       "fields: metric, tsuids, tags, start, end, dryRun, deleteUid");
            return;
        }
    }
    const json_value_t *jm = json_obj_get(b, "metric"), *jt = json_obj_get(b, "tsuids"),
                       *jtags = json_obj_get(b, "tags"), *js = json_obj_get(b, "start"),
                       *je = json_obj_get(b, "end"), *jdry = json_obj_get(b, "dryRun"),
                       *juid = json_obj_get(b, "deleteUid");
    if ((jm && jm->type != JSON_STRING) || (jt && jt->type != JSON_ARRAY) ||
        (jtags && jtags->type != JSON_OBJECT) ||
        (jdry && jdry->type != JSON_TRUE && jdry->type != JSON_FALSE) ||
        (juid && juid->type != JSON_TRUE && juid->type != JSON_FALSE)) {
        http_error(c->resp, 400, "Invalid delete body",
                   "metric is a string, tsuids an array, tags an object, dryRun and deleteUid "
                   "booleans");
        return;
    }
    if (!jm == !jt || (jt && jt->n == 0)) {
        http_error(c->resp, 400, "Missing metric or tsuids",
                   "name either a metric (with optional tags) or a non-empty tsuids array");
        return;
    }
    if (jt && jtags) {
        http_error(c->resp, 400, "tags go with metric, not with tsuids", NULL);
        return;
    }
    tsdb_delete_spec_t sp = {.start_ms = 0, .end_ms = INT64_MAX};
    int64_t now = oct_clock_wall_ms();
    if (je && !js) {
        http_error(c->resp, 400, "Missing start", "end needs a start");
        return;
    }
    if (js) {
        if (del_time(c, js, "start", now, &sp.start_ms)) return;
        sp.end_ms = now;
        if (je && del_time(c, je, "end", now, &sp.end_ms)) return;
        if (sp.start_ms > sp.end_ms) {
            http_error(c->resp, 400, "start must not be after end", NULL);
            return;
        }
    }
    sp.dry_run = jdry && jdry->type == JSON_TRUE;
    if (jm) {
        size_t nt = jtags ? jtags->n : 0;
        oct_slice_t *names = json_arena_alloc(&c->arena, (2 * nt + 1) * sizeof *names);
        uint64_t *tags = json_arena_alloc(&c->arena, (2 * nt + 1) * sizeof *tags);
        size_t k = 0;
        for (const json_value_t *t = jtags ? jtags->child : NULL; t; t = t->next) {
            if (t->type != JSON_STRING) {
                http_error(c->resp, 400, "Invalid tags", "tag values are strings");
                return;
            }
            names[k++] = oct_slice(t->key, t->key_len);
            names[k++] = oct_slice(t->str, t->len);
        }
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int rc =
            tsdb_delete_resolve(c->tsd->db, oct_slice(jm->str, jm->len), names, nt, tags, &sp, &eb);
        if (rc) {
            http_error(c->resp, rc == OCT_ENOSUCHNAME ? 400 : 500,
                       eb.msg[0] ? eb.msg : oct_strerror(rc), NULL);
            return;
        }
    } else {
        const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
        codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                    (uint8_t)l->uid_width[2], 0, 1};
        oct_slice_t *ts = json_arena_alloc(&c->arena, jt->n * sizeof *ts);
        for (const json_value_t *e = jt->child; e; e = e->next, sp.n_tsuids++) {
            uint8_t *t = json_arena_alloc(&c->arena, API_DEL_TSUID_MAX);
            oct_errbuf_t eb;
            int len = e->type == JSON_STRING
                          ? codec_tsuid_from_hex(&rl, e->str, e->len, t, API_DEL_TSUID_MAX, &eb)
                          : OCT_EPARSE;
            if (len <= 0) {
                http_error(c->resp, 400, "Invalid tsuid", "each is a hex TSUID");
                return;
            }
            uint64_t m = oct_get_be_n(t, rl.metric_w);
            if (sp.n_tsuids && m != sp.metric) {
                http_error(c->resp, 400, "Every tsuid of a delete must be of one metric", NULL);
                return;
            }
            sp.metric = m;
            ts[sp.n_tsuids] = oct_slice(t, (size_t)len);
        }
        sp.tsuids = ts;
    }
    sp.whole_metric = jm && sp.n_tags == 0 && !js;
    sp.delete_uid = juid && juid->type == JSON_TRUE;
    tsdb_delete_counts_t cnt;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_delete(c->tsd->db, &sp, &cnt, &eb);
    if (rc == OCT_EINVAL) {
        http_error(c->resp, 400, eb.msg[0] ? eb.msg : "Invalid delete", NULL);
        return;
    }
    if (rc) {
        http_error(c->resp, 500, "Delete failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "dryRun");
    json_w_bool(&w, sp.dry_run);
    const struct {
        const char *k;
        uint64_t v;
    } f[] = {{"series", cnt.series},
             {"points", cnt.points},
             {"histograms", cnt.histograms},
             {"annotations", cnt.annotations},
             {"rowsDeleted", cnt.rows_deleted},
             {"rowsRewritten", cnt.rows_rewritten},
             {"rollupRows", cnt.rollup_rows},
             {"rollupCells", cnt.rollup_cells},
             {"rollupCellsRecomputed", cnt.rollup_recomputed},
             {"rollupCellsDropped", cnt.rollup_dropped},
             {"metaRows", cnt.meta_rows},
             {"seriesForgotten", cnt.forgotten}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        json_w_key(&w, f[i].k);
        json_w_uint(&w, f[i].v);
    }
    json_w_key(&w, "uidDeleted");
    json_w_bool(&w, cnt.uid_deleted);
    json_w_obj_end(&w);
    c->resp->status = 200;
}
