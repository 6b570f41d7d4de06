/* fuzz_telnet_put.c -- libFuzzer target for the telnet `put` line:
 * telnet_parse_put (server/telnet.h) and the pure pieces it shares with
 * /api/put and import (tsdb/parse.h, codec/name.h).
 *
 * The input is one line (the transport has already cut the line end). The
 * first byte's low bit picks a small tag room (16 slices) or a large one
 * (512) so both the ENOSPC path and long tag lists are reached; the line is
 * the rest. Properties of an accepted line: the metric and every tag key and
 * value are non-empty slices inside the line without spaces, a tag key or
 * value has no '=', the tag count fits the room, the timestamp is positive; and
 * the line rebuilt from the parsed point ("put m <ts> <value> k=v ...", the
 * value as %lld or %.17g) parses to the same point (round trip). Every token
 * also goes through tsdb_parse_long (re-formatted integers read back the
 * same) and the name validators, which must not crash on any bytes. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/name.h"
#include "server/telnet.h"
#include "tsdb/parse.h"
#include "tsdb/write.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

#define MAX_SLICES 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static oct_slice_t tags_a[MAX_SLICES], tags_b[MAX_SLICES];
static char rebuilt[TELNET_MAX_LINE * 2 + 128];

static int inside(oct_slice_t s, const char *line, size_t len)
{
    return (const char *)s.ptr >= line && (const char *)s.ptr + s.len <= line + len;
}

static int clean(oct_slice_t s)
{
    return s.len > 0 && !memchr(s.ptr, ' ', s.len) && !memchr(s.ptr, '=', s.len);
}

static void check_long(const char *s, size_t n)
{
    oct_errbuf_t eb;
    int64_t v;
    if (tsdb_parse_long(s, n, &v, &eb) != 0) return;
    char buf[32];
    int k = snprintf(buf, sizeof buf, "%" PRId64, v);
    int64_t w;
    if (tsdb_parse_long(buf, (size_t)k, &w, &eb) != 0 || w != v) abort();
}

static void tokens(const char *s, size_t size)
{
    oct_errbuf_t eb;
    size_t i = 0;
    int f = 0;
    while (i <= size) {
        const char *sp = i < size ? memchr(s + i, ' ', size - i) : NULL;
        size_t end = sp ? (size_t)(sp - s) : size;
        const char *t = s + i;
        size_t n = end - i;
        check_long(t, n);
        if (f == 1) FUZZ_IGNORE(codec_name_validate_metric(t, n, NULL, &eb));
        const char *eq = f > 3 ? memchr(t, '=', n) : NULL;
        if (eq) {
            size_t kl = (size_t)(eq - t);
            FUZZ_IGNORE(codec_name_validate_tagk(t, kl, eq + 1, n - kl - 1, NULL, &eb));
        }
        f++;
        i = end + 1;
    }
}

/* The rebuilt line has room for any accepted line: the input is at most TELNET_MAX_LINE. */
static void append(size_t *n, const void *p, size_t len)
{
    if (*n + len + 1 > sizeof rebuilt) abort();
    memcpy(rebuilt + *n, p, len);
    *n += len;
}

/* Builds "put <metric> <ts> <value> k=v ..." from dp; returns its length or 0 if the
 * timestamp has no text form that reads back as the same instant. */
static size_t rebuild(const tsdb_dp_t *dp)
{
    char ts[32];
    int64_t t = dp->pt.ts_ms;
    if (!dp->ts_is_ms && t % 1000 == 0)
        snprintf(ts, sizeof ts, "%" PRId64, t / 1000);
    else if (t > 4294967295LL)
        snprintf(ts, sizeof ts, "%" PRId64, t);
    else
        return 0;
    char val[40];
    if (dp->pt.is_float) {
        /* A float must read back as a float: "-0" or "1e+20"-less "100" would be integers. */
        int k = snprintf(val, sizeof val, "%.17g", dp->pt.val.f);
        if (!strpbrk(val, ".eE")) snprintf(val + k, sizeof val - (size_t)k, ".0");
    } else
        snprintf(val, sizeof val, "%" PRId64, dp->pt.val.i);
    /* memcpy, not %.*s: names may hold NUL bytes, which the tokenizer keeps. */
    size_t n = 0;
    append(&n, "put ", 4);
    append(&n, dp->metric.ptr, dp->metric.len);
    append(&n, " ", 1);
    append(&n, ts, strlen(ts));
    append(&n, " ", 1);
    append(&n, val, strlen(val));
    for (size_t i = 0; i < dp->n_tags; i++) {
        oct_slice_t k = dp->tags[2 * i], v = dp->tags[2 * i + 1];
        append(&n, " ", 1);
        append(&n, k.ptr, k.len);
        append(&n, "=", 1);
        append(&n, v.ptr, v.len);
    }
    /* No tags: OpenTSDB counts words split on single spaces, so only a trailing blank lets
     * "put m t v " through the tokenizer (the write path then asks for a tag). */
    if (dp->n_tags == 0) rebuilt[n++] = ' ';
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > TELNET_MAX_LINE) return 0;
    size_t room = (data[0] & 1) ? MAX_SLICES : 16;
    const char *line = (const char *)data + 1;
    size_t len = size - 1;
    tokens(line, len);

    tsdb_dp_t dp;
    char err[256];
    memset(&dp, 0, sizeof dp);
    int rc = telnet_parse_put(line, len, &dp, tags_a, room, err, sizeof err);
    if (rc != 0) {
        if (rc != OCT_EINVAL && rc != OCT_EPARSE && rc != OCT_ENOSPC) abort();
        if (!memchr(err, '\0', sizeof err)) abort();
        return 0;
    }
    /* The metric may hold '=' (the tokenizer does not validate names). */
    if (!inside(dp.metric, line, len) || !dp.metric.len ||
        memchr(dp.metric.ptr, ' ', dp.metric.len))
        abort();
    if (2 * dp.n_tags > room || dp.tags != tags_a) abort();
    for (size_t i = 0; i < 2 * dp.n_tags; i++)
        if (!inside(dp.tags[i], line, len) || !clean(dp.tags[i])) abort();
    if (dp.pt.ts_ms <= 0) abort();

    size_t n = rebuild(&dp);
    if (!n) return 0;
    tsdb_dp_t dp2;
    memset(&dp2, 0, sizeof dp2);
    if (telnet_parse_put(rebuilt, n, &dp2, tags_b, MAX_SLICES, err, sizeof err) != 0) abort();
    if (!oct_slice_eq(dp.metric, dp2.metric) || dp.n_tags != dp2.n_tags) abort();
    if (dp.pt.ts_ms != dp2.pt.ts_ms || dp.pt.is_float != dp2.pt.is_float) abort();
    if (dp.pt.is_float ? memcmp(&dp.pt.val.f, &dp2.pt.val.f, 8) : dp.pt.val.i != dp2.pt.val.i)
        abort();
    for (size_t i = 0; i < 2 * dp.n_tags; i++)
        if (!oct_slice_eq(dp.tags[i], dp2.tags[i])) abort();
    return 0;
}
