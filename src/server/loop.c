/* loop.c -- the worker loops: classification of new connections and the
 * telnet-style connections (see loop.h, conn.h).
 *
 * The acceptor never reads: a client may connect and say nothing for a
 * while, and peeking in the acceptor would stall every other accept. So each
 * new socket goes to a loop (round robin, through a mutex-protected list and
 * an eventfd), which waits for its first byte with MSG_PEEK -- nothing is
 * consumed, libmicrohttpd later reads the request from the start.
 *
 * Epoll is level-triggered: a busy connection gets at most LOOP_MAX_READS
 * reads per wake-up, then the others get their turn, so one fast writer
 * never starves the rest. Replies are sent with MSG_DONTWAIT; what does not
 * fit waits for EPOLLOUT. Once a second each loop walks its connections for
 * tsd.core.socket.timeout and for CLOSING connections whose client never
 * took the last replies. */
#include "server/loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "server/conn.h"
#include "server/tls.h"

#define LOOP_MAX_READS      4
#define LOOP_MAX_EVENTS     256
#define LOOP_DRAIN_READS    64 /* at shutdown: up to 16 MiB per connection */
#define LOOP_CLOSE_GRACE_MS 5000

typedef struct {
    int fd;
    socklen_t len;
    struct sockaddr_storage addr;
} loop_pending_t;

typedef struct tsd_loop {
    struct tsd_loops *parent;
    int idx;
    pthread_t th;
    int epfd;
    int evfd;
    pthread_mutex_t mu; /* guards pending */
    loop_pending_t *pending;
    size_t n_pending, cap_pending;
    conn_t *head;  /* every connection of this loop */
    char *scratch; /* CONN_READ_CHUNK bytes */
} tsd_loop_t;

struct tsd_loops {
    tsd_ctx_t *tsd;
    tsd_http_t *http;
    int n;       /* loops running */
    int n_alloc; /* slots in 'loops' */
    atomic_uint rr;
    int64_t idle_timeout_ms; /* 0 = none */
    tsd_tls_t *tls;          /* NULL: TLS off (set by loops_set_tls before any accept) */
    atomic_int stop;
    tsd_loop_t *loops;
};

static void loop_link(tsd_loop_t *lp, conn_t *c)
{
    c->prev = NULL;
    c->next = lp->head;
    if (lp->head) lp->head->prev = c;
    lp->head = c;
}

static void loop_unlink(tsd_loop_t *lp, conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        lp->head = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void loop_close(tsd_loop_t *lp, conn_t *c)
{
    tsd_ctx_t *tsd = lp->parent->tsd;
    epoll_ctl(lp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    loop_unlink(lp, c);
    if (c->dropped_replies)
        oct_log_debug("telnet", "fd %d: dropped %llu bytes of replies the client never read", c->fd,
                      (unsigned long long)c->dropped_replies);
    atomic_fetch_sub_explicit(&tsd->counters[TSD_CTR_CONN_OPEN], 1, memory_order_relaxed);
    conn_free(c);
}

static void loop_set_events(tsd_loop_t *lp, conn_t *c, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = c};
    epoll_ctl(lp->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* After reading or writing: closes, or sets the epoll interest to match
 * what is pending. */
static void loop_settle(tsd_loop_t *lp, conn_t *c, int64_t now)
{
    int pending = conn_send(c, now);
    if (pending < 0) {
        loop_close(lp, c);
        return;
    }
    if (c->state == CONN_CLOSING) {
        if (pending == 0) {
            loop_close(lp, c);
        } else if (!c->closing_sent) {
            c->closing_sent = 1;
            c->want_out = 1;
            loop_set_events(lp, c, EPOLLOUT); /* stop reading; only finish the replies */
        }
        return;
    }
    if (pending && !c->want_out) {
        c->want_out = 1;
        loop_set_events(lp, c, EPOLLIN | EPOLLOUT);
    } else if (!pending && c->want_out) {
        c->want_out = 0;
        loop_set_events(lp, c, EPOLLIN);
    }
}

static void loop_start_closing(conn_t *c, int64_t now)
{
    c->state = CONN_CLOSING;
    c->deadline_ms = now + LOOP_CLOSE_GRACE_MS;
}

static void loop_telnet_readable(tsd_loop_t *lp, conn_t *c, int64_t now, int max_reads)
{
    tsd_ctx_t *tsd = lp->parent->tsd;
    c->active_ms = now;
    int rc = conn_telnet_readable(c, tsd, lp->scratch, max_reads);
    switch (rc) {
    case CONN_R_ERROR:
        loop_close(lp, c);
        return;
    case CONN_R_EOF:
    case CONN_R_CLOSE:
        loop_start_closing(c, now);
        break;
    case CONN_R_SHUTDOWN:
        loop_start_closing(c, now);
        oct_log_warn("telnet", "shutdown requested by a client (diediedie)");
        tsd_request_shutdown(tsd);
        break;
    default:
        break;
    }
    loop_settle(lp, c, now);
}

/* With TLS on, what a TCP connection's first byte b means: 1 = a TLS
 * handshake (for the terminator), -1 = plaintext that must be refused, 0 =
 * plaintext as usual. A stream the terminator decrypted arrives on a
 * socketpair (an AF_UNIX address; the listener is TCP only) and is always
 * plaintext: a 0x16 inside TLS is just a telnet byte. */
static int loop_tls_gate(const tsd_loop_t *lp, const conn_t *c, unsigned char b)
{
    const tsd_tls_t *tls = lp->parent->tls;
    if (!tls || c->addr.ss_family == AF_UNIX) return 0;
    if (b == TLS_RECORD_HANDSHAKE) return 1;
    return tls_required(tls) ? -1 : 0;
}

/* A NEW connection became readable: look at its first byte. */
static void loop_classify(tsd_loop_t *lp, conn_t *c, int64_t now)
{
    tsd_ctx_t *tsd = lp->parent->tsd;
    unsigned char b;
    ssize_t r = recv(c->fd, &b, 1, MSG_PEEK);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (r <= 0) { /* closed (a port probe) or failed before saying anything */
        loop_close(lp, c);
        return;
    }
    int gate = loop_tls_gate(lp, c, b);
    if (gate > 0) {
        epoll_ctl(lp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        loop_unlink(lp, c);
        int fd = c->fd;
        c->fd = -1;
        /* The terminator owns the socket and its CONN_OPEN count now; the
         * decrypted stream comes back through loops_add. */
        tls_add(lp->parent->tls, fd, &c->addr, c->addrlen);
        conn_free(c);
        return;
    }
    if (gate < 0) {
        tsd_count(tsd, TSD_CTR_CONN_REJECTED, 1);
        tls_refuse_plaintext(c->fd, b);
        loop_close(lp, c);
        return;
    }
    if (tsd_is_http_byte(b)) {
        epoll_ctl(lp->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        loop_unlink(lp, c);
        int fd = c->fd;
        c->fd = -1;
        tsd_count(tsd, TSD_CTR_CONN_HTTP, 1);
        /* From here libmicrohttpd owns the socket; it decrements CONN_OPEN
         * when the connection closes (or http_server_add did on refusal). */
        http_server_add(lp->parent->http, fd, (const struct sockaddr *)&c->addr, c->addrlen);
        conn_free(c);
        return;
    }
    c->sess = telnet_session_new(tsd);
    if (!c->sess) {
        loop_close(lp, c);
        return;
    }
    c->state = CONN_TELNET;
    tsd_count(tsd, TSD_CTR_CONN_TELNET, 1);
    loop_telnet_readable(lp, c, now, LOOP_MAX_READS);
}

static void loop_event(tsd_loop_t *lp, conn_t *c, uint32_t ev, int64_t now)
{
    switch (c->state) {
    case CONN_NEW:
        loop_classify(lp, c, now);
        break;
    case CONN_TELNET:
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            loop_telnet_readable(lp, c, now, LOOP_MAX_READS);
        } else if (ev & EPOLLOUT) {
            loop_settle(lp, c, now);
        }
        break;
    case CONN_CLOSING:
        if (ev & EPOLLERR)
            loop_close(lp, c);
        else
            loop_settle(lp, c, now);
        break;
    default:
        break;
    }
}

static void loop_take_pending(tsd_loop_t *lp, int64_t now)
{
    uint64_t v;
    if (read(lp->evfd, &v, sizeof v) < 0) { /* nothing: spurious wake-up */
    }
    pthread_mutex_lock(&lp->mu);
    loop_pending_t *p = lp->pending;
    size_t n = lp->n_pending;
    lp->pending = NULL;
    lp->n_pending = lp->cap_pending = 0;
    pthread_mutex_unlock(&lp->mu);
    for (size_t i = 0; i < n; i++) {
        conn_t *c = xcalloc(1, sizeof *c);
        c->fd = p[i].fd;
        c->addr = p[i].addr;
        c->addrlen = p[i].len;
        c->active_ms = now;
        c->state = CONN_NEW;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
            oct_log_warn("tsd", "epoll_ctl: %s; dropping a connection", strerror(errno));
            atomic_fetch_sub_explicit(&lp->parent->tsd->counters[TSD_CTR_CONN_OPEN], 1,
                                      memory_order_relaxed);
            conn_free(c);
            continue;
        }
        loop_link(lp, c);
    }
    free(p);
}

static void loop_sweep(tsd_loop_t *lp, int64_t now)
{
    int64_t idle = lp->parent->idle_timeout_ms;
    conn_t *next;
    for (conn_t *c = lp->head; c; c = next) {
        next = c->next;
        if (c->state == CONN_CLOSING) {
            if (now >= c->deadline_ms) loop_close(lp, c);
        } else if (idle > 0 && now - c->active_ms >= idle) {
            oct_log_debug("tsd", "closing idle connection fd %d", c->fd);
            loop_close(lp, c);
        }
    }
}

/* Shutdown: run what the telnet clients already sent, try once to send the
 * replies, close everything. */
static void loop_drain(tsd_loop_t *lp)
{
    loop_take_pending(lp, oct_clock_mono_ms());
    int64_t now = oct_clock_mono_ms();
    conn_t *next;
    for (conn_t *c = lp->head; c; c = next) {
        next = c->next;
        if (c->state == CONN_TELNET) {
            (void)conn_telnet_readable(c, lp->parent->tsd, lp->scratch, LOOP_DRAIN_READS);
        } else if (c->state == CONN_NEW) {
            /* A client that sent its first bytes just now still deserves an
             * answer only if it is telnet; HTTP requests are not taken any more. */
            unsigned char b;
            if (recv(c->fd, &b, 1, MSG_PEEK) == 1 && !tsd_is_http_byte(b) &&
                loop_tls_gate(lp, c, b) == 0) {
                c->sess = telnet_session_new(lp->parent->tsd);
                if (c->sess) {
                    c->state = CONN_TELNET;
                    (void)conn_telnet_readable(c, lp->parent->tsd, lp->scratch, LOOP_DRAIN_READS);
                }
            }
        }
        (void)conn_send(c, now);
        loop_close(lp, c);
    }
}

static void *loop_main(void *arg)
{
    tsd_loop_t *lp = arg;
    char name[16];
    snprintf(name, sizeof name, "tsd-loop-%d", lp->idx);
    pthread_setname_np(pthread_self(), name);
    struct epoll_event evs[LOOP_MAX_EVENTS];
    int64_t last_sweep = oct_clock_mono_ms();
    while (!atomic_load_explicit(&lp->parent->stop, memory_order_acquire)) {
        int n = epoll_wait(lp->epfd, evs, LOOP_MAX_EVENTS, 1000);
        int64_t now = oct_clock_mono_ms();
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL) {
                loop_take_pending(lp, now);
                continue;
            }
            loop_event(lp, evs[i].data.ptr, evs[i].events, now);
        }
        /* A connection closed above may still have an event later in evs:
         * epoll reports each fd once per wait and we act on the one event,
         * so a freed connection is never touched again in this batch. */
        if (now - last_sweep >= 1000) {
            loop_sweep(lp, now);
            last_sweep = now;
        }
    }
    loop_drain(lp);
    return NULL;
}

int loops_start(tsd_ctx_t *tsd, tsd_http_t *http, int n, tsd_loops_t **out, oct_errbuf_t *eb)
{
    tsd_loops_t *l = xcalloc(1, sizeof *l);
    l->tsd = tsd;
    l->http = http;
    l->idle_timeout_ms = oct_config_get_int(tsd->cfg, "tsd.core.socket.timeout") * 1000;
    l->loops = xcalloc((size_t)n, sizeof *l->loops);
    l->n_alloc = n;
    atomic_init(&l->stop, 0);
    atomic_init(&l->rr, 0);
    for (int i = 0; i < n; i++) {
        l->loops[i].parent = l;
        l->loops[i].idx = i;
        l->loops[i].epfd = l->loops[i].evfd = -1;
        pthread_mutex_init(&l->loops[i].mu, NULL);
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        tsd_loop_t *lp = &l->loops[i];
        lp->epfd = epoll_create1(EPOLL_CLOEXEC);
        lp->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (lp->epfd < 0 || lp->evfd < 0) {
            rc = oct_err(eb, -errno, "cannot create a worker loop: %s", strerror(errno));
            break;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        epoll_ctl(lp->epfd, EPOLL_CTL_ADD, lp->evfd, &ev);
        lp->scratch = xmalloc(CONN_READ_CHUNK);
        int e = pthread_create(&lp->th, NULL, loop_main, lp);
        if (e != 0) {
            rc = oct_err(eb, -e, "cannot start a worker loop thread: %s", strerror(e));
            break;
        }
        l->n = i + 1;
    }
    if (rc) {
        loops_stop(l);
        return rc;
    }
    *out = l;
    return 0;
}

void loops_add(tsd_loops_t *l, int fd, const struct sockaddr_storage *addr, socklen_t len)
{
    /* The acceptor and the TLS terminator threads both add connections. */
    unsigned i = atomic_fetch_add_explicit(&l->rr, 1, memory_order_relaxed);
    tsd_loop_t *lp = &l->loops[i % (unsigned)l->n];
    pthread_mutex_lock(&lp->mu);
    if (lp->n_pending == lp->cap_pending) {
        lp->cap_pending = lp->cap_pending ? 2 * lp->cap_pending : 16;
        lp->pending = xrealloc(lp->pending, lp->cap_pending * sizeof *lp->pending);
    }
    loop_pending_t *p = &lp->pending[lp->n_pending++];
    p->fd = fd;
    p->len = len;
    memcpy(&p->addr, addr, sizeof p->addr);
    pthread_mutex_unlock(&lp->mu);
    uint64_t one = 1;
    if (write(lp->evfd, &one, sizeof one) < 0) { /* counter full: already signalled */
    }
}

void loops_set_tls(tsd_loops_t *l, tsd_tls_t *tls)
{
    l->tls = tls;
}

void loops_stop(tsd_loops_t *l)
{
    if (!l) return;
    atomic_store_explicit(&l->stop, 1, memory_order_release);
    for (int i = 0; i < l->n; i++) {
        uint64_t one = 1;
        if (write(l->loops[i].evfd, &one, sizeof one) < 0) {
        }
    }
    for (int i = 0; i < l->n; i++)
        pthread_join(l->loops[i].th, NULL);
    for (int i = 0; i < l->n_alloc; i++) { /* loops_start may have failed half-way */
        tsd_loop_t *lp = &l->loops[i];
        if (lp->epfd >= 0) close(lp->epfd);
        if (lp->evfd >= 0) close(lp->evfd);
        for (size_t k = 0; k < lp->n_pending; k++)
            close(lp->pending[k].fd);
        free(lp->pending);
        free(lp->scratch);
        pthread_mutex_destroy(&lp->mu);
    }
    free(l->loops);
    free(l);
}
