/* exec_group.c -- one output series: a group's series aggregated (a big
 * group in two halves of its time span at once), cut to the query range,
 * its common and aggregated tags named, its TSUIDs and annotations
 * gathered, and handed to the callback. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec_int.h"

/* ---- aggregating a group, in parallel ------------------------------------ */

#define PARALLEL_MIN_AGG 100000 /* fewer points in a group: aggregate in one thread */

typedef struct {
    const query_sub_t *sub;
    const query_dp_t *const *arr;
    const size_t *lens;
    size_t n;
    int64_t from, to;
    query_dp_t *out;
    long na;
} xagg_t;

static void *agg_worker(void *arg)
{
    xagg_t *g = arg;
    g->na = query_aggregate_range(g->sub->agg, g->sub->rate, g->arr, g->lens, g->n, g->from, g->to,
                                  &g->out);
    return NULL;
}

/* query_aggregate of the group; a big group in two halves of its time span
 * at once (query_aggregate_range: the halves put together are exactly the
 * whole). */
static long aggregate_group(const query_sub_t *sub, const query_dp_t *const *arr,
                            const size_t *lens, size_t n, query_dp_t **agg)
{
    size_t total = 0;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (!lens[i] || !arr[i]) continue; /* a series with points has its array */
        total += lens[i];
        if (arr[i][0].ts_ms < tmin) tmin = arr[i][0].ts_ms;
        if (arr[i][lens[i] - 1].ts_ms > tmax) tmax = arr[i][lens[i] - 1].ts_ms;
    }
    if (exec__n_workers() < 2 || n < PARALLEL_MIN_SER || total < PARALLEL_MIN_AGG || tmax <= tmin ||
        query_agg_kind(sub->agg) == QUERY_AGG_NONE)
        return query_aggregate(sub->agg, sub->rate, arr, lens, n, agg);
    int64_t mid = tmin + (tmax - tmin) / 2 + 1;
    xagg_t g[2] = {{sub, arr, lens, n, INT64_MIN, mid, NULL, 0},
                   {sub, arr, lens, n, mid, INT64_MAX, NULL, 0}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, agg_worker, &g[1]) == 0;
    agg_worker(&g[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        agg_worker(&g[1]);
    long rc = g[0].na < 0 ? g[0].na : g[1].na < 0 ? g[1].na : 0;
    if (rc == 0) {
        size_t na = (size_t)g[0].na + (size_t)g[1].na;
        *agg = xmalloc((na ? na : 1) * sizeof **agg);
        if (g[0].na) memcpy(*agg, g[0].out, (size_t)g[0].na * sizeof **agg);
        if (g[1].na) memcpy(*agg + g[0].na, g[1].out, (size_t)g[1].na * sizeof **agg);
        rc = (long)na;
    }
    free(g[0].out);
    free(g[1].out);
    return rc;
}
/* ---- one output series -------------------------------------------------- */

typedef struct {
    uint64_t k, v;
    int agg;
} ctag_t;

typedef struct {
    const char *k, *v;
} kv_t;

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const kv_t *)a)->k, ((const kv_t *)b)->k);
}

static int cmp_cstrp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct {
    int64_t start;
    size_t seq;
    const char *json;
    size_t len;
} note_t;

typedef struct {
    note_t *v;
    size_t n, cap;
    json_arena_t *a;
} notes_t;

static int note_cb(void *ctx, const char *json, size_t len)
{
    notes_t *ns = ctx;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 8;
        ns->v = xrealloc(ns->v, ns->cap * sizeof *ns->v);
    }
    note_t *nt = &ns->v[ns->n];
    nt->json = json_arena_strndup(ns->a, json, len);
    nt->len = len;
    nt->seq = ns->n;
    nt->start = 0;
    json_arena_t tmp = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t jeb;
    if (json_parse(&tmp, json, len, 0, &v, &jeb) == 0) {
        json_value_t *st = json_obj_get(v, "startTime");
        int64_t s;
        if (st && st->type == JSON_NUMBER && json_number_i64(st, &s) == 0) nt->start = s;
    }
    json_arena_free(&tmp);
    ns->n++;
    return 0;
}

static int cmp_note(const void *a, const void *b)
{
    const note_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Names r's tags, aggregated tag keys and (show_tsuids) TSUIDs from the series ser[0..n)
 * of one output; the arrays live in ga, the names in x->names. */
int exec__group_names(ex_t *x, const xseries_t *ser, size_t n, json_arena_t *ga, exec_result_t *r)
{
    int rc = 0;
    /* tags common to every series, and the keys whose values differ */
    ctag_t *ct = NULL;
    size_t nct = 0, capct = 0;
    for (size_t i = 0; i < n; i++) {
        pairs_t p;
        exec__tsuid_pairs(x, ser[i].tsuid, ser[i].len, &p);
        for (size_t j = 0; j < p.n; j++) {
            size_t t = 0;
            while (t < nct && ct[t].k != p.k[j])
                t++;
            if (t == nct) {
                if (nct == capct) {
                    capct = capct ? capct * 2 : 16;
                    ct = xrealloc(ct, capct * sizeof *ct);
                }
                ct[nct++] = (ctag_t){p.k[j], p.v[j], 0};
            } else if (ct[t].v != p.v[j]) {
                ct[t].agg = 1;
            }
        }
    }
    size_t ntags = 0, nagg = 0;
    for (size_t t = 0; t < nct; t++)
        ct[t].agg ? nagg++ : ntags++;
    kv_t *kv = json_arena_alloc(ga, (ntags ? ntags : 1) * sizeof *kv);
    const char **aggk = json_arena_alloc(ga, (nagg ? nagg : 1) * sizeof *aggk);
    size_t ik = 0, ia = 0;
    for (size_t t = 0; t < nct && !rc; t++) {
        const char *kn, *vn;
        size_t kl, vl;
        rc = exec__name(x, CODEC_UID_TAGK, ct[t].k, &kn, &kl);
        if (rc) break;
        if (ct[t].agg) {
            aggk[ia++] = kn;
        } else {
            rc = exec__name(x, CODEC_UID_TAGV, ct[t].v, &vn, &vl);
            if (rc) break;
            kv[ik].k = kn;
            kv[ik++].v = vn;
        }
    }
    free(ct);
    if (rc) return rc;
    qsort(kv, ik, sizeof *kv, cmp_kv);
    qsort(aggk, ia, sizeof *aggk, cmp_cstrp);
    const char **tk = json_arena_alloc(ga, (ik ? ik : 1) * sizeof *tk);
    const char **tv = json_arena_alloc(ga, (ik ? ik : 1) * sizeof *tv);
    for (size_t i = 0; i < ik; i++) {
        tk[i] = kv[i].k;
        tv[i] = kv[i].v;
    }

    const char **hex = NULL;
    if (x->q->show_tsuids) {
        hex = json_arena_alloc(ga, n * sizeof *hex);
        for (size_t i = 0; i < n; i++) {
            char *h = json_arena_alloc(ga, 2 * ser[i].len + 1);
            if (codec_tsuid_to_hex(ser[i].tsuid, ser[i].len, h, 2 * ser[i].len + 1) < 0) h[0] = 0;
            hex[i] = h;
        }
        qsort(hex, n, sizeof *hex, cmp_cstrp);
    }

    r->n_tags = ik;
    r->tagk = tk;
    r->tagv = tv;
    r->n_agg_tags = ia;
    r->agg_tags = aggk;
    r->n_tsuids = x->q->show_tsuids ? n : 0;
    r->tsuids = hex;
    return 0;
}

/* Aggregates series[0..n) (one group) and calls back. */
int exec__emit_group(ex_t *x, const query_sub_t *sub, const char *metric, const xseries_t *ser,
                     size_t n, int64_t lo, int64_t hi)
{
    if (query_sub_is_histogram(sub)) return exec__emit_hist_group(x, sub, metric, ser, n, lo, hi);
    xseries_t *live = NULL;
    const query_t *q = x->q;
    json_arena_t ga = JSON_ARENA_INIT;
    query_dp_t **arr = xcalloc(n, sizeof *arr);
    size_t *lens = xcalloc(n, sizeof *lens);
    query_dp_t *agg = NULL;
    notes_t notes = {0};
    notes.a = &ga;
    uint64_t raw0 = x->st.raw_points;
    int rc = 0;
    size_t n_all = n;
    xnotes_t *sn = q->no_annotations ? NULL : xcalloc(n, sizeof *sn);

    int64_t t_scan = oct_clock_mono_ns();
    /* Series without data in the window are dropped (compacting ser into
     * live, arr and lens in step). */
    live = xmalloc(n * sizeof *live);
    uint8_t *empty = xcalloc(n, 1);
    rc = exec__check_time(x);
    if (!rc) rc = exec__load_all(x, sub, ser, n, lo, hi, arr, sn, lens, empty);
    size_t nl0 = 0;
    for (size_t i = 0; i < n; i++) {
        if (empty[i] || (!arr[i] && rc)) continue;
        live[nl0] = ser[i];
        arr[nl0] = arr[i];
        if (sn && nl0 != i) {
            sn[nl0] = sn[i];
            memset(&sn[i], 0, sizeof sn[i]);
        }
        lens[nl0++] = lens[i];
        if (nl0 - 1 != i) arr[i] = NULL;
    }
    free(empty);
    if (rc) {
        n = nl0;
        goto out;
    }
    int64_t t_agg = oct_clock_mono_ns();
    x->st.scan_ns += t_agg - t_scan;
    n = nl0;
    ser = live;
    if (n == 0) goto out;

    long na = aggregate_group(sub, (const query_dp_t *const *)arr, lens, n, &agg);
    if (na < 0) {
        rc = oct_err(x->eb, na == OCT_EINVAL ? OCT_EINVAL : (int)na, "aggregation failed: %s",
                     oct_strerror((int)na));
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        free(arr[i]);
        arr[i] = NULL;
    }
    size_t a0 = 0, a1 = (size_t)na;
    while (a0 < a1 && agg[a0].ts_ms < q->start_ms)
        a0++;
    while (a1 > a0 && agg[a1 - 1].ts_ms > q->end_ms)
        a1--;
    x->st.agg_ns += oct_clock_mono_ns() - t_agg;

    exec_result_t r = {0};
    rc = exec__group_names(x, ser, n, &ga, &r);
    if (rc) goto out;

    const char **nj = NULL;
    size_t *nl = NULL;
    if (!q->no_annotations) {
        /* each series' notes came with its rows (load_series), in time order */
        for (size_t i = 0; sn && i < n; i++)
            for (size_t k = 0; k < sn[i].n; k++)
                note_cb(&notes, sn[i].json[k], sn[i].len[k]);
        if (notes.n > 1) qsort(notes.v, notes.n, sizeof *notes.v, cmp_note);
        nj = json_arena_alloc(&ga, (notes.n ? notes.n : 1) * sizeof *nj);
        nl = json_arena_alloc(&ga, (notes.n ? notes.n : 1) * sizeof *nl);
        for (size_t i = 0; i < notes.n; i++) {
            nj[i] = notes.v[i].json;
            nl[i] = notes.v[i].len;
        }
    }

    r.sub = sub;
    r.metric = metric;
    r.n_dps = a1 - a0;
    r.dps = agg ? agg + a0 : NULL;
    r.n_annotations = notes.n;
    r.annotations = nj;
    r.annotation_lens = nl;
    r.sub_series = n;
    r.sub_raw_points = x->st.raw_points - raw0;
    x->st.emitted_points += r.n_dps;
    x->st.results++;
    rc = x->fn(x->ctx, &r);

out:
    for (size_t i = 0; i < n; i++)
        free(arr[i]);
    for (size_t i = 0; sn && i < n_all; i++)
        exec__xnotes_free(&sn[i]);
    free(sn);
    free(live);
    free(arr);
    free(lens);
    free(agg);
    free(notes.v);
    json_arena_free(&ga);
    return rc;
}
