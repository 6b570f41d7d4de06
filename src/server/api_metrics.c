/* api_metrics.c -- /metrics: the counters of /api/stats in Prometheus' text
 * exposition format (version 0.0.4), so the TSD can be scraped by the tools
 * operators already run.
 *
 * Names: OpenTSDB's stat name without "tsd.", '.' and '-' made '_', under
 * "octsdb_"; counters end in "_total" ("tsd.rpc.received" type=put ->
 * octsdb_rpc_received_total{type="put"}), gauges do not
 * ("tsd.connectionmgr.connections" type=open -> octsdb_connectionmgr_
 * connections{type="open"}), so a stat whose tags mix counters and a gauge
 * becomes two families. The one exception is tsd.uptime, in seconds:
 * octsdb_uptime_seconds. The stat's tag becomes the one label; /api/stats'
 * host tag is left out (Prometheus adds its own instance label). Each
 * family gets one HELP and one TYPE line and all its samples together, as
 * the format requires, in the order of their first appearance in
 * /api/stats. The figures are the same table as /api/stats and telnet
 * `stats` (server/stats.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "server/api_int.h"
#include "server/stats.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The Prometheus family name of st into buf (cap >= 128). */
static void metrics_name(const tsd_stat_t *st, char *buf, size_t cap)
{
    const char *m = st->metric;
    if (!strncmp(m, "tsd.", 4)) m += 4;
    if (!strcmp(m, "uptime")) {
        snprintf(buf, cap, "octsdb_uptime_seconds");
        return;
    }
    size_t n = (size_t)snprintf(buf, cap, "octsdb_");
    for (; *m && n + 7 < cap; m++)
        buf[n++] = (*m == '.' || *m == '-') ? '_' : *m;
    buf[n] = '\0';
    if (!st->gauge) snprintf(buf + n, cap - n, "_total");
}

/* The sample line: name{k="v"} value. Tag values are our own static words
 * (no quote, backslash or newline), so they need no escaping. */
static void metrics_sample(oct_strbuf_t *b, const char *name, const tsd_stat_t *st)
{
    const char *eq = strchr(st->tag, '=');
    if (eq)
        oct_strbuf_printf(b, "%s{%.*s=\"%s\"} %" PRIu64 "\n", name, (int)(eq - st->tag), st->tag,
                          eq + 1, st->value);
    else
        oct_strbuf_printf(b, "%s %" PRIu64 "\n", name, st->value);
}

void api_metrics(api_call_t *c)
{
    tsd_stat_t stats[STATS_MAX];
    char names[STATS_MAX][128];
    int done[STATS_MAX] = {0};
    size_t n = stats_collect(c->tsd, stats);
    for (size_t i = 0; i < n; i++)
        metrics_name(&stats[i], names[i], sizeof names[i]);

    oct_strbuf_t *b = &c->resp->body;
    oct_strbuf_reset(b);
    for (size_t i = 0; i < n; i++) {
        if (done[i]) continue;
        oct_strbuf_printf(b, "# HELP %s octsdb's %s (/api/stats).\n# TYPE %s %s\n", names[i],
                          stats[i].metric, names[i], stats[i].gauge ? "gauge" : "counter");
        for (size_t j = i; j < n; j++) {
            if (done[j] || strcmp(names[j], names[i])) continue;
            metrics_sample(b, names[i], &stats[j]);
            done[j] = 1;
        }
    }
    c->resp->content_type = METRICS_CONTENT_TYPE;
}
