/* stats_text.h -- the daemon's counters as OpenTSDB's ASCII stats lines,
 * "tsd.<name> <unix secs> <value> [<tag>] host=<host> [port=<port>]\n", as
 * the telnet `stats` command and the legacy /stats route write them. Any
 * thread (stats_collect). */
#ifndef OCT_SERVER_STATS_TEXT_H
#define OCT_SERVER_STATS_TEXT_H

#include "common/strbuf.h"
#include "server/tsd.h"

/* Appends the lines to out. fqdn: tag "fqdn=" instead of "host="
 * (tsd.stats.canonical); port >= 0 adds "port=<port>"
 * (tsd.core.stats_with_port). */
void stats_text(tsd_ctx_t *t, int fqdn, long long port, oct_strbuf_t *out);

#endif
