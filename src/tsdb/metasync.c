/* metasync.c -- TSMeta/UIDMeta backfill and purge (metasync.h).
 *
 * OpenTSDB 2.4's tool scans the data rows and takes a series' row hour as
 * its "created"; a series without TSMeta but with a counter gets created =
 * now and its counter bumped by one. Here every series' points are read,
 * so created is the first point's own time and a missing counter is the
 * number of points stored (docs/meta-sync.md, docs/compat.md). */
#include "tsdb/metasync.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/uid_bytes.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/parts.h"
#include "tsdb/read.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/tsmeta.h"
#include "uid/uid.h"

/* ---- the series -------------------------------------------------------- */

/* Every series of the index, TSUIDs back to back (offs/lens locate each):
 * collected first, so no index lock is held while reading and writing. */
typedef struct {
    uint8_t *tsuids;
    size_t *lens;
    size_t *offs;
    size_t n, cap, bytes, bcap;
} series_list_t;

static int collect_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    series_list_t *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->lens = xrealloc(l->lens, l->cap * sizeof *l->lens);
        l->offs = xrealloc(l->offs, l->cap * sizeof *l->offs);
    }
    if (l->bytes + len > l->bcap) {
        l->bcap = 2 * (l->bcap + len);
        l->tsuids = xrealloc(l->tsuids, l->bcap);
    }
    memcpy(l->tsuids + l->bytes, tsuid, len);
    l->offs[l->n] = l->bytes;
    l->lens[l->n++] = len;
    l->bytes += len;
    return 0;
}

static int metric_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    (void)name;
    (void)len;
    void **a = ctx;
    return tsdb_series_find(a[0], id, 0, 0, collect_cb, a[1]);
}

typedef struct {
    int64_t first, last;
} span_t;

static int span_cb(void *ctx, const int64_t *ts, const uint64_t *val, const uint8_t *is_float,
                   int types, size_t n)
{
    (void)val;
    (void)is_float;
    (void)types;
    span_t *s = ctx;
    if (s->first < 0) s->first = ts[0];
    s->last = ts[n - 1];
    return 0;
}

/* ---- UIDMeta ------------------------------------------------------------ */

/* Creates the UIDMeta of (kind, id) with created, or lowers its created to
 * it (when 0 or later), keeping the other fields. */
static int uidmeta_sync(tsdb_t *db, codec_uid_kind_t kind, uint64_t id, int64_t created,
                        tsdb_metasync_stats_t *st, oct_errbuf_t *eb)
{
    uid_registry_t *u = tsdb_uids(db);
    char *json = NULL;
    size_t jl = 0;
    int rc = uid_meta_get(u, kind, id, &json, &jl, eb);
    if (rc < 0) return rc;
    uid_meta_t m = {NULL, NULL, NULL, created, NULL};
    json_arena_t a = JSON_ARENA_INIT;
    oct_strbuf_t custom = OCT_STRBUF_INIT;
    if (rc == 1) {
        json_value_t *v;
        rc = json_parse(&a, json, jl, JSON_ALLOW_NONFINITE, &v, eb);
        if (rc) {
            static const char *const kinds[] = {"metric", "tagk", "tagv"};
            rc = oct_err(eb, OCT_ECORRUPT, "unreadable UIDMeta of %s UID %llu", kinds[kind],
                         (unsigned long long)id);
            goto out;
        }
        const json_value_t *c = json_obj_get(v, "created");
        int64_t old = 0;
        if (c && c->type == JSON_NUMBER && json_number_i64(c, &old)) old = 0;
        if (old != 0 && old <= created) goto out; /* up to date */
        static const char *const f[3] = {"displayName", "description", "notes"};
        const char **dst[3] = {&m.display_name, &m.description, &m.notes};
        for (int i = 0; i < 3; i++) {
            const json_value_t *s = json_obj_get(v, f[i]);
            if (s && s->type == JSON_STRING) *dst[i] = json_arena_strndup(&a, s->str, s->len);
        }
        const json_value_t *cu = json_obj_get(v, "custom");
        if (cu && cu->type == JSON_OBJECT) {
            json_writer_t w;
            json_w_init(&w, &custom);
            json_w_value(&w, cu);
            m.custom_json = oct_strbuf_cstr(&custom);
        }
        st->uidmeta_fixed++;
    } else {
        st->uidmeta_created++;
    }
    rc = uid_meta_put(u, kind, id, &m, eb);
out:
    free(json);
    json_arena_free(&a);
    oct_strbuf_free(&custom);
    return rc;
}

/* ---- TSMeta ------------------------------------------------------------- */

static int tsmeta_sync(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t created, size_t points,
                       tsdb_metasync_stats_t *st, oct_errbuf_t *eb)
{
    json_arena_t a = JSON_ARENA_INIT;
    tsmeta_t m;
    int64_t ctr = 0;
    int rc = tsmeta_get(db, tsuid, len, &a, &m, &ctr, eb);
    if (rc == 0) {
        tsmeta_init(&m);
        m.created = created;
        rc = tsmeta_put(db, tsuid, len, &m, 0, eb);
        if (!rc) st->tsmeta_created++;
    } else if (rc == 1) {
        rc = 0;
        if (m.created == 0 || m.created > created) {
            m.created = created;
            rc = tsmeta_put(db, tsuid, len, &m, 0, eb);
            if (!rc) st->tsmeta_fixed++;
        }
    }
    if (!rc && ctr == 0 && points > 0) {
        rc = tsmeta_incr(db, tsuid, len, (int64_t)points, NULL, eb);
        if (!rc) st->counters_set++;
    }
    json_arena_free(&a);
    return rc;
}

/* One use of a UID by a series whose first point is at created: all are
 * collected, sorted, and each UID synced once with its earliest. */
typedef struct {
    uint64_t id;
    int64_t created;
    uint8_t kind;
} uid_use_t;

static int use_cmp(const void *a, const void *b)
{
    const uid_use_t *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return (x->created > y->created) - (x->created < y->created);
}

int tsdb_metasync(tsdb_t *db, tsdb_metasync_progress_fn progress, void *ctx,
                  tsdb_metasync_stats_t *st, oct_errbuf_t *eb)
{
    memset(st, 0, sizeof *st);
    series_list_t l = {0};
    void *args[2] = {db, &l};
    int rc = uid_foreach(tsdb_uids(db), CODEC_UID_METRIC, metric_cb, args, eb);
    const tsdb_layout_t *lay = tsdb_layout(db);
    unsigned mw = lay->uid_width[CODEC_UID_METRIC], kw = lay->uid_width[CODEC_UID_TAGK],
             vw = lay->uid_width[CODEC_UID_TAGV];
    tsdb_reader_t *r = tsdb_reader_new(db);
    uid_use_t *uses = NULL;
    size_t nu = 0, ucap = 0;
    for (size_t i = 0; !rc && i < l.n; i++) {
        const uint8_t *t = l.tsuids + l.offs[i];
        size_t len = l.lens[i], n = 0;
        span_t sp = {-1, -1};
        rc = tsdb_reader_scan(r, t, len, 0, INT64_MAX, span_cb, &sp, &n, eb);
        if (rc || n == 0) continue;
        int64_t created = sp.first / 1000;
        st->series++;
        st->points += n;
        size_t need = nu + 1 + 2 * (len / (kw + vw) + 1);
        if (need > ucap) {
            ucap = 2 * need;
            uses = xrealloc(uses, ucap * sizeof *uses);
        }
        uses[nu++] = (uid_use_t){codec_uid_decode(t, mw), created, CODEC_UID_METRIC};
        for (size_t off = mw; off + kw + vw <= len; off += kw + vw) {
            uses[nu++] = (uid_use_t){codec_uid_decode(t + off, kw), created, CODEC_UID_TAGK};
            uses[nu++] = (uid_use_t){codec_uid_decode(t + off + kw, vw), created, CODEC_UID_TAGV};
        }
        rc = tsmeta_sync(db, t, len, created, n, st, eb);
        if (!rc && progress) progress(ctx, st);
    }
    if (nu > 1) qsort(uses, nu, sizeof *uses, use_cmp);
    for (size_t i = 0; !rc && i < nu; i++)
        if (i == 0 || uses[i].kind != uses[i - 1].kind || uses[i].id != uses[i - 1].id)
            rc = uidmeta_sync(db, (codec_uid_kind_t)uses[i].kind, uses[i].id, uses[i].created, st,
                              eb);
    free(uses);
    tsdb_reader_free(r);
    free(l.tsuids);
    free(l.lens);
    free(l.offs);
    return rc;
}

/* ---- purge -------------------------------------------------------------- */

static int uid_purge_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    (void)name;
    (void)len;
    void **a = ctx;
    tsdb_t *db = a[0];
    codec_uid_kind_t kind = *(codec_uid_kind_t *)a[1];
    tsdb_metapurge_stats_t *st = a[2];
    oct_errbuf_t *eb = a[3];
    char *json = NULL;
    size_t jl;
    int rc = uid_meta_get(tsdb_uids(db), kind, id, &json, &jl, eb);
    free(json);
    if (rc <= 0) return rc;
    st->uidmeta++;
    return uid_meta_delete(tsdb_uids(db), kind, id, eb);
}

int tsdb_metapurge(tsdb_t *db, tsdb_metapurge_stats_t *st, oct_errbuf_t *eb)
{
    memset(st, 0, sizeof *st);
    store_t *s = tsdb_store(db);
    tsdb_parts_t pl = {0};
    int rc = tsdb__parts_list(s, STORE_TABLE_META, oct_slice(NULL, 0), oct_slice(NULL, 0), &pl, eb);
    store_result_t row = STORE_RESULT_INIT;
    const oct_slice_t fam = oct_slice_str(TSMETA_FAMILY);
    const oct_slice_t quals[2] = {oct_slice_str(TSMETA_QUAL_META), oct_slice_str(TSMETA_QUAL_CTR)};
    for (size_t p = 0; !rc && p < pl.n; p++) {
        store_scan_spec_t spec = {.part = tsdb__part(&pl, p), .family = fam};
        store_scanner_t *sc;
        rc = store_scan_open(s, STORE_TABLE_META, &spec, &sc, eb);
        if (rc) break;
        while ((rc = store_scan_next(sc, &row, eb)) == 1) {
            store_op_t ops[2];
            size_t n = 0;
            for (size_t c = 0; c < row.n; c++)
                for (int q = 0; q < 2; q++)
                    if (oct_slice_eq(row.cells[c].qualifier, quals[q]))
                        ops[n++] = (store_op_t){STORE_OP_DELETE_CELL,
                                                spec.part,
                                                {row.cells[c].row, fam, quals[q], {0}}};
            if (!n) continue;
            st->tsmeta++;
            rc = store_write(s, STORE_TABLE_META, ops, n, 0, eb);
            if (rc) break;
        }
        store_scan_close(sc);
    }
    store_result_free(&row);
    tsdb__parts_free(&pl);
    for (codec_uid_kind_t k = 0; !rc && k < CODEC_UID_N_KINDS; k++) {
        void *a[4] = {db, &k, st, eb};
        rc = uid_foreach(tsdb_uids(db), k, uid_purge_cb, a, eb);
    }
    return rc;
}
