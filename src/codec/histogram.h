/* histogram.h -- OpenTSDB 2.4's simple bucketed histogram: its cell qualifier and its
 * codec's bytes (docs/format/histogram.md).
 *
 * Pure functions: no I/O, no allocation; outputs go into buffers the caller supplies and
 * decoders take the caller's bucket array. Decoders bounds-check everything and report bad
 * bytes as OCT_ECORRUPT, whatever the input; they never crash. Threads: no shared state. */
#ifndef OCT_CODEC_HISTOGRAM_H
#define OCT_CODEC_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define CODEC_HIST_MAX_BUCKETS 32767 /* the bucket count is a signed 2-byte short */
#define CODEC_HIST_VARINT_MAX  9     /* bytes of the longest varint */

/* One bucket: n values fell in [lo, hi). */
typedef struct {
    float lo, hi;
    uint64_t n; /* a Java long's bits */
} codec_hist_bucket_t;

/* A histogram; buckets are borrowed (the caller owns the array). */
typedef struct {
    codec_hist_bucket_t *buckets;
    size_t n_buckets;
    uint64_t underflow, overflow;
} codec_hist_t;

/* Java's Float.compare on lo, then on hi: the stored order of buckets (numeric, -0.0 before
 * 0.0, NaN last). 0 means the same bucket. */
int codec_hist_bucket_cmp(const codec_hist_bucket_t *a, const codec_hist_bucket_t *b);

/* Sorts h's buckets into the stored order (Java's Float.compare on lo, then hi) and keeps,
 * of buckets with the same bounds, the one that came last. Updates h->n_buckets. */
void codec_hist_normalize(codec_hist_t *h);

/* The payload's size for h (without the id byte). */
size_t codec_hist_payload_len(const codec_hist_t *h);

/* Writes h's payload into out[0..cap): the buckets as given (normalize first), count,
 * underflow, overflow. *len = bytes written. Returns 0, OCT_ERANGE (more than
 * CODEC_HIST_MAX_BUCKETS buckets) or OCT_ENOSPC (cap too small; out partly written). */
OCT_MUST_CHECK int codec_hist_encode(const codec_hist_t *h, uint8_t *out, size_t cap, size_t *len,
                                     oct_errbuf_t *eb);

/* Reads the payload p[0..n) into out, its buckets into b[0..cap). Returns 0, OCT_ECORRUPT
 * (shorter than 6 bytes, a negative count, ends inside a bucket or a varint) or OCT_ENOSPC
 * (more than cap buckets; out->n_buckets then holds how many there are). */
OCT_MUST_CHECK int codec_hist_decode(const uint8_t *p, size_t n, codec_hist_bucket_t *b, size_t cap,
                                     codec_hist_t *out, oct_errbuf_t *eb);

/* A cell value: the codec id byte, then the payload. *id receives the byte; the rest is
 * codec_hist_decode. When want_id >= 0 a different id is OCT_ECORRUPT ("Data ID <n> did not
 * match the codec ID <m>"). */
OCT_MUST_CHECK int codec_hist_decode_value(const uint8_t *v, size_t n, int want_id, uint8_t *id,
                                           codec_hist_bucket_t *b, size_t cap, codec_hist_t *out,
                                           oct_errbuf_t *eb);

/* The qualifier of a histogram point offset_ms after its row's base hour (0..3,599,999):
 * 06 + 2-byte seconds when ms is 0 (offset_ms must then be whole seconds), else 06 + 4-byte
 * milliseconds. Returns its length (3 or 5), or OCT_ERANGE. out needs 5 bytes. */
OCT_MUST_CHECK int codec_hist_qualifier(uint32_t offset_ms, int ms, uint8_t out[5]);

/* The offset in ms and precision of a histogram qualifier q[0..n). Returns 0, or
 * OCT_ECORRUPT if it is not one (prefix other than 06, length other than 3 or 5, an offset
 * past the hour). */
OCT_MUST_CHECK int codec_hist_qualifier_parse(const uint8_t *q, size_t n, uint32_t *offset_ms,
                                              int *ms);

/* The text form of telnet `histogram` (docs/histograms.md): items separated by ':', each
 * key=value; key u (underflow), o (overflow) or "lo,hi" (Java floats); values Java longs.
 * Buckets go into b[0..cap), normalized (later duplicates win). Returns 0, OCT_EPARSE with
 * 2.4's text ("Improperly formatted bucket: <item>", "Improperly formatted bounds: <item>",
 * "For input string: ...") or OCT_ENOSPC (more than cap buckets). */
OCT_MUST_CHECK int codec_hist_parse_text(const char *s, size_t n, codec_hist_bucket_t *b,
                                         size_t cap, codec_hist_t *out, oct_errbuf_t *eb);

/* A bucket key "lo,hi" of /api/histogram: 0, OCT_EPARSE (not exactly one comma) or
 * OCT_ERANGE (a bound that is not a number). */
OCT_MUST_CHECK int codec_hist_parse_bounds(const char *s, size_t n, float *lo, float *hi);

/* Varints of the payload: writes v (1..9 bytes) into out, returns the length. */
size_t codec_hist_varint_put(uint64_t v, uint8_t out[CODEC_HIST_VARINT_MAX]);
/* Reads one from p[0..n); returns its length, or 0 if p ends inside it. */
size_t codec_hist_varint_get(const uint8_t *p, size_t n, uint64_t *v);

#endif
