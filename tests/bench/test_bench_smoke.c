/* test_bench_smoke.c -- the peer benchmark harness in smoke mode, so it never rots.
 *
 * Runs `bench_peers --smoke --out FILE` (built next to $OCTSDB_BIN): a tiny
 * data set, octsdb alone, no peers, a few seconds. The harness itself fails
 * when a system does not report every point stored; this test asserts that
 * it succeeded and that the Markdown table it wrote holds every figure the
 * benchmark issue asks for, each a positive number in the octsdb column.
 * Nothing is asserted about speed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

/* The rows the issue asks for (ingest per mode, CPU, memory, disk after a
 * flush and after compaction, for every series and for the gauge and the
 * integer series apart, series creation, each query's median and p99 and,
 * for the queries that read points, points read per second), as the
 * harness labels them. */
static const char *const rows[] = {
    "ingest telnet, points/s",
    "ingest json50, points/s",
    "ingest json500, points/s",
    "ingest json50gz, points/s",
    "ingest json500gz, points/s",
    "CPU s per million points, telnet",
    "peak RSS MB, telnet",
    "RSS bytes per active series",
    "disk bytes per point after flush",
    "disk bytes per point after compaction (octsdb compact)",
    "disk bytes per point, gauge series only (random walks, 1/2/4 decimals), after flush",
    "disk bytes per point, gauge series only (random walks, 1/2/4 decimals), after compaction",
    "disk bytes per point, integer series only (integer gauges, counters, mostly-constant), "
    "after flush",
    "disk bytes per point, integer series only (integer gauges, counters, mostly-constant), "
    "after compaction",
    "new series/s",
    "query one series raw, median ms",
    "query one series raw, p99 ms",
    "query one series raw, points read/s",
    "query sum 1m-avg, every series, median ms",
    "query sum 1m-avg, every series, p99 ms",
    "query sum 1m-avg, every series, points read/s",
    "query sum:rate 1m-avg, every series, median ms",
    "query sum:rate 1m-avg, every series, p99 ms",
    "query sum:rate 1m-avg, every series, points read/s",
    "query {host=*} group-by 1m-avg, median ms",
    "query {host=*} group-by 1m-avg, p99 ms",
    "query {host=*} group-by 1m-avg, points read/s",
    "query max 10m-max by datacenter, median ms",
    "query max 10m-max by datacenter, p99 ms",
    "query max 10m-max by datacenter, points read/s",
    "query /api/search/lookup, median ms",
    "query /api/search/lookup, p99 ms",
    "query /api/suggest, median ms",
    "query /api/suggest, p99 ms",
};

/* The bar of issue 11 in the form (figure | octsdb | VM | ratio |
 * bar | met): the main set's rows (100 series in smoke mode) and the
 * largest curve point's (200 series). */
static const char *const bar_rows[] = {
    "100 series: telnet ingest, points/s",
    "100 series: /api/put gzip'd 50-point batches, points/s",
    "100 series: /api/put 50-point batches, points/s",
    "100 series: /api/put 500-point batches, points/s",
    "100 series: /api/put gzip'd 500-point batches, points/s",
    "100 series: query one series raw, median ms",
    "100 series: query sum 1m-avg over every series, median ms",
    "100 series: query {host=*} group-by 1m-avg, median ms",
    "100 series: query max 10m-max by datacenter, median ms",
    "100 series: query sum:rate 1m-avg over every series, median ms",
    "200 series: RSS bytes per active series",
    "200 series: disk bytes per series after a clean stop",
    "200 series: new-series ingest, points/s",
    "200 series: start-up over the data dir until a one-series query answers, s",
    "200 series: start-up, CPU s of the process",
    "200 series: /api/search/lookup",
    "200 series: /api/suggest",
    "200 series: query one series raw, median ms",
    "200 series: query sum 1m-avg over every series, median ms",
    "200 series: query {host=*} group-by 1m-avg, median ms",
    "200 series: query max 10m-max by datacenter, median ms",
    "200 series: query sum:rate 1m-avg over every series, median ms",
};

/* Every row of the table after `heading` has a positive figure in its
 * first cell; returns the number of rows. */
static size_t check_table(const char *md, const char *heading)
{
    const char *h = strstr(md, heading);
    if (!h) fail_msg("table missing: %s", heading);
    const char *sep = strstr(h, "|---|");
    assert_non_null(sep);
    size_t n_rows = 0;
    for (const char *line = strchr(sep, '\n') + 1; !strncmp(line, "| ", 2); n_rows++) {
        const char *cellp = strstr(line + 2, "| ");
        const char *eol = strchr(line, '\n');
        assert_non_null(eol);
        assert_true(cellp && cellp < eol);
        char *end;
        double v = strtod(cellp + 2, &end);
        if (end == cellp + 2 || !(v > 0))
            fail_msg("no figure in row: %.*s", (int)(eol - line), line);
        line = eol + 1;
    }
    return n_rows;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

static void test_smoke_run_has_every_figure(void **state)
{
    (void)state;
    const char *octsdb = getenv("OCTSDB_BIN");
    assert_non_null(octsdb);
    char bench[4096];
    const char *slash = strrchr(octsdb, '/');
    snprintf(bench, sizeof bench, "%.*s/bench_peers", slash ? (int)(slash - octsdb) : 1,
             slash ? octsdb : ".");
    struct stat sb;
    if (stat(bench, &sb) != 0) fail_msg("bench_peers not built next to %s", octsdb);

    char *dir = tu_tempdir();
    char out[4200], log[4200];
    snprintf(out, sizeof out, "%s/result.md", dir);
    snprintf(log, sizeof log, "%s/stdout.txt", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        (void)f;
        execl(bench, bench, "--smoke", "--octsdb", octsdb, "--out", out, (char *)NULL);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);

    char *md = read_all(out);
    assert_non_null(md);
    assert_non_null(strstr(md, "- machine: "));
    assert_non_null(strstr(md, " cores, "));
    /* smoke mode runs octsdb alone: the header has exactly one system column */
    assert_non_null(strstr(md, "| figure | octsdb | \n"));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char key[256];
        snprintf(key, sizeof key, "| %s", rows[i]);
        const char *line = strstr(md, key);
        if (!line) fail_msg("row missing: %s", rows[i]);
        const char *cellp = strstr(line + 2, "| ");
        assert_non_null(cellp);
        char *end;
        double v = strtod(cellp + 2, &end);
        if (end == cellp + 2 || !(v > 0)) fail_msg("no figure for %s: %.80s", rows[i], line);
    }
    /* and no row of the table, listed above or not, lacks its figure */
    assert_int_equal(check_table(md, "\n## Every figure "), sizeof rows / sizeof rows[0]);
    /* the bar table: every row in order, octsdb's figure in each, and the
     * absolute bar (start-up under 5 s) judged without a peer; the ratio
     * bars say n/a, as no peer ran */
    assert_int_equal(check_table(md, "\n## The bar (issue 11)\n"),
                     sizeof bar_rows / sizeof bar_rows[0]);
    const char *at = strstr(md, "\n## The bar (issue 11)\n");
    for (size_t i = 0; i < sizeof bar_rows / sizeof bar_rows[0]; i++) {
        char key[256];
        snprintf(key, sizeof key, "\n| %s", bar_rows[i]);
        const char *line = strstr(at, key);
        if (!line) fail_msg("bar row missing or out of order: %s", bar_rows[i]);
        at = line + 1;
    }
    const char *su = strstr(md, "| 200 series: start-up over the data dir");
    assert_non_null(su);
    const char *su_eol = strchr(su, '\n');
    double su_s = strtod(strstr(su + 2, "| ") + 2, NULL);
    const char *verdict =
        su_s < 5 ? "| octsdb < 5 s | met |\n" : "| octsdb < 5 s | **not met** |\n";
    const char *vp = strstr(su, verdict);
    if (!vp || vp > su_eol) fail_msg("start-up verdict: %.*s", (int)(su_eol - su), su);
    assert_non_null(strstr(md, "| ratio ≥ 2.5 | n/a |\n"));
    /* the notes that say how the new figures are taken, and why a peer's is n/a */
    assert_non_null(strstr(md, "\nNotes:\n- points read/s: "));
    assert_non_null(strstr(md, "\n- after compaction: "));
    assert_non_null(strstr(md, "\n- by kind: "));
    /* the cost curve (--smoke: one point, 200 series, octsdb alone): its row
     * has octsdb's new-series and overall points/s, RSS and disk per series,
     * start-up seconds and CPU seconds, and its seven query medians */
    assert_non_null(strstr(md, "\n## Cost curve\n"));
    static const char *const curve_rows[] = {"\n| 200 | "};
    for (size_t i = 0; i < sizeof curve_rows / sizeof curve_rows[0]; i++) {
        const char *line = strstr(md, curve_rows[i]);
        if (!line) fail_msg("cost curve row missing: %s", curve_rows[i] + 1);
        /* cells after the series count: per figure octsdb | VM | ratio */
        const char *p = line + strlen(curve_rows[i]);
        for (int fig = 0; fig < 13; fig++) {
            char *end;
            double v = strtod(p, &end);
            if (end == p || !(v > 0))
                fail_msg("cost curve: figure %d missing: %.120s", fig, line + 1);
            for (int c = 0; c < 3; c++) { /* to the next figure's octsdb cell */
                p = strstr(p, "| ");
                assert_non_null(p);
                p += 2;
            }
        }
    }
    /* the same table went to stdout */
    char *so = read_all(log);
    assert_non_null(so);
    assert_non_null(strstr(so, "| ingest telnet, points/s"));
    free(so);
    free(md);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smoke_run_has_every_figure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
