/* select.h -- which series a query names, and the latest point of one.
 *
 * Series selection answers from the in-memory series index
 * (tsdb_series_find), so it needs no TSUID meta tracking and never touches
 * the store. A condition is one tag key (or any key) with a set of allowed
 * values (or any value); a series matches when every condition is met by one
 * of its tag pairs, and, in exact mode, when it also has no other pairs.
 *
 * Threads: every function is safe to call from any number of threads.
 * Errors are returned (common/err.h), with their text in eb. */
#ifndef OCT_TSDB_SELECT_H
#define OCT_TSDB_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"

/* One tag condition. tagv is borrowed for the call. */
typedef struct {
    uint64_t tagk;        /* 0: any key */
    const uint64_t *tagv; /* one of these values ... */
    size_t n_tagv;        /* ... or, when 0, any value */
} tsdb_tag_match_t;

typedef enum {
    TSDB_SELECT_SUBSET = 0, /* the series has at least the pairs asked for */
    TSDB_SELECT_EXACT = 1,  /* and no others (as many pairs as conditions) */
} tsdb_select_mode_t;

/* Calls fn once for each series of metric matching every condition, in
 * TSUID byte order, at most limit times (0: no limit). fn returns 0 to go
 * on, > 0 to stop; that value is returned, else 0. Never fails. */
int tsdb_select(tsdb_t *db, uint64_t metric, const tsdb_tag_match_t *conds, size_t n_conds,
                tsdb_select_mode_t mode, size_t limit, tsdb_series_fn fn, void *ctx);

/* As tsdb_select on names: metric{tagk[i]=tagv[i], ...}, one value per key.
 * Names resolve in order metric, tagk[0], tagv[0], tagk[1], ...; the first
 * that fails is returned (uid_get_id's code, e.g. OCT_ENOSUCHNAME, with its
 * message in eb) before fn is called. */
int tsdb_select_names(tsdb_t *db, const char *metric, const char *const *tagk,
                      const char *const *tagv, size_t n_tags, tsdb_select_mode_t mode,
                      tsdb_series_fn fn, void *ctx, oct_errbuf_t *eb);

/* The latest point of a series at or before the end of the hour holding
 * now_ms, looking back_scan_h whole hours before that hour (0: back to the
 * epoch). Reads the store and the in-memory head, in windows doubling in
 * size going back (see docs/api-query-last.md), so a recent point costs one
 * small read. Returns 1 with *out set, 0 if there is none, or an error. */
OCT_MUST_CHECK int tsdb_last_point(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len,
                                   int64_t now_ms, int64_t back_scan_h, codec_point_t *out,
                                   oct_errbuf_t *eb);

#endif
