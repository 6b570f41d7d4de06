/* fuzz_api_put.c -- libFuzzer target for an /api/put body turned into points.
 *
 * api_put has no pure entry point (it needs a live api_call_t), so this
 * target walks the body the way api_put does: json_stream over a top-level
 * array (or json_parse of a single object), then per element the "metric",
 * "timestamp", "value" and "tags" members through json_number_i64 /
 * json_number_double, tsdb_parse_timestamp, tsdb_parse_value and the name
 * validators. Non-finite numbers are allowed, as the server allows them
 * (Jackson's ALLOW_NON_NUMERIC_NUMBERS). Checks: an accepted value is an
 * integer or a finite double; an accepted timestamp is positive. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/name.h"
#include "common/json.h"
#include "tsdb/parse.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *scalar_text(const json_value_t *v, size_t *len)
{
    if (!v) return NULL;
    switch ((json_type_t)v->type) {
    case JSON_STRING:
    case JSON_NUMBER:
        *len = v->len;
        return v->str;
    case JSON_TRUE:
        *len = 4;
        return "true";
    case JSON_FALSE:
        *len = 5;
        return "false";
    default:
        return NULL;
    }
}

static void element(const json_value_t *v)
{
    oct_errbuf_t eb;
    if (v->type != JSON_OBJECT) return;
    const json_value_t *jm = json_obj_get(v, "metric"), *jt = json_obj_get(v, "timestamp");
    const json_value_t *jv = json_obj_get(v, "value"), *jtags = json_obj_get(v, "tags");
    size_t ml = 0, vl = 0;
    const char *m = scalar_text(jm, &ml), *val = scalar_text(jv, &vl);
    if (m) FUZZ_IGNORE(codec_name_validate_metric(m, ml, NULL, &eb));
    if (jt && jt->type == JSON_NUMBER) {
        int64_t t;
        double d;
        if (json_number_i64(jt, &t) == 0 && (jt->flags & JSON_F_INTEGER) == 0) abort();
        FUZZ_IGNORE(json_number_double(jt, &d));
    }
    if (jt && (jt->type == JSON_NUMBER || jt->type == JSON_STRING)) {
        int64_t ts;
        int is_ms;
        for (int dots = 0; dots < 2; dots++)
            if (tsdb_parse_timestamp(jt->str, jt->len, dots, &ts, &is_ms, &eb) == 0 && ts <= 0)
                abort();
    }
    if (val) {
        codec_point_t pt;
        memset(&pt, 0, sizeof pt);
        if (tsdb_parse_value(val, vl, &pt, &eb) == 0 && pt.is_float && !isfinite(pt.val.f)) abort();
    }
    if (jtags && jtags->type == JSON_OBJECT) {
        for (const json_value_t *t = jtags->child; t; t = t->next) {
            size_t tl = 0;
            const char *tv = scalar_text(t, &tl);
            if (!tv) tv = "";
            FUZZ_IGNORE(codec_name_validate_tagk(t->key, t->key_len, tv, tl, NULL, &eb));
            FUZZ_IGNORE(codec_name_validate_tagv(tv, tl, t->key, t->key_len, NULL, &eb));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    oct_errbuf_t eb;
    json_arena_t a = JSON_ARENA_INIT;
    json_stream_t st;
    if (json_stream_open(&st, s, size, JSON_ALLOW_NONFINITE, &eb) == 0) {
        json_value_t *e;
        while (json_stream_next(&st, &a, &e, &eb) == 1) {
            element(e);
            json_arena_reset(&a);
        }
    } else {
        json_value_t *v;
        if (json_parse(&a, s, size, JSON_ALLOW_NONFINITE, &v, &eb) == 0) element(v);
    }
    json_arena_free(&a);
    return 0;
}
