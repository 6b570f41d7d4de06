/* api_histogram.c -- POST /api/histogram: one histogram point object or an array of them
 * (docs/histograms.md, "Writing"), answered as /api/put answers (204; ?summary, ?details;
 * 400 "One or more data points had errors" when some failed).
 *
 * A point carries either `value` (the codec payload in base64, without the id byte) with
 * `id` (default 0), or `buckets` ({"<lo>,<hi>": count}) with `underflow` and `overflow`;
 * `value` wins when non-empty. Texts are 2.4's. Each point is stored when this answers (the
 * store's log is written: kill -9 safe); ?sync syncs the store once before answering. Without
 * tsd.core.histograms.config every verb gets 503, as in 2.4 (checked before the verb). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "server/api_int.h"
#include "server/hist_int.h"

typedef struct {
    api_call_t *c;
    const tsdb_hist_config_t *cfg;
    int details, sync;
    uint64_t success, failed;
    oct_strbuf_t errors;
    uint64_t n_errors;
} hput_t;

static void hput_fail(hput_t *h, const json_value_t *v, const char *msg)
{
    h->failed++;
    tsd_count(h->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
    if (!h->details) return;
    json_writer_t w;
    if (h->n_errors++) oct_strbuf_append(&h->errors, ",", 1);
    json_w_init(&w, &h->errors);
    json_w_obj_begin(&w);
    json_w_key(&w, "datapoint");
    json_w_value(&w, v);
    json_w_key(&w, "error");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
}

/* A JSON integer member as a Java long; def when absent. -1 if it is not one. */
static int member_long(const json_value_t *o, const char *key, int64_t def, int64_t *out)
{
    const json_value_t *m = json_obj_get(o, key);
    *out = def;
    if (!m || m->type == JSON_NULL) return 0;
    if (m->type == JSON_STRING) { /* Jackson coerces numeric strings */
        char buf[32];
        if (m->len == 0 || m->len >= sizeof buf) return -1;
        memcpy(buf, m->str, m->len);
        buf[m->len] = 0;
        char *end;
        long long v = strtoll(buf, &end, 10);
        if (*end) return -1;
        *out = v;
        return 0;
    }
    if (m->type != JSON_NUMBER || !(m->flags & JSON_F_INTEGER)) return -1;
    return json_number_i64(m, out) ? -1 : 0;
}

static void hput_one(hput_t *h, const json_value_t *v)
{
    char msg[OCT_ERRBUF_SIZE + 64];
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (v->type != JSON_OBJECT) {
        hput_fail(h, v, "Invalid data point: not a JSON object");
        return;
    }
    const json_value_t *jm = json_obj_get(v, "metric");
    if (!jm || jm->type != JSON_STRING || jm->len == 0) {
        hput_fail(h, v, "Metric name was empty");
        return;
    }
    tsdb_dp_t dp;
    memset(&dp, 0, sizeof dp);
    int is_ms = 0;
    if (api_put_timestamp(json_obj_get(v, "timestamp"), &dp.pt.ts_ms, &is_ms, msg, sizeof msg)) {
        hput_fail(h, v, msg);
        return;
    }
    dp.ts_is_ms = (uint8_t)is_ms;
    const json_value_t *jt = json_obj_get(v, "tags");
    if (!jt || jt->type != JSON_OBJECT || jt->n == 0) {
        hput_fail(h, v, "Missing tags");
        return;
    }
    oct_slice_t *tags = json_arena_alloc(&h->c->arena, 2 * jt->n * sizeof *tags);
    size_t nt = 0;
    for (const json_value_t *t = jt->child; t; t = t->next, nt++) {
        tags[2 * nt] = oct_slice(t->key, t->key_len);
        tags[2 * nt + 1] = t->type == JSON_STRING || t->type == JSON_NUMBER
                               ? oct_slice(t->str, t->len)
                               : oct_slice("", 0);
    }
    dp.metric = oct_slice(jm->str, jm->len);
    dp.tags = tags;
    dp.n_tags = nt;

    int64_t id;
    if (member_long(v, "id", 0, &id) || id < 0 || id > 255) {
        hput_fail(h, v, "Invalid type. Must be from 0 to 255.");
        return;
    }
    const json_value_t *jv = json_obj_get(v, "value");
    uint8_t *val = NULL;
    size_t vlen = 0;
    int rc;
    if (jv && jv->type == JSON_STRING && jv->len > 0) {
        rc = hist_value_from_base64(h->cfg, (int)id, jv->str, jv->len, &val, &vlen, &eb);
    } else {
        const json_value_t *jb = json_obj_get(v, "buckets");
        if (!jb || jb->type != JSON_OBJECT || jb->n == 0) {
            hput_fail(h, v, "Histogram buckets cannot be null or empty if 'value' is empty.");
            return;
        }
        if (jb->n > HIST_MAX_BUCKETS) {
            snprintf(msg, sizeof msg, "More than %d histogram buckets", HIST_MAX_BUCKETS);
            hput_fail(h, v, msg);
            return;
        }
        codec_hist_bucket_t *b = json_arena_alloc(&h->c->arena, jb->n * sizeof *b);
        codec_hist_t hist = {b, 0, 0, 0};
        int64_t under, over;
        for (const json_value_t *m = jb->child; m; m = m->next) {
            codec_hist_bucket_t *k = &b[hist.n_buckets];
            int r = codec_hist_parse_bounds(m->key, m->key_len, &k->lo, &k->hi);
            int64_t cnt;
            if (r == OCT_EPARSE) {
                snprintf(msg, sizeof msg, "Unable to parse bucket bounds: %.*s",
                         (int)(m->key_len > 200 ? 200 : m->key_len), m->key);
                hput_fail(h, v, msg);
                return;
            }
            if (r || m->type != JSON_NUMBER || !(m->flags & JSON_F_INTEGER) ||
                json_number_i64(m, &cnt)) {
                hput_fail(h, v, "Unable to parse value to a number");
                return;
            }
            k->n = (uint64_t)cnt;
            hist.n_buckets++;
        }
        if (member_long(v, "underflow", 0, &under) || member_long(v, "overflow", 0, &over)) {
            hput_fail(h, v, "Unable to parse value to a number");
            return;
        }
        hist.underflow = (uint64_t)under;
        hist.overflow = (uint64_t)over;
        rc = hist_value_encode(h->cfg, (int)id, &hist, &val, &vlen, &eb);
    }
    if (!rc) rc = tsdb_put_histogram(h->c->tsd->db, &dp, val, vlen, 0, &eb);
    free(val);
    if (!rc) {
        h->success++;
        return;
    }
    if (rc == OCT_ENOSUCHNAME) {
        hput_fail(h, v, "Unknown metric");
    } else if (rc == OCT_EIO) {
        snprintf(msg, sizeof msg, "Storage exception: %s", eb.msg);
        hput_fail(h, v, msg);
    } else {
        hput_fail(h, v, eb.msg);
    }
}

void api_histogram(api_call_t *c)
{
    hput_t h;
    memset(&h, 0, sizeof h);
    h.c = c;
    h.cfg = tsdb_histograms(c->tsd->db);
    if (!h.cfg->enabled) {
        http_error(c->resp, 503, HIST_DISABLED_MSG, NULL);
        return;
    }
    if (c->verb != API_POST) {
        api_method_not_allowed(c);
        return;
    }
    json_value_t *root = api_body_json(c, 0);
    if (!root) return;
    if (root->type != JSON_OBJECT && root->type != JSON_ARRAY) {
        http_error(c->resp, 400, "The JSON must start as an object or an array", NULL);
        return;
    }
    h.details = api_flag(c, "details");
    h.sync = api_flag(c, "sync");
    int summary = api_flag(c, "summary");
    if (root->type == JSON_OBJECT) {
        hput_one(&h, root);
    } else {
        if (root->n == 0) {
            http_error(c->resp, 400, "No datapoints found in content", NULL);
            return;
        }
        for (const json_value_t *v = root->child; v; v = v->next)
            hput_one(&h, v);
    }
    /* ?sync: one store sync for the whole request, not one per point */
    oct_errbuf_t eb;
    if (h.sync && h.success && tsdb_sync_histograms(c->tsd->db, &eb)) {
        http_error(c->resp, 500, "Unable to sync the histogram points to storage", eb.msg);
        oct_strbuf_free(&h.errors);
        return;
    }
    api_put_answer(c, h.success, h.failed, 0, 0, summary, h.details, &h.errors);
    oct_strbuf_free(&h.errors);
}
