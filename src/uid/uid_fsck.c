/* uid_fsck.c -- `uid fsck`: checks (and with fix repairs) the whole UID
 * table, kind by kind, against OpenTSDB's invariants (uid.h). Moved out of
 * uid.c, which keeps assignment, lookups, rename and delete. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "uid/uid_int.h"

/* ---- fsck ------------------------------------------------------------ */

typedef struct {
    const uint8_t *name;
    size_t name_len;
    const uint8_t *id; /* raw bytes as stored */
    size_t id_len;
} uid_pair_t;

typedef struct {
    uid_registry_t *r;
    const uid_fsck_opts_t *opts;
    uid_fsck_report_fn cb;
    void *ctx;
    uid_fsck_stats_t *st;
    oct_errbuf_t *eb;
    codec_uid_kind_t kind;
} uid_fsck_t;

static void uid_fsck_report(uid_fsck_t *f, uid_fsck_problem_t p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void uid_fsck_report(uid_fsck_t *f, uid_fsck_problem_t p, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    f->st->found[p]++;
    f->st->errors++;
    if (f->cb) f->cb(f->ctx, f->kind, p, msg);
}

static int uid_pair_cmp_name(const void *a, const void *b)
{
    const uid_pair_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(x->name, x->name_len), oct_slice(y->name, y->name_len));
}

static int uid_pair_cmp_id(const void *a, const void *b)
{
    const uid_pair_t *x = a, *y = b;
    int c = oct_slice_cmp(oct_slice(x->id, x->id_len), oct_slice(y->id, y->id_len));
    return c ? c : uid_pair_cmp_name(a, b);
}

/* Binary search in v sorted by id (by_id) or by name; the first match. */
static const uid_pair_t *uid_pairs_find(const uid_pair_t *v, size_t n, oct_slice_t key, int by_id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        oct_slice_t k =
            by_id ? oct_slice(v[mid].id, v[mid].id_len) : oct_slice(v[mid].name, v[mid].name_len);
        if (oct_slice_cmp(k, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n) return NULL;
    oct_slice_t k =
        by_id ? oct_slice(v[lo].id, v[lo].id_len) : oct_slice(v[lo].name, v[lo].name_len);
    return oct_slice_eq(k, key) ? &v[lo] : NULL;
}

static int uid_fsck_apply(uid_fsck_t *f, const store_op_t *ops, size_t n)
{
    int rc = store_write(f->r->st, STORE_TABLE_UID, ops, n, STORE_SYNC, f->eb);
    if (rc == 0) f->st->fixed++;
    return rc;
}

static char *uid_fsck_hex(const uint8_t *b, size_t n, char *out, size_t cap)
{
    size_t i;
    for (i = 0; i < n && 2 * i + 2 < cap; i++)
        snprintf(out + 2 * i, 3, "%02X", b[i]);
    out[2 * i] = '\0';
    return out;
}

/* Checks one kind's partition. */
static int uid_fsck_kind(uid_fsck_t *f)
{
    uid_kind_state_t *s = &f->r->k[f->kind];
    const uid_fsck_opts_t *o = f->opts;
    store_result_t all = STORE_RESULT_INIT, row = STORE_RESULT_INIT;
    store_scan_spec_t spec = {.part = s->qual};
    store_scanner_t *sc;
    int rc = store_scan_open(f->r->st, STORE_TABLE_UID, &spec, &sc, f->eb);
    if (rc) return rc;
    while ((rc = store_scan_next(sc, &row, f->eb)) == 1)
        for (size_t i = 0; i < row.n; i++) {
            store_cell_t *c = &row.cells[i];
            store_result_add(&all, c->row, c->family, c->qualifier, c->value);
        }
    store_scan_close(sc);
    store_result_free(&row);
    if (rc < 0) goto out;

    uid_pair_t *fwd = xcalloc(all.n + 1, sizeof *fwd), *rev = xcalloc(all.n + 1, sizeof *rev);
    size_t nf = 0, nr = 0;
    int have_counter = 0, counter_ok = 0;
    uint64_t counter = 0, max_found = 0;
    char hx[64], hx2[64];
    for (size_t i = 0; i < all.n; i++) {
        store_cell_t *c = &all.cells[i];
        f->st->cells++;
        int is_id = oct_slice_eq(c->family, UID_FAM_ID);
        int is_name = oct_slice_eq(c->family, UID_FAM_NAME);
        if (is_name && oct_slice_eq(c->qualifier, s->meta_qual)) continue; /* UIDMeta */
        if ((!is_id && !is_name) || !oct_slice_eq(c->qualifier, s->qual)) {
            uid_fsck_report(f, UID_FSCK_UNKNOWN_QUALIFIER, "Unknown cell %.*s:%.*s in row %s",
                            (int)c->family.len, (const char *)c->family.ptr, (int)c->qualifier.len,
                            (const char *)c->qualifier.ptr,
                            uid_fsck_hex(c->row.ptr, c->row.len, hx, sizeof hx));
            if (o->fix && o->delete_unknown) {
                store_op_t op = {
                    STORE_OP_DELETE_CELL, s->qual, {c->row, c->family, c->qualifier, {0}}};
                if ((rc = uid_fsck_apply(f, &op, 1))) goto out_free;
            }
            continue;
        }
        if (is_id && oct_slice_eq(c->row, UID_COUNTER_ROW)) {
            have_counter = 1;
            if (c->value.len != 8) {
                uid_fsck_report(f, UID_FSCK_BAD_COUNTER,
                                "Invalid maximum ID for %s: should be on 8 bytes, found %zu",
                                uid_kind_str(s), c->value.len);
            } else {
                counter_ok = 1;
                int64_t v = (int64_t)oct_get_be64(c->value.ptr);
                counter = v < 0 ? 0 : (uint64_t)v;
            }
            continue;
        }
        oct_slice_t id = is_id ? c->value : c->row;
        oct_slice_t name = is_id ? c->row : c->value;
        if (id.len != s->width) {
            uid_fsck_report(f, UID_FSCK_BAD_WIDTH,
                            "Invalid %s ID of length %zu (expected: %u) "
                            "for name %.*s",
                            uid_kind_str(s), id.len, s->width, (int)name.len,
                            (const char *)name.ptr);
            continue;
        }
        uint64_t v = codec_uid_decode(id.ptr, s->width);
        if (v > max_found) max_found = v;
        uid_pair_t p = {name.ptr, name.len, id.ptr, id.len};
        if (is_id)
            fwd[nf++] = p;
        else
            rev[nr++] = p;
    }
    /* fwd is in name order (scan order); a copy in id order finds UIDs that
     * several names claim. rev sorted by id answers "what does id say". */
    uid_pair_t *fwd_by_id = xmemdup(fwd, (nf + 1) * sizeof *fwd);
    qsort(fwd_by_id, nf, sizeof *fwd_by_id, uid_pair_cmp_id);
    qsort(rev, nr, sizeof *rev, uid_pair_cmp_id);

    for (size_t i = 0; i < nf; i++) {
        const uid_pair_t *p = &fwd_by_id[i];
        oct_slice_t id = oct_slice(p->id, p->id_len);
        size_t j = i + 1;
        while (j < nf && oct_slice_eq(oct_slice(fwd_by_id[j].id, fwd_by_id[j].id_len), id))
            j++;
        if (j - i > 1) { /* several names on one UID */
            oct_strbuf_t names = OCT_STRBUF_INIT, fixed = OCT_STRBUF_INIT;
            oct_strbuf_puts(&fixed, "fsck");
            for (size_t k = i; k < j; k++) {
                oct_strbuf_printf(&names, "%s%.*s", k > i ? ", " : "", (int)fwd_by_id[k].name_len,
                                  (const char *)fwd_by_id[k].name);
                oct_strbuf_printf(&fixed, ".%.*s", (int)fwd_by_id[k].name_len,
                                  (const char *)fwd_by_id[k].name);
            }
            uid_fsck_report(f, UID_FSCK_DUPLICATE_UID, "UID %s of %s is claimed by %zu names: %s",
                            uid_fsck_hex(p->id, p->id_len, hx, sizeof hx), uid_kind_str(s), j - i,
                            oct_strbuf_cstr(&names));
            if (o->fix) {
                /* Their data is a mix of all the names: keep it reachable
                 * under a new name and free the names for clean series. */
                size_t nops = 0;
                store_op_t *ops = xcalloc(j - i + 2, sizeof *ops);
                for (size_t k = i; k < j; k++)
                    ops[nops++] = (store_op_t){STORE_OP_DELETE_CELL,
                                               s->qual,
                                               {oct_slice(fwd_by_id[k].name, fwd_by_id[k].name_len),
                                                UID_FAM_ID,
                                                s->qual,
                                                {0}}};
                oct_slice_t fn = oct_slice(fixed.ptr, fixed.len);
                ops[nops++] = (store_op_t){STORE_OP_PUT, s->qual, {fn, UID_FAM_ID, s->qual, id}};
                ops[nops++] = (store_op_t){STORE_OP_PUT, s->qual, {id, UID_FAM_NAME, s->qual, fn}};
                rc = uid_fsck_apply(f, ops, nops);
                free(ops);
            }
            oct_strbuf_free(&names);
            oct_strbuf_free(&fixed);
            if (rc) goto out_free2;
            i = j - 1;
            continue;
        }
        const uid_pair_t *rv = uid_pairs_find(rev, nr, id, 1);
        int mismatch =
            rv && !oct_slice_eq(oct_slice(rv->name, rv->name_len), oct_slice(p->name, p->name_len));
        if (!rv || mismatch) {
            if (!rv)
                uid_fsck_report(f, UID_FSCK_FORWARD_NO_REVERSE,
                                "Forward %s mapping is missing reverse mapping: %.*s -> %s",
                                uid_kind_str(s), (int)p->name_len, (const char *)p->name,
                                uid_fsck_hex(p->id, p->id_len, hx, sizeof hx));
            else
                uid_fsck_report(f, UID_FSCK_REVERSE_MISMATCH,
                                "Forward %s mapping %.*s -> %s is different than reverse "
                                "mapping: %s -> %.*s",
                                uid_kind_str(s), (int)p->name_len, (const char *)p->name,
                                uid_fsck_hex(p->id, p->id_len, hx, sizeof hx),
                                uid_fsck_hex(p->id, p->id_len, hx2, sizeof hx2), (int)rv->name_len,
                                (const char *)rv->name);
            if (o->fix) {
                store_op_t op = {STORE_OP_PUT,
                                 s->qual,
                                 {id, UID_FAM_NAME, s->qual, oct_slice(p->name, p->name_len)}};
                if ((rc = uid_fsck_apply(f, &op, 1))) goto out_free2;
            }
        }
    }
    for (size_t i = 0; i < nr; i++) {
        const uid_pair_t *p = &rev[i];
        oct_slice_t name = oct_slice(p->name, p->name_len);
        const uid_pair_t *fw = uid_pairs_find(fwd, nf, name, 0);
        if (fw && oct_slice_eq(oct_slice(fw->id, fw->id_len), oct_slice(p->id, p->id_len)))
            continue;
        /* The forward side of the mismatch case was repaired above when the
         * UID's own forward name exists; what remains is a reverse cell that
         * no forward cell agrees with. */
        if (uid_pairs_find(fwd_by_id, nf, oct_slice(p->id, p->id_len), 1)) continue;
        uid_fsck_report(f, UID_FSCK_REVERSE_NO_FORWARD,
                        "Reverse %s mapping is missing forward mapping: %.*s -> %s",
                        uid_kind_str(s), (int)p->name_len, (const char *)p->name,
                        uid_fsck_hex(p->id, p->id_len, hx, sizeof hx));
        if (o->fix) {
            oct_slice_t id = oct_slice(p->id, p->id_len);
            store_op_t ops[2] = {
                {STORE_OP_DELETE_CELL, s->qual, {id, UID_FAM_NAME, s->qual, {0}}},
                {STORE_OP_DELETE_CELL, s->qual, {id, UID_FAM_NAME, s->meta_qual, {0}}},
            };
            if ((rc = uid_fsck_apply(f, ops, 2))) goto out_free2;
        }
    }
    if ((have_counter && !counter_ok) || counter < max_found) {
        if (counter_ok || !have_counter)
            uid_fsck_report(f, UID_FSCK_COUNTER_BEHIND,
                            "We found an ID of %llu for %s but the max ID is only %llu! Future "
                            "IDs may be double-assigned!",
                            (unsigned long long)max_found, uid_kind_str(s),
                            (unsigned long long)counter);
        if (o->fix) {
            uint8_t b[8];
            oct_put_be64(b, max_found);
            store_op_t op = {
                STORE_OP_PUT, s->qual, {UID_COUNTER_ROW, UID_FAM_ID, s->qual, oct_slice(b, 8)}};
            if ((rc = uid_fsck_apply(f, &op, 1))) goto out_free2;
        }
    }
    rc = 0;
out_free2:
    free(fwd_by_id);
out_free:
    free(fwd);
    free(rev);
out:
    store_result_free(&all);
    return rc;
}

typedef struct {
    uid_fsck_t *f;
    int rc;
} uid_fsck_parts_t;

/* Cells in partitions that are no UID kind are unknown to OpenTSDB's layout. */
static int uid_fsck_foreign_part(void *ctx, oct_slice_t part)
{
    uid_fsck_parts_t *fp = ctx;
    uid_fsck_t *f = fp->f;
    for (int k = 0; k < CODEC_UID_N_KINDS; k++)
        if (oct_slice_eq(part, f->r->k[k].qual)) return 0;
    store_scan_spec_t spec = {.part = part};
    store_scanner_t *sc = NULL;
    store_result_t row = STORE_RESULT_INIT;
    int rc = store_scan_open(f->r->st, STORE_TABLE_UID, &spec, &sc, f->eb);
    char hx[64];
    while (rc == 0 && (rc = store_scan_next(sc, &row, f->eb)) == 1) {
        for (size_t i = 0; i < row.n; i++) {
            store_cell_t *c = &row.cells[i];
            f->st->cells++;
            uid_fsck_report(f, UID_FSCK_UNKNOWN_QUALIFIER, "Unknown cell %.*s:%.*s in row %s",
                            (int)c->family.len, (const char *)c->family.ptr, (int)c->qualifier.len,
                            (const char *)c->qualifier.ptr,
                            uid_fsck_hex(c->row.ptr, c->row.len, hx, sizeof hx));
            if (f->opts->fix && f->opts->delete_unknown) {
                store_op_t op = {
                    STORE_OP_DELETE_CELL, part, {c->row, c->family, c->qualifier, {0}}};
                if ((rc = uid_fsck_apply(f, &op, 1))) break;
            }
        }
        if (rc < 0) break;
        rc = 0;
    }
    if (rc == 1) rc = 0;
    if (sc) store_scan_close(sc);
    store_result_free(&row);
    fp->rc = rc;
    return rc ? 1 : 0;
}

int uid_fsck(uid_registry_t *r, const uid_fsck_opts_t *opts, uid_fsck_report_fn cb, void *ctx,
             uid_fsck_stats_t *stats, oct_errbuf_t *eb)
{
    memset(stats, 0, sizeof *stats);
    uid_fsck_t f = {r, opts, cb, ctx, stats, eb, CODEC_UID_METRIC};
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        f.kind = (codec_uid_kind_t)k;
        int rc = uid_fsck_kind(&f);
        if (rc) return rc;
    }
    f.kind = CODEC_UID_N_KINDS;
    uid_fsck_parts_t fp = {&f, 0};
    int rc = store_part_list(r->st, STORE_TABLE_UID, oct_slice(NULL, 0), oct_slice(NULL, 0),
                             uid_fsck_foreign_part, &fp, eb);
    if (fp.rc) return fp.rc;
    if (rc < 0) return rc;
    if (opts->fix && stats->fixed) uid_drop_caches(r);
    return 0;
}

const char *uid_fsck_problem_name(uid_fsck_problem_t p)
{
    static const char *const names[UID_FSCK_PROBLEM_COUNT] = {
        "bad counter",      "bad UID width",          "forward without reverse",
        "reverse mismatch", "UID with several names", "reverse without forward",
        "counter behind",   "unknown cell",
    };
    return (unsigned)p < UID_FSCK_PROBLEM_COUNT ? names[p] : "?";
}
