/* test_store_sync.c -- the store.h contract of store_sync: it succeeds on a
 * store holding unsynced writes and changes nothing that reads see (also
 * after a reopen), it is a no-op returning 0 on a read-only store, and it may
 * run while other threads write (every write lands, none fails). Whether the
 * bytes reached the platter cannot be observed without cutting the power;
 * the write path's ordering around it is tested in
 * tests/tsdb/test_uid_durability.c. Written against store.h alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>

#include "testutil.h"
#include "store_fixture.h"

#define N_CELLS   500
#define N_WRITERS 3

static const store_table_t T = STORE_TABLE_UID;

static void row_of(int i, char *out, size_t cap)
{
    snprintf(out, cap, "row-%05d", i);
}

static void assert_cells(store_t *st, int n, const char *part)
{
    store_result_t r = STORE_RESULT_INIT;
    oct_errbuf_t eb;
    for (int i = 0; i < n; i++) {
        char row[32], val[32];
        row_of(i, row, sizeof row);
        snprintf(val, sizeof val, "v%d", i * 7);
        store_result_reset(&r);
        int rc = store_get_cell(st, T, STR(part), STR(row), STR("id"), STR("q"), &r, &eb);
        if (rc != 1) fail_msg("%s %s: %d %s", part, row, rc, eb.msg);
        fx_assert_slice(r.cells[0].value, STR(val));
    }
    store_result_free(&r);
}

static void write_cells(store_t *st, int n, const char *part)
{
    for (int i = 0; i < n; i++) {
        char row[32], val[32];
        row_of(i, row, sizeof row);
        snprintf(val, sizeof val, "v%d", i * 7);
        fx_put(st, T, STR(part), STR(row), STR("id"), STR("q"), STR(val));
    }
}

static void sync_keeps_every_unsynced_write(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    write_cells(fx->st, N_CELLS, "p");
    assert_int_equal(store_sync(fx->st, &eb), 0);
    assert_cells(fx->st, N_CELLS, "p");
    /* again with nothing new: still 0 */
    assert_int_equal(store_sync(fx->st, &eb), 0);

    store_close(fx->st);
    store_options_t o = fx_options(fx->dir);
    if (store_open(&o, &fx->st, &eb)) fail_msg("reopen: %s", eb.msg);
    assert_cells(fx->st, N_CELLS, "p");
}

static void sync_on_read_only_store_is_a_no_op(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    write_cells(fx->st, 10, "p");
    store_close(fx->st);
    store_options_t o = fx_options(fx->dir);
    o.read_only = 1;
    if (store_open(&o, &fx->st, &eb)) fail_msg("read-only open: %s", eb.msg);
    assert_int_equal(store_sync(fx->st, &eb), 0);
    assert_cells(fx->st, 10, "p");
}

typedef struct {
    store_t *st;
    char part[8];
    int failures;
} writer_arg_t;

static void *writer(void *p)
{
    writer_arg_t *a = p;
    oct_errbuf_t eb;
    for (int i = 0; i < N_CELLS; i++) {
        char row[32], val[32];
        row_of(i, row, sizeof row);
        snprintf(val, sizeof val, "v%d", i * 7);
        store_op_t op = fx_put_op(STR(a->part), STR(row), STR("id"), STR("q"), STR(val));
        if (store_write(a->st, T, &op, 1, 0, &eb)) a->failures++;
    }
    return NULL;
}

static void sync_runs_beside_writers(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    pthread_t th[N_WRITERS];
    writer_arg_t args[N_WRITERS];
    for (int i = 0; i < N_WRITERS; i++) {
        args[i] = (writer_arg_t){fx->st, "", 0};
        snprintf(args[i].part, sizeof args[i].part, "w%d", i);
        assert_int_equal(pthread_create(&th[i], NULL, writer, &args[i]), 0);
    }
    int sync_failures = 0;
    for (int i = 0; i < 50; i++)
        sync_failures += store_sync(fx->st, &eb) != 0;
    for (int i = 0; i < N_WRITERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(sync_failures, 0);
    for (int i = 0; i < N_WRITERS; i++) {
        assert_int_equal(args[i].failures, 0);
        assert_cells(fx->st, N_CELLS, args[i].part);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sync_keeps_every_unsynced_write, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(sync_on_read_only_store_is_a_no_op, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(sync_runs_beside_writers, fx_setup, fx_teardown),
    };
    return fx_run("test_store_sync", tests, sizeof tests / sizeof tests[0]);
}
