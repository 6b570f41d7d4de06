/* test_store_drop.c -- the store.h contract of store_part_drop: exactly the
 * partitions in [start, stop) go (prefixes, NUL bytes and the tsdb layout's
 * [salt][metric][hour] included), the count is theirs, the space comes
 * back, the store goes on working (a dropped partition can be written
 * again and is listed), and bad bounds or a read-only store are refused.
 * Written against store.h alone, on a real store per backend.
 *
 * The space check uses values a backend cannot compress (256 bytes of a
 * seeded splitmix64 per cell): N partitions are written and flushed (usage
 * U1), then the first half is dropped, which must leave well under U1
 * (< 0.7 x U1, allowing for keys and file overheads) and at least the live
 * values' own bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include "common/strbuf.h"

#include "testutil.h"
#include "store_fixture.h"

static const store_table_t T = STORE_TABLE_DATA;

static int collect_part(void *ctx, oct_slice_t part)
{
    oct_strbuf_t *sb = ctx;
    oct_strbuf_printf(sb, "%s ", tu_hex(part.ptr, part.len));
    return 0;
}

/* The partitions of T, as space-separated hex. */
static char *parts_of(store_t *st)
{
    oct_errbuf_t eb;
    oct_strbuf_t sb = {0};
    int rc = store_part_list(st, T, NOSLICE, NOSLICE, collect_part, &sb, &eb);
    if (rc) fail_msg("store_part_list: %d %s", rc, eb.msg);
    char *s = strdup(sb.len ? oct_strbuf_cstr(&sb) : "");
    oct_strbuf_free(&sb);
    return s;
}

static void drop_removes_exactly_the_range(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    /* "b", "b\0" and "bx" are in [b, c); "a", "c", "c\0" are not */
    static const struct {
        const char *p;
        size_t len;
    } parts[] = {{"a", 1}, {"b", 1}, {"b\0", 2}, {"bx", 2}, {"c", 1}, {"c\0", 2}};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        oct_slice_t p = oct_slice((const uint8_t *)parts[i].p, parts[i].len);
        fx_put(fx->st, T, p, STR("r1"), STR("t"), STR("q"), STR("v"));
        fx_put(fx->st, T, p, STR("r2"), STR("t"), STR("q"), STR("w"));
    }
    char *before = parts_of(fx->st);
    assert_string_equal(before, "61 62 6200 6278 63 6300 ");
    free(before);

    uint64_t n = 99;
    int rc = store_part_drop(fx->st, T, STR("b"), STR("c"), &n, &eb);
    if (rc) fail_msg("store_part_drop: %d %s", rc, eb.msg);
    assert_int_equal(n, 3);
    char *after = parts_of(fx->st);
    assert_string_equal(after, "61 63 6300 ");
    free(after);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(fx->st, T, STR("b"), STR("r1"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, LIT("b\0"), STR("r2"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, STR("c"), STR("r2"), NOSLICE, &r, &eb), 1);
    fx_assert_cell(&r.cells[0], STR("r2"), STR("t"), STR("q"), STR("w"));
    store_result_reset(&r);
    assert_int_equal(store_get(fx->st, T, STR("a"), STR("r1"), NOSLICE, &r, &eb), 1);
    store_result_free(&r);

    /* an empty range drops nothing; the same range again finds nothing */
    assert_int_equal(store_part_drop(fx->st, T, STR("b"), STR("c"), &n, &eb), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_part_drop(fx->st, T, STR("d"), STR("e"), NULL, &eb), 0);

    /* a dropped partition can be written again, and is listed again */
    fx_put(fx->st, T, STR("bx"), STR("r9"), STR("t"), STR("q"), STR("again"));
    after = parts_of(fx->st);
    assert_string_equal(after, "61 6278 63 6300 ");
    free(after);
    /* other tables are untouched by a drop of T */
    fx_put(fx->st, STORE_TABLE_META, STR("b"), STR("r"), STR("t"), STR("q"), STR("m"));
    assert_int_equal(store_part_drop(fx->st, T, STR("a"), STR("z"), &n, &eb), 0);
    assert_int_equal(n, 4);
    assert_int_equal(store_get(fx->st, STORE_TABLE_META, STR("b"), STR("r"), NOSLICE, &r, &eb), 1);
    store_result_free(&r);
    after = parts_of(fx->st);
    assert_string_equal(after, "");
    free(after);
}

/* The data table's partitions: salt 00, metric 00 00 01 and 00 00 02, hours
 * h0..h5. Dropping [00 000001 h0, 00 000001 h3) leaves h3.. of metric 1 and
 * every hour of metric 2. */
static void drop_tsdb_layout_hours(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint8_t p[8];
    for (int m = 1; m <= 2; m++)
        for (uint32_t h = 0; h < 6; h++) {
            p[0] = 0;
            oct_put_be_n(p + 1, (uint64_t)m, 3);
            oct_put_be32(p + 4, 1356998400u + h * 3600u);
            fx_put(fx->st, T, oct_slice(p, 8), oct_slice(p, 8), STR("t"), STR("q"), STR("x"));
        }
    uint8_t lo[8] = {0, 0, 0, 1}, hi[8] = {0, 0, 0, 1};
    oct_put_be32(lo + 4, 0);
    oct_put_be32(hi + 4, 1356998400u + 3 * 3600u);
    uint64_t n = 0;
    assert_int_equal(store_part_drop(fx->st, T, oct_slice(lo, 8), oct_slice(hi, 8), &n, &eb), 0);
    assert_int_equal(n, 3);
    char *after = parts_of(fx->st);
    assert_string_equal(after, "0000000150E25130 0000000150E25F40 0000000150E26D50 "
                               "0000000250E22700 0000000250E23510 0000000250E24320 "
                               "0000000250E25130 0000000250E25F40 0000000250E26D50 ");
    free(after);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t usage(store_t *st)
{
    oct_errbuf_t eb;
    uint64_t b = 0;
    int rc = store_disk_usage(st, T, &b, &eb);
    if (rc) fail_msg("store_disk_usage: %d %s", rc, eb.msg);
    return b;
}

#define N_PARTS 200
#define N_ROWS  10
#define VAL_LEN 256

static void drop_gives_space_back(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t seed = 42;
    store_op_t ops[N_ROWS];
    char parts[N_PARTS][8], rows[N_ROWS][8];
    uint8_t vals[N_ROWS][VAL_LEN];
    for (int i = 0; i < N_PARTS; i++) {
        snprintf(parts[i], sizeof parts[i], "p%04d", i);
        for (int k = 0; k < N_ROWS; k++) {
            snprintf(rows[k], sizeof rows[k], "r%02d", k);
            for (size_t b = 0; b < VAL_LEN; b += 8) {
                uint64_t x = splitmix(&seed);
                memcpy(vals[k] + b, &x, 8);
            }
            ops[k] = fx_put_op(STR(parts[i]), STR(rows[k]), STR("t"), STR("q"),
                               oct_slice(vals[k], VAL_LEN));
        }
        int rc = store_write(fx->st, T, ops, N_ROWS, 0, &eb);
        if (rc) fail_msg("store_write: %d %s", rc, eb.msg);
    }
    assert_int_equal(store_flush(fx->st, &eb), 0);
    uint64_t u1 = usage(fx->st);
    assert_true(u1 >= (uint64_t)N_PARTS * N_ROWS * VAL_LEN);
    uint64_t n = 0;
    int rc = store_part_drop(fx->st, T, STR("p0000"), STR("p0100"), &n, &eb);
    if (rc) fail_msg("store_part_drop: %d %s", rc, eb.msg);
    assert_int_equal(n, N_PARTS / 2);
    uint64_t u2 = usage(fx->st);
    uint64_t live = (uint64_t)(N_PARTS / 2) * N_ROWS * VAL_LEN;
    if (!(u2 < u1 * 7 / 10 && u2 >= live))
        fail_msg("after the drop %llu bytes, before %llu, live values %llu", (unsigned long long)u2,
                 (unsigned long long)u1, (unsigned long long)live);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(fx->st, T, STR("p0099"), STR("r00"), NOSLICE, &r, &eb), 0);
    assert_int_equal(store_get(fx->st, T, STR("p0100"), STR("r00"), NOSLICE, &r, &eb), 1);
    store_result_free(&r);
}

static void drop_refuses_bad_bounds_and_read_only(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    fx_put(fx->st, T, STR("b"), STR("r"), STR("t"), STR("q"), STR("v"));
    assert_int_equal(store_part_drop(fx->st, T, STR("c"), STR("b"), NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_part_drop(fx->st, T, STR("b"), STR("b"), NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_part_drop(fx->st, T, STR("bb"), STR("b"), NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_part_drop(fx->st, T, NOSLICE, STR("c"), NULL, &eb), OCT_EINVAL);
    assert_int_equal(store_part_drop(fx->st, T, STR("a"), NOSLICE, NULL, &eb), OCT_EINVAL);
    store_close(fx->st);
    store_options_t o = fx_options(fx->dir);
    o.read_only = 1;
    assert_int_equal(store_open(&o, &fx->st, &eb), 0);
    assert_int_equal(store_part_drop(fx->st, T, STR("a"), STR("c"), NULL, &eb), OCT_EINVAL);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(store_get(fx->st, T, STR("b"), STR("r"), NOSLICE, &r, &eb), 1);
    store_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(drop_removes_exactly_the_range, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(drop_tsdb_layout_hours, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(drop_gives_space_back, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(drop_refuses_bad_bounds_and_read_only, fx_setup,
                                        fx_teardown),
    };
    return fx_run("test_store_drop", tests, sizeof tests / sizeof tests[0]);
}
