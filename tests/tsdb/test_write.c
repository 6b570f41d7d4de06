/* test_write.c -- the write path against the real store in a temp dir: put /
 * read round trips, ordering, duplicates, tag rules and their texts, the
 * series index, flush + reopen, crash recovery (a child killed with
 * SIGKILL), a torn WAL tail, and 8 concurrent writers. Expected values come
 * from the test's own model of the points written, never from the code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/block.h"
#include "codec/rowkey.h"
#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

extern char **environ;

#define H0 1356998400LL /* 2013-01-01T00:00:00Z, an hour boundary */

typedef struct {
    char *dir;
    tsdb_t *db;
} fx_t;

static tsdb_t *open_db(const char *dir, const char *const *kv)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    for (size_t i = 0; kv && kv[i]; i += 2)
        assert_int_equal(oct_config_set(cfg, kv[i], kv[i + 1], &eb), 0);
    tsdb_t *db = NULL;
    int rc = tsdb_open(cfg, 0, &db, &eb);
    if (rc) fail_msg("tsdb_open: %s", eb.msg);
    oct_config_free(cfg);
    return db;
}

static int setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    fx->dir = tu_tempdir();
    fx->db = open_db(fx->dir, NULL);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    tsdb_close(fx->db);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

static int put_i(tsdb_t *db, const char *m, const char *tags, int64_t ts_ms, int64_t v,
                 oct_errbuf_t *eb)
{
    oct_slice_t t[64];
    tsdb_dp_t dp = {oct_slice_str(m), t, tu_split_tags(tags, t), {ts_ms, {.i = v}, 0}, 0};
    uint64_t seq;
    return tsdb_put(db, &dp, &seq, eb);
}

static int put_f(tsdb_t *db, const char *m, const char *tags, int64_t ts_ms, double v,
                 oct_errbuf_t *eb)
{
    oct_slice_t t[64];
    tsdb_dp_t dp = {oct_slice_str(m), t, tu_split_tags(tags, t), {ts_ms, {.f = v}, 1}, 1};
    uint64_t seq;
    return tsdb_put(db, &dp, &seq, eb);
}

/* TSUID from names, through the UID table (3-byte UIDs, tags by tagk UID). */
static size_t tsuid_of(tsdb_t *db, const char *m, const char *tags, uint8_t *out)
{
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(
        uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)m, strlen(m), &id, &eb), 0);
    oct_put_be_n(out, id, 3);
    oct_slice_t t[64];
    size_t n = tu_split_tags(tags, t);
    uint64_t k[64], v[64];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(
            uid_get_id(tsdb_uids(db), CODEC_UID_TAGK, t[2 * i].ptr, t[2 * i].len, &k[i], &eb), 0);
        assert_int_equal(uid_get_id(tsdb_uids(db), CODEC_UID_TAGV, t[2 * i + 1].ptr,
                                    t[2 * i + 1].len, &v[i], &eb),
                         0);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && k[j - 1] > k[j]; j--) {
            uint64_t a = k[j];
            k[j] = k[j - 1];
            k[j - 1] = a;
            a = v[j];
            v[j] = v[j - 1];
            v[j - 1] = a;
        }
    for (size_t i = 0; i < n; i++) {
        oct_put_be_n(out + 3 + 6 * i, k[i], 3);
        oct_put_be_n(out + 6 + 6 * i, v[i], 3);
    }
    return 3 + 6 * n;
}

static size_t read_all(tsdb_t *db, const char *m, const char *tags, codec_point_t **pts)
{
    uint8_t tsuid[256];
    size_t tl = tsuid_of(db, m, tags, tsuid);
    size_t n;
    oct_errbuf_t eb;
    int rc = tsdb_read_series(db, tsuid, tl, 0, INT64_MAX, pts, &n, &eb);
    if (rc) fail_msg("read: %s", eb.msg);
    return n;
}

/* Number of block cells (qualifier 4F ..) in the data row of an hour. */
static int block_cells(tsdb_t *db, const char *m, const char *tags, int64_t base_s)
{
    uint8_t tsuid[256], key[300];
    size_t tl = tsuid_of(db, m, tags, tsuid);
    codec_rowkey_layout_t rk = {3, 3, 3, 0, 1};
    oct_errbuf_t eb;
    int kl = codec_rowkey_from_tsuid(&rk, tsuid, tl, base_s, key, sizeof key, &eb);
    assert_true(kl > 0);
    store_result_t r = STORE_RESULT_INIT;
    int n = store_get(tsdb_store(db), STORE_TABLE_DATA, oct_slice(key, 7),
                      oct_slice(key, (size_t)kl), oct_slice_str("t"), &r, &eb);
    assert_true(n >= 0);
    int blocks = 0;
    for (size_t i = 0; i < r.n; i++)
        blocks += r.cells[i].qualifier.ptr[0] == 0x4F;
    store_result_free(&r);
    return blocks;
}

static void test_roundtrip(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    /* ints and floats, s and ms, over three hours */
    for (int i = 0; i < 3 * 360; i++)
        assert_int_equal(
            put_i(fx->db, "sys.cpu", "host=a cpu=0", (H0 + i * 10) * 1000, i * 7 - 500, &eb), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(
            put_f(fx->db, "sys.temp", "host=a", H0 * 1000 + i * 3333 + 1, i * 0.25, &eb), 0);
    for (int pass = 0; pass < 3; pass++) {
        codec_point_t *p;
        size_t n = read_all(fx->db, "sys.cpu", "cpu=0 host=a", &p);
        assert_int_equal(n, 3 * 360);
        for (int i = 0; i < 3 * 360; i++) {
            assert_int_equal(p[i].ts_ms, (H0 + i * 10) * 1000);
            assert_int_equal(p[i].is_float, 0);
            assert_int_equal(p[i].val.i, i * 7 - 500);
        }
        free(p);
        n = read_all(fx->db, "sys.temp", "host=a", &p);
        assert_int_equal(n, 1000);
        for (int i = 0; i < 1000; i++) {
            assert_int_equal(p[i].ts_ms, H0 * 1000 + i * 3333 + 1);
            assert_int_equal(p[i].is_float, 1);
            assert_true(p[i].val.f == i * 0.25);
        }
        free(p);
        if (pass == 0) {
            assert_int_equal(tsdb_flush(fx->db, &eb), 0);
            tsdb_stats_t st;
            tsdb_stats(fx->db, &st);
            assert_int_equal(st.head_points, 0);
            assert_int_equal(st.points_accepted, 3 * 360 + 1000);
            assert_int_equal(st.series, 2);
            assert_int_equal(block_cells(fx->db, "sys.cpu", "host=a cpu=0", H0), 1);
        } else if (pass == 1) {
            tsdb_close(fx->db);
            fx->db = open_db(fx->dir, NULL);
        }
    }
    /* a range read */
    uint8_t tsuid[64];
    size_t tl = tsuid_of(fx->db, "sys.cpu", "host=a cpu=0", tsuid), n;
    codec_point_t *p;
    assert_int_equal(
        tsdb_read_series(fx->db, tsuid, tl, (H0 + 3590) * 1000, (H0 + 3620) * 1000, &p, &n, &eb),
        0);
    assert_int_equal(n, 4);
    assert_int_equal(p[0].ts_ms, (H0 + 3590) * 1000);
    assert_int_equal(p[3].ts_ms, (H0 + 3620) * 1000);
    free(p);
}

static void test_out_of_order_and_late(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    /* even seconds descending, then a flush, then odd seconds (late) */
    for (int i = 3598; i >= 0; i -= 2)
        assert_int_equal(put_i(fx->db, "m", "h=x", (H0 + i) * 1000, i, &eb), 0);
    assert_int_equal(tsdb_flush(fx->db, &eb), 0);
    for (int i = 1; i < 3600; i += 2)
        assert_int_equal(put_i(fx->db, "m", "h=x", (H0 + i) * 1000, i, &eb), 0);
    for (int pass = 0; pass < 2; pass++) {
        codec_point_t *p;
        size_t n = read_all(fx->db, "m", "h=x", &p);
        assert_int_equal(n, 3600);
        for (int i = 0; i < 3600; i++) {
            assert_int_equal(p[i].ts_ms, (H0 + i) * 1000);
            assert_int_equal(p[i].val.i, i);
        }
        free(p);
        assert_int_equal(tsdb_flush(fx->db, &eb), 0);
    }
    /* the late points were merged into the one block of the row */
    assert_int_equal(block_cells(fx->db, "m", "h=x", H0), 1);
}

static void dup_case(int fix)
{
    char *dir = tu_tempdir();
    const char *kv[] = {"tsd.storage.fix_duplicates", fix ? "true" : "false", NULL};
    tsdb_t *db = open_db(dir, kv);
    oct_errbuf_t eb;
    assert_int_equal(put_i(db, "d", "h=x", H0 * 1000, 1, &eb), 0);
    assert_int_equal(put_i(db, "d", "h=x", H0 * 1000, 2, &eb), 0); /* in the head */
    assert_int_equal(put_i(db, "d", "h=x", H0 * 1000 + 1000, 10, &eb), 0);
    assert_int_equal(tsdb_flush(db, &eb), 0);
    assert_int_equal(put_i(db, "d", "h=x", H0 * 1000 + 1000, 20, &eb), 0); /* after a flush */
    codec_point_t *p;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = read_all(db, "d", "h=x", &p);
        assert_int_equal(n, 2);
        assert_int_equal(p[0].val.i, fix ? 2 : 1);
        assert_int_equal(p[1].val.i, fix ? 20 : 10);
        free(p);
        assert_int_equal(tsdb_flush(db, &eb), 0);
    }
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.duplicates, 2); /* one in the head, one found at compaction */
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static void test_duplicates(void **state)
{
    (void)state;
    dup_case(0);
    dup_case(1);
}

static void test_tag_rules(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    assert_int_equal(put_i(fx->db, "m", "", H0 * 1000, 1, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "Need at least one tag (metric=m, tags={})");
    assert_int_equal(put_i(fx->db, "m", "a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9", H0 * 1000, 1, &eb),
                     OCT_EINVAL);
    assert_string_equal(eb.msg, "Too many tags: 9 maximum allowed: 8, tags: "
                                "{a=1, b=2, c=3, d=4, e=5, f=6, g=7, h=8, i=9}");
    assert_int_equal(put_i(fx->db, "m", "a=1 a=2", H0 * 1000, 1, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "duplicate tag: a=2, tags={a=1}");
    /* more than any configuration allows: refused on the raw count, before
     * the duplicate scan (which is quadratic), even if most are repeats */
    {
        static oct_slice_t many[600];
        for (int i = 0; i < 300; i++) {
            many[2 * i] = oct_slice_str("k");
            many[2 * i + 1] = oct_slice_str("1");
        }
        tsdb_dp_t dp = {oct_slice_str("m"), many, 300, {H0 * 1000, {.i = 1}, 0}, 0};
        uint64_t seq;
        assert_int_equal(tsdb_put(fx->db, &dp, &seq, &eb), OCT_EINVAL);
        assert_string_equal(eb.msg, "Too many tags: 300 maximum allowed: 8");
    }
    /* the same pair twice is one tag */
    assert_int_equal(put_i(fx->db, "m", "a=1 a=1", H0 * 1000, 5, &eb), 0);
    assert_int_equal(put_i(fx->db, "m", "a=1", H0 * 1000 + 1000, 6, &eb), 0);
    codec_point_t *p;
    assert_int_equal(read_all(fx->db, "m", "a=1", &p), 2);
    free(p);
    assert_int_equal(put_i(fx->db, "bad metric", "a=1", H0 * 1000, 1, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"bad metric\"): illegal character:  ");
    assert_int_equal(put_i(fx->db, "m", "a=b!", H0 * 1000, 1, &eb), OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid tag value with key [a] (\"b!\"): illegal character: !");
    tsdb_stats_t st;
    tsdb_stats(fx->db, &st);
    assert_int_equal(st.points_rejected, 6);
    assert_int_equal(st.points_accepted, 2);
}

typedef struct {
    int n, rc;
    size_t index;
    char msg[512];
} err_seen_t;

static void on_err(void *ctx, size_t index, int rc, const char *msg)
{
    err_seen_t *e = ctx;
    e->n++;
    e->rc = rc;
    e->index = index;
    snprintf(e->msg, sizeof e->msg, "%s", msg);
}

static void test_unknown_metric(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    const char *kv[] = {"tsd.core.auto_create_metrics", "false", NULL};
    tsdb_t *db = open_db(dir, kv);
    oct_errbuf_t eb;
    assert_int_equal(put_i(db, "x", "a=1", H0 * 1000, 1, &eb), OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'metrics': 'x'");
    /* batch: the error callback gets the index, the rest is stored */
    assert_int_equal(uid_get_or_create(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)"y", 1,
                                       &(uint64_t){0}, NULL, &eb),
                     0);
    oct_slice_t t[2] = {oct_slice_str("a"), oct_slice_str("1")};
    tsdb_dp_t dps[3] = {
        {oct_slice_str("y"), t, 1, {H0 * 1000, {.i = 1}, 0}, 0},
        {oct_slice_str("x"), t, 1, {H0 * 1000, {.i = 2}, 0}, 0},
        {oct_slice_str("y"), t, 1, {H0 * 1000 + 1000, {.i = 3}, 0}, 0},
    };
    err_seen_t seen = {0};
    uint64_t seq = 0;
    assert_int_equal(tsdb_put_batch(db, dps, 3, on_err, &seen, &seq, &eb), 2);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.index, 1);
    assert_int_equal(seen.rc, OCT_ENOSUCHNAME);
    assert_string_equal(seen.msg, "No such name for 'metrics': 'x'");
    assert_true(seq > 0);
    assert_int_equal(tsdb_wait_durable(db, seq, 1, 5000, &eb), 0);
    codec_point_t *p;
    assert_int_equal(read_all(db, "y", "a=1", &p), 2);
    assert_int_equal(p[1].val.i, 3);
    free(p);
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

typedef struct {
    uint8_t t[16][64];
    size_t len[16];
    size_t n;
} found_t;

static int collect(void *ctx, const uint8_t *tsuid, size_t len)
{
    found_t *f = ctx;
    memcpy(f->t[f->n], tsuid, len);
    f->len[f->n++] = len;
    return 0;
}

static void test_series_index(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    const char *series[] = {"host=a dc=1", "host=b dc=1", "host=c dc=2", "host=a"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(put_i(fx->db, "cpu", series[i], H0 * 1000, i, &eb), 0);
    assert_int_equal(put_i(fx->db, "mem", "host=a", H0 * 1000, 1, &eb), 0);
    uint64_t cpu, host, dc, a, one;
    uid_registry_t *u = tsdb_uids(fx->db);
    assert_int_equal(uid_get_id(u, CODEC_UID_METRIC, (const uint8_t *)"cpu", 3, &cpu, &eb), 0);
    assert_int_equal(uid_get_id(u, CODEC_UID_TAGK, (const uint8_t *)"host", 4, &host, &eb), 0);
    assert_int_equal(uid_get_id(u, CODEC_UID_TAGK, (const uint8_t *)"dc", 2, &dc, &eb), 0);
    assert_int_equal(uid_get_id(u, CODEC_UID_TAGV, (const uint8_t *)"a", 1, &a, &eb), 0);
    assert_int_equal(uid_get_id(u, CODEC_UID_TAGV, (const uint8_t *)"1", 1, &one, &eb), 0);
    for (int pass = 0; pass < 2; pass++) {
        found_t f = {0};
        assert_int_equal(tsdb_series_find(fx->db, cpu, 0, 0, collect, &f), 0);
        assert_int_equal(f.n, 4);
        for (size_t i = 1; i < f.n; i++) /* TSUID order */
            assert_true(memcmp(f.t[i - 1], f.t[i], 64) < 0);
        memset(&f, 0, sizeof f);
        assert_int_equal(tsdb_series_find(fx->db, cpu, host, a, collect, &f), 0);
        assert_int_equal(f.n, 2);
        memset(&f, 0, sizeof f);
        assert_int_equal(tsdb_series_find(fx->db, cpu, dc, 0, collect, &f), 0);
        assert_int_equal(f.n, 3);
        memset(&f, 0, sizeof f);
        assert_int_equal(tsdb_series_find(fx->db, cpu, dc, one, collect, &f), 0);
        assert_int_equal(f.n, 2);
        uint8_t want[64];
        size_t wl = tsuid_of(fx->db, "cpu", "host=b dc=1", want);
        assert_true((f.len[0] == wl && !memcmp(f.t[0], want, wl)) ||
                    (f.len[1] == wl && !memcmp(f.t[1], want, wl)));
        /* rebuilt at open from the persisted series */
        tsdb_close(fx->db);
        fx->db = open_db(fx->dir, NULL);
    }
}

static int count_cb(void *ctx, const uint8_t *tsuid, size_t len)
{
    (void)tsuid;
    (void)len;
    (*(size_t *)ctx)++;
    return 0;
}

static size_t count_of(tsdb_t *db, const char *m, const char *k, const char *v)
{
    oct_errbuf_t eb;
    uid_registry_t *u = tsdb_uids(db);
    uint64_t mi = 0, ki = 0, vi = 0;
    assert_int_equal(uid_get_id(u, CODEC_UID_METRIC, (const uint8_t *)m, strlen(m), &mi, &eb), 0);
    if (k)
        assert_int_equal(uid_get_id(u, CODEC_UID_TAGK, (const uint8_t *)k, strlen(k), &ki, &eb), 0);
    if (v)
        assert_int_equal(uid_get_id(u, CODEC_UID_TAGV, (const uint8_t *)v, strlen(v), &vi, &eb), 0);
    size_t n = 0;
    assert_int_equal(tsdb_series_find(db, mi, ki, vi, count_cb, &n), 0);
    return n;
}

/* Enough series that the open reads them in several batches on its reader
 * thread (load.c: 256 KB of TSUIDs, ~12,000 of these): every one is back in
 * the index and the TSUID map after a reopen, none twice. */
static void test_series_reload_many(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    enum { HOSTS = 10000, METRICS = 3 };
    static char names[METRICS * HOSTS][48];
    static oct_slice_t tags[METRICS * HOSTS][4];
    static tsdb_dp_t dps[METRICS * HOSTS];
    for (int m = 0; m < METRICS; m++)
        for (int h = 0; h < HOSTS; h++) {
            int i = m * HOSTS + h;
            int n = snprintf(names[i], sizeof names[i],
                             "m%d"
                             "h%05d"
                             "d%d",
                             m, h, h % 7);
            assert_true(n > 0);
            tags[i][0] = oct_slice_str("host");
            tags[i][1] = oct_slice(names[i] + 2, 6);
            tags[i][2] = oct_slice_str("dc");
            tags[i][3] = oct_slice(names[i] + 8, 2);
            dps[i] = (tsdb_dp_t){oct_slice(names[i], 2), tags[i], 2, {H0 * 1000, {.i = i}, 0}, 0};
        }
    assert_int_equal(tsdb_put_batch(fx->db, dps, METRICS * HOSTS, NULL, NULL, NULL, &eb),
                     METRICS * HOSTS);
    /* dc d3 holds the hosts h with h % 7 == 3: 3, 10, .., 9999, (9999 - 3) / 7 + 1 = 1429 */
    for (int pass = 0; pass < 2; pass++) {
        tsdb_stats_t st;
        tsdb_stats(fx->db, &st);
        assert_int_equal(st.series, METRICS * HOSTS);
        for (int m = 0; m < METRICS; m++) {
            char mn[4];
            snprintf(mn, sizeof mn, "m%d", m);
            assert_int_equal(count_of(fx->db, mn, NULL, NULL), HOSTS);
            assert_int_equal(count_of(fx->db, mn, "dc", NULL), HOSTS);
            assert_int_equal(count_of(fx->db, mn, "dc", "d3"), 1429);
            assert_int_equal(count_of(fx->db, mn, "host", "h09999"), 1);
        }
        tsdb_close(fx->db);
        fx->db = open_db(fx->dir, NULL);
    }
    /* the loaded series take puts again without a new one */
    for (int i = 0; i < METRICS * HOSTS; i++)
        dps[i].pt.ts_ms += 1000;
    assert_int_equal(tsdb_put_batch(fx->db, dps, METRICS * HOSTS, NULL, NULL, NULL, &eb),
                     METRICS * HOSTS);
    tsdb_stats_t st;
    tsdb_stats(fx->db, &st);
    assert_int_equal(st.series, METRICS * HOSTS);
    assert_int_equal(st.series_created, 0);
    codec_point_t *pts = NULL;
    assert_int_equal(read_all(fx->db, "m2", "host=h04321 dc=d2", &pts), 2);
    assert_int_equal(pts[0].val.i, 2 * HOSTS + 4321);
    free(pts);
}

static void test_salted(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    const char *kv[] = {"tsd.storage.salt.width", "1", "tsd.storage.salt.buckets", "4", NULL};
    tsdb_t *db = open_db(dir, kv);
    oct_errbuf_t eb;
    const char *hosts[] = {"host=a", "host=b", "host=c", "host=d", "host=e"};
    for (int pass = 0; pass < 3; pass++) {
        for (int h = 0; h < 5 && pass == 0; h++)
            for (int i = 0; i < 800; i++) /* 800 x 10 s: three hours */
                assert_int_equal(
                    put_i(db, "salty", hosts[h], (H0 + i * 10) * 1000, h * 1000 + i, &eb), 0);
        for (int h = 0; h < 5; h++) {
            codec_point_t *p;
            size_t n = read_all(db, "salty", hosts[h], &p);
            assert_int_equal(n, 800);
            for (int i = 0; i < 800; i++)
                assert_int_equal(p[i].val.i, h * 1000 + i);
            free(p);
        }
        if (pass == 0) assert_int_equal(tsdb_flush(db, &eb), 0);
        if (pass == 1) {
            tsdb_close(db);
            db = open_db(dir, kv);
        }
    }
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

/* A row written by OpenTSDB (single cells) read together with our blocks. */
static void test_opentsdb_cells(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    /* creates the series (and its UIDs) */
    assert_int_equal(put_i(fx->db, "old", "h=x", (H0 + 10) * 1000, 10, &eb), 0);
    uint8_t tsuid[64], key[128];
    size_t tl = tsuid_of(fx->db, "old", "h=x", tsuid);
    codec_rowkey_layout_t rk = {3, 3, 3, 0, 1};
    int kl = codec_rowkey_from_tsuid(&rk, tsuid, tl, H0, key, sizeof key, &eb);
    assert_true(kl > 0);
    /* OpenTSDB cells at +0 s (int 5) and +20 s (float 2.5): 2-byte qualifiers */
    uint8_t q0[2] = {0x00, 0x00}, v0[1] = {5};
    uint8_t q1[2] = {0x01, 0x4B}, v1[4] = {0x40, 0x20, 0x00, 0x00}; /* 20 << 4 | 0xB, 2.5f */
    store_op_t ops[2] = {
        {STORE_OP_PUT,
         oct_slice(key, 7),
         {oct_slice(key, (size_t)kl), oct_slice_str("t"), oct_slice(q0, 2), oct_slice(v0, 1)}},
        {STORE_OP_PUT,
         oct_slice(key, 7),
         {oct_slice(key, (size_t)kl), oct_slice_str("t"), oct_slice(q1, 2), oct_slice(v1, 4)}},
    };
    assert_int_equal(store_write(tsdb_store(fx->db), STORE_TABLE_DATA, ops, 2, 0, &eb), 0);
    for (int pass = 0; pass < 2; pass++) {
        codec_point_t *p;
        size_t n = read_all(fx->db, "old", "h=x", &p);
        assert_int_equal(n, 3);
        assert_int_equal(p[0].ts_ms, H0 * 1000);
        assert_int_equal(p[0].val.i, 5);
        assert_int_equal(p[1].ts_ms, (H0 + 10) * 1000);
        assert_int_equal(p[1].val.i, 10);
        assert_int_equal(p[2].ts_ms, (H0 + 20) * 1000);
        assert_int_equal(p[2].is_float, 1);
        assert_true(p[2].val.f == 2.5);
        free(p);
        assert_int_equal(tsdb_flush(fx->db, &eb), 0);
    }
}

/* ---- crash recovery --------------------------------------------------- */

/* Value of point i: deterministic, so the parent knows what to expect. */
static int64_t crash_val(int i)
{
    return (int64_t)i * 31 - 7;
}

#define CRASH_SERIES 10

static int child_crash(const char *dir, int n, int torn)
{
    tsdb_t *db = open_db(dir, NULL);
    oct_errbuf_t eb;
    char tags[32];
    /* batches of 100 points over CRASH_SERIES series; each acknowledged
     * batch (written) is reported to the parent through stdout */
    for (int i = 0; i < n; i += 100) {
        tsdb_dp_t dps[100];
        oct_slice_t t[100][2];
        char tv[100][16];
        for (int j = 0; j < 100; j++) {
            int k = i + j;
            snprintf(tv[j], sizeof tv[j], "%d", k % CRASH_SERIES);
            t[j][0] = oct_slice_str("s");
            t[j][1] = oct_slice_str(tv[j]);
            dps[j] = (tsdb_dp_t){oct_slice_str("crash"),
                                 t[j],
                                 1,
                                 {(H0 + k / CRASH_SERIES) * 1000, {.i = crash_val(k)}, 0},
                                 0};
        }
        uint64_t seq;
        if (tsdb_put_batch(db, dps, 100, NULL, NULL, &seq, &eb) != 100) return 2;
        if (tsdb_wait_durable(db, seq, (i / 100) % 2, -1, &eb)) return 3;
        printf("%d\n", i + 100);
        fflush(stdout);
        if (i + 100 >= n / 2 && (i / 100) % 7 == 3) tsdb_flush(db, &eb) == 0 ? (void)0 : exit(4);
    }
    (void)tags;
    (void)torn;
    raise(SIGKILL);
    return 5;
}

static int run_child(const char *mode, const char *dir, const char *n, char *out, size_t cap)
{
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pfd[0]);
    char *const argv[] = {(char *)"test_write", (char *)mode, (char *)dir, (char *)n, NULL};
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    size_t len = 0;
    ssize_t r;
    while ((r = read(pfd[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = 0;
    close(pfd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFSIGNALED(st) ? 1000 + WTERMSIG(st) : WEXITSTATUS(st);
}

static void check_crash_data(tsdb_t *db, int acked, int *max_found)
{
    /* every acknowledged point exactly once, with its value */
    int total = 0;
    for (int s = 0; s < CRASH_SERIES; s++) {
        char tags[16];
        snprintf(tags, sizeof tags, "s=%d", s);
        codec_point_t *p;
        size_t n = read_all(db, "crash", tags, &p);
        for (size_t i = 0; i < n; i++) {
            int k = (int)(p[i].ts_ms / 1000 - H0) * CRASH_SERIES + s;
            assert_int_equal(p[i].val.i, crash_val(k));
            if (i) assert_true(p[i].ts_ms > p[i - 1].ts_ms);
            if (k > *max_found) *max_found = k;
        }
        /* points of series s with k < acked: all present */
        int want = 0;
        for (int k = s; k < acked; k += CRASH_SERIES)
            want++;
        assert_true((int)n >= want);
        for (int j = 0; j < want; j++)
            assert_int_equal(p[j].ts_ms, (H0 + j) * 1000);
        total += (int)n;
        free(p);
    }
    assert_true(total >= acked);
}

static void test_crash_recovery(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    static char out[1 << 20];
    assert_int_equal(run_child("--child-crash", dir, "20000", out, sizeof out), 1000 + SIGKILL);
    char *last = strrchr(out, '\n');
    assert_non_null(last);
    *last = 0;
    char *prev = strrchr(out, '\n');
    int acked = atoi(prev ? prev + 1 : out);
    assert_int_equal(acked, 20000);
    tsdb_t *db = open_db(dir, NULL);
    int max_found = -1;
    check_crash_data(db, acked, &max_found);
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_true(st.wal_replayed_records > 0);
    /* a second restart (after recovery wrote nothing new) still has it all */
    tsdb_close(db);
    db = open_db(dir, NULL);
    check_crash_data(db, acked, &max_found);
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

/* Newest WAL segment path of dir. */
static void newest_segment(const char *dir, char *out, size_t cap)
{
    char wd[4096];
    snprintf(wd, sizeof wd, "%s/wal", dir);
    DIR *d = opendir(wd);
    assert_non_null(d);
    char best[300] = "";
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".wal") && strcmp(de->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", de->d_name);
    closedir(d);
    assert_true(best[0]);
    snprintf(out, cap, "%s/%s", wd, best);
}

static void test_torn_tail(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    static char out[1 << 20];
    assert_int_equal(run_child("--child-crash", dir, "1000", out, sizeof out), 1000 + SIGKILL);
    char seg[4200];
    newest_segment(dir, seg, sizeof seg);
    struct stat sb;
    assert_int_equal(stat(seg, &sb), 0);
    off_t good = sb.st_size;
    /* a torn record: a plausible header, then garbage, as a crash mid-write leaves */
    int fd = open(seg, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    uint8_t junk[300];
    memset(junk, 0xAB, sizeof junk);
    junk[0] = 0;
    junk[1] = 0;
    junk[2] = 1;
    junk[3] = 0; /* len 256 */
    assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    close(fd);
    tsdb_t *db = open_db(dir, NULL);
    tsdb_stats_t st;
    tsdb_stats(db, &st);
    assert_int_equal(st.wal_torn_bytes, sizeof junk);
    int max_found = -1;
    check_crash_data(db, 1000, &max_found);
    assert_int_equal(max_found, 999);
    tsdb_close(db);
    (void)good;

    /* a record cut in the middle (its CRC no longer matches what is there) */
    assert_int_equal(run_child("--child-crash", dir, "1000", out, sizeof out), 1000 + SIGKILL);
    newest_segment(dir, seg, sizeof seg);
    assert_int_equal(stat(seg, &sb), 0);
    assert_int_equal(truncate(seg, sb.st_size - 5), 0);
    db = open_db(dir, NULL);
    tsdb_stats(db, &st);
    assert_true(st.wal_torn_bytes > 0);
    /* the points of the cut batch (the last 100) may be gone; everything
     * before is present exactly once */
    check_crash_data(db, 900, &max_found);
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

static int count_segments(const char *dir)
{
    char wd[4096];
    snprintf(wd, sizeof wd, "%s/wal", dir);
    DIR *d = opendir(wd);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += strstr(de->d_name, ".wal") != NULL;
    closedir(d);
    return n;
}

/* Segments rotate at tsd.storage.wal.segment_mb and go once flushed. */
static void test_segments(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    const char *kv[] = {"tsd.storage.wal.segment_mb", "1", NULL};
    tsdb_t *db = open_db(dir, kv);
    oct_errbuf_t eb;
    enum { N = 300000, B = 500 };
    tsdb_dp_t dps[B];
    oct_slice_t t[2] = {oct_slice_str("h"), oct_slice_str("x")};
    uint64_t seq = 0;
    for (int i = 0; i < N; i += B) {
        for (int j = 0; j < B; j++)
            dps[j] = (tsdb_dp_t){
                oct_slice_str("seg"), t, 1, {H0 * 1000 + i + j, {.i = (i + j) * 1000003LL}, 0}, 1};
        assert_int_equal(tsdb_put_batch(db, dps, B, NULL, NULL, &seq, &eb), B);
    }
    assert_int_equal(tsdb_wait_durable(db, seq, 1, -1, &eb), 0);
    /* 300,000 points of ~10 bytes: at least 3 segments of 1 MiB */
    assert_true(count_segments(dir) >= 3);
    assert_int_equal(tsdb_flush(db, &eb), 0);
    assert_int_equal(count_segments(dir), 1); /* only the one being written */
    tsdb_close(db);
    assert_int_equal(count_segments(dir), 0); /* a clean close leaves no log */
    db = open_db(dir, kv);
    codec_point_t *p;
    assert_int_equal(read_all(db, "seg", "h=x", &p), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(p[i].ts_ms, H0 * 1000 + i);
        assert_int_equal(p[i].val.i, i * 1000003LL);
    }
    free(p);
    tsdb_close(db);
    tu_rmrf(dir);
    free(dir);
}

/* ---- concurrency ------------------------------------------------------ */

#define THREADS    8
#define PER_THREAD 100000
#define TSERIES    50

typedef struct {
    tsdb_t *db;
    int t;
    long accepted;
} thr_arg_t;

static void *writer(void *arg)
{
    thr_arg_t *a = arg;
    char tv[TSERIES][8];
    char thr[8];
    snprintf(thr, sizeof thr, "%d", a->t);
    for (int s = 0; s < TSERIES; s++)
        snprintf(tv[s], sizeof tv[s], "%d", s);
    enum { B = 250 };
    tsdb_dp_t dps[B];
    oct_slice_t tags[B][4];
    for (int i = 0; i < PER_THREAD; i += B) {
        for (int j = 0; j < B; j++) {
            int k = i + j, s = k % TSERIES;
            tags[j][0] = oct_slice_str("thread");
            tags[j][1] = oct_slice_str(thr);
            tags[j][2] = oct_slice_str("s");
            tags[j][3] = oct_slice_str(tv[s]);
            dps[j] = (tsdb_dp_t){
                oct_slice_str("conc"), tags[j], 2, {(H0 + k / TSERIES) * 1000, {.i = k}, 0}, 0};
        }
        uint64_t seq;
        oct_errbuf_t eb;
        long r = tsdb_put_batch(a->db, dps, B, NULL, NULL, &seq, &eb);
        if (r > 0) a->accepted += r;
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    fx_t *fx = *state;
    pthread_t th[THREADS];
    thr_arg_t args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (thr_arg_t){fx->db, t, 0};
        pthread_create(&th[t], NULL, writer, &args[t]);
    }
    /* a flush racing the writers */
    oct_errbuf_t eb;
    assert_int_equal(tsdb_flush(fx->db, &eb), 0);
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(args[t].accepted, PER_THREAD);
    }
    for (int pass = 0; pass < 2; pass++) {
        long total = 0;
        for (int t = 0; t < THREADS; t++)
            for (int s = 0; s < TSERIES; s++) {
                char tags[32];
                snprintf(tags, sizeof tags, "thread=%d s=%d", t, s);
                codec_point_t *p;
                size_t n = read_all(fx->db, "conc", tags, &p);
                assert_int_equal(n, PER_THREAD / TSERIES);
                for (size_t i = 0; i < n; i++) {
                    assert_int_equal(p[i].ts_ms, (H0 + (int64_t)i) * 1000);
                    assert_int_equal(p[i].val.i, (int64_t)i * TSERIES + s);
                }
                total += (long)n;
                free(p);
            }
        assert_int_equal(total, (long)THREADS * PER_THREAD);
        if (pass == 0) {
            tsdb_close(fx->db);
            fx->db = open_db(fx->dir, NULL);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child-crash") == 0)
        return child_crash(argv[2], atoi(argv[3]), 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order_and_late, setup, teardown),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test_setup_teardown(test_tag_rules, setup, teardown),
        cmocka_unit_test(test_unknown_metric),
        cmocka_unit_test_setup_teardown(test_series_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_reload_many, setup, teardown),
        cmocka_unit_test(test_salted),
        cmocka_unit_test(test_segments),
        cmocka_unit_test_setup_teardown(test_opentsdb_cells, setup, teardown),
        cmocka_unit_test(test_crash_recovery),
        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
