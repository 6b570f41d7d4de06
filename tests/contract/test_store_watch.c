/* test_store_watch.c -- the store.h contract of change notification
 * (store_watch, store_notify, store_unwatch) on one store handle: a
 * notification reaches every watch on its (table, partition) with its bytes,
 * and no other watch, before store_notify returns; a removed watch hears
 * nothing; notifications from several threads each arrive once; bad
 * arguments are refused. Written against store.h alone, so it runs on every
 * backend. Between processes (several TSDs on one RADOS namespace) the same
 * is tested in tests/unit/test_store_watch_rados.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>

#include "testutil.h"
#include "store_fixture.h"

#define MAX_SEEN 256

/* What one watch received. */
typedef struct {
    pthread_mutex_t mu;
    size_t n;
    unsigned events[MAX_SEEN];
    char *msg[MAX_SEEN];
    size_t len[MAX_SEEN];
} seen_t;

static void seen_init(seen_t *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
}

static void seen_free(seen_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->msg[i]);
    pthread_mutex_destroy(&s->mu);
}

static void on_msg(void *ctx, unsigned events, oct_slice_t msg)
{
    seen_t *s = ctx;
    pthread_mutex_lock(&s->mu);
    if (s->n < MAX_SEEN) {
        s->events[s->n] = events;
        s->msg[s->n] = malloc(msg.len + 1);
        if (msg.len) memcpy(s->msg[s->n], msg.ptr, msg.len);
        s->len[s->n] = msg.len;
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
}

static size_t seen_n(seen_t *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static store_watch_t *watch(store_t *st, store_table_t t, const char *part, seen_t *s)
{
    oct_errbuf_t eb;
    store_watch_t *w = NULL;
    int rc = store_watch(st, t, STR(part), on_msg, s, &w, &eb);
    if (rc) fail_msg("store_watch %s: %d %s", part, rc, eb.msg);
    return w;
}

static void notify_reaches_every_watch_of_its_partition(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    seen_t a, b, other_part, other_table;
    seen_init(&a);
    seen_init(&b);
    seen_init(&other_part);
    seen_init(&other_table);
    store_watch_t *wa = watch(fx->st, STORE_TABLE_UID, "metrics", &a);
    store_watch_t *wb = watch(fx->st, STORE_TABLE_UID, "metrics", &b);
    store_watch_t *wp = watch(fx->st, STORE_TABLE_UID, "tagk", &other_part);
    store_watch_t *wt = watch(fx->st, STORE_TABLE_META, "metrics", &other_table);

    /* any bytes, a 00 among them */
    static const char m1[] = "rename\0sys.cpu\xff";
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("metrics"), LIT(m1), &eb), 0);
    /* store_notify returned: both callbacks have run */
    assert_int_equal(seen_n(&a), 1);
    assert_int_equal(seen_n(&b), 1);
    assert_int_equal(a.events[0], 0);
    fx_assert_slice(oct_slice(a.msg[0], a.len[0]), LIT(m1));
    fx_assert_slice(oct_slice(b.msg[0], b.len[0]), LIT(m1));
    /* an empty message is a message */
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("metrics"), NOSLICE, &eb), 0);
    assert_int_equal(seen_n(&a), 2);
    assert_int_equal(a.len[1], 0);
    assert_int_equal(seen_n(&other_part), 0);
    assert_int_equal(seen_n(&other_table), 0);

    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("tagk"), LIT("k"), &eb), 0);
    assert_int_equal(seen_n(&other_part), 1);
    assert_int_equal(seen_n(&a), 2);

    store_unwatch(wa);
    store_unwatch(wb);
    store_unwatch(wp);
    store_unwatch(wt);
    seen_free(&a);
    seen_free(&b);
    seen_free(&other_part);
    seen_free(&other_table);
}

static void unwatched_hears_nothing(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    seen_t a, b;
    seen_init(&a);
    seen_init(&b);
    /* nobody watches: nothing to wait for */
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("tagv"), LIT("x"), &eb), 0);
    store_watch_t *wa = watch(fx->st, STORE_TABLE_UID, "tagv", &a);
    store_watch_t *wb = watch(fx->st, STORE_TABLE_UID, "tagv", &b);
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("tagv"), LIT("1"), &eb), 0);
    store_unwatch(wa);
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("tagv"), LIT("2"), &eb), 0);
    assert_int_equal(seen_n(&a), 1);
    assert_int_equal(seen_n(&b), 2);
    fx_assert_slice(oct_slice(b.msg[1], b.len[1]), LIT("2"));
    store_unwatch(wb);
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("tagv"), LIT("3"), &eb), 0);
    assert_int_equal(seen_n(&b), 2);
    store_unwatch(NULL);
    seen_free(&a);
    seen_free(&b);
}

#define N_THREADS 4
#define N_EACH    20

typedef struct {
    store_t *st;
    int thread;
    int failures;
} notifier_t;

static void *notifier(void *p)
{
    notifier_t *a = p;
    oct_errbuf_t eb;
    for (int i = 0; i < N_EACH; i++) {
        char m[32];
        snprintf(m, sizeof m, "t%d-%d", a->thread, i);
        if (store_notify(a->st, STORE_TABLE_UID, STR("metrics"), STR(m), &eb)) a->failures++;
    }
    return NULL;
}

static void notifications_from_threads_each_arrive_once(void **state)
{
    fx_t *fx = *state;
    seen_t s;
    seen_init(&s);
    store_watch_t *w = watch(fx->st, STORE_TABLE_UID, "metrics", &s);
    pthread_t th[N_THREADS];
    notifier_t args[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        args[i] = (notifier_t){fx->st, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, notifier, &args[i]), 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(seen_n(&s), N_THREADS * N_EACH);
    /* each (thread, i) exactly once, and one thread's in the order it sent */
    int count[N_THREADS][N_EACH] = {{0}}, last[N_THREADS];
    for (int t = 0; t < N_THREADS; t++)
        last[t] = -1;
    for (size_t k = 0; k < s.n; k++) {
        int t, i;
        s.msg[k][s.len[k]] = '\0';
        assert_int_equal(sscanf(s.msg[k], "t%d-%d", &t, &i), 2);
        assert_in_range(t, 0, N_THREADS - 1);
        assert_in_range(i, 0, N_EACH - 1);
        count[t][i]++;
        assert_true(i > last[t]);
        last[t] = i;
    }
    for (int t = 0; t < N_THREADS; t++)
        for (int i = 0; i < N_EACH; i++)
            assert_int_equal(count[t][i], 1);
    store_unwatch(w);
    seen_free(&s);
}

static void bad_arguments_are_refused(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    seen_t s;
    seen_init(&s);
    store_watch_t *w = NULL;
    assert_int_equal(store_watch(fx->st, STORE_TABLE_UID, NOSLICE, on_msg, &s, &w, &eb),
                     OCT_EINVAL);
    assert_null(w);
    assert_int_equal(store_watch(fx->st, STORE_TABLE_UID, STR("m"), NULL, &s, &w, &eb), OCT_EINVAL);
    size_t big = STORE_NOTIFY_MAX + 1;
    char *m = calloc(1, big);
    assert_int_equal(store_notify(fx->st, STORE_TABLE_UID, STR("m"), oct_slice(m, big), &eb),
                     OCT_EINVAL);
    assert_non_null(strstr(eb.msg, "at most"));
    free(m);
    seen_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(notify_reaches_every_watch_of_its_partition, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(unwatched_hears_nothing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(notifications_from_threads_each_arrive_once, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(bad_arguments_are_refused, fx_setup, fx_teardown),
    };
    return fx_run("test_store_watch", tests, sizeof tests / sizeof tests[0]);
}
