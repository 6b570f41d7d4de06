/* telnet.h -- the telnet-style line protocol of one connection: `put`,
 * `version`, `stats`, `help`, `dropcaches`, `exit`, `diediedie`, and
 * OpenTSDB's replies and error lines (reference §6).
 *
 * The transport (the worker loop) splits the byte stream into lines (LF or
 * CRLF, over-long lines answered with an error and skipped) and calls
 * telnet_line for each. Consecutive `put` lines are batched in the session
 * and handed to the write path together (tsdb_put_batch) when telnet_flush
 * is called -- after the lines of one read, or before any other command, so
 * replies keep their order. Replies are appended to 'out'; the transport
 * sends them and never blocks on a client that does not read (collectd,
 * tcollector): when too much is pending, replies are dropped. */
#ifndef OCT_SERVER_TELNET_H
#define OCT_SERVER_TELNET_H

#include <stddef.h>

#include "common/strbuf.h"
#include "server/tsd.h"

typedef struct telnet_session telnet_session_t;

typedef enum {
    TELNET_CONTINUE = 0,
    TELNET_CLOSE,    /* `exit`: close this connection after sending 'out' */
    TELNET_SHUTDOWN, /* `diediedie` (when allowed): stop the daemon */
} telnet_action_t;

telnet_session_t *telnet_session_new(tsd_ctx_t *tsd);
void telnet_session_free(telnet_session_t *s);

/* One line without its line end ('\r' already stripped). */
telnet_action_t telnet_line(telnet_session_t *s, const char *line, size_t len, oct_strbuf_t *out);

/* Commits batched puts; appends their error lines to out. */
void telnet_flush(telnet_session_t *s, oct_strbuf_t *out);

/* Longest accepted line, bytes (OpenTSDB: 1024; octsdb is more generous
 * so that 8 long tags fit, see docs/compat.md). */
#define TELNET_MAX_LINE 65536

#endif
