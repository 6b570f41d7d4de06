/* test_store_compact.c -- the store.h contract of store_compact: after it,
 * overwritten and deleted cells no longer take space, every live cell reads
 * the same (also after a reopen), writes go on working, and a read-only
 * store refuses it. Written against store.h alone, on a real store in a temp
 * dir.
 *
 * The space check needs values a backend cannot compress: 256 bytes from a
 * seeded splitmix64 per cell. N cells are written and flushed (usage U1);
 * then every cell is overwritten and half the rows deleted. Whatever the
 * backend's file layout, the live data after compaction is half of what U1
 * held, so the usage must fall well under U1 (< 0.7 x U1 allows for keys,
 * indexes and file overheads) and stay above the live values' own bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "testutil.h"
#include "store_fixture.h"

#define N_ROWS  2000
#define VAL_LEN 256

static const store_table_t T = STORE_TABLE_DATA;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The value of row i in generation g: VAL_LEN bytes of noise. */
static void value_of(int i, int g, uint8_t *out)
{
    uint64_t s = (uint64_t)i * 1000003u + (uint64_t)g * 7919u;
    for (size_t k = 0; k < VAL_LEN; k += 8) {
        uint64_t r = splitmix(&s);
        memcpy(out + k, &r, 8);
    }
}

static uint64_t usage(store_t *st)
{
    oct_errbuf_t eb;
    uint64_t total = 0;
    for (int t = 0; t < STORE_TABLE_COUNT; t++) {
        uint64_t b = 0;
        int rc = store_disk_usage(st, (store_table_t)t, &b, &eb);
        if (rc) fail_msg("store_disk_usage: %d %s", rc, eb.msg);
        total += b;
    }
    return total;
}

static void write_generation(store_t *st, int g)
{
    oct_errbuf_t eb;
    store_op_t ops[100];
    char rows[100][16];
    uint8_t vals[100][VAL_LEN];
    for (int i = 0; i < N_ROWS; i += 100) {
        for (int k = 0; k < 100; k++) {
            snprintf(rows[k], sizeof rows[k], "row%05d", i + k);
            value_of(i + k, g, vals[k]);
            ops[k] =
                fx_put_op(STR("p"), STR(rows[k]), STR("t"), STR("q"), oct_slice(vals[k], VAL_LEN));
        }
        int rc = store_write(st, T, ops, 100, 0, &eb);
        if (rc) fail_msg("store_write: %d %s", rc, eb.msg);
    }
}

/* Odd rows hold generation 2, even rows are gone. */
static void check_live(store_t *st)
{
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    uint8_t want[VAL_LEN];
    for (int i = 0; i < N_ROWS; i++) {
        char row[16];
        snprintf(row, sizeof row, "row%05d", i);
        store_result_reset(&r);
        int rc = store_get(st, T, STR("p"), STR(row), NOSLICE, &r, &eb);
        if (i % 2 == 0) {
            if (rc != 0) fail_msg("deleted %s: store_get returned %d", row, rc);
            continue;
        }
        if (rc != 1) fail_msg("%s: store_get returned %d", row, rc);
        value_of(i, 2, want);
        fx_assert_cell(&r.cells[0], STR(row), STR("t"), STR("q"), oct_slice(want, VAL_LEN));
    }
    store_result_free(&r);
}

static void compact_reclaims_overwritten_and_deleted_cells(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    write_generation(fx->st, 1);
    assert_int_equal(store_flush(fx->st, &eb), 0);
    uint64_t u1 = usage(fx->st);
    assert_true(u1 >= (uint64_t)N_ROWS * VAL_LEN);

    write_generation(fx->st, 2);
    assert_int_equal(store_flush(fx->st, &eb), 0);
    for (int i = 0; i < N_ROWS; i += 2) {
        char row[16];
        snprintf(row, sizeof row, "row%05d", i);
        store_op_t op = {STORE_OP_DELETE_ROW, STR("p"), {STR(row), NOSLICE, NOSLICE, NOSLICE}};
        assert_int_equal(store_write(fx->st, T, &op, 1, 0, &eb), 0);
    }
    /* the deletions are still in memory: compaction must take them too */
    int rc = store_compact(fx->st, &eb);
    if (rc) fail_msg("store_compact: %d %s", rc, eb.msg);

    uint64_t u3 = usage(fx->st);
    uint64_t live = (uint64_t)(N_ROWS / 2) * VAL_LEN;
    if (!(u3 < u1 * 7 / 10))
        fail_msg("after compaction %llu bytes, before the rewrite %llu", (unsigned long long)u3,
                 (unsigned long long)u1);
    if (!(u3 >= live))
        fail_msg("after compaction %llu bytes < live values", (unsigned long long)u3);
    check_live(fx->st);

    /* the store goes on working, and the result survives a reopen */
    fx_put(fx->st, T, STR("p"), STR("row00000"), STR("t"), STR("q"), STR("back"));
    store_close(fx->st);
    store_options_t o = fx_options(fx->dir);
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(fx->st, T, STR("p"), STR("row00000"), NOSLICE, &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("row00000"), STR("t"), STR("q"), STR("back"));
    store_result_free(&r);
    store_op_t op = {STORE_OP_DELETE_ROW, STR("p"), {STR("row00000"), NOSLICE, NOSLICE, NOSLICE}};
    assert_int_equal(store_write(fx->st, T, &op, 1, 0, &eb), 0);
    check_live(fx->st);
}

static void compact_empty_store_and_twice(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    assert_int_equal(store_compact(fx->st, &eb), 0);
    fx_put(fx->st, STORE_TABLE_UID, STR("metrics"), STR("sys.cpu"), STR("id"), STR("metrics"),
           LIT("\x00\x00\x01"));
    assert_int_equal(store_compact(fx->st, &eb), 0);
    assert_int_equal(store_compact(fx->st, &eb), 0);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(
        store_get(fx->st, STORE_TABLE_UID, STR("metrics"), STR("sys.cpu"), NOSLICE, &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("sys.cpu"), STR("id"), STR("metrics"), LIT("\x00\x00\x01"));
    store_result_free(&r);
}

static void compact_refused_read_only(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    fx_put(fx->st, T, STR("p"), STR("r"), STR("t"), STR("q"), STR("v"));
    store_close(fx->st);
    store_options_t o = fx_options(fx->dir);
    o.read_only = 1;
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    assert_int_equal(store_compact(fx->st, &eb), OCT_EINVAL);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(fx->st, T, STR("p"), STR("r"), NOSLICE, &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("r"), STR("t"), STR("q"), STR("v"));
    store_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(compact_reclaims_overwritten_and_deleted_cells, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(compact_empty_store_and_twice, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(compact_refused_read_only, fx_setup, fx_teardown),
    };
    return fx_run("test_store_compact", tests, sizeof tests / sizeof tests[0]);
}
