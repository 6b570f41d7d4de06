/* api_misc.c -- the small read-only endpoints: /api/version, /api/config,
 * /api/config/filters, /api/aggregators, /api/serializers, /api/stats (and
 * its query and threads sub-paths) and /api/dropcaches.
 *
 * Shapes follow OpenTSDB 2.4 (docs/http-api.md, Endpoints). Where OpenTSDB reports the
 * JVM (threads) we report the process's own threads from /proc, since that
 * is what an operator looking there wants to know. */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/clock.h"
#include "query/query.h"
#include "server/api_int.h"
#include "server/build_info.h"
#include "tsdb/maint.h"
#include "tsdb/retention.h"
#include "tsdb/tsdb.h"
#include "tsdb/write.h"

void api_version(api_call_t *c)
{
    json_writer_t w;
    api_json_begin(c, &w);
    build_info_json(&w);
}

static int api_config_cb(void *ctx, const char *key, const char *value)
{
    json_writer_t *w = ctx;
    json_w_key(w, key);
    /* OpenTSDB masks every key containing "PASS" (upper-cased match). */
    int secret = 0;
    for (const char *p = key; *p && !secret; p++)
        secret = !strncasecmp(p, "pass", 4);
    json_w_str(w, secret ? "********" : value);
    return 0;
}

void api_config(api_call_t *c)
{
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    (void)oct_config_foreach(c->tsd->cfg, api_config_cb, &w);
    json_w_obj_end(&w);
}

/* The tag-value filters of docs/query.md section 7, in name order. Our own wording. */
static const struct {
    const char *name, *desc, *examples;
} api_filters[] = {
    {"iliteral_or",
     "Matches tag values equal to one of the given literals, ignoring case. Literals are "
     "separated by the pipe character.",
     "host=iliteral_or(web01|WEB02)  {\"type\":\"iliteral_or\",\"tagk\":\"host\","
     "\"filter\":\"web01|WEB02\",\"groupBy\":false}"},
    {"iwildcard",
     "Matches tag values against a pattern in which * stands for any run of characters, "
     "ignoring case. A lone * matches every value.",
     "host=iwildcard(web*)  {\"type\":\"iwildcard\",\"tagk\":\"host\",\"filter\":\"WEB*\","
     "\"groupBy\":false}"},
    {"literal_or",
     "Matches tag values equal to one of the given literals, case-sensitively. Literals are "
     "separated by the pipe character.",
     "host=literal_or(web01|web02)  {\"type\":\"literal_or\",\"tagk\":\"host\","
     "\"filter\":\"web01|web02\",\"groupBy\":false}"},
    {"not_iliteral_or", "Matches tag values that are none of the given literals, ignoring case.",
     "host=not_iliteral_or(web01|WEB02)  {\"type\":\"not_iliteral_or\",\"tagk\":\"host\","
     "\"filter\":\"web01|WEB02\",\"groupBy\":false}"},
    {"not_literal_or", "Matches tag values that are none of the given literals, case-sensitively.",
     "host=not_literal_or(web01|web02)  {\"type\":\"not_literal_or\",\"tagk\":\"host\","
     "\"filter\":\"web01|web02\",\"groupBy\":false}"},
    {"regexp",
     "Matches tag values in which the regular expression finds a match (POSIX extended "
     "syntax; anchor with ^ and $ for a whole-value match).",
     "host=regexp(.*)  {\"type\":\"regexp\",\"tagk\":\"host\",\"filter\":\"^web[0-9]+$\","
     "\"groupBy\":false}"},
    {"wildcard",
     "Matches tag values against a pattern in which * stands for any run of characters, "
     "case-sensitively. A lone * matches every value.",
     "host=wildcard(web*)  {\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"web*\","
     "\"groupBy\":false}"},
};

void api_config_filters(api_call_t *c)
{
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    for (size_t i = 0; i < sizeof api_filters / sizeof *api_filters; i++) {
        json_w_key(&w, api_filters[i].name);
        json_w_obj_begin(&w);
        json_w_key(&w, "examples");
        json_w_str(&w, api_filters[i].examples);
        json_w_key(&w, "description");
        json_w_str(&w, api_filters[i].desc);
        json_w_obj_end(&w);
    }
    json_w_obj_end(&w);
}

void api_aggregators(api_call_t *c)
{
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    /* The executor's own table (OpenTSDB 2.4's list, docs/query.md section 6),
     * so the list cannot drift from what a query accepts. */
    for (const char *const *n = query_agg_names(); *n; n++)
        json_w_str(&w, *n);
    json_w_arr_end(&w);
}

void api_serializers(api_call_t *c)
{
    static const char *const parsers[] = {"parsePutV1",        "parseSuggestV1", "parseUidAssignV1",
                                          "parseUidRenameV1",  "parseUidMetaV1", "parseTSMetaV1",
                                          "parseSearchQueryV1"};
    static const char *const formatters[] = {
        "formatPutV1",         "formatSuggestV1",      "formatSerializersV1",
        "formatAggregatorsV1", "formatVersionV1",      "formatDropCachesV1",
        "formatUidAssignV1",   "formatUidRenameV1",    "formatUidMetaV1",
        "formatTSMetaV1",      "formatTSMetaListV1",   "formatSearchResultsV1",
        "formatConfigV1",      "formatFilterConfigV1", "formatStatsV1",
        "formatThreadStatsV1", "formatQueryStatsV1",   "formatErrorV1",
        "formatNotFoundV1"};
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    json_w_obj_begin(&w);
    json_w_key(&w, "formatters");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < sizeof formatters / sizeof *formatters; i++)
        json_w_str(&w, formatters[i]);
    json_w_arr_end(&w);
    json_w_key(&w, "serializer");
    json_w_str(&w, "json");
    json_w_key(&w, "request_content_type");
    json_w_str(&w, "application/json");
    json_w_key(&w, "parsers");
    json_w_arr_begin(&w);
    for (size_t i = 0; i < sizeof parsers / sizeof *parsers; i++)
        json_w_str(&w, parsers[i]);
    json_w_arr_end(&w);
    json_w_key(&w, "class");
    json_w_str(&w, "net.opentsdb.tsd.HttpJsonSerializer");
    json_w_key(&w, "response_content_type");
    json_w_str(&w, "application/json; charset=UTF-8");
    json_w_obj_end(&w);
    json_w_arr_end(&w);
}

/* The bytes the store holds, for tsd.storage.bytes. Asking costs a walk of
 * the index on RADOS, and /api/stats is polled (the UI's status page,
 * scrapers of /metrics): the answer is kept STORAGE_BYTES_TTL_MS per TSD.
 * A store that cannot tell gives 0. */
#define STORAGE_BYTES_TTL_MS 10000
static uint64_t api_storage_bytes(tsd_ctx_t *tsd, int64_t now_ms)
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

/* One stats entry; tag is "k=v" or "" (the host tag is always added). */
static void api_stat_json(api_call_t *c, json_writer_t *w, int64_t now, const api_stat_t *st)
{
    json_w_obj_begin(w);
    json_w_key(w, "metric");
    json_w_str(w, st->metric);
    json_w_key(w, "timestamp");
    json_w_int(w, now);
    json_w_key(w, "value");
    char v[24];
    snprintf(v, sizeof v, "%" PRIu64, st->value);
    json_w_str(w, v);
    json_w_key(w, "tags");
    json_w_obj_begin(w);
    const char *eq = strchr(st->tag, '=');
    if (eq) {
        json_w_keyn(w, st->tag, (size_t)(eq - st->tag));
        json_w_str(w, eq + 1);
    }
    json_w_key(w, "host");
    json_w_str(w, c->tsd->hostname);
    json_w_obj_end(w);
    json_w_obj_end(w);
}

size_t api_stats_collect(api_call_t *c, api_stat_t *out)
{
    static const struct {
        const char *metric, *tag;
    } ctrs[] = {
#define TSD_CTR_NAME(e, name, tag) {"tsd." name, tag},
        TSD_COUNTER_MAP(TSD_CTR_NAME)
#undef TSD_CTR_NAME
    };
    _Static_assert(TSD_CTR_COUNT + 16 + 2 * CODEC_UID_N_KINDS <= API_STATS_MAX,
                   "API_STATS_MAX too small");
    size_t n = 0;
#define API_STAT(m, t, v, g) (out[n++] = (api_stat_t){(m), (t), (v), (g)})
    for (size_t i = 0; i < TSD_CTR_COUNT; i++)
        API_STAT(ctrs[i].metric, ctrs[i].tag,
                 atomic_load_explicit(&c->tsd->counters[i], memory_order_relaxed),
                 i == TSD_CTR_CONN_OPEN);
    int64_t now = oct_clock_wall_ms() / 1000;
    API_STAT("tsd.uptime", "", (uint64_t)(now - c->tsd->started_s), 1);

    tsdb_stats_t st;
    memset(&st, 0, sizeof st);
    tsdb_stats(c->tsd->db, &st);
    API_STAT("tsd.datapoints.added", "type=all", st.points_accepted, 0);
    API_STAT("tsd.datapoints.rejected", "type=all", st.points_rejected, 0);
    API_STAT("tsd.datapoints.duplicates", "", st.duplicates, 0);
    API_STAT("tsd.series.active", "", st.series, 1);
    API_STAT("tsd.series.created", "", st.series_created, 0);
    API_STAT("tsd.head.points", "", st.head_points, 1);
    API_STAT("tsd.wal.bytes_written", "", st.wal_bytes_written, 0);
    API_STAT("tsd.wal.syncs", "", st.wal_syncs, 0);
    API_STAT("tsd.storage.blocks_flushed", "", st.blocks_flushed, 0);
    API_STAT("tsd.storage.flush_errors", "", st.flush_errors, 0);
    API_STAT("tsd.storage.bytes", "", api_storage_bytes(c->tsd, oct_clock_wall_ms()), 1);
    tsdb_retention_stats_t rs;
    tsdb_retention_stats(c->tsd->db, &rs);
    API_STAT("tsd.retention.passes", "", rs.passes, 0);
    API_STAT("tsd.retention.errors", "", rs.errors, 0);
    API_STAT("tsd.retention.expired.partitions", "table=raw", rs.raw_parts, 0);
    API_STAT("tsd.retention.expired.partitions", "table=rollup", rs.rollup_parts, 0);

    /* OpenTSDB's UID usage: tsd.uid.ids-used / ids-available kind=<kind>. */
    uid_registry_t *u = tsdb_uids(c->tsd->db);
    static const char *const kinds[] = {"kind=metrics", "kind=tagk", "kind=tagv"};
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        uint64_t used = 0;
        if (uid_counter(u, (codec_uid_kind_t)k, &used, NULL)) used = 0;
        uint64_t max = codec_uid_max(uid_width(u, (codec_uid_kind_t)k));
        API_STAT("tsd.uid.ids-used", kinds[k], used, 1);
        API_STAT("tsd.uid.ids-available", kinds[k], max > used ? max - used : 0, 1);
    }
#undef API_STAT
    return n;
}

void api_stats(api_call_t *c)
{
    api_stat_t stats[API_STATS_MAX];
    size_t n = api_stats_collect(c, stats);
    int64_t now = oct_clock_wall_ms() / 1000;
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        api_stat_json(c, &w, now, &stats[i]);
    json_w_arr_end(&w);
}

void api_stats_query(api_call_t *c)
{
    /* No query runs are tracked yet: OpenTSDB's shape with empty lists. */
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "running");
    json_w_arr_begin(&w);
    json_w_arr_end(&w);
    json_w_key(&w, "completed");
    json_w_arr_begin(&w);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
}

void api_stats_threads(api_call_t *c)
{
    /* The process's threads from /proc/self/task: id, name, state letter. */
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!lp || !rp || rp < lp) continue;
        char state = rp[1] == ' ' ? rp[2] : '?';
        const char *st = state == 'R'   ? "RUNNABLE"
                         : state == 'S' ? "WAITING"
                         : state == 'D' ? "BLOCKED"
                                        : "UNKNOWN";
        json_w_obj_begin(&w);
        json_w_key(&w, "threadID");
        json_w_int(&w, strtoll(de->d_name, NULL, 10));
        json_w_key(&w, "name");
        json_w_strn(&w, lp + 1, (size_t)(rp - lp - 1));
        json_w_key(&w, "state");
        json_w_str(&w, st);
        json_w_obj_end(&w);
    }
    if (d) closedir(d);
    json_w_arr_end(&w);
}

void api_dropcaches(api_call_t *c)
{
    uid_drop_caches(tsdb_uids(c->tsd->db));
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    json_w_key(&w, "status");
    json_w_str(&w, "200");
    json_w_key(&w, "message");
    json_w_str(&w, "Caches dropped");
    json_w_obj_end(&w);
}
