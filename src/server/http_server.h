/* http_server.h -- the HTTP side of the TSD (private to the server module):
 * libmicrohttpd without a listening socket, fed the connections that the
 * worker loops classified as HTTP, plus a pool of handler threads that run
 * api_handle so that a slow handler (a sync put, later a query) never
 * stalls the connections sharing its libmicrohttpd thread. */
#ifndef OCT_SERVER_HTTP_SERVER_H
#define OCT_SERVER_HTTP_SERVER_H

#include <sys/socket.h>

#include "common/err.h"
#include "server/tsd.h"

typedef struct tsd_http tsd_http_t;

/* Starts libmicrohttpd (n_threads polling threads, epoll) and n_threads
 * handler threads. Reads tsd.http.request.max_body_size, cors_domains,
 * cors_headers and tsd.core.socket.timeout from tsd->cfg. Returns 0 or
 * OCT_ECONFIG (bad CORS list) / OCT_EIO (libmicrohttpd failed) with eb. */
OCT_MUST_CHECK int http_server_start(tsd_ctx_t *tsd, int n_threads, tsd_http_t **out,
                                     oct_errbuf_t *eb);

/* Hands an accepted socket whose first byte says HTTP to libmicrohttpd,
 * which owns (and closes) it from now on. Nothing has been read from it.
 * Returns 0, or -1 if libmicrohttpd refused it (already closed). Any thread. */
int http_server_add(tsd_http_t *h, int fd, const struct sockaddr *addr, socklen_t len);

/* Waits up to grace_ms for the requests being handled and answered, then
 * closes every HTTP connection and joins the threads. NULL is accepted. */
void http_server_stop(tsd_http_t *h, int grace_ms);

#endif
