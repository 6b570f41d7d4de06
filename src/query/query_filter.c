/* query_filter.c -- OpenTSDB 2.4's tag-value filters (docs/query.md section 7):
 * literal_or, iliteral_or, not_literal_or, not_iliteral_or, wildcard,
 * iwildcard, regexp, not_key, and the legacy tag-map conversion.
 *
 * A filter is compiled once per query and then matched against the tag
 * value of every candidate series, so matching never allocates and never
 * copies: case-insensitive variants fold ASCII letters while comparing, and
 * literal lists are sorted once so a match is a binary search (lists may hold
 * thousands of literals: tsd.query.filter.expansion_limit is 4096).
 *
 * The matching rules are OpenTSDB's, quirks included, because users' queries
 * were written against them:
 *  - literal lists split on '|' with Java's String.split (trailing empty
 *    items dropped, inner ones kept);
 *  - wildcard: leading '*'s make an endsWith test, trailing '*'s a
 *    startsWith test, the parts between inner '*'s must be found with
 *    indexOf in order, but the search cursor advances only by the part's
 *    length, not to where it was found; a pattern with only inner stars is
 *    therefore not anchored ("a*b" matches "xaxb"); "*" alone matches any
 *    value;
 *  - regexp: PCRE2 in find (substring) mode, like Java's Matcher.find();
 *  - every filter except not_key fails when the series lacks the key;
 *    not_key passes exactly then.
 * Case folding is ASCII-only (Java lower-cases all of Unicode; tag values are
 * overwhelmingly ASCII, and folding UTF-8 properly would need tables). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "query/query.h"

/* ---- compiled forms ----------------------------------------------------- */

typedef struct {
    size_t n;
    char **lits; /* sorted (strcmp) for binary search; folded if fold */
    size_t *lens;
    int fold;
} lit_set_t;

typedef struct {
    int match_all;   /* the pattern was only stars */
    int has_prefix;  /* trailing star(s): tagv must start with comps[0] */
    int has_postfix; /* leading star(s): tagv must end with comps[n-1] */
    int fold;
    size_t n;
    char **comps;
    size_t *lens;
} wild_t;

static const char *const type_names[QUERY_FILTER_TYPE_COUNT] = {
    "literal_or", "iliteral_or", "not_literal_or", "not_iliteral_or",
    "wildcard",   "iwildcard",   "regexp",         "not_key",
};

static const char *const type_descriptions[QUERY_FILTER_TYPE_COUNT] = {
    "Matches series whose value for the tag key equals one of the given values exactly. "
    "Separate several values with a pipe (|). Case sensitive. Series without the tag key "
    "never match.",
    "Like literal_or, but letters are compared without regard to case: the value matches if "
    "it equals one of the pipe-separated values ignoring upper/lower case.",
    "The negation of literal_or: matches series whose value for the tag key is none of the "
    "pipe-separated values. Case sensitive. Series without the tag key are not selected, "
    "because every filtered tag key must be present.",
    "The negation of iliteral_or: matches series whose value is none of the pipe-separated "
    "values, compared without regard to case.",
    "Glob matching with the asterisk (*) as the wildcard: a leading * matches any prefix, a "
    "trailing * any suffix, and the text between inner asterisks must appear in order. At "
    "least one * is required; * alone matches every value of the tag key. Case sensitive.",
    "Like wildcard, but letters are compared without regard to case. A tag value containing "
    "an asterisk in the legacy tags map (host=web*) becomes this filter.",
    "Matches series whose value for the tag key contains a match of the given regular "
    "expression (PCRE2 syntax, unanchored: use ^ and $ to match the whole value). Braces "
    "inside a URL query must be percent-encoded.",
    "Matches only series that do not have the tag key at all, whatever its value would be. "
    "The filter expression must be empty.",
};

static const char *const type_examples[QUERY_FILTER_TYPE_COUNT] = {
    "dc=literal_or(lga), dc=literal_or(lga|sjc|ams)  "
    "{\"type\":\"literal_or\",\"tagk\":\"dc\",\"filter\":\"lga|sjc\",\"groupBy\":true}",
    "env=iliteral_or(PROD), env=iliteral_or(prod|Staging)  "
    "{\"type\":\"iliteral_or\",\"tagk\":\"env\",\"filter\":\"prod|staging\",\"groupBy\":false}",
    "dc=not_literal_or(lga), dc=not_literal_or(lga|sjc)  "
    "{\"type\":\"not_literal_or\",\"tagk\":\"dc\",\"filter\":\"lga|sjc\",\"groupBy\":false}",
    "env=not_iliteral_or(TEST), env=not_iliteral_or(test|dev)  "
    "{\"type\":\"not_iliteral_or\",\"tagk\":\"env\",\"filter\":\"test|dev\",\"groupBy\":false}",
    "host=wildcard(db*), host=wildcard(*.example.com), host=wildcard(*)  "
    "{\"type\":\"wildcard\",\"tagk\":\"host\",\"filter\":\"db*\",\"groupBy\":true}",
    "host=iwildcard(DB*), host=iwildcard(*.Example.com)  "
    "{\"type\":\"iwildcard\",\"tagk\":\"host\",\"filter\":\"db*\",\"groupBy\":false}",
    "host=regexp(^db[0-9]+$), host=regexp(prod|stage)  "
    "{\"type\":\"regexp\",\"tagk\":\"host\",\"filter\":\"^db[0-9]+$\",\"groupBy\":false}",
    "owner=not_key()  "
    "{\"type\":\"not_key\",\"tagk\":\"owner\",\"filter\":\"\",\"groupBy\":false}",
};

const char *query_filter_type_name(query_filter_type_t t)
{
    return (unsigned)t < QUERY_FILTER_TYPE_COUNT ? type_names[t] : "unknown";
}

const char *query_filter_type_description(query_filter_type_t t)
{
    return (unsigned)t < QUERY_FILTER_TYPE_COUNT ? type_descriptions[t] : "";
}

const char *query_filter_type_examples(query_filter_type_t t)
{
    return (unsigned)t < QUERY_FILTER_TYPE_COUNT ? type_examples[t] : "";
}

/* ---- ASCII case folding -------------------------------------------------- */

static inline unsigned char fold_c(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static void fold_str(char *s)
{
    for (; *s; s++)
        *s = (char)fold_c((unsigned char)*s);
}

/* Compares v[0..vlen) with NUL-free lit[0..llen) in strcmp order, folding v
 * when fold (lit is already folded). */
static int cmp_val_lit(const char *v, size_t vlen, const char *lit, size_t llen, int fold)
{
    size_t n = vlen < llen ? vlen : llen;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)v[i], b = (unsigned char)lit[i];
        if (fold) a = fold_c(a);
        if (a != b) return a < b ? -1 : 1;
    }
    return (vlen > llen) - (vlen < llen);
}

static int eq_at(const char *v, size_t pos, const char *p, size_t plen, int fold)
{
    for (size_t i = 0; i < plen; i++) {
        unsigned char a = (unsigned char)v[pos + i];
        if (fold) a = fold_c(a);
        if (a != (unsigned char)p[i]) return 0;
    }
    return 1;
}

/* Java's String.indexOf(needle, from) on v[0..vlen): position or -1. */
static long index_of(const char *v, size_t vlen, const char *p, size_t plen, size_t from, int fold)
{
    if (from >= vlen) return plen == 0 ? (long)vlen : -1;
    if (plen == 0) return (long)from;
    for (size_t i = from; i + plen <= vlen; i++)
        if (eq_at(v, i, p, plen, fold)) return (long)i;
    return -1;
}

/* ---- literal sets -------------------------------------------------------- */

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits on '|' as Java's String.split("\\|") does: trailing empty items are
 * dropped (so "a|" is {"a"} and "||" is empty), inner ones kept. */
static lit_set_t *lit_set_build(const char *expr, int fold)
{
    lit_set_t *ls = xcalloc(1, sizeof(*ls));
    ls->fold = fold;
    size_t cap = 1;
    for (const char *p = expr; *p; p++)
        cap += *p == '|';
    ls->lits = xcalloc(cap, sizeof(char *));
    const char *start = expr;
    for (const char *p = expr;; p++) {
        if (*p == '|' || *p == '\0') {
            size_t n = (size_t)(p - start);
            char *s = xmalloc(n + 1);
            memcpy(s, start, n);
            s[n] = '\0';
            if (fold) fold_str(s);
            ls->lits[ls->n++] = s;
            if (*p == '\0') break;
            start = p + 1;
        }
    }
    while (ls->n > 0 && ls->lits[ls->n - 1][0] == '\0')
        free(ls->lits[--ls->n]);
    qsort(ls->lits, ls->n, sizeof(char *), cmp_cstr);
    /* Duplicates are harmless for a binary search; keep them (a set in Java). */
    ls->lens = xcalloc(ls->n ? ls->n : 1, sizeof(size_t));
    for (size_t i = 0; i < ls->n; i++)
        ls->lens[i] = strlen(ls->lits[i]);
    return ls;
}

static void lit_set_free(lit_set_t *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free(ls->lits[i]);
    free(ls->lits);
    free(ls->lens);
    free(ls);
}

static int lit_set_has(const lit_set_t *ls, const char *v, size_t len)
{
    size_t lo = 0, hi = ls->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_val_lit(v, len, ls->lits[mid], ls->lens[mid], ls->fold);
        if (c == 0) return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* ---- wildcards ------------------------------------------------------------ */

static wild_t *wild_build(const char *expr, int fold)
{
    wild_t *w = xcalloc(1, sizeof(*w));
    w->fold = fold;
    char *a = xstrdup(expr);
    if (fold) fold_str(a);
    size_t len = strlen(a);
    char *s = a;
    /* Strip leading and trailing stars, keeping at least one character. */
    if (s[0] == '*') {
        w->has_postfix = 1;
        while (s[0] == '*' && len >= 2)
            s++, len--;
    }
    if (s[len - 1] == '*') {
        w->has_prefix = 1;
        while (s[len - 1] == '*' && len >= 2)
            s[--len] = '\0';
    }
    if (len == 1 && s[0] == '*') w->match_all = 1;
    size_t cap = 1;
    if (strchr(s, '*') && s[0] != '*')
        for (const char *p = s; *p; p++)
            cap += *p == '*';
    w->comps = xcalloc(cap, sizeof(char *));
    w->lens = xcalloc(cap, sizeof(size_t));
    if (cap == 1) {
        w->comps[0] = xstrdup(s);
        w->lens[0] = len;
        w->n = 1;
    } else {
        const char *start = s;
        for (const char *p = s;; p++) {
            if (*p == '*' || *p == '\0') {
                size_t n = (size_t)(p - start);
                w->comps[w->n] = xmalloc(n + 1);
                memcpy(w->comps[w->n], start, n);
                w->comps[w->n][n] = '\0';
                w->lens[w->n++] = n;
                if (*p == '\0') break;
                start = p + 1;
            }
        }
    }
    free(a);
    return w;
}

static void wild_free(wild_t *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->comps[i]);
    free(w->comps);
    free(w->lens);
    free(w);
}

static int wild_match(const wild_t *w, const char *v, size_t len)
{
    if (w->match_all) return 1;
    const char *last = w->comps[w->n - 1];
    size_t last_len = w->lens[w->n - 1];
    if (w->has_postfix && !w->has_prefix &&
        !(last_len <= len && eq_at(v, len - last_len, last, last_len, w->fold)))
        return 0;
    if (w->has_prefix && !w->has_postfix &&
        !(w->lens[0] <= len && eq_at(v, 0, w->comps[0], w->lens[0], w->fold)))
        return 0;
    size_t idx = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (index_of(v, len, w->comps[i], w->lens[i], idx, w->fold) < 0) return 0;
        idx += w->lens[i]; /* OpenTSDB's cursor: by length, not by position */
    }
    return 1;
}

/* ---- public API ------------------------------------------------------------ */

static int type_from_name(const char *name, size_t len, query_filter_type_t *out)
{
    for (int t = 0; t < QUERY_FILTER_TYPE_COUNT; t++) {
        const char *n = type_names[t];
        if (strlen(n) != len) continue;
        size_t i = 0;
        while (i < len && fold_c((unsigned char)name[i]) == (unsigned char)n[i])
            i++;
        if (i == len) {
            *out = (query_filter_type_t)t;
            return 0;
        }
    }
    return -1;
}

/* "type(expr)" -> type span and expr copy (OpenTSDB's stripParentheses). */
static int split_type_expr(const char *s, const char **type, size_t *type_len, char **expr,
                           oct_errbuf_t *eb)
{
    size_t len = strlen(s);
    if (len == 0) return oct_err(eb, OCT_EPARSE, "Filter string cannot be null or empty");
    if (s[len - 1] != ')') return oct_err(eb, OCT_EPARSE, "Filter must end with a ')': %s", s);
    const char *paren = strchr(s, '(');
    if (!paren) return oct_err(eb, OCT_EPARSE, "Filter must include a '(': %s", s);
    *type = s;
    *type_len = (size_t)(paren - s);
    size_t n = len - 1 - (size_t)(paren + 1 - s);
    *expr = xmalloc(n + 1);
    memcpy(*expr, paren + 1, n);
    (*expr)[n] = '\0';
    return 0;
}

static int filter_build(query_filter_t *f, query_filter_type_t t, const char *tagk,
                        const char *expr, int group_by, oct_errbuf_t *eb)
{
    memset(f, 0, sizeof(*f));
    if (!tagk || !*tagk) return oct_err(eb, OCT_EPARSE, "The tagk cannot be null or empty");
    if (!expr) expr = "";
    void *compiled = NULL;
    switch (t) {
    case QUERY_FILTER_LITERAL_OR:
    case QUERY_FILTER_ILITERAL_OR:
    case QUERY_FILTER_NOT_LITERAL_OR:
    case QUERY_FILTER_NOT_ILITERAL_OR:
        if (!*expr) return oct_err(eb, OCT_EPARSE, "Filter cannot be null or empty");
        if (!strcmp(expr, "|"))
            return oct_err(eb, OCT_EPARSE, "Filter must contain more than just a pipe");
        compiled =
            lit_set_build(expr, t == QUERY_FILTER_ILITERAL_OR || t == QUERY_FILTER_NOT_ILITERAL_OR);
        break;
    case QUERY_FILTER_WILDCARD:
    case QUERY_FILTER_IWILDCARD:
        if (!*expr) return oct_err(eb, OCT_EPARSE, "Filter cannot be null or empty");
        if (!strchr(expr, '*')) return oct_err(eb, OCT_EPARSE, "Filter must contain an asterisk");
        compiled = wild_build(expr, t == QUERY_FILTER_IWILDCARD);
        break;
    case QUERY_FILTER_REGEXP: {
        if (!*expr) return oct_err(eb, OCT_EPARSE, "Filter cannot be null or empty");
        int errcode;
        PCRE2_SIZE erroff;
        /* UTF mode: tag values are UTF-8; invalid sequences in a value just
         * fail to match instead of erroring. */
        pcre2_code *re =
            pcre2_compile((PCRE2_SPTR)expr, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &errcode, &erroff, NULL);
        if (!re) {
            PCRE2_UCHAR msg[256];
            if (pcre2_get_error_message(errcode, msg, sizeof(msg)) < 0)
                strcpy((char *)msg, "unknown error");
            return oct_err(eb, OCT_EPARSE, "Invalid regular expression '%s': %s at offset %zu",
                           expr, (const char *)msg, (size_t)erroff);
        }
        (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* optional speed-up */
        compiled = re;
        break;
    }
    case QUERY_FILTER_NOT_KEY:
        if (*expr)
            return oct_err(eb, OCT_EPARSE, "The filter must be empty for the not_key filter");
        break;
    default:
        return oct_err(eb, OCT_EPARSE, "Could not find a tag value filter of the type: %d", (int)t);
    }
    f->type = t;
    f->tagk = xstrdup(tagk);
    f->expr = xstrdup(expr);
    f->group_by = group_by ? 1 : 0;
    f->compiled = compiled;
    return 0;
}

int query_filter_init(query_filter_t *f, const char *type, const char *tagk, const char *expr,
                      int group_by, oct_errbuf_t *eb)
{
    memset(f, 0, sizeof(*f));
    char *owned = NULL;
    size_t type_len;
    if (!type || !*type) {
        /* The text form: type(expr) in 'expr'. */
        if (!expr || !*expr || !strchr(expr, '('))
            return oct_err(eb, OCT_EPARSE, "The filter type cannot be null or empty");
        int rc = split_type_expr(expr, &type, &type_len, &owned, eb);
        if (rc < 0) return rc;
        expr = owned;
    } else {
        type_len = strlen(type);
    }
    query_filter_type_t t;
    if (type_from_name(type, type_len, &t) < 0) {
        int rc = oct_err(eb, OCT_EPARSE, "Could not find a tag value filter of the type: %.*s",
                         (int)type_len, type);
        free(owned);
        return rc;
    }
    int rc = filter_build(f, t, tagk, expr, group_by, eb);
    free(owned);
    return rc;
}

int query_filter_from_tag(query_filter_t *f, const char *tagk, const char *value, int group_by,
                          oct_errbuf_t *eb)
{
    memset(f, 0, sizeof(*f));
    if (!tagk || !*tagk) return oct_err(eb, OCT_EPARSE, "Tagk cannot be null or empty");
    if (!value || !*value) return oct_err(eb, OCT_EPARSE, "Filter cannot be null or empty");
    if (!strcmp(value, "*")) return filter_build(f, QUERY_FILTER_WILDCARD, tagk, "*", group_by, eb);
    if (strchr(value, '(')) {
        const char *type;
        size_t type_len;
        char *expr;
        int rc = split_type_expr(value, &type, &type_len, &expr, eb);
        if (rc < 0) return rc;
        query_filter_type_t t;
        if (type_from_name(type, type_len, &t) < 0) {
            rc = oct_err(eb, OCT_EPARSE, "Could not find a tag value filter of the type: %.*s",
                         (int)type_len, type);
        } else {
            rc = filter_build(f, t, tagk, expr, group_by, eb);
        }
        free(expr);
        return rc;
    }
    /* OpenTSDB builds a case-insensitive wildcard for a bare value with a star. */
    if (strchr(value, '*'))
        return filter_build(f, QUERY_FILTER_IWILDCARD, tagk, value, group_by, eb);
    return filter_build(f, QUERY_FILTER_LITERAL_OR, tagk, value, group_by, eb);
}

void query_filter_free(query_filter_t *f)
{
    if (!f) return;
    if (f->compiled) {
        switch (f->type) {
        case QUERY_FILTER_LITERAL_OR:
        case QUERY_FILTER_ILITERAL_OR:
        case QUERY_FILTER_NOT_LITERAL_OR:
        case QUERY_FILTER_NOT_ILITERAL_OR:
            lit_set_free(f->compiled);
            break;
        case QUERY_FILTER_WILDCARD:
        case QUERY_FILTER_IWILDCARD:
            wild_free(f->compiled);
            break;
        case QUERY_FILTER_REGEXP:
            pcre2_code_free(f->compiled);
            break;
        default:
            break;
        }
    }
    free(f->tagk);
    free(f->expr);
    memset(f, 0, sizeof(*f));
}

static int regexp_find(const pcre2_code *re, const char *v, size_t len)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) return 0;
    int rc = pcre2_match(re, (PCRE2_SPTR)v, len, 0, 0, md, NULL);
    pcre2_match_data_free(md);
    return rc >= 0;
}

int query_filter_match(const query_filter_t *f, const char *v, size_t len)
{
    if (f->type == QUERY_FILTER_NOT_KEY) return v == NULL;
    if (!v) return 0;
    switch (f->type) {
    case QUERY_FILTER_LITERAL_OR:
    case QUERY_FILTER_ILITERAL_OR:
        return lit_set_has(f->compiled, v, len);
    case QUERY_FILTER_NOT_LITERAL_OR:
    case QUERY_FILTER_NOT_ILITERAL_OR:
        return !lit_set_has(f->compiled, v, len);
    case QUERY_FILTER_WILDCARD:
    case QUERY_FILTER_IWILDCARD:
        return wild_match(f->compiled, v, len);
    case QUERY_FILTER_REGEXP:
        return regexp_find(f->compiled, v, len);
    default:
        return 0;
    }
}
