/* test_store_scan.c -- the store.h contract for ordered scans and partition
 * listing: bounds, family and row filters, empty partitions, snapshot
 * isolation, early stop. Written against store.h alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "testutil.h"
#include "store_fixture.h"

static const store_table_t T = STORE_TABLE_DATA;

/* Rows "r00".."r19" in partition "p", each with cells t:a and t:b. */
static void put_rows(store_t *st, oct_slice_t p, int n)
{
    for (int i = 0; i < n; i++) {
        char row[16];
        snprintf(row, sizeof row, "r%02d", i);
        fx_put(st, T, p, STR(row), STR("t"), STR("a"), STR(row));
        fx_put(st, T, p, STR(row), STR("t"), STR("b"), STR(row));
    }
}

/* Runs a scan and writes the row keys it yields, space separated, to out.
 * Checks that every cell of a yielded row carries that row's key. */
static int scan_rows(store_t *st, const store_scan_spec_t *spec, char *out, size_t cap,
                     size_t *cells)
{
    oct_errbuf_t eb;
    store_scanner_t *sc;
    store_result_t r = STORE_RESULT_INIT;
    int rc = store_scan_open(st, T, spec, &sc, &eb);
    if (rc) return rc;
    size_t len = 0;
    *cells = 0;
    out[0] = '\0';
    while ((rc = store_scan_next(sc, &r, &eb)) == 1) {
        assert_true(r.n > 0);
        for (size_t i = 1; i < r.n; i++)
            fx_assert_slice(r.cells[i].row, r.cells[0].row);
        *cells += r.n;
        len += (size_t)snprintf(out + len, cap - len, "%s%.*s", len ? " " : "",
                                (int)r.cells[0].row.len, (const char *)r.cells[0].row.ptr);
        assert_true(len < cap);
    }
    store_scan_close(sc);
    store_result_free(&r);
    return rc;
}

static void scan_honours_start_and_stop(void **state)
{
    fx_t *fx = *state;
    char got[512];
    size_t cells;
    put_rows(fx->st, STR("p"), 12);
    put_rows(fx->st, STR("q"), 3); /* another partition never shows up */

    store_scan_spec_t spec = {.part = STR("p"), .start_row = STR("r03"), .stop_row = STR("r07")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r03 r04 r05 r06");
    assert_int_equal(cells, 8);

    spec = (store_scan_spec_t){.part = STR("p"), .start_row = STR("r095")}; /* between rows */
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r10 r11");

    spec = (store_scan_spec_t){.part = STR("p"), .stop_row = STR("r02")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r00 r01");

    spec = (store_scan_spec_t){.part = STR("p"), .start_row = STR("r05"), .stop_row = STR("r05")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "");

    spec = (store_scan_spec_t){.part = STR("q")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r00 r01 r02");
    assert_int_equal(cells, 6);
}

/* A relaxed scan (no snapshot) yields what a snapshot scan does when nothing
 * writes meanwhile, across a RADOS read page (1,024 omap entries) too. */
static void scan_relaxed_yields_the_same_rows(void **state)
{
    fx_t *fx = *state;
    enum { N = 700 }; /* two cells a row: 1,400 entries */
    for (int i = 0; i < N; i++) {
        char row[16];
        snprintf(row, sizeof row, "k%04d", i);
        fx_put(fx->st, T, STR("p"), STR(row), STR("t"), STR("a"), STR(row));
        fx_put(fx->st, T, STR("p"), STR(row), STR("t"), STR("b"), STR(row));
    }
    static char snap[N * 6 + 1], relaxed[N * 6 + 1];
    size_t c1, c2;
    store_scan_spec_t spec = {.part = STR("p"), .start_row = STR("k0001")};
    assert_int_equal(scan_rows(fx->st, &spec, snap, sizeof snap, &c1), 0);
    spec.relaxed = 1;
    assert_int_equal(scan_rows(fx->st, &spec, relaxed, sizeof relaxed, &c2), 0);
    assert_int_equal(c1, 2 * (N - 1));
    assert_int_equal(c2, c1);
    assert_string_equal(relaxed, snap);
    assert_int_equal(strncmp(snap, "k0001 k0002", 11), 0);
}

static void scan_bounds_with_prefixes_and_nul(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    const oct_slice_t rows[] = {LIT("a"), LIT("a\x00"), LIT("a\x00\x00"), LIT("ab")};
    for (int i = 0; i < 4; i++)
        fx_put(fx->st, T, STR("p"), rows[i], STR("t"), STR("q"), STR("x"));
    /* [a, a\0) holds "a" only; [a\0, ab) holds a\0 and a\0\0 */
    store_scan_spec_t spec = {.part = STR("p"), .start_row = LIT("a"), .stop_row = LIT("a\x00")};
    store_scanner_t *sc;
    assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
    assert_int_equal(store_scan_next(sc, &r, &eb), 1);
    fx_assert_slice(r.cells[0].row, LIT("a"));
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    store_scan_close(sc);

    spec = (store_scan_spec_t){.part = STR("p"), .start_row = LIT("a\x00"), .stop_row = LIT("ab")};
    assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
    assert_int_equal(store_scan_next(sc, &r, &eb), 1);
    fx_assert_slice(r.cells[0].row, LIT("a\x00"));
    assert_int_equal(store_scan_next(sc, &r, &eb), 1);
    fx_assert_slice(r.cells[0].row, LIT("a\x00\x00"));
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    /* past the end stays at the end */
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    assert_int_equal(r.n, 0);
    store_scan_close(sc);
    store_result_free(&r);
}

static void scan_family_restriction(void **state)
{
    fx_t *fx = *state;
    char got[512];
    size_t cells;
    oct_slice_t p = STR("p");
    /* r1: a,b,c   r2: a,c   r3: b   r4: ba (prefix of no interest)   r5: c,b */
    fx_put(fx->st, T, p, STR("r1"), STR("a"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r1"), STR("b"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r1"), STR("b"), STR("2"), STR("x"));
    fx_put(fx->st, T, p, STR("r1"), STR("c"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r2"), STR("a"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r2"), STR("c"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r3"), STR("b"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r4"), STR("ba"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r5"), STR("c"), STR("1"), STR("x"));
    fx_put(fx->st, T, p, STR("r5"), STR("b"), STR("1"), STR("x"));
    store_scan_spec_t spec = {.part = p, .family = STR("b")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r1 r3 r5");
    assert_int_equal(cells, 4);

    spec.family = STR("c");
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r1 r2 r5");
    assert_int_equal(cells, 3);

    spec.family = STR("z");
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "");

    /* and every returned cell is of the family */
    oct_errbuf_t eb;
    store_scanner_t *sc;
    store_result_t r = STORE_RESULT_INIT;
    spec.family = STR("b");
    assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
    while (store_scan_next(sc, &r, &eb) == 1)
        for (size_t i = 0; i < r.n; i++)
            fx_assert_slice(r.cells[i].family, STR("b"));
    store_scan_close(sc);
    store_result_free(&r);
}

typedef struct {
    int calls;
} filter_ctx_t;

/* keeps rows whose last digit is even */
static int keep_even(void *ctx, oct_slice_t row)
{
    ((filter_ctx_t *)ctx)->calls++;
    return (row.ptr[row.len - 1] - '0') % 2 == 0;
}

static void scan_row_filter(void **state)
{
    fx_t *fx = *state;
    char got[512];
    size_t cells;
    filter_ctx_t ctx = {0};
    put_rows(fx->st, STR("p"), 8);
    store_scan_spec_t spec = {
        .part = STR("p"), .start_row = STR("r01"), .row_filter = keep_even, .filter_ctx = &ctx};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r02 r04 r06");
    assert_int_equal(cells, 6);
    assert_int_equal(ctx.calls, 7); /* once per row in range */
}

static void scan_of_empty_or_unknown_partition(void **state)
{
    fx_t *fx = *state;
    char got[64];
    size_t cells = 9;
    store_scan_spec_t spec = {.part = STR("nothing")};
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "");
    assert_int_equal(cells, 0);
    /* a partition whose cells were all deleted is empty too */
    oct_errbuf_t eb;
    fx_put(fx->st, T, STR("gone"), STR("r"), STR("t"), STR("q"), STR("x"));
    store_op_t del = {STORE_OP_DELETE_ROW, STR("gone"), {STR("r"), NOSLICE, NOSLICE, NOSLICE}};
    assert_int_equal(store_write(fx->st, T, &del, 1, 0, &eb), 0);
    spec.part = STR("gone");
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "");
}

static void scan_sees_snapshot_taken_at_open(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    store_result_t r = STORE_RESULT_INIT;
    put_rows(fx->st, STR("p"), 4);
    store_scan_spec_t spec = {.part = STR("p")};
    store_scanner_t *sc;
    assert_int_equal(store_scan_open(fx->st, T, &spec, &sc, &eb), 0);
    assert_int_equal(store_scan_next(sc, &r, &eb), 1);
    fx_assert_slice(r.cells[0].row, STR("r00"));

    /* after open: a new row ahead, a new cell in a later row, a deleted row,
     * a changed value, and a flush to disk */
    fx_put(fx->st, T, STR("p"), STR("r015"), STR("t"), STR("a"), STR("new"));
    fx_put(fx->st, T, STR("p"), STR("r02"), STR("t"), STR("c"), STR("new"));
    fx_put(fx->st, T, STR("p"), STR("r03"), STR("t"), STR("a"), STR("changed"));
    store_op_t del = {STORE_OP_DELETE_ROW, STR("p"), {STR("r01"), NOSLICE, NOSLICE, NOSLICE}};
    assert_int_equal(store_write(fx->st, T, &del, 1, 0, &eb), 0);
    assert_int_equal(store_flush(fx->st, &eb), 0);

    const char *want[] = {"r01", "r02", "r03"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(store_scan_next(sc, &r, &eb), 1);
        assert_int_equal(r.n, 2);
        fx_assert_cell(&r.cells[0], STR(want[i]), STR("t"), STR("a"), STR(want[i]));
        fx_assert_cell(&r.cells[1], STR(want[i]), STR("t"), STR("b"), STR(want[i]));
    }
    assert_int_equal(store_scan_next(sc, &r, &eb), 0);
    store_scan_close(sc);

    /* a new scanner sees the new state */
    char got[128];
    size_t cells;
    assert_int_equal(scan_rows(fx->st, &spec, got, sizeof got, &cells), 0);
    assert_string_equal(got, "r00 r015 r02 r03");
    assert_int_equal(cells, 2 + 1 + 3 + 2);
    store_result_free(&r);
}

typedef struct {
    char seen[16][8];
    size_t len[16];
    int n;
    int stop_at; /* return 7 on this call number (1-based); 0 = never */
} parts_ctx_t;

static int collect_part(void *vctx, oct_slice_t part)
{
    parts_ctx_t *c = vctx;
    assert_true(c->n < 16 && part.len <= 8);
    memcpy(c->seen[c->n], part.ptr, part.len);
    c->len[c->n] = part.len;
    c->n++;
    return c->n == c->stop_at ? 7 : 0;
}

static void assert_parts(const parts_ctx_t *c, const oct_slice_t *want, int n)
{
    assert_int_equal(c->n, n);
    for (int i = 0; i < n; i++)
        fx_assert_slice(oct_slice(c->seen[i], c->len[i]), want[i]);
}

static void part_list_in_byte_order_with_bounds(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    parts_ctx_t c = {0};
    assert_int_equal(store_part_list(fx->st, T, NOSLICE, NOSLICE, collect_part, &c, &eb), 0);
    assert_int_equal(c.n, 0);

    const oct_slice_t all[] = {LIT("\x00"), LIT("a"), LIT("a\x00"),
                               LIT("ab"),   LIT("b"), LIT("c\xff")};
    /* several rows per partition: each still listed once */
    for (int i = 5; i >= 0; i--)
        put_rows(fx->st, all[i], 3);
    fx_put(fx->st, T, STR("empty"), STR("r"), STR("t"), STR("q"), STR("x"));
    store_op_t del = {STORE_OP_DELETE_ROW, STR("empty"), {STR("r"), NOSLICE, NOSLICE, NOSLICE}};
    assert_int_equal(store_write(fx->st, T, &del, 1, 0, &eb), 0);
    /* other tables do not leak in */
    fx_put(fx->st, STORE_TABLE_META, STR("m"), STR("r"), STR("t"), STR("q"), STR("x"));

    assert_int_equal(store_part_list(fx->st, T, NOSLICE, NOSLICE, collect_part, &c, &eb), 0);
    assert_parts(&c, all, 6);

    memset(&c, 0, sizeof c);
    assert_int_equal(store_part_list(fx->st, T, LIT("a\x00"), LIT("b"), collect_part, &c, &eb), 0);
    assert_parts(&c, all + 2, 2);

    memset(&c, 0, sizeof c);
    assert_int_equal(store_part_list(fx->st, T, LIT("a\x01"), NOSLICE, collect_part, &c, &eb), 0);
    assert_parts(&c, all + 3, 3);

    memset(&c, 0, sizeof c);
    assert_int_equal(store_part_list(fx->st, T, NOSLICE, LIT("a"), collect_part, &c, &eb), 0);
    assert_parts(&c, all, 1);

    memset(&c, 0, sizeof c);
    c.stop_at = 2;
    assert_int_equal(store_part_list(fx->st, T, NOSLICE, NOSLICE, collect_part, &c, &eb), 7);
    assert_parts(&c, all, 2);

    memset(&c, 0, sizeof c);
    assert_int_equal(
        store_part_list(fx->st, STORE_TABLE_META, NOSLICE, NOSLICE, collect_part, &c, &eb), 0);
    assert_parts(&c, (const oct_slice_t[]){LIT("m")}, 1);
}

int main(void)
{
#define T_(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T_(scan_honours_start_and_stop),
        T_(scan_relaxed_yields_the_same_rows),
        T_(scan_bounds_with_prefixes_and_nul),
        T_(scan_family_restriction),
        T_(scan_row_filter),
        T_(scan_of_empty_or_unknown_partition),
        T_(scan_sees_snapshot_taken_at_open),
        T_(part_list_in_byte_order_with_bounds),
    };
    return fx_run("test_store_scan", tests, sizeof tests / sizeof tests[0]);
}
