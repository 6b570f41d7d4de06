/* exec_hist.c -- a histogram sub-query's group (exec_int.h, docs/histograms.md).
 *
 * Each series' histogram cells in the scan window are decoded (the simple codec, by the id
 * tsd.core.histograms.config gives it), the group's points are sorted by time and those of
 * one timestamp -- or, downsampled, of one interval (stamped with its start, as numeric
 * downsampling stamps it) -- are summed: counts of buckets with the same bounds added, the
 * union of the buckets kept, under- and overflow added. Aggregator `none` comes here one
 * series at a time (exec.c does not group it). Then per summed point in [start, end]: each
 * percentile (query_hist_percentile), and with showHistogramBuckets the count of each bucket
 * of the first summed point, as one output series each, named as 2.4 names them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec_int.h"
#include "tsdb/histogram.h"

/* One histogram point: its buckets are b[first .. first + n) of the collection. */
typedef struct {
    int64_t ts;
    size_t first, n;
    uint64_t under, over;
} hpt_t;

typedef struct {
    hpt_t *p;
    size_t np, capp;
    codec_hist_bucket_t *b;
    size_t nb, capb;
    codec_hist_bucket_t *tmp;
    size_t tmpcap;
    int simple_id;
    oct_errbuf_t *eb;
} hset_t;

static void hset_free(hset_t *h)
{
    free(h->p);
    free(h->b);
    free(h->tmp);
}

static void hset_reserve(hset_t *h, size_t more_b)
{
    if (h->np == h->capp) {
        h->capp = h->capp ? 2 * h->capp : 64;
        h->p = xrealloc(h->p, h->capp * sizeof *h->p);
    }
    if (h->nb + more_b > h->capb) {
        while (h->nb + more_b > h->capb)
            h->capb = h->capb ? 2 * h->capb : 1024;
        h->b = xrealloc(h->b, h->capb * sizeof *h->b);
    }
}

/* A tsdb_hist_fn: decodes one cell into the set. */
static int hset_add(void *ctx, int64_t ts, const uint8_t *v, size_t len)
{
    hset_t *h = ctx;
    uint8_t id = 0;
    codec_hist_t d;
    if (len && (h->simple_id < 0 || v[0] != (uint8_t)h->simple_id))
        return oct_err(h->eb, OCT_ECORRUPT, "No codec found mapped to ID %u", v[0]);
    int rc = codec_hist_decode_value(v, len, -1, &id, h->tmp, h->tmpcap, &d, h->eb);
    if (rc == OCT_ENOSPC) {
        h->tmpcap = d.n_buckets;
        h->tmp = xrealloc(h->tmp, h->tmpcap * sizeof *h->tmp);
        rc = codec_hist_decode_value(v, len, -1, &id, h->tmp, h->tmpcap, &d, h->eb);
    }
    if (rc) return rc;
    hset_reserve(h, d.n_buckets);
    memcpy(h->b + h->nb, d.buckets, d.n_buckets * sizeof *h->b);
    h->p[h->np++] = (hpt_t){ts, h->nb, d.n_buckets, d.underflow, d.overflow};
    h->nb += d.n_buckets;
    return 0;
}

static int cmp_hpt(const void *a, const void *b)
{
    const hpt_t *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first); /* stable: read order */
}

static int cmp_bucket(const void *a, const void *b)
{
    return codec_hist_bucket_cmp(a, b);
}

/* The summed histograms, in time order: point i has buckets b[first..first+n). */
typedef struct {
    int64_t *ts;
    size_t *first, *nbk;
    uint64_t *under, *over;
    size_t n;
    query_hbucket_t *b;
} hsum_t;

static void hsum_free(hsum_t *s)
{
    free(s->ts);
    free(s->first);
    free(s->nbk);
    free(s->under);
    free(s->over);
    free(s->b);
}

/* The start of each point's downsample interval: grp[i] for h->p[i] (sorted). The grid is
 * what query_downsample uses: its `min` of each point's index gives every interval's first
 * point, so the intervals partition the sorted points. */
static int interval_starts(ex_t *x, const query_sub_t *sub, const hset_t *h, int64_t *grp)
{
    const query_t *q = x->q;
    if (sub->ds.all) {
        for (size_t i = 0; i < h->np; i++)
            grp[i] = h->p[i].ts >= q->start_ms && h->p[i].ts <= q->end_ms ? q->start_ms : INT64_MIN;
        return 0;
    }
    query_downsample_t ds = sub->ds;
    ds.agg = query_agg_find("min");
    ds.fill = QUERY_FILL_NONE;
    query_dp_t *in = xmalloc((h->np ? h->np : 1) * sizeof *in);
    size_t cap = query_downsample_bound(&ds, q->start_ms, q->end_ms, h->np);
    query_dp_t *out = xmalloc((cap ? cap : 1) * sizeof *out);
    for (size_t i = 0; i < h->np; i++)
        in[i] = (query_dp_t){h->p[i].ts, {.i = (int64_t)i}, 1, 0};
    long no = query_downsample(&ds, x->tz, q->start_ms, q->end_ms, in, h->np, out, cap);
    int rc = 0;
    if (no < 0) {
        rc = oct_err(x->eb, (int)no, "downsampling failed: %s", oct_strerror((int)no));
    } else {
        for (long j = 0; j < no; j++) {
            size_t from = (size_t)out[j].v.f;
            size_t to = j + 1 < no ? (size_t)out[j + 1].v.f : h->np;
            for (size_t i = from; i < to && i < h->np; i++)
                grp[i] = out[j].ts_ms;
        }
    }
    free(in);
    free(out);
    return rc;
}

/* Adds in[0..m) (ascending) into the ascending buckets acc[0..*na), merging by bounds;
 * tmp has room for *na + m. Histograms of one series mostly share their bounds: then the
 * counts are added in place. */
static void merge_into(query_hbucket_t *acc, size_t *na, const codec_hist_bucket_t *in, size_t m,
                       query_hbucket_t *tmp)
{
    if (m == *na) {
        size_t k = 0;
        for (; k < m; k++)
            if (memcmp(&acc[k].lo, &in[k].lo, sizeof(float)) ||
                memcmp(&acc[k].hi, &in[k].hi, sizeof(float)))
                break;
        if (k == m) {
            for (k = 0; k < m; k++)
                acc[k].n += in[k].n;
            return;
        }
    }
    size_t i = 0, j = 0, t = 0;
    while (i < *na || j < m) {
        int c;
        if (i == *na) {
            c = 1;
        } else if (j == m) {
            c = -1;
        } else {
            codec_hist_bucket_t a = {acc[i].lo, acc[i].hi, 0};
            c = codec_hist_bucket_cmp(&a, &in[j]);
        }
        if (c < 0) {
            tmp[t++] = acc[i++];
        } else if (c > 0) {
            tmp[t++] = (query_hbucket_t){in[j].lo, in[j].hi, in[j].n};
            j++;
        } else {
            tmp[t] = acc[i++];
            tmp[t++].n += in[j++].n;
        }
    }
    memcpy(acc, tmp, t * sizeof *tmp);
    *na = t;
}

/* Sums the points of h (sorted) that share grp[] into out. */
static void sum_points(hset_t *h, const int64_t *grp, hsum_t *out)
{
    memset(out, 0, sizeof *out);
    size_t np = h->np ? h->np : 1, nbt = h->nb ? h->nb : 1;
    out->ts = xmalloc(np * sizeof *out->ts);
    out->first = xmalloc(np * sizeof *out->first);
    out->nbk = xmalloc(np * sizeof *out->nbk);
    out->under = xmalloc(np * sizeof *out->under);
    out->over = xmalloc(np * sizeof *out->over);
    out->b = xmalloc(nbt * sizeof *out->b);
    query_hbucket_t *tmp = xmalloc(nbt * sizeof *tmp);
    size_t nb = 0;
    for (size_t i = 0; i < h->np;) {
        size_t j = i, na = 0;
        uint64_t under = 0, over = 0;
        for (; j < h->np && grp[j] == grp[i]; j++) {
            codec_hist_bucket_t *in = h->b + h->p[j].first;
            size_t m = h->p[j].n;
            for (size_t k = 1; k < m; k++)
                if (codec_hist_bucket_cmp(&in[k - 1], &in[k]) >= 0) {
                    /* not in stored order (another writer): sort, sum duplicates */
                    qsort(in, m, sizeof *in, cmp_bucket);
                    break;
                }
            merge_into(out->b + nb, &na, in, m, tmp);
            under += h->p[j].under;
            over += h->p[j].over;
        }
        if (grp[i] != INT64_MIN) {
            size_t m = out->n++;
            out->ts[m] = grp[i];
            out->first[m] = nb;
            out->nbk[m] = na;
            out->under[m] = under;
            out->over[m] = over;
            nb += na;
        }
        i = j;
    }
    free(tmp);
}

/* Calls back one output: name, values. */
static int emit(ex_t *x, const query_sub_t *sub, exec_result_t *r, const char *name,
                const query_dp_t *dps, size_t n)
{
    r->sub = sub;
    r->metric = name;
    r->dps = dps;
    r->n_dps = n;
    x->st.emitted_points += n;
    x->st.results++;
    return x->fn(x->ctx, r);
}

int exec__emit_hist_group(ex_t *x, const query_sub_t *sub, const char *metric, const xseries_t *ser,
                          size_t n, int64_t lo, int64_t hi)
{
    const query_t *q = x->q;
    hset_t h;
    memset(&h, 0, sizeof h);
    h.simple_id = tsdb_histograms(x->db)->simple_id;
    h.eb = x->eb;
    hsum_t s;
    memset(&s, 0, sizeof s);
    int64_t *grp = NULL;
    query_dp_t *dps = NULL;
    json_arena_t ga = JSON_ARENA_INIT;
    char *name = NULL;
    uint64_t raw0 = x->st.raw_points;
    int rc = exec__check_time(x);
    if (rc) goto out;

    int64_t t_scan = oct_clock_mono_ns();
    xworker_t *w = &x->wk[0];
    if (!w->rd) w->rd = tsdb_reader_new(x->db);
    size_t live = 0; /* series with points come first in ser_live */
    xseries_t *ser_live = xmalloc((n ? n : 1) * sizeof *ser_live);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t before = h.np;
        rc = tsdb_reader_histograms(w->rd, ser[i].tsuid, ser[i].len, lo, hi, hset_add, &h, x->eb);
        if (!rc && h.np > before) ser_live[live++] = ser[i];
        if (!rc) {
            rc = exec__after_read(x, w, h.np - before, NULL);
            if (rc) oct_err(x->eb, rc, "%s", w->eb.msg);
        }
        if (!rc) rc = exec__check_time(x); /* tsd.query.timeout, per series read */
    }
    x->st.scan_ns += oct_clock_mono_ns() - t_scan;
    if (rc || h.np == 0) {
        free(ser_live);
        goto out;
    }
    qsort(h.p, h.np, sizeof *h.p, cmp_hpt);
    grp = xmalloc(h.np * sizeof *grp);
    if (sub->has_downsample) {
        rc = interval_starts(x, sub, &h, grp);
    } else {
        for (size_t i = 0; i < h.np; i++)
            grp[i] = h.p[i].ts;
    }
    if (!rc) sum_points(&h, grp, &s);
    /* the summed points in the query range */
    size_t a0 = 0, a1 = s.n;
    while (a0 < a1 && s.ts[a0] < q->start_ms)
        a0++;
    while (a1 > a0 && s.ts[a1 - 1] > q->end_ms)
        a1--;
    exec_result_t r = {0};
    if (!rc) rc = exec__group_names(x, ser_live, live, &ga, &r);
    free(ser_live);
    if (rc || a0 == a1) goto out;
    r.sub_series = live;
    r.sub_raw_points = x->st.raw_points - raw0;

    size_t ml = strlen(metric);
    name = xmalloc(ml + 80);
    memcpy(name, metric, ml);
    dps = xmalloc((a1 - a0) * sizeof *dps);
    for (size_t k = 0; k < sub->n_percentiles && !rc; k++) {
        for (size_t i = a0; i < a1; i++) {
            double v = query_hist_percentile(s.b + s.first[i], s.nbk[i], sub->percentiles[k]);
            dps[i - a0] = (query_dp_t){s.ts[i], {.f = v}, 0, 0};
        }
        memcpy(name + ml, "_pct_", 5);
        query_java_float((float)sub->percentiles[k], name + ml + 5);
        rc = emit(x, sub, &r, name, dps, a1 - a0);
    }
    if (rc || !sub->show_histogram_buckets) goto out;

    /* the buckets of the first point, each as a series of counts; then under/overflow */
    const query_hbucket_t *fb = s.b + s.first[a0];
    size_t nfb = s.nbk[a0];
    for (size_t k = 0; k < nfb + 2 && !rc; k++) {
        size_t kind = k == 0 ? 0 : k == nfb + 1 ? 2 : 1; /* under, bucket, over */
        for (size_t i = a0; i < a1; i++) {
            uint64_t c = 0;
            if (kind == 0) {
                c = s.under[i];
            } else if (kind == 2) {
                c = s.over[i];
            } else {
                codec_hist_bucket_t want = {fb[k - 1].lo, fb[k - 1].hi, 0};
                for (size_t j = 0; j < s.nbk[i]; j++) {
                    const query_hbucket_t *qb = &s.b[s.first[i] + j];
                    codec_hist_bucket_t have = {qb->lo, qb->hi, 0};
                    if (codec_hist_bucket_cmp(&have, &want) == 0) {
                        c = qb->n;
                        break;
                    }
                }
            }
            dps[i - a0] = (query_dp_t){s.ts[i], {.i = (int64_t)c}, 1, 0};
        }
        if (kind == 0) {
            snprintf(name + ml, 80, "_UNDERFLOW");
        } else if (kind == 2) {
            snprintf(name + ml, 80, "_OVERFLOW");
        } else {
            size_t l = ml;
            name[l++] = '_';
            l += query_java_float(fb[k - 1].lo, name + l);
            name[l++] = '_';
            query_java_float(fb[k - 1].hi, name + l);
        }
        rc = emit(x, sub, &r, name, dps, a1 - a0);
    }
out:
    hset_free(&h);
    hsum_free(&s);
    free(grp);
    free(dps);
    free(name);
    json_arena_free(&ga);
    return rc;
}
