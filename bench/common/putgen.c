/* putgen.c -- the put workload generator (see putgen.h).
 *
 * Tag values are derived from the host number by fixed arithmetic so that a
 * fleet has realistic cardinalities: thousands of hosts, 6 regions, 3
 * datacenters per region, 40 racks per datacenter, 4 OS versions, 2
 * architectures, 12 teams and 40 services. */
#include "common/putgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const metric_names[] = {
    "sys.cpu.user",      "sys.cpu.system",       "sys.cpu.iowait",      "sys.cpu.idle",
    "sys.load.1m",       "sys.load.5m",          "sys.mem.free",        "sys.mem.cached",
    "sys.mem.used",      "sys.swap.used",        "sys.disk.read_bytes", "sys.disk.write_bytes",
    "sys.disk.used_pct", "sys.disk.inodes_free", "net.if.bytes_in",     "net.if.bytes_out",
    "net.if.packets_in", "net.if.packets_out",   "net.if.errors",       "net.tcp.established",
    "net.tcp.time_wait", "net.tcp.retransmits",  "proc.count",          "proc.threads",
    "proc.fds_open",     "app.http.requests",    "app.http.errors_5xx", "app.http.latency_ms",
    "app.queue.depth",   "app.gc.pause_ms",      "sys.temp.cpu",        "sys.uptime",
};

static const char *const tag_keys[PUTGEN_N_TAGS] = {
    "host", "region", "datacenter", "rack", "os", "arch", "team", "service",
};

static const char *const regions[] = {"us-east-1",    "us-west-2",  "eu-west-1",
                                      "eu-central-1", "ap-south-1", "ap-northeast-1"};
static const char *const oses[] = {"ubuntu22.04", "ubuntu20.04", "debian12", "rhel9"};
static const char *const arches[] = {"x86_64", "aarch64"};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The tags of one host, formatted once. */
typedef struct {
    char v[PUTGEN_N_TAGS][32];
    char telnet[320];
    char json[400];
} host_tags_t;

struct putgen {
    putgen_cfg_t cfg;
    size_t host_lo, host_hi;
    size_t n_series;
    size_t *local; /* selected series i -> (h - host_lo) * metrics + m */
    size_t cursor; /* next series within the round */
    int64_t round;
    datagen_series_t *ser;
    host_tags_t *hosts;
};

static void host_tags(size_t h, host_tags_t *t)
{
    size_t region = h % N_OF(regions), dc = (h / 7) % 3, rack = (h / 21) % 40;
    snprintf(t->v[0], sizeof t->v[0], "web-%05zu.prod", h);
    snprintf(t->v[1], sizeof t->v[1], "%s", regions[region]);
    snprintf(t->v[2], sizeof t->v[2], "%s%c", regions[region], (int)('a' + dc));
    snprintf(t->v[3], sizeof t->v[3], "r%02zu", rack);
    snprintf(t->v[4], sizeof t->v[4], "%s", oses[(h / 5) % N_OF(oses)]);
    snprintf(t->v[5], sizeof t->v[5], "%s", arches[(h / 3) % N_OF(arches)]);
    snprintf(t->v[6], sizeof t->v[6], "team-%02zu", (h / 11) % 12);
    snprintf(t->v[7], sizeof t->v[7], "svc-%02zu", (h / 13) % 40);
    size_t a = 0, b = 0;
    b += (size_t)snprintf(t->json, sizeof t->json, "{");
    for (int k = 0; k < PUTGEN_N_TAGS; k++) {
        a += (size_t)snprintf(t->telnet + a, sizeof t->telnet - a, " %s=%s", tag_keys[k], t->v[k]);
        b += (size_t)snprintf(t->json + b, sizeof t->json - b, "%s\"%s\":\"%s\"", k ? "," : "",
                              tag_keys[k], t->v[k]);
    }
    snprintf(t->json + b, sizeof t->json - b, "}");
}

size_t putgen_max_metrics(void)
{
    return N_OF(metric_names);
}

void putgen_buf_free(putgen_buf_t *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

void putgen_append(putgen_buf_t *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->ptr, cap);
        if (!q) abort();
        b->ptr = q;
        b->cap = cap;
    }
    memcpy(b->ptr + b->len, p, n);
    b->len += n;
    b->ptr[b->len] = '\0';
}

putgen_t *putgen_new(const putgen_cfg_t *cfg, size_t host_lo, size_t host_hi)
{
    putgen_t *g = calloc(1, sizeof(*g));
    if (!g) abort();
    g->cfg = *cfg;
    if (g->cfg.metrics > N_OF(metric_names)) g->cfg.metrics = N_OF(metric_names);
    if (g->cfg.interval_s <= 0) g->cfg.interval_s = 10;
    g->host_lo = host_lo;
    g->host_hi = host_hi > host_lo ? host_hi : host_lo;
    size_t all = (g->host_hi - g->host_lo) * g->cfg.metrics;
    g->ser = calloc(all ? all : 1, sizeof(*g->ser));
    g->local = calloc(all ? all : 1, sizeof(*g->local));
    g->hosts = calloc(g->host_hi - g->host_lo + 1, sizeof(*g->hosts));
    if (!g->ser || !g->local || !g->hosts) abort();
    for (size_t h = g->host_lo; h < g->host_hi; h++)
        host_tags(h, &g->hosts[h - g->host_lo]);
    for (size_t i = 0; i < all; i++) {
        size_t h = g->host_lo + i / g->cfg.metrics, m = i % g->cfg.metrics;
        datagen_series_t *s = &g->ser[g->n_series];
        datagen_series_init(s, g->cfg.seed, h * g->cfg.metrics + m, g->cfg.start_s * 1000);
        if (g->cfg.class_mask && !(g->cfg.class_mask & (1u << s->cls))) continue;
        g->local[g->n_series++] = i;
    }
    return g;
}

void putgen_free(putgen_t *g)
{
    if (!g) return;
    free(g->ser);
    free(g->local);
    free(g->hosts);
    free(g);
}

size_t putgen_series(const putgen_t *g)
{
    return g->n_series;
}

/* Formats a decimal integer (faster than printf for the bulk of a data set). */
static size_t fmt_i64(char *out, long long v)
{
    char tmp[24];
    size_t n = 0, o = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    if (v < 0) out[o++] = '-';
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        out[o++] = tmp[--n];
    return o;
}

void putgen_next(putgen_t *g, putgen_point_t *p)
{
    size_t i = g->cursor, li = g->local[i];
    size_t h = g->host_lo + li / g->cfg.metrics, m = li % g->cfg.metrics;
    codec_point_t pt;
    datagen_series_next(&g->ser[i], &pt);

    const host_tags_t *ht = &g->hosts[h - g->host_lo];
    p->metric = metric_names[m];
    for (int k = 0; k < PUTGEN_N_TAGS; k++) {
        p->tagk[k] = tag_keys[k];
        p->tagv[k] = ht->v[k];
    }
    p->telnet_tags = ht->telnet;
    p->json_tags = ht->json;
    p->ts_s = g->cfg.start_s + g->round * g->cfg.interval_s;
    if (pt.is_float)
        snprintf(p->value, sizeof p->value, "%.*f", (int)g->ser[i].decimals, pt.val.f);
    else
        p->value[fmt_i64(p->value, (long long)pt.val.i)] = '\0';

    if (++g->cursor >= g->n_series) {
        g->cursor = 0;
        g->round++;
    }
}

void putgen_append_telnet(putgen_buf_t *b, const putgen_point_t *p)
{
    char line[512];
    size_t n = 0, l;
    memcpy(line, "put ", 4);
    n = 4;
    l = strlen(p->metric);
    memcpy(line + n, p->metric, l);
    n += l;
    line[n++] = ' ';
    n += fmt_i64(line + n, (long long)p->ts_s);
    line[n++] = ' ';
    l = strlen(p->value);
    memcpy(line + n, p->value, l);
    n += l;
    l = strlen(p->telnet_tags);
    memcpy(line + n, p->telnet_tags, l);
    n += l;
    line[n++] = '\n';
    putgen_append(b, line, n);
}

void putgen_append_json(putgen_buf_t *b, const putgen_point_t *p)
{
    char obj[640];
    int n =
        snprintf(obj, sizeof obj, "{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%s,\"tags\":%s}",
                 p->metric, (long long)p->ts_s, p->value, p->json_tags);
    putgen_append(b, obj, (size_t)n);
}

int putgen_gzip(const void *src, size_t n, putgen_buf_t *dst)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -1;
    uLong bound = deflateBound(&zs, (uLong)n) + 32;
    dst->len = 0;
    if (dst->cap < bound + 1) {
        char *q = realloc(dst->ptr, bound + 1);
        if (!q) abort();
        dst->ptr = q;
        dst->cap = bound + 1;
    }
    zs.next_in = (Bytef *)(uintptr_t)src;
    zs.avail_in = (uInt)n;
    zs.next_out = (Bytef *)dst->ptr;
    zs.avail_out = (uInt)bound;
    int rc = deflate(&zs, Z_FINISH);
    dst->len = zs.total_out;
    deflateEnd(&zs);
    return rc == Z_STREAM_END ? 0 : -1;
}
