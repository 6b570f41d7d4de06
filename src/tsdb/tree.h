/* tree.h -- OpenTSDB 2.4's trees in the store: definitions and rules
 * (tree.c), branches, leaves, collisions and not-matched records, and
 * running series through trees (tree_branch.c). Bytes: docs/format/tree.md;
 * the rule engine: query/tree_rule.h; the operator's page: docs/trees.md.
 *
 * Ownership: every struct filled here owns its memory; release it with its
 * _clear/_free function. Threads: every function may be called from any
 * thread; a tree's cells live in one store partition, and creating a tree
 * is one conditional write, so two creators never share an id. Errors:
 * OCT_EINVAL (bad argument: id out of 1..65535, a rule that does not
 * validate; text in eb), OCT_ECORRUPT (stored JSON unreadable), storage
 * errors. */
#ifndef OCT_TSDB_TREE_H
#define OCT_TSDB_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "query/tree_rule.h"
#include "tsdb/tsdb.h"

#define TSDB_TREE_MAX_ID 65535

typedef struct {
    int id;                           /* 1..65535; 0 until created */
    char *name, *description, *notes; /* owned, never NULL after init */
    int strict_match, enabled, store_failures;
    int64_t created;    /* Unix seconds */
    tree_rule_t *rules; /* owned, validated, sorted by level, order */
    size_t n_rules;
} tsdb_tree_t;

void tsdb_tree_init(tsdb_tree_t *t);
void tsdb_tree_clear(tsdb_tree_t *t);

/* ---- definitions and rules (tree.c) ------------------------------------ */

/* Reads tree id with its rules. Returns 1 (found), 0, or an error. */
OCT_MUST_CHECK int tsdb_tree_get(tsdb_t *db, int id, tsdb_tree_t *out, oct_errbuf_t *eb);

/* Every tree, by id, with rules: *out (free each with tsdb_tree_clear, then
 * the array). Returns the count or an error. */
OCT_MUST_CHECK int tsdb_tree_list(tsdb_t *db, tsdb_tree_t **out, oct_errbuf_t *eb);

/* Creates t (t->id is set to (highest existing id) + 1; t->rules are not
 * written). OCT_ERANGE when every id is taken. */
OCT_MUST_CHECK int tsdb_tree_create(tsdb_t *db, tsdb_tree_t *t, oct_errbuf_t *eb);

/* Rewrites the definition of an existing tree t->id (its rules untouched). */
OCT_MUST_CHECK int tsdb_tree_store(tsdb_t *db, const tsdb_tree_t *t, oct_errbuf_t *eb);

/* Writes rule r (r->tree_id, level, order name it; validated first). */
OCT_MUST_CHECK int tsdb_tree_rule_put(tsdb_t *db, tree_rule_t *r, oct_errbuf_t *eb);
/* Deletes one rule (absent is fine). */
OCT_MUST_CHECK int tsdb_tree_rule_delete(tsdb_t *db, int tree_id, int level, int order,
                                         oct_errbuf_t *eb);
/* Deletes every rule of a tree. */
OCT_MUST_CHECK int tsdb_tree_rules_delete_all(tsdb_t *db, int tree_id, oct_errbuf_t *eb);

/* Deletes what a tree generated (branches, leaves, collisions, not-matched)
 * and, with definition, the tree and its rules too. *n_cells (may be NULL)
 * gets the number of cells deleted. */
OCT_MUST_CHECK int tsdb_tree_purge(tsdb_t *db, int id, int definition, uint64_t *n_cells,
                                   oct_errbuf_t *eb);

/* ---- branches, leaves, processing (tree_branch.c) ---------------------- */

typedef struct {
    char *display_name;
    char *tsuid_hex;
} tsdb_tree_leaf_t;

typedef struct tsdb_tree_branch tsdb_tree_branch_t;
struct tsdb_tree_branch {
    int tree_id;
    uint8_t *id; /* tree id (2) + 4 bytes per depth below the root */
    size_t id_len;
    char **path; /* names from the root ("ROOT") down to this branch */
    size_t n_path;
    tsdb_tree_leaf_t *leaves; /* sorted by display name, case-insensitively */
    size_t n_leaves;
    tsdb_tree_branch_t *children; /* same order; their own children/leaves empty */
    size_t n_children;
};
void tsdb_tree_branch_free(tsdb_tree_branch_t *b); /* the members, not b */

/* The branch id of a path below the root: tree id ‖ hash(names[i])... into
 * out (2 + 4 n bytes). */
void tsdb_tree_branch_id(int tree_id, const char *const *names, size_t n, uint8_t *out);

/* Reads branch id[0..len) with its leaves and children. Returns 1, 0 (no
 * such branch), or an error. */
OCT_MUST_CHECK int tsdb_tree_branch_get(tsdb_t *db, const uint8_t *id, size_t len,
                                        tsdb_tree_branch_t *out, oct_errbuf_t *eb);

/* The series of a TSUID as the rule engine sees it (names, custom maps).
 * Returns 0, or OCT_ENOSUCHID for a UID without a name. Free with
 * tsdb_tree_series_free. */
typedef struct {
    uint8_t *tsuid;
    size_t tsuid_len;
    char *tsuid_hex;
    tree_series_view_t view;
    /* private */
    tree_uid_view_t *uids, *pairs;
    size_t n_uids;
} tsdb_tree_series_t;
OCT_MUST_CHECK int tsdb_tree_series_load(tsdb_t *db, const uint8_t *tsuid, size_t len,
                                         tsdb_tree_series_t *out, oct_errbuf_t *eb);
void tsdb_tree_series_free(tsdb_tree_series_t *s);

/* What processing one series through one tree did. */
typedef enum {
    TSDB_TREE_STORED = 0,  /* the chain and leaf are in the tree (or were already) */
    TSDB_TREE_COLLISION,   /* another series holds the leaf's slot */
    TSDB_TREE_NOT_MATCHED, /* strictMatch and a level did not match: nothing stored */
    TSDB_TREE_NO_BRANCH,   /* no match, or the leaf would hang on the root */
} tsdb_tree_outcome_t;

/* Runs series s through tree t and stores the result (2.4's TreeBuilder
 * with storage): branches and leaf created if absent; a collision or a
 * strict-match failure recorded when t->store_failures. *res (zeroed by
 * the caller, may be NULL) gets the engine's result. Returns the outcome
 * or an error. */
OCT_MUST_CHECK int tsdb_tree_process(tsdb_t *db, const tsdb_tree_t *t, const tsdb_tree_series_t *s,
                                     tree_build_result_t *res, oct_errbuf_t *eb);

/* Runs the series tsuid[0..len) through every enabled tree
 * (tsd.core.tree.enable_processing; a newly created TSMeta). Returns the
 * number of trees it went through, or an error. */
OCT_MUST_CHECK int tsdb_tree_process_new(tsdb_t *db, const uint8_t *tsuid, size_t len,
                                         oct_errbuf_t *eb);

/* Calls fn for each collision (kind 1) or not-matched record (kind 2) of
 * tree id: the TSUID (hex) and the stored value. With tsuids (n > 0,
 * upper-case hex), only those. A nonzero return from fn stops the walk and
 * is returned. */
typedef int (*tsdb_tree_record_fn)(void *ctx, const char *tsuid_hex, const char *value, size_t n);
OCT_MUST_CHECK int tsdb_tree_records(tsdb_t *db, int id, int kind, const char *const *tsuids,
                                     size_t n, tsdb_tree_record_fn fn, void *ctx, oct_errbuf_t *eb);

/* `uid treesync`: every series with a TSMeta through every enabled tree.
 * progress (may be NULL) is called after each series with the counts so
 * far. */
typedef struct {
    uint64_t series, stored, collisions, not_matched, no_branch;
} tsdb_tree_sync_stats_t;
typedef void (*tsdb_tree_sync_progress_fn)(void *ctx, const tsdb_tree_sync_stats_t *st);
OCT_MUST_CHECK int tsdb_tree_sync(tsdb_t *db, tsdb_tree_sync_progress_fn progress, void *ctx,
                                  tsdb_tree_sync_stats_t *st, oct_errbuf_t *eb);

#endif
