/* tsd.h -- the TSD daemon: one port (tsd.network.port, 4242) speaking both
 * the telnet-style line protocol and HTTP/1.1, told apart by each
 * connection's first byte as OpenTSDB does ('A'..'Z' = HTTP).
 *
 * Threads: an acceptor that classifies new connections, telnet worker loops
 * (epoll, tsd.network.worker_threads), and libmicrohttpd's own thread pool
 * for HTTP (handed the sockets the acceptor classified as HTTP). A handler
 * may block (e.g. /api/put?sync waiting for the log) without stalling other
 * connections. */
#ifndef OCT_SERVER_TSD_H
#define OCT_SERVER_TSD_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/config.h"
#include "server/stats_latency.h"
#include "tsdb/tsdb.h"

typedef enum { TSD_MODE_RW = 0, TSD_MODE_RO, TSD_MODE_WO } tsd_mode_t;

/* Counters shown by /api/stats, the telnet `stats` command and /metrics (server/stats.h; every
 * name in docs/stats.md). XX(enum, "tsd.<name>", "extra tag") */
#define TSD_COUNTER_MAP(XX)                                                                        \
    XX(CONN_TELNET, "connectionmgr.connections", "type=telnet")                                    \
    XX(CONN_HTTP, "connectionmgr.connections", "type=http")                                        \
    XX(CONN_OPEN, "connectionmgr.connections", "type=open")                                        \
    XX(CONN_REJECTED, "connectionmgr.connections", "type=rejected")                                \
    XX(RPC_TELNET, "rpc.received", "type=telnet")                                                  \
    XX(RPC_HTTP, "rpc.received", "type=http")                                                      \
    XX(RPC_PUT, "rpc.received", "type=put")                                                        \
    XX(RPC_HTTP_PUT, "http.latency_put.count", "")                                                 \
    XX(RPC_ERRORS_TELNET, "rpc.errors", "type=telnet")                                             \
    XX(RPC_EXCEPTIONS, "rpc.exceptions", "")                                                       \
    XX(PUT_INVALID_VALUES, "rpc.errors", "type=invalid_values")                                    \
    XX(PUT_ILLEGAL_ARGUMENTS, "rpc.errors", "type=illegal_arguments")                              \
    XX(PUT_UNKNOWN_METRICS, "rpc.errors", "type=unknown_metrics")                                  \
    XX(QUERY_SUCCESS, "http.query.success", "")                                                    \
    XX(QUERY_INVALID, "http.query.invalid_requests", "")                                           \
    XX(QUERY_EXCEPTIONS, "http.query.exceptions", "")                                              \
    XX(QUERY_DPS, "query.datapoints", "type=emitted")

typedef enum {
#define TSD_CTR_ENUM(e, name, tag) TSD_CTR_##e,
    TSD_COUNTER_MAP(TSD_CTR_ENUM)
#undef TSD_CTR_ENUM
        TSD_CTR_COUNT
} tsd_counter_t;

/* What every protocol handler sees. Owned by tsd_run; handlers borrow it. */
typedef struct tsd_ctx {
    tsdb_t *db;
    const oct_config_t *cfg;
    tsd_mode_t mode;
    /* tsd.core.enable_api / enable_ui (--disable-api, --disable-ui): without
     * the API every /api path is 404; without the UI the legacy routes are
     * (/, /s/, /q, /logs, /stats, /version, /aggregators, /suggest). */
    int enable_api, enable_ui;
    int64_t started_s;   /* Unix seconds */
    char hostname[256];  /* for stats tags */
    atomic_int shutdown; /* set by signals or `diediedie` */
    atomic_uint_fast64_t counters[TSD_CTR_COUNT];
    stats_latency_t lat_http;      /* every HTTP request (tsd.http.latency_*pct type=all) */
    stats_latency_t lat_graph;     /* /q (type=graph) */
    struct stats_queries *queries; /* /api/stats/query (server/stats_query.h) */
} tsd_ctx_t;

static inline void tsd_count(tsd_ctx_t *t, tsd_counter_t c, uint64_t n)
{
    atomic_fetch_add_explicit(&t->counters[c], n, memory_order_relaxed);
}

/* Asks the daemon to stop (flushing what it holds). Async-signal-safe. */
void tsd_request_shutdown(tsd_ctx_t *t);

/* Runs the daemon with cfg (borrowed) until SIGTERM/SIGINT or `diediedie`.
 * Logs one line per event to stderr, "Ready to serve on <addr>:<port>" once
 * listening. Returns 0 after a clean shutdown, or an error (port taken,
 * data dir unusable or locked) with the reason in eb. */
int tsd_run(const oct_config_t *cfg, oct_errbuf_t *eb);

#endif
