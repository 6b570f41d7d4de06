/* conn.c -- telnet-style framing and non-blocking replies (see conn.h).
 *
 * Reads land in the loop's scratch buffer, so an idle connection holds no
 * read buffer at all. Complete lines are handed to telnet_line_stable
 * straight from the scratch buffer, and the session's batch is flushed
 * before the next read reuses it, so put lines are never copied; only the
 * incomplete tail of a read is copied, into c->partial, and the next read
 * completes it. Finding the newline never rescans bytes already known to
 * hold none, so a line dribbled in one byte at a time costs linear time, and
 * a line that passes TELNET_MAX_LINE is refused as soon as it does (not when
 * its newline finally arrives). */
#include "server/conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xmalloc.h"

/* The partial buffer is kept between reads (a batch split across TCP
 * segments leaves a tail on nearly every read), unless it grew large. */
#define CONN_PARTIAL_KEEP 4096

/* 'stable': the line's bytes stay valid until the next telnet_flush. */
static telnet_action_t conn_run_line(conn_t *c, tsd_ctx_t *tsd, const char *line, size_t len,
                                     int stable)
{
    if (len > 0 && line[len - 1] == '\r') len--;
    if (len > TELNET_MAX_LINE) {
        oct_strbuf_puts(&c->out, CONN_LINE_TOO_LONG);
        return TELNET_CONTINUE;
    }
    (void)tsd; /* telnet_line counts TSD_CTR_RPC_TELNET */
    return stable ? telnet_line_stable(c->sess, line, len, &c->out)
                  : telnet_line(c->sess, line, len, &c->out);
}

/* Appends to the incomplete line; refuses (and starts skipping) once it is
 * longer than any acceptable line plus its CR. */
static void conn_partial_add(conn_t *c, const char *p, size_t n)
{
    if (c->partial_len + n > (size_t)TELNET_MAX_LINE + 1) {
        oct_strbuf_puts(&c->out, CONN_LINE_TOO_LONG);
        c->skipping = 1;
        c->partial_len = 0;
        return;
    }
    if (c->partial_len + n > c->partial_cap) {
        size_t cap = c->partial_cap ? c->partial_cap : 256;
        while (cap < c->partial_len + n)
            cap *= 2;
        c->partial = xrealloc(c->partial, cap);
        c->partial_cap = cap;
    }
    memcpy(c->partial + c->partial_len, p, n);
    c->partial_len += n;
}

/* conn_telnet_input; 'stable': data stays valid until the caller's next
 * telnet_flush, so complete lines in it are batched without a copy (lines
 * completed from c->partial are always copied: the buffer is reused). */
static telnet_action_t conn_input(conn_t *c, tsd_ctx_t *tsd, const char *data, size_t len,
                                  int stable)
{
    const char *p = data, *end = data + len;
    if (c->skipping) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return TELNET_CONTINUE;
        c->skipping = 0;
        p = nl + 1;
    }
    if (c->partial_len > 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            conn_partial_add(c, p, (size_t)(end - p));
            return TELNET_CONTINUE;
        }
        conn_partial_add(c, p, (size_t)(nl - p));
        p = nl + 1;
        telnet_action_t act = TELNET_CONTINUE;
        if (c->skipping) {
            c->skipping = 0; /* the over-long line just ended */
        } else {
            act = conn_run_line(c, tsd, c->partial, c->partial_len, 0);
        }
        c->partial_len = 0;
        if (c->partial_cap > CONN_PARTIAL_KEEP) {
            free(c->partial);
            c->partial = NULL;
            c->partial_cap = 0;
        }
        if (act != TELNET_CONTINUE) return act;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            conn_partial_add(c, p, (size_t)(end - p)); /* may start skipping */
            break;
        }
        telnet_action_t act = conn_run_line(c, tsd, p, (size_t)(nl - p), stable);
        p = nl + 1;
        if (act != TELNET_CONTINUE) return act;
    }
    return TELNET_CONTINUE;
}

telnet_action_t conn_telnet_input(conn_t *c, tsd_ctx_t *tsd, const char *data, size_t len)
{
    return conn_input(c, tsd, data, len, 0);
}

/* Keeps at most CONN_OUT_CAP pending bytes, cutting at a line end so that a
 * client that reads late still sees whole lines. */
static void conn_trim_out(conn_t *c)
{
    size_t pending = c->out.len - c->out_off;
    if (pending <= CONN_OUT_CAP) return;
    size_t keep = c->out_off + CONN_OUT_CAP;
    while (keep > c->out_off && c->out.ptr[keep - 1] != '\n')
        keep--;
    c->dropped_replies += c->out.len - keep;
    c->out.len = keep;
    c->out.ptr[keep] = '\0';
}

int conn_telnet_readable(conn_t *c, tsd_ctx_t *tsd, char *scratch, int max_reads)
{
    int rc = CONN_R_OK;
    for (int i = 0; i < max_reads; i++) {
        ssize_t r = recv(c->fd, scratch, CONN_READ_CHUNK, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) rc = CONN_R_ERROR;
            break;
        }
        if (r == 0) {
            rc = CONN_R_EOF;
            break;
        }
        /* the puts of this read point into scratch: committed before the
         * next read reuses it */
        telnet_action_t act = conn_input(c, tsd, scratch, (size_t)r, 1);
        telnet_flush(c->sess, &c->out);
        if (act == TELNET_CLOSE || act == TELNET_SHUTDOWN) {
            rc = act == TELNET_CLOSE ? CONN_R_CLOSE : CONN_R_SHUTDOWN;
            break;
        }
        if ((size_t)r < CONN_READ_CHUNK) break; /* drained the socket: don't pay for an EAGAIN */
    }
    telnet_flush(c->sess, &c->out);
    conn_trim_out(c);
    return rc;
}

int conn_send(conn_t *c, int64_t now_ms)
{
    while (c->out_off < c->out.len) {
        ssize_t w = send(c->fd, c->out.ptr + c->out_off, c->out.len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            return -1;
        }
        c->out_off += (size_t)w;
        c->active_ms = now_ms;
    }
    if (c->out_off == c->out.len) {
        c->out_off = 0;
        oct_strbuf_reset(&c->out);
        if (c->out.cap > 64 * 1024) oct_strbuf_free(&c->out); /* don't keep a burst's buffer */
        return 0;
    }
    if (c->out_off > c->out.len / 2) { /* keep the pending bytes at the front */
        size_t rest = c->out.len - c->out_off;
        memmove(c->out.ptr, c->out.ptr + c->out_off, rest);
        c->out.len = rest;
        c->out.ptr[rest] = '\0';
        c->out_off = 0;
    }
    return 1;
}

void conn_free(conn_t *c)
{
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    if (c->sess) telnet_session_free(c->sess);
    free(c->partial);
    oct_strbuf_free(&c->out);
    free(c);
}
