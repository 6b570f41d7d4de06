/* http_response.c -- the response object and OpenTSDB's error body. */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

void http_response_init(http_response_t *r)
{
    memset(r, 0, sizeof *r);
    r->status = 200;
}

void http_response_free(http_response_t *r)
{
    oct_strbuf_free(&r->body);
    for (int i = 0; i < r->n_extra_headers; i++)
        free(r->extra_header_values[i]);
    r->n_extra_headers = 0;
}

void http_response_add_header(http_response_t *r, const char *name, const char *value)
{
    if (r->n_extra_headers >= HTTP_MAX_EXTRA_HEADERS) return;
    r->extra_header_names[r->n_extra_headers] = name;
    r->extra_header_values[r->n_extra_headers++] = xstrdup(value);
}

void http_error(http_response_t *r, int status, const char *message, const char *details)
{
    r->status = status;
    oct_strbuf_reset(&r->body);
    oct_strbuf_printf(&r->body, "{\"error\":{\"code\":%d,\"message\":", status);
    oct_strbuf_json_string(&r->body, message, strlen(message));
    if (details && *details) {
        oct_strbuf_puts(&r->body, ",\"details\":");
        oct_strbuf_json_string(&r->body, details, strlen(details));
    }
    oct_strbuf_puts(&r->body, "}}");
}
