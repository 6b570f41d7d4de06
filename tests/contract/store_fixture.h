/* store_fixture.h -- shared by the tests/contract/test_store*.c programs: a
 * fresh store in a temp dir per test, and short-hands for writing cells and
 * asserting on them. Uses store.h only, so every backend runs the same tests.
 * cmocka and testutil.h must be included first. */
#ifndef OCT_TESTS_STORE_FIXTURE_H
#define OCT_TESTS_STORE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* A slice over a string literal that may contain NUL bytes. */
#define LIT(s)  oct_slice((s), sizeof(s) - 1)
#define STR(s)  oct_slice_str(s)
#define NOSLICE oct_slice(NULL, 0)

typedef struct {
    char *dir;
    store_t *st;
} fx_t;

static inline store_options_t fx_options(const char *dir)
{
    store_options_t o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    o.block_cache_mb = 8;
    return o;
}

static inline int fx_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    oct_errbuf_t eb;
    fx->dir = tu_tempdir();
    assert_non_null(fx->dir);
    store_options_t o = fx_options(fx->dir);
    int rc = store_open(&o, &fx->st, &eb);
    if (rc) fail_msg("store_open: %d %s", rc, eb.msg);
    *state = fx;
    return 0;
}

static inline int fx_teardown(void **state)
{
    fx_t *fx = *state;
    store_close(fx->st);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

static inline store_op_t fx_put_op(oct_slice_t part, oct_slice_t row, oct_slice_t fam,
                                   oct_slice_t qual, oct_slice_t val)
{
    store_op_t op = {STORE_OP_PUT, part, {row, fam, qual, val}};
    return op;
}

/* One PUT through store_write; fails the test on error. */
static inline void fx_put(store_t *st, store_table_t t, oct_slice_t part, oct_slice_t row,
                          oct_slice_t fam, oct_slice_t qual, oct_slice_t val)
{
    oct_errbuf_t eb;
    store_op_t op = fx_put_op(part, row, fam, qual, val);
    int rc = store_write(st, t, &op, 1, 0, &eb);
    if (rc) fail_msg("store_write: %d %s", rc, eb.msg);
}

static inline void fx_assert_slice(oct_slice_t got, oct_slice_t want)
{
    if (!oct_slice_eq(got, want)) {
        char g[512];
        snprintf(g, sizeof g, "%s", tu_hex(got.ptr, got.len));
        fail_msg("got %s, want %s", g, tu_hex(want.ptr, want.len));
    }
}

static inline void fx_assert_cell(const store_cell_t *c, oct_slice_t row, oct_slice_t fam,
                                  oct_slice_t qual, oct_slice_t val)
{
    fx_assert_slice(c->row, row);
    fx_assert_slice(c->family, fam);
    fx_assert_slice(c->qualifier, qual);
    fx_assert_slice(c->value, val);
}

#endif
