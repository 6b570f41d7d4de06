/* test_api_stats_proc.c -- /api/stats/jvm (octsdb's process figures)
 * against the real daemon: each figure compared with what the test itself
 * reads from /proc/<daemon pid> around the request, and the start time with
 * the test's own clock around the start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"

static long long wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* "Key: N [kB]" of /proc/<pid>/status, in bytes for kB lines. */
static long long status_of(int pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
            char *end;
            v = strtoll(line + strlen(key) + 1, &end, 10);
            if (strstr(end, "kB")) v *= 1024;
        }
    fclose(f);
    return v;
}

static long long fds_of(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    assert_non_null(d);
    long long n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* utime + stime of /proc/<pid>/stat, in ms. */
static long long cpu_ms_of(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    assert_non_null(p);
    unsigned long long ut = 0, st = 0;
    /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     */
    assert_int_equal(
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st), 2);
    return (long long)(ut + st) * 1000 / sysconf(_SC_CLK_TCK);
}

static long long num(const json_value_t *root, const char *sect, const char *key)
{
    const json_value_t *s = json_obj_get(root, sect);
    if (!s) fail_msg("no section %s", sect);
    const json_value_t *v = json_obj_get(s, key);
    if (!v) fail_msg("no %s.%s", sect, key);
    int64_t x;
    if (json_number_i64(v, &x)) fail_msg("%s.%s is not an integer", sect, key);
    return x;
}

static void process_figures(void **state)
{
    (void)state;
    tu_tsd_t t;
    memset(&t, 0, sizeof t);
    long long before = wall_ms();
    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    long long after = wall_ms();
    /* some work first, so RSS and CPU are not trivially small */
    char *r = ac_req_ok(&t, "POST", "/api/uid/assign",
                        "{\"metric\":[\"m.a\"],\"tagk\":[\"host\"],\"tagv\":[\"h1\"]}", 200);
    free(r);
    r = ac_req_ok(
        &t, "POST", "/api/put",
        "{\"metric\":\"m.a\",\"timestamp\":1356998400,\"value\":1,\"tags\":{\"host\":\"h1\"}}",
        204);
    free(r);

    long long thr0 = status_of(t.pid, "Threads"), rss0 = status_of(t.pid, "VmRSS");
    long long fd0 = fds_of(t.pid), cpu0 = cpu_ms_of(t.pid);
    long long req_ms = wall_ms();
    r = ac_req_ok(&t, "GET", "/api/stats/jvm", NULL, 200);
    long long thr1 = status_of(t.pid, "Threads"), rss1 = status_of(t.pid, "VmRSS");
    long long fd1 = fds_of(t.pid), cpu1 = cpu_ms_of(t.pid);

    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&a, r, strlen(r), 0, &v, &eb)) fail_msg("bad JSON %s: %s", eb.msg, r);

    /* started between the test's two clock reads (to the second) */
    long long start = num(v, "runtime", "startTime");
    if (start < before / 1000 * 1000 || start > after) fail_msg("startTime %lld <%s>", start, r);
    long long up = num(v, "runtime", "uptime");
    if (up < req_ms - after - 1000 || up > wall_ms() - before + 1000)
        fail_msg("uptime %lld <%s>", up, r);
    assert_int_equal(num(v, "process", "pid"), t.pid);
    long long thr = num(v, "process", "threads");
    if (thr < (thr0 < thr1 ? thr0 : thr1) || thr > (thr0 > thr1 ? thr0 : thr1))
        fail_msg("threads %lld, /proc says %lld then %lld", thr, thr0, thr1);
    /* the request's own connection may or may not be counted by either read */
    long long fds = num(v, "process", "openFiles");
    long long lo = (fd0 < fd1 ? fd0 : fd1) - 1, hi = (fd0 > fd1 ? fd0 : fd1) + 1;
    if (fds < lo || fds > hi) fail_msg("openFiles %lld, /proc says %lld then %lld", fds, fd0, fd1);
    long long maxf = num(v, "process", "maxOpenFiles");
    if (maxf < fds) fail_msg("maxOpenFiles %lld < openFiles %lld", maxf, fds);
    /* RSS moves with allocations: within 25% of the test's reads */
    long long rss = num(v, "memory", "rss");
    if (rss < (rss0 < rss1 ? rss0 : rss1) * 3 / 4 || rss > (rss0 > rss1 ? rss0 : rss1) * 5 / 4)
        fail_msg("rss %lld, /proc says %lld then %lld", rss, rss0, rss1);
    if (num(v, "memory", "rssPeak") < rss) fail_msg("rssPeak below rss <%s>", r);
    if (num(v, "memory", "virtual") < rss) fail_msg("virtual below rss <%s>", r);
    /* CPU: getrusage and /proc count the same ticks; allow one tick each way */
    long long cpu = num(v, "process", "cpuUserMs") + num(v, "process", "cpuSystemMs");
    long long tick = 1000 / sysconf(_SC_CLK_TCK);
    if (cpu < cpu0 - 2 * tick || cpu > cpu1 + 2 * tick)
        fail_msg("cpu %lld ms, /proc says %lld then %lld", cpu, cpu0, cpu1);
    json_arena_free(&a);
    free(r);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(process_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
