/* expr.c -- the expression language of /api/query/exp (expr.h): a
 * precedence-climbing parser that emits a postfix program, and a stack
 * machine that runs it.
 *
 * Precedence, lowest first (JEXL's, docs/expressions.md section 2):
 *   ||   &&   == !=   < <= > >=   + -   * / %   unary - !
 * Binary operators are left-associative. The program is an array of
 * instructions; its deepest stack is computed while compiling, so
 * expr_eval needs no checks and, up to 32 slots, no allocation. */
#include "query/expr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"

typedef enum {
    OP_CONST,
    OP_VAR,
    OP_NEG,
    OP_NOT,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_EQ,
    OP_NE,
    OP_AND,
    OP_OR,
} op_t;

typedef struct {
    op_t op;
    size_t var;
    double k;
} insn_t;

struct expr {
    char *text;
    insn_t *prog;
    size_t n_prog;
    size_t depth; /* deepest stack the program reaches */
    char **vars;
    size_t n_vars;
};

typedef struct {
    const char *s;
    size_t pos;
    expr_t *e;
    size_t depth, max_depth; /* stack depth while emitting */
    oct_errbuf_t *eb;
    int rc;
    int nest; /* parentheses and unary operators open now */
} parser_t;

/* Deeper nesting is refused rather than recursed into without bound. */
#define EXPR_MAX_NEST 256

static int perr(parser_t *p, const char *why)
{
    if (!p->rc) p->rc = oct_err(p->eb, OCT_EPARSE, "%s at position %zu in [%s]", why, p->pos, p->s);
    return p->rc;
}

static void emit(parser_t *p, op_t op, size_t var, double k)
{
    expr_t *e = p->e;
    e->prog = xrealloc(e->prog, (e->n_prog + 1) * sizeof *e->prog);
    e->prog[e->n_prog++] = (insn_t){op, var, k};
    if (op == OP_CONST || op == OP_VAR) {
        if (++p->depth > p->max_depth) p->max_depth = p->depth;
    } else if (op != OP_NEG && op != OP_NOT) {
        p->depth--; /* a binary operator pops two, pushes one */
    }
}

static void skip_ws(parser_t *p)
{
    while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static size_t var_index(expr_t *e, const char *name, size_t len)
{
    for (size_t i = 0; i < e->n_vars; i++)
        if (strlen(e->vars[i]) == len && !memcmp(e->vars[i], name, len)) return i;
    e->vars = xrealloc(e->vars, (e->n_vars + 1) * sizeof *e->vars);
    char *v = xmalloc(len + 1);
    memcpy(v, name, len);
    v[len] = '\0';
    e->vars[e->n_vars] = v;
    return e->n_vars++;
}

static int parse_binary(parser_t *p, int min_prec);

static int parse_primary(parser_t *p);

static int parse_nested(parser_t *p, int paren)
{
    if (++p->nest > EXPR_MAX_NEST) return perr(p, "nested too deeply");
    int rc = paren ? parse_binary(p, 0) : parse_primary(p);
    p->nest--;
    return rc;
}

static int parse_primary(parser_t *p)
{
    skip_ws(p);
    const char *s = p->s;
    char c = s[p->pos];
    if (c == '(') {
        p->pos++;
        if (parse_nested(p, 1)) return p->rc;
        skip_ws(p);
        if (s[p->pos] != ')') return perr(p, "expected ')'");
        p->pos++;
        return 0;
    }
    if (c == '-' || c == '!') {
        p->pos++;
        if (parse_nested(p, 0)) return p->rc;
        emit(p, c == '-' ? OP_NEG : OP_NOT, 0, 0);
        return 0;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[p->pos + 1]))) {
        char *end;
        double k = strtod(s + p->pos, &end);
        if (isalpha((unsigned char)*end) || *end == '_')
            return perr(p, "a number runs into a name");
        p->pos = (size_t)(end - s);
        emit(p, OP_CONST, 0, k);
        return 0;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        size_t b = p->pos;
        while (isalnum((unsigned char)s[p->pos]) || s[p->pos] == '_')
            p->pos++;
        size_t save = p->pos;
        skip_ws(p);
        if (s[p->pos] == '(') return perr(p, "function calls are not part of the language");
        p->pos = save;
        emit(p, OP_VAR, var_index(p->e, s + b, p->pos - b), 0);
        return 0;
    }
    if (!c) return perr(p, "unexpected end of the expression");
    return perr(p, "unexpected character");
}

/* The binary operator at the cursor: its op, precedence (1 = ||) and
 * length; 0 if none. */
static int peek_op(const parser_t *p, op_t *op, size_t *len)
{
    const char *s = p->s + p->pos;
    static const struct {
        const char *t;
        op_t op;
        int prec;
    } ops[] = {
        {"||", OP_OR, 1}, {"&&", OP_AND, 2}, {"==", OP_EQ, 3}, {"!=", OP_NE, 3}, {"<=", OP_LE, 4},
        {">=", OP_GE, 4}, {"<", OP_LT, 4},   {">", OP_GT, 4},  {"+", OP_ADD, 5}, {"-", OP_SUB, 5},
        {"*", OP_MUL, 6}, {"/", OP_DIV, 6},  {"%", OP_MOD, 6},
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t l = strlen(ops[i].t);
        if (!strncmp(s, ops[i].t, l)) {
            *op = ops[i].op;
            *len = l;
            return ops[i].prec;
        }
    }
    return 0;
}

static int parse_binary(parser_t *p, int min_prec)
{
    if (parse_primary(p)) return p->rc;
    for (;;) {
        skip_ws(p);
        op_t op;
        size_t len;
        int prec = peek_op(p, &op, &len);
        if (!prec || prec <= min_prec) return 0;
        p->pos += len;
        if (parse_binary(p, prec)) return p->rc;
        emit(p, op, 0, 0);
    }
}

int expr_parse(const char *text, expr_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    expr_t *e = xcalloc(1, sizeof *e);
    e->text = xstrdup(text ? text : "");
    parser_t p = {e->text, 0, e, 0, 0, eb, 0, 0};
    if (!parse_binary(&p, 0)) {
        skip_ws(&p);
        char c = p.s[p.pos];
        if (c == '?' || c == ':')
            perr(&p, "the conditional operator ?: is not supported");
        else if (c == ')')
            perr(&p, "unbalanced ')'");
        else if (c)
            perr(&p, "unexpected character");
    }
    if (p.rc) {
        expr_free(e);
        return p.rc;
    }
    e->depth = p.max_depth;
    *out = e;
    return 0;
}

void expr_free(expr_t *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->n_vars; i++)
        free(e->vars[i]);
    free(e->vars);
    free(e->prog);
    free(e->text);
    free(e);
}

size_t expr_n_vars(const expr_t *e)
{
    return e->n_vars;
}

const char *expr_var(const expr_t *e, size_t i)
{
    return e->vars[i];
}

const char *expr_text(const expr_t *e)
{
    return e->text;
}

static int truthy(double v)
{
    return v != 0.0; /* NaN is true, as a non-zero number */
}

double expr_eval(const expr_t *e, const double *vals)
{
    /* zeroed: the compiler's depth bound proves every read follows a push,
     * but the static analyzer cannot see that */
    double small[32] = {0};
    double *st = e->depth <= 32 ? small : xcalloc(e->depth, sizeof *st);
    size_t sp = 0;
    for (size_t i = 0; i < e->n_prog; i++) {
        const insn_t *in = &e->prog[i];
        double b;
        switch (in->op) {
        case OP_CONST:
            st[sp++] = in->k;
            continue;
        case OP_VAR:
            st[sp++] = vals[in->var];
            continue;
        case OP_NEG:
            st[sp - 1] = -st[sp - 1];
            continue;
        case OP_NOT:
            st[sp - 1] = truthy(st[sp - 1]) ? 0.0 : 1.0;
            continue;
        default:
            break;
        }
        b = st[--sp];
        double *a = &st[sp - 1];
        switch (in->op) {
        case OP_ADD:
            *a += b;
            break;
        case OP_SUB:
            *a -= b;
            break;
        case OP_MUL:
            *a *= b;
            break;
        case OP_DIV: /* lenient JEXL: a division by zero is 0 */
            *a = b == 0.0 ? 0.0 : *a / b;
            break;
        case OP_MOD:
            *a = b == 0.0 ? 0.0 : fmod(*a, b);
            break;
        case OP_LT:
            *a = *a < b;
            break;
        case OP_LE:
            *a = *a <= b;
            break;
        case OP_GT:
            *a = *a > b;
            break;
        case OP_GE:
            *a = *a >= b;
            break;
        case OP_EQ:
            *a = *a == b;
            break;
        case OP_NE:
            *a = *a != b;
            break;
        case OP_AND:
            *a = truthy(*a) && truthy(b);
            break;
        case OP_OR:
            *a = truthy(*a) || truthy(b);
            break;
        default:
            break;
        }
    }
    double r = sp ? st[0] : NAN;
    if (st != small) free(st);
    return r;
}
