/* store_fixture.h -- shared by the tests/contract/test_store*.c programs: a
 * fresh store in a temp dir per test, and short-hands for writing cells and
 * asserting on them. Uses store.h only, so every backend runs the same tests.
 * cmocka and testutil.h must be included first.
 *
 * Backends: fx_run runs a program's tests once per registered backend (a
 * cmocka group "<program>[<backend>]"), or only the one named by
 * OCTSDB_STORE_BACKEND, which CMake sets to register one ctest per backend
 * (contract/<program>@<backend>). A backend that keeps its data in the data
 * dir alone (fx_local_backends) always runs. Any other one needs outside
 * resources (RADOS: a cluster) and runs only if OCTSDB_TEST_STORE_<NAME>
 * names a config file with its settings, which the fixture passes as
 * store_options_t.cfg (an unreadable one fails); without it the backend is
 * reported skipped, and a program that ran no backend exits 77, which ctest
 * shows as "Skipped". */
#ifndef OCT_TESTS_STORE_FIXTURE_H
#define OCT_TESTS_STORE_FIXTURE_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "store/store.h"
#include "store/store_backend.h"

#define FX_SKIPPED 77 /* ctest's SKIP_RETURN_CODE for these programs */

static const char *const fx_local_backends[] = {"rocksdb"};

/* The backend under test and its settings (NULL = the default backend). */
static const char *fx_backend;
static oct_config_t *fx_cfg;

/* Makes 'name' the backend under test. Returns 1 if it can run here (its
 * config loaded into fx_cfg when it needs one), 0 if it is not configured
 * (skip), -1 if its config is broken (fail); why[] says which. */
static inline int fx_backend_use(const char *name, char *why, size_t why_len)
{
    oct_config_free(fx_cfg);
    fx_cfg = NULL;
    fx_backend = name;
    for (size_t i = 0; i < sizeof fx_local_backends / sizeof fx_local_backends[0]; i++)
        if (strcmp(name, fx_local_backends[i]) == 0) return 1;
    char var[128];
    size_t n = (size_t)snprintf(var, sizeof var, "OCTSDB_TEST_STORE_");
    for (const char *p = name; *p && n + 1 < sizeof var; p++)
        var[n++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    var[n] = '\0';
    const char *path = getenv(var);
    if (!path || !*path) {
        snprintf(why, why_len, "%s is not set (a config file with the backend's settings)", var);
        return 0;
    }
    oct_errbuf_t eb;
    fx_cfg = oct_config_new();
    if (oct_config_load_file(fx_cfg, path, &eb) != 0) {
        if (snprintf(why, why_len, "%s=%s: %s", var, path, eb.msg) < 0) why[0] = '\0';
        return -1;
    }
    return 1;
}

/* Runs tests once per backend (see the top of this file). Returns 0 if every
 * group that ran passed, FX_SKIPPED if none ran, else 1. */
static inline int fx_run(const char *prog, const struct CMUnitTest *tests, size_t n)
{
    const char *env = getenv("OCTSDB_STORE_BACKEND");
    char *only = env && *env ? strdup(env) : NULL;
    int failed = 0, ran = 0, found = 0;
    for (size_t i = 0; i < store_backend_count(); i++) {
        const char *name = store_backend_at(i)->name;
        if (only && strcmp(only, name) != 0) continue;
        found++;
        char why[512], group[128];
        int use = fx_backend_use(name, why, sizeof why);
        if (use == 0) {
            printf("[  SKIPPED ] %s[%s]: %s\n", prog, name, why);
            continue;
        }
        if (use < 0) {
            fprintf(stderr, "%s[%s]: %s\n", prog, name, why);
            failed++;
            continue;
        }
        /* children re-run by a test open the same backend */
        setenv("OCTSDB_STORE_BACKEND", name, 1);
        snprintf(group, sizeof group, "%s[%s]", prog, name);
        failed += _cmocka_run_group_tests(group, tests, n, NULL, NULL);
        ran++;
    }
    if (only && !found) {
        fprintf(stderr, "%s: OCTSDB_STORE_BACKEND=%s: no such backend\n", prog, only);
        failed++;
    }
    oct_config_free(fx_cfg);
    fx_cfg = NULL;
    free(only);
    if (failed) return 1;
    return ran ? 0 : FX_SKIPPED;
}

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
    if (!fx_backend && getenv("OCTSDB_STORE_BACKEND")) {
        /* a child process of a test: the backend its parent runs */
        char why[512];
        if (fx_backend_use(getenv("OCTSDB_STORE_BACKEND"), why, sizeof why) < 1) {
            /* store_open below fails and says why */
        }
    }
    o.backend = fx_backend;
    o.cfg = fx_cfg;
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
