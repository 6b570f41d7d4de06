/* ui_assets.h -- the web UI's files (ui/ in the source tree), embedded in
 * the binary at build time by scripts/embed_ui.cmake, which generates the
 * table's definition (ui_assets.c in the build directory).
 *
 * Each file is held twice, as is and gzip'd (gzip -9n), both with static
 * storage: nothing to free, safe to read from any thread. The ETag is
 * derived from the file's SHA-256, so it changes exactly when the file
 * does. */
#ifndef OCT_SERVER_UI_ASSETS_H
#define OCT_SERVER_UI_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path; /* relative to ui/, '/'-separated, e.g. "index.html" */
    const unsigned char *data;
    size_t len;
    const unsigned char *gz; /* the same bytes, gzip'd */
    size_t gz_len;
    const char *etag; /* quoted strong ETag of the plain bytes, e.g. "\"3f2a...\"" */
} ui_asset_t;

extern const ui_asset_t ui_assets[];
extern const size_t ui_assets_count;

#endif
