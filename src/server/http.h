/* http.h -- one HTTP request and its response, as the API handlers see
 * them. The transport (libmicrohttpd, http_server.c) has already assembled
 * the body (chunked or not), answered `Expect: 100-continue`, enforced
 * tsd.http.request.max_body_size (413) and undone Content-Encoding: gzip or
 * deflate. The handlers (api_*.c) fill the response; the transport adds CORS
 * headers, Content-Length and keep-alive. */
#ifndef OCT_SERVER_HTTP_H
#define OCT_SERVER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "server/tsd.h"

typedef struct http_request {
    const char *method;  /* "GET", "POST", "PUT", "DELETE", "OPTIONS", ... */
    const char *path;    /* percent-decoded path without the query, e.g. "/api/put" */
    const char *query;   /* raw query string without '?', "" if none */
    const uint8_t *body; /* decoded body, NUL-terminated for convenience */
    size_t body_len;
    /* private to the transport */
    void *conn;
    const char *(*header_fn)(void *conn, const char *name);
} http_request_t;

/* A request header (case-insensitive name), or NULL. */
const char *http_header(const http_request_t *req, const char *name);

/* The client's address as "ip:port" ("[ip6]:port") into buf (cap >= 64); "" if the transport
 * does not know it. */
void http_remote(const http_request_t *req, char *buf, size_t cap);

/* Calls cb with each request header (name and value as received), in arrival order. */
void http_header_each(const http_request_t *req,
                      void (*cb)(void *ctx, const char *name, const char *value), void *ctx);

/* Query-string parameter `name`, percent/+ decoded, into buf (NUL-terminated,
 * truncated to cap-1). OpenTSDB's rule: the LAST occurrence wins. Returns 1
 * if present (value may be empty), 0 if absent. */
int http_param(const http_request_t *req, const char *name, char *buf, size_t cap);

/* All occurrences of `name` in order: calls cb with each decoded value
 * (valid during the call). Returns the number of occurrences. */
int http_param_each(const http_request_t *req, const char *name,
                    void (*cb)(void *ctx, const char *value, size_t len), void *ctx);

#define HTTP_MAX_EXTRA_HEADERS 8

typedef struct {
    int status;               /* 200 unless set */
    oct_strbuf_t body;        /* empty for 204 */
    const char *content_type; /* NULL = "application/json; charset=UTF-8" */
    const char *extra_header_names[HTTP_MAX_EXTRA_HEADERS]; /* static strings */
    char *extra_header_values[HTTP_MAX_EXTRA_HEADERS];      /* malloc'd, freed by transport */
    int n_extra_headers;
    int close_after; /* close the connection after sending */
    /* Set by a handler whose answer may go out only once the write-ahead
     * log has written (not synced) through durable_seq: the transport waits
     * (possibly on another thread, batched with other requests) and, if
     * the log failed, answers 500 "Unable to write the data points to the
     * log" instead of this response. */
    int wait_durable;
    uint64_t durable_seq;
} http_response_t;

void http_response_init(http_response_t *r);
void http_response_free(http_response_t *r);
void http_response_add_header(http_response_t *r, const char *name, const char *value);

/* OpenTSDB's v1 error body, replacing any body:
 * {"error":{"code":<status>,"message":"...","details":"..."}} ("details"
 * omitted when NULL or empty). Sets the status. */
void http_error(http_response_t *r, int status, const char *message, const char *details);

/* The API: routes req (every path, /api/... and the rest) and fills resp.
 * Implemented in api.c. Unknown path -> 404 {"error":{"code":404,"message":
 * "Endpoint not found"}}; wrong verb -> 405. May block (sync puts). */
void api_handle(tsd_ctx_t *tsd, const http_request_t *req, http_response_t *resp);

#endif
