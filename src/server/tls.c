/* tls.c -- the TLS terminator: handshakes, then a socketpair pump between
 * the client's TLS stream and a plaintext connection of the worker loops
 * (see tls.h).
 *
 * Why a socketpair rather than TLS inside the telnet loop and
 * libmicrohttpd: Debian's libmicrohttpd is built with GnuTLS, and we want
 * one TLS stack (OpenSSL) for both protocols and a single place that knows
 * about TLS. The cost is one extra copy and a few syscalls per 64 KiB, far
 * below what the decryption itself costs.
 *
 * Each terminator thread owns its connections: one epoll set (level
 * triggered), an eventfd for new sockets, and a 64 KiB scratch buffer. A
 * connection has two bounded buffers, allocated only when a write falls
 * short: t2p (decrypted, not yet taken by the socketpair) and p2t (from the
 * socketpair, not yet taken by SSL_write). While one holds bytes the side
 * that fills it is not read, so memory per connection stays under two
 * scratch sizes plus OpenSSL's record buffers (released when idle,
 * SSL_MODE_RELEASE_BUFFERS). An fd is in the epoll set only while we wait
 * on it: a hung-up socket we are not reading then cannot spin the loop.
 *
 * One pump call moves at most TLS_MAX_ROUNDS chunks each way, then the
 * connection waits on a ready list for the next turn: OpenSSL may hold
 * decrypted data (read-ahead) that no fd readiness would announce.
 *
 * Closing: the client's close_notify (or a plain EOF: SSL_OP_IGNORE_
 * UNEXPECTED_EOF, as clients often just close) half-closes the socketpair,
 * so the loop runs the complete lines it has and closes its end as it does
 * for plaintext; the daemon's close of its end flushes what is buffered,
 * sends close_notify and closes the TCP socket (given TLS_CLOSE_GRACE_MS
 * for a client that does not read). Connections closed while handling a
 * batch of events are freed only after the batch, since the two fds of one
 * connection may both appear in it. */
#include "server/tls.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "server/loop.h"

#define TLS_CHUNK            (64u * 1024u) /* scratch and per-direction buffer size */
#define TLS_MAX_ROUNDS       8
#define TLS_MAX_EVENTS       128
#define TLS_CLOSE_GRACE_MS   5000
#define TLS_STOP_GRACE_MS    1000
#define TLS_HANDSHAKE_DEF_MS 10000
#define TLS_MAX_THREADS      4

enum { TC_HANDSHAKE = 0, TC_OPEN, TC_DEAD };

typedef struct tls_conn {
    struct tls_conn *prev, *next; /* the thread's list; 'next' also links the dead list */
    int fd;                       /* the client's TCP socket */
    int pfd;                      /* our end of the socketpair; -1 before the handshake ends */
    SSL *ssl;
    uint8_t state;
    uint8_t tls_eof;    /* the client will send nothing more */
    uint8_t tls_broken; /* TLS failed: nothing more may be sent; discard the daemon's bytes */
    uint8_t pair_eof;   /* the daemon closed its end */
    uint8_t pair_shut;  /* we half-closed the socketpair (client EOF passed on) */
    uint8_t inner_gone; /* the socketpair refuses bytes: drop what the client sends */
    uint8_t queued;     /* on the ready list */
    uint32_t rd_want, wr_want; /* epoll events SSL_read / SSL_write (or handshake) wait for */
    uint32_t fd_ev, pfd_ev;    /* registered interest; 0 = not in the epoll set */
    int64_t deadline_ms;       /* handshake or closing deadline; 0 = none */
    char *t2p;                 /* TLS_CHUNK bytes, or NULL */
    uint32_t t2p_off, t2p_len;
    char *p2t;
    uint32_t p2t_off, p2t_len;
    struct sockaddr_storage addr; /* the client, for log messages */
} tls_conn_t;

typedef struct {
    int fd;
    struct sockaddr_storage addr;
} tls_pending_t;

typedef struct {
    struct tsd_tls *parent;
    int idx;
    pthread_t th;
    int epfd, evfd;
    pthread_mutex_t mu; /* guards pending */
    tls_pending_t *pending;
    size_t n_pending, cap_pending;
    tls_conn_t *head;
    tls_conn_t *dead; /* closed during this batch, freed after it */
    tls_conn_t **ready;
    size_t n_ready, cap_ready;
    char *scratch;
} tls_thread_t;

struct tsd_tls {
    pthread_mutex_t ctx_mu; /* guards ctx: tls_reload swaps it */
    SSL_CTX *ctx;
    const oct_config_t *cfg; /* borrowed: where tls_reload reads the files' names */
    int required;
    int64_t handshake_ms;
    tsd_ctx_t *tsd;
    struct tsd_loops *loops;
    pthread_mutex_t handoff_mu; /* guards quiesced against concurrent handoffs */
    int quiesced;
    atomic_int stop;
    atomic_uint rr;
    int n, n_alloc;
    tls_thread_t *threads;
};

/* ---- configuration ------------------------------------------------------ */

/* The first queued OpenSSL error as text (and clears the queue). */
static const char *tls_ssl_reason(char *buf, size_t cap)
{
    unsigned long e = ERR_get_error();
    if (!e) {
        snprintf(buf, cap, "unknown error");
    } else {
        ERR_error_string_n(e, buf, cap);
    }
    ERR_clear_error();
    return buf;
}

/* An encrypted key would make OpenSSL prompt on the terminal; fail instead. */
static int tls_no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return 0;
}

/* The first private key in a PEM file, or NULL (reason queued). */
static EVP_PKEY *tls_read_key(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, tls_no_password, NULL);
    fclose(f);
    return k;
}

static int tls_check_readable(const char *key, const char *path, oct_errbuf_t *eb)
{
    FILE *f = fopen(path, "r");
    if (!f) return oct_err(eb, OCT_ECONFIG, "%s: cannot read '%s': %s", key, path, strerror(errno));
    fclose(f);
    return 0;
}

/* Optional settings that narrow the handshake: cipher lists and client
 * certificates. Each failure names its key. */
static int tls_ctx_options(const oct_config_t *cfg, SSL_CTX *ctx, oct_errbuf_t *eb)
{
    char why[256];
    const char *ciphers = oct_config_get(cfg, "tsd.network.tls.ciphers");
    const char *suites = oct_config_get(cfg, "tsd.network.tls.ciphersuites");
    const char *ca = oct_config_get(cfg, "tsd.network.tls.client_ca");
    if (ciphers && *ciphers && SSL_CTX_set_cipher_list(ctx, ciphers) != 1)
        return oct_err(eb, OCT_ECONFIG, "tsd.network.tls.ciphers: no usable cipher in '%s': %s",
                       ciphers, tls_ssl_reason(why, sizeof why));
    if (suites && *suites && SSL_CTX_set_ciphersuites(ctx, suites) != 1)
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.network.tls.ciphersuites: no usable TLS 1.3 suite in '%s': %s", suites,
                       tls_ssl_reason(why, sizeof why));
    if (ca && *ca) {
        int rc = tls_check_readable("tsd.network.tls.client_ca", ca, eb);
        if (rc) return rc;
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(ca);
        if (!names || SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
            if (names) sk_X509_NAME_pop_free(names, X509_NAME_free);
            return oct_err(eb, OCT_ECONFIG,
                           "tsd.network.tls.client_ca: no CA certificate in '%s': %s", ca,
                           tls_ssl_reason(why, sizeof why));
        }
        SSL_CTX_set_client_CA_list(ctx, names); /* takes names */
        /* A client without a certificate signed by one of these CAs fails
         * the handshake: there is no "optional" mode, which would let an
         * unauthenticated client through silently. */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        SSL_CTX_set_verify_depth(ctx, 8);
    }
    return 0;
}

/* A server context from tsd.network.tls.*: certificate chain, key, and
 * the protocol settings. */
static int tls_build_ctx(const oct_config_t *cfg, SSL_CTX **out, oct_errbuf_t *eb)
{
    *out = NULL;
    const char *cert = oct_config_get(cfg, "tsd.network.tls.certificate");
    const char *key = oct_config_get(cfg, "tsd.network.tls.key");
    const char *minv = oct_config_get(cfg, "tsd.network.tls.min_version");
    if (!cert || !*cert)
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.network.tls.certificate: not set (tsd.network.tls.enable is true)");
    int key_in_cert = !key || !*key; /* a combined PEM holds both */
    if (key_in_cert) key = cert;
    int rc = tls_check_readable("tsd.network.tls.certificate", cert, eb);
    if (!rc && !key_in_cert) rc = tls_check_readable("tsd.network.tls.key", key, eb);
    if (rc) return rc;

    char why[256];
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return oct_err(eb, OCT_ECONFIG, "tsd.network.tls.enable: cannot create a TLS context: %s",
                       tls_ssl_reason(why, sizeof why));
    SSL_CTX_set_default_passwd_cb(ctx, tls_no_password);
    int v13 = minv && !strcmp(minv, "TLSv1.3");
    SSL_CTX_set_min_proto_version(ctx, v13 ? TLS1_3_VERSION : TLS1_2_VERSION);
    /* Renegotiation is a DoS lever and useless here; clients often close
     * without close_notify, which is not an error for line or length-framed
     * protocols (an incomplete telnet line is dropped anyway). */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_read_ahead(ctx, 1); /* fewer recv calls for a stream of small records */
    static const unsigned char sid[] = "octsdb";
    SSL_CTX_set_session_id_context(ctx, sid, sizeof sid - 1);

    EVP_PKEY *pkey = NULL;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        rc = oct_err(eb, OCT_ECONFIG, "tsd.network.tls.certificate: cannot load '%s': %s", cert,
                     tls_ssl_reason(why, sizeof why));
    } else if (!(pkey = tls_read_key(key))) {
        rc = key_in_cert ? oct_err(eb, OCT_ECONFIG,
                                   "tsd.network.tls.key: not set, and '%s' holds no usable "
                                   "private key: %s",
                                   cert, tls_ssl_reason(why, sizeof why))
                         : oct_err(eb, OCT_ECONFIG, "tsd.network.tls.key: cannot load '%s': %s",
                                   key, tls_ssl_reason(why, sizeof why));
    } else if (X509_check_private_key(SSL_CTX_get0_certificate(ctx), pkey) != 1) {
        ERR_clear_error();
        rc = oct_err(eb, OCT_ECONFIG,
                     "tsd.network.tls.key: '%s' does not match the certificate in '%s'", key, cert);
    } else if (SSL_CTX_use_PrivateKey(ctx, pkey) != 1) {
        rc = oct_err(eb, OCT_ECONFIG, "tsd.network.tls.key: cannot use '%s': %s", key,
                     tls_ssl_reason(why, sizeof why));
    } else {
        rc = tls_ctx_options(cfg, ctx, eb);
    }
    EVP_PKEY_free(pkey);
    if (rc) {
        SSL_CTX_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

int tls_open(const oct_config_t *cfg, tsd_tls_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    if (!oct_config_get_bool(cfg, "tsd.network.tls.enable")) return 0;
    SSL_CTX *ctx;
    int rc = tls_build_ctx(cfg, &ctx, eb);
    if (rc) return rc;
    tsd_tls_t *t = xcalloc(1, sizeof *t);
    t->ctx = ctx;
    t->cfg = cfg;
    t->required = oct_config_get_bool(cfg, "tsd.network.tls.required");
    int64_t to = oct_config_get_int(cfg, "tsd.core.socket.timeout");
    t->handshake_ms = to > 0 ? to * 1000 : TLS_HANDSHAKE_DEF_MS;
    pthread_mutex_init(&t->handoff_mu, NULL);
    pthread_mutex_init(&t->ctx_mu, NULL);
    atomic_init(&t->stop, 0);
    atomic_init(&t->rr, 0);
    *out = t;
    return 0;
}

int tls_reload(tsd_tls_t *t, oct_errbuf_t *eb)
{
    if (!t) return 0;
    SSL_CTX *ctx;
    int rc = tls_build_ctx(t->cfg, &ctx, eb);
    if (rc) return rc;
    /* Connections already set up hold a reference to the old context (SSL_new
     * takes one), so freeing ours drops nothing in flight. */
    pthread_mutex_lock(&t->ctx_mu);
    SSL_CTX *old = t->ctx;
    t->ctx = ctx;
    pthread_mutex_unlock(&t->ctx_mu);
    SSL_CTX_free(old);
    return 0;
}

int tls_required(const tsd_tls_t *t)
{
    return t && t->required;
}

/* ---- one connection ------------------------------------------------------ */

static void tls_peer(const tls_conn_t *c, char *buf, size_t cap)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    socklen_t len =
        c->addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (getnameinfo((const struct sockaddr *)&c->addr, len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(buf, cap, "%s:%s", host, serv);
    else
        snprintf(buf, cap, "?");
}

/* Registers exactly 'ev' for fd (0: removes it from the set). */
static void tls_watch(tls_thread_t *th, tls_conn_t *c, int fd, uint32_t *cur, uint32_t ev)
{
    if (fd < 0 || *cur == ev) return;
    struct epoll_event e = {.events = ev, .data.ptr = c}; /* either fd: the same pump */
    if (ev == 0)
        epoll_ctl(th->epfd, EPOLL_CTL_DEL, fd, NULL);
    else
        epoll_ctl(th->epfd, *cur ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e);
    *cur = ev;
}

static void tls_close(tls_thread_t *th, tls_conn_t *c)
{
    if (c->state == TC_DEAD) return;
    tls_watch(th, c, c->fd, &c->fd_ev, 0);
    tls_watch(th, c, c->pfd, &c->pfd_ev, 0);
    if (c->state == TC_HANDSHAKE) /* never handed on: the TCP connection's count ends here */
        atomic_fetch_sub_explicit(&th->parent->tsd->counters[TSD_CTR_CONN_OPEN], 1,
                                  memory_order_relaxed);
    c->state = TC_DEAD;
    if (c->ssl) SSL_free(c->ssl); /* the socket BIO does not close the fd */
    c->ssl = NULL;
    close(c->fd);
    if (c->pfd >= 0) close(c->pfd);
    c->fd = c->pfd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        th->head = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = NULL;
    c->next = th->dead;
    th->dead = c;
}

static void tls_conn_free(tls_conn_t *c)
{
    free(c->t2p);
    free(c->p2t);
    free(c);
}

/* What SSL_get_error says to wait for; 0 for a fatal error. */
static uint32_t tls_wait_for(SSL *ssl, int r)
{
    switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
        return EPOLLIN;
    case SSL_ERROR_WANT_WRITE:
        return EPOLLOUT;
    default:
        return 0;
    }
}

/* The handshake is done: create the socketpair and hand its far end to the
 * loops. Returns 0, or -1 after closing c. */
static int tls_handoff(tls_thread_t *th, tls_conn_t *c)
{
    tsd_tls_t *t = th->parent;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        oct_log_warn("tls", "socketpair: %s; dropping a TLS connection", strerror(errno));
        tls_close(th, c);
        return -1;
    }
    /* An unnamed AF_UNIX address, as getpeername gives for a socketpair: it
     * tells the loop's classification that this stream is already decrypted. */
    struct sockaddr_storage inner;
    memset(&inner, 0, sizeof inner);
    inner.ss_family = AF_UNIX;
    pthread_mutex_lock(&t->handoff_mu);
    int ok = !t->quiesced;
    if (ok) loops_add(t->loops, sv[1], &inner, (socklen_t)sizeof(sa_family_t));
    pthread_mutex_unlock(&t->handoff_mu);
    if (!ok) {
        close(sv[0]);
        close(sv[1]);
        tls_close(th, c);
        return -1;
    }
    c->pfd = sv[0];
    c->state = TC_OPEN;
    c->deadline_ms = 0;
    c->rd_want = EPOLLIN;
    c->wr_want = EPOLLOUT;
    return 0;
}

/* Returns 1 when the handshake finished (c is OPEN), 0 to wait, -1 if c
 * was closed. */
static int tls_handshake(tls_thread_t *th, tls_conn_t *c)
{
    ERR_clear_error();
    int r = SSL_do_handshake(c->ssl);
    if (r == 1) return tls_handoff(th, c) == 0 ? 1 : -1;
    uint32_t w = tls_wait_for(c->ssl, r);
    if (w) {
        c->rd_want = w;
        return 0;
    }
    if (oct_log_enabled(OCT_LOG_DEBUG)) {
        char peer[NI_MAXHOST + NI_MAXSERV + 2], why[256];
        tls_peer(c, peer, sizeof peer);
        oct_log_debug("tls", "handshake with %s failed: %s", peer, tls_ssl_reason(why, sizeof why));
    }
    ERR_clear_error();
    tls_close(th, c);
    return -1;
}

/* Sends buf to the socketpair; keeps what it did not take in c->t2p
 * (buffered: buf already is the pending part of c->t2p). */
static void tls_to_pair(tls_conn_t *c, const char *buf, size_t n, int buffered)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = send(c->pfd, buf + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) { /* the daemon closed its end */
                c->inner_gone = 1;
                c->t2p_off = c->t2p_len = 0;
                return;
            }
            break;
        }
        done += (size_t)w;
    }
    if (buffered) {
        c->t2p_off += (uint32_t)done;
    } else if (done < n) {
        if (!c->t2p) c->t2p = xmalloc(TLS_CHUNK);
        memcpy(c->t2p, buf + done, n - done);
        c->t2p_off = 0;
        c->t2p_len = (uint32_t)(n - done);
    }
}

/* Client -> daemon. Returns 1 if bytes moved. */
static int tls_pump_in(tls_thread_t *th, tls_conn_t *c)
{
    if (c->t2p_len > c->t2p_off) { /* what the socketpair did not take last time */
        uint32_t before = c->t2p_off;
        tls_to_pair(c, c->t2p + c->t2p_off, c->t2p_len - c->t2p_off, 1);
        if (c->t2p_len > c->t2p_off) return c->t2p_off != before;
        c->t2p_off = c->t2p_len = 0;
    }
    if (c->tls_eof || c->inner_gone) return 0;
    size_t n = 0;
    int had_eof = c->tls_eof;
    while (n < TLS_CHUNK) {
        ERR_clear_error();
        int r = SSL_read(c->ssl, th->scratch + n, (int)(TLS_CHUNK - n));
        if (r > 0) {
            n += (size_t)r;
            if (!SSL_has_pending(c->ssl)) break;
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) {
            c->rd_want = EPOLLIN;
        } else if (e == SSL_ERROR_WANT_WRITE) {
            c->rd_want = EPOLLOUT;
        } else {
            /* close_notify, EOF or a broken stream: pass on what was read,
             * then the EOF, as a plaintext connection would. */
            c->tls_eof = 1;
            if (e != SSL_ERROR_ZERO_RETURN) c->tls_broken = 1;
            ERR_clear_error();
        }
        break;
    }
    if (n == 0) return c->tls_eof != had_eof;
    tls_to_pair(c, th->scratch, n, 0);
    return 1;
}

/* Gives buf to SSL_write; keeps what it did not take in c->p2t (buffered:
 * buf already is the pending part of c->p2t). Returns -1 on a fatal TLS
 * error. */
static int tls_to_client(tls_conn_t *c, const char *buf, size_t n, int buffered)
{
    size_t done = 0;
    while (done < n) {
        ERR_clear_error();
        int r = SSL_write(c->ssl, buf + done, (int)(n - done));
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        uint32_t w = tls_wait_for(c->ssl, r);
        if (!w) return -1;
        c->wr_want = w;
        break;
    }
    if (!buffered) {
        if (done < n) {
            if (!c->p2t) c->p2t = xmalloc(TLS_CHUNK);
            memcpy(c->p2t, buf + done, n - done);
            c->p2t_off = 0;
            c->p2t_len = (uint32_t)(n - done);
        }
    } else {
        c->p2t_off += (uint32_t)done;
        if (c->p2t_off == c->p2t_len) c->p2t_off = c->p2t_len = 0;
    }
    return 0;
}

/* Daemon -> client. Returns 1 if bytes moved, 0 if not, -1 to close. */
static int tls_pump_out(tls_thread_t *th, tls_conn_t *c, int64_t now)
{
    int moved = 0;
    if (c->p2t_len > c->p2t_off) {
        uint32_t before = c->p2t_len - c->p2t_off;
        if (tls_to_client(c, c->p2t + c->p2t_off, before, 1) < 0) return -1;
        if (c->p2t_len > c->p2t_off) return (c->p2t_len - c->p2t_off) != before;
        moved = 1;
    }
    if (c->pair_eof) return moved;
    ssize_t r = recv(c->pfd, th->scratch, TLS_CHUNK, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return moved;
    if (r <= 0) {
        c->pair_eof = 1;
        c->deadline_ms = now + TLS_CLOSE_GRACE_MS;
        return 1;
    }
    if (c->tls_broken) return 1; /* nobody to send it to */
    if (tls_to_client(c, th->scratch, (size_t)r, 0) < 0) return -1;
    return 1;
}

static void tls_ready(tls_thread_t *th, tls_conn_t *c)
{
    if (c->queued) return;
    if (th->n_ready == th->cap_ready) {
        th->cap_ready = th->cap_ready ? 2 * th->cap_ready : 64;
        th->ready = xrealloc(th->ready, th->cap_ready * sizeof *th->ready);
    }
    th->ready[th->n_ready++] = c;
    c->queued = 1;
}

static void tls_pump(tls_thread_t *th, tls_conn_t *c, int64_t now)
{
    if (c->state == TC_DEAD) return;
    if (c->state == TC_HANDSHAKE) {
        int h = tls_handshake(th, c);
        if (h < 0) return;
        if (h == 0) {
            tls_watch(th, c, c->fd, &c->fd_ev, c->rd_want);
            return;
        }
    }
    int round = 0;
    for (; round < TLS_MAX_ROUNDS; round++) {
        int moved = tls_pump_in(th, c);
        int out = tls_pump_out(th, c, now);
        if (out < 0) {
            tls_close(th, c);
            return;
        }
        if (c->tls_eof && c->t2p_len == 0 && !c->pair_shut && !c->pair_eof) {
            shutdown(c->pfd, SHUT_WR); /* the loop sees EOF, as from a plaintext client */
            c->pair_shut = 1;
        }
        if (c->pair_eof && c->p2t_len == 0) {
            if (c->tls_broken) {
                tls_close(th, c);
                return;
            }
            ERR_clear_error();
            int r = SSL_shutdown(c->ssl); /* sends close_notify; the reply is not awaited */
            uint32_t w = r < 0 ? tls_wait_for(c->ssl, r) : 0;
            if (!w) {
                tls_close(th, c);
                return;
            }
            c->wr_want = w;
            break;
        }
        if (!moved && !out) break;
    }
    if (round == TLS_MAX_ROUNDS) tls_ready(th, c);

    uint32_t fd_ev = 0, pfd_ev = 0;
    if (!c->tls_eof && !c->inner_gone && c->t2p_len == 0) fd_ev |= c->rd_want;
    if (c->p2t_len > 0 || (c->pair_eof && !c->tls_broken)) fd_ev |= c->wr_want;
    if (c->t2p_len > 0) pfd_ev |= EPOLLOUT;
    if (!c->pair_eof && c->p2t_len == 0) pfd_ev |= EPOLLIN;
    tls_watch(th, c, c->fd, &c->fd_ev, fd_ev);
    tls_watch(th, c, c->pfd, &c->pfd_ev, pfd_ev);
}

/* ---- the threads --------------------------------------------------------- */

static void tls_take_pending(tls_thread_t *th, int64_t now, int stopping)
{
    uint64_t v;
    if (read(th->evfd, &v, sizeof v) < 0) { /* spurious wake-up */
    }
    pthread_mutex_lock(&th->mu);
    tls_pending_t *p = th->pending;
    size_t n = th->n_pending;
    th->pending = NULL;
    th->n_pending = th->cap_pending = 0;
    pthread_mutex_unlock(&th->mu);
    for (size_t i = 0; i < n; i++) {
        tls_conn_t *c = xcalloc(1, sizeof *c);
        c->fd = p[i].fd;
        c->pfd = -1;
        c->addr = p[i].addr;
        c->state = TC_HANDSHAKE;
        c->deadline_ms = now + th->parent->handshake_ms;
        c->next = th->head;
        if (th->head) th->head->prev = c;
        th->head = c;
        pthread_mutex_lock(&th->parent->ctx_mu);
        c->ssl = SSL_new(th->parent->ctx);
        pthread_mutex_unlock(&th->parent->ctx_mu);
        if (stopping || !c->ssl || SSL_set_fd(c->ssl, c->fd) != 1) {
            ERR_clear_error();
            tls_close(th, c);
            continue;
        }
        SSL_set_accept_state(c->ssl);
        tls_pump(th, c, now); /* the ClientHello is already there: the loop saw its first byte */
    }
    free(p);
}

static void tls_free_dead(tls_thread_t *th)
{
    while (th->dead) {
        tls_conn_t *c = th->dead;
        th->dead = c->next;
        tls_conn_free(c);
    }
}

static void tls_run_ready(tls_thread_t *th, int64_t now)
{
    size_t n = th->n_ready;
    if (!n) return;
    tls_conn_t **list = th->ready;
    th->ready = NULL;
    th->n_ready = th->cap_ready = 0;
    for (size_t i = 0; i < n; i++) {
        list[i]->queued = 0;
        tls_pump(th, list[i], now); /* a no-op for one closed in this batch */
    }
    free(list);
}

static void tls_sweep(tls_thread_t *th, int64_t now)
{
    tls_conn_t *next;
    for (tls_conn_t *c = th->head; c; c = next) {
        next = c->next;
        if (c->deadline_ms && now >= c->deadline_ms) {
            if (c->state == TC_HANDSHAKE && oct_log_enabled(OCT_LOG_DEBUG)) {
                char peer[NI_MAXHOST + NI_MAXSERV + 2];
                tls_peer(c, peer, sizeof peer);
                oct_log_debug("tls", "handshake with %s timed out", peer);
            }
            tls_close(th, c);
        }
    }
}

static void *tls_main(void *arg)
{
    tls_thread_t *th = arg;
    tsd_tls_t *t = th->parent;
    char name[16];
    snprintf(name, sizeof name, "tsd-tls-%d", th->idx);
    pthread_setname_np(pthread_self(), name);
    struct epoll_event evs[TLS_MAX_EVENTS];
    int64_t last_sweep = oct_clock_mono_ms(), stop_at = 0;
    for (;;) {
        int64_t now = oct_clock_mono_ms();
        if (atomic_load_explicit(&t->stop, memory_order_acquire)) {
            if (!stop_at) { /* handshakes in progress will never be handed on */
                stop_at = now + TLS_STOP_GRACE_MS;
                tls_conn_t *next;
                for (tls_conn_t *c = th->head; c; c = next) {
                    next = c->next;
                    if (c->state == TC_HANDSHAKE) tls_close(th, c);
                }
                tls_free_dead(th);
            }
            if (!th->head || now >= stop_at) break;
        }
        int timeout = th->n_ready ? 0 : stop_at ? 50 : 1000;
        int n = epoll_wait(th->epfd, evs, TLS_MAX_EVENTS, timeout);
        now = oct_clock_mono_ms();
        for (int i = 0; i < n; i++) {
            tls_conn_t *c = evs[i].data.ptr;
            if (!c) {
                tls_take_pending(th, now, stop_at != 0);
                continue;
            }
            if ((evs[i].events & EPOLLERR) && c->state == TC_HANDSHAKE) {
                tls_close(th, c);
                continue;
            }
            tls_pump(th, c, now);
        }
        tls_run_ready(th, now);
        if (now - last_sweep >= 1000) {
            tls_sweep(th, now);
            last_sweep = now;
        }
        tls_free_dead(th);
    }
    tls_conn_t *next;
    for (tls_conn_t *c = th->head; c; c = next) {
        next = c->next;
        tls_close(th, c);
    }
    tls_free_dead(th);
    free(th->ready);
    th->ready = NULL;
    th->n_ready = 0;
    return NULL;
}

int tls_start(tsd_tls_t *t, tsd_ctx_t *tsd, struct tsd_loops *loops, oct_errbuf_t *eb)
{
    t->tsd = tsd;
    t->loops = loops;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus < 1 ? 1 : cpus > TLS_MAX_THREADS ? TLS_MAX_THREADS : (int)cpus;
    t->threads = xcalloc((size_t)n, sizeof *t->threads);
    t->n_alloc = n;
    for (int i = 0; i < n; i++) {
        tls_thread_t *th = &t->threads[i];
        th->parent = t;
        th->idx = i;
        th->epfd = th->evfd = -1;
        pthread_mutex_init(&th->mu, NULL);
    }
    for (int i = 0; i < n; i++) {
        tls_thread_t *th = &t->threads[i];
        th->epfd = epoll_create1(EPOLL_CLOEXEC);
        th->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (th->epfd < 0 || th->evfd < 0)
            return oct_err(eb, -errno, "cannot create a TLS thread: %s", strerror(errno));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(th->epfd, EPOLL_CTL_ADD, th->evfd, &ev);
        th->scratch = xmalloc(TLS_CHUNK);
        int e = pthread_create(&th->th, NULL, tls_main, th);
        if (e != 0) return oct_err(eb, -e, "cannot start a TLS thread: %s", strerror(e));
        t->n = i + 1;
    }
    return 0;
}

void tls_add(tsd_tls_t *t, int fd, const struct sockaddr_storage *addr, socklen_t len)
{
    (void)len;
    unsigned i = atomic_fetch_add_explicit(&t->rr, 1, memory_order_relaxed);
    tls_thread_t *th = &t->threads[i % (unsigned)t->n];
    pthread_mutex_lock(&th->mu);
    if (th->n_pending == th->cap_pending) {
        th->cap_pending = th->cap_pending ? 2 * th->cap_pending : 16;
        th->pending = xrealloc(th->pending, th->cap_pending * sizeof *th->pending);
    }
    tls_pending_t *p = &th->pending[th->n_pending++];
    p->fd = fd;
    memcpy(&p->addr, addr, sizeof p->addr);
    pthread_mutex_unlock(&th->mu);
    uint64_t one = 1;
    if (write(th->evfd, &one, sizeof one) < 0) { /* counter full: already signalled */
    }
}

void tls_refuse_plaintext(int fd, unsigned char first_byte)
{
#define TLS_REFUSE_BODY                                                                            \
    "{\"error\":{\"code\":400,\"message\":\"TLS is required on this port (use https)\"}}"
    _Static_assert(sizeof TLS_REFUSE_BODY - 1 == 75, "Content-Length below");
    static const char http_msg[] = "HTTP/1.1 400 Bad Request\r\n"
                                   "Content-Type: application/json; charset=UTF-8\r\n"
                                   "Content-Length: 75\r\n"
                                   "Connection: close\r\n\r\n" TLS_REFUSE_BODY;
    static const char telnet_msg[] = "error: TLS is required on this port\n";
    /* Read what arrived, so that closing sends a FIN, not a reset that could
     * destroy the message before the client reads it. */
    char buf[4096];
    for (int i = 0; i < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++) {
    }
    const char *msg = tsd_is_http_byte(first_byte) ? http_msg : telnet_msg;
    size_t len = tsd_is_http_byte(first_byte) ? sizeof http_msg - 1 : sizeof telnet_msg - 1;
    ssize_t w = send(fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    shutdown(fd, SHUT_WR);
}

void tls_quiesce(tsd_tls_t *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->handoff_mu);
    t->quiesced = 1;
    pthread_mutex_unlock(&t->handoff_mu);
}

void tls_stop(tsd_tls_t *t)
{
    if (!t) return;
    tls_quiesce(t);
    atomic_store_explicit(&t->stop, 1, memory_order_release);
    for (int i = 0; i < t->n; i++) {
        uint64_t one = 1;
        if (write(t->threads[i].evfd, &one, sizeof one) < 0) {
        }
    }
    for (int i = 0; i < t->n; i++)
        pthread_join(t->threads[i].th, NULL);
    for (int i = 0; i < t->n_alloc; i++) {
        tls_thread_t *th = &t->threads[i];
        for (size_t k = 0; k < th->n_pending; k++) {
            close(th->pending[k].fd);
            atomic_fetch_sub_explicit(&t->tsd->counters[TSD_CTR_CONN_OPEN], 1,
                                      memory_order_relaxed);
        }
        free(th->pending);
        free(th->scratch);
        if (th->epfd >= 0) close(th->epfd);
        if (th->evfd >= 0) close(th->evfd);
        pthread_mutex_destroy(&th->mu);
    }
    free(t->threads);
    pthread_mutex_destroy(&t->handoff_mu);
    pthread_mutex_destroy(&t->ctx_mu);
    SSL_CTX_free(t->ctx);
    free(t);
}
