/* test_telnet.c -- the telnet-style protocol against the real daemon.
 *
 * Expected reply lines are OpenTSDB's texts as docs/telnet.md gives them (commands, put
 * errors, data-point messages); stored values are checked by stopping the daemon and reading
 * the series back through tsdb_read_series, with the TSUID worked out by
 * hand: in a fresh data dir the first metric, tag key and tag value all get
 * UID 1, so metric + one tag pair is 000001 000001 000001. A `version` sent
 * after a batch of lines marks the end of their replies: the daemon answers
 * lines in order, so whatever precedes the version text belongs to them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/err.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

/* Sends text then `version`; returns every reply before the version's (in
 * tu_telnet_tx's buffer), after checking the version reply itself. */
static const char *exchange(int fd, const char *text)
{
    const char *v;
    const char *got = tu_telnet_tx(fd, &v, "%s", text);
    /* the version reply itself: two newline-terminated lines */
    const char *l1 = strchr(v, '\n');
    assert_non_null(l1);
    assert_non_null(strstr(l1 + 1, "Built on "));
    assert_non_null(strchr(l1 + 1, '\n'));
    return got;
}

static void expect_reply(int fd, const char *send, const char *want)
{
    const char *got = exchange(fd, send);
    if (strcmp(got, want) != 0) fail_msg("sent:\n%s\nwant:\n%s\ngot:\n%s", send, want, got);
}

/* The daemon of the running test; the teardown removes it even when the test fails. */
static tu_tsd_t *g_running;

static void start(tu_tsd_t *t, const char *const *extra)
{
    memset(t, 0, sizeof *t);
    g_running = t;
    assert_int_equal(tu_tsd_start(t, extra), 0);
}

static int teardown_daemon(void **state)
{
    (void)state;
    if (g_running) {
        if (g_running->pid > 0 || g_running->dir) tu_tsd_destroy(g_running);
        g_running = NULL;
    }
    return 0;
}

/* ---- error lines --------------------------------------------------------- */

static void put_errors_without_auto_metric(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    start(&t, NULL);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);

    expect_reply(fd, "put\n",
                 "put: illegal argument: not enough arguments (need least 4, got 0)\n");
    expect_reply(fd, "put sys.cpu 1356998400 42\n",
                 "put: illegal argument: not enough arguments (need least 4, got 3)\n");
    expect_reply(fd, "put sys.cpu notatime 42 host=a\n",
                 "put: invalid value: Invalid character 'n' in notatime\n");
    expect_reply(fd, "put sys.cpu 0 42 host=a\n", "put: illegal argument: invalid timestamp: 0\n");
    expect_reply(fd, "put sys.cpu -5 42 host=a\n",
                 "put: illegal argument: invalid timestamp: -5\n");
    expect_reply(fd, "put sys.cpu 10000000000000 42 host=a\n",
                 "put: illegal argument: invalid timestamp: 10000000000000\n");
    expect_reply(fd, "put sys.cpu 12345678901234567890 42 host=a\n",
                 "put: invalid value: Value too long: 12345678901234567890\n");
    expect_reply(fd, "put sys.cpu 1356998400 abc host=a\n",
                 "put: invalid value: Invalid character 'a' in abc\n");
    expect_reply(fd, "put sys.cpu 1356998400 NaN host=a\n",
                 "put: invalid value: Invalid character 'N' in NaN\n");
    expect_reply(fd, "put sys.cpu 1356998400 1.2.3 host=a\n",
                 "put: invalid value: For input string: \"1.2.3\"\n");
    expect_reply(fd, "put sys.cpu 1356998400 1e500 host=a\n",
                 "put: illegal argument: value is NaN or Infinite: 1e500 for metric=sys.cpu "
                 "timestamp=1356998400\n");
    expect_reply(fd, "put sys.cpu 1356998400 42 a=b=c\n",
                 "put: illegal argument: invalid tag: a=b=c\n");
    expect_reply(fd, "put sys.cpu 1356998400 42 host\n",
                 "put: illegal argument: invalid tag: host\n");
    expect_reply(fd, "put sys.cpu 1356998400 42 =x\n", "put: illegal argument: invalid tag: =x\n");
    expect_reply(fd, "put sys.cpu 1356998400 42 host=\n",
                 "put: illegal argument: invalid tag: host=\n");
    /* tags are checked before the value, as OpenTSDB does */
    expect_reply(fd, "put sys.cpu 1356998400 abc a=b=c\n",
                 "put: illegal argument: invalid tag: a=b=c\n");
    expect_reply(fd, "put sys.cpu 1356998400 42 host=a\n",
                 "put: unknown metric: No such name for 'metrics': 'sys.cpu'\n");
    /* several errors in one write: one line each, in order, the connection stays open */
    expect_reply(fd,
                 "put\nput sys.cpu 0 1 host=a\nput sys.cpu 1356998400 42 host=a\n"
                 "put sys.cpu 1356998400 x host=a\n",
                 "put: illegal argument: not enough arguments (need least 4, got 0)\n"
                 "put: illegal argument: invalid timestamp: 0\n"
                 "put: unknown metric: No such name for 'metrics': 'sys.cpu'\n"
                 "put: invalid value: Invalid character 'x' in x\n");
    close(fd);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

static void put_errors_from_the_write_path(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--auto-metric", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);

    expect_reply(
        fd, "put sys!cpu 1356998400 42 host=a\n",
        "put: illegal argument: Invalid metric name (\"sys!cpu\"): illegal character: !\n");
    /* Telegraf's zero-tag line ends in a space: it passes the argument count, as in OpenTSDB */
    const char *got = exchange(fd, "put sys.cpu 1356998400 42 \n");
    assert_non_null(strstr(got, "put: illegal argument: Need at least one tag"));
    got = exchange(fd, "put sys.cpu 1356998400 42 a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9\n");
    if (strncmp(got, "put: illegal argument: Too many tags: 9 maximum allowed: 8", 58) != 0)
        fail_msg("got %s", got);
    /* a good line after bad ones is silent */
    expect_reply(fd, "put sys.cpu 1356998400 42 host=a\n", "");
    close(fd);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

/* ---- commands -------------------------------------------------------------- */

static void commands(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    /* diediedie is off unless enabled (docs/reliability.md, "Access") */
    const char *const extra[] = {"--set", "tsd.core.enable_diediedie=true", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);

    /* tcollector's probe: a non-empty, newline-terminated reply */
    expect_reply(fd, "", "");
    expect_reply(
        fd, "help\n",
        "available commands: stats dropcaches version exit help put rollup histogram diediedie \n");
    expect_reply(fd, "dropcaches\n", "Caches dropped.\n");
    expect_reply(fd, "foo\n", "unknown command: foo.  Try `help'.\n");
    expect_reply(fd, "foo bar baz\n", "unknown command: foo.  Try `help'.\n");
    expect_reply(fd, "\n", "unknown command: .  Try `help'.\n");
    expect_reply(fd, "\r\n", "unknown command: .  Try `help'.\n");
    expect_reply(fd, "PUT x\n", "unknown command: PUT.  Try `help'.\n"); /* case-sensitive */
    /* known to 2.4, not implemented here: an error saying so, not "unknown" */
    /* rollups are off here: 2.4's first write rule (test_rollup.c has the rest) */
    expect_reply(fd, "rollup 1h-sum x 1 1 a=b\n",
                 "rollup: illegal argument: No rollup or aggregations were configured\n");
    /* 2.4's reply without tsd.core.histograms.config */
    expect_reply(fd, "histogram x 1 0,1=1 a=b\n",
                 "histogram: illegal argument: Histogram storage has not been enabled. Check the "
                 "'tsd.core.histograms.config' configuration.\n");

    const char *st = exchange(fd, "stats\n");
    /* "tsd.<name> <unix_s> <value> <tag> host=<hostname>" */
    const char *line = strstr(st, "tsd.rpc.received ");
    assert_non_null(line);
    long long ts = 0;
    unsigned long long v = 0;
    char tag[64] = "", host[300] = "";
    assert_int_equal(sscanf(line, "tsd.rpc.received %lld %llu %63s %299s", &ts, &v, tag, host), 4);
    long long now = (long long)time(NULL);
    assert_true(ts >= now - 60 && ts <= now + 60);
    assert_true(!strncmp(tag, "type=", 5));
    assert_true(!strncmp(host, "host=", 5));
    assert_non_null(strstr(st, "tsd.rpc.received "));
    assert_non_null(strstr(st, " type=telnet host="));

    /* exit: the connection is closed */
    assert_int_equal(tu_send_all(fd, "exit\n", 5), 0);
    char buf[256];
    size_t n = tu_recv_some(fd, buf, sizeof buf, 5000);
    assert_int_equal(n, 0);
    close(fd);

    /* the daemon still serves others */
    fd = tu_connect(t.port);
    assert_true(fd >= 0);
    expect_reply(fd, "dropcaches\n", "Caches dropped.\n");
    close(fd);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

static void read_only_and_no_diediedie(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--read-only", "--set", "tsd.no_diediedie=true", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    expect_reply(fd, "help\n", "available commands: stats dropcaches version exit help \n");
    expect_reply(fd, "put sys.cpu 1356998400 42 host=a\n", "unknown command: put.  Try `help'.\n");
    expect_reply(fd, "diediedie\n", "unknown command: diediedie.  Try `help'.\n");
    close(fd);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

static void diediedie_stops_the_daemon(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--set", "tsd.core.enable_diediedie=true", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    assert_int_equal(tu_send_all(fd, "diediedie\n", 10), 0);
    char buf[256];
    tu_recv_some(fd, buf, sizeof buf, 2000);
    assert_string_equal(buf, "Cleaning up and exiting now.\n");
    close(fd);
    int st = -1;
    for (int i = 0; i < 300; i++) { /* 30 s */
        if (waitpid(t.pid, &st, WNOHANG) == t.pid) {
            t.pid = 0;
            break;
        }
        usleep(100 * 1000);
    }
    assert_int_equal(t.pid, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

/* ---- what collectors send, and what is stored ------------------------------ */

static tsdb_t *open_dir(const char *dir, oct_config_t **cfg)
{
    oct_errbuf_t eb;
    *cfg = oct_config_new();
    assert_int_equal(oct_config_set(*cfg, "tsd.storage.data_dir", dir, &eb), 0);
    tsdb_t *db = NULL;
    int rc = tsdb_open(*cfg, 0, &db, &eb);
    if (rc) fail_msg("tsdb_open: %s", eb.msg);
    return db;
}

typedef struct {
    int64_t ts_ms;
    int is_float;
    int64_t i;
    double f;
} want_pt_t;

static void check_series(tsdb_t *db, const want_pt_t *want, size_t n)
{
    uint8_t tsuid[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    codec_point_t *pts = NULL;
    size_t np = 0;
    oct_errbuf_t eb;
    int rc = tsdb_read_series(db, tsuid, sizeof tsuid, 0, 2000000000000LL, &pts, &np, &eb);
    if (rc) fail_msg("tsdb_read_series: %s", eb.msg);
    if (np != n) fail_msg("%zu points stored, want %zu", np, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pts[i].ts_ms, want[i].ts_ms);
        assert_int_equal(pts[i].is_float, want[i].is_float);
        if (want[i].is_float)
            assert_true(pts[i].val.f == want[i].f);
        else
            assert_int_equal(pts[i].val.i, want[i].i);
    }
    free(pts);
}

static void collector_habits_are_stored(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--auto-metric", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);

    /* silent on success: the only reply is the version's */
    expect_reply(fd,
                 /* tcollector: plain seconds */
                 "put sys.cpu.user 1356998400 42 host=web01\n"
                 /* collectd: CRLF, double and trailing spaces */
                 "put sys.cpu.user 1356998410 1.5 fqdn=web01  host=web01 \r\n"
                 "put  sys.cpu.user  1356998420  -7  host=web01\r\n"
                 /* 13-digit milliseconds */
                 "put sys.cpu.user 1356998430123 0.430000 host=web01\n"
                 /* dotted seconds: a decimal fraction */
                 "put sys.cpu.user 1356998440.5 1e3 host=web01\n"
                 /* Java suffix */
                 "put sys.cpu.user 1356998450 5.0f host=web01\n"
                 /* the same tag twice with the same value is accepted */
                 "put sys.cpu.user 1356998460 9223372036854775807 host=web01 host=web01\n",
                 "");
    close(fd);
    assert_int_equal(tu_tsd_stop(&t), 0);

    oct_config_t *cfg;
    tsdb_t *db = open_dir(t.dir, &cfg);
    /* the collectd lines carry a second tag (fqdn): another series; the rest is 000001 x3 */
    const want_pt_t want[] = {
        {1356998400000LL, 0, 42, 0},   {1356998420000LL, 0, -7, 0},
        {1356998430123LL, 1, 0, 0.43}, {1356998440500LL, 1, 0, 1000.0},
        {1356998450000LL, 1, 0, 5.0},  {1356998460000LL, 0, 9223372036854775807LL, 0},
    };
    check_series(db, want, sizeof want / sizeof want[0]);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

static void many_puts_per_write_and_split_lines(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--auto-metric", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);

    /* 5000 lines in one buffer, values = i, ten seconds apart */
    enum { N = 5000 };
    size_t cap = (size_t)N * 64;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t len = 0;
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(buf + len, cap - len, "put m %d %d h=a\n", 1356998400 + 10 * i, i);
    expect_reply(fd, buf, "");
    free(buf);

    /* one line dribbled a few bytes per write */
    const char *line = "put m 1357048400 777 h=a\r\n";
    for (size_t i = 0; i < strlen(line); i += 3) {
        size_t n = strlen(line) - i < 3 ? strlen(line) - i : 3;
        assert_int_equal(tu_send_all(fd, line + i, n), 0);
        usleep(20 * 1000);
    }
    expect_reply(fd, "", "");
    close(fd);
    assert_int_equal(tu_tsd_stop(&t), 0);

    oct_config_t *cfg;
    tsdb_t *db = open_dir(t.dir, &cfg);
    want_pt_t *want = calloc(N + 1, sizeof *want);
    assert_non_null(want);
    for (int i = 0; i < N; i++)
        want[i] = (want_pt_t){(1356998400LL + 10 * i) * 1000, 0, i, 0};
    want[N] = (want_pt_t){1357048400000LL, 0, 777, 0};
    check_series(db, want, N + 1);
    free(want);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

/* Random bytes (first byte not 'A'..'Z', so the connection stays telnet): every line gets
 * some reply or none, the connection stays open, and the daemon still answers. */
static void garbage_does_not_break_the_connection(void **state)
{
    (void)state;
    static tu_tsd_t t; /* static: the teardown reaches it after a failed assertion */
    const char *const extra[] = {"--auto-metric", NULL};
    start(&t, extra);
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    enum { N = 200000 };
    char *buf = malloc(N + 2);
    assert_non_null(buf);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    buf[0] = 'p';
    for (size_t i = 1; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* mostly put-like text so the put parser is exercised, with bytes of every value */
        static const char alpha[] = "put 12345.67e=+-x ";
        buf[i] = (x & 0x300) ? alpha[(x >> 16) % (sizeof alpha - 1)] : (char)(x >> 24);
        if (buf[i] == '\n' && (x & 0x3000)) buf[i] = ' ';
        if ((x & 0x7F) == 0) buf[i] = '\n';
    }
    buf[N] = '\n';
    buf[N + 1] = '\0';
    assert_int_equal(tu_send_all(fd, buf, N + 1), 0);
    free(buf);
    /* still alive and in order: a known reply comes back after the garbage's */
    assert_int_equal(tu_send_all(fd, "dropcaches\nversion\n", 19), 0);
    size_t cap = 4 << 20;
    char *got = malloc(cap);
    assert_non_null(got);
    size_t n = tu_recv_until(fd, got, cap, TU_VERSION_HEAD, 10000);
    char *v = memmem(got, n, TU_VERSION_HEAD, strlen(TU_VERSION_HEAD));
    assert_non_null(v);
    /* the reply just before the version's is the dropcaches one */
    const char *dc = "Caches dropped.\n";
    assert_true(v - got >= (long)strlen(dc));
    assert_memory_equal(v - strlen(dc), dc, strlen(dc));
    free(got);
    close(fd);
    tu_tsd_destroy(&t);
    g_running = NULL;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(put_errors_without_auto_metric, teardown_daemon),
        cmocka_unit_test_teardown(put_errors_from_the_write_path, teardown_daemon),
        cmocka_unit_test_teardown(commands, teardown_daemon),
        cmocka_unit_test_teardown(read_only_and_no_diediedie, teardown_daemon),
        cmocka_unit_test_teardown(diediedie_stops_the_daemon, teardown_daemon),
        cmocka_unit_test_teardown(collector_habits_are_stored, teardown_daemon),
        cmocka_unit_test_teardown(many_puts_per_write_and_split_lines, teardown_daemon),
        cmocka_unit_test_teardown(garbage_does_not_break_the_connection, teardown_daemon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
