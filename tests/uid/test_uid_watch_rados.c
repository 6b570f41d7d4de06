/* test_uid_watch_rados.c -- two UID registries on one RADOS namespace (two
 * TSDs' worth, in one process, each on its own store handle and data dir):
 * a rename or delete through one is seen by the other's lookups as soon as
 * it returns (the old name unknown, the new one the same UID), and the
 * other's change hook runs for it; a message the registry cannot read, as a
 * lost watch, makes it forget the whole kind (hook with UID 0); a name
 * assigned by one is found by the other. Expected values are the UIDs the
 * test itself got from the first registry. Needs a cluster
 * (OCTSDB_TEST_STORE_RADOS); without one it exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "rados_test.h"
#include "uid/uid.h"

#define S(x) (const uint8_t *)(x), strlen(x)

static const char *cfg_path;

typedef struct {
    pthread_mutex_t mu;
    int calls;
    codec_uid_kind_t kind;
    uint64_t id;
} hook_t;

static void on_change(void *ctx, codec_uid_kind_t kind, uint64_t id)
{
    hook_t *h = ctx;
    pthread_mutex_lock(&h->mu);
    h->calls++;
    h->kind = kind;
    h->id = id;
    pthread_mutex_unlock(&h->mu);
}

typedef struct {
    char *dir[2];
    store_t *st[2];
    uid_registry_t *r[2];
    oct_config_t *cfg;
    hook_t hook; /* registry 1's */
} pair_t;

static int setup(void **state)
{
    pair_t *p = calloc(1, sizeof *p);
    oct_errbuf_t eb;
    char ns[64];
    rt_namespace("uidw", ns, sizeof ns);
    p->cfg = rt_config(cfg_path, ns);
    uid_options_t uo;
    uid_options_default(&uo);
    uo.auto_create[CODEC_UID_METRIC] = 1;
    for (int i = 0; i < 2; i++) {
        p->dir[i] = tu_tempdir();
        p->st[i] = rt_open(p->dir[i], p->cfg, 0);
        if (uid_registry_open(p->st[i], &uo, &p->r[i], &eb)) fail_msg("registry: %s", eb.msg);
    }
    pthread_mutex_init(&p->hook.mu, NULL);
    uid_set_change_hook(p->r[1], on_change, &p->hook);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    pair_t *p = *state;
    for (int i = 0; i < 2; i++) {
        uid_registry_close(p->r[i]);
        store_close(p->st[i]);
        tu_rmrf(p->dir[i]);
        free(p->dir[i]);
    }
    oct_config_free(p->cfg);
    free(p);
    return 0;
}

static uint64_t id_of(uid_registry_t *r, codec_uid_kind_t k, const char *name, int *rc)
{
    oct_errbuf_t eb;
    uint64_t id = 0;
    *rc = uid_get_id(r, k, S(name), &id, &eb);
    return id;
}

static void rename_and_delete_reach_the_other_registry(void **state)
{
    pair_t *p = *state;
    oct_errbuf_t eb;
    uint64_t id = 0;
    int created = 0, rc;
    assert_int_equal(uid_get_or_create(p->r[0], CODEC_UID_METRIC, S("sys.cpu"), &id, &created, &eb),
                     0);
    assert_int_equal(created, 1);
    /* assigned by 0, found by 1 (and now in 1's cache, both ways) */
    assert_int_equal(id_of(p->r[1], CODEC_UID_METRIC, "sys.cpu", &rc), id);
    assert_int_equal(rc, 0);
    uint8_t buf[64];
    size_t len = 0;
    assert_int_equal(uid_get_name(p->r[1], CODEC_UID_METRIC, id, buf, sizeof buf, &len, &eb), 0);
    assert_memory_equal(buf, "sys.cpu", len);

    int64_t t0 = oct_clock_mono_ns();
    assert_int_equal(uid_rename(p->r[0], CODEC_UID_METRIC, S("sys.cpu"), S("sys.cpu.user"), &eb),
                     0);
    printf("rename with 2 registries watching: %lld us\n",
           (long long)((oct_clock_mono_ns() - t0) / 1000));
    /* at once, no waiting: 1 forgot the old name, and its hook ran */
    id_of(p->r[1], CODEC_UID_METRIC, "sys.cpu", &rc);
    assert_int_equal(rc, OCT_ENOSUCHNAME);
    assert_int_equal(id_of(p->r[1], CODEC_UID_METRIC, "sys.cpu.user", &rc), id);
    assert_int_equal(uid_get_name(p->r[1], CODEC_UID_METRIC, id, buf, sizeof buf, &len, &eb), 0);
    assert_int_equal(len, strlen("sys.cpu.user"));
    assert_memory_equal(buf, "sys.cpu.user", len);
    pthread_mutex_lock(&p->hook.mu);
    assert_int_equal(p->hook.calls, 1);
    assert_int_equal(p->hook.kind, CODEC_UID_METRIC);
    assert_int_equal(p->hook.id, id);
    pthread_mutex_unlock(&p->hook.mu);

    /* a tag value, deleted through 0 */
    uint64_t v = 0;
    assert_int_equal(uid_get_or_create(p->r[0], CODEC_UID_TAGV, S("web01"), &v, NULL, &eb), 0);
    assert_int_equal(id_of(p->r[1], CODEC_UID_TAGV, "web01", &rc), v);
    assert_int_equal(uid_delete(p->r[0], CODEC_UID_TAGV, S("web01"), &eb), 0);
    id_of(p->r[1], CODEC_UID_TAGV, "web01", &rc);
    assert_int_equal(rc, OCT_ENOSUCHNAME);
    assert_int_equal(uid_get_name(p->r[1], CODEC_UID_TAGV, v, buf, sizeof buf, &len, &eb),
                     OCT_ENOSUCHID);
    pthread_mutex_lock(&p->hook.mu);
    assert_int_equal(p->hook.calls, 2);
    assert_int_equal(p->hook.kind, CODEC_UID_TAGV);
    assert_int_equal(p->hook.id, v);
    pthread_mutex_unlock(&p->hook.mu);

    /* the other way: 1 renames, 0 sees it (0's hook is not set: caches only) */
    assert_int_equal(id_of(p->r[0], CODEC_UID_METRIC, "sys.cpu.user", &rc), id);
    assert_int_equal(uid_rename(p->r[1], CODEC_UID_METRIC, S("sys.cpu.user"), S("cpu"), &eb), 0);
    id_of(p->r[0], CODEC_UID_METRIC, "sys.cpu.user", &rc);
    assert_int_equal(rc, OCT_ENOSUCHNAME);
    assert_int_equal(id_of(p->r[0], CODEC_UID_METRIC, "cpu", &rc), id);
    /* 1's own rename ran its hook once more, on its own thread */
    pthread_mutex_lock(&p->hook.mu);
    assert_int_equal(p->hook.calls, 3);
    pthread_mutex_unlock(&p->hook.mu);
}

static void unreadable_message_forgets_the_kind(void **state)
{
    pair_t *p = *state;
    oct_errbuf_t eb;
    uint64_t id = 0;
    assert_int_equal(uid_get_or_create(p->r[0], CODEC_UID_TAGK, S("host"), &id, NULL, &eb), 0);
    int rc;
    assert_int_equal(id_of(p->r[1], CODEC_UID_TAGK, "host", &rc), id);
    /* version 2 of the message, which this build does not know: treated as
     * lost notifications, as a lost watch is */
    static const uint8_t m[24] = {0x02, 1, 1};
    assert_int_equal(
        store_notify(p->st[0], STORE_TABLE_UID, oct_slice_str("tagk"), oct_slice(m, 24), &eb), 0);
    pthread_mutex_lock(&p->hook.mu);
    assert_int_equal(p->hook.calls, 1);
    assert_int_equal(p->hook.kind, CODEC_UID_TAGK);
    assert_int_equal(p->hook.id, 0);
    pthread_mutex_unlock(&p->hook.mu);
    /* still right: read from the store again */
    assert_int_equal(id_of(p->r[1], CODEC_UID_TAGK, "host", &rc), id);
}

int main(void)
{
    cfg_path = rt_cfg_path_or_skip();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(rename_and_delete_reach_the_other_registry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(unreadable_message_forgets_the_kind, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
