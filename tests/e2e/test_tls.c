/* test_tls.c -- optional TLS on the TSD's one port (docs/tls.md), against the
 * real daemon, with an OpenSSL client.
 *
 * The test makes its own self-signed certificate (EC P-256, CN=localhost)
 * with the OpenSSL API in a temp dir, and the client trusts exactly that
 * certificate and checks the host name, so a passing handshake proves the
 * daemon presented the configured certificate. Two daemons: "opt" (TLS
 * optional, tsd.core.socket.timeout=2 for the stalled-handshake case) and
 * "req" (TLS required, TLS 1.3 minimum, authentication on). Expected values
 * are the points the test itself writes and the texts of docs/tls.md and
 * docs/reliability.md ("Access").
 *
 * OCT_TLS_BENCH=<points> adds a throughput run: that many telnet puts over
 * plaintext and over TLS to the same daemon, wall time of each printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "testutil.h"
#include "tlsutil.h"
#include "tsd_client.h"

static char *g_dir; /* cert.pem, key.pem, other-key.pem, creds */
static char g_cert[4200], g_key[4200], g_other_key[4200], g_creds[4200];
static tu_tsd_t g_opt, g_req; /* TLS optional; TLS required + auth */
static SSL_CTX *g_cli;        /* trusts g_cert, checks "localhost" */

/* ---- certificates ---------------------------------------------------------- */

/* The daemons' certificate and key, and another key that does not match it. */
static int make_cert(void)
{
    tt_self_signed(g_cert, g_key, "localhost");
    EVP_PKEY *other = tt_key();
    tt_write_pem(g_other_key, NULL, other);
    EVP_PKEY_free(other);
    return 0;
}

/* ---- a TLS client ------------------------------------------------------------ */

typedef struct {
    int fd;
    SSL *ssl;
    size_t len;
    char buf[1 << 19];
} tl_t;

static void set_rcv_timeout(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* A verified TLS connection (ctx NULL: g_cli), or NULL. */
static tl_t *tl_open_ctx(int port, SSL_CTX *ctx)
{
    tl_t *c = calloc(1, sizeof *c);
    c->fd = tu_connect(port);
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    set_rcv_timeout(c->fd, 5000);
    c->ssl = SSL_new(ctx ? ctx : g_cli);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
    SSL_set1_host(c->ssl, "localhost");
    if (SSL_connect(c->ssl) != 1) {
        ERR_clear_error();
        SSL_free(c->ssl);
        close(c->fd);
        free(c);
        return NULL;
    }
    return c;
}

static tl_t *tl_open(int port)
{
    return tl_open_ctx(port, NULL);
}

static void tl_close(tl_t *c)
{
    if (!c) return;
    SSL_shutdown(c->ssl);
    SSL_free(c->ssl);
    close(c->fd);
    free(c);
}

static int tl_send(tl_t *c, const char *s)
{
    size_t n = strlen(s), done = 0;
    while (done < n) {
        int w = SSL_write(c->ssl, s + done, (int)(n - done));
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Reads more; returns bytes read, 0 on EOF, timeout or error. */
static size_t tl_fill(tl_t *c)
{
    if (c->len >= sizeof c->buf - 1) return 0;
    int r = SSL_read(c->ssl, c->buf + c->len, (int)(sizeof c->buf - 1 - c->len));
    if (r <= 0) {
        ERR_clear_error();
        return 0;
    }
    c->len += (size_t)r;
    c->buf[c->len] = '\0';
    return (size_t)r;
}

/* Reads until buf holds at least n newlines; returns 1 if it does. */
static int tl_lines(tl_t *c, int n)
{
    for (;;) {
        int k = 0;
        for (size_t i = 0; i < c->len; i++)
            k += c->buf[i] == '\n';
        if (k >= n) return 1;
        if (!tl_fill(c)) return 0;
    }
}

static void tl_consume_all(tl_t *c)
{
    c->len = 0;
    c->buf[0] = '\0';
}

/* Reads one HTTP response (Content-Length framed) off c. Returns the
 * status; body (NUL-terminated) into out; 'close' set if the server said
 * Connection: close. */
static int tl_response(tl_t *c, char *out, size_t cap, int *close_hdr)
{
    char *end;
    while (!(end = strstr(c->buf, "\r\n\r\n")))
        if (!tl_fill(c)) return -1;
    size_t hlen = (size_t)(end + 4 - c->buf);
    int status = -1;
    if (sscanf(c->buf, "HTTP/1.1 %d", &status) != 1) return -1;
    char hdrs[8192];
    snprintf(hdrs, sizeof hdrs, "%.*s", (int)hlen, c->buf);
    char v[64] = "";
    size_t blen = 0;
    if (tc_header(hdrs, "Content-Length", v, sizeof v)) blen = strtoul(v, NULL, 10);
    if (close_hdr)
        *close_hdr = tc_header(hdrs, "Connection", v, sizeof v) && !strcasecmp(v, "close");
    while (c->len < hlen + blen)
        if (!tl_fill(c)) return -1;
    snprintf(out, cap, "%.*s", (int)blen, c->buf + hlen);
    memmove(c->buf, c->buf + hlen + blen, c->len - hlen - blen);
    c->len -= hlen + blen;
    c->buf[c->len] = '\0';
    return status;
}

static int tl_http(tl_t *c, const char *method, const char *target, const char *headers,
                   const char *body, char *out, size_t cap, int *close_hdr)
{
    char req[8192];
    snprintf(req, sizeof req,
             "%s %s HTTP/1.1\r\nHost: localhost\r\n%sContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             method, target, headers ? headers : "", body ? strlen(body) : 0, body ? body : "");
    if (tl_send(c, req)) return -1;
    return tl_response(c, out, cap, close_hdr);
}

/* 1 if the server closes fd (EOF or reset) within ms, 0 if it is still open. */
static int closed_within(int fd, int ms)
{
    char b[4096];
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0) continue;
        ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) return 1;
    }
}

/* ---- fixtures ------------------------------------------------------------------ */

static char g_set_cert[4300], g_set_key[4300], g_set_creds[4300];

static int setup_all(void **state)
{
    (void)state;
    g_dir = tu_tempdir();
    snprintf(g_cert, sizeof g_cert, "%s/cert.pem", g_dir);
    snprintf(g_key, sizeof g_key, "%s/key.pem", g_dir);
    snprintf(g_other_key, sizeof g_other_key, "%s/other-key.pem", g_dir);
    snprintf(g_creds, sizeof g_creds, "%s/creds", g_dir);
    if (make_cert()) return -1;
    /* rw-token-123 (rw), as in test_auth.c: sha256sum of the token */
    FILE *f = fopen(g_creds, "w");
    if (!f) return -1;
    fputs("token 67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a63 rw\n", f);
    fclose(f);
    snprintf(g_set_cert, sizeof g_set_cert, "tsd.network.tls.certificate=%s", g_cert);
    snprintf(g_set_key, sizeof g_set_key, "tsd.network.tls.key=%s", g_key);
    snprintf(g_set_creds, sizeof g_set_creds, "tsd.core.authentication.credentials_file=%s",
             g_creds);

    const char *opt[] = {
        "--auto-metric", "--set", "tsd.network.tls.enable=true", "--set", g_set_cert, "--set",
        g_set_key,       "--set", "tsd.core.socket.timeout=2",   NULL};
    if (tu_tsd_start(&g_opt, opt)) return -1;
    const char *req[] = {"--auto-metric",
                         "--set",
                         "tsd.network.tls.enable=true",
                         "--set",
                         g_set_cert,
                         "--set",
                         g_set_key,
                         "--set",
                         "tsd.network.tls.required=true",
                         "--set",
                         "tsd.network.tls.min_version=TLSv1.3",
                         "--set",
                         "tsd.core.authentication.enable=true",
                         "--set",
                         g_set_creds,
                         NULL};
    if (tu_tsd_start(&g_req, req)) return -1;

    g_cli = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(g_cli, SSL_VERIFY_PEER, NULL);
    if (SSL_CTX_load_verify_locations(g_cli, g_cert, NULL) != 1) return -1;
    return 0;
}

static int teardown_all(void **state)
{
    (void)state;
    /* A clean stop with TLS connections behind us: exit status 0. */
    int st_opt = g_opt.pid > 0 ? tu_tsd_stop(&g_opt) : 0;
    int st_req = g_req.pid > 0 ? tu_tsd_stop(&g_req) : 0;
    if (st_opt || st_req) {
        fprintf(stderr, "daemon exit status %d / %d\n", st_opt, st_req);
        tu_tsd_print_log(&g_opt);
    }
    tu_tsd_destroy(&g_opt);
    tu_tsd_destroy(&g_req);
    SSL_CTX_free(g_cli);
    tu_rmrf(g_dir);
    free(g_dir);
    return st_opt || st_req ? -1 : 0;
}

/* The daemon's plaintext HTTP query body, for checking stored points. */
static char *query_plain(int port, const char *target)
{
    char *resp = NULL;
    int st = tu_http(port, "GET", target, NULL, NULL, 0, &resp, NULL);
    if (st != 200) {
        free(resp);
        return NULL;
    }
    return resp;
}

/* ---- tests ---------------------------------------------------------------------- */

/* telnet over TLS: puts are stored, `version` answers (OpenTSDB's version
 * text starts with "net.opentsdb"), the certificate verifies. */
static void telnet_over_tls(void **state)
{
    (void)state;
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    assert_int_equal(SSL_get_verify_result(c->ssl), X509_V_OK);
    assert_string_equal(SSL_get_version(c->ssl), "TLSv1.3");
    assert_int_equal(tl_send(c, "put tls.telnet 1356998400 42 host=a\r\n"
                                "put tls.telnet 1356998460 43.5 host=a\n"
                                "version\n"),
                     0);
    assert_true(tl_lines(c, 2));
    assert_true(strncmp(c->buf, "net.opentsdb", 12) == 0);
    assert_null(strstr(c->buf, "error"));
    /* the same session goes on: a bad put gets its error line */
    tl_consume_all(c);
    assert_int_equal(tl_send(c, "put tls.telnet notatime 1 host=a\n"), 0);
    assert_true(tl_lines(c, 1));
    assert_non_null(strstr(c->buf, "put:"));
    tl_close(c);
    char *body =
        query_plain(g_opt.port, "/api/query?start=1356998400&end=1356998460&m=sum:tls.telnet");
    assert_non_null(body);
    assert_non_null(strstr(body, "\"dps\":{\"1356998400\":42,\"1356998460\":43.5}"));
    free(body);
}

/* A telnet counter as `stats` reports it ("tsd.<name> <ts> <value> <tag>"). */
static long stat_value(int port, const char *name, const char *tag)
{
    int fd = tu_connect(port);
    if (fd < 0) return -1;
    tu_send_all(fd, "stats\n", 6);
    static char buf[1 << 16];
    tu_recv_some(fd, buf, sizeof buf, 500);
    close(fd);
    char key[128];
    snprintf(key, sizeof key, "%s ", name);
    for (char *p = buf; (p = strstr(p, key)); p++) {
        char *eol = strchr(p, '\n');
        if (!eol) break;
        *eol = '\0';
        long ts, v;
        int match = strstr(p, tag) != NULL;
        int n = sscanf(p + strlen(key), "%ld %ld", &ts, &v);
        *eol = '\n';
        if (match && n == 2) return v;
    }
    return -1;
}

/* 1 if a one-point query body's value is v (written as an integer or with
 * ".0", as doubles are). */
static int has_number(const char *body, long v)
{
    char a[64], b[64];
    snprintf(a, sizeof a, ":%ld}", v);
    snprintf(b, sizeof b, ":%ld.0}", v);
    int ok = strstr(body, a) || strstr(body, b);
    if (!ok) fprintf(stderr, "want %ld in %s\n", v, body);
    return ok;
}

/* Many lines both ways through the terminator's buffers: every put arrives
 * exactly once (the daemon's put counter grows by exactly N, and the stored
 * count and sum are N and N(N-1)/2), every reply arrives exactly once. */
static void stream_integrity(void **state)
{
    (void)state;
    enum { N = 30000 };
    long before = stat_value(g_opt.port, "tsd.rpc.received", "type=put");
    assert_true(before >= 0);
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    static char batch[1 << 21];
    size_t n = 0;
    for (int i = 0; i < N; i++)
        n += (size_t)snprintf(batch + n, sizeof batch - n, "put tls.bulk %d %d host=a%s",
                              1356998400 + i, i, i % 3 ? "\n" : "\r\n");
    assert_true(n < sizeof batch);
    for (size_t d = 0; d < n;) {
        int w = SSL_write(c->ssl, batch + d, (int)(n - d));
        assert_true(w > 0);
        d += (size_t)w;
    }
    assert_int_equal(tl_send(c, "version\n"), 0);
    assert_true(tl_lines(c, 2));
    assert_true(strncmp(c->buf, "net.opentsdb", 12) == 0);
    tl_consume_all(c);
    assert_int_equal(stat_value(g_opt.port, "tsd.rpc.received", "type=put") - before, N);
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=1356998400&end=%d&m=sum:0all-count:tls.bulk",
             1356998400 + N);
    char *body = query_plain(g_opt.port, target);
    assert_non_null(body);
    assert_true(has_number(body, (long)N));
    free(body);
    snprintf(target, sizeof target, "/api/query?start=1356998400&end=%d&m=sum:0all-sum:tls.bulk",
             1356998400 + N);
    body = query_plain(g_opt.port, target);
    assert_non_null(body);
    assert_true(has_number(body, (long)N * (N - 1) / 2));
    free(body);

    /* 1,000 `version` commands: 2,000 reply lines (~190 KB, under the
     * daemon's 256 KiB reply cap, so none may be dropped) */
    n = 0;
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(batch + n, sizeof batch - n, "version\n");
    for (size_t d = 0; d < n;) {
        int w = SSL_write(c->ssl, batch + d, (int)(n - d));
        assert_true(w > 0);
        d += (size_t)w;
    }
    assert_true(tl_lines(c, 2000));
    int lines = 0, banners = 0;
    for (char *p = c->buf; *p; p = strchr(p, '\n') + 1) {
        lines++;
        banners += strncmp(p, "net.opentsdb", 12) == 0;
    }
    assert_int_equal(lines, 2000);
    assert_int_equal(banners, 1000);
    tl_close(c);
}

/* HTTP over TLS with keep-alive: /api/put, then /api/query (GET and POST)
 * and /api/version on the same connection. */
static void http_over_tls_keepalive(void **state)
{
    (void)state;
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    static char out[1 << 16];
    int cl = 1;
    assert_int_equal(tl_http(c, "POST", "/api/put?details", NULL,
                             "[{\"metric\":\"tls.http\",\"timestamp\":1356998400,\"value\":10,"
                             "\"tags\":{\"host\":\"a\"}},"
                             "{\"metric\":\"tls.http\",\"timestamp\":1356998400,\"value\":5,"
                             "\"tags\":{\"host\":\"b\"}},"
                             "{\"metric\":\"tls.http\",\"timestamp\":1356998460,\"value\":7,"
                             "\"tags\":{\"host\":\"a\"}}]",
                             out, sizeof out, &cl),
                     200);
    assert_false(cl);
    assert_non_null(strstr(out, "\"success\":3"));
    assert_non_null(strstr(out, "\"failed\":0"));
    /* sum over hosts: 10+5 at :00, 7 at :60 (host b has no :60 point; sum
     * with lerp has nothing to interpolate past b's last point) */
    assert_int_equal(tl_http(c, "GET", "/api/query?start=1356998400&end=1356998460&m=sum:tls.http",
                             NULL, NULL, out, sizeof out, &cl),
                     200);
    assert_false(cl);
    assert_non_null(strstr(out, "\"dps\":{\"1356998400\":15,\"1356998460\":7}"));
    assert_int_equal(
        tl_http(c, "POST", "/api/query", NULL,
                "{\"start\":1356998400,\"end\":1356998460,\"queries\":[{\"aggregator\":\"max\","
                "\"metric\":\"tls.http\",\"tags\":{\"host\":\"a\"}}]}",
                out, sizeof out, &cl),
        200);
    assert_non_null(strstr(out, "\"dps\":{\"1356998400\":10,\"1356998460\":7}"));
    assert_int_equal(tl_http(c, "GET", "/api/version", NULL, NULL, out, sizeof out, &cl), 200);
    assert_non_null(strstr(out, "\"version\":\"2.4"));
    tl_close(c);
}

/* TLS optional: plaintext telnet and HTTP still work on the same port, and
 * what one protocol wrote the other reads. */
static void plaintext_same_port(void **state)
{
    (void)state;
    int fd = tu_connect(g_opt.port);
    assert_true(fd >= 0);
    const char *in = "put tls.plain 1356998400 3 host=p\nversion\n";
    assert_int_equal(tu_send_all(fd, in, strlen(in)), 0);
    char buf[4096];
    tu_recv_some(fd, buf, sizeof buf, 1000);
    assert_true(strncmp(buf, "net.opentsdb", 12) == 0);
    close(fd);
    char *resp = NULL;
    assert_int_equal(tu_http(g_opt.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 200);
    free(resp);
    /* read back over TLS */
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    static char out[1 << 16];
    assert_int_equal(tl_http(c, "GET", "/api/query?start=1356998400&m=sum:tls.plain", NULL, NULL,
                             out, sizeof out, NULL),
                     200);
    assert_non_null(strstr(out, "\"dps\":{\"1356998400\":3}"));
    tl_close(c);
}

/* The open-connections counter as telnet `stats` reports it. */
static long open_conns(int port)
{
    int fd = tu_connect(port);
    if (fd < 0) return -1;
    tu_send_all(fd, "stats\n", 6);
    static char buf[1 << 16];
    tu_recv_some(fd, buf, sizeof buf, 500);
    close(fd);
    for (char *p = buf; (p = strstr(p, "tsd.connectionmgr.connections ")); p++) {
        char *eol = strchr(p, '\n');
        if (!eol) break;
        *eol = '\0';
        long ts, v;
        int is_open = strstr(p, " type=open") != NULL;
        int n = sscanf(p, "tsd.connectionmgr.connections %ld %ld", &ts, &v);
        *eol = '\n';
        if (is_open && n == 2) return v;
    }
    return -1;
}

/* A ClientHello as g_cli would send it, produced with memory BIOs so that
 * no handshake can actually complete. Returns its length. */
static int client_hello(char *out, int cap)
{
    SSL *s = SSL_new(g_cli);
    BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
    SSL_set_bio(s, rb, wb);
    SSL_set_tlsext_host_name(s, "localhost");
    int r = SSL_connect(s);
    int e = SSL_get_error(s, r);
    int n = e == SSL_ERROR_WANT_READ ? BIO_read(wb, out, cap) : -1;
    ERR_clear_error();
    SSL_free(s);
    return n;
}

/* Garbage after 0x16, an aborted handshake, a stalled one and a burst of
 * broken ones: each is closed, the daemon keeps serving both kinds of
 * client, and no connection is left counted as open. */
static void bad_handshakes(void **state)
{
    (void)state;
    /* 0x16 then junk: the handshake fails at once */
    int fd = tu_connect(g_opt.port);
    assert_true(fd >= 0);
    static const char junk[] = "\x16\x03\x01\x00\x05hello, this is not a ClientHello\n";
    assert_int_equal(tu_send_all(fd, junk, sizeof junk - 1), 0);
    assert_true(closed_within(fd, 3000));
    close(fd);

    /* a real ClientHello (made in memory), then the client resets the
     * connection; and half of one, then a plain close */
    char hello[4096];
    int hello_len = client_hello(hello, sizeof hello);
    assert_true(hello_len > 100);
    assert_int_equal(hello[0], 0x16);
    struct linger lg = {1, 0};
    fd = tu_connect(g_opt.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, hello, (size_t)hello_len), 0);
    tc_sleep_ms(50); /* let the server answer into a socket that then resets */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
    fd = tu_connect(g_opt.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, hello, (size_t)hello_len / 2), 0);
    close(fd);

    /* a burst of broken handshakes */
    for (int i = 0; i < 20; i++) {
        fd = tu_connect(g_opt.port);
        assert_true(fd >= 0);
        assert_int_equal(tu_send_all(fd, junk, (size_t)(6 + i)), 0);
        if (i % 2) setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(fd);
    }

    /* one byte of a handshake, then silence: closed after the handshake
     * timeout (tsd.core.socket.timeout=2 s, checked once a second) */
    fd = tu_connect(g_opt.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, "\x16", 1), 0);
    assert_false(closed_within(fd, 700));
    assert_true(closed_within(fd, 5000));
    close(fd);

    /* still serving, over TLS and in plaintext */
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    assert_int_equal(tl_send(c, "version\n"), 0);
    assert_true(tl_lines(c, 1));
    assert_true(strncmp(c->buf, "net.opentsdb", 12) == 0);
    tl_close(c);
    char *resp = NULL;
    assert_int_equal(tu_http(g_opt.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 200);
    free(resp);
    /* Only the connection asking is open (each closed connection was
     * released exactly once); closes are asynchronous, so poll briefly. */
    long open = -1;
    for (int i = 0; i < 40 && open != 1; i++) {
        open = open_conns(g_opt.port);
        if (open != 1) tc_sleep_ms(50);
    }
    assert_int_equal(open, 1);
}

/* A TLS client that never reads its replies: the daemon keeps reading its
 * input (as for plaintext collectors), buffers are bounded, memory does not
 * follow the ~50 MB of replies asked for. */
static long rss_kb(int pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    fclose(f);
    return kb;
}

static void client_never_reads(void **state)
{
    (void)state;
    tl_t *c = tl_open(g_opt.port);
    assert_non_null(c);
    long before = rss_kb(g_opt.pid);
    static char lines[8 * 4096];
    for (size_t i = 0; i < sizeof lines; i += 8)
        memcpy(lines + i, "version\n", 8);
    /* 98,304 `version` lines: ~180 bytes of reply each, ~18 MB in all */
    for (int i = 0; i < 24; i++) {
        size_t done = 0;
        while (done < sizeof lines) {
            int w = SSL_write(c->ssl, lines + done, (int)(sizeof lines - done));
            assert_true(w > 0); /* the daemon never stops reading */
            done += (size_t)w;
        }
    }
    /* the last line was read and run when a put after it is stored */
    assert_int_equal(tl_send(c, "put tls.noread 1356998400 1 host=x\n"), 0);
    char *body = NULL;
    for (int i = 0; i < 300; i++) {
        body = query_plain(g_opt.port, "/api/query?start=1356998400&m=sum:tls.noread");
        if (body && strstr(body, "\"dps\":{\"1356998400\":1}")) break;
        free(body);
        body = NULL;
        tc_sleep_ms(50);
    }
    assert_non_null(body);
    free(body);
    long after = rss_kb(g_opt.pid);
    /* The loop builds one read's replies (256 KiB of input: ~6 MB) before
     * trimming them; everything else in the path is a fixed-size buffer. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)before, (void)after; /* the sanitizers' allocators keep freed memory */
#else
    if (after - before >= 12 * 1024)
        fprintf(stderr, "RSS grew from %ld to %ld kB\n", before, after);
    assert_true(after - before < 12 * 1024);
#endif
    /* closing it is clean: the daemon serves on */
    SSL_free(c->ssl);
    close(c->fd);
    free(c);
    char *resp = NULL;
    assert_int_equal(tu_http(g_opt.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 200);
    free(resp);
}

/* tsd.network.tls.required: plaintext gets an error and is closed, TLS
 * below the minimum (1.3 here) fails, and authentication works over TLS. */
static void required_and_auth(void **state)
{
    (void)state;
    int fd = tu_connect(g_req.port);
    assert_true(fd >= 0);
    const char *put = "put tls.req 1356998400 1 host=r\n";
    assert_int_equal(tu_send_all(fd, put, strlen(put)), 0);
    char buf[4096];
    tu_recv_some(fd, buf, sizeof buf, 2000);
    assert_string_equal(buf, "error: TLS is required on this port\n");
    assert_true(closed_within(fd, 2000));
    close(fd);
    char *resp = NULL;
    assert_int_equal(tu_http(g_req.port, "GET", "/api/version", NULL, NULL, 0, &resp, NULL), 400);
    assert_non_null(strstr(resp, "TLS is required"));
    free(resp);

    /* a client that offers at most TLS 1.2 */
    SSL_CTX *old = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_max_proto_version(old, TLS1_2_VERSION);
    SSL_CTX_set_verify(old, SSL_VERIFY_PEER, NULL);
    assert_int_equal(SSL_CTX_load_verify_locations(old, g_cert, NULL), 1);
    assert_null(tl_open_ctx(g_req.port, old));
    SSL_CTX_free(old);

    /* telnet: `auth` is needed, then puts are stored */
    tl_t *c = tl_open(g_req.port);
    assert_non_null(c);
    assert_int_equal(tl_send(c, put), 0);
    assert_true(tl_lines(c, 1));
    assert_string_equal(c->buf,
                        "put: authentication required: auth <token> | auth <user> <password>\n");
    tl_consume_all(c);
    assert_int_equal(tl_send(c, "auth rw-token-123\n"), 0);
    assert_true(tl_lines(c, 1));
    assert_string_equal(c->buf, "auth: ok rw\n");
    tl_consume_all(c);
    assert_int_equal(tl_send(c, "put tls.req 1356998400 1 host=r\nversion\n"), 0);
    assert_true(tl_lines(c, 2));
    assert_true(strncmp(c->buf, "net.opentsdb", 12) == 0);
    tl_close(c);

    /* HTTP: 401 without credentials, served with a bearer token */
    c = tl_open(g_req.port);
    assert_non_null(c);
    static char out[1 << 16];
    assert_int_equal(tl_http(c, "GET", "/api/version", NULL, NULL, out, sizeof out, NULL), 401);
    assert_int_equal(tl_http(c, "POST", "/api/put", "Authorization: Bearer rw-token-123\r\n",
                             "{\"metric\":\"tls.req\",\"timestamp\":1356998460,\"value\":2,"
                             "\"tags\":{\"host\":\"r\"}}",
                             out, sizeof out, NULL),
                     204);
    assert_int_equal(tl_http(c, "GET", "/api/query?start=1356998400&m=sum:tls.req",
                             "Authorization: Bearer rw-token-123\r\n", NULL, out, sizeof out, NULL),
                     200);
    assert_non_null(strstr(out, "\"dps\":{\"1356998400\":1,\"1356998460\":2}"));
    tl_close(c);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
        getsockname(fd, (struct sockaddr *)&a, &len))
        return 1;
    close(fd);
    return ntohs(a.sin_port);
}

/* Bad TLS settings stop the daemon at start-up with a message naming the key. */
static void bad_config_refuses_to_start(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char datadir[4200], port[32], missing[4400], other[4400];
    snprintf(datadir, sizeof datadir, "--datadir=%s", dir);
    snprintf(port, sizeof port, "--port=%d", free_port());
    snprintf(missing, sizeof missing, "tsd.network.tls.certificate=%s/nope.pem", dir);
    snprintf(other, sizeof other, "tsd.network.tls.key=%s", g_other_key);
    struct {
        const char *set1, *set2, *want;
    } cases[] = {
        {missing, g_set_key, "ERROR tsd: tsd.network.tls.certificate: cannot read '"},
        {g_set_cert, other, "ERROR tsd: tsd.network.tls.key: '"},
        {g_set_cert, "tsd.network.tls.key=/dev/null",
         "ERROR tsd: tsd.network.tls.key: cannot load"},
        {g_set_key, NULL, "ERROR tsd: tsd.network.tls.certificate: not set"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[] = {"--bind=127.0.0.1",
                              port,
                              datadir,
                              "--set",
                              "tsd.network.tls.enable=true",
                              "--set",
                              cases[i].set1,
                              cases[i].set2 ? "--set" : NULL,
                              cases[i].set2,
                              NULL};
        char *err = NULL;
        int st = tc_run_tsd_expect_exit(args, &err, 20000);
        if (!strstr(err, cases[i].want)) fprintf(stderr, "case %zu: stderr was: %s\n", i, err);
        assert_int_equal(st, 2); /* a configuration error */
        assert_non_null(strstr(err, cases[i].want));
        if (i == 0) assert_non_null(strstr(err, "No such file or directory"));
        if (i == 1) assert_non_null(strstr(err, "does not match the certificate"));
        if (i == 2) assert_non_null(strstr(err, "/dev/null"));
        free(err);
    }
    tu_rmrf(dir);
    free(dir);
}

/* OCT_TLS_BENCH=<points>: telnet put throughput, plaintext vs TLS. The
 * lines are made before the clock starts; sent in 64 KiB writes. */
static double put_run(int port, int tls, const char *data, size_t len)
{
    tl_t *c = NULL;
    int fd = -1;
    if (tls)
        c = tl_open(port);
    else
        fd = tu_connect(port);
    if ((tls && !c) || (!tls && fd < 0)) return -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t d = 0; d < len;) {
        size_t k = len - d < 65536 ? len - d : 65536;
        if (tls) {
            int w = SSL_write(c->ssl, data + d, (int)k);
            if (w <= 0) return -1;
            d += (size_t)w;
        } else {
            if (tu_send_all(fd, data + d, k)) return -1;
            d += k;
        }
    }
    /* `version` answers after every put before it ran */
    if (tls) {
        tl_send(c, "version\n");
        tl_lines(c, 1);
        tl_close(c);
    } else {
        tu_send_all(fd, "version\n", 8);
        char b[512];
        size_t got = 0;
        int nl = 0;
        while (nl < 2 && got < sizeof b) {
            ssize_t r = recv(fd, b + got, sizeof b - got, 0);
            if (r <= 0) break;
            for (ssize_t k = 0; k < r; k++)
                nl += b[got + (size_t)k] == '\n';
            got += (size_t)r;
        }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static char *put_lines(const char *metric, long points, size_t *len)
{
    size_t cap = (size_t)points * 64 + 1;
    char *buf = malloc(cap);
    size_t n = 0;
    for (long i = 0; i < points; i++)
        n += (size_t)snprintf(buf + n, cap - n, "put %s %ld %ld host=h%ld\n", metric,
                              1356998400L + i / 64, i, i % 64);
    *len = n;
    return buf;
}

/* The daemon's CPU time (user + system) in seconds. */
static double daemon_cpu(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[2048];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* fields 14 and 15 after the command name */
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static void bench(void **state)
{
    (void)state;
    const char *e = getenv("OCT_TLS_BENCH");
    if (!e) skip();
    long n = atol(e);
    size_t plen, tlen;
    char *pdata = put_lines("tls.bench.plain", n, &plen);
    char *tdata = put_lines("tls.bench.tls", n, &tlen);
    for (int rep = 0; rep < 3; rep++) {
        double c0 = daemon_cpu(g_opt.pid);
        double plain = put_run(g_opt.port, 0, pdata, plen);
        double c1 = daemon_cpu(g_opt.pid);
        double tls = put_run(g_opt.port, 1, tdata, tlen);
        double c2 = daemon_cpu(g_opt.pid);
        printf("telnet puts, %ld points: plaintext %.3f s wall (%.0f/s), %.3f s daemon CPU; "
               "TLS %.3f s wall (%.0f/s), %.3f s daemon CPU; CPU TLS/plain %.2f\n",
               n, plain, n / plain, c1 - c0, tls, n / tls, c2 - c1, (c2 - c1) / (c1 - c0));
    }
    free(pdata);
    free(tdata);
    /* every point arrived: n of them per metric (later runs overwrite) */
    char target[256];
    snprintf(target, sizeof target,
             "/api/query?start=1356998400&end=%ld&m=sum:0all-count:tls.bench.tls",
             1356998400L + n / 64 + 1);
    char *body = query_plain(g_opt.port, target);
    assert_non_null(body);
    assert_true(has_number(body, n));
    free(body);
}

/* ---- stopping under TLS load ---------------------------------------------------- */

/* SIGTERM while TLS clients keep putting (HTTP keep-alive, ?sync) and
 * opening new connections (handshakes in flight at the stop): the TSD
 * stops cleanly (exit 0), and after a restart each client's acknowledged
 * points are stored -- per client, at least the 204s it got and at most
 * what it sent. Run under TSan in make test, this is the guard for the
 * terminator's shutdown (tls_quiesce, then loops, HTTP, tls_stop). */
#define STOP_CLIENTS 4

typedef struct {
    int port, idx;
    atomic_int *stop;
    long sent, acked;
} stop_client_t;

static void *stop_client_main(void *arg)
{
    stop_client_t *k = arg;
    char out[512];
    while (!atomic_load(k->stop)) {
        tl_t *c = tl_open(k->port);
        if (!c) continue; /* refused or cut while stopping: try again until told */
        for (int i = 0; i < 20 && !atomic_load(k->stop); i++) {
            char body[200];
            snprintf(body, sizeof body,
                     "{\"metric\":\"tls.stop\",\"timestamp\":%ld,\"value\":1,"
                     "\"tags\":{\"c\":\"%d\"}}",
                     1356998400L + k->sent, k->idx);
            k->sent++;
            if (tl_http(c, "POST", "/api/put?sync", NULL, body, out, sizeof out, NULL) != 204)
                break;
            k->acked++;
        }
        tl_close(c);
    }
    return NULL;
}

static void stop_under_tls_load(void **state)
{
    (void)state;
    /* the clients write to sockets the stopping TSD closes: EPIPE, not a signal */
    signal(SIGPIPE, SIG_IGN);
    tu_tsd_t t = {0};
    const char *args[] = {"--auto-metric", "--set",    "tsd.network.tls.enable=true",
                          "--set",         g_set_cert, "--set",
                          g_set_key,       NULL};
    assert_int_equal(tu_tsd_start(&t, args), 0);
    atomic_int stop;
    atomic_init(&stop, 0);
    stop_client_t k[STOP_CLIENTS];
    pthread_t th[STOP_CLIENTS];
    for (int i = 0; i < STOP_CLIENTS; i++) {
        k[i] = (stop_client_t){.port = t.port, .idx = i, .stop = &stop};
        assert_int_equal(pthread_create(&th[i], NULL, stop_client_main, &k[i]), 0);
    }
    struct timespec ts = {0, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int st = tu_tsd_stop(&t); /* SIGTERM with the clients still going */
    atomic_store(&stop, 1);
    for (int i = 0; i < STOP_CLIENTS; i++)
        pthread_join(th[i], NULL);
    if (st != 0) tu_tsd_print_log(&t);
    assert_int_equal(st, 0);
    assert_int_equal(tu_tsd_start(&t, args), 0);
    for (int i = 0; i < STOP_CLIENTS; i++) {
        char target[200];
        snprintf(target, sizeof target,
                 "/api/query?start=1356998400&end=1357100000&m=sum:0all-count:tls.stop%%7Bc=%d%%7D",
                 i);
        char *body = query_plain(t.port, target);
        assert_non_null(body);
        long n = 0;
        const char *d = strstr(body, "\"dps\":{\"");
        if (d) sscanf(strchr(d + 7, ':') + 1, "%ld", &n);
        if (n < k[i].acked || n > k[i].sent)
            fail_msg("client %d: %ld stored, %ld acknowledged, %ld sent", i, n, k[i].acked,
                     k[i].sent);
        assert_true(k[i].acked > 0);
        free(body);
    }
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(telnet_over_tls),     cmocka_unit_test(http_over_tls_keepalive),
        cmocka_unit_test(stream_integrity),    cmocka_unit_test(plaintext_same_port),
        cmocka_unit_test(bad_handshakes),      cmocka_unit_test(client_never_reads),
        cmocka_unit_test(required_and_auth),   cmocka_unit_test(bad_config_refuses_to_start),
        cmocka_unit_test(stop_under_tls_load), cmocka_unit_test(bench),
    };
    return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
