/* test_cli_progress.c -- the progress line of `octsdb import`, `fsck` and
 * `scan`: the real binary on a pseudo-terminal (forkpty) draws it on
 * stderr; import's percentages grow to 100.0% of the file's size (computed
 * here) with the point count the test wrote, and an ETA; with --quiet, or
 * when stderr is a pipe, there is none; reading stdin (no total) it shows
 * count and rate only, as fsck and scan do (rows, counted here by hand);
 * copy draws cells and rate; compact and uid fsck, which report nothing
 * until they end, a spinner with the elapsed time, also through a TSD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "cli_fixture.h"

#define N_POINTS 120000

static char g_input[4300];
static long g_input_size;

static void exec_octsdb(const char *const *args, const char *stdin_path, const char *stdout_path)
{
    const char *bin = getenv("OCTSDB_BIN");
    if (!bin) _exit(127);
    char *av[16];
    int n = 0;
    av[n++] = (char *)bin;
    for (int i = 0; args[i] && n < 15; i++)
        av[n++] = (char *)args[i];
    av[n] = NULL;
    if (stdin_path) {
        int fd = open(stdin_path, O_RDONLY);
        dup2(fd, 0);
        close(fd);
    }
    if (stdout_path) {
        int fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        close(fd);
    }
    execv(bin, av);
    _exit(127);
}

/* Reads fd to EOF (or EIO, a pty's end) into a malloc'd string. */
static char *read_all(int fd)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    return buf;
}

/* Runs octsdb with stderr (and stdout, unless stdout_path names a file
 * for it) on a pseudo-terminal; *out gets what the terminal got. Returns
 * the exit status. */
static int run_pty(const char *const *args, const char *stdin_path, const char *stdout_path,
                   char **out)
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    assert_true(pid >= 0);
    if (pid == 0) exec_octsdb(args, stdin_path, stdout_path);
    *out = read_all(master);
    close(master);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs octsdb with stdout and stderr on two pipes. */
static int run_piped(const char *const *args, char **out, char **err)
{
    int po[2], pe[2];
    assert_int_equal(pipe(po), 0);
    assert_int_equal(pipe(pe), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        exec_octsdb(args, NULL, NULL);
    }
    close(po[1]);
    close(pe[1]);
    *err = read_all(pe[0]); /* small: the command writes little to either */
    *out = read_all(po[0]);
    close(po[0]);
    close(pe[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
    cli_fixture_setup(state);
    snprintf(g_input, sizeof g_input, "%s.in", g_dir);
    FILE *f = fopen(g_input, "w");
    if (!f) return -1;
    g_input_size = 0;
    for (int i = 0; i < N_POINTS; i++)
        g_input_size += fprintf(f, "prog.m %d %d host=h%d\n", 1356998400 + i, i, i % 7);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    unlink(g_input);
    return cli_fixture_teardown(state);
}

/* The progress lines: the text between \r's that holds a rate ("/s," or
 * "/s" at the line's end; the pty turns \n into \r\n, so the summary is
 * split off too). */
static int progress_lines(char *out, char **lines, int cap)
{
    int n = 0;
    for (char *s = strtok(out, "\r\n"); s; s = strtok(NULL, "\r\n"))
        if (strstr(s, "/s,") || strstr(s, "/s\033")) {
            if (n < cap) lines[n] = s;
            n++;
        }
    return n;
}

static void import_on_a_terminal(void **state)
{
    (void)state;
    char *out;
    const char *args[] = {"import", g_flag, "--auto-metric", g_input, NULL};
    assert_int_equal(run_pty(args, NULL, NULL, &out), 0);
    char want_summary[64];
    snprintf(want_summary, sizeof want_summary, "Imported %d data points", N_POINTS);
    if (!strstr(out, want_summary)) fail_msg("no summary in: %s", out);
    char *lines[1000];
    int n = progress_lines(out, lines, 1000);
    assert_true(n >= 1 && n <= 1000);
    /* percentages never go back; the last line is the whole file */
    double last_pct = -1;
    for (int i = 0; i < n; i++) {
        double pct;
        char eta[16];
        if (sscanf(lines[i], "%lf%%", &pct) != 1) fail_msg("no percentage: <%s>", lines[i]);
        assert_true(pct >= last_pct && pct <= 100.0);
        last_pct = pct;
        const char *e = strstr(lines[i], ", ETA ");
        if (!e || sscanf(e, ", ETA %15[0-9:]", eta) != 1) fail_msg("no ETA: <%s>", lines[i]);
    }
    /* the file is a few MiB (3.7 with these lines): shown in MiB */
    assert_true(g_input_size > (1 << 20) && g_input_size < (1 << 30));
    char want_last[128];
    snprintf(want_last, sizeof want_last, "100.0%% %.1f MiB/%.1f MiB, %d points, ",
             g_input_size / 1048576.0, g_input_size / 1048576.0, N_POINTS);
    if (strncmp(lines[n - 1], want_last, strlen(want_last)))
        fail_msg("last progress line <%s>, expected it to start <%s>", lines[n - 1], want_last);
    assert_non_null(strstr(lines[n - 1], ", ETA 0:00:00"));
    free(out);
}

static void import_quiet_or_piped_draws_nothing(void **state)
{
    (void)state;
    char *out, *err;
    /* --quiet on a terminal: the summary only */
    const char *quiet[] = {"import", g_flag, "--auto-metric", "--quiet", g_input, NULL};
    assert_int_equal(run_pty(quiet, NULL, NULL, &out), 0);
    if (strchr(out, '%') || strstr(out, "points/s,")) fail_msg("--quiet drew progress: %s", out);
    assert_non_null(strstr(out, "Imported"));
    free(out);
    /* stderr a pipe: nothing at all on it */
    const char *args[] = {"import", g_flag, "--auto-metric", g_input, NULL};
    assert_int_equal(run_piped(args, &out, &err), 0);
    assert_string_equal(err, "");
    char want[64];
    snprintf(want, sizeof want, "Imported %d data points in ", N_POINTS);
    assert_memory_equal(out, want, strlen(want));
    free(out);
    free(err);
}

static void import_from_stdin_has_no_total(void **state)
{
    (void)state;
    char *out;
    const char *args[] = {"import", g_flag, "--auto-metric", "-", NULL};
    assert_int_equal(run_pty(args, g_input, NULL, &out), 0);
    char *lines[1000];
    int n = progress_lines(out, lines, 1000);
    assert_true(n >= 1 && n <= 1000);
    char want[64];
    snprintf(want, sizeof want, "%d points, ", N_POINTS);
    if (strncmp(lines[n - 1], want, strlen(want)))
        fail_msg("last progress line <%s>, expected <%s...>", lines[n - 1], want);
    for (int i = 0; i < n; i++)
        if (strchr(lines[i], '%') || strstr(lines[i], "ETA"))
            fail_msg("a percentage or ETA without a total: <%s>", lines[i]);
    free(out);
}

/* The file's contents, malloc'd. */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    char *s = read_all(fd);
    close(fd);
    return s;
}

/* The rows the import made: 7 series (host=h0..h6, every 7 s) over the
 * hours of [1356998400, 1356998400 + N_POINTS) s: 120000 s reach into the
 * 34th hour, and each hour holds every series. */
#define N_ROWS (7 * 34)

/* fsck and scan: no total, so the count of rows and their rate, no ETA;
 * drawn only when their output is not the terminal. Runs after the import
 * tests (cmocka runs them in order) on the same data dir. */
static void fsck_and_scan_on_a_terminal(void **state)
{
    (void)state;
    char *out, outfile[4400], want[64];
    snprintf(outfile, sizeof outfile, "%s.out", g_dir);
    snprintf(want, sizeof want, "%d rows, ", N_ROWS);
    const char *fsck[] = {"fsck", g_flag, "--full-scan", NULL};
    const char *scan[] = {"scan", g_flag, "--import", "2013/01/01", "sum", "prog.m", NULL};
    const char *const *cmds[] = {fsck, scan};
    for (int c = 0; c < 2; c++) {
        assert_int_equal(run_pty(cmds[c], NULL, outfile, &out), 0);
        char *lines[1000];
        int n = progress_lines(out, lines, 1000);
        if (n < 1 || n > 1000) fail_msg("%s: no progress in <%s>", cmds[c][0], out);
        if (strncmp(lines[n - 1], want, strlen(want)))
            fail_msg("%s: last progress line <%s>, expected <%s...>", cmds[c][0], lines[n - 1],
                     want);
        if (strchr(out, '%') || strstr(out, "ETA")) fail_msg("%s: %s", cmds[c][0], out);
        free(out);
        char *file = slurp(outfile);
        if (c == 0) {
            char rows[64];
            snprintf(rows, sizeof rows, "Rows Processed: %d\n", N_ROWS);
            if (!strstr(file, rows)) fail_msg("fsck printed <%s>", file);
        } else {
            size_t nl = 0;
            for (const char *p = file; *p; p++)
                nl += *p == '\n';
            assert_int_equal(nl, N_POINTS);
        }
        free(file);
    }
    /* stdout on the terminal too: the report alone */
    assert_int_equal(run_pty(fsck, NULL, NULL, &out), 0);
    if (strstr(out, "rows/s")) fail_msg("fsck drew progress over its report: %s", out);
    assert_non_null(strstr(out, "Rows Processed"));
    free(out);
    unlink(outfile);
}

/* copy: cells and rate, the last line the whole copy (the count it
 * prints), and the data table's N_ROWS block cells in the final check. */
static void copy_on_a_terminal(void **state)
{
    (void)state;
    char *out, outfile[4400], from[4500], to[4500], copy_dir[4400];
    snprintf(outfile, sizeof outfile, "%s.out", g_dir);
    snprintf(copy_dir, sizeof copy_dir, "%s.copy", g_dir);
    snprintf(from, sizeof from, "--from=%s", g_dir);
    snprintf(to, sizeof to, "--to=%s", copy_dir);
    const char *copy[] = {"copy", from, to, "--batch=50", NULL};
    assert_int_equal(run_pty(copy, NULL, outfile, &out), 0);
    char *file = slurp(outfile), want[128];
    snprintf(want, sizeof want, "tsdb: %d cells (source %d)\n", N_ROWS, N_ROWS);
    if (!strstr(file, want)) fail_msg("copy printed <%s>", file);
    unsigned long parts, cells;
    if (sscanf(file, "Copied %lu partitions, %lu cells", &parts, &cells) != 2)
        fail_msg("copy printed <%s>", file);
    char *lines[1000];
    int n = progress_lines(out, lines, 1000);
    if (n < 1 || n > 1000) fail_msg("copy: no progress in <%s>", out);
    snprintf(want, sizeof want, "%lu cells, ", cells);
    if (strncmp(lines[n - 1], want, strlen(want)))
        fail_msg("copy: last progress line <%s>, expected <%s...>", lines[n - 1], want);
    free(out);
    free(file);
    unlink(outfile);
    tu_rmrf(copy_dir);
}

/* The spinner's lines: "<what>: working <c>, H:MM:SS elapsed" drawn at
 * least once, and the last thing on the line "<what>: done in H:MM:SS". */
static void check_spinner(const char *out, const char *what)
{
    char want[64];
    snprintf(want, sizeof want, "%s: working ", what);
    const char *w = strstr(out, want);
    if (!w) fail_msg("%s: no spinner in <%s>", what, out);
    unsigned h, m, sec;
    char c;
    if (sscanf(w + strlen(want), "%c, %u:%u:%u elapsed", &c, &h, &m, &sec) != 4 ||
        !strchr("|/-\\", c))
        fail_msg("%s: spinner line <%.60s>", what, w);
    snprintf(want, sizeof want, "%s: done in ", what);
    const char *d = strstr(out, want);
    if (!d || d < w) fail_msg("%s: no final line in <%s>", what, out);
    if (sscanf(d + strlen(want), "%u:%u:%u", &h, &m, &sec) != 3) fail_msg("%s: <%.60s>", what, d);
    assert_true(h == 0 && m < 5); /* a data dir of a few MiB */
}

/* The report of `uid fsck` on the data the import made: one metric, one
 * tag key, 7 tag values, a forward and a reverse cell each, and the three
 * kinds' counters: 2 * 9 + 3 cells. */
static const char want_ufsck[] = "21 KVs analyzed\nNo errors found.\n";

/* compact and uid fsck report nothing until they end: a spinner with the
 * elapsed time on a terminal, the same report on stdout, none piped or
 * with --quiet; and the same through a running TSD that holds the dir. */
static void compact_and_uid_fsck_spin(void **state)
{
    (void)state;
    char *out, *err, outfile[4400];
    snprintf(outfile, sizeof outfile, "%s.out", g_dir);
    const char *compact[] = {"compact", g_flag, NULL, NULL};
    const char *ufsck[] = {"uid", g_flag, "fsck", NULL, NULL};
    const char *const *cmds[] = {compact, ufsck};
    const char *whats[] = {"compact", "uid fsck"};
    for (int live = 0; live < 2; live++) {
        tu_tsd_t tsd = {0};
        if (live) {
            tsd.dir = strdup(g_dir);
            assert_int_equal(tu_tsd_start(&tsd, NULL), 0);
        }
        for (int c = 0; c < 2; c++) {
            assert_int_equal(run_pty(cmds[c], NULL, outfile, &out), 0);
            check_spinner(out, whats[c]);
            if (live && !strstr(out, "working through it")) fail_msg("not live: <%s>", out);
            free(out);
            char *file = slurp(outfile);
            if (c == 0) {
                unsigned long long before, after;
                if (sscanf(file, "Table bytes before: %llu\nTable bytes after: %llu\n", &before,
                           &after) != 2 ||
                    before == 0 || after == 0)
                    fail_msg("compact printed <%s>", file);
            } else {
                assert_string_equal(file, want_ufsck);
            }
            free(file);
        }
        /* --quiet on the terminal, and stderr a pipe: no spinner */
        compact[2] = ufsck[3] = "--quiet";
        for (int c = 0; c < 2; c++) {
            assert_int_equal(run_pty(cmds[c], NULL, outfile, &out), 0);
            if (strstr(out, ": working ") || strstr(out, "done in")) fail_msg("--quiet: <%s>", out);
            free(out);
        }
        compact[2] = ufsck[3] = NULL;
        for (int c = 0; c < 2; c++) {
            assert_int_equal(run_piped(cmds[c], &out, &err), 0);
            if (live)
                assert_non_null(strstr(err, "working through it"));
            else
                assert_string_equal(err, "");
            if (strstr(err, ": working ") || strstr(err, "done in")) fail_msg("piped: <%s>", err);
            if (c == 1) assert_string_equal(out, want_ufsck);
            free(out);
            free(err);
        }
        if (live) {
            assert_int_equal(tu_tsd_stop(&tsd), 0);
            free(tsd.dir);
        }
    }
    unlink(outfile);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(import_on_a_terminal),
        cmocka_unit_test(import_quiet_or_piped_draws_nothing),
        cmocka_unit_test(import_from_stdin_has_no_total),
        cmocka_unit_test(fsck_and_scan_on_a_terminal),
        cmocka_unit_test(copy_on_a_terminal),
        cmocka_unit_test(compact_and_uid_fsck_spin),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
