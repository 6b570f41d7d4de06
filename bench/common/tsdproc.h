/* tsdproc.h -- the real daemon as a benchmark runs it: `octsdb tsd` on a
 * free loopback port with a fresh temp data dir (plus any extra flags),
 * its log, a clean stop, and a sync put that returns once everything
 * accepted before it is durable. */
#ifndef OCT_BENCH_TSDPROC_H
#define OCT_BENCH_TSDPROC_H

typedef struct {
    int pid, port;
    char dir[256];
    char log[300];
    long rss_start_kb; /* VmRSS when it started listening */
} tsdproc_t;

/* Starts `bin tsd --bind=127.0.0.1 --port=P --datadir=/tmp/<prefix>.XXXXXX
 * --auto-metric` plus extra (NULL-terminated, may be NULL) and waits until
 * it listens. 0, or -1 (its log printed). */
int tsdproc_start(tsdproc_t *d, const char *bin, const char *prefix, const char *const *extra);
/* Copies the daemon's log to stderr. */
void tsdproc_print_log(const tsdproc_t *d);
/* SIGTERM, wait (SIGKILL after 30 s), remove the data dir and log. */
void tsdproc_stop(tsdproc_t *d);
/* POST /api/put?sync=true with one point; returns the status or -1. */
int tsdproc_sync_put(int port);

#endif
