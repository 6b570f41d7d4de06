/* api_int.h -- private to the HTTP API handlers (api*.c): the call context
 * the router hands each endpoint, and helpers shared between endpoints. */
#ifndef OCT_SERVER_API_INT_H
#define OCT_SERVER_API_INT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/uid_bytes.h"
#include "common/dtoa.h"
#include "common/json.h"
#include "query/query.h"
#include "server/http.h"
#include "tsdb/tsmeta.h"

/* Verbs as a bit set, for route tables and 405 checks. */
enum {
    API_GET = 1u << 0,
    API_POST = 1u << 1,
    API_PUT = 1u << 2,
    API_DELETE = 1u << 3,
};

typedef struct {
    tsd_ctx_t *tsd;
    const http_request_t *req;
    http_response_t *resp;
    unsigned verb;           /* the API_* bit of the effective method (method_override applied) */
    const char *method;      /* the effective method's name, for messages */
    json_arena_t arena;      /* per request; freed by the router */
    struct api_names *names; /* api_names.c's memo, made on first use (arena) */
} api_call_t;

/* Endpoints (each file's entry points). */
void api_put(api_call_t *c);
/* The answer of /api/put, /api/rollup and /api/histogram (api_put.c): with ?summary or
 * ?details {"success":n,"failed":n[,"timeouts":n][,"errors":[<errors>]]}
 * (400 when any failed or timed out, else 200); without them 400 "One or
 * more data points had errors" or 204. errors: the ,-separated entries. */
void api_put_answer(api_call_t *c, uint64_t success, uint64_t failed, int with_timeouts,
                    uint64_t timeouts, int summary, int details, const oct_strbuf_t *errors);
void api_version(api_call_t *c);
void api_config(api_call_t *c);
void api_config_filters(api_call_t *c);
void api_aggregators(api_call_t *c);
void api_serializers(api_call_t *c);
void api_stats(api_call_t *c);
void api_stats_query(api_call_t *c);
void api_stats_threads(api_call_t *c);
void api_stats_jvm(api_call_t *c);
void api_metrics(api_call_t *c); /* /metrics, Prometheus text (api_metrics.c) */
void api_dropcaches(api_call_t *c);
void api_rollup(api_call_t *c);    /* /api/rollup (api_rollup.c) */
void api_histogram(api_call_t *c); /* api_histogram.c */
/* The telnet `rollup` command (api_rollup.c): line[0..len) is the whole
 * line; an error line (prefix "rollup: ") goes to out, nothing on success. */
void api_rollup_telnet(tsd_ctx_t *t, const char *line, size_t len, oct_strbuf_t *out);
void api_suggest(api_call_t *c);
void api_search_lookup(api_call_t *c);
void api_search_tsmeta(api_call_t *c); /* api_search_meta.c */
void api_search_tsmeta_summary(api_call_t *c);
void api_search_tsuids(api_call_t *c);
void api_search_uidmeta(api_call_t *c);
void api_search_annotation(api_call_t *c);
/* /api/tree and its sub-endpoints (api_tree.c, docs/trees.md) */
void api_tree(api_call_t *c);
void api_tree_branch(api_call_t *c);
void api_tree_rule(api_call_t *c);
void api_tree_rules(api_call_t *c);
void api_tree_test(api_call_t *c);
void api_tree_collisions(api_call_t *c);
void api_tree_notmatched(api_call_t *c);
void api_tree_unknown(api_call_t *c); /* /api/tree/<other>: 2.4's 404 */
void api_uid_assign(api_call_t *c);
void api_uid_uidmeta(api_call_t *c);
void api_uid_tsmeta(api_call_t *c);
void api_uid_rename(api_call_t *c);
void api_annotation(api_call_t *c);      /* /api/annotation (api_annotation.c) */
void api_annotation_bulk(api_call_t *c); /* /api/annotation/bulk */
void api_annotations(api_call_t *c);     /* /api/annotations: global notes of a range */
void api_query_last(api_call_t *c);      /* /api/query/last (api_query_last.c) */
void api_octsdb_flush(api_call_t *c);    /* /api/octsdb/... (api_admin.c, docs/cli-live.md) */
void api_octsdb_expire(api_call_t *c);   /* api_retention.c, docs/retention.md */
void api_octsdb_uid_delete(api_call_t *c);
void api_octsdb_uid_fsck(api_call_t *c);
void api_octsdb_compact(api_call_t *c);
void api_octsdb_delete(api_call_t *c);
void api_delete(api_call_t *c); /* api_delete.c: octsdb's exact delete (docs/delete.md) */
void api_octsdb_fsck(api_call_t *c);
void api_octsdb_rollup_backfill(api_call_t *c);
void api_octsdb_tree_sync(api_call_t *c); /* api_tree.c */
/* /s/<rel> (api_static.c): a file under tsd.http.staticroot; rel is the
 * decoded path after "/s/", case kept. */
void api_static(api_call_t *c, const char *rel);
/* The file rel (relative, no "." or ".." segment) under root into out
 * (reset first), with api_static's checks: resolved strictly inside root,
 * a regular file, not a symlink, at most 16 MiB. 0, or -1 for any refusal. */
int api_static_load(const char *root, const char *rel, oct_strbuf_t *out);
/* The Content-Type for a file name's extension (octet-stream if unknown). */
const char *api_static_type(const char *name);
/* / and /ui/<rel> (api_ui.c): the web UI, embedded or from tsd.http.uiroot;
 * rel is "index.html" for "/" (the page's links are relative to "/"). */
void api_ui(api_call_t *c, const char *rel);
/* /api/query[/<sub>] (api_query.c), modes rw/ro. sub is "" or e.g. "exp". */
void api_query(api_call_t *c, const char *sub);
/* The GET form of /api/query into q (zeroed by the caller; query_free it):
 * start (required), end, timezone, the flags, m= and tsuid= sub-queries.
 * Returns 0, or -1 with the 400 answer written. Also used by /q. */
int api_query_parse_get(api_call_t *c, query_t *q);
/* POST /api/query/exp (api_exp.c): expressions over metric sub-queries. */
void api_query_exp(api_call_t *c);
/* GET /api/query/gexp (api_gexp.c): Graphite-style functions. */
void api_query_gexp(api_call_t *c);
/* A double as Jackson prints one: shortest text that reads back, ".0" on
 * integral values (so clients can tell doubles from integers), NaN and
 * infinities as json_w_double writes them (api_query.c). */
void api_w_double(json_writer_t *w, double v);
/* The same text into buf (>= API_DOUBLE_BUF bytes, NUL-terminated); returns
 * its length. */
#define API_DOUBLE_BUF (OCT_DTOA_BUF + 2)
size_t api_fmt_double(double v, char *buf);
/* Writes the members tags_key: {"k":"v",...} (tagk/tagv[0..n)) and
 * agg_key: ["k",...] (agg[0..n_agg)) of a result series (api_query.c). */
void api_w_tags(json_writer_t *w, const char *tags_key, size_t n, const char *const *tagk,
                const char *const *tagv, const char *agg_key, size_t n_agg, const char *const *agg);
/* Repeated query-string values (http_param_each's callback appends each,
 * copied into the arena a; free v, not its strings). */
typedef struct {
    char **v;
    size_t n;
    json_arena_t *a;
} api_strlist_t;
void api_strlist_collect(void *ctx, const char *value, size_t len);
/* Answers an exec_query error: 400 unknown name/bad input, 413 a limit,
 * 408 timeout, 424 storage, else 500. */
void api_query_error(api_call_t *c, int rc, const char *msg);
/* Legacy routes (api_legacy.c, 2.4's UI-era endpoints): /version and
 * /version.json, /logs, /stats, /q. */
void api_legacy_version(api_call_t *c);
void api_legacy_logs(api_call_t *c);
void api_legacy_stats(api_call_t *c);
void api_legacy_q(api_call_t *c);
/* /q?...&png (api_graph.c): q (parsed by api_query_parse_get) drawn by gnuplot with the
 * request's gnuplot options; the PNG, or 400 for a bad option, 501 without gnuplot. Returns 0
 * or -1 (the error answer written). May block while gnuplot runs (at most 30 s). */
int api_graph_png(api_call_t *c, query_t *q);

/* The router's tables as data, for tests that must cover every route:
 * path after "/api/" (or after "/" when legacy), the verbs it takes and those
 * of them a read-only credential may not use. Fills up to cap entries and
 * returns how many routes exist. */
typedef struct {
    const char *path;
    int legacy;
    unsigned verbs;
    unsigned write_verbs;
} api_route_info_t;
size_t api_route_list(api_route_info_t *out, size_t cap);

/* ---- helpers (api.c) ---------------------------------------------------- */

/* 1 if the query string carries `name` at all (OpenTSDB's "present" flags:
 * ?summary, ?details=false, ... are all true). */
int api_flag(const api_call_t *c, const char *name);

/* Parses the request body as JSON into the call's arena. On failure fills the
 * response with OpenTSDB's errors and returns NULL: no body -> 400 "Missing
 * request content"; bad JSON -> 400 "Unable to parse the given JSON" (the
 * parser's reason as details). */
json_value_t *api_body_json(api_call_t *c, unsigned flags);

/* The effective method is a body-carrying one and the body is non-empty. */
int api_has_body(const api_call_t *c);

/* The body as a string member or NULL; copies into the arena, NUL-terminated. */
const char *api_json_cstr(api_call_t *c, const json_value_t *o, const char *key);

/* Writes the response as JSON: initialises a writer on resp->body. */
void api_json_begin(api_call_t *c, json_writer_t *w);

/* The timestamp member of a /api/put point, with its rules (api_put.c): 0 with the time in
 * ms and whether it was given in ms, or -1 with OpenTSDB's text in msg. */
int api_put_timestamp(const json_value_t *v, int64_t *ts_ms, int *is_ms, char *msg, size_t cap);

/* 405 with OpenTSDB's texts. */
void api_method_not_allowed(api_call_t *c);

/* The UID kind named by the API's singular types "metric", "tagk", "tagv"
 * (case-insensitive, "metrics" also accepted). -1 if none. */
int api_kind_from_type(const char *s);
/* "metric", "tagk", "tagv" */
const char *api_kind_type_name(int kind);

/* Writes one annotation's stored JSON (tsdb/annotation.h) as the API shows
 * it: tsuid (omitted for global notes), description, notes, custom
 * (omitted when null), endTime, startTime. Also for notes in /api/query
 * results. Returns 0, or -1 (unreadable JSON: nothing written). */
int api_write_annotation(api_call_t *c, json_writer_t *w, const char *json, size_t len);

/* ---- shared by suggest, lookup, tsmeta -------------------------------- */

/* A parsed "metric{k=v,k2=*}" expression, slices into an arena copy. */
typedef struct {
    const char *metric; /* may be "" */
    size_t n_tags;
    const char **tagk; /* "*" = any key */
    const char **tagv; /* "*" = any value */
} api_mexpr_t;

/* Parses m into e (strings in the call's arena). Returns 0 or -1 with a 400
 * already written ("<reason>"). */
int api_parse_mexpr(api_call_t *c, const char *m, api_mexpr_t *e);

/* Writes {"tagk":"tagv",...} for a TSUID by resolving each UID (sorted by
 * tagk name). Returns 0 or a negative error (unknown UID etc.) with eb set.
 * Names are memoized per call (api_names.c): a lookup of 50,000 series
 * resolves and escapes each distinct name once. */
int api_write_tsuid_tags(api_call_t *c, json_writer_t *w, const uint8_t *tsuid, size_t len,
                         oct_errbuf_t *eb);
/* The same object appended to sb as is (no writer state): for an answer
 * that writes each result's text itself. */
int api_append_tsuid_tags(api_call_t *c, oct_strbuf_t *sb, const uint8_t *tsuid, size_t len,
                          oct_errbuf_t *eb);
/* The name of a UID as a JSON string with its quotes (*json, *len: valid
 * for the call), memoized per call. Returns 0, or a negative error with eb
 * set (unknown UID). */
int api_name_json(api_call_t *c, codec_uid_kind_t kind, uint64_t id, const char **json, size_t *len,
                  oct_errbuf_t *eb);
/* Sizes the call's tag-value memo for an answer naming about n series
 * (each may carry its own value: a host's), before the first name. */
void api_names_expect(api_call_t *c, size_t n);

/* ---- shared by the uid and search endpoints (api_uid.c) ------------- */

/* Writes the UIDMeta object of one UID (stored fields, else defaults).
 * Returns 0, or -1 (unknown UID, or a 500 already written). */
int api_write_uidmeta(api_call_t *c, json_writer_t *w, codec_uid_kind_t kind, uint64_t id);

/* Writes the TSMeta object of a series: m's fields, counter as
 * totalDatapoints, the metric and tags as UIDMeta objects. Returns 0 or -1. */
int api_write_tsmeta(api_call_t *c, json_writer_t *w, const uint8_t *tsuid, size_t len,
                     const tsmeta_t *m, int64_t counter);

#endif
