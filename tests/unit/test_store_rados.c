/* test_store_rados.c -- what the rados backend promises beyond the store
 * contract (tests/contract runs that one): the bytes in RADOS are those of
 * docs/format/rados.md (read back with librados itself, expected bytes
 * written out by hand from the page), a data dir stays bound to its
 * namespace, two stores on one namespace (two TSDs) see each other's writes
 * with no lock between them, and a missing pool or an unbound read-only open
 * fail with their reasons. Needs a cluster: OCTSDB_TEST_STORE_RADOS names
 * the config file scripts/ceph-cluster.sh writes; without it the program
 * exits 77 (ctest: Skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rados/librados.h>

#include "testutil.h"
#include "common/config.h"
#include "store/store.h"

#define LIT(s) oct_slice((s), sizeof(s) - 1)
#define STR(s) oct_slice_str(s)

static const char *cfg_path;

/* The test config, plus key=value if key is not NULL. */
static oct_config_t *cfg_with(const char *key, const char *value)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    if (oct_config_load_file(cfg, cfg_path, &eb)) fail_msg("%s: %s", cfg_path, eb.msg);
    if (key && oct_config_set(cfg, key, value, &eb)) fail_msg("%s: %s", key, eb.msg);
    return cfg;
}

static int open_store(const char *dir, const oct_config_t *cfg, int read_only, store_t **st,
                      oct_errbuf_t *eb)
{
    store_options_t o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    o.backend = "rados";
    o.cfg = cfg;
    o.read_only = read_only;
    return store_open(&o, st, eb);
}

/* The namespace the data dir records (docs/format/rados.md). */
static void read_ns(const char *dir, char *out, size_t cap)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rados.ns", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(out, (int)cap, f));
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* The omap value of key in object oid of namespace ns, read with librados;
 * returns its length, -1 if absent. */
static long omap_value(const oct_config_t *cfg, const char *ns, const char *oid, const void *key,
                       size_t key_len, uint8_t *out, size_t cap)
{
    rados_t cl;
    rados_ioctx_t io;
    assert_int_equal(rados_create2(&cl, "ceph", "client.admin", 0), 0);
    assert_int_equal(rados_conf_read_file(cl, oct_config_get(cfg, "tsd.storage.rados.conf")), 0);
    assert_int_equal(rados_connect(cl), 0);
    assert_int_equal(rados_ioctx_create(cl, oct_config_get(cfg, "tsd.storage.rados.pool"), &io), 0);
    rados_ioctx_set_namespace(io, ns);
    const char *keys[1] = {key};
    size_t kl[1] = {key_len};
    rados_omap_iter_t it = NULL;
    int prval = 0;
    rados_read_op_t op = rados_create_read_op();
    rados_read_op_omap_get_vals_by_keys2(op, keys, 1, kl, &it, &prval);
    int rc = rados_read_op_operate(op, io, oid, 0);
    long n = -1;
    char *k, *v;
    size_t kn, vn;
    if (rc == 0 && prval == 0 && rados_omap_get_next2(it, &k, &v, &kn, &vn) == 0 && k) {
        assert_true(vn <= cap);
        memcpy(out, v, vn);
        n = (long)vn;
    }
    if (it) rados_omap_get_end(it);
    rados_release_read_op(op);
    rados_ioctx_destroy(io);
    rados_shutdown(cl);
    return n;
}

static void cell_bytes_are_the_documented_layout(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    oct_config_t *cfg = cfg_with(NULL, NULL);
    char *dir = tu_tempdir();
    store_t *st;
    if (open_store(dir, cfg, 0, &st, &eb)) fail_msg("open: %s", eb.msg);
    store_op_t op = {STORE_OP_PUT,
                     STR("metrics"),
                     {LIT("\x00\x00\x01"), STR("id"), STR("metrics"), LIT("v\x00")}};
    assert_int_equal(store_write(st, STORE_TABLE_UID, &op, 1, 0, &eb), 0);
    char ns[128];
    read_ns(dir, ns, sizeof ns);
    assert_int_equal(strncmp(ns, "octsdb-", 7), 0);
    assert_int_equal(strlen(ns), 7 + 16);

    /* the page's example: row 00 00 01, family "id", qualifier "metrics" */
    static const uint8_t key[] = {0x01, 0x02, 0x01, 0x02, 0x01, 0x03, 0x01, 0x01, 'i',  'd', 0x01,
                                  0x01, 'm',  'e',  't',  'r',  'i',  'c',  's',  0x01, 0x01};
    uint8_t val[64];
    long n = omap_value(cfg, ns, "tsdb-uid/6d657472696373", key, sizeof key, val, sizeof val);
    assert_int_equal(n, 3);
    assert_memory_equal(val, "\x01v\x00", 3); /* version byte, then the value */
    /* the table's index object lists the partition as enc1("metrics") */
    n = omap_value(cfg, ns, "tsdb-uid", "metrics\x01\x01", 9, val, sizeof val);
    assert_int_equal(n, 0);
    /* another namespace does not hold it */
    n = omap_value(cfg, "octsdb-0000000000000000", "tsdb-uid/6d657472696373", key, sizeof key, val,
                   sizeof val);
    assert_int_equal(n, -1);
    store_close(st);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

static void data_dir_stays_bound_to_its_namespace(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    char ns[64];
    snprintf(ns, sizeof ns, "test-bind-%d", (int)getpid());
    oct_config_t *a = cfg_with("tsd.storage.rados.namespace", ns);
    oct_config_t *b = cfg_with("tsd.storage.rados.namespace", "test-bind-other");
    oct_config_t *unset = cfg_with(NULL, NULL);
    char *dir = tu_tempdir();
    store_t *st;
    if (open_store(dir, a, 0, &st, &eb)) fail_msg("open: %s", eb.msg);
    store_close(st);
    char got[128];
    read_ns(dir, got, sizeof got);
    assert_string_equal(got, ns);
    /* another namespace for the same dir is refused, naming both */
    st = (store_t *)&eb;
    assert_int_equal(open_store(dir, b, 0, &st, &eb), OCT_ECONFIG);
    assert_null(st);
    assert_non_null(strstr(eb.msg, "tsd.storage.rados.namespace"));
    assert_non_null(strstr(eb.msg, ns));
    assert_non_null(strstr(eb.msg, "test-bind-other"));
    /* with the key unset, the recorded namespace is used */
    if (open_store(dir, unset, 0, &st, &eb)) fail_msg("open unset: %s", eb.msg);
    store_close(st);
    read_ns(dir, got, sizeof got);
    assert_string_equal(got, ns);
    oct_config_free(a);
    oct_config_free(b);
    oct_config_free(unset);
    tu_rmrf(dir);
    free(dir);
}

static void two_stores_share_one_namespace(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    char ns[64];
    snprintf(ns, sizeof ns, "test-share-%d", (int)getpid());
    oct_config_t *cfg = cfg_with("tsd.storage.rados.namespace", ns);
    char *d1 = tu_tempdir(), *d2 = tu_tempdir();
    store_t *s1, *s2;
    if (open_store(d1, cfg, 0, &s1, &eb)) fail_msg("open 1: %s", eb.msg);
    /* a second data dir on the same data set opens while the first is open */
    if (open_store(d2, cfg, 0, &s2, &eb)) fail_msg("open 2: %s", eb.msg);
    store_op_t op = {STORE_OP_PUT, STR("p"), {STR("r"), STR("t"), STR("q"), STR("one")}};
    assert_int_equal(store_write(s1, STORE_TABLE_DATA, &op, 1, 0, &eb), 0);
    store_result_t r = STORE_RESULT_INIT;
    assert_int_equal(
        store_get_cell(s2, STORE_TABLE_DATA, STR("p"), STR("r"), STR("t"), STR("q"), &r, &eb), 1);
    assert_memory_equal(r.cells[0].value.ptr, "one", 3);
    /* a counter incremented through both: 5 + 7 */
    int64_t v;
    assert_int_equal(store_incr(s1, STORE_TABLE_UID, STR("metrics"), LIT("\x00"), STR("id"),
                                STR("metrics"), 5, &v, 0, &eb),
                     0);
    assert_int_equal(v, 5);
    assert_int_equal(store_incr(s2, STORE_TABLE_UID, STR("metrics"), LIT("\x00"), STR("id"),
                                STR("metrics"), 7, &v, 0, &eb),
                     0);
    assert_int_equal(v, 12);
    /* s1 remembers it wrote 5: its next increment must notice s2's write */
    assert_int_equal(store_incr(s1, STORE_TABLE_UID, STR("metrics"), LIT("\x00"), STR("id"),
                                STR("metrics"), 1, &v, 0, &eb),
                     0);
    assert_int_equal(v, 13);
    store_result_free(&r);
    store_close(s1);
    store_close(s2);
    oct_config_free(cfg);
    tu_rmrf(d1);
    tu_rmrf(d2);
    free(d1);
    free(d2);
}

static void missing_pool_and_unbound_read_only_fail(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    oct_config_t *cfg = cfg_with("tsd.storage.rados.pool", "no-such-pool");
    char *dir = tu_tempdir();
    store_t *st = (store_t *)&eb;
    assert_int_equal(open_store(dir, cfg, 0, &st, &eb), OCT_ECONFIG);
    assert_null(st);
    assert_non_null(strstr(eb.msg, "tsd.storage.rados.pool"));
    assert_non_null(strstr(eb.msg, "no-such-pool"));
    oct_config_free(cfg);

    /* read-only on a dir bound to nothing: an error, and nothing written */
    char *empty = tu_tempdir();
    cfg = cfg_with(NULL, NULL);
    st = (store_t *)&eb;
    assert_int_equal(open_store(empty, cfg, 1, &st, &eb), OCT_EIO);
    assert_null(st);
    assert_non_null(strstr(eb.msg, empty));
    char path[4200];
    struct stat sb;
    snprintf(path, sizeof path, "%s/rados.ns", empty);
    assert_int_equal(stat(path, &sb), -1);
    assert_int_equal(errno, ENOENT);
    oct_config_free(cfg);
    tu_rmrf(dir);
    tu_rmrf(empty);
    free(dir);
    free(empty);
}

int main(void)
{
    cfg_path = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!cfg_path || !*cfg_path) {
        printf("[  SKIPPED ] test_store_rados: OCTSDB_TEST_STORE_RADOS is not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cell_bytes_are_the_documented_layout),
        cmocka_unit_test(data_dir_stays_bound_to_its_namespace),
        cmocka_unit_test(two_stores_share_one_namespace),
        cmocka_unit_test(missing_pool_and_unbound_read_only_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
