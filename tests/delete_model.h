/* delete_model.h -- the model the delete tests keep (tests/tsdb/test_delete.c,
 * tests/e2e/test_delete_api.c): every point a test writes to a series, and
 * which of them its deletes removed, marked by hand from each delete's
 * inclusive ms bounds. Header-only; include after cmocka. */
#ifndef OCT_TESTS_DELETE_MODEL_H
#define OCT_TESTS_DELETE_MODEL_H

#include <stdint.h>
#include <stdlib.h>

#define DM_NP 512 /* points per series at most */

typedef struct {
    int64_t ts[DM_NP], val[DM_NP];
    int gone[DM_NP];
    size_t n;
} dm_series_t;

typedef struct {
    int64_t ts, val;
} dm_kept_t;

static inline void dm_add(dm_series_t *m, int64_t ts, int64_t val)
{
    assert_true(m->n < DM_NP);
    m->ts[m->n] = ts;
    m->val[m->n] = val;
    m->gone[m->n++] = 0;
}

/* Marks the points in [lo, hi] still kept; returns how many. */
static inline uint64_t dm_delete(dm_series_t *m, int64_t lo, int64_t hi)
{
    uint64_t k = 0;
    for (size_t i = 0; i < m->n; i++)
        if (!m->gone[i] && m->ts[i] >= lo && m->ts[i] <= hi) {
            m->gone[i] = 1;
            k++;
        }
    return k;
}

static inline int dm_kept_cmp(const void *a, const void *b)
{
    const dm_kept_t *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The kept points in [from, to] into k (DM_NP entries), in time order (the
 * tests write distinct timestamps); returns how many. */
static inline size_t dm_kept(const dm_series_t *m, int64_t from, int64_t to, dm_kept_t *k)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (!m->gone[i] && m->ts[i] >= from && m->ts[i] <= to)
            k[n++] = (dm_kept_t){m->ts[i], m->val[i]};
    qsort(k, n, sizeof *k, dm_kept_cmp);
    return n;
}

#endif
