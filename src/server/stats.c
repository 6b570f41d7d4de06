/* stats.c -- the stats table (stats.h) and the latency histogram (stats_latency.h).
 *
 * Order: OpenTSDB 2.4's (connections, RPCs, HTTP latency, put errors, queries, then per UID
 * kind its cache and ID figures, points added, compaction), then octsdb's own figures. Names
 * and what each counts: docs/stats.md. */
#include "server/stats.h"

#include <pthread.h>
#include <string.h>

#include "common/clock.h"
#include "server/stats_latency.h"
#include "server/stats_query.h"
#include "tsdb/maint.h"
#include "tsdb/retention.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"
#include "uid/uid.h"

/* ---- latency histogram ------------------------------------------------------------------ */

void stats_latency_init(stats_latency_t *h)
{
    for (int i = 0; i < STATS_LAT_BUCKETS; i++)
        atomic_init(&h->n[i], 0);
}

static unsigned lat_bucket(uint64_t us)
{
    if (us < 16) return (unsigned)us;
    unsigned e = 63u - (unsigned)__builtin_clzll(us); /* >= 4 */
    unsigned b = 16 + (e - 4) * 8 + (unsigned)((us >> (e - 3)) & 7);
    return b < STATS_LAT_BUCKETS ? b : STATS_LAT_BUCKETS - 1;
}

static uint64_t lat_upper_us(unsigned b)
{
    if (b < 16) return b;
    unsigned e = (b - 16) / 8 + 4, sub = (b - 16) % 8;
    return (((uint64_t)8 + sub) << (e - 3)) + ((uint64_t)1 << (e - 3)) - 1;
}

void stats_latency_add(stats_latency_t *h, uint64_t us)
{
    atomic_fetch_add_explicit(&h->n[lat_bucket(us)], 1, memory_order_relaxed);
}

uint64_t stats_latency_pct_ms(const stats_latency_t *h, unsigned pct)
{
    uint64_t n[STATS_LAT_BUCKETS], total = 0;
    for (int i = 0; i < STATS_LAT_BUCKETS; i++)
        total += n[i] = atomic_load_explicit(&h->n[i], memory_order_relaxed);
    if (total == 0) return 0;
    uint64_t rank = (total * pct + 99) / 100, seen = 0; /* the ceil(total * pct / 100)-th sample */
    if (rank == 0) rank = 1;
    for (unsigned i = 0; i < STATS_LAT_BUCKETS; i++) {
        seen += n[i];
        if (seen >= rank) return lat_upper_us(i) / 1000;
    }
    return lat_upper_us(STATS_LAT_BUCKETS - 1) / 1000;
}

/* ---- the table -------------------------------------------------------------------------- */

/* The bytes the store holds, for tsd.storage.bytes. Asking costs a walk of
 * the index on RADOS, and the stats are polled (the UI's status page,
 * scrapers of /metrics): the answer is kept STORAGE_BYTES_TTL_MS per TSD.
 * A store that cannot tell gives 0. */
#define STORAGE_BYTES_TTL_MS 10000
static uint64_t stats_storage_bytes(tsd_ctx_t *tsd, int64_t now_ms)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static const tsd_ctx_t *for_tsd;
    static int64_t at_ms;
    static uint64_t bytes;
    pthread_mutex_lock(&mu);
    if (for_tsd != tsd || now_ms - at_ms >= STORAGE_BYTES_TTL_MS || now_ms < at_ms) {
        oct_errbuf_t eb;
        uint64_t b = 0;
        if (tsdb_disk_usage(tsd->db, &b, &eb)) b = 0;
        for_tsd = tsd;
        at_ms = now_ms;
        bytes = b;
    }
    uint64_t b = bytes;
    pthread_mutex_unlock(&mu);
    return b;
}

static uint64_t ctr(const tsd_ctx_t *t, tsd_counter_t c)
{
    return atomic_load_explicit(&t->counters[c], memory_order_relaxed);
}

size_t stats_collect(tsd_ctx_t *t, tsd_stat_t *out)
{
    static const struct {
        const char *metric, *tag;
    } ctrs[] = {
#define TSD_CTR_NAME(e, name, tag) {"tsd." name, tag},
        TSD_COUNTER_MAP(TSD_CTR_NAME)
#undef TSD_CTR_NAME
    };
    _Static_assert(TSD_CTR_COUNT + 1 + 8 + 1 + 5 * CODEC_UID_N_KINDS + 18 <= STATS_MAX,
                   "STATS_MAX too small");
    size_t n = 0;
#define STAT(m, tg, v, g) (out[n++] = (tsd_stat_t){(m), (tg), (v), (g)})
    STAT("tsd.connectionmgr.connections", "type=total",
         ctr(t, TSD_CTR_CONN_TELNET) + ctr(t, TSD_CTR_CONN_HTTP), 0);
    for (size_t i = 0; i < TSD_CTR_COUNT; i++)
        STAT(ctrs[i].metric, ctrs[i].tag, ctr(t, (tsd_counter_t)i), i == TSD_CTR_CONN_OPEN);

    static const char *const pct_names[4] = {"tsd.http.latency_50pct", "tsd.http.latency_75pct",
                                             "tsd.http.latency_90pct", "tsd.http.latency_95pct"};
    static const unsigned pcts[4] = {50, 75, 90, 95};
    for (int i = 0; i < 4; i++)
        STAT(pct_names[i], "type=all", stats_latency_pct_ms(&t->lat_http, pcts[i]), 1);
    for (int i = 0; i < 4; i++)
        STAT(pct_names[i], "type=graph", stats_latency_pct_ms(&t->lat_graph, pcts[i]), 1);
    STAT("tsd.query.count", "type=running", stats_queries_running(t->queries), 1);

    int64_t now_ms = oct_clock_wall_ms();
    if (!t->db) return n;
    uid_registry_t *u = tsdb_uids(t->db);
    static const char *const kinds[] = {"kind=metrics", "kind=tagk", "kind=tagv"};
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        uid_kind_stats_t cs;
        uid_kind_stats(u, (codec_uid_kind_t)k, &cs);
        uint64_t used = 0;
        if (uid_counter(u, (codec_uid_kind_t)k, &used, NULL)) used = 0;
        uint64_t max = codec_uid_max(uid_width(u, (codec_uid_kind_t)k));
        STAT("tsd.uid.cache-hit", kinds[k], cs.hits, 0);
        STAT("tsd.uid.cache-miss", kinds[k], cs.misses, 0);
        STAT("tsd.uid.cache-size", kinds[k], cs.size, 1);
        STAT("tsd.uid.ids-used", kinds[k], used, 1);
        STAT("tsd.uid.ids-available", kinds[k], max > used ? max - used : 0, 1);
    }

    tsdb_stats_t st;
    memset(&st, 0, sizeof st);
    tsdb_stats(t->db, &st);
    STAT("tsd.datapoints.added", "type=all", st.points_accepted, 0);
    STAT("tsd.compaction.count", "type=flush", st.blocks_flushed, 0);
    /* octsdb's own */
    STAT("tsd.uptime", "", (uint64_t)(now_ms / 1000 - t->started_s), 1);
    STAT("tsd.datapoints.rejected", "type=all", st.points_rejected, 0);
    STAT("tsd.datapoints.duplicates", "", st.duplicates, 0);
    STAT("tsd.series.active", "", st.series, 1);
    STAT("tsd.series.created", "", st.series_created, 0);
    STAT("tsd.head.points", "", st.head_points, 1);
    STAT("tsd.wal.bytes_written", "", st.wal_bytes_written, 0);
    STAT("tsd.wal.syncs", "", st.wal_syncs, 0);
    STAT("tsd.wal.replayed_records", "", st.wal_replayed_records, 0);
    STAT("tsd.wal.torn_bytes", "", st.wal_torn_bytes, 0);
    STAT("tsd.storage.flush_errors", "", st.flush_errors, 0);
    STAT("tsd.storage.bytes", "", stats_storage_bytes(t, now_ms), 1);
    tsdb_retention_stats_t rs;
    tsdb_retention_stats(t->db, &rs);
    STAT("tsd.retention.passes", "", rs.passes, 0);
    STAT("tsd.retention.errors", "", rs.errors, 0);
    STAT("tsd.retention.expired.partitions", "table=raw", rs.raw_parts, 0);
    STAT("tsd.retention.expired.partitions", "table=rollup", rs.rollup_parts, 0);
#undef STAT
    return n;
}
