/* testutil.h -- helpers shared by the cmocka test programs: temp dirs that
 * clean themselves up, hex conversion for byte-vector assertions, and running
 * the real octsdb binary. cmocka must be included before this header. */
#ifndef OCT_TESTUTIL_H
#define OCT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path.
 * tu_rmrf() removes it recursively. */
char *tu_tempdir(void);
void tu_rmrf(const char *path);

/* Parses "00 00 01 50E2" (spaces ignored) into out; returns bytes written or -1. */
int tu_unhex(const char *hex, uint8_t *out, size_t cap);
/* Upper-case hex of buf into a static thread-local string (for messages). */
const char *tu_hex(const uint8_t *buf, size_t n);

/* Parses "k=v k=v" (space-separated) into slices over s, key then value at
 * out[2i], out[2i+1]; s must stay alive. Returns the number of pairs. */
size_t tu_split_tags(const char *s, oct_slice_t *out);

/* Runs the octsdb binary ($OCTSDB_BIN) with argv (NULL-terminated, without
 * argv[0]); captures stdout into *out (malloc'd, NUL-terminated). Returns the
 * exit status, or -1 if it could not run. */
int tu_run_octsdb(char **out, const char *const argv[]);
/* The same with stderr captured into *err instead, for a command expected to
 * stop by itself: after timeout_s seconds SIGALRM ends it (status -1). */
int tu_run_octsdb_stderr(char **err, const char *const argv[], unsigned timeout_s);

/* ---- the real daemon on a loopback port ------------------------------- */

typedef struct {
    int pid;
    int port;
    char *dir;      /* data dir (malloc'd); kept across restarts */
    char log[4096]; /* path of the daemon's stderr log */
} tu_tsd_t;

/* Starts `octsdb tsd --bind=127.0.0.1 --port=<free port> --datadir=<dir>`
 * plus extra (NULL-terminated, may be NULL) and waits until it accepts
 * connections (at most 20 s). A NULL t->dir gets a fresh temp dir. Returns 0
 * or -1 (the log is printed to stderr then). */
int tu_tsd_start(tu_tsd_t *t, const char *const *extra);
/* SIGTERM and wait (clean shutdown); returns the exit status. */
int tu_tsd_stop(tu_tsd_t *t);
/* SIGKILL and wait. */
void tu_tsd_kill(tu_tsd_t *t);
/* Copies the daemon's log (its stderr since the first start) to stderr. */
void tu_tsd_print_log(const tu_tsd_t *t);
/* Stops if running and removes the data dir. */
void tu_tsd_destroy(tu_tsd_t *t);

/* A connected TCP socket to 127.0.0.1:port, or -1. */
int tu_connect(int port);
/* Writes all of buf; returns 0 or -1. */
int tu_send_all(int fd, const void *buf, size_t n);
/* Reads until 'n' bytes, EOF, or timeout_ms of silence; returns bytes read
 * into buf (NUL-terminated; cap includes the NUL). */
size_t tu_recv_some(int fd, char *buf, size_t cap, int timeout_ms);

/* ---- telnet ------------------------------------------------------------- */

/* Start of the first of the two lines of the daemon's `version` reply. The
 * daemon answers telnet lines in order, so a `version` sent after some lines
 * marks the end of their replies. */
#define TU_VERSION_HEAD "net.opentsdb.tools octsdb "

/* Reads fd into buf until it holds 'needle' and the line it starts is complete
 * (both lines for TU_VERSION_HEAD), or about timeout_ms passed. Binary-safe:
 * an unknown command is echoed back, whatever bytes it holds. Returns the
 * bytes read (buf NUL-terminated; cap includes the NUL). */
size_t tu_recv_until(int fd, char *buf, size_t cap, const char *needle, int timeout_ms);

/* Sends printf(fmt, ...) then "version\n" and waits (20 s at most: the
 * daemon may be under load) for the version reply. Returns every reply
 * before it, NUL-terminated in a static 1 MiB buffer that the next call
 * reuses; *version (if not NULL) points to the version reply itself, in the
 * same buffer. Fails the test (cmocka) if no version reply came. Only from
 * the test's own thread. */
const char *tu_telnet_tx(int fd, const char **version, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One HTTP/1.1 request with `Connection: close`. headers: extra header lines
 * each ending in "\r\n" (or NULL). Body may be NULL. Returns the status code
 * (or -1), the response body in *resp (malloc'd, all of it even when binary,
 * NUL-terminated; may be NULL) and, if hdrs is non-NULL, the raw response headers (malloc'd). */
int tu_http(int port, const char *method, const char *target, const char *headers, const void *body,
            size_t body_len, char **resp, char **hdrs);

#endif
