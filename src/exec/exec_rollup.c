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
 * sum(sums)/sum(counts) per bucket, dev, which is the population standard
 * deviation from the sums, counts and octsdb's sums of squares per bucket
 * (auto rollups only: docs/rollups.md), and count, which adds the stored
 * counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
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
    out->split_ms = INT64_MAX;
    if (c->split_query) {
        if (iv->delay_sla_s > 0) out->split_ms = oct_clock_wall_ms() - iv->delay_sla_s * 1000;
        /* the TSD writes the plain tables of these, never the pre-aggregate ones */
        out->split_auto = !pre && (query_rollup_is_auto(c, iv) || query_rollup_is_auto_long(c, iv));
    }
    const char *col = column_of(sub->ds.agg);
    switch (query_agg_kind(sub->ds.agg)) {
    case QUERY_AGG_AVG:
        out->mode = EXEC_RU_AVG;
        if (agg_id(x, c, "sum", &out->id) || agg_id(x, c, "count", &out->id2)) return OCT_EPARSE;
        return 0;
    case QUERY_AGG_DEV:
        /* answered where every interval has octsdb's sum of squares
         * (exec__load_rollup), else as rollupUsage says */
        out->mode = EXEC_RU_DEV;
        out->id3 = TSDB_ROLLUP_ID_SUMSQ;
        if (agg_id(x, c, "sum", &out->id) || agg_id(x, c, "count", &out->id2)) return OCT_EPARSE;
        return 0;
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
    exec_ru_t raw = {NULL, NULL, -1, -1, EXEC_RU_PLAIN, -1, INT64_MAX, 0};
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

/* The values of columns ids[0..ni) of ru's table for the series over
 * [lo, hi] into out[k] (malloc'd) and n[k], in one read of the rows,
 * counted against the query's point limit. */
static int read_cols(ex_t *x, xworker_t *w, const exec_ru_t *ru, const uint8_t *tsuid, size_t len,
                     int64_t lo, int64_t hi, size_t ni, query_dp_t **out, size_t *n)
{
    int ids[3] = {ru->id, ru->id2, ru->id3};
    size_t cnt[3] = {0, 0, 0};
    codec_point_t *p[3] = {NULL, NULL, NULL};
    int rc =
        tsdb_rollup_read(x->db, ru->table, ru->iv, ids, ni, tsuid, len, lo, hi, p, cnt, &w->eb);
    if (rc) return rc;
    uint64_t total = __atomic_add_fetch(&x->st.raw_points, (uint64_t)(cnt[0] + cnt[1] + cnt[2]),
                                        __ATOMIC_RELAXED);
    if (x->o->max_points && total > x->o->max_points) {
        for (size_t k = 0; k < 3; k++)
            free(p[k]);
        return oct_err(&w->eb, OCT_ERANGE,
                       "Sorry, you have attempted to fetch more than our limit of %llu data "
                       "points. Please try filtering using more tags or decrease your time "
                       "range.",
                       (unsigned long long)x->o->max_points);
    }
    for (size_t k = 0; k < ni; k++) {
        to_dps(p[k], cnt[k]);
        out[k] = (query_dp_t *)(void *)p[k];
        n[k] = cnt[k];
    }
    return 0;
}

static double dp_val(const query_dp_t *d)
{
    return d->is_int ? (double)d->v.i : d->v.f;
}

/* The population standard deviation of a bucket from its count n, sum s and
 * sum of squares q. Not sqrt(q/n - (s/n)^2) in doubles: when the spread is
 * small beside the mean, q/n and (s/n)^2 share most of their digits and the
 * difference is rounding noise (even negative). For integer data (sums are
 * exact in a double below 2^53, q too: docs/format/rollup.md), n*q - s^2 is
 * computed exactly in 128-bit integers, so the only rounding is the last
 * division and root; otherwise the difference is taken in long double and clamped at
 * 0 (q itself is then a rounded sum: the error grows with mean^2/variance). */
static int is_exact_int(double v)
{
    return fabs(v) < 9007199254740992.0 && v == floor(v); /* 2^53 */
}

static double dev_of(double n, double s, double q)
{
    if (n <= 0) return 0;
    if (is_exact_int(n) && is_exact_int(s) && is_exact_int(q)) {
        __int128 d = (__int128)(int64_t)n * (int64_t)q - (__int128)(int64_t)s * (int64_t)s;
        return d <= 0 ? 0 : sqrt((double)d) / n;
    }
    long double ln = n, mean = (long double)s / ln;
    long double var = (long double)q / ln - mean * mean;
    return var <= 0 ? 0 : (double)sqrtl(var);
}

#define RU_NO_SUMSQ 2 /* load_moments: an interval lacks its sum of squares */

/* avg and dev: per bucket sum(sums) / sum(counts), or the deviation from
 * the sums, counts and sums of squares; then the fill policy. Returns 1
 * when the series has nothing here, RU_NO_SUMSQ when dev meets an interval
 * without octsdb's sum of squares (a client's rollup, or one written
 * before octsdb kept it). */
static int load_moments(ex_t *x, xworker_t *w, const exec_ru_t *ru, const query_sub_t *sub,
                        const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi, query_dp_t **out,
                        size_t *n_out)
{
    int dev = ru->mode == EXEC_RU_DEV;
    size_t nk = dev ? 3 : 2;
    query_dp_t *c[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
    size_t n[3] = {0, 0, 0}, nb[3] = {0, 0, 0};
    int rc = read_cols(x, w, ru, tsuid, len, lo, hi, nk, c, n);
    if (rc) return rc;
    /* the intervals with a sum and a count (either alone is left out, as
     * 2.4 does); for dev each needs its sum of squares too */
    size_t k = 0;
    for (size_t i = 0, j = 0, q = 0; i < n[0]; i++) {
        int64_t t = c[0][i].ts_ms;
        while (j < n[1] && c[1][j].ts_ms < t)
            j++;
        if (j == n[1] || c[1][j].ts_ms != t) continue;
        if (dev) {
            while (q < n[2] && c[2][q].ts_ms < t)
                q++;
            if (q == n[2] || c[2][q].ts_ms != t) {
                rc = RU_NO_SUMSQ;
                break;
            }
            c[2][k] = c[2][q];
        }
        c[0][k] = c[0][i];
        c[1][k++] = c[1][j];
    }
    if (!rc && k == 0) rc = 1;
    query_downsample_t ds = sub->ds;
    ds.agg = query_agg_find("sum");
    ds.fill = QUERY_FILL_NONE;
    for (size_t a = 0; a < nk && !rc; a++)
        rc = exec__downsample(x, w, &ds, lo, hi, c[a], k, &b[a], &nb[a]);
    if (!rc) {
        /* same timestamps in each, so the same buckets */
        size_t m = nb[0] < nb[1] ? nb[0] : nb[1];
        if (dev && nb[2] < m) m = nb[2];
        for (size_t i = 0; i < m; i++) {
            double cnt = dp_val(&b[1][i]);
            if (dev)
                b[0][i].v.f = dev_of(cnt, dp_val(&b[0][i]), dp_val(&b[2][i]));
            else
                b[0][i].v.f = cnt == 0 ? 0 : dp_val(&b[0][i]) / cnt;
            b[0][i].is_int = 0;
        }
        nb[0] = m;
        if (sub->ds.fill != QUERY_FILL_NONE) {
            /* one value per bucket: summing it again keeps it and fills the gaps */
            query_dp_t *f = NULL;
            size_t nf = 0;
            ds.fill = sub->ds.fill;
            rc = exec__downsample(x, w, &ds, lo, hi, b[0], nb[0], &f, &nf);
            free(b[0]);
            b[0] = f;
            nb[0] = nf;
        }
    }
    for (size_t a = 0; a < 3; a++) {
        free(c[a]);
        if (a) free(b[a]);
    }
    if (rc) {
        free(b[0]);
        return rc;
    }
    *out = b[0];
    *n_out = nb[0];
    return 0;
}

/* The series from source ru (downsampled, rated); 1 when it has nothing
 * there, RU_NO_SUMSQ as load_moments. */
static int load_from(ex_t *x, xworker_t *w, const exec_ru_t *ru, const query_sub_t *sub,
                     const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi, query_dp_t **out,
                     size_t *n_out)
{
    query_dp_t *res = NULL;
    size_t n = 0;
    int rc;
    if (ru->mode == EXEC_RU_AVG || ru->mode == EXEC_RU_DEV) {
        rc = load_moments(x, w, ru, sub, tsuid, len, lo, hi, &res, &n);
        if (rc) return rc;
    } else {
        query_dp_t *raw = NULL;
        size_t nr = 0;
        rc = read_cols(x, w, ru, tsuid, len, lo, hi, 1, &raw, &nr);
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

/* load_from x->ru, and where dev meets an interval without its sum of
 * squares, the fallbacks rollupUsage allows. */
static int load_checked(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid,
                        size_t len, int64_t lo, int64_t hi, query_dp_t **out, size_t *n_out)
{
    int rc = load_from(x, w, x->ru, sub, tsuid, len, lo, hi, out, n_out);
    if (rc != RU_NO_SUMSQ) return rc;
    /* dev where an interval lacks the sum of squares: 2.4's 400 without a
     * fallback; with one, this series from the next source that can answer
     * (the raw data table at the latest) */
    for (const exec_ru_t *p = x->ru + 1; p < x->ru_end; p++) {
        if (!p->table) return exec__load_raw(x, w, sub, tsuid, len, lo, hi, NULL, out, n_out);
        rc = load_from(x, w, p, sub, tsuid, len, lo, hi, out, n_out);
        if (rc != RU_NO_SUMSQ && rc != 1) return rc;
    }
    return oct_err(&w->eb, OCT_EPARSE,
                   "Standard deviation over rolled up data is not supported at this time");
}

/* The start of the downsample bucket holding t (lo < t <= hi): a bucket is
 * never computed half from each side of a split (docs/rollups.md). */
static int bucket_start(ex_t *x, xworker_t *w, const query_downsample_t *ds, int64_t lo, int64_t hi,
                        int64_t t, int64_t *out)
{
    query_dp_t p = {.ts_ms = t, .is_int = 1};
    query_downsample_t d = *ds;
    d.agg = query_agg_find("sum");
    d.fill = QUERY_FILL_NONE;
    query_dp_t *b = NULL;
    size_t n = 0;
    int rc = exec__downsample(x, w, &d, lo, hi, &p, 1, &b, &n);
    *out = !rc && n == 1 && b[0].ts_ms <= t ? b[0].ts_ms : lo;
    free(b);
    return rc;
}

int exec__load_rollup(ex_t *x, xworker_t *w, const query_sub_t *sub, const uint8_t *tsuid,
                      size_t len, int64_t lo, int64_t hi, query_dp_t **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    const exec_ru_t *ru = x->ru;
    /* split queries: the table before the split point, raw data after */
    int64_t t = ru->split_ms;
    if (ru->split_auto) {
        int64_t p = tsdb_rollup_pending_s(x->db, tsuid, len);
        if (p != INT64_MAX && p * 1000 < t) t = p * 1000;
    }
    if (t > hi || !sub->has_downsample)
        return load_checked(x, w, sub, tsuid, len, lo, hi, out, n_out);
    int64_t tb = lo;
    int rc = t > lo ? bucket_start(x, w, &sub->ds, lo, hi, t, &tb) : 0;
    if (rc) return rc;
    if (tb <= lo) return exec__load_raw(x, w, sub, tsuid, len, lo, hi, NULL, out, n_out);
    /* each side bucketed without fill or rate, then joined: the fill
     * policy and the rate run over the whole window */
    query_sub_t s2 = *sub;
    s2.rate = 0;
    s2.ds.fill = QUERY_FILL_NONE;
    query_dp_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    rc = load_checked(x, w, &s2, tsuid, len, lo, tb - 1, &a, &na);
    if (rc < 0) return rc;
    rc = exec__load_raw(x, w, &s2, tsuid, len, tb, hi, NULL, &b, &nb);
    if (rc < 0) {
        free(a);
        return rc;
    }
    if (na + nb == 0) {
        free(a);
        free(b);
        return 1;
    }
    query_dp_t *res = xrealloc(a, (na + nb) * sizeof *res);
    if (nb) memcpy(res + na, b, nb * sizeof *res);
    free(b);
    size_t n = na + nb;
    if (sub->ds.fill != QUERY_FILL_NONE) {
        /* one value per bucket: summing it again keeps it and fills the gaps */
        query_downsample_t ds = sub->ds;
        ds.agg = query_agg_find("sum");
        query_dp_t *f = NULL;
        size_t nf = 0;
        rc = exec__downsample(x, w, &ds, lo, hi, res, n, &f, &nf);
        free(res);
        if (rc) return rc;
        res = f;
        n = nf;
    }
    if (sub->rate) n = query_rate(&sub->rate_opts, res, n);
    *out = res;
    *n_out = n;
    return 0;
}
