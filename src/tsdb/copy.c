/* copy.c -- `octsdb copy`: a whole data set from one store to another,
 * through the store contract only (see copy.h). */
#include "tsdb/copy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/parts.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/write.h"

/* The checkpoint: one row in its own octsdb-sys partition, which neither
 * the copy nor the count check ever takes for data. */
static const oct_slice_t CP_PART = {(const uint8_t *)"copy", 4};
static const oct_slice_t CP_ROW = {(const uint8_t *)"copy", 4};
static const oct_slice_t CP_FAM = {(const uint8_t *)"c", 1};
static const oct_slice_t CP_SOURCE = {(const uint8_t *)"source", 6};
static const oct_slice_t CP_TABLE = {(const uint8_t *)"table", 5};
static const oct_slice_t CP_LAST = {(const uint8_t *)"part", 4};

const char *tsdb_copy_table_name(unsigned i)
{
    return i < TSDB_COPY_NTABLES ? store_table_default_name((store_table_t)i) : "?";
}

static int is_checkpoint(unsigned t, oct_slice_t part)
{
    return t == STORE_TABLE_SYS && oct_slice_eq(part, CP_PART);
}

/* ---- endpoints ---------------------------------------------------------- */

typedef struct {
    oct_config_t *cfg; /* the caller's, with this side's backend and place */
    char *tmpdir;      /* rados: the local dir the backend binds (removed at close) */
    char *id;          /* what the checkpoint names the source by */
    tsdb_t *db;        /* a data-dir source: held open (and locked) */
    store_t *st;       /* borrowed from db, or owned */
} copy_ep_t;

static int cfg_clone_cb(void *ctx, const char *key, const char *value)
{
    oct_errbuf_t eb;
    return oct_config_set(ctx, key, value, &eb);
}

static void ep_close(copy_ep_t *e)
{
    if (e->db)
        tsdb_close(e->db);
    else
        store_close(e->st);
    if (e->tmpdir) {
        char p[PATH_MAX + 16];
        snprintf(p, sizeof p, "%s/rados.ns", e->tmpdir);
        unlink(p);
        snprintf(p, sizeof p, "%s/rados.lock", e->tmpdir);
        unlink(p);
        rmdir(e->tmpdir);
        free(e->tmpdir);
    }
    free(e->id);
    oct_config_free(e->cfg);
    *e = (copy_ep_t){0};
}

/* Opens one side. A rados spec binds a fresh temp dir to its namespace; a
 * path opens the embedded store (a source: the whole database, so its
 * write-ahead log is flushed first, and it must exist). */
static int ep_open(copy_ep_t *e, const char *spec, const oct_config_t *base, int is_source,
                   oct_errbuf_t *eb)
{
    const char *side = is_source ? "--from" : "--to";
    *e = (copy_ep_t){0};
    e->cfg = oct_config_new();
    int rc = oct_config_foreach(base, cfg_clone_cb, e->cfg);
    if (rc) {
        rc = oct_err(eb, OCT_ECONFIG, "%s: cannot copy the configuration", side);
        goto fail;
    }
    store_options_t so;
    if (!strncmp(spec, "rados:", 6)) {
        char *pool = xstrdup(spec + 6), *slash = strchr(pool, '/');
        if (slash) *slash = 0;
        const char *ns = slash ? slash + 1 : oct_config_get(base, "tsd.storage.rados.namespace");
        if (!*pool || !ns || !*ns) {
            rc = oct_err(eb, OCT_ECONFIG,
                         "%s=%s: want rados:POOL/NAMESPACE (or tsd.storage.rados.namespace set)",
                         side, spec);
            free(pool);
            goto fail;
        }
        if (oct_config_set(e->cfg, "tsd.storage.backend", "rados", eb) ||
            oct_config_set(e->cfg, "tsd.storage.rados.pool", pool, eb) ||
            oct_config_set(e->cfg, "tsd.storage.rados.namespace", ns, eb)) {
            free(pool);
            rc = OCT_ECONFIG;
            goto fail;
        }
        size_t n = strlen(pool) + strlen(ns) + 16;
        e->id = xmalloc(n);
        snprintf(e->id, n, "rados:%s/%s", pool, ns);
        free(pool);
        const char *tmp = getenv("TMPDIR");
        char tmpl[PATH_MAX];
        snprintf(tmpl, sizeof tmpl, "%s/octsdb-copy-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmpl)) {
            rc = oct_err(eb, OCT_EIO, "mkdtemp %s: %s", tmpl, strerror(errno));
            goto fail;
        }
        e->tmpdir = xstrdup(tmpl);
        tsdb__store_options(e->cfg, e->tmpdir, &so);
        rc = store_open(&so, &e->st, eb);
        if (rc) goto fail;
        return 0;
    }
    if (oct_config_set(e->cfg, "tsd.storage.backend", "rocksdb", eb) ||
        oct_config_set(e->cfg, "tsd.storage.data_dir", spec, eb)) {
        rc = OCT_ECONFIG;
        goto fail;
    }
    if (is_source) {
        /* checked first: opening creates a store */
        struct stat sb;
        char real[PATH_MAX];
        if (stat(spec, &sb) != 0 || !S_ISDIR(sb.st_mode) || tsdb_exists(e->cfg, eb) != 1 ||
            !realpath(spec, real)) {
            rc = oct_err(eb, OCT_ECONFIG, "--from=%s: no such data dir", spec);
            goto fail;
        }
        e->id = xstrdup(real);
        /* read-write: replays what a stopped TSD left in the write-ahead
         * log, and the lock keeps a TSD from writing during the copy */
        rc = tsdb_open(e->cfg, 0, &e->db, eb);
        if (rc == OCT_ELOCKED)
            rc = oct_err(eb, OCT_ELOCKED,
                         "--from=%s is locked: a running TSD holds it (its write-ahead log may "
                         "hold points not yet in the store); stop it and copy again",
                         spec);
        if (rc) goto fail;
        if ((rc = tsdb_flush(e->db, eb)) != 0) goto fail;
        e->st = tsdb_store(e->db);
        return 0;
    }
    char real[PATH_MAX];
    e->id = xstrdup(realpath(spec, real) ? real : spec);
    tsdb__store_options(e->cfg, spec, &so);
    rc = store_open(&so, &e->st, eb);
    if (rc == OCT_ELOCKED)
        rc = oct_err(eb, OCT_ELOCKED, "--to=%s is locked: a running TSD holds it", spec);
    if (rc) goto fail;
    return 0;
fail:
    ep_close(e);
    return rc;
}

/* ---- the checkpoint ------------------------------------------------------- */

typedef struct {
    int present;
    char *source;
    unsigned table; /* tables before it are done; TSDB_COPY_NTABLES = all */
    uint8_t *last;  /* last partition of 'table' done; NULL = none yet */
    size_t last_len;
} copy_cp_t;

static void cp_free(copy_cp_t *cp)
{
    free(cp->source);
    free(cp->last);
    *cp = (copy_cp_t){0};
}

static char *slice_dup(oct_slice_t s)
{
    char *p = xmalloc(s.len + 1);
    memcpy(p, s.ptr, s.len);
    p[s.len] = 0;
    return p;
}

static int cp_read(store_t *st, copy_cp_t *cp, oct_errbuf_t *eb)
{
    store_result_t r = STORE_RESULT_INIT;
    *cp = (copy_cp_t){0};
    int rc = store_get(st, STORE_TABLE_SYS, CP_PART, CP_ROW, CP_FAM, &r, eb);
    if (rc > 0) {
        cp->present = 1;
        for (size_t i = 0; i < r.n; i++) {
            const store_cell_t *c = &r.cells[i];
            if (oct_slice_eq(c->qualifier, CP_SOURCE)) {
                cp->source = slice_dup(c->value);
            } else if (oct_slice_eq(c->qualifier, CP_TABLE)) {
                char *v = slice_dup(c->value);
                cp->table = (unsigned)strtoul(v, NULL, 10);
                free(v);
            } else if (oct_slice_eq(c->qualifier, CP_LAST) && c->value.len) {
                cp->last = (uint8_t *)slice_dup(c->value);
                cp->last_len = c->value.len;
            }
        }
        rc = cp->source && cp->table <= TSDB_COPY_NTABLES
                 ? 0
                 : oct_err(eb, OCT_ECORRUPT, "the destination's copy checkpoint is damaged");
    }
    store_result_free(&r);
    return rc < 0 ? rc : 0;
}

/* Records (durably) that every partition of 'table' up to 'last' is done. */
static int cp_write(store_t *st, const char *source, unsigned table, oct_slice_t last,
                    oct_errbuf_t *eb)
{
    char tv[16];
    int n = snprintf(tv, sizeof tv, "%u", table);
    store_op_t ops[3] = {
        {STORE_OP_PUT, CP_PART, {CP_ROW, CP_FAM, CP_SOURCE, oct_slice_str(source)}},
        {STORE_OP_PUT, CP_PART, {CP_ROW, CP_FAM, CP_TABLE, oct_slice(tv, (size_t)n)}},
        {STORE_OP_PUT, CP_PART, {CP_ROW, CP_FAM, CP_LAST, last}},
    };
    return store_write(st, STORE_TABLE_SYS, ops, 3, STORE_SYNC, eb);
}

/* ---- walking partitions -------------------------------------------------- */

/* The partitions of table t from start on, the checkpoint's left out. */
static int parts_of(store_t *st, unsigned t, oct_slice_t start, tsdb_parts_t *out, oct_errbuf_t *eb)
{
    int rc = tsdb__parts_list(st, (store_table_t)t, start, oct_slice(NULL, 0), out, eb);
    /* compact in place: keys are back to back, so move the kept ones down */
    size_t k = 0, used = 0;
    for (size_t i = 0; i < out->n; i++) {
        oct_slice_t p = tsdb__part(out, i);
        if (is_checkpoint(t, p)) continue;
        memmove(out->buf + used, p.ptr, p.len);
        used += p.len;
        out->off[++k] = used;
    }
    out->n = k;
    out->used = used;
    return rc;
}

/* Calls fn on each batch (at most 'batch' cells, whole rows may split) of
 * one partition, then once more with what is left. */
typedef int (*batch_fn)(void *ctx, store_result_t *cells, oct_errbuf_t *eb);

static int part_walk(store_t *st, unsigned t, oct_slice_t part, size_t batch, batch_fn fn,
                     void *ctx, oct_errbuf_t *eb)
{
    store_scan_spec_t spec = {.part = part};
    store_scanner_t *sc;
    int rc = store_scan_open(st, (store_table_t)t, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t row = STORE_RESULT_INIT, acc = STORE_RESULT_INIT;
    while ((rc = store_scan_next(sc, &row, eb)) > 0) {
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *c = &row.cells[i];
            store_result_add(&acc, c->row, c->family, c->qualifier, c->value);
        }
        if (acc.n >= batch) {
            if ((rc = fn(ctx, &acc, eb)) != 0) break;
            store_result_reset(&acc);
        }
    }
    if (rc == 0 && acc.n) rc = fn(ctx, &acc, eb);
    store_scan_close(sc);
    store_result_free(&row);
    store_result_free(&acc);
    return rc;
}

/* ---- copy and count ------------------------------------------------------ */

typedef struct {
    store_t *dst;
    unsigned table;
    oct_slice_t part;
    store_op_t *ops;
    size_t cap;
    uint64_t cells;
} copy_ctx_t;

static int copy_batch(void *ctx, store_result_t *cells, oct_errbuf_t *eb)
{
    copy_ctx_t *c = ctx;
    if (cells->n > c->cap) {
        c->cap = cells->n;
        c->ops = xrealloc(c->ops, c->cap * sizeof *c->ops);
    }
    for (size_t i = 0; i < cells->n; i++)
        c->ops[i] = (store_op_t){STORE_OP_PUT, c->part, cells->cells[i]};
    c->cells += cells->n;
    return store_write(c->dst, (store_table_t)c->table, c->ops, cells->n, 0, eb);
}

static int count_batch(void *ctx, store_result_t *cells, oct_errbuf_t *eb)
{
    (void)eb;
    *(uint64_t *)ctx += cells->n;
    return 0;
}

static int count_table(store_t *st, unsigned t, uint64_t *out, oct_errbuf_t *eb)
{
    tsdb_parts_t l = {0};
    int rc = parts_of(st, t, oct_slice(NULL, 0), &l, eb);
    *out = 0;
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = part_walk(st, t, tsdb__part(&l, i), 4096, count_batch, out, eb);
    tsdb__parts_free(&l);
    return rc;
}

static int any_cell(store_t *st, int *out, oct_errbuf_t *eb)
{
    *out = 0;
    for (unsigned t = 0; t < TSDB_COPY_NTABLES && !*out; t++) {
        tsdb_parts_t l = {0};
        int rc = parts_of(st, t, oct_slice(NULL, 0), &l, eb);
        *out = l.n > 0;
        tsdb__parts_free(&l);
        if (rc) return rc;
    }
    return 0;
}

/* Copies every partition after the checkpoint; 1 = stopped at max_parts. */
static int copy_tables(const tsdb_copy_opts_t *o, copy_ep_t *src, copy_ep_t *dst,
                       const copy_cp_t *cp, tsdb_copy_stats_t *stats, oct_errbuf_t *eb)
{
    copy_ctx_t c = {.dst = dst->st};
    size_t batch = o->batch ? o->batch : 1000;
    int rc = 0;
    for (unsigned t = cp->present ? cp->table : 0; rc == 0 && t < TSDB_COPY_NTABLES; t++) {
        /* resume strictly after the last partition done: its bytes plus a NUL */
        uint8_t *start = NULL;
        size_t start_len = 0;
        if (cp->present && t == cp->table && cp->last) {
            start = xmalloc(cp->last_len + 1);
            memcpy(start, cp->last, cp->last_len);
            start[cp->last_len] = 0;
            start_len = cp->last_len + 1;
        }
        tsdb_parts_t l = {0};
        rc = parts_of(src->st, t, oct_slice(start, start_len), &l, eb);
        free(start);
        for (size_t i = 0; rc == 0 && i < l.n; i++) {
            if (o->max_parts && stats->parts_copied >= o->max_parts) {
                rc = 1;
                break;
            }
            c.table = t;
            c.part = tsdb__part(&l, i);
            rc = part_walk(src->st, t, c.part, batch, copy_batch, &c, eb);
            if (rc == 0) rc = cp_write(dst->st, src->id, t, c.part, eb);
            if (rc == 0) {
                stats->parts_copied++;
                stats->cells_copied = c.cells;
                if (o->progress) o->progress(o->progress_ctx, stats->parts_copied, c.cells);
            }
        }
        tsdb__parts_free(&l);
        if (rc == 0) rc = cp_write(dst->st, src->id, t + 1, oct_slice(NULL, 0), eb);
    }
    free(c.ops);
    return rc;
}

int tsdb_copy(const tsdb_copy_opts_t *o, tsdb_copy_stats_t *stats, oct_errbuf_t *eb)
{
    *stats = (tsdb_copy_stats_t){0};
    copy_ep_t src, dst;
    copy_cp_t cp = {0};
    int rc = ep_open(&src, o->from, o->cfg, 1, eb);
    if (rc) return rc;
    int has_data = 0;
    if ((rc = any_cell(src.st, &has_data, eb)) == 0 && !has_data)
        rc = oct_err(eb, OCT_ENOTFOUND, "--from=%s holds no data set", o->from);
    if (rc) {
        ep_close(&src);
        return rc;
    }
    rc = ep_open(&dst, o->to, o->cfg, 0, eb);
    if (rc) {
        ep_close(&src);
        return rc;
    }
    if (!strcmp(src.id, dst.id)) {
        rc = oct_err(eb, OCT_EINVAL, "--from and --to name the same data set");
        goto out;
    }
    if ((rc = cp_read(dst.st, &cp, eb)) != 0) goto out;
    if (!o->check_only) {
        if (cp.present && strcmp(cp.source, src.id) != 0) {
            rc = oct_err(eb, OCT_EEXISTS,
                         "--to=%s holds an unfinished copy of %s, not of %s; empty it first", o->to,
                         cp.source, src.id);
            goto out;
        }
        int nonempty = 0;
        if (!cp.present && (rc = any_cell(dst.st, &nonempty, eb)) != 0) goto out;
        if (nonempty) {
            rc = oct_err(eb, OCT_EEXISTS,
                         "--to=%s already holds data; the destination must be empty (or an "
                         "unfinished copy of the same source, to resume)",
                         o->to);
            goto out;
        }
        stats->resumed = cp.present;
        rc = copy_tables(o, &src, &dst, &cp, stats, eb);
        if (rc) goto out; /* 1: TSDB_COPY_PARTIAL */
    }
    int mismatch = 0;
    for (unsigned t = 0; t < TSDB_COPY_NTABLES; t++) {
        if ((rc = count_table(src.st, t, &stats->src_cells[t], eb)) != 0 ||
            (rc = count_table(dst.st, t, &stats->dst_cells[t], eb)) != 0)
            goto out;
        mismatch |= stats->src_cells[t] != stats->dst_cells[t];
    }
    if (mismatch) {
        rc = TSDB_COPY_MISMATCH;
    } else if (!o->check_only) {
        /* done and verified: the destination becomes a plain data set */
        store_op_t del = {STORE_OP_DELETE_ROW, CP_PART, {CP_ROW, {0}, {0}, {0}}};
        rc = store_write(dst.st, STORE_TABLE_SYS, &del, 1, STORE_SYNC, eb);
    }
out:
    cp_free(&cp);
    ep_close(&dst);
    ep_close(&src);
    return rc;
}
