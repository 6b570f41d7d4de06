/* cmd_scan.c -- `octsdb scan [--import|--delete] START [END] <q>...`, as
 * OpenTSDB's `tsdb scan` (DumpSeries), plus the helpers that scan, fsck and
 * query share: the positional query syntax, the walk over selected rows, and
 * UID names for printing.
 *
 * Default output is one line per row, "[key as signed bytes] <metric>
 * <base_time> (<date>) {tags}", then one line per cell as OpenTSDB prints
 * it: single points "  [q]\t[v]\t<offset>\t<l|f>\t<ts>\t(<date>)",
 * compacted and append columns "  [q]\t[v] = <n> values:" followed by their
 * points indented by four spaces, annotations with their JSON, other objects
 * "[v]\t[Not a data point]". octsdb's block cells (qualifier 4F ..) are shown
 * like compacted columns: the block's bytes, then each decoded point in the
 * single-point shape (its qualifier and value as OpenTSDB would encode it:
 * a ms qualifier when the timestamp is not a whole second, the smallest
 * integer width, float32 when exact).
 *
 * --import prints `metric ts value k=v...` lines that `octsdb import` reads
 * back: ts in seconds for seconds points, ms otherwise; integers as
 * integers; floats in the shortest form that reads back to the same double,
 * always with a '.' or an exponent so they stay floats. --delete deletes
 * every scanned row (and implies --import).
 *
 * Differences (docs/compat.md): tags are printed sorted by name (OpenTSDB
 * prints a Java HashMap in hash order); a UID without a name is printed as
 * "<kind>:<HEX>" instead of aborting the dump. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "codec/uid_bytes.h"
#include "codec/block.h"
#include "codec/cell.h"
#include "common/bytes.h"
#include "common/clock.h"
#include "common/dtoa.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "query/query.h"
#include "tsdb/maint.h"
#include "tsdb/write.h"

/* ---- positional query syntax ------------------------------------------- */

static int q_usage_err(const char *cmd, const char *msg)
{
    fprintf(stderr, "octsdb %s: %s\n", cmd, msg);
    return CLI_EXIT_USAGE;
}

static int parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

void cli_queries_free(cli_queries_t *qs)
{
    for (size_t i = 0; i < qs->n; i++) {
        cli_query_t *q = &qs->q[i];
        free(q->agg);
        free(q->ds_agg);
        free(q->metric);
        for (size_t j = 0; j < q->n_tags; j++) {
            free(q->tagk[j]);
            free(q->tagv[j]);
        }
        free(q->tagk);
        free(q->tagv);
    }
    free(qs->q);
    for (size_t i = 0; i < qs->n_plot_opts; i++)
        free(qs->plot_opts[i]);
    free(qs->plot_opts);
    memset(qs, 0, sizeof *qs);
}

static int check_agg(const char *cmd, const char *name)
{
    if (query_agg_find(name)) return 0;
    fprintf(stderr, "octsdb %s: No such aggregator: %s\n", cmd, name);
    return CLI_EXIT_USAGE;
}

int cli_queries_parse(const char *cmd, char **args, int n, const char *tz, cli_queries_t *out)
{
    memset(out, 0, sizeof *out);
    if (n < 3) return q_usage_err(cmd, "Not enough arguments.");
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int64_t now_ms = oct_clock_wall_ms();
    if (query_parse_time(args[0], tz, now_ms, &out->start_ms, &eb)) {
        fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg);
        return CLI_EXIT_USAGE;
    }
    out->end_ms = now_ms;
    int i = 1;
    /* CliQuery: a second argument is an end date if it looks like one */
    int64_t num;
    if (n > 3 && args[1][0] != '+' &&
        (strpbrk(args[1], ":/-") || (parse_i64(args[1], &num) == 0 && num > 0))) {
        if (query_parse_time(args[1], tz, now_ms, &out->end_ms, &eb)) {
            fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg);
            return CLI_EXIT_USAGE;
        }
        out->has_end = 1;
        i = 2;
    }
    while (i < n && args[i][0] == '+') {
        out->plot_opts = xrealloc(out->plot_opts, (out->n_plot_opts + 1) * sizeof(char *));
        out->plot_opts[out->n_plot_opts++] = xstrdup(args[i++]);
    }
    int rc = 0;
    while (i < n) {
        out->q = xrealloc(out->q, (out->n + 1) * sizeof *out->q);
        cli_query_t *q = &out->q[out->n++];
        memset(q, 0, sizeof *q);
        q->counter_max = INT64_MAX;
        q->agg = xstrdup(args[i++]);
        if ((rc = check_agg(cmd, q->agg))) goto fail;
        if (i < n && !strcmp(args[i], "rate")) {
            q->rate = 1;
            i++;
            if (i < n && !strncmp(args[i], "counter", 7)) {
                q->counter = 1;
                /* counter[,max[,reset]]: empty parts keep the defaults */
                char *c1 = strchr(args[i], ',');
                if (c1) {
                    char *c2 = strchr(c1 + 1, ',');
                    char *part = xstrdup(c1 + 1);
                    if (c2) part[c2 - c1 - 1] = '\0';
                    int bad = part[0] && parse_i64(part, &q->counter_max);
                    free(part);
                    if (!bad && c2 && c2[1]) bad = parse_i64(c2 + 1, &q->reset_value) != 0;
                    if (bad) {
                        fprintf(stderr, "octsdb %s: invalid counter options: %s\n", cmd, args[i]);
                        rc = CLI_EXIT_USAGE;
                        goto fail;
                    }
                }
                i++;
            }
        }
        if (i < n && !strcmp(args[i], "downsample")) {
            i++;
            if (i + 1 >= n) {
                rc = q_usage_err(cmd, "Not enough arguments after 'downsample'.");
                goto fail;
            }
            q->has_downsample = 1;
            if (parse_i64(args[i], &q->ds_ms) || q->ds_ms <= 0) {
                fprintf(stderr, "octsdb %s: invalid downsample interval: %s\n", cmd, args[i]);
                rc = CLI_EXIT_USAGE;
                goto fail;
            }
            i++;
            q->ds_agg = xstrdup(args[i++]);
            if ((rc = check_agg(cmd, q->ds_agg))) goto fail;
        }
        if (i >= n) {
            rc = q_usage_err(cmd, "Not enough arguments: missing the metric.");
            goto fail;
        }
        q->metric = xstrdup(args[i++]);
        /* tags: words with a '=' past the first character and no space */
        while (i < n && !strchr(args[i] + (args[i][0] ? 1 : 0), ' ') &&
               strchr(args[i] + (args[i][0] ? 1 : 0), '=')) {
            const char *t = args[i];
            const char *eq = strchr(t, '=');
            if (strchr(eq + 1, '=') || !eq[1]) {
                fprintf(stderr, "octsdb %s: invalid tag: %s\n", cmd, t);
                rc = CLI_EXIT_USAGE;
                goto fail;
            }
            char *k = xmemdup(t, (size_t)(eq - t) + 1);
            k[eq - t] = '\0';
            size_t j = 0;
            for (; j < q->n_tags; j++)
                if (!strcmp(q->tagk[j], k)) break;
            if (j < q->n_tags) {
                if (strcmp(q->tagv[j], eq + 1)) {
                    fprintf(stderr, "octsdb %s: duplicate tag: %s\n", cmd, t);
                    free(k);
                    rc = CLI_EXIT_USAGE;
                    goto fail;
                }
                free(k);
            } else {
                q->tagk = xrealloc(q->tagk, (q->n_tags + 1) * sizeof(char *));
                q->tagv = xrealloc(q->tagv, (q->n_tags + 1) * sizeof(char *));
                q->tagk[q->n_tags] = k;
                q->tagv[q->n_tags] = xstrdup(eq + 1);
                q->n_tags++;
            }
            i++;
        }
        /* a per-query gnuplot option ("with lines") is accepted and ignored */
        if (i < n && strchr(args[i] + (args[i][0] ? 1 : 0), ' ')) i++;
    }
    if (out->n == 0) {
        rc = q_usage_err(cmd, "Not enough arguments, need at least one query.");
        goto fail;
    }
    return 0;
fail:
    cli_queries_free(out);
    return rc;
}

/* ---- opening, names ---------------------------------------------------- */

int cli_open_db_for_read(const char *cmd, const oct_config_t *cfg, tsdb_t **db)
{
    return cli_open_db_beside(cmd, cfg, 0, db, NULL);
}

int cli_open_db_beside(const char *cmd, const oct_config_t *cfg, unsigned ro_flags, tsdb_t **db,
                       cli_live_t **live)
{
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (live) *live = NULL;
    int rc = tsdb_open(cfg, 0, db, &eb);
    if (rc == OCT_ELOCKED) {
        cli_live_t *l = NULL;
        int st = cli_live_find(cmd, cfg, &l);
        if (st == 0) st = cli_live_flush(cmd, l);
        if (st > 1 || (st == 1 && live)) {
            cli_live_close(l);
            if (st > 1) return st;
            /* no TSD to write through: report the lock */
            fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg[0] ? eb.msg : oct_strerror(rc));
            return CLI_EXIT_STORAGE;
        }
        if (live)
            *live = l;
        else
            cli_live_close(l);
        oct_errbuf_clear(&eb);
        rc = tsdb_open(cfg, TSDB_OPEN_READONLY | ro_flags, db, &eb);
        if (rc && live) {
            cli_live_close(*live);
            *live = NULL;
        }
    } else if (rc == 0) {
        rc = tsdb_flush(*db, &eb);
        if (rc) tsdb_close(*db);
    }
    if (rc) {
        fprintf(stderr, "octsdb %s: %s\n", cmd, eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    return 0;
}

void cli_rowkey_layout(tsdb_t *db, codec_rowkey_layout_t *out)
{
    const tsdb_layout_t *l = tsdb_layout(db);
    out->metric_w = (uint8_t)l->uid_width[CODEC_UID_METRIC];
    out->tagk_w = (uint8_t)l->uid_width[CODEC_UID_TAGK];
    out->tagv_w = (uint8_t)l->uid_width[CODEC_UID_TAGV];
    out->salt_w = (uint8_t)l->salt_width;
    out->salt_buckets = l->salt_buckets ? l->salt_buckets : 1;
}

int cli_uid_name(tsdb_t *db, codec_uid_kind_t kind, const uint8_t *uid, char *buf, size_t cap)
{
    uid_registry_t *r = tsdb_uids(db);
    unsigned w = uid_width(r, kind);
    uint64_t id = codec_uid_decode(uid, w);
    size_t len = 0;
    oct_errbuf_t eb;
    int rc = cap > 1 ? uid_get_name(r, kind, id, (uint8_t *)buf, cap - 1, &len, &eb) : OCT_ENOSPC;
    if (rc == 0 || rc == OCT_ENOSPC) {
        if (len > cap - 1) len = cap - 1;
        buf[len] = '\0';
        return 1;
    }
    char hex[2 * CODEC_UID_MAX_WIDTH + 1];
    if (codec_uid_to_hex(uid, w, hex, sizeof hex) < 0) hex[0] = '\0';
    snprintf(buf, cap, "%s:%s", codec_uid_kind_qualifier(kind), hex);
    return rc == OCT_ENOSUCHID ? 0 : rc;
}

typedef struct {
    char k[256], v[256];
} tag_name_t;

static int tag_name_cmp(const void *a, const void *b)
{
    const tag_name_t *x = a, *y = b;
    int c = strcmp(x->k, y->k);
    return c ? c : strcmp(x->v, y->v);
}

int cli_format_tags(tsdb_t *db, const codec_rowkey_t *rk, int import, oct_strbuf_t *sb)
{
    tag_name_t stack[8];
    tag_name_t *t = rk->n_tags <= 8 ? stack : xmalloc(rk->n_tags * sizeof *t);
    int missing = 0;
    for (size_t i = 0; i < rk->n_tags; i++) {
        if (cli_uid_name(db, CODEC_UID_TAGK, codec_rowkey_tagk(rk, i), t[i].k, sizeof t[i].k) != 1)
            missing = 1;
        if (cli_uid_name(db, CODEC_UID_TAGV, codec_rowkey_tagv(rk, i), t[i].v, sizeof t[i].v) != 1)
            missing = 1;
    }
    qsort(t, rk->n_tags, sizeof *t, tag_name_cmp);
    if (!import) oct_strbuf_puts(sb, "{");
    for (size_t i = 0; i < rk->n_tags; i++)
        oct_strbuf_printf(sb, "%s%s=%s", import ? " " : (i ? ", " : ""), t[i].k, t[i].v);
    if (!import) oct_strbuf_puts(sb, "}");
    if (t != stack) free(t);
    return missing;
}

/* ---- walking the selected rows ---------------------------------------- */

/* The tag filters of one query, compiled, with the names of each row's tag
 * keys resolved on the way. */
typedef struct {
    tsdb_t *db;
    codec_rowkey_layout_t lay;
    query_filter_t *f;
    size_t nf;
} row_match_t;

static int row_matches(row_match_t *m, oct_slice_t key)
{
    if (m->nf == 0) return 1;
    codec_rowkey_t rk;
    if (codec_rowkey_parse(&m->lay, key.ptr, key.len, &rk, NULL)) return 0;
    for (size_t i = 0; i < m->nf; i++) {
        const query_filter_t *f = &m->f[i];
        int found = 0, ok = 0;
        for (size_t t = 0; t < rk.n_tags && !found; t++) {
            char k[512], v[512];
            if (cli_uid_name(m->db, CODEC_UID_TAGK, codec_rowkey_tagk(&rk, t), k, sizeof k) != 1)
                continue;
            if (strcmp(k, f->tagk)) continue;
            found = 1;
            if (cli_uid_name(m->db, CODEC_UID_TAGV, codec_rowkey_tagv(&rk, t), v, sizeof v) != 1)
                return 0;
            ok = query_filter_match(f, v, strlen(v));
        }
        if (!found) ok = query_filter_match(f, NULL, 0);
        if (!ok) return 0;
    }
    return 1;
}

/* Hands fn the rows whose key parses and whose tags pass the filters. */
typedef struct {
    row_match_t *m;
    cli_row_fn fn;
    void *ctx;
} row_filter_t;

static int row_filter(void *ctx, const tsdb_row_t *row)
{
    row_filter_t *f = ctx;
    codec_rowkey_t rk;
    if (codec_rowkey_parse(&f->m->lay, row->key.ptr, row->key.len, &rk, NULL)) return 0;
    if (!row_matches(f->m, row->key)) return 0;
    return f->fn(f->ctx, row);
}

int cli_rows_foreach(tsdb_t *db, const cli_queries_t *qs, cli_row_fn fn, void *ctx,
                     oct_errbuf_t *eb)
{
    if (!qs) {
        tsdb_rows_spec_t all = {.every_row = 1};
        return tsdb_scan_rows(db, &all, fn, ctx, eb);
    }
    /* hours past the row keys' range select nothing, even of an unknown metric */
    int64_t b0 = codec_rowkey_base_time(qs->start_ms / 1000);
    int64_t b1 = codec_rowkey_base_time(qs->end_ms / 1000);
    if (b0 < 0) b0 = 0;
    if (b1 > (int64_t)UINT32_MAX) b1 = codec_rowkey_base_time(UINT32_MAX);
    if (b1 < b0) return 0;
    codec_rowkey_layout_t lay;
    cli_rowkey_layout(db, &lay);
    int rc = 0;
    for (size_t qi = 0; qi < qs->n && rc == 0; qi++) {
        const cli_query_t *q = &qs->q[qi];
        uint64_t metric;
        rc = uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)q->metric,
                        strlen(q->metric), &metric, eb);
        if (rc) break;
        row_match_t m = {.db = db, .lay = lay};
        m.f = xcalloc(q->n_tags ? q->n_tags : 1, sizeof *m.f);
        for (size_t t = 0; t < q->n_tags && rc == 0; t++) {
            rc = query_filter_from_tag(&m.f[t], q->tagk[t], q->tagv[t], 1, eb);
            if (rc == 0) m.nf++;
        }
        tsdb_rows_spec_t spec = {0, metric, qs->start_ms, qs->end_ms};
        row_filter_t rf = {&m, fn, ctx};
        if (rc == 0) rc = tsdb_scan_rows(db, &spec, row_filter, &rf, eb);
        for (size_t t = 0; t < m.nf; t++)
            query_filter_free(&m.f[t]);
        free(m.f);
    }
    return rc;
}

/* ---- formatting -------------------------------------------------------- */

static void put_javabytes(oct_strbuf_t *sb, const uint8_t *b, size_t n)
{
    oct_strbuf_puts(sb, "[");
    for (size_t i = 0; i < n; i++)
        oct_strbuf_printf(sb, i ? ", %d" : "%d", (int)(int8_t)b[i]);
    oct_strbuf_puts(sb, "]");
}

/* Java's Date.toString() in the local zone; ts in ms if it needs more than 32 bits. */
static void put_date(oct_strbuf_t *sb, int64_t ts)
{
    time_t t = (time_t)((ts & (int64_t)0xFFFFFFFF00000000LL) ? ts / 1000 : ts);
    struct tm tm;
    char buf[64];
    if (!localtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Z %Y", &tm))
        snprintf(buf, sizeof buf, "%" PRId64, ts);
    oct_strbuf_puts(sb, buf);
}

/* The shortest text that reads back as d, always recognisable as a float. */
static void put_double(oct_strbuf_t *sb, double d)
{
    if (isnan(d)) {
        oct_strbuf_puts(sb, "NaN");
        return;
    }
    if (isinf(d)) {
        oct_strbuf_puts(sb, d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char buf[OCT_DTOA_BUF + 2];
    oct_dtoa_g(d, 1, buf);
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    oct_strbuf_puts(sb, buf);
}

/* One point of a row as OpenTSDB stores it: qualifier and value bytes. */
typedef struct {
    codec_dp_t dp;
    codec_cell_buf_t cb;
} scan_pt_t;

static void pt_from_dp(const codec_dp_t *dp, scan_pt_t *out)
{
    out->dp = *dp;
    uint8_t flags = codec_flags(dp->is_float, dp->width);
    codec_cell_buf_t *cb = &out->cb;
    if (dp->ms) {
        cb->qual_len = 4;
        oct_put_be32(cb->qual, 0xF0000000u | dp->offset_ms << 6 | flags);
    } else {
        cb->qual_len = 2;
        oct_put_be16(cb->qual, (uint16_t)((dp->offset_ms / 1000) << 4 | flags));
    }
    cb->val_len = dp->width;
    if (!dp->is_float) {
        oct_put_be_n(cb->val, (uint64_t)dp->val.i, dp->width);
    } else if (dp->width == 4) {
        float f = (float)dp->val.f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        oct_put_be32(cb->val, bits);
    } else {
        uint64_t bits;
        memcpy(&bits, &dp->val.f, 8);
        oct_put_be64(cb->val, bits);
    }
}

static void pt_from_point(const codec_point_t *p, uint32_t base_s, scan_pt_t *out)
{
    codec_dp_t dp = {0};
    dp.offset_ms = (uint32_t)(p->ts_ms - (int64_t)base_s * 1000);
    dp.ms = p->ts_ms % 1000 != 0;
    dp.is_float = p->is_float;
    uint8_t tmp[8];
    if (p->is_float) {
        dp.width = (uint8_t)codec_value_encode_float(p->val.f, tmp);
        dp.val.f = p->val.f;
    } else {
        dp.width = (uint8_t)codec_value_encode_int(p->val.i, tmp);
        dp.val.i = p->val.i;
    }
    pt_from_dp(&dp, out);
}

static int64_t pt_ts(const scan_pt_t *p, uint32_t base_s)
{
    return p->dp.ms ? (int64_t)base_s * 1000 + p->dp.offset_ms
                    : (int64_t)base_s + p->dp.offset_ms / 1000;
}

static void put_raw_point(oct_strbuf_t *sb, const scan_pt_t *p, uint32_t base_s)
{
    int64_t ts = pt_ts(p, base_s);
    put_javabytes(sb, p->cb.qual, p->cb.qual_len);
    oct_strbuf_puts(sb, "\t");
    put_javabytes(sb, p->cb.val, p->cb.val_len);
    oct_strbuf_printf(sb, "\t%" PRIu32 "\t%s\t%" PRId64 "\t(",
                      p->dp.ms ? p->dp.offset_ms : p->dp.offset_ms / 1000,
                      p->dp.is_float ? "f" : "l", ts);
    put_date(sb, ts);
    oct_strbuf_puts(sb, ")");
}

static void put_import_point(oct_strbuf_t *sb, const char *metric, const scan_pt_t *p,
                             uint32_t base_s, const char *tags)
{
    oct_strbuf_printf(sb, "%s %" PRId64 " ", metric, pt_ts(p, base_s));
    if (p->dp.is_float)
        put_double(sb, p->dp.val.f);
    else
        oct_strbuf_printf(sb, "%" PRId64, p->dp.val.i);
    oct_strbuf_printf(sb, "%s\n", tags);
}

/* ---- the command ------------------------------------------------------- */

typedef struct {
    tsdb_t *db;
    codec_rowkey_layout_t lay;
    int import, del;
    oct_strbuf_t out, tags;
    codec_point_t *pts;
    size_t pts_cap;
    /* --delete: the series of the rows printed (TSUIDs, one byte of length
     * then the bytes), deleted over the scanned hours at the end */
    uint8_t *dl;
    size_t dl_len, dl_cap;
    size_t n_dl, n_dl_unique;
    cli_live_t *live; /* --delete beside a running TSD: it deletes */
    uint64_t rows, points;
    cli_progress_t prog; /* rows scanned; no total, so no ETA */
} scan_t;

static int tsuid_cmp(const void *a, const void *b, void *arg)
{
    const uint8_t *buf = arg, *x = buf + *(const size_t *)a, *y = buf + *(const size_t *)b;
    return oct_slice_cmp(oct_slice(x + 1, x[0]), oct_slice(y + 1, y[0]));
}

/* The distinct series in s->dl, sorted; their offsets into *off (malloc'd). */
static size_t del_series(scan_t *s, size_t **off)
{
    *off = xmalloc((s->n_dl ? s->n_dl : 1) * sizeof **off);
    size_t n = 0;
    for (size_t p = 0; p < s->dl_len; p += 1 + s->dl[p])
        (*off)[n++] = p;
    qsort_r(*off, n, sizeof **off, tsuid_cmp, s->dl);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || tsuid_cmp(&(*off)[u - 1], &(*off)[i], s->dl)) (*off)[u++] = (*off)[i];
    return u;
}

/* Keeps each series once: rows of one series come once per hour. */
static void del_compact(scan_t *s)
{
    size_t *off;
    size_t n = del_series(s, &off);
    uint8_t *nb = xmalloc(s->dl_cap);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(nb + len, s->dl + off[i], 1 + s->dl[off[i]]);
        len += 1 + s->dl[off[i]];
    }
    free(off);
    free(s->dl);
    s->dl = nb;
    s->dl_len = len;
    s->n_dl = s->n_dl_unique = n;
}

static void del_add(scan_t *s, oct_slice_t key)
{
    uint8_t t[256];
    int len = codec_tsuid_from_rowkey(&s->lay, key.ptr, key.len, t, sizeof t, NULL);
    if (len <= 0 || len > 255) return;
    if (s->dl_len + 1 + (size_t)len > s->dl_cap) {
        s->dl_cap = (s->dl_len + 1 + (size_t)len) * 2 + 4096;
        s->dl = xrealloc(s->dl, s->dl_cap);
    }
    s->dl[s->dl_len] = (uint8_t)len;
    memcpy(s->dl + s->dl_len + 1, t, (size_t)len);
    s->dl_len += 1 + (size_t)len;
    if (++s->n_dl >= 2 * s->n_dl_unique + 4096) del_compact(s);
}

/* Deletes the rows of every series printed over the scanned hours. */
/* Beside a running TSD: the windows go to POST /api/octsdb/delete, which
 * runs tsdb_delete_window there (api_admin.c). */
static int scan_delete_live(scan_t *s, const tsdb_window_t *w, size_t n, oct_errbuf_t *eb)
{
    oct_strbuf_t body = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    json_writer_t jw;
    json_w_init(&jw, &body);
    json_w_obj_begin(&jw);
    json_w_key(&jw, "windows");
    json_w_arr_begin(&jw);
    for (size_t i = 0; i < n; i++) {
        char hex[2 * 256 + 1];
        if (codec_uid_to_hex(w[i].tsuid, w[i].tsuid_len, hex, sizeof hex) < 0) continue;
        json_w_obj_begin(&jw);
        json_w_key(&jw, "tsuid");
        json_w_str(&jw, hex);
        json_w_key(&jw, "start");
        json_w_int(&jw, w[i].start_ms);
        json_w_key(&jw, "end");
        json_w_int(&jw, w[i].end_ms);
        json_w_obj_end(&jw);
    }
    json_w_arr_end(&jw);
    json_w_obj_end(&jw);
    int st = cli_live_http(s->live, "POST", "/api/octsdb/delete", body.ptr, body.len, &resp, eb);
    int rc = st < 0 ? st : 0;
    if (st >= 0 && st != 200) {
        char msg[600];
        cli_live_error_message(&resp, msg, sizeof msg);
        rc = oct_err(eb, OCT_EIO, "the TSD could not delete: %s", msg);
    }
    oct_strbuf_free(&body);
    oct_strbuf_free(&resp);
    return rc;
}

static int scan_delete(scan_t *s, const cli_queries_t *qs, oct_errbuf_t *eb)
{
    size_t *off;
    size_t n = del_series(s, &off);
    tsdb_window_t *w = xmalloc((n ? n : 1) * sizeof *w);
    for (size_t i = 0; i < n; i++)
        w[i] = (tsdb_window_t){s->dl + off[i] + 1, s->dl[off[i]], qs->start_ms, qs->end_ms};
    int rc = s->live ? scan_delete_live(s, w, n, eb) : tsdb_delete_window(s->db, w, n, NULL, eb);
    free(w);
    free(off);
    return rc;
}

static int scan_row(void *ctx, const tsdb_row_t *row)
{
    scan_t *s = ctx;
    oct_slice_t key = row->key;
    codec_rowkey_t rk;
    if (codec_rowkey_parse(&s->lay, key.ptr, key.len, &rk, NULL)) return 0;
    uint32_t base = rk.base_time;
    char metric[512];
    cli_uid_name(s->db, CODEC_UID_METRIC, rk.metric, metric, sizeof metric);
    oct_strbuf_t *o = &s->out;
    oct_strbuf_reset(o);
    oct_strbuf_reset(&s->tags);
    cli_format_tags(s->db, &rk, s->import, &s->tags);
    const char *tags = oct_strbuf_cstr(&s->tags);
    s->rows++;
    cli_progress_update(&s->prog, 0, s->rows, 0);
    if (!s->import) {
        put_javabytes(o, key.ptr, key.len);
        oct_strbuf_printf(o, " %s %" PRIu32 " (", metric, base);
        put_date(o, base);
        oct_strbuf_printf(o, ") %s\n", tags);
    }
    for (size_t i = 0; i < row->n_cells; i++) {
        const tsdb_cell_t *c = &row->cells[i];
        const uint8_t *q = c->qualifier.ptr, *v = c->value.ptr;
        size_t ql = c->qualifier.len, vl = c->value.len;
        codec_qual_kind_t kind = codec_qual_classify(q, ql);
        oct_errbuf_t eb;
        scan_pt_t p;
        if (kind == CODEC_QUAL_BLOCK) {
            int cnt = codec_block_count(v, vl);
            if (cnt > 0 && (size_t)cnt > s->pts_cap) {
                s->pts_cap = (size_t)cnt;
                s->pts = xrealloc(s->pts, s->pts_cap * sizeof *s->pts);
            }
            int n = cnt >= 0 ? codec_block_decode(v, vl, s->pts, s->pts_cap) : cnt;
            if (!s->import) {
                oct_strbuf_puts(o, "  ");
                put_javabytes(o, q, ql);
                oct_strbuf_puts(o, "\t");
                put_javabytes(o, v, vl);
                if (n < 0)
                    oct_strbuf_puts(o, "\t[Corrupt block]\n");
                else
                    oct_strbuf_printf(o, " = %d values:\n", n);
            }
            for (int j = 0; j < n; j++) {
                pt_from_point(&s->pts[j], base, &p);
                if (s->import) {
                    put_import_point(o, metric, &p, base, tags);
                } else {
                    oct_strbuf_puts(o, "    ");
                    put_raw_point(o, &p, base);
                    oct_strbuf_puts(o, "\n");
                }
                s->points++;
            }
        } else if (kind == CODEC_QUAL_SECONDS || kind == CODEC_QUAL_MS) {
            if (codec_cell_decode_single(q, ql, v, vl, &p.dp, &eb)) {
                if (!s->import) {
                    oct_strbuf_puts(o, "  ");
                    put_javabytes(o, q, ql);
                    oct_strbuf_puts(o, "\t");
                    put_javabytes(o, v, vl);
                    oct_strbuf_puts(o, "\t[Bad value]\n");
                }
                continue;
            }
            pt_from_dp(&p.dp, &p);
            if (s->import) {
                put_import_point(o, metric, &p, base, tags);
            } else {
                oct_strbuf_puts(o, "  ");
                put_raw_point(o, &p, base);
                oct_strbuf_puts(o, "\n");
            }
            s->points++;
        } else if (kind == CODEC_QUAL_COMPACTED || kind == CODEC_QUAL_APPEND) {
            codec_cell_iter_t it;
            int ok = codec_cell_iter_init(&it, q, ql, v, vl, &eb) >= 0;
            /* count first: the header line carries the number of values */
            size_t n = 0;
            if (ok) {
                codec_cell_iter_t it2 = it;
                codec_dp_t dp;
                int r;
                while ((r = codec_cell_iter_next(&it2, &dp, &eb)) == 1)
                    n++;
                if (r < 0) ok = 0;
            }
            if (!s->import) {
                oct_strbuf_puts(o, "  ");
                put_javabytes(o, q, ql);
                oct_strbuf_puts(o, "\t");
                put_javabytes(o, v, vl);
                if (!ok)
                    oct_strbuf_puts(o, "\t[Corrupt compacted column]\n");
                else
                    oct_strbuf_printf(o, " = %zu values:\n", n);
            }
            if (!ok) continue;
            while (codec_cell_iter_next(&it, &p.dp, &eb) == 1) {
                pt_from_dp(&p.dp, &p);
                if (s->import) {
                    put_import_point(o, metric, &p, base, tags);
                } else {
                    oct_strbuf_puts(o, "    ");
                    put_raw_point(o, &p, base);
                    oct_strbuf_puts(o, "\n");
                }
                s->points++;
            }
        } else if (!s->import) {
            oct_strbuf_puts(o, "  ");
            if (kind == CODEC_QUAL_ANNOTATION && (ql == 3 || ql == 5)) {
                int64_t off = ql == 3 ? oct_get_be16(q + 1) : oct_get_be32(q + 1);
                int64_t ts = ql == 3 ? (int64_t)base + off : (int64_t)base * 1000 + off;
                put_javabytes(o, q, ql);
                oct_strbuf_puts(o, "\t");
                put_javabytes(o, v, vl);
                oct_strbuf_printf(o, "\t%" PRId64 "\t", ql == 3 ? off : off / 1000);
                oct_strbuf_append(o, v, vl);
                oct_strbuf_printf(o, "\t%" PRId64 "\t(", ts);
                put_date(o, ts);
                oct_strbuf_puts(o, ")\n");
            } else {
                put_javabytes(o, v, vl);
                oct_strbuf_puts(o, "\t[Not a data point]\n");
            }
        }
    }
    fwrite(o->ptr ? o->ptr : "", 1, o->len, stdout);
    if (s->del) del_add(s, key);
    return 0;
}

static void scan_usage(FILE *f)
{
    fprintf(f, "usage: octsdb scan [--import|--delete] START-DATE [END-DATE] query [queries...]\n"
               "To see the format in which queries should be written, see the help of the\n"
               "'query' command.\n"
               "The --import flag prints the rows in the format of the 'import' command\n"
               "instead of the default format, which shows how the data is stored.\n"
               "The --delete flag deletes every row matched by the query; it implies --import.\n"
               "\nFlags:\n"
               "  --import  Print `metric ts value k=v...` lines for 'octsdb import'.\n"
               "  --delete  Delete the rows as they are scanned.\n"
               "  --quiet   No progress line (drawn on stderr, with rows and rate, when\n"
               "            stderr is a terminal and the output is not).\n");
    cli_print_common_flags(f);
}

int cli_cmd_scan(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        scan_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("scan", &argc, argv, &cfg);
    if (rc) return rc;
    scan_t s = {0};
    int quiet = 0;
    char **pos = xmalloc((size_t)argc * sizeof(char *));
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--import")) {
            s.import = 1;
        } else if (!strcmp(argv[i], "--delete")) {
            s.del = s.import = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "octsdb scan: unknown flag %s\n", argv[i]);
            scan_usage(stderr);
            free(pos);
            oct_config_free(cfg);
            return CLI_EXIT_USAGE;
        } else {
            pos[npos++] = argv[i];
        }
    }
    cli_queries_t qs;
    rc = cli_queries_parse("scan", pos, npos, oct_config_get(cfg, "tsd.core.timezone"), &qs);
    free(pos);
    if (rc) {
        if (rc == CLI_EXIT_USAGE) scan_usage(stderr);
        oct_config_free(cfg);
        return rc;
    }
    tsdb_t *db;
    rc = cli_open_db_beside("scan", cfg, 0, &db, s.del ? &s.live : NULL);
    if (rc) {
        cli_queries_free(&qs);
        oct_config_free(cfg);
        return rc;
    }
    if (s.del && !s.live) {
        oct_errbuf_t eb0;
        if (tsdb_flush(db, &eb0)) fprintf(stderr, "octsdb scan: %s\n", eb0.msg);
    }
    s.db = db;
    cli_rowkey_layout(db, &s.lay);
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    /* Progress only when the output is not the same terminal. */
    cli_progress_init(&s.prog, "rows", 0, quiet || isatty(1));
    rc = cli_rows_foreach(db, &qs, scan_row, &s, &eb);
    cli_progress_update(&s.prog, 0, s.rows, 1);
    cli_progress_break(&s.prog);
    if (rc == 0 && s.del) rc = scan_delete(&s, &qs, &eb);
    int status = CLI_EXIT_OK;
    if (rc) {
        fprintf(stderr, "octsdb scan: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        status = rc == OCT_ENOSUCHNAME || rc == OCT_EPARSE ? CLI_EXIT_NOTFOUND : CLI_EXIT_STORAGE;
    }
    fflush(stdout);
    oct_strbuf_free(&s.out);
    oct_strbuf_free(&s.tags);
    free(s.pts);
    free(s.dl);
    tsdb_close(db);
    cli_live_close(s.live);
    cli_queries_free(&qs);
    oct_config_free(cfg);
    return status;
}
