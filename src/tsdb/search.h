/* search.h -- /api/search/{tsmeta,tsmeta_summary,tsuids,uidmeta} and
 * `octsdb search`, answered from the in-memory series index and the UID
 * registry, without a search plugin (docs/api-search.md).
 *
 * Query grammar (a small, exact subset of the Lucene-style strings that
 * OpenTSDB's Elasticsearch plugin takes): terms separated by spaces and/or
 * the word AND, all of which must hold. A pattern is a literal name or a
 * glob whose only wildcard is '*' ("sys.*", "*web*", "*"). An empty query
 * matches everything.
 *   series (tsmeta, tsmeta_summary, tsuids):
 *     PAT | name:PAT | metric:PAT   the metric's name matches
 *     tagk:PAT                      some tag key matches
 *     tagv:PAT                      some tag value matches
 *     KEY:PAT                       tag KEY (exact name) has a value matching
 *   uidmeta:
 *     PAT | name:PAT                the UID's name matches
 *     type:metric|tagk|tagv         the UID's kind (repeatable terms AND)
 * Anything else (OR, NOT, parentheses, quotes, ? ~ ^ [ ] { } \, a '*' in a
 * tag key, a field uidmeta does not have) is refused with OCT_EPARSE and a
 * message naming it: never a silently different answer.
 *
 * Results are in a fixed order: series by TSUID bytes; UIDs by kind
 * (metric, tagk, tagv), then name bytes. start/limit select the page;
 * *total is the number of matches before paging.
 *
 * Threads: safe from any number of threads. Errors (common/err.h):
 * OCT_EPARSE (bad query), OCT_EIO (the registry could not be read), with
 * text in eb. */
#ifndef OCT_TSDB_SEARCH_H
#define OCT_TSDB_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "codec/uid_bytes.h"
#include "common/err.h"
#include "tsdb/tsdb.h"

/* One matching series, in page order. tsuid is valid during the call.
 * Nonzero stops the walk and is returned. */
typedef int (*tsdb_search_series_fn)(void *ctx, const uint8_t *tsuid, size_t len);

OCT_MUST_CHECK int tsdb_search_series(tsdb_t *db, const char *query, size_t start, size_t limit,
                                      tsdb_search_series_fn fn, void *ctx, size_t *total,
                                      oct_errbuf_t *eb);

/* One matching UID, in page order; name valid during the call. */
typedef int (*tsdb_search_uid_fn)(void *ctx, codec_uid_kind_t kind, uint64_t id,
                                  const uint8_t *name, size_t len);

OCT_MUST_CHECK int tsdb_search_uids(tsdb_t *db, const char *query, size_t start, size_t limit,
                                    tsdb_search_uid_fn fn, void *ctx, size_t *total,
                                    oct_errbuf_t *eb);

#endif
