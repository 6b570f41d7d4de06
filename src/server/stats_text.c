/* stats_text.c -- the stats as lines of text (stats_text.h), from the one
 * table /api/stats and /metrics also show (stats.h). */
#include "server/stats_text.h"

#include <inttypes.h>

#include "common/clock.h"
#include "server/stats.h"

void stats_text(tsd_ctx_t *t, int fqdn, long long port, oct_strbuf_t *out)
{
    long long now = (long long)(oct_clock_wall_ms() / 1000);
    tsd_stat_t st[STATS_MAX];
    size_t n = stats_collect(t, st);
    for (size_t i = 0; i < n; i++) {
        oct_strbuf_printf(out, "%s %lld %" PRIu64, st[i].metric, now, st[i].value);
        if (st[i].tag[0]) oct_strbuf_printf(out, " %s", st[i].tag);
        oct_strbuf_printf(out, " %s=%s", fqdn ? "fqdn" : "host",
                          t->hostname[0] ? t->hostname : "localhost");
        if (port >= 0) oct_strbuf_printf(out, " port=%lld", port);
        oct_strbuf_append(out, "\n", 1);
    }
}
