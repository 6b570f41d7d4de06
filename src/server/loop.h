/* loop.h -- the TSD's worker loops (private to the server module).
 *
 * Each loop is one thread with an epoll set. The acceptor hands it new
 * sockets; the loop waits for the first byte, classifies the connection
 * (telnet_is_http_byte) and either passes it to libmicrohttpd or serves
 * it as a telnet-style connection itself (conn.h) until it closes. */
#ifndef OCT_SERVER_LOOP_H
#define OCT_SERVER_LOOP_H

#include <sys/socket.h>

#include "common/err.h"
#include "server/http_server.h"
#include "server/tsd.h"

typedef struct tsd_loops tsd_loops_t;

/* Starts n loops. 'http' receives the HTTP connections (borrowed; must
 * outlive the loops). Returns 0 or -errno with eb. */
OCT_MUST_CHECK int loops_start(tsd_ctx_t *tsd, tsd_http_t *http, int n, tsd_loops_t **out,
                               oct_errbuf_t *eb);

/* Gives an accepted non-blocking socket to the next loop (round robin);
 * the loop owns it from now on. Called by the acceptor thread and the TLS
 * terminator's threads (for decrypted streams, with an AF_UNIX address). */
void loops_add(tsd_loops_t *l, int fd, const struct sockaddr_storage *addr, socklen_t len);

/* Turns on TLS classification (tls.h): a first byte 0x16 goes to the
 * terminator, plaintext is refused if tls_required. Call after loops_start
 * and before the first loops_add; tls (borrowed) must outlive the loops. */
struct tsd_tls;
void loops_set_tls(tsd_loops_t *l, struct tsd_tls *tls);

/* Stops every loop: each reads what its telnet connections already sent,
 * processes the complete lines, tries briefly to send pending replies, then
 * closes its connections; unclassified sockets are closed. Joins and frees.
 * NULL is accepted. */
void loops_stop(tsd_loops_t *l);

/* OpenTSDB's rule: a first byte 'A'..'Z' means HTTP, anything else telnet. */
static inline int tsd_is_http_byte(unsigned char b)
{
    return b >= 'A' && b <= 'Z';
}

#endif
