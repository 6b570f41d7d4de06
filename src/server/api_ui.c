/* api_ui.c -- the web UI: "/" is ui/index.html, "/ui/<file>" the rest.
 *
 * By default the files come from the binary (ui_assets.h), so the UI works
 * with no network and nothing installed. With tsd.http.uiroot (--ui-dir)
 * they are read from that directory on every request, with api_static's
 * containment checks, for UI development without a rebuild. With
 * tsd.core.enable_ui false (--disable-ui) both paths are the 404 every
 * unknown path gets.
 *
 * Every answer carries an ETag and "Cache-Control: no-cache": browsers
 * revalidate each time and get a 304 while the file is unchanged, so a new
 * binary's UI is never mixed with a cached one's. The embedded gzip copy is
 * sent when the client accepts gzip (Vary: Accept-Encoding; its ETag gets a
 * "-gz" suffix, the representations differ). The Content-Security-Policy
 * allows only this origin's scripts, styles and API: the page has no inline
 * script or style, so an injected one does not run. */
#include "server/api_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/sha256.h"
#include "server/ui_assets.h"

#define UI_CSP                                                                                     \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "        \
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "                   \
    "frame-ancestors 'none'"

/* 1 if Accept-Encoding lists gzip with a non-zero q (RFC 9110 12.5.3). */
static int ui_accepts_gzip(const char *ae)
{
    while (ae && *ae) {
        while (*ae == ' ' || *ae == ',')
            ae++;
        const char *end = strchr(ae, ',');
        size_t n = end ? (size_t)(end - ae) : strlen(ae);
        size_t tok = strcspn(ae, " ;,");
        if ((tok == 4 && !strncasecmp(ae, "gzip", 4)) || (tok == 1 && ae[0] == '*')) {
            const char *q = memchr(ae, ';', n);
            if (!q) return 1;
            const char *eq = memchr(q, '=', n - (size_t)(q - ae));
            /* "q=0", "q=0.0", "q=0.000": refused; anything else accepted */
            if (!eq) return 1;
            eq++;
            while (*eq == ' ')
                eq++;
            if (*eq != '0') return 1;
            for (eq++; *eq == '.' || *eq == '0'; eq++)
                ;
            if (eq < ae + n && *eq >= '1' && *eq <= '9') return 1;
            return 0;
        }
        ae = end;
    }
    return 0;
}

/* 1 if If-None-Match names etag (or is "*"); weak and strong compare alike. */
static int ui_etag_matches(const char *inm, const char *etag)
{
    if (!inm) return 0;
    if (!strcmp(inm, "*")) return 1;
    size_t el = strlen(etag);
    for (const char *p = strstr(inm, etag); p; p = strstr(p + 1, etag)) {
        char after = p[el];
        if (!after || after == ',' || after == ' ') return 1;
    }
    return 0;
}

static const ui_asset_t *ui_find(const char *rel)
{
    for (size_t i = 0; i < ui_assets_count; i++)
        if (!strcmp(ui_assets[i].path, rel)) return &ui_assets[i];
    return NULL;
}

static void ui_headers(api_call_t *c, const char *rel, const char *etag)
{
    c->resp->content_type = api_static_type(rel);
    http_response_add_header(c->resp, "ETag", etag);
    http_response_add_header(c->resp, "Cache-Control", "no-cache");
    http_response_add_header(c->resp, "Vary", "Accept-Encoding");
    http_response_add_header(c->resp, "Content-Security-Policy", UI_CSP);
    http_response_add_header(c->resp, "X-Content-Type-Options", "nosniff");
}

void api_ui(api_call_t *c, const char *rel)
{
    if (!oct_config_get_bool(c->tsd->cfg, "tsd.core.enable_ui")) {
        http_error(c->resp, 404, "Endpoint not found", NULL);
        return;
    }
    int head = !strcmp(c->method, "HEAD");
    if (!(c->verb & API_GET) && !head) {
        api_method_not_allowed(c);
        return;
    }
    const char *inm = http_header(c->req, "If-None-Match");
    const char *dir = oct_config_get(c->tsd->cfg, "tsd.http.uiroot");
    char etag[2 * 16 + 8];
    if (dir) {
        if (api_static_load(dir, rel, &c->resp->body)) {
            http_error(c->resp, 404, "Endpoint not found", NULL);
            return;
        }
        uint8_t h[OCT_SHA256_LEN];
        oct_sha256(c->resp->body.ptr, c->resp->body.len, h);
        size_t n = 0;
        etag[n++] = '"';
        for (int i = 0; i < 16; i++)
            n += (size_t)snprintf(etag + n, sizeof etag - n, "%02x", h[i]);
        snprintf(etag + n, sizeof etag - n, "\"");
    } else {
        const ui_asset_t *a = ui_find(rel);
        if (!a) {
            http_error(c->resp, 404, "Endpoint not found", NULL);
            return;
        }
        int gz = ui_accepts_gzip(http_header(c->req, "Accept-Encoding"));
        /* "<hash>-gz" for the gzip'd copy: the embedded tag ends in '"' */
        snprintf(etag, sizeof etag, "%.*s%s", (int)strlen(a->etag) - (gz ? 1 : 0), a->etag,
                 gz ? "-gz\"" : "");
        oct_strbuf_reset(&c->resp->body);
        if (gz) {
            oct_strbuf_append(&c->resp->body, a->gz, a->gz_len);
            http_response_add_header(c->resp, "Content-Encoding", "gzip");
        } else {
            oct_strbuf_append(&c->resp->body, a->data, a->len);
        }
    }
    ui_headers(c, rel, etag);
    c->resp->status = 200;
    if (ui_etag_matches(inm, etag)) {
        c->resp->status = 304;
        oct_strbuf_reset(&c->resp->body);
    }
}
