/* api_tree.c -- /api/tree, /api/tree/branch, /rule, /rules, /test,
 * /collisions and /notmatched with OpenTSDB 2.4's verbs, parameters,
 * shapes, statuses and error texts (docs/trees.md). Protocol only: the
 * trees live in tsdb/tree.h, the rule engine in query/tree_rule.h.
 *
 * Query-string names are 2.4's, lower-case and case-sensitive (treeid,
 * branch, tsuids, level, order, type, field, custom_field, regex,
 * separator, description, notes, regex_group_idx, display_format, name,
 * strict_match, enabled, store_failures, definition); a boolean is true
 * only for "true" in any case. Where 2.4 is wrong, the deviation is in
 * docs/compat.md: a tree created from a JSON body gets its creation time
 * (2.4 writes 0), an unchanged rule in /rules is skipped (2.4 answers 500),
 * /rules validates every rule before writing any, a non-integer treeId in
 * a JSON body is a 400 (2.4: 500). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/rowkey.h"
#include "codec/uid_bytes.h"
#include "common/clock.h"
#include "common/xmalloc.h"
#include "server/api_int.h"
#include "tsdb/tree.h"
#include "tsdb/tsmeta.h"

/* ---- helpers ---------------------------------------------------------------- */

static void tree_not_modified(api_call_t *c)
{
    c->resp->status = 304;
    oct_strbuf_free(&c->resp->body);
}

static void tree_no_content(api_call_t *c)
{
    c->resp->status = 204;
    oct_strbuf_free(&c->resp->body);
}

static void tree_unsupported_verb(api_call_t *c)
{
    http_error(c->resp, 400, "Unsupported HTTP request method", NULL);
}

/* A storage or engine error: 400 for bad input, else 500. */
static void tree_fail(api_call_t *c, int rc, const oct_errbuf_t *eb)
{
    http_error(c->resp, rc == OCT_EINVAL ? 400 : 500, eb->msg, NULL);
}

/* 204, or the failure of rc. */
static void tree_done(api_call_t *c, int rc, const oct_errbuf_t *eb)
{
    if (rc)
        tree_fail(c, rc, eb);
    else
        tree_no_content(c);
}

/* A query-string integer: 1 (set *out), 0 (absent; an error when required),
 * -1 (answered 400). */
static int tree_qs_int(api_call_t *c, const char *name, int required, const char *bad, int *out)
{
    char buf[64];
    if (!http_param(c->req, name, buf, sizeof buf)) {
        if (!required) return 0;
        char msg[96];
        snprintf(msg, sizeof msg, "Missing parameter <code>%s</code>", name);
        http_error(c->resp, 400, msg, NULL);
        return -1;
    }
    char *end;
    long v = strtol(buf, &end, 10);
    if (!buf[0] || *end || v < INT32_MIN || v > INT32_MAX) {
        http_error(c->resp, 400, bad, NULL);
        return -1;
    }
    *out = (int)v;
    return 1;
}

static int tree_qs_tree_id(api_call_t *c, int required, int *id)
{
    *id = 0;
    return tree_qs_int(c, "treeid", required, "Unable to parse 'tree' value", id) < 0 ? -1 : 0;
}

/* A QS string parameter into the arena, or NULL if absent. */
static const char *tree_qs_str(api_call_t *c, const char *name)
{
    size_t cap = c->req->query ? strlen(c->req->query) + 1 : 1;
    char *buf = json_arena_alloc(&c->arena, cap);
    return http_param(c->req, name, buf, cap) ? buf : NULL;
}

static int tree_is_true(const char *s)
{
    return s && !strcasecmp(s, "true");
}

/* The tree exists (1, *t filled), or the 400/404 is answered (0). */
static int tree_load(api_call_t *c, int id, tsdb_tree_t *t)
{
    oct_errbuf_t eb;
    if (id < 1 || id > TSDB_TREE_MAX_ID) {
        http_error(c->resp, 400, "Invalid Tree ID", NULL);
        return 0;
    }
    int rc = tsdb_tree_get(c->tsd->db, id, t, &eb);
    if (rc < 0) {
        tree_fail(c, rc, &eb);
        return 0;
    }
    if (rc == 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "Unable to locate tree: %d", id);
        http_error(c->resp, 404, msg, NULL);
        return 0;
    }
    return 1;
}

static void tree_write_tree(json_writer_t *w, const tsdb_tree_t *t)
{
    json_w_obj_begin(w);
    json_w_key(w, "name");
    json_w_str(w, t->name);
    json_w_key(w, "description");
    json_w_str(w, t->description);
    json_w_key(w, "notes");
    json_w_str(w, t->notes);
    json_w_key(w, "rules");
    if (!t->n_rules) {
        json_w_null(w);
    } else { /* {"<level>":{"<order>":rule}}; rules are sorted by level, order */
        json_w_obj_begin(w);
        for (size_t i = 0; i < t->n_rules; i++) {
            char k[16];
            if (i == 0 || t->rules[i].level != t->rules[i - 1].level) {
                if (i) json_w_obj_end(w);
                snprintf(k, sizeof k, "%d", t->rules[i].level);
                json_w_key(w, k);
                json_w_obj_begin(w);
            }
            snprintf(k, sizeof k, "%d", t->rules[i].order);
            json_w_key(w, k);
            tree_rule_to_json(&t->rules[i], w);
        }
        json_w_obj_end(w);
        json_w_obj_end(w);
    }
    json_w_key(w, "created");
    json_w_int(w, t->created);
    json_w_key(w, "treeId");
    json_w_int(w, t->id);
    json_w_key(w, "strictMatch");
    json_w_bool(w, t->strict_match);
    json_w_key(w, "storeFailures");
    json_w_bool(w, t->store_failures);
    json_w_key(w, "enabled");
    json_w_bool(w, t->enabled);
    json_w_obj_end(w);
}

/* ---- /api/tree ------------------------------------------------------------- */

enum { TF_NAME = 1, TF_DESC = 2, TF_NOTES = 4, TF_STRICT = 8, TF_ENABLED = 16, TF_FAILURES = 32 };

/* 1 if member v's key is k, ASCII case folded (keys are not NUL-terminated). */
static int tree_key_is(const json_value_t *v, const char *k)
{
    return v->key_len == strlen(k) && !strncasecmp(v->key, k, v->key_len);
}

/* A JSON scalar as 2.4's string map reads it (NULL for null). */
static const char *tree_scalar(api_call_t *c, const json_value_t *v)
{
    if (v->type == JSON_NULL) return NULL;
    if (v->type == JSON_TRUE) return "true";
    if (v->type == JSON_FALSE) return "false";
    return json_arena_strndup(&c->arena, v->str, v->len);
}

/* The request's tree fields into t (id, name, ...) and *mask; -1 if answered. */
static int tree_parse_request(api_call_t *c, tsdb_tree_t *t, unsigned *mask, int *definition)
{
    const char *val[6] = {0};
    const char *defn = NULL;
    *mask = 0;
    if (api_has_body(c)) {
        json_value_t *o = api_body_json(c, 0);
        if (!o) return -1;
        if (o->type != JSON_OBJECT) {
            http_error(c->resp, 400, "Unable to parse the given JSON", "Expected a JSON object");
            return -1;
        }
        static const char *const keys[6] = {"name",        "description", "notes",
                                            "strictmatch", "enabled",     "storefailures"};
        for (const json_value_t *v = o->child; v; v = v->next) {
            if (v->type == JSON_OBJECT || v->type == JSON_ARRAY) {
                http_error(c->resp, 400, "Unable to parse the given JSON",
                           "Tree members are strings, numbers or booleans");
                return -1;
            }
            const char *s = tree_scalar(c, v);
            if (!s) continue;
            if (tree_key_is(v, "treeid")) {
                char *end;
                long id = strtol(s, &end, 10);
                if (!s[0] || *end || id < INT32_MIN || id > INT32_MAX) {
                    http_error(c->resp, 400, "Unable to parse 'tree' value", NULL);
                    return -1;
                }
                t->id = (int)id;
            } else if (tree_key_is(v, "definition")) {
                defn = s;
            }
            for (int k = 0; k < 6; k++)
                if (tree_key_is(v, keys[k])) val[k] = s;
        }
    } else {
        if (tree_qs_tree_id(c, 0, &t->id)) return -1;
        static const char *const qs[6] = {"name",         "description", "notes",
                                          "strict_match", "enabled",     "store_failures"};
        for (int k = 0; k < 6; k++)
            val[k] = tree_qs_str(c, qs[k]);
        defn = tree_qs_str(c, "definition");
    }
    char **strs[3] = {&t->name, &t->description, &t->notes};
    for (int k = 0; k < 3; k++)
        if (val[k]) {
            free(*strs[k]);
            *strs[k] = xstrdup(val[k]);
            *mask |= 1u << k;
        }
    int *flags[3] = {&t->strict_match, &t->enabled, &t->store_failures};
    for (int k = 0; k < 3; k++)
        if (val[3 + k]) {
            *flags[k] = tree_is_true(val[3 + k]);
            *mask |= 1u << (3 + k);
        }
    *definition = tree_is_true(defn);
    return 0;
}

/* Applies the request's fields to the stored tree: 1 if anything changed. */
static int tree_merge(tsdb_tree_t *dst, const tsdb_tree_t *src, unsigned mask, int overwrite)
{
    int ch = 0;
    char **d[3] = {&dst->name, &dst->description, &dst->notes};
    char *const s[3] = {src->name, src->description, src->notes};
    for (int k = 0; k < 3; k++)
        if ((overwrite || (mask & (1u << k))) && strcmp(*d[k], s[k])) {
            free(*d[k]);
            *d[k] = xstrdup(s[k]);
            ch = 1;
        }
    int *df[3] = {&dst->strict_match, &dst->enabled, &dst->store_failures};
    const int sf[3] = {src->strict_match, src->enabled, src->store_failures};
    for (int k = 0; k < 3; k++)
        if ((overwrite || (mask & (1u << (3 + k)))) && *df[k] != sf[k]) {
            *df[k] = sf[k];
            ch = 1;
        }
    return ch;
}

static void tree_reply_tree(api_call_t *c, int id)
{
    tsdb_tree_t t;
    if (!tree_load(c, id, &t)) return;
    json_writer_t w;
    api_json_begin(c, &w);
    tree_write_tree(&w, &t);
    tsdb_tree_clear(&t);
}

void api_tree(api_call_t *c)
{
    tsdb_tree_t req, cur;
    tsdb_tree_init(&req);
    unsigned mask;
    int definition;
    oct_errbuf_t eb;
    if (tree_parse_request(c, &req, &mask, &definition)) goto out;
    if (c->verb == API_GET) {
        if (req.id != 0) {
            tree_reply_tree(c, req.id);
            goto out;
        }
        tsdb_tree_t *all;
        int n = tsdb_tree_list(c->tsd->db, &all, &eb);
        if (n < 0) {
            tree_fail(c, n, &eb);
            goto out;
        }
        json_writer_t w;
        api_json_begin(c, &w);
        json_w_arr_begin(&w);
        for (int i = 0; i < n; i++) {
            tree_write_tree(&w, &all[i]);
            tsdb_tree_clear(&all[i]);
        }
        json_w_arr_end(&w);
        free(all);
    } else if (c->verb == API_POST || c->verb == API_PUT) {
        if (req.id == 0) {
            if (!req.name[0]) {
                http_error(c->resp, 400, "Tree was missing the name", NULL);
                goto out;
            }
            req.created = oct_clock_wall_ms() / 1000;
            int rc = tsdb_tree_create(c->tsd->db, &req, &eb);
            if (rc) {
                tree_fail(c, rc, &eb);
                goto out;
            }
            tree_reply_tree(c, req.id);
            goto out;
        }
        if (!tree_load(c, req.id, &cur)) goto out;
        int changed = mask && tree_merge(&cur, &req, mask, c->verb == API_PUT);
        if (!changed) {
            tsdb_tree_clear(&cur);
            tree_not_modified(c);
            goto out;
        }
        int rc = tsdb_tree_store(c->tsd->db, &cur, &eb);
        tsdb_tree_clear(&cur);
        if (rc) {
            tree_fail(c, rc, &eb);
            goto out;
        }
        tree_reply_tree(c, req.id);
    } else if (c->verb == API_DELETE) {
        if (!tree_load(c, req.id, &cur)) goto out;
        tsdb_tree_clear(&cur);
        tree_done(c, tsdb_tree_purge(c->tsd->db, req.id, definition, NULL, &eb), &eb);
    } else {
        tree_unsupported_verb(c);
    }
out:
    tsdb_tree_clear(&req);
}

/* ---- branches and leaves ------------------------------------------------------- */

static void tree_write_path(json_writer_t *w, char *const *path, size_t n)
{
    json_w_obj_begin(w);
    for (size_t i = 0; i < n; i++) {
        char k[24];
        snprintf(k, sizeof k, "%zu", i);
        json_w_key(w, k);
        json_w_str(w, path[i]);
    }
    json_w_obj_end(w);
}

/* One leaf with its metric and tags resolved; 0, or -1 (a UID without a
 * name: the leaf is left out, as 2.4 skips it). */
static int tree_write_leaf(api_call_t *c, json_writer_t *w, const char *name, const char *hex)
{
    const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
    uint8_t tsuid[512];
    oct_errbuf_t eb;
    size_t hl = strlen(hex), tl = (hl + 1) / 2;
    if (tl < l->uid_width[0] || tl > sizeof tsuid || codec_uid_from_hex(hex, hl, tl, tsuid, &eb))
        return -1;
    uint8_t mname[UID_NAME_MAX];
    size_t ml;
    if (uid_get_name(tsdb_uids(c->tsd->db), CODEC_UID_METRIC,
                     codec_uid_decode(tsuid, l->uid_width[0]), mname, sizeof mname, &ml, &eb))
        return -1;
    oct_strbuf_t tags = {0};
    json_writer_t tw;
    json_w_init(&tw, &tags);
    int rc = api_write_tsuid_tags(c, &tw, tsuid, tl, &eb);
    if (!rc) {
        json_w_obj_begin(w);
        json_w_key(w, "metric");
        json_w_strn(w, (const char *)mname, ml);
        json_w_key(w, "tags");
        json_w_raw(w, tags.ptr, tags.len);
        json_w_key(w, "tsuid");
        json_w_str(w, hex);
        json_w_key(w, "displayName");
        json_w_str(w, name);
        json_w_obj_end(w);
    }
    oct_strbuf_free(&tags);
    return rc ? -1 : 0;
}

/* The members of a branch up to and including treeId (path[0..n)). */
static void tree_write_branch_head(json_writer_t *w, int tree_id, const char *const *names,
                                   size_t n_below_root)
{
    uint8_t id[2 + 4 * 64];
    char hex[2 * sizeof id + 1];
    size_t nb = n_below_root < 64 ? n_below_root : 64;
    tsdb_tree_branch_id(tree_id, names + 1, nb, id);
    if (codec_uid_to_hex(id, 2 + 4 * nb, hex, sizeof hex) < 0) hex[0] = '\0';
    json_w_key(w, "branchId");
    json_w_str(w, hex);
    json_w_key(w, "path");
    tree_write_path(w, (char *const *)names, n_below_root + 1);
    json_w_key(w, "depth");
    json_w_int(w, (int64_t)n_below_root);
    json_w_key(w, "displayName");
    json_w_str(w, names[n_below_root]);
    json_w_key(w, "treeId");
    json_w_int(w, tree_id);
}

static void tree_write_stored_branch(api_call_t *c, json_writer_t *w, const tsdb_tree_branch_t *b,
                                     int full)
{
    json_w_obj_begin(w);
    json_w_key(w, "leaves");
    if (full && b->n_leaves) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < b->n_leaves; i++)
            (void)tree_write_leaf(c, w, b->leaves[i].display_name, b->leaves[i].tsuid_hex);
        json_w_arr_end(w);
    } else {
        json_w_null(w);
    }
    tree_write_branch_head(w, b->tree_id, (const char *const *)b->path, b->n_path - 1);
    json_w_key(w, "branches");
    if (full && b->n_children) {
        json_w_arr_begin(w);
        for (size_t i = 0; i < b->n_children; i++)
            tree_write_stored_branch(c, w, &b->children[i], 0);
        json_w_arr_end(w);
    } else {
        json_w_null(w);
    }
    json_w_obj_end(w);
}

void api_tree_branch(api_call_t *c)
{
    if (c->verb != API_GET) {
        tree_unsupported_verb(c);
        return;
    }
    int tree_id;
    if (tree_qs_tree_id(c, 0, &tree_id)) return;
    const char *hex = tree_qs_str(c, "branch");
    uint8_t id[2 + 4 * 64];
    size_t len;
    oct_errbuf_t eb;
    if (!hex || !hex[0]) {
        if (tree_id < 1) {
            http_error(c->resp, 400, "Missing or invalid branch and tree IDs", NULL);
            return;
        }
        if (tree_id > TSDB_TREE_MAX_ID) {
            http_error(c->resp, 400, "Invalid Tree ID", NULL);
            return;
        }
        tsdb_tree_branch_id(tree_id, NULL, 0, id);
        len = 2;
    } else {
        size_t hl = strlen(hex);
        if (hl < 4) {
            http_error(c->resp, 400, "Branch ID was too short", NULL);
            return;
        }
        len = (hl + 1) / 2;
        if (len > sizeof id || codec_uid_from_hex(hex, hl, len, id, &eb)) {
            http_error(c->resp, 400, "Invalid branch ID", hex);
            return;
        }
    }
    tsdb_tree_branch_t b;
    int rc = (len - 2) % 4 ? 0 : tsdb_tree_branch_get(c->tsd->db, id, len, &b, &eb);
    if (rc < 0) {
        tree_fail(c, rc, &eb);
        return;
    }
    if (rc == 0) {
        char hx[2 * sizeof id + 1], msg[2 * sizeof id + 96];
        if (codec_uid_to_hex(id, len, hx, sizeof hx) < 0) hx[0] = '\0';
        snprintf(msg, sizeof msg, "Unable to locate branch '%s' for tree '%d'", hx,
                 (int)oct_get_be16(id));
        http_error(c->resp, 404, msg, NULL);
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    tree_write_stored_branch(c, &w, &b, 1);
    tsdb_tree_branch_free(&b);
}

/* ---- rules --------------------------------------------------------------------- */

/* The rule of a QS request into r / *mask; -1 if answered. */
static int tree_parse_rule_qs(api_call_t *c, tree_rule_t *r, unsigned *mask)
{
    *mask = 0;
    if (tree_qs_int(c, "treeid", 1, "Unable to parse 'tree' value", &r->tree_id) < 0) return -1;
    const char *type = tree_qs_str(c, "type");
    if (type) {
        r->type = tree_rule_type_parse(type);
        if (r->type == TREE_RULE_UNSET) {
            http_error(c->resp, 400, "Unable to parse the 'type' parameter", type);
            return -1;
        }
        *mask |= TREE_RF_TYPE;
    }
    for (size_t i = 0; i < TREE_RULE_N_STR_FIELDS; i++) {
        const tree_rule_field_t *f = &tree_rule_str_fields[i];
        const char *v = tree_qs_str(c, f->qs);
        if (!v) continue;
        tree_rule_set((char **)((char *)r + f->off), v);
        *mask |= f->bit;
    }
    int rc = tree_qs_int(c, "regex_group_idx", 0, "Unable to parse the 'regex_group_idx' parameter",
                         &r->regex_group_idx);
    if (rc < 0) return -1;
    if (rc) *mask |= TREE_RF_REGEX_GROUP_IDX;
    if (tree_qs_int(c, "level", 1, "Unable to parse the 'level' parameter", &r->level) < 0 ||
        tree_qs_int(c, "order", 1, "Unable to parse the 'order' parameter", &r->order) < 0)
        return -1;
    return 0;
}

static int tree_parse_rule_json(api_call_t *c, const json_value_t *o, tree_rule_t *r,
                                unsigned *mask)
{
    oct_errbuf_t eb;
    if (tree_rule_from_json(o, r, mask, &eb)) {
        http_error(c->resp, 400, "Unable to parse the given JSON", eb.msg);
        return -1;
    }
    return 0;
}

static const tree_rule_t *tree_find_rule(const tsdb_tree_t *t, int level, int order)
{
    for (size_t i = 0; i < t->n_rules; i++)
        if (t->rules[i].level == level && t->rules[i].order == order) return &t->rules[i];
    return NULL;
}

static void tree_rule_missing(api_call_t *c, const tree_rule_t *r)
{
    char id[128], msg[160];
    tree_rule_id(r, id, sizeof id);
    snprintf(msg, sizeof msg, "Unable to locate rule: %s", id);
    http_error(c->resp, 404, msg, NULL);
}

/* The rule to store for request rule r (mask: what it gave) over the tree's
 * current one: 1 with *out (validated), 0 unchanged, -1 answered 400. */
static int tree_rule_next(api_call_t *c, const tsdb_tree_t *t, const tree_rule_t *r, unsigned mask,
                          int overwrite, tree_rule_t *out)
{
    if (!mask) return 0;
    const tree_rule_t *cur = tree_find_rule(t, r->level, r->order);
    if (cur) {
        tree_rule_copy(out, cur);
        if (!tree_rule_merge(out, r, overwrite ? TREE_RF_ALL : mask)) {
            tree_rule_clear(out);
            return 0;
        }
    } else {
        tree_rule_copy(out, r);
    }
    oct_errbuf_t eb;
    if (tree_rule_validate(out, &eb)) {
        http_error(c->resp, 400, eb.msg, NULL);
        tree_rule_clear(out);
        return -1;
    }
    return 1;
}

void api_tree_rule(api_call_t *c)
{
    tree_rule_t r, next;
    tree_rule_init(&r);
    unsigned mask = 0;
    tsdb_tree_t t;
    oct_errbuf_t eb;
    if (api_has_body(c)) {
        json_value_t *o = api_body_json(c, 0);
        if (!o || tree_parse_rule_json(c, o, &r, &mask)) goto out;
    } else if (tree_parse_rule_qs(c, &r, &mask)) {
        goto out;
    }
    if (!tree_load(c, r.tree_id, &t)) goto out;
    const tree_rule_t *cur = tree_find_rule(&t, r.level, r.order);
    if (c->verb == API_GET) {
        if (!cur) {
            tree_rule_missing(c, &r);
        } else {
            json_writer_t w;
            api_json_begin(c, &w);
            tree_rule_to_json(cur, &w);
        }
    } else if (c->verb == API_POST || c->verb == API_PUT) {
        int rc = tree_rule_next(c, &t, &r, mask, c->verb == API_PUT, &next);
        if (rc == 0) tree_not_modified(c);
        if (rc == 1) {
            rc = tsdb_tree_rule_put(c->tsd->db, &next, &eb);
            if (rc) {
                tree_fail(c, rc, &eb);
            } else {
                json_writer_t w;
                api_json_begin(c, &w);
                tree_rule_to_json(&next, &w);
            }
            tree_rule_clear(&next);
        }
    } else if (c->verb == API_DELETE) {
        if (!cur) {
            tree_rule_missing(c, &r);
        } else {
            tree_done(c, tsdb_tree_rule_delete(c->tsd->db, r.tree_id, r.level, r.order, &eb), &eb);
        }
    } else {
        tree_unsupported_verb(c);
    }
    tsdb_tree_clear(&t);
out:
    tree_rule_clear(&r);
}

void api_tree_rules(api_call_t *c)
{
    tree_rule_t *rules = NULL, *next = NULL;
    unsigned *masks = NULL;
    size_t n = 0, n_next = 0;
    int tree_id = 0;
    tsdb_tree_t t;
    oct_errbuf_t eb;
    if (api_has_body(c)) {
        json_value_t *a = api_body_json(c, 0);
        if (!a) return;
        if (a->type != JSON_ARRAY) {
            http_error(c->resp, 400, "Unable to parse the given JSON",
                       "Expected an array of rules");
            return;
        }
        if (a->n == 0) {
            http_error(c->resp, 400, "Missing tree rules", NULL);
            return;
        }
        rules = xcalloc(a->n, sizeof *rules);
        masks = xcalloc(a->n, sizeof *masks);
        for (const json_value_t *v = a->child; v; v = v->next) {
            tree_rule_init(&rules[n]);
            size_t k = n++;
            if (tree_parse_rule_json(c, v, &rules[k], &masks[k])) goto out;
        }
        tree_id = rules[0].tree_id;
        for (size_t i = 1; i < n; i++)
            if (rules[i].tree_id != tree_id) {
                http_error(c->resp, 400, "All rules must belong to the same tree", NULL);
                goto out;
            }
    } else if (tree_qs_tree_id(c, 0, &tree_id)) {
        return;
    }
    if (!tree_load(c, tree_id, &t)) goto out;
    if (c->verb == API_POST || c->verb == API_PUT) {
        if (!n) {
            http_error(c->resp, 400, "Missing tree rules", NULL);
            goto out_tree;
        }
        /* every rule is checked before any is written */
        tsdb_tree_t base = t;
        if (c->verb == API_PUT) base.n_rules = 0; /* PUT replaces the whole set */
        next = xcalloc(n, sizeof *next);
        for (size_t i = 0; i < n; i++) {
            int rc =
                tree_rule_next(c, &base, &rules[i], masks[i], c->verb == API_PUT, &next[n_next]);
            if (rc < 0) goto out_tree;
            if (rc) n_next++;
        }
        int rc = c->verb == API_PUT ? tsdb_tree_rules_delete_all(c->tsd->db, tree_id, &eb) : 0;
        for (size_t i = 0; !rc && i < n_next; i++)
            rc = tsdb_tree_rule_put(c->tsd->db, &next[i], &eb);
        tree_done(c, rc, &eb);
    } else if (c->verb == API_DELETE) {
        tree_done(c, tsdb_tree_rules_delete_all(c->tsd->db, tree_id, &eb), &eb);
    } else {
        tree_unsupported_verb(c);
    }
out_tree:
    tsdb_tree_clear(&t);
out:
    for (size_t i = 0; i < n; i++)
        tree_rule_clear(&rules[i]);
    for (size_t i = 0; i < n_next; i++)
        tree_rule_clear(&next[i]);
    free(rules);
    free(masks);
    free(next);
}

/* ---- test, collisions, notmatched ------------------------------------------------- */

/* treeId and the TSUID list of a test/collisions/notmatched request; -1 if
 * answered. */
static int tree_parse_tsuids(api_call_t *c, int *tree_id, api_strlist_t *list)
{
    memset(list, 0, sizeof *list);
    list->a = &c->arena;
    if (api_has_body(c)) {
        json_value_t *o = api_body_json(c, 0);
        if (!o) return -1;
        const json_value_t *id = o->type == JSON_OBJECT ? json_obj_get(o, "treeId") : NULL;
        int64_t v;
        if (!id || id->type != JSON_NUMBER || json_number_i64(id, &v) || v < INT32_MIN ||
            v > INT32_MAX) {
            http_error(c->resp, 400, "Missing or invalid Tree ID", NULL);
            return -1;
        }
        *tree_id = (int)v;
        const json_value_t *ts = json_obj_get(o, "tsuids");
        if (ts && ts->type != JSON_NULL) {
            if (ts->type != JSON_ARRAY) {
                http_error(c->resp, 400, "Unable to convert the given data to a list", NULL);
                return -1;
            }
            for (const json_value_t *e = ts->child; e; e = e->next) {
                if (e->type != JSON_STRING) {
                    http_error(c->resp, 400, "Unable to convert the given data to a list", NULL);
                    return -1;
                }
                api_strlist_collect(list, e->str, e->len);
            }
        }
        return 0;
    }
    if (tree_qs_tree_id(c, 1, tree_id)) return -1;
    const char *ts = tree_qs_str(c, "tsuids");
    for (const char *p = ts; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        if (l) api_strlist_collect(list, p, l);
        p = comma ? comma + 1 : p + l;
    }
    return 0;
}

/* The built chain under the root, for /api/tree/test. */
static void tree_write_test_branch(api_call_t *c, json_writer_t *w, int tree_id,
                                   const tree_build_result_t *r, int stored, const char *tsuid_hex)
{
    size_t n = stored ? r->n_branches : 0;
    const char **names = json_arena_alloc(&c->arena, (n + 1) * sizeof *names);
    names[0] = "ROOT";
    for (size_t i = 0; i < n; i++)
        names[i + 1] = r->branches[i];
    /* depth 0 is the root; the leaf hangs on the deepest branch (or on the
     * root when it is the only name, where 2.4 shows but never stores it) */
    for (size_t d = 0; d <= n; d++) {
        json_w_obj_begin(w);
        json_w_key(w, "leaves");
        if (d == n && r->leaf && (stored || (r->n_branches == 0 && !r->not_matched))) {
            json_w_arr_begin(w);
            if (tree_write_leaf(c, w, r->leaf, tsuid_hex)) {
                json_w_obj_begin(w);
                json_w_key(w, "displayName");
                json_w_str(w, r->leaf);
                json_w_key(w, "tsuid");
                json_w_str(w, tsuid_hex);
                json_w_obj_end(w);
            }
            json_w_arr_end(w);
        } else {
            json_w_null(w);
        }
        tree_write_branch_head(w, tree_id, names, d);
        json_w_key(w, "branches");
        if (d < n)
            json_w_arr_begin(w); /* the child follows, closed below */
        else
            json_w_null(w);
    }
    for (size_t d = n + 1; d-- > 0;) {
        if (d < n) json_w_arr_end(w);
        json_w_obj_end(w);
    }
}

static void tree_test_messages(json_writer_t *w, const char *one)
{
    json_w_key(w, "branch");
    json_w_null(w);
    json_w_key(w, "meta");
    json_w_null(w);
    json_w_key(w, "messages");
    json_w_arr_begin(w);
    json_w_str(w, one);
    json_w_arr_end(w);
}

void api_tree_test(api_call_t *c)
{
    int tree_id;
    api_strlist_t list;
    tsdb_tree_t t;
    if (tree_parse_tsuids(c, &tree_id, &list)) return;
    if (!tree_load(c, tree_id, &t)) goto out;
    if (!list.n) {
        http_error(c->resp, 400, "Missing or empty TSUID list", NULL);
        goto out_tree;
    }
    if (c->verb == API_DELETE) {
        tree_unsupported_verb(c);
        goto out_tree;
    }
    const tsdb_layout_t *lay = tsdb_layout(c->tsd->db);
    codec_rowkey_layout_t l = {(uint8_t)lay->uid_width[0], (uint8_t)lay->uid_width[1],
                               (uint8_t)lay->uid_width[2], 0, 1};
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    for (size_t i = 0; i < list.n; i++) {
        uint8_t tsuid[512];
        oct_errbuf_t eb;
        json_w_key(&w, list.v[i]);
        json_w_obj_begin(&w);
        int tl = codec_tsuid_from_hex(&l, list.v[i], strlen(list.v[i]), tsuid, sizeof tsuid, &eb);
        tsmeta_t m;
        int64_t ctr = 0;
        int rc = tl < 0 ? 0 : tsmeta_get(c->tsd->db, tsuid, (size_t)tl, &c->arena, &m, &ctr, &eb);
        tsdb_tree_series_t s;
        if (rc <= 0) {
            tree_test_messages(&w, "Unable to locate TSUID meta data");
        } else if (tsdb_tree_series_load(c->tsd->db, tsuid, (size_t)tl, &s, &eb)) {
            char msg[OCT_ERRBUF_SIZE + 64];
            snprintf(msg, sizeof msg, "TSUID was missing a UID name: %s", eb.msg);
            tree_test_messages(&w, msg);
        } else {
            tree_build_result_t r = {0};
            rc = tree_build(t.rules, t.n_rules, &s.view, TREE_BUILD_MESSAGES, &r, &eb);
            int stored = !rc && r.leaf && r.n_branches && !(r.not_matched && t.strict_match);
            if (!rc && r.not_matched && t.strict_match) {
                char msg[2048];
                snprintf(msg, sizeof msg,
                         "TSUID failed to match one or more rule levels, will not add: %s",
                         r.not_matched);
                r.messages = xrealloc(r.messages, (r.n_messages + 1) * sizeof *r.messages);
                r.messages[r.n_messages++] = xstrdup(msg);
            }
            json_w_key(&w, "branch");
            tree_write_test_branch(c, &w, t.id, &r, stored, s.tsuid_hex);
            json_w_key(&w, "meta");
            if (api_write_tsmeta(c, &w, tsuid, (size_t)tl, &m, ctr)) json_w_null(&w);
            json_w_key(&w, "messages");
            json_w_arr_begin(&w);
            if (rc) json_w_str(&w, eb.msg);
            for (size_t k = 0; k < r.n_messages; k++)
                json_w_str(&w, r.messages[k]);
            json_w_arr_end(&w);
            tree_build_result_free(&r);
            tsdb_tree_series_free(&s);
        }
        json_w_obj_end(&w);
    }
    json_w_obj_end(&w);
out_tree:
    tsdb_tree_clear(&t);
out:
    free(list.v);
}

static int tree_record_cb(void *ctx, const char *tsuid_hex, const char *value, size_t n)
{
    json_writer_t *w = ctx;
    json_w_key(w, tsuid_hex);
    json_w_strn(w, value, n);
    return 0;
}

static void tree_records(api_call_t *c, int kind)
{
    int tree_id;
    api_strlist_t list;
    tsdb_tree_t t;
    if (tree_parse_tsuids(c, &tree_id, &list)) return;
    if (!tree_load(c, tree_id, &t)) goto out;
    tsdb_tree_clear(&t);
    if (c->verb == API_DELETE) {
        tree_unsupported_verb(c);
        goto out;
    }
    oct_strbuf_t body = {0};
    json_writer_t w;
    json_w_init(&w, &body);
    json_w_obj_begin(&w);
    oct_errbuf_t eb;
    int rc = tsdb_tree_records(c->tsd->db, tree_id, kind, (const char *const *)list.v, list.n,
                               tree_record_cb, &w, &eb);
    json_w_obj_end(&w);
    if (rc) {
        tree_fail(c, rc, &eb);
    } else {
        json_writer_t out;
        api_json_begin(c, &out);
        json_w_raw(&out, body.ptr, body.len);
    }
    oct_strbuf_free(&body);
out:
    free(list.v);
}

void api_tree_collisions(api_call_t *c)
{
    tree_records(c, 1);
}

void api_tree_notmatched(api_call_t *c)
{
    tree_records(c, 2);
}

void api_tree_unknown(api_call_t *c)
{
    http_error(c->resp, 404, "This endpoint is not supported", NULL);
}

/* POST /api/octsdb/tree/sync: `octsdb uid treesync` run by the TSD
 * (docs/cli-live.md): every TSMeta through every enabled tree; answers the
 * counts. */
void api_octsdb_tree_sync(api_call_t *c)
{
    tsdb_tree_sync_stats_t st;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_tree_sync(c->tsd->db, NULL, NULL, &st, &eb);
    if (rc) {
        http_error(c->resp, 500, "Tree sync failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);
    const char *k[] = {"series", "stored", "collisions", "notMatched", "noBranch"};
    const uint64_t v[] = {st.series, st.stored, st.collisions, st.not_matched, st.no_branch};
    for (size_t i = 0; i < 5; i++) {
        json_w_key(&w, k[i]);
        json_w_uint(&w, v[i]);
    }
    json_w_obj_end(&w);
}
