/* build_info.h -- the identity of this build (OpenTSDB's BuildData): the
 * OpenTSDB API level we implement, octsdb's own version, and the git state
 * of the source it was built from (scripts/build_info.cmake; "unknown"
 * outside a git checkout). Used by /api/version, /version and the telnet
 * `version` command. Pure functions of constants: any thread. */
#ifndef OCT_SERVER_BUILD_INFO_H
#define OCT_SERVER_BUILD_INFO_H

#include "common/json.h"
#include "common/strbuf.h"

/* OpenTSDB's two text lines (revisionString, buildString), each ending in
 * '\n': "net.opentsdb.tools octsdb <version> built at revision <short>
 * (<MINT|MODIFIED>)" and "Built on <commit date> by <user>@<host>:<repo>". */
void build_info_text(oct_strbuf_t *out);

/* 2.4's /api/version object, every value a string as 2.4 writes them
 * (version = the API level "2.4.1", timestamp = Unix seconds), plus
 * "octsdb_version" and "octsdb_revision" (git describe). */
void build_info_json(json_writer_t *w);

#endif
