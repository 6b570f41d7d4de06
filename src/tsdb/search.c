/* search.c -- the plugin-free search of search.h: a query parsed into terms,
 * candidates from the series index (every series of every metric whose name
 * passes the metric terms) or from the UID registry, kept when every term
 * holds, sorted, then paged. Paging after sorting is what makes startIndex
 * stable between calls. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/xmalloc.h"
#include "tsdb/read.h"
#include "tsdb/search.h"
#include "tsdb/tsdb_int.h"
#include "uid/uid.h"

enum { F_METRIC, F_TAGK, F_TAGV, F_TAG, F_TYPE };

typedef struct {
    int field;
    const char *key; /* F_TAG: the tag key */
    const char *pat;
    codec_uid_kind_t kind; /* F_TYPE */
} term_t;

typedef struct {
    char *buf; /* the query's copy; terms point into it */
    term_t *t;
    size_t n;
} query_t;

static int glob_match(const char *p, const uint8_t *s, size_t n)
{
    return tsdb__glob_match(p, s, n, 0);
}

/* '*' matches any run of bytes (also none); everything else itself. */
int tsdb__glob_match(const char *p, const uint8_t *s, size_t n, int icase)
{
    const char *star = NULL;
    size_t i = 0, mark = 0;
    while (i < n) {
        if (*p == '*') {
            star = p++;
            mark = i;
        } else if (*p && ((uint8_t)*p == s[i] ||
                          (icase && tolower((unsigned char)*p) == tolower(s[i])))) {
            p++;
            i++;
        } else if (star) {
            p = star + 1;
            i = ++mark;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return !*p;
}

int tsdb__search_split(const char *q, char **buf, tsdb__word_t **words, size_t *n, oct_errbuf_t *eb)
{
    size_t ql = strlen(q);
    *buf = xmalloc(ql + 1);
    memcpy(*buf, q, ql + 1);
    *words = xcalloc(ql / 2 + 1, sizeof **words);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(*buf, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (!strcmp(tok, "AND") || !strcmp(tok, "&&")) continue;
        if (!strcmp(tok, "OR") || !strcmp(tok, "NOT") || !strcmp(tok, "||"))
            return oct_err(eb, OCT_EPARSE, "Unsupported search operator '%s': terms are ANDed",
                           tok);
        if (tok[0] == '-' || tok[0] == '+' || strpbrk(tok, "()\"'?~^[]{}\\!|&"))
            return oct_err(eb, OCT_EPARSE,
                           "Unsupported search term '%s': use name, field:name or a '*' glob", tok);
        tsdb__word_t *w = &(*words)[(*n)++];
        char *colon = strchr(tok, ':');
        w->field = NULL;
        w->pat = tok;
        if (!colon) continue;
        *colon = '\0';
        w->field = tok;
        w->pat = colon + 1;
        if (!*w->pat || !*tok || strchr(w->pat, ':'))
            return oct_err(eb, OCT_EPARSE, "Unsupported search term '%s:%s'", tok, w->pat);
    }
    return 0;
}

static int parse(const char *q, int uids, query_t *out, oct_errbuf_t *eb)
{
    tsdb__word_t *words;
    size_t nw;
    int rc = tsdb__search_split(q, &out->buf, &words, &nw, eb);
    out->t = xcalloc(nw + 1, sizeof *out->t);
    out->n = 0;
    for (size_t i = 0; !rc && i < nw; i++) {
        term_t *t = &out->t[out->n++];
        const char *tok = words[i].field;
        t->pat = words[i].pat;
        if (!tok || !strcmp(tok, "name") || (!uids && !strcmp(tok, "metric"))) {
            t->field = F_METRIC;
        } else if (uids && !strcmp(tok, "type")) {
            t->field = F_TYPE;
            if (codec_uid_kind_parse(t->pat, strlen(t->pat), &t->kind, eb))
                rc =
                    oct_err(eb, OCT_EPARSE, "Unknown UID type '%s' (metric, tagk or tagv)", t->pat);
        } else if (uids) {
            rc = oct_err(eb, OCT_EPARSE, "Unsupported uidmeta search field '%s' (name or type)",
                         tok);
        } else if (!strcmp(tok, "tagk")) {
            t->field = F_TAGK;
        } else if (!strcmp(tok, "tagv")) {
            t->field = F_TAGV;
        } else if (strchr(tok, '*')) {
            rc = oct_err(eb, OCT_EPARSE, "Unsupported search field '%s': no '*' in a tag key", tok);
        } else {
            t->field = F_TAG;
            t->key = tok;
        }
    }
    free(words);
    return rc;
}

/* Room for one more element in a growing array *v of *cap elements. */
static void *grow(void *v, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap) return v;
    *cap = *cap ? 2 * *cap : 64;
    return xrealloc(v, *cap * elem);
}

static void query_free(query_t *q)
{
    free(q->buf);
    free(q->t);
}

static int match_field(const query_t *q, int field, const uint8_t *name, size_t len)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->t[i].field == field && !glob_match(q->t[i].pat, name, len)) return 0;
    return 1;
}

/* ---- series ------------------------------------------------------------- */

typedef struct {
    uint8_t *t;
    size_t len;
} blob_t;

typedef struct {
    tsdb_t *db;
    const query_t *q;
    int has_tag_terms;
    blob_t *v;
    size_t n, cap;
    uint64_t *metrics;
    size_t n_metrics, cap_metrics;
    int rc;
    oct_errbuf_t *eb;
} series_state_t;

static int metric_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    series_state_t *s = ctx;
    if (!match_field(s->q, F_METRIC, name, len)) return 0;
    s->metrics = grow(s->metrics, s->n_metrics, &s->cap_metrics, sizeof *s->metrics);
    s->metrics[s->n_metrics++] = id;
    return 0;
}

/* Does every tag term hold for the pairs of tsuid? 1, 0, or an error. */
static int tags_match(series_state_t *s, const uint8_t *tsuid, size_t len)
{
    const tsdb_layout_t *lay = tsdb_layout(s->db);
    unsigned mw = lay->uid_width[CODEC_UID_METRIC], kw = lay->uid_width[CODEC_UID_TAGK],
             vw = lay->uid_width[CODEC_UID_TAGV];
    uid_registry_t *u = tsdb_uids(s->db);
    for (size_t i = 0; i < s->q->n; i++) {
        const term_t *t = &s->q->t[i];
        if (t->field == F_METRIC) continue;
        int ok = 0;
        for (size_t off = mw; off + kw + vw <= len && !ok; off += kw + vw) {
            static _Thread_local uint8_t kn[UID_NAME_MAX], vn[UID_NAME_MAX];
            size_t kl = 0, vl = 0;
            int rc;
            if (t->field != F_TAGV) {
                rc = uid_get_name(u, CODEC_UID_TAGK, codec_uid_decode(tsuid + off, kw), kn,
                                  sizeof kn, &kl, s->eb);
                if (rc) return rc;
            }
            if (t->field != F_TAGK) {
                rc = uid_get_name(u, CODEC_UID_TAGV, codec_uid_decode(tsuid + off + kw, vw), vn,
                                  sizeof vn, &vl, s->eb);
                if (rc) return rc;
            }
            if (t->field == F_TAGK)
                ok = glob_match(t->pat, kn, kl);
            else if (t->field == F_TAGV)
                ok = glob_match(t->pat, vn, vl);
            else
                ok = kl == strlen(t->key) && !memcmp(kn, t->key, kl) && glob_match(t->pat, vn, vl);
        }
        if (!ok) return 0;
    }
    return 1;
}

static int series_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    series_state_t *s = ctx;
    int m = tags_match(s, tsuid, len);
    if (m < 0) {
        s->rc = m;
        return 1;
    }
    if (!m) return 0;
    s->v = grow(s->v, s->n, &s->cap, sizeof *s->v);
    s->v[s->n].t = xmalloc(len);
    memcpy(s->v[s->n].t, tsuid, len);
    s->v[s->n++].len = len;
    return 0;
}

static int blob_cmp(const void *a, const void *b)
{
    const blob_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(x->t, x->len), oct_slice(y->t, y->len));
}

int tsdb_search_series(tsdb_t *db, const char *query, size_t start, size_t limit,
                       tsdb_search_series_fn fn, void *ctx, size_t *total, oct_errbuf_t *eb)
{
    *total = 0;
    query_t q;
    int rc = parse(query, 0, &q, eb);
    series_state_t s = {.db = db, .q = &q, .eb = eb};
    if (!rc) rc = uid_foreach(tsdb_uids(db), CODEC_UID_METRIC, metric_cb, &s, eb);
    for (size_t i = 0; !rc && i < s.n_metrics; i++) {
        tsdb_series_find(db, s.metrics[i], 0, 0, series_cb, &s);
        rc = s.rc;
    }
    if (!rc) {
        /* the index walks each metric in TSUID order; metrics came in name order */
        if (s.n > 1) qsort(s.v, s.n, sizeof *s.v, blob_cmp);
        *total = s.n;
        for (size_t i = start; i < s.n && (!limit || i - start < limit) && !rc; i++)
            rc = fn(ctx, s.v[i].t, s.v[i].len);
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i].t);
    free(s.v);
    free(s.metrics);
    query_free(&q);
    return rc;
}

/* ---- UIDs --------------------------------------------------------------- */

typedef struct {
    codec_uid_kind_t kind;
    uint64_t id;
    uint8_t *name;
    size_t len;
} uid_hit_t;

typedef struct {
    const query_t *q;
    codec_uid_kind_t kind;
    uid_hit_t *v;
    size_t n, cap;
} uid_state_t;

static int uid_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    uid_state_t *s = ctx;
    if (!match_field(s->q, F_METRIC, name, len)) return 0;
    s->v = grow(s->v, s->n, &s->cap, sizeof *s->v);
    uid_hit_t *h = &s->v[s->n++];
    h->kind = s->kind;
    h->id = id;
    h->len = len;
    h->name = xmalloc(len ? len : 1);
    memcpy(h->name, name, len);
    return 0;
}

int tsdb_search_uids(tsdb_t *db, const char *query, size_t start, size_t limit,
                     tsdb_search_uid_fn fn, void *ctx, size_t *total, oct_errbuf_t *eb)
{
    *total = 0;
    query_t q;
    int rc = parse(query, 1, &q, eb);
    uid_state_t s = {.q = &q};
    for (int k = 0; !rc && k < CODEC_UID_N_KINDS; k++) {
        int want = 1;
        for (size_t i = 0; i < q.n; i++)
            if (q.t[i].field == F_TYPE && q.t[i].kind != (codec_uid_kind_t)k) want = 0;
        if (!want) continue;
        s.kind = (codec_uid_kind_t)k;
        rc = uid_foreach(tsdb_uids(db), s.kind, uid_cb, &s, eb);
    }
    if (!rc) {
        *total = s.n; /* already in kind, then name order */
        for (size_t i = start; i < s.n && (!limit || i - start < limit) && !rc; i++)
            rc = fn(ctx, s.v[i].kind, s.v[i].id, s.v[i].name, s.v[i].len);
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.v[i].name);
    free(s.v);
    query_free(&q);
    return rc;
}
