/* api_admin.c -- octsdb's operator endpoints under /api/octsdb/, for the
 * commands that work through a running TSD (docs/cli-live.md) where 2.4 has
 * no endpoint:
 *
 *   POST /api/octsdb/flush                       204 once every point the TSD holds is
 *                                                in the store (tsdb_flush)
 *   POST /api/octsdb/uid/delete?type=T&name=N    204, or 404 no such name (uid_delete)
 *   POST /api/octsdb/uid/fsck[?fix][&delete_unknown]
 *                                                200 {"problems":[[kind,problem,message]..],
 *                                                "cells":N,"found":{problem:N..},"errors":N,
 *                                                "fixed":N} (uid_fsck)
 *   POST /api/octsdb/delete                      200 {"rows":N}; body {"windows":[{"tsuid":
 *                                                HEX,"start":ms,"end":ms}..]}: whole rows of
 *                                                those series and hours (tsdb_delete_window)
 *   POST /api/octsdb/fsck?part=HEX&key=HEX[&resolve_dups][&last_write_wins]
 *        [&delete_orphans][&delete_unknown][&delete_bad_values][&delete_bad_rows]
 *        [&delete_bad_compacts]
 *                                                200 {"messages":[..],"stats":[N..]}: repairs
 *                                                one row (tsdb_fsck_row_at, fix on); stats is
 *                                                tsdb_fsck_stats_t's counters in field order
 *   POST /api/octsdb/compact                     200 {"before":bytes,"after":bytes}
 *                                                (tsdb_flush, tsdb_compact)
 *   POST /api/octsdb/rollup/backfill             200 {"next":N,"total":N,"series":N,
 *                                                "hours":N,"cells":N}; body {"start":ms,
 *                                                "end":ms,"from":N,"limit":N[,"metric":name]}:
 *                                                one slice of series (tsdb_rollup_backfill)
 *
 * Each runs the same tsdb/ or uid/ function the command runs on a stopped
 * data dir, on the HTTP handler thread that took the request: a handler
 * may block (http_server.c), ingest goes on in the other threads. The long
 * ones (delete, fsck, compact, backfill) run one at a time: a second one meanwhile is 409. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "codec/rowkey.h"
#include "server/api_int.h"
#include "codec/uid_bytes.h"
#include "tsdb/fsck.h"
#include "tsdb/maint.h"
#include "tsdb/rollup.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

static pthread_mutex_t api_admin_mu = PTHREAD_MUTEX_INITIALIZER;

static int api_admin_begin(api_call_t *c)
{
    if (pthread_mutex_trylock(&api_admin_mu) == 0) return 0;
    http_error(c->resp, 409, "Another maintenance command is running", NULL);
    return -1;
}

void api_octsdb_flush(api_call_t *c)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_flush(c->tsd->db, &eb);
    if (rc)
        http_error(c->resp, 500, "Flush failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
    else
        c->resp->status = 204;
}

void api_octsdb_uid_delete(api_call_t *c)
{
    char type[32], name[1024];
    int kind = http_param(c->req, "type", type, sizeof type) ? api_kind_from_type(type) : -1;
    if (kind < 0 || !http_param(c->req, "name", name, sizeof name) || !name[0]) {
        http_error(c->resp, 400, "Missing necessary values to delete UID",
                   "type (metric, tagk or tagv) and name are required");
        return;
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = uid_delete(tsdb_uids(c->tsd->db), (codec_uid_kind_t)kind, (const uint8_t *)name,
                        strlen(name), &eb);
    if (rc == OCT_ENOSUCHNAME)
        http_error(c->resp, 404, eb.msg[0] ? eb.msg : "No such name", NULL);
    else if (rc)
        http_error(c->resp, 500, "Unable to delete UID", eb.msg[0] ? eb.msg : oct_strerror(rc));
    else
        c->resp->status = 204;
}

static void api_fsck_problem(void *ctx, codec_uid_kind_t kind, uid_fsck_problem_t p,
                             const char *msg)
{
    json_writer_t *w = ctx;
    json_w_arr_begin(w);
    json_w_str(w, kind < CODEC_UID_N_KINDS ? codec_uid_kind_qualifier(kind) : NULL);
    json_w_str(w, uid_fsck_problem_name(p));
    json_w_str(w, msg);
    json_w_arr_end(w);
}

void api_octsdb_uid_fsck(api_call_t *c)
{
    if (api_admin_begin(c)) return;
    uid_fsck_opts_t o = {.fix = api_flag(c, "fix"),
                         .delete_unknown = api_flag(c, "delete_unknown")};
    uid_fsck_stats_t st;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "problems");
    json_w_arr_begin(&w);
    int rc = uid_fsck(tsdb_uids(c->tsd->db), &o, api_fsck_problem, &w, &st, &eb);
    pthread_mutex_unlock(&api_admin_mu);
    if (rc) {
        oct_strbuf_reset(&c->resp->body);
        http_error(c->resp, 500, "UID fsck failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_w_arr_end(&w);
    json_w_key(&w, "cells");
    json_w_uint(&w, st.cells);
    json_w_key(&w, "found");
    json_w_obj_begin(&w);
    for (int p = 0; p < UID_FSCK_PROBLEM_COUNT; p++) {
        json_w_key(&w, uid_fsck_problem_name((uid_fsck_problem_t)p));
        json_w_uint(&w, st.found[p]);
    }
    json_w_obj_end(&w);
    json_w_key(&w, "errors");
    json_w_uint(&w, st.errors);
    json_w_key(&w, "fixed");
    json_w_uint(&w, st.fixed);
    json_w_obj_end(&w);
    c->resp->status = 200;
}

/* Every counter of tsdb_fsck_stats_t is a uint64_t: the answer lists them
 * in field order, and the command (the same build) reads them back so. */
_Static_assert(sizeof(tsdb_fsck_stats_t) % sizeof(uint64_t) == 0, "fsck stats are u64 counters");

static void api_fsck_message(void *ctx, const char *msg)
{
    json_w_str(ctx, msg);
}

/* A hex query parameter into out[0..cap); its byte length or -1. */
static int api_hex_param(api_call_t *c, const char *name, uint8_t *out, size_t cap)
{
    char hex[1100];
    if (!http_param(c->req, name, hex, sizeof hex)) return -1;
    size_t n = strlen(hex);
    oct_errbuf_t eb;
    if (n == 0 || n % 2 || n / 2 > cap || codec_uid_from_hex(hex, n, n / 2, out, &eb)) return -1;
    return (int)(n / 2);
}

void api_octsdb_fsck(api_call_t *c)
{
    uint8_t part[512], key[512];
    int pl = api_hex_param(c, "part", part, sizeof part);
    int kl = api_hex_param(c, "key", key, sizeof key);
    if (pl < 0 || kl <= 0) {
        http_error(c->resp, 400, "Missing necessary values to repair a row",
                   "part and key, in hex, are required");
        return;
    }
    tsdb_fsck_opts_t o = {.fix = 1,
                          .resolve_dups = api_flag(c, "resolve_dups"),
                          .last_write_wins = api_flag(c, "last_write_wins"),
                          .delete_orphans = api_flag(c, "delete_orphans"),
                          .delete_unknown = api_flag(c, "delete_unknown"),
                          .delete_bad_values = api_flag(c, "delete_bad_values"),
                          .delete_bad_rows = api_flag(c, "delete_bad_rows"),
                          .delete_bad_compacts = api_flag(c, "delete_bad_compacts")};
    if (api_admin_begin(c)) return;
    tsdb_fsck_stats_t st = {0};
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "messages");
    json_w_arr_begin(&w);
    int rc = tsdb_fsck_row_at(c->tsd->db, &o, oct_slice(part, (size_t)pl),
                              oct_slice(key, (size_t)kl), &st, api_fsck_message, &w, &eb);
    pthread_mutex_unlock(&api_admin_mu);
    if (rc) {
        http_error(c->resp, 500, "Repair failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_w_arr_end(&w);
    json_w_key(&w, "stats");
    json_w_arr_begin(&w);
    const uint64_t *v = (const uint64_t *)&st;
    for (size_t i = 0; i < sizeof st / sizeof *v; i++)
        json_w_uint(&w, v[i]);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    c->resp->status = 200;
}

#define API_TSUID_MAX 256

void api_octsdb_delete(api_call_t *c)
{
    json_value_t *b = api_body_json(c, 0);
    if (!b) return;
    const json_value_t *ws = json_obj_get(b, "windows");
    if (!ws || ws->type != JSON_ARRAY) {
        http_error(c->resp, 400, "Missing windows",
                   "the body is {\"windows\":[{\"tsuid\":..,"
                   "\"start\":ms,\"end\":ms}..]}");
        return;
    }
    const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
    codec_rowkey_layout_t rl = {(uint8_t)l->uid_width[0], (uint8_t)l->uid_width[1],
                                (uint8_t)l->uid_width[2], 0, 1};
    size_t n = 0;
    tsdb_window_t *w = json_arena_alloc(&c->arena, (ws->n ? ws->n : 1) * sizeof *w);
    for (const json_value_t *e = ws->child; e; e = e->next, n++) {
        const json_value_t *t = json_obj_get(e, "tsuid"), *s0 = json_obj_get(e, "start"),
                           *s1 = json_obj_get(e, "end");
        uint8_t *tsuid = json_arena_alloc(&c->arena, API_TSUID_MAX);
        oct_errbuf_t eb;
        int len = t && t->type == JSON_STRING
                      ? codec_tsuid_from_hex(&rl, t->str, t->len, tsuid, API_TSUID_MAX, &eb)
                      : OCT_EPARSE;
        if (len <= 0 || !s0 || !s1 || s0->type != JSON_NUMBER || s1->type != JSON_NUMBER ||
            json_number_i64(s0, &w[n].start_ms) || json_number_i64(s1, &w[n].end_ms)) {
            http_error(c->resp, 400, "Invalid window", "each needs a hex tsuid, start and end");
            return;
        }
        w[n].tsuid = tsuid;
        w[n].tsuid_len = (size_t)len;
    }
    if (api_admin_begin(c)) return;
    uint64_t rows = 0;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_delete_window(c->tsd->db, w, n, &rows, &eb);
    pthread_mutex_unlock(&api_admin_mu);
    if (rc) {
        http_error(c->resp, 500, "Delete failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t jw;
    api_json_begin(c, &jw);
    json_w_obj_begin(&jw);
    json_w_key(&jw, "rows");
    json_w_uint(&jw, rows);
    json_w_obj_end(&jw);
    c->resp->status = 200;
}

void api_octsdb_compact(api_call_t *c)
{
    if (api_admin_begin(c)) return;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    uint64_t before = 0, after = 0;
    tsdb_t *db = c->tsd->db;
    int rc;
    if ((rc = tsdb_flush(db, &eb)) == 0 && (rc = tsdb_disk_usage(db, &before, &eb)) == 0 &&
        (rc = tsdb_compact(db, &eb)) == 0)
        rc = tsdb_disk_usage(db, &after, &eb);
    pthread_mutex_unlock(&api_admin_mu);
    if (rc) {
        http_error(c->resp, 500, "Compaction failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "before");
    json_w_uint(&w, before);
    json_w_key(&w, "after");
    json_w_uint(&w, after);
    json_w_obj_end(&w);
    c->resp->status = 200;
}

/* An integer member >= 0 of the body, or def when absent; -1 when bad. */
static int64_t api_admin_i64(const json_value_t *b, const char *key, int64_t def)
{
    const json_value_t *v = json_obj_get(b, key);
    int64_t x;
    if (!v) return def;
    if (v->type != JSON_NUMBER || json_number_i64(v, &x) || x < 0) return -1;
    return x;
}

void api_octsdb_rollup_backfill(api_call_t *c)
{
    json_value_t *b = api_body_json(c, 0);
    if (!b) return;
    if (b->type != JSON_OBJECT) {
        http_error(c->resp, 400, "Invalid backfill request", "the body must be a JSON object");
        return;
    }
    tsdb_rollup_backfill_t o = {.metric = api_json_cstr(c, b, "metric")};
    int64_t from = api_admin_i64(b, "from", 0), limit = api_admin_i64(b, "limit", 0);
    o.start_ms = api_admin_i64(b, "start", 0);
    o.end_ms = api_admin_i64(b, "end", INT64_MAX);
    if (from < 0 || limit < 0 || o.start_ms < 0 || o.end_ms < 0) {
        http_error(c->resp, 400, "Invalid backfill request",
                   "start, end (ms), from and limit must be integers >= 0");
        return;
    }
    o.from = (size_t)from;
    o.limit = (size_t)limit;
    if (api_admin_begin(c)) return;
    tsdb_rollup_backfill_stats_t st;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_rollup_backfill(c->tsd->db, &o, &st, &eb);
    pthread_mutex_unlock(&api_admin_mu);
    if (rc) {
        int code = rc == OCT_EINVAL || rc == OCT_ENOSUCHNAME ? 400 : 500;
        http_error(c->resp, code, "Backfill failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "next");
    json_w_uint(&w, st.next);
    json_w_key(&w, "total");
    json_w_uint(&w, st.total);
    json_w_key(&w, "series");
    json_w_uint(&w, st.series);
    json_w_key(&w, "hours");
    json_w_uint(&w, st.hours);
    json_w_key(&w, "cells");
    json_w_uint(&w, st.cells);
    json_w_obj_end(&w);
    c->resp->status = 200;
}
