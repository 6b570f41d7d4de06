/* test_store_watch_rados.c -- change notification between store handles on
 * one RADOS namespace (what several TSDs on one data set rely on; the
 * single-handle contract is tests/contract/test_store_watch.c): a
 * notification from one store reaches the watches of the others before
 * store_notify returns, a read-only store can watch, and a watch whose
 * registration is lost is registered again by the backend and reports
 * STORE_WATCH_LOST, after which it hears notifications again. Needs a
 * cluster: OCTSDB_TEST_STORE_RADOS names the config file of
 * scripts/ceph-cluster.sh; without it the program exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "rados_test.h"
#include "store/store_rados_int.h"

#define STR(s) oct_slice_str(s)

static const char *cfg_path;

typedef struct {
    pthread_mutex_t mu;
    int msgs, lost;
    char last[64];
} seen_t;

static void on_msg(void *ctx, unsigned events, oct_slice_t msg)
{
    seen_t *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (events & STORE_WATCH_LOST) {
        s->lost++;
    } else {
        s->msgs++;
        snprintf(s->last, sizeof s->last, "%.*s", (int)msg.len, (const char *)msg.ptr);
    }
    pthread_mutex_unlock(&s->mu);
}

static void seen_get(seen_t *s, int *msgs, int *lost)
{
    pthread_mutex_lock(&s->mu);
    *msgs = s->msgs;
    *lost = s->lost;
    pthread_mutex_unlock(&s->mu);
}

/* Stores on one namespace: dirs[i] bound to ns (fresh for i = 0). */
typedef struct {
    char *dir[3];
    store_t *st[3];
    oct_config_t *cfg;
} two_t;

static int setup(void **state)
{
    two_t *t = calloc(1, sizeof *t);
    char ns[64];
    rt_namespace("watch", ns, sizeof ns);
    t->cfg = rt_config(cfg_path, ns);
    for (int i = 0; i < 3; i++)
        t->dir[i] = tu_tempdir();
    t->st[0] = rt_open(t->dir[0], t->cfg, 0);
    t->st[1] = rt_open(t->dir[1], t->cfg, 0);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    two_t *t = *state;
    for (int i = 0; i < 3; i++) {
        store_close(t->st[i]);
        tu_rmrf(t->dir[i]);
        free(t->dir[i]);
    }
    oct_config_free(t->cfg);
    free(t);
    return 0;
}

static void notify_reaches_the_other_store_before_it_returns(void **state)
{
    two_t *t = *state;
    oct_errbuf_t eb;
    seen_t a = {PTHREAD_MUTEX_INITIALIZER, 0, 0, ""}, b = a;
    store_watch_t *wa, *wb;
    assert_int_equal(store_watch(t->st[0], STORE_TABLE_UID, STR("metrics"), on_msg, &a, &wa, &eb),
                     0);
    assert_int_equal(store_watch(t->st[1], STORE_TABLE_UID, STR("metrics"), on_msg, &b, &wb, &eb),
                     0);
    int64_t worst_us = 0;
    for (int i = 0; i < 20; i++) {
        char m[32];
        snprintf(m, sizeof m, "from-0-%d", i);
        int64_t t0 = oct_clock_mono_ns();
        assert_int_equal(store_notify(t->st[0], STORE_TABLE_UID, STR("metrics"), STR(m), &eb), 0);
        int64_t us = (oct_clock_mono_ns() - t0) / 1000;
        if (us > worst_us) worst_us = us;
        int msgs, lost;
        seen_get(&b, &msgs, &lost);
        assert_int_equal(msgs, i + 1);
        assert_string_equal(b.last, m);
        seen_get(&a, &msgs, &lost); /* the notifier's own watch too */
        assert_int_equal(msgs, i + 1);
    }
    printf("notify round trip to 2 watches: worst %lld us of 20\n", (long long)worst_us);
    /* and the other way */
    assert_int_equal(store_notify(t->st[1], STORE_TABLE_UID, STR("metrics"), STR("x"), &eb), 0);
    assert_string_equal(a.last, "x");
    store_unwatch(wa);
    store_unwatch(wb);
}

static void read_only_store_watches(void **state)
{
    two_t *t = *state;
    oct_errbuf_t eb;
    seen_t a = {PTHREAD_MUTEX_INITIALIZER, 0, 0, ""}, r = a;
    store_watch_t *wa, *wr;
    /* the writable store creates the notify object, then a read-only one watches it */
    assert_int_equal(store_watch(t->st[0], STORE_TABLE_UID, STR("tagk"), on_msg, &a, &wa, &eb), 0);
    store_close(t->st[1]);
    t->st[1] = NULL;
    store_t *ro = t->st[1] = rt_open(t->dir[1], t->cfg, 1);
    assert_int_equal(store_watch(ro, STORE_TABLE_UID, STR("tagk"), on_msg, &r, &wr, &eb), 0);
    assert_int_equal(store_notify(t->st[0], STORE_TABLE_UID, STR("tagk"), STR("ro"), &eb), 0);
    assert_string_equal(r.last, "ro");
    /* nobody created this one: a read-only store says why it cannot watch */
    store_watch_t *wn = NULL;
    assert_int_equal(store_watch(ro, STORE_TABLE_UID, STR("tagv"), on_msg, &r, &wn, &eb), OCT_EIO);
    assert_non_null(strstr(eb.msg, "read-only"));
    store_unwatch(wr);
    store_unwatch(wa);
}

static void lost_watch_is_registered_again_and_reported(void **state)
{
    two_t *t = *state;
    oct_errbuf_t eb;
    seen_t b = {PTHREAD_MUTEX_INITIALIZER, 0, 0, ""};
    store_watch_t *wb;
    assert_int_equal(store_watch(t->st[1], STORE_TABLE_UID, STR("tagv"), on_msg, &b, &wb, &eb), 0);
    assert_int_equal(store_notify(t->st[0], STORE_TABLE_UID, STR("tagv"), STR("before"), &eb), 0);
    assert_int_equal(rs__watch_break(wb), 0);
    int64_t t0 = oct_clock_mono_ns();
    int msgs = 0, lost = 0;
    while (!lost && oct_clock_mono_ns() - t0 < 5000000000LL) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        seen_get(&b, &msgs, &lost);
    }
    int64_t ms = (oct_clock_mono_ns() - t0) / 1000000;
    printf("lost watch reported after %lld ms\n", (long long)ms);
    assert_int_equal(lost, 1);
    assert_int_equal(msgs, 1);
    /* registered again: it hears the next one */
    assert_int_equal(store_notify(t->st[0], STORE_TABLE_UID, STR("tagv"), STR("after"), &eb), 0);
    seen_get(&b, &msgs, &lost);
    assert_int_equal(msgs, 2);
    assert_string_equal(b.last, "after");
    assert_int_equal(lost, 1);
    store_unwatch(wb);
}

int main(void)
{
    cfg_path = rt_cfg_path_or_skip();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(notify_reaches_the_other_store_before_it_returns, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(read_only_store_watches, setup, teardown),
        cmocka_unit_test_setup_teardown(lost_watch_is_registered_again_and_reported, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
