/* tsd_client.h -- raw HTTP/1.1 and telnet helpers for the e2e tests of the
 * TSD: responses are read off the socket by hand so that tests see exactly
 * what went over the wire (100 Continue, pipelined answers, Connection:
 * close). Include after cmocka.h and testutil.h. */
#ifndef OCT_TESTS_E2E_TSD_CLIENT_H
#define OCT_TESTS_E2E_TSD_CLIENT_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

typedef struct {
    int fd;
    size_t len;
    char buf[1 << 20];
} tc_conn_t;

typedef struct {
    int status;
    char headers[8192]; /* raw header block, status line included */
    char body[1 << 16];
    size_t body_len;
} tc_resp_t;

static inline tc_conn_t *tc_open(int port)
{
    tc_conn_t *c = calloc(1, sizeof *c);
    c->fd = tu_connect(port);
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static inline void tc_close(tc_conn_t *c)
{
    if (!c) return;
    close(c->fd);
    free(c);
}

/* Reads more bytes into c->buf; returns bytes read, 0 on EOF or timeout. */
static inline size_t tc_fill(tc_conn_t *c, int timeout_ms)
{
    if (c->len >= sizeof c->buf - 1) return 0;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0) return 0;
    ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, 0);
    if (r <= 0) return 0;
    c->len += (size_t)r;
    c->buf[c->len] = '\0';
    return (size_t)r;
}

static inline void tc_consume(tc_conn_t *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
    c->buf[c->len] = '\0';
}

/* The value of header 'name' in a raw header block, copied into out. */
static inline int tc_header(const char *headers, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(headers, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        if (strncasecmp(h, name, nl) == 0 && h[nl] == ':') {
            h += nl + 1;
            while (*h == ' ')
                h++;
            const char *e = strstr(h, "\r\n");
            size_t n = e ? (size_t)(e - h) : strlen(h);
            if (n >= cap) n = cap - 1;
            memcpy(out, h, n);
            out[n] = '\0';
            return 1;
        }
    }
    return 0;
}

/* Reads one response (interim 1xx ones included) off c. Returns 0 or -1. */
static inline int tc_read_response(tc_conn_t *c, tc_resp_t *r, int timeout_ms)
{
    memset(r, 0, sizeof *r);
    char *end;
    while (!(end = strstr(c->buf, "\r\n\r\n")))
        if (!tc_fill(c, timeout_ms)) return -1;
    size_t hlen = (size_t)(end - c->buf) + 4;
    if (hlen >= sizeof r->headers) return -1;
    memcpy(r->headers, c->buf, hlen);
    r->headers[hlen] = '\0';
    if (sscanf(r->headers, "HTTP/1.%*d %d", &r->status) != 1) return -1;
    char v[64];
    size_t blen = 0;
    int until_eof = 0;
    if (tc_header(r->headers, "Content-Length", v, sizeof v)) {
        blen = strtoul(v, NULL, 10);
    } else if (r->status >= 200 && r->status != 204 && r->status != 304) {
        until_eof = 1;
    }
    tc_consume(c, hlen);
    if (until_eof) {
        while (tc_fill(c, timeout_ms)) {
        }
        blen = c->len;
    }
    while (c->len < blen)
        if (!tc_fill(c, timeout_ms)) return -1;
    if (blen >= sizeof r->body) return -1;
    memcpy(r->body, c->buf, blen);
    r->body[blen] = '\0';
    r->body_len = blen;
    tc_consume(c, blen);
    return 0;
}

static inline int tc_send(tc_conn_t *c, const void *p, size_t n)
{
    return tu_send_all(c->fd, p, n);
}

static inline int tc_sends(tc_conn_t *c, const char *s)
{
    return tu_send_all(c->fd, s, strlen(s));
}

/* Reads telnet replies until 'want' complete lines arrived (or timeout);
 * returns the bytes in c->buf, which the caller consumes. */
static inline size_t tc_read_lines(tc_conn_t *c, int want, int timeout_ms)
{
    for (;;) {
        int lines = 0;
        for (size_t i = 0; i < c->len; i++)
            lines += c->buf[i] == '\n';
        if (lines >= want) break;
        if (!tc_fill(c, timeout_ms)) break;
    }
    return c->len;
}

/* 1 if the peer closed the connection within timeout_ms (after any data). */
static inline int tc_wait_eof(tc_conn_t *c, int timeout_ms)
{
    char b[4096];
    for (;;) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0) return 0;
        ssize_t r = recv(c->fd, b, sizeof b, 0);
        if (r == 0) return 1;
        if (r < 0) return errno == ECONNRESET;
    }
}

static inline void tc_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs `octsdb tsd <args>` expecting it to fail: returns its exit status
 * (or -1 if it was still running after timeout_ms and had to be killed) and
 * its stderr in *err (malloc'd). */
static inline int tc_run_tsd_expect_exit(const char *const *args, char **err, int timeout_ms)
{
    const char *bin = getenv("OCTSDB_BIN");
    char path[] = "/tmp/octsdb-tsd-err-XXXXXX";
    int efd = mkstemp(path);
    if (!bin || efd < 0) return -2;
    const char *argv[32] = {bin, "tsd"};
    int n = 2;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(efd, 2);
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st = 0, status = -1;
    for (int waited = 0; waited < timeout_ms; waited += 20) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        tc_sleep_ms(20);
    }
    if (status == -1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    off_t sz = lseek(efd, 0, SEEK_END);
    *err = calloc(1, (size_t)sz + 1);
    if (pread(efd, *err, (size_t)sz, 0) < 0) (*err)[0] = '\0';
    close(efd);
    unlink(path);
    return status;
}

/* Compresses in[0..n) into out[0..cap) at level 6 and returns the length.
 * window_bits as zlib's deflateInit2: 15 + 16 a gzip stream, 15 a zlib one
 * (HTTP's "deflate"), -15 raw deflate. */
static inline size_t tc_deflate(const char *in, size_t n, uint8_t *out, size_t cap, int window_bits)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t len = cap - zs.avail_out;
    deflateEnd(&zs);
    return len;
}

/* 1 if the daemon's log file contains s. */
static inline int tc_log_contains(const char *log, const char *s)
{
    FILE *f = fopen(log, "r");
    if (!f) return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, s) != NULL;
    fclose(f);
    return found;
}

#endif
