/* http_server.c -- HTTP/1.1 through libmicrohttpd (see http_server.h) and
 * the transport half of http.h (headers and query parameters).
 *
 * libmicrohttpd runs without a listening socket: the worker loops hand it
 * the sockets whose first byte is 'A'..'Z' (MHD_add_connection). Its polling
 * threads (epoll, tsd.network.worker_threads of them) parse requests,
 * de-chunk bodies, answer `Expect: 100-continue`, do keep-alive and
 * pipelining. We collect the body, and when it is complete suspend the
 * connection and queue the request to our handler threads; a handler
 * decodes gzip/deflate, applies CORS, runs api_handle, queues the response
 * and resumes the connection. So a handler that blocks (a sync put waiting
 * for the log, a long query) holds one handler thread, never a polling
 * thread with hundreds of connections on it. The exception is the hot
 * path, a small POST /api/put without ?sync: the polling thread runs it
 * and, if the log is slow to write it, parks the answer with a waiter
 * thread (see "puts answered by the polling thread" below). Per-thread
 * inflaters and per-connection body buffers are reused across requests.
 *
 * Request life: uri_log (MHD saw the request line: allocate http_req_t and
 * keep the raw query string) -> access handler, first call (headers: check
 * Content-Length against the limit) -> calls with body data -> final call
 * (body complete: dispatch) -> handler thread -> MHD sends the response ->
 * completed callback (free). A body over tsd.http.request.max_body_size is
 * answered 413: at once when Content-Length declares it (before any 100
 * Continue; libmicrohttpd then closes the connection), otherwise (chunked)
 * after the rest was read and dropped -- libmicrohttpd takes a response
 * only before or after the body -- and a client still sending after twice
 * the limit is disconnected.
 *
 * Shutdown: new requests get 503 and `Connection: close`; requests already
 * dispatched are finished and answered (up to the grace period); then the
 * handler threads and libmicrohttpd stop. */
#include "server/http_server.h"

#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "server/http.h"
#include "tsdb/write.h"

#define HTTP_JSON_TYPE        "application/json; charset=UTF-8"
#define HTTP_MAX_CORS_DOMAINS 64

enum { REQ_NEW = 0, REQ_BODY, REQ_DISPATCHED, REQ_ANSWERED };

typedef struct http_req {
    struct http_req *next; /* handler queue */
    tsd_http_t *srv;
    struct MHD_Connection *conn;
    const char *method; /* libmicrohttpd's, valid for the request */
    const char *url;    /* percent-decoded path, libmicrohttpd's */
    char *query;        /* raw query string without '?', malloc'd */
    uint8_t *body;      /* malloc'd, NUL-terminated once complete */
    size_t body_len, body_cap;
    int state;
    int in_flight;        /* counted in srv->in_flight */
    int too_large;        /* body passed the limit: discard the rest, answer 413 */
    uint64_t discarded;   /* body bytes dropped since */
    http_response_t resp; /* an answer waiting for the log (http_defer) */
} http_req_t;

struct tsd_http {
    tsd_ctx_t *tsd;
    struct MHD_Daemon *mhd;
    uint64_t max_body;
    int cors_any;                      /* cors_domains = "*" */
    int n_cors;                        /* 0: CORS off */
    char *cors[HTTP_MAX_CORS_DOMAINS]; /* upper-cased, as OpenTSDB compares */
    const char *cors_headers;

    atomic_int stopping;  /* refuse new requests */
    atomic_int in_flight; /* dispatched and not yet completed */

    pthread_mutex_t mu; /* guards the queue */
    pthread_cond_t cv;
    http_req_t *q_head, *q_tail;
    int q_stop;
    int n_handlers;
    pthread_t *handlers;

    /* Answers waiting for the write-ahead log (see http_defer). */
    pthread_mutex_t w_mu;
    pthread_cond_t w_cv;
    http_req_t *w_head, *w_tail;
    int w_stop;
    int w_started;
    pthread_t w_thread;
};

/* What a thread that runs requests (handler or polling thread) keeps from
 * one request to the next; freed when the thread exits. */
typedef struct {
    z_stream zs; /* valid once z_ready */
    int z_ready;
} http_worker_t;

static pthread_key_t http_worker_key;
static pthread_once_t http_worker_once = PTHREAD_ONCE_INIT;

static void http_worker_free(void *p)
{
    http_worker_t *hw = p;
    if (hw->z_ready) inflateEnd(&hw->zs);
    free(hw);
}

static void http_worker_key_init(void)
{
    if (pthread_key_create(&http_worker_key, http_worker_free)) abort();
}

static http_worker_t *http_worker(void)
{
    pthread_once(&http_worker_once, http_worker_key_init);
    http_worker_t *hw = pthread_getspecific(http_worker_key);
    if (!hw) {
        hw = xcalloc(1, sizeof *hw);
        if (pthread_setspecific(http_worker_key, hw)) abort();
    }
    return hw;
}

/* ---- http.h: headers and query parameters ----------------------------------------------- */

static const char *http_mhd_header(void *conn, const char *name)
{
    http_req_t *r = conn;
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_header(const http_request_t *req, const char *name)
{
    if (!req->header_fn) return NULL;
    return req->header_fn(req->conn, name);
}

void http_remote(const http_request_t *req, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (req->header_fn != http_mhd_header) return;
    const http_req_t *r = req->conn;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr) return;
    char host[INET6_ADDRSTRLEN] = "";
    if (ci->client_addr->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ci->client_addr;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        snprintf(buf, cap, "%s:%u", host, (unsigned)ntohs(a->sin_port));
    } else if (ci->client_addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ci->client_addr;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        snprintf(buf, cap, "[%s]:%u", host, (unsigned)ntohs(a->sin6_port));
    }
}

typedef struct {
    void (*cb)(void *ctx, const char *name, const char *value);
    void *ctx;
} http_each_t;

static enum MHD_Result http_each_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                        const char *value)
{
    (void)kind;
    http_each_t *e = cls;
    e->cb(e->ctx, key, value ? value : "");
    return MHD_YES;
}

void http_header_each(const http_request_t *req,
                      void (*cb)(void *ctx, const char *name, const char *value), void *ctx)
{
    if (req->header_fn != http_mhd_header) return;
    const http_req_t *r = req->conn;
    http_each_t e = {cb, ctx};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, http_each_header, &e);
}

static int http_hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %XX and '+' of s[0..n) into out (room for n+1); a '%' not
 * followed by two hex digits is kept as is. Returns the decoded length. */
static size_t http_unescape(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '+') {
            out[o++] = ' ';
        } else if (s[i] == '%' && i + 2 < n && (hi = http_hexval((unsigned char)s[i + 1])) >= 0 &&
                   (lo = http_hexval((unsigned char)s[i + 2])) >= 0) {
            out[o++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return o;
}

/* Calls cb(ctx, value, len) for each occurrence of name in the query. */
static int http_param_walk(const http_request_t *req, const char *name,
                           void (*cb)(void *ctx, const char *value, size_t len), void *ctx)
{
    const char *q = req->query ? req->query : "";
    size_t name_len = strlen(name);
    int count = 0;
    char stackbuf[512];
    while (*q) {
        const char *amp = strchr(q, '&');
        size_t seg = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', seg);
        size_t klen = eq ? (size_t)(eq - q) : seg;
        if (klen > 0) {
            char *buf = seg + 1 <= sizeof stackbuf ? stackbuf : xmalloc(seg + 1);
            size_t dk = http_unescape(q, klen, buf);
            if (dk == name_len && memcmp(buf, name, name_len) == 0) {
                count++;
                size_t dv = eq ? http_unescape(eq + 1, seg - klen - 1, buf) : 0;
                buf[dv] = '\0';
                cb(ctx, buf, dv);
            }
            if (buf != stackbuf) free(buf);
        }
        if (!amp) break;
        q = amp + 1;
    }
    return count;
}

typedef struct {
    char *buf;
    size_t cap;
} http_param_last_t;

static void http_param_keep(void *ctx, const char *value, size_t len)
{
    http_param_last_t *p = ctx;
    if (p->cap == 0) return;
    size_t n = len < p->cap - 1 ? len : p->cap - 1;
    memcpy(p->buf, value, n);
    p->buf[n] = '\0';
}

int http_param(const http_request_t *req, const char *name, char *buf, size_t cap)
{
    http_param_last_t p = {buf, cap};
    if (cap > 0) buf[0] = '\0';
    return http_param_walk(req, name, http_param_keep, &p) > 0;
}

int http_param_each(const http_request_t *req, const char *name,
                    void (*cb)(void *ctx, const char *value, size_t len), void *ctx)
{
    return http_param_walk(req, name, cb, ctx);
}

/* ---- request bodies ---------------------------------------------------------------------- */

/* Inflates r->body per Content-Encoding. Returns 0, or fills resp with the
 * error (400 broken data, 413 too large, 415 unknown encoding, 503 memory). */
static int http_decode_body(tsd_http_t *srv, http_worker_t *hw, http_req_t *r, const char *enc,
                            http_response_t *resp)
{
    if (!enc || !*enc || !strcasecmp(enc, "identity")) return 0;
    int gzip = !strcasecmp(enc, "gzip") || !strcasecmp(enc, "x-gzip");
    int deflate = !strcasecmp(enc, "deflate");
    if (!gzip && !deflate) {
        char d[160];
        snprintf(d, sizeof d, "Content-Encoding '%.100s' is not supported", enc);
        http_error(resp, 415, "Unsupported content encoding", d);
        return -1;
    }
    /* 15+32: zlib or gzip header, detected. 'deflate' bodies without the
     * zlib header (a common mistake) are retried as raw deflate (-15). The
     * handler thread's inflater is reset, not rebuilt, per request. */
    for (int attempt = 0; attempt < 2; attempt++) {
        int wbits = attempt == 0 ? 15 + 32 : -15;
        z_stream *zp = &hw->zs;
        if (!hw->z_ready) {
            memset(zp, 0, sizeof *zp);
            if (inflateInit2(zp, wbits) != Z_OK) {
                http_error(resp, 503, "Out of memory", NULL);
                return -1;
            }
            hw->z_ready = 1;
        } else if (inflateReset2(zp, wbits) != Z_OK) {
            http_error(resp, 503, "Out of memory", NULL);
            return -1;
        }
        size_t cap = r->body_len * 4 + 1024;
        if (cap > srv->max_body + 1) cap = srv->max_body + 1;
        uint8_t *out = malloc(cap + 1);
        size_t len = 0;
        int zrc = Z_OK;
        zp->next_in = r->body;
        zp->avail_in = (uInt)r->body_len;
        while (out) {
            zp->next_out = out + len;
            zp->avail_out = (uInt)(cap - len);
            zrc = inflate(zp, Z_NO_FLUSH);
            len = cap - zp->avail_out;
            if (zrc == Z_STREAM_END) {
                if (zp->avail_in == 0) break;
                if (inflateReset(zp) != Z_OK) break; /* another gzip member follows */
                continue;
            }
            if (zrc != Z_OK && zrc != Z_BUF_ERROR) break;
            if (zp->avail_out > 0) { /* input exhausted before the end of the stream */
                zrc = Z_DATA_ERROR;
                zp->msg = (char *)"unexpected end of compressed data";
                break;
            }
            if (len > srv->max_body) break;
            size_t ncap = cap * 2 > srv->max_body + 1 ? srv->max_body + 1 : cap * 2;
            uint8_t *n = realloc(out, ncap + 1);
            if (!n) {
                free(out);
                out = NULL;
                break;
            }
            out = n;
            cap = ncap;
        }
        char zmsg[128];
        snprintf(zmsg, sizeof zmsg, "%s", zp->msg ? zp->msg : "corrupt compressed data");
        if (!out) {
            http_error(resp, 503, "Out of memory", "while decompressing the request body");
            return -1;
        }
        if (len > srv->max_body) {
            free(out);
            char d[128];
            snprintf(d, sizeof d, "The decompressed body exceeds %llu bytes",
                     (unsigned long long)srv->max_body);
            http_error(resp, 413, "Request body too large", d);
            return -1;
        }
        if (zrc == Z_STREAM_END) {
            out[len] = '\0';
            free(r->body);
            r->body = out;
            r->body_len = len;
            r->body_cap = cap + 1;
            return 0;
        }
        free(out);
        if (attempt == 0 && deflate && zrc == Z_DATA_ERROR && r->body_len > 0) continue;
        http_error(resp, 400, "Unable to decompress the request body", zmsg);
        return -1;
    }
    return -1;
}

/* ---- CORS -------------------------------------------------------------------------------- */

/* OpenTSDB's rules (docs/http-api.md, CORS). Returns 1 if resp is final (preflight
 * or refusal), 0 to go on to the API; may add the allow headers to resp. */
static int http_cors(tsd_http_t *srv, const http_request_t *req, http_response_t *resp)
{
    const char *origin = http_header(req, "Origin");
    int options = !strcmp(req->method, "OPTIONS");
    int have_origin = origin && *origin;
    if (!options && !(srv->n_cors > 0 && have_origin)) return 0;
    if (srv->n_cors == 0 || !have_origin) {
        char d[160];
        snprintf(d, sizeof d, "The HTTP method [%.32s] is not permitted", req->method);
        http_error(resp, 405, "Method not allowed", d);
        return 1;
    }
    int ok = srv->cors_any;
    for (int i = 0; !ok && i < srv->n_cors; i++)
        ok = !strcasecmp(srv->cors[i], origin);
    if (!ok) {
        /* OpenTSDB answers 200 (browsers enforce CORS by the missing
         * allow header) with the refusal in the body. */
        char d[400];
        snprintf(d, sizeof d, "The domain [%.300s] is not permitted access", origin);
        http_error(resp, 200, "CORS domain not allowed", d);
        return 1;
    }
    http_response_add_header(resp, "Access-Control-Allow-Origin", origin);
    http_response_add_header(resp, "Access-Control-Allow-Methods", "GET, POST, PUT, DELETE");
    http_response_add_header(resp, "Access-Control-Allow-Headers", srv->cors_headers);
    if (options) {
        resp->status = 200;
        oct_strbuf_reset(&resp->body);
        return 1;
    }
    return 0;
}

static int http_parse_cors(tsd_http_t *srv, const char *list, oct_errbuf_t *eb)
{
    if (!list) return 0;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *s = p;
        while (n > 0 && isspace((unsigned char)*s))
            s++, n--;
        while (n > 0 && isspace((unsigned char)s[n - 1]))
            n--;
        if (n > 0) {
            if (srv->n_cors == HTTP_MAX_CORS_DOMAINS)
                return oct_err(eb, OCT_ECONFIG,
                               "tsd.http.request.cors_domains: more than %d domains",
                               HTTP_MAX_CORS_DOMAINS);
            char *d = xmalloc(n + 1);
            for (size_t i = 0; i < n; i++)
                d[i] = (char)toupper((unsigned char)s[i]);
            d[n] = '\0';
            if (!strcmp(d, "*")) srv->cors_any = 1;
            srv->cors[srv->n_cors++] = d;
        }
        if (!comma) break;
        p = comma + 1;
    }
    if (srv->cors_any && srv->n_cors > 1)
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.http.request.cors_domains: '*' cannot be combined with other "
                       "domains ('%s')",
                       list);
    return 0;
}

/* ---- responses --------------------------------------------------------------------------- */

/* Queues resp on r's connection (from the polling thread in the access
 * handler, or from a handler thread while the connection is suspended). */
static enum MHD_Result http_send(http_req_t *r, http_response_t *resp)
{
    struct MHD_Response *mr;
    int has_body = resp->body.len > 0 && resp->status != 204 && resp->status != 304;
    if (has_body) {
        mr = MHD_create_response_from_buffer(resp->body.len, resp->body.ptr, MHD_RESPMEM_MUST_FREE);
        if (mr) { /* libmicrohttpd frees the bytes now */
            resp->body.ptr = NULL;
            resp->body.len = resp->body.cap = 0;
        }
    } else {
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!mr) return MHD_NO;
    if (has_body)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE,
                                resp->content_type ? resp->content_type : HTTP_JSON_TYPE);
    for (int i = 0; i < resp->n_extra_headers; i++)
        MHD_add_response_header(mr, resp->extra_header_names[i], resp->extra_header_values[i]);
    if (resp->close_after) MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ok = MHD_queue_response(r->conn, (unsigned)resp->status, mr);
    MHD_destroy_response(mr);
    return ok;
}

/* An answer given by the transport itself, from the polling thread. */
static enum MHD_Result http_reply_now(http_req_t *r, int status, const char *msg,
                                      const char *details, int close_after)
{
    http_response_t resp;
    http_response_init(&resp);
    http_error(&resp, status, msg, details);
    resp.close_after = close_after;
    r->state = REQ_ANSWERED;
    enum MHD_Result ok = http_send(r, &resp);
    http_response_free(&resp);
    return ok;
}

static enum MHD_Result http_too_large(tsd_http_t *srv, http_req_t *r, int close_after)
{
    char d[128];
    snprintf(d, sizeof d, "The request body exceeds tsd.http.request.max_body_size (%llu bytes)",
             (unsigned long long)srv->max_body);
    return http_reply_now(r, 413, "Request body too large", d, close_after);
}

/* ---- handler threads --------------------------------------------------------------------- */

/* Counts the request, decodes its body, applies CORS and runs the API. */
static void http_process(tsd_http_t *srv, http_req_t *r, http_response_t *resp)
{
    http_request_t req = {
        .method = r->method,
        .path = r->url,
        .query = r->query ? r->query : "",
        .conn = r,
        .header_fn = http_mhd_header,
    };
    tsd_count(srv->tsd, TSD_CTR_RPC_HTTP, 1);
    int64_t t0 = oct_clock_mono_ns();
    if (http_decode_body(srv, http_worker(), r, http_header(&req, "Content-Encoding"), resp) == 0) {
        req.body = r->body ? r->body : (const uint8_t *)"";
        req.body_len = r->body_len;
        if (!http_cors(srv, &req, resp)) api_handle(srv->tsd, &req, resp);
    }
    /* tsd.http.latency_*pct type=all: the time to the answer (docs/stats.md) */
    stats_latency_add(&srv->tsd->lat_http, (uint64_t)(oct_clock_mono_ns() - t0) / 1000);
    if (resp->status >= 500) tsd_count(srv->tsd, TSD_CTR_RPC_EXCEPTIONS, 1);
}

/* The log failed under an answer that waited for it (the headers, CORS
 * included, stay). */
static void http_durable_failed(http_response_t *resp, const oct_errbuf_t *eb)
{
    resp->wait_durable = 0;
    http_error(resp, 500, "Unable to write the data points to the log", eb->msg);
}

/* Blocks until resp may be sent. */
static void http_wait_durable(tsd_http_t *srv, http_response_t *resp)
{
    oct_errbuf_t eb;
    if (resp->wait_durable && tsdb_wait_durable(srv->tsd->db, resp->durable_seq, 0, -1, &eb))
        http_durable_failed(resp, &eb);
    resp->wait_durable = 0;
}

static void http_handle(tsd_http_t *srv, http_req_t *r)
{
    http_response_t resp;
    http_response_init(&resp);
    http_process(srv, r, &resp);
    http_wait_durable(srv, &resp);
    r->state = REQ_ANSWERED;
    if (http_send(r, &resp) != MHD_YES)
        oct_log_warn("http", "could not queue the response to %s %s", r->method, r->url);
    http_response_free(&resp);
    /* Last touch: once resumed, the polling thread sends the response and
     * may free r at any moment. */
    MHD_resume_connection(r->conn);
}

static void *http_handler_main(void *arg)
{
    tsd_http_t *srv = arg;
    pthread_setname_np(pthread_self(), "tsd-http");
    pthread_mutex_lock(&srv->mu);
    for (;;) {
        while (!srv->q_head && !srv->q_stop)
            pthread_cond_wait(&srv->cv, &srv->mu);
        http_req_t *r = srv->q_head;
        if (!r) break; /* stopping and nothing left */
        srv->q_head = r->next;
        if (!srv->q_head) srv->q_tail = NULL;
        pthread_mutex_unlock(&srv->mu);
        http_handle(srv, r);
        pthread_mutex_lock(&srv->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    return NULL;
}

static void http_dispatch(tsd_http_t *srv, http_req_t *r)
{
    r->state = REQ_DISPATCHED;
    r->in_flight = 1;
    atomic_fetch_add(&srv->in_flight, 1);
    MHD_suspend_connection(r->conn);
    r->next = NULL;
    pthread_mutex_lock(&srv->mu);
    if (srv->q_tail)
        srv->q_tail->next = r;
    else
        srv->q_head = r;
    srv->q_tail = r;
    /* Signalled after unlocking: a handler woken while we still hold the
     * lock would only go back to sleep on it. */
    pthread_mutex_unlock(&srv->mu);
    pthread_cond_signal(&srv->cv);
}

/* ---- puts answered by the polling thread ------------------------------------------------ */

/* A small POST /api/put without ?sync is run by the polling thread itself:
 * parsing and storing 50..500 points is short and never waits on a lock
 * held for long, and the hand-off to a handler thread and back cost more
 * than the work. Its answer waits only for the log's write(2), which the
 * polling thread awaits for at most HTTP_INLINE_WAIT_MS (usually enough:
 * the log thread writes at once for a waiter); past that the connection is
 * suspended and the answer parked with the waiter thread, which waits once
 * for the highest log position of everything parked and then sends and
 * resumes them all. So a stalled log holds a polling thread for at most
 * that long per request. Larger bodies (a gzip body may inflate up to the
 * limit), ?sync and everything else go to the handler threads. */
#define HTTP_INLINE_MAX_BODY    (256 * 1024)
#define HTTP_INLINE_MAX_ENCODED (64 * 1024)
#define HTTP_INLINE_WAIT_MS     1

static int http_inline_ok(tsd_http_t *srv, http_req_t *r)
{
    if (strcmp(r->method, "POST") || strcasecmp(r->url, "/api/put")) return 0;
    if (r->body_len > HTTP_INLINE_MAX_BODY) return 0;
    const char *enc = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Encoding");
    if (enc && *enc && strcasecmp(enc, "identity") && r->body_len > HTTP_INLINE_MAX_ENCODED)
        return 0;
    http_request_t req = {.query = r->query ? r->query : ""};
    char b[2];
    (void)srv;
    return !http_param(&req, "sync", b, sizeof b);
}

/* Sends r->resp and resumes the connection (waiter thread). */
static void http_finish_parked(http_req_t *r)
{
    r->state = REQ_ANSWERED;
    if (http_send(r, &r->resp) != MHD_YES)
        oct_log_warn("http", "could not queue the response to %s %s", r->method, r->url);
    http_response_free(&r->resp);
    MHD_resume_connection(r->conn); /* last touch, as in http_handle */
}

static void *http_waiter_main(void *arg)
{
    tsd_http_t *srv = arg;
    pthread_setname_np(pthread_self(), "tsd-http-wal");
    pthread_mutex_lock(&srv->w_mu);
    for (;;) {
        while (!srv->w_head && !srv->w_stop)
            pthread_cond_wait(&srv->w_cv, &srv->w_mu);
        http_req_t *list = srv->w_head;
        if (!list) break;
        srv->w_head = srv->w_tail = NULL;
        pthread_mutex_unlock(&srv->w_mu);
        /* The log is written in order: its highest position covers all. */
        uint64_t max = 0;
        for (http_req_t *r = list; r; r = r->next)
            if (r->resp.durable_seq > max) max = r->resp.durable_seq;
        oct_errbuf_t eb;
        int rc = tsdb_wait_durable(srv->tsd->db, max, 0, -1, &eb);
        while (list) {
            http_req_t *r = list;
            list = r->next;
            oct_errbuf_t e2;
            if (rc && tsdb_wait_durable(srv->tsd->db, r->resp.durable_seq, 0, 0, &e2))
                http_durable_failed(&r->resp, &e2);
            r->resp.wait_durable = 0;
            http_finish_parked(r);
        }
        pthread_mutex_lock(&srv->w_mu);
    }
    pthread_mutex_unlock(&srv->w_mu);
    return NULL;
}

/* Parks r (its answer in r->resp) until the log has written it. */
static void http_defer(tsd_http_t *srv, http_req_t *r)
{
    r->state = REQ_DISPATCHED;
    r->in_flight = 1;
    atomic_fetch_add(&srv->in_flight, 1);
    MHD_suspend_connection(r->conn);
    r->next = NULL;
    pthread_mutex_lock(&srv->w_mu);
    if (srv->w_stop) { /* shutting down: no waiter any more */
        pthread_mutex_unlock(&srv->w_mu);
        http_wait_durable(srv, &r->resp);
        http_finish_parked(r);
        return;
    }
    if (srv->w_tail)
        srv->w_tail->next = r;
    else
        srv->w_head = r;
    srv->w_tail = r;
    pthread_mutex_unlock(&srv->w_mu);
    pthread_cond_signal(&srv->w_cv);
}

static enum MHD_Result http_run_inline(tsd_http_t *srv, http_req_t *r)
{
    http_response_t resp;
    http_response_init(&resp);
    http_process(srv, r, &resp);
    if (resp.wait_durable) {
        oct_errbuf_t eb;
        int rc = tsdb_wait_durable(srv->tsd->db, resp.durable_seq, 0, HTTP_INLINE_WAIT_MS, &eb);
        if (rc == OCT_EAGAIN) {
            r->resp = resp; /* moved: r owns the buffers now */
            http_defer(srv, r);
            return MHD_YES;
        }
        if (rc) http_durable_failed(&resp, &eb);
        resp.wait_durable = 0;
    }
    r->state = REQ_ANSWERED;
    enum MHD_Result ok = http_send(r, &resp);
    http_response_free(&resp);
    return ok;
}

/* ---- libmicrohttpd callbacks ------------------------------------------------------------- */

static http_req_t *http_req_new(tsd_http_t *srv, const char *uri)
{
    http_req_t *r = xcalloc(1, sizeof *r);
    r->srv = srv;
    const char *q = uri ? strchr(uri, '?') : NULL;
    r->query = xstrdup(q ? q + 1 : "");
    return r;
}

/* A connection's own state: the body buffer of its last request, kept for
 * the next one (a keep-alive client sends bodies of similar size, and a
 * fresh malloc of each made the allocator grow and trim its heap by
 * syscalls). Touched only by the connection's polling thread. */
typedef struct {
    uint8_t *buf;
    size_t cap;
} http_conn_t;

#define HTTP_KEEP_BODY_MAX (1u << 20)

static http_conn_t *http_conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* A body buffer of at least need bytes: the connection's kept one, or new. */
static uint8_t *http_body_buf(struct MHD_Connection *conn, size_t need, size_t *cap)
{
    http_conn_t *hc = http_conn_of(conn);
    if (hc && hc->buf && hc->cap >= need) {
        uint8_t *b = hc->buf;
        *cap = hc->cap;
        hc->buf = NULL;
        hc->cap = 0;
        return b;
    }
    *cap = need;
    return malloc(need);
}

/* The connection whose request line this polling thread saw last, until
 * that request completes or the connection closes: the one libmicrohttpd's
 * log message about a bad Content-Length is about (see http_refuse_length). */
static _Thread_local struct MHD_Connection *http_tl_conn;

static void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
    http_tl_conn = conn;
    return http_req_new(cls, uri);
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    tsd_http_t *srv = cls;
    http_req_t *r = *con_cls;
    if (http_tl_conn == conn) http_tl_conn = NULL;
    if (!r) return;
    if (r->in_flight) atomic_fetch_sub(&srv->in_flight, 1);
    free(r->query);
    http_conn_t *hc = r->body && r->body_cap <= HTTP_KEEP_BODY_MAX ? http_conn_of(conn) : NULL;
    if (hc && (!hc->buf || hc->cap < r->body_cap)) {
        free(hc->buf);
        hc->buf = r->body;
        hc->cap = r->body_cap;
    } else {
        free(r->body);
    }
    free(r);
    *con_cls = NULL;
}

static void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                             enum MHD_ConnectionNotificationCode toe)
{
    tsd_http_t *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = calloc(1, sizeof(http_conn_t)); /* NULL: no reuse, no harm */
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (http_tl_conn == conn) http_tl_conn = NULL;
        http_conn_t *hc = *socket_context;
        if (hc) free(hc->buf);
        free(hc);
        *socket_context = NULL;
        atomic_fetch_sub_explicit(&srv->tsd->counters[TSD_CTR_CONN_OPEN], 1, memory_order_relaxed);
    }
}

static int http_length_status(const char *v, const char *ve);
static void http_refuse_length(int fd, int bad);

/* A later request's bad Content-Length (see http_refuse_length): answered
 * here, once, when our own parse of the header agrees. */
static void http_mhd_log_length(void)
{
    struct MHD_Connection *conn = http_tl_conn;
    const char *v =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    int bad = v ? http_length_status(v, v + strlen(v)) : 0;
    const union MHD_ConnectionInfo *ci =
        bad ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;
    if (!ci) return;
    http_tl_conn = NULL;
    http_refuse_length(ci->connect_fd, bad);
    shutdown(ci->connect_fd, SHUT_WR);
}

__attribute__((format(printf, 2, 0))) static void http_mhd_log(void *cls, const char *fmt,
                                                               va_list ap)
{
    (void)cls;
    if (http_tl_conn && strstr(fmt, "Content-Length")) http_mhd_log_length();
    oct_vlog(OCT_LOG_DEBUG, "http", fmt, ap);
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
    (void)version;
    tsd_http_t *srv = cls;
    http_req_t *r = *con_cls;
    if (!r) *con_cls = r = http_req_new(srv, NULL); /* no URI callback: no query */

    switch (r->state) {
    case REQ_NEW: {
        r->conn = conn;
        r->method = method;
        r->url = url;
        r->state = REQ_BODY;
        if (atomic_load(&srv->stopping))
            return http_reply_now(r, 503, "The TSD is shutting down", NULL, 1);
        /* Refuse a declared oversize body before the client sends it (and
         * before libmicrohttpd answers 100-continue). */
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            unsigned long long n = strtoull(cl, NULL, 10);
            if (n > srv->max_body) return http_too_large(srv, r, 1);
            if (n > 0) {
                r->body = http_body_buf(conn, (size_t)n + 1, &r->body_cap);
                if (!r->body) return http_reply_now(r, 503, "Out of memory", NULL, 1);
            }
        }
        return MHD_YES;
    }
    case REQ_BODY:
        if (*upload_data_size > 0) {
            size_t n = *upload_data_size;
            *upload_data_size = 0;
            if (r->too_large || r->body_len + n > srv->max_body) {
                /* libmicrohttpd 0.9.75 takes a response only before or
                 * after the body, so drop the rest and answer at the end;
                 * a client that goes on far beyond the limit is cut off. */
                r->too_large = 1;
                r->discarded += n;
                return r->discarded > srv->max_body ? MHD_NO : MHD_YES;
            }
            if (r->body_len + n + 1 > r->body_cap) {
                size_t cap = r->body_cap ? r->body_cap : 4096;
                while (cap < r->body_len + n + 1)
                    cap *= 2;
                if (cap > srv->max_body + 1) cap = srv->max_body + 1;
                uint8_t *b = realloc(r->body, cap);
                if (!b) return http_reply_now(r, 503, "Out of memory", NULL, 1);
                r->body = b;
                r->body_cap = cap;
            }
            memcpy(r->body + r->body_len, upload_data, n);
            r->body_len += n;
            return MHD_YES;
        }
        if (r->too_large) return http_too_large(srv, r, 0); /* body read: keep-alive */
        if (r->body) r->body[r->body_len] = '\0';
        if (http_inline_ok(srv, r)) return http_run_inline(srv, r);
        http_dispatch(srv, r);
        return MHD_YES;
    default:
        /* Answered or being handled: swallow anything further. */
        *upload_data_size = 0;
        return MHD_YES;
    }
}

/* ---- start / stop ------------------------------------------------------------------------ */

static void http_free(tsd_http_t *srv)
{
    for (int i = 0; i < srv->n_cors; i++)
        free(srv->cors[i]);
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cv);
    pthread_mutex_destroy(&srv->w_mu);
    pthread_cond_destroy(&srv->w_cv);
    free(srv->handlers);
    free(srv);
}

static void http_stop_handlers(tsd_http_t *srv)
{
    pthread_mutex_lock(&srv->mu);
    srv->q_stop = 1;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < srv->n_handlers; i++)
        pthread_join(srv->handlers[i], NULL);
    srv->n_handlers = 0;
    pthread_mutex_lock(&srv->w_mu);
    srv->w_stop = 1; /* the waiter answers what is parked, then exits */
    pthread_cond_broadcast(&srv->w_cv);
    pthread_mutex_unlock(&srv->w_mu);
    if (srv->w_started) pthread_join(srv->w_thread, NULL);
    srv->w_started = 0;
}

int http_server_start(tsd_ctx_t *tsd, int n_threads, tsd_http_t **out, oct_errbuf_t *eb)
{
    tsd_http_t *srv = xcalloc(1, sizeof *srv);
    srv->tsd = tsd;
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cv, NULL);
    pthread_mutex_init(&srv->w_mu, NULL);
    pthread_cond_init(&srv->w_cv, NULL);
    int64_t max_body = oct_config_get_int(tsd->cfg, "tsd.http.request.max_body_size");
    srv->max_body = max_body > 0 ? (uint64_t)max_body : 67108864u;
    /* zlib counts in 32-bit uInt: keep every buffer below 2 GiB. */
    if (srv->max_body > (1ull << 31) - 2) srv->max_body = (1ull << 31) - 2;
    const char *ch = oct_config_get(tsd->cfg, "tsd.http.request.cors_headers");
    srv->cors_headers = ch ? ch : "";
    int rc = http_parse_cors(srv, oct_config_get(tsd->cfg, "tsd.http.request.cors_domains"), eb);
    if (rc) {
        http_free(srv);
        return rc;
    }

    srv->handlers = xcalloc((size_t)n_threads, sizeof *srv->handlers);
    for (int i = 0; i < n_threads; i++) {
        int e = pthread_create(&srv->handlers[i], NULL, http_handler_main, srv);
        if (e) {
            http_stop_handlers(srv);
            http_free(srv);
            return oct_err(eb, -e, "cannot start HTTP handler threads: %s", strerror(e));
        }
        srv->n_handlers = i + 1;
    }
    int we = pthread_create(&srv->w_thread, NULL, http_waiter_main, srv);
    if (we) {
        http_stop_handlers(srv);
        http_free(srv);
        return oct_err(eb, -we, "cannot start the HTTP log waiter thread: %s", strerror(we));
    }
    srv->w_started = 1;

    /* libmicrohttpd's default limit is FD_SETSIZE even with epoll, split
     * across its threads: far too few. tsd.core.connections.limit is
     * enforced by the acceptor, so only the descriptor limit applies. */
    struct rlimit rl;
    unsigned limit = 1u << 20;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit)
        limit = (unsigned)rl.rlim_cur;
    int64_t timeout_s = oct_config_get_int(tsd->cfg, "tsd.core.socket.timeout");
    unsigned flags = MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL_INTERNAL_THREAD |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    srv->mhd = MHD_start_daemon(
        flags, 0, NULL, NULL, http_access, srv, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, srv,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(n_threads > 1 ? n_threads : 1),
        MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(timeout_s > 0 ? timeout_s : 0), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(64 * 1024), MHD_OPTION_URI_LOG_CALLBACK, http_uri_log, srv,
        MHD_OPTION_NOTIFY_COMPLETED, http_completed, srv, MHD_OPTION_NOTIFY_CONNECTION,
        http_conn_notify, srv, MHD_OPTION_END);
    if (!srv->mhd) {
        http_stop_handlers(srv);
        http_free(srv);
        return oct_err(eb, OCT_EIO, "cannot start the HTTP server (libmicrohttpd)");
    }
    *out = srv;
    return 0;
}

/* libmicrohttpd 0.9.75 answers a Content-Length that is not a plain decimal
 * number (or overflows 64 bits) by itself, before any callback of ours, and
 * its state machine then builds the response headers a second time
 * (parse_connection_headers queues the error and sets HEADERS_SENDING; the
 * caller overwrites that with HEADERS_PROCESSED, which leads to
 * FOOTERS_RECEIVED and build_header_response again): the client gets the
 * status line and headers twice. Two guards give the client one answer in
 * OpenTSDB's shape and close the connection instead:
 *  - the first request of a connection is checked at hand-over, on the bytes
 *    already received (MSG_PEEK), and answered and closed before
 *    libmicrohttpd sees it (http_server_add);
 *  - a later request on a kept-alive connection is read by libmicrohttpd
 *    itself, so the hook is its log message about the header, which it
 *    writes (on the polling thread of that connection) just before queuing
 *    its error: the connection whose request line this thread saw last
 *    (http_tl_conn) is checked with our own parse of its Content-Length,
 *    answered, and its sending side shut, so libmicrohttpd's own answer
 *    fails to send and it closes the connection (http_mhd_log). */

/* 400 for a Content-Length value that is not a decimal number, 413 for one
 * over 64 bits, 0 for a good one. [v, ve): the value, spaces included. */
static int http_length_status(const char *v, const char *ve)
{
    while (v < ve && (*v == ' ' || *v == '\t'))
        v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
        ve--;
    if (v == ve) return 400;
    unsigned long long x = 0;
    for (const char *q = v; q < ve; q++) {
        if (*q < '0' || *q > '9') return 400;
        unsigned d = (unsigned)(*q - '0');
        if (x > (ULLONG_MAX - d) / 10) return 413;
        x = x * 10 + d;
    }
    return 0;
}

/* The header block at p (n bytes received so far): 400, 413, or 0 (fine,
 * or the header block is not all here yet: libmicrohttpd judges it). */
static int http_precheck_length(const char *p, size_t n)
{
    const char *end = NULL;
    for (size_t i = 0; i + 1 < n && !end; i++)
        if (p[i] == '\n' &&
            (p[i + 1] == '\n' || (p[i + 1] == '\r' && i + 2 < n && p[i + 2] == '\n')))
            end = p + i + 1;
    if (!end) return 0;
    const char *l = memchr(p, '\n', (size_t)(end - p));
    while (l && l < end) {
        const char *line = l + 1;
        const char *nl = memchr(line, '\n', (size_t)(end - line) + 1);
        if (!nl) break;
        size_t ll = (size_t)(nl - line);
        if (ll && line[ll - 1] == '\r') ll--;
        static const char name[] = "content-length:";
        if (ll >= sizeof name - 1 && !strncasecmp(line, name, sizeof name - 1)) {
            int bad = http_length_status(line + sizeof name - 1, line + ll);
            if (bad) return bad;
        }
        l = nl;
    }
    return 0;
}

/* Sends OpenTSDB's error object for a bad Content-Length (bad: 400 or 413)
 * with Connection: close (best effort: the socket is non-blocking and the
 * answer small). */
static void http_refuse_length(int fd, int bad)
{
    http_response_t resp;
    http_response_init(&resp);
    http_error(&resp, bad, bad == 413 ? "Request body too large" : "Bad Request",
               bad == 413 ? "The Content-Length header is too large"
                          : "The Content-Length header is not a number");
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "HTTP/1.1 %d %s\r\nContent-Type: " HTTP_JSON_TYPE
                      "\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                      bad, bad == 413 ? "Payload Too Large" : "Bad Request", resp.body.len);
    struct iovec iov[2] = {{head, (size_t)hl}, {resp.body.ptr, resp.body.len}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    http_response_free(&resp);
}

int http_server_add(tsd_http_t *h, int fd, const struct sockaddr *addr, socklen_t len)
{
    char peek[8192];
    ssize_t got = recv(fd, peek, sizeof peek, MSG_PEEK | MSG_DONTWAIT);
    int bad = got > 0 ? http_precheck_length(peek, (size_t)got) : 0;
    if (bad) {
        http_refuse_length(fd, bad);
        /* The unread request would turn close() into a reset that can
         * overtake the answer: say we are done, drain briefly, then close. */
        shutdown(fd, SHUT_WR);
        for (int i = 0; i < 4 && recv(fd, peek, sizeof peek, MSG_DONTWAIT) > 0; i++)
            ;
        close(fd);
        atomic_fetch_sub_explicit(&h->tsd->counters[TSD_CTR_CONN_OPEN], 1, memory_order_relaxed);
        return 0;
    }
    if (MHD_add_connection(h->mhd, fd, addr, len) == MHD_YES) return 0;
    oct_log_debug("http", "libmicrohttpd refused a connection: %s", strerror(errno));
    atomic_fetch_sub_explicit(&h->tsd->counters[TSD_CTR_CONN_OPEN], 1, memory_order_relaxed);
    return -1;
}

void http_server_stop(tsd_http_t *h, int grace_ms)
{
    if (!h) return;
    atomic_store(&h->stopping, 1);
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int waited = 0; waited < grace_ms && atomic_load(&h->in_flight) > 0; waited += 10)
        nanosleep(&ts, NULL);
    /* Handlers finish what is queued before they exit, so no connection is
     * left suspended when libmicrohttpd stops. */
    http_stop_handlers(h);
    MHD_stop_daemon(h->mhd);
    http_free(h);
}
