/* telnet.c -- the telnet-style line protocol of one connection (docs/telnet.md).
 *
 * Lines arrive one at a time from the transport. A `put` line is parsed at
 * once (tsdb/parse.h): a malformed line is answered with OpenTSDB's error
 * line; a good one is copied into the session's batch -- the line's bytes
 * into a fixed arena (unless the transport promises they stay put until
 * the flush: telnet_line_stable), the point into an array of tsdb_dp_t
 * whose slices point into those bytes -- and the batch goes to
 * tsdb_put_batch when the transport calls telnet_flush (after the lines of
 * one read), when it is full, or before any other reply is written, so
 * replies keep the order of the lines that caused them. The write path's
 * per-point rejections become error lines in line order. Buffers are allocated on the first put and
 * reused: no allocation per point.
 *
 * Tokenising: OpenTSDB splits on single spaces, so collectd's double and
 * trailing spaces give it empty tokens (an empty metric or value is an
 * error there). octsdb separates tokens by runs of spaces instead, so those
 * lines are accepted. The count in "not enough arguments" is of non-empty
 * tokens; a line with metric, timestamp and value followed by a space (what
 * Telegraf sends for a series without tags) passes that check as it does in
 * OpenTSDB and is judged by the write path ("Need at least one tag ...").
 *
 * Commands and their order in `help` follow OpenTSDB 2.4's registration
 * (RpcManager): stats dropcaches version exit help, then put (rw and wo
 * modes only: in ro mode `put` is an unknown command, as in OpenTSDB), then
 * diediedie only with tsd.core.enable_diediedie (a deviation: OpenTSDB has
 * it unless tsd.no_diediedie, which still turns it off). rollup
 * (api_rollup_telnet) and histogram (hist_in.c) are allowed where put is,
 * as in 2.4, and `help` lists them after put.
 *
 * With authentication on (server/auth.h) every command but put passes
 * auth_telnet_line first; put stays on its fast path because allow_put is
 * 0 until the session holds a read-write credential, so an unauthorised
 * put falls through to the gate like any other command. */
#include "server/telnet.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/xmalloc.h"
#include "server/api_int.h"
#include "server/auth.h"
#include "server/build_info.h"
#include "server/hist_int.h"
#include "server/stats_text.h"
#include "tsdb/parse.h"
#include "tsdb/write.h"

/* A batch is handed to the write path when it holds this many points or
 * this many bytes of line text; the transport flushes after every read
 * anyway, so these bound memory, not latency. */
#define BATCH_MAX_POINTS  1024
#define BATCH_ARENA_BYTES (256u * 1024u)

typedef struct {
    size_t index; /* point in the batch */
    int rc;
    size_t off, len; /* message in errtext */
} batch_err_t;

struct telnet_session {
    tsd_ctx_t *tsd;
    int allow_put;
    int allow_diediedie;
    int return_errors;
    int stats_fqdn;       /* tsd.stats.canonical: "fqdn=" instead of "host=" */
    long long stats_port; /* tsd.core.stats_with_port: port=, else -1 */
    const auth_t *auth;   /* NULL: authentication off */
    auth_role_t role;
    unsigned auth_failures;

    /* the batch */
    tsdb_dp_t *dps;    /* BATCH_MAX_POINTS */
    size_t *tag_first; /* index of each point's first slice in tags */
    size_t n_dps;
    oct_slice_t *tags; /* k0 v0 k1 v1 ... of every point; grows by doubling */
    size_t n_tags, cap_tags;
    char *arena; /* BATCH_ARENA_BYTES: copies of the batched lines */
    size_t arena_len;

    /* rejections reported by the write path during one flush */
    batch_err_t *errs;
    size_t n_errs, cap_errs;
    oct_strbuf_t errtext;
};

/* ---- session ----------------------------------------------------------- */

telnet_session_t *telnet_session_new(tsd_ctx_t *tsd)
{
    telnet_session_t *s = xcalloc(1, sizeof(*s));
    s->tsd = tsd;
    s->allow_put = tsd->mode != TSD_MODE_RO;
    s->allow_diediedie = 0;
    s->return_errors = 1;
    s->stats_port = -1;
    if (tsd->cfg) {
        s->allow_diediedie = oct_config_get_bool(tsd->cfg, "tsd.core.enable_diediedie") &&
                             !oct_config_get_bool(tsd->cfg, "tsd.no_diediedie");
        s->return_errors = oct_config_get_bool(tsd->cfg, "tsd.rpc.telnet.return_errors");
        s->stats_fqdn = oct_config_get_bool(tsd->cfg, "tsd.stats.canonical");
        if (oct_config_get_bool(tsd->cfg, "tsd.core.stats_with_port"))
            s->stats_port = (long long)oct_config_get_int(tsd->cfg, "tsd.network.port");
    }
    s->auth = auth_for(tsd);
    if (s->auth) s->allow_put = 0; /* until a read-write `auth` */
    return s;
}

void telnet_session_free(telnet_session_t *s)
{
    if (!s) return;
    free(s->dps);
    free(s->tag_first);
    free(s->tags);
    free(s->arena);
    free(s->errs);
    oct_strbuf_free(&s->errtext);
    free(s);
}

/* ---- flushing the batch ---------------------------------------------- */

static void on_put_error(void *ctx, size_t index, int rc, const char *msg)
{
    telnet_session_t *s = ctx;
    if (s->n_errs == s->cap_errs) {
        s->cap_errs = s->cap_errs ? 2 * s->cap_errs : 16;
        s->errs = xrealloc(s->errs, s->cap_errs * sizeof(*s->errs));
    }
    batch_err_t *e = &s->errs[s->n_errs++];
    e->index = index;
    e->rc = rc;
    e->off = s->errtext.len;
    e->len = strlen(msg);
    oct_strbuf_append(&s->errtext, msg, e->len);
}

static int cmp_err(const void *a, const void *b)
{
    const batch_err_t *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* One write-path rejection as OpenTSDB words it (docs/telnet.md, put errors): validation errors
 * are IllegalArgumentExceptions, unknown names NoSuchUniqueName; storage
 * failures are the asynchronous "HBase error" lines, sent only with
 * tsd.rpc.telnet.return_errors. OpenTSDB sends nothing at all for other
 * failures (UID exhaustion); octsdb reports them like storage errors. */
static void put_error_line(telnet_session_t *s, int rc, const char *msg, size_t len,
                           oct_strbuf_t *out)
{
    switch (rc) {
    case OCT_EINVAL:
    case OCT_EBADNAME:
    case OCT_EPARSE:
        tsd_count(s->tsd, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        oct_strbuf_puts(out, "put: illegal argument: ");
        break;
    case OCT_ENOSUCHNAME:
        tsd_count(s->tsd, TSD_CTR_PUT_UNKNOWN_METRICS, 1);
        oct_strbuf_puts(out, "put: unknown metric: ");
        break;
    default:
        tsd_count(s->tsd, TSD_CTR_RPC_ERRORS_TELNET, 1);
        if (!s->return_errors) return;
        oct_strbuf_puts(out, "put: HBase error: ");
        break;
    }
    oct_strbuf_append(out, msg, len);
    oct_strbuf_append(out, "\n", 1);
}

void telnet_flush(telnet_session_t *s, oct_strbuf_t *out)
{
    if (s->n_dps == 0) return;
    for (size_t i = 0; i < s->n_dps; i++)
        s->dps[i].tags = s->tags + s->tag_first[i];

    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    s->n_errs = 0;
    oct_strbuf_reset(&s->errtext);
    long acc = tsdb_put_batch(s->tsd->db, s->dps, s->n_dps, on_put_error, s, NULL, &eb);
    if (acc < 0) {
        /* nothing was accepted: every point of the batch gets the error */
        if (!eb.msg[0]) snprintf(eb.msg, sizeof eb.msg, "%s", oct_strerror((int)acc));
        for (size_t i = 0; i < s->n_dps; i++)
            put_error_line(s, (int)acc, eb.msg, strlen(eb.msg), out);
    } else if (s->n_errs) {
        /* the contract does not promise index order; lines must keep it */
        int sorted = 1;
        for (size_t i = 1; i < s->n_errs && sorted; i++)
            sorted = s->errs[i - 1].index <= s->errs[i].index;
        if (!sorted) qsort(s->errs, s->n_errs, sizeof(*s->errs), cmp_err);
        const char *txt = oct_strbuf_cstr(&s->errtext);
        for (size_t i = 0; i < s->n_errs; i++)
            put_error_line(s, s->errs[i].rc, txt + s->errs[i].off, s->errs[i].len, out);
    }
    s->n_dps = 0;
    s->n_tags = 0;
    s->arena_len = 0;
}

/* ---- put ------------------------------------------------------------- */

void telnet_error_line(oct_strbuf_t *out, const char *cmd, const char *kind, const char *msg)
{
    oct_strbuf_puts(out, cmd);
    oct_strbuf_puts(out, ": ");
    oct_strbuf_puts(out, kind);
    oct_strbuf_puts(out, ": ");
    oct_strbuf_puts(out, msg);
    oct_strbuf_append(out, "\n", 1);
}

static void put_reply(telnet_session_t *s, oct_strbuf_t *out, tsd_counter_t ctr, const char *kind,
                      const char *msg)
{
    tsd_count(s->tsd, ctr, 1);
    telnet_error_line(out, "put", kind, msg);
}

/* A rejected line: the points batched before it are committed first so
 * that its error line follows theirs. */
static void put_fail(telnet_session_t *s, oct_strbuf_t *out, int rc, const char *msg)
{
    telnet_flush(s, out);
    if (rc == OCT_EPARSE)
        put_reply(s, out, TSD_CTR_PUT_INVALID_VALUES, "invalid value", msg);
    else
        put_reply(s, out, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, "illegal argument", msg);
}

static void batch_alloc(telnet_session_t *s)
{
    s->dps = xmalloc(BATCH_MAX_POINTS * sizeof(*s->dps));
    s->tag_first = xmalloc(BATCH_MAX_POINTS * sizeof(*s->tag_first));
    s->arena = xmalloc(BATCH_ARENA_BYTES);
    s->cap_tags = 16 * 16;
    s->tags = xmalloc(s->cap_tags * sizeof(*s->tags));
}

/* Copies a message into the caller's error buffer. */
static int put_err(char *errbuf, size_t errcap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int put_err(char *errbuf, size_t errcap, int rc, const char *fmt, ...)
{
    if (errbuf && errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errcap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* The space and '=' positions of m <= 64 bytes at p, as bit masks (bit i =
 * p[i]); SSE2 for whole 16-byte groups, never reading past p + m. */
static inline void put_masks(const char *p, size_t m, uint64_t *sp, uint64_t *eq)
{
    uint64_t a = 0, b = 0;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i vs = _mm_set1_epi8(' '), ve = _mm_set1_epi8('=');
    for (; i + 16 <= m; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        a |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vs)) << i;
        b |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, ve)) << i;
    }
#endif
    for (; i < m; i++) {
        a |= (uint64_t)(p[i] == ' ') << i;
        b |= (uint64_t)(p[i] == '=') << i;
    }
    *sp = a;
    *eq = b;
}

typedef struct {
    const char *tok[3];
    size_t tlen[3];
    size_t ntok, nt, max_tags;
    oct_slice_t *tags;
} put_toks_t;

/* One token [t, t+n) with n_eq '=' signs, the first at eq. */
static inline int put_token(put_toks_t *k, const char *t, size_t n, const char *eq, size_t n_eq,
                            char *errbuf, size_t errcap)
{
    if (k->ntok < 3) {
        k->tok[k->ntok] = t;
        k->tlen[k->ntok] = n;
    } else {
        /* k=v, both non-empty, exactly one '=' (Tags.parse splits on every '=') */
        if (n_eq != 1 || eq == t || eq == t + n - 1)
            return put_err(errbuf, errcap, OCT_EINVAL, "invalid tag: %.*s",
                           (int)(n > 400 ? 400 : n), t);
        if (k->nt + 2 > k->max_tags) return put_err(errbuf, errcap, OCT_ENOSPC, "too many tags");
        k->tags[k->nt++] = oct_slice(t, (size_t)(eq - t));
        k->tags[k->nt++] = oct_slice(eq + 1, (size_t)(t + n - eq - 1));
    }
    k->ntok++;
    return 0;
}

/* 'args' is the line after "put" (starting at a space or its end). Tokens
 * are found 64 bytes at a time from bit masks of spaces and '=' signs, so
 * the work is per token, not per byte. */
static int parse_put_args(const char *p, size_t len, tsdb_dp_t *dp, oct_slice_t *tags,
                          size_t max_tags, char *errbuf, size_t errcap)
{
    put_toks_t k = {{NULL, NULL, NULL}, {0, 0, 0}, 0, 0, max_tags, tags};
    size_t spaces = 0;
    int in_tok = 0;
    size_t tstart = 0, eqpos = 0, n_eq = 0;
    int rc;

    for (size_t base = 0; base < len; base += 64) {
        size_t m = len - base < 64 ? len - base : 64;
        uint64_t sp, eq;
        put_masks(p + base, m, &sp, &eq);
        uint64_t valid = m == 64 ? ~UINT64_C(0) : (UINT64_C(1) << m) - 1;
        size_t i = 0;
        while (i < m) {
            uint64_t from = ~UINT64_C(0) << i;
            if (!in_tok) {
                uint64_t x = ~sp & valid & from;
                if (!x) break;
                i = (size_t)__builtin_ctzll(x);
                in_tok = 1;
                tstart = base + i;
                n_eq = 0;
                continue;
            }
            uint64_t x = sp & from;
            size_t j = x ? (size_t)__builtin_ctzll(x) : m;
            uint64_t e = eq & from & (j < 64 ? (UINT64_C(1) << j) - 1 : ~UINT64_C(0));
            if (e) {
                if (!n_eq) eqpos = base + (size_t)__builtin_ctzll(e);
                n_eq += e & (e - 1) ? 2 : 1; /* only "exactly one" matters */
            }
            i = j;
            if (j < m) {
                in_tok = 0;
                rc = put_token(&k, p + tstart, base + j - tstart, p + eqpos, n_eq, errbuf, errcap);
                if (rc) return rc;
            }
        }
    }
    if (in_tok) {
        rc = put_token(&k, p + tstart, len - tstart, p + eqpos, n_eq, errbuf, errcap);
        if (rc) return rc;
    }
    size_t ntok = k.ntok, nt = k.nt;
    if (ntok == 3) /* rare: only then does the number of spaces matter */
        for (size_t i = 0; i < len; i++)
            spaces += p[i] == ' ';
    const char *const *tok = k.tok;
    const size_t *tlen = k.tlen;
    /* OpenTSDB counts words split on single spaces: "put m t v " has 4 */
    if (ntok < 3 || (ntok == 3 && spaces < 4))
        return put_err(errbuf, errcap, OCT_EINVAL, "not enough arguments (need least 4, got %zu)",
                       ntok);

    oct_errbuf_t eb;
    int is_ms = 0;
    rc = tsdb_parse_timestamp(tok[1], tlen[1], 1, &dp->pt.ts_ms, &is_ms, &eb);
    if (rc == 0) {
        rc = tsdb_parse_value(tok[2], tlen[2], &dp->pt, &eb);
        if (rc == OCT_EINVAL) {
            /* OpenTSDB's full text names the point */
            size_t l = strlen(eb.msg);
            snprintf(eb.msg + l, sizeof eb.msg - l, " for metric=%.*s timestamp=%.*s",
                     (int)(tlen[0] > 200 ? 200 : tlen[0]), tok[0], (int)tlen[1], tok[1]);
        }
    }
    if (rc < 0) return put_err(errbuf, errcap, rc, "%s", eb.msg);
    dp->metric = oct_slice(tok[0], tlen[0]);
    dp->tags = tags;
    dp->n_tags = nt / 2;
    dp->ts_is_ms = (uint8_t)is_ms;
    return 0;
}

int telnet_parse_put(const char *line, size_t len, tsdb_dp_t *dp, oct_slice_t *tags,
                     size_t max_tags, char *errbuf, size_t errcap)
{
    if (errbuf && errcap) errbuf[0] = '\0';
    size_t a = 0;
    while (a < len && line[a] == ' ')
        a++;
    if (len - a < 3 || memcmp(line + a, "put", 3) != 0 || (len - a > 3 && line[a + 3] != ' '))
        return put_err(errbuf, errcap, OCT_EINVAL, "not a put line");
    return parse_put_args(line + a + 3, len - a - 3, dp, tags, max_tags, errbuf, errcap);
}

/* 'args' is the line after "put" (starting at a space or its end);
 * 'stable': its bytes outlive the batch (telnet_line_stable), no copy. */
static void do_put(telnet_session_t *s, const char *args, size_t len, int stable, oct_strbuf_t *out)
{
    char msg[OCT_ERRBUF_SIZE + 64];

    if (!s->dps) batch_alloc(s);
    if (len > BATCH_ARENA_BYTES) {
        put_fail(s, out, OCT_EINVAL, "line too long");
        return;
    }
    if (s->n_dps == BATCH_MAX_POINTS || (!stable && s->arena_len + len > BATCH_ARENA_BYTES))
        telnet_flush(s, out);
    /* a tag takes at least 4 bytes ("k=v "): this many slices always fit */
    size_t need = s->n_tags + len / 2 + 2;
    if (need > s->cap_tags) {
        while (s->cap_tags < need)
            s->cap_tags *= 2;
        s->tags = xrealloc(s->tags, s->cap_tags * sizeof(*s->tags));
    }

    /* otherwise the transport reuses its buffer after this call: keep a copy */
    const char *p = args;
    if (!stable) {
        char *copy = s->arena + s->arena_len;
        memcpy(copy, args, len);
        p = copy;
    }

    tsdb_dp_t *dp = &s->dps[s->n_dps];
    int rc =
        parse_put_args(p, len, dp, s->tags + s->n_tags, s->cap_tags - s->n_tags, msg, sizeof msg);
    if (rc < 0) {
        put_fail(s, out, rc, msg);
        return;
    }
    dp->tags = NULL; /* set at flush: the slice array may move until then */
    s->tag_first[s->n_dps] = s->n_tags;
    s->n_tags += 2 * dp->n_tags;
    s->n_dps++;
    if (!stable) s->arena_len += len;
}

/* ---- other commands --------------------------------------------------- */

static void do_version(oct_strbuf_t *out)
{
    build_info_text(out); /* OpenTSDB's two lines */
}

static void do_stats(telnet_session_t *s, oct_strbuf_t *out)
{
    stats_text(s->tsd, s->stats_fqdn, s->stats_port, out);
}

static void do_help(const telnet_session_t *s, oct_strbuf_t *out)
{
    oct_strbuf_puts(out, "available commands: stats dropcaches version exit help ");
    if (s->allow_put)
        oct_strbuf_puts(out, "put rollup histogram "); /* 2.4 registers them together */
    if (s->allow_diediedie) oct_strbuf_puts(out, "diediedie ");
    oct_strbuf_append(out, "\n", 1);
}

static int word_is(const char *w, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n == l && memcmp(w, lit, l) == 0;
}

static telnet_action_t run_line(telnet_session_t *s, const char *line, size_t len, int stable,
                                oct_strbuf_t *out)
{
    tsd_ctx_t *t = s->tsd;
    tsd_count(t, TSD_CTR_RPC_TELNET, 1);

    /* the command word; leading spaces are skipped like the others */
    size_t a = 0;
    while (a < len && line[a] == ' ')
        a++;
    size_t b = a;
    while (b < len && line[b] != ' ')
        b++;
    const char *w = line + a;
    size_t wn = b - a;

    if (s->allow_put && word_is(w, wn, "put")) {
        tsd_count(t, TSD_CTR_RPC_PUT, 1);
        do_put(s, line + b, len - b, stable, out);
        return TELNET_CONTINUE;
    }

    /* every other reply follows the replies of the puts before it */
    telnet_flush(s, out);
    if (s->auth) {
        auth_telnet_t g =
            auth_telnet_line(s->auth, &s->role, &s->auth_failures, w, wn, line + b, len - b, out);
        s->allow_put = s->role == AUTH_ROLE_RW && t->mode != TSD_MODE_RO;
        if (g == AUTH_TELNET_CLOSE) return TELNET_CLOSE;
        if (g == AUTH_TELNET_DONE) return TELNET_CONTINUE;
    }
    if (word_is(w, wn, "version")) {
        do_version(out);
    } else if (word_is(w, wn, "stats")) {
        do_stats(s, out);
    } else if (word_is(w, wn, "help")) {
        do_help(s, out);
    } else if (word_is(w, wn, "dropcaches")) {
        if (t->db) uid_drop_caches(tsdb_uids(t->db));
        oct_strbuf_puts(out, "Caches dropped.\n");
    } else if (word_is(w, wn, "exit")) {
        return TELNET_CLOSE;
    } else if (s->allow_put && word_is(w, wn, "rollup")) {
        api_rollup_telnet(t, line, len, out);
    } else if (s->allow_put && word_is(w, wn, "histogram")) {
        hist_telnet(t, line + b, len - b, s->return_errors, out); /* hist_in.c */
    } else if (s->allow_diediedie && word_is(w, wn, "diediedie")) {
        oct_strbuf_puts(out, "Cleaning up and exiting now.\n");
        return TELNET_SHUTDOWN;
    } else {
        tsd_count(t, TSD_CTR_RPC_ERRORS_TELNET, 1);
        oct_strbuf_puts(out, "unknown command: ");
        oct_strbuf_append(out, w, wn);
        oct_strbuf_puts(out, ".  Try `help'.\n");
    }
    return TELNET_CONTINUE;
}

telnet_action_t telnet_line(telnet_session_t *s, const char *line, size_t len, oct_strbuf_t *out)
{
    return run_line(s, line, len, 0, out);
}

telnet_action_t telnet_line_stable(telnet_session_t *s, const char *line, size_t len,
                                   oct_strbuf_t *out)
{
    return run_line(s, line, len, 1, out);
}
