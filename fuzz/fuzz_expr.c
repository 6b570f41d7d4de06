/* fuzz_expr.c -- libFuzzer target for the two expression grammars:
 * /api/query/exp's language (query/expr.h) and gexp's function calls
 * (query/gexp.h).
 *
 * The first byte picks the grammar (even: expr, odd: gexp); the rest is the
 * text (cut at the first NUL). Properties, whatever the outcome:
 *   - a failure is OCT_EPARSE with a non-empty message and no result;
 *   - an expression that parses evaluates (every variable 1.5) twice to
 *     the same value, has distinct variable names, and its text reads back;
 *   - a gexp tree that parses has a call at the root, and every call has at
 *     least one argument and a non-empty name;
 *   - expr_free / gexp_free release everything (LeakSanitizer). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/expr.h"
#include "query/gexp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_tree(const gexp_node_t *n)
{
    if (!n->text || !n->text[0]) abort();
    if (n->kind == GEXP_CALL && n->n_args == 0) abort();
    if (n->kind != GEXP_CALL && n->n_args) abort();
    for (size_t i = 0; i < n->n_args; i++)
        check_tree(n->args[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    /* not strndup: the input need not hold a NUL, and ASan's strndup reads past size */
    char *s = malloc(size);
    if (!s) return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    oct_errbuf_t eb;
    eb.msg[0] = '\0';
    if (data[0] % 2 == 0) {
        expr_t *e = (expr_t *)1;
        int rc = expr_parse(s, &e, &eb);
        if (rc) {
            if (rc != OCT_EPARSE || e || !eb.msg[0]) abort();
        } else {
            size_t nv = expr_n_vars(e);
            double *v = malloc((nv + 1) * sizeof *v);
            for (size_t i = 0; i < nv; i++) {
                v[i] = 1.5;
                for (size_t j = 0; j < i; j++)
                    if (!strcmp(expr_var(e, i), expr_var(e, j))) abort();
            }
            double a = expr_eval(e, v), b = expr_eval(e, v);
            if (!(a == b || (isnan(a) && isnan(b)))) abort();
            if (strcmp(expr_text(e), s)) abort();
            free(v);
            expr_free(e);
        }
    } else {
        gexp_node_t *n = (gexp_node_t *)1;
        int rc = gexp_parse(s, &n, &eb);
        if (rc) {
            if (rc != OCT_EPARSE || n || !eb.msg[0]) abort();
        } else {
            if (n->kind != GEXP_CALL) abort();
            check_tree(n);
            gexp_free(n);
        }
    }
    free(s);
    return 0;
}
