/* telnet.h -- the telnet-style line protocol of one connection: `put`,
 * `version`, `stats`, `help`, `dropcaches`, `exit`, `diediedie`, and
 * OpenTSDB's replies and error lines (docs/telnet.md).
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

#include "common/bytes.h"
#include "common/strbuf.h"
#include "server/tsd.h"
#include "tsdb/write.h"

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

/* As telnet_line, for a line whose bytes stay valid and unchanged until
 * the session's next telnet_flush (the transport's read buffer, when it
 * flushes before reading into it again): a put is batched without a copy
 * of its bytes. */
telnet_action_t telnet_line_stable(telnet_session_t *s, const char *line, size_t len,
                                   oct_strbuf_t *out);

/* Appends OpenTSDB's telnet error line "<cmd>: <kind>: <msg>\n" (e.g. "put:
 * invalid value: ...") to out: the one shape of every command's errors. */
void telnet_error_line(oct_strbuf_t *out, const char *cmd, const char *kind, const char *msg);

/* Commits batched puts; appends their error lines to out. */
void telnet_flush(telnet_session_t *s, oct_strbuf_t *out);

/* The tokenizer of one `put` line, a pure function (no allocation, no
 * state, any thread): 'line' is the whole line without its line end, "put"
 * first (leading spaces allowed), e.g. "put sys.cpu 1356998400 42 host=a".
 * Tokens are separated by runs of spaces; the first three after "put" are
 * metric, timestamp (seconds, milliseconds or "s.fff") and value, every
 * further one a tag k=v with exactly one '=' and both sides non-empty.
 * On success returns 0 and fills dp: metric and tag slices point into
 * 'line'; tags[0..2*dp->n_tags) receives k0, v0, k1, v1, ... and dp->tags
 * points at it. 'max_tags' is the number of SLICES 'tags' has room for (two
 * per tag). The metric and tag names are not validated here (the write
 * path does that, with OpenTSDB's messages). Errors, with OpenTSDB's text
 * (without the "put: ...: " prefix) in errbuf (errcap bytes, NUL-terminated,
 * truncated; errbuf may be NULL when errcap is 0):
 *   OCT_EINVAL  "illegal argument": not a put line, too few tokens, a bad
 *               tag, a bad timestamp, a NaN/Infinite value
 *   OCT_EPARSE  "invalid value": a value or timestamp that is not a number
 *   OCT_ENOSPC  more tags than max_tags / 2 */
int telnet_parse_put(const char *line, size_t len, tsdb_dp_t *dp, oct_slice_t *tags,
                     size_t max_tags, char *errbuf, size_t errcap);

/* Longest accepted line, bytes (OpenTSDB: 1024; octsdb is more generous
 * so that 8 long tags fit, see docs/compat.md). */
#define TELNET_MAX_LINE 65536

#endif
