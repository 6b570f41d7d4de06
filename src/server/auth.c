/* auth.c -- credentials file, constant-time checks, and the HTTP and telnet
 * gates (auth.h).
 *
 * Every credential is kept as digests only: a token as SHA-256(salt||token),
 * a Basic credential as SHA-256(user) plus SHA-256(salt||password). A check
 * hashes what the client presented and compares it with EVERY credential of
 * the kind, OR-ing the results, so the time taken does not reveal which
 * credential (or which prefix of a user name) came close. Credential sets
 * are small (a handful of collectors and dashboards), so the linear walk
 * costs a few microseconds per request.
 *
 * The daemon's set is loaded at startup (auth_init, called by tsd_run, which
 * refuses to start when the file is missing or invalid), once per process;
 * after that readers only do an acquire load. auth_for still loads lazily
 * for callers that did not run auth_init: there a file that cannot be loaded
 * leaves an empty set in place, so authentication stays on and refuses
 * everyone, the safe failure for a security setting. */
#include "server/auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/sha256.h"
#include "common/xmalloc.h"

#define AUTH_SALT_MAX 64

typedef struct {
    int basic; /* 0 = token, 1 = user/password */
    auth_role_t role;
    uint8_t user[OCT_SHA256_LEN]; /* SHA-256(user), basic only */
    uint8_t hash[OCT_SHA256_LEN]; /* SHA-256(salt || secret) */
    char salt[AUTH_SALT_MAX];
    size_t salt_len;
} auth_cred_t;

struct auth {
    auth_cred_t *creds;
    size_t n;
};

/* ---- the file ---------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* "<hex64>", "sha256:<hex64>" or "sha256:<salt>:<hex64>" into cr. */
static int parse_digest(const char *s, size_t n, auth_cred_t *cr)
{
    cr->salt_len = 0;
    if (n > 7 && !strncasecmp(s, "sha256:", 7)) {
        s += 7;
        n -= 7;
        const char *colon = memchr(s, ':', n);
        if (colon) {
            size_t sl = (size_t)(colon - s);
            if (sl == 0 || sl > AUTH_SALT_MAX) return -1;
            memcpy(cr->salt, s, sl);
            cr->salt_len = sl;
            n -= sl + 1;
            s = colon + 1;
        }
    }
    if (n != 2 * OCT_SHA256_LEN) return -1;
    for (size_t i = 0; i < OCT_SHA256_LEN; i++) {
        int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        cr->hash[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static int parse_role(const char *s, size_t n, auth_role_t *role)
{
    if (n == 2 && !memcmp(s, "ro", 2))
        *role = AUTH_ROLE_RO;
    else if (n == 2 && !memcmp(s, "rw", 2))
        *role = AUTH_ROLE_RW;
    else
        return -1;
    return 0;
}

int auth_parse(const char *text, size_t len, auth_t **out, oct_errbuf_t *eb)
{
    auth_t *a = xcalloc(1, sizeof *a);
    size_t cap = 0;
    const char *p = text, *end = text + len;
    for (unsigned lineno = 1; p < end; lineno++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        /* up to 5 whitespace-separated words */
        const char *w[5];
        size_t wl[5];
        size_t nw = 0;
        const char *q = p;
        while (q < le) {
            while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
                q++;
            if (q == le) break;
            if (nw == 0 && *q == '#') break;
            const char *t = q;
            while (q < le && *q != ' ' && *q != '\t' && *q != '\r')
                q++;
            if (nw == 5) {
                nw = 6;
                break;
            }
            w[nw] = t;
            wl[nw++] = (size_t)(q - t);
        }
        p = nl ? nl + 1 : end;
        if (nw == 0) continue;
        auth_cred_t cr;
        memset(&cr, 0, sizeof cr);
        int bad = 0;
        if (wl[0] == 5 && !memcmp(w[0], "token", 5)) {
            bad = nw != 3 || parse_digest(w[1], wl[1], &cr) || parse_role(w[2], wl[2], &cr.role);
        } else if (wl[0] == 5 && !memcmp(w[0], "basic", 5)) {
            cr.basic = 1;
            bad = nw != 4 || parse_digest(w[2], wl[2], &cr) || parse_role(w[3], wl[3], &cr.role);
            if (!bad) oct_sha256(w[1], wl[1], cr.user);
        } else {
            auth_free(a);
            return oct_err(eb, OCT_ECONFIG, "line %u: expected 'token' or 'basic'", lineno);
        }
        if (bad) {
            auth_free(a);
            return oct_err(eb, OCT_ECONFIG,
                           "line %u: expected 'token <sha256> <ro|rw>' or "
                           "'basic <user> <sha256> <ro|rw>'",
                           lineno);
        }
        if (a->n == cap) {
            cap = cap ? 2 * cap : 8;
            a->creds = xrealloc(a->creds, cap * sizeof *a->creds);
        }
        a->creds[a->n++] = cr;
    }
    *out = a;
    return 0;
}

int auth_load(const char *path, auth_t **out, oct_errbuf_t *eb)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    int e = oct_strbuf_read_file(&sb, path); /* never 0 on failure */
    if (e == -EIO) {
        oct_strbuf_free(&sb);
        return oct_err(eb, -EIO, "cannot read credentials file '%s'", path);
    }
    if (e) {
        oct_strbuf_free(&sb);
        return oct_err(eb, e, "cannot read credentials file '%s': %s", path, strerror(-e));
    }
    int rc = auth_parse(oct_strbuf_cstr(&sb), sb.len, out, eb);
    oct_strbuf_free(&sb);
    if (rc) {
        char m[OCT_ERRBUF_SIZE];
        snprintf(m, sizeof m, "%s", eb->msg);
        return oct_err(eb, rc, "%s:%s", path, m + 4); /* "line 3: x" -> "<path>:3: x" */
    }
    return 0;
}

void auth_free(auth_t *a)
{
    if (!a) return;
    free(a->creds);
    free(a);
}

size_t auth_count(const auth_t *a)
{
    return a ? a->n : 0;
}

/* ---- checks ------------------------------------------------------------ */

static void salted(const auth_cred_t *cr, const char *secret, size_t len,
                   uint8_t out[OCT_SHA256_LEN])
{
    oct_sha256_t c;
    oct_sha256_init(&c);
    oct_sha256_update(&c, cr->salt, cr->salt_len);
    oct_sha256_update(&c, secret, len);
    oct_sha256_final(&c, out);
}

auth_role_t auth_check_token(const auth_t *a, const char *tok, size_t len)
{
    if (!a || len == 0) return AUTH_ROLE_NONE;
    unsigned role = AUTH_ROLE_NONE;
    uint8_t h[OCT_SHA256_LEN];
    for (size_t i = 0; i < a->n; i++) {
        const auth_cred_t *cr = &a->creds[i];
        if (cr->basic) continue;
        salted(cr, tok, len, h);
        unsigned m = (unsigned)oct_ct_equal(h, cr->hash, sizeof h);
        /* the strongest matching role, without branching on the match */
        unsigned r = (unsigned)cr->role & (0u - m);
        role = r > role ? r : role;
    }
    return (auth_role_t)role;
}

auth_role_t auth_check_basic(const auth_t *a, const char *user, size_t ulen, const char *pw,
                             size_t plen)
{
    if (!a || ulen == 0) return AUTH_ROLE_NONE;
    unsigned role = AUTH_ROLE_NONE;
    uint8_t uh[OCT_SHA256_LEN], h[OCT_SHA256_LEN];
    oct_sha256(user, ulen, uh);
    for (size_t i = 0; i < a->n; i++) {
        const auth_cred_t *cr = &a->creds[i];
        if (!cr->basic) continue;
        salted(cr, pw, plen, h);
        unsigned m =
            (unsigned)(oct_ct_equal(uh, cr->user, sizeof uh) & oct_ct_equal(h, cr->hash, sizeof h));
        unsigned r = (unsigned)cr->role & (0u - m);
        role = r > role ? r : role;
    }
    return (auth_role_t)role;
}

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Standard base64 with optional '=' padding; returns the decoded length or
 * -1 (bad input or does not fit cap). */
static long b64_decode(const char *s, size_t n, char *out, size_t cap)
{
    while (n && s[n - 1] == '=')
        n--;
    if (n % 4 == 1) return -1;
    size_t o = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o == cap) return -1;
            out[o++] = (char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    return (long)o;
}

auth_role_t auth_check_header(const auth_t *a, const char *value)
{
    if (!a || !value) return AUTH_ROLE_NONE;
    while (*value == ' ')
        value++;
    const char *sp = strchr(value, ' ');
    if (!sp) return AUTH_ROLE_NONE;
    size_t scheme = (size_t)(sp - value);
    const char *cred = sp;
    while (*cred == ' ')
        cred++;
    size_t cl = strlen(cred);
    while (cl && (cred[cl - 1] == ' ' || cred[cl - 1] == '\t'))
        cl--;
    if (scheme == 6 && !strncasecmp(value, "Bearer", 6)) return auth_check_token(a, cred, cl);
    if (scheme == 5 && !strncasecmp(value, "Basic", 5)) {
        char dec[1024];
        long dl = b64_decode(cred, cl, dec, sizeof dec);
        if (dl < 0) return AUTH_ROLE_NONE;
        const char *colon = memchr(dec, ':', (size_t)dl);
        if (!colon) return AUTH_ROLE_NONE;
        size_t ul = (size_t)(colon - dec);
        return auth_check_basic(a, dec, ul, colon + 1, (size_t)dl - ul - 1);
    }
    return AUTH_ROLE_NONE;
}

/* ---- the daemon's set -------------------------------------------------- */

static pthread_mutex_t auth_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int auth_state; /* 0 not yet read, 1 off, 2 on */
static auth_t *auth_global;   /* written under auth_mu before auth_state = 2 */

int auth_init(const oct_config_t *cfg, oct_errbuf_t *eb)
{
    static const char key[] = "tsd.core.authentication.credentials_file";
    if (!cfg || !oct_config_get_bool(cfg, "tsd.core.authentication.enable")) return 0;
    const char *path = oct_config_get(cfg, key);
    if (!path || !*path)
        return oct_err(eb, OCT_ECONFIG, "tsd.core.authentication.enable is true but %s is not set",
                       key);
    auth_t *a = NULL;
    oct_errbuf_t le;
    oct_errbuf_clear(&le);
    int rc = auth_load(path, &a, &le);
    if (rc) return oct_err(eb, OCT_ECONFIG, "%s: %s", key, le.msg);
    if (!a->n) {
        auth_free(a);
        return oct_err(eb, OCT_ECONFIG, "%s: '%s' holds no credentials", key, path);
    }
    pthread_mutex_lock(&auth_mu);
    if (atomic_load_explicit(&auth_state, memory_order_relaxed) == 0) {
        auth_global = a;
        a = NULL;
        atomic_store_explicit(&auth_state, 2, memory_order_release);
    }
    pthread_mutex_unlock(&auth_mu);
    if (a) {
        auth_free(a); /* loaded before: the first set stays (one TSD per process) */
    } else {
        oct_log_info("auth", "authentication on: %zu credentials from %s", auth_global->n, path);
    }
    return 0;
}

const auth_t *auth_for(const tsd_ctx_t *tsd)
{
    int st = atomic_load_explicit(&auth_state, memory_order_acquire);
    if (st == 1) return NULL;
    if (st == 2) return auth_global;
    pthread_mutex_lock(&auth_mu);
    st = atomic_load_explicit(&auth_state, memory_order_relaxed);
    if (st == 0) {
        const oct_config_t *cfg = tsd ? tsd->cfg : NULL;
        if (!cfg || !oct_config_get_bool(cfg, "tsd.core.authentication.enable")) {
            st = 1;
        } else {
            const char *path = oct_config_get(cfg, "tsd.core.authentication.credentials_file");
            oct_errbuf_t eb;
            oct_errbuf_clear(&eb);
            auth_t *a = NULL;
            if (!path) {
                oct_log_error("auth", "tsd.core.authentication.enable is set but "
                                      "tsd.core.authentication.credentials_file is not: "
                                      "refusing every client");
            } else if (auth_load(path, &a, &eb)) {
                oct_log_error("auth", "%s: refusing every client", eb.msg);
                a = NULL;
            } else {
                oct_log_info("auth", "authentication on: %zu credentials from %s",
                             a ? a->n : (size_t)0, path);
            }
            auth_global = a ? a : xcalloc(1, sizeof *auth_global);
            st = 2;
        }
        atomic_store_explicit(&auth_state, st, memory_order_release);
    }
    pthread_mutex_unlock(&auth_mu);
    return st == 2 ? auth_global : NULL;
}

/* ---- gates ------------------------------------------------------------- */

int auth_http(const tsd_ctx_t *tsd, const http_request_t *req, http_response_t *resp,
              auth_role_t *role)
{
    const auth_t *a = auth_for(tsd);
    if (!a) {
        *role = AUTH_ROLE_RW;
        return 0;
    }
    const char *h = http_header(req, "Authorization");
    *role = auth_check_header(a, h);
    if (*role != AUTH_ROLE_NONE) return 0;
    http_error(resp, 401, "Unauthorized",
               h ? "Invalid credentials"
                 : "Authentication required: send an Authorization "
                   "header (Bearer <token> or Basic <credentials>)");
    http_response_add_header(resp, "WWW-Authenticate", "Bearer realm=\"octsdb\"");
    http_response_add_header(resp, "WWW-Authenticate", "Basic realm=\"octsdb\", charset=\"UTF-8\"");
    return -1;
}

void auth_http_forbidden(http_response_t *resp)
{
    http_error(resp, 403, "Forbidden",
               "This credential is read-only and may not call this endpoint with this method");
}

static int word_eq(const char *w, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && !memcmp(w, lit, l);
}

static void reply(oct_strbuf_t *out, const char *cmd, size_t n, const char *msg)
{
    oct_strbuf_append(out, cmd, n > 64 ? 64 : n);
    oct_strbuf_puts(out, ": ");
    oct_strbuf_puts(out, msg);
    oct_strbuf_append(out, "\n", 1);
}

auth_telnet_t auth_telnet_line(const auth_t *a, auth_role_t *role, unsigned *failures,
                               const char *cmd, size_t cmd_len, const char *args, size_t args_len,
                               oct_strbuf_t *out)
{
    if (word_eq(cmd, cmd_len, "auth")) {
        const char *w[2] = {NULL, NULL};
        size_t wl[2] = {0, 0}, nw = 0;
        const char *p = args, *end = args + args_len;
        while (p < end) {
            while (p < end && *p == ' ')
                p++;
            if (p == end) break;
            const char *t = p;
            while (p < end && *p != ' ')
                p++;
            if (nw < 2) {
                w[nw] = t;
                wl[nw] = (size_t)(p - t);
            }
            nw++;
        }
        if (nw == 0 || nw > 2) {
            reply(out, "auth", 4, "usage: auth <token> | auth <user> <password>");
            return AUTH_TELNET_DONE;
        }
        *role = nw == 1 ? auth_check_token(a, w[0], wl[0])
                        : auth_check_basic(a, w[0], wl[0], w[1], wl[1]);
        if (*role == AUTH_ROLE_NONE) {
            reply(out, "auth", 4, "invalid credentials");
            if (++*failures >= AUTH_TELNET_MAX_FAILURES) return AUTH_TELNET_CLOSE;
            return AUTH_TELNET_DONE;
        }
        reply(out, "auth", 4, *role == AUTH_ROLE_RW ? "ok rw" : "ok ro");
        return AUTH_TELNET_DONE;
    }
    if (word_eq(cmd, cmd_len, "version") || word_eq(cmd, cmd_len, "exit")) return AUTH_TELNET_PASS;
    if (*role == AUTH_ROLE_NONE) {
        reply(out, cmd, cmd_len, "authentication required: auth <token> | auth <user> <password>");
        return AUTH_TELNET_DONE;
    }
    if (*role == AUTH_ROLE_RO &&
        (word_eq(cmd, cmd_len, "put") || word_eq(cmd, cmd_len, "dropcaches") ||
         word_eq(cmd, cmd_len, "diediedie") || word_eq(cmd, cmd_len, "rollup") ||
         word_eq(cmd, cmd_len, "histogram"))) {
        reply(out, cmd, cmd_len, "permission denied: read-only credential");
        return AUTH_TELNET_DONE;
    }
    return AUTH_TELNET_PASS;
}
