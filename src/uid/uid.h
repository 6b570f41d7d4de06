/* uid.h -- OpenTSDB's UniqueId: names <-> fixed-width integer UIDs, one
 * independent counter per kind (metrics, tagk, tagv), stored in tsdb-uid.
 *
 * Table layout (OpenTSDB's, byte for byte; docs/format/uid.md):
 *   row name bytes      id:<kind>    -> UID, exactly width bytes   (forward)
 *   row UID bytes       name:<kind>  -> name bytes                 (reverse)
 *   row UID bytes       name:<kind>_meta -> UIDMeta JSON           (metric_meta...)
 *   row 0x00            id:<kind>    -> 8-byte signed BE counter   (highest UID)
 * All cells of one kind form one storage partition, named by the kind's
 * qualifier ("metrics", "tagk", "tagv").
 *
 * Assignment is one conditional batch in that partition: "forward absent,
 * counter still c, reverse c+1 absent" -> put counter c+1, reverse and forward.
 * Racing writers (threads or, later, TSDs sharing a store) therefore end with
 * exactly one UID per name and never leak one -- unlike OpenTSDB, whose
 * increment-then-CAS sequence leaks a UID on every lost race. A store written
 * by OpenTSDB (leaked reverse rows, gaps, a counter behind) reads correctly:
 * a candidate UID whose reverse cell is taken is skipped. The write path
 * assigns a put chunk's new names of one kind in one such batch (counter + k)
 * and leaves the sync to its WAL (uid_resolve_batch_deferred,
 * uid_sync_deferred; docs/format/wal.md).
 *
 * Caching: lookups go through a lock-free two-way cache per kind; a miss
 * reads the store and fills the cache. Readers never block each other.
 * Several registries on one data set (TSDs sharing a RADOS namespace) keep
 * their caches coherent through the store's change channel (uid_watch.c,
 * docs/format/uid.md section 6): a rename or delete returns once every
 * other registry has dropped the old mapping (or after
 * STORE_NOTIFY_TIMEOUT_MS, for one that does not answer). There is no
 * negative cache: a name assigned elsewhere is found in the store.
 *
 * Threads: every function may be called from any number of threads at once.
 * Errors: OCT_ENOSUCHNAME / OCT_ENOSUCHID with OpenTSDB's message
 * ("No such name for 'metrics': 'x'"), OCT_EBADNAME, OCT_EEXISTS,
 * OCT_EEXHAUSTED ("All Unique IDs for metrics on 1 bytes are already
 * assigned!"), OCT_ECORRUPT, OCT_EIO; detail in eb. */
#ifndef OCT_UID_UID_H
#define OCT_UID_UID_H

#include <stddef.h>
#include <stdint.h>

#include "codec/uid_bytes.h"
#include "common/err.h"
#include "store/store.h"

/* Longest name accepted, in bytes (OpenTSDB has no limit; HBase caps row keys
 * at 32 KiB). Longer names get OCT_EBADNAME. */
#define UID_NAME_MAX 4096

typedef struct uid_registry uid_registry_t;

typedef struct {
    unsigned width[CODEC_UID_N_KINDS];  /* 1..8 bytes, default 3 */
    int auto_create[CODEC_UID_N_KINDS]; /* used by uid_resolve_for_write */
    int random_metrics;                 /* tsd.core.uid.random_metrics */
    const char *allow_specialchars;     /* tsd.core.tag.allow_specialchars */
    int realtime_uid_meta;              /* tsd.core.meta.enable_realtime_uid: write a
                                         * UIDMeta (created = now) for every new UID */
} uid_options_t;

/* OpenTSDB's defaults: widths 3, auto-create metrics off, tagk/tagv on. */
void uid_options_default(uid_options_t *o);

/* Creates a registry over an open store. The store is borrowed and must
 * outlive the registry; opts are copied. Watches the store's change channel
 * on the three kinds' partitions (a failure fails the open, except on a
 * read-only store, which then just does not hear other registries). */
OCT_MUST_CHECK int uid_registry_open(store_t *st, const uid_options_t *opts, uid_registry_t **out,
                                     oct_errbuf_t *eb);
void uid_registry_close(uid_registry_t *r);

unsigned uid_width(const uid_registry_t *r, codec_uid_kind_t kind);

/* name -> UID. 0, OCT_ENOSUCHNAME, or an error. Never creates. */
OCT_MUST_CHECK int uid_get_id(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                              size_t len, uint64_t *id, oct_errbuf_t *eb);

/* UID -> name, copied into buf (cap bytes, not NUL-terminated); *len gets the
 * name's length. OCT_ENOSPC (with *len set) if cap is too small,
 * OCT_ENOSUCHID, or an error. */
OCT_MUST_CHECK int uid_get_name(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, uint8_t *buf,
                                size_t cap, size_t *len, oct_errbuf_t *eb);

/* name -> UID, assigning a new UID if the name is unknown (after validating
 * it). *created (may be NULL) tells whether this call assigned it. The
 * mapping is on stable storage when this returns. */
OCT_MUST_CHECK int uid_get_or_create(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                                     size_t len, uint64_t *id, int *created, oct_errbuf_t *eb);

/* The write path's lookup: uid_get_or_create if auto_create[kind] is on,
 * uid_get_id otherwise (so an unknown name gives OCT_ENOSUCHNAME). */
OCT_MUST_CHECK int uid_resolve_for_write(uid_registry_t *r, codec_uid_kind_t kind,
                                         const uint8_t *name, size_t len, uint64_t *id,
                                         oct_errbuf_t *eb);

/* The write path's lookup without the per-assignment sync: as
 * uid_resolve_for_write, but a new sequential assignment (counter, reverse
 * and forward, still one atomic CAS) is written without STORE_SYNC, so it
 * survives kill -9 but not yet power loss. The caller must not declare
 * anything durable that names such a UID before uid_sync_deferred has run
 * after the call returned (the write path's WAL does that before each of its
 * fdatasyncs). Random metric UIDs are still synced (see uid.c). */
OCT_MUST_CHECK int uid_resolve_for_write_deferred(uid_registry_t *r, codec_uid_kind_t kind,
                                                  const uint8_t *name, size_t len, uint64_t *id,
                                                  oct_errbuf_t *eb);

/* The write path's lookup without assigning: 0 with *id = the name's UID,
 * or 0 with *id = 0 for a valid name that may need creating (auto_create on:
 * the cache does not know it, and the store is not read -- the name may
 * exist there; uid_resolve_batch_deferred sorts that out); otherwise the
 * error uid_resolve_for_write would give (OCT_ENOSUCHNAME, OCT_EBADNAME...). */
OCT_MUST_CHECK int uid_peek_for_write(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                                      size_t len, uint64_t *id, oct_errbuf_t *eb);

/* uid_resolve_for_write_deferred for n names of one kind at once (names may
 * repeat): ids[i] gets names[i]'s UID. The unknown ones are assigned in ONE
 * conditional batch (counter + k, k reverse and k forward cells; all or
 * nothing), in order of first appearance, so they get the UIDs one-by-one
 * calls in that order would give. Returns 0, or the first error (a name
 * that does not validate, OCT_ENOSUCHNAME when auto_create is off, exhaustion,
 * OCT_EIO); on error ids[] is unspecified. */
OCT_MUST_CHECK int uid_resolve_batch_deferred(uid_registry_t *r, codec_uid_kind_t kind,
                                              const oct_slice_t *names, size_t n, uint64_t *ids,
                                              oct_errbuf_t *eb);

/* Makes durable (one store_sync) every deferred assignment that had returned
 * before this call, and any whose cells another thread could already read,
 * if there is any since the last such sync; otherwise costs two atomic loads.
 * Returns 1 if it synced, 0 if there was nothing to sync, or OCT_EIO.
 * uid_get_or_create calls it before reporting an existing name, so a UID the
 * API acknowledges is always durable. */
OCT_MUST_CHECK int uid_sync_deferred(uid_registry_t *r, oct_errbuf_t *eb);

/* How many store syncs uid_sync_deferred has made since the registry opened. */
uint64_t uid_deferred_syncs(const uid_registry_t *r);

/* Called after a rename or delete took effect (store and cache) with the
 * UID whose name changed or went: lets the write path drop what it keyed by
 * the old name (tsdb's series map). A change made through this registry
 * calls it on the thread that made it; one made through another registry on
 * the same data set (another TSD on the RADOS namespace) calls it on the
 * store's notification thread, before that registry's rename or delete
 * returns (store.h, "Change notification"). id 0 (never assigned) means
 * "any UID of the kind": notifications may have been lost. The hook must
 * not call the store. Calls are serialised. */
typedef void (*uid_change_fn)(void *ctx, codec_uid_kind_t kind, uint64_t id);
/* Sets (fn NULL: clears) the hook; once it returns, the old hook is not
 * running and will not be called again. */
void uid_set_change_hook(uid_registry_t *r, uid_change_fn fn, void *ctx);

/* Renames old to new: every series follows (they hold the UID), the old name
 * becomes free, the new one must not exist. Atomic. */
OCT_MUST_CHECK int uid_rename(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *old_name,
                              size_t old_len, const uint8_t *new_name, size_t new_len,
                              oct_errbuf_t *eb);

/* Deletes a name's forward, reverse and meta cells (OpenTSDB 2.2+). Data rows
 * are left alone. The UID is not reused (the counter never goes back). */
OCT_MUST_CHECK int uid_delete(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *name,
                              size_t len, oct_errbuf_t *eb);

/* Calls cb(name, id) for names of 'kind' starting with 'prefix', in byte
 * order, at most max times (max >= 1). A nonzero return from cb stops.
 * Answered from an in-memory sorted list of the kind's names (built by
 * the first call, then kept current by following the kind's counter and
 * its renames and deletes: uid_names.c), so each call reads one counter
 * cell, not the forward map; cb runs without any registry lock held.
 * Random metric UIDs are read from the store. */
typedef int (*uid_name_fn)(void *ctx, const uint8_t *name, size_t len, uint64_t id);
OCT_MUST_CHECK int uid_suggest(uid_registry_t *r, codec_uid_kind_t kind, const uint8_t *prefix,
                               size_t prefix_len, size_t max, uid_name_fn cb, void *ctx,
                               oct_errbuf_t *eb);

/* Calls cb for every name of 'kind' (the whole forward map), in byte order. */
OCT_MUST_CHECK int uid_foreach(uid_registry_t *r, codec_uid_kind_t kind, uid_name_fn cb, void *ctx,
                               oct_errbuf_t *eb);

/* The kind's counter: the highest UID handed out (0 if none). */
OCT_MUST_CHECK int uid_counter(uid_registry_t *r, codec_uid_kind_t kind, uint64_t *out,
                               oct_errbuf_t *eb);

/* Is 'id' a deferred assignment that did not survive (a power loss took it
 * before uid_sync_deferred)? 1 if the UID has no name and lies above its
 * kind's counter, which the same atomic batch would have raised; 0 if it has
 * a name, or none because it was deleted (the counter never goes back), or
 * for random metric UIDs (always synced); or an error. */
OCT_MUST_CHECK int uid_lost_assignment(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id,
                                       oct_errbuf_t *eb);

/* Drops every cached mapping (`dropcaches`). */
void uid_drop_caches(uid_registry_t *r);

/* The kind's cache figures for the stats (tsd.uid.cache-hit, cache-miss, cache-size; as
 * OpenTSDB's UniqueId counts them, docs/stats.md): lookups of a name or a UID that the cache
 * answered or not, since open, and the names it holds now. Any thread; never blocks. */
typedef struct {
    uint64_t hits, misses, size;
} uid_kind_stats_t;
void uid_kind_stats(uid_registry_t *r, codec_uid_kind_t kind, uid_kind_stats_t *out);

/* UIDMeta, stored as OpenTSDB stores it: JSON in name:<type>_meta of the UID's
 * row, fields in this order: type, displayName, description, notes, created,
 * custom. Strings are borrowed; custom_json is a JSON object or NULL. */
typedef struct {
    const char *display_name;
    const char *description;
    const char *notes;
    int64_t created; /* Unix seconds */
    const char *custom_json;
} uid_meta_t;

/* Writes the UIDMeta of an existing UID (OCT_ENOSUCHID otherwise). */
OCT_MUST_CHECK int uid_meta_put(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id,
                                const uid_meta_t *meta, oct_errbuf_t *eb);

/* Reads the stored UIDMeta JSON into out (appended as one cell's value).
 * Returns 1 if present, 0 if not, or an error. */
OCT_MUST_CHECK int uid_meta_get_json(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id,
                                     store_result_t *out, oct_errbuf_t *eb);

/* The stored UIDMeta JSON as a malloc'd, NUL-terminated string (*json, free
 * it; *len its length). Returns 1 if present, 0 if not (*json NULL), or an
 * error. */
OCT_MUST_CHECK int uid_meta_get(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, char **json,
                                size_t *len, oct_errbuf_t *eb);

/* Deletes the UIDMeta of a UID, leaving its name mapping alone. Deleting
 * meta that is absent (or of an unknown UID) succeeds. Returns 0 or an
 * error (OCT_EIO). */
OCT_MUST_CHECK int uid_meta_delete(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id,
                                   oct_errbuf_t *eb);

/* ---- fsck ------------------------------------------------------------ */

typedef enum {
    UID_FSCK_BAD_COUNTER = 0,    /* counter cell not 8 bytes */
    UID_FSCK_BAD_WIDTH,          /* forward value or reverse key of the wrong width */
    UID_FSCK_FORWARD_NO_REVERSE, /* name -> id, but id has no reverse cell */
    UID_FSCK_REVERSE_MISMATCH,   /* name -> id, but id -> another name (which has no forward) */
    UID_FSCK_DUPLICATE_UID,      /* two names -> one id */
    UID_FSCK_REVERSE_NO_FORWARD, /* id -> name, but name has no forward cell (harmless) */
    UID_FSCK_COUNTER_BEHIND,     /* counter < highest UID in use */
    UID_FSCK_UNKNOWN_QUALIFIER,  /* a cell that is none of the above */
    UID_FSCK_PROBLEM_COUNT
} uid_fsck_problem_t;

typedef struct {
    int fix;            /* repair what is found */
    int delete_unknown; /* with fix: delete cells with unknown qualifiers */
} uid_fsck_opts_t;

typedef struct {
    uint64_t cells;                         /* cells examined */
    uint64_t found[UID_FSCK_PROBLEM_COUNT]; /* per problem */
    uint64_t errors;                        /* sum of found[] */
    uint64_t fixed;                         /* repairs made */
} uid_fsck_stats_t;

/* Called once per finding with a one-line human description. 'kind' is
 * CODEC_UID_N_KINDS for cells outside the three kinds' partitions. */
typedef void (*uid_fsck_report_fn)(void *ctx, codec_uid_kind_t kind, uid_fsck_problem_t p,
                                   const char *msg);

/* Checks the whole UID table, every kind, and with opts->fix repairs:
 * restores missing reverse cells, points a mismatched reverse back at its
 * forward name, renames the names of a UID claimed by several to
 * "fsck.<n1>.<n2>..." (as OpenTSDB), removes orphan reverse cells, raises a
 * counter that is behind, and (delete_unknown) drops unknown cells. Drops the
 * caches after repairs. */
OCT_MUST_CHECK int uid_fsck(uid_registry_t *r, const uid_fsck_opts_t *opts, uid_fsck_report_fn cb,
                            void *ctx, uid_fsck_stats_t *stats, oct_errbuf_t *eb);

const char *uid_fsck_problem_name(uid_fsck_problem_t p);

#endif
