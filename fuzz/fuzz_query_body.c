/* fuzz_query_body.c -- libFuzzer target for the /api/query POST body
 * (query/query_body.h): the JSON binding of TSQuery, its sub-queries,
 * filters, downsampling, rate options and tsuids, and the validation texts.
 *
 * The input is the body as the HTTP server hands it over (not
 * NUL-terminated; exact length), bound against a fixed clock. Properties,
 * checked whatever the outcome:
 *   - a failure is a 400 with a non-empty message;
 *   - a success is a query the executor can rely on: start < end, at least
 *     one sub-query, indexes 0..n-1, every sub-query has an aggregator and
 *     exactly one of metric / tsuids, a downsampler with an aggregator (and
 *     the calendar flag when useCalendar), and no two sub-queries equal
 *     (duplicates are dropped);
 *   - binding is deterministic: a second parse gives the same status and
 *     message, or equal sub-queries;
 *   - query_free releases everything (LeakSanitizer), half-built or not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_body.h"

/* 2023-11-14T22:13:20Z: relative times ("1h-ago") resolve against it. */
#define FUZZ_NOW_MS INT64_C(1700000000000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ok(const query_t *q)
{
    if (q->start_ms >= q->end_ms || q->n_subs == 0) abort();
    for (size_t i = 0; i < q->n_subs; i++) {
        const query_sub_t *s = &q->subs[i];
        if (s->index != (int)i || !s->agg) abort();
        if ((s->metric != NULL) == (s->n_tsuids > 0)) abort();
        if (s->has_downsample && !s->ds.agg) abort();
        if (s->has_downsample && q->use_calendar && !s->ds.calendar) abort();
        for (size_t j = 0; j < i; j++)
            if (query_sub_equal(&q->subs[j], s)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so ASan catches a read past the body. */
    char *body = malloc(size ? size : 1);
    if (size) memcpy(body, data, size);
    query_t q1, q2;
    memset(&q1, 0, sizeof q1);
    memset(&q2, 0, sizeof q2);
    query_body_err_t e1, e2;
    int rc1 = query_body_parse(body, size, FUZZ_NOW_MS, &q1, &e1);
    int rc2 = query_body_parse(body, size, FUZZ_NOW_MS, &q2, &e2);
    if (rc1 != rc2) abort();
    if (rc1 != 0) {
        if (e1.status != 400 || !e1.message[0]) abort();
        if (e1.status != e2.status || strcmp(e1.message, e2.message) != 0 ||
            strcmp(e1.details, e2.details) != 0)
            abort();
    } else {
        check_ok(&q1);
        if (q1.n_subs != q2.n_subs || q1.start_ms != q2.start_ms || q1.end_ms != q2.end_ms) abort();
        for (size_t i = 0; i < q1.n_subs; i++)
            if (!query_sub_equal(&q1.subs[i], &q2.subs[i])) abort();
    }
    query_free(&q1);
    query_free(&q2);
    free(body);
    return 0;
}
