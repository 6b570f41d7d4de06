/* store_rados.c -- the store.h contract on a Ceph RADOS pool: the backend
 * "rados", seen from outside only as store_rados_methods.
 *
 * The layout is docs/format/rados.md: one data set is one namespace of the
 * pool; a partition is one object ("<table>/<hex(partition)>") whose omap
 * holds its cells under enc1(row) | enc1(family) | enc1(qualifier), with the
 * value behind a version byte; a per-table index object lists the
 * partitions in byte order. Everything a partition needs to be atomic (a CAS,
 * the ops of one partition in a write) is one compound object operation, so
 * the OSD serialises it; this process takes no lock of its own, and several
 * processes may write one data set.
 *
 * Reads go through aio completions because they report the object version:
 * a read of several omap pages asserts the version of the first one, so a
 * row or a scan is never a mix of two states (read_range). Writes to many
 * objects are in flight together, up to RS_INFLIGHT.
 *
 * The data dir stays local: it records the namespace it is bound to
 * (rados.ns) and a read-write open holds an flock on rados.lock.
 *
 * The building blocks (key encoding, object and aio helpers, the partition
 * index, the namespace binding) are in store_rados_io.c.
 *
 * Threads: librados' cluster handle and ioctx are thread-safe; the only
 * shared state of ours is the set of partitions already indexed (idx_mu). */
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rados/librados.h>

#include "common/config.h"
#include "common/xmalloc.h"
#include "store/store_builtin.h"
#include "store/store_util.h"
#include "store/store_rados_int.h"

static const char *cfg_get(const oct_config_t *cfg, const char *key, const char *dflt)
{
    const char *v = cfg ? oct_config_get(cfg, key) : NULL;
    return v ? v : dflt;
}

static int rs_connect(rs_store_t *st, const oct_config_t *cfg, oct_errbuf_t *eb)
{
    const char *conf = cfg_get(cfg, "tsd.storage.rados.conf", NULL);
    const char *user = cfg_get(cfg, "tsd.storage.rados.user", "admin");
    const char *pool = cfg_get(cfg, "tsd.storage.rados.pool", "octsdb");
    char name[256];
    snprintf(name, sizeof name, "client.%s", user);
    int rc = rados_create2(&st->cluster, "ceph", name, 0);
    if (rc < 0) {
        st->cluster = NULL;
        return oct_err(eb, OCT_EIO, "rados: cannot create a client %s: %s", name, strerror(-rc));
    }
    rc = rados_conf_read_file(st->cluster, conf);
    if (rc < 0) {
        rados_shutdown(st->cluster); /* never connected: nothing else may touch it */
        st->cluster = NULL;
        return oct_err(eb, OCT_ECONFIG, "tsd.storage.rados.conf: cannot read %s: %s",
                       conf ? conf : "the default ceph.conf", strerror(-rc));
    }
    /* an unreachable cluster fails the open in 30 s instead of librados' 300 */
    if (rados_conf_set(st->cluster, "client_mount_timeout", "30") < 0) {
        /* keep librados' default */
    }
    rc = rados_connect(st->cluster);
    if (rc < 0) {
        rados_shutdown(st->cluster);
        st->cluster = NULL;
        return oct_err(eb, OCT_EIO, "rados: cannot connect to the cluster of %s as %s: %s%s",
                       conf ? conf : "the default ceph.conf", name, strerror(-rc),
                       rc == -ENOENT || rc == -EACCES || rc == -EPERM
                           ? " (no key for this client in its keyring, or a wrong one: "
                             "tsd.storage.rados.user and the keyring in ceph.conf)"
                           : "");
    }
    rc = rados_ioctx_create(st->cluster, pool, &st->io);
    if (rc < 0) {
        st->io = NULL;
        if (rc == -ENOENT)
            return oct_err(eb, OCT_ECONFIG, "tsd.storage.rados.pool: no pool '%s' in the cluster",
                           pool);
        return oct_err(eb, OCT_EIO, "rados: cannot open pool %s: %s", pool, strerror(-rc));
    }
    rados_ioctx_set_namespace(st->io, st->ns);
    /* The OSDs check a client's caps on each operation: one read now turns
     * missing caps into a start-up error that names them, not a failed
     * write later (docs/scale-out.md, "Ceph auth for the TSD"). */
    uint64_t size;
    time_t mtime;
    rc = rados_stat(st->io, st->names[STORE_TABLE_SYS], &size, &mtime);
    if (rc == -EPERM || rc == -EACCES)
        return oct_err(eb, OCT_ECONFIG,
                       "rados: %s may not read pool %s: its OSD caps must allow rw on the pool "
                       "(ceph auth caps %s mon 'allow r' osd 'allow rw pool=%s'; "
                       "docs/scale-out.md, \"Ceph auth for the TSD\")",
                       name, pool, name, pool);
    if (rc < 0 && rc != -ENOENT) return rs_fail(eb, rc, "stat", st->names[STORE_TABLE_SYS]);
    return 0;
}

/* A data dir that was opened on RADOS once records its namespace there;
 * the data set itself lives in the pool. */
static int rs_exists(const store_options_t *opts, oct_errbuf_t *eb)
{
    (void)eb;
    return store__dir_has(opts->dir, "rados.ns");
}

static int rs_open(const store_options_t *opts, store_t **out, oct_errbuf_t *eb)
{
    *out = NULL;
    rs_store_t *st = xcalloc(1, sizeof *st);
    st->lock_fd = -1;
    pthread_mutex_init(&st->idx_mu, NULL);
    rs_watch_init(st);
    for (int i = 0; i < RS_STRIPES; i++)
        pthread_mutex_init(&st->stripes[i].mu, NULL);
    st->dir = xstrdup(opts->dir);
    st->read_only = opts->read_only;
    int rc = 0;
    for (int t = 0; t < STORE_TABLE_COUNT && !rc; t++) {
        const char *n = opts->table_names[t] ? opts->table_names[t]
                                             : store_table_default_name((store_table_t)t);
        if (!*n || strchr(n, '/') || strlen(n) > RS_TABLE_NAME_MAX)
            rc = oct_err(eb, OCT_EINVAL, "bad table name '%s' (1..%d bytes, no '/')", n,
                         RS_TABLE_NAME_MAX);
        for (int u = 0; u < t && !rc; u++)
            if (strcmp(n, st->names[u]) == 0)
                rc = oct_err(eb, OCT_EINVAL, "two tables named '%s'", n);
        st->names[t] = xstrdup(n);
    }
    if (!rc && !opts->read_only) {
        char path[4200];
        int e = store__mkdir_p(opts->dir);
        if (e) rc = oct_err(eb, OCT_EIO, "cannot create data dir %s: %s", opts->dir, strerror(-e));
        snprintf(path, sizeof path, "%s/rados.lock", opts->dir);
        if (!rc && (st->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
            rc = oct_err(eb, OCT_EIO, "cannot open %s: %s", path, strerror(errno));
        if (!rc && flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0)
            rc = errno == EWOULDBLOCK
                     ? oct_err(eb, OCT_ELOCKED, "data dir %s is locked by another user", opts->dir)
                     : oct_err(eb, OCT_EIO, "cannot lock %s: %s", path, strerror(errno));
    }
    if (!rc)
        rc = rs_bind_namespace(opts->dir, cfg_get(opts->cfg, "tsd.storage.rados.namespace", NULL),
                               opts->read_only, &st->ns, eb);
    if (!rc) rc = rs_connect(st, opts->cfg, eb);
    if (rc) {
        rs_destroy(st);
        return rc;
    }
    st->base.methods = &store_rados_methods;
    *out = &st->base;
    return 0;
}

static void rs_close(store_t *base)
{
    /* nothing is buffered here: every acknowledged write is in RADOS */
    rs_destroy((rs_store_t *)base);
}

static int rs_is_read_only(const store_t *base)
{
    return ((const rs_store_t *)base)->read_only;
}

/* ---------- reads ---------- */

/* The NUL-terminated prefix rs_enc1(row) [| rs_enc1(family)] into b. */
static void row_prefix(store_buf_t *b, oct_slice_t row, oct_slice_t family)
{
    b->len = 0;
    rs_buf_enc1(b, row);
    if (family.len) rs_buf_enc1(b, family);
    store__buf_reserve(b, 1)[0] = '\0';
}

static int get_one(rs_store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                   oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    int rc;
    if ((rc = store__check_part(part, eb)) || (rc = store__check_row(row, eb)) ||
        (rc = store__check_family(family, 1, eb)))
        return rc;
    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, part, oid);
    store_buf_t b = {0};
    store_result_t raw = STORE_RESULT_INIT;
    row_prefix(&b, row, family);
    rc = rs_read_range(st, oid, (const char *)b.p, "", NULL, 0, 1, &raw, eb);
    size_t before = out->n;
    if (rc == 0) rc = rs_add_cells(&raw, out, oid, eb);
    store_result_free(&raw);
    free(b.p);
    return rc ? rc : (int)(out->n - before);
}

static int rs_get(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                  oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc = store__check_table(st, t, eb);
    return rc ? rc : get_one(st, t, part, row, family, out, eb);
}

/* The stored value of one cell: 1 and *raw holding it (version byte
 * included) if present, 0 if not, or an error. */
static int read_cell_raw(rs_store_t *st, const char *oid, const store_buf_t *key, store_buf_t *raw,
                         oct_errbuf_t *eb)
{
    const char *keys[1] = {(const char *)key->p};
    size_t kl[1] = {key->len};
    rados_read_op_t op = rados_create_read_op();
    rados_omap_iter_t it = NULL;
    int prval = 0, found = 0;
    rados_read_op_omap_get_vals_by_keys2(op, keys, 1, kl, &it, &prval);
    int rc = rs_read_op_wait(st, op, oid, NULL);
    if (rc == 0 && prval < 0) rc = prval;
    if (rc == 0) {
        char *k, *v;
        size_t kn, vn;
        if (rados_omap_get_next2(it, &k, &v, &kn, &vn) == 0 && k) {
            raw->len = 0;
            rs_buf_put(raw, v, vn);
            found = 1;
        }
    }
    if (it) rados_omap_get_end(it);
    rados_release_read_op(op);
    if (rc == -ENOENT) return 0;
    if (rc < 0) return rs_fail(eb, rc, "omap read", oid);
    if (found && (raw->len < 1 || raw->p[0] != RS_CELL_V1))
        return oct_err(eb, OCT_ECORRUPT, "malformed omap value in %s", oid);
    return found;
}

static int rs_get_cell(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                       oct_slice_t family, oct_slice_t qualifier, store_result_t *out,
                       oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) || (rc = store__check_part(part, eb)) ||
        (rc = store__check_row(row, eb)) || (rc = store__check_family(family, 0, eb)) ||
        (rc = store__check_qualifier(qualifier, eb)))
        return rc;
    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, part, oid);
    store_buf_t key = {0}, raw = {0};
    rs_cell_key(&key, row, family, qualifier);
    rc = read_cell_raw(st, oid, &key, &raw, eb);
    if (rc == 1) store_result_add(out, row, family, qualifier, oct_slice(raw.p + 1, raw.len - 1));
    free(key.p);
    free(raw.p);
    return rc;
}

/* One omap read in flight (a multi_get row, a part_list probe). */
typedef struct {
    rados_read_op_t op;
    rados_completion_t c;
    rados_omap_iter_t it;
    unsigned char more;
    int prval;
    char oid[RS_OID_MAX + 1]; /* used by the probes */
} rs_pending_t;

/* Waits for p and appends its row (in key order); a row longer than one
 * page is read again in full, consistently. */
static int mget_finish(rs_store_t *st, store_table_t t, const store_key_t *key, oct_slice_t family,
                       rs_pending_t *p, store_result_t *out, oct_errbuf_t *eb)
{
    rados_aio_wait_for_complete(p->c);
    int rc = rados_aio_get_return_value(p->c);
    if (rc == 0 && p->prval < 0) rc = p->prval;
    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, key->part, oid);
    store_result_t raw = STORE_RESULT_INIT;
    if (rc == 0 && !p->more) {
        char *last = NULL;
        int hit = 0;
        rs_take_entries(p->it, NULL, 0, &raw, &last, &hit);
        free(last);
        rc = rs_add_cells(&raw, out, oid, eb);
    } else if (rc == 0) {
        rc = get_one(st, t, key->part, key->row, family, out, eb);
        rc = rc < 0 ? rc : 0;
    } else if (rc == -ENOENT) {
        rc = 0;
    } else {
        rc = rs_fail(eb, rc, "omap read", oid);
    }
    store_result_free(&raw);
    if (p->it) rados_omap_get_end(p->it);
    rados_release_read_op(p->op);
    rados_aio_release(p->c);
    memset(p, 0, sizeof *p);
    return rc;
}

static int rs_multi_get(store_t *base, store_table_t t, const store_key_t *keys, size_t n,
                        oct_slice_t family, store_result_t *out, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = store__check_part(keys[i].part, eb)) || (rc = store__check_row(keys[i].row, eb)))
            return rc;
    if ((rc = store__check_family(family, 1, eb))) return rc;
    size_t before = out->n;
    rs_pending_t pend[RS_INFLIGHT];
    memset(pend, 0, sizeof pend);
    store_buf_t b = {0};
    char oid[RS_OID_MAX + 1];
    /* key i is in slot i % RS_INFLIGHT; rows are appended in key order */
    size_t issued = 0, done = 0;
    while (done < n) {
        while (issued < n && issued - done < RS_INFLIGHT && rc == 0) {
            rs_pending_t *p = &pend[issued % RS_INFLIGHT];
            rs_data_oid(st, t, keys[issued].part, oid);
            row_prefix(&b, keys[issued].row, family);
            p->op = rados_create_read_op();
            rados_read_op_omap_get_vals2(p->op, "", (const char *)b.p, RS_PAGE, &p->it, &p->more,
                                         &p->prval);
            int e = rs_aio_start(st, p->op, NULL, oid, &p->c);
            if (e < 0) {
                /* nothing in flight for this slot: finish the others, then fail */
                memset(p, 0, sizeof *p);
                rc = rs_fail(eb, e, "aio read", oid);
                break;
            }
            issued++;
        }
        if (done == issued) break;
        int e = mget_finish(st, t, &keys[done], family, &pend[done % RS_INFLIGHT], out, eb);
        if (e && !rc) rc = e;
        done++;
    }
    free(b.p);
    if (rc) return rc;
    if (out->n - before > INT32_MAX) return oct_err(eb, OCT_ERANGE, "multi_get result too large");
    return (int)(out->n - before);
}

/* ---------- writes ---------- */

/* One PUT of a run, laid out in a scratch buffer (offsets, since the buffer
 * may move while the run grows). */
typedef struct {
    size_t koff, klen, voff, vlen, pos;
} rs_kv_t;

static int kv_cmp(const void *a, const void *b, void *base)
{
    const rs_kv_t *x = a, *y = b;
    const uint8_t *p = base;
    int c = memcmp(p + x->koff, p + y->koff, x->klen < y->klen ? x->klen : y->klen);
    if (c) return c;
    if (x->klen != y->klen) return x->klen < y->klen ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Adds a run of PUTs as one omap_set2. omap_set2 takes a map, so of two
 * PUTs of one key only the later one (in op order) is passed: the result
 * the ops applied one by one would give. */
static void flush_puts(rados_write_op_t op, const store_buf_t *b, rs_kv_t *run, size_t n)
{
    if (!n) return;
    if (n > 1) qsort_r(run, n, sizeof *run, kv_cmp, b->p);
    const char **keys = xmalloc(n * sizeof *keys), **vals = xmalloc(n * sizeof *vals);
    size_t *kl = xmalloc(n * sizeof *kl), *vl = xmalloc(n * sizeof *vl), m = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && run[i + 1].klen == run[i].klen &&
            memcmp(b->p + run[i + 1].koff, b->p + run[i].koff, run[i].klen) == 0)
            continue; /* a later PUT of the same key follows */
        keys[m] = (const char *)b->p + run[i].koff;
        kl[m] = run[i].klen;
        vals[m] = (const char *)b->p + run[i].voff;
        vl[m] = run[i].vlen;
        m++;
    }
    rados_write_op_omap_set2(op, keys, vals, kl, vl, m);
    free(keys);
    free(vals);
    free(kl);
    free(vl);
}

/* Adds ops[idx[0..n)] (all of one object) to op, in order. librados copies
 * keys and values when an action is added, so the scratch is reused. */
static void add_ops(rados_write_op_t op, const store_op_t *ops, const size_t *idx, size_t n,
                    store_buf_t *b)
{
    rs_kv_t *run = xmalloc((n ? n : 1) * sizeof *run);
    size_t nrun = 0;
    b->len = 0;
    for (size_t j = 0; j < n; j++) {
        const store_op_t *o = &ops[idx ? idx[j] : j];
        const store_cell_t *c = &o->cell;
        if (o->kind == STORE_OP_PUT) {
            rs_kv_t *kv = &run[nrun];
            kv->pos = j;
            kv->koff = b->len;
            rs_buf_enc1(b, c->row);
            rs_buf_enc1(b, c->family);
            rs_buf_enc1(b, c->qualifier);
            kv->klen = b->len - kv->koff;
            kv->voff = b->len;
            uint8_t v1 = RS_CELL_V1;
            rs_buf_put(b, &v1, 1);
            rs_buf_put(b, c->value.ptr, c->value.len);
            kv->vlen = b->len - kv->voff;
            nrun++;
            continue;
        }
        flush_puts(op, b, run, nrun);
        nrun = 0;
        b->len = 0;
        if (o->kind == STORE_OP_DELETE_CELL) {
            rs_cell_key(b, c->row, c->family, c->qualifier);
            const char *keys[1] = {(const char *)b->p};
            size_t kl[1] = {b->len};
            rados_write_op_omap_rm_keys2(op, keys, kl, 1);
        } else {
            /* [prefix, prefix with its terminator 01 01 raised to 01 02) */
            row_prefix(b, c->row,
                       o->kind == STORE_OP_DELETE_FAMILY ? c->family : oct_slice(NULL, 0));
            size_t pl = b->len;
            uint8_t *end = store__buf_reserve(b, pl);
            memcpy(end, b->p, pl);
            end[pl - 1] = 0x02;
            rados_write_op_omap_rm_range2(op, (const char *)b->p, pl, (const char *)end, pl);
        }
        b->len = 0;
    }
    flush_puts(op, b, run, nrun);
    free(run);
}

static int has_put(const store_op_t *ops, const size_t *idx, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (ops[idx ? idx[j] : j].kind == STORE_OP_PUT) return 1;
    return 0;
}

/* Orders op indexes by partition, then position (qsort_r over store_op_t). */
static int op_part_cmp(const void *a, const void *b, void *ctx)
{
    const store_op_t *ops = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    oct_slice_t p = ops[i].part, q = ops[j].part;
    int c = memcmp(p.ptr, q.ptr, p.len < q.len ? p.len : q.len);
    if (c) return c;
    if (p.len != q.len) return p.len < q.len ? -1 : 1;
    return i < j ? -1 : i > j;
}

typedef struct {
    rados_write_op_t op;
    rados_completion_t c;
    int deletes_only;
    char oid[RS_OID_MAX + 1];
} rs_wpending_t;

static int write_finish(rs_wpending_t *p, oct_errbuf_t *eb)
{
    rados_aio_wait_for_complete(p->c);
    int rc = rados_aio_get_return_value(p->c);
    rados_aio_release(p->c);
    rados_release_write_op(p->op);
    /* deletions in an object that does not exist: nothing to delete */
    if (rc == -ENOENT && p->deletes_only) rc = 0;
    return rc < 0 ? rs_fail(eb, rc, "write", p->oid) : 0;
}

static int rs_write(store_t *base, store_table_t t, const store_op_t *ops, size_t n, unsigned flags,
                    oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    (void)flags; /* a RADOS ack is already durable on every replica */
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)))
        return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = store__check_part(ops[i].part, eb)) || (rc = store__check_op(&ops[i], eb)))
            return rc;
    if (n == 0) return 0;

    size_t *idx = xmalloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, op_part_cmp, (void *)ops);
    /* groups: [gstart[g], gstart[g + 1]) of idx share a partition */
    size_t *gstart = xmalloc((n + 1) * sizeof *gstart), ng = 0;
    oct_slice_t *indexed = xmalloc(n * sizeof *indexed);
    size_t nindexed = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || !oct_slice_eq(ops[idx[i]].part, ops[idx[i - 1]].part)) gstart[ng++] = i;
    }
    gstart[ng] = n;
    for (size_t g = 0; g < ng; g++)
        if (has_put(ops, idx + gstart[g], gstart[g + 1] - gstart[g]))
            indexed[nindexed++] = ops[idx[gstart[g]]].part;
    /* the index first: a partition with cells is always listed */
    rc = rs_index_parts(st, t, indexed, nindexed, eb);

    rs_wpending_t *pend = rc ? NULL : xcalloc(RS_INFLIGHT, sizeof *pend);
    store_buf_t b = {0};
    size_t issued = 0, done = 0;
    while (!rc && done < ng) {
        while (issued < ng && issued - done < RS_INFLIGHT) {
            rs_wpending_t *p = &pend[issued % RS_INFLIGHT];
            const size_t *gi = idx + gstart[issued];
            size_t gn = gstart[issued + 1] - gstart[issued];
            rs_data_oid(st, t, ops[gi[0]].part, p->oid);
            p->op = rados_create_write_op();
            p->deletes_only = !has_put(ops, gi, gn);
            if (!p->deletes_only) rados_write_op_create(p->op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
            add_ops(p->op, ops, gi, gn, &b);
            int e = rs_aio_start(st, NULL, p->op, p->oid, &p->c);
            if (e < 0) {
                rc = rs_fail(eb, e, "aio write", p->oid);
                break;
            }
            issued++;
        }
        if (done == issued) break;
        int e = write_finish(&pend[done % RS_INFLIGHT], eb);
        if (e && !rc) rc = e;
        done++;
    }
    /* whatever is still in flight must finish before its memory goes */
    for (; done < issued; done++) {
        oct_errbuf_t ignore;
        if (write_finish(&pend[done % RS_INFLIGHT], &ignore)) {
            /* the first error is already in eb */
        }
    }
    free(pend);
    free(b.p);
    free(idx);
    free(gstart);
    free(indexed);
    return rc;
}

static int check_checks(const store_check_t *checks, size_t n, oct_errbuf_t *eb)
{
    int rc;
    for (size_t i = 0; i < n; i++) {
        const store_check_t *c = &checks[i];
        if (c->kind != STORE_CHECK_ABSENT && c->kind != STORE_CHECK_EQUALS)
            return oct_err(eb, OCT_EINVAL, "bad check kind %d", (int)c->kind);
        if ((rc = store__check_row(c->cell.row, eb)) ||
            (rc = store__check_family(c->cell.family, 0, eb)) ||
            (rc = store__check_qualifier(c->cell.qualifier, eb)))
            return rc;
    }
    return 0;
}

/* The checks as omap_cmp2 actions on a read or a write op: ABSENT compares
 * with "", EQUALS with 01|value (docs/format/rados.md, "cas"). */
static void add_checks(rados_write_op_t wop, rados_read_op_t rop, const store_check_t *checks,
                       size_t n, int *prvals, store_buf_t *b)
{
    for (size_t i = 0; i < n; i++) {
        const store_cell_t *c = &checks[i].cell;
        rs_cell_key(b, c->row, c->family, c->qualifier);
        size_t kl = b->len;
        uint8_t v1 = RS_CELL_V1;
        if (checks[i].kind == STORE_CHECK_EQUALS) {
            b->len = kl + 1; /* past the key's NUL */
            rs_buf_put(b, &v1, 1);
            rs_buf_put(b, c->value.ptr, c->value.len);
        }
        const char *val = checks[i].kind == STORE_CHECK_EQUALS ? (const char *)b->p + kl + 1 : "";
        size_t vl = checks[i].kind == STORE_CHECK_EQUALS ? c->value.len + 1 : 0;
        if (wop)
            rados_write_op_omap_cmp2(wop, (const char *)b->p, LIBRADOS_CMPXATTR_OP_EQ, val, kl, vl,
                                     &prvals[i]);
        else
            rados_read_op_omap_cmp2(rop, (const char *)b->p, LIBRADOS_CMPXATTR_OP_EQ, val, kl, vl,
                                    &prvals[i]);
        b->len = 0;
    }
}

static int rs_cas(store_t *base, store_table_t t, oct_slice_t part, const store_check_t *checks,
                  size_t n_checks, const store_op_t *ops, size_t n_ops, unsigned flags,
                  oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    (void)flags;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)) ||
        (rc = store__check_part(part, eb)) || (rc = check_checks(checks, n_checks, eb)))
        return rc;
    for (size_t i = 0; i < n_ops; i++)
        if ((rc = store__check_op(&ops[i], eb))) return rc;
    if (has_put(ops, NULL, n_ops) && (rc = rs_index_parts(st, t, &part, 1, eb))) return rc;

    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, part, oid);
    store_buf_t b = {0};
    int *prvals = xcalloc(n_checks ? n_checks : 1, sizeof *prvals);
    if (n_ops == 0) {
        /* checks only: a read, which creates nothing */
        rados_read_op_t op = rados_create_read_op();
        add_checks(NULL, op, checks, n_checks, prvals, &b);
        rc = n_checks ? rs_read_op_wait(st, op, oid, NULL) : 0;
        rados_release_read_op(op);
        if (rc == -ENOENT) { /* no object: every cell is absent */
            rc = 0;
            for (size_t i = 0; i < n_checks; i++)
                if (checks[i].kind != STORE_CHECK_ABSENT) rc = -ECANCELED;
        }
    } else {
        rados_write_op_t op = rados_create_write_op();
        /* created in the same op: a failed check rolls the creation back */
        rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
        add_checks(op, NULL, checks, n_checks, prvals, &b);
        add_ops(op, ops, NULL, n_ops, &b);
        rc = rados_write_op_operate(op, st->io, oid, NULL, 0);
        rados_release_write_op(op);
    }
    free(prvals);
    free(b.p);
    if (rc == -ECANCELED) return oct_err(eb, OCT_ECASFAIL, "check failed in %s", oid);
    return rc < 0 ? rs_fail(eb, rc, "cas", oid) : 0;
}

static int rs_incr(store_t *base, store_table_t t, oct_slice_t part, oct_slice_t row,
                   oct_slice_t family, oct_slice_t qualifier, int64_t delta, int64_t *out_new,
                   unsigned flags, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    (void)flags;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)) ||
        (rc = store__check_part(part, eb)) || (rc = store__check_row(row, eb)) ||
        (rc = store__check_family(family, 0, eb)) || (rc = store__check_qualifier(qualifier, eb)))
        return rc;
    if ((rc = rs_index_parts(st, t, &part, 1, eb))) return rc;
    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, part, oid);
    store_buf_t key = {0}, old = {0}, ck = {0};
    rs_cell_key(&key, row, family, qualifier);
    rs_buf_put(&ck, oid, strlen(oid) + 1);
    rs_buf_put(&ck, key.p, key.len);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < ck.len; i++)
        h = (h ^ ck.p[i]) * 1099511628211ull;
    rs_stripe_t *sp = &st->stripes[h % RS_STRIPES];
    pthread_mutex_lock(&sp->mu);
    /* found: 1 with old holding the stored value, 0 absent, -1 not known */
    int found = -1;
    if (sp->key && sp->key_len == ck.len && memcmp(sp->key, ck.p, ck.len) == 0) {
        rs_buf_put(&old, sp->val, 9);
        found = 1;
    }
    for (int attempt = 0;; attempt++) {
        if (attempt == RS_INCR_RETRIES) {
            rc = oct_err(eb, OCT_EIO, "rados incr %s: %d attempts lost a race", oid, attempt);
            break;
        }
        if (found < 0) {
            rc = read_cell_raw(st, oid, &key, &old, eb);
            if (rc < 0) break;
            found = rc;
        }
        if (found && old.len != 9) {
            rc = oct_err(eb, OCT_ECORRUPT, "counter cell holds %zu bytes, not 8", old.len - 1);
            break;
        }
        /* two's-complement wrap, as Java's long addition in HBase */
        uint64_t nv = (found ? oct_get_be64(old.p + 1) : 0) + (uint64_t)delta;
        uint8_t enc[9] = {RS_CELL_V1};
        oct_put_be64(enc + 1, nv);
        const char *keys[1] = {(const char *)key.p}, *vals[1] = {(const char *)enc};
        size_t kl[1] = {key.len}, vl[1] = {9};
        int prval = 0;
        rados_write_op_t op = rados_create_write_op();
        rados_write_op_create(op, LIBRADOS_CREATE_IDEMPOTENT, NULL);
        rados_write_op_omap_cmp2(op, (const char *)key.p, LIBRADOS_CMPXATTR_OP_EQ,
                                 found ? (const char *)old.p : "", key.len, found ? old.len : 0,
                                 &prval);
        rados_write_op_omap_set2(op, keys, vals, kl, vl, 1);
        rc = rados_write_op_operate(op, st->io, oid, NULL, 0);
        rados_release_write_op(op);
        if (rc == -ECANCELED) { /* another process changed it (or our memory was stale) */
            found = -1;
            continue;
        }
        if (rc < 0) {
            rc = rs_fail(eb, rc, "incr", oid);
            break;
        }
        free(sp->key);
        sp->key = xmemdup(ck.p, ck.len);
        sp->key_len = ck.len;
        memcpy(sp->val, enc, 9);
        if (out_new) *out_new = (int64_t)nv;
        rc = 0;
        break;
    }
    if (rc) { /* whatever happened, read before the next attempt */
        free(sp->key);
        sp->key = NULL;
    }
    pthread_mutex_unlock(&sp->mu);
    free(key.p);
    free(old.p);
    free(ck.p);
    return rc;
}

/* ---------- scans ---------- */

static int rs_scan_open(store_t *base, store_table_t t, const store_scan_spec_t *spec,
                        store_scanner_t **out, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc;
    *out = NULL;
    if ((rc = store__check_table(st, t, eb)) || (rc = store__check_scan_spec(spec, eb))) return rc;
    char oid[RS_OID_MAX + 1];
    rs_data_oid(st, t, spec->part, oid);
    /* start_after = rs_enc1(start) without its last byte: nothing lies between
     * it and rs_enc1(start), since no encoding has 01 followed by 00 */
    store_buf_t after = {0}, stop = {0};
    if (spec->start_row.len) {
        rs_buf_enc1(&after, spec->start_row);
        after.len--;
    }
    store__buf_reserve(&after, 1)[0] = '\0';
    if (spec->stop_row.len) rs_buf_enc1(&stop, spec->stop_row);
    rs_scanner_t *sc = xcalloc(1, sizeof *sc);
    rc = rs_read_range(st, oid, "", (const char *)after.p, stop.p, stop.len, !spec->relaxed,
                       &sc->raw, eb);
    free(after.p);
    free(stop.p);
    if (rc) {
        store_result_free(&sc->raw);
        free(sc);
        return rc;
    }
    if (spec->family.len) {
        sc->family = xmemdup(spec->family.ptr, spec->family.len);
        sc->family_len = spec->family.len;
    }
    sc->filter = spec->row_filter;
    sc->filter_ctx = spec->filter_ctx;
    sc->base.methods = &store_rados_methods;
    *out = &sc->base;
    return 0;
}

static int rs_scan_next(store_scanner_t *base, store_result_t *row, oct_errbuf_t *eb)
{
    rs_scanner_t *sc = (rs_scanner_t *)base;
    store_result_reset(row);
    while (sc->pos < sc->raw.n) {
        /* the omap keys of one row share the prefix rs_enc1(row) */
        const store_cell_t *first = &sc->raw.cells[sc->pos];
        if (first->row.len > sc->scratch_cap) {
            sc->scratch_cap = 2 * first->row.len;
            sc->scratch = xrealloc(sc->scratch, sc->scratch_cap);
        }
        oct_slice_t r0 = {0}, f = {0}, q = {0}; /* OUT of rs_split_key */
        if (rs_split_key(first->row.ptr, first->row.len, sc->scratch, &r0, &f, &q))
            return oct_err(eb, OCT_ECORRUPT, "malformed omap key in a scan");
        size_t rlen = rs_enc1_len(r0);
        int keep = !sc->filter || sc->filter(sc->filter_ctx, r0);
        size_t end = sc->pos;
        while (end < sc->raw.n && sc->raw.cells[end].row.len >= rlen &&
               memcmp(sc->raw.cells[end].row.ptr, first->row.ptr, rlen) == 0)
            end++;
        for (size_t i = sc->pos; keep && i < end; i++) {
            const store_cell_t *c = &sc->raw.cells[i];
            uint8_t buf[2 * STORE_FAMILY_MAX + 4];
            size_t fl;
            long used = rs_dec1(c->row.ptr + rlen, c->row.len - rlen, buf, &fl);
            if (used < 0 || c->value.len < 1 || c->value.ptr[0] != RS_CELL_V1)
                return oct_err(eb, OCT_ECORRUPT, "malformed omap entry in a scan");
            if (sc->family_len &&
                !oct_slice_eq(oct_slice(buf, fl), oct_slice(sc->family, sc->family_len)))
                continue;
            /* the qualifier goes after the row key in scratch (which holds
             * first->row.len >= rlen bytes, and c's row part is rlen long) */
            size_t qoff = rlen + (size_t)used, ql;
            if (r0.len + c->row.len > sc->scratch_cap) {
                sc->scratch_cap = 2 * (r0.len + c->row.len);
                sc->scratch = xrealloc(sc->scratch, sc->scratch_cap);
                r0.ptr = sc->scratch; /* rs_split_key decoded the row at offset 0 */
            }
            uint8_t *qbuf = sc->scratch + r0.len;
            used = rs_dec1(c->row.ptr + qoff, c->row.len - qoff, qbuf, &ql);
            if (used < 0 || qoff + (size_t)used != c->row.len)
                return oct_err(eb, OCT_ECORRUPT, "malformed omap key in a scan");
            store_result_add(row, r0, oct_slice(buf, fl), oct_slice(qbuf, ql),
                             oct_slice(c->value.ptr + 1, c->value.len - 1));
        }
        sc->pos = end;
        if (row->n) return 1;
    }
    return 0;
}

static void rs_scan_close(store_scanner_t *base)
{
    rs_scanner_t *sc = (rs_scanner_t *)base;
    if (!sc) return;
    store_result_free(&sc->raw);
    free(sc->family);
    free(sc->scratch);
    free(sc);
}

/* ---------- partitions ---------- */

/* Partitions of the index page in raw[from..): which hold a cell, up to
 * RS_INFLIGHT object reads in flight; calls cb in order. */
typedef rs_pending_t rs_probe_t; /* with .oid set */

static int probe_finish(rs_probe_t *p, int *nonempty, oct_errbuf_t *eb)
{
    rados_aio_wait_for_complete(p->c);
    int rc = rados_aio_get_return_value(p->c);
    if (rc == 0 && p->prval < 0) rc = p->prval;
    *nonempty = rc == 0 && p->it && rados_omap_iter_size(p->it) > 0;
    if (p->it) rados_omap_get_end(p->it);
    rados_release_read_op(p->op);
    rados_aio_release(p->c);
    if (rc == -ENOENT) rc = 0;
    return rc < 0 ? rs_fail(eb, rc, "omap read", p->oid) : 0;
}

/* Decodes index key k into part (STORE_PART_MAX bytes). */
static int index_key_part(const store_cell_t *k, uint8_t *part, size_t *len)
{
    if (k->row.len > 2 * STORE_PART_MAX + 2) return -1;
    long used = rs_dec1(k->row.ptr, k->row.len, part, len);
    return used < 0 || (size_t)used != k->row.len || *len < 1 ? -1 : 0;
}

/* The data object of the partition index key k names. 0 or OCT_ECORRUPT. */
static int index_key_oid(rs_store_t *st, store_table_t t, const store_cell_t *k, char *oid,
                         oct_errbuf_t *eb)
{
    uint8_t part[2 * STORE_PART_MAX + 2];
    size_t plen;
    if (index_key_part(k, part, &plen))
        return oct_err(eb, OCT_ECORRUPT, "malformed key in index object %s", st->names[t]);
    rs_data_oid(st, t, oct_slice(part, plen), oid);
    return 0;
}

static int probe_page(rs_store_t *st, store_table_t t, const store_result_t *raw, store_part_fn cb,
                      void *ctx, oct_errbuf_t *eb)
{
    rs_probe_t *pend = xcalloc(RS_INFLIGHT, sizeof *pend);
    uint8_t part[2 * STORE_PART_MAX + 2];
    size_t plen, issued = 0, done = 0;
    int rc = 0;
    while (done < raw->n) {
        while (!rc && issued < raw->n && issued - done < RS_INFLIGHT) {
            rs_probe_t *p = &pend[issued % RS_INFLIGHT];
            if (index_key_part(&raw->cells[issued], part, &plen)) {
                rc = oct_err(eb, OCT_ECORRUPT, "malformed key in index object %s", st->names[t]);
                break;
            }
            rs_data_oid(st, t, oct_slice(part, plen), p->oid);
            p->op = rados_create_read_op();
            rados_read_op_omap_get_keys2(p->op, "", 1, &p->it, &p->more, &p->prval);
            int e = rs_aio_start(st, p->op, NULL, p->oid, &p->c);
            if (e < 0) {
                rc = rs_fail(eb, e, "aio read", p->oid);
                break;
            }
            issued++;
        }
        if (done == issued) break;
        int nonempty = 0;
        int e = probe_finish(&pend[done % RS_INFLIGHT], &nonempty, eb);
        if (e && !rc) rc = e;
        if (!rc && nonempty && index_key_part(&raw->cells[done], part, &plen) == 0)
            rc = cb(ctx, oct_slice(part, plen));
        done++;
    }
    for (; done < issued; done++) {
        int nonempty;
        oct_errbuf_t ignore;
        if (probe_finish(&pend[done % RS_INFLIGHT], &nonempty, &ignore)) {
            /* stopping anyway */
        }
    }
    free(pend);
    return rc;
}

/* Walks the index object of table t over [start, stop) page by page; each
 * page (raw) goes to fn. */
typedef int (*rs_page_fn)(rs_store_t *st, store_table_t t, const store_result_t *raw, void *arg,
                          oct_errbuf_t *eb);

static int walk_index(rs_store_t *st, store_table_t t, oct_slice_t start, oct_slice_t stop,
                      rs_page_fn fn, void *arg, oct_errbuf_t *eb)
{
    store_buf_t after = {0}, stop_key = {0};
    if (start.len) {
        rs_buf_enc1(&after, start);
        after.len--; /* as in scan_open */
    }
    store__buf_reserve(&after, 1)[0] = '\0';
    if (stop.len) rs_buf_enc1(&stop_key, stop);
    char *cur = xstrdup((const char *)after.p);
    store_result_t raw = STORE_RESULT_INIT;
    int rc = 0;
    for (;;) {
        rados_read_op_t op = rados_create_read_op();
        rados_omap_iter_t it = NULL;
        unsigned char more = 0;
        int prval = 0, hit_stop = 0;
        rados_read_op_omap_get_vals2(op, cur, "", RS_PAGE, &it, &more, &prval);
        rc = rs_read_op_wait(st, op, st->names[t], NULL);
        if (rc == 0 && prval < 0) rc = prval;
        store_result_reset(&raw);
        if (rc == 0) rs_take_entries(it, stop_key.p, stop_key.len, &raw, &cur, &hit_stop);
        if (it) rados_omap_get_end(it);
        rados_release_read_op(op);
        if (rc == -ENOENT) {
            rc = 0;
            break;
        }
        if (rc < 0) {
            rc = rs_fail(eb, rc, "index read", st->names[t]);
            break;
        }
        if (raw.n && (rc = fn(st, t, &raw, arg, eb))) break;
        if (hit_stop || !more) break;
    }
    store_result_free(&raw);
    free(cur);
    free(after.p);
    free(stop_key.p);
    return rc;
}

typedef struct {
    store_part_fn cb;
    void *ctx;
} rs_list_arg_t;

static int list_page(rs_store_t *st, store_table_t t, const store_result_t *raw, void *arg,
                     oct_errbuf_t *eb)
{
    rs_list_arg_t *a = arg;
    return probe_page(st, t, raw, a->cb, a->ctx, eb);
}

static int rs_part_list(store_t *base, store_table_t t, oct_slice_t start, oct_slice_t stop,
                        store_part_fn cb, void *ctx, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    if (start.len > STORE_PART_MAX || stop.len > STORE_PART_MAX)
        return oct_err(eb, OCT_EINVAL, "partition bound longer than %d bytes", STORE_PART_MAX);
    rs_list_arg_t a = {cb, ctx};
    return walk_index(st, t, start, stop, list_page, &a, eb);
}

/* ---------- maintenance ---------- */

/* A RADOS write is acknowledged once every replica has it in its journal:
 * nothing is held in memory here, so flush and sync have nothing to do. */
static int rs_flush(store_t *base, oct_errbuf_t *eb)
{
    (void)base;
    (void)eb;
    return 0;
}

static int rs_sync(store_t *base, oct_errbuf_t *eb)
{
    (void)base;
    (void)eb;
    return 0;
}

static int usage_page(rs_store_t *st, store_table_t t, const store_result_t *raw, void *arg,
                      oct_errbuf_t *eb)
{
    uint64_t *total = arg;
    store_result_t cells = STORE_RESULT_INIT;
    int rc = 0;
    for (size_t i = 0; i < raw->n && !rc; i++) {
        char oid[RS_OID_MAX + 1];
        if ((rc = index_key_oid(st, t, &raw->cells[i], oid, eb))) break;
        rc = rs_read_range(st, oid, "", "", NULL, 0, 0, &cells, eb);
        for (size_t j = 0; !rc && j < cells.n; j++)
            *total += cells.cells[j].row.len + cells.cells[j].value.len;
    }
    store_result_free(&cells);
    return rc;
}

static int rs_disk_usage(store_t *base, store_table_t t, uint64_t *out_bytes, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc = store__check_table(st, t, eb);
    if (rc) return rc;
    uint64_t total = 0;
    rc = walk_index(st, t, oct_slice(NULL, 0), oct_slice(NULL, 0), usage_page, &total, eb);
    if (rc == 0) *out_bytes = total;
    return rc;
}

/* One index page of store_part_drop: each partition's object is removed
 * (one that is gone already is fine), then the page's index keys, so a
 * crash in between leaves index keys of empty partitions (which part_list
 * skips), never an object that no index lists. */
static int drop_page(rs_store_t *st, store_table_t t, const store_result_t *raw, void *arg,
                     oct_errbuf_t *eb)
{
    uint64_t *n = arg;
    const char **keys = xmalloc(raw->n * sizeof *keys);
    size_t *lens = xmalloc(raw->n * sizeof *lens);
    int rc = 0;
    for (size_t i = 0; i < raw->n && !rc; i++) {
        char oid[RS_OID_MAX + 1];
        if ((rc = index_key_oid(st, t, &raw->cells[i], oid, eb))) break;
        int e = rados_remove(st->io, oid);
        if (e == 0)
            ++*n;
        else if (e != -ENOENT)
            rc = rs_fail(eb, e, "remove", oid);
        keys[i] = (const char *)raw->cells[i].row.ptr;
        lens[i] = raw->cells[i].row.len;
    }
    if (!rc) {
        rados_write_op_t op = rados_create_write_op();
        rados_write_op_omap_rm_keys2(op, keys, lens, raw->n);
        int e = rados_write_op_operate(op, st->io, st->names[t], NULL, 0);
        rados_release_write_op(op);
        if (e < 0) rc = rs_fail(eb, e, "index write", st->names[t]);
    }
    free(keys);
    free(lens);
    return rc;
}

/* The index lists the partitions in byte order, so the range is a walk of
 * it (docs/format/rados.md, "part_drop"). This process then forgets what it
 * indexed: a later write into a dropped partition indexes it again. */
static int rs_part_drop(store_t *base, store_table_t t, oct_slice_t start, oct_slice_t stop,
                        uint64_t *n_parts, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    int rc;
    if ((rc = store__check_table(st, t, eb)) ||
        (rc = store__check_writable(st->read_only, st->dir, eb)))
        return rc;
    rc = walk_index(st, t, start, stop, drop_page, n_parts, eb);
    rs_index_forget(st);
    return rc;
}

/* RADOS drops deleted and overwritten omap keys when the op applies; the
 * OSDs compact their own stores (docs/format/rados.md, "compact"). */
static int rs_compact(store_t *base, oct_errbuf_t *eb)
{
    rs_store_t *st = (rs_store_t *)base;
    if (!st) return oct_err(eb, OCT_EINVAL, "no store");
    return store__check_writable(st->read_only, st->dir, eb);
}

const store_methods_t store_rados_methods = {
    .version = 3,
    .name = "rados",
    .open = rs_open,
    .close = rs_close,
    .is_read_only = rs_is_read_only,
    .get = rs_get,
    .get_cell = rs_get_cell,
    .multi_get = rs_multi_get,
    .write = rs_write,
    .cas = rs_cas,
    .incr = rs_incr,
    .scan_open = rs_scan_open,
    .scan_next = rs_scan_next,
    .scan_close = rs_scan_close,
    .part_list = rs_part_list,
    .flush = rs_flush,
    .sync = rs_sync,
    .disk_usage = rs_disk_usage,
    .compact = rs_compact,
    .exists = rs_exists,
    .watch = rs_watch,
    .unwatch = rs_unwatch,
    .notify = rs_notify,
    .part_drop = rs_part_drop,
};
