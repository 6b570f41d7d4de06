/* fuzz_query.c -- libFuzzer target for the URI query grammar (query/query.h):
 * the `m=` sub-query, `tsuid=`, downsampling specs and filters in text form.
 *
 * The first byte picks the parser; the rest, NUL-terminated (an embedded NUL
 * simply ends the string, as in a decoded URI parameter), is the text. Each
 * parse starts from an empty query_t and must leave it freeable whatever the
 * outcome (LeakSanitizer checks query_free releases everything). Property:
 * a sub-query parsed twice into one query_t is dropped as a duplicate
 * (query_sub_equal), so the second parse never adds a sub-query. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    char *s = malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    oct_errbuf_t eb;
    query_t q;
    memset(&q, 0, sizeof q);
    switch (data[0] % 4) {
    case 0:
        if (query_parse_m(&q, s, &eb) == 0) {
            size_t n = q.n_subs;
            if (query_parse_m(&q, s, &eb) != 0 || q.n_subs != n) abort();
        }
        break;
    case 1:
        if (query_parse_tsuid(&q, s, &eb) == 0) {
            size_t n = q.n_subs;
            if (query_parse_tsuid(&q, s, &eb) != 0 || q.n_subs != n) abort();
        }
        break;
    case 2: {
        query_downsample_t ds;
        memset(&ds, 0, sizeof ds);
        if (query_parse_downsample(s, &ds, &eb) == 0) {
            if (!ds.agg) abort();
            if (!ds.all && ds.interval_ms <= 0) abort();
        }
        break;
    }
    default: {
        /* "tagk=value" through the legacy tag-map form, group-by on. */
        char *eq = strchr(s, '=');
        if (eq) {
            *eq = '\0';
            query_filter_t f;
            memset(&f, 0, sizeof f);
            if (query_filter_from_tag(&f, s, eq + 1, 1, &eb) == 0) {
                FUZZ_IGNORE(query_filter_match(&f, eq + 1, strlen(eq + 1)));
                FUZZ_IGNORE(query_filter_match(&f, s, strlen(s)));
                query_filter_free(&f);
            }
        }
        break;
    }
    }
    query_free(&q);
    free(s);
    return 0;
}
