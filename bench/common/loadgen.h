/* loadgen.h -- the one load generator of the benchmarks: the wire bytes of
 * an ingest mode, built once, and the sender that writes them to a system
 * over N connections as fast as the sockets take them.
 *
 * Modes: telnet `put` lines; POST /api/put with JSON arrays of 50 or 500
 * points, plain or gzip'd (putgen.h makes the points). A payload is the
 * bytes of one connection: a slice of the fleet's hosts, every round, so
 * each series' points arrive in time order on one connection.
 *
 * Senders: one thread per connection, non-blocking socket, poll(2). HTTP
 * keeps the connection alive with up to LOADGEN_HTTP_WINDOW requests in
 * flight and counts answers by status. Telnet has two ways to know the
 * system is done with the connection: octsdb answers `version` after every
 * put before it (LOADGEN_TELNET_VERSION; only `put:` lines are errors),
 * while a peer is sent everything, the write side is shut down and the
 * connection read until the peer closes it (LOADGEN_TELNET_CLOSE; every
 * line is an error, as the peers answer nothing to a good put). Replies
 * are read all along so that no system has to drop them.
 *
 * Ownership: payloads own their buffers (loadgen_payloads_free); a
 * loadgen_conn_t borrows its payload, which must outlive the sender. */
#ifndef OCT_BENCH_LOADGEN_H
#define OCT_BENCH_LOADGEN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "common/putgen.h"

#define LOADGEN_HTTP_WINDOW 16

typedef enum {
    LOADGEN_TELNET,
    LOADGEN_JSON50,
    LOADGEN_JSON500,
    LOADGEN_JSON50GZ,
    LOADGEN_JSON500GZ,
    LOADGEN_N_MODES
} loadgen_mode_t;

/* "telnet", "json50", "json500", "json50gz", "json500gz". */
const char *loadgen_mode_name(loadgen_mode_t m);

/* One connection's bytes. */
typedef struct {
    putgen_buf_t data;
    size_t *req_end; /* http: end offset of each request in data (malloc'd) */
    size_t n_req;
    size_t points;
} loadgen_payload_t;

/* Fills pl[0..conns) with mode m's bytes of the fleet cfg: connection c gets
 * hosts [hosts*c/conns, hosts*(c+1)/conns) for `rounds` rounds. With
 * max_points > 0 the whole set is cut to that many points (the last
 * connections get fewer). pl's previous content is overwritten. */
void loadgen_build(const putgen_cfg_t *cfg, loadgen_mode_t m, size_t conns, size_t rounds,
                   size_t max_points, loadgen_payload_t *pl);

/* Appends raw bytes as one more telnet payload's content (e.g. a data set
 * that putgen does not make) and counts `points` for them. */
void loadgen_append_telnet(loadgen_payload_t *pl, const char *text, size_t len, size_t points);

void loadgen_payloads_free(loadgen_payload_t *pl, size_t conns);

typedef enum {
    LOADGEN_TELNET_VERSION, /* send `version` last; done at its "Built on " reply */
    LOADGEN_TELNET_CLOSE,   /* shut the write side; done when the system closes */
} loadgen_telnet_end_t;

/* One sender. Set the inputs, then loadgen_start. */
typedef struct {
    /* inputs */
    const loadgen_payload_t *pl;
    int port;
    int http; /* the payload is HTTP requests */
    loadgen_telnet_end_t telnet_end;
    int ok_status;  /* http: the status that means "accepted"; 0 = any 2xx */
    int timeout_ms; /* longest wait for the socket; 0 = 60 s */
    /* results, valid once finished is set (or after loadgen_join) */
    size_t ok, failed; /* http: accepted / other requests; telnet: points minus error lines */
    int err;           /* errno of a connection failure, 0 if none */
    double done_s;     /* bench_now_s() when the system was done with the connection */
    atomic_int finished;
    /* private */
    pthread_t th;
    int started;
} loadgen_conn_t;

/* Starts one thread per sender. Returns 0, or -1 if a thread could not be
 * created (the ones started are joined). */
int loadgen_start(loadgen_conn_t *c, size_t n);

/* How many of the n senders have finished (does not block). */
size_t loadgen_finished(loadgen_conn_t *c, size_t n);

/* Totals over senders after they are joined. */
typedef struct {
    size_t ok, failed;
    int err;       /* the last sender error, 0 if none */
    double last_s; /* the latest done_s */
} loadgen_totals_t;

/* Waits for every sender and sums their results. */
void loadgen_join(loadgen_conn_t *c, size_t n, loadgen_totals_t *out);

#endif
