/* fuzz_json.c -- libFuzzer target for the JSON parser (common/json.h).
 *
 * Properties: json_parse and json_validate agree on every input, with and
 * without JSON_ALLOW_NONFINITE; a parsed document re-serialized by the
 * writer (json_w_value) parses again, and re-serializing that gives the same
 * text (the writer's output is a fixed point); json_stream walks a top-level
 * array without crashing, and accepts exactly when json_parse does for
 * arrays. The first input byte picks the flags so both modes are fuzzed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reserialize(const json_value_t *v, unsigned flags)
{
    oct_strbuf_t a = OCT_STRBUF_INIT, b = OCT_STRBUF_INIT;
    json_writer_t w;
    json_w_init(&w, &a);
    json_w_value(&w, v);
    json_arena_t ar = JSON_ARENA_INIT;
    json_value_t *v2 = NULL;
    oct_errbuf_t eb;
    if (json_parse(&ar, a.ptr, a.len, flags | JSON_ALLOW_NONFINITE, &v2, &eb) != 0) abort();
    json_w_init(&w, &b);
    json_w_value(&w, v2);
    if (a.len != b.len || memcmp(a.ptr, b.ptr, a.len) != 0) abort();
    json_arena_free(&ar);
    oct_strbuf_free(&a);
    oct_strbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    unsigned flags = (data[0] & 1) ? JSON_ALLOW_NONFINITE : 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;

    json_arena_t ar = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    oct_errbuf_t eb;
    int rp = json_parse(&ar, s, n, flags, &v, &eb);
    int rv = json_validate(s, n, flags, &eb);
    if ((rp == 0) != (rv == 0)) abort();
    if (rp == 0) {
        /* Depth of the writer is limited to 64 levels; deeper documents
         * are valid input but are not re-serialized. */
        long depth = 0, maxd = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '[' || s[i] == '{') {
                if (++depth > maxd) maxd = depth;
            } else if (s[i] == ']' || s[i] == '}') {
                depth--;
            }
        }
        if (maxd < 60) reserialize(v, flags);
    }

    json_stream_t st;
    json_arena_t sa = JSON_ARENA_INIT;
    int rs = json_stream_open(&st, s, n, flags, &eb);
    if (rs == 0) {
        json_value_t *e;
        while ((rs = json_stream_next(&st, &sa, &e, &eb)) == 1)
            json_arena_reset(&sa);
        if (rp == 0 && v->type == JSON_ARRAY && rs != 0) abort();
        if (rs == 0 && rp != 0) abort();
    }
    json_arena_free(&sa);
    json_arena_free(&ar);
    return 0;
}
