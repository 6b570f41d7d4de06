/* uid_names.c -- every name of a kind in byte order, in memory, for
 * uid_suggest (uid_int.h): a prefix query is a binary search and a copy
 * instead of a scan of the store's forward map (at a million series the
 * scan of 100,000 tag values was most of /api/suggest's CPU).
 *
 * The list is an immutable snapshot: entries {id, offset, length} sorted by
 * name bytes over one block of name text. A query takes a reference under
 * the kind's mutex and reads it without any lock, so a callback may do
 * anything but free the registry. A snapshot is current when
 *  - the kind's inval_gen is the one it was built at: every rename and
 *    delete (ours or, through uid_watch.c, another registry's), a lost
 *    watch and `dropcaches` bump it, and the next query rebuilds from the
 *    store; and
 *  - the kind's counter is not above its high mark: every sequential
 *    assignment, ours or another registry's, raises the counter in the
 *    same atomic batch that writes its cells (uid.c), so the UIDs in
 *    (high, counter] are the ones assigned since, and a query adds them by
 *    UID (cache reads, mostly) into a new snapshot.
 * So each query costs one read of the counter cell. Random metric UIDs have
 * no counter: that kind is always scanned from the store. */
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "uid/uid_int.h"

typedef struct {
    uint64_t id;
    uint32_t off, len;
} uid_name_ent_t;

struct uid_names {
    unsigned refs; /* under the kind's names_mu */
    uint64_t gen;  /* inval_gen at build */
    uint64_t high; /* every UID up to it is in (or had no name) */
    size_t n;
    uid_name_ent_t *e;
    uint8_t *text;
    size_t text_len;
};

/* More new UIDs than this since the last snapshot: scan instead (a scan
 * reads names in order; adding reads each by UID and sorts them). */
#define UID_NAMES_ADD_MAX(n) ((n) / 4 + 1024)

static void names_unref(uid_kind_state_t *s, struct uid_names *l)
{
    if (!l) return;
    pthread_mutex_lock(&s->names_mu);
    unsigned left = --l->refs;
    pthread_mutex_unlock(&s->names_mu);
    if (left) return;
    free(l->e);
    free(l->text);
    free(l);
}

void uid__names_free(uid_kind_state_t *s)
{
    names_unref(s, s->names);
    s->names = NULL;
}

static int ent_cmp_raw(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    return r ? r : (al > bl) - (al < bl);
}

static int ent_cmp(const void *a, const void *b, void *text)
{
    const uid_name_ent_t *x = a, *y = b;
    const uint8_t *t = text;
    return ent_cmp_raw(t + x->off, x->len, t + y->off, y->len);
}

typedef struct {
    struct uid_names *l;
    size_t cap_e, cap_t;
} build_t;

static void build_add(build_t *b, const uint8_t *name, size_t len, uint64_t id)
{
    struct uid_names *l = b->l;
    if (l->n == b->cap_e) {
        b->cap_e = b->cap_e ? b->cap_e * 2 : 256;
        l->e = xrealloc(l->e, b->cap_e * sizeof *l->e);
    }
    if (l->text_len + len > b->cap_t) {
        b->cap_t = b->cap_t ? b->cap_t * 2 : 4096;
        while (b->cap_t < l->text_len + len)
            b->cap_t *= 2;
        l->text = xrealloc(l->text, b->cap_t);
    }
    if (len) memcpy(l->text + l->text_len, name, len);
    l->e[l->n++] = (uid_name_ent_t){id, (uint32_t)l->text_len, (uint32_t)len};
    l->text_len += len;
    if (id > l->high) l->high = id;
}

static int scan_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    build_add(ctx, name, len, id);
    return 0;
}

/* The UIDs in (old->high, counter] that have a name whose forward cell
 * names them back, merged into a copy of old: the new snapshot, or NULL
 * and the error in *err. */
static struct uid_names *names_extend(uid_registry_t *r, codec_uid_kind_t kind,
                                      const struct uid_names *old, uint64_t counter, int *err,
                                      oct_errbuf_t *eb)
{
    struct uid_names add = {0};
    build_t ab = {.l = &add};
    uint8_t buf[UID_NAME_MAX];
    int rc = 0;
    for (uint64_t id = old->high + 1; id <= counter && id != 0 && !rc; id++) {
        size_t len;
        rc = uid_get_name(r, kind, id, buf, sizeof buf, &len, eb);
        if (rc == OCT_ENOSUCHID)
            rc = 0; /* deleted, or a gap */
        else if (!rc)
            build_add(&ab, buf, len, id);
    }
    /* Keep those whose forward cell names them back: a reverse cell with no
     * forward one is a UID OpenTSDB leaked, which an assignment of ours
     * skipped (uid.c). Read from the store in one request: the cache may
     * hold the pair from the reverse read above. */
    if (!rc && add.n) {
        uid_kind_state_t *s = &r->k[kind];
        store_key_t *keys = xmalloc(add.n * sizeof *keys);
        for (size_t i = 0; i < add.n; i++)
            keys[i] = (store_key_t){s->qual, oct_slice(add.text + add.e[i].off, add.e[i].len)};
        store_result_t res = STORE_RESULT_INIT;
        rc = store_multi_get(r->st, STORE_TABLE_UID, keys, add.n, UID_FAM_ID, &res, eb);
        size_t c = 0, kept = 0;
        for (size_t i = 0; rc >= 0 && i < add.n; i++) {
            uint64_t fwd = 0; /* the cells come in key order, at most one per key */
            if (c < res.n && oct_slice_eq(res.cells[c].row, keys[i].row)) {
                const store_cell_t *cl = &res.cells[c++];
                if (oct_slice_eq(cl->qualifier, s->qual) && cl->value.len == s->width)
                    fwd = codec_uid_decode(cl->value.ptr, s->width);
            }
            if (fwd == add.e[i].id) add.e[kept++] = add.e[i];
        }
        add.n = kept;
        store_result_free(&res);
        free(keys);
        if (rc > 0) rc = 0;
    }
    if (rc) {
        *err = rc;
        free(add.e);
        free(add.text);
        return NULL;
    }
    if (add.n > 1) qsort_r(add.e, add.n, sizeof *add.e, ent_cmp, add.text);
    struct uid_names *l = xcalloc(1, sizeof *l);
    l->n = 0;
    l->e = xmalloc((old->n + add.n + 1) * sizeof *l->e);
    l->text = xmalloc(old->text_len + add.text_len + 1);
    memcpy(l->text, old->text, old->text_len);
    if (add.text_len) memcpy(l->text + old->text_len, add.text, add.text_len);
    l->text_len = old->text_len + add.text_len;
    size_t i = 0, j = 0;
    while (i < old->n || j < add.n) {
        int c = i == old->n  ? 1
                : j == add.n ? -1
                             : ent_cmp_raw(old->text + old->e[i].off, old->e[i].len,
                                           add.text + add.e[j].off, add.e[j].len);
        if (c <= 0) l->e[l->n++] = old->e[i++];
        if (c >= 0 && j < add.n) {
            if (c > 0) {
                uid_name_ent_t e = add.e[j];
                e.off += (uint32_t)old->text_len;
                l->e[l->n++] = e;
            }
            j++; /* c == 0: already listed */
        }
    }
    l->high = old->high > counter ? old->high : counter;
    for (j = 0; j < add.n; j++)
        if (add.e[j].id > l->high) l->high = add.e[j].id;
    free(add.e);
    free(add.text);
    return l;
}

/* A current snapshot of the kind, referenced (names_unref it), or NULL and
 * the error in *rc. */
static struct uid_names *names_get(uid_registry_t *r, codec_uid_kind_t kind, int *rc,
                                   oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    uint64_t gen = atomic_load(&s->inval_gen);
    uint64_t counter;
    *rc = uid_counter(r, kind, &counter, eb);
    if (*rc) return NULL;
    pthread_mutex_lock(&s->names_mu);
    struct uid_names *cur = s->names;
    if (cur && cur->gen == gen && cur->high >= counter) {
        cur->refs++;
        pthread_mutex_unlock(&s->names_mu);
        return cur;
    }
    if (cur && cur->gen == gen)
        cur->refs++;
    else
        cur = NULL;
    pthread_mutex_unlock(&s->names_mu);

    struct uid_names *l;
    if (cur && counter - cur->high <= UID_NAMES_ADD_MAX(cur->n)) {
        l = names_extend(r, kind, cur, counter, rc, eb);
        names_unref(s, cur);
        if (!l) return NULL;
    } else {
        names_unref(s, cur);
        l = xcalloc(1, sizeof *l);
        build_t b = {.l = l};
        /* the counter was read first: a name assigned meanwhile is either
         * scanned or above it, and found by the next query */
        *rc = uid__scan_forward(r, s, NULL, 0, SIZE_MAX, scan_cb, &b, eb);
        if (*rc) {
            free(l->e);
            free(l->text);
            free(l);
            return NULL;
        }
        if (counter > l->high) l->high = counter;
    }
    l->gen = gen;
    l->refs = 1; /* ours */
    pthread_mutex_lock(&s->names_mu);
    /* publish unless something was renamed or deleted while we read */
    if (atomic_load(&s->inval_gen) == gen &&
        (!s->names || s->names->gen != gen || s->names->high < l->high)) {
        struct uid_names *old = s->names;
        s->names = l;
        l->refs++;
        if (old && !--old->refs) {
            free(old->e);
            free(old->text);
            free(old);
        }
    }
    pthread_mutex_unlock(&s->names_mu);
    return l;
}

int uid__names_suggest(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *prefix, size_t plen,
                       size_t max, uid_name_fn cb, void *ctx, oct_errbuf_t *eb)
{
    uid_kind_state_t *s = &r->k[kind];
    int rc;
    struct uid_names *l = names_get(r, kind, &rc, eb);
    if (!l) return rc;
    /* the first name >= prefix */
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ent_cmp_raw(l->text + l->e[mid].off, l->e[mid].len, prefix, plen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t sent = 0;
    for (size_t i = lo; i < l->n && sent < max; i++) {
        const uid_name_ent_t *e = &l->e[i];
        if (e->len < plen || (plen && memcmp(l->text + e->off, prefix, plen))) break;
        sent++;
        if (cb(ctx, l->text + e->off, e->len, e->id)) break;
    }
    names_unref(s, l);
    return 0;
}
