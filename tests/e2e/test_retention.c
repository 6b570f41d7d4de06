/* test_retention.c -- retention by data time over the real daemon
 * (docs/retention.md): points written over the hours before now, with
 * timestamps relative to now; queries show exactly the hours at or after
 * each rule's cut at once (points still in memory included), per metric
 * prefix (longest wins, 0 = forever) and per rollup table apart from raw;
 * an expiry pass (the TSD's own, in the background) removes exactly the
 * expired partitions from the store (listed from the stopped data dir)
 * and the bytes on disk fall with them; a restart keeps them gone; bad
 * rules stop start-up. Expectations come from a model of what the test
 * wrote and the hour it is now (hand arithmetic), never from the code
 * under test. An hour may turn while the test runs: each check accepts the
 * model of the hour before or after it (and a query is repeated when the
 * hour turned during it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "store/store.h"
#include "tsdb/maint.h"
#include "tsdb/tsdb_int.h"

#define HOURS     12 /* hours written before the current one: k = 1..HOURS */
#define PER_HOUR  10 /* points per hour of the small series */
#define BIG_N     40 /* series of big.x */
#define BIG_PER_H 120

static long long hour_now(void)
{
    long long s = (long long)time(NULL);
    return s - s % 3600;
}

/* ---- the model ---------------------------------------------------------------- */

/* The series this test writes; keep_h = the retention its rules give. */
static const struct {
    const char *metric, *tags, *m_q; /* m_q: the series in a query's m= */
    int keep_h;                      /* 0 = forever */
} g_series[] = {
    {"m.a", "host=a", "m.a{host=a}", 6},           /* raw = 6h */
    {"m.a", "host=b", "m.a{host=b}", 6},           /* raw = 6h */
    {"keep.b", "host=a", "keep.b{host=a}", 0},     /* metric.keep. = 0 */
    {"short.c", "host=a", "short.c{host=a}", 2},   /* metric.short. = 2h */
    {"short.cx", "host=a", "short.cx{host=a}", 1}, /* metric.short.cx = 1h: longest wins */
};
#define N_SERIES (sizeof g_series / sizeof *g_series)
static const char *const g_metrics[] = {"m.a", "keep.b", "short.c", "short.cx", "big.x"};
static const int g_metric_keep[] = {6, 0, 2, 1, 6};
#define N_METRICS 5

static long long g_h0; /* the hour the points were written relative to */

static long long base_k(int k)
{
    return g_h0 - 3600LL * k;
}
static long long val_of(int s, int k, int j)
{
    return (long long)s * 100000 + k * 100 + j;
}

/* Is hour base b visible at hour h under keep_h? */
static int visible(long long b, long long h, int keep_h)
{
    return keep_h == 0 || b >= h - 3600LL * keep_h;
}

/* ---- helpers ------------------------------------------------------------------ */

static tu_tsd_t g_t;

static void put_body(const char *body)
{
    char *r = ac_req_ok(&g_t, "POST", "/api/put?sync=true", body, 204);
    free(r);
}

static void write_points(void)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    int n = 0;
    oct_strbuf_puts(&sb, "[");
    for (size_t s = 0; s < N_SERIES; s++)
        for (int k = 1; k <= HOURS; k++)
            for (int j = 0; j < PER_HOUR; j++) {
                const char *eq = strchr(g_series[s].tags, '=');
                oct_strbuf_printf(&sb,
                                  "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,"
                                  "\"tags\":{\"%.*s\":\"%s\"}}",
                                  n++ ? "," : "", g_series[s].metric, base_k(k) + 60LL * j,
                                  val_of((int)s, k, j), (int)(eq - g_series[s].tags),
                                  g_series[s].tags, eq + 1);
            }
    oct_strbuf_puts(&sb, "]");
    put_body(sb.ptr);
    oct_strbuf_free(&sb);
    /* big.x: enough bytes for the disk figures; noisy values, 30 s apart */
    unsigned seed = 7;
    for (int s = 0; s < BIG_N; s++) {
        oct_strbuf_t b = OCT_STRBUF_INIT;
        n = 0;
        oct_strbuf_puts(&b, "[");
        for (int k = 1; k <= HOURS; k++)
            for (int j = 0; j < BIG_PER_H; j++) {
                seed = seed * 1103515245u + 12345u;
                oct_strbuf_printf(&b,
                                  "%s{\"metric\":\"big.x\",\"timestamp\":%lld,\"value\":%u,"
                                  "\"tags\":{\"s\":\"%d\"}}",
                                  n++ ? "," : "", base_k(k) + 30LL * j, seed >> 8, s);
            }
        oct_strbuf_puts(&b, "]");
        put_body(b.ptr);
        oct_strbuf_free(&b);
    }
}

/* The text of sb (malloc'd, "" when empty); frees sb. */
static char *sb_take(oct_strbuf_t *sb)
{
    char *out = strdup(sb->ptr ? sb->ptr : "");
    oct_strbuf_free(sb);
    return out;
}

/* The dps of one series, as "ts=v ts=v ..." in time order ("" if none). */
static char *query_dps(const char *m_q, long long start)
{
    char target[512];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:%s", start, g_h0 + 7200,
             m_q);
    char *r = ac_req_ok(&g_t, "GET", target, NULL, 200);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&a, r, strlen(r), 0, &v, &eb) || v->type != JSON_ARRAY || v->n > 1)
        fail_msg("%s: not one series: %s", m_q, r);
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    if (v->n == 1) {
        const json_value_t *dps = json_obj_get(v->child, "dps");
        for (const json_value_t *d = dps ? dps->child : NULL; d; d = d->next) {
            double x;
            if (json_number_double(d, &x) || x != (double)(long long)x)
                fail_msg("%s: not an integer in %s", m_q, r);
            oct_strbuf_printf(&sb, "%.*s=%lld ", (int)d->key_len, d->key, (long long)x);
        }
    }
    json_arena_free(&a);
    free(r);
    return sb_take(&sb);
}

/* The model's dps of series s at hour h. */
static char *model_dps(size_t s, long long h)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    for (int k = HOURS; k >= 1; k--)
        if (visible(base_k(k), h, g_series[s].keep_h))
            for (int j = 0; j < PER_HOUR; j++)
                oct_strbuf_printf(&sb, "%lld=%lld ", base_k(k) + 60LL * j, val_of((int)s, k, j));
    return sb_take(&sb);
}

/* Every series answers exactly its model's points (the query repeated if
 * the hour turned while it ran). */
static void check_queries(const char *when)
{
    for (size_t s = 0; s < N_SERIES; s++) {
        for (int attempt = 0;; attempt++) {
            long long h1 = hour_now();
            char *got = query_dps(g_series[s].m_q, g_h0 - 3600LL * (HOURS + 6));
            long long h2 = hour_now();
            if (h1 != h2 && attempt < 2) {
                free(got);
                continue;
            }
            char *want = model_dps(s, h2);
            if (strcmp(got, want) != 0)
                fail_msg("%s: %s: got\n  %s\nwant\n  %s", when, g_series[s].m_q, got, want);
            free(got);
            free(want);
            break;
        }
    }
}

/* Expired data-table partitions at hour h (one per metric and hour). */
static long long model_expired(long long h)
{
    long long n = 0;
    for (int m = 0; m < N_METRICS; m++)
        for (int k = 1; k <= HOURS; k++)
            n += !visible(base_k(k), h, g_metric_keep[m]);
    return n;
}

static long long stat_value(const char *metric, const char *tag_v)
{
    char *r = ac_req_ok(&g_t, "GET", "/api/stats", NULL, 200);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(&a, r, strlen(r), 0, &v, &eb) || v->type != JSON_ARRAY)
        fail_msg("/api/stats: %s", r);
    long long out = -1;
    for (const json_value_t *e = v->child; e; e = e->next) {
        const json_value_t *m = json_obj_get(e, "metric"), *val = json_obj_get(e, "value"),
                           *tags = json_obj_get(e, "tags");
        const json_value_t *tv = tags ? json_obj_get(tags, "table") : NULL;
        if (!m || m->len != strlen(metric) || memcmp(m->str, metric, m->len) != 0) continue;
        if (tag_v && (!tv || tv->len != strlen(tag_v) || memcmp(tv->str, tag_v, tv->len) != 0))
            continue;
        out = strtoll(val->str, NULL, 10);
    }
    json_arena_free(&a);
    free(r);
    return out;
}

/* The integer after "key": in body, or -1. */
static long long num_after(const char *body, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(body, k);
    return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static long long compact_after(void)
{
    char *r = ac_req_ok(&g_t, "POST", "/api/octsdb/compact", NULL, 200);
    long long v = num_after(r, "after");
    if (v < 0) fail_msg("compact: %s", r);
    free(r);
    return v;
}

/* The rules of raw_and_metric_rules, as --set flags. */
#define RULES                                                                                      \
    "--set", "tsd.storage.retention.raw=6h", "--set", "tsd.storage.retention.metric.keep.=0",      \
        "--set", "tsd.storage.retention.metric.short.=2h", "--set",                                \
        "tsd.storage.retention.metric.short.cx=1h"
static const char *g_args_manual[] = {"--auto-metric", RULES, NULL};
static const char *g_args_bg[] = {"--auto-metric", RULES, "--set",
                                  "tsd.storage.retention.interval_ms=200", NULL};

typedef struct {
    uint64_t metric[N_METRICS];
    long long hours[N_METRICS][HOURS + 2];
    int n[N_METRICS];
    int other;
} parts_t;

static int collect(void *ctx, oct_slice_t part)
{
    parts_t *p = ctx;
    if (part.len != 7) {
        p->other++;
        return 0;
    }
    uint64_t m = oct_get_be_n(part.ptr, 3);
    for (int i = 0; i < N_METRICS; i++)
        if (p->metric[i] == m && p->n[i] < HOURS + 2)
            p->hours[i][p->n[i]++] = (long long)oct_get_be32(part.ptr + 3);
    return 0;
}

/* The data table of the stopped daemon holds exactly the visible hours of
 * each metric at hour h. Returns 1 if so, 0 if not (why in msg). */
static int store_matches(tsdb_t *db, long long h, char *msg, size_t cap)
{
    parts_t p;
    memset(&p, 0, sizeof p);
    oct_errbuf_t eb;
    for (int i = 0; i < N_METRICS; i++)
        if (uid_get_id(tsdb_uids(db), CODEC_UID_METRIC, (const uint8_t *)g_metrics[i],
                       strlen(g_metrics[i]), &p.metric[i], &eb))
            fail_msg("uid %s: %s", g_metrics[i], eb.msg);
    if (store_part_list(tsdb_store(db), STORE_TABLE_DATA, oct_slice(NULL, 0), oct_slice(NULL, 0),
                        collect, &p, &eb))
        fail_msg("part_list: %s", eb.msg);
    for (int i = 0; i < N_METRICS; i++) {
        int want = 0;
        for (int k = HOURS; k >= 1; k--) {
            if (!visible(base_k(k), h, g_metric_keep[i])) continue;
            if (want >= p.n[i] || p.hours[i][want] != base_k(k)) {
                snprintf(msg, cap, "%s: hour %lld missing or out of place (%d stored)",
                         g_metrics[i], base_k(k), p.n[i]);
                return 0;
            }
            want++;
        }
        if (want != p.n[i]) {
            snprintf(msg, cap, "%s: %d hours stored, want %d", g_metrics[i], p.n[i], want);
            return 0;
        }
    }
    return 1;
}

/* ---- tests -------------------------------------------------------------------- */

static void raw_and_metric_rules(void **state)
{
    (void)state;
    memset(&g_t, 0, sizeof g_t);
    /* a long interval: the background pass runs at start only (on nothing) */
    if (tu_tsd_start(&g_t, g_args_manual)) fail_msg("start");
    long long h_start = hour_now();
    g_h0 = h_start;
    write_points();
    /* at once: the points are still in memory, and every series shows its
     * hours at or after the cut only */
    check_queries("in memory");
    char *r = ac_req_ok(&g_t, "POST", "/api/octsdb/flush", NULL, 204);
    free(r);
    check_queries("flushed");
    long long s1 = compact_after();

    /* what a pass would drop, without dropping it */
    r = ac_req_ok(&g_t, "POST", "/api/octsdb/expire?dry_run", NULL, 200);
    long long want_a = model_expired(h_start), want_b = model_expired(hour_now());
    char w1[160], w2[160];
    snprintf(w1, sizeof w1,
             "{\"dryRun\":true,\"enabled\":true,\"partitions\":{\"raw\":%lld,\"rollup\":0}}",
             want_a);
    snprintf(w2, sizeof w2,
             "{\"dryRun\":true,\"enabled\":true,\"partitions\":{\"raw\":%lld,\"rollup\":0}}",
             want_b);
    if (strcmp(r, w1) != 0 && strcmp(r, w2) != 0) fail_msg("dry run: %s, want %s", r, w1);
    free(r);
    assert_int_equal(stat_value("tsd.retention.expired.partitions", "raw"), 0);
    /* `octsdb expire --dry-run` through the TSD, then on the stopped dir */
    char datadir[4200];
    snprintf(datadir, sizeof datadir, "--datadir=%s", g_t.dir);
    const char *cli[] = {"expire", "--dry-run", datadir, RULES, NULL};
    for (int live = 1; live >= 0; live--) {
        if (!live) assert_int_equal(tu_tsd_stop(&g_t), 0);
        char *out = NULL;
        int st = tu_run_octsdb(&out, cli);
        snprintf(w1, sizeof w1, "Partitions to expire: raw %lld, rollup 0\n", want_a);
        snprintf(w2, sizeof w2, "Partitions to expire: raw %lld, rollup 0\n", want_b);
        if (st != 0 || !out || (strcmp(out, w1) != 0 && strcmp(out, w2) != 0))
            fail_msg("octsdb expire --dry-run (%s): status %d, <%s>, want <%s>",
                     live ? "live" : "stopped", st, out ? out : "", w1);
        free(out);
    }

    /* the TSD's own pass: at start, then every 200 ms */
    if (tu_tsd_start(&g_t, g_args_bg)) fail_msg("restart");
    long long got = 0;
    for (int i = 0; i < 200; i++) {
        got = stat_value("tsd.retention.expired.partitions", "raw");
        if (got == want_a || got == want_b || got > want_b) break;
        usleep(100 * 1000);
    }
    if (got != want_a && got != want_b)
        fail_msg("background pass dropped %lld partitions, want %lld (or %lld)", got, want_a,
                 want_b);
    assert_true(stat_value("tsd.retention.passes", NULL) >= 1);
    assert_int_equal(stat_value("tsd.retention.errors", NULL), 0);
    /* a restart keeps them gone */
    check_queries("after the pass and a restart");
    long long s2 = compact_after();
    /* big.x is most of the bytes, and half of its hours went */
    if (!(s2 < s1 * 3 / 4 && s2 > s1 / 4))
        fail_msg("bytes on disk %lld before the expiry, %lld after", s1, s2);
    print_message("bytes on disk: %lld before, %lld after the expiry\n", s1, s2);
    assert_int_equal(tu_tsd_stop(&g_t), 0);

    /* the store itself: exactly the visible hours of each metric */
    tsdb_t *db = ac_open_dir(g_t.dir);
    char msg[256] = "", msg2[256] = "";
    if (!store_matches(db, h_start, msg, sizeof msg) &&
        !store_matches(db, hour_now(), msg2, sizeof msg2))
        fail_msg("store: %s / %s", msg, msg2);
    tsdb_close(db);
    tu_tsd_destroy(&g_t);
}

/* ---- rollup tables apart from raw --------------------------------------------- */

#define RCONF                                                                                      \
    "{\"aggregationIds\":{\"sum\":0,\"count\":1},\"intervals\":["                                  \
    "{\"table\":\"tsdb\",\"preAggregationTable\":\"tsdb-preagg\",\"interval\":\"1m\","             \
    "\"rowSpan\":\"1h\",\"defaultInterval\":true},"                                                \
    "{\"table\":\"tsdb-rollup-1h\",\"preAggregationTable\":\"tsdb-rollup-preagg-1h\","             \
    "\"interval\":\"1h\",\"rowSpan\":\"1d\"}]}"
#define R_HOURS (24 * 5) /* rollups for the 5 days before the current hour */
#define R_KEEP  50       /* tsd.storage.retention.table.tsdb-rollup-1h = 50h */

static const char *g_rargs[] = {"--auto-metric",
                                "--set",
                                "tsd.rollups.enable=true",
                                "--set",
                                "tsd.rollups.config=" RCONF,
                                "--set",
                                "tsd.storage.retention.raw=3h",
                                "--set",
                                "tsd.storage.retention.table.tsdb-rollup-1h=50h",
                                NULL};

/* The model's 1h-sum answer from the rollup table at hour h. */
static char *rollup_model(long long h)
{
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    for (int k = R_HOURS; k >= 1; k--)
        if (visible(base_k(k), h, R_KEEP)) oct_strbuf_printf(&sb, "%lld=%d ", base_k(k), 1000 + k);
    return sb_take(&sb);
}

/* Day rows of the rollup table wholly before the cut at hour h. */
static long long rollup_expired(long long h)
{
    long long n = 0, last = -1;
    for (int k = R_HOURS; k >= 1; k--) {
        long long d = base_k(k) - base_k(k) % 86400;
        if (d == last) continue;
        last = d;
        n += d + 86400 <= h - 3600LL * R_KEEP;
    }
    return n;
}

typedef struct {
    long long base[16];
    int n, other;
} days_t;

static int collect_days(void *ctx, oct_slice_t part)
{
    days_t *d = ctx;
    static const char pre[] = "\x0etsdb-rollup-1h";
    if (part.len != sizeof pre - 1 + 3 + 4 || memcmp(part.ptr, pre, sizeof pre - 1) != 0 ||
        d->n == 16) {
        d->other++;
        return 0;
    }
    d->base[d->n++] = (long long)oct_get_be32(part.ptr + part.len - 4);
    return 0;
}

/* The rollup table of the stopped daemon holds exactly the day rows that
 * are not wholly before the cut at hour h. */
static int rollup_store_matches(const days_t *d, long long h)
{
    int i = 0;
    long long last = -1;
    for (int k = R_HOURS; k >= 1; k--) {
        long long day = base_k(k) - base_k(k) % 86400;
        if (day == last) continue;
        last = day;
        if (day + 86400 <= h - 3600LL * R_KEEP) continue;
        if (i >= d->n || d->base[i] != day) return 0;
        i++;
    }
    return i == d->n && d->other == 0;
}

static void rollup_table_rule(void **state)
{
    (void)state;
    memset(&g_t, 0, sizeof g_t);
    if (tu_tsd_start(&g_t, g_rargs)) fail_msg("start");
    long long h_start = hour_now();
    g_h0 = h_start;
    oct_strbuf_t sb = OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    for (int k = 1; k <= R_HOURS; k++)
        oct_strbuf_printf(&sb,
                          "%s{\"metric\":\"m.r\",\"timestamp\":%lld,\"value\":%d,"
                          "\"tags\":{\"host\":\"a\"},\"interval\":\"1h\",\"aggregator\":\"sum\"}",
                          k > 1 ? "," : "", base_k(k), 1000 + k);
    oct_strbuf_puts(&sb, "]");
    char *r = ac_req_ok(&g_t, "POST", "/api/rollup", sb.ptr, 204);
    free(r);
    oct_strbuf_free(&sb);
    /* raw points of the same series, one per hour for 8 hours: raw keeps 3h */
    sb = (oct_strbuf_t)OCT_STRBUF_INIT;
    oct_strbuf_puts(&sb, "[");
    for (int k = 1; k <= 8; k++)
        oct_strbuf_printf(&sb,
                          "%s{\"metric\":\"m.r\",\"timestamp\":%lld,\"value\":%d,"
                          "\"tags\":{\"host\":\"a\"}}",
                          k > 1 ? "," : "", base_k(k) + 120, k);
    oct_strbuf_puts(&sb, "]");
    put_body(sb.ptr);
    oct_strbuf_free(&sb);

    for (int pass = 0; pass < 2; pass++) {
        for (int attempt = 0;; attempt++) {
            long long h1 = hour_now();
            char *got = query_dps("1h-sum:m.r{host=a}", g_h0 - 3600LL * (R_HOURS + 24));
            char *raw = query_dps("m.r{host=a}", g_h0 - 3600LL * 24);
            long long h2 = hour_now();
            if (h1 != h2 && attempt < 2) {
                free(got);
                free(raw);
                continue;
            }
            char *want = rollup_model(h2);
            oct_strbuf_t rw = OCT_STRBUF_INIT;
            for (int k = 8; k >= 1; k--)
                if (visible(base_k(k), h2, 3))
                    oct_strbuf_printf(&rw, "%lld=%d ", base_k(k) + 120, k);
            if (strcmp(got, want) != 0) fail_msg("rollup: got\n  %s\nwant\n  %s", got, want);
            char *want_raw = sb_take(&rw);
            if (strcmp(raw, want_raw) != 0) fail_msg("raw: got\n  %s\nwant\n  %s", raw, want_raw);
            free(got);
            free(raw);
            free(want);
            free(want_raw);
            break;
        }
        if (pass == 1) break;
        /* the pass drops the day rows wholly before the cut, and raw hours */
        r = ac_req_ok(&g_t, "POST", "/api/octsdb/flush", NULL, 204);
        free(r);
        r = ac_req_ok(&g_t, "POST", "/api/octsdb/expire", NULL, 200);
        long long ra = rollup_expired(h_start), rb = rollup_expired(hour_now());
        long long got_r = num_after(r, "rollup"), got_raw = num_after(r, "raw");
        if ((got_r != ra && got_r != rb) || got_raw < 5 || got_raw > 6)
            fail_msg("expire: %s, want %lld (or %lld) rollup and 5 raw partitions", r, ra, rb);
        assert_true(ra >= 2); /* the test covers whole days going */
        free(r);
        assert_int_equal(stat_value("tsd.retention.expired.partitions", "rollup"), got_r);
    }
    assert_int_equal(tu_tsd_stop(&g_t), 0);
    tsdb_t *db = ac_open_dir(g_t.dir);
    days_t d;
    memset(&d, 0, sizeof d);
    oct_errbuf_t eb;
    if (store_part_list(tsdb_store(db), STORE_TABLE_ROLLUP, oct_slice(NULL, 0), oct_slice(NULL, 0),
                        collect_days, &d, &eb))
        fail_msg("part_list: %s", eb.msg);
    tsdb_close(db);
    if (!rollup_store_matches(&d, h_start) && !rollup_store_matches(&d, hour_now()))
        fail_msg("rollup table: %d day rows stored (%d others), first %lld", d.n, d.other,
                 d.n ? d.base[0] : -1);
    tu_tsd_destroy(&g_t);
}

/* ---- start-up refusals -------------------------------------------------------- */

static char *run_bad(const char *set, int *status)
{
    char *dir = tu_tempdir();
    char datadir[4200];
    snprintf(datadir, sizeof datadir, "--datadir=%s/d", dir);
    const char *argv[] = {"tsd", "--bind=127.0.0.1", "--port=1", datadir, "--set", set, NULL};
    static char out[4096];
    char *err = NULL;
    *status = tu_run_octsdb_stderr(&err, argv, 20);
    snprintf(out, sizeof out, "%s", err ? err : "");
    free(err);
    tu_rmrf(dir);
    free(dir);
    return out;
}

static void bad_rules_stop_startup(void **state)
{
    (void)state;
    static const struct {
        const char *set, *want;
    } cases[] = {
        {"tsd.storage.retention.raw=30m",
         "tsd.storage.retention.raw = '30m': not a retention: <n>h, <n>d"},
        {"tsd.storage.retention.raw=30", "tsd.storage.retention.raw = '30': not a retention"},
        {"tsd.storage.retention.raw=d", "tsd.storage.retention.raw = 'd': not a retention"},
        {"tsd.storage.retention.metric.sys.=-1d", "not a retention"},
        {"tsd.storage.retention.raw=99999999y", "not a retention"},
        {"tsd.storage.retention.table.tsdb-rollup-1h=1d",
         "'tsdb-rollup-1h' is not a rollup or pre-aggregate table of tsd.rollups.config "
         "(tsd.rollups.enable is false)"},
        {"tsd.storage.retention.rollup=1d", "tsd.storage.retention.rollup: unknown retention key"},
        {"tsd.storage.retention.metric.=1d", "unknown retention key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st;
        char *out = run_bad(cases[i].set, &st);
        if (!strstr(out, cases[i].want) || st == 0)
            fail_msg("%s: status %d, output %s", cases[i].set, st, out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(raw_and_metric_rules),
        cmocka_unit_test(rollup_table_rule),
        cmocka_unit_test(bad_rules_stop_startup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
