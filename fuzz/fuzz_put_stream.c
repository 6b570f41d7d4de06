/* fuzz_put_stream.c -- libFuzzer target for /api/put's one-pass array
 * parse: api_put streams the elements of an array (json_stream_next) and,
 * when the closing bracket arrives without an error, takes the body as
 * valid without running json_validate; on a streaming error it answers with
 * json_validate's message. Both shortcuts are sound only if streaming and
 * whole-document parsing agree, which this target checks on every input:
 *   - the stream reaches the end cleanly  <=>  json_validate accepts;
 *   - a valid array streams into exactly the elements json_parse builds
 *     (same types, flags, strings, numbers' text, keys, child counts, deep);
 *   - json_parse and json_validate agree on the verdict and the message.
 * Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_value(const json_value_t *a, const json_value_t *b)
{
    if (a->type != b->type || a->flags != b->flags || a->n != b->n) return 0;
    if (a->key_len != b->key_len || (a->key_len && memcmp(a->key, b->key, a->key_len))) return 0;
    if (a->type == JSON_STRING || a->type == JSON_NUMBER) {
        if (a->len != b->len || (a->len && memcmp(a->str, b->str, a->len))) return 0;
    }
    const json_value_t *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next)
        if (!same_value(x, y)) return 0;
    return !x && !y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const unsigned flags = JSON_ALLOW_NONFINITE;
    oct_errbuf_t e1, e2;
    int valid = json_validate(s, size, flags, &e1) == 0;

    json_arena_t da = JSON_ARENA_INIT;
    json_value_t *doc = NULL;
    int parsed = json_parse(&da, s, size, flags, &doc, &e2) == 0;
    if (parsed != valid) abort();
    if (!valid && strcmp(e1.msg, e2.msg) != 0) abort();

    size_t i = 0;
    while (i < size && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i < size && s[i] == '[') {
        json_stream_t st;
        if (json_stream_open(&st, s, size, flags, &e2)) abort(); /* it starts with '[' */
        json_arena_t sa = JSON_ARENA_INIT;
        const json_value_t *want = parsed ? doc->child : NULL;
        int rc;
        size_t n = 0;
        for (;;) {
            json_value_t *v;
            rc = json_stream_next(&st, &sa, &v, &e2);
            if (rc <= 0) break;
            /* an element streamed before a later error need not match anything */
            if (want) {
                if (!same_value(v, want)) abort();
                want = want->next;
            }
            n++;
            if (n % 4 == 0) json_arena_reset(&sa); /* api_put resets per chunk */
        }
        if ((rc == 0) != valid) abort();
        if (valid && (want || n != doc->n)) abort();
        json_arena_free(&sa);
    }
    json_arena_free(&da);
    return 0;
}
