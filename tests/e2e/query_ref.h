/* query_ref.h -- an independent reference model of OpenTSDB 2.4's /api/query
 * semantics for the e2e query tests (test_query_*.c), plus the HTTP and JSON
 * helpers that write the model's data set into the real daemon and compare
 * what the daemon answers with what the model computes.
 *
 * Design: the model is deliberately brute force and shares nothing with
 * src/query: series are plain arrays, every step is a loop over all points,
 * filters use fnmatch(3) and POSIX regex instead of the daemon's matchers,
 * and the arithmetic follows docs/query.md (sections 1 and 4-8) and the team's
 * decisions written down in src/query/query.h: integer avg/dev/percentiles
 * and LERP are exact (an integer only when exactly integral), NaN is skipped
 * by every aggregator, ep*r3/ep*r7 use their estimators on doubles, 0all
 * includes `end`, a series contributes only between its first and last
 * point. Calendar downsampling is not modelled: those tests use hand-computed
 * expectations.
 *
 * Comparisons: integers exactly (the JSON token must be an integer), doubles
 * to 1e-9 relative; a NaN result is "NaN", or null when the sub-query's fill
 * policy is `null` (HttpJsonSerializer). Mismatches are printed and counted
 * in qr_failures so that one run reports every failing case; each test
 * asserts qr_failures == 0 at its end.
 *
 * Include after cmocka.h and testutil.h. */
#ifndef OCT_TESTS_E2E_QUERY_REF_H
#define OCT_TESTS_E2E_QUERY_REF_H

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "common/strbuf.h"

#define QR_MAXT 8
#define QR_MAXS 512
#define QR_NAME 48

/* ---- data ----------------------------------------------------------------- */

typedef struct {
    int64_t ts; /* ms */
    int is_int;
    int64_t i;
    double f; /* when !is_int; NaN for a nan/null fill */
    int wms;  /* written with a millisecond timestamp */
} qr_dp_t;

typedef struct {
    char metric[QR_NAME];
    int nt;
    char tk[QR_MAXT][QR_NAME], tv[QR_MAXT][QR_NAME];
    qr_dp_t *pts;
    size_t n, cap;
} qr_series_t;

typedef struct {
    qr_series_t s[QR_MAXS];
    int n;
} qr_db_t;

static int qr_failures;

static inline void qr_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void qr_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "QUERY MISMATCH: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    qr_failures++;
}

/* A new series; tags "k=v,k2=v2" (may be ""). */
static inline qr_series_t *qr_series(qr_db_t *db, const char *metric, const char *tags)
{
    if (db->n >= QR_MAXS) fail_msg("too many series");
    qr_series_t *s = &db->s[db->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->metric, sizeof s->metric, "%s", metric);
    const char *p = tags;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq) fail_msg("bad tags %s", tags);
        snprintf(s->tk[s->nt], QR_NAME, "%.*s", (int)(eq - p), p);
        snprintf(s->tv[s->nt], QR_NAME, "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
        s->nt++;
        p = comma ? comma + 1 : NULL;
    }
    return s;
}

static inline void qr_add(qr_series_t *s, qr_dp_t d)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->pts = realloc(s->pts, s->cap * sizeof *s->pts);
    }
    /* keep sorted by time (points may be added out of order) */
    size_t k = s->n++;
    while (k > 0 && s->pts[k - 1].ts > d.ts) {
        s->pts[k] = s->pts[k - 1];
        k--;
    }
    s->pts[k] = d;
}

/* Integer point at ts seconds. */
static inline void qr_i(qr_series_t *s, int64_t ts_s, int64_t v)
{
    qr_add(s, (qr_dp_t){.ts = ts_s * 1000, .is_int = 1, .i = v});
}
/* Double point at ts seconds (use values exact in float32). */
static inline void qr_f(qr_series_t *s, int64_t ts_s, double v)
{
    qr_add(s, (qr_dp_t){.ts = ts_s * 1000, .f = v});
}
/* Points written with a millisecond timestamp. */
static inline void qr_i_ms(qr_series_t *s, int64_t ts_ms, int64_t v)
{
    qr_add(s, (qr_dp_t){.ts = ts_ms, .is_int = 1, .i = v, .wms = 1});
}
static inline void qr_f_ms(qr_series_t *s, int64_t ts_ms, double v)
{
    qr_add(s, (qr_dp_t){.ts = ts_ms, .f = v, .wms = 1});
}

static inline void qr_db_free(qr_db_t *db)
{
    for (int i = 0; i < db->n; i++)
        free(db->s[i].pts);
    db->n = 0;
}

static inline const char *qr_tag(const qr_series_t *s, const char *k)
{
    for (int i = 0; i < s->nt; i++)
        if (!strcmp(s->tk[i], k)) return s->tv[i];
    return NULL;
}

/* ---- HTTP ------------------------------------------------------------------ */

typedef struct {
    int status;
    char *body;
    json_arena_t arena;
    json_value_t *v; /* NULL if the body is not JSON */
} qr_resp_t;

static inline void qr_resp_free(qr_resp_t *r)
{
    free(r->body);
    json_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

static inline void qr_req(const tu_tsd_t *t, const char *method, const char *target,
                          const char *body, qr_resp_t *r)
{
    memset(r, 0, sizeof *r);
    r->status = tu_http(t->port, method, target, body ? "Content-Type: application/json\r\n" : NULL,
                        body, body ? strlen(body) : 0, &r->body, NULL);
    if (!r->body) r->body = calloc(1, 1);
    oct_errbuf_t eb;
    if (json_parse(&r->arena, r->body, strlen(r->body), JSON_ALLOW_NONFINITE, &r->v, &eb))
        r->v = NULL;
}

/* Writes every series of db, one /api/put per series in db order, so that
 * tag values get their UIDs (and series their TSUID order) in that order. */
static inline void qr_put_db(const tu_tsd_t *t, const qr_db_t *db)
{
    for (int si = 0; si < db->n; si++) {
        const qr_series_t *s = &db->s[si];
        oct_strbuf_t sb = OCT_STRBUF_INIT;
        oct_strbuf_puts(&sb, "[");
        for (size_t k = 0; k < s->n; k++) {
            const qr_dp_t *d = &s->pts[k];
            if (k) oct_strbuf_puts(&sb, ",");
            oct_strbuf_printf(&sb,
                              "{\"metric\":\"%s\",\"timestamp\":%" PRId64 ",\"value\":", s->metric,
                              d->wms ? d->ts : d->ts / 1000);
            if (d->is_int)
                oct_strbuf_printf(&sb, "%" PRId64, d->i);
            else
                oct_strbuf_printf(&sb, "%.9g%s", d->f, d->f == floor(d->f) ? ".0" : "");
            oct_strbuf_puts(&sb, ",\"tags\":{");
            for (int i = 0; i < s->nt; i++)
                oct_strbuf_printf(&sb, "%s\"%s\":\"%s\"", i ? "," : "", s->tk[i], s->tv[i]);
            oct_strbuf_puts(&sb, "}}");
        }
        oct_strbuf_puts(&sb, "]");
        qr_resp_t r;
        qr_req(t, "POST", "/api/put?summary", oct_strbuf_cstr(&sb), &r);
        if (r.status != 200 || !strstr(r.body, "\"failed\":0"))
            fail_msg("put %s: %d %s", s->metric, r.status, r.body);
        qr_resp_free(&r);
        oct_strbuf_free(&sb);
    }
}

/* ---- the query model ---------------------------------------------------- */

enum { QR_FILL_NONE, QR_FILL_NAN, QR_FILL_NULL, QR_FILL_ZERO };
enum {
    QR_LITERAL_OR,
    QR_ILITERAL_OR,
    QR_NOT_LITERAL_OR,
    QR_NOT_ILITERAL_OR,
    QR_WILDCARD,
    QR_IWILDCARD,
    QR_REGEXP,
    QR_NOT_KEY
};
enum { QR_DS_NONE, QR_DS_FIXED, QR_DS_ALL };

typedef struct {
    int type;
    const char *tagk;
    const char *expr;
    int group_by;
} qr_filter_t;

typedef struct {
    const char *metric;
    const char *agg;
    int64_t start, end; /* ms, inclusive */
    int ds;             /* QR_DS_* */
    int64_t ds_ms;
    const char *ds_agg;
    int fill;
    int rate, counter, drop_resets;
    int64_t counter_max, reset_value;
    qr_filter_t f[QR_MAXT];
    int nf;
    int explicit_tags;
} qr_q_t;

static inline qr_q_t qr_q(const char *metric, const char *agg, int64_t start_s, int64_t end_s)
{
    qr_q_t q;
    memset(&q, 0, sizeof q);
    q.metric = metric;
    q.agg = agg;
    q.start = start_s * 1000;
    q.end = end_s * 1000;
    q.counter_max = INT64_MAX;
    return q;
}

static inline void qr_filter(qr_q_t *q, int type, const char *tagk, const char *expr, int gb)
{
    q->f[q->nf++] = (qr_filter_t){type, tagk, expr, gb};
}

typedef struct {
    int ntags;
    char tk[QR_MAXT][QR_NAME], tv[QR_MAXT][QR_NAME];
    int nagg;
    char ak[QR_MAXT][QR_NAME];
    qr_dp_t *dps;
    size_t n;
    int mem[QR_MAXS];
    int nmem;
    int seen; /* matched a response element */
} qr_group_t;

typedef struct {
    qr_group_t g[QR_MAXS];
    int n;
    int fill_null;
} qr_res_t;

static inline void qr_res_free(qr_res_t *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->g[i].dps);
    r->n = 0;
}

static inline double qr_d(const qr_dp_t *p)
{
    return p->is_int ? (double)p->i : p->f;
}

/* -- filters -- */

static inline int qr_in_list(const char *list, const char *v, int icase)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save))
        if (icase ? !strcasecmp(tok, v) : !strcmp(tok, v)) return 1;
    return 0;
}

static inline int qr_filter_pass(const qr_filter_t *f, const qr_series_t *s)
{
    const char *v = qr_tag(s, f->tagk);
    if (f->type == QR_NOT_KEY) return v == NULL;
    if (!v) return 0;
    switch (f->type) {
    case QR_LITERAL_OR:
        return qr_in_list(f->expr, v, 0);
    case QR_ILITERAL_OR:
        return qr_in_list(f->expr, v, 1);
    case QR_NOT_LITERAL_OR:
        return !qr_in_list(f->expr, v, 0);
    case QR_NOT_ILITERAL_OR:
        return !qr_in_list(f->expr, v, 1);
    case QR_WILDCARD:
        return fnmatch(f->expr, v, 0) == 0;
    case QR_IWILDCARD:
        return fnmatch(f->expr, v, FNM_CASEFOLD) == 0;
    case QR_REGEXP: {
        regex_t re;
        if (regcomp(&re, f->expr, REG_EXTENDED | REG_NOSUB)) fail_msg("regex %s", f->expr);
        int ok = regexec(&re, v, 0, NULL, 0) == 0;
        regfree(&re);
        return ok;
    }
    }
    return 0;
}

/* -- aggregator functions on a list of values (model, docs/query.md section 6) -- */

static int qr_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Commons Math percentile estimators on sorted x[0..n). est: 0 legacy, 3, 7. */
static inline double qr_pct(const double *x, int n, double pct, int est)
{
    double p = pct / 100.0, pos;
    if (est == 3)
        pos = p <= 0.5 / n ? 0 : rint(n * p);
    else if (est == 7)
        pos = p == 0 ? 0 : p == 1 ? n : 1 + (n - 1) * p;
    else
        pos = p == 0 ? 0 : p == 1 ? n : p * (n + 1);
    if (pos < 1) return x[0];
    if (pos >= n) return x[n - 1];
    double fl = floor(pos);
    int ip = (int)fl;
    return x[ip - 1] + (pos - fl) * (x[ip] - x[ip - 1]);
}

static inline int qr_parse_pct(const char *name, double *pct, int *est)
{
    const char *p = name;
    if (*p == 'e') p++;
    if (*p != 'p') return 0;
    p++;
    int digits = 0;
    while (p[digits] >= '0' && p[digits] <= '9')
        digits++;
    if (!digits) return 0;
    char num[8];
    snprintf(num, sizeof num, "%.*s", digits, p);
    *pct = !strcmp(num, "999") ? 99.9 : atof(num);
    *est = 0;
    if (name[0] == 'e') {
        if (!strcmp(p + digits, "r3"))
            *est = 3;
        else if (!strcmp(p + digits, "r7"))
            *est = 7;
        else
            return 0;
    } else if (p[digits]) {
        return 0;
    }
    return 1;
}

static inline int qr_out_int(qr_dp_t *o, int64_t v)
{
    o->is_int = 1;
    o->i = v;
    return 1;
}

static inline int qr_out_dbl(qr_dp_t *o, double v)
{
    o->is_int = 0;
    o->f = v;
    return 1;
}

/* Applies aggregator `name` to n values; returns 1 with *o set. Integer path
 * when every value is an integer; a result there is an integer only when it
 * is exactly integral. */
static inline int qr_apply(const char *name, const qr_dp_t *v, int n, qr_dp_t *o)
{
    memset(o, 0, sizeof *o);
    int all_int = 1;
    for (int i = 0; i < n; i++)
        all_int &= v[i].is_int;
    double *x = calloc((size_t)n + 1, sizeof *x);
    int m = 0;
    for (int i = 0; i < n; i++) {
        double d = qr_d(&v[i]);
        if (!isnan(d)) x[m++] = d;
    }
    int rc = 1;
    double pct;
    int est;
    if (!strcmp(name, "count")) {
        rc = all_int ? qr_out_int(o, m) : qr_out_dbl(o, m);
    } else if (m == 0) {
        rc = qr_out_dbl(o, NAN);
    } else if (all_int) {
        /* exact integer arithmetic on the original values */
        int64_t acc = 0;
        if (!strcmp(name, "sum") || !strcmp(name, "zimsum") || !strcmp(name, "pfsum")) {
            for (int i = 0; i < n; i++)
                acc += v[i].i;
            qr_out_int(o, acc);
        } else if (!strcmp(name, "min") || !strcmp(name, "mimmin")) {
            acc = v[0].i;
            for (int i = 1; i < n; i++)
                acc = v[i].i < acc ? v[i].i : acc;
            qr_out_int(o, acc);
        } else if (!strcmp(name, "max") || !strcmp(name, "mimmax")) {
            acc = v[0].i;
            for (int i = 1; i < n; i++)
                acc = v[i].i > acc ? v[i].i : acc;
            qr_out_int(o, acc);
        } else if (!strcmp(name, "avg")) {
            for (int i = 0; i < n; i++)
                acc += v[i].i;
            if (acc % n == 0)
                qr_out_int(o, acc / n);
            else
                qr_out_dbl(o, (double)acc / n);
        } else if (!strcmp(name, "median")) {
            qsort(x, (size_t)m, sizeof *x, qr_cmp_d);
            qr_out_int(o, (int64_t)x[m / 2]);
        } else if (!strcmp(name, "dev")) {
            long double mean = 0, ss = 0;
            for (int i = 0; i < n; i++)
                mean += v[i].i;
            mean /= n;
            for (int i = 0; i < n; i++)
                ss += (v[i].i - mean) * (v[i].i - mean);
            double d = sqrt((double)(ss / n));
            if (d == floor(d))
                qr_out_int(o, (int64_t)d);
            else
                qr_out_dbl(o, d);
        } else if (!strcmp(name, "diff")) {
            qr_out_int(o, v[n - 1].i - v[0].i);
        } else if (!strcmp(name, "mult")) {
            acc = 1;
            for (int i = 0; i < n; i++)
                acc *= v[i].i;
            qr_out_int(o, acc);
        } else if (!strcmp(name, "squareSum")) {
            for (int i = 0; i < n; i++)
                acc += v[i].i * v[i].i;
            qr_out_int(o, acc);
        } else if (!strcmp(name, "first")) {
            qr_out_int(o, v[0].i);
        } else if (!strcmp(name, "last")) {
            qr_out_int(o, v[n - 1].i);
        } else if (!strcmp(name, "none")) {
            qr_out_int(o, v[0].i);
        } else if (qr_parse_pct(name, &pct, &est)) {
            qsort(x, (size_t)m, sizeof *x, qr_cmp_d);
            double d = qr_pct(x, m, pct, est);
            if (d == floor(d))
                qr_out_int(o, (int64_t)d);
            else
                qr_out_dbl(o, d);
        } else {
            rc = 0;
        }
    } else {
        /* double path over the non-NaN values x[0..m) in series order */
        double acc = 0;
        if (!strcmp(name, "sum") || !strcmp(name, "zimsum") || !strcmp(name, "pfsum")) {
            for (int i = 0; i < m; i++)
                acc += x[i];
            qr_out_dbl(o, acc);
        } else if (!strcmp(name, "min") || !strcmp(name, "mimmin")) {
            acc = x[0];
            for (int i = 1; i < m; i++)
                acc = fmin(acc, x[i]);
            qr_out_dbl(o, acc);
        } else if (!strcmp(name, "max") || !strcmp(name, "mimmax")) {
            acc = x[0];
            for (int i = 1; i < m; i++)
                acc = fmax(acc, x[i]);
            qr_out_dbl(o, acc);
        } else if (!strcmp(name, "avg")) {
            for (int i = 0; i < m; i++)
                acc += x[i];
            qr_out_dbl(o, acc / m);
        } else if (!strcmp(name, "median")) {
            qsort(x, (size_t)m, sizeof *x, qr_cmp_d);
            qr_out_dbl(o, x[m / 2]);
        } else if (!strcmp(name, "dev")) {
            double mean = 0, ss = 0;
            for (int i = 0; i < m; i++)
                mean += x[i];
            mean /= m;
            for (int i = 0; i < m; i++)
                ss += (x[i] - mean) * (x[i] - mean);
            qr_out_dbl(o, sqrt(ss / m));
        } else if (!strcmp(name, "diff")) {
            qr_out_dbl(o, x[m - 1] - x[0]);
        } else if (!strcmp(name, "mult")) {
            acc = 1;
            for (int i = 0; i < m; i++)
                acc *= x[i];
            qr_out_dbl(o, acc);
        } else if (!strcmp(name, "squareSum")) {
            for (int i = 0; i < m; i++)
                acc += x[i] * x[i];
            qr_out_dbl(o, acc);
        } else if (!strcmp(name, "first") || !strcmp(name, "none")) {
            qr_out_dbl(o, x[0]);
        } else if (!strcmp(name, "last")) {
            qr_out_dbl(o, x[m - 1]);
        } else if (qr_parse_pct(name, &pct, &est)) {
            qsort(x, (size_t)m, sizeof *x, qr_cmp_d);
            qr_out_dbl(o, qr_pct(x, m, pct, est));
        } else {
            rc = 0;
        }
    }
    free(x);
    if (!rc) fail_msg("model: unknown aggregator %s", name);
    return rc;
}

/* Interpolation of aggregator `name` (docs/query.md section 6). */
typedef enum { QR_LERP, QR_ZIM, QR_SKIP, QR_PREV } qr_interp_t;

static inline qr_interp_t qr_interp(const char *name)
{
    static const char *const zim[] = {"zimsum", "squareSum", "count", "first", "last", "none"};
    for (size_t i = 0; i < sizeof zim / sizeof *zim; i++)
        if (!strcmp(name, zim[i])) return QR_ZIM;
    if (!strcmp(name, "mimmin") || !strcmp(name, "mimmax")) return QR_SKIP;
    if (!strcmp(name, "pfsum")) return QR_PREV;
    return QR_LERP;
}

/* -- per-series pipeline -- */

static inline int64_t qr_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* The scanned window [*lo, *hi) in ms (docs/query.md section 7; OpenTSDB's
 * TsdbQuery.getScan*TimeSeconds). */
static inline void qr_scan_window(const qr_q_t *q, int64_t *lo, int64_t *hi)
{
    int64_t s = q->start / 1000, e = q->end / 1000;
    if (q->ds == QR_DS_FIXED) s -= ((s * 1000) % q->ds_ms) / 1000;
    s -= s % 3600;
    e++; /* OpenTSDB bumps a ms end by one second */
    if (q->ds == QR_DS_FIXED) {
        int64_t al = e + (q->ds_ms - (e * 1000) % q->ds_ms) / 1000;
        e = al % 3600 == 0 ? al : al + 3600 - al % 3600;
    } else {
        e = e + 3600 - e % 3600;
    }
    *lo = s * 1000;
    *hi = e * 1000;
}

/* Series s through scan window, downsampling (+fill) and rate; malloc'd. */
static inline qr_dp_t *qr_pipeline(const qr_q_t *q, const qr_series_t *s, size_t *n_out)
{
    int64_t lo, hi;
    qr_scan_window(q, &lo, &hi);
    size_t cap = s->n + 16;
    if (q->ds == QR_DS_FIXED && q->fill != QR_FILL_NONE)
        cap += (size_t)((q->end - q->start) / q->ds_ms) + 4;
    qr_dp_t *out = calloc(cap, sizeof *out);
    size_t n = 0;
    if (q->ds == QR_DS_NONE) {
        for (size_t k = 0; k < s->n; k++)
            if (s->pts[k].ts >= lo && s->pts[k].ts < hi) out[n++] = s->pts[k];
    } else if (q->ds == QR_DS_ALL) {
        qr_dp_t vals[4096];
        int m = 0;
        for (size_t k = 0; k < s->n; k++)
            if (s->pts[k].ts >= q->start && s->pts[k].ts <= q->end) vals[m++] = s->pts[k];
        if (m) {
            qr_apply(q->ds_agg, vals, m, &out[0]);
            if (out[0].is_int) qr_out_dbl(&out[0], (double)out[0].i);
            out[0].ts = q->start;
            n = 1;
        }
    } else {
        int64_t b_first = INT64_MAX, b_last = INT64_MIN;
        for (size_t k = 0; k < s->n; k++) {
            if (s->pts[k].ts < lo || s->pts[k].ts >= hi) continue;
            int64_t b = qr_floor_div(s->pts[k].ts, q->ds_ms) * q->ds_ms;
            b_first = b < b_first ? b : b_first;
            b_last = b > b_last ? b : b_last;
        }
        if (q->fill != QR_FILL_NONE) {
            int64_t fs = qr_floor_div(q->start, q->ds_ms) * q->ds_ms;
            int64_t fe = qr_floor_div(q->end, q->ds_ms) * q->ds_ms;
            b_first = fs < b_first ? fs : b_first;
            b_last = fe > b_last ? fe : b_last;
        }
        for (int64_t b = b_first; b_last != INT64_MIN && b <= b_last; b += q->ds_ms) {
            qr_dp_t vals[4096];
            int m = 0;
            for (size_t k = 0; k < s->n; k++)
                if (s->pts[k].ts >= lo && s->pts[k].ts < hi && s->pts[k].ts >= b &&
                    s->pts[k].ts < b + q->ds_ms)
                    vals[m++] = s->pts[k];
            qr_dp_t d;
            memset(&d, 0, sizeof d);
            if (m) {
                qr_apply(q->ds_agg, vals, m, &d);
                if (d.is_int) qr_out_dbl(&d, (double)d.i);
            } else if (q->fill == QR_FILL_NONE) {
                continue;
            } else {
                /* fill only between the buckets of start and end */
                int64_t fs = qr_floor_div(q->start, q->ds_ms) * q->ds_ms;
                int64_t fe = qr_floor_div(q->end, q->ds_ms) * q->ds_ms;
                if (b < fs || b > fe) continue;
                qr_out_dbl(&d, q->fill == QR_FILL_ZERO ? 0.0 : NAN);
            }
            d.ts = b;
            out[n++] = d;
        }
    }
    if (q->rate) {
        size_t w = 0;
        if (n > 0) {
            qr_dp_t prev = out[0];
            for (size_t k = 1; k < n; k++) {
                qr_dp_t cur = out[k];
                double dt = (double)(cur.ts - prev.ts) / 1000.0;
                double delta =
                    prev.is_int && cur.is_int ? (double)(cur.i - prev.i) : qr_d(&cur) - qr_d(&prev);
                double rate;
                if (q->counter && delta < 0) {
                    if (q->drop_resets) {
                        prev = cur;
                        continue;
                    }
                    double full = prev.is_int && cur.is_int
                                      ? (double)(q->counter_max - prev.i + cur.i)
                                      : (double)q->counter_max - qr_d(&prev) + qr_d(&cur);
                    rate = full / dt;
                    if (q->reset_value > 0 && rate > (double)q->reset_value) rate = 0;
                } else {
                    rate = delta / dt;
                }
                qr_dp_t r;
                memset(&r, 0, sizeof r);
                r.ts = cur.ts;
                qr_out_dbl(&r, rate);
                out[w++] = r;
                prev = cur;
            }
        }
        n = w;
    }
    *n_out = n;
    return out;
}

/* Value of processed series p (n points) at x under interpolation `ip`;
 * returns 0 if the series does not contribute. */
static inline int qr_value_at(const qr_dp_t *p, size_t n, int64_t x, qr_interp_t ip, int rate,
                              qr_dp_t *o)
{
    if (n == 0 || x < p[0].ts || x > p[n - 1].ts) return 0;
    size_t k = 0;
    while (k < n && p[k].ts < x)
        k++;
    if (k < n && p[k].ts == x) {
        *o = p[k];
        return 1;
    }
    const qr_dp_t *a = &p[k - 1], *b = &p[k];
    memset(o, 0, sizeof *o);
    o->ts = x;
    if (rate) {
        *o = *a;
        return 1;
    }
    switch (ip) {
    case QR_ZIM:
        qr_out_int(o, 0);
        return 1;
    case QR_SKIP:
        return 0;
    case QR_PREV:
        *o = *a;
        return 1;
    case QR_LERP:
        if (a->is_int && b->is_int) {
            int64_t num = (x - a->ts) * (b->i - a->i), den = b->ts - a->ts;
            if (num % den == 0)
                qr_out_int(o, a->i + num / den);
            else
                qr_out_dbl(o, (double)a->i + (double)num / (double)den);
        } else {
            double y0 = qr_d(a), y1 = qr_d(b);
            qr_out_dbl(o, y0 + (double)(x - a->ts) * (y1 - y0) / (double)(b->ts - a->ts));
        }
        return 1;
    }
    return 0;
}

static inline void qr_sort_names(char (*names)[QR_NAME], int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char tmp[QR_NAME];
            memcpy(tmp, names[j], QR_NAME);
            memcpy(names[j], names[j - 1], QR_NAME);
            memcpy(names[j - 1], tmp, QR_NAME);
        }
}

/* Runs q over db into *res (groups in no particular order). */
static inline void qr_run(const qr_db_t *db, const qr_q_t *q, qr_res_t *res)
{
    memset(res, 0, sizeof *res);
    res->fill_null = q->ds != QR_DS_NONE && q->fill == QR_FILL_NULL;
    int none = !strcmp(q->agg, "none");
    /* group-by keys */
    const char *gb[QR_MAXT];
    int ngb = 0;
    for (int i = 0; i < q->nf; i++) {
        if (!q->f[i].group_by) continue;
        int dup = 0;
        for (int j = 0; j < ngb; j++)
            dup |= !strcmp(gb[j], q->f[i].tagk);
        if (!dup) gb[ngb++] = q->f[i].tagk;
    }
    static char keys[QR_MAXS][512];
    for (int si = 0; si < db->n; si++) {
        const qr_series_t *s = &db->s[si];
        if (strcmp(s->metric, q->metric)) continue;
        int ok = 1;
        for (int i = 0; ok && i < q->nf; i++)
            ok = qr_filter_pass(&q->f[i], s);
        if (ok && q->explicit_tags) {
            /* exactly the filtered tag keys, no others */
            for (int i = 0; ok && i < s->nt; i++) {
                int found = 0;
                for (int j = 0; j < q->nf; j++)
                    found |= !strcmp(q->f[j].tagk, s->tk[i]);
                ok = found;
            }
            for (int j = 0; ok && j < q->nf; j++)
                ok = qr_tag(s, q->f[j].tagk) != NULL;
        }
        if (!ok) continue;
        char key[512] = "";
        if (none) {
            snprintf(key, sizeof key, "#%d", si);
        } else {
            for (int j = 0; j < ngb; j++) {
                const char *v = qr_tag(s, gb[j]);
                size_t l = strlen(key);
                snprintf(key + l, sizeof key - l, "%s=%s;", gb[j], v ? v : "");
            }
        }
        int g = 0;
        while (g < res->n && strcmp(keys[g], key))
            g++;
        if (g == res->n) {
            memset(&res->g[g], 0, sizeof res->g[g]);
            snprintf(keys[g], sizeof keys[g], "%s", key);
            res->n++;
        }
        res->g[g].mem[res->g[g].nmem++] = si;
    }
    qr_interp_t ip = qr_interp(q->agg);
    for (int g = 0; g < res->n; g++) {
        qr_group_t *G = &res->g[g];
        /* tags / aggregateTags (SpanGroup.computeTags) */
        for (int m = 0; m < G->nmem; m++) {
            const qr_series_t *s = &db->s[G->mem[m]];
            for (int i = 0; i < s->nt; i++) {
                int in_agg = 0, t = -1;
                for (int j = 0; j < G->nagg; j++)
                    in_agg |= !strcmp(G->ak[j], s->tk[i]);
                if (in_agg) continue;
                for (int j = 0; j < G->ntags; j++)
                    if (!strcmp(G->tk[j], s->tk[i])) t = j;
                if (t < 0) {
                    memcpy(G->tk[G->ntags], s->tk[i], QR_NAME);
                    memcpy(G->tv[G->ntags], s->tv[i], QR_NAME);
                    G->ntags++;
                } else if (strcmp(G->tv[t], s->tv[i])) {
                    memcpy(G->ak[G->nagg++], s->tk[i], QR_NAME);
                    G->ntags--;
                    memmove(G->tk[t], G->tk[t + 1], (size_t)(G->ntags - t) * QR_NAME);
                    memmove(G->tv[t], G->tv[t + 1], (size_t)(G->ntags - t) * QR_NAME);
                }
            }
        }
        qr_sort_names(G->ak, G->nagg);
        /* pipeline each member, then aggregate over the union of timestamps */
        qr_dp_t *pp[QR_MAXS];
        size_t pn[QR_MAXS], total = 0;
        for (int m = 0; m < G->nmem; m++) {
            pp[m] = qr_pipeline(q, &db->s[G->mem[m]], &pn[m]);
            total += pn[m];
        }
        int64_t *xs = calloc(total + 1, sizeof *xs);
        size_t nx = 0;
        for (int m = 0; m < G->nmem; m++)
            for (size_t k = 0; k < pn[m]; k++) {
                int dup = 0;
                for (size_t j = 0; j < nx && !dup; j++)
                    dup = xs[j] == pp[m][k].ts;
                if (!dup) xs[nx++] = pp[m][k].ts;
            }
        for (size_t i = 1; i < nx; i++)
            for (size_t j = i; j > 0 && xs[j - 1] > xs[j]; j--) {
                int64_t tmp = xs[j];
                xs[j] = xs[j - 1];
                xs[j - 1] = tmp;
            }
        G->dps = calloc(nx + 1, sizeof *G->dps);
        for (size_t i = 0; i < nx; i++) {
            int64_t x = xs[i];
            if (x < q->start || x > q->end) continue;
            qr_dp_t vals[QR_MAXS];
            int nv = 0;
            for (int m = 0; m < G->nmem; m++)
                if (qr_value_at(pp[m], pn[m], x, ip, q->rate, &vals[nv])) nv++;
            if (!nv) continue;
            qr_dp_t o;
            qr_apply(q->agg, vals, nv, &o);
            o.ts = x;
            G->dps[G->n++] = o;
        }
        free(xs);
        for (int m = 0; m < G->nmem; m++)
            free(pp[m]);
    }
}

/* ---- comparing a response with the model -------------------------------- */

/* Compares one JSON dps value with the expected point; returns 1 if equal. */
static inline int qr_value_ok(const json_value_t *v, const qr_dp_t *e, int fill_null)
{
    if (e->is_int) {
        int64_t got;
        return v->type == JSON_NUMBER && (v->flags & JSON_F_INTEGER) &&
               json_number_i64(v, &got) == 0 && got == e->i;
    }
    if (isnan(e->f)) {
        if (fill_null) return v->type == JSON_NULL;
        return json_str_eq(v, "NaN");
    }
    double got;
    if (v->type != JSON_NUMBER || json_number_double(v, &got)) return 0;
    return fabs(got - e->f) <= 1e-9 * fabs(e->f) + 1e-12;
}

static inline void qr_fmt_dp(char *buf, size_t cap, const qr_dp_t *e)
{
    if (e->is_int)
        snprintf(buf, cap, "%" PRId64, e->i);
    else
        snprintf(buf, cap, "%.17g", e->f);
}

static inline void qr_tags_str(const qr_group_t *g, char *buf, size_t cap)
{
    size_t l = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->ntags && l < cap; i++)
        l += (size_t)snprintf(buf + l, cap - l, "%s=%s ", g->tk[i], g->tv[i]);
    if (l < cap) l += (size_t)snprintf(buf + l, cap - l, "agg[");
    for (int i = 0; i < g->nagg && l < cap; i++)
        l += (size_t)snprintf(buf + l, cap - l, "%s ", g->ak[i]);
    if (l < cap) snprintf(buf + l, cap - l, "]");
}

/* Does the JSON object el have exactly g's tags and aggregateTags? */
static inline int qr_group_matches(const json_value_t *el, const qr_group_t *g)
{
    const json_value_t *tags = json_obj_get(el, "tags");
    const json_value_t *agg = json_obj_get(el, "aggregateTags");
    if (!tags || tags->type != JSON_OBJECT || (int)tags->n != g->ntags) return 0;
    if (!agg || agg->type != JSON_ARRAY || (int)agg->n != g->nagg) return 0;
    for (int i = 0; i < g->ntags; i++) {
        const json_value_t *v = json_obj_get(tags, g->tk[i]);
        if (!v || !json_str_eq(v, g->tv[i])) return 0;
    }
    for (int i = 0; i < g->nagg; i++) {
        int found = 0;
        for (const json_value_t *a = agg->child; a; a = a->next)
            found |= json_str_eq(a, g->ak[i]);
        if (!found) return 0;
    }
    return 1;
}

/* Checks one response element's dps against group g. ms: keys in ms. */
static inline void qr_check_dps(const char *what, const json_value_t *el, const qr_group_t *g,
                                int ms, int arrays, int fill_null)
{
    char gs[512];
    qr_tags_str(g, gs, sizeof gs);
    const json_value_t *dps = json_obj_get(el, "dps");
    if (!dps || dps->type != (arrays ? JSON_ARRAY : JSON_OBJECT)) {
        qr_fail("%s {%s}: dps missing or of the wrong type", what, gs);
        return;
    }
    size_t k = 0;
    int64_t last = INT64_MIN;
    for (const json_value_t *d = dps->child; d; d = d->next, k++) {
        int64_t ts;
        const json_value_t *val;
        if (arrays) {
            if (d->type != JSON_ARRAY || d->n != 2 || json_number_i64(d->child, &ts)) {
                qr_fail("%s {%s}: bad arrays element #%zu", what, gs, k);
                return;
            }
            val = d->child->next;
        } else {
            char kb[32];
            snprintf(kb, sizeof kb, "%.*s", (int)d->key_len, d->key);
            char *endp;
            ts = strtoll(kb, &endp, 10);
            if (*endp || !*kb) {
                qr_fail("%s {%s}: bad dps key %s", what, gs, kb);
                return;
            }
            val = d;
        }
        if (ts <= last) qr_fail("%s {%s}: dps keys not increasing at %" PRId64, what, gs, ts);
        last = ts;
        if (k >= g->n) {
            qr_fail("%s {%s}: extra point at %" PRId64 " (expected %zu points)", what, gs, ts,
                    g->n);
            continue;
        }
        const qr_dp_t *e = &g->dps[k];
        int64_t want_ts = ms ? e->ts : qr_floor_div(e->ts, 1000);
        char eb[64];
        qr_fmt_dp(eb, sizeof eb, e);
        if (ts != want_ts) {
            qr_fail("%s {%s}: point #%zu at %" PRId64 ", want %" PRId64 " (=%s)", what, gs, k, ts,
                    want_ts, eb);
            continue;
        }
        if (!qr_value_ok(val, e, fill_null)) {
            char got[64];
            snprintf(got, sizeof got, "%.*s", (int)(val->type == JSON_NULL ? 4 : val->len),
                     val->type == JSON_NULL ? "null" : val->str);
            qr_fail("%s {%s}: at %" PRId64 " got %s (%s), want %s%s", what, gs, ts, got,
                    val->type == JSON_NUMBER ? ((val->flags & JSON_F_INTEGER) ? "int" : "dbl")
                                             : "non-number",
                    eb, e->is_int ? " (integer)" : "");
        }
    }
    if (k < g->n) {
        char eb[64];
        qr_fmt_dp(eb, sizeof eb, &g->dps[k]);
        qr_fail("%s {%s}: only %zu points, want %zu (next %" PRId64 "=%s)", what, gs, k, g->n,
                g->dps[k].ts, eb);
    }
}

/* Checks a whole /api/query answer (r, status 200) against the model's
 * result: one element per non-empty group, matched by tags. */
static inline void qr_check(const char *what, const qr_resp_t *r, qr_res_t *res, int ms, int arrays)
{
    if (r->status != 200 || !r->v || r->v->type != JSON_ARRAY) {
        qr_fail("%s: status %d body %.300s", what, r->status, r->body);
        return;
    }
    for (int g = 0; g < res->n; g++)
        res->g[g].seen = 0;
    for (const json_value_t *el = r->v->child; el; el = el->next) {
        if (json_obj_get(el, "statsSummary")) continue;
        int g = 0;
        while (g < res->n && (res->g[g].seen || !qr_group_matches(el, &res->g[g])))
            g++;
        if (g == res->n) {
            oct_strbuf_t sb = OCT_STRBUF_INIT;
            json_writer_t w;
            json_w_init(&w, &sb);
            json_w_value(&w, json_obj_get(el, "tags"));
            json_w_value(&w, json_obj_get(el, "aggregateTags"));
            qr_fail("%s: unexpected series tags=%s", what, oct_strbuf_cstr(&sb));
            oct_strbuf_free(&sb);
            continue;
        }
        res->g[g].seen = 1;
        qr_check_dps(what, el, &res->g[g], ms, arrays, res->fill_null);
    }
    for (int g = 0; g < res->n; g++)
        if (!res->g[g].seen && res->g[g].n > 0) {
            char gs[512];
            qr_tags_str(&res->g[g], gs, sizeof gs);
            qr_fail("%s: missing series {%s} (%zu points)", what, gs, res->g[g].n);
        }
}

/* Runs the model and the daemon (POST body to target) and compares. */
static inline void qr_expect_post(const tu_tsd_t *t, const qr_db_t *db, const qr_q_t *q,
                                  const char *target, const char *body, int ms, int arrays)
{
    qr_res_t *res = malloc(sizeof *res);
    qr_run(db, q, res);
    qr_resp_t r;
    qr_req(t, "POST", target, body, &r);
    char what[700];
    snprintf(what, sizeof what, "POST %s %.600s", target, body);
    qr_check(what, &r, res, ms, arrays);
    qr_resp_free(&r);
    qr_res_free(res);
    free(res);
}

static inline void qr_expect_get(const tu_tsd_t *t, const qr_db_t *db, const qr_q_t *q,
                                 const char *target, int ms, int arrays)
{
    qr_res_t *res = malloc(sizeof *res);
    qr_run(db, q, res);
    qr_resp_t r;
    qr_req(t, "GET", target, NULL, &r);
    char what[700];
    snprintf(what, sizeof what, "GET %.600s", target);
    qr_check(what, &r, res, ms, arrays);
    qr_resp_free(&r);
    qr_res_free(res);
    free(res);
}

/* Expects an error answer {"error":{"code":status,"message":msg,...}}. */
static inline void qr_expect_error(const tu_tsd_t *t, const char *method, const char *target,
                                   const char *body, int status, const char *msg)
{
    qr_resp_t r;
    qr_req(t, method, target, body, &r);
    const json_value_t *e = r.v ? json_obj_get(r.v, "error") : NULL;
    const json_value_t *c = e ? json_obj_get(e, "code") : NULL;
    const json_value_t *m = e ? json_obj_get(e, "message") : NULL;
    int64_t code = -1;
    if (r.status != status || !c || json_number_i64(c, &code) || code != status || !m ||
        !json_str_eq(m, msg))
        qr_fail("%s %s %s: got %d %.400s; want %d with message \"%s\"", method, target,
                body ? body : "", r.status, r.body, status, msg);
    qr_resp_free(&r);
}

/* A JSON body with one sub-query: start/end in seconds, `sub` the inner
 * members of the sub-query object (without braces), `extra` more top-level
 * members (may be ""). Returns a static buffer. */
static inline const char *qr_body(int64_t start_s, int64_t end_s, const char *sub,
                                  const char *extra)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "{\"start\":%" PRId64 ",\"end\":%" PRId64 "%s%s,\"queries\":[{%s}]}",
             start_s, end_s, *extra ? "," : "", extra, sub);
    return buf;
}

#endif
