/* tls.h -- optional TLS on the TSD's one port (private to the server module).
 *
 * OpenTSDB 2.4 has no TLS; this is octsdb's own, off by default
 * (tsd.network.tls.enable). When on, the port serves plaintext telnet,
 * plaintext HTTP and TLS carrying either: a TLS connection opens with a
 * handshake record, first byte 0x16, which is neither an HTTP method
 * ('A'..'Z') nor a telnet command, so the worker loops' first-byte
 * classification tells it apart. With tsd.network.tls.required plaintext is
 * refused (a one-line error, then close).
 *
 * The terminator: a few threads (one epoll set each) take the TLS sockets
 * from the loops, run a non-blocking handshake with a deadline
 * (tsd.core.socket.timeout, 10 s when that is 0), then create a socketpair
 * and hand one end to the worker loops (loops_add) as if it were a newly
 * accepted plaintext connection: telnet, HTTP (libmicrohttpd), authentication
 * and every endpoint run unchanged on the decrypted stream. The terminator
 * pumps bytes both ways through bounded buffers: when one side does not
 * take bytes, the other side is not read, so a client that never reads
 * costs at most a few buffers. Nothing downstream uses the peer's address;
 * the inner end is handed over with an AF_UNIX address, which is how the
 * classification knows it is already decrypted (the listener is TCP only).
 *
 * Accounting: the accepted TCP connection holds one TSD_CTR_CONN_OPEN; the
 * terminator releases it if the handshake fails, and otherwise passes it on
 * to the inner end (whose owner releases it on close).
 *
 * Certificate and key are PEM files, loaded and checked at start-up
 * (tls_open), never at the first connection, and again by tls_reload
 * (SIGHUP): new handshakes use the new ones, established connections keep
 * theirs. Minimum protocol TLS 1.2 (tsd.network.tls.min_version can raise
 * it to 1.3); tsd.network.tls.ciphers / .ciphersuites narrow the cipher
 * choice; tsd.network.tls.client_ca requires client certificates signed by
 * those CAs (docs/tls.md). */
#ifndef OCT_SERVER_TLS_H
#define OCT_SERVER_TLS_H

#include <sys/socket.h>

#include "common/config.h"
#include "common/err.h"
#include "server/tsd.h"

/* The first byte of a TLS handshake record (content type 22). */
#define TLS_RECORD_HANDSHAKE 0x16

typedef struct tsd_tls tsd_tls_t;
struct tsd_loops;

/* Reads tsd.network.tls.*. Disabled: returns 0 with *out = NULL. Enabled:
 * loads the certificate chain and key, checks that they match and builds
 * the server context; returns 0 and *out (free with tls_stop), or
 * OCT_ECONFIG with a message naming the key at fault (e.g.
 * "tsd.network.tls.certificate: cannot load '/x.pem': ..."). No thread
 * is started. */
OCT_MUST_CHECK int tls_open(const oct_config_t *cfg, tsd_tls_t **out, oct_errbuf_t *eb);

/* Re-reads the certificate, key and CA files named by the configuration
 * tls_open read (cfg must still be alive) and builds a new context; the
 * next handshakes use it, established and handshaking connections keep
 * the old one. On failure (OCT_ECONFIG naming the key, as tls_open) the old
 * context stays. NULL is accepted (0). Any thread. */
int tls_reload(tsd_tls_t *t, oct_errbuf_t *eb);

/* 1 if plaintext connections must be refused (NULL: 0). */
int tls_required(const tsd_tls_t *t);

/* Starts the terminator threads. Finished handshakes go to 'loops'
 * (borrowed; must stay alive until tls_quiesce returns). tsd is borrowed
 * for the counters. Returns 0 or -errno with eb. */
OCT_MUST_CHECK int tls_start(tsd_tls_t *t, tsd_ctx_t *tsd, struct tsd_loops *loops,
                             oct_errbuf_t *eb);

/* Takes ownership of an accepted non-blocking socket whose first byte is
 * TLS_RECORD_HANDSHAKE (and its CONN_OPEN count). Any thread, after
 * tls_start and before tls_stop. */
void tls_add(tsd_tls_t *t, int fd, const struct sockaddr_storage *addr, socklen_t len);

/* Refuses a plaintext connection when TLS is required: drains what the
 * client sent, sends a short error (an HTTP 400 if first_byte starts an
 * HTTP request, else a telnet error line) without blocking. The caller
 * closes fd. */
void tls_refuse_plaintext(int fd, unsigned char first_byte);

/* Stops handing connections to the loops: after it returns, the
 * terminator never calls loops_add again (handshakes that finish later are
 * closed). Established connections keep being pumped, so replies the loops
 * write while stopping still reach their clients. Call before loops_stop.
 * NULL is accepted. */
void tls_quiesce(tsd_tls_t *t);

/* Gives established connections a moment (at most 1 s) to flush what the
 * daemon wrote, then closes everything, joins the threads and frees t.
 * Call after the loops and the HTTP server have stopped. NULL is accepted;
 * a t that was never started is just freed. */
void tls_stop(tsd_tls_t *t);

#endif
