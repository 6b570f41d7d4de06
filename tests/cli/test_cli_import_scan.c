/* test_cli_import_scan.c -- the real `octsdb import` and `octsdb scan`:
 * a generated file (plain and gzip) imported and dumped back with
 * `scan --import` gives the same lines; that dump imported into an empty
 * data dir gives the same data and the same query results; the default scan
 * output of OpenTSDB cells written byte by byte (docs/format/cells.md section 8) and of an
 * octsdb block row, as OpenTSDB's DumpSeries prints them; import errors with
 * and without --skip-errors; scan --delete; --help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/config.h"
#include "store/store.h"
#include "cli_fixture.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

static char *path_in(const char *name)
{
    size_t n = strlen(g_dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", g_dir, name);
    return p;
}

static char *dd_flag(const char *dir)
{
    size_t n = strlen(dir) + 16;
    char *p = malloc(n);
    snprintf(p, n, "--datadir=%s", dir);
    return p;
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(s, f);
    fclose(f);
}

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of s sorted, joined again with '\n'. */
static char *sorted_lines(const char *s)
{
    char *copy = strdup(s);
    size_t n = 0, cap = 64;
    char **v = malloc(cap * sizeof *v);
    for (char *save, *t = strtok_r(copy, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = t;
    }
    qsort(v, n, sizeof *v, line_cmp);
    size_t len = strlen(s) + 2;
    char *out = malloc(len);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strcat(out, v[i]);
        strcat(out, "\n");
    }
    free(v);
    free(copy);
    return out;
}

/* 2 metrics x 5 hosts x 40 points spanning two row hours: integers (small,
 * negative, beyond 32 bits), floats with an exact short decimal form, some
 * millisecond timestamps. Tags in name order (dc < host): the form scan
 * --import prints. */
static char *gen_lines(void)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    for (int m = 0; m < 2; m++)
        for (int h = 0; h < 5; h++)
            for (int k = 0; k < 40; k++) {
                long long ts = 1356998400LL + h * 400 + k * 97;
                char tsb[32], vb[32];
                if (k % 5 == 4)
                    snprintf(tsb, sizeof tsb, "%lld", ts * 1000 + 123);
                else
                    snprintf(tsb, sizeof tsb, "%lld", ts);
                switch (k % 4) {
                case 0:
                    snprintf(vb, sizeof vb, "%d", k * (h + 1) - 50);
                    break;
                case 1:
                    snprintf(vb, sizeof vb, "%lld", 5000000000LL + k);
                    break;
                case 2:
                    snprintf(vb, sizeof vb, "%d.5", k + m);
                    break;
                default:
                    snprintf(vb, sizeof vb, "-%d.25", k);
                    break;
                }
                len += (size_t)snprintf(s + len, cap - len, "t.m%d %s %s dc=d%d host=h%d\n", m, tsb,
                                        vb, h % 2, h);
            }
    return s;
}

static void import_scan_roundtrip_plain_gzip_and_empty_dir(void **state)
{
    (void)state;
    char *lines = gen_lines();
    char *expect = sorted_lines(lines);
    char *plain = path_in("in.txt"), *gzp = path_in("in.dat"); /* gzip found by magic */
    write_file(plain, lines);
    gzFile gz = gzopen(gzp, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, lines, (unsigned)strlen(lines)), (int)strlen(lines));
    gzclose(gz);

    char *da = path_in("a"), *db = path_in("b"), *dc = path_in("c");
    char *fa = dd_flag(da), *fb = dd_flag(db), *fc = dd_flag(dc);
    char *out;
    const char *imp_a[] = {"import", fa, "--auto-metric", plain, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp_a), 0);
    assert_non_null(strstr(out, "Imported 400 data points in "));
    assert_non_null(strstr(out, ", 0 errors\n"));
    free(out);
    const char *imp_b[] = {"import", fb, "--auto-metric", gzp, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp_b), 0);
    assert_non_null(strstr(out, "Imported 400 data points in "));
    free(out);

    /* scan --import of both metrics over the whole range gives the input back */
    const char *scan_a[] = {
        "scan", fa,     "--import", "2012/12/31-00:00", "2013/01/02-00:00", "sum", "t.m0",
        "sum",  "t.m1", NULL};
    char *sa;
    assert_int_equal(tu_run_octsdb(&sa, scan_a), 0);
    char *sa_sorted = sorted_lines(sa);
    assert_string_equal(sa_sorted, expect);
    const char *scan_b[] = {"scan", fb,     "--import", "1356990000", "1357010000",
                            "sum",  "t.m0", "sum",      "t.m1",       NULL};
    char *sb;
    assert_int_equal(tu_run_octsdb(&sb, scan_b), 0);
    char *sb_sorted = sorted_lines(sb);
    assert_string_equal(sb_sorted, expect);

    /* a tag filter selects rows */
    const char *scan_h3[] = {"scan", fa,     "--import", "1356990000", "1357010000",
                             "sum",  "t.m1", "host=h3",  NULL};
    assert_int_equal(tu_run_octsdb(&out, scan_h3), 0);
    size_t nl = 0;
    for (const char *p = out; *p; p++)
        nl += *p == '\n';
    assert_int_equal(nl, 40);
    assert_non_null(strstr(out, "t.m1 1356999600 -50 dc=d1 host=h3\n"));
    assert_null(strstr(out, "host=h2"));
    free(out);

    /* the dump imported into an empty dir: same data, same query results */
    char *dump = path_in("dump.txt");
    write_file(dump, sa);
    const char *imp_c[] = {"import", fc, "--auto-metric", dump, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp_c), 0);
    free(out);
    const char *scan_c[] = {"scan", fc,     "--import", "1356990000", "1357010000",
                            "sum",  "t.m0", "sum",      "t.m1",       NULL};
    char *sc;
    assert_int_equal(tu_run_octsdb(&sc, scan_c), 0);
    char *sc_sorted = sorted_lines(sc);
    assert_string_equal(sc_sorted, expect);

    const char *qa[] = {"query", fa,       "1356990000", "1357010000", "none",
                        "t.m0",  "host=*", "sum",        "t.m1",       NULL};
    const char *qc[] = {"query", fc,       "1356990000", "1357010000", "none",
                        "t.m0",  "host=*", "sum",        "t.m1",       NULL};
    char *oa, *oc;
    assert_int_equal(tu_run_octsdb(&oa, qa), 0);
    assert_int_equal(tu_run_octsdb(&oc, qc), 0);
    char *oa_s = sorted_lines(oa), *oc_s = sorted_lines(oc);
    assert_true(strlen(oa_s) > 1000);
    assert_string_equal(oa_s, oc_s);
    /* one point checked by hand: h0's first point, value k*(h+1)-50 = -50 */
    assert_non_null(strstr(oa, "t.m0 1356998400000 -50 {dc=d0, host=h0}\n"));

    free(oa);
    free(oc);
    free(oa_s);
    free(oc_s);
    free(sa);
    free(sb);
    free(sc);
    free(sa_sorted);
    free(sb_sorted);
    free(sc_sorted);
    free(dump);
    free(da);
    free(db);
    free(dc);
    free(fa);
    free(fb);
    free(fc);
    free(plain);
    free(gzp);
    free(lines);
    free(expect);
}

/* Writes OpenTSDB cells (docs/format/cells.md section 8) into a fresh data dir directly. */
static void write_opentsdb_cells(const char *dir)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    tsdb_t *db;
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    uint64_t id;
    assert_int_equal(uid_get_or_create(tsdb_uids(db), CODEC_UID_METRIC,
                                       (const uint8_t *)"sys.cpu.user", 12, &id, NULL, &eb),
                     0);
    assert_int_equal(id, 1);
    assert_int_equal(uid_get_or_create(tsdb_uids(db), CODEC_UID_TAGK, (const uint8_t *)"host", 4,
                                       &id, NULL, &eb),
                     0);
    assert_int_equal(uid_get_or_create(tsdb_uids(db), CODEC_UID_TAGV, (const uint8_t *)"web01", 5,
                                       &id, NULL, &eb),
                     0);
    uint8_t k1[13], k2[13];
    tu_unhex("000001 50E22700 000001 000001", k1, sizeof k1);
    tu_unhex("000001 50E23510 000001 000001", k2, sizeof k2);
    uint8_t q_ann[3], q_s[2], q_c[6], v_c[4], q_f[2], v_f[8];
    tu_unhex("010019", q_ann, 3);
    tu_unhex("0190", q_s, 2);
    tu_unhex("F01888C0 0551", q_c, 6);
    tu_unhex("2A 012C 01", v_c, 4);
    tu_unhex("019F", q_f, 2);
    tu_unhex("3FB999999999999A", v_f, 8);
    const char *ann = "{\"x\":1}";
    store_op_t ops[4];
    memset(ops, 0, sizeof ops);
    for (int i = 0; i < 4; i++) {
        ops[i].kind = STORE_OP_PUT;
        ops[i].cell.family = oct_slice_str("t");
        ops[i].part = oct_slice(i < 3 ? k1 : k2, 7);
        ops[i].cell.row = oct_slice(i < 3 ? k1 : k2, 13);
    }
    ops[0].cell.qualifier = oct_slice(q_ann, 3);
    ops[0].cell.value = oct_slice(ann, strlen(ann));
    ops[1].cell.qualifier = oct_slice(q_s, 2);
    ops[1].cell.value = oct_slice("\x2A", 1);
    ops[2].cell.qualifier = oct_slice(q_c, 6);
    ops[2].cell.value = oct_slice(v_c, 4);
    ops[3].cell.qualifier = oct_slice(q_f, 2);
    ops[3].cell.value = oct_slice(v_f, 8);
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, ops, 4, STORE_SYNC, &eb), 0);
    tsdb_close(db);
    oct_config_free(cfg);
}

static void scan_prints_rows_and_cells_as_opentsdb(void **state)
{
    (void)state;
    char *dir = path_in("cells"), *flag = dd_flag(dir), *in = path_in("web02.txt");
    write_opentsdb_cells(dir);
    /* and an octsdb block row for host=web02 (tagv UID 2) */
    write_file(in, "sys.cpu.user 1356998430 7 host=web02\n"
                   "sys.cpu.user 1356998431500 -2.5 host=web02\n");
    char *out;
    const char *imp[] = {"import", flag, in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 0);
    free(out);

    const char *scan[] = {"scan",         flag, "2013/01/01-00:00", "2013/01/01-02:00", "sum",
                          "sys.cpu.user", NULL};
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    const char *row1 = "[0, 0, 1, 80, -30, 39, 0, 0, 0, 1, 0, 0, 1] sys.cpu.user 1356998400 "
                       "(Tue Jan 01 00:00:00 UTC 2013) {host=web01}\n"
                       "  [1, 0, 25]\t[123, 34, 120, 34, 58, 49, 125]\t25\t{\"x\":1}\t1356998425\t"
                       "(Tue Jan 01 00:00:25 UTC 2013)\n"
                       "  [1, -112]\t[42]\t25\tl\t1356998425\t(Tue Jan 01 00:00:25 UTC 2013)\n"
                       "  [-16, 24, -120, -64, 5, 81]\t[42, 1, 44, 1] = 2 values:\n"
                       "    [-16, 24, -120, -64]\t[42]\t25123\tl\t1356998425123\t"
                       "(Tue Jan 01 00:00:25 UTC 2013)\n"
                       "    [5, 81]\t[1, 44]\t85\tl\t1356998485\t(Tue Jan 01 00:01:25 UTC 2013)\n";
    const char *row2_head = "[0, 0, 1, 80, -30, 39, 0, 0, 0, 1, 0, 0, 2] sys.cpu.user "
                            "1356998400 (Tue Jan 01 00:00:00 UTC 2013) {host=web02}\n"
                            "  [79, 0, 0]\t[";
    /* block points: 7 at +30 s (1 byte int, qualifier 30<<4 = 01 E0);
     * -2.5 at +31500 ms as float32 C0 20 00 00, qualifier
     * F0000000 | 31500<<6 | 0xB = F0 1E C3 0B */
    const char *row2_tail = "] = 2 values:\n"
                            "    [1, -32]\t[7]\t30\tl\t1356998430\t(Tue Jan 01 00:00:30 UTC 2013)\n"
                            "    [-16, 30, -61, 11]\t[-64, 32, 0, 0]\t31500\tf\t1356998431500\t"
                            "(Tue Jan 01 00:00:31 UTC 2013)\n";
    const char *row3 = "[0, 0, 1, 80, -30, 53, 16, 0, 0, 1, 0, 0, 1] sys.cpu.user 1357002000 "
                       "(Tue Jan 01 01:00:00 UTC 2013) {host=web01}\n"
                       "  [1, -97]\t[63, -71, -103, -103, -103, -103, -103, -102]\t25\tf\t"
                       "1357002025\t(Tue Jan 01 01:00:25 UTC 2013)\n";
    assert_memory_equal(out, row1, strlen(row1));
    const char *p = out + strlen(row1);
    assert_memory_equal(p, row2_head, strlen(row2_head));
    p = strstr(p, "] = 2 values:\n");
    assert_non_null(p);
    assert_memory_equal(p, row2_tail, strlen(row2_tail));
    p += strlen(row2_tail);
    assert_string_equal(p, row3);
    free(out);

    const char *scan_imp[] = {
        "scan", flag,           "--import", "2013/01/01-00:00", "2013/01/01-02:00",
        "sum",  "sys.cpu.user", NULL};
    assert_int_equal(tu_run_octsdb(&out, scan_imp), 0);
    assert_string_equal(out, "sys.cpu.user 1356998425 42 host=web01\n"
                             "sys.cpu.user 1356998425123 42 host=web01\n"
                             "sys.cpu.user 1356998485 300 host=web01\n"
                             "sys.cpu.user 1356998430 7 host=web02\n"
                             "sys.cpu.user 1356998431500 -2.5 host=web02\n"
                             "sys.cpu.user 1357002025 0.1 host=web01\n");
    free(out);

    /* only the first hour, only web02 */
    const char *scan_w2[] = {"scan", flag,           "--import",   "1356998400", "1356999000",
                             "sum",  "sys.cpu.user", "host=web02", NULL};
    assert_int_equal(tu_run_octsdb(&out, scan_w2), 0);
    assert_string_equal(out, "sys.cpu.user 1356998430 7 host=web02\n"
                             "sys.cpu.user 1356998431500 -2.5 host=web02\n");
    free(out);

    /* --delete prints the import lines and deletes the rows */
    const char *del[] = {"scan", flag,           "--delete",   "1356998400", "1356999000",
                         "sum",  "sys.cpu.user", "host=web02", NULL};
    assert_int_equal(tu_run_octsdb(&out, del), 0);
    assert_string_equal(out, "sys.cpu.user 1356998430 7 host=web02\n"
                             "sys.cpu.user 1356998431500 -2.5 host=web02\n");
    free(out);
    assert_int_equal(tu_run_octsdb(&out, scan_w2), 0);
    assert_string_equal(out, "");
    free(out);

    /* unknown metric: exit 1 */
    const char *bad[] = {"scan", flag, "1356998400", "sum", "no.such.metric", NULL};
    assert_int_equal(tu_run_octsdb(&out, bad), 1);
    free(out);
    free(in);
    free(dir);
    free(flag);
}

static void import_errors_stop_or_skip(void **state)
{
    (void)state;
    char *in = path_in("bad.txt"), *dir = path_in("errs"), *flag = dd_flag(dir);
    write_file(in, "e.m 1356998400 1 host=a\n"
                   "e.m 1356998401 1 host=a\n"
                   "e.m notatime 3 host=a\n"
                   "e.m 1356998403 x host=a\n"
                   "e.m 1356998404 4 host\n"
                   "\n"
                   "e.m 1356998405 5 host=a\n");
    char *out;
    /* without --skip-errors: stops at line 3, the two points before it stay */
    const char *imp[] = {"import", flag, "--auto-metric", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp), 1);
    assert_non_null(strstr(out, "Imported 2 data points in "));
    assert_non_null(strstr(out, ", 1 errors\n"));
    free(out);
    const char *scan[] = {"scan", flag, "--import", "1356998400", "1356999000", "sum", "e.m", NULL};
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    assert_string_equal(out, "e.m 1356998400 1 host=a\ne.m 1356998401 1 host=a\n");
    free(out);
    /* with it: three bad lines reported, the rest imported */
    const char *imp2[] = {"import", flag, "--skip-errors", in, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp2), 0);
    assert_non_null(strstr(out, "Imported 3 data points in "));
    assert_non_null(strstr(out, ", 3 errors\n"));
    free(out);
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    assert_string_equal(out, "e.m 1356998400 1 host=a\ne.m 1356998401 1 host=a\n"
                             "e.m 1356998405 5 host=a\n");
    free(out);
    /* an unknown metric without --auto-metric is a rejected point */
    char *in2 = path_in("newmetric.txt");
    write_file(in2, "other.m 1356998400 1 host=a\n");
    const char *imp3[] = {"import", flag, in2, NULL};
    assert_int_equal(tu_run_octsdb(&out, imp3), 1);
    assert_non_null(strstr(out, "Imported 0 data points"));
    free(out);
    /* stdin */
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "printf 'e.m 1356998406 6 host=a\\n' | '%s' import '%s' - >/dev/null",
             getenv("OCTSDB_BIN"), flag);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tu_run_octsdb(&out, scan), 0);
    assert_non_null(strstr(out, "e.m 1356998406 6 host=a\n"));
    free(out);
    /* a missing file */
    const char *imp4[] = {"import", flag, "/nonexistent/file", NULL};
    assert_int_equal(tu_run_octsdb(&out, imp4), 1);
    free(out);
    free(in2);
    free(in);
    free(dir);
    free(flag);
}

static void help_for_each_command(void **state)
{
    (void)state;
    const char *cmds[] = {"import", "scan", "fsck", "query"};
    const char *expect[] = {"usage: octsdb import", "usage: octsdb scan", "usage: octsdb fsck",
                            "usage: octsdb query"};
    for (int i = 0; i < 4; i++) {
        char *out;
        const char *argv[] = {cmds[i], "--help", NULL};
        assert_int_equal(tu_run_octsdb(&out, argv), 0);
        assert_non_null(strstr(out, expect[i]));
        assert_non_null(strstr(out, "--datadir"));
        free(out);
    }
    char *out;
    const char *top[] = {"--help", NULL};
    assert_int_equal(tu_run_octsdb(&out, top), 0);
    assert_non_null(strstr(out, "  import "));
    assert_non_null(strstr(out, "  scan "));
    assert_non_null(strstr(out, "  fsck "));
    assert_non_null(strstr(out, "  query "));
    free(out);
    /* usage errors */
    const char *noargs[] = {"scan", "1356998400", NULL};
    assert_int_equal(tu_run_octsdb(&out, noargs), 2);
    free(out);
    const char *nofile[] = {"import", NULL};
    assert_int_equal(tu_run_octsdb(&out, nofile), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(import_scan_roundtrip_plain_gzip_and_empty_dir),
        cmocka_unit_test(scan_prints_rows_and_cells_as_opentsdb),
        cmocka_unit_test(import_errors_stop_or_skip),
        cmocka_unit_test(help_for_each_command),
    };
    return cmocka_run_group_tests(tests, cli_fixture_setup, cli_fixture_teardown);
}
