/* expr.h -- OpenTSDB 2.4's expression language and its join, pure
 * (docs/expressions.md): the arithmetic of /api/query/exp's "expressions"
 * and the series sets both expression endpoints pass around.
 *
 * An expression is text such as "(a + b) * 100 / c": variables (names of
 * metric or expression ids), numbers, + - * / %, comparisons and && || !
 * (true is 1, false 0), unary minus, parentheses. expr_parse compiles it into
 * a small stack program; expr_eval runs it over one value per variable.
 * Arithmetic is on doubles as 2.4's lenient JEXL does it: x / 0 and x % 0
 * are 0.
 *
 * A series set is what a variable stands for: the output series of one
 * metric sub-query (or of another expression), each with its tags. expr_join
 * pairs the series of every variable by their tags (union or intersection,
 * docs/expressions.md section 3) and the points by timestamp: every
 * timestamp any input series has is a row of every output series, and an
 * input without a point there (or with NaN) contributes its fill value.
 *
 * Ownership: an expr_t owns its program and variable names (expr_free). A
 * set owns its series and each series its strings and points
 * (expr_set_free). Nothing keeps pointers into its inputs.
 * Errors: OCT_EPARSE/OCT_EINVAL with the message in eb; no printing.
 * Threads: no shared state. */
#ifndef OCT_QUERY_EXPR_H
#define OCT_QUERY_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "query/query.h"

/* ---- the language --------------------------------------------------------- */

typedef struct expr expr_t;

/* Compiles text. Variables are identifiers: a letter or '_', then letters,
 * digits, '_'. The ternary "?:" and function calls are OCT_EPARSE with a
 * message naming them (2.4 fails on them too, later). Returns 0 and *out,
 * or OCT_EPARSE with "<reason> at position <k> in [<text>]". */
OCT_MUST_CHECK int expr_parse(const char *text, expr_t **out, oct_errbuf_t *eb);
void expr_free(expr_t *e);

/* The distinct variables, in order of first appearance; expr_eval's vals[]
 * follow this order. */
size_t expr_n_vars(const expr_t *e);
const char *expr_var(const expr_t *e, size_t i);
/* The text it was compiled from. */
const char *expr_text(const expr_t *e);

/* The value of e with variable i = vals[i]. */
double expr_eval(const expr_t *e, const double *vals);

/* ---- series sets ------------------------------------------------------------ */

typedef struct {
    char *metric;  /* name of the metric (or an alias), never NULL */
    size_t n_tags; /* sorted by tagk (bytes) */
    char **tagk, **tagv;
    size_t n_agg; /* aggregated tag keys, sorted */
    char **agg;
    size_t n; /* points, by ts_ms, no duplicates */
    query_dp_t *dps;
} expr_series_t;

typedef struct {
    expr_series_t *s;
    size_t n;
} expr_set_t;

/* A new series at the end of set (zeroed, metric copied); returns it. */
expr_series_t *expr_set_add(expr_set_t *set, const char *metric);
/* Copies of the tags (any order in; kept sorted) and aggregated keys. */
void expr_series_set_tags(expr_series_t *s, size_t n, const char *const *tagk,
                          const char *const *tagv);
void expr_series_set_agg(expr_series_t *s, size_t n, const char *const *agg);
/* The value of tag key k, or NULL. */
const char *expr_series_tag(const expr_series_t *s, const char *k);
void expr_series_free(expr_series_t *s);
void expr_set_free(expr_set_t *set);
/* Moves every series of from to the end of to (from is left empty). */
void expr_set_move(expr_set_t *to, expr_set_t *from);

/* ---- the join --------------------------------------------------------------- */

typedef enum { EXPR_JOIN_UNION = 0, EXPR_JOIN_INTERSECTION } expr_join_op_t;

typedef struct {
    expr_join_op_t op;
    /* Join only on these tag keys (2.4's useQueryTags: the keys the
     * variables' filters name); n_keys == 0 with use_keys set joins every
     * series of a variable onto one key. */
    int use_keys;
    size_t n_keys;
    const char *const *keys;
    int include_agg_tags; /* the aggregated tag keys are part of the key (2.4's default) */
} expr_join_t;

/* Evaluates e over the sets in[i] of its variables (in expr_var order)
 * joined by j: one output series per join key (union: every key of any
 * input, a variable without a series for it contributes fill[i] throughout;
 * intersection: keys every variable has), in byte order of the key, rows
 * at every timestamp of any input series with start_ms <= ts <= end_ms,
 * a missing or NaN point taking fill[i]. Output values are doubles; each
 * output series takes the key's tags, the union of its inputs' aggregated
 * keys and the metric name `name`. Two series of one variable on the same
 * key is OCT_EINVAL (join on more tags). Appends to *out. */
OCT_MUST_CHECK int expr_join_eval(const expr_t *e, const expr_set_t *const *in, const double *fill,
                                  const expr_join_t *j, int64_t start_ms, int64_t end_ms,
                                  const char *name, expr_set_t *out, oct_errbuf_t *eb);

#endif
