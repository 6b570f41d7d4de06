/* retention.c -- the rules of tsd.storage.retention.*, the cut every read
 * begins at, and the passes that drop expired partitions (retention.h,
 * docs/retention.md).
 *
 * A pass walks each table it expires salt bucket by salt bucket, metric by
 * metric, without listing every partition: one store_part_list from
 * [prefix][salt][metric m] finds the first partition of the next metric
 * present (m' >= m), whose expired hours are the one contiguous range
 * [prefix][salt][m'][0] .. [prefix][salt][m'][stop base) -- a single
 * store_part_drop -- and the walk goes on from m' + 1. So a pass costs one
 * seek per salt bucket and metric plus the drops, however many hours the
 * store holds. Metric UID 0 is skipped: its rows are global annotations. */
#include "tsdb/retention.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/rowkey.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/rollup.h"
#include "tsdb/tsdb_int.h"

#define RET_PREFIX   "tsd.storage.retention."
#define RET_MAX_S    ((int64_t)UINT32_MAX) /* row base times are 32-bit seconds */
#define RET_PART_MAX 255
#define RET_NAME_MAX 1024

typedef struct {
    char *prefix;
    size_t len;
    int64_t keep_s; /* 0 = forever */
} ret_metric_t;

typedef struct {
    char *table;    /* a 2.4 table name of the rollup config */
    int64_t keep_s; /* > 0 */
    int64_t span_s; /* the longest row span stored in it */
} ret_table_t;

struct tsdb_retention {
    int64_t raw_s;   /* 0 = forever */
    ret_metric_t *m; /* longest prefix first */
    size_t n_m;
    ret_table_t *t;
    size_t n_t;
    int enabled;
    int64_t interval_ms;
    pthread_mutex_t run_mu; /* one pass at a time */
    pthread_mutex_t mu;     /* the thread's stop flag */
    pthread_cond_t cv;
    pthread_t thr;
    int started, stopping;
    tsdb_t *db;
    _Atomic uint64_t passes, errors, raw_parts, rollup_parts;
};

/* ---- the rules ------------------------------------------------------------ */

/* "<n>h|d|w|n|y" or "0" into seconds (0 = forever). */
static int ret_parse(const char *key, const char *v, int64_t *out, oct_errbuf_t *eb)
{
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    int64_t n = 0;
    const char *d = p;
    while (*p >= '0' && *p <= '9' && n <= RET_MAX_S)
        n = n * 10 + (*p++ - '0');
    static const struct {
        char u;
        int64_t s;
    } units[] = {
        {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}, {'n', 30 * 86400}, {'y', 365 * 86400}};
    int64_t unit = 0;
    for (size_t i = 0; p > d && i < sizeof units / sizeof *units; i++)
        if (*p == units[i].u) unit = units[i].s;
    if (unit) p++;
    while (*p == ' ' || *p == '\t')
        p++;
    if (p == d || *p || (!unit && n != 0) || (unit && n > RET_MAX_S / unit))
        return oct_err(eb, OCT_ECONFIG,
                       "%s = '%s': not a retention: <n>h, <n>d, <n>w, <n>n (30 days) or <n>y "
                       "(365 days), at most %lld hours; 0 keeps the data forever",
                       key, v, (long long)(RET_MAX_S / 3600));
    *out = n * unit;
    return 0;
}

/* The longest row span of 2.4 table `name` in the rollup config, or 0 if
 * no interval stores into it. */
static int64_t ret_table_span(const query_rollup_config_t *ru, const char *name)
{
    int64_t span = 0;
    for (size_t i = 0; ru && i < ru->n_iv; i++) {
        const query_rollup_interval_t *iv = &ru->iv[i];
        int used = (!iv->is_default && strcmp(iv->table, name) == 0) ||
                   strcmp(iv->preagg_table, name) == 0;
        if (!used) continue;
        /* months and years by their longest, so a row is dropped only once
         * all of it is before the cut; pre-aggregates written without an
         * interval use hour rows */
        int64_t s = iv->span_unit == 'h'   ? (int64_t)iv->span_mult * 3600
                    : iv->span_unit == 'd' ? 86400
                    : iv->span_unit == 'n' ? 31 * 86400
                                           : 366 * 86400;
        if (s < 3600) s = 3600;
        if (s > span) span = s;
    }
    return span;
}

typedef struct {
    tsdb_retention_t *r;
    const query_rollup_config_t *ru;
    oct_errbuf_t *eb;
    int rc;
} ret_load_t;

static int ret_load_key(void *ctx, const char *key, const char *value)
{
    ret_load_t *l = ctx;
    tsdb_retention_t *r = l->r;
    if (strncmp(key, RET_PREFIX, strlen(RET_PREFIX)) != 0) return 0;
    const char *k = key + strlen(RET_PREFIX);
    if (strcmp(k, "interval_ms") == 0) return 0;
    int64_t s = 0;
    if ((l->rc = ret_parse(key, value, &s, l->eb))) return 1;
    if (strcmp(k, "raw") == 0) {
        r->raw_s = s;
    } else if (strncmp(k, "metric.", 7) == 0 && k[7]) {
        r->m = xrealloc(r->m, (r->n_m + 1) * sizeof *r->m);
        r->m[r->n_m++] = (ret_metric_t){xstrdup(k + 7), strlen(k + 7), s};
    } else if (strncmp(k, "table.", 6) == 0 && k[6]) {
        int64_t span = ret_table_span(l->ru, k + 6);
        if (!span) {
            l->rc = oct_err(l->eb, OCT_ECONFIG,
                            "%s: '%s' is not a rollup or pre-aggregate table of "
                            "tsd.rollups.config%s (the data table's rule is %sraw)",
                            key, k + 6, l->ru ? "" : " (tsd.rollups.enable is false)", RET_PREFIX);
            return 1;
        }
        if (s) {
            r->t = xrealloc(r->t, (r->n_t + 1) * sizeof *r->t);
            r->t[r->n_t++] = (ret_table_t){xstrdup(k + 6), s, span};
        }
    } else {
        l->rc = oct_err(l->eb, OCT_ECONFIG,
                        "%s: unknown retention key; the keys are %sraw, %stable.<rollup table> "
                        "and %smetric.<metric name prefix> (docs/retention.md)",
                        key, RET_PREFIX, RET_PREFIX, RET_PREFIX);
        return 1;
    }
    if (s) r->enabled = 1;
    return 0;
}

static int ret_metric_cmp(const void *a, const void *b)
{
    const ret_metric_t *x = a, *y = b;
    return (x->len < y->len) - (x->len > y->len);
}

int tsdb__retention_load(const oct_config_t *cfg, const query_rollup_config_t *ru,
                         tsdb_retention_t **out, oct_errbuf_t *eb)
{
    tsdb_retention_t *r = xcalloc(1, sizeof *r);
    pthread_mutex_init(&r->run_mu, NULL);
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    r->interval_ms = oct_config_get_int(cfg, RET_PREFIX "interval_ms");
    ret_load_t l = {r, ru, eb, 0};
    (void)oct_config_foreach(cfg, ret_load_key, &l);
    if (l.rc) {
        tsdb__retention_free(r);
        return l.rc;
    }
    if (r->n_m) qsort(r->m, r->n_m, sizeof *r->m, ret_metric_cmp);
    *out = r;
    return 0;
}

void tsdb__retention_stop(tsdb_retention_t *r)
{
    if (!r || !r->started) return;
    pthread_mutex_lock(&r->mu);
    r->stopping = 1;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thr, NULL);
    r->started = 0;
}

void tsdb__retention_free(tsdb_retention_t *r)
{
    if (!r) return;
    tsdb__retention_stop(r);
    for (size_t i = 0; i < r->n_m; i++)
        free(r->m[i].prefix);
    for (size_t i = 0; i < r->n_t; i++)
        free(r->t[i].table);
    free(r->m);
    free(r->t);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->run_mu);
    free(r);
}

int tsdb_retention_enabled(const tsdb_t *db)
{
    return tsdb__retention(db)->enabled;
}

/* How long the data table keeps metric UID m (0 = forever). */
static int64_t ret_metric_keep(tsdb_t *db, const tsdb_retention_t *r, uint64_t m)
{
    if (r->n_m == 0) return r->raw_s;
    uint8_t name[RET_NAME_MAX];
    size_t len = 0;
    oct_errbuf_t eb;
    /* a UID without a name (deleted) keeps the raw rule */
    if (uid_get_name(tsdb_uids(db), CODEC_UID_METRIC, m, name, sizeof name, &len, &eb) != 0)
        return r->raw_s;
    for (size_t i = 0; i < r->n_m; i++)
        if (r->m[i].len <= len && memcmp(r->m[i].prefix, name, r->m[i].len) == 0)
            return r->m[i].keep_s;
    return r->raw_s;
}

static const ret_table_t *ret_table(const tsdb_retention_t *r, const char *table)
{
    for (size_t i = 0; i < r->n_t; i++)
        if (strcmp(r->t[i].table, table) == 0) return &r->t[i];
    return NULL;
}

/* The start of now's hour minus keep_s, in seconds. */
static int64_t ret_cut_s(int64_t now_ms, int64_t keep_s)
{
    return codec_rowkey_base_time(now_ms / 1000) - keep_s;
}

int64_t tsdb_retention_cut_ms(tsdb_t *db, const char *table, uint64_t metric, int64_t now_ms)
{
    const tsdb_retention_t *r = tsdb__retention(db);
    if (!r->enabled) return INT64_MIN;
    int64_t keep;
    if (table) {
        const ret_table_t *t = ret_table(r, table);
        keep = t ? t->keep_s : 0;
    } else {
        keep = ret_metric_keep(db, r, metric);
    }
    return keep ? ret_cut_s(now_ms, keep) * 1000 : INT64_MIN;
}

/* ---- a pass --------------------------------------------------------------- */

typedef struct {
    uint8_t p[RET_PART_MAX];
    size_t len;
    int found;
} ret_first_t;

static int ret_first_cb(void *ctx, oct_slice_t part)
{
    ret_first_t *f = ctx;
    f->len = part.len < sizeof f->p ? part.len : sizeof f->p;
    memcpy(f->p, part.ptr, f->len);
    f->found = 1;
    return 1;
}

static int ret_count_cb(void *ctx, oct_slice_t part)
{
    (void)part;
    ++*(uint64_t *)ctx;
    return 0;
}

/* Drops (or counts) the expired partitions of one table: those whose
 * bytes start with pre[0..pre_len) (the rollup table's name; empty for the
 * data table). tr is the rollup table's rule, NULL for the data table. */
static int ret_walk(tsdb_t *db, store_table_t st_t, const uint8_t *pre, size_t pre_len,
                    const ret_table_t *tr, int64_t now_ms, int dry, uint64_t *count,
                    oct_errbuf_t *eb)
{
    const tsdb_retention_t *r = tsdb__retention(db);
    store_t *st = tsdb_store(db);
    codec_rowkey_layout_t l = tsdb__rowkey_layout(db);
    unsigned sw = l.salt_w, mw = l.metric_w;
    size_t head = pre_len + sw, plen = head + mw + CODEC_ROWKEY_TS_BYTES;
    uint64_t m_max = mw >= 8 ? UINT64_MAX : (1ull << (8 * mw)) - 1;
    uint32_t nb = sw ? l.salt_buckets : 1;
    uint8_t lo[RET_PART_MAX], hi[RET_PART_MAX];
    if (plen > sizeof lo) return 0;
    if (pre_len) memcpy(lo, pre, pre_len);
    for (uint32_t b = 0; b < nb; b++) {
        if (sw) codec_rowkey_salt_write(b, sw, lo + pre_len);
        for (uint64_t m = 1;;) {
            oct_put_be_n(lo + head, m, mw);
            ret_first_t f = {.found = 0};
            int rc = store_part_list(st, st_t, oct_slice(lo, head + mw), oct_slice(NULL, 0),
                                     ret_first_cb, &f, eb);
            if (rc < 0) return rc;
            /* past this bucket (or this rollup table): done with it */
            if (!f.found || f.len != plen || memcmp(f.p, lo, head) != 0) break;
            uint64_t fm = oct_get_be_n(f.p + head, mw);
            int64_t keep = tr ? tr->keep_s : ret_metric_keep(db, r, fm);
            /* partitions whose base is below stop are wholly before the cut */
            int64_t stop = keep ? ret_cut_s(now_ms, keep) - (tr ? tr->span_s : 3600) + 3600 : 0;
            if (stop > RET_MAX_S) stop = RET_MAX_S;
            if (stop > 0) {
                oct_put_be_n(lo + head, fm, mw);
                memcpy(hi, lo, head + mw);
                oct_put_be32(lo + head + mw, 0);
                oct_put_be32(hi + head + mw, (uint32_t)stop);
                uint64_t n = 0;
                rc = dry ? store_part_list(st, st_t, oct_slice(lo, plen), oct_slice(hi, plen),
                                           ret_count_cb, &n, eb)
                         : store_part_drop(st, st_t, oct_slice(lo, plen), oct_slice(hi, plen), &n,
                                           eb);
                if (rc < 0) return rc;
                *count += n;
            }
            if (fm >= m_max) break;
            m = fm + 1;
        }
    }
    return 0;
}

int tsdb_retention_run(tsdb_t *db, int64_t now_ms, int dry_run, tsdb_retention_report_t *rep,
                       oct_errbuf_t *eb)
{
    tsdb_retention_t *r = tsdb__retention(db);
    memset(rep, 0, sizeof *rep);
    if (!r->enabled) return 0;
    pthread_mutex_lock(&r->run_mu);
    /* the data table when some rule limits it (raw or a metric prefix) */
    int raw = r->raw_s != 0;
    for (size_t i = 0; i < r->n_m && !raw; i++)
        raw = r->m[i].keep_s != 0;
    int rc =
        raw ? ret_walk(db, STORE_TABLE_DATA, NULL, 0, NULL, now_ms, dry_run, &rep->raw_parts, eb)
            : 0;
    for (size_t i = 0; i < r->n_t && rc == 0; i++) {
        uint8_t pre[1 + 200];
        size_t tl = strlen(r->t[i].table);
        if (tl > 200) continue; /* never stored (tsdb/rollup.c's limit) */
        pre[0] = (uint8_t)tl;
        memcpy(pre + 1, r->t[i].table, tl);
        rc = ret_walk(db, STORE_TABLE_ROLLUP, pre, 1 + tl, &r->t[i], now_ms, dry_run,
                      &rep->rollup_parts, eb);
    }
    if (!dry_run) {
        atomic_fetch_add(&r->raw_parts, rep->raw_parts);
        atomic_fetch_add(&r->rollup_parts, rep->rollup_parts);
        atomic_fetch_add(rc ? &r->errors : &r->passes, 1);
    }
    pthread_mutex_unlock(&r->run_mu);
    return rc;
}

/* ---- the background ------------------------------------------------------- */

static void *ret_thread(void *arg)
{
    tsdb_retention_t *r = arg;
    int failing = 0;
    pthread_mutex_lock(&r->mu);
    while (!r->stopping) {
        pthread_mutex_unlock(&r->mu);
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        tsdb_retention_report_t rep;
        int rc = tsdb_retention_run(r->db, oct_clock_wall_ms(), 0, &rep, &eb);
        if (rc && !failing) oct_log_warn("retention", "expiry pass failed: %s; retrying", eb.msg);
        if (!rc && failing) oct_log_info("retention", "expiry passes work again");
        failing = rc != 0;
        if (!rc && (rep.raw_parts || rep.rollup_parts))
            oct_log_info("retention", "expired %llu data and %llu rollup partitions",
                         (unsigned long long)rep.raw_parts, (unsigned long long)rep.rollup_parts);
        int64_t dl_ns = oct_clock_mono_ns() + r->interval_ms * 1000000;
        struct timespec dl = {.tv_sec = dl_ns / 1000000000, .tv_nsec = dl_ns % 1000000000};
        pthread_mutex_lock(&r->mu);
        while (!r->stopping && pthread_cond_timedwait(&r->cv, &r->mu, &dl) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int tsdb_retention_start(tsdb_t *db, oct_errbuf_t *eb)
{
    tsdb_retention_t *r = tsdb__retention(db);
    if (!r->enabled || r->started || store_is_read_only(tsdb_store(db))) return 0;
    r->db = db;
    if (pthread_create(&r->thr, NULL, ret_thread, r) != 0)
        return oct_err(eb, OCT_EIO, "cannot start the retention thread");
    r->started = 1;
    return 0;
}

void tsdb_retention_stats(tsdb_t *db, tsdb_retention_stats_t *out)
{
    tsdb_retention_t *r = tsdb__retention(db);
    out->passes = atomic_load(&r->passes);
    out->errors = atomic_load(&r->errors);
    out->raw_parts = atomic_load(&r->raw_parts);
    out->rollup_parts = atomic_load(&r->rollup_parts);
}
