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
#include "server/stats.h"
#include "server/stats_query.h"
#include "tsdb/maint.h"
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

/* One /api/stats entry as 2.4 writes it: the value as a string, the stat's
 * tag (if any) and the host tag. */
static void api_stat_json(api_call_t *c, json_writer_t *w, int64_t now, const tsd_stat_t *st)
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

void api_stats(api_call_t *c)
{
    tsd_stat_t stats[STATS_MAX];
    size_t n = stats_collect(c->tsd, stats);
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
    json_writer_t w;
    api_json_begin(c, &w);
    stats_queries_json(c->tsd->queries, &w);
}

/* 2.4's Thread.State name for a /proc state letter (docs/stats.md). */
static const char *thread_state(char st)
{
    switch (st) {
    case 'R':
        return "RUNNABLE";
    case 'S': /* interruptible sleep: waiting on a lock, a condition or I/O */
    case 'I':
        return "WAITING";
    case 'D':
        return "BLOCKED"; /* uninterruptible, usually disk I/O */
    case 'Z':
    case 'X':
        return "TERMINATED";
    case 'T':
    case 't':
        return "STOPPED";
    default:
        return "UNKNOWN";
    }
}

void api_stats_threads(api_call_t *c)
{
    /* The process's threads from /proc/self/task/<tid>/stat: 2.4's threadID,
     * name, state and priority (the nice value here), plus the state letter
     * and CPU time. 2.4's stack and interrupted have no twin and are left out. */
    long tick = sysconf(_SC_CLK_TCK);
    if (tick <= 0) tick = 100;
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_arr_begin(&w);
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!lp || !rp || rp < lp || !rp[1] || !rp[2]) continue;
        /* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt
         * cmajflt utime(14) stime(15) cutime cstime priority(18) nice(19) */
        char state = rp[2];
        unsigned long long utime = 0, stime = 0;
        long long nice = 0;
        int got =
            sscanf(rp + 3, "%*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %lld",
                   &utime, &stime, &nice);
        json_w_obj_begin(&w);
        json_w_key(&w, "threadID");
        json_w_int(&w, strtoll(de->d_name, NULL, 10));
        json_w_key(&w, "name");
        json_w_strn(&w, lp + 1, (size_t)(rp - lp - 1));
        json_w_key(&w, "state");
        json_w_str(&w, thread_state(state));
        json_w_key(&w, "stateCode");
        json_w_strn(&w, &state, 1);
        if (got == 3) {
            json_w_key(&w, "priority");
            json_w_int(&w, nice);
            json_w_key(&w, "cpuUserMs");
            json_w_uint(&w, utime * 1000 / (unsigned long long)tick);
            json_w_key(&w, "cpuSystemMs");
            json_w_uint(&w, stime * 1000 / (unsigned long long)tick);
        }
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
