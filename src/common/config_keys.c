/* config_keys.c -- the table of configuration keys octsdb knows, with defaults and checks.
 *
 * The keys and defaults are OpenTSDB 2.4's (Config.setDefaults plus the keys its code reads
 * with a built-in fallback). Where octsdb deliberately differs, the entry carries a comment
 * starting "DEVIATION:"; each one is listed in docs/compat.md. docs/config.md lists every key
 * of this table with its default and range: keep it in step. Ranges are the values that
 * make sense for octsdb: OpenTSDB itself checks little and fails late (or never).
 *
 * Keys with no default (NULL) are either optional or required by a particular command (the
 * daemon needs tsd.http.staticroot only if it serves the UI, for instance); the command
 * that needs one checks it. */
#include "common/config_int.h"

#define I32 INT32_MAX
#define I64 INT64_MAX

/* clang-format off */
#define STR(n, d) {(n), (d), OCT_CFG_STR, 0, 0, 0, NULL}
#define STRN(n, d) {(n), (d), OCT_CFG_STR, OCT_CFG_NONEMPTY, 0, 0, NULL}
#define BOOL(n, d) {(n), (d), OCT_CFG_BOOL, 0, 0, 0, NULL}
#define BOOL_OFF(n) {(n), "false", OCT_CFG_BOOL, OCT_CFG_OFF, 0, 0, NULL}
#define STR_OFF(n) {(n), NULL, OCT_CFG_STR, OCT_CFG_OFF, 0, 0, NULL}
#define INT(n, d, lo, hi) {(n), (d), OCT_CFG_INT, 0, (lo), (hi), NULL}
#define ENUM(n, d, c) {(n), (d), OCT_CFG_ENUM, 0, 0, 0, (c)}
/* clang-format on */

/* Pluggable extension points: octsdb loads no Java plugins, so these are kept only so that
 * existing configs validate and /api/config shows them. */
#define PLUGIN(prefix) BOOL(prefix ".enable", "false"), STR(prefix ".plugin", "")

const oct_config__key_t oct_config__keys[] = {
    /* --- network ----------------------------------------------------------------------- */
    /* DEVIATION: OpenTSDB has no default and refuses to start without a port; every
     * packaged opentsdb.conf sets 4242, so we default to it. */
    INT("tsd.network.port", "4242", 1, 65535),
    STRN("tsd.network.bind", "0.0.0.0"),
    INT("tsd.network.worker_threads", NULL, 1, 4096), /* unset: 2 x CPUs */
    BOOL("tsd.network.async_io", "true"),
    INT("tsd.network.backlog", NULL, 1, I32), /* unset: OS default */
    BOOL("tsd.network.tcp_no_delay", "true"),
    BOOL("tsd.network.keep_alive", "true"),
    BOOL("tsd.network.reuse_address", "true"),
    /* octsdb's own (OpenTSDB 2.4 has no TLS): TLS on the same port, off by default; PEM
     * certificate chain and key (unset key: taken from the certificate file); with required,
     * plaintext is refused (docs/tls.md). */
    STR("tsd.network.tls.certificate", NULL),
    /* octsdb's own: OpenSSL cipher lists (TLS 1.2 and 1.3; unset: OpenSSL's defaults) and a
     * PEM CA bundle that makes client certificates required (docs/tls.md). */
    STR("tsd.network.tls.ciphers", NULL),
    STR("tsd.network.tls.ciphersuites", NULL),
    STR("tsd.network.tls.client_ca", NULL),
    BOOL("tsd.network.tls.enable", "false"),
    STR("tsd.network.tls.key", NULL),
    ENUM("tsd.network.tls.min_version", "TLSv1.2", "TLSv1.2 TLSv1.3"),
    BOOL("tsd.network.tls.required", "false"),

    /* --- HTTP ---------------------------------------------------------------------------- */
    STR("tsd.http.staticroot", NULL),
    /* octsdb's own: the web UI at / and /ui/ is embedded in the binary; this directory, when
     * set, is served instead (UI development without a rebuild). */
    STR("tsd.http.uiroot", NULL),
    STR("tsd.http.cachedir", NULL),
    /* DEVIATION: OpenTSDB's code defaults to true (its docs say false); stack traces of a
     * C daemon are meaningless to clients, so false. */
    BOOL("tsd.http.show_stack_trace", "false"),
    /* DEVIATION: OpenTSDB defaults to false and then rejects chunked bodies, which common
     * HTTP clients send for large batches; we accept them by default. */
    BOOL("tsd.http.request.enable_chunked", "true"),
    INT("tsd.http.request.max_chunk", "4096", 1, I32),
    /* octsdb's own: the largest request body accepted, chunked or not (413 above it).
     * OpenTSDB bounds chunked bodies by max_chunk (4096 bytes), too small for real
     * /api/put batches. 64 MiB. */
    INT("tsd.http.request.max_body_size", "67108864", 1, I64),
    STR("tsd.http.request.cors_domains", ""),
    STR("tsd.http.request.cors_headers",
        "Authorization, Content-Type, Accept, Origin, User-Agent, DNT, Cache-Control, "
        "X-Mx-ReqToken, Keep-Alive, X-Requested-With, If-Modified-Since"),
    BOOL("tsd.http.query.allow_delete", "false"),
    STR("tsd.http.header_tag", ""),
    STR("tsd.http.rpc.plugins", ""),

    /* --- mode and core ----------------------------------------------------------------- */
    /* DEVIATION: OpenTSDB treats anything but "ro"/"wo" as rw; we reject other values. */
    ENUM("tsd.mode", "rw", "rw ro wo"),
    BOOL("tsd.no_diediedie", "false"),
    /* octsdb's own (DEVIATION): the telnet `diediedie` command, which lets any client stop
     * the daemon, exists only when this is true (and tsd.no_diediedie is false). OpenTSDB
     * has it on unless tsd.no_diediedie; off is the safe default. */
    BOOL("tsd.core.enable_diediedie", "false"),
    BOOL("tsd.core.enable_api", "true"),
    BOOL("tsd.core.enable_ui", "true"),
    BOOL("tsd.core.auto_create_metrics", "false"),
    BOOL("tsd.core.auto_create_tagks", "true"),
    BOOL("tsd.core.auto_create_tagvs", "true"),
    BOOL("tsd.core.uid.random_metrics", "false"),
    /* OpenTSDB ignores `tsd --max-connections`; we map it here and honour it. 0 = no limit. */
    INT("tsd.core.connections.limit", "0", 0, I32),
    INT("tsd.core.socket.timeout", "0", 0, I32), /* seconds, 0 = none */
    STR("tsd.core.timezone", NULL),              /* unset: the process's local zone */
    STR("tsd.core.tag.allow_specialchars", ""),
    BOOL("tsd.core.preload_uid_cache", "false"),
    INT("tsd.core.preload_uid_cache.max_entries", "300000", 0, I64),
    BOOL("tsd.core.meta.enable_realtime_ts", "false"),
    BOOL("tsd.core.meta.enable_realtime_uid", "false"),
    BOOL("tsd.core.meta.enable_tsuid_tracking", "false"),
    BOOL("tsd.core.meta.enable_tsuid_incrementing", "false"),
    BOOL("tsd.core.tree.enable_processing", "false"),
    BOOL("tsd.core.bulk.allow_out_of_order_timestamps", "false"),
    /* the codec map, checked by tsdb_open (tsdb/histogram.h) */
    STR("tsd.core.histograms.config", NULL),
    BOOL("tsd.core.stats_with_port", "false"),
    BOOL("tsd.stats.canonical", "false"),
    BOOL("tsd.rpc.telnet.return_errors", "true"),
    STR("tsd.rpc.plugins", ""),
    STR("tsd.core.plugin_path", ""),
    PLUGIN("tsd.core.authentication"),
    /* octsdb's own: with tsd.core.authentication.enable, the built-in authentication (no
     * plugin) reads its credentials from this file (docs/reliability.md, "Access"). */
    STR("tsd.core.authentication.credentials_file", NULL),
    /* octsdb's own: the secret commands present when they work through a running TSD that
     * has authentication on: "token <secret>" or "basic <user> <password>" (docs/cli-live.md). */
    STR("tsd.core.authentication.client", NULL),
    PLUGIN("tsd.core.meta.cache"),
    PLUGIN("tsd.core.storage_exception_handler"),
    PLUGIN("tsd.rtpublisher"),
    PLUGIN("tsd.search"),
    PLUGIN("tsd.startup"),
    PLUGIN("tsd.timeseriesfilter"),
    PLUGIN("tsd.uidfilter"),

    /* --- storage ------------------------------------------------------------------------ */
    /* octsdb's own: the storage engine, by the name it registers under (store/store_backend.h).
     * Any non-empty text here; an unknown name is refused when the store opens, which knows
     * the list (common/ cannot). */
    STRN("tsd.storage.backend", "rocksdb"),
    /* octsdb's own: where the RocksDB store lives (flag --datadir). */
    STRN("tsd.storage.data_dir", "./data"),
    /* octsdb's own: RocksDB block cache size in MiB (0 = RocksDB's default). */
    INT("tsd.storage.rocksdb.block_cache_mb", "64", 0, 1 << 20),
    /* octsdb's own: the Ceph RADOS backend (docs/format/rados.md): the ceph.conf to read (unset =
     * librados' search), the client name without "client.", the pool (which must exist), and the
     * namespace holding the data set (unset = the one the data dir is bound to, or a new one). */
    STR("tsd.storage.rados.conf", NULL),
    STRN("tsd.storage.rados.user", "admin"),
    STRN("tsd.storage.rados.pool", "octsdb"),
    STR("tsd.storage.rados.namespace", NULL),
    STRN("tsd.storage.hbase.data_table", "tsdb"),
    STRN("tsd.storage.hbase.uid_table", "tsdb-uid"),
    STRN("tsd.storage.hbase.tree_table", "tsdb-tree"),
    STRN("tsd.storage.hbase.meta_table", "tsdb-meta"),
    STR("tsd.storage.hbase.zk_quorum", "localhost"), /* accepted, no effect */
    STR("tsd.storage.hbase.zk_basedir", "/hbase"),   /* accepted, no effect */
    INT("tsd.storage.hbase.scanner.maxNumRows", "128", 1, I32),
    BOOL("tsd.storage.hbase.prefetch_meta", "false"),
    BOOL("tsd.storage.enable_compaction", "true"),
    INT("tsd.storage.compaction.flush_interval", "10", 1, I32), /* seconds */
    INT("tsd.storage.compaction.min_flush_threshold", "100", 0, I32),
    INT("tsd.storage.compaction.max_concurrent_flushes", "10000", 1, I32),
    INT("tsd.storage.compaction.flush_speed", "2", 1, I32),
    /* Unused by OpenTSDB 2.4; `tsd --flush-interval` lands here (see config.c). ms. */
    INT("tsd.storage.flush_interval", "1000", 0, I32),
    /* octsdb's own: a series-hour still open gets its unflushed points written to the store as
     * an extra block once the oldest of them is this old (ms; 0 = only when the hour closes).
     * 5 min keeps memory and WAL bounded at little write amplification for one TSD; set ~1000
     * when several TSDs share a store so that each sees the others' points within a second. */
    INT("tsd.storage.head.open_flush_ms", "300000", 0, I32),
    /* octsdb's own: an hour's final block (compaction, auto rollups) is written once the hour
     * ended this long ago (ms) and its series has had no point for it as long; later points
     * re-open the row. Longer: fewer rewrites for late data, more memory and WAL. */
    INT("tsd.storage.head.grace_ms", "60000", 0, I32),
    /* octsdb's own: retention by data time (docs/retention.md). raw = how long the data
     * table keeps points (<n>h|d|w|n|y, 0 = forever); table.<2.4 rollup table> and
     * metric.<metric name prefix> keys beside it are checked by tsdb_open; expired
     * partitions are dropped every interval_ms. */
    STR("tsd.storage.retention.raw", NULL),
    INT("tsd.storage.retention.interval_ms", "600000", 100, I32),
    /* octsdb's own: on a store several TSDs share (rados), a point accepted by one TSD is
     * answered by every TSD's queries within this bound (ms): each TSD writes what it accepted
     * to the store every half of it and learns new series as often (docs/scale-out.md). */
    INT("tsd.storage.shared.visibility_ms", "500", 2, 3600000),
    /* octsdb's own: on a shared store, how long after a series-hour ended and was last written
     * any TSD compacts the writer cells left in it (docs/format/layout.md, "Open rows"). */
    INT("tsd.storage.shared.sweep_delay_ms", "300000", 1000, 86400000),
    /* octsdb's own: longest time (ms) a put waits in memory before the WAL thread write(2)s
     * it: the kill -9 exposure of telnet puts. 10 ms costs ~100 syscalls/s. */
    INT("tsd.storage.wal.flush_interval_ms", "10", 1, 60000),
    /* octsdb's own: WAL segment size in MiB before a new segment is started. */
    INT("tsd.storage.wal.segment_mb", "64", 1, 4096),
    /* octsdb's own: the log is fdatasync'ed at least this often (ms) while it holds unsynced
     * points, bounding what power loss can take from puts not sent with sync=true. 0 = only
     * when asked. */
    INT("tsd.storage.wal.sync_interval_ms", "1000", 0, 3600000),
    BOOL("tsd.storage.enable_appends", "false"),
    BOOL("tsd.storage.repair_appends", "false"),
    BOOL("tsd.storage.fix_duplicates", "false"),
    INT("tsd.storage.max_tags", "8", 1, 255),
    INT("tsd.storage.salt.width", "0", 0, 8),
    INT("tsd.storage.salt.buckets", "20", 1, I32),
    INT("tsd.storage.uid.width.metric", "3", 1, 8),
    INT("tsd.storage.uid.width.tagk", "3", 1, 8),
    INT("tsd.storage.uid.width.tagv", "3", 1, 8),
    BOOL("tsd.storage.use_otsdb_timestamp", "false"),
    BOOL("tsd.storage.use_max_value", "true"),
    INT("tsd.storage.get_date_tiered_compaction_start", "0", 0, I64),

    /* --- UID cache ------------------------------------------------------------------------ */
    BOOL("tsd.uid.use_mode", "false"),
    BOOL("tsd.uid.lru.enable", "false"),
    INT("tsd.uid.lru.name.size", "5000000", 1, I64),
    INT("tsd.uid.lru.id.size", "5000000", 1, I64),

    /* --- queries ------------------------------------------------------------------------ */
    INT("tsd.query.timeout", "0", 0, I64), /* ms, 0 = none; unused by OpenTSDB 2.4.1 */
    INT("tsd.query.filter.expansion_limit", "4096", 1, I32),
    BOOL("tsd.query.skip_unresolved_tagvs", "false"),
    BOOL("tsd.query.enable_fuzzy_filter", "true"),
    BOOL("tsd.query.allow_simultaneous_duplicates", "true"),
    INT("tsd.query.limits.bytes.default", "0", 0, I64), /* 0 = unlimited */
    BOOL("tsd.query.limits.bytes.allow_override", "false"),
    INT("tsd.query.limits.data_points.default", "0", 0, I64), /* 0 = unlimited */
    BOOL("tsd.query.limits.data_points.allow_override", "false"),
    /* octsdb's own: most points one query holds at once for the group being aggregated
     * (after downsampling; 24 bytes each); above it the query fails with 413. 0 = unlimited. */
    INT("tsd.query.limits.held_points.default", "50000000", 0, I64),
    INT("tsd.query.limits.overrides.interval", "60000", 1, I64), /* ms */
    STR("tsd.query.limits.overrides.config", NULL),
    /* octsdb's own: most time series one query may select; above it 413. 0 = unlimited. */
    INT("tsd.query.limits.series.default", "1000000", 0, I64),
    BOOL("tsd.query.multi_get.enable", "false"),
    INT("tsd.query.multi_get.limit", "131072", 1, I32),
    INT("tsd.query.multi_get.batch_size", "1024", 1, I32),
    INT("tsd.query.multi_get.concurrent", "20", 1, I32),
    BOOL("tsd.query.multi_get.get_all_salts", "false"),

    /* --- rollups ------------------------------------------------------------------------ */
    /* Loaded and checked at start-up by query_rollup_config_load (docs/rollups.md).
     * DEVIATION: split queries at the delaySla boundary are not implemented: turning them
     * on stops start-up rather than being silently ignored. */
    BOOL("tsd.rollups.enable", "false"),
    STR("tsd.rollups.config", NULL),
    BOOL("tsd.rollups.tag_raw", "false"),
    STRN("tsd.rollups.agg_tag_key", "_aggregate"),
    STRN("tsd.rollups.raw_agg_tag_value", "RAW"),
    BOOL("tsd.rollups.block_derived", "true"),
    /* octsdb's own: the TSD computes sum/count/min/max of the rollup intervals that divide
     * an hour from raw data when an hour is flushed (docs/rollups.md) */
    BOOL("tsd.rollups.auto", "false"),
    BOOL("tsd.rollups.split_query.enable", "false"),

    /* --- octsdb's own --------------------------------------------------------------------- */
    /* Set by --verbose / -v: log at debug level instead of warnings only. */
    BOOL("tsd.octsdb.verbose", "false"),
};

const size_t oct_config__n_keys = sizeof oct_config__keys / sizeof oct_config__keys[0];
