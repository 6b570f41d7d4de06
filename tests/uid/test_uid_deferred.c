/* test_uid_deferred.c -- the write path's UID calls: deferred (unsynced)
 * assignment, the batch that assigns a chunk's new names in one CAS, the
 * sync that makes them durable, and the test WAL replay uses to recognise an
 * assignment a power loss took. Over the real RocksDB store in a temp dir.
 * Expected UIDs come from the sequential rule (counter + 1, per kind, in
 * order of first appearance), worked out by hand in each test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "uid/uid.h"
#include "uid_fixture.h"

#define S(x) (const uint8_t *)(x), strlen(x)

static oct_slice_t sl(const char *s)
{
    return oct_slice((const uint8_t *)s, strlen(s));
}

static uint64_t id_of(uid_registry_t *r, codec_uid_kind_t k, const char *name)
{
    oct_errbuf_t eb;
    uint64_t id = 0;
    if (uid_get_id(r, k, S(name), &id, &eb)) fail_msg("get %s: %s", name, eb.msg);
    return id;
}

static void batch_assigns_in_first_appearance_order(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t id;
    /* "old" exists already: tagv UID 1 */
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S("old"), &id, NULL, &eb), 0);
    assert_int_equal(id, 1);
    const char *in[] = {"web02", "old", "web01", "web02", "db", "web01"};
    oct_slice_t names[6];
    for (int i = 0; i < 6; i++)
        names[i] = sl(in[i]);
    uint64_t ids[6];
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names, 6, ids, &eb), 0);
    /* new names in order of first appearance: web02 2, web01 3, db 4 */
    uint64_t want[6] = {2, 1, 3, 2, 4, 3};
    for (int i = 0; i < 6; i++)
        assert_int_equal(ids[i], want[i]);
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    assert_int_equal(c, 4);
    /* both directions stored, bypassing the cache */
    uid_drop_caches(fx->r);
    assert_int_equal(id_of(fx->r, CODEC_UID_TAGV, "web01"), 3);
    uint8_t buf[16];
    size_t len;
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_TAGV, 4, buf, sizeof buf, &len, &eb), 0);
    assert_memory_equal(buf, "db", 2);
    assert_int_equal(len, 2);
    /* the other kinds' counters are untouched */
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGK, &c, &eb), 0);
    assert_int_equal(c, 0);
}

static void batch_refuses_bad_names_and_unknown_metrics(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    oct_slice_t names[2] = {sl("ok"), sl("bad name")};
    uint64_t ids[2];
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names, 2, ids, &eb),
                     OCT_EBADNAME);
    /* nothing assigned: the batch is all or nothing */
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    assert_int_equal(c, 0);
    /* metrics are not auto-created by default */
    oct_slice_t m[2] = {sl("sys.cpu"), sl("sys.mem")};
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_METRIC, m, 2, ids, &eb),
                     OCT_ENOSUCHNAME);
    /* peek: a valid unknown name is 0 (to be created), a bad one an error */
    uint64_t id = 99;
    assert_int_equal(uid_peek_for_write(fx->r, CODEC_UID_TAGV, S("fresh"), &id, &eb), 0);
    assert_int_equal(id, 0);
    assert_int_equal(uid_peek_for_write(fx->r, CODEC_UID_TAGV, S("bad name"), &id, &eb),
                     OCT_EBADNAME);
    assert_int_equal(uid_peek_for_write(fx->r, CODEC_UID_METRIC, S("sys.cpu"), &id, &eb),
                     OCT_ENOSUCHNAME);
}

static void deferred_assignments_sync_once(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(uid_deferred_syncs(fx->r), 0);
    assert_int_equal(uid_sync_deferred(fx->r, &eb), 0); /* nothing to do */
    assert_int_equal(uid_resolve_for_write_deferred(fx->r, CODEC_UID_TAGK, S("host"), &id, &eb), 0);
    assert_int_equal(id, 1);
    oct_slice_t names[3] = {sl("a"), sl("b"), sl("c")};
    uint64_t ids[3];
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names, 3, ids, &eb), 0);
    assert_int_equal(uid_deferred_syncs(fx->r), 0);
    assert_int_equal(uid_sync_deferred(fx->r, &eb), 1);
    assert_int_equal(uid_deferred_syncs(fx->r), 1);
    assert_int_equal(uid_sync_deferred(fx->r, &eb), 0);
    /* known names assign nothing, so there is nothing to sync */
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names, 3, ids, &eb), 0);
    assert_int_equal(uid_sync_deferred(fx->r, &eb), 0);
    /* a synced assignment (the API's) leaves nothing deferred behind */
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S("d"), &id, NULL, &eb), 0);
    assert_int_equal(id, 4);
    assert_int_equal(uid_sync_deferred(fx->r, &eb), 0);
    assert_int_equal(uid_deferred_syncs(fx->r), 1);
}

static void lost_assignment_is_above_the_counter_without_a_name(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S("a"), &id, NULL, &eb), 0);
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S("b"), &id, NULL, &eb), 0);
    assert_int_equal(uid_delete(fx->r, CODEC_UID_TAGV, S("a"), &eb), 0);
    /* counter 2: UID 1 deleted, 2 named, 3 never assigned (as if lost) */
    assert_int_equal(uid_lost_assignment(fx->r, CODEC_UID_TAGV, 1, &eb), 0);
    assert_int_equal(uid_lost_assignment(fx->r, CODEC_UID_TAGV, 2, &eb), 0);
    assert_int_equal(uid_lost_assignment(fx->r, CODEC_UID_TAGV, 3, &eb), 1);
    /* another kind with no counter yet: everything is lost */
    assert_int_equal(uid_lost_assignment(fx->r, CODEC_UID_TAGK, 1, &eb), 1);
}

#define N_THREADS 4
#define N_NAMES   3000
#define PER_BATCH 100

typedef struct {
    uid_registry_t *r;
    int t;
    uint64_t ids[N_NAMES];
    int failures;
} racer_t;

/* Each thread resolves every name, in batches, starting at a different
 * offset, so that the threads keep assigning names the others want too. */
static void *racer(void *p)
{
    racer_t *a = p;
    oct_errbuf_t eb;
    char(*buf)[16] = malloc(sizeof(char[16]) * PER_BATCH);
    oct_slice_t names[PER_BATCH];
    uint64_t ids[PER_BATCH];
    for (int b = 0; b < N_NAMES / PER_BATCH; b++) {
        int base = ((b + a->t * 7) % (N_NAMES / PER_BATCH)) * PER_BATCH;
        for (int i = 0; i < PER_BATCH; i++) {
            snprintf(buf[i], 16, "n%05d", base + i);
            names[i] = sl(buf[i]);
        }
        if (uid_resolve_batch_deferred(a->r, CODEC_UID_TAGV, names, PER_BATCH, ids, &eb)) {
            a->failures++;
            continue;
        }
        for (int i = 0; i < PER_BATCH; i++)
            a->ids[base + i] = ids[i];
    }
    free(buf);
    return NULL;
}

static void racing_batches_give_one_uid_per_name_without_gaps(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    static racer_t rs[N_THREADS];
    pthread_t th[N_THREADS];
    /* one single-name writer too, on a name the batches also assign */
    for (int t = 0; t < N_THREADS; t++) {
        memset(&rs[t], 0, sizeof rs[t]);
        rs[t].r = fx->r;
        rs[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, racer, &rs[t]), 0);
    }
    uint64_t single;
    assert_int_equal(
        uid_resolve_for_write_deferred(fx->r, CODEC_UID_TAGV, S("n01234"), &single, &eb), 0);
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(th[t], NULL);
    uint8_t *seen = calloc(N_NAMES + 1, 1);
    for (int t = 0; t < N_THREADS; t++) {
        assert_int_equal(rs[t].failures, 0);
        for (int i = 0; i < N_NAMES; i++)
            assert_int_equal(rs[t].ids[i], rs[0].ids[i]); /* every thread agrees */
    }
    for (int i = 0; i < N_NAMES; i++) {
        uint64_t id = rs[0].ids[i];
        assert_true(id >= 1 && id <= N_NAMES);
        assert_int_equal(seen[id], 0); /* no UID twice */
        seen[id] = 1;
    }
    free(seen);
    assert_int_equal(single, rs[0].ids[1234]);
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    assert_int_equal(c, N_NAMES); /* no gaps, none leaked */
    uid_fsck_stats_t st;
    uid_fsck_opts_t fo = {0};
    assert_int_equal(uid_fsck(fx->r, &fo, NULL, NULL, &st, &eb), 0);
    assert_int_equal(st.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(batch_assigns_in_first_appearance_order, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(batch_refuses_bad_names_and_unknown_metrics, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(deferred_assignments_sync_once, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(lost_assignment_is_above_the_counter_without_a_name,
                                        fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(racing_batches_give_one_uid_per_name_without_gaps, fx_setup,
                                        fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
