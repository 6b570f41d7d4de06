/* listener.h -- the TSD's listening socket (private to the server module).
 *
 * One TCP socket on tsd.network.bind:tsd.network.port for both protocols;
 * accepted sockets are non-blocking and carry the per-connection options
 * (tsd.network.tcp_no_delay, tsd.network.keep_alive). */
#ifndef OCT_SERVER_LISTENER_H
#define OCT_SERVER_LISTENER_H

#include <sys/socket.h>

#include "common/config.h"
#include "common/err.h"

typedef struct {
    int fd;           /* non-blocking listening socket */
    int tcp_no_delay; /* options applied to accepted sockets */
    int keep_alive;
    int backlog;
    char addr[300]; /* "<bind>:<port>" as configured, for messages */
} listener_t;

/* Resolves tsd.network.bind (a numeric address or a host name) and binds
 * tsd.network.port (SO_REUSEADDR per tsd.network.reuse_address), without
 * listening yet: a taken port is reported before the data dir is touched,
 * and no client can connect to a daemon that then fails to open its data.
 * Returns 0, or a negative errno with "Failed to bind to <addr>:<port>:
 * <reason>" in eb. */
OCT_MUST_CHECK int listener_open(listener_t *l, const oct_config_t *cfg, oct_errbuf_t *eb);

/* Starts listening (tsd.network.backlog; unset: the kernel's maximum).
 * Returns 0 or a negative errno with the same message shape. */
OCT_MUST_CHECK int listener_listen(listener_t *l, oct_errbuf_t *eb);

/* Accepts one pending connection: returns its fd (non-blocking, options
 * set) and fills addr/len; -EAGAIN when none is pending; another negative
 * errno on failure (EMFILE and the like: the caller backs off). */
int listener_accept(listener_t *l, struct sockaddr_storage *addr, socklen_t *len);

void listener_close(listener_t *l);

#endif
