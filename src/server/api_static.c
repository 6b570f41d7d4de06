/* api_static.c -- /s/<file>: files from tsd.http.staticroot, as OpenTSDB
 * serves its UI's assets, and never anything outside that root.
 *
 * The transport has already percent-decoded the path, so "%2e%2e" and
 * "%2f" arrive as ".." and "/". The request's part after "/s/" must be a
 * relative path of non-empty segments none of which is "." or "..";
 * then the joined path is resolved with realpath(3) (which follows every
 * symlink) and must lie strictly under the root's own resolved path, so a
 * symlink inside the root that points out of it is refused too. The file is
 * opened with O_NOFOLLOW and must be a regular file; a symlink swapped in
 * between the check and the open therefore fails instead of being followed
 * (a swap of a parent directory between realpath and open remains possible
 * for someone who can already write inside the root). Every refusal is the
 * same 404 as a missing file, so probing learns nothing.
 *
 * Caching as OpenTSDB: a year, unless the URI contains "nocache". Files
 * above STATIC_MAX_BYTES are refused (the body is built in memory). */
#include "server/api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATIC_MAX_BYTES (16u << 20)

const char *api_static_type(const char *name)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=UTF-8"},
        {".htm", "text/html; charset=UTF-8"},
        {".css", "text/css"},
        {".js", "application/javascript"},
        {".json", "application/json"},
        {".png", "image/png"},
        {".gif", "image/gif"},
        {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"},
        {".svg", "image/svg+xml"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=UTF-8"},
    };
    const char *dot = strrchr(name, '.');
    if (dot && !strchr(dot, '/'))
        for (size_t i = 0; i < sizeof types / sizeof *types; i++)
            if (!strcasecmp(dot, types[i].ext)) return types[i].type;
    return "application/octet-stream";
}

/* Relative, no empty, "." or ".." segment. */
static int static_rel_ok(const char *rel)
{
    if (!rel[0] || rel[0] == '/') return 0;
    const char *s = rel;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
        if (!e) break;
        s = e + 1;
        if (!*s) return 0; /* trailing '/' */
    }
    return 1;
}

int api_static_load(const char *root, const char *rel, oct_strbuf_t *out)
{
    char rootreal[PATH_MAX], joined[PATH_MAX * 2], real[PATH_MAX];
    int fd = -1;
    struct stat st;
    if (!static_rel_ok(rel) || !realpath(root, rootreal)) goto not_found;
    size_t rl = strlen(rootreal);
    if (snprintf(joined, sizeof joined, "%s/%s", rootreal, rel) >= (int)sizeof joined)
        goto not_found;
    if (!realpath(joined, real)) goto not_found;
    /* strictly under the root: "<root>/..." (a root of "/" is "/" + rest) */
    if (rl == 1 ? real[0] != '/' || !real[1]
                : strncmp(real, rootreal, rl) != 0 || real[rl] != '/' || !real[rl + 1])
        goto not_found;
    fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
        (unsigned long long)st.st_size > STATIC_MAX_BYTES)
        goto not_found;
    oct_strbuf_reset(out);
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) goto not_found;
        if (n == 0) break;
        if (out->len + (size_t)n > STATIC_MAX_BYTES) goto not_found;
        oct_strbuf_append(out, buf, (size_t)n);
    }
    close(fd);
    return 0;
not_found:
    if (fd >= 0) close(fd);
    return -1;
}

void api_static(api_call_t *c, const char *rel)
{
    const char *root = oct_config_get(c->tsd->cfg, "tsd.http.staticroot");
    if (!root || !oct_config_get_bool(c->tsd->cfg, "tsd.core.enable_ui") || !static_rel_ok(rel)) {
        http_error(c->resp, 404, "Endpoint not found", NULL);
        return;
    }
    if (!(c->verb & API_GET)) {
        api_method_not_allowed(c);
        return;
    }
    if (api_static_load(root, rel, &c->resp->body)) {
        http_error(c->resp, 404, "Endpoint not found", NULL);
        return;
    }
    c->resp->status = 200;
    c->resp->content_type = api_static_type(rel);
    http_response_add_header(c->resp, "Cache-Control",
                             strstr(c->req->path, "nocache") || strstr(c->req->query, "nocache")
                                 ? "no-cache"
                                 : "public, max-age=31536000");
}
