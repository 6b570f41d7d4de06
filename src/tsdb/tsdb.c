/* tsdb.c -- opening a data dir: store, layout guard, UID registry. */
#include "tsdb/tsdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "tsdb/delete_rollup.h"
#include "tsdb/histogram.h"
#include "tsdb/tsdb_int.h"
#include "tsdb/rollup.h"
#include "tsdb/wal.h"

struct tsdb {
    store_t *st;
    uid_registry_t *uids;
    tsdb_layout_t layout;
    tsdb_writer_t *writer; /* NULL when read-only */
    tsdb_hist_config_t hist;
    query_rollup_config_t *rollups; /* NULL when tsd.rollups.enable is false */
    tsdb_retention_t *ret;          /* tsd.storage.retention.* (retention.c) */
};

/* Where the layout lives in octsdb-sys; one row, one cell per setting. */
static const oct_slice_t TSDB_LAYOUT_PART = {(const uint8_t *)"layout", 6};
static const oct_slice_t TSDB_LAYOUT_ROW = {(const uint8_t *)"layout", 6};
static const oct_slice_t TSDB_LAYOUT_FAM = {(const uint8_t *)"l", 1};

typedef struct {
    const char *key; /* config key, also the cell qualifier */
    size_t off;      /* offset of the unsigned field in tsdb_layout_t */
} tsdb_layout_field_t;

static const tsdb_layout_field_t tsdb_layout_fields[] = {
    {"tsd.storage.uid.width.metric", offsetof(tsdb_layout_t, uid_width[CODEC_UID_METRIC])},
    {"tsd.storage.uid.width.tagk", offsetof(tsdb_layout_t, uid_width[CODEC_UID_TAGK])},
    {"tsd.storage.uid.width.tagv", offsetof(tsdb_layout_t, uid_width[CODEC_UID_TAGV])},
    {"tsd.storage.salt.width", offsetof(tsdb_layout_t, salt_width)},
    {"tsd.storage.salt.buckets", offsetof(tsdb_layout_t, salt_buckets)},
};
#define TSDB_LAYOUT_NFIELDS (sizeof tsdb_layout_fields / sizeof tsdb_layout_fields[0])

static unsigned *tsdb_layout_field(tsdb_layout_t *l, size_t i)
{
    return (unsigned *)((char *)l + tsdb_layout_fields[i].off);
}

int tsdb_layout_from_config(const oct_config_t *cfg, tsdb_layout_t *out, oct_errbuf_t *eb)
{
    for (size_t i = 0; i < TSDB_LAYOUT_NFIELDS; i++) {
        int64_t v = oct_config_get_int(cfg, tsdb_layout_fields[i].key);
        if (v < 0 || v > 1 << 30)
            return oct_err(eb, OCT_ECONFIG, "%s: bad value %lld", tsdb_layout_fields[i].key,
                           (long long)v);
        *tsdb_layout_field(out, i) = (unsigned)v;
    }
    /* Salt buckets only matter when salting is on. */
    if (out->salt_width == 0) out->salt_buckets = 0;
    return 0;
}

/* Compares the wanted layout with the recorded one, recording it if absent. */
static int tsdb_layout_check(store_t *st, const tsdb_layout_t *want, unsigned flags,
                             const char *dir, oct_errbuf_t *eb)
{
    store_result_t res = STORE_RESULT_INIT;
    int rc = store_get(st, STORE_TABLE_SYS, TSDB_LAYOUT_PART, TSDB_LAYOUT_ROW, TSDB_LAYOUT_FAM,
                       &res, eb);
    if (rc < 0) goto out;
    if (rc == 0) {
        rc = 0;
        if (flags & TSDB_OPEN_READONLY) goto out;
        store_op_t ops[TSDB_LAYOUT_NFIELDS];
        char vals[TSDB_LAYOUT_NFIELDS][16];
        for (size_t i = 0; i < TSDB_LAYOUT_NFIELDS; i++) {
            int n = snprintf(vals[i], sizeof vals[i], "%u",
                             *tsdb_layout_field((tsdb_layout_t *)want, i));
            ops[i] = (store_op_t){STORE_OP_PUT,
                                  TSDB_LAYOUT_PART,
                                  {TSDB_LAYOUT_ROW, TSDB_LAYOUT_FAM,
                                   oct_slice_str(tsdb_layout_fields[i].key),
                                   oct_slice(vals[i], (size_t)n)}};
        }
        rc = store_write(st, STORE_TABLE_SYS, ops, TSDB_LAYOUT_NFIELDS, STORE_SYNC, eb);
        goto out;
    }
    rc = 0;
    for (size_t i = 0; i < TSDB_LAYOUT_NFIELDS; i++) {
        oct_slice_t q = oct_slice_str(tsdb_layout_fields[i].key);
        unsigned w = *tsdb_layout_field((tsdb_layout_t *)want, i);
        for (size_t j = 0; j < res.n; j++) {
            if (!oct_slice_eq(res.cells[j].qualifier, q)) continue;
            char buf[16] = {0};
            size_t n = res.cells[j].value.len < 15 ? res.cells[j].value.len : 15;
            memcpy(buf, res.cells[j].value.ptr, n);
            unsigned have = (unsigned)strtoul(buf, NULL, 10);
            if (have != w) {
                rc = oct_err(eb, OCT_ELAYOUT,
                             "data dir %s was created with %s=%u but the configuration says "
                             "%u; changing UID widths or salting on existing data would make "
                             "it unreadable, so set %s=%u again",
                             dir, tsdb_layout_fields[i].key, have, w, tsdb_layout_fields[i].key,
                             have);
                goto out;
            }
        }
    }
out:
    store_result_free(&res);
    return rc;
}

void tsdb__store_options(const oct_config_t *cfg, const char *dir, store_options_t *so)
{
    *so = (store_options_t){0};
    so->dir = dir;
    so->backend = oct_config_get(cfg, "tsd.storage.backend");
    so->cfg = cfg;
    so->block_cache_mb = (size_t)oct_config_get_int(cfg, "tsd.storage.rocksdb.block_cache_mb");
    so->table_names[STORE_TABLE_DATA] = oct_config_get(cfg, "tsd.storage.hbase.data_table");
    so->table_names[STORE_TABLE_UID] = oct_config_get(cfg, "tsd.storage.hbase.uid_table");
    so->table_names[STORE_TABLE_META] = oct_config_get(cfg, "tsd.storage.hbase.meta_table");
    so->table_names[STORE_TABLE_TREE] = oct_config_get(cfg, "tsd.storage.hbase.tree_table");
}

int tsdb_exists(const oct_config_t *cfg, oct_errbuf_t *eb)
{
    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    if (!dir) return oct_err(eb, OCT_ECONFIG, "tsd.storage.data_dir is not set");
    store_options_t so;
    tsdb__store_options(cfg, dir, &so);
    return store_exists(&so, eb);
}

uint64_t tsdb_wal_unreplayed_bytes(const oct_config_t *cfg)
{
    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    char path[4200];
    if (!dir || snprintf(path, sizeof path, "%s/wal", dir) >= (int)sizeof path) return 0;
    return tsdb_wal_record_bytes(path);
}

int tsdb_open(const oct_config_t *cfg, unsigned flags, tsdb_t **out, oct_errbuf_t *eb)
{
    tsdb_layout_t layout;
    int rc = tsdb_layout_from_config(cfg, &layout, eb);
    if (rc) return rc;
    const char *dir = oct_config_get(cfg, "tsd.storage.data_dir");
    if (!dir) return oct_err(eb, OCT_ECONFIG, "tsd.storage.data_dir is not set");

    store_options_t so;
    tsdb__store_options(cfg, dir, &so);
    so.read_only = (flags & TSDB_OPEN_READONLY) != 0;

    tsdb_hist_config_t hist;
    rc = tsdb_hist_config_parse(oct_config_get(cfg, "tsd.core.histograms.config"), &hist, eb);
    if (rc) return rc;

    tsdb_t *db = xcalloc(1, sizeof *db);
    db->layout = layout;
    db->hist = hist;
    rc = query_rollup_config_load(cfg, &db->rollups, eb); /* 2.4 checks it at start-up */
    if (rc) goto fail;
    rc = tsdb__retention_load(cfg, db->rollups, &db->ret, eb);
    if (rc) goto fail;
    rc = store_open(&so, &db->st, eb);
    if (rc) goto fail;
    rc = tsdb_layout_check(db->st, &layout, flags, dir, eb);
    if (rc) goto fail;

    uid_options_t uo;
    uid_options_default(&uo);
    for (int k = 0; k < CODEC_UID_N_KINDS; k++)
        uo.width[k] = layout.uid_width[k];
    uo.auto_create[CODEC_UID_METRIC] = oct_config_get_bool(cfg, "tsd.core.auto_create_metrics");
    uo.auto_create[CODEC_UID_TAGK] = oct_config_get_bool(cfg, "tsd.core.auto_create_tagks");
    uo.auto_create[CODEC_UID_TAGV] = oct_config_get_bool(cfg, "tsd.core.auto_create_tagvs");
    uo.random_metrics = oct_config_get_bool(cfg, "tsd.core.uid.random_metrics");
    uo.allow_specialchars = oct_config_get(cfg, "tsd.core.tag.allow_specialchars");
    uo.realtime_uid_meta = oct_config_get_bool(cfg, "tsd.core.meta.enable_realtime_uid");
    rc = uid_registry_open(db->st, &uo, &db->uids, eb);
    if (rc) goto fail;
    if (!(flags & TSDB_OPEN_READONLY) || (flags & TSDB_OPEN_INDEX)) {
        rc = tsdb__writer_open(db, cfg, &db->writer, eb);
        if (rc) goto fail;
        if (!(flags & TSDB_OPEN_READONLY)) rc = tsdb__delete_resume(db, eb);
        if (rc) goto fail;
    }
    *out = db;
    return 0;
fail:
    tsdb_close(db);
    return rc;
}

void tsdb_close(tsdb_t *db)
{
    if (!db) return;
    tsdb__retention_stop(db->ret);  /* its pass uses the store and the UIDs */
    tsdb__writer_close(db->writer); /* its last flush reads (auto rollups): rules still there */
    tsdb__retention_free(db->ret);
    uid_registry_close(db->uids);
    store_close(db->st);
    query_rollup_config_free(db->rollups);
    free(db);
}

const query_rollup_config_t *tsdb_rollups(const tsdb_t *db)
{
    return db->rollups;
}

tsdb_retention_t *tsdb__retention(const tsdb_t *db)
{
    return db->ret;
}

tsdb_writer_t *tsdb__writer(tsdb_t *db)
{
    return db->writer;
}

store_t *tsdb_store(tsdb_t *db)
{
    return db->st;
}

uid_registry_t *tsdb_uids(tsdb_t *db)
{
    return db->uids;
}

const tsdb_layout_t *tsdb_layout(const tsdb_t *db)
{
    return &db->layout;
}

const tsdb_hist_config_t *tsdb_histograms(const tsdb_t *db)
{
    return &db->hist;
}

codec_rowkey_layout_t tsdb__rowkey_layout(const tsdb_t *db)
{
    const tsdb_layout_t *l = &db->layout;
    return (codec_rowkey_layout_t){(uint8_t)l->uid_width[CODEC_UID_METRIC],
                                   (uint8_t)l->uid_width[CODEC_UID_TAGK],
                                   (uint8_t)l->uid_width[CODEC_UID_TAGV], (uint8_t)l->salt_width,
                                   l->salt_buckets ? l->salt_buckets : 1};
}
