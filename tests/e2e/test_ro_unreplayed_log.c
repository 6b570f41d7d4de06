/* test_ro_unreplayed_log.c -- tsd.mode=ro on a data dir whose TSD was
 * killed: the read-only TSD does not replay the write-ahead log (it must not
 * write), so it warns at start-up with the exact number of record bytes the
 * log holds -- computed here from the segment files' sizes less their
 * 16-byte headers (docs/format/wal.md) -- and the points only in the log are
 * not shown. Once a read-write TSD has replayed and flushed them, a
 * read-only TSD shows every point with its value and warns no more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

#define BASE_TS 1356998400L
#define N       5

static const char warn[] = "read-only mode: the write-ahead log holds ";

/* Record bytes in DIR/wal: every segment's size less its header. */
static unsigned long long log_record_bytes(const char *dir)
{
    char wal[4400];
    snprintf(wal, sizeof wal, "%s/wal", dir);
    DIR *d = opendir(wal);
    assert_non_null(d);
    unsigned long long total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".wal")) continue;
        char path[4700];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", wal, e->d_name);
        assert_int_equal(stat(path, &sb), 0);
        if (sb.st_size > 16) total += (unsigned long long)sb.st_size - 16;
    }
    closedir(d);
    return total;
}

static char *read_log(const tu_tsd_t *t)
{
    FILE *f = fopen(t->log, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static char *query(const tu_tsd_t *t)
{
    char target[200], *resp = NULL;
    snprintf(target, sizeof target, "/api/query?start=%ld&end=%ld&m=sum:ro.m", BASE_TS,
             BASE_TS + 60);
    int st = tu_http(t->port, "GET", target, NULL, NULL, 0, &resp, NULL);
    if (st != 200) fail_msg("query answered %d <%s>", st, resp ? resp : "");
    return resp;
}

static void ro_tsd_warns_of_an_unreplayed_log(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    static const char *const rw[] = {"--auto-metric", NULL};
    static const char *const ro[] = {"--set", "tsd.mode=ro", NULL};
    assert_int_equal(tu_tsd_start(&t, rw), 0);
    for (int i = 0; i < N; i++) {
        char body[160], *resp = NULL;
        snprintf(body, sizeof body,
                 "{\"metric\":\"ro.m\",\"timestamp\":%ld,\"value\":%d,\"tags\":{\"host\":\"a\"}}",
                 BASE_TS + 10 * i, 100 + i);
        assert_int_equal(
            tu_http(t.port, "POST", "/api/put?sync", NULL, body, strlen(body), &resp, NULL), 204);
        free(resp);
    }
    tu_tsd_kill(&t);
    unsigned long long bytes = log_record_bytes(t.dir);
    assert_true(bytes > 0);

    /* read-only over the killed TSD's dir: the warning, the points unseen */
    assert_int_equal(tu_tsd_start(&t, ro), 0);
    char want[160];
    snprintf(want, sizeof want, "%s%llu bytes of records", warn, bytes);
    const char *log = read_log(&t);
    if (!strstr(log, want)) fail_msg("no <%s> in the log:\n%s", want, log);
    char *resp = query(&t);
    assert_string_equal(resp, "[]");
    free(resp);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(log_record_bytes(t.dir), bytes); /* untouched */

    /* a read-write TSD replays and flushes; then read-only shows them */
    assert_int_equal(tu_tsd_start(&t, rw), 0);
    assert_int_equal(tu_tsd_stop(&t), 0);
    assert_int_equal(tu_tsd_start(&t, ro), 0);
    resp = query(&t);
    for (int i = 0; i < N; i++) {
        char dp[64];
        snprintf(dp, sizeof dp, "\"%ld\":%d", BASE_TS + 10 * i, 100 + i);
        if (!strstr(resp, dp)) fail_msg("no %s in <%s>", dp, resp);
    }
    free(resp);
    assert_int_equal(count(read_log(&t), warn), 1);
    assert_int_equal(tu_tsd_stop(&t), 0);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ro_tsd_warns_of_an_unreplayed_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
