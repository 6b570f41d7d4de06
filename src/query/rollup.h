/* rollup.h -- OpenTSDB 2.4's rollup configuration (tsd.rollups.*, the
 * config JSON of docs/rollups.md) and the pure rules built on it: which
 * configured interval a write names, the row base time of a rollup table,
 * and which table a downsampled query reads (docs/format/rollup.md,
 * docs/rollups.md). No storage here: tsdb/rollup.h stores and reads.
 *
 * Ownership: a query_rollup_config_t owns every string it points to
 * (query_rollup_config_free). It is immutable once built, so any number of
 * threads may read it at once.
 *
 * Errors: OCT_ECONFIG with 2.4's start-up texts (misspellings included:
 * "aggegation", "Unrecogznied"), so a config that 2.4 refuses is refused
 * here with the same words. */
#ifndef OCT_QUERY_ROLLUP_H
#define OCT_QUERY_ROLLUP_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

#define QUERY_ROLLUP_MIN_INTERVALS 12 /* per row span, 2.4's limits */
#define QUERY_ROLLUP_MAX_INTERVALS 7774

typedef struct {
    char *table;        /* the 2.4 table name of plain rollups */
    char *preagg_table; /* ... of rolled-up pre-aggregates (may equal table) */
    char *interval;     /* as configured: writes name it by this exact string */
    int64_t interval_s;
    char span_unit;      /* 'h', 'd', 'n' (month) or 'y' */
    int span_mult;       /* hours per row for 'h', else 1 */
    int64_t intervals;   /* per span, for validation (2.4's nominal span lengths) */
    int is_default;      /* the raw table's interval: never a rollup table to read */
    int64_t delay_sla_s; /* 0 = none */
} query_rollup_interval_t;

typedef struct {
    char *name; /* lower case */
    int id;     /* 0..127 */
} query_rollup_agg_t;

typedef struct {
    query_rollup_agg_t *aggs;
    size_t n_aggs;
    query_rollup_interval_t *iv; /* in configured order */
    size_t n_iv;
    size_t default_iv; /* index of the default interval */
    /* tsd.rollups.* beside the JSON */
    char *agg_tag_key;       /* tsd.rollups.agg_tag_key */
    char *raw_agg_tag_value; /* tsd.rollups.raw_agg_tag_value */
    int tag_raw;             /* tsd.rollups.tag_raw */
    int block_derived;       /* tsd.rollups.block_derived */
    int auto_rollup;         /* tsd.rollups.auto: the TSD computes the intervals that divide
                              * an hour from raw data as hours close (docs/rollups.md) */
    int split_query;         /* tsd.rollups.split_query.enable: rollup tables answer up to
                              * now - delaySla (and, auto, up to what is rolled up), raw data
                              * the rest (docs/rollups.md) */
} query_rollup_config_t;

/* Parses and validates the config JSON json[0..n) in 2.4's order
 * (aggregationIds, then each interval, duplicates, the default). On success
 * *out is filled (its tsd.rollups.* fields zeroed); on error out holds
 * nothing to free. */
OCT_MUST_CHECK int query_rollup_config_parse(const char *json, size_t n, query_rollup_config_t *out,
                                             oct_errbuf_t *eb);

/* From the tsd.rollups.* keys of cfg: *out is NULL when tsd.rollups.enable
 * is false, else a malloc'd config (tsd.rollups.config inline, or read from
 * the file it names when the value ends with ".json"). Errors:
 * "Rollups were enabled but 'tsd.rollups.config' is null or empty.",
 * "Failed to open conf file: <path>", and query_rollup_config_parse's;
 * tsd.rollups.auto=true without rollups, or without an interval it can
 * compute (one that divides an hour, not the default) and ids for sum and
 * count. */
OCT_MUST_CHECK int query_rollup_config_load(const oct_config_t *cfg, query_rollup_config_t **out,
                                            oct_errbuf_t *eb);

/* Does the TSD compute interval iv itself (tsd.rollups.auto): not the
 * default interval, and its interval divides an hour. */
int query_rollup_is_auto(const query_rollup_config_t *c, const query_rollup_interval_t *iv);

/* Does the TSD compute interval iv from the rollups of the source interval
 * (query_rollup_auto_source) as each of its hours closes: auto on, not the
 * default, a whole number of hours over one that divides a day and the
 * row span, so its periods are the same buckets a downsample of raw data
 * makes (2h, 3h, 4h, 6h, 8h, 12h, 1d; docs/rollups.md). */
int query_rollup_is_auto_long(const query_rollup_config_t *c, const query_rollup_interval_t *iv);

/* The interval the long auto rollups are computed from: the largest one
 * query_rollup_is_auto accepts; NULL when auto is off. */
const query_rollup_interval_t *query_rollup_auto_source(const query_rollup_config_t *c);

/* Frees what c owns and c itself (NULL is fine). */
void query_rollup_config_free(query_rollup_config_t *c);

/* The interval configured by exactly the string s[0..n) ("60m" is not
 * "1h"), or NULL. */
const query_rollup_interval_t *query_rollup_interval_find(const query_rollup_config_t *c,
                                                          const char *s, size_t n);

/* The id of aggregator name[0..n) (any case), or -1. */
int query_rollup_agg_id(const query_rollup_config_t *c, const char *name, size_t n);

/* The row base time (UTC seconds) of ts_s in interval iv's table, and the
 * base of the row after the one starting at base_s. */
int64_t query_rollup_base_time(const query_rollup_interval_t *iv, int64_t ts_s);
int64_t query_rollup_next_base(const query_rollup_interval_t *iv, int64_t base_s);

/* Table selection for a downsample of ds_interval_s seconds: the indexes of
 * every configured interval (the default too) whose interval divides it,
 * largest interval first, into idx (cap >= c->n_iv). Returns the count. */
size_t query_rollup_candidates(const query_rollup_config_t *c, int64_t ds_interval_s, size_t *idx);

#endif
