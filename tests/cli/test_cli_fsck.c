/* test_cli_fsck.c -- the real `octsdb fsck`: damage written on purpose
 * straight into the store (a duplicate, a bad value length, an unknown
 * qualifier, an old 8-byte float32, an 8-byte small integer, an orphan tagv
 * UID, a corrupt block, an out-of-order compacted column, a bad row key) is
 * found and counted under OpenTSDB's report lines; --fix-all repairs it; a
 * second run is clean; the repaired data is what the hand-made model says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/block.h"
#include "common/config.h"
#include "store/store.h"
#include "cli_fixture.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

/* The number after "<name>: " on its own line of out, or -1. */
static long counter(const char *out, const char *name)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\n%s: ", name);
    const char *p = strstr(out, pat);
    if (!p && !strncmp(out, pat + 1, strlen(pat + 1))) p = out - 1;
    if (!p) return -1;
    return strtol(p + strlen(pat), NULL, 10);
}

typedef struct {
    const char *row, *qual; /* hex */
    const char *val;        /* hex */
} damage_t;

static void write_damage(void)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", g_dir, &eb), 0);
    tsdb_t *db;
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    /* UIDs from the import: f.m = 1, host = 1, a = 1, b = 2 */
    const damage_t d[] = {
        /* row host=a: a duplicate of the block's point at +60 s (99 vs 20) */
        {"000001 50E22700 000001 000001", "03C0", "63"},
        /* an int flagged 2 bytes stored on 1 */
        {"000001 50E22700 000001 000001", "0191", "07"},
        /* a 1-byte qualifier */
        {"000001 50E22700 000001 000001", "07", "00"},
        /* float32 42.0 flagged 4 bytes, stored on 8 with zero high bytes, at +100 s */
        {"000001 50E22700 000001 000001", "064B", "0000000042280000"},
        /* 5 on 8 bytes at +200 s: fits in 1 (VLE, not an error) */
        {"000001 50E22700 000001 000001", "0C87", "0000000000000005"},
        /* a row whose tagv UID 0000FF has no name */
        {"000001 50E22700 000001 0000FF", "0190", "01"},
        /* row host=b: a block cell (seq 1) that does not decode */
        {"000001 50E22700 000001 000002", "4F0001", "0105FFFF"},
        /* row host=b: a compacted column out of order: +85 s (300), +25 s (42) */
        {"000001 50E22700 000001 000002", "05510190", "012C2A00"},
        /* a key of the wrong length */
        {"000001 50E22700 0000", "0190", "01"},
    };
    size_t n = sizeof d / sizeof d[0];
    uint8_t rows[16][32], quals[16][16], vals[16][16];
    store_op_t ops[16];
    memset(ops, 0, sizeof ops);
    for (size_t i = 0; i < n; i++) {
        int rl = tu_unhex(d[i].row, rows[i], sizeof rows[i]);
        int ql = tu_unhex(d[i].qual, quals[i], sizeof quals[i]);
        int vl = tu_unhex(d[i].val, vals[i], sizeof vals[i]);
        assert_true(rl > 0 && ql > 0 && vl > 0);
        ops[i].kind = STORE_OP_PUT;
        ops[i].part = oct_slice(rows[i], 7);
        ops[i].cell.row = oct_slice(rows[i], (size_t)rl);
        ops[i].cell.family = oct_slice_str("t");
        ops[i].cell.qualifier = oct_slice(quals[i], (size_t)ql);
        ops[i].cell.value = oct_slice(vals[i], (size_t)vl);
    }
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, ops, n, STORE_SYNC, &eb), 0);
    tsdb_close(db);
    oct_config_free(cfg);
}

static void finds_counts_fixes_then_clean(void **state)
{
    (void)state;
    char in[4300];
    snprintf(in, sizeof in, "%s/in.txt", g_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("f.m 1356998400 10 host=a\nf.m 1356998460 20 host=a\nf.m 1356998400 5 host=b\n", f);
    fclose(f);
    char *out;
    const char *imp[] = {"import", g_flag, "--auto-metric", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);

    /* healthy data: clean, exit 0 */
    const char *full[] = {"fsck", g_flag, "--full-scan", NULL};
    assert_int_equal(tu_run_octsdb(&out, full), 0);
    assert_int_equal(counter(out, "Rows Processed"), 2);
    assert_int_equal(counter(out, "Valid Datapoints"), 3);
    assert_int_equal(counter(out, "Block Cells"), 2);
    assert_int_equal(counter(out, "Total Errors"), 0);
    free(out);

    write_damage();

    assert_int_equal(tu_run_octsdb(&out, full), 1);
    assert_int_equal(counter(out, "Key Values Processed"), 11);
    assert_int_equal(counter(out, "Rows Processed"), 4);
    /* host=a: 0, 60, 100, 200 s; host=b: 0, 25, 85 s */
    assert_int_equal(counter(out, "Valid Datapoints"), 7);
    assert_int_equal(counter(out, "Invalid Row Keys Found"), 1);
    assert_int_equal(counter(out, "Duplicate Datapoints"), 1);
    assert_int_equal(counter(out, "Orphaned UID Rows"), 1);
    assert_int_equal(counter(out, "Unknown Objects"), 1);
    assert_int_equal(counter(out, "Unparseable Datapoint Values"), 1);
    assert_int_equal(counter(out, "Improperly Encoded Floating Point Values"), 1);
    assert_int_equal(counter(out, "Unparseable Compacted Columns"), 0);
    assert_int_equal(counter(out, "Out of Order Compacted Columns"), 1);
    assert_int_equal(counter(out, "Block Cells"), 2);
    assert_int_equal(counter(out, "Unparseable Block Cells"), 1);
    assert_int_equal(counter(out, "Datapoints Qualified for VLE "), 1);
    assert_int_equal(counter(out, "Bytes Saved with VLE"), 7);
    assert_int_equal(counter(out, "Total Errors"), 8);
    assert_int_equal(counter(out, "Total Errors Fixed"), 0);
    assert_non_null(strstr(out, "Unable to resolve the tagv UID 0000FF"));
    free(out);

    /* a query selects rows: only host=b (the bad block and the compacted column) */
    const char *q[] = {"fsck", g_flag, "1356998400", "1356999000", "sum", "f.m", "host=b", NULL};
    assert_int_equal(tu_run_octsdb(&out, q), 1);
    assert_int_equal(counter(out, "Rows Processed"), 1);
    assert_int_equal(counter(out, "Total Errors"), 2);
    free(out);

    /* --fix alone repairs nothing that needs a delete flag or --resolve-duplicates */
    const char *fix_only[] = {"fsck", g_flag, "--full-scan", "--fix", NULL};
    assert_int_equal(tu_run_octsdb(&out, fix_only), 1);
    assert_int_equal(counter(out, "Total Errors"), 8);
    assert_int_equal(counter(out, "Duplicate Datapoints Resolved"), 0);
    assert_int_equal(counter(out, "Invalid Rows Deleted"), 0);
    /* the compacted column of host=b is rewritten (as OpenTSDB recompacts it),
     * the float and the 8-byte integer re-encoded in place */
    assert_int_equal(counter(out, "Out of Order Compacted Columns Fixed"), 1);
    assert_int_equal(counter(out, "Improperly Encoded Floating Point Values Fixed"), 1);
    assert_int_equal(counter(out, "Datapoints Compressed with VLE"), 1);
    assert_int_equal(counter(out, "Total Errors Fixed"), 2);
    free(out);

    const char *fix[] = {"fsck", g_flag, "--full-scan", "--fix-all", NULL};
    assert_int_equal(tu_run_octsdb(&out, fix), 1);
    assert_int_equal(counter(out, "Invalid Rows Deleted"), 1);
    assert_int_equal(counter(out, "Duplicate Datapoints Resolved"), 1);
    assert_int_equal(counter(out, "Orphaned UID Rows Deleted"), 1);
    assert_int_equal(counter(out, "Unknown Objects Deleted"), 1);
    assert_int_equal(counter(out, "Unparseable Datapoint Values Deleted"), 1);
    assert_int_equal(counter(out, "Unparseable Block Cells Deleted"), 1);
    /* already repaired by the --fix run */
    assert_int_equal(counter(out, "Out of Order Compacted Columns"), 0);
    assert_int_equal(counter(out, "Improperly Encoded Floating Point Values"), 0);
    assert_int_equal(counter(out, "Datapoints Qualified for VLE "), 0);
    assert_int_equal(counter(out, "Total Errors"), 6);
    assert_int_equal(counter(out, "Total Errors Fixed"), 6);
    free(out);

    assert_int_equal(tu_run_octsdb(&out, full), 0);
    assert_int_equal(counter(out, "Rows Processed"), 2);
    assert_int_equal(counter(out, "Valid Datapoints"), 7);
    assert_int_equal(counter(out, "Total Errors"), 0);
    free(out);

    /* the oldest duplicate (the OpenTSDB cell, which reads also return) was
     * kept; the float was rewritten; every other point is untouched */
    const char *scan[] = {"scan",       g_flag, "--import", "1356998400",
                          "1356999000", "sum",  "f.m",      NULL};
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    assert_string_equal(out, "f.m 1356998400 10 host=a\n"
                             "f.m 1356998460 99 host=a\n"
                             "f.m 1356998500 42.0 host=a\n"
                             "f.m 1356998600 5 host=a\n"
                             "f.m 1356998400 5 host=b\n"
                             "f.m 1356998425 42 host=b\n"
                             "f.m 1356998485 300 host=b\n");
    free(out);

    /* usage */
    const char *none[] = {"fsck", g_flag, NULL};
    assert_int_equal(tu_run_octsdb(&out, none), 2);
    free(out);
}

/* A block in the writer form (docs/format/block.md: TSDs sharing a store
 * write open hours so) is a block to fsck: counted, read, never deleted as
 * an unknown object. */
static void writer_form_blocks_are_blocks(void **state)
{
    (void)state;
    char in[4300];
    snprintf(in, sizeof in, "%s/w.txt", g_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("w.m 1356998400 10 host=a\n", f);
    fclose(f);
    char *out;
    const char *imp[] = {"import", g_flag, "--auto-metric", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);
    /* w.m's row of host=a: the row key from the UIDs import gave (metric
     * w.m = 2, host = 1, a = 1), and a writer-form block (writer 7, seq 3)
     * with two more points */
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", g_dir, &eb), 0);
    tsdb_t *db;
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    uint8_t row[16], q[CODEC_BLOCK_WQUAL_LEN], val[64];
    assert_int_equal(tu_unhex("000002 50E22700 000001 000001", row, sizeof row), 13);
    codec_block_writer_qualifier(7, 3, q);
    codec_point_t pts[2] = {{1356998430000, {.i = 11}, 0}, {1356998460000, {.i = 12}, 0}};
    ssize_t vl = codec_block_encode(pts, 2, val, sizeof val, CODEC_BLOCK_ENC_AUTO, NULL);
    assert_true(vl > 0);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(row, 7),
                     {oct_slice(row, 13), oct_slice_str("t"), oct_slice(q, sizeof q),
                      oct_slice(val, (size_t)vl)}};
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, &op, 1, STORE_SYNC, &eb), 0);
    tsdb_close(db);
    oct_config_free(cfg);

    const char *chk[] = {"fsck", g_flag, "1356998400", "1356999000", "sum", "w.m", NULL};
    const char *fix[] = {"fsck",       g_flag, "--fix-all", "1356998400",
                         "1356999000", "sum",  "w.m",       NULL};
    for (int run = 0; run < 2; run++) {
        assert_int_equal(tu_run_octsdb(&out, run ? fix : chk), 0);
        assert_int_equal(counter(out, "Rows Processed"), 1);
        assert_int_equal(counter(out, "Block Cells"), 2);
        assert_int_equal(counter(out, "Unknown Objects"), 0);
        assert_int_equal(counter(out, "Valid Datapoints"), 3);
        assert_int_equal(counter(out, "Total Errors"), 0);
        free(out);
    }
    const char *scan[] = {"scan",       g_flag, "--import", "1356998400",
                          "1356999000", "sum",  "w.m",      NULL};
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    assert_string_equal(out, "w.m 1356998400 10 host=a\n"
                             "w.m 1356998430 11 host=a\n"
                             "w.m 1356998460 12 host=a\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_counts_fixes_then_clean),
        cmocka_unit_test(writer_form_blocks_are_blocks),
    };
    return cmocka_run_group_tests(tests, cli_fixture_setup, cli_fixture_teardown);
}
