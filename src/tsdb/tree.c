/* tree.c -- tree definitions and rules in tsdb-tree (tree.h,
 * docs/format/tree.md): the `tree` and `tree_rule:<level>:<order>` cells of
 * the tree's row, and purging what a tree generated. */
#include "tsdb/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/tsdb_int.h"

#define TREE_FAMILY    "t"
#define TREE_QUAL_TREE "tree"
#define TREE_RULE_PFX  "tree_rule:"

void tsdb_tree_init(tsdb_tree_t *t)
{
    memset(t, 0, sizeof *t);
    t->name = xstrdup("");
    t->description = xstrdup("");
    t->notes = xstrdup("");
}

void tsdb_tree_clear(tsdb_tree_t *t)
{
    free(t->name);
    free(t->description);
    free(t->notes);
    for (size_t i = 0; i < t->n_rules; i++)
        tree_rule_clear(&t->rules[i]);
    free(t->rules);
    memset(t, 0, sizeof *t);
}

static int tree_check_id(int id, oct_errbuf_t *eb)
{
    if (id < 1 || id > TSDB_TREE_MAX_ID) return oct_err(eb, OCT_EINVAL, "Invalid Tree ID");
    return 0;
}

static char *tree_dup_member(const json_value_t *o, const char *key)
{
    const json_value_t *v = json_obj_get(o, key);
    return v && v->type == JSON_STRING ? xstrndup(v->str, v->len) : xstrdup("");
}

/* The definition cell's JSON into t (id set by the caller). */
static int tree_def_from_json(const uint8_t *p, size_t n, tsdb_tree_t *t, oct_errbuf_t *eb)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *o;
    int rc = json_parse(&a, (const char *)p, n, 0, &o, eb);
    if (rc || o->type != JSON_OBJECT) {
        json_arena_free(&a);
        return oct_err(eb, OCT_ECORRUPT, "tree %d: stored definition is not a JSON object", t->id);
    }
    free(t->name);
    free(t->description);
    free(t->notes);
    t->name = tree_dup_member(o, "name");
    t->description = tree_dup_member(o, "description");
    t->notes = tree_dup_member(o, "notes");
    const json_value_t *v;
    t->strict_match = (v = json_obj_get(o, "strictMatch")) && v->type == JSON_TRUE;
    t->enabled = (v = json_obj_get(o, "enabled")) && v->type == JSON_TRUE;
    t->store_failures = (v = json_obj_get(o, "storeFailures")) && v->type == JSON_TRUE;
    int64_t c = 0;
    if ((v = json_obj_get(o, "created")) && v->type == JSON_NUMBER && !json_number_i64(v, &c))
        t->created = c;
    json_arena_free(&a);
    return 0;
}

static void tree_def_to_json(const tsdb_tree_t *t, oct_strbuf_t *sb)
{
    json_writer_t w;
    json_w_init(&w, sb);
    json_w_obj_begin(&w);
    json_w_key(&w, "name");
    json_w_str(&w, t->name);
    json_w_key(&w, "description");
    json_w_str(&w, t->description);
    json_w_key(&w, "notes");
    json_w_str(&w, t->notes);
    json_w_key(&w, "strictMatch");
    json_w_bool(&w, t->strict_match);
    json_w_key(&w, "created");
    json_w_int(&w, t->created);
    json_w_key(&w, "enabled");
    json_w_bool(&w, t->enabled);
    json_w_key(&w, "storeFailures");
    json_w_bool(&w, t->store_failures);
    json_w_obj_end(&w);
}

static int tree_rule_cmp(const void *a, const void *b)
{
    const tree_rule_t *x = a, *y = b;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The tree row's cells into t: 1 if the definition exists, else 0. */
static int tree_from_row(const store_result_t *row, tsdb_tree_t *t, oct_errbuf_t *eb)
{
    int found = 0;
    size_t pl = strlen(TREE_RULE_PFX);
    for (size_t i = 0; i < row->n; i++) {
        const store_cell_t *c = &row->cells[i];
        if (c->qualifier.len == 4 && !memcmp(c->qualifier.ptr, TREE_QUAL_TREE, 4)) {
            int rc = tree_def_from_json(c->value.ptr, c->value.len, t, eb);
            if (rc) return rc;
            found = 1;
        } else if (c->qualifier.len > pl && !memcmp(c->qualifier.ptr, TREE_RULE_PFX, pl)) {
            json_arena_t a = JSON_ARENA_INIT;
            json_value_t *o;
            tree_rule_t r;
            tree_rule_init(&r);
            int rc = json_parse(&a, (const char *)c->value.ptr, c->value.len, 0, &o, eb);
            if (!rc) rc = tree_rule_from_json(o, &r, NULL, eb);
            json_arena_free(&a);
            /* level and order are the qualifier's, whatever the JSON says */
            char q[64];
            size_t ql = c->qualifier.len - pl < sizeof q - 1 ? c->qualifier.len - pl : sizeof q - 1;
            memcpy(q, c->qualifier.ptr + pl, ql);
            q[ql] = '\0';
            char *colon = q, *end = q;
            long lv = strtol(q, &colon, 10), od = -1;
            if (colon != q && *colon == ':') od = strtol(colon + 1, &end, 10);
            if (end == colon + 1 || *end) od = -1; /* "<level>:<order>", nothing else */
            if (!rc && (lv < 0 || od < 0 || lv > INT32_MAX || od > INT32_MAX)) rc = OCT_ECORRUPT;
            r.level = (int)lv;
            r.order = (int)od;
            r.tree_id = t->id;
            if (!rc) rc = tree_rule_validate(&r, eb);
            if (rc) {
                tree_rule_clear(&r);
                return oct_err(eb, OCT_ECORRUPT, "tree %d: stored rule %s unreadable", t->id, q);
            }
            t->rules = xrealloc(t->rules, (t->n_rules + 1) * sizeof *t->rules);
            t->rules[t->n_rules++] = r;
        }
    }
    if (t->n_rules > 1) qsort(t->rules, t->n_rules, sizeof *t->rules, tree_rule_cmp);
    return found;
}

int tsdb_tree_get(tsdb_t *db, int id, tsdb_tree_t *out, oct_errbuf_t *eb)
{
    int rc = tree_check_id(id, eb);
    if (rc) return rc;
    uint8_t key[2];
    oct_put_be16(key, (uint16_t)id);
    store_result_t row = STORE_RESULT_INIT;
    rc = store_get(tsdb_store(db), STORE_TABLE_TREE, oct_slice(key, 2), oct_slice(key, 2),
                   oct_slice_str(TREE_FAMILY), &row, eb);
    if (rc > 0) {
        tsdb_tree_init(out);
        out->id = id;
        rc = tree_from_row(&row, out, eb);
        if (rc <= 0) tsdb_tree_clear(out);
    }
    store_result_free(&row);
    return rc;
}

typedef struct {
    int *ids;
    size_t n;
} tree_ids_t;

static int tree_collect_part(void *ctx, oct_slice_t part)
{
    tree_ids_t *x = ctx;
    if (part.len != 2) return 0;
    x->ids = xrealloc(x->ids, (x->n + 1) * sizeof *x->ids);
    x->ids[x->n++] = oct_get_be16(part.ptr);
    return 0;
}

static int tree_ids(tsdb_t *db, tree_ids_t *x, oct_errbuf_t *eb)
{
    memset(x, 0, sizeof *x);
    return store_part_list(tsdb_store(db), STORE_TABLE_TREE, oct_slice(NULL, 0), oct_slice(NULL, 0),
                           tree_collect_part, x, eb);
}

int tsdb_tree_list(tsdb_t *db, tsdb_tree_t **out, oct_errbuf_t *eb)
{
    tree_ids_t x;
    *out = NULL;
    int rc = tree_ids(db, &x, eb);
    size_t n = 0;
    tsdb_tree_t *v = xmalloc((x.n ? x.n : 1) * sizeof *v);
    for (size_t i = 0; !rc && i < x.n; i++) {
        int got = tsdb_tree_get(db, x.ids[i], &v[n], eb);
        if (got < 0) rc = got;
        if (got > 0) n++;
    }
    free(x.ids);
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            tsdb_tree_clear(&v[i]);
        free(v);
        return rc;
    }
    *out = v;
    return (int)n;
}

static int tree_write_def(tsdb_t *db, const tsdb_tree_t *t, int must_be_new, oct_errbuf_t *eb)
{
    uint8_t key[2];
    oct_put_be16(key, (uint16_t)t->id);
    oct_strbuf_t js = {0};
    tree_def_to_json(t, &js);
    store_cell_t cell = {oct_slice(key, 2), oct_slice_str(TREE_FAMILY),
                         oct_slice_str(TREE_QUAL_TREE), oct_slice(js.ptr, js.len)};
    store_op_t op = {STORE_OP_PUT, oct_slice(key, 2), cell};
    int rc;
    if (must_be_new) {
        store_check_t chk = {STORE_CHECK_ABSENT, cell};
        rc = store_cas(tsdb_store(db), STORE_TABLE_TREE, oct_slice(key, 2), &chk, 1, &op, 1, 0, eb);
    } else {
        rc = store_write(tsdb_store(db), STORE_TABLE_TREE, &op, 1, 0, eb);
    }
    oct_strbuf_free(&js);
    return rc;
}

int tsdb_tree_create(tsdb_t *db, tsdb_tree_t *t, oct_errbuf_t *eb)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        tree_ids_t x;
        int rc = tree_ids(db, &x, eb);
        int max = 0;
        for (size_t i = 0; i < x.n; i++)
            if (x.ids[i] > max) max = x.ids[i];
        free(x.ids);
        if (rc) return rc;
        if (max >= TSDB_TREE_MAX_ID) return oct_err(eb, OCT_ERANGE, "Exhausted all Tree IDs");
        t->id = max + 1;
        rc = tree_write_def(db, t, 1, eb);
        if (rc != OCT_ECASFAIL) return rc;
    }
    return oct_err(eb, OCT_EIO, "could not allocate a tree id: too many concurrent creations");
}

int tsdb_tree_store(tsdb_t *db, const tsdb_tree_t *t, oct_errbuf_t *eb)
{
    int rc = tree_check_id(t->id, eb);
    return rc ? rc : tree_write_def(db, t, 0, eb);
}

static void tree_rule_qual(int level, int order, char *q, size_t cap)
{
    snprintf(q, cap, TREE_RULE_PFX "%d:%d", level, order);
}

int tsdb_tree_rule_put(tsdb_t *db, tree_rule_t *r, oct_errbuf_t *eb)
{
    int rc = tree_check_id(r->tree_id, eb);
    if (!rc) rc = tree_rule_validate(r, eb);
    if (rc) return rc;
    uint8_t key[2];
    oct_put_be16(key, (uint16_t)r->tree_id);
    char q[64];
    tree_rule_qual(r->level, r->order, q, sizeof q);
    oct_strbuf_t js = {0};
    json_writer_t w;
    json_w_init(&w, &js);
    tree_rule_to_json(r, &w);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(key, 2),
                     {oct_slice(key, 2), oct_slice_str(TREE_FAMILY), oct_slice_str(q),
                      oct_slice(js.ptr, js.len)}};
    rc = store_write(tsdb_store(db), STORE_TABLE_TREE, &op, 1, 0, eb);
    oct_strbuf_free(&js);
    return rc;
}

int tsdb_tree_rule_delete(tsdb_t *db, int tree_id, int level, int order, oct_errbuf_t *eb)
{
    int rc = tree_check_id(tree_id, eb);
    if (rc) return rc;
    uint8_t key[2];
    oct_put_be16(key, (uint16_t)tree_id);
    char q[64];
    tree_rule_qual(level, order, q, sizeof q);
    store_op_t op = {STORE_OP_DELETE_CELL,
                     oct_slice(key, 2),
                     {oct_slice(key, 2), oct_slice_str(TREE_FAMILY), oct_slice_str(q), {0}}};
    return store_write(tsdb_store(db), STORE_TABLE_TREE, &op, 1, 0, eb);
}

/* Deletes the cells listed in *cells (partition part), adds their count to
 * *n and empties the list. */
static int tree_delete_cells(tsdb_t *db, const uint8_t part[2], store_result_t *cells, uint64_t *n,
                             oct_errbuf_t *eb)
{
    if (!cells->n) return 0;
    store_op_t *ops = xmalloc(cells->n * sizeof *ops);
    for (size_t i = 0; i < cells->n; i++)
        ops[i] = (store_op_t){STORE_OP_DELETE_CELL, oct_slice(part, 2), cells->cells[i]};
    int rc = store_write(tsdb_store(db), STORE_TABLE_TREE, ops, cells->n, 0, eb);
    free(ops);
    if (!rc) *n += cells->n;
    store_result_reset(cells);
    return rc;
}

/* Deletes the cells of the tree's partition that keep() refuses, in
 * batches. */
typedef int (*tree_keep_fn)(oct_slice_t row, oct_slice_t qual, int id);

static int tree_delete_where(tsdb_t *db, int id, tree_keep_fn keep, uint64_t *n_cells,
                             oct_errbuf_t *eb)
{
    int rc = tree_check_id(id, eb);
    if (rc) return rc;
    uint8_t key[2];
    oct_put_be16(key, (uint16_t)id);
    store_scan_spec_t spec = {.part = oct_slice(key, 2), .family = oct_slice_str(TREE_FAMILY)};
    store_scanner_t *sc;
    rc = store_scan_open(tsdb_store(db), STORE_TABLE_TREE, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT, pending = STORE_RESULT_INIT;
    uint64_t n = 0;
    for (;;) {
        rc = store_scan_next(sc, &row, eb);
        if (rc <= 0) break;
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *c = &row.cells[i];
            if (keep(c->row, c->qualifier, id)) continue;
            store_result_add(&pending, c->row, c->family, c->qualifier, oct_slice(NULL, 0));
        }
        if (pending.n >= 512 && (rc = tree_delete_cells(db, key, &pending, &n, eb))) break;
    }
    store_scan_close(sc);
    if (rc == 0) rc = tree_delete_cells(db, key, &pending, &n, eb);
    store_result_free(&row);
    store_result_free(&pending);
    if (n_cells) *n_cells = n;
    return rc;
}

static int tree_is_def_row(oct_slice_t row, int id)
{
    return row.len == 2 && oct_get_be16(row.ptr) == id;
}

static int tree_keep_definition(oct_slice_t row, oct_slice_t qual, int id)
{
    size_t pl = strlen(TREE_RULE_PFX);
    return tree_is_def_row(row, id) && ((qual.len == 4 && !memcmp(qual.ptr, TREE_QUAL_TREE, 4)) ||
                                        (qual.len > pl && !memcmp(qual.ptr, TREE_RULE_PFX, pl)));
}

static int tree_keep_nothing(oct_slice_t row, oct_slice_t qual, int id)
{
    (void)row;
    (void)qual;
    (void)id;
    return 0;
}

static int tree_keep_all_but_rules(oct_slice_t row, oct_slice_t qual, int id)
{
    size_t pl = strlen(TREE_RULE_PFX);
    return !(tree_is_def_row(row, id) && qual.len > pl && !memcmp(qual.ptr, TREE_RULE_PFX, pl));
}

int tsdb_tree_rules_delete_all(tsdb_t *db, int tree_id, oct_errbuf_t *eb)
{
    return tree_delete_where(db, tree_id, tree_keep_all_but_rules, NULL, eb);
}

int tsdb_tree_purge(tsdb_t *db, int id, int definition, uint64_t *n_cells, oct_errbuf_t *eb)
{
    return tree_delete_where(db, id, definition ? tree_keep_nothing : tree_keep_definition, n_cells,
                             eb);
}
