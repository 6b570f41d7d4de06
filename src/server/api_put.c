/* api_put.c -- POST /api/put: one data point object or an array of them.
 *
 * Unparsable JSON stores nothing, as in OpenTSDB. A top-level array is
 * streamed: elements are parsed into a per-chunk arena, turned into
 * tsdb_dp_t records (slices into the body or the arena, no per-point
 * malloc), and handed to tsdb_put_batch PUT_CHUNK points at a time; the arena
 * is reset after each chunk, so memory stays bounded however large the
 * batch is. An array that fits one chunk is parsed once and stored only
 * after its closing bracket; a longer one (and a single object) is first
 * validated as a whole (json_validate: no allocation).
 *
 * Per-point checks and texts are OpenTSDB's (docs/http-api.md, /api/put): "Metric name
 * was empty", "Invalid timestamp", "Empty value", "Missing tags", "Unable to
 * parse value to a number", "Unknown metric", then whatever tsdb_put_batch
 * reports. A point that fails never sinks the others: the good ones are
 * stored and the answer says how many failed.
 *
 * Durability: no answer leaves before the write-ahead log has written every
 * accepted point, so an acknowledged put survives kill -9: the handler sets
 * http_response_t.wait_durable and the transport waits (fsync=0) before
 * sending; with ?sync the handler itself waits for fsync, bounded by
 * sync_timeout (ms, 0 = no limit).
 *
 * Deviations (decided, see the report / docs/compat.md): a JSON element of
 * the wrong type (a non-object in the array, tags not an object, a
 * timestamp that is not a number) is a per-point error rather than a failure
 * of the whole request; a JSON float timestamp below 2^32 is read as seconds
 * with a decimal fraction (stored in ms) instead of being truncated. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "server/api_int.h"
#include "tsdb/parse.h"
#include "tsdb/write.h"

#define PUT_CHUNK 4096

typedef struct {
    const json_value_t *obj; /* the element (NULL if it was not an object) */
    const json_value_t *tags;
    const char *metric;
    size_t metric_len;
    const char *val;
    size_t val_len;
    int64_t ts_echo;
} put_rec_t;

typedef struct {
    api_call_t *c;
    int details;
    oct_strbuf_t errors; /* ,-separated {"datapoint":..,"error":..} entries */
    uint64_t n_errors;
    uint64_t success, failed;
    put_rec_t *recs; /* PUT_CHUNK */
    tsdb_dp_t *dps;  /* PUT_CHUNK */
    size_t *dp_rec;  /* dps[i] came from recs[dp_rec[i]] */
    size_t n_recs, n_dps;
    json_arena_t arena; /* this chunk's DOM and tag slices */
    uint64_t seq;
    int have_seq;
} put_state_t;

static void put_fail(put_state_t *ps, const put_rec_t *r, const char *msg)
{
    ps->failed++;
    if (!ps->details) return;
    json_writer_t w;
    if (ps->n_errors++) oct_strbuf_append(&ps->errors, ",", 1);
    json_w_init(&w, &ps->errors);
    json_w_obj_begin(&w);
    json_w_key(&w, "datapoint");
    json_w_obj_begin(&w);
    json_w_key(&w, "metric");
    if (r->metric)
        json_w_strn(&w, r->metric, r->metric_len);
    else
        json_w_null(&w);
    json_w_key(&w, "timestamp");
    json_w_int(&w, r->ts_echo);
    json_w_key(&w, "value");
    if (r->val)
        json_w_strn(&w, r->val, r->val_len);
    else
        json_w_null(&w);
    json_w_key(&w, "tags");
    if (r->tags && r->tags->type == JSON_OBJECT)
        json_w_value(&w, r->tags);
    else
        json_w_null(&w);
    json_w_obj_end(&w);
    json_w_key(&w, "error");
    json_w_str(&w, msg);
    json_w_obj_end(&w);
}

/* Scalar JSON (string, number, bool) as text; NULL for null/containers. */
static const char *put_text(const json_value_t *v, size_t *len)
{
    if (!v) return NULL;
    switch ((json_type_t)v->type) {
    case JSON_STRING:
    case JSON_NUMBER:
        *len = v->len;
        return v->str;
    case JSON_TRUE:
        *len = 4;
        return "true";
    case JSON_FALSE:
        *len = 5;
        return "false";
    default:
        return NULL;
    }
}

/* The timestamp of a point: 0 with the ms value and its resolution set, or -1 with msg. */
static int put_timestamp(const json_value_t *v, put_rec_t *r, int64_t *ts_ms, int *is_ms, char *msg,
                         size_t cap)
{
    oct_errbuf_t eb;
    if (!v) {
        snprintf(msg, cap, "Invalid timestamp");
        return -1;
    }
    if (v->type == JSON_NUMBER && (v->flags & JSON_F_INTEGER)) {
        int64_t t;
        if (json_number_i64(v, &t) || t <= 0) {
            r->ts_echo = json_number_i64(v, &t) ? 0 : t;
            snprintf(msg, cap, "Invalid timestamp");
            return -1;
        }
        r->ts_echo = t;
    } else if (v->type == JSON_NUMBER && !(v->flags & JSON_F_NONFINITE)) {
        /* A float: seconds with a decimal fraction below 2^32, ms above. */
        double d;
        if (json_number_double(v, &d) || !(d >= 1.0) || d > 9999999999999.0) {
            r->ts_echo = 0;
            snprintf(msg, cap, "Invalid timestamp");
            return -1;
        }
        r->ts_echo = (int64_t)d;
        if (d < 4294967296.0) {
            *ts_ms = llround(d * 1000.0);
            *is_ms = d != floor(d);
            if (!*is_ms) *ts_ms = (int64_t)d * 1000;
        } else {
            *ts_ms = (int64_t)d;
            *is_ms = 1;
        }
        return 0;
    } else if (v->type == JSON_STRING) {
        /* A numeric string is coerced, as Jackson does; dotted forms are
         * seconds with a fraction (tsdb_parse_timestamp's allow_dots rule). */
        int64_t t;
        if (!tsdb_parse_long(v->str, v->len, &t, NULL)) {
            r->ts_echo = t;
            if (t <= 0) {
                snprintf(msg, cap, "Invalid timestamp");
                return -1;
            }
        } else {
            r->ts_echo = 0;
        }
        int ism = 0;
        if (tsdb_parse_timestamp(v->str, v->len, 1, ts_ms, &ism, &eb)) {
            snprintf(msg, cap, "Invalid timestamp");
            return -1;
        }
        *is_ms = ism;
        return 0;
    } else {
        snprintf(msg, cap, "Invalid timestamp");
        return -1;
    }
    int ism = 0;
    if (tsdb_parse_timestamp(v->str, v->len, 0, ts_ms, &ism, &eb)) {
        snprintf(msg, cap, "%s", eb.msg);
        return -1;
    }
    *is_ms = ism;
    return 0;
}

/* Turns element v into recs[n_recs] and, if it passes the checks, into a
 * dp. */
static void put_element(put_state_t *ps, const json_value_t *v)
{
    put_rec_t *r = &ps->recs[ps->n_recs++];
    memset(r, 0, sizeof *r);
    tsd_count(ps->c->tsd, TSD_CTR_RPC_PUT, 1);
    if (v->type != JSON_OBJECT) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        put_fail(ps, r, "Invalid data point: not a JSON object");
        return;
    }
    r->obj = v;
    const json_value_t *jm = NULL, *jt = NULL, *jv = NULL, *jtags = NULL;
    /* One pass over the members; the last occurrence of a key wins. */
    for (const json_value_t *m = v->child; m; m = m->next) {
        switch (m->key_len) {
        case 4:
            if (!memcmp(m->key, "tags", 4)) jtags = m;
            break;
        case 5:
            if (!memcmp(m->key, "value", 5)) jv = m;
            break;
        case 6:
            if (!memcmp(m->key, "metric", 6)) jm = m;
            break;
        case 9:
            if (!memcmp(m->key, "timestamp", 9)) jt = m;
            break;
        default:
            break;
        }
    }
    r->metric = put_text(jm, &r->metric_len);
    r->val = put_text(jv, &r->val_len);
    r->tags = jtags;
    if (jt && jt->type == JSON_NUMBER && (jt->flags & JSON_F_INTEGER)) {
        int64_t t;
        if (!json_number_i64(jt, &t)) r->ts_echo = t;
    }

    char msg[OCT_ERRBUF_SIZE + 64];
    if (!r->metric || r->metric_len == 0) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        put_fail(ps, r, "Metric name was empty");
        return;
    }
    tsdb_dp_t *dp = &ps->dps[ps->n_dps];
    memset(dp, 0, sizeof *dp);
    int is_ms = 0;
    if (put_timestamp(jt, r, &dp->pt.ts_ms, &is_ms, msg, sizeof msg)) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        put_fail(ps, r, msg);
        return;
    }
    dp->ts_is_ms = (uint8_t)is_ms;
    if (!r->val || r->val_len == 0) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        put_fail(ps, r, "Empty value");
        return;
    }
    if (!jtags || jtags->type != JSON_OBJECT || jtags->n == 0) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        put_fail(ps, r, "Missing tags");
        return;
    }
    oct_errbuf_t eb;
    int rc = tsdb_parse_value(r->val, r->val_len, &dp->pt, &eb);
    if (rc == OCT_EINVAL) { /* NaN / Infinity after parsing */
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        snprintf(msg, sizeof msg, "%s for metric=%.*s timestamp=%" PRId64, eb.msg,
                 (int)(r->metric_len > 200 ? 200 : r->metric_len), r->metric, r->ts_echo);
        put_fail(ps, r, msg);
        return;
    }
    if (rc) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_INVALID_VALUES, 1);
        put_fail(ps, r, "Unable to parse value to a number");
        return;
    }
    oct_slice_t *tags = json_arena_alloc(&ps->arena, 2 * jtags->n * sizeof *tags);
    size_t nt = 0;
    for (const json_value_t *t = jtags->child; t; t = t->next) {
        size_t vl = 0;
        const char *tv = put_text(t, &vl);
        tags[2 * nt] = oct_slice(t->key, t->key_len);
        tags[2 * nt + 1] = oct_slice(tv ? tv : "", tv ? vl : 0);
        nt++;
    }
    dp->metric = oct_slice(r->metric, r->metric_len);
    dp->tags = tags;
    dp->n_tags = nt;
    ps->dp_rec[ps->n_dps++] = ps->n_recs - 1;
}

static void put_on_error(void *ctx, size_t index, int rc, const char *msg)
{
    put_state_t *ps = ctx;
    const put_rec_t *r = &ps->recs[ps->dp_rec[index]];
    char buf[OCT_ERRBUF_SIZE + 32];
    const char *text = msg;
    if (rc == OCT_ENOSUCHNAME) {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_UNKNOWN_METRICS, 1);
        text = "Unknown metric";
    } else if (rc == OCT_EIO) {
        snprintf(buf, sizeof buf, "Storage exception: %s", msg);
        text = buf;
    } else {
        tsd_count(ps->c->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
    }
    put_fail(ps, r, text);
}

/* The per-request buffers (PUT_CHUNK element pointers, records, points,
 * and the arena's first block: ~1 MB in all) are kept per handler thread
 * and reused: allocating and faulting them in afresh for every 50-point
 * request cost more than parsing it. Freed when the thread exits. */
typedef struct {
    json_value_t **pend;
    put_rec_t *recs;
    tsdb_dp_t *dps;
    size_t *dp_rec;
    json_arena_t arena;
} put_scratch_t;

static pthread_key_t put_scratch_key;
static pthread_once_t put_scratch_once = PTHREAD_ONCE_INIT;

static void put_scratch_free(void *p)
{
    put_scratch_t *s = p;
    free(s->pend);
    free(s->recs);
    free(s->dps);
    free(s->dp_rec);
    json_arena_free(&s->arena);
    free(s);
}

static void put_scratch_init(void)
{
    if (pthread_key_create(&put_scratch_key, put_scratch_free)) abort();
}

static put_scratch_t *put_scratch(void)
{
    pthread_once(&put_scratch_once, put_scratch_init);
    put_scratch_t *s = pthread_getspecific(put_scratch_key);
    if (!s) {
        s = xcalloc(1, sizeof *s);
        s->pend = xmalloc(PUT_CHUNK * sizeof *s->pend);
        s->recs = xmalloc(PUT_CHUNK * sizeof *s->recs);
        s->dps = xmalloc(PUT_CHUNK * sizeof *s->dps);
        s->dp_rec = xmalloc(PUT_CHUNK * sizeof *s->dp_rec);
        s->arena.block_size = 256 * 1024;
        if (pthread_setspecific(put_scratch_key, s)) abort();
    }
    return s;
}

/* Stores the chunk and starts a new one. */
static void put_flush(put_state_t *ps)
{
    if (ps->n_dps) {
        oct_errbuf_t eb;
        uint64_t seq = 0;
        long n = tsdb_put_batch(ps->c->tsd->db, ps->dps, ps->n_dps, put_on_error, ps, &seq, &eb);
        if (n < 0) {
            char buf[OCT_ERRBUF_SIZE + 32];
            snprintf(buf, sizeof buf, "Storage exception: %s", eb.msg);
            for (size_t i = 0; i < ps->n_dps; i++)
                put_fail(ps, &ps->recs[ps->dp_rec[i]], buf);
        } else if (n > 0) {
            ps->success += (uint64_t)n;
            if (!ps->have_seq || seq > ps->seq) ps->seq = seq;
            ps->have_seq = 1;
        }
    }
    ps->n_recs = ps->n_dps = 0;
    json_arena_reset(&ps->arena);
}

void api_put_answer(api_call_t *c, uint64_t success, uint64_t failed, int with_timeouts,
                    uint64_t timeouts, int summary, int details, const oct_strbuf_t *errors)
{
    if (summary || details) {
        json_writer_t w;
        api_json_begin(c, &w);
        json_w_obj_begin(&w);
        json_w_key(&w, "success");
        json_w_uint(&w, success);
        json_w_key(&w, "failed");
        json_w_uint(&w, failed);
        if (with_timeouts) {
            json_w_key(&w, "timeouts");
            json_w_uint(&w, timeouts);
        }
        if (details) {
            json_w_key(&w, "errors");
            json_w_raw(&w, "[", 1);
            oct_strbuf_append(&c->resp->body, errors->ptr ? errors->ptr : "", errors->len);
            oct_strbuf_append(&c->resp->body, "]", 1);
        }
        json_w_obj_end(&w);
        c->resp->status = failed || timeouts ? 400 : 200;
    } else if (failed) {
        http_error(c->resp, 400, "One or more data points had errors",
                   "Please see the TSD logs or append \"details\" to the put request");
    } else {
        c->resp->status = 204;
        oct_strbuf_reset(&c->resp->body);
    }
}

void api_put(api_call_t *c)
{
    const http_request_t *req = c->req;
    tsd_count(c->tsd, TSD_CTR_RPC_HTTP_PUT, 1);
    if (!api_has_body(c)) {
        http_error(c->resp, 400, "Missing request content", NULL);
        return;
    }
    const char *body = (const char *)req->body;
    size_t blen = req->body_len;
    size_t i = 0;
    while (i < blen && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    if (body[i] != '{' && body[i] != '[') {
        http_error(c->resp, 400, "The JSON must start as an object or an array", NULL);
        return;
    }
    oct_errbuf_t eb;
    put_scratch_t *scr = put_scratch();
    put_state_t ps;
    memset(&ps, 0, sizeof ps);
    ps.c = c;
    ps.arena = scr->arena; /* handed back (reset) at the end */

    /* An array of at most PUT_CHUNK elements (every collector's batch) is
     * parsed once: its elements are kept in the arena until the closing ']'
     * proves the whole body valid, and only then turned into points. A
     * longer one is validated as a whole before its first chunk is stored.
     * Either way nothing is counted or stored for an unparsable body. */
    json_stream_t st;
    memset(&st, 0, sizeof st);
    json_value_t **pend = NULL;
    size_t n_pend = 0;
    int ended = 1;
    if (body[i] == '[') {
        if (json_stream_open(&st, body, blen, JSON_ALLOW_NONFINITE, &eb)) {
            http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
            return;
        }
        pend = scr->pend;
        ended = 0;
        while (n_pend < PUT_CHUNK) {
            json_value_t *v;
            int rc = json_stream_next(&st, &ps.arena, &v, &eb);
            if (rc < 0) {
                /* the whole-body parser words some errors differently (and
                 * is what OpenTSDB-compatible messages were taken from) */
                oct_errbuf_t e2;
                if (json_validate(body, blen, JSON_ALLOW_NONFINITE, &e2) == 0) e2 = eb;
                http_error(c->resp, 400, "Unable to parse the given JSON", e2.msg);
                goto out;
            }
            if (rc == 0) {
                ended = 1;
                break;
            }
            pend[n_pend++] = v;
        }
    }
    if (!ended || body[i] == '{') {
        if (json_validate(body, blen, JSON_ALLOW_NONFINITE, &eb)) {
            http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
            goto out;
        }
    }

    int sync = api_flag(c, "sync");
    int sync_timeout = 0;
    char tb[32];
    if (sync && http_param(req, "sync_timeout", tb, sizeof tb) && tb[0]) {
        char *end;
        long v = strtol(tb, &end, 10);
        if (*end || v < 0 || v > INT32_MAX) {
            http_error(c->resp, 400, "Unable to parse 'sync_timeout' as a number", tb);
            goto out;
        }
        sync_timeout = (int)v;
    }
    int details = api_flag(c, "details");
    int summary = api_flag(c, "summary");

    ps.details = details;

    if (body[i] == '{') {
        put_rec_t rec;
        tsdb_dp_t dp;
        size_t dr;
        ps.recs = &rec;
        ps.dps = &dp;
        ps.dp_rec = &dr;
        json_value_t *v;
        if (json_parse(&ps.arena, body, blen, JSON_ALLOW_NONFINITE, &v, &eb)) {
            http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
            goto out;
        }
        put_element(&ps, v);
        put_flush(&ps);
    } else {
        ps.recs = scr->recs;
        ps.dps = scr->dps;
        ps.dp_rec = scr->dp_rec;
        size_t count = n_pend;
        for (size_t k = 0; k < n_pend; k++)
            put_element(&ps, pend[k]);
        if (!ended) put_flush(&ps); /* a full chunk; the rest is streamed */
        while (!ended) {
            json_value_t *v;
            int rc = json_stream_next(&st, &ps.arena, &v, &eb);
            if (rc < 0) { /* cannot happen after json_validate; be safe */
                http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
                goto out;
            }
            if (rc == 0) break;
            count++;
            put_element(&ps, v);
            if (ps.n_recs == PUT_CHUNK) put_flush(&ps);
        }
        if (count == 0) {
            http_error(c->resp, 400, "No datapoints found in content", NULL);
            goto out;
        }
        put_flush(&ps);
    }

    /* Durable before acknowledged. Without ?sync the transport waits for
     * the log's write(2) (the kill -9 guarantee) before it sends this
     * answer, batching the waits of many requests; with ?sync the answer
     * depends on the outcome, so the handler waits itself. */
    uint64_t timeouts = 0;
    if (ps.have_seq && !sync) {
        c->resp->wait_durable = 1;
        c->resp->durable_seq = ps.seq;
    } else if (ps.have_seq) {
        int rc = tsdb_wait_durable(c->tsd->db, ps.seq, sync,
                                   sync && sync_timeout > 0 ? sync_timeout : -1, &eb);
        if (rc == OCT_EAGAIN) {
            /* Accepted (and visible) but not confirmed synced in time. */
            timeouts = ps.success;
            ps.success = 0;
            if (!summary && !details) {
                char msg[256];
                snprintf(msg, sizeof msg,
                         "The put call has timedout with %" PRIu64 " successful writes, %" PRIu64
                         " failed writes and %" PRIu64 " timed out writes.",
                         ps.success, ps.failed, timeouts);
                http_error(c->resp, 400, msg, NULL);
                goto out;
            }
        } else if (rc) {
            http_error(c->resp, 500, "Unable to write the data points to the log", eb.msg);
            goto out;
        }
    }

    api_put_answer(c, ps.success, ps.failed, sync && sync_timeout > 0, timeouts, summary, details,
                   &ps.errors);
out:
    oct_strbuf_free(&ps.errors);
    json_arena_reset(&ps.arena);
    scr->arena = ps.arena;
}

int api_put_timestamp(const json_value_t *v, int64_t *ts_ms, int *is_ms, char *msg, size_t cap)
{
    put_rec_t r;
    memset(&r, 0, sizeof r);
    return put_timestamp(v, &r, ts_ms, is_ms, msg, cap);
}
