/* stats_text.c -- the stats as lines of text (stats_text.h). */
#include "server/stats_text.h"

#include <stdatomic.h>
#include <string.h>

#include "common/clock.h"
#include "tsdb/retention.h"
#include "tsdb/write.h"

static void stat_line(const tsd_ctx_t *t, int fqdn, long long port, oct_strbuf_t *out,
                      long long now, const char *name, unsigned long long v, const char *tag)
{
    oct_strbuf_printf(out, "tsd.%s %lld %llu", name, now, v);
    if (tag && tag[0]) oct_strbuf_printf(out, " %s", tag);
    oct_strbuf_printf(out, " %s=%s", fqdn ? "fqdn" : "host",
                      t->hostname[0] ? t->hostname : "localhost");
    if (port >= 0) oct_strbuf_printf(out, " port=%lld", port);
    oct_strbuf_append(out, "\n", 1);
}

void stats_text(tsd_ctx_t *t, int fqdn, long long port, oct_strbuf_t *out)
{
    long long now = (long long)(oct_clock_wall_ms() / 1000);
#define TSD_CTR_LINE(e, name, tag)                                                                 \
    stat_line(                                                                                     \
        t, fqdn, port, out, now, name,                                                             \
        (unsigned long long)atomic_load_explicit(&t->counters[TSD_CTR_##e], memory_order_relaxed), \
        tag);
    TSD_COUNTER_MAP(TSD_CTR_LINE)
#undef TSD_CTR_LINE
    if (!t->db) return;
    tsdb_stats_t st;
    memset(&st, 0, sizeof st);
    tsdb_stats(t->db, &st);
    stat_line(t, fqdn, port, out, now, "uptime", (unsigned long long)(now - t->started_s), "");
    stat_line(t, fqdn, port, out, now, "datapoints.added", st.points_accepted, "type=all");
    stat_line(t, fqdn, port, out, now, "datapoints.rejected", st.points_rejected, "type=all");
    stat_line(t, fqdn, port, out, now, "datapoints.duplicates", st.duplicates, "type=all");
    stat_line(t, fqdn, port, out, now, "storage.series", st.series, "type=known");
    stat_line(t, fqdn, port, out, now, "storage.series", st.series_created, "type=created");
    stat_line(t, fqdn, port, out, now, "storage.head_points", st.head_points, "");
    stat_line(t, fqdn, port, out, now, "storage.wal.bytes_written", st.wal_bytes_written, "");
    stat_line(t, fqdn, port, out, now, "storage.wal.syncs", st.wal_syncs, "");
    stat_line(t, fqdn, port, out, now, "storage.blocks_flushed", st.blocks_flushed, "");
    stat_line(t, fqdn, port, out, now, "storage.flush_errors", st.flush_errors, "");
    tsdb_retention_stats_t rs;
    tsdb_retention_stats(t->db, &rs);
    stat_line(t, fqdn, port, out, now, "retention.passes", rs.passes, "");
    stat_line(t, fqdn, port, out, now, "retention.errors", rs.errors, "");
    stat_line(t, fqdn, port, out, now, "retention.expired.partitions", rs.raw_parts, "table=raw");
    stat_line(t, fqdn, port, out, now, "retention.expired.partitions", rs.rollup_parts,
              "table=rollup");
}
