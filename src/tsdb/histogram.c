/* histogram.c -- histogram points on the write side (histogram.h): the codec map of
 * tsd.core.histograms.config and tsdb_put_histogram, which resolves the series as a put does
 * (tw_series_prepare/commit) and writes the one cell straight to the store. */
#include "tsdb/histogram.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "tsdb/series.h"

#define KEY "tsd.core.histograms.config"

static int cfg_fail(oct_errbuf_t *eb, const char *value, const char *why)
{
    return oct_err(eb, OCT_ECONFIG, KEY "=%.200s: %s", value, why);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            if (cap >= (1u << 20)) break; /* a codec map is a few lines */
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int tsdb_hist_config_parse(const char *value, tsdb_hist_config_t *out, oct_errbuf_t *eb)
{
    out->enabled = 0;
    out->simple_id = -1;
    if (!value || !*value) return 0;
    size_t vl = strlen(value), len = vl;
    char *file = NULL;
    const char *text = value;
    if (vl > 5 && !strcmp(value + vl - 5, ".json")) {
        file = read_file(value, &len);
        if (!file) return cfg_fail(eb, value, "cannot read the file");
        text = file;
    }
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *root = NULL;
    oct_errbuf_t je;
    int rc = 0;
    char why[OCT_ERRBUF_SIZE];
    int bad_json = json_parse(&a, text, len, 0, &root, &je) != 0;
    if (bad_json || root->type != JSON_OBJECT) {
        snprintf(why, sizeof why, "not a JSON object of codec class names and ids%s%.200s",
                 bad_json ? ": " : "", bad_json ? je.msg : "");
        rc = cfg_fail(eb, value, why);
        goto out;
    }
    for (const json_value_t *m = root->child; m; m = m->next) {
        int64_t id;
        if (m->type != JSON_NUMBER || !(m->flags & JSON_F_INTEGER) || json_number_i64(m, &id) ||
            id < 0 || id > 255) {
            snprintf(why, sizeof why, "ID for codec '%.*s' must be from 0 to 255.", (int)m->key_len,
                     m->key);
            rc = cfg_fail(eb, value, why);
            goto out;
        }
        if (m->key_len != strlen(TSDB_HIST_SIMPLE_CLASS) ||
            memcmp(m->key, TSDB_HIST_SIMPLE_CLASS, m->key_len)) {
            snprintf(why, sizeof why,
                     "unknown histogram codec '%.*s': octsdb implements " TSDB_HIST_SIMPLE_CLASS
                     " only",
                     (int)m->key_len, m->key);
            rc = cfg_fail(eb, value, why);
            goto out;
        }
        out->simple_id = (int)id; /* a repeated key: the last wins, as Jackson's map */
    }
    out->enabled = 1;
out:
    json_arena_free(&a);
    free(file);
    if (rc) out->simple_id = -1;
    return rc;
}

int tsdb_put_histogram(tsdb_t *db, const tsdb_dp_t *dp, const uint8_t *value, size_t len, int sync,
                       oct_errbuf_t *eb)
{
    tsdb_writer_t *w = tsdb__writer(db);
    if (!w || !w->wal) return oct_err(eb, OCT_EINVAL, "the database is open read-only");
    if (len == 0 || len > (1u << 20))
        return oct_err(eb, OCT_EINVAL, "histogram value of %zu bytes", len);

    /* the series, as a put finds or creates it */
    tw_series_t *s = tw_map_find_text(&w->by_text, tw_text_hash(dp), dp);
    if (!s) {
        uint64_t gen = atomic_load(&w->names_gen);
        int fresh = 0;
        int rc = tw_series_prepare(w, dp, &s, &fresh, eb);
        if (rc) return rc;
        if (fresh) {
            rc = tw_series_commit(w, &s, 1, gen, eb);
            if (!s) return rc < 0 ? rc : oct_err(eb, OCT_EIO, "cannot create the series");
        }
    }

    int64_t ts_s = dp->pt.ts_ms / 1000;
    int64_t base = codec_rowkey_base_time(ts_s);
    uint8_t key[512], qual[5];
    int kl = codec_rowkey_from_tsuid(&w->rk, s->tsuid, s->tsuid_len, base, key, sizeof key, eb);
    if (kl < 0) return kl;
    int ql = codec_hist_qualifier((uint32_t)(dp->pt.ts_ms - base * 1000), dp->ts_is_ms, qual);
    if (ql < 0) return oct_err(eb, OCT_EINVAL, "Invalid timestamp");
    size_t plen = codec_rowkey_partition_prefix_len(&w->rk);
    store_op_t op = {STORE_OP_PUT,
                     oct_slice(key, plen),
                     {oct_slice(key, (size_t)kl), oct_slice_str(TW_FAMILY),
                      oct_slice(qual, (size_t)ql), oct_slice(value, len)}};
    int rc = store_write(w->st, STORE_TABLE_DATA, &op, 1, sync ? STORE_SYNC : 0, eb);
    if (rc) return rc;
    if (w->meta_incrementing) tw_meta_points(w, &s, 1);
    return 0;
}

int tsdb_sync_histograms(tsdb_t *db, oct_errbuf_t *eb)
{
    return store_sync(tsdb_store(db), eb);
}
