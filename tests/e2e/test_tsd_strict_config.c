/* test_tsd_strict_config.c -- the daemon's start-up check and the API/UI
 * switches, on the real binary: an enabled OpenTSDB plugin octsdb does not
 * have stops start-up (exit 2, the key and the alternative named, the data
 * dir never created); unknown tsd.* keys are logged with a "did you mean"
 * and the daemon runs; --disable-api / tsd.core.enable_api=false and
 * --disable-ui remove their routes (404) as 2.4 does not register them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

static void enabled_plugins_stop_startup(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char data[512], conf[512], datadir_flag[600], conf_flag[600];
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(datadir_flag, sizeof datadir_flag, "--datadir=%s", data);
    /* one from a config file, as a migrated opentsdb.conf would carry it */
    snprintf(conf, sizeof conf, "%s/opentsdb.conf", dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fputs("tsd.network.port = 4242\ntsd.rtpublisher.enable = true\n"
          "tsd.rtpublisher.plugin = net.opentsdb.tsd.RabbitMQPublisher\n",
          f);
    fclose(f);
    snprintf(conf_flag, sizeof conf_flag, "--config=%s", conf);

    static const struct {
        const char *set, *key, *offer;
    } cases[] = {
        {"tsd.search.enable=true", "tsd.search.enable=true", "tsuids and uidmeta are built in"},
        {"tsd.rpc.plugins=net.opentsdb.tsd.KafkaRpcPlugin",
         "tsd.rpc.plugins=net.opentsdb.tsd.KafkaRpcPlugin", "/api/put"},
        {"tsd.core.storage_exception_handler.enable=true",
         "tsd.core.storage_exception_handler.enable=true", "write-ahead log"},
        {NULL, "tsd.rtpublisher.enable=true", "/api/query/last"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        /* a check that failed to stop it would serve on port 1: 10 s ends it */
        const char *args[] = {"tsd",
                              "--bind=127.0.0.1",
                              "--port=1",
                              datadir_flag,
                              cases[i].set ? "--set" : conf_flag,
                              cases[i].set,
                              NULL};
        char *err;
        int st = tu_run_octsdb_stderr(&err, args, 10);
        if (st != 2 || !strstr(err, cases[i].key) ||
            !strstr(err, "this OpenTSDB plugin is not available") || !strstr(err, cases[i].offer))
            fail_msg("%s: exit %d, stderr <%s>", cases[i].key, st, err);
        struct stat sb;
        assert_int_equal(stat(data, &sb), -1); /* stopped before touching the data */
        free(err);
    }
    tu_rmrf(dir);
    free(dir);
}

static char *slurp_log(const tu_tsd_t *t)
{
    FILE *f = fopen(t->log, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void unknown_keys_are_logged_with_suggestions(void **state)
{
    (void)state;
    const char *const extra[] = {
        "--set", "tsd.core.auto_create_metric=true",   /* the s forgotten */
        "--set", "tsd.http.request.enable_chunk=true", /* "ed" forgotten */
        "--set", "tsd.search.elasticsearch.host=es",   /* a plugin's own key */
        "--set", "hbase.zookeeper.quorum=zk",          /* not tsd.*: not judged */
        NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    char *log = slurp_log(&t);
    static const char *const want[] = {
        "WARN config: unknown configuration key 'tsd.core.auto_create_metric' is ignored; did "
        "you mean 'tsd.core.auto_create_metrics'?\n",
        "WARN config: unknown configuration key 'tsd.http.request.enable_chunk' is ignored; did "
        "you mean 'tsd.http.request.enable_chunked'?\n",
        "WARN config: unknown configuration key 'tsd.search.elasticsearch.host' is ignored\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(log, want[i])) fail_msg("missing <%s> in log:\n%s", want[i], log);
    assert_null(strstr(log, "hbase.zookeeper.quorum"));
    /* ignored means ignored: metrics are still not auto-created */
    char *r;
    assert_int_equal(ac_req(&t, "POST", "/api/put",
                            "{\"metric\":\"new.metric\",\"timestamp\":1356998400,\"value\":1,"
                            "\"tags\":{\"h\":\"a\"}}",
                            &r),
                     400);
    free(r);
    free(log);
    tu_tsd_destroy(&t);
}

#define E404 "{\"error\":{\"code\":404,\"message\":\"Endpoint not found\"}}"

static void disable_api_and_ui(void **state)
{
    (void)state;
    const char *const noapi[] = {"--disable-api", NULL};
    tu_tsd_t t = {0};
    assert_int_equal(tu_tsd_start(&t, noapi), 0);
    AC_EXPECT(&t, "GET", "/api/version", NULL, 404, E404);
    AC_EXPECT(&t, "GET", "/api/query?start=1h-ago&m=sum:x", NULL, 404, E404);
    AC_EXPECT(&t, "POST", "/api/put", "{}", 404, E404);
    char *r;
    assert_int_equal(ac_req(&t, "GET", "/version", NULL, &r), 200); /* the UI's routes stay */
    assert_non_null(strstr(r, " built at revision "));
    free(r);
    /* telnet is not the API: it still answers */
    int fd = tu_connect(t.port);
    assert_true(fd >= 0);
    const char *cmd = "version\n";
    assert_int_equal(tu_send_all(fd, cmd, strlen(cmd)), 0);
    char buf[1024];
    tu_recv_some(fd, buf, sizeof buf, 500);
    assert_non_null(strstr(buf, "built at revision"));
    close(fd);
    tu_tsd_destroy(&t);

    const char *const noapi_key[] = {"--set", "tsd.core.enable_api=false", NULL};
    tu_tsd_t k = {0};
    assert_int_equal(tu_tsd_start(&k, noapi_key), 0);
    AC_EXPECT(&k, "GET", "/api/aggregators", NULL, 404, E404);
    tu_tsd_destroy(&k);

    const char *const noui[] = {"--disable-ui", NULL};
    tu_tsd_t u = {0};
    assert_int_equal(tu_tsd_start(&u, noui), 0);
    AC_EXPECT(&u, "GET", "/version", NULL, 404, E404);
    AC_EXPECT(&u, "GET", "/logs", NULL, 404, E404);
    AC_EXPECT(&u, "GET", "/stats", NULL, 404, E404);
    AC_EXPECT(&u, "GET", "/q?start=1h-ago&m=sum:x&ascii", NULL, 404, E404);
    AC_EXPECT(&u, "GET", "/aggregators", NULL, 404, E404);
    assert_int_equal(ac_req(&u, "GET", "/api/version", NULL, &r), 200);
    free(r);
    tu_tsd_destroy(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(enabled_plugins_stop_startup),
        cmocka_unit_test(unknown_keys_are_logged_with_suggestions),
        cmocka_unit_test(disable_api_and_ui),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
