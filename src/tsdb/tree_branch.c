/* tree_branch.c -- branches, leaves, collisions and not-matched records in
 * tsdb-tree, and running series through trees (tree.h,
 * docs/format/tree.md). The rule engine is query/tree_rule.c; this file
 * resolves a series' names and custom maps for it and stores its result as
 * 2.4 does: every cell created only if absent, so an existing branch is
 * never rewritten and a leaf slot held by another series is a collision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/rowkey.h"
#include "codec/uid_bytes.h"
#include "common/bytes.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/tree.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/tsmeta.h"

#define TREE_FAMILY      "t"
#define TREE_QUAL_BRANCH "branch"
#define TREE_LEAF_PFX    "leaf:"
#define TREE_MAX_ID_LEN  (2 + 4 * 64)

static const char *const tree_rec_pfx[3] = {NULL, "tree_collision:", "tree_not_matched:"};

void tsdb_tree_branch_id(int tree_id, const char *const *names, size_t n, uint8_t *out)
{
    oct_put_be16(out, (uint16_t)tree_id);
    for (size_t i = 0; i < n; i++)
        oct_put_be32(out + 2 + 4 * i, (uint32_t)tree_hash(names[i], strlen(names[i])));
}

void tsdb_tree_branch_free(tsdb_tree_branch_t *b)
{
    if (!b) return;
    free(b->id);
    for (size_t i = 0; i < b->n_path; i++)
        free(b->path[i]);
    free(b->path);
    for (size_t i = 0; i < b->n_leaves; i++) {
        free(b->leaves[i].display_name);
        free(b->leaves[i].tsuid_hex);
    }
    free(b->leaves);
    for (size_t i = 0; i < b->n_children; i++)
        tsdb_tree_branch_free(&b->children[i]);
    free(b->children);
    memset(b, 0, sizeof *b);
}

/* {"path":{"0":"ROOT",...},"displayName":"<last>"} of path[0..n). */
static void tree_branch_json(char *const *path, size_t n, oct_strbuf_t *sb)
{
    json_writer_t w;
    json_w_init(&w, sb);
    json_w_obj_begin(&w);
    json_w_key(&w, "path");
    json_w_obj_begin(&w);
    for (size_t i = 0; i < n; i++) {
        char k[24];
        snprintf(k, sizeof k, "%zu", i);
        json_w_key(&w, k);
        json_w_str(&w, path[i]);
    }
    json_w_obj_end(&w);
    json_w_key(&w, "displayName");
    json_w_str(&w, path[n - 1]);
    json_w_obj_end(&w);
}

/* A stored branch cell into b's path (depth order). */
static int tree_branch_parse(const uint8_t *p, size_t n, tsdb_tree_branch_t *b, oct_errbuf_t *eb)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *o;
    int rc = json_parse(&a, (const char *)p, n, 0, &o, eb);
    const json_value_t *path = rc ? NULL : json_obj_get(o, "path");
    if (!path || path->type != JSON_OBJECT) {
        json_arena_free(&a);
        return oct_err(eb, OCT_ECORRUPT, "stored branch is not readable");
    }
    b->n_path = 0;
    b->path = xcalloc(path->n ? path->n : 1, sizeof *b->path);
    for (const json_value_t *v = path->child; v; v = v->next) {
        /* a member key is not NUL-terminated (json.h): its digits only */
        long d = 0;
        size_t i = 0;
        while (i < v->key_len && i < 9 && v->key[i] >= '0' && v->key[i] <= '9')
            d = d * 10 + (v->key[i++] - '0');
        if (i == 0 || i != v->key_len) continue;
        if (d < 0 || (size_t)d >= path->n || v->type != JSON_STRING || b->path[d]) continue;
        b->path[d] = xstrndup(v->str, v->len);
    }
    b->n_path = path->n;
    for (size_t i = 0; i < b->n_path; i++)
        if (!b->path[i]) b->path[i] = xstrdup("");
    json_arena_free(&a);
    return 0;
}

static int tree_leaf_cmp(const void *x, const void *y)
{
    return strcasecmp(((const tsdb_tree_leaf_t *)x)->display_name,
                      ((const tsdb_tree_leaf_t *)y)->display_name);
}

static int tree_child_cmp(const void *x, const void *y)
{
    const tsdb_tree_branch_t *a = x, *b = y;
    return strcasecmp(a->path[a->n_path - 1], b->path[b->n_path - 1]);
}

typedef struct {
    size_t len;
} tree_filter_t;

/* The branch's own row or its children's (4 bytes longer). */
static int tree_branch_filter(void *ctx, oct_slice_t row)
{
    const tree_filter_t *f = ctx;
    return row.len == f->len || row.len == f->len + 4;
}

static int tree_leaf_parse(const uint8_t *p, size_t n, tsdb_tree_leaf_t *l)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *o;
    oct_errbuf_t eb;
    int ok = !json_parse(&a, (const char *)p, n, 0, &o, &eb) && o->type == JSON_OBJECT;
    const json_value_t *dn = ok ? json_obj_get(o, "displayName") : NULL;
    const json_value_t *ts = ok ? json_obj_get(o, "tsuid") : NULL;
    ok = dn && ts && dn->type == JSON_STRING && ts->type == JSON_STRING;
    if (ok) {
        l->display_name = xstrndup(dn->str, dn->len);
        l->tsuid_hex = xstrndup(ts->str, ts->len);
    }
    json_arena_free(&a);
    return ok ? 0 : -1;
}

int tsdb_tree_branch_get(tsdb_t *db, const uint8_t *id, size_t len, tsdb_tree_branch_t *out,
                         oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    if (len < 2 || len > TREE_MAX_ID_LEN || (len - 2) % 4)
        return oct_err(eb, OCT_EINVAL, "Invalid branch ID");
    uint8_t stop[TREE_MAX_ID_LEN];
    memcpy(stop, id, len);
    size_t sl = len;
    while (sl > 0 && stop[sl - 1] == 0xFF)
        sl--;
    if (sl) stop[sl - 1]++;
    tree_filter_t f = {len};
    store_scan_spec_t spec = {.part = oct_slice(id, 2),
                              .start_row = oct_slice(id, len),
                              .stop_row = oct_slice(stop, sl),
                              .family = oct_slice_str(TREE_FAMILY),
                              .row_filter = tree_branch_filter,
                              .filter_ctx = &f};
    store_scanner_t *sc;
    int rc = store_scan_open(tsdb_store(db), STORE_TABLE_TREE, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    int found = 0;
    size_t cap_l = 0, cap_c = 0;
    size_t bl = strlen(TREE_QUAL_BRANCH), ll = strlen(TREE_LEAF_PFX);
    while ((rc = store_scan_next(sc, &row, eb)) > 0) {
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *c = &row.cells[i];
            int own = c->row.len == len && !memcmp(c->row.ptr, id, len);
            if (c->qualifier.len == bl && !memcmp(c->qualifier.ptr, TREE_QUAL_BRANCH, bl)) {
                tsdb_tree_branch_t b = {0};
                if (tree_branch_parse(c->value.ptr, c->value.len, &b, eb) || b.n_path == 0) {
                    tsdb_tree_branch_free(&b);
                    continue; /* an unreadable row is skipped, as 2.4 skips bad leaves */
                }
                b.tree_id = oct_get_be16(id);
                b.id = xmemdup(c->row.ptr, c->row.len);
                b.id_len = c->row.len;
                if (own) {
                    tsdb_tree_branch_t keep_children = *out;
                    *out = b;
                    out->leaves = keep_children.leaves;
                    out->n_leaves = keep_children.n_leaves;
                    out->children = keep_children.children;
                    out->n_children = keep_children.n_children;
                    found = 1;
                } else {
                    if (out->n_children == cap_c)
                        out->children =
                            xrealloc(out->children, (cap_c = cap_c ? 2 * cap_c : 8) * sizeof b);
                    out->children[out->n_children++] = b;
                }
            } else if (own && c->qualifier.len == ll + 4 &&
                       !memcmp(c->qualifier.ptr, TREE_LEAF_PFX, ll)) {
                tsdb_tree_leaf_t l;
                if (tree_leaf_parse(c->value.ptr, c->value.len, &l)) continue;
                if (out->n_leaves == cap_l)
                    out->leaves = xrealloc(out->leaves, (cap_l = cap_l ? 2 * cap_l : 8) * sizeof l);
                out->leaves[out->n_leaves++] = l;
            }
        }
    }
    store_scan_close(sc);
    store_result_free(&row);
    if (rc < 0 || !found) {
        tsdb_tree_branch_free(out);
        return rc < 0 ? rc : 0;
    }
    if (out->n_leaves > 1) qsort(out->leaves, out->n_leaves, sizeof *out->leaves, tree_leaf_cmp);
    if (out->n_children > 1)
        qsort(out->children, out->n_children, sizeof *out->children, tree_child_cmp);
    return 1;
}

/* ---- series as the engine sees them -------------------------------------- */

/* The custom object of a UID's stored UIDMeta as JSON text, or NULL. */
static char *tree_uid_custom(tsdb_t *db, codec_uid_kind_t kind, uint64_t uid)
{
    char *json = NULL;
    size_t len = 0;
    oct_errbuf_t eb;
    if (uid_meta_get(tsdb_uids(db), kind, uid, &json, &len, &eb) <= 0) return NULL;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *o;
    char *out = NULL;
    if (!json_parse(&a, json, len, 0, &o, &eb)) {
        const json_value_t *c = json_obj_get(o, "custom");
        if (c && c->type == JSON_OBJECT) {
            oct_strbuf_t sb = {0};
            json_writer_t w;
            json_w_init(&w, &sb);
            json_w_value(&w, c);
            out = xstrndup(sb.ptr, sb.len);
            oct_strbuf_free(&sb);
        }
    }
    json_arena_free(&a);
    free(json);
    return out;
}

void tsdb_tree_series_free(tsdb_tree_series_t *s)
{
    for (size_t i = 0; i < s->n_uids; i++) {
        free((char *)s->uids[i].name);
        free((char *)s->uids[i].custom_json);
    }
    free(s->uids);
    free(s->pairs);
    free(s->tsuid_hex);
    free(s->tsuid);
    memset(s, 0, sizeof *s);
}

int tsdb_tree_series_load(tsdb_t *db, const uint8_t *tsuid, size_t len, tsdb_tree_series_t *out,
                          oct_errbuf_t *eb)
{
    memset(out, 0, sizeof *out);
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    int np = codec_tsuid_check(&l, tsuid, len, eb);
    if (np < 0) return np;
    const tsdb_layout_t *lay = tsdb_layout(db);
    unsigned mw = lay->uid_width[0], kw = lay->uid_width[1], vw = lay->uid_width[2];
    out->n_uids = 1 + 2 * (size_t)np;
    out->uids = xcalloc(out->n_uids, sizeof *out->uids);
    out->tsuid = xmemdup(tsuid, len);
    out->tsuid_len = len;
    out->tsuid_hex = xmalloc(2 * len + 1);
    if (codec_tsuid_to_hex(tsuid, len, out->tsuid_hex, 2 * len + 1) < 0) out->tsuid_hex[0] = '\0';
    for (size_t i = 0; i < out->n_uids; i++) {
        codec_uid_kind_t kind = i == 0 ? CODEC_UID_METRIC : i % 2 ? CODEC_UID_TAGK : CODEC_UID_TAGV;
        const uint8_t *p = i == 0 ? tsuid : tsuid + mw + (i - 1) / 2 * (kw + vw) + (i % 2 ? 0 : kw);
        uint64_t uid = codec_uid_decode(p, i == 0 ? mw : i % 2 ? kw : vw);
        uint8_t name[1024];
        size_t nl;
        int rc = uid_get_name(tsdb_uids(db), kind, uid, name, sizeof name, &nl, eb);
        if (rc) {
            tsdb_tree_series_free(out);
            return rc;
        }
        out->uids[i].name = xstrndup((const char *)name, nl);
        out->uids[i].custom_json = tree_uid_custom(db, kind, uid);
    }
    /* tag keys and values as two parallel arrays for the engine */
    out->pairs = xcalloc(np ? 2 * (size_t)np : 1, sizeof *out->pairs);
    for (int i = 0; i < np; i++) {
        out->pairs[i] = out->uids[1 + 2 * i];
        out->pairs[np + i] = out->uids[2 + 2 * i];
    }
    out->view.tsuid_hex = out->tsuid_hex;
    out->view.metric = out->uids[0];
    out->view.n_tags = (size_t)np;
    out->view.tagk = out->pairs;
    out->view.tagv = out->pairs + np;
    return 0;
}

/* ---- storing -------------------------------------------------------------- */

/* Creates row/t:qual = value unless the cell exists: 1 created, 0 existed. */
static int tree_put_absent(tsdb_t *db, int tree_id, const uint8_t *row, size_t rl, const void *qual,
                           size_t ql, const void *val, size_t vl, oct_errbuf_t *eb)
{
    uint8_t part[2];
    oct_put_be16(part, (uint16_t)tree_id);
    store_cell_t cell = {oct_slice(row, rl), oct_slice_str(TREE_FAMILY), oct_slice(qual, ql),
                         oct_slice(val, vl)};
    store_check_t chk = {STORE_CHECK_ABSENT, cell};
    store_op_t op = {STORE_OP_PUT, oct_slice(part, 2), cell};
    int rc =
        store_cas(tsdb_store(db), STORE_TABLE_TREE, oct_slice(part, 2), &chk, 1, &op, 1, 0, eb);
    return rc == OCT_ECASFAIL ? 0 : rc < 0 ? rc : 1;
}

/* A collision or not-matched record (kind 1 or 2) for the series. */
static int tree_put_record(tsdb_t *db, int tree_id, int kind, const tsdb_tree_series_t *s,
                           const char *value, oct_errbuf_t *eb)
{
    uint8_t part[2], row[3];
    oct_put_be16(part, (uint16_t)tree_id);
    memcpy(row, part, 2);
    row[2] = (uint8_t)kind;
    size_t pl = strlen(tree_rec_pfx[kind]);
    uint8_t *q = xmalloc(pl + s->tsuid_len);
    memcpy(q, tree_rec_pfx[kind], pl);
    memcpy(q + pl, s->tsuid, s->tsuid_len);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(part, 2),
                     {oct_slice(row, 3), oct_slice_str(TREE_FAMILY),
                      oct_slice(q, pl + s->tsuid_len), oct_slice_str(value)}};
    int rc = store_write(tsdb_store(db), STORE_TABLE_TREE, &op, 1, 0, eb);
    free(q);
    return rc;
}

int tsdb_tree_process(tsdb_t *db, const tsdb_tree_t *t, const tsdb_tree_series_t *s,
                      tree_build_result_t *res, oct_errbuf_t *eb)
{
    tree_build_result_t local = {0};
    tree_build_result_t *r = res ? res : &local;
    int rc = tree_build(t->rules, t->n_rules, &s->view, 0, r, eb);
    if (rc) goto done;
    if (r->not_matched && t->strict_match) {
        /* 2.4 means to record these but never does (docs/compat.md) */
        if (t->store_failures) rc = tree_put_record(db, t->id, 2, s, r->not_matched, eb);
        if (!rc) rc = TSDB_TREE_NOT_MATCHED;
        goto done;
    }
    if (!r->leaf || r->n_branches == 0) {
        rc = TSDB_TREE_NO_BRANCH;
        goto done;
    }
    if (r->n_branches > (TREE_MAX_ID_LEN - 2) / 4) {
        rc = oct_err(eb, OCT_EINVAL, "tree %d: more than %d branch levels", t->id,
                     (TREE_MAX_ID_LEN - 2) / 4);
        goto done;
    }
    uint8_t id[TREE_MAX_ID_LEN];
    char **path = xmalloc((r->n_branches + 1) * sizeof *path);
    path[0] = "ROOT";
    oct_strbuf_t js = {0};
    tree_branch_json(path, 1, &js);
    tsdb_tree_branch_id(t->id, NULL, 0, id);
    rc = tree_put_absent(db, t->id, id, 2, TREE_QUAL_BRANCH, strlen(TREE_QUAL_BRANCH), js.ptr,
                         js.len, eb);
    for (size_t i = 0; rc >= 0 && i < r->n_branches; i++) {
        path[i + 1] = r->branches[i];
        oct_strbuf_free(&js);
        tree_branch_json(path, i + 2, &js);
        tsdb_tree_branch_id(t->id, (const char *const *)r->branches, i + 1, id);
        rc = tree_put_absent(db, t->id, id, 2 + 4 * (i + 1), TREE_QUAL_BRANCH,
                             strlen(TREE_QUAL_BRANCH), js.ptr, js.len, eb);
    }
    free(path);
    oct_strbuf_free(&js);
    if (rc < 0) goto done;
    size_t idl = 2 + 4 * r->n_branches, ll = strlen(TREE_LEAF_PFX);
    uint8_t q[16];                /* "leaf:" and the 4 hash bytes: a qualifier, not a C string */
    memcpy(q, TREE_LEAF_PFX, ll); /* NOLINT(bugprone-not-null-terminated-result) */
    oct_put_be32(q + ll, (uint32_t)tree_hash(r->leaf, strlen(r->leaf)));
    {
        json_writer_t w;
        json_w_init(&w, &js);
        json_w_obj_begin(&w);
        json_w_key(&w, "displayName");
        json_w_str(&w, r->leaf);
        json_w_key(&w, "tsuid");
        json_w_str(&w, s->tsuid_hex);
        json_w_obj_end(&w);
    }
    rc = tree_put_absent(db, t->id, id, idl, q, ll + 4, js.ptr, js.len, eb);
    oct_strbuf_free(&js);
    if (rc < 0) goto done;
    if (rc == 1) {
        rc = TSDB_TREE_STORED;
        goto done;
    }
    /* The slot exists: the same series (already stored) or a collision. */
    store_result_t cell = STORE_RESULT_INIT;
    rc = store_get_cell(tsdb_store(db), STORE_TABLE_TREE, oct_slice(id, 2), oct_slice(id, idl),
                        oct_slice_str(TREE_FAMILY), oct_slice(q, ll + 4), &cell, eb);
    tsdb_tree_leaf_t l = {0};
    if (rc > 0 && !tree_leaf_parse(cell.cells[0].value.ptr, cell.cells[0].value.len, &l) &&
        strcasecmp(l.tsuid_hex, s->tsuid_hex)) {
        rc = t->store_failures ? tree_put_record(db, t->id, 1, s, l.tsuid_hex, eb) : 0;
        if (!rc) rc = TSDB_TREE_COLLISION;
    } else if (rc >= 0) {
        rc = TSDB_TREE_STORED;
    }
    free(l.display_name);
    free(l.tsuid_hex);
    store_result_free(&cell);
done:
    if (!res) tree_build_result_free(&local);
    return rc;
}

int tsdb_tree_process_new(tsdb_t *db, const uint8_t *tsuid, size_t len, oct_errbuf_t *eb)
{
    tsdb_tree_t *trees;
    int n = tsdb_tree_list(db, &trees, eb);
    if (n < 0) return n;
    int rc = 0, done = 0;
    tsdb_tree_series_t s = {0};
    for (int i = 0; i < n && rc >= 0; i++) {
        if (!trees[i].enabled) continue;
        if (!s.tsuid && (rc = tsdb_tree_series_load(db, tsuid, len, &s, eb))) break;
        rc = tsdb_tree_process(db, &trees[i], &s, NULL, eb);
        if (rc >= 0) done++;
    }
    tsdb_tree_series_free(&s);
    for (int i = 0; i < n; i++)
        tsdb_tree_clear(&trees[i]);
    free(trees);
    return rc < 0 ? rc : done;
}

/* ---- collisions and not-matched ------------------------------------------ */

int tsdb_tree_records(tsdb_t *db, int id, int kind, const char *const *tsuids, size_t n,
                      tsdb_tree_record_fn fn, void *ctx, oct_errbuf_t *eb)
{
    if (id < 1 || id > TSDB_TREE_MAX_ID) return oct_err(eb, OCT_EINVAL, "Invalid Tree ID");
    if (kind != 1 && kind != 2) return oct_err(eb, OCT_EINVAL, "bad record kind");
    uint8_t row[3];
    oct_put_be16(row, (uint16_t)id);
    row[2] = (uint8_t)kind;
    store_result_t res = STORE_RESULT_INIT;
    int rc = store_get(tsdb_store(db), STORE_TABLE_TREE, oct_slice(row, 2), oct_slice(row, 3),
                       oct_slice_str(TREE_FAMILY), &res, eb);
    size_t pl = strlen(tree_rec_pfx[kind]);
    int stop = 0;
    for (size_t i = 0; rc >= 0 && !stop && i < res.n; i++) {
        const store_cell_t *c = &res.cells[i];
        if (c->qualifier.len <= pl || memcmp(c->qualifier.ptr, tree_rec_pfx[kind], pl)) continue;
        size_t tl = c->qualifier.len - pl;
        char *hex = xmalloc(2 * tl + 1);
        if (codec_uid_to_hex(c->qualifier.ptr + pl, tl, hex, 2 * tl + 1) < 0) hex[0] = '\0';
        int want = n == 0;
        for (size_t k = 0; k < n && !want; k++)
            want = !strcasecmp(tsuids[k], hex);
        if (want) stop = fn(ctx, hex, (const char *)c->value.ptr, c->value.len);
        free(hex);
    }
    store_result_free(&res);
    return rc < 0 ? rc : stop;
}

/* ---- treesync ------------------------------------------------------------- */

typedef struct {
    tsdb_t *db;
    tsdb_tree_t *trees;
    int n_trees;
    tsdb_tree_sync_progress_fn progress;
    void *pctx;
    tsdb_tree_sync_stats_t *st;
    oct_errbuf_t *eb;
} tree_sync_t;

static int tree_sync_series(tree_sync_t *x, const uint8_t *tsuid, size_t len)
{
    tsdb_tree_series_t s;
    int rc = tsdb_tree_series_load(x->db, tsuid, len, &s, x->eb);
    if (rc == OCT_ENOSUCHID) return 0; /* a series of a deleted UID: nothing to hang */
    if (rc) return rc;
    x->st->series++;
    for (int i = 0; i < x->n_trees && rc >= 0; i++) {
        if (!x->trees[i].enabled) continue;
        rc = tsdb_tree_process(x->db, &x->trees[i], &s, NULL, x->eb);
        if (rc == TSDB_TREE_STORED) x->st->stored++;
        if (rc == TSDB_TREE_COLLISION) x->st->collisions++;
        if (rc == TSDB_TREE_NOT_MATCHED) x->st->not_matched++;
        if (rc == TSDB_TREE_NO_BRANCH) x->st->no_branch++;
    }
    tsdb_tree_series_free(&s);
    if (rc >= 0 && x->progress) x->progress(x->pctx, x->st);
    return rc < 0 ? rc : 0;
}

static int tree_sync_part(void *ctx, oct_slice_t part)
{
    tree_sync_t *x = ctx;
    store_scan_spec_t spec = {.part = part, .family = oct_slice_str(TSMETA_FAMILY)};
    store_scanner_t *sc;
    int rc = store_scan_open(tsdb_store(x->db), STORE_TABLE_META, &spec, &sc, x->eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT;
    size_t ml = strlen(TSMETA_QUAL_META);
    while (rc == 0 && store_scan_next(sc, &row, x->eb) > 0) {
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *c = &row.cells[i];
            if (c->qualifier.len != ml || memcmp(c->qualifier.ptr, TSMETA_QUAL_META, ml)) continue;
            uint8_t *tsuid = xmemdup(c->row.ptr, c->row.len);
            rc = tree_sync_series(x, tsuid, c->row.len);
            free(tsuid);
            break;
        }
    }
    store_scan_close(sc);
    store_result_free(&row);
    return rc;
}

int tsdb_tree_sync(tsdb_t *db, tsdb_tree_sync_progress_fn progress, void *ctx,
                   tsdb_tree_sync_stats_t *st, oct_errbuf_t *eb)
{
    memset(st, 0, sizeof *st);
    tree_sync_t x = {db, NULL, 0, progress, ctx, st, eb};
    x.n_trees = tsdb_tree_list(db, &x.trees, eb);
    if (x.n_trees < 0) return x.n_trees;
    int rc = store_part_list(tsdb_store(db), STORE_TABLE_META, oct_slice(NULL, 0),
                             oct_slice(NULL, 0), tree_sync_part, &x, eb);
    for (int i = 0; i < x.n_trees; i++)
        tsdb_tree_clear(&x.trees[i]);
    free(x.trees);
    return rc;
}
