/* test_store.c -- the store.h contract: point reads and writes, ordering of
 * rows and cells with NUL bytes and prefixes, CAS, counters, concurrency,
 * persistence, locking and crash survival. Written against store.h alone, on
 * a real store in a temp dir, so it runs unchanged on every backend.
 *
 * The lock and crash tests re-run this program as a child
 * (`test_store --child-open DIR` / `--child-crash DIR`) because they need a
 * second process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "store_fixture.h"

extern char **environ;

static const store_table_t T = STORE_TABLE_UID;

static void put_get_cells_in_family_qualifier_order(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t p = STR("metrics"), row = LIT("\x00\x00\x01");
    /* written out of order; expected order is by family, then qualifier */
    fx_put(fx->st, T, p, row, STR("name"), STR("x"), STR("v3"));
    fx_put(fx->st, T, p, row, STR("id"), STR("tagk"), STR("v2"));
    fx_put(fx->st, T, p, row, STR("id"), STR("metrics"), STR("v1"));
    fx_put(fx->st, T, p, row, STR("id"), NOSLICE, NOSLICE); /* empty qualifier and value */

    assert_int_equal(store_get(fx->st, T, p, row, NOSLICE, &r, &eb), 4);
    assert_int_equal(r.n, 4);
    fx_assert_cell(&r.cells[0], row, STR("id"), NOSLICE, NOSLICE);
    fx_assert_cell(&r.cells[1], row, STR("id"), STR("metrics"), STR("v1"));
    fx_assert_cell(&r.cells[2], row, STR("id"), STR("tagk"), STR("v2"));
    fx_assert_cell(&r.cells[3], row, STR("name"), STR("x"), STR("v3"));

    /* appends to what is already in the result */
    assert_int_equal(store_get(fx->st, T, p, row, STR("name"), &r, &eb), 1);
    assert_int_equal(r.n, 5);
    fx_assert_cell(&r.cells[4], row, STR("name"), STR("x"), STR("v3"));

    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, row, STR("id"), STR("tagk"), &r, &eb), 1);
    fx_assert_cell(&r.cells[0], row, STR("id"), STR("tagk"), STR("v2"));
    assert_int_equal(store_get_cell(fx->st, T, p, row, STR("id"), STR("tag"), &r, &eb), 0);
    assert_int_equal(store_get_cell(fx->st, T, p, row, STR("id"), NOSLICE, &r, &eb), 1);
    assert_int_equal(r.n, 2);
    fx_assert_cell(&r.cells[1], row, STR("id"), NOSLICE, NOSLICE);

    /* overwrite replaces the value */
    fx_put(fx->st, T, p, row, STR("id"), STR("metrics"), STR("new"));
    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, row, STR("id"), STR("metrics"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, STR("new"));

    /* missing rows and families: 0, nothing appended */
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, p, LIT("\x00\x00\x02"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, p, row, STR("nope"), &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, STR("tagk"), row, NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, STORE_TABLE_DATA, p, row, NOSLICE, &r, &eb), 0);
    assert_int_equal(r.n, 0);
    store_result_free(&r);
}

/* Rows that are prefixes of each other or contain NUL bytes must neither mix
 * their cells nor break the memcmp order; the same for families (no NUL, but
 * prefixes) and qualifiers (anything). */
static void rows_and_cells_keep_memcmp_order_with_nul_and_prefixes(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t p = STR("p");
    /* memcmp order, shorter prefix first, worked out by hand */
    const oct_slice_t sorted[] = {
        LIT("\x00"),  LIT("\x00\x00"),  LIT("\x00\x01"),  LIT("a"),
        LIT("a\x00"), LIT("a\x00\x00"), LIT("a\x00\x01"), LIT("a\x01"),
        LIT("ab"),    LIT("a\xff"),     LIT("b"),
    };
    const size_t n = sizeof sorted / sizeof sorted[0];
    const size_t insert_order[] = {8, 3, 10, 5, 0, 7, 2, 4, 9, 1, 6};
    for (size_t i = 0; i < n; i++) {
        size_t k = insert_order[i];
        char v[8];
        snprintf(v, sizeof v, "v%zu", k);
        fx_put(fx->st, T, p, sorted[k], STR("f"), STR("q"), STR(v));
        /* a family whose name is longer, and a qualifier with NULs */
        fx_put(fx->st, T, p, sorted[k], STR("fa"), LIT("\x00"), STR(v));
    }
    for (size_t k = 0; k < n; k++) {
        char v[8];
        snprintf(v, sizeof v, "v%zu", k);
        store_result_reset(&r);
        assert_int_equal(store_get(fx->st, T, p, sorted[k], NOSLICE, &r, &eb), 2);
        fx_assert_cell(&r.cells[0], sorted[k], STR("f"), STR("q"), STR(v));
        fx_assert_cell(&r.cells[1], sorted[k], STR("fa"), LIT("\x00"), STR(v));
    }

    store_scan_spec_t spec = {.part = p};
    store_scanner_t *sc;
    assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(store_scan_next(sc, &r, &eb), 1);
        assert_int_equal(r.n, 2);
        fx_assert_slice(r.cells[0].row, sorted[k]);
        fx_assert_slice(r.cells[1].row, sorted[k]);
    }
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    store_scan_close(sc);

    /* cells: family "f" < "fa" < "g"; qualifiers "" < 00 < 00 00 < 01 < "a" */
    oct_slice_t row = STR("cells");
    const struct {
        oct_slice_t f, q;
    } cells[] = {
        {STR("f"), NOSLICE},     {STR("f"), LIT("\x00")}, {STR("f"), LIT("\x00\x00")},
        {STR("f"), LIT("\x01")}, {STR("f"), STR("a")},    {STR("f"), STR("z")},
        {STR("fa"), NOSLICE},    {STR("fa"), STR("a")},   {STR("g"), LIT("\x00")},
    };
    const size_t nc = sizeof cells / sizeof cells[0];
    for (size_t i = nc; i-- > 0;)
        fx_put(fx->st, T, p, row, cells[i].f, cells[i].q, STR("x"));
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, p, row, NOSLICE, &r, &eb), (int)nc);
    for (size_t i = 0; i < nc; i++)
        fx_assert_cell(&r.cells[i], row, cells[i].f, cells[i].q, STR("x"));
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, p, row, STR("f"), &r, &eb), 6);
    store_result_free(&r);
}

static void partitions_that_are_prefixes_stay_apart(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    const oct_slice_t parts[] = {LIT("m"), LIT("m\x00"), LIT("m\x00\x01"), LIT("mx")};
    for (size_t i = 0; i < 4; i++) {
        char v[4] = {'v', (char)('0' + i), 0};
        fx_put(fx->st, T, parts[i], STR("r"), STR("f"), STR("q"), STR(v));
        fx_put(fx->st, T, parts[i], LIT("r\x00"), STR("f"), STR("q"), STR(v));
    }
    for (size_t i = 0; i < 4; i++) {
        char v[4] = {'v', (char)('0' + i), 0};
        store_result_reset(&r);
        assert_int_equal(store_get(fx->st, T, parts[i], STR("r"), NOSLICE, &r, &eb), 1);
        fx_assert_slice(r.cells[0].value, STR(v));
        store_scan_spec_t spec = {.part = parts[i]};
        store_scanner_t *sc;
        int rows = 0;
        assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
        while (store_scan_next(sc, &r, &eb) == 1) {
            fx_assert_slice(r.cells[0].value, STR(v));
            rows++;
        }
        store_scan_close(sc);
        assert_int_equal(rows, 2);
    }
    /* deleting a row in one partition leaves the same row of the others */
    store_op_t del = {STORE_OP_DELETE_ROW, LIT("m"), {STR("r"), NOSLICE, NOSLICE, NOSLICE}};
    assert_int_equal(store_write(fx->st, T, &del, 1, 0, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, LIT("m"), STR("r"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, LIT("m"), LIT("r\x00"), NOSLICE, &r, &eb), 1);
    assert_int_equal(store_get(fx->st, T, LIT("m\x00"), STR("r"), NOSLICE, &r, &eb), 1);
    assert_int_equal(store_get(fx->st, T, LIT("mx"), STR("r"), NOSLICE, &r, &eb), 1);
    store_result_free(&r);
}

static void delete_cell_family_row(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t p = STR("p");
    const char *rows[] = {"a", "ab", "b"};
    for (int i = 0; i < 3; i++) {
        fx_put(fx->st, T, p, STR(rows[i]), STR("f"), STR("1"), STR("x"));
        fx_put(fx->st, T, p, STR(rows[i]), STR("f"), STR("2"), STR("x"));
        fx_put(fx->st, T, p, STR(rows[i]), STR("fa"), STR("1"), STR("x"));
        fx_put(fx->st, T, p, STR(rows[i]), STR("g"), STR("1"), STR("x"));
    }
    store_op_t ops[] = {
        {STORE_OP_DELETE_CELL, p, {STR("a"), STR("f"), STR("1"), NOSLICE}},
        {STORE_OP_DELETE_CELL, p, {STR("a"), STR("f"), STR("nope"), NOSLICE}}, /* absent ok */
        {STORE_OP_DELETE_FAMILY, p, {STR("ab"), STR("f"), NOSLICE, NOSLICE}},
        {STORE_OP_DELETE_ROW, p, {STR("b"), NOSLICE, NOSLICE, NOSLICE}},
    };
    assert_int_equal(store_write(fx->st, T, ops, 4, 0, &eb), 0);
    assert_int_equal(store_get(fx->st, T, p, STR("a"), NOSLICE, &r, &eb), 3);
    fx_assert_cell(&r.cells[0], STR("a"), STR("f"), STR("2"), STR("x"));
    fx_assert_cell(&r.cells[1], STR("a"), STR("fa"), STR("1"), STR("x"));
    fx_assert_cell(&r.cells[2], STR("a"), STR("g"), STR("1"), STR("x"));
    store_result_reset(&r);
    /* family "f" gone, family "fa" (which has "f" as a prefix) kept */
    assert_int_equal(store_get(fx->st, T, p, STR("ab"), NOSLICE, &r, &eb), 2);
    fx_assert_cell(&r.cells[0], STR("ab"), STR("fa"), STR("1"), STR("x"));
    fx_assert_cell(&r.cells[1], STR("ab"), STR("g"), STR("1"), STR("x"));
    assert_int_equal(store_get(fx->st, T, p, STR("b"), NOSLICE, &r, &eb), 0);

    /* within one batch a later op on the same cell wins, whichever kind */
    store_op_t seq[] = {
        fx_put_op(p, STR("c"), STR("f"), STR("1"), STR("x")),
        {STORE_OP_DELETE_ROW, p, {STR("c"), NOSLICE, NOSLICE, NOSLICE}},
        fx_put_op(p, STR("d"), STR("f"), STR("1"), STR("x")),
        {STORE_OP_DELETE_CELL, p, {STR("d"), STR("f"), STR("1"), NOSLICE}},
        fx_put_op(p, STR("d"), STR("f"), STR("1"), STR("again")),
        {STORE_OP_DELETE_FAMILY, p, {STR("e"), STR("f"), NOSLICE, NOSLICE}},
        fx_put_op(p, STR("e"), STR("f"), STR("2"), STR("after")),
    };
    assert_int_equal(store_write(fx->st, T, seq, 7, 0, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, p, STR("c"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, p, STR("d"), NOSLICE, &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, STR("again"));
    assert_int_equal(store_get(fx->st, T, p, STR("e"), NOSLICE, &r, &eb), 1);
    fx_assert_slice(r.cells[1].value, STR("after"));
    /* a deleted row can be written again */
    fx_put(fx->st, T, p, STR("b"), STR("f"), STR("9"), STR("back"));
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, p, STR("b"), NOSLICE, &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("b"), STR("f"), STR("9"), STR("back"));
    store_result_free(&r);
}

static void multi_get_keeps_key_order_across_partitions(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    /* one write spanning two partitions */
    store_op_t ops[] = {
        fx_put_op(STR("p1"), STR("r1"), STR("f"), STR("a"), STR("1a")),
        fx_put_op(STR("p2"), STR("r2"), STR("f"), STR("a"), STR("2a")),
        fx_put_op(STR("p1"), STR("r1"), STR("f"), STR("b"), STR("1b")),
        fx_put_op(STR("p2"), STR("r2"), STR("g"), STR("a"), STR("2g")),
    };
    assert_int_equal(store_write(fx->st, T, ops, 4, STORE_SYNC, &eb), 0);
    const store_key_t keys[] = {
        {STR("p2"), STR("r2")},
        {STR("p1"), STR("missing")},
        {STR("p1"), STR("r1")},
        {STR("p1"), STR("r2")}, /* r2 lives in p2 only */
    };
    assert_int_equal(store_multi_get(fx->st, T, keys, 4, NOSLICE, &r, &eb), 4);
    fx_assert_cell(&r.cells[0], STR("r2"), STR("f"), STR("a"), STR("2a"));
    fx_assert_cell(&r.cells[1], STR("r2"), STR("g"), STR("a"), STR("2g"));
    fx_assert_cell(&r.cells[2], STR("r1"), STR("f"), STR("a"), STR("1a"));
    fx_assert_cell(&r.cells[3], STR("r1"), STR("f"), STR("b"), STR("1b"));
    store_result_reset(&r);
    assert_int_equal(store_multi_get(fx->st, T, keys, 4, STR("g"), &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("r2"), STR("g"), STR("a"), STR("2g"));
    assert_int_equal(store_multi_get(fx->st, T, keys, 0, NOSLICE, &r, &eb), 0);
    store_result_free(&r);
}

static void cas_applies_all_or_nothing(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t p = STR("tagk");
    store_check_t absent = {STORE_CHECK_ABSENT, {STR("host"), STR("id"), STR("tagk"), NOSLICE}};
    /* .part of the ops is ignored: they land in 'p' */
    store_op_t ops[] = {
        fx_put_op(STR("elsewhere"), STR("host"), STR("id"), STR("tagk"), LIT("\x00\x00\x01")),
        fx_put_op(NOSLICE, LIT("\x00\x00\x01"), STR("name"), STR("tagk"), STR("host")),
    };
    assert_int_equal(store_cas(fx->st, T, p, &absent, 1, ops, 2, 0, &eb), 0);
    assert_int_equal(store_get_cell(fx->st, T, p, STR("host"), STR("id"), STR("tagk"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\x00\x00\x01"));
    assert_int_equal(store_get(fx->st, T, STR("elsewhere"), STR("host"), NOSLICE, &r, &eb), 0);

    /* second create fails and writes none of its ops */
    store_op_t ops2[] = {
        fx_put_op(p, STR("host"), STR("id"), STR("tagk"), LIT("\x00\x00\x02")),
        fx_put_op(p, LIT("\x00\x00\x02"), STR("name"), STR("tagk"), STR("host")),
    };
    assert_int_equal(store_cas(fx->st, T, p, &absent, 1, ops2, 2, 0, &eb), OCT_ECASFAIL);
    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, STR("host"), STR("id"), STR("tagk"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\x00\x00\x01"));
    assert_int_equal(store_get(fx->st, T, p, LIT("\x00\x00\x02"), NOSLICE, &r, &eb), 0);

    /* EQUALS: wrong value, missing cell, then the right value */
    store_check_t eq = {STORE_CHECK_EQUALS, {STR("host"), STR("id"), STR("tagk"), LIT("\x00\x00")}};
    store_op_t upd = fx_put_op(p, STR("host"), STR("id"), STR("tagk"), STR("new"));
    assert_int_equal(store_cas(fx->st, T, p, &eq, 1, &upd, 1, 0, &eb), OCT_ECASFAIL);
    store_check_t eq_missing = {STORE_CHECK_EQUALS,
                                {STR("nohost"), STR("id"), STR("tagk"), NOSLICE}};
    assert_int_equal(store_cas(fx->st, T, p, &eq_missing, 1, &upd, 1, 0, &eb), OCT_ECASFAIL);
    store_check_t two[] = {
        {STORE_CHECK_EQUALS, {STR("host"), STR("id"), STR("tagk"), LIT("\x00\x00\x01")}},
        {STORE_CHECK_ABSENT, {STR("host"), STR("id"), STR("tagv"), NOSLICE}},
    };
    store_op_t upd_del[] = {
        upd, {STORE_OP_DELETE_ROW, p, {LIT("\x00\x00\x01"), NOSLICE, NOSLICE, NOSLICE}}};
    assert_int_equal(store_cas(fx->st, T, p, two, 2, upd_del, 2, STORE_SYNC, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, STR("host"), STR("id"), STR("tagk"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, STR("new"));
    assert_int_equal(store_get(fx->st, T, p, LIT("\x00\x00\x01"), NOSLICE, &r, &eb), 0);

    /* the same check in another partition sees nothing there */
    assert_int_equal(store_cas(fx->st, T, STR("tagv"), &absent, 1, ops2, 1, 0, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(
        store_get_cell(fx->st, T, STR("tagv"), STR("host"), STR("id"), STR("tagk"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\x00\x00\x02"));
    /* no checks: unconditional */
    assert_int_equal(store_cas(fx->st, T, p, NULL, 0, &upd, 1, 0, &eb), 0);
    store_result_free(&r);
}

static void incr_counts_in_8_byte_big_endian(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    oct_slice_t p = STR("metrics"), row = LIT("\x00"), f = STR("id"), q = STR("metrics");
    int64_t v = 99;
    assert_int_equal(store_incr(fx->st, T, p, row, f, q, 5, &v, 0, &eb), 0);
    assert_int_equal(v, 5);
    assert_int_equal(store_get_cell(fx->st, T, p, row, f, q, &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\x00\x00\x00\x00\x00\x00\x00\x05"));
    assert_int_equal(store_incr(fx->st, T, p, row, f, q, -7, &v, STORE_SYNC, &eb), 0);
    assert_int_equal(v, -2);
    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, row, f, q, &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\xff\xff\xff\xff\xff\xff\xff\xfe"));
    assert_int_equal(store_incr(fx->st, T, p, row, f, q, 0x100000000ll, &v, 0, &eb), 0);
    assert_int_equal(v, 0xFFFFFFFEll);

    /* a 4-byte cell is not a counter: error, cell untouched */
    fx_put(fx->st, T, p, row, f, STR("tagk"), LIT("\x00\x00\x00\x01"));
    assert_int_equal(store_incr(fx->st, T, p, row, f, STR("tagk"), 1, &v, 0, &eb), OCT_ECORRUPT);
    store_result_reset(&r);
    assert_int_equal(store_get_cell(fx->st, T, p, row, f, STR("tagk"), &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, LIT("\x00\x00\x00\x01"));
    /* a counter that a plain write set to 8 bytes continues from there */
    fx_put(fx->st, T, p, row, f, STR("tagv"), LIT("\x00\x00\x00\x00\x00\x00\x01\x00"));
    assert_int_equal(store_incr(fx->st, T, p, row, f, STR("tagv"), 1, &v, 0, &eb), 0);
    assert_int_equal(v, 257);
    store_result_free(&r);
}

#define N_THREADS 8
#define N_INCR    2000
#define N_CELLS   64

typedef struct {
    store_t *st;
    int id;
    int wins[N_CELLS];
    int errors;
} worker_t;

static void *incr_worker(void *arg)
{
    worker_t *w = arg;
    oct_errbuf_t eb;
    for (int i = 0; i < N_INCR; i++) {
        int64_t v;
        if (store_incr(w->st, T, STR("metrics"), LIT("\x00"), STR("id"), STR("metrics"), 1, &v, 0,
                       &eb))
            w->errors++;
        /* plain writes to the same partition must not disturb the counter */
        if (i % 100 == 0) {
            char q[16];
            snprintf(q, sizeof q, "w%d-%d", w->id, i);
            store_op_t op = fx_put_op(STR("metrics"), STR("other"), STR("id"), STR(q), STR("x"));
            if (store_write(w->st, T, &op, 1, 0, &eb)) w->errors++;
        }
    }
    return NULL;
}

static void incr_from_threads_is_exact(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    pthread_t th[N_THREADS];
    worker_t w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker_t){.st = fx->st, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, incr_worker, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].errors, 0);
    }
    int64_t v;
    assert_int_equal(store_incr(fx->st, T, STR("metrics"), LIT("\x00"), STR("id"), STR("metrics"),
                                0, &v, 0, &eb),
                     0);
    assert_int_equal(v, N_THREADS * N_INCR);
}

static void *cas_worker(void *arg)
{
    worker_t *w = arg;
    oct_errbuf_t eb;
    /* the threads visit cells in different orders to mix up the races */
    for (int k = 0; k < N_CELLS; k++) {
        int i = (k * (2 * w->id + 1)) % N_CELLS;
        char row[16];
        uint8_t val = (uint8_t)w->id;
        snprintf(row, sizeof row, "name%02d", i);
        store_check_t chk = {STORE_CHECK_ABSENT, {STR(row), STR("id"), STR("tagv"), NOSLICE}};
        store_op_t ops[] = {
            fx_put_op(NOSLICE, STR(row), STR("id"), STR("tagv"), oct_slice(&val, 1)),
            fx_put_op(NOSLICE, oct_slice(&val, 1), STR("name"), STR(row), STR(row)),
        };
        int rc = store_cas(w->st, T, STR("tagv"), &chk, 1, ops, 2, 0, &eb);
        if (rc == 0)
            w->wins[i]++;
        else if (rc != OCT_ECASFAIL)
            w->errors++;
    }
    return NULL;
}

static void cas_race_has_one_winner_per_cell(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    pthread_t th[N_THREADS];
    worker_t w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i] = (worker_t){.st = fx->st, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, cas_worker, &w[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].errors, 0);
    }
    for (int c = 0; c < N_CELLS; c++) {
        int winners = 0, who = -1;
        for (int i = 0; i < N_THREADS; i++) {
            winners += w[i].wins[c];
            if (w[i].wins[c]) who = i;
        }
        assert_int_equal(winners, 1);
        char row[16];
        snprintf(row, sizeof row, "name%02d", c);
        store_result_reset(&r);
        assert_int_equal(
            store_get_cell(fx->st, T, STR("tagv"), STR(row), STR("id"), STR("tagv"), &r, &eb), 1);
        assert_int_equal(r.cells[0].value.len, 1);
        assert_int_equal(r.cells[0].value.ptr[0], who);
    }
    store_result_free(&r);
}

static void bad_arguments_are_einval(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    store_op_t empty_row = fx_put_op(STR("p"), NOSLICE, STR("f"), STR("q"), STR("v"));
    assert_int_equal(store_write(fx->st, T, &empty_row, 1, 0, &eb), OCT_EINVAL);
    store_op_t nul_fam = fx_put_op(STR("p"), STR("r"), LIT("a\x00"), STR("q"), STR("v"));
    assert_int_equal(store_write(fx->st, T, &nul_fam, 1, 0, &eb), OCT_EINVAL);
    store_op_t no_fam = fx_put_op(STR("p"), STR("r"), NOSLICE, STR("q"), STR("v"));
    assert_int_equal(store_write(fx->st, T, &no_fam, 1, 0, &eb), OCT_EINVAL);
    store_op_t no_part = fx_put_op(NOSLICE, STR("r"), STR("f"), STR("q"), STR("v"));
    assert_int_equal(store_write(fx->st, T, &no_part, 1, 0, &eb), OCT_EINVAL);
    /* a bad op anywhere rejects the whole write */
    store_op_t mixed[] = {fx_put_op(STR("p"), STR("r"), STR("f"), STR("q"), STR("v")), no_part};
    assert_int_equal(store_write(fx->st, T, mixed, 2, 0, &eb), OCT_EINVAL);
    assert_int_equal(store_get(fx->st, T, STR("p"), STR("r"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, STR("p"), NOSLICE, NOSLICE, &r, &eb), OCT_EINVAL);
    assert_int_equal(store_get(fx->st, T, NOSLICE, STR("r"), NOSLICE, &r, &eb), OCT_EINVAL);
    store_result_free(&r);
}

/* ---------- persistence, locking, crash: need reopen or a second process ---------- */

static int run_child(const char *mode, const char *dir)
{
    char *const argv[] = {(char *)"test_store", (char *)mode, (char *)dir, NULL};
    pid_t pid;
    int status;
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) return -1;
    if (waitpid(pid, &status, 0) != pid) return -1;
    if (WIFSIGNALED(status)) return 1000 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Child: open the dir, exit with 0 on success, 2 on OCT_ELOCKED, 3 else. */
static int child_open(const char *dir)
{
    oct_errbuf_t eb;
    store_t *st;
    store_options_t o = fx_options(dir);
    int rc = store_open(&o, &st, &eb);
    if (rc == 0) store_close(st);
    if (rc == OCT_ELOCKED && strstr(eb.msg, dir)) return 2;
    return rc == 0 ? 0 : 3;
}

/* Child: write one cell without STORE_SYNC, then die without closing. */
static int child_crash(const char *dir)
{
    oct_errbuf_t eb;
    store_t *st;
    store_options_t o = fx_options(dir);
    if (store_open(&o, &st, &eb)) return 3;
    store_op_t op = fx_put_op(STR("p"), STR("crash"), STR("f"), STR("q"), STR("survived"));
    if (store_write(st, STORE_TABLE_DATA, &op, 1, 0, &eb)) return 4;
    raise(SIGKILL);
    return 5;
}

static void second_open_is_elocked(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_t *st2 = NULL;
    store_options_t o = fx_options(fx->dir);
    assert_int_equal(store_open(&o, &st2, &eb), OCT_ELOCKED);
    assert_null(st2);
    assert_non_null(strstr(eb.msg, fx->dir));
    assert_int_equal(run_child("--child-open", fx->dir), 2);
    /* once closed, another process can open it */
    store_close(fx->st);
    fx->st = NULL;
    assert_int_equal(run_child("--child-open", fx->dir), 0);
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
}

/* A store made by an open exists after it; a fresh dir holds none, and
 * asking does not make one. */
static void exists_only_after_an_open(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_options_t o = fx_options(fx->dir);
    assert_int_equal(store_exists(&o, &eb), 1);
    char *fresh = tu_tempdir();
    store_options_t f = fx_options(fresh);
    assert_int_equal(store_exists(&f, &eb), 0);
    assert_int_equal(store_exists(&f, &eb), 0);
    store_t *st = NULL;
    assert_int_equal(store_open(&f, &st, &eb), 0);
    store_close(st);
    assert_int_equal(store_exists(&f, &eb), 1);
    tu_rmrf(fresh);
    free(fresh);
    store_options_t bad = o;
    bad.backend = "no-such-backend";
    assert_int_equal(store_exists(&bad, &eb), OCT_ECONFIG);
}

static void data_survives_close_reopen_and_kill(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    store_options_t o = fx_options(fx->dir);
    o.table_names[STORE_TABLE_DATA] = "custom-data";
    store_close(fx->st);
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    fx_put(fx->st, STORE_TABLE_DATA, STR("p"), STR("r"), STR("t"), STR("q"), STR("mine"));
    fx_put(fx->st, STORE_TABLE_UID, STR("p"), STR("r"), STR("t"), STR("q"), STR("uid"));
    int64_t v;
    assert_int_equal(store_incr(fx->st, T, STR("p"), STR("c"), STR("id"), STR("n"), 42, &v, 0, &eb),
                     0);
    store_close(fx->st);
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    assert_int_equal(store_get(fx->st, STORE_TABLE_DATA, STR("p"), STR("r"), NOSLICE, &r, &eb), 1);
    fx_assert_slice(r.cells[0].value, STR("mine"));
    assert_int_equal(store_get(fx->st, STORE_TABLE_UID, STR("p"), STR("r"), NOSLICE, &r, &eb), 1);
    fx_assert_slice(r.cells[1].value, STR("uid"));
    assert_int_equal(store_incr(fx->st, T, STR("p"), STR("c"), STR("id"), STR("n"), 0, &v, 0, &eb),
                     0);
    assert_int_equal(v, 42);
    store_close(fx->st);

    /* default names: the data table is another table, without that cell */
    o.table_names[STORE_TABLE_DATA] = NULL;
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, STORE_TABLE_DATA, STR("p"), STR("r"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, STORE_TABLE_UID, STR("p"), STR("r"), NOSLICE, &r, &eb), 1);

    /* read-only open sees the data and refuses writes */
    store_close(fx->st);
    o.read_only = 1;
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, STORE_TABLE_UID, STR("p"), STR("r"), NOSLICE, &r, &eb), 1);
    store_op_t op = fx_put_op(STR("p"), STR("r2"), STR("t"), STR("q"), STR("x"));
    assert_true(store_write(fx->st, T, &op, 1, 0, &eb) < 0);
    store_close(fx->st);
    o.read_only = 0;

    /* a write without STORE_SYNC survives kill -9 of the writer */
    fx->st = NULL;
    assert_int_equal(run_child("--child-crash", fx->dir), 1000 + SIGKILL);
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, STORE_TABLE_DATA, STR("p"), STR("crash"), NOSLICE, &r, &eb),
                     1);
    fx_assert_slice(r.cells[0].value, STR("survived"));
    store_result_free(&r);
}

static void flush_makes_disk_usage_positive(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t before = 1, after = 0, other = 1;
    assert_int_equal(store_disk_usage(fx->st, STORE_TABLE_DATA, &before, &eb), 0);
    assert_int_equal(before, 0);
    store_op_t ops[100];
    char rows[100][8];
    uint8_t val[64];
    memset(val, 0x5A, sizeof val);
    for (int b = 0; b < 20; b++) {
        for (int i = 0; i < 100; i++) {
            snprintf(rows[i], sizeof rows[i], "r%02d%03d", b, i);
            ops[i] = fx_put_op(STR("p"), STR(rows[i]), STR("t"), STR("q"), oct_slice(val, 64));
        }
        assert_int_equal(store_write(fx->st, STORE_TABLE_DATA, ops, 100, 0, &eb), 0);
    }
    assert_int_equal(store_flush(fx->st, &eb), 0);
    assert_int_equal(store_disk_usage(fx->st, STORE_TABLE_DATA, &after, &eb), 0);
    assert_true(after > 0);
    assert_int_equal(store_disk_usage(fx->st, STORE_TABLE_TREE, &other, &eb), 0);
    assert_int_equal(other, 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child-open") == 0) return child_open(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--child-crash") == 0) return child_crash(argv[2]);
#define T_(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T_(put_get_cells_in_family_qualifier_order),
        T_(rows_and_cells_keep_memcmp_order_with_nul_and_prefixes),
        T_(partitions_that_are_prefixes_stay_apart),
        T_(delete_cell_family_row),
        T_(multi_get_keeps_key_order_across_partitions),
        T_(cas_applies_all_or_nothing),
        T_(incr_counts_in_8_byte_big_endian),
        T_(incr_from_threads_is_exact),
        T_(cas_race_has_one_winner_per_cell),
        T_(bad_arguments_are_einval),
        T_(second_open_is_elocked),
        T_(exists_only_after_an_open),
        T_(data_survives_close_reopen_and_kill),
        T_(flush_makes_disk_usage_positive),
    };
    return fx_run("test_store", tests, sizeof tests / sizeof tests[0]);
}
