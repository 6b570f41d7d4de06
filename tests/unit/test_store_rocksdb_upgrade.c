/* test_store_rocksdb_upgrade.c -- a data dir made by an older octsdb lacks
 * the tables added since (octsdb-rollup). A read-write open creates them; a
 * read-only open (tsd.mode=ro, read-only commands) cannot, and must still
 * open: the missing table reads as empty, the others as written.
 *
 * The older data dir is made here by opening a fresh store, writing a cell,
 * closing it, and dropping the "octsdb-rollup" column family with RocksDB's
 * own API, which leaves exactly what a store without that table looks like. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <rocksdb/c.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "testutil.h"

#define STR(s) oct_slice_str(s)

static void drop_family(const char *dir, const char *name)
{
    rocksdb_options_t *o = rocksdb_options_create();
    char *err = NULL;
    size_t n = 0;
    char **names = rocksdb_list_column_families(o, dir, &n, &err);
    assert_null(err);
    const rocksdb_options_t **opts = calloc(n, sizeof *opts);
    rocksdb_column_family_handle_t **h = calloc(n, sizeof *h);
    for (size_t i = 0; i < n; i++)
        opts[i] = o;
    rocksdb_t *db =
        rocksdb_open_column_families(o, dir, (int)n, (const char *const *)names, opts, h, &err);
    assert_null(err);
    int dropped = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(names[i], name)) {
            rocksdb_drop_column_family(db, h[i], &err);
            assert_null(err);
            dropped = 1;
        }
    }
    assert_true(dropped);
    for (size_t i = 0; i < n; i++)
        rocksdb_column_family_handle_destroy(h[i]);
    rocksdb_close(db);
    rocksdb_list_column_families_destroy(names, n);
    free(h);
    free(opts);
    rocksdb_options_destroy(o);
}

static void read_only_open_of_an_older_store(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    store_options_t o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    store_t *st = NULL;
    assert_int_equal(store_open(&o, &st, &eb), 0);
    store_op_t op = {STORE_OP_PUT, STR("kind"), {STR("row"), STR("f"), STR("q"), STR("v1")}};
    assert_int_equal(store_write(st, STORE_TABLE_UID, &op, 1, 0, &eb), 0);
    store_close(st);
    drop_family(dir, "octsdb-rollup");

    o.read_only = 1;
    if (store_open(&o, &st, &eb) != 0) fail_msg("read-only open: %s", eb.msg);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(st, STORE_TABLE_UID, STR("kind"), STR("row"), STR("f"), &r, &eb), 1);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.cells[0].value.len, 2);
    assert_memory_equal(r.cells[0].value.ptr, "v1", 2);
    store_result_reset(&r);
    /* the missing table reads as empty, for a get and a scan of everything */
    assert_int_equal(store_get(st, STORE_TABLE_ROLLUP, STR("kind"), STR("row"), STR("f"), &r, &eb),
                     0);
    assert_int_equal(r.n, 0);
    store_scan_spec_t spec;
    memset(&spec, 0, sizeof spec);
    spec.part = STR("kind");
    store_scanner_t *sc = NULL;
    assert_int_equal(store_scan_open(st, STORE_TABLE_ROLLUP, &spec, &sc, &eb), 0);
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    store_scan_close(sc);
    /* and every write is refused, as on any read-only store */
    assert_true(store_write(st, STORE_TABLE_ROLLUP, &op, 1, 0, &eb) < 0);
    store_close(st);

    /* a read-write open creates the table again; then read-only sees it too */
    o.read_only = 0;
    assert_int_equal(store_open(&o, &st, &eb), 0);
    assert_int_equal(store_write(st, STORE_TABLE_ROLLUP, &op, 1, 0, &eb), 0);
    store_close(st);
    o.read_only = 1;
    assert_int_equal(store_open(&o, &st, &eb), 0);
    assert_int_equal(store_get(st, STORE_TABLE_ROLLUP, STR("kind"), STR("row"), STR("f"), &r, &eb),
                     1);
    store_close(st);
    store_result_free(&r);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(read_only_open_of_an_older_store)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
