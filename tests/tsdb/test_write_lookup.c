/* test_write_lookup.c -- the write path's text -> series map: the same
 * series named with its tags in any order (and in orders that change from
 * put to put, so the learned tag-order hint is wrong half the time) is one
 * series; names that differ only in where a key ends and its value begins,
 * in one byte, or in length are different series. A model in the test keeps
 * the distinct series (metric + sorted tags) and the points each received;
 * the database must report the same number of series, and every series read
 * back must hold exactly the model's points. Batches go through
 * tsdb_put_batch so that several points of one chunk share a lookup pass.
 * A second case has four threads write the same eight series at once, each
 * in its own tag order (the shared hints flip between them) and with its
 * own timestamps, so that the head inserts of different threads meet on
 * the same series: every point must arrive exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

#define H0     1356998400LL
#define NSER   6
#define ROUNDS 40

/* Each series as tag pairs; the puts permute them. The names are chosen to
 * collide in the ways a careless comparison would confuse:
 * "ab"="c" vs "a"="bc", one byte different at the end of a 20-byte value,
 * a value that is a prefix of another. */
typedef struct {
    const char *metric;
    int n;
    const char *kv[8][2];
} ser_t;

static const ser_t series[NSER] = {
    {"sys.cpu", 2, {{"ab", "c"}, {"host", "web01"}}},
    {"sys.cpu", 2, {{"a", "bc"}, {"host", "web01"}}},
    {"sys.cpu", 3, {{"host", "web01"}, {"dc", "0123456789abcdefghij"}, {"x", "1"}}},
    {"sys.cpu", 3, {{"host", "web01"}, {"dc", "0123456789abcdefghik"}, {"x", "1"}}},
    {"sys.cpu", 3, {{"host", "web0"}, {"dc", "0123456789abcdefghij"}, {"x", "1"}}},
    {"sys.cpux",
     8,
     {{"t1", "a"},
      {"t2", "b"},
      {"t3", "c"},
      {"t4", "d"},
      {"t5", "e"},
      {"t6", "f"},
      {"t7", "g"},
      {"t8", "h"}}},
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Reads back series metric{kv[0..n)} (names resolved through the UID
 * table, TSUID sorted by tagk UID as OpenTSDB builds it). */
static size_t read_series(tsdb_t *db, const char *metric, int nt, const char *const (*kv)[2],
                          codec_point_t **p)
{
    oct_errbuf_t eb;
    uint64_t mid;
    assert_int_equal(uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)metric,
                                strlen(metric), &mid, &eb),
                     0);
    uint64_t k[8], v[8];
    for (int j = 0; j < nt; j++) {
        assert_int_equal(uid_get_id(tsdb_uids(db), CODEC_UID_TAGK, (const uint8_t *)kv[j][0],
                                    strlen(kv[j][0]), &k[j], &eb),
                         0);
        assert_int_equal(uid_get_id(tsdb_uids(db), CODEC_UID_TAGV, (const uint8_t *)kv[j][1],
                                    strlen(kv[j][1]), &v[j], &eb),
                         0);
    }
    for (int a = 1; a < nt; a++) /* TSUID order: by tagk UID */
        for (int j = a; j > 0 && k[j - 1] > k[j]; j--) {
            uint64_t t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
            t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    uint8_t tsuid[64];
    oct_put_be_n(tsuid, mid, 3);
    for (int j = 0; j < nt; j++) {
        oct_put_be_n(tsuid + 3 + 6 * j, k[j], 3);
        oct_put_be_n(tsuid + 6 + 6 * j, v[j], 3);
    }
    size_t n;
    assert_int_equal(tsdb_read_series(db, tsuid, 3 + 6 * (size_t)nt, 0, INT64_MAX, p, &n, &eb), 0);
    return n;
}

static void write_lookup_any_order(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    tsdb_t *db = NULL;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("tsdb_open: %s", eb.msg);

    /* every round: each series once, in a random tag order, the series in
     * a random order; one batch per round */
    static oct_slice_t tags[NSER][16];
    tsdb_dp_t dps[NSER];
    long model[NSER] = {0};
    for (int r = 0; r < ROUNDS; r++) {
        int order[NSER];
        for (int i = 0; i < NSER; i++)
            order[i] = i;
        for (int i = NSER - 1; i > 0; i--) {
            int j = (int)(next_rand() % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int b = 0; b < NSER; b++) {
            const ser_t *s = &series[order[b]];
            int perm[8];
            for (int i = 0; i < s->n; i++)
                perm[i] = i;
            /* even rounds keep the declared order, odd ones shuffle */
            for (int i = s->n - 1; i > 0 && (r & 1); i--) {
                int j = (int)(next_rand() % (uint64_t)(i + 1)), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            for (int i = 0; i < s->n; i++) {
                tags[b][2 * i] = oct_slice_str(s->kv[perm[i]][0]);
                tags[b][2 * i + 1] = oct_slice_str(s->kv[perm[i]][1]);
            }
            tsdb_dp_t dp = {oct_slice_str(s->metric),
                            tags[b],
                            (size_t)s->n,
                            {(H0 + r) * 1000, {.i = order[b] * 1000 + r}, 0},
                            0};
            dps[b] = dp;
            model[order[b]]++;
        }
        uint64_t seq;
        assert_int_equal(tsdb_put_batch(db, dps, NSER, NULL, NULL, &seq, &eb), NSER);
    }
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.series, NSER);
    assert_int_equal(st.points_accepted, NSER * ROUNDS);
    assert_int_equal(st.duplicates, 0);

    /* each series holds its own points: values order*1000 + round */
    for (int i = 0; i < NSER; i++) {
        const ser_t *s = &series[i];
        codec_point_t *p;
        size_t n = read_series(db, s->metric, s->n, s->kv, &p);
        assert_int_equal(n, model[i]);
        for (size_t j = 0; j < n; j++) {
            assert_true(p[j].ts_ms == (H0 + (int64_t)j) * 1000);
            assert_int_equal(p[j].val.i, i * 1000 + (int64_t)j);
        }
        free(p);
    }
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

#define CT_THREADS 4
#define CT_SERIES  8
#define CT_ROUNDS  300

typedef struct {
    tsdb_t *db;
    int t;
    long accepted;
} ct_arg_t;

static void *ct_writer(void *arg)
{
    ct_arg_t *a = arg;
    static const char *const keys[3] = {"host", "dc", "rack"};
    char vals[CT_SERIES][16];
    for (int s = 0; s < CT_SERIES; s++)
        snprintf(vals[s], sizeof vals[s], "h%d", s);
    oct_slice_t tags[CT_SERIES][6];
    tsdb_dp_t dps[CT_SERIES];
    for (int r = 0; r < CT_ROUNDS; r++) {
        for (int s = 0; s < CT_SERIES; s++) {
            /* thread t rotates the tag order by t */
            for (int i = 0; i < 3; i++) {
                int k = (i + a->t) % 3;
                tags[s][2 * i] = oct_slice_str(keys[k]);
                tags[s][2 * i + 1] = oct_slice_str(k == 0 ? vals[s] : k == 1 ? "dc1" : "r1");
            }
            /* timestamps: thread t owns ms offset t within each second */
            int64_t ts = (H0 + r) * 1000 + a->t;
            tsdb_dp_t dp = {oct_slice_str("conc.m"), tags[s], 3, {ts, {.i = r}, 0}, 1};
            dps[(s + a->t) % CT_SERIES] = dp; /* and the series order too */
        }
        oct_errbuf_t eb;
        uint64_t seq;
        long n = tsdb_put_batch(a->db, dps, CT_SERIES, NULL, NULL, &seq, &eb);
        if (n > 0) a->accepted += n;
    }
    return NULL;
}

static void write_lookup_concurrent_same_series(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    tsdb_t *db = NULL;
    if (tsdb_open(cfg, 0, &db, &eb)) fail_msg("tsdb_open: %s", eb.msg);
    pthread_t th[CT_THREADS];
    ct_arg_t args[CT_THREADS];
    for (int t = 0; t < CT_THREADS; t++) {
        args[t] = (ct_arg_t){db, t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, ct_writer, &args[t]), 0);
    }
    for (int t = 0; t < CT_THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(args[t].accepted, CT_SERIES * CT_ROUNDS);
    }
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.series, CT_SERIES);
    assert_int_equal(st.points_accepted, CT_THREADS * CT_SERIES * CT_ROUNDS);
    assert_int_equal(st.duplicates, 0);
    /* every series holds each thread's CT_ROUNDS points, in time order */
    for (int s = 0; s < CT_SERIES; s++) {
        char host[16];
        snprintf(host, sizeof host, "h%d", s);
        const char *const kv[3][2] = {{"host", host}, {"dc", "dc1"}, {"rack", "r1"}};
        codec_point_t *p;
        size_t n = read_series(db, "conc.m", 3, kv, &p);
        assert_int_equal(n, CT_THREADS * CT_ROUNDS);
        for (size_t j = 0; j < n; j++) {
            int64_t r = (int64_t)(j / CT_THREADS), t = (int64_t)(j % CT_THREADS);
            assert_true(p[j].ts_ms == (H0 + r) * 1000 + t);
            assert_int_equal(p[j].val.i, r);
        }
        free(p);
    }
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_lookup_any_order),
        cmocka_unit_test(write_lookup_concurrent_same_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
