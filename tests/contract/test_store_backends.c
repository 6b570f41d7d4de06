/* test_store_backends.c -- the backend registry (store_backend.h): the
 * built-in list, lookup by name with the default for NULL and "", the
 * refusal of an unknown tsd.storage.backend before anything is created,
 * and that CMake registers the per-backend contract tests for exactly the
 * backends the registry holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "store/store.h"
#include "store/store_backend.h"

static void registry_lists_rocksdb(void **state)
{
    (void)state;
    size_t n = store_backend_count();
    assert_true(n >= 1);
    assert_null(store_backend_at(n));
    const store_methods_t *r = store_backend_find("rocksdb");
    assert_non_null(r);
    assert_string_equal(r->name, "rocksdb");
    assert_int_equal(r->version, 3);
    assert_non_null(r->part_drop);
    /* one process per data dir: store.c's in-process notification */
    assert_null(r->watch);
    int listed = 0;
    for (size_t i = 0; i < n; i++) {
        const store_methods_t *m = store_backend_at(i);
        assert_non_null(m);
        assert_true(m->version >= 1 && m->version <= STORE_METHODS_VERSION);
        assert_ptr_equal(store_backend_find(m->name), m);
        listed += m == r;
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(store_backend_at(j)->name, m->name);
        /* version 1 has no optional operation */
        assert_non_null(m->open);
        assert_non_null(m->close);
        assert_non_null(m->is_read_only);
        assert_non_null(m->get);
        assert_non_null(m->get_cell);
        assert_non_null(m->multi_get);
        assert_non_null(m->write);
        assert_non_null(m->cas);
        assert_non_null(m->incr);
        assert_non_null(m->scan_open);
        assert_non_null(m->scan_next);
        assert_non_null(m->scan_close);
        assert_non_null(m->part_list);
        assert_non_null(m->flush);
        assert_non_null(m->sync);
        assert_non_null(m->disk_usage);
        assert_non_null(m->compact);
        /* version 2: watch, unwatch and notify, all or none */
        if (m->version >= 2) {
            assert_int_equal(!m->watch, !m->unwatch);
            assert_int_equal(!m->watch, !m->notify);
        }
    }
    assert_int_equal(listed, 1);
    /* unset or empty tsd.storage.backend means rocksdb; names are exact */
    assert_ptr_equal(store_backend_find(NULL), r);
    assert_ptr_equal(store_backend_find(""), r);
    assert_null(store_backend_find("RocksDB"));
    assert_null(store_backend_find("rocksdb "));
    assert_null(store_backend_find("foo"));
}

static void unknown_backend_is_econfig_naming_the_known_ones(void **state)
{
    (void)state;
    char *parent = tu_tempdir();
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/data", parent);
    store_options_t o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    o.backend = "foo";
    oct_errbuf_t eb;
    store_t *st = (store_t *)&eb; /* must come back NULL */
    assert_int_equal(store_open(&o, &st, &eb), OCT_ECONFIG);
    assert_null(st);
    /* with rocksdb the only built-in backend, the whole message is known */
    if (store_backend_count() == 1)
        assert_string_equal(eb.msg,
                            "tsd.storage.backend: unknown storage backend 'foo' (known: rocksdb)");
    assert_non_null(strstr(eb.msg, "tsd.storage.backend"));
    assert_non_null(strstr(eb.msg, "'foo'"));
    for (size_t i = 0; i < store_backend_count(); i++)
        assert_non_null(strstr(eb.msg, store_backend_at(i)->name));
    /* refused before the backend ran: no data dir */
    struct stat sb;
    assert_int_equal(stat(dir, &sb), -1);
    assert_int_equal(errno, ENOENT);
    tu_rmrf(parent);
    free(parent);
}

static void default_and_named_backend_open(void **state)
{
    (void)state;
    const char *names[] = {NULL, "", "rocksdb"};
    for (size_t i = 0; i < 3; i++) {
        char *dir = tu_tempdir();
        store_options_t o;
        memset(&o, 0, sizeof o);
        o.dir = dir;
        o.backend = names[i];
        oct_errbuf_t eb;
        store_t *st = NULL;
        if (store_open(&o, &st, &eb)) fail_msg("store_open(%s): %s", names[i], eb.msg);
        assert_int_equal(store_is_read_only(st), 0);
        store_close(st);
        tu_rmrf(dir);
        free(dir);
    }
}

/* The errors a NULL store got before the dispatch existed. */
static void null_store_is_einval(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t s = oct_slice_str("x");
    uint64_t u;
    store_scanner_t *sc = (store_scanner_t *)&eb;
    store_scan_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.part = s;
    assert_int_equal(store_get(NULL, STORE_TABLE_DATA, s, s, s, &r, &eb), OCT_EINVAL);
    assert_int_equal(store_flush(NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_sync(NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_compact(NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_disk_usage(NULL, STORE_TABLE_DATA, &u, &eb), OCT_EINVAL);
    assert_int_equal(store_scan_open(NULL, STORE_TABLE_DATA, &spec, &sc, &eb), OCT_EINVAL);
    assert_null(sc);
    store_close(NULL);
    store_scan_close(NULL);
}

/* CMake's OCT_STORE_BACKENDS (passed as OCTSDB_STORE_BACKENDS) decides
 * which contract/<program>@<backend> tests exist; it must name every
 * registered backend, in registry order, and nothing else. */
static void cmake_registers_every_backend(void **state)
{
    (void)state;
    const char *env = getenv("OCTSDB_STORE_BACKENDS");
    if (!env) skip(); /* run outside ctest */
    char want[512] = "";
    for (size_t i = 0; i < store_backend_count(); i++) {
        if (i) strcat(want, " ");
        strcat(want, store_backend_at(i)->name);
    }
    assert_string_equal(env, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_lists_rocksdb),
        cmocka_unit_test(unknown_backend_is_econfig_naming_the_known_ones),
        cmocka_unit_test(default_and_named_backend_open),
        cmocka_unit_test(null_store_is_einval),
        cmocka_unit_test(cmake_registers_every_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
