/* exec_rollup.c -- answering a sub-query from 2.4's rollup and
 * pre-aggregate tables (docs/rollups.md, "Querying").
 *
 * The plan: with rollups configured, a sub-query whose downsample interval
 * a configured interval divides reads the table of the largest such
 * interval (its pre-aggregate table when the query is a pre-aggregate
 * one); the default interval is the raw data table. rollupUsage decides
 * what follows an empty answer: nothing (ROLLUP_NOFALLBACK), the next
 * candidate and finally raw (ROLLUP_FALLBACK), raw at once
 * (ROLLUP_FALLBACK_RAW); ROLLUP_RAW reads raw data only. A fallback to raw
 * keeps the query's own downsampler (2.4 uses the failed table's interval:
 * docs/compat.md).
 *
 * The load: the stored values go through the user's downsampler (a 1d-sum
 * over 1h sums adds 24 values per day), except avg, which is
 * sum(sums)/sum(counts) per bucket, and count, which adds the stored counts. */
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "exec/exec_int.h"

/* Is sub a pre-aggregate query: preAggregate / pre-agg, or a literal_or
 * filter on the aggregate tag naming something but the raw value. */
static int is_pre_agg(const query_rollup_config_t *c, const query_sub_t *sub)
{
    if (sub->pre_agg) return 1;
    for (size_t i = 0; i < sub->n_filters; i++) {
        const query_filter_t *f = &sub->filters[i];
        if (f->type == QUERY_FILTER_LITERAL_OR && !strcmp(f->tagk, c->agg_tag_key) &&
            strcmp(f->expr, c->raw_agg_tag_value) != 0)
            return 1;
    }
    return 0;
}

/* The aggregator name a downsampler reads in a rollup table. */
static const char *column_of(const query_agg_t *a)
{
    const char *n = query_agg_name(a);
    if (!strcmp(n, "zimsum")) return "sum";
    if (!strcmp(n, "mimmax")) return "max";
    if (!strcmp(n, "mimmin")) return "min";
    return n;
}

static int agg_id(ex_t *x, const query_rollup_config_t *c, const char *name, int *id)
{
    *id = query_rollup_agg_id(c, name, strlen(name));
    if (*id < 0) return oct_err(x->eb, OCT_EPARSE, "No ID found mapping to aggregator: %s", name);
    return 0;
}

/* A rollup source for interval iv. */
static int rollup_source(ex_t *x, const query_rollup_config_t *c, const query_sub_t *sub,
                         const query_rollup_interval_t *iv, int pre, exec_ru_t *out)
{
    memset(out, 0, sizeof *out);
    out->table = pre ? iv->preagg_table : iv->table;
    out->iv = iv;
    out->id2 = -1;
    const char *col = column_of(sub->ds.agg);
    switch (query_agg_kind(sub->ds.agg)) {
    case QUERY_AGG_AVG:
        out->mode = EXEC_RU_AVG;
        if (agg_id(x, c, "sum", &out->id) || agg_id(x, c, "count", &out->id2)) return OCT_EPARSE;
        return 0;
    case QUERY_AGG_DEV:
        return oct_err(x->eb, OCT_EPARSE,
                       "Standard deviation over rolled up data is not supported at this time");
    case QUERY_AGG_COUNT:
        out->mode = EXEC_RU_COUNT;
        return agg_id(x, c, "count", &out->id);
    default:
        out->mode = EXEC_RU_PLAIN;
        return agg_id(x, c, col, &out->id);
    }
}

int exec__rollup_plan(ex_t *x, const query_sub_t *sub, exec_ru_t *plans, size_t *n)
{
    const query_rollup_config_t *c = tsdb_rollups(x->db);
    *n = 0;
    query_rollup_usage_t usage = sub->rollup_usage;
    if (!c) {
        /* 2.4 silently reads raw data; a question about rollups a TSD without
         * them cannot answer is a 400 here */
        if ((usage != QUERY_ROLLUP_UNSET && usage != QUERY_ROLLUP_RAW) || sub->pre_agg)
            return oct_err(x->eb, OCT_EPARSE,
                           "%s queries need rollups: tsd.rollups.enable is false on this TSD",
                           sub->pre_agg ? "Pre-aggregate" : query_rollup_usage_name(usage));
        return 0;
    }
    if (usage == QUERY_ROLLUP_UNSET) usage = QUERY_ROLLUP_NOFALLBACK;
    int pre = is_pre_agg(c, sub);
    exec_ru_t raw = {NULL, NULL, -1, -1, EXEC_RU_PLAIN};
    if (pre) raw.table = c->iv[c->default_iv].preagg_table; /* hour rows, ordinary cells */
    size_t idx[EXEC_RU_MAX_PLANS];
    size_t nc = 0;
    /* sub-second, "all" and absent downsamplers read raw data (2.4 fails
     * the sub-second ones: docs/compat.md) */
    if (usage != QUERY_ROLLUP_RAW && sub->has_downsample && !sub->ds.all &&
        sub->ds.interval_ms >= 1000 && c->n_iv <= EXEC_RU_MAX_PLANS - 1)
        nc = query_rollup_candidates(c, sub->ds.interval_ms / 1000, idx);
    size_t k = 0;
    for (size_t i = 0; i < nc; i++) {
        if (idx[i] == c->default_iv) break; /* the raw table: added below */
        int rc = rollup_source(x, c, sub, &c->iv[idx[i]], pre, &plans[k]);
        if (rc) return rc;
        k++;
        if (usage != QUERY_ROLLUP_FALLBACK) break; /* only FALLBACK tries the next table */
    }
    if (k == 0 || usage == QUERY_ROLLUP_FALLBACK || usage == QUERY_ROLLUP_FALLBACK_RAW)
        plans[k++] = raw;
    if (k == 1 && !plans[0].table) k = 0; /* raw data, the ordinary path */
    /* a delete removes the raw rows of what it read: it must read them */
    if (x->q->delete_data && k > 0)
        return oct_err(x->eb, OCT_EPARSE,
                       "A delete reads raw data only: add rollupUsage ROLLUP_RAW to delete");
    *n = k;
    return 0;
}

static void to_dps(codec_point_t *p, size_t n)
{
    /* same layout but for the type byte (exec_load.c's read_dps relies on it too) */
    query_dp_t *d = (query_dp_t *)(void *)p;
    for (size_t i = 0; i < n; i++) {
        uint8_t is_float = p[i].is_float;
        d[i].is_int = (uint8_t)!is_float;
        d[i].is_null = 0;
    }
}

/* The values of the source's column id (and id2, into out2, when out2 is
 * not NULL) of the series over [lo, hi], in one read of the rows, counted
 * against the query's point limit. */
static int read_cols(ex_t *x, xworker_t *w, const uint8_t *tsuid, size_t len, int64_t lo,
                     int64_t hi, query_dp_t **out, size_t *n, query_dp_t **out2, size_t *n2)
{
    const exec_ru_t *ru = x->ru;
    int ids[2] = {ru->id, ru->id2};
    size_t ni = out2 ? 2 : 1, cnt[2] = {0, 0};
    codec_point_t *p[2] = {NULL, NULL};
    int rc =
        tsdb_rollup_read(x->db, ru->table, ru->iv, ids, ni, tsuid, len, lo, hi, p, cnt, &w->eb);
    if (rc) return rc;
    uint64_t total =
        __atomic_add_fetch(&x->st.raw_points, (uint64_t)(cnt[0] + cnt[1]), __ATOMIC_RELAXED);
    if (x->o->max_points && total > x->o->max_points) {
        free(p[0]);
        free(p[1]);
        return oct_err(&w->eb, OCT_ERANGE,
                       "Sorry, you have attempted to fetch more than our limit of %llu data "
                       "points. Please try filtering using more tags or decrease your time "
                       "range.",
                       (unsigned long long)x->o->max_points);
    }
    to_dps(p[0], cnt[0]);
    *out = (query_dp_t *)(void *)p[0];
    *n = cnt[0];
    if (out2) {
        to_dps(p[1], cnt[1]);
        *out2 = (query_dp_t *)(void *)p[1];
        *n2 = cnt[1];
    }
    return 0;
}

static double dp_val(const query_dp_t *d)
{
    return d->is_int ? (double)d->v.i : d->v.f;
}

/* avg: per bucket sum(sums) / sum(counts), then the fill policy. */
static int load_avg(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid, size_t len,
                    int64_t lo, int64_t hi, query_dp_t **out, size_t *n_out)
{
    query_dp_t *s = NULL, *c = NULL, *bs = NULL, *bc = NULL;
    size_t ns = 0, nc = 0, nbs = 0, nbc = 0;
    int rc = read_cols(x, w, tsuid, len, lo, hi, &s, &ns, &c, &nc);
    if (!rc && (ns == 0 || nc == 0)) rc = 1;
    /* a sum without a count at the same interval is left out, as 2.4 does */
    size_t k = 0;
    for (size_t i = 0, j = 0; !rc && i < ns; i++) {
        while (j < nc && c[j].ts_ms < s[i].ts_ms)
            j++;
        if (j < nc && c[j].ts_ms == s[i].ts_ms) s[k++] = s[i];
    }
    ns = k;
    k = 0;
    for (size_t i = 0, j = 0; !rc && i < nc; i++) {
        while (j < ns && s[j].ts_ms < c[i].ts_ms)
            j++;
        if (j < ns && s[j].ts_ms == c[i].ts_ms) c[k++] = c[i];
    }
    nc = k;
    if (!rc && ns == 0) rc = 1;
    query_downsample_t ds = sub->ds;
    ds.agg = query_agg_find("sum");
    ds.fill = QUERY_FILL_NONE;
    if (!rc) rc = exec__downsample(x, w, &ds, lo, hi, s, ns, &bs, &nbs);
    if (!rc) rc = exec__downsample(x, w, &ds, lo, hi, c, nc, &bc, &nbc);
    if (!rc) {
        /* same points in both, so the same buckets */
        size_t m = nbs < nbc ? nbs : nbc;
        for (size_t i = 0; i < m; i++) {
            double cnt = dp_val(&bc[i]);
            bs[i].v.f = cnt == 0 ? 0 : dp_val(&bs[i]) / cnt;
            bs[i].is_int = 0;
        }
        nbs = m;
        if (sub->ds.fill != QUERY_FILL_NONE) {
            /* one value per bucket: summing it again keeps it and fills the gaps */
            query_dp_t *f = NULL;
            size_t nf = 0;
            ds.fill = sub->ds.fill;
            rc = exec__downsample(x, w, &ds, lo, hi, bs, nbs, &f, &nf);
            free(bs);
            bs = f;
            nbs = nf;
        }
    }
    free(s);
    free(c);
    free(bc);
    if (rc) {
        free(bs);
        return rc;
    }
    *out = bs;
    *n_out = nbs;
    return 0;
}

int exec__load_rollup(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid,
                      size_t len, int64_t lo, int64_t hi, query_dp_t **out, size_t *n_out)
{
    const exec_ru_t *ru = x->ru;
    query_dp_t *res = NULL;
    size_t n = 0;
    int rc;
    *out = NULL;
    *n_out = 0;
    if (ru->mode == EXEC_RU_AVG) {
        rc = load_avg(x, w, sub, tsuid, len, lo, hi, &res, &n);
        if (rc) return rc;
    } else {
        query_dp_t *raw = NULL;
        size_t nr = 0;
        rc = read_cols(x, w, tsuid, len, lo, hi, &raw, &nr, NULL, NULL);
        if (rc) return rc;
        if (nr == 0) {
            free(raw);
            return 1;
        }
        if (!sub->has_downsample) {
            res = raw;
            n = nr;
        } else {
            query_downsample_t ds = sub->ds;
            if (ru->mode == EXEC_RU_COUNT) ds.agg = query_agg_find("sum");
            rc = exec__downsample(x, w, &ds, lo, hi, raw, nr, &res, &n);
            free(raw);
            if (rc) return rc;
        }
    }
    if (sub->rate) n = query_rate(&sub->rate_opts, res, n);
    *out = res;
    *n_out = n;
    return 0;
}
