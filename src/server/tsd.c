/* tsd.c -- the daemon's life: configuration -> listening socket -> data dir
 * -> HTTP server and worker loops -> accept until a signal -> clean stop.
 *
 * The port is bound before the data dir is opened, so "port taken" is
 * reported without touching the data, and clients that connect while a
 * large log is replayed wait in the backlog instead of being refused.
 *
 * Threads: this one (the caller of tsd_run) accepts and waits for signals
 * in one poll: the listening socket, a signalfd for SIGTERM/SIGINT (stop)
 * and SIGHUP (re-read the TLS certificate and key and the credentials file:
 * tsd_reload) (blocked in every thread, since the mask is set before any
 * thread starts) and an
 * eventfd that tsd_request_shutdown writes (`diediedie`). Accepted sockets
 * go to the worker loops (loop.c), which classify them.
 *
 * While it stops, a second SIGTERM/SIGINT is logged and ignored and a
 * third forces the exit (tsd_stop_watch_main).
 *
 * Stop order: close the listening socket; stop the loops (they run the
 * telnet lines already received and close); let libmicrohttpd finish the
 * requests in progress (new ones get 503); tsdb_close, which flushes.
 * With TLS (tls.h) the terminator stops handing streams to the loops before
 * they stop, and is stopped after HTTP, so the last replies get out. */
#include "server/tsd.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "server/listener.h"
#include "server/loop.h"
#include "server/stats_query.h"
#include "server/tls.h"
#include "server/tsd_addr.h"
#include "tsdb/retention.h"

#define TSD_HTTP_GRACE_MS 10000

/* The eventfd tsd_request_shutdown writes; one daemon per process. */
static volatile sig_atomic_t tsd_wake_fd = -1;

void tsd_request_shutdown(tsd_ctx_t *t)
{
    if (t) atomic_store(&t->shutdown, 1);
    int fd = tsd_wake_fd;
    if (fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(fd, &one, sizeof one); /* async-signal-safe */
        (void)w;
    }
}

/* Thousands of connections need thousands of descriptors: raise the soft
 * limit to the hard one. */
static void tsd_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            oct_log_warn("tsd", "cannot raise the open file limit: %s", strerror(errno));
    }
}

static int tsd_worker_threads(const oct_config_t *cfg)
{
    int64_t n = oct_config_get_int(cfg, "tsd.network.worker_threads");
    if (n > 0) return (int)n;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 ? (int)(2 * cpus) : 2; /* OpenTSDB's default: 2 x CPUs */
}

static tsd_mode_t tsd_mode(const oct_config_t *cfg)
{
    const char *m = oct_config_get(cfg, "tsd.mode");
    if (m && !strcasecmp(m, "ro")) return TSD_MODE_RO;
    if (m && !strcasecmp(m, "wo")) return TSD_MODE_WO;
    return TSD_MODE_RW;
}

/* Accepts everything pending. Returns 0, or 1 if descriptors ran out (the
 * caller stops polling the listener for a moment instead of spinning). */
static int tsd_accept_all(tsd_ctx_t *t, listener_t *l, tsd_loops_t *loops, int64_t limit)
{
    for (int i = 0; i < 1024; i++) {
        struct sockaddr_storage addr;
        socklen_t len;
        int fd = listener_accept(l, &addr, &len);
        if (fd == -EAGAIN) return 0;
        if (fd < 0) {
            if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
                oct_log_warn("tsd", "accept: %s; pausing for 100 ms", strerror(-fd));
                return 1;
            }
            oct_log_warn("tsd", "accept: %s", strerror(-fd));
            return 0;
        }
        uint64_t open = atomic_load_explicit(&t->counters[TSD_CTR_CONN_OPEN], memory_order_relaxed);
        if (limit > 0 && open >= (uint64_t)limit) {
            /* OpenTSDB closes connections over tsd.core.connections.limit at once. */
            tsd_count(t, TSD_CTR_CONN_REJECTED, 1);
            oct_log_debug("tsd", "connection limit %lld reached; closing a new connection",
                          (long long)limit);
            close(fd);
            continue;
        }
        tsd_count(t, TSD_CTR_CONN_OPEN, 1);
        loops_add(loops, fd, &addr, len);
    }
    return 0;
}

/* SIGHUP: what can change without a restart (docs/service.md, "Reload").
 * A file that fails to load is logged and its old contents stay in force. */
static void tsd_reload(tsd_tls_t *tls)
{
    oct_log_info("tsd", "Received SIGHUP, re-reading certificates and credentials");
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (auth_reload(&eb)) oct_log_error("tsd", "reload: %s", eb.msg);
    oct_errbuf_clear(&eb);
    if (tls_reload(tls, &eb))
        oct_log_error("tsd", "reload: %s (keeping the certificate loaded before)", eb.msg);
    else if (tls)
        oct_log_info("tsd", "reload: TLS certificate and key re-read");
}

/* Records where we listen in the data dir (docs/format/tsd-addr.md), for
 * commands that find it locked. Only a local data dir gets one; a failure
 * is a warning: the TSD serves anyway, commands then report the lock. */
static int tsd_addr_publish(const oct_config_t *cfg, const listener_t *l, const tsd_tls_t *tls)
{
    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    struct stat sb;
    if (!dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0;
    tsd_addr_t a = {.pid = (long)getpid()};
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof ss;
    if (getsockname(l->fd, (struct sockaddr *)&ss, &sl) != 0) return 0;
    uint16_t port_be = 0;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 s6;
        memcpy(&s6, &ss, sizeof s6);
        port_be = s6.sin6_port;
    } else if (ss.ss_family == AF_INET) {
        struct sockaddr_in s4;
        memcpy(&s4, &ss, sizeof s4);
        port_be = s4.sin_port;
    }
    a.port = ntohs(port_be);
    snprintf(a.host, sizeof a.host, "%s", oct_config_get(cfg, "tsd.network.bind"));
    a.https = tls && tls_required(tls);
    a.auth = oct_config_get_bool(cfg, "tsd.core.authentication.enable");
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (tsd_addr_write(dir, &a, &eb) != 0) {
        oct_log_warn("tsd", "cannot record the address in the data dir: %s", eb.msg);
        return 0;
    }
    return 1;
}

static const char *tsd_signame(int sig)
{
    return sig == SIGTERM  ? "SIGTERM"
           : sig == SIGINT ? "SIGINT"
           : sig == SIGHUP ? "SIGHUP"
                           : "a signal";
}

/* The signals that arrive while the TSD stops. An operator (or systemd's
 * KillMode, or a second Ctrl-C) repeating SIGTERM must not cut the flush
 * short: the next SIGTERM or SIGINT is logged and ignored, the one after
 * forces the exit at once (what kill -9 does: acknowledged points are in
 * the write-ahead log and replayed at the next start); SIGQUIT keeps its
 * default action (docs/service.md, "Stopping"). SIGHUP is ignored. */
typedef struct {
    int sfd, stop_fd; /* the signalfd; an eventfd that ends the watch */
    pthread_t th;
} tsd_stop_watch_t;

static void *tsd_stop_watch_main(void *arg)
{
    tsd_stop_watch_t *w = arg;
    int extra = 0;
    for (;;) {
        struct pollfd pfd[2] = {{.fd = w->sfd, .events = POLLIN},
                                {.fd = w->stop_fd, .events = POLLIN}};
        if (poll(pfd, 2, -1) < 0 && errno != EINTR) break;
        struct signalfd_siginfo si;
        while (read(w->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
            int sig = (int)si.ssi_signo;
            if (sig == SIGHUP) {
                oct_log_info("tsd", "Received SIGHUP while stopping: ignored");
            } else if (++extra == 1) {
                oct_log_warn("tsd",
                             "Received %s while stopping: ignored, the flush goes on (another "
                             "one, or SIGQUIT, stops at once without it)",
                             tsd_signame(sig));
            } else {
                oct_log_error("tsd",
                              "Received %s again while stopping: exiting now without the "
                              "flush (acknowledged points are in the write-ahead log)",
                              tsd_signame(sig));
                _exit(128 + sig);
            }
        }
        if (pfd[1].revents & POLLIN) break; /* after reading what was pending */
    }
    return NULL;
}

/* Returns 0 with the watch running, or -1 (no watch: signals stay pending). */
static int tsd_stop_watch_start(tsd_stop_watch_t *w, int sfd)
{
    w->sfd = sfd;
    w->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (sfd < 0 || w->stop_fd < 0) goto fail;
    if (pthread_create(&w->th, NULL, tsd_stop_watch_main, w) == 0) return 0;
fail:
    if (w->stop_fd >= 0) close(w->stop_fd);
    w->stop_fd = -1;
    return -1;
}

static void tsd_stop_watch_end(tsd_stop_watch_t *w)
{
    if (w->stop_fd < 0) return;
    uint64_t one = 1;
    ssize_t r = write(w->stop_fd, &one, sizeof one);
    (void)r;
    pthread_join(w->th, NULL);
    close(w->stop_fd);
}

int tsd_run(const oct_config_t *cfg, oct_errbuf_t *eb)
{
    oct_errbuf_clear(eb);
    if (oct_config_get_bool(cfg, "tsd.octsdb.verbose")) oct_log_set_level(OCT_LOG_DEBUG);
    /* Before anything is opened: an enabled plugin we lack stops us as it stops 2.4. */
    char **warns;
    size_t n_warns;
    int crc = oct_config_check(cfg, &warns, &n_warns, eb);
    if (crc) return crc;
    for (size_t i = 0; i < n_warns; i++)
        oct_log_warn("config", "%s", warns[i]);
    oct_config_warnings_free(warns, n_warns);
    int n_threads = tsd_worker_threads(cfg);
    int64_t conn_limit = oct_config_get_int(cfg, "tsd.core.connections.limit");
    tsd_raise_nofile();

    /* Signals: blocked here, before any thread exists, so every thread
     * inherits the mask and only the signalfd sees them. */
    sigset_t sigs, old_mask;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigaction(SIGPIPE, &ign, &old_pipe);

    int rc = 0;
    int sfd = -1, efd = -1;
    tsdb_t *db = NULL;
    tsd_ctx_t *t = NULL;
    tsd_http_t *http = NULL;
    tsd_loops_t *loops = NULL;
    tsd_tls_t *tls = NULL;
    listener_t l = {.fd = -1};
    int published = 0;

    sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (sfd < 0 || efd < 0) {
        rc = oct_err(eb, -errno, "cannot set up signal handling: %s", strerror(errno));
        goto leave;
    }
    tsd_wake_fd = efd;

    rc = listener_open(&l, cfg, eb);
    if (rc) goto leave;
    rc = tls_open(cfg, &tls, eb); /* a bad certificate stops us before the data is touched */
    if (rc) goto leave;

    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    oct_log_info("tsd", "Starting octsdb %s: data dir %s, %d worker threads, mode %s", OCT_VERSION,
                 dir ? dir : "?", n_threads, oct_config_get(cfg, "tsd.mode"));
    /* Credentials first: a broken security setting stops the daemon before
     * it touches the data or takes a client. */
    rc = auth_init(cfg, eb);
    if (rc) goto leave;
    /* tsd.mode=ro opens the store read-only (a read-only data dir works):
     * the series index for queries, no write-ahead log, no flush thread.
     * A dir that holds no database yet is created read-write as before, so
     * a ro TSD may start on an empty store. */
    unsigned open_flags = 0;
    if (tsd_mode(cfg) == TSD_MODE_RO) {
        rc = tsdb_exists(cfg, eb);
        if (rc < 0) goto leave;
        if (rc == 1) open_flags = TSDB_OPEN_READONLY | TSDB_OPEN_INDEX;
    }
    rc = tsdb_open(cfg, open_flags, &db, eb);
    if (rc) {
        if (!eb || !eb->msg[0])
            oct_err(eb, rc, "cannot open data dir %s: %s", dir ? dir : "?", oct_strerror(rc));
        goto leave;
    }
    uint64_t unreplayed = open_flags ? tsdb_wal_unreplayed_bytes(cfg) : 0;
    if (unreplayed)
        oct_log_warn("tsd",
                     "read-only mode: the write-ahead log holds %llu bytes of records that "
                     "are not in the store (a TSD that crashed, or one still running, left "
                     "them); their points are not shown until a read-write TSD or command "
                     "replays the log (docs/reliability.md, \"Read-only mode\")",
                     (unsigned long long)unreplayed);
    rc = listener_listen(&l, eb);
    if (rc) goto leave;

    t = xcalloc(1, sizeof *t);
    t->db = db;
    t->cfg = cfg;
    t->mode = tsd_mode(cfg);
    t->enable_api = oct_config_get_bool(cfg, "tsd.core.enable_api");
    t->enable_ui = oct_config_get_bool(cfg, "tsd.core.enable_ui");
    t->started_s = oct_clock_wall_ms() / 1000;
    if (gethostname(t->hostname, sizeof t->hostname - 1) != 0)
        snprintf(t->hostname, sizeof t->hostname, "localhost");
    atomic_init(&t->shutdown, 0);
    for (int i = 0; i < TSD_CTR_COUNT; i++)
        atomic_init(&t->counters[i], 0);
    stats_latency_init(&t->lat_http);
    stats_latency_init(&t->lat_graph);
    t->queries = stats_queries_new();

    rc = http_server_start(t, n_threads, &http, eb);
    if (rc) goto leave;
    rc = loops_start(t, http, n_threads, &loops, eb);
    if (rc) goto leave;
    if (tls) {
        rc = tls_start(tls, t, loops, eb);
        if (rc) goto leave;
        loops_set_tls(loops, tls);
        oct_log_info("tsd", "TLS on the same port%s", tls_required(tls) ? " (required)" : "");
    }

    rc = tsdb_retention_start(db, eb); /* a pass now, then every retention.interval_ms */
    if (rc) goto leave;
    published = tsd_addr_publish(cfg, &l, tls);
    oct_log_info("tsd", "Ready to serve on %s", l.addr);
    int64_t paused_until = 0;
    while (!atomic_load(&t->shutdown)) {
        int64_t now_ms = oct_clock_mono_ms();
        int listening = now_ms >= paused_until;
        struct pollfd pfd[3] = {{.fd = sfd, .events = POLLIN},
                                {.fd = efd, .events = POLLIN},
                                {.fd = listening ? l.fd : -1, .events = POLLIN}};
        int n = poll(pfd, 3, listening ? -1 : (int)(paused_until - now_ms));
        if (n < 0 && errno != EINTR) {
            oct_log_error("tsd", "poll: %s", strerror(errno));
            break;
        }
        if (pfd[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (si.ssi_signo == SIGHUP) {
                    tsd_reload(tls);
                } else {
                    oct_log_info("tsd", "Received %s, shutting down",
                                 tsd_signame((int)si.ssi_signo));
                    atomic_store(&t->shutdown, 1);
                }
            }
        }
        if (pfd[1].revents & POLLIN) {
            uint64_t v;
            ssize_t r = read(efd, &v, sizeof v);
            (void)r;
        }
        if (!atomic_load(&t->shutdown) && (pfd[2].revents & POLLIN) &&
            tsd_accept_all(t, &l, loops, conn_limit))
            paused_until = now_ms + 100;
    }

    oct_log_info("tsd", "Stopping: no new connections; finishing requests in progress");
    listener_close(&l);

leave:;
    tsd_stop_watch_t watch;
    tsd_stop_watch_start(&watch, sfd);
    if (published) tsd_addr_remove(oct_config_get(cfg, "tsd.storage.data_dir"), (long)getpid());
    listener_close(&l);
    tls_quiesce(tls); /* no hand-offs to the loops from here on */
    loops_stop(loops);
    http_server_stop(http, TSD_HTTP_GRACE_MS);
    tls_stop(tls); /* after the loops and HTTP: their last replies get out */
    if (db) {
        tsdb_close(db);
        if (rc == 0) oct_log_info("tsd", "Shutdown complete");
    }
    if (t) stats_queries_free(t->queries);
    free(t);
    tsd_stop_watch_end(&watch); /* signals still pending are read and logged */
    tsd_wake_fd = -1;
    if (sfd >= 0) close(sfd);
    if (efd >= 0) close(efd);
    sigaction(SIGPIPE, &old_pipe, NULL);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return rc;
}
