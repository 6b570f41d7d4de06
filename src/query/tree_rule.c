/* tree_rule.c -- tree rules (validation, JSON, merge) and the engine that
 * runs one series through a rule set (tree_rule.h, docs/trees.md).
 *
 * 2.4 builds the chain with a recursion over "frames" (one per level, or
 * one per split piece) that hangs each named frame under the nearest named
 * frame above it, collapses a name equal to that one's, and turns the last
 * named frame into the leaf. Written out, that is: list the frames' names,
 * drop the empty ones, the last is the leaf, the rest (consecutive
 * duplicates collapsed) are the branches -- which is what tree_build does.
 * Regexes are PCRE2, close to Java's syntax for what rules use (groups,
 * classes, anchors, quantifiers); docs/compat.md. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "query/tree_rule.h"

#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "common/xmalloc.h"

static const char *const tree_type_names[] = {"METRIC", "METRIC_CUSTOM", "TAGK", "TAGK_CUSTOM",
                                              "TAGV_CUSTOM"};

const char *tree_rule_type_name(int type)
{
    return type >= 0 && type <= TREE_RULE_TAGV_CUSTOM ? tree_type_names[type] : NULL;
}

int tree_rule_type_parse(const char *s)
{
    for (int i = 0; i <= TREE_RULE_TAGV_CUSTOM; i++)
        if (s && !strcasecmp(s, tree_type_names[i])) return i;
    return TREE_RULE_UNSET;
}

void tree_rule_set(char **member, const char *v)
{
    free(*member);
    *member = xstrdup(v ? v : "");
}

void tree_rule_init(tree_rule_t *r)
{
    memset(r, 0, sizeof *r);
    r->type = TREE_RULE_UNSET;
    char **s[] = {&r->field,       &r->custom_field, &r->regex,         &r->separator,
                  &r->description, &r->notes,        &r->display_format};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        *s[i] = xstrdup("");
}

static void tree_rule_uncompile(tree_rule_t *r)
{
    pcre2_code_free((pcre2_code *)r->re);
    pcre2_code_free((pcre2_code *)r->sep_re);
    r->re = r->sep_re = NULL;
}

void tree_rule_clear(tree_rule_t *r)
{
    tree_rule_uncompile(r);
    free(r->field);
    free(r->custom_field);
    free(r->regex);
    free(r->separator);
    free(r->description);
    free(r->notes);
    free(r->display_format);
    memset(r, 0, sizeof *r);
    r->type = TREE_RULE_UNSET;
}

void tree_rule_copy(tree_rule_t *dst, const tree_rule_t *src)
{
    *dst = *src;
    dst->re = dst->sep_re = NULL;
    dst->field = xstrdup(src->field);
    dst->custom_field = xstrdup(src->custom_field);
    dst->regex = xstrdup(src->regex);
    dst->separator = xstrdup(src->separator);
    dst->description = xstrdup(src->description);
    dst->notes = xstrdup(src->notes);
    dst->display_format = xstrdup(src->display_format);
}

static pcre2_code *tree_re_compile(const char *pat, oct_errbuf_t *eb)
{
    int errcode;
    PCRE2_SIZE erroff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &errcode, &erroff, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(errcode, msg, sizeof msg) < 0)
            snprintf((char *)msg, sizeof msg, "unknown error");
        oct_err(eb, OCT_EINVAL, "Invalid regex pattern '%s': %s at offset %zu", pat,
                (const char *)msg, (size_t)erroff);
        return NULL;
    }
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional speed-up */
    return re;
}

int tree_rule_validate(tree_rule_t *r, oct_errbuf_t *eb)
{
    const char *tn = tree_rule_type_name(r->type);
    if (!tn) return oct_err(eb, OCT_EINVAL, "Missing rule type");
    if (r->type != TREE_RULE_METRIC && !r->field[0])
        return oct_err(eb, OCT_EINVAL, "Missing field name required for %s rule", tn);
    if (r->type != TREE_RULE_METRIC && r->type != TREE_RULE_TAGK && !r->custom_field[0])
        return oct_err(eb, OCT_EINVAL, "Missing custom field name required for %s rule", tn);
    if (r->regex_group_idx < 0)
        return oct_err(eb, OCT_EINVAL, "Invalid regex group index. Cannot be less than 0");
    if (r->level < 0) return oct_err(eb, OCT_EINVAL, "Negative levels are not allowed");
    if (r->order < 0) return oct_err(eb, OCT_EINVAL, "Negative orders are not allowed");
    tree_rule_uncompile(r);
    if (r->regex[0] && !(r->re = tree_re_compile(r->regex, eb))) return OCT_EINVAL;
    if (r->separator[0] && !(r->sep_re = tree_re_compile(r->separator, eb))) return OCT_EINVAL;
    return 0;
}

static int tree_set_if(char **dst, const char *src, int force)
{
    if (!force && !strcmp(*dst, src)) return 0;
    int changed = strcmp(*dst, src) != 0;
    tree_rule_set(dst, src);
    return changed || force;
}

int tree_rule_merge(tree_rule_t *dst, const tree_rule_t *src, unsigned mask)
{
    int ch = 0;
    if ((mask & TREE_RF_TYPE) && dst->type != src->type) {
        dst->type = src->type;
        ch = 1;
    }
    if (mask & TREE_RF_FIELD) ch |= tree_set_if(&dst->field, src->field, 0);
    if (mask & TREE_RF_CUSTOM_FIELD) ch |= tree_set_if(&dst->custom_field, src->custom_field, 0);
    if (mask & TREE_RF_REGEX) ch |= tree_set_if(&dst->regex, src->regex, 0);
    if (mask & TREE_RF_SEPARATOR) ch |= tree_set_if(&dst->separator, src->separator, 0);
    if (mask & TREE_RF_DESCRIPTION) ch |= tree_set_if(&dst->description, src->description, 0);
    if (mask & TREE_RF_NOTES) ch |= tree_set_if(&dst->notes, src->notes, 0);
    if ((mask & TREE_RF_REGEX_GROUP_IDX) && dst->regex_group_idx != src->regex_group_idx) {
        dst->regex_group_idx = src->regex_group_idx;
        ch = 1;
    }
    if (mask & TREE_RF_DISPLAY_FORMAT)
        ch |= tree_set_if(&dst->display_format, src->display_format, 0);
    if (ch) tree_rule_uncompile(dst);
    return ch;
}

/* An integer member given as a number or as a string of digits. */
static int tree_json_int(const json_value_t *v, int *out)
{
    int64_t x;
    if (v->type == JSON_NUMBER) {
        if (json_number_i64(v, &x)) return -1;
    } else if (v->type == JSON_STRING) {
        char buf[32];
        if (v->len == 0 || v->len >= sizeof buf) return -1;
        memcpy(buf, v->str, v->len);
        buf[v->len] = '\0';
        char *end;
        x = strtoll(buf, &end, 10);
        if (*end) return -1;
    } else {
        return -1;
    }
    if (x < INT32_MIN || x > INT32_MAX) return -1;
    *out = (int)x;
    return 0;
}

const tree_rule_field_t tree_rule_str_fields[TREE_RULE_N_STR_FIELDS] = {
    {"field", "field", TREE_RF_FIELD, offsetof(tree_rule_t, field)},
    {"customField", "custom_field", TREE_RF_CUSTOM_FIELD, offsetof(tree_rule_t, custom_field)},
    {"regex", "regex", TREE_RF_REGEX, offsetof(tree_rule_t, regex)},
    {"separator", "separator", TREE_RF_SEPARATOR, offsetof(tree_rule_t, separator)},
    {"description", "description", TREE_RF_DESCRIPTION, offsetof(tree_rule_t, description)},
    {"notes", "notes", TREE_RF_NOTES, offsetof(tree_rule_t, notes)},
    {"displayFormat", "display_format", TREE_RF_DISPLAY_FORMAT,
     offsetof(tree_rule_t, display_format)},
};

/* 1 if member v's key is exactly k (keys are not NUL-terminated). */
static int tree_key_is(const json_value_t *v, const char *k)
{
    return v->key_len == strlen(k) && !memcmp(v->key, k, v->key_len);
}

int tree_rule_from_json(const json_value_t *o, tree_rule_t *r, unsigned *mask, oct_errbuf_t *eb)
{
    static const struct {
        const char *key;
        unsigned bit;
        size_t off;
    } ints[] = {
        {"regexGroupIdx", TREE_RF_REGEX_GROUP_IDX, offsetof(tree_rule_t, regex_group_idx)},
        {"level", 0, offsetof(tree_rule_t, level)},
        {"order", 0, offsetof(tree_rule_t, order)},
        {"treeId", 0, offsetof(tree_rule_t, tree_id)},
    };
    unsigned m = 0;
    if (!o || o->type != JSON_OBJECT) return oct_err(eb, OCT_EINVAL, "Expected a rule object");
    for (const json_value_t *v = o->child; v; v = v->next) {
        if (tree_key_is(v, "type")) {
            if (v->type == JSON_NULL) continue;
            char buf[32] = "";
            if (v->type == JSON_STRING && v->len < sizeof buf) memcpy(buf, v->str, v->len);
            r->type = tree_rule_type_parse(buf);
            if (r->type == TREE_RULE_UNSET)
                return oct_err(eb, OCT_EINVAL, "Unrecognized rule type: %.*s", (int)v->len,
                               v->str ? v->str : "");
            m |= TREE_RF_TYPE;
            continue;
        }
        for (size_t i = 0; i < TREE_RULE_N_STR_FIELDS; i++) {
            const tree_rule_field_t *f = &tree_rule_str_fields[i];
            if (!tree_key_is(v, f->json)) continue;
            if (v->type != JSON_STRING && v->type != JSON_NULL)
                return oct_err(eb, OCT_EINVAL, "Unable to parse %.*s", (int)v->key_len, v->key);
            char **dst = (char **)((char *)r + f->off);
            free(*dst);
            *dst = v->type == JSON_NULL ? xstrdup("") : xstrndup(v->str, v->len);
            m |= f->bit;
        }
        for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
            if (!tree_key_is(v, ints[i].key)) continue;
            if (tree_json_int(v, (int *)((char *)r + ints[i].off)))
                return oct_err(eb, OCT_EINVAL, "Unable to parse %.*s", (int)v->key_len, v->key);
            m |= ints[i].bit;
        }
    }
    if (mask) *mask = m;
    return 0;
}

void tree_rule_to_json(const tree_rule_t *r, json_writer_t *w)
{
    json_w_obj_begin(w);
    json_w_key(w, "type");
    json_w_str(w, tree_rule_type_name(r->type));
    json_w_key(w, "field");
    json_w_str(w, r->field);
    json_w_key(w, "regex");
    json_w_str(w, r->regex);
    json_w_key(w, "separator");
    json_w_str(w, r->separator);
    json_w_key(w, "description");
    json_w_str(w, r->description);
    json_w_key(w, "notes");
    json_w_str(w, r->notes);
    json_w_key(w, "level");
    json_w_int(w, r->level);
    json_w_key(w, "order");
    json_w_int(w, r->order);
    json_w_key(w, "treeId");
    json_w_int(w, r->tree_id);
    json_w_key(w, "customField");
    json_w_str(w, r->custom_field);
    json_w_key(w, "regexGroupIdx");
    json_w_int(w, r->regex_group_idx);
    json_w_key(w, "displayFormat");
    json_w_str(w, r->display_format);
    json_w_obj_end(w);
}

void tree_rule_id(const tree_rule_t *r, char *buf, size_t cap)
{
    const char *tn = tree_rule_type_name(r->type);
    snprintf(buf, cap, "[%d:%d:%d:%s]", r->tree_id, r->level, r->order, tn ? tn : "null");
}

int32_t tree_hash(const char *s, size_t n)
{
    uint32_t h = 0;
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        uint32_t cp;
        int len = *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
        if (p + len > e) len = (int)(e - p); /* truncated: hash what is there */
        cp = len == 1 ? *p : (uint32_t)(*p & (0x7F >> len));
        for (int i = 1; i < len; i++)
            cp = (cp << 6) | (p[i] & 0x3F);
        p += len;
        if (cp >= 0x10000) { /* a surrogate pair, as Java stores it */
            cp -= 0x10000;
            h = 31 * h + (0xD800 + (cp >> 10));
            h = 31 * h + (0xDC00 + (cp & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
    }
    return (int32_t)h;
}

/* ---- the engine ---------------------------------------------------------- */

typedef struct {
    tree_build_result_t *out;
    size_t cap_msgs;
    json_arena_t arena;
    int messages; /* TREE_BUILD_MESSAGES */
    pcre2_match_data *md;
} tree_ctx_t;

__attribute__((format(printf, 2, 3))) static void tree_msg(tree_ctx_t *x, const char *fmt, ...)
{
    tree_build_result_t *o = x->out;
    if (!x->messages) return;
    if (o->n_messages == x->cap_msgs) {
        x->cap_msgs = x->cap_msgs ? 2 * x->cap_msgs : 8;
        o->messages = xrealloc(o->messages, x->cap_msgs * sizeof *o->messages);
    }
    va_list ap;
    va_start(ap, fmt);
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->messages[o->n_messages++] = xstrdup(buf);
}

/* The custom member `key` of a UIDMeta's custom object text: 1 and *val
 * (arena) if present with a string value, 0 if absent, OCT_EINVAL if
 * present but null (2.4 refuses that series). */
static int tree_custom(tree_ctx_t *x, const char *json, const char *key, const char **val,
                       oct_errbuf_t *eb)
{
    if (!json || !json[0]) return 0;
    json_value_t *o;
    oct_errbuf_t e2;
    if (json_parse(&x->arena, json, strlen(json), 0, &o, &e2) || o->type != JSON_OBJECT) return 0;
    const json_value_t *v = json_obj_get(o, key);
    if (!v) return 0;
    if (v->type == JSON_NULL)
        return oct_err(eb, OCT_EINVAL, "Value for custom field [%s] was null", key);
    if (v->type == JSON_STRING) {
        *val = json_arena_strndup(&x->arena, v->str, v->len);
    } else { /* a number or bool: its text, as Jackson would bind it into a String map */
        *val = json_arena_strndup(
            &x->arena, v->str ? v->str : (v->type == JSON_TRUE ? "true" : "false"),
            v->str ? v->len : strlen(v->type == JSON_TRUE ? "true" : "false"));
    }
    return 1;
}

/* The value a rule reads from the series: 1 with *val, 0 if none. */
static int tree_extract(tree_ctx_t *x, const tree_rule_t *r, const tree_series_view_t *s,
                        const char **val, oct_errbuf_t *eb)
{
    char id[128] = "";
    if (x->messages) tree_rule_id(r, id, sizeof id);
    switch (r->type) {
    case TREE_RULE_METRIC:
        *val = s->metric.name;
        return 1;
    case TREE_RULE_TAGK:
        for (size_t i = 0; i < s->n_tags; i++)
            if (!strcmp(s->tagk[i].name, r->field) && s->tagv[i].name[0]) {
                tree_msg(x, "Matched tagk [%s] for rule: %s", r->field, id);
                *val = s->tagv[i].name;
                return 1;
            }
        tree_msg(x, "No match on tagk [%s] for rule: %s", r->field, id);
        return 0;
    case TREE_RULE_METRIC_CUSTOM:
    case TREE_RULE_TAGK_CUSTOM:
    case TREE_RULE_TAGV_CUSTOM: {
        const tree_uid_view_t *u = NULL;
        if (r->type == TREE_RULE_METRIC_CUSTOM) {
            u = &s->metric;
        } else {
            const tree_uid_view_t *list = r->type == TREE_RULE_TAGK_CUSTOM ? s->tagk : s->tagv;
            for (size_t i = 0; i < s->n_tags && !u; i++)
                if (!strcmp(list[i].name, r->field)) u = &list[i];
            if (!u) {
                tree_msg(x, "No match on %s [%s] for rule: %s",
                         r->type == TREE_RULE_TAGK_CUSTOM ? "tagk" : "tagv", r->field, id);
                return 0;
            }
        }
        int rc = tree_custom(x, u->custom_json, r->custom_field, val, eb);
        if (rc < 0) return rc;
        tree_msg(x, "%s custom field [%s] for rule: %s", rc ? "Matched" : "No match on",
                 r->custom_field, id);
        return rc;
    }
    default:
        return 0;
    }
}

static char *tree_str_replace(const char *s, const char *pat, const char *with)
{
    oct_strbuf_t b = {0};
    size_t pl = strlen(pat);
    for (const char *p = s;;) {
        const char *q = strstr(p, pat);
        if (!q) {
            oct_strbuf_append(&b, p, strlen(p));
            break;
        }
        oct_strbuf_append(&b, p, (size_t)(q - p));
        oct_strbuf_append(&b, with, strlen(with));
        p = q + pl;
    }
    oct_strbuf_append(&b, "", 0);
    char *r = xstrndup(b.ptr ? b.ptr : "", b.len);
    oct_strbuf_free(&b);
    return r;
}

/* The display name of an extracted value (malloc'd). */
static char *tree_display(tree_ctx_t *x, const tree_rule_t *r, const tree_series_view_t *s,
                          const char *ovalue, const char *value, size_t vlen)
{
    char *v = xstrndup(value, vlen);
    if (!r->display_format[0]) return v;
    const char *tag_name = r->type == TREE_RULE_TAGK     ? r->field
                           : r->type == TREE_RULE_METRIC ? ""
                                                         : r->custom_field;
    if (r->type == TREE_RULE_METRIC && strstr(r->display_format, "{tag_name}"))
        tree_msg(x, "Display format of rule [%d:%d:%d:METRIC] has {tag_name}: replaced by nothing",
                 r->tree_id, r->level, r->order);
    char *a = tree_str_replace(r->display_format, "{ovalue}", ovalue);
    char *b = tree_str_replace(a, "{value}", v);
    char *c = tree_str_replace(b, "{tsuid}", s->tsuid_hex);
    char *d = tree_str_replace(c, "{tag_name}", tag_name);
    free(a);
    free(b);
    free(c);
    free(v);
    return d;
}

/* Java's String.split(sep): pieces between matches, no leading empty piece
 * for a zero-width match at 0, trailing empty pieces dropped, no match =
 * the whole value. Returns the count; *pieces (malloc'd strings). */
static size_t tree_split(const pcre2_code *re, pcre2_match_data *md, const char *v, char ***pieces)
{
    size_t n = 0, cap = 4, len = strlen(v), start = 0, pos = 0;
    char **out = xmalloc(cap * sizeof *out);
    while (pos <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)v, len, pos, 0, md, NULL);
        if (rc < 0) break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) {
            if (ms == 0 || ms >= len) { /* no piece at the edges for an empty match */
                pos = ms + 1;
                continue;
            }
        }
        if (n == cap) out = xrealloc(out, (cap *= 2) * sizeof *out);
        out[n++] = xstrndup(v + start, ms - start);
        start = me;
        pos = me > ms ? me : me + 1;
    }
    if (n == cap) out = xrealloc(out, (cap + 1) * sizeof *out);
    out[n++] = xstrndup(v + start, len - start);
    if (n == 1 && start == 0) { /* no match: the whole value, even if empty */
        *pieces = out;
        return 1;
    }
    while (n > 0 && !out[n - 1][0])
        free(out[--n]);
    *pieces = out;
    return n;
}

static void tree_free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int tree_rule_cmp(const void *a, const void *b)
{
    const tree_rule_t *x = *(const tree_rule_t *const *)a, *y = *(const tree_rule_t *const *)b;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The build's match data, made on first use: room for 100 groups (a
 * group index beyond what it holds reads as unset, i.e. no match). */
static pcre2_match_data *tree_md(tree_ctx_t *x)
{
    if (!x->md) x->md = pcre2_match_data_create(101, NULL);
    return x->md;
}

/* One name per frame ("" for a frame without a match), in order. */
typedef struct {
    char **v;
    size_t n, cap;
} tree_names_t;

static void tree_names_push(tree_names_t *f, char *s)
{
    if (f->n == f->cap) f->v = xrealloc(f->v, (f->cap = f->cap ? 2 * f->cap : 8) * sizeof *f->v);
    f->v[f->n++] = s;
}

static void tree_append_not_matched(tree_build_result_t *o, const tree_rule_t *r)
{
    char id[128];
    tree_rule_id(r, id, sizeof id);
    size_t old = o->not_matched ? strlen(o->not_matched) : 0;
    o->not_matched = xrealloc(o->not_matched, old + strlen(id) + 2);
    if (old) o->not_matched[old++] = ' ';
    strcpy(o->not_matched + old, id);
}

/* Runs one level (rules lv[0..k)) and pushes its frames' names. */
static int tree_level(tree_ctx_t *x, const tree_rule_t *const *lv, size_t k,
                      const tree_series_view_t *s, tree_names_t *frames, oct_errbuf_t *eb)
{
    char **splits = NULL;
    size_t n_splits = 0, split_idx = 0;
    int split_active = 0;
    for (;;) {
        char *name = NULL;
        const tree_rule_t *last = NULL;
        for (size_t i = 0; i < k && !name; i++) {
            const tree_rule_t *r = last = lv[i];
            char id[128] = "";
            if (x->messages) tree_rule_id(r, id, sizeof id); /* only messages need it */
            tree_msg(x, "Processing rule: %s", id);
            const char *val = NULL;
            int rc = tree_extract(x, r, s, &val, eb);
            if (rc < 0) {
                tree_free_strs(splits, n_splits);
                return rc;
            }
            if (!rc) continue;
            if (r->re) {
                pcre2_match_data *md = tree_md(x);
                int m = pcre2_match(r->re, (PCRE2_SPTR)val, strlen(val), 0, 0, md, NULL);
                uint32_t groups = 0;
                (void)pcre2_pattern_info(r->re, PCRE2_INFO_CAPTURECOUNT, &groups);
                if (m >= 0 && (uint32_t)r->regex_group_idx + 1 > groups) {
                    tree_msg(x, "Regex group index [%d] for rule %s was out of bounds [%u]",
                             r->regex_group_idx, id, groups);
                } else if (m >= 0) {
                    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
                    size_t g = (size_t)r->regex_group_idx + 1;
                    if ((int)g < m && ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] > ov[2 * g])
                        name =
                            tree_display(x, r, s, val, val + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
                    else
                        tree_msg(x, "Extracted value for rule %s was null or empty", id);
                } else {
                    tree_msg(x, "Regex of rule %s did not match [%s]", id, val);
                }
            } else if (r->sep_re) {
                if (!split_active) {
                    n_splits = tree_split(r->sep_re, tree_md(x), val, &splits);
                    split_active = 1;
                    split_idx = 0;
                    if (n_splits == 0) {
                        tree_msg(x, "Separator of rule %s left no pieces of [%s]", id, val);
                        continue;
                    }
                }
                if (split_idx < n_splits) {
                    const char *piece = splits[split_idx++];
                    name = tree_display(x, r, s, val, piece, strlen(piece));
                }
            } else {
                name = tree_display(x, r, s, val, val, strlen(val));
            }
            if (name && !name[0]) {
                free(name);
                name = NULL;
            }
        }
        if (!name && last) tree_append_not_matched(x->out, last);
        tree_names_push(frames, name ? name : xstrdup(""));
        if (!split_active || split_idx >= n_splits) break;
    }
    tree_free_strs(splits, n_splits);
    return 0;
}

int tree_build(const tree_rule_t *rules, size_t n, const tree_series_view_t *s, unsigned flags,
               tree_build_result_t *out, oct_errbuf_t *eb)
{
    tree_ctx_t x = {out, 0, JSON_ARENA_INIT, (flags & TREE_BUILD_MESSAGES) != 0, NULL};
    const tree_rule_t **sorted = xmalloc((n ? n : 1) * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = &rules[i];
    qsort(sorted, n, sizeof *sorted, tree_rule_cmp);
    tree_names_t frames = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i;
        while (j < n && sorted[j]->level == sorted[i]->level)
            j++;
        rc = tree_level(&x, sorted + i, j - i, s, &frames, eb);
        i = j;
    }
    if (!rc) {
        /* Named frames: the last is the leaf, the others the branches. */
        size_t last = frames.n;
        for (size_t i = frames.n; i-- > 0;)
            if (frames.v[i][0]) {
                last = i;
                break;
            }
        if (last < frames.n) {
            out->leaf = xstrdup(frames.v[last]);
            out->branches = xmalloc((last + 1) * sizeof *out->branches);
            for (size_t i = 0; i < last; i++) {
                const char *nm = frames.v[i];
                if (!nm[0]) continue;
                if (out->n_branches && !strcmp(out->branches[out->n_branches - 1], nm)) continue;
                out->branches[out->n_branches++] = xstrdup(nm);
            }
        }
        if (!out->leaf)
            tree_msg(&x, "No rule matched the series");
        else if (!out->n_branches)
            tree_msg(&x, "Leaf [%s] would hang on the root: not stored", out->leaf);
    }
    tree_free_strs(frames.v, frames.n);
    free(sorted);
    json_arena_free(&x.arena);
    pcre2_match_data_free(x.md);
    return rc;
}

void tree_build_result_free(tree_build_result_t *r)
{
    tree_free_strs(r->branches, r->n_branches);
    free(r->leaf);
    free(r->not_matched);
    tree_free_strs(r->messages, r->n_messages);
    memset(r, 0, sizeof *r);
}
