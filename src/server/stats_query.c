/* stats_query.c -- running and recently completed queries (stats_query.h).
 *
 * Running queries sit on a doubly linked list; completed ones in a ring of STATS_QUERY_KEEP
 * slots, the oldest overwritten. Both are guarded by one mutex: a query takes it once to start
 * and once to finish, far from any per-point path. */
#include "server/stats_query.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"

struct stats_query {
    struct stats_query *prev, *next; /* running list */
    char *query;                     /* TSQuery JSON, NULL when too long */
    size_t query_len;
    char remote[64];
    oct_strbuf_t headers; /* a JSON object */
    int64_t start_ms, start_ns, completed_ms, total_ns;
    int status;
    char *exception;
    uint64_t executed;
    stats_query_figures_t f;
};

struct stats_queries {
    pthread_mutex_t mu;
    stats_query_t *running; /* newest first */
    uint64_t n_running;
    stats_query_t *done[STATS_QUERY_KEEP];
    size_t n_done, next; /* ring: next slot to write */
};

stats_queries_t *stats_queries_new(void)
{
    stats_queries_t *qs = xcalloc(1, sizeof *qs);
    pthread_mutex_init(&qs->mu, NULL);
    return qs;
}

static void query_free(stats_query_t *q)
{
    if (!q) return;
    free(q->query);
    free(q->exception);
    oct_strbuf_free(&q->headers);
    free(q);
}

void stats_queries_free(stats_queries_t *qs)
{
    if (!qs) return;
    for (size_t i = 0; i < STATS_QUERY_KEEP; i++)
        query_free(qs->done[i]);
    pthread_mutex_destroy(&qs->mu);
    free(qs);
}

static void header_cb(void *ctx, const char *name, const char *value)
{
    json_writer_t *w = ctx;
    json_w_key(w, name);
    json_w_str(w, value);
}

stats_query_t *stats_query_begin(stats_queries_t *qs, const char *query_json, size_t len,
                                 const http_request_t *req)
{
    stats_query_t *q = xcalloc(1, sizeof *q);
    if (len <= STATS_QUERY_MAX_JSON) {
        q->query = xmalloc(len + 1);
        memcpy(q->query, query_json, len);
        q->query[len] = '\0';
        q->query_len = len;
    }
    http_remote(req, q->remote, sizeof q->remote);
    json_writer_t w;
    json_w_init(&w, &q->headers);
    json_w_obj_begin(&w);
    http_header_each(req, header_cb, &w);
    json_w_obj_end(&w);
    q->start_ms = oct_clock_wall_ms();
    q->start_ns = oct_clock_mono_ns();
    q->executed = 1;
    pthread_mutex_lock(&qs->mu);
    q->next = qs->running;
    if (q->next) q->next->prev = q;
    qs->running = q;
    qs->n_running++;
    pthread_mutex_unlock(&qs->mu);
    return q;
}

/* Same query, remote and answer: 2.4 counts it on the entry it already has. */
static int same(const stats_query_t *a, const stats_query_t *b)
{
    return a->status == b->status && !strcmp(a->remote, b->remote) &&
           a->query_len == b->query_len && (a->query == NULL) == (b->query == NULL) &&
           (!a->query || !memcmp(a->query, b->query, a->query_len));
}

void stats_query_end(stats_queries_t *qs, stats_query_t *q, int status, const char *exception,
                     const stats_query_figures_t *f)
{
    q->completed_ms = oct_clock_wall_ms();
    q->total_ns = oct_clock_mono_ns() - q->start_ns;
    q->status = status;
    if (exception && (status < 200 || status > 299)) q->exception = xstrdup(exception);
    if (f) q->f = *f;
    stats_query_t *drop = NULL;
    pthread_mutex_lock(&qs->mu);
    if (q->prev)
        q->prev->next = q->next;
    else
        qs->running = q->next;
    if (q->next) q->next->prev = q->prev;
    qs->n_running--;
    q->prev = q->next = NULL;
    for (size_t i = 0; i < qs->n_done; i++)
        if (same(qs->done[i], q)) {
            qs->done[i]->executed++;
            drop = q;
            break;
        }
    if (!drop) {
        drop = qs->done[qs->next];
        qs->done[qs->next] = q;
        qs->next = (qs->next + 1) % STATS_QUERY_KEEP;
        if (qs->n_done < STATS_QUERY_KEEP) qs->n_done++;
    }
    pthread_mutex_unlock(&qs->mu);
    query_free(drop);
}

uint64_t stats_queries_running(stats_queries_t *qs)
{
    if (!qs) return 0;
    pthread_mutex_lock(&qs->mu);
    uint64_t n = qs->n_running;
    pthread_mutex_unlock(&qs->mu);
    return n;
}

/* The members running and completed entries share: query, remote, user and the headers
 * (under 2.4's two names for them). */
static void w_query(json_writer_t *w, const stats_query_t *q, const char *headers_key)
{
    json_w_key(w, "query");
    if (q->query)
        json_w_raw(w, q->query, q->query_len);
    else
        json_w_null(w);
    if (!q->query) {
        json_w_key(w, "queryTruncated");
        json_w_bool(w, 1);
    }
    json_w_key(w, "remote");
    json_w_str(w, q->remote);
    json_w_key(w, "user");
    json_w_null(w);
    json_w_key(w, headers_key);
    json_w_raw(w, q->headers.ptr, q->headers.len);
}

static void w_ms(json_writer_t *w, const char *key, int64_t ns)
{
    json_w_key(w, key);
    json_w_double(w, (double)ns / 1e6);
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 408:
        return "Request Timeout";
    case 413:
        return "Request Entity Too Large";
    case 424:
        return "Failed Dependency";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "";
    }
}

static void w_completed(json_writer_t *w, const stats_query_t *q, uint64_t n_running)
{
    json_w_obj_begin(w);
    w_query(w, q, "requestHeaders");
    json_w_key(w, "numRunningQueries");
    json_w_uint(w, n_running);
    json_w_key(w, "httpResponse");
    json_w_obj_begin(w);
    json_w_key(w, "code");
    json_w_int(w, q->status);
    json_w_key(w, "reasonPhrase");
    json_w_str(w, reason_phrase(q->status));
    json_w_obj_end(w);
    json_w_key(w, "exception");
    json_w_str(w, q->exception ? q->exception : "null"); /* 2.4 writes the string "null" */
    json_w_key(w, "executed");
    json_w_uint(w, q->executed);
    json_w_key(w, "queryStartTimestamp");
    json_w_int(w, q->start_ms);
    json_w_key(w, "queryCompletedTimestamp");
    json_w_int(w, q->completed_ms);
    json_w_key(w, "sentToClient");
    json_w_bool(w, q->status >= 200 && q->status <= 299);
    json_w_key(w, "stats");
    json_w_obj_begin(w);
    json_w_key(w, "series");
    json_w_uint(w, q->f.series);
    json_w_key(w, "rawDPs");
    json_w_uint(w, q->f.raw_points);
    json_w_key(w, "emittedDPs");
    json_w_uint(w, q->f.emitted_points);
    w_ms(w, "stringToUidTime", q->f.resolve_ns);
    w_ms(w, "queryScanTime", q->f.scan_ns);
    w_ms(w, "aggregationTime", q->f.agg_ns);
    w_ms(w, "serializationTime", q->f.serialization_ns);
    w_ms(w, "totalTime", q->total_ns);
    json_w_obj_end(w);
    json_w_obj_end(w);
}

void stats_queries_json(stats_queries_t *qs, json_writer_t *w)
{
    int64_t now_ns = oct_clock_mono_ns();
    json_w_obj_begin(w);
    pthread_mutex_lock(&qs->mu);
    json_w_key(w, "completed");
    json_w_arr_begin(w);
    size_t first = (qs->next + STATS_QUERY_KEEP - qs->n_done) % STATS_QUERY_KEEP;
    for (size_t i = 0; i < qs->n_done; i++)
        w_completed(w, qs->done[(first + i) % STATS_QUERY_KEEP], qs->n_running);
    json_w_arr_end(w);
    json_w_key(w, "running");
    json_w_arr_begin(w);
    const stats_query_t *last = qs->running;
    while (last && last->next)
        last = last->next;
    for (const stats_query_t *q = last; q; q = q->prev) {
        json_w_obj_begin(w);
        w_query(w, q, "headers");
        json_w_key(w, "queryStart");
        json_w_int(w, q->start_ms);
        json_w_key(w, "elapsed");
        json_w_double(w, (double)(now_ns - q->start_ns) / 1e6);
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
    pthread_mutex_unlock(&qs->mu);
    json_w_obj_end(w);
}
