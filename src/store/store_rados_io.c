/* store_rados_io.c -- the rados backend's building blocks (store_rados_int.h):
 * the order-preserving omap key encoding enc1, object names, reads through
 * aio completions that report the object version, the per-table index of
 * partitions, and binding a data dir to its namespace. */
#include "store/store_rados_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xmalloc.h"

/* ---------- rs_enc1 (docs/format/rados.md) ---------- */

size_t rs_enc1_len(oct_slice_t x)
{
    size_t n = x.len + 2;
    for (size_t i = 0; i < x.len; i++)
        n += x.ptr[i] <= 1;
    return n;
}

uint8_t *rs_enc1(uint8_t *d, oct_slice_t x)
{
    for (size_t i = 0; i < x.len; i++) {
        if (x.ptr[i] <= 1) {
            *d++ = 0x01;
            *d++ = (uint8_t)(x.ptr[i] + 2);
        } else {
            *d++ = x.ptr[i];
        }
    }
    *d++ = 0x01;
    *d++ = 0x01;
    return d;
}

/* Decodes one rs_enc1() at p[0..n) into out (n bytes room); returns the bytes
 * consumed, or -1 if malformed. */
long rs_dec1(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0x00) return -1;
        if (p[i] != 0x01) {
            out[o++] = p[i];
            continue;
        }
        if (i + 1 >= n) return -1;
        if (p[i + 1] == 0x01) {
            *out_len = o;
            return (long)(i + 2);
        }
        if (p[i + 1] != 0x02 && p[i + 1] != 0x03) return -1;
        out[o++] = (uint8_t)(p[i + 1] - 2);
        i++;
    }
    return -1;
}

/* Appends rs_enc1(x) to b. */
void rs_buf_enc1(store_buf_t *b, oct_slice_t x)
{
    uint8_t *e = rs_enc1(store__buf_reserve(b, rs_enc1_len(x)), x);
    b->len = (size_t)(e - b->p);
}

void rs_buf_put(store_buf_t *b, const void *p, size_t n)
{
    if (n) memcpy(store__buf_reserve(b, n), p, n);
    b->len += n;
}

/* The omap key of a cell, replacing b's contents; NUL-terminated (the key
 * itself never holds a 00 byte). */
void rs_cell_key(store_buf_t *b, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier)
{
    b->len = 0;
    rs_buf_enc1(b, row);
    rs_buf_enc1(b, family);
    rs_buf_enc1(b, qualifier);
    store__buf_reserve(b, 1)[0] = '\0';
}

/* Splits an omap key into row, family and qualifier, decoded into scratch
 * (which must hold kl bytes). -1 if malformed. */
int rs_split_key(const uint8_t *k, size_t kl, uint8_t *scratch, oct_slice_t *row, oct_slice_t *fam,
                 oct_slice_t *qual)
{
    oct_slice_t *parts[3] = {row, fam, qual};
    size_t off = 0, o = 0;
    for (int i = 0; i < 3; i++) {
        size_t len;
        long used = rs_dec1(k + off, kl - off, scratch + o, &len);
        if (used < 0) return -1;
        *parts[i] = oct_slice(scratch + o, len);
        off += (size_t)used;
        o += len;
    }
    return off == kl ? 0 : -1;
}

/* ---------- errors and checks ---------- */

int rs_fail(oct_errbuf_t *eb, int rc, const char *what, const char *oid)
{
    return oct_err(eb, OCT_EIO, "rados %s %s: %s%s", what, oid ? oid : "", strerror(-rc),
                   rc == -EPERM || rc == -EACCES
                       ? " (the client's caps do not allow it: docs/scale-out.md, \"Ceph auth "
                         "for the TSD\")"
                       : "");
}

/* ---------- objects ---------- */

/* "<table>/<hex(part)>" into oid (RS_OID_MAX + 1 bytes). */
void rs_data_oid(const rs_store_t *st, store_table_t t, oct_slice_t part, char *oid)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(st->names[t]);
    memcpy(oid, st->names[t], n);
    oid[n++] = '/';
    for (size_t i = 0; i < part.len; i++) {
        oid[n++] = hex[part.ptr[i] >> 4];
        oid[n++] = hex[part.ptr[i] & 15];
    }
    oid[n] = '\0';
}

/* Runs a read op and waits; returns its result and the object's version. */
int rs_read_op_wait(rs_store_t *st, rados_read_op_t op, const char *oid, uint64_t *ver)
{
    rados_completion_t c;
    int rc = rados_aio_create_completion2(NULL, NULL, &c);
    if (rc < 0) return rc;
    rc = rados_aio_read_op_operate(op, st->io, c, oid, 0);
    if (rc == 0) {
        rados_aio_wait_for_complete(c);
        rc = rados_aio_get_return_value(c);
        if (ver) *ver = rados_aio_get_version(c);
    }
    rados_aio_release(c);
    return rc;
}

/* Starts a read or write op (exactly one of rop, wop) on oid with a new
 * completion in *c. On failure the op is released, *c is NULL, and the
 * error is returned. */
int rs_aio_start(rs_store_t *st, rados_read_op_t rop, rados_write_op_t wop, const char *oid,
                 rados_completion_t *c)
{
    *c = NULL;
    int e = rados_aio_create_completion2(NULL, NULL, c);
    if (e == 0)
        e = rop ? rados_aio_read_op_operate(rop, st->io, *c, oid, 0)
                : rados_aio_write_op_operate(wop, st->io, *c, oid, NULL, 0);
    if (e < 0) {
        if (*c) rados_aio_release(*c);
        *c = NULL;
        if (rop) rados_release_read_op(rop);
        if (wop) rados_release_write_op(wop);
    }
    return e;
}

/* Appends every entry of iterator it to raw (key in .row, value in .value)
 * while the key is below stop (stop_len 0 = no bound); *last_key gets the
 * last key seen (malloc'd, NUL-terminated), *hit_stop 1 if stop was reached. */
void rs_take_entries(rados_omap_iter_t it, const uint8_t *stop, size_t stop_len,
                     store_result_t *raw, char **last_key, int *hit_stop)
{
    char *k, *v;
    size_t kl, vl;
    while (rados_omap_get_next2(it, &k, &v, &kl, &vl) == 0 && k) {
        if (stop_len) {
            int c = memcmp(k, stop, kl < stop_len ? kl : stop_len);
            if (c > 0 || (c == 0 && kl >= stop_len)) {
                *hit_stop = 1;
                break;
            }
        }
        store_result_add(raw, oct_slice(k, kl), oct_slice(NULL, 0), oct_slice(NULL, 0),
                         oct_slice(v, vl));
        free(*last_key);
        *last_key = xmalloc(kl + 1);
        memcpy(*last_key, k, kl);
        (*last_key)[kl] = '\0';
    }
}

/* Reads the omap entries of oid whose keys start with prefix, come after
 * start_after and lie below stop, into raw (reset first), page by page.
 * consistent: every page after the first asserts the first one's object
 * version, and the read starts over if the object changed (RS_RETRIES
 * times). Returns 0 (a missing object reads as empty) or OCT_EIO. */
int rs_read_range(rs_store_t *st, const char *oid, const char *prefix, const char *start_after,
                  const uint8_t *stop, size_t stop_len, int consistent, store_result_t *raw,
                  oct_errbuf_t *eb)
{
    for (int attempt = 0; attempt < RS_RETRIES; attempt++) {
        store_result_reset(raw);
        char *after = xstrdup(start_after);
        uint64_t ver = 0;
        int first = 1, rc = 0, done = 0;
        while (!done) {
            rados_read_op_t op = rados_create_read_op();
            if (consistent && !first) rados_read_op_assert_version(op, ver);
            rados_omap_iter_t it = NULL;
            unsigned char more = 0;
            int prval = 0;
            uint64_t v = 0;
            rados_read_op_omap_get_vals2(op, after, prefix, RS_PAGE, &it, &more, &prval);
            rc = rs_read_op_wait(st, op, oid, &v);
            if (rc == 0 && prval < 0) rc = prval;
            if (rc == 0) {
                int hit_stop = 0;
                rs_take_entries(it, stop, stop_len, raw, &after, &hit_stop);
                done = hit_stop || !more;
            }
            if (it) rados_omap_get_end(it);
            rados_release_read_op(op);
            if (rc == -ENOENT && first) {
                rc = 0;
                done = 1;
            }
            if (rc) break;
            if (first) ver = v;
            first = 0;
        }
        free(after);
        if (rc == 0) return 0;
        /* the object changed (or went away) between two pages: start over */
        if (consistent && (rc == -ERANGE || rc == -EOVERFLOW || rc == -ENOENT)) continue;
        return rs_fail(eb, rc, "omap read", oid);
    }
    return oct_err(eb, OCT_EIO, "rados omap read %s: the object kept changing (%d attempts)", oid,
                   RS_RETRIES);
}

/* Appends the cells of raw (omap entries of one object) to out. */
int rs_add_cells(const store_result_t *raw, store_result_t *out, const char *oid, oct_errbuf_t *eb)
{
    uint8_t *scratch = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < raw->n; i++) {
        const store_cell_t *c = &raw->cells[i];
        if (c->row.len > cap) {
            cap = 2 * c->row.len;
            scratch = xrealloc(scratch, cap);
        }
        oct_slice_t row = {0}, fam = {0}, qual = {0}; /* OUT of rs_split_key */
        if (rs_split_key(c->row.ptr, c->row.len, scratch, &row, &fam, &qual) || c->value.len < 1 ||
            c->value.ptr[0] != RS_CELL_V1) {
            rc = oct_err(eb, OCT_ECORRUPT, "malformed omap entry in %s", oid);
            break;
        }
        store_result_add(out, row, fam, qual, oct_slice(c->value.ptr + 1, c->value.len - 1));
    }
    free(scratch);
    return rc;
}

/* ---------- the index of partitions ---------- */

static uint64_t idx_hash(const uint8_t *k)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < (size_t)k[1] + 2; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    return h;
}

/* The slot of key k (found or empty). Caller holds idx_mu. */
static size_t idx_slot(const rs_store_t *st, const uint8_t *k)
{
    size_t i = idx_hash(k) & (st->idx_cap - 1);
    while (st->idx[i] && memcmp(st->idx[i], k, (size_t)k[1] + 2) != 0)
        i = (i + 1) & (st->idx_cap - 1);
    return i;
}

static int idx_known(rs_store_t *st, const uint8_t *k)
{
    pthread_mutex_lock(&st->idx_mu);
    int known = st->idx_cap && st->idx[idx_slot(st, k)];
    pthread_mutex_unlock(&st->idx_mu);
    return known;
}

static void idx_clear(rs_store_t *st)
{
    for (size_t i = 0; i < st->idx_cap; i++)
        free(st->idx[i]);
    free(st->idx);
    st->idx = NULL;
    st->idx_n = st->idx_cap = 0;
}

static void idx_remember(rs_store_t *st, const uint8_t *k)
{
    pthread_mutex_lock(&st->idx_mu);
    /* forgetting costs one idempotent index write per partition, later */
    if (st->idx_n >= RS_IDX_MAX) idx_clear(st);
    if (2 * (st->idx_n + 1) > st->idx_cap) {
        uint8_t **old = st->idx;
        size_t old_cap = st->idx_cap;
        st->idx_cap = old_cap ? 2 * old_cap : 256;
        st->idx = xcalloc(st->idx_cap, sizeof *st->idx);
        for (size_t i = 0; i < old_cap; i++)
            if (old[i]) st->idx[idx_slot(st, old[i])] = old[i];
        free(old);
    }
    size_t s = idx_slot(st, k);
    if (!st->idx[s]) {
        st->idx[s] = xmemdup(k, (size_t)k[1] + 2);
        st->idx_n++;
    }
    pthread_mutex_unlock(&st->idx_mu);
}

void rs_index_forget(rs_store_t *st)
{
    pthread_mutex_lock(&st->idx_mu);
    idx_clear(st);
    pthread_mutex_unlock(&st->idx_mu);
}

/* Makes sure the index object of table t lists every partition in parts
 * (n of them): one idempotent omap_set2 of those not yet known. */
int rs_index_parts(rs_store_t *st, store_table_t t, const oct_slice_t *parts, size_t n,
                   oct_errbuf_t *eb)
{
    uint8_t k[2 + STORE_PART_MAX];
    store_buf_t b = {0};
    size_t *offs = xmalloc((n ? n : 1) * sizeof *offs), m = 0;
    for (size_t i = 0; i < n; i++) {
        k[0] = (uint8_t)t;
        k[1] = (uint8_t)parts[i].len;
        memcpy(k + 2, parts[i].ptr, parts[i].len);
        if (idx_known(st, k)) continue;
        offs[m++] = b.len;
        rs_buf_enc1(&b, parts[i]);
    }
    int rc = 0;
    if (m) {
        const char **keys = xmalloc(m * sizeof *keys), **vals = xmalloc(m * sizeof *vals);
        size_t *kl = xmalloc(m * sizeof *kl), *vl = xcalloc(m, sizeof *vl);
        for (size_t i = 0; i < m; i++) {
            keys[i] = (const char *)b.p + offs[i];
            kl[i] = (i + 1 < m ? offs[i + 1] : b.len) - offs[i];
            vals[i] = "";
        }
        rados_write_op_t op = rados_create_write_op();
        rados_write_op_omap_set2(op, keys, vals, kl, vl, m);
        rc = rados_write_op_operate(op, st->io, st->names[t], NULL, 0);
        rados_release_write_op(op);
        if (rc < 0) {
            rc = rs_fail(eb, rc, "index write", st->names[t]);
        } else {
            rc = 0;
            for (size_t i = 0; i < n; i++) {
                k[0] = (uint8_t)t;
                k[1] = (uint8_t)parts[i].len;
                memcpy(k + 2, parts[i].ptr, parts[i].len);
                idx_remember(st, k);
            }
        }
        free(keys);
        free(vals);
        free(kl);
        free(vl);
    }
    free(offs);
    free(b.p);
    return rc;
}

/* ---------- open / close ---------- */

/* The namespace recorded in DIR/rados.ns (malloc'd), or NULL if none. */
static char *ns_read(const char *dir)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/rados.ns", dir);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *ns = NULL;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (*line) ns = xstrdup(line);
    }
    fclose(f);
    return ns;
}

/* Records ns in DIR/rados.ns: a temp file, fsync'ed, renamed over. */
static int ns_write(const char *dir, const char *ns)
{
    char path[4200], tmp[4210];
    snprintf(path, sizeof path, "%s/rados.ns", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -errno;
    size_t n = strlen(ns);
    int rc = 0;
    if (write(fd, ns, n) != (ssize_t)n || write(fd, "\n", 1) != 1 || fsync(fd) != 0)
        rc = errno ? -errno : -EIO;
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0) rc = -errno;
    if (rc) unlink(tmp);
    return rc;
}

/* Decides the namespace (docs/format/rados.md, "Data set"). */
int rs_bind_namespace(const char *dir, const char *want, int read_only, char **out,
                      oct_errbuf_t *eb)
{
    char *have = ns_read(dir);
    if (have && want && strcmp(have, want) != 0) {
        int rc = oct_err(eb, OCT_ECONFIG,
                         "tsd.storage.rados.namespace: data dir %s is bound to namespace '%s', "
                         "not '%s'",
                         dir, have, want);
        free(have);
        return rc;
    }
    if (have) {
        *out = have;
        return 0;
    }
    if (read_only)
        return oct_err(eb, OCT_EIO, "cannot open %s read-only: no RADOS data set bound to it", dir);
    char ns[64];
    if (want) {
        snprintf(ns, sizeof ns, "%s", want);
        if (strlen(want) >= sizeof ns)
            return oct_err(eb, OCT_ECONFIG, "tsd.storage.rados.namespace: longer than %zu bytes",
                           sizeof ns - 1);
    } else {
        uint8_t r[8];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return oct_err(eb, OCT_EIO, "getrandom: %s", strerror(errno));
        snprintf(ns, sizeof ns, "octsdb-%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
                 r[4], r[5], r[6], r[7]);
    }
    int rc = ns_write(dir, ns);
    if (rc) return oct_err(eb, OCT_EIO, "cannot write %s/rados.ns: %s", dir, strerror(-rc));
    *out = xstrdup(ns);
    return 0;
}

void rs_destroy(rs_store_t *st)
{
    rs_watch_destroy(st);
    if (st->io) rados_ioctx_destroy(st->io);
    if (st->cluster) rados_shutdown(st->cluster);
    if (st->lock_fd >= 0) close(st->lock_fd); /* releases the flock */
    for (int t = 0; t < STORE_TABLE_COUNT; t++)
        free(st->names[t]);
    idx_clear(st);
    pthread_mutex_destroy(&st->idx_mu);
    for (int i = 0; i < RS_STRIPES; i++) {
        pthread_mutex_destroy(&st->stripes[i].mu);
        free(st->stripes[i].key);
    }
    free(st->dir);
    free(st->ns);
    free(st);
}
