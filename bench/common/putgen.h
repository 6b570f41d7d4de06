/* putgen.h -- a realistic put workload as text: hosts x metrics series with
 * devops tags, one point per series every interval, in the three shapes the
 * TSD ingests (telnet `put` lines, /api/put JSON arrays, gzip'd JSON).
 *
 * Series (host h, metric m) carries 8 tags -- host, region, datacenter,
 * rack, os, arch, team, service -- derived from h, so a fleet is fixed by
 * (seed, hosts, metrics). Values come from datagen (bench/common/datagen.h)
 * for series index h * metrics + m and are printed as agents print them
 * (integers, or the class's decimals). Points are emitted round by round
 * (every series at t0, then t0 + interval, ...) as collectors send them.
 * Everything is deterministic; buffers are malloc'd and owned by the caller. */
#ifndef OCT_BENCH_PUTGEN_H
#define OCT_BENCH_PUTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "common/datagen.h"

#define PUTGEN_N_TAGS 8

typedef struct {
    uint64_t seed;
    size_t hosts;
    size_t metrics;      /* at most putgen_max_metrics() */
    int64_t start_s;     /* first timestamp, Unix seconds */
    int interval_s;      /* between rounds */
    unsigned class_mask; /* only series whose datagen class c has bit (1u << c); 0 = all */
} putgen_cfg_t;

/* A text buffer (malloc'd). */
typedef struct {
    char *ptr;
    size_t len, cap;
} putgen_buf_t;

void putgen_buf_free(putgen_buf_t *b);

size_t putgen_max_metrics(void);

/* One generated point; the strings are static or live in the generator
 * (valid until putgen_free). */
typedef struct {
    const char *metric;
    const char *tagk[PUTGEN_N_TAGS];
    const char *tagv[PUTGEN_N_TAGS];
    const char *telnet_tags; /* " host=... service=..." */
    const char *json_tags;   /* {"host":"...",...,"service":"..."} */
    int64_t ts_s;
    char value[40];
} putgen_point_t;

typedef struct putgen putgen_t;

/* A generator over the series of hosts [host_lo, host_hi) (so connections
 * can each own a slice of the fleet), those of cfg->class_mask's classes
 * only if it is set: a series keeps its tags and values either way, so a
 * subset is exactly those series of the whole fleet. */
putgen_t *putgen_new(const putgen_cfg_t *cfg, size_t host_lo, size_t host_hi);
void putgen_free(putgen_t *g);
size_t putgen_series(const putgen_t *g);
/* The next point, round-major over the generator's series. */
void putgen_next(putgen_t *g, putgen_point_t *p);

/* Appends `put <metric> <ts> <value> k=v ...\n`. */
void putgen_append_telnet(putgen_buf_t *b, const putgen_point_t *p);
/* Appends one /api/put JSON object {"metric":..,"timestamp":..,"value":..,"tags":{..}}. */
void putgen_append_json(putgen_buf_t *b, const putgen_point_t *p);
void putgen_append(putgen_buf_t *b, const void *p, size_t n);

/* gzip (RFC 1952) of src into dst (replacing its content). Returns 0 or -1. */
int putgen_gzip(const void *src, size_t n, putgen_buf_t *dst);

#endif
