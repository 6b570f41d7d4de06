/* query_rollup.c -- the rollup configuration (2.4's RollupConfig and
 * RollupInterval checks, in their order and words) and the pure rules on
 * it: interval lookup, aggregator ids, row base times, table candidates. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "query/rollup.h"

/* 2.4's nominal span lengths (seconds) used to count intervals per row. */
#define SPAN_HOUR_S  3600
#define SPAN_DAY_S   86400
#define SPAN_MONTH_S (32 * 86400)
#define SPAN_YEAR_S  (366 * 86400)

static char *jdup(const json_value_t *v)
{
    if (!v || v->type != JSON_STRING) return NULL;
    char *s = xmalloc(v->len + 1);
    memcpy(s, v->str, v->len);
    s[v->len] = '\0';
    return s;
}

static void iv_free(query_rollup_interval_t *iv)
{
    free(iv->table);
    free(iv->preagg_table);
    free(iv->interval);
}

static void cfg_clear(query_rollup_config_t *c)
{
    for (size_t i = 0; i < c->n_aggs; i++)
        free(c->aggs[i].name);
    free(c->aggs);
    for (size_t i = 0; i < c->n_iv; i++)
        iv_free(&c->iv[i]);
    free(c->iv);
    free(c->agg_tag_key);
    free(c->raw_agg_tag_value);
    memset(c, 0, sizeof *c);
}

/* aggregationIds: name -> id, each checked as 2.4 checks it. */
static int parse_aggs(const json_value_t *m, query_rollup_config_t *c, oct_errbuf_t *eb)
{
    if (!m || m->type != JSON_OBJECT || m->n == 0)
        return oct_err(eb, OCT_ECONFIG, "Rollup config given but no aggegation ID mappings found.");
    c->aggs = xcalloc(m->n, sizeof *c->aggs);
    for (const json_value_t *e = m->child; e; e = e->next) {
        char name[64];
        size_t kl = e->key_len < sizeof name - 1 ? e->key_len : sizeof name - 1;
        for (size_t i = 0; i < kl; i++)
            name[i] = (char)tolower((unsigned char)e->key[i]);
        name[kl] = '\0';
        int64_t id;
        if (e->type != JSON_NUMBER || json_number_i64(e, &id))
            return oct_err(eb, OCT_ECONFIG, "ID for aggregator must be a number: %s", name);
        if (id < 0 || id > 127)
            return oct_err(eb, OCT_ECONFIG, "ID for aggregator must be between 0 and 127: %s=%lld",
                           name, (long long)id);
        for (size_t i = 0; i < c->n_aggs; i++)
            if (c->aggs[i].id == id)
                return oct_err(eb, OCT_ECONFIG,
                               "Multiple mappings for the ID '%lld' are not allowed.",
                               (long long)id);
        if (!query_agg_find(name))
            return oct_err(eb, OCT_ECONFIG, "No such aggregator found for %s", name);
        c->aggs[c->n_aggs].name = xstrdup(name);
        c->aggs[c->n_aggs].id = (int)id;
        c->n_aggs++;
    }
    return 0;
}

/* One interval, in RollupInterval's order of checks. */
static int parse_interval(const json_value_t *o, query_rollup_interval_t *iv, oct_errbuf_t *eb)
{
    if (!o || o->type != JSON_OBJECT)
        return oct_err(eb, OCT_ECONFIG, "Each rollup interval must be a JSON object");
    const json_value_t *span = json_obj_get(o, "rowSpan");
    const json_value_t *def = json_obj_get(o, "defaultInterval");
    const json_value_t *sla = json_obj_get(o, "delaySla");
    iv->table = jdup(json_obj_get(o, "table"));
    iv->preagg_table = jdup(json_obj_get(o, "preAggregationTable"));
    iv->interval = jdup(json_obj_get(o, "interval"));
    iv->is_default = def && def->type == JSON_TRUE;
    /* 2.4 throws a NullPointerException for a missing rowSpan or interval:
     * a message instead */
    if (!span || span->type != JSON_STRING || span->len == 0)
        return oct_err(eb, OCT_ECONFIG, "The row span cannot be null or empty");
    size_t nd = 0;
    while (nd < span->len && isdigit((unsigned char)span->str[nd]))
        nd++;
    size_t ul = span->len - nd;
    if (ul > 1) return oct_err(eb, OCT_ECONFIG, "Milliseconds are not supported");
    int64_t mult = 0;
    for (size_t i = 0; i < nd && mult < 1000000; i++)
        mult = mult * 10 + (span->str[i] - '0');
    if (nd == 0 || ul == 0 || mult <= 0)
        return oct_err(eb, OCT_ECONFIG, "Invalid duration (number): %.*s", (int)span->len,
                       span->str);
    iv->span_unit = span->str[nd];
    iv->span_mult = (int)mult;
    if (!iv->table || !*iv->table)
        return oct_err(eb, OCT_ECONFIG, "The rollup table cannot be null or empty");
    if (!iv->preagg_table || !*iv->preagg_table)
        return oct_err(eb, OCT_ECONFIG, "The pre-aggregate rollup table cannot be null or empty");
    if (strlen(iv->table) > 200 || strlen(iv->preagg_table) > 200)
        return oct_err(eb, OCT_ECONFIG, "Rollup table names are limited to 200 bytes");
    if (iv->span_unit != 'h' && mult > 1)
        return oct_err(eb, OCT_ECONFIG, "Multipliers are only usable with the 'h' unit");
    if (iv->span_unit == 'h' && mult > 1 && mult % 2 != 0)
        return oct_err(eb, OCT_ECONFIG, "The multiplier must be 1 or an even value");
    if (!iv->interval || !*iv->interval)
        return oct_err(eb, OCT_ECONFIG, "The rollup interval cannot be null or empty");
    int64_t ms;
    if (query_parse_duration(iv->interval, strlen(iv->interval), &ms, NULL, NULL, eb))
        return oct_err(eb, OCT_ECONFIG, "%s", eb->msg);
    iv->interval_s = ms / 1000;
    if (iv->interval_s >= INT32_MAX)
        return oct_err(eb, OCT_ECONFIG, "Interval is too big: %lld", (long long)iv->interval_s);
    if (sla && sla->type == JSON_STRING && sla->len) {
        if (query_parse_duration(sla->str, sla->len, &ms, NULL, NULL, eb))
            return oct_err(eb, OCT_ECONFIG, "%s", eb->msg);
        iv->delay_sla_s = ms / 1000;
        if (iv->delay_sla_s < 1)
            return oct_err(eb, OCT_ECONFIG, "Milliseconds are not supported as the maximum delay");
    }
    int64_t num_span;
    switch (iv->span_unit) {
    case 'h':
        num_span = SPAN_HOUR_S;
        break;
    case 'd':
        num_span = SPAN_DAY_S;
        break;
    case 'n':
        num_span = SPAN_MONTH_S;
        break;
    case 'y':
        num_span = SPAN_YEAR_S;
        break;
    default:
        return oct_err(eb, OCT_ECONFIG, "Unrecogznied span '%c'", iv->span_unit);
    }
    num_span *= mult;
    if (iv->interval_s >= num_span)
        return oct_err(eb, OCT_ECONFIG, "Interval [%lld] is too large for the span [%c]",
                       (long long)iv->interval_s, iv->span_unit);
    /* a sub-second interval is 0 s: 2.4 divides by it; say why instead */
    if (iv->interval_s < 1)
        return oct_err(eb, OCT_ECONFIG, "Milliseconds are not supported: %s", iv->interval);
    iv->intervals = num_span / iv->interval_s;
    if (iv->intervals > QUERY_ROLLUP_MAX_INTERVALS)
        return oct_err(eb, OCT_ECONFIG,
                       "Too many intervals [%lld] in the span. Must be smaller than [%d] to fit "
                       "in 14 bits",
                       (long long)iv->intervals, QUERY_ROLLUP_MAX_INTERVALS);
    if (iv->intervals < QUERY_ROLLUP_MIN_INTERVALS)
        return oct_err(eb, OCT_ECONFIG,
                       "Not enough intervals [%lld] for the span. Must be at least [%d]",
                       (long long)iv->intervals, QUERY_ROLLUP_MIN_INTERVALS);
    return 0;
}

int query_rollup_config_parse(const char *json, size_t n, query_rollup_config_t *out,
                              oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *root;
    int rc = json_parse(&a, json, n, 0, &root, eb);
    if (rc) {
        rc = oct_err(eb, OCT_ECONFIG, "Unable to parse the rollup config: %s", eb->msg);
        goto out;
    }
    if (root->type != JSON_OBJECT) {
        rc = oct_err(eb, OCT_ECONFIG, "The rollup config must be a JSON object");
        goto out;
    }
    rc = parse_aggs(json_obj_get(root, "aggregationIds"), out, eb);
    if (rc) goto out;
    const json_value_t *ivs = json_obj_get(root, "intervals");
    if (!ivs || ivs->type != JSON_ARRAY || ivs->n == 0) {
        rc = oct_err(eb, OCT_ECONFIG, "Rollup config given but no intervals were found.");
        goto out;
    }
    out->iv = xcalloc(ivs->n, sizeof *out->iv);
    int have_default = 0;
    for (const json_value_t *e = ivs->child; e; e = e->next) {
        query_rollup_interval_t *iv = &out->iv[out->n_iv++];
        rc = parse_interval(e, iv, eb);
        if (rc) goto out;
        for (size_t i = 0; i + 1 < out->n_iv; i++)
            if (!strcmp(out->iv[i].interval, iv->interval)) {
                rc = oct_err(eb, OCT_ECONFIG,
                             "Only one interval of each type can be configured: %s", iv->interval);
                goto out;
            }
        if (iv->is_default) {
            if (have_default) {
                rc = oct_err(eb, OCT_ECONFIG,
                             "Multiple default intervals configured. Only one is allowed: %s",
                             iv->interval);
                goto out;
            }
            have_default = 1;
            out->default_iv = out->n_iv - 1;
        }
    }
    if (!have_default)
        rc = oct_err(eb, OCT_ECONFIG,
                     "None of the rollup intervals were marked as the \"default\".");
out:
    json_arena_free(&a);
    if (rc) cfg_clear(out);
    return rc;
}

int query_rollup_config_load(const oct_config_t *cfg, query_rollup_config_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    if (!oct_config_get_bool(cfg, "tsd.rollups.enable")) {
        if (oct_config_get_bool(cfg, "tsd.rollups.auto") == 1)
            return oct_err(eb, OCT_ECONFIG, "tsd.rollups.auto=true needs tsd.rollups.enable=true");
        return 0;
    }
    const char *v = oct_config_get(cfg, "tsd.rollups.config");
    if (!v || !*v)
        return oct_err(eb, OCT_ECONFIG,
                       "Rollups were enabled but 'tsd.rollups.config' is null or empty.");
    size_t vl = strlen(v);
    oct_strbuf_t text = OCT_STRBUF_INIT;
    int is_file = vl >= 5 && !strcmp(v + vl - 5, ".json");
    if (is_file && oct_strbuf_read_file(&text, v)) {
        oct_strbuf_free(&text);
        return oct_err(eb, OCT_ECONFIG, "Failed to open conf file: %s", v);
    }
    query_rollup_config_t *c = xcalloc(1, sizeof *c);
    int rc = query_rollup_config_parse(is_file ? oct_strbuf_cstr(&text) : v,
                                       is_file ? text.len : vl, c, eb);
    oct_strbuf_free(&text);
    if (rc) {
        free(c);
        return rc;
    }
    const char *k = oct_config_get(cfg, "tsd.rollups.agg_tag_key");
    const char *r = oct_config_get(cfg, "tsd.rollups.raw_agg_tag_value");
    c->agg_tag_key = xstrdup(k && *k ? k : "_aggregate");
    c->raw_agg_tag_value = xstrdup(r && *r ? r : "RAW");
    c->tag_raw = oct_config_get_bool(cfg, "tsd.rollups.tag_raw") == 1;
    c->block_derived = oct_config_get_bool(cfg, "tsd.rollups.block_derived") != 0;
    c->auto_rollup = oct_config_get_bool(cfg, "tsd.rollups.auto") == 1;
    c->split_query = oct_config_get_bool(cfg, "tsd.rollups.split_query.enable") == 1;
    int n_auto = 0;
    for (size_t i = 0; i < c->n_iv; i++)
        n_auto += query_rollup_is_auto(c, &c->iv[i]);
    if (c->auto_rollup && (n_auto == 0 || query_rollup_agg_id(c, "sum", 3) < 0 ||
                           query_rollup_agg_id(c, "count", 5) < 0)) {
        query_rollup_config_free(c);
        return oct_err(eb, OCT_ECONFIG,
                       "tsd.rollups.auto=true needs a rollup interval (not the default) that "
                       "divides an hour, and ids for sum and count in aggregationIds");
    }
    *out = c;
    return 0;
}

int query_rollup_is_auto(const query_rollup_config_t *c, const query_rollup_interval_t *iv)
{
    return c->auto_rollup && iv != &c->iv[c->default_iv] && 3600 % iv->interval_s == 0;
}

int query_rollup_is_auto_long(const query_rollup_config_t *c, const query_rollup_interval_t *iv)
{
    int64_t span = iv->span_unit == 'h' ? 3600LL * iv->span_mult : 86400;
    return c->auto_rollup && iv != &c->iv[c->default_iv] && iv->interval_s > 3600 &&
           iv->interval_s % 3600 == 0 && 86400 % iv->interval_s == 0 && span % iv->interval_s == 0;
}

const query_rollup_interval_t *query_rollup_auto_source(const query_rollup_config_t *c)
{
    const query_rollup_interval_t *best = NULL;
    for (size_t i = 0; i < c->n_iv; i++)
        if (query_rollup_is_auto(c, &c->iv[i]) && (!best || c->iv[i].interval_s > best->interval_s))
            best = &c->iv[i];
    return best;
}

void query_rollup_config_free(query_rollup_config_t *c)
{
    if (!c) return;
    cfg_clear(c);
    free(c);
}

const query_rollup_interval_t *query_rollup_interval_find(const query_rollup_config_t *c,
                                                          const char *s, size_t n)
{
    for (size_t i = 0; i < c->n_iv; i++)
        if (strlen(c->iv[i].interval) == n && !memcmp(c->iv[i].interval, s, n)) return &c->iv[i];
    return NULL;
}

int query_rollup_agg_id(const query_rollup_config_t *c, const char *name, size_t n)
{
    for (size_t i = 0; i < c->n_aggs; i++)
        if (strlen(c->aggs[i].name) == n && !strncasecmp(c->aggs[i].name, name, n))
            return c->aggs[i].id;
    return -1;
}

static int64_t floor_to(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? a - r - b : a - r;
}

int64_t query_rollup_base_time(const query_rollup_interval_t *iv, int64_t ts_s)
{
    switch (iv->span_unit) {
    case 'h':
        return floor_to(ts_s, 3600LL * iv->span_mult);
    case 'd':
        return floor_to(ts_s, 86400);
    default: {
        time_t t = (time_t)ts_s;
        struct tm tm;
        gmtime_r(&t, &tm);
        tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
        tm.tm_mday = 1;
        if (iv->span_unit == 'y') tm.tm_mon = 0;
        return (int64_t)timegm(&tm);
    }
    }
}

int64_t query_rollup_next_base(const query_rollup_interval_t *iv, int64_t base_s)
{
    switch (iv->span_unit) {
    case 'h':
        return base_s + 3600LL * iv->span_mult;
    case 'd':
        return base_s + 86400;
    default: {
        time_t t = (time_t)base_s;
        struct tm tm;
        gmtime_r(&t, &tm);
        if (iv->span_unit == 'y')
            tm.tm_year++;
        else
            tm.tm_mon++;
        return (int64_t)timegm(&tm); /* timegm normalises month 12 */
    }
    }
}

size_t query_rollup_candidates(const query_rollup_config_t *c, int64_t ds_interval_s, size_t *idx)
{
    size_t n = 0;
    if (ds_interval_s <= 0) return 0;
    for (size_t i = 0; i < c->n_iv; i++)
        if (ds_interval_s % c->iv[i].interval_s == 0) idx[n++] = i;
    /* largest interval first (insertion sort: a handful of intervals) */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && c->iv[idx[j]].interval_s > c->iv[idx[j - 1]].interval_s; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    return n;
}
