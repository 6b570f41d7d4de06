/* tree_rule.h -- OpenTSDB 2.4's tree rules and the engine that turns one
 * series into a chain of branch names and a leaf (docs/trees.md; storage in
 * docs/format/tree.md). Pure: no storage, no UID lookups -- the caller hands
 * in the names and custom maps of the series' UIDs.
 *
 * The engine (tree_build) walks the rule levels in ascending order; on each
 * level the rules are tried in ascending order and the first non-empty name
 * wins. A rule extracts a value (METRIC: the metric name; TAGK: the value of
 * tag key `field`; METRIC_CUSTOM / TAGK_CUSTOM / TAGV_CUSTOM: the custom
 * member `customField` of the metric's, of tag key `field`'s or of tag value
 * `field`'s UIDMeta), then with a regex takes group regexGroupIdx + 1 of
 * the first match, or with a separator (itself a regex, as Java's
 * String.split) yields one name per piece on successive depths of the same
 * level, and finally applies displayFormat ({ovalue}, {value}, {tsuid},
 * {tag_name}). Named results form one chain below the root: consecutive
 * equal names collapse into one branch, the last name is the leaf, and a
 * leaf with no branch above it (it would hang on the root) is not stored.
 *
 * Ownership: a tree_rule_t owns its strings and compiled regex
 * (tree_rule_clear); tree_build's result owns everything in it
 * (tree_build_result_free). Threads: rules are read-only during tree_build,
 * so one rule set may be used by many threads at once.
 * Errors: OCT_EINVAL with 2.4's message in eb. */
#ifndef OCT_QUERY_TREE_RULE_H
#define OCT_QUERY_TREE_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/json.h"

typedef enum {
    TREE_RULE_UNSET = -1,
    TREE_RULE_METRIC = 0,
    TREE_RULE_METRIC_CUSTOM,
    TREE_RULE_TAGK,
    TREE_RULE_TAGK_CUSTOM,
    TREE_RULE_TAGV_CUSTOM,
} tree_rule_type_t;

/* Which members a JSON object or query string gave (tree_rule_merge). */
enum {
    TREE_RF_TYPE = 1u << 0,
    TREE_RF_FIELD = 1u << 1,
    TREE_RF_CUSTOM_FIELD = 1u << 2,
    TREE_RF_REGEX = 1u << 3,
    TREE_RF_SEPARATOR = 1u << 4,
    TREE_RF_DESCRIPTION = 1u << 5,
    TREE_RF_NOTES = 1u << 6,
    TREE_RF_REGEX_GROUP_IDX = 1u << 7,
    TREE_RF_DISPLAY_FORMAT = 1u << 8,
    TREE_RF_ALL = (1u << 9) - 1,
};

typedef struct {
    int type; /* tree_rule_type_t */
    char *field, *custom_field, *regex, *separator, *description, *notes, *display_format;
    int regex_group_idx, level, order, tree_id;
    /* private: compiled regex and separator (tree_rule_validate), or NULL */
    void *re, *sep_re;
} tree_rule_t;

/* Every string "" (owned), type unset, numbers 0. */
void tree_rule_init(tree_rule_t *r);
void tree_rule_clear(tree_rule_t *r);
/* A deep copy of src into dst (initialised or cleared first); no compiled
 * regexes (validate again). */
void tree_rule_copy(tree_rule_t *dst, const tree_rule_t *src);

/* "METRIC"... as 2.4 prints them; NULL for TREE_RULE_UNSET. */
const char *tree_rule_type_name(int type);
/* Case-insensitive parse; TREE_RULE_UNSET if unknown. */
int tree_rule_type_parse(const char *s);

/* Sets one string member (copies v). */
void tree_rule_set(char **member, const char *v);

/* Checks the rule as 2.4 does before storing it and compiles its regex and
 * separator: "Missing rule type", "Missing field name required for <TYPE>
 * rule", "Missing custom field name required for <TYPE> rule", "Invalid
 * regex group index", "Negative levels are not allowed", "Negative orders
 * are not allowed", or "Invalid regex pattern: ..." -- OCT_EINVAL. */
OCT_MUST_CHECK int tree_rule_validate(tree_rule_t *r, oct_errbuf_t *eb);

/* Copies into dst the members of src that mask names (every editable one
 * with TREE_RF_ALL, as 2.4's PUT does). Returns 1 if dst changed, else 0. */
int tree_rule_merge(tree_rule_t *dst, const tree_rule_t *src, unsigned mask);

/* The string members: JSON key (API and stored), 2.4's query-string name,
 * TREE_RF_* bit, offset of the char * in tree_rule_t. */
typedef struct {
    const char *json, *qs;
    unsigned bit;
    size_t off;
} tree_rule_field_t;
#define TREE_RULE_N_STR_FIELDS 7
extern const tree_rule_field_t tree_rule_str_fields[TREE_RULE_N_STR_FIELDS];

/* Reads a rule object (the API's and the stored JSON) into r (initialised
 * by the caller); *mask (may be NULL) gets the members present. Number
 * members may be JSON numbers or strings holding integers. Returns 0, or
 * OCT_EINVAL ("Invalid rule type: X", "Unable to parse <member>"). */
OCT_MUST_CHECK int tree_rule_from_json(const json_value_t *o, tree_rule_t *r, unsigned *mask,
                                       oct_errbuf_t *eb);
/* Writes r as the API shows it (docs/format/tree.md 2.2). */
void tree_rule_to_json(const tree_rule_t *r, json_writer_t *w);

/* "[tree:level:order:TYPE]" ("null" for an unset type) into buf. */
void tree_rule_id(const tree_rule_t *r, char *buf, size_t cap);

/* Java's String.hashCode of UTF-8 text s[0..n) (hashed as UTF-16 units). */
int32_t tree_hash(const char *s, size_t n);

/* ---- building ----------------------------------------------------------- */

/* One UID of the series: its name and its UIDMeta's custom object as JSON
 * text (NULL or "null" when none). */
typedef struct {
    const char *name;
    const char *custom_json;
} tree_uid_view_t;

typedef struct {
    const char *tsuid_hex; /* upper-case */
    tree_uid_view_t metric;
    size_t n_tags; /* tag pairs in row-key order */
    const tree_uid_view_t *tagk, *tagv;
} tree_series_view_t;

typedef struct {
    char **branches;   /* names of the chain below the root, top first */
    size_t n_branches; /* 0 with leaf set: the leaf would hang on the root */
    char *leaf;        /* NULL: no level matched */
    char *not_matched; /* ids of unmatched levels' last rules, or NULL if all matched */
    char **messages;   /* what happened, for /api/tree/test */
    size_t n_messages;
} tree_build_result_t;

enum {
    TREE_BUILD_MESSAGES = 1u << 0, /* fill out->messages (for /api/tree/test) */
};

/* Runs the series through rules[0..n) (any order; sorted by level, order
 * inside; each validated). *out must be zeroed; free it with
 * tree_build_result_free. flags: TREE_BUILD_*. Returns 0, or OCT_EINVAL
 * when the series breaks an assumption 2.4 also refuses (a custom member
 * whose value is null). */
OCT_MUST_CHECK int tree_build(const tree_rule_t *rules, size_t n, const tree_series_view_t *s,
                              unsigned flags, tree_build_result_t *out, oct_errbuf_t *eb);
void tree_build_result_free(tree_build_result_t *r);

#endif
