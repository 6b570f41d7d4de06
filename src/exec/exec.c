/* exec.c -- the executor's driver: options, the scan window, series
 * selection from the in-memory index, grouping, and delete_data.
 *
 * Selection never touches the store: the series index answers "series of
 * metric m with tagk k (= v)" from memory, so a candidate set is one posting
 * list (the union of the postings of the shortest case-sensitive
 * literal_or, else the postings of one filtered key, else the metric's), and
 * every candidate is then checked on its TSUID bytes: keys present, explicit
 * tags, and the filters. Literal filters compare UIDs; the others compare
 * names, resolved once per tag value and query (a small open-addressing map
 * caches names and per-filter verdicts), so 10,000 candidates with 50
 * distinct hosts cost 50 name lookups. The matches are sorted by (group key,
 * TSUID), which makes each group a contiguous run in OpenTSDB's output order
 * (docs/exec.md). Groups are then materialised one at a time
 * (exec_load.c, exec_group.c) and freed before the next is read.
 *
 * Deleting (delete_data) flushes the head, then removes the rows of every
 * matched series in its scan window, after the last callback, as OpenTSDB
 * deletes the rows it scanned. */
#include "exec/exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rowkey.h"
#include "common/clock.h"
#include "common/xmalloc.h"
#include "exec/exec_int.h"
#include "tsdb/maint.h"
#include "tsdb/select.h"

#define HOUR_S 3600LL

/* ---- small helpers ------------------------------------------------------ */

static size_t nm_hash(uint32_t tag, uint64_t id)
{
    uint64_t h = (id ^ ((uint64_t)tag << 56)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static nm_slot_t *nm_find(nmap_t *m, uint32_t tag, uint64_t id)
{
    if (!m->t) return NULL;
    for (size_t i = nm_hash(tag, id) & m->mask;; i = (i + 1) & m->mask) {
        nm_slot_t *s = &m->t[i];
        if (!s->used) return NULL;
        if (s->tag == tag && s->id == id) return s;
    }
}

static nm_slot_t *nm_add(nmap_t *m, uint32_t tag, uint64_t id)
{
    if (!m->t || (m->n + 1) * 2 > m->mask + 1) {
        size_t om = m->t ? m->mask : 0;
        nm_slot_t *old = m->t;
        m->mask = old ? (om + 1) * 2 - 1 : 255;
        m->t = xcalloc(m->mask + 1, sizeof *m->t);
        for (size_t i = 0; old && i <= om; i++) {
            if (!old[i].used) continue;
            size_t j = nm_hash(old[i].tag, old[i].id) & m->mask;
            while (m->t[j].used)
                j = (j + 1) & m->mask;
            m->t[j] = old[i];
        }
        free(old);
    }
    size_t j = nm_hash(tag, id) & m->mask;
    while (m->t[j].used)
        j = (j + 1) & m->mask;
    nm_slot_t *s = &m->t[j];
    memset(s, 0, sizeof *s);
    s->used = 1;
    s->tag = tag;
    s->id = id;
    m->n++;
    return s;
}

static void tl_add(tlist_t *l, const uint8_t *p, size_t len)
{
    if (l->n + len > l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        while (l->cap < l->n + len)
            l->cap *= 2;
        l->buf = xrealloc(l->buf, l->cap);
    }
    if (l->nv == l->capv) {
        l->capv = l->capv ? l->capv * 2 : 256;
        l->v = xrealloc(l->v, l->capv * sizeof *l->v);
    }
    if (len) memcpy(l->buf + l->n, p, len);
    l->v[l->nv].off = (uint32_t)l->n;
    l->v[l->nv].len = (uint16_t)len;
    l->nv++;
    l->n += len;
}

static void tl_free(tlist_t *l)
{
    free(l->buf);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int tl_collect(void *ctx, const uint8_t *tsuid, size_t len)
{
    tl_add(ctx, tsuid, len);
    return 0;
}
int exec__check_time(ex_t *x)
{
    if (x->deadline && oct_clock_mono_ns() > x->deadline)
        return oct_err(x->eb, -ETIMEDOUT, "Query timed out after %lld ms",
                       (long long)x->o->timeout_ms);
    return 0;
}

int exec__name(ex_t *x, codec_uid_kind_t kind, uint64_t id, const char **s, size_t *len)
{
    uint32_t tag = kind == CODEC_UID_TAGK ? 1 : kind == CODEC_UID_TAGV ? 2 : 3;
    nm_slot_t *sl = nm_find(&x->nm, tag, id);
    if (sl) {
        *s = sl->s;
        *len = sl->len;
        return 0;
    }
    uint8_t buf[UID_NAME_MAX];
    size_t bl;
    int rc = uid_get_name(x->uids, kind, id, buf, sizeof buf, &bl, x->eb);
    if (rc) return rc;
    sl = nm_add(&x->nm, tag, id);
    sl->s = json_arena_strndup(&x->names, (const char *)buf, bl);
    sl->len = bl;
    *s = sl->s;
    *len = bl;
    return 0;
}
/* ---- options ------------------------------------------------------------ */

void exec_opts_default(exec_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->max_series = 1000000;
    o->max_held_points = 50000000;
    o->expansion_limit = 4096;
}

void exec_opts_from_config(exec_opts_t *o, const oct_config_t *cfg)
{
    exec_opts_default(o);
    if (!cfg) return;
    if (oct_config_is_known("tsd.query.timeout"))
        o->timeout_ms = oct_config_get_int(cfg, "tsd.query.timeout");
    o->max_points = (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.data_points.default");
    if (oct_config_is_known("tsd.query.limits.series.default"))
        o->max_series = (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.series.default");
    if (oct_config_is_known("tsd.query.limits.held_points.default"))
        o->max_held_points =
            (uint64_t)oct_config_get_int(cfg, "tsd.query.limits.held_points.default");
    o->skip_unresolved_tagvs = oct_config_get_bool(cfg, "tsd.query.skip_unresolved_tagvs");
    o->expansion_limit = (size_t)oct_config_get_int(cfg, "tsd.query.filter.expansion_limit");
    const char *tz = oct_config_get(cfg, "tsd.core.timezone");
    o->timezone = tz && *tz ? tz : NULL;
}

/* ---- scan window (TsdbQuery.getScanStartTimeSeconds / EndTimeSeconds) -- */

/* The window's end in seconds, exclusive: end moved past the next downsample
 * boundary (always at least one step), then up to the hour; without
 * downsampling the start of the hour after end. bump: first add the second
 * 2.4.1 adds to every millisecond end (its "ms time between 0 and 1 seconds"
 * test is always true), which reads one hour past an end at hh:59:59. */
static int64_t scan_end_s(const query_t *q, const query_sub_t *sub, int bump)
{
    int64_t iv = sub && sub->has_downsample && !sub->ds.all ? sub->ds.interval_ms : 0;
    int64_t end = floor_div(q->end_ms, 1000) + (bump ? 1 : 0);
    if (iv > 0) {
        end += (iv - (1000 * end) % iv) / 1000;
        if (end % HOUR_S) end += HOUR_S - end % HOUR_S;
    } else {
        end += HOUR_S - end % HOUR_S;
    }
    return end;
}

static int64_t scan_start_ms(const query_t *q, const query_sub_t *sub)
{
    int64_t iv = sub && sub->has_downsample && !sub->ds.all ? sub->ds.interval_ms : 0;
    int64_t start = floor_div(q->start_ms, 1000);
    if (iv > 0) start -= ((1000 * start) % iv) / 1000;
    start -= start % HOUR_S;
    return start < 0 ? 0 : start * 1000;
}

void exec_scan_window(const query_t *q, const query_sub_t *sub, int64_t *lo, int64_t *hi)
{
    *lo = scan_start_ms(q, sub);
    *hi = scan_end_s(q, sub, 1) * 1000 - 1;
}

void exec_delete_window(const query_t *q, const query_sub_t *sub, int64_t *lo, int64_t *hi)
{
    *lo = scan_start_ms(q, sub);
    *hi = scan_end_s(q, sub, 0) * 1000 - 1;
}
/* ---- selection ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Splits a literal_or expression as Java's split("\\|") (trailing empties
 * dropped) and resolves each literal to a tag value UID. */
static int resolve_literals(ex_t *x, xfilter_t *xf)
{
    const char *e = xf->f->expr;
    size_t cap = 1;
    for (const char *p = e; *p; p++)
        cap += *p == '|';
    if (cap > x->o->expansion_limit) return 0; /* OpenTSDB: post-filter on names only */
    xf->lits = xmalloc(cap * sizeof *xf->lits);
    size_t n_items = 0, last_nonempty = 0;
    const char *start = e;
    /* Count items first to know which trailing empties to drop. */
    for (const char *p = e;; p++) {
        if (*p == '|' || !*p) {
            n_items++;
            if (p > start) last_nonempty = n_items;
            if (!*p) break;
            start = p + 1;
        }
    }
    start = e;
    size_t item = 0;
    for (const char *p = e;; p++) {
        if (*p == '|' || !*p) {
            item++;
            if (item > last_nonempty) break;
            uint64_t id;
            oct_errbuf_t leb;
            int rc = uid_get_id(x->uids, CODEC_UID_TAGV, (const uint8_t *)start,
                                (size_t)(p - start), &id, &leb);
            if (rc == OCT_ENOSUCHNAME && x->o->skip_unresolved_tagvs) {
                /* dropped */
            } else if (rc) {
                return oct_err(x->eb, rc, "%s", leb.msg);
            } else {
                xf->lits[xf->n_lits++] = id;
            }
            if (!*p) break;
            start = p + 1;
        }
    }
    qsort(xf->lits, xf->n_lits, sizeof *xf->lits, cmp_u64);
    xf->pushed = 1;
    return 0;
}

void exec__tsuid_pairs(const ex_t *x, const uint8_t *t, size_t len, pairs_t *p)
{
    size_t pw = x->kw + x->vw;
    p->n = len > x->mw ? (len - x->mw) / pw : 0;
    if (p->n > MAX_PAIRS) p->n = MAX_PAIRS;
    for (size_t i = 0; i < p->n; i++) {
        p->k[i] = codec_uid_decode(t + x->mw + i * pw, x->kw);
        p->v[i] = codec_uid_decode(t + x->mw + i * pw + x->kw, x->vw);
    }
}

static int pair_find(const pairs_t *p, uint64_t k, uint64_t *v)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->k[i] == k) {
            *v = p->v[i];
            return 1;
        }
    return 0;
}

/* 1 if the series passes every filter, 0 if not, negative on error. */
static int series_passes(ex_t *x, const xfilter_t *xf, size_t nf, const pairs_t *p,
                         const uint64_t *fkeys, size_t nfk, int explicit_tags)
{
    if (explicit_tags) {
        for (size_t i = 0; i < p->n; i++) {
            int found = 0;
            for (size_t j = 0; j < nfk && !found; j++)
                found = fkeys[j] == p->k[i];
            if (!found) return 0;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        uint64_t v;
        int has = pair_find(p, xf[i].tagk, &v);
        if (xf[i].f->type == QUERY_FILTER_NOT_KEY) {
            if (has) return 0;
            continue;
        }
        if (!has) return 0;
        if (xf[i].pushed) {
            if (!bsearch(&v, xf[i].lits, xf[i].n_lits, sizeof v, cmp_u64)) return 0;
            continue;
        }
        nm_slot_t *sl = nm_find(&x->nm, 16 + (uint32_t)i, v);
        int ok;
        if (sl) {
            ok = (int)sl->len;
        } else {
            const char *name;
            size_t nl;
            int rc = exec__name(x, CODEC_UID_TAGV, v, &name, &nl);
            if (rc) return rc;
            ok = query_filter_match(xf[i].f, name, nl) ? 1 : 0;
            sl = nm_add(&x->nm, 16 + (uint32_t)i, v);
            sl->len = (size_t)ok;
        }
        if (!ok) return 0;
    }
    return 1;
}

static int cmp_series(const void *a, const void *b)
{
    const xseries_t *x = a, *y = b;
    int c = oct_slice_cmp(oct_slice(x->gkey, x->glen), oct_slice(y->gkey, y->glen));
    if (c) return c;
    return oct_slice_cmp(oct_slice(x->tsuid, x->len), oct_slice(y->tsuid, y->len));
}

static int cmp_tref(const void *a, const void *b, void *ctx)
{
    const uint8_t *buf = ctx;
    const tref_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(buf + x->off, x->len), oct_slice(buf + y->off, y->len));
}
/* ---- one sub-query ------------------------------------------------------ */

static void del_add(ex_t *x, const uint8_t *tsuid, size_t len, int64_t lo, int64_t hi)
{
    if (x->del.nv == x->del_cap) {
        x->del_cap = x->del_cap ? x->del_cap * 2 : 64;
        x->del_lo = xrealloc(x->del_lo, x->del_cap * sizeof *x->del_lo);
        x->del_hi = xrealloc(x->del_hi, x->del_cap * sizeof *x->del_hi);
    }
    x->del_lo[x->del.nv] = lo;
    x->del_hi[x->del.nv] = hi;
    tl_add(&x->del, tsuid, len);
}

static int run_sub(ex_t *x, const query_sub_t *sub)
{
    int64_t t_res = oct_clock_mono_ns();
    int rc = 0;
    uint64_t metric = 0;
    tlist_t cand = {0};
    xfilter_t *xf = NULL;
    uint64_t *fkeys = NULL, *gkeys = NULL;
    xseries_t *ser = NULL;
    size_t nf = sub->n_filters, nfk = 0, ngk = 0, nser = 0;
    char *metric_name = NULL;

    if (sub->n_tsuids > 0) {
        /* TSUID sub-query: the given series, which must share one metric. */
        uint8_t buf[256];
        for (size_t i = 0; i < sub->n_tsuids; i++) {
            int len = codec_tsuid_from_hex(&x->rk, sub->tsuids[i], strlen(sub->tsuids[i]), buf,
                                           sizeof buf, x->eb);
            if (len < 0) {
                rc = len;
                goto out;
            }
            uint64_t m = codec_uid_decode(buf, x->mw);
            if (i > 0 && m != metric) {
                rc = oct_err(x->eb, OCT_EPARSE, "One or more TSUIDs did not share the same metric");
                goto out;
            }
            metric = m;
            tl_add(&cand, buf, (size_t)len);
        }
        qsort_r(cand.v, cand.nv, sizeof *cand.v, cmp_tref, cand.buf);
        const char *mn;
        size_t ml;
        rc = exec__name(x, CODEC_UID_METRIC, metric, &mn, &ml);
        if (rc) goto out;
        metric_name = xstrdup(mn);
    } else {
        rc = uid_get_id(x->uids, CODEC_UID_METRIC, (const uint8_t *)sub->metric,
                        strlen(sub->metric), &metric, x->eb);
        if (rc) goto out;
        metric_name = xstrdup(sub->metric);
        xf = xcalloc(nf ? nf : 1, sizeof *xf);
        fkeys = xcalloc(nf ? nf : 1, sizeof *fkeys);
        gkeys = xcalloc(nf ? nf : 1, sizeof *gkeys);
        for (size_t i = 0; i < nf; i++) {
            const query_filter_t *f = &sub->filters[i];
            xf[i].f = f;
            rc = uid_get_id(x->uids, CODEC_UID_TAGK, (const uint8_t *)f->tagk, strlen(f->tagk),
                            &xf[i].tagk, x->eb);
            if (rc) goto out;
            if (f->type == QUERY_FILTER_LITERAL_OR) {
                rc = resolve_literals(x, &xf[i]);
                if (rc) goto out;
            }
            size_t j = 0;
            while (j < nfk && fkeys[j] != xf[i].tagk)
                j++;
            if (j == nfk) fkeys[nfk++] = xf[i].tagk;
            if (f->group_by) {
                j = 0;
                while (j < ngk && gkeys[j] != xf[i].tagk)
                    j++;
                if (j == ngk) gkeys[ngk++] = xf[i].tagk;
            }
        }
        qsort(gkeys, ngk, sizeof *gkeys, cmp_u64);

        /* Candidates: the shortest pushed literal list, else one filtered key. */
        const xfilter_t *best = NULL;
        for (size_t i = 0; i < nf; i++)
            if (xf[i].pushed && (!best || xf[i].n_lits < best->n_lits)) best = &xf[i];
        tsdb_tag_match_t tm = {0};
        if (best) {
            /* No resolved literal (skip_unresolved_tagvs): nothing can match;
             * an empty value list would mean "any value" to tsdb_select. */
            tm = (tsdb_tag_match_t){best->tagk, best->lits, best->n_lits};
        } else {
            for (size_t i = 0; i < nf && !tm.tagk; i++)
                if (xf[i].f->type != QUERY_FILTER_NOT_KEY) tm.tagk = xf[i].tagk;
        }
        if (!best || best->n_lits)
            tsdb_select(x->db, metric, &tm, tm.tagk ? 1 : 0, TSDB_SELECT_SUBSET, 0, tl_collect,
                        &cand);
    }
    x->st.resolve_ns += oct_clock_mono_ns() - t_res;

    /* Check the candidates, build group keys. */
    size_t gw = ngk * x->vw;
    uint8_t *gbuf = xmalloc((cand.nv ? cand.nv : 1) * (gw ? gw : 1));
    ser = xmalloc((cand.nv ? cand.nv : 1) * sizeof *ser);
    for (size_t i = 0; i < cand.nv; i++) {
        const uint8_t *t = cand.buf + cand.v[i].off;
        size_t len = cand.v[i].len;
        pairs_t p;
        exec__tsuid_pairs(x, t, len, &p);
        if (sub->n_tsuids == 0) {
            int ok = series_passes(x, xf, nf, &p, fkeys, nfk, sub->explicit_tags);
            if (ok < 0) {
                rc = ok;
                free(gbuf);
                goto out;
            }
            if (!ok) continue;
        }
        uint8_t *g = gbuf + nser * gw;
        int complete = 1;
        for (size_t j = 0; j < ngk && complete; j++) {
            uint64_t v;
            complete = pair_find(&p, gkeys[j], &v);
            if (complete && codec_uid_encode(v, x->vw, g + j * x->vw) < 0) complete = 0;
        }
        if (!complete) continue; /* lacks a group-by key (not_key grouping): no group */
        ser[nser++] = (xseries_t){t, len, g, gw};
        if (x->o->max_series && x->st.series + nser > x->o->max_series) {
            rc = oct_err(x->eb, OCT_ERANGE,
                         "Sorry, you have attempted to fetch more than our limit of %llu time "
                         "series. Please try filtering using more tags.",
                         (unsigned long long)x->o->max_series);
            free(gbuf);
            goto out;
        }
    }
    x->st.series += nser;
    int none = query_agg_kind(sub->agg) == QUERY_AGG_NONE;
    if (!none && ngk > 0) qsort(ser, nser, sizeof *ser, cmp_series);

    int64_t lo, hi;
    exec_scan_window(x->q, sub, &lo, &hi);
    for (size_t i = 0; i < nser && !rc;) {
        size_t j = i + 1;
        if (!none)
            while (j < nser && !memcmp(ser[j].gkey, ser[i].gkey, gw))
                j++;
        rc = exec__emit_group(x, sub, metric_name, ser + i, j - i, lo, hi);
        i = j;
    }
    if (!rc && x->q->delete_data) {
        /* not the read window: its extra second would take the next hour */
        exec_delete_window(x->q, sub, &lo, &hi);
        for (size_t i = 0; i < nser; i++)
            del_add(x, ser[i].tsuid, ser[i].len, lo, hi);
    }
    free(gbuf);

out:
    if (xf)
        for (size_t i = 0; i < nf; i++)
            free(xf[i].lits);
    free(xf);
    free(fkeys);
    free(gkeys);
    free(ser);
    free(metric_name);
    tl_free(&cand);
    return rc;
}
/* A sub-query from its sources in order (exec__rollup_plan): the next
 * only when the previous one answered nothing. */
static int run_sub_planned(ex_t *x, const query_sub_t *sub)
{
    exec_ru_t plans[EXEC_RU_MAX_PLANS];
    size_t np = 0;
    int rc = exec__rollup_plan(x, sub, plans, &np);
    if (rc || np == 0) {
        x->ru = NULL;
        return rc ? rc : run_sub(x, sub);
    }
    for (size_t i = 0; i < np; i++) {
        uint64_t before = x->st.results;
        x->ru = plans[i].table ? &plans[i] : NULL;
        x->ru_end = plans + np;
        rc = run_sub(x, sub);
        if (rc || x->st.results > before) break;
    }
    x->ru = NULL;
    return rc;
}

/* ---- delete ------------------------------------------------------------- */

static int run_delete(ex_t *x)
{
    if (x->del.nv == 0) return 0;
    tsdb_window_t *w = xmalloc(x->del.nv * sizeof *w);
    for (size_t i = 0; i < x->del.nv; i++)
        w[i] = (tsdb_window_t){x->del.buf + x->del.v[i].off, x->del.v[i].len, x->del_lo[i],
                               x->del_hi[i]};
    uint64_t rows = 0;
    int rc = tsdb_delete_window(x->db, w, x->del.nv, &rows, x->eb);
    x->st.deleted_rows += rows;
    free(w);
    return rc;
}
/* ---- entry -------------------------------------------------------------- */

int exec_query(tsdb_t *db, const query_t *q, const exec_opts_t *opts, exec_result_fn fn, void *ctx,
               exec_stats_t *stats, oct_errbuf_t *eb)
{
    exec_opts_t defo;
    if (!opts) {
        exec_opts_default(&defo);
        opts = &defo;
    }
    ex_t x;
    memset(&x, 0, sizeof x);
    x.db = db;
    x.uids = tsdb_uids(db);
    const tsdb_layout_t *lay = tsdb_layout(db);
    x.mw = lay->uid_width[CODEC_UID_METRIC];
    x.kw = lay->uid_width[CODEC_UID_TAGK];
    x.vw = lay->uid_width[CODEC_UID_TAGV];
    x.rk = (codec_rowkey_layout_t){(uint8_t)x.mw, (uint8_t)x.kw, (uint8_t)x.vw,
                                   (uint8_t)lay->salt_width,
                                   lay->salt_buckets ? lay->salt_buckets : 1};
    x.q = q;
    x.o = opts;
    x.fn = fn;
    x.ctx = ctx;
    x.eb = eb;
    x.t0 = oct_clock_mono_ns();
    x.deadline = opts->timeout_ms > 0 ? x.t0 + opts->timeout_ms * 1000000LL : 0;
    x.tz = q->timezone && *q->timezone ? q->timezone : opts->timezone;
    oct_errbuf_clear(eb);

    int rc = 0;
    for (size_t i = 0; i < q->n_subs && !rc; i++)
        rc = run_sub_planned(&x, &q->subs[i]);
    if (!rc && q->delete_data) rc = run_delete(&x);

    x.st.total_ns = oct_clock_mono_ns() - x.t0;
    if (stats) *stats = x.st;
    free(x.nm.t);
    for (unsigned i = 0; i < MAX_WORKERS; i++) {
        tsdb_reader_free(x.wk[i].rd);
        free(x.wk[i].dsb.cv);
        free(x.wk[i].dsb.cf);
    }
    json_arena_free(&x.names);
    tl_free(&x.del);
    free(x.del_lo);
    free(x.del_hi);
    return rc;
}
