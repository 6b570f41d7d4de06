/* live.c -- working through the running TSD that holds the data dir
 * (docs/cli-live.md).
 *
 * A command that finds the data dir locked reads the TSD's address record
 * (server/tsd_addr.h, docs/format/tsd-addr.md); if the process it names is
 * alive, the command says so once on stderr and sends its work to that TSD
 * over HTTP: 2.4's endpoints where they exist (/api/uid/assign, rename,
 * /api/put), octsdb's /api/octsdb/... where 2.4 has none (api_admin.c).
 * Commands that only read ask the TSD to flush what it holds and then open
 * the store read-only (cli_open_db_for_read), so they print what they
 * would print against the stopped data dir.
 *
 * The HTTP client is the smallest that fits: one keep-alive connection,
 * requests with a Content-Length body, responses with Content-Length,
 * chunked or close-delimited bodies; one retry on a fresh connection when a
 * reused one turns out closed. A TSD that takes only TLS is reached over
 * TLS (OpenSSL) with the certificate it presents, tsd.network.tls.certificate
 * of the command's configuration, as the one trust anchor (docs/cli-live.md).
 * Credentials, when the TSD's record says
 * auth=on: $OCTSDB_CREDENTIALS or tsd.core.authentication.client, written
 * as a credentials-file line without the digest: "token <secret>" or
 * "basic <user> <password>". */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "server/tsd_addr.h"

struct cli_live {
    tsd_addr_t addr;
    char auth[1024]; /* "Authorization: ...\r\n" or "" */
    int fd;          /* the keep-alive connection, -1 if none */
    char port_s[16];
    SSL_CTX *tls; /* the TSD takes only TLS; NULL for plain HTTP */
    SSL *ssl;     /* on fd */
};

/* A client context that trusts exactly the TSD's certificate file: with it
 * as the trust anchor (a partial chain is accepted), the TSD is whoever
 * holds that certificate's key, whatever name the certificate carries. */
static SSL_CTX *live_tls_ctx(const char *cert, char *why, size_t cap)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        snprintf(why, cap, "cannot create a TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_load_verify_locations(ctx, cert, NULL) != 1) {
        snprintf(why, cap, "cannot read the certificate %s", cert);
        SSL_CTX_free(ctx);
        return NULL;
    }
    X509_STORE_set_flags(SSL_CTX_get_cert_store(ctx), X509_V_FLAG_PARTIAL_CHAIN);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

static void live_b64(const unsigned char *in, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

/* "token <secret>" or "basic <user> <password>" into an Authorization line. */
static int live_credentials(const char *spec, char *out, size_t cap)
{
    char buf[512];
    if (strlen(spec) >= sizeof buf) return -1;
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL, *kind = strtok_r(buf, " \t", &save);
    char *a = kind ? strtok_r(NULL, " \t", &save) : NULL;
    char *b = a ? strtok_r(NULL, " \t", &save) : NULL;
    if (kind && !strcasecmp(kind, "token") && a && !b) {
        snprintf(out, cap, "Authorization: Bearer %s\r\n", a);
        return 0;
    }
    if (kind && !strcasecmp(kind, "basic") && a && b && !strtok_r(NULL, " \t", &save)) {
        char up[512], enc[700];
        int n = snprintf(up, sizeof up, "%s:%s", a, b);
        if (n < 0 || (size_t)n >= sizeof up) return -1;
        live_b64((const unsigned char *)up, (size_t)n, enc);
        snprintf(out, cap, "Authorization: Basic %s\r\n", enc);
        return 0;
    }
    return -1;
}

int cli_live_find(const char *cmd, const oct_config_t *cfg, cli_live_t **out)
{
    *out = NULL;
    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    tsd_addr_t a;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    /* A TSD takes the lock, replays its log, listens, then writes the
     * record: give one that is starting a moment (3 s) to write it. */
    int rc = OCT_ENOTFOUND;
    for (int i = 0; dir && i < 30 && (rc = tsd_addr_read(dir, &a, &eb)) == OCT_ENOTFOUND; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (rc != 0 || !tsd_addr_alive(&a)) return 1;
    SSL_CTX *tls = NULL;
    if (a.https) {
        const char *cert = oct_config_get(cfg, "tsd.network.tls.certificate");
        char why[600] = "tsd.network.tls.certificate is not set";
        if (!cert || !cert[0] || !(tls = live_tls_ctx(cert, why, sizeof why))) {
            fprintf(stderr,
                    "octsdb %s: data dir held by the running TSD (pid %ld at %s:%d), which takes "
                    "only TLS: %s (the certificate it presents is the trust anchor)\n",
                    cmd, a.pid, a.host, a.port, why);
            return CLI_EXIT_STORAGE;
        }
    }
    if (tls) signal(SIGPIPE, SIG_IGN); /* OpenSSL writes with write(2): a closed peer is EPIPE */
    cli_live_t *l = xcalloc(1, sizeof *l);
    l->tls = tls;
    l->addr = a;
    l->fd = -1;
    snprintf(l->port_s, sizeof l->port_s, "%d", a.port);
    if (a.auth) {
        const char *spec = getenv("OCTSDB_CREDENTIALS");
        if (!spec || !spec[0]) spec = oct_config_get(cfg, "tsd.core.authentication.client");
        if (!spec || !spec[0] || live_credentials(spec, l->auth, sizeof l->auth) != 0) {
            fprintf(stderr,
                    "octsdb %s: data dir held by the running TSD (pid %ld at %s:%d), which needs "
                    "credentials: set OCTSDB_CREDENTIALS or tsd.core.authentication.client to "
                    "\"token <secret>\" or \"basic <user> <password>\"\n",
                    cmd, a.pid, a.host, a.port);
            cli_live_close(l);
            return CLI_EXIT_STORAGE;
        }
    }
    fprintf(stderr,
            "octsdb %s: data dir held by the running TSD (pid %ld at %s:%d); working "
            "through it\n",
            cmd, a.pid, a.host, a.port);
    *out = l;
    return 0;
}

static void live_disconnect(cli_live_t *l)
{
    if (l->ssl) SSL_free(l->ssl);
    l->ssl = NULL;
    if (l->fd >= 0) close(l->fd);
    l->fd = -1;
}

void cli_live_close(cli_live_t *l)
{
    if (!l) return;
    live_disconnect(l);
    if (l->tls) SSL_CTX_free(l->tls);
    free(l);
}

static int live_connect(cli_live_t *l, oct_errbuf_t *eb)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    const char *host = tsd_addr_connect_host(&l->addr);
    int gai = getaddrinfo(host, l->port_s, &hints, &res);
    if (gai) return oct_err(eb, OCT_EIO, "cannot resolve %s: %s", host, gai_strerror(gai));
    int err = ECONNREFUSED;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            l->fd = fd;
            break;
        }
        err = errno;
        close(fd);
    }
    freeaddrinfo(res);
    if (l->fd < 0)
        return oct_err(eb, OCT_EIO, "cannot reach the TSD at %s:%d: %s", host, l->addr.port,
                       strerror(err));
    if (l->tls) {
        l->ssl = SSL_new(l->tls);
        if (!l->ssl || SSL_set_fd(l->ssl, l->fd) != 1 || SSL_connect(l->ssl) != 1) {
            long v = l->ssl ? SSL_get_verify_result(l->ssl) : X509_V_OK;
            live_disconnect(l);
            return oct_err(eb, OCT_EIO, "TLS with the TSD at %s:%d failed%s%s", host, l->addr.port,
                           v != X509_V_OK ? ": " : "",
                           v != X509_V_OK ? X509_verify_cert_error_string(v) : "");
        }
    }
    return 0;
}

static int live_send(cli_live_t *l, const char *p, size_t n)
{
    while (n) {
        if (l->ssl) {
            int w = SSL_write(l->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
            if (w <= 0) return -1;
            p += w;
            n -= (size_t)w;
            continue;
        }
        ssize_t w = send(l->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads more into in (growing it); returns bytes read, 0 at EOF, -1 error. */
static ssize_t live_fill(cli_live_t *l, oct_strbuf_t *in)
{
    char buf[65536];
    if (l->ssl) {
        int r = SSL_read(l->ssl, buf, (int)sizeof buf);
        if (r > 0) oct_strbuf_append(in, buf, (size_t)r);
        return r > 0 ? r : SSL_get_error(l->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
    for (;;) {
        ssize_t r = recv(l->fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r > 0) oct_strbuf_append(in, buf, (size_t)r);
        return r;
    }
}

/* Parses one response from l->fd. Returns the status, or -1 if the
 * connection ended before any byte (stale keep-alive), or -2 on a broken
 * response. */
static int live_read_response(cli_live_t *l, oct_strbuf_t *resp, int *keep)
{
    oct_strbuf_t in = OCT_STRBUF_INIT;
    int status = -2;
    char *hend;
    for (;;) {
        hend = in.len ? strstr(in.ptr, "\r\n\r\n") : NULL;
        if (hend) break;
        ssize_t r = live_fill(l, &in);
        if (r <= 0) {
            status = in.len ? -2 : -1;
            goto out;
        }
    }
    size_t hlen = (size_t)(hend - in.ptr) + 4;
    if (strncmp(in.ptr, "HTTP/1.", 7) || !in.ptr[7] || in.ptr[8] != ' ') goto out;
    char *cend;
    long code_l = strtol(in.ptr + 9, &cend, 10);
    if (cend == in.ptr + 9 || code_l < 100 || code_l > 999) goto out;
    int code = (int)code_l;
    long long clen = -1;
    int chunked = 0;
    *keep = 1;
    for (char *h = strstr(in.ptr, "\r\n") + 2; h < hend; h = strstr(h, "\r\n") + 2) {
        if (!strncasecmp(h, "Content-Length:", 15)) clen = strtoll(h + 15, NULL, 10);
        if (!strncasecmp(h, "Transfer-Encoding:", 18) && strstr(h, "chunked") &&
            strstr(h, "chunked") < strstr(h, "\r\n"))
            chunked = 1;
        if (!strncasecmp(h, "Connection:", 11)) {
            const char *v = h + 11;
            while (*v == ' ')
                v++;
            if (!strncasecmp(v, "close", 5)) *keep = 0;
        }
    }
    oct_strbuf_reset(resp);
    size_t pos = hlen;
    if (code == 204 || code == 304 || (code >= 100 && code < 200)) {
        clen = 0;
    }
    if (chunked) {
        for (;;) {
            char *eol;
            while (!(eol = pos < in.len ? strstr(in.ptr + pos, "\r\n") : NULL))
                if (live_fill(l, &in) <= 0) goto out;
            size_t sz = (size_t)strtoull(in.ptr + pos, NULL, 16);
            pos = (size_t)(eol - in.ptr) + 2;
            while (in.len < pos + sz + 2)
                if (live_fill(l, &in) <= 0) goto out;
            if (sz == 0) break; /* no trailers from our TSD */
            oct_strbuf_append(resp, in.ptr + pos, sz);
            pos += sz + 2;
        }
    } else if (clen >= 0) {
        while (in.len < pos + (size_t)clen)
            if (live_fill(l, &in) <= 0) goto out;
        oct_strbuf_append(resp, in.ptr + pos, (size_t)clen);
    } else {
        while (live_fill(l, &in) > 0)
            continue;
        oct_strbuf_append(resp, in.ptr + pos, in.len - pos);
        *keep = 0;
    }
    if (!resp->ptr) oct_strbuf_append(resp, "", 0);
    status = code;
out:
    oct_strbuf_free(&in);
    return status;
}

int cli_live_http(cli_live_t *l, const char *method, const char *target, const void *body,
                  size_t len, oct_strbuf_t *resp, oct_errbuf_t *eb)
{
    oct_strbuf_t req = OCT_STRBUF_INIT;
    oct_strbuf_printf(&req,
                      "%s %s HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: octsdb-cli\r\n%s"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      method, target, tsd_addr_connect_host(&l->addr), l->addr.port, l->auth,
                      body ? len : 0);
    int rc = -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        int fresh = l->fd < 0;
        if (fresh && (rc = live_connect(l, eb)) != 0) break;
        int keep = 0;
        int st = -1;
        if (live_send(l, req.ptr, req.len) == 0 && (!body || !len || live_send(l, body, len) == 0))
            st = live_read_response(l, resp, &keep);
        if (st < 0 || !keep) live_disconnect(l);
        if (st >= 0) {
            rc = st;
            break;
        }
        /* a reused connection the TSD had closed: once more on a new one */
        if (fresh || st == -2) {
            rc = oct_err(eb, OCT_EIO, "the TSD at %s:%d closed the connection",
                         tsd_addr_connect_host(&l->addr), l->addr.port);
            break;
        }
    }
    oct_strbuf_free(&req);
    return rc;
}

void cli_live_error_message(const oct_strbuf_t *resp, char *buf, size_t cap)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    snprintf(buf, cap, "%.*s", (int)(resp->len > 200 ? 200 : resp->len),
             resp->ptr ? resp->ptr : "");
    if (resp->len && json_parse(&a, resp->ptr, resp->len, 0, &v, &eb) == 0) {
        const json_value_t *e = json_obj_get(v, "error");
        const json_value_t *m = e ? json_obj_get(e, "message") : NULL;
        const json_value_t *d = e ? json_obj_get(e, "details") : NULL;
        if (m && m->type == JSON_STRING) {
            if (d && d->type == JSON_STRING && d->len)
                snprintf(buf, cap, "%.*s: %.*s", (int)m->len, m->str, (int)d->len, d->str);
            else
                snprintf(buf, cap, "%.*s", (int)m->len, m->str);
        }
    }
    json_arena_free(&a);
}

int cli_live_post_json(cli_live_t *l, const char *target, oct_strbuf_t *resp, json_arena_t *a,
                       json_value_t **v, oct_errbuf_t *eb)
{
    int st = cli_live_http(l, "POST", target, NULL, 0, resp, eb);
    if (st < 0) return st;
    if (st != 200) {
        char msg[600];
        cli_live_error_message(resp, msg, sizeof msg);
        return oct_err(eb, OCT_EIO, "%s", msg);
    }
    if (json_parse(a, resp->ptr, resp->len, 0, v, eb) != 0 || (*v)->type != JSON_OBJECT)
        return oct_err(eb, OCT_EIO, "unexpected answer from the TSD: %.200s", resp->ptr);
    return 0;
}

int cli_live_flush(const char *cmd, cli_live_t *l)
{
    oct_strbuf_t resp = OCT_STRBUF_INIT;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int st = cli_live_http(l, "POST", "/api/octsdb/flush", NULL, 0, &resp, &eb);
    int rc = 0;
    if (st != 204) {
        char msg[512];
        if (st < 0)
            snprintf(msg, sizeof msg, "%s", eb.msg);
        else
            cli_live_error_message(&resp, msg, sizeof msg);
        fprintf(stderr, "octsdb %s: the TSD could not flush: %s\n", cmd, msg);
        rc = CLI_EXIT_STORAGE;
    }
    oct_strbuf_free(&resp);
    return rc;
}

int cli_open_or_live(const char *cmd, const oct_config_t *cfg, tsdb_t **db, cli_live_t **live)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    *db = NULL;
    *live = NULL;
    int rc = tsdb_open(cfg, 0, db, &eb);
    if (rc == OCT_ELOCKED) {
        int st = cli_live_find(cmd, cfg, live);
        if (st != 1) return st;
    }
    if (rc) {
        fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    return 0;
}
