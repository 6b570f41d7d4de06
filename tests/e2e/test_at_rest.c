/* test_at_rest.c -- a data dir after a clean stop is small without anyone
 * running `octsdb compact` (docs/format/store-keys.md, "At rest"): no
 * write-ahead log is left behind (neither RocksDB's nor octsdb's holds more
 * than a few bytes), and the whole directory is within 10 % of what
 * `octsdb compact` makes of it.
 *
 * The data: 1,000 series x 120 points (one a minute, two hours) over
 * telnet, values from a fixed generator, then SIGTERM. The figure compared
 * is the sum of the sizes of every file under the data dir, measured here
 * with stat(2), before and after `octsdb compact` on a copy. The points
 * read back after compaction are counted against what was sent, so the
 * comparison is between two complete copies of the data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define N_SERIES 1000
#define N_POINTS 120

/* Bytes of every regular file under path; the largest file whose name ends
 * in ".log" (RocksDB's write-ahead logs) or lies under "wal/" (octsdb's)
 * goes to *max_log. */
static uint64_t dir_bytes(const char *path, uint64_t *max_log, int in_wal)
{
    uint64_t sum = 0;
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4600];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            sum += dir_bytes(p, max_log, in_wal || !strcmp(e->d_name, "wal"));
        } else if (S_ISREG(st.st_mode)) {
            sum += (uint64_t)st.st_size;
            size_t n = strlen(e->d_name);
            int is_log = in_wal || (n > 4 && !strcmp(e->d_name + n - 4, ".log"));
            if (is_log && (uint64_t)st.st_size > *max_log) *max_log = (uint64_t)st.st_size;
        }
    }
    closedir(d);
    return sum;
}

static void at_rest_close_to_compacted(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    const char *args[] = {"--auto-metric", NULL};
    assert_int_equal(tu_tsd_start(&t, args), 0);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    char *buf = malloc(1 << 20);
    uint64_t x = 42;
    for (int p = 0; p < N_POINTS; p++) {
        size_t n = 0;
        for (int s = 0; s < N_SERIES; s++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            n += (size_t)snprintf(buf + n, 256, "put rest.cpu %d %u host=h%d dc=dc%d\n",
                                  1700000000 + 60 * p, (unsigned)(x >> 54), s, s % 4);
        }
        assert_int_equal(tu_send_all(fd, buf, n), 0);
    }
    const char *v = NULL;
    tu_telnet_tx(fd, &v, "%s", "");
    close(fd);
    free(buf);
    assert_int_equal(tu_tsd_stop(&t), 0);

    uint64_t max_log = 0;
    uint64_t rest = dir_bytes(t.dir, &max_log, 0);
    /* a clean stop leaves no log to replay: RocksDB's current log is empty
     * apart from its header, octsdb's is truncated */
    if (max_log > 4096)
        fail_msg("a %llu-byte log left after a clean stop", (unsigned long long)max_log);

    char *copy = tu_tempdir(), cmd[9400];
    snprintf(cmd, sizeof cmd, "cp -a '%s/.' '%s/'", t.dir, copy);
    assert_int_equal(system(cmd), 0);
    char dd[4600];
    snprintf(dd, sizeof dd, "--datadir=%s", copy);
    char *out = NULL;
    const char *cargv[] = {"compact", dd, NULL};
    assert_int_equal(tu_run_octsdb(&out, cargv), 0);
    free(out);
    max_log = 0;
    uint64_t compacted = dir_bytes(copy, &max_log, 0);

    /* the compacted copy holds every point */
    const char *qargv[] = {"query", dd, "1700000000", "1700007200", "sum", "rest.cpu", NULL};
    assert_int_equal(tu_run_octsdb(&out, qargv), 0);
    size_t lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    free(out);
    assert_int_equal(lines, N_POINTS);

    fprintf(stderr, "at rest %llu bytes, compacted %llu bytes (%.3fx)\n", (unsigned long long)rest,
            (unsigned long long)compacted, (double)rest / (double)compacted);
    if (rest * 100 > compacted * 110)
        fail_msg("at rest %llu bytes is more than 10%% over compacted %llu",
                 (unsigned long long)rest, (unsigned long long)compacted);
    tu_rmrf(copy);
    free(copy);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(at_rest_close_to_compacted)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
