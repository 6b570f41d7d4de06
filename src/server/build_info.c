/* build_info.c -- see build_info.h. */
#include "server/build_info.h"

#include "oct_build_info.h" /* generated into the build tree */

#ifndef OCT_VERSION
#define OCT_VERSION "0.0.0"
#endif

/* The OpenTSDB API level we implement: clients that parse "version" for
 * features see 2.4; the build's own identity is in the other fields. */
#define BUILD_API_VERSION "2.4.1"

void build_info_text(oct_strbuf_t *out)
{
    oct_strbuf_puts(out,
                    "net.opentsdb.tools octsdb " OCT_VERSION
                    " built at revision " OCT_BUILD_SHORT_REVISION " (" OCT_BUILD_REPO_STATUS ")\n"
                    "Built on " OCT_BUILD_DATE " by " OCT_BUILD_USER "@" OCT_BUILD_HOST
                    ":" OCT_BUILD_REPO "\n");
}

void build_info_json(json_writer_t *w)
{
    static const char *const kv[][2] = {
        {"version", BUILD_API_VERSION},
        {"short_revision", OCT_BUILD_SHORT_REVISION},
        {"full_revision", OCT_BUILD_FULL_REVISION},
        {"timestamp", OCT_BUILD_TIMESTAMP},
        {"repo_status", OCT_BUILD_REPO_STATUS},
        {"user", OCT_BUILD_USER},
        {"host", OCT_BUILD_HOST},
        {"repo", OCT_BUILD_REPO},
        {"branch", OCT_BUILD_BRANCH},
        {"octsdb_version", OCT_VERSION},
        {"octsdb_revision", OCT_BUILD_DESCRIBE},
    };
    json_w_obj_begin(w);
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i++) {
        json_w_key(w, kv[i][0]);
        json_w_str(w, kv[i][1]);
    }
    json_w_obj_end(w);
}
