/* conn.h -- one client connection of a worker loop (private to the server
 * module): the telnet-style byte stream cut into lines, and the replies
 * sent without ever blocking.
 *
 *   NEW --first byte 'A'..'Z'--> handed to libmicrohttpd (leaves the loop)
 *    |
 *    +--any other byte--> TELNET --EOF, `exit`, `diediedie`--> CLOSING --> closed
 *                                                  (replies sent, or 5 s passed)
 *
 * Lines end in LF; a CR before it is dropped (collectd sends CRLF). A line
 * longer than TELNET_MAX_LINE is answered with CONN_LINE_TOO_LONG and
 * skipped up to its newline; the connection stays usable. An incomplete
 * line at EOF is dropped, as OpenTSDB does (it may be a truncated put).
 *
 * Replies wait in 'out'. When the client does not read them (collectd and
 * tcollector never do), at most CONN_OUT_CAP bytes are kept and further
 * replies are dropped, whole lines at a time; reading and storing puts go
 * on regardless. */
#ifndef OCT_SERVER_CONN_H
#define OCT_SERVER_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/strbuf.h"
#include "server/telnet.h"
#include "server/tsd.h"

typedef enum { CONN_NEW = 0, CONN_TELNET, CONN_CLOSING } conn_state_t;

typedef struct conn {
    struct conn *prev, *next; /* the owning loop's list */
    int fd;
    uint8_t state;        /* conn_state_t */
    uint8_t skipping;     /* discarding the rest of an over-long line */
    uint8_t want_out;     /* EPOLLOUT is registered */
    uint8_t closing_sent; /* CLOSING: epoll interest already switched */
    int64_t active_ms;    /* last read or write (CLOCK_MONOTONIC) */
    int64_t deadline_ms;  /* CLOSING: give up sending after this */
    telnet_session_t *sess;
    char *partial; /* an incomplete line carried to the next read (malloc) */
    size_t partial_len, partial_cap;
    oct_strbuf_t out; /* replies; bytes [out_off, out.len) not sent yet */
    size_t out_off;
    uint64_t dropped_replies; /* bytes of replies dropped for a non-reading client */
    socklen_t addrlen;
    struct sockaddr_storage addr;
} conn_t;

#define CONN_OUT_CAP    (256u * 1024u) /* pending reply bytes kept per connection */
#define CONN_READ_CHUNK (256u * 1024u) /* bytes per recv; the loop's scratch size */
#define CONN_STR_(x)    #x
#define CONN_STR(x)     CONN_STR_(x)
#define CONN_LINE_TOO_LONG                                                                         \
    "error: line too long (over " CONN_STR(TELNET_MAX_LINE) " bytes), skipped\n"

/* Results of conn_telnet_readable. */
enum {
    CONN_R_OK = 0,  /* nothing more to read now */
    CONN_R_EOF,     /* the client closed its side: send what is pending, then close */
    CONN_R_ERROR,   /* socket error: close now */
    CONN_R_CLOSE,   /* `exit`: send what is pending, then close */
    CONN_R_SHUTDOWN /* `diediedie`: as CLOSE, and stop the daemon */
};

/* Reads up to max_reads times (stopping at EAGAIN), runs every complete
 * line through telnet_line, then telnet_flush, and trims 'out' to
 * CONN_OUT_CAP. scratch holds CONN_READ_CHUNK bytes (the loop's). */
int conn_telnet_readable(conn_t *c, tsd_ctx_t *tsd, char *scratch, int max_reads);

/* Runs the bytes data[0..len) as if read from the socket (used by
 * conn_telnet_readable; exposed for tests of the framing). Returns
 * TELNET_CONTINUE, TELNET_CLOSE or TELNET_SHUTDOWN; lines after a CLOSE or
 * SHUTDOWN are not run. Does not call telnet_flush. */
telnet_action_t conn_telnet_input(conn_t *c, tsd_ctx_t *tsd, const char *data, size_t len);

/* Sends pending replies without blocking. Returns 0 when nothing is
 * pending, 1 when some remains (wait for EPOLLOUT), -1 on a socket error. */
int conn_send(conn_t *c, int64_t now_ms);

/* Closes the socket (if still open) and frees the connection and its session. */
void conn_free(conn_t *c);

#endif
