/* listener.c -- bind, listen and accept for the TSD (see listener.h).
 *
 * The bind address goes through getaddrinfo so that "0.0.0.0", "::",
 * "127.0.0.1" and host names all work; the first address that binds wins,
 * as OpenTSDB binds the one InetSocketAddress it resolves. */
#include "server/listener.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int listener_open(listener_t *l, const oct_config_t *cfg, oct_errbuf_t *eb)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    const char *bind_s = oct_config_get(cfg, "tsd.network.bind");
    if (!bind_s) bind_s = "0.0.0.0";
    int64_t port = oct_config_get_int(cfg, "tsd.network.port");
    int64_t backlog = oct_config_get_int(cfg, "tsd.network.backlog");
    if (backlog <= 0 || backlog > INT32_MAX) backlog = 65535; /* the kernel caps it at somaxconn */
    l->backlog = (int)backlog;
    l->tcp_no_delay = oct_config_get_bool(cfg, "tsd.network.tcp_no_delay");
    l->keep_alive = oct_config_get_bool(cfg, "tsd.network.keep_alive");
    int reuse = oct_config_get_bool(cfg, "tsd.network.reuse_address");
    snprintf(l->addr, sizeof l->addr, "%s:%d", bind_s, (int)port);

    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", (int)port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(bind_s, port_s, &hints, &res);
    if (gai != 0)
        return oct_err(eb, -EADDRNOTAVAIL, "Failed to bind to %s: cannot resolve '%s': %s", l->addr,
                       bind_s, gai_strerror(gai));
    int err = EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd =
            socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        if (reuse) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            l->fd = fd;
            break;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (l->fd < 0) return oct_err(eb, -err, "Failed to bind to %s: %s", l->addr, strerror(err));
    return 0;
}

int listener_listen(listener_t *l, oct_errbuf_t *eb)
{
    if (listen(l->fd, l->backlog) == 0) return 0;
    int err = errno;
    return oct_err(eb, -err, "Failed to bind to %s: %s", l->addr, strerror(err));
}

int listener_accept(listener_t *l, struct sockaddr_storage *addr, socklen_t *len)
{
    *len = sizeof *addr;
    int fd = accept4(l->fd, (struct sockaddr *)addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == EWOULDBLOCK) e = EAGAIN;
        /* A connection reset while queued is the client's business, not ours. */
        if (e == ECONNABORTED || e == EINTR || e == EPROTO) e = EAGAIN;
        return -e;
    }
    int one = 1;
    if (l->tcp_no_delay && (addr->ss_family == AF_INET || addr->ss_family == AF_INET6))
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (l->keep_alive) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return fd;
}

void listener_close(listener_t *l)
{
    if (l->fd >= 0) close(l->fd);
    l->fd = -1;
}
