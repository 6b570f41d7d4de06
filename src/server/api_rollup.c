/* api_rollup.c -- POST /api/rollup and the telnet `rollup` command: 2.4's
 * rollup and pre-aggregate writes (docs/rollups.md), stored by
 * tsdb_rollup_put.
 *
 * /api/rollup answers as /api/put does (204, or with ?summary / ?details
 * the counts and the failed points, 400 when any failed; ?sync waits until
 * the points are on stable storage). A point is a put object plus
 * "interval", "aggregator" and "groupByAggregator"; group-by mode is the
 * presence of "groupByAggregator", even "". Checks, in order: the put
 * checks ("Metric name was empty", "Invalid timestamp", "Empty value",
 * "Missing tags", "Unable to parse value to a number"), then "Missing
 * interval" and "Missing aggregator", then tsdb_rollup_put's rules. An
 * unknown interval is reported as 2.4 reports it over HTTP: "Unexpected
 * exception" (it is not an IllegalArgument there).
 *
 * The body is parsed whole (rollups come from batch jobs in modest
 * batches, bounded by tsd.http.request.max_body_size): nothing is stored
 * when it is not valid JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "server/api_int.h"
#include "server/telnet.h"
#include "tsdb/parse.h"
#include "tsdb/rollup.h"

typedef struct {
    api_call_t *c;
    int details;
    oct_strbuf_t errors;
    uint64_t n_errors, success, failed;
} ru_state_t;

static const char *scalar(const json_value_t *v, size_t *len)
{
    if (!v || (v->type != JSON_STRING && v->type != JSON_NUMBER)) return NULL;
    *len = v->len;
    return v->str;
}

static void ru_fail(ru_state_t *rs, const json_value_t *obj, const char *msg)
{
    rs->failed++;
    if (!rs->details) return;
    json_writer_t w;
    if (rs->n_errors++) oct_strbuf_append(&rs->errors, ",", 1);
    json_w_init(&w, &rs->errors);
    json_w_obj_begin(&w);
    json_w_key(&w, "datapoint");
    if (obj && obj->type == JSON_OBJECT)
        json_w_value(&w, obj);
    else
        json_w_null(&w);
    json_w_key(&w, "error");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
}

/* The timestamp as given: an integer, or a string of one. -1 when absent
 * or not a positive integer (the put check "Invalid timestamp"). */
static int64_t ru_timestamp(const json_value_t *v)
{
    int64_t t;
    oct_errbuf_t eb;
    if (!v) return -1;
    if (v->type == JSON_NUMBER && (v->flags & JSON_F_INTEGER) && !json_number_i64(v, &t))
        return t > 0 ? t : -1;
    if (v->type == JSON_STRING && !tsdb_parse_long(v->str, v->len, &t, &eb)) return t > 0 ? t : -1;
    return -1;
}

static void ru_element(ru_state_t *rs, const json_value_t *v)
{
    tsd_count(rs->c->tsd, TSD_CTR_RPC_PUT, 1);
    if (v->type != JSON_OBJECT) {
        ru_fail(rs, v, "Invalid data point: not a JSON object");
        return;
    }
    size_t ml = 0, vl = 0, il = 0, al = 0, gl = 0;
    const char *metric = scalar(json_obj_get(v, "metric"), &ml);
    const char *val = scalar(json_obj_get(v, "value"), &vl);
    const json_value_t *jtags = json_obj_get(v, "tags");
    const json_value_t *jgb = json_obj_get(v, "groupByAggregator");
    const char *iv = scalar(json_obj_get(v, "interval"), &il);
    const char *agg = scalar(json_obj_get(v, "aggregator"), &al);
    const char *gb = scalar(jgb, &gl);
    int group_by = jgb && jgb->type != JSON_NULL;
    if (!metric || !ml) return ru_fail(rs, v, "Metric name was empty");
    int64_t ts = ru_timestamp(json_obj_get(v, "timestamp"));
    if (ts < 0) return ru_fail(rs, v, "Invalid timestamp");
    if (!val || !vl) return ru_fail(rs, v, "Empty value");
    if (!jtags || jtags->type != JSON_OBJECT || jtags->n == 0)
        return ru_fail(rs, v, "Missing tags");
    tsdb_rollup_dp_t dp;
    memset(&dp, 0, sizeof dp);
    oct_errbuf_t eb;
    int rc = tsdb_parse_value(val, vl, &dp.value, &eb);
    if (rc == OCT_EINVAL) {
        char msg[OCT_ERRBUF_SIZE + 300];
        snprintf(msg, sizeof msg, "%s for metric=%.*s timestamp=%" PRId64, eb.msg,
                 (int)(ml > 200 ? 200 : ml), metric, ts);
        return ru_fail(rs, v, msg);
    }
    if (rc) return ru_fail(rs, v, "Unable to parse value to a number");
    if ((!iv || !il) && !group_by) return ru_fail(rs, v, "Missing interval");
    if ((!agg || !al) && !group_by) return ru_fail(rs, v, "Missing aggregator");
    oct_slice_t *tags = json_arena_alloc(&rs->c->arena, 2 * jtags->n * sizeof *tags);
    size_t nt = 0;
    for (const json_value_t *t = jtags->child; t; t = t->next) {
        size_t tl = 0;
        const char *tv = scalar(t, &tl);
        tags[2 * nt] = oct_slice(t->key, t->key_len);
        tags[2 * nt + 1] = oct_slice(tv ? tv : "", tv ? tl : 0);
        nt++;
    }
    dp.metric = oct_slice(metric, ml);
    dp.tags = tags;
    dp.n_tags = nt;
    dp.ts = ts;
    dp.interval = oct_slice(iv ? iv : "", iv ? il : 0);
    dp.agg = oct_slice(agg ? agg : "", agg ? al : 0);
    dp.gb_agg = oct_slice(gb ? gb : "", gb ? gl : 0);
    dp.group_by = group_by;
    rc = tsdb_rollup_put(rs->c->tsd->db, &dp, &eb);
    if (rc == 0) {
        rs->success++;
    } else if (rc == OCT_ENOTFOUND) {
        ru_fail(rs, v, "Unexpected exception");
    } else if (rc == OCT_ENOSUCHNAME) {
        tsd_count(rs->c->tsd, TSD_CTR_PUT_UNKNOWN_METRICS, 1);
        ru_fail(rs, v, "Unknown metric");
    } else if (rc == OCT_EIO) {
        char msg[OCT_ERRBUF_SIZE + 32];
        snprintf(msg, sizeof msg, "Storage exception: %s", eb.msg);
        ru_fail(rs, v, msg);
    } else {
        tsd_count(rs->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        ru_fail(rs, v, eb.msg);
    }
}

void api_rollup(api_call_t *c)
{
    if (!api_has_body(c)) {
        http_error(c->resp, 400, "Missing request content", NULL);
        return;
    }
    const char *body = (const char *)c->req->body;
    size_t blen = c->req->body_len, i = 0;
    while (i < blen && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    if (i == blen || (body[i] != '{' && body[i] != '[')) {
        http_error(c->resp, 400, "The JSON must start as an object or an array", NULL);
        return;
    }
    oct_errbuf_t eb;
    json_value_t *root;
    if (json_parse(&c->arena, body, blen, JSON_ALLOW_NONFINITE, &root, &eb)) {
        http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
        return;
    }
    int sync = api_flag(c, "sync");
    char tb[32];
    int has_timeout = sync && http_param(c->req, "sync_timeout", tb, sizeof tb) && tb[0];
    if (has_timeout) {
        char *end;
        long t = strtol(tb, &end, 10);
        if (*end || t < 0 || t > INT32_MAX) {
            http_error(c->resp, 400, "Unable to parse 'sync_timeout' as a number", tb);
            return;
        }
    }
    ru_state_t rs;
    memset(&rs, 0, sizeof rs);
    rs.c = c;
    rs.details = api_flag(c, "details");
    int summary = api_flag(c, "summary");
    if (root->type == JSON_ARRAY) {
        if (root->n == 0) {
            http_error(c->resp, 400, "No datapoints found in content", NULL);
            return;
        }
        for (const json_value_t *e = root->child; e; e = e->next)
            ru_element(&rs, e);
    } else {
        ru_element(&rs, root);
    }
    /* A rollup put is in the store's log when it returns (kill -9 safe);
     * ?sync makes it survive power loss before the answer. The store sync
     * has no deadline, so sync_timeout never times out a write here. */
    if (sync && rs.success && tsdb_rollup_sync(c->tsd->db, &eb)) {
        http_error(c->resp, 500, "Unable to sync the data points to storage", eb.msg);
        goto out;
    }
    api_put_answer(c, rs.success, rs.failed, has_timeout, 0, summary, rs.details, &rs.errors);
out:
    oct_strbuf_free(&rs.errors);
}

/* ---- telnet ------------------------------------------------------------------- */

static void tn_reply(oct_strbuf_t *out, const char *kind, const char *msg)
{
    telnet_error_line(out, "rollup", kind, msg);
}

void api_rollup_telnet(tsd_ctx_t *t, const char *line, size_t len, oct_strbuf_t *out)
{
    /* words (runs of spaces separate them, as for put) */
    const char *w[4];
    size_t wl[4], nw = 0, i = 0;
    const char *rest = NULL;
    while (i < len) {
        while (i < len && line[i] == ' ')
            i++;
        if (i == len) break;
        size_t s = i;
        while (i < len && line[i] != ' ')
            i++;
        if (nw < 2) {
            w[nw] = line + s;
            wl[nw] = i - s;
        }
        if (nw == 1) rest = line + i; /* after the spec: put's "metric ts value tags" */
        nw++;
    }
    if (nw < 6) {
        char msg[96];
        snprintf(msg, sizeof msg, "not enough arguments (need least 7, got %zu)", nw ? nw - 1 : 0);
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        tn_reply(out, "illegal argument", msg);
        return;
    }
    /* <interval>-<agg>[:<group-by agg>] or <group-by agg> */
    const char *spec = w[1];
    size_t sl = wl[1];
    const char *colon = memchr(spec, ':', sl);
    size_t p0 = colon ? (size_t)(colon - spec) : sl;
    const char *dash = memchr(spec, '-', p0);
    tsdb_rollup_dp_t dp;
    memset(&dp, 0, sizeof dp);
    if (dash) {
        dp.interval = oct_slice(spec, (size_t)(dash - spec));
        dp.agg = oct_slice(dash + 1, p0 - (size_t)(dash - spec) - 1);
    }
    if (colon) {
        const char *p1 = colon + 1, *c2 = memchr(p1, ':', sl - p0 - 1);
        dp.gb_agg = oct_slice(p1, c2 ? (size_t)(c2 - p1) : sl - p0 - 1);
        dp.group_by = 1;
    } else if (!dash) {
        dp.gb_agg = oct_slice(spec, p0);
        dp.group_by = 1;
    }
    if (dp.group_by && dp.agg.len == 0) dp.agg = dp.gb_agg;
    /* the rest parses as a put line's arguments */
    size_t rl = (size_t)(line + len - rest);
    char *pl = xmalloc(rl + 4);
    pl[0] = 'p';
    pl[1] = 'u';
    pl[2] = 't';
    memcpy(pl + 3, rest, rl);
    oct_slice_t *tags = xmalloc((rl / 2 + 2) * sizeof *tags);
    tsdb_dp_t pdp;
    char msg[OCT_ERRBUF_SIZE + 64];
    int rc = telnet_parse_put(pl, rl + 3, &pdp, tags, rl / 2 + 2, msg, sizeof msg);
    if (rc == OCT_EPARSE) {
        tsd_count(t, TSD_CTR_PUT_INVALID_VALUES, 1);
        tn_reply(out, "invalid value", msg);
    } else if (rc) {
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        tn_reply(out, "illegal argument", msg);
    } else {
        oct_errbuf_t eb;
        dp.metric = pdp.metric;
        dp.tags = pdp.tags;
        dp.n_tags = pdp.n_tags;
        dp.value = pdp.pt;
        /* a millisecond stamp stays as given, for rule 3 to refuse */
        dp.ts = pdp.ts_is_ms ? pdp.pt.ts_ms : pdp.pt.ts_ms / 1000;
        rc = tsdb_rollup_put(t->db, &dp, &eb);
        if (rc == OCT_ENOTFOUND) {
            oct_strbuf_puts(out, "rollup: No such rollup: ");
            oct_strbuf_puts(out, eb.msg);
            oct_strbuf_append(out, "\n", 1);
        } else if (rc == OCT_ENOSUCHNAME) {
            tsd_count(t, TSD_CTR_PUT_UNKNOWN_METRICS, 1);
            tn_reply(out, "unknown metric", eb.msg);
        } else if (rc == OCT_EIO) {
            tsd_count(t, TSD_CTR_RPC_ERRORS_TELNET, 1);
            tn_reply(out, "HBase error", eb.msg);
        } else if (rc) {
            tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
            tn_reply(out, "illegal argument", eb.msg);
        }
    }
    free(tags);
    free(pl);
}
