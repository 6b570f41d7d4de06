/* auth.h -- optional authentication of HTTP requests and telnet sessions:
 * bearer tokens and Basic credentials from a file, with read-only (ro) and
 * read-write (rw) roles. Off by default (OpenTSDB 2.4 has none).
 *
 * Turned on by tsd.core.authentication.enable=true; the credentials come
 * from tsd.core.authentication.credentials_file, one per line:
 *
 *     # comment
 *     token <digest> <ro|rw>
 *     basic <user> <digest> <ro|rw>
 *
 * where <digest> is the lower- or upper-case hex SHA-256 of the secret
 * (`printf %s "$secret" | sha256sum`), optionally written "sha256:<hex>",
 * or "sha256:<salt>:<hex>" for SHA-256(salt || secret). A Basic password
 * should instead be a slow, salted hash (docs/reliability.md, "Access"): Argon2
 * ("$argon2id$...", libargon2) or a crypt(3) string of yescrypt ("$y$"),
 * bcrypt ("$2b$") or sha512crypt ("$6$") (libcrypt); `octsdb passwd`
 * makes one. Only digests are held in memory; SHA-256 checks compare all
 * credentials in constant time; a slow hash runs once per distinct accepted
 * password (then a keyed SHA-256 memo of it answers), and for an unknown
 * user a dummy slow hash runs so the time does not reveal which users exist.
 *
 * HTTP: "Authorization: Bearer <token>" or "Basic <base64(user:password)>".
 * Telnet: `auth <token>` or `auth <user> <password>`; until then only
 * `auth`, `version` (tcollector's health probe) and `exit` are served.
 * A read-only credential may not write (put, uid assignment, annotations,
 * meta changes, query deletes, dropcaches, diediedie).
 *
 * Threads: a loaded auth_t may be shared by all threads (only its
 * password memo changes, under its own lock). */
#ifndef OCT_SERVER_AUTH_H
#define OCT_SERVER_AUTH_H

#include <stddef.h>

#include "common/err.h"
#include "common/strbuf.h"
#include "server/http.h"
#include "server/tsd.h"

typedef enum { AUTH_ROLE_NONE = 0, AUTH_ROLE_RO = 1, AUTH_ROLE_RW = 2 } auth_role_t;

typedef struct auth auth_t;

/* Parses a credentials file's text. Returns 0 and *out (caller frees with
 * auth_free), or OCT_ECONFIG with "line <n>: <reason>" in eb. */
OCT_MUST_CHECK int auth_parse(const char *text, size_t len, auth_t **out, oct_errbuf_t *eb);

/* Reads and parses the file at path. Returns 0, -errno (unreadable), or
 * OCT_ECONFIG ("<path>:<line>: <reason>"). */
OCT_MUST_CHECK int auth_load(const char *path, auth_t **out, oct_errbuf_t *eb);

void auth_free(auth_t *a);

/* Number of credentials held. */
size_t auth_count(const auth_t *a);

/* The role of a bearer token, or AUTH_ROLE_NONE. */
auth_role_t auth_check_token(const auth_t *a, const char *tok, size_t len);

/* The role of a user/password pair, or AUTH_ROLE_NONE. */
auth_role_t auth_check_basic(const auth_t *a, const char *user, size_t ulen, const char *pw,
                             size_t plen);

/* The role an Authorization header value grants ("Bearer x" / "Basic b64",
 * scheme case-insensitive); AUTH_ROLE_NONE for NULL or anything invalid. */
auth_role_t auth_check_header(const auth_t *a, const char *value);

/* Reads the daemon's credentials at startup (tsd_run, before serving).
 * Returns 0 when authentication is off or the file was loaded (auth_for then
 * returns it); OCT_ECONFIG with a message naming
 * tsd.core.authentication.credentials_file when the key is unset or the
 * file is missing, unreadable, invalid or holds no credentials. */
OCT_MUST_CHECK int auth_init(const oct_config_t *cfg, oct_errbuf_t *eb);

/* The daemon's credentials: NULL when authentication is off. Loaded from
 * tsd->cfg on the first call and kept for the life of the process (one TSD
 * per process). If the file is missing or invalid the error is logged and
 * an empty set is used, so that every request is refused (fail closed).
 * Any thread. */
const auth_t *auth_for(const tsd_ctx_t *tsd);

/* The HTTP gate, run before routing. Returns 0 with *role set (AUTH_ROLE_RW
 * when authentication is off), or -1 after filling resp with a 401
 * (OpenTSDB's error JSON plus WWW-Authenticate challenges). */
int auth_http(const tsd_ctx_t *tsd, const http_request_t *req, http_response_t *resp,
              auth_role_t *role);

/* Re-reads the daemon's credentials file (SIGHUP). On success the new set
 * answers every later check (a request already holding the old set finishes
 * with it; old sets are kept until exit). On failure the old set stays and
 * OCT_ECONFIG/-errno with a message is returned. 0 and nothing done when
 * authentication is off. Any thread. */
int auth_reload(oct_errbuf_t *eb);

typedef enum { AUTH_HASH_ARGON2ID = 0, AUTH_HASH_YESCRYPT = 1 } auth_hash_scheme_t;

/* A new slow hash of a password (random salt) for a `basic` line, into out
 * (NUL-terminated; 128 bytes are enough). Returns 0, or OCT_EINVAL/OCT_EIO
 * with eb. */
OCT_MUST_CHECK int auth_hash_password(auth_hash_scheme_t scheme, const char *pw, size_t plen,
                                      char *out, size_t cap, oct_errbuf_t *eb);

/* A new random bearer token (64 hex digits) and its SHA-256 digest (hex),
 * for a `token` line. Returns 0 or OCT_EIO. */
#define AUTH_TOKEN_TEXT 65
OCT_MUST_CHECK int auth_make_token(char token[AUTH_TOKEN_TEXT], char digest[65], oct_errbuf_t *eb);

/* Fills resp with the 403 a read-only credential gets on a write. */
void auth_http_forbidden(http_response_t *resp);

typedef enum {
    AUTH_TELNET_PASS = 0, /* run the command */
    AUTH_TELNET_DONE,     /* answered (auth, or refused): nothing more to do */
    AUTH_TELNET_CLOSE,    /* answered; close the connection (too many failures) */
} auth_telnet_t;

/* Failed `auth` attempts after which a telnet connection is closed. */
#define AUTH_TELNET_MAX_FAILURES 3

/* The telnet gate for one command line of a session (call only when
 * auth_for() is non-NULL). cmd/cmd_len is the command word, args the rest
 * of the line. Handles `auth` (sets *role, counts *failures), refuses what
 * *role may not run with an error line in out, passes the rest. */
auth_telnet_t auth_telnet_line(const auth_t *a, auth_role_t *role, unsigned *failures,
                               const char *cmd, size_t cmd_len, const char *args, size_t args_len,
                               oct_strbuf_t *out);

#endif
