/* uid_fixture.h -- the fixture the UID registry tests share: a RocksDB store
 * on a fresh temp dir with a registry open on it, closed and removed by the
 * teardown.
 *
 * Header-only: every tests/uid/test_*.c is its own program. Include after
 * cmocka. */
#ifndef OCT_TESTS_UID_FIXTURE_H
#define OCT_TESTS_UID_FIXTURE_H

#include <stdlib.h>

#include "store/store.h"
#include "testutil.h"
#include "uid/uid.h"

typedef struct {
    char *dir; /* owned; removed by the teardown */
    store_t *st;
    uid_registry_t *r;
} fx_t;

/* Opens the store on fx->dir (a fresh temp dir if NULL) and a registry with
 * options o (NULL = the defaults) on it; a failure fails the test. */
static inline void fx_open(fx_t *fx, const uid_options_t *o)
{
    oct_errbuf_t eb;
    store_options_t so = {0};
    if (!fx->dir) fx->dir = tu_tempdir();
    so.dir = fx->dir;
    assert_int_equal(store_open(&so, &fx->st, &eb), 0);
    uid_options_t def;
    uid_options_default(&def);
    assert_int_equal(uid_registry_open(fx->st, o ? o : &def, &fx->r, &eb), 0);
}

/* Closes registry and store, keeping the dir (a test may reopen it). */
static inline void fx_close(fx_t *fx)
{
    uid_registry_close(fx->r);
    store_close(fx->st);
    fx->r = NULL;
    fx->st = NULL;
}

/* cmocka setup/teardown: a fixture with default options in *state. */
static inline int fx_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    fx_open(fx, NULL);
    *state = fx;
    return 0;
}

static inline int fx_teardown(void **state)
{
    fx_t *fx = *state;
    fx_close(fx);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

#endif
