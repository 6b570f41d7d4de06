/* query_body.h -- the /api/query request as a query_t: the JSON body of a
 * POST (OpenTSDB's TSQuery binding) and the checks GET shares with it.
 *
 * Pure functions: no request, response or clock of their own (the caller
 * passes "now"), so the fuzzer (fuzz/fuzz_query_body.c) drives exactly what
 * the HTTP handler runs. An error is reported as the HTTP answer the handler
 * writes: a status (always 400 here), OpenTSDB's message and optional
 * details, the texts of TSQuery/TSSubQuery.validateAndSetQuery.
 *
 * Threads: no shared state. */
#ifndef OCT_QUERY_QUERY_BODY_H
#define OCT_QUERY_QUERY_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "query/query.h"

/* The error answer: http_error(resp, status, message, details[0] ? details : NULL). */
typedef struct {
    int status;
    char message[OCT_ERRBUF_SIZE];
    char details[OCT_ERRBUF_SIZE];
} query_body_err_t;

/* Binds the JSON body body[0..len) (not NUL-terminated; NaN/Infinity
 * allowed, as Jackson is configured in OpenTSDB) into q, which must be
 * zeroed: times (relative ones against now_ms), timezone, the flags the body
 * carries (the caller ORs the query-string flags in afterwards), the
 * sub-queries with duplicates dropped and indexes renumbered, and the
 * calendar flag copied into each downsampler. Strings numbers and booleans
 * are coerced as Jackson does; unknown fields are ignored, but 2.4's
 * unknown rollupUsage is an error; percentiles and showHistogramBuckets make a
 * histogram sub-query (query_hist_check); of "tags" and
 * "filters" the one written last wins. An empty or all-whitespace body is
 * "Missing message content".
 *
 * Returns 0, or -1 with *err set. Either way q owns what it points to and the
 * caller releases it with query_free (a half-built q is freeable). */
OCT_MUST_CHECK int query_body_parse(const char *body, size_t len, int64_t now_ms, query_t *q,
                                    query_body_err_t *err);

/* The request's time range (TSQuery.validateAndSetQuery): start required,
 * end defaults to now_ms, end must be after start; parsed in q->timezone.
 * Sets q->start_ms/end_ms. Returns 0 or -1 with *err set. */
OCT_MUST_CHECK int query_body_set_times(query_t *q, const char *start, const char *end,
                                        int64_t now_ms, query_body_err_t *err);

/* A named q->timezone must exist when some sub-query downsamples. Returns 0
 * or -1 with *err set. */
OCT_MUST_CHECK int query_body_check_timezone(const query_t *q, query_body_err_t *err);

#endif
