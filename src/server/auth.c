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

#include <argon2.h>
#include <crypt.h>
#include <openssl/rand.h>

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
    char *slow; /* a crypt(3) or Argon2 string (basic only), else NULL */
    /* Under auth.memo_mu: SHA-256(memo key || password) of the last password
     * the slow hash accepted, so a client sending the same Basic header on
     * every request pays the slow hash once, not per request. */
    int memo_ok;
    uint8_t memo[OCT_SHA256_LEN];
} auth_cred_t;

struct auth {
    auth_cred_t *creds;
    size_t n;
    size_t n_slow;
    pthread_mutex_t memo_mu;
    struct auth *retired_next; /* auth_retired's list */
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

/* The schemes a Basic credential's slow hash may use: memory- or CPU-hard,
 * salted. Older crypt(3) methods (DES, MD5) are refused: they are cheap to
 * brute-force. Argon2 goes to libargon2, the rest to libcrypt (docs/reliability.md, "Access"). */
static const char *const auth_crypt_prefixes[] = {"$y$", "$gy$", "$7$", "$2b$", "$2y$", "$6$"};

static argon2_type auth_argon2_type(const char *s)
{
    if (!strncmp(s, "$argon2id$", 10)) return Argon2_id;
    if (!strncmp(s, "$argon2i$", 9)) return Argon2_i;
    if (!strncmp(s, "$argon2d$", 9)) return Argon2_d;
    return (argon2_type)-1;
}

/* 1 if h is a whole hash, not just its setting ("$y$j9T$salt"): hashing
 * anything with it as the setting gives a string as long as h. Costs one
 * slow hash, once per credential at load. */
static int auth_crypt_complete(const char *h)
{
    struct crypt_data *cd = xcalloc(1, sizeof *cd);
    const char *o = crypt_rn("x", h, cd, (int)sizeof *cd);
    int ok = o && o[0] == '$' && strlen(o) == strlen(h);
    free(cd);
    return ok;
}

/* Stores a slow hash in cr, or returns why it is not acceptable. */
static const char *parse_slow(const char *s, size_t n, auth_cred_t *cr)
{
    char *h = xmalloc(n + 1);
    memcpy(h, s, n);
    h[n] = 0;
    const char *why = NULL;
    if ((int)auth_argon2_type(h) >= 0) {
        /* $argon2X$v=19$m=..,t=..,p=..$salt$hash: five fields after the name */
        size_t dollars = 0;
        for (size_t i = 0; i < n; i++)
            dollars += h[i] == '$';
        if (dollars != 5 || h[n - 1] == '$') why = "malformed Argon2 hash";
    } else {
        int known = 0;
        for (size_t i = 0; i < sizeof auth_crypt_prefixes / sizeof *auth_crypt_prefixes; i++)
            known |= !strncmp(h, auth_crypt_prefixes[i], strlen(auth_crypt_prefixes[i]));
        if (!known)
            why = "unsupported password hash (use Argon2 $argon2id$, yescrypt $y$, bcrypt $2b$ "
                  "or sha512crypt $6$; `octsdb passwd` makes one)";
        else if (crypt_checksalt(h) != CRYPT_SALT_OK || !auth_crypt_complete(h))
            why = "malformed or unsupported crypt(3) hash";
    }
    if (why) {
        free(h);
        return why;
    }
    cr->slow = h;
    return NULL;
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

static auth_t *auth_new(void);

int auth_parse(const char *text, size_t len, auth_t **out, oct_errbuf_t *eb)
{
    auth_t *a = auth_new();
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
        const char *why = NULL;
        if (wl[0] == 5 && !memcmp(w[0], "token", 5)) {
            if (nw == 3 && wl[1] && w[1][0] == '$')
                why = "token digests are SHA-256 (a token is random: a slow hash would only slow "
                      "every request)";
            else
                bad =
                    nw != 3 || parse_digest(w[1], wl[1], &cr) || parse_role(w[2], wl[2], &cr.role);
        } else if (wl[0] == 5 && !memcmp(w[0], "basic", 5)) {
            cr.basic = 1;
            if (nw == 4 && wl[2] && w[2][0] == '$') {
                bad = parse_role(w[3], wl[3], &cr.role);
                if (!bad) why = parse_slow(w[2], wl[2], &cr);
            } else {
                bad =
                    nw != 4 || parse_digest(w[2], wl[2], &cr) || parse_role(w[3], wl[3], &cr.role);
            }
            if (!bad && !why) oct_sha256(w[1], wl[1], cr.user);
        } else {
            auth_free(a);
            return oct_err(eb, OCT_ECONFIG, "line %u: expected 'token' or 'basic'", lineno);
        }
        if (why) {
            auth_free(a);
            return oct_err(eb, OCT_ECONFIG, "line %u: %s", lineno, why);
        }
        if (bad) {
            auth_free(a);
            return oct_err(eb, OCT_ECONFIG,
                           "line %u: expected 'token <sha256> <ro|rw>' or "
                           "'basic <user> <sha256 or password hash> <ro|rw>'",
                           lineno);
        }
        a->n_slow += cr.slow != NULL;
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

static auth_t *auth_new(void)
{
    auth_t *a = xcalloc(1, sizeof *a);
    pthread_mutex_init(&a->memo_mu, NULL);
    return a;
}

void auth_free(auth_t *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++)
        free(a->creds[i].slow);
    pthread_mutex_destroy(&a->memo_mu);
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

/* The key of the verified-password memo: random per process, so a memo
 * entry is useless outside this process's memory. */
static uint8_t auth_memo_key[32];
static pthread_once_t auth_memo_once = PTHREAD_ONCE_INIT;

static void auth_memo_key_init(void)
{
    if (RAND_bytes(auth_memo_key, sizeof auth_memo_key) != 1) {
        /* Without a key the memo would be a plain SHA-256 of the password:
         * still only in memory, but refuse to weaken it silently. */
        oct_log_error("auth", "no random bytes for the password memo key; memo disabled");
    }
}

static void auth_memo_of(const char *pw, size_t plen, uint8_t out[OCT_SHA256_LEN])
{
    oct_sha256_t c;
    oct_sha256_init(&c);
    oct_sha256_update(&c, auth_memo_key, sizeof auth_memo_key);
    oct_sha256_update(&c, pw, plen);
    oct_sha256_final(&c, out);
}

/* The slow check of one password against a stored crypt(3) or Argon2
 * string. pw need not be NUL-terminated; a password holding a NUL byte
 * never matches (neither scheme can have hashed it). */
static int auth_slow_verify(const char *stored, const char *pw, size_t plen)
{
    if (memchr(pw, 0, plen)) return 0;
    char *z = xmalloc(plen + 1);
    memcpy(z, pw, plen);
    z[plen] = 0;
    int ok = 0;
    argon2_type t = auth_argon2_type(stored);
    if ((int)t >= 0) {
        ok = argon2_verify(stored, z, plen, t) == ARGON2_OK;
    } else {
        struct crypt_data *cd = xcalloc(1, sizeof *cd);
        const char *h = crypt_rn(z, stored, cd, (int)sizeof *cd);
        size_t sl = strlen(stored);
        ok = h && strlen(h) == sl && oct_ct_equal(h, stored, sl);
        free(cd);
    }
    OPENSSL_cleanse(z, plen);
    free(z);
    return ok;
}

/* A slow-hash credential's check: the memo first, else the slow hash (and
 * the memo is updated when it accepts). */
static int auth_check_slow(auth_t *a, auth_cred_t *cr, const char *pw, size_t plen)
{
    uint8_t m[OCT_SHA256_LEN];
    pthread_once(&auth_memo_once, auth_memo_key_init);
    auth_memo_of(pw, plen, m);
    pthread_mutex_lock(&a->memo_mu);
    int hit = cr->memo_ok && oct_ct_equal(m, cr->memo, sizeof m);
    pthread_mutex_unlock(&a->memo_mu);
    if (hit) return 1;
    if (!auth_slow_verify(cr->slow, pw, plen)) return 0;
    pthread_mutex_lock(&a->memo_mu);
    memcpy(cr->memo, m, sizeof m);
    cr->memo_ok = 1;
    pthread_mutex_unlock(&a->memo_mu);
    return 1;
}

/* What an unknown user costs when slow hashes are in use, so the answer's
 * time does not tell which user names exist. The hash is of a random
 * password nobody knows, made with `octsdb passwd`'s default parameters. */
static const char auth_dummy_hash[] = "$argon2id$v=19$m=19456,t=2,p=1$b2N0c2RiLWR1bW15LXNhbHQ$"
                                      "zhpz1gWsJTFtpnoQsLDpD+ApzwtzQukcIHRxwAvAl7g";

auth_role_t auth_check_basic(const auth_t *ac, const char *user, size_t ulen, const char *pw,
                             size_t plen)
{
    auth_t *a = (auth_t *)ac; /* only the memo (under memo_mu) changes */
    if (!a || ulen == 0) return AUTH_ROLE_NONE;
    unsigned role = AUTH_ROLE_NONE;
    uint8_t uh[OCT_SHA256_LEN], h[OCT_SHA256_LEN];
    oct_sha256(user, ulen, uh);
    int slow_user = 0;
    for (size_t i = 0; i < a->n; i++) {
        auth_cred_t *cr = &a->creds[i];
        if (!cr->basic) continue;
        unsigned um = (unsigned)oct_ct_equal(uh, cr->user, sizeof uh);
        unsigned m;
        if (cr->slow) {
            /* user names are not secret; the slow hash runs for the named user only */
            if (!um) continue;
            slow_user = 1;
            m = (unsigned)auth_check_slow(a, cr, pw, plen);
        } else {
            salted(cr, pw, plen, h);
            m = um & (unsigned)oct_ct_equal(h, cr->hash, sizeof h);
        }
        unsigned r = (unsigned)cr->role & (0u - m);
        role = r > role ? r : role;
    }
    if (a->n_slow && !slow_user) (void)auth_slow_verify(auth_dummy_hash, pw, plen);
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
static atomic_int auth_state;         /* 0 not yet read, 1 off, 2 on */
static _Atomic(auth_t *) auth_global; /* set under auth_mu before auth_state = 2 */
static auth_t *auth_retired;          /* sets replaced by auth_reload, under auth_mu */
static const char *auth_path_loaded;  /* the file auth_global came from, under auth_mu */

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
        atomic_store_explicit(&auth_global, a, memory_order_release);
        auth_path_loaded = xstrdup(path); /* kept for auth_reload, for the process' life */
        a = NULL;
        atomic_store_explicit(&auth_state, 2, memory_order_release);
    }
    pthread_mutex_unlock(&auth_mu);
    if (a) {
        auth_free(a); /* loaded before: the first set stays (one TSD per process) */
    } else {
        oct_log_info("auth", "authentication on: %zu credentials from %s", auth_count(auth_global),
                     path);
    }
    return 0;
}

const auth_t *auth_for(const tsd_ctx_t *tsd)
{
    int st = atomic_load_explicit(&auth_state, memory_order_acquire);
    if (st == 1) return NULL;
    if (st == 2) return atomic_load_explicit(&auth_global, memory_order_acquire);
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
            atomic_store_explicit(&auth_global, a ? a : auth_new(), memory_order_release);
            auth_path_loaded = path ? xstrdup(path) : NULL;
            st = 2;
        }
        atomic_store_explicit(&auth_state, st, memory_order_release);
    }
    pthread_mutex_unlock(&auth_mu);
    return st == 2 ? atomic_load_explicit(&auth_global, memory_order_acquire) : NULL;
}

int auth_reload(oct_errbuf_t *eb)
{
    pthread_mutex_lock(&auth_mu);
    int rc = 0;
    if (atomic_load_explicit(&auth_state, memory_order_relaxed) == 2 && auth_path_loaded) {
        auth_t *a = NULL;
        oct_errbuf_t le;
        oct_errbuf_clear(&le);
        rc = auth_load(auth_path_loaded, &a, &le);
        if (!rc && !a->n) {
            auth_free(a);
            rc = oct_err(&le, OCT_ECONFIG, "'%s' holds no credentials", auth_path_loaded);
        }
        if (rc) {
            oct_err(eb, rc,
                    "tsd.core.authentication.credentials_file: %s (keeping the %zu "
                    "credentials loaded before)",
                    le.msg, auth_count(atomic_load_explicit(&auth_global, memory_order_relaxed)));
        } else {
            /* A request may still hold the old set: retire it, never free it
             * while the process runs (reloads are rare; each costs one small
             * set). */
            auth_t *old = atomic_exchange_explicit(&auth_global, a, memory_order_acq_rel);
            if (old) {
                old->retired_next = auth_retired;
                auth_retired = old;
            }
            oct_log_info("auth", "reloaded %zu credentials from %s", a->n, auth_path_loaded);
        }
    }
    pthread_mutex_unlock(&auth_mu);
    return rc;
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

/* ---- making credentials (octsdb passwd) -------------------------------- */

/* Argon2id's cost: RFC 9106's second recommended option, lowered to the
 * OWASP minimum for memory (19 MiB, 2 passes) because the TSD runs it on a
 * request thread the first time a client presents its password. */
#define AUTH_ARGON2_T     2
#define AUTH_ARGON2_M_KIB 19456
#define AUTH_ARGON2_P     1

int auth_hash_password(auth_hash_scheme_t scheme, const char *pw, size_t plen, char *out,
                       size_t cap, oct_errbuf_t *eb)
{
    if (memchr(pw, 0, plen)) return oct_err(eb, OCT_EINVAL, "the password holds a NUL byte");
    if (scheme == AUTH_HASH_ARGON2ID) {
        uint8_t salt[16];
        if (RAND_bytes(salt, sizeof salt) != 1)
            return oct_err(eb, OCT_EIO, "no random bytes for the salt");
        int r = argon2id_hash_encoded(AUTH_ARGON2_T, AUTH_ARGON2_M_KIB, AUTH_ARGON2_P, pw, plen,
                                      salt, sizeof salt, 32, out, cap);
        if (r != ARGON2_OK) return oct_err(eb, OCT_EINVAL, "argon2: %s", argon2_error_message(r));
        return 0;
    }
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$y$", 0, NULL, 0, setting, (int)sizeof setting))
        return oct_err(eb, OCT_EIO, "yescrypt: cannot make a salt: %s", strerror(errno));
    char *z = xmalloc(plen + 1);
    memcpy(z, pw, plen);
    z[plen] = 0;
    struct crypt_data *cd = xcalloc(1, sizeof *cd);
    const char *h = crypt_rn(z, setting, cd, (int)sizeof *cd);
    int rc = 0;
    if (!h || h[0] == '*')
        rc = oct_err(eb, OCT_EIO, "yescrypt: hashing failed");
    else if (strlen(h) >= cap)
        rc = oct_err(eb, OCT_EINVAL, "yescrypt: output buffer too small");
    else
        memcpy(out, h, strlen(h) + 1);
    OPENSSL_cleanse(z, plen);
    OPENSSL_cleanse(cd, sizeof *cd);
    free(z);
    free(cd);
    return rc;
}

int auth_make_token(char token[AUTH_TOKEN_TEXT], char digest[2 * OCT_SHA256_LEN + 1],
                    oct_errbuf_t *eb)
{
    uint8_t raw[32], d[OCT_SHA256_LEN];
    if (RAND_bytes(raw, sizeof raw) != 1) return oct_err(eb, OCT_EIO, "no random bytes");
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        token[2 * i] = hx[raw[i] >> 4];
        token[2 * i + 1] = hx[raw[i] & 15];
    }
    token[2 * sizeof raw] = 0;
    oct_sha256(token, 2 * sizeof raw, d);
    for (size_t i = 0; i < sizeof d; i++) {
        digest[2 * i] = hx[d[i] >> 4];
        digest[2 * i + 1] = hx[d[i] & 15];
    }
    digest[2 * sizeof d] = 0;
    OPENSSL_cleanse(raw, sizeof raw);
    return 0;
}
