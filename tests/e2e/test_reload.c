/* test_reload.c -- what the daemon re-reads on SIGHUP, and the TLS and
 * credential settings that came with it (docs/tls.md, docs/reliability.md, "Access"), against
 * the real daemon with an OpenSSL client.
 *
 *  - credentials: Argon2 and yescrypt passwords made by other tools (Debian's
 *    `argon2` and `mkpasswd`) are accepted, a wrong one refused; a line made
 *    by `octsdb passwd` is added, SIGHUP, and it works; a broken file on
 *    SIGHUP leaves the previous set in force.
 *  - TLS: the certificate is replaced and SIGHUP'ed while a load of HTTPS
 *    puts runs (new connections and one kept-alive connection): new
 *    handshakes show the new certificate, the old connection keeps working,
 *    every acknowledged point is stored exactly once (counted by a query).
 *  - tsd.network.tls.client_ca: no client certificate or one from another
 *    issuer fails the handshake; one signed by the CA is served.
 *  - tsd.network.tls.ciphers: a TLS 1.2 client offering only another cipher
 *    fails; offering the configured one gets it; a list with no usable
 *    cipher stops start-up with a message naming the key.
 * The certificates are made here with the OpenSSL API: a CA, two server
 * certificates for "localhost" (serials 2 and 3) and client certificates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "testutil.h"
#include "tlsutil.h"

static char *g_dir;
static char g_path[8][4200];
enum { P_CA, P_SRV1, P_SRV1KEY, P_SRV2, P_SRV2KEY, P_CLI, P_CLIKEY, P_CREDS };
static EVP_PKEY *g_cli_key, *g_rogue_key;
static X509 *g_cli_cert, *g_rogue_cert;

/* ---- certificates ---------------------------------------------------------- */

static int make_pki(void)
{
    EVP_PKEY *ca_key = tt_key();
    X509 *ca = tt_cert(ca_key, "octsdb test CA", 1, NULL, NULL, 1);
    tt_write_pem(g_path[P_CA], ca, NULL);
    for (int i = 0; i < 2; i++) {
        EVP_PKEY *k = tt_key();
        X509 *x = tt_cert(k, "localhost", 2 + i, ca, ca_key, 0);
        tt_write_pem(g_path[i ? P_SRV2 : P_SRV1], x, NULL);
        tt_write_pem(g_path[i ? P_SRV2KEY : P_SRV1KEY], NULL, k);
        X509_free(x);
        EVP_PKEY_free(k);
    }
    g_cli_key = tt_key();
    g_cli_cert = tt_cert(g_cli_key, "collector-1", 10, ca, ca_key, 0);
    /* same name, but self-signed: not from the CA */
    g_rogue_key = tt_key();
    g_rogue_cert = tt_cert(g_rogue_key, "collector-1", 11, NULL, NULL, 0);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return 0;
}

/* ---- a TLS client ------------------------------------------------------------ */

typedef struct {
    int fd;
    SSL *ssl;
} tc_t;

/* A client context trusting the test CA and checking "localhost". */
static SSL_CTX *client_ctx(X509 *cert, EVP_PKEY *key, const char *tls12_cipher)
{
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    assert_int_equal(SSL_CTX_load_verify_locations(c, g_path[P_CA], NULL), 1);
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    if (cert) {
        assert_int_equal(SSL_CTX_use_certificate(c, cert), 1);
        assert_int_equal(SSL_CTX_use_PrivateKey(c, key), 1);
    }
    if (tls12_cipher) {
        SSL_CTX_set_max_proto_version(c, TLS1_2_VERSION);
        assert_int_equal(SSL_CTX_set_cipher_list(c, tls12_cipher), 1);
    }
    return c;
}

static void set_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* 0 and a verified connection, or -1. With TLS 1.3 a refused client
 * certificate shows only at the first read, so a request is sent and read
 * back when probe is set. */
static int tc_open(tc_t *c, int port, SSL_CTX *ctx)
{
    c->fd = tu_connect(port);
    if (c->fd < 0) return -1;
    set_timeouts(c->fd, 5000);
    c->ssl = SSL_new(ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
    SSL_set1_host(c->ssl, "localhost");
    if (SSL_connect(c->ssl) != 1) {
        ERR_clear_error();
        SSL_free(c->ssl);
        close(c->fd);
        return -1;
    }
    return 0;
}

static void tc_close(tc_t *c)
{
    SSL_shutdown(c->ssl);
    SSL_free(c->ssl);
    close(c->fd);
}

/* One HTTP request on c (keep-alive); returns the status or -1; the body in
 * body (NUL-terminated) when given. */
static int tc_http(tc_t *c, const char *method, const char *target, const char *payload, char *body,
                   size_t cap)
{
    char req[8192];
    size_t pl = payload ? strlen(payload) : 0;
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %zu\r\n"
                     "Content-Type: application/json\r\n\r\n%s",
                     method, target, pl, payload ? payload : "");
    if (SSL_write(c->ssl, req, n) != n) return -1;
    char buf[65536];
    size_t got = 0;
    long want = -1;
    char *hdr_end = NULL;
    for (;;) {
        int r = SSL_read(c->ssl, buf + got, (int)(sizeof buf - 1 - got));
        if (r <= 0) {
            ERR_clear_error();
            return -1;
        }
        got += (size_t)r;
        buf[got] = 0;
        if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = strcasestr(buf, "Content-Length:");
            want = cl ? atol(cl + 15) : 0;
        }
        if (hdr_end && (long)(got - (size_t)(hdr_end + 4 - buf)) >= want) break;
        if (got + 1 >= sizeof buf) return -1;
    }
    if (body) snprintf(body, cap, "%s", hdr_end + 4);
    return atoi(buf + 9);
}

/* The serial number of the certificate the daemon presented. */
static long tc_serial(const tc_t *c)
{
    X509 *x = SSL_get1_peer_certificate(c->ssl);
    long s = x ? ASN1_INTEGER_get(X509_get0_serialNumber(x)) : -1;
    X509_free(x);
    return s;
}

/* ---- helpers ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void copy_file(const char *from, const char *to)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *in = fopen(from, "r"), *out = fopen(tmp, "w");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    fclose(out);
    assert_int_equal(rename(tmp, to), 0); /* as a deploy tool would: atomically */
}

/* Plaintext GET with a Basic header for user:password; the status. */
static int basic_get(int port, const char *userpw)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char enc[256], hdr[320];
    size_t n = strlen(userpw), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)userpw[i] << 16;
        if (i + 1 < n) v |= (unsigned char)userpw[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)userpw[i + 2];
        enc[o++] = b64[v >> 18 & 63];
        enc[o++] = b64[v >> 12 & 63];
        enc[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        enc[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    enc[o] = 0;
    snprintf(hdr, sizeof hdr, "Authorization: Basic %s\r\n", enc);
    return tu_http(port, "GET", "/api/version", hdr, NULL, 0, NULL, NULL);
}

/* Runs `octsdb passwd args...` with stdin_text on its stdin; its stdout
 * (first line) into out. Returns the exit status. */
static int run_passwd(const char *stdin_text, char *out, size_t cap, const char *a1, const char *a2)
{
    int in[2], outp[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(outp), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(outp[1], 1);
        close(in[1]);
        close(outp[0]);
        const char *bin = getenv("OCTSDB_BIN");
        execl(bin, bin, "passwd", a1, a2, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(outp[1]);
    ssize_t w = write(in[1], stdin_text, strlen(stdin_text));
    (void)w;
    close(in[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(outp[0], out + got, cap - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = 0;
    close(outp[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Polls until basic_get gives want (the reload is asynchronous to kill(2)). */
static int wait_status(int port, const char *userpw, int want)
{
    int st = -1;
    for (int i = 0; i < 100 && (st = basic_get(port, userpw)) != want; i++)
        usleep(50000);
    return st;
}

static int log_has(const tu_tsd_t *t, const char *needle)
{
    FILE *f = fopen(t->log, "r");
    if (!f) return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

/* ---- credentials ------------------------------------------------------------- */

/* Made with `echo -n c4rol-pw | argon2 carolsalt1234567 -id -t 1 -k 8192 -p 1 -l 32 -e`
 * and `mkpasswd -m yescrypt d4ve-pw`. */
#define CAROL                                                                                      \
    "basic carol $argon2id$v=19$m=8192,t=1,p=1$Y2Fyb2xzYWx0MTIzNDU2Nw$"                            \
    "r2Y29nxbfeIapu11nUOGWcwWJMomGAJRe/ufeCiwNyA rw\n"
#define DAVE                                                                                       \
    "basic dave $y$j9T$sgQ8cSzun90elP9HRv4U7/$vjM5DLqoSOGGdtlgx17BCNd9C8oqF28PhkKfpBPDbID ro\n"

static void credentials_reload(void **state)
{
    (void)state;
    write_file(g_path[P_CREDS], CAROL DAVE);
    char set[4300];
    snprintf(set, sizeof set, "tsd.core.authentication.credentials_file=%s", g_path[P_CREDS]);
    const char *args[] = {"--set", "tsd.core.authentication.enable=true", "--set", set, NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, args), 0);

    assert_int_equal(basic_get(t.port, "carol:c4rol-pw"), 200);
    assert_int_equal(basic_get(t.port, "dave:d4ve-pw"), 200);
    assert_int_equal(basic_get(t.port, "carol:c4rol-pw!"), 401);
    assert_int_equal(basic_get(t.port, "dave:c4rol-pw"), 401);
    assert_int_equal(basic_get(t.port, "hank:h4nk-pw"), 401);
    /* dave is read-only: a put is refused with 403 */
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Authorization: Basic ZGF2ZTpkNHZlLXB3\r\n"); /* dave:d4ve-pw */
    const char *pt =
        "{\"metric\":\"m\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"h\":\"a\"}}";
    assert_int_equal(tu_http(t.port, "POST", "/api/put", hdr, pt, strlen(pt), NULL, NULL), 403);

    /* octsdb passwd makes hank's line; dave is dropped; SIGHUP */
    char line[512];
    assert_int_equal(run_passwd("h4nk-pw\n", line, sizeof line, "--scheme=yescrypt", "hank"), 0);
    assert_true(!strncmp(line, "basic hank $y$", 14));
    assert_true(!strcmp(line + strlen(line) - 3, " rw"));
    char text[2048];
    snprintf(text, sizeof text, CAROL "%s\n", line);
    write_file(g_path[P_CREDS], text);
    assert_int_equal(kill(t.pid, SIGHUP), 0);
    assert_int_equal(wait_status(t.port, "hank:h4nk-pw", 200), 200);
    assert_int_equal(basic_get(t.port, "dave:d4ve-pw"), 401);
    assert_int_equal(basic_get(t.port, "carol:c4rol-pw"), 200);
    assert_true(log_has(&t, "reloaded 2 credentials"));

    /* a broken file: the set loaded before stays in force */
    write_file(g_path[P_CREDS], CAROL "basic ivy $1$bI70Yfi/$Pc.ezvHyDfT9tuuzfgX/p. rw\n");
    assert_int_equal(kill(t.pid, SIGHUP), 0);
    for (int i = 0; i < 100 && !log_has(&t, "reload: tsd.core.authentication.credentials_file");
         i++)
        usleep(50000);
    assert_true(log_has(&t, "reload: tsd.core.authentication.credentials_file"));
    assert_int_equal(basic_get(t.port, "hank:h4nk-pw"), 200);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

/* ---- TLS certificate reload under load ------------------------------------------ */

typedef struct {
    int port;
    SSL_CTX *ctx;
    atomic_int stop;
    atomic_long acked, failed;
    atomic_long next_ts;
} load_t;

/* New connections, one put each: every one needs a handshake. */
static void *load_main(void *arg)
{
    load_t *l = arg;
    while (!atomic_load(&l->stop)) {
        tc_t c;
        if (tc_open(&c, l->port, l->ctx)) {
            atomic_fetch_add(&l->failed, 1);
            continue;
        }
        long ts = atomic_fetch_add(&l->next_ts, 1);
        char body[256];
        snprintf(
            body, sizeof body,
            "{\"metric\":\"reload.load\",\"timestamp\":%ld,\"value\":1,\"tags\":{\"h\":\"a\"}}",
            ts);
        int st = tc_http(&c, "POST", "/api/put?sync=true", body, NULL, 0);
        atomic_fetch_add(st == 204 ? &l->acked : &l->failed, 1);
        tc_close(&c);
    }
    return NULL;
}

static void tls_certificate_reload(void **state)
{
    (void)state;
    char cert[4300], key[4300];
    snprintf(cert, sizeof cert, "%s/live-cert.pem", g_dir);
    snprintf(key, sizeof key, "%s/live-key.pem", g_dir);
    copy_file(g_path[P_SRV1], cert);
    copy_file(g_path[P_SRV1KEY], key);
    char sc[4400], sk[4400];
    snprintf(sc, sizeof sc, "tsd.network.tls.certificate=%s", cert);
    snprintf(sk, sizeof sk, "tsd.network.tls.key=%s", key);
    const char *args[] = {
        "--auto-metric", "--set", "tsd.network.tls.enable=true", "--set", sc, "--set", sk, NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, args), 0);

    SSL_CTX *ctx = client_ctx(NULL, NULL, NULL);
    tc_t kept;
    assert_int_equal(tc_open(&kept, t.port, ctx), 0);
    assert_int_equal(tc_serial(&kept), 2);

    load_t l = {.port = t.port, .ctx = ctx};
    atomic_init(&l.next_ts, 1356998400);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, load_main, &l), 0);
    while (atomic_load(&l.acked) < 50)
        usleep(10000);

    copy_file(g_path[P_SRV2KEY], key); /* a deploy tool swaps both files */
    copy_file(g_path[P_SRV2], cert);
    assert_int_equal(kill(t.pid, SIGHUP), 0);
    long serial = -1;
    for (int i = 0; i < 100 && serial != 3; i++) {
        tc_t c;
        if (!tc_open(&c, t.port, ctx)) {
            serial = tc_serial(&c);
            tc_close(&c);
        }
        if (serial != 3) usleep(50000);
    }
    assert_int_equal(serial, 3);
    long at_reload = atomic_load(&l.acked);
    while (atomic_load(&l.acked) < at_reload + 50)
        usleep(10000);
    atomic_store(&l.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);

    /* the connection set up before the reload still works, with its old certificate */
    char body[4096];
    assert_int_equal(tc_http(&kept, "GET", "/api/version", NULL, body, sizeof body), 200);
    assert_int_equal(tc_serial(&kept), 2);
    tc_close(&kept);
    assert_int_equal(atomic_load(&l.failed), 0);

    /* every acknowledged point once: count them with a query */
    long acked = atomic_load(&l.acked);
    long last = atomic_load(&l.next_ts) - 1;
    char target[256], *resp = NULL;
    snprintf(target, sizeof target,
             "/api/query?start=1356998400&end=%ld&m=sum:0all-count:reload.load", last);
    assert_int_equal(tu_http(t.port, "GET", target, NULL, NULL, 0, &resp, NULL), 200);
    const char *v = strstr(resp, "\"1356998400\":");
    if (!v || strtod(v + 13, NULL) != (double)acked) fail_msg("want count %ld in %s", acked, resp);
    free(resp);

    /* a broken certificate on SIGHUP: logged, the old one stays */
    write_file(cert, "not a certificate\n");
    assert_int_equal(kill(t.pid, SIGHUP), 0);
    for (int i = 0; i < 100 && !log_has(&t, "keeping the certificate loaded before"); i++)
        usleep(50000);
    assert_true(log_has(&t, "keeping the certificate loaded before"));
    tc_t c;
    assert_int_equal(tc_open(&c, t.port, ctx), 0);
    assert_int_equal(tc_serial(&c), 3);
    tc_close(&c);
    SSL_CTX_free(ctx);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

/* ---- client certificates and ciphers ------------------------------------------- */

static void client_certificates(void **state)
{
    (void)state;
    char sc[4400], sk[4400], sca[4400];
    snprintf(sc, sizeof sc, "tsd.network.tls.certificate=%s", g_path[P_SRV1]);
    snprintf(sk, sizeof sk, "tsd.network.tls.key=%s", g_path[P_SRV1KEY]);
    snprintf(sca, sizeof sca, "tsd.network.tls.client_ca=%s", g_path[P_CA]);
    const char *args[] = {
        "--set", "tsd.network.tls.enable=true", "--set", sc, "--set", sk, "--set", sca, NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, args), 0);
    char body[4096];

    SSL_CTX *none = client_ctx(NULL, NULL, NULL);
    SSL_CTX *good = client_ctx(g_cli_cert, g_cli_key, NULL);
    SSL_CTX *rogue = client_ctx(g_rogue_cert, g_rogue_key, NULL);
    tc_t c;
    /* TLS 1.3 may report the refusal only at the first read */
    if (!tc_open(&c, t.port, none)) {
        assert_int_equal(tc_http(&c, "GET", "/api/version", NULL, body, sizeof body), -1);
        tc_close(&c);
    }
    if (!tc_open(&c, t.port, rogue)) {
        assert_int_equal(tc_http(&c, "GET", "/api/version", NULL, body, sizeof body), -1);
        tc_close(&c);
    }
    assert_int_equal(tc_open(&c, t.port, good), 0);
    assert_int_equal(tc_http(&c, "GET", "/api/version", NULL, body, sizeof body), 200);
    assert_non_null(strstr(body, "\"version\""));
    tc_close(&c);
    SSL_CTX_free(none);
    SSL_CTX_free(good);
    SSL_CTX_free(rogue);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

static void cipher_lists(void **state)
{
    (void)state;
    char sc[4400], sk[4400];
    snprintf(sc, sizeof sc, "tsd.network.tls.certificate=%s", g_path[P_SRV1]);
    snprintf(sk, sizeof sk, "tsd.network.tls.key=%s", g_path[P_SRV1KEY]);
    const char *args[] = {"--set", "tsd.network.tls.enable=true",
                          "--set", sc,
                          "--set", sk,
                          "--set", "tsd.network.tls.ciphers=ECDHE-ECDSA-AES128-GCM-SHA256",
                          NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, args), 0);
    SSL_CTX *other = client_ctx(NULL, NULL, "ECDHE-ECDSA-CHACHA20-POLY1305");
    SSL_CTX *same = client_ctx(NULL, NULL, "ECDHE-ECDSA-AES128-GCM-SHA256");
    tc_t c;
    assert_int_equal(tc_open(&c, t.port, other), -1);
    assert_int_equal(tc_open(&c, t.port, same), 0);
    assert_string_equal(SSL_get_cipher_name(c.ssl), "ECDHE-ECDSA-AES128-GCM-SHA256");
    char body[4096];
    assert_int_equal(tc_http(&c, "GET", "/api/version", NULL, body, sizeof body), 200);
    tc_close(&c);
    SSL_CTX_free(other);
    SSL_CTX_free(same);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);

    /* no usable cipher: start-up stops, naming the key */
    char *dd = tu_tempdir(), datadir[4200], *err = NULL;
    snprintf(datadir, sizeof datadir, "--datadir=%s", dd);
    const char *argv[] = {"tsd",
                          "--port=1",
                          datadir,
                          "--set",
                          "tsd.network.tls.enable=true",
                          "--set",
                          sc,
                          "--set",
                          sk,
                          "--set",
                          "tsd.network.tls.ciphers=NO-SUCH-CIPHER",
                          NULL};
    assert_int_equal(tu_run_octsdb_stderr(&err, argv, 20), 2);
    if (!strstr(err, "tsd.network.tls.ciphers: no usable cipher in 'NO-SUCH-CIPHER'"))
        fail_msg("stderr: %s", err);
    free(err);
    tu_rmrf(dd);
    free(dd);
}

static int setup(void **state)
{
    (void)state;
    g_dir = tu_tempdir();
    static const char *names[] = {"ca.pem",       "srv1.pem", "srv1-key.pem", "srv2.pem",
                                  "srv2-key.pem", "cli.pem",  "cli-key.pem",  "credentials"};
    for (int i = 0; i < 8; i++)
        snprintf(g_path[i], sizeof g_path[i], "%s/%s", g_dir, names[i]);
    return make_pki();
}

static int teardown(void **state)
{
    (void)state;
    X509_free(g_cli_cert);
    X509_free(g_rogue_cert);
    EVP_PKEY_free(g_cli_key);
    EVP_PKEY_free(g_rogue_key);
    tu_rmrf(g_dir);
    free(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(credentials_reload),
        cmocka_unit_test(tls_certificate_reload),
        cmocka_unit_test(client_certificates),
        cmocka_unit_test(cipher_lists),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
