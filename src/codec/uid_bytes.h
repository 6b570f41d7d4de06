/* uid_bytes.h -- OpenTSDB unique IDs as bytes, hex and Java byte lists; UID kinds.
 *
 * A UID is an unsigned integer stored as exactly 'width' (1..8) big-endian bytes; the format,
 * the width-8 limit decision (2^63 - 1) and the text forms are specified in
 * docs/format/uid.md. Everything here is pure: no I/O, no allocation; outputs go into buffers
 * the caller supplies. */
#ifndef OCT_CODEC_UID_BYTES_H
#define OCT_CODEC_UID_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define CODEC_UID_MAX_WIDTH 8

typedef enum { CODEC_UID_METRIC = 0, CODEC_UID_TAGK = 1, CODEC_UID_TAGV = 2 } codec_uid_kind_t;
#define CODEC_UID_N_KINDS 3

/* Largest id a UID of 'width' bytes may hold: 2^(8*width) - 1 for widths 1..7, INT64_MAX for
 * width 8 (OpenTSDB's counter is a signed long). 0 if width is outside 1..8. */
uint64_t codec_uid_max(unsigned width);

/* Writes 'id' as 'width' big-endian bytes into out[0..width). Returns 0, OCT_EINVAL if width
 * is outside 1..8, or OCT_ERANGE if id > codec_uid_max(width) (out untouched on error). */
OCT_MUST_CHECK int codec_uid_encode(uint64_t id, unsigned width, uint8_t *out);

/* Reads 'width' (1..8, unchecked beyond an assert) big-endian bytes. Never fails. */
uint64_t codec_uid_decode(const uint8_t *uid, unsigned width);

/* Upper-case hex of uid[0..n), two characters per byte, NUL-terminated into out.
 * Returns the number of characters (2n), or OCT_ENOSPC if cap < 2n + 1. Works for any byte
 * string (TSUIDs too). */
OCT_MUST_CHECK int codec_uid_to_hex(const uint8_t *uid, size_t n, char *out, size_t cap);

/* Parses hex s[0..len) (either case; odd length gets a leading '0') into exactly 'width' bytes,
 * left-padding with zero bytes. 'width' may be any byte count >= 1 (a UID width or a TSUID
 * length). Returns 0, or OCT_EPARSE (empty, bad character, more than 'width' bytes) with the
 * reason in eb. out is written only on success. */
OCT_MUST_CHECK int codec_uid_from_hex(const char *s, size_t len, size_t width, uint8_t *out,
                                      oct_errbuf_t *eb);

/* Java Arrays.toString(byte[]) of b[0..n): "[0, 0, -28]". NUL-terminated into out. Returns the
 * length written (without NUL), or OCT_ENOSPC. At most 6 characters per byte + 3 are needed. */
OCT_MUST_CHECK int codec_uid_to_javabytes(const uint8_t *b, size_t n, char *out, size_t cap);

/* Parses a Java byte list "[0, 0, -28]" (blanks optional; elements -128..255) from s[0..len)
 * into out[0..cap). Returns the number of bytes, OCT_EPARSE with the reason in eb, or
 * OCT_ENOSPC if there are more than cap elements. */
OCT_MUST_CHECK int codec_uid_from_javabytes(const char *s, size_t len, uint8_t *out, size_t cap,
                                            oct_errbuf_t *eb);

/* "metrics", "tagk", "tagv": the tsdb-uid qualifier of a kind. NULL for an invalid kind. */
const char *codec_uid_kind_qualifier(codec_uid_kind_t kind);
/* "metric_meta", "tagk_meta", "tagv_meta" (sic: OpenTSDB's code, not its docs). NULL if invalid. */
const char *codec_uid_kind_meta_qualifier(codec_uid_kind_t kind);

/* Parses a user-facing type string, case-insensitively: "metric" or "metrics", "tagk", "tagv".
 * Returns 0 and sets *kind, or OCT_EINVAL with "Invalid type requested: <s>" in eb. */
OCT_MUST_CHECK int codec_uid_kind_parse(const char *s, size_t len, codec_uid_kind_t *kind,
                                        oct_errbuf_t *eb);

/* Maps an exact, case-sensitive tsdb-uid qualifier ("metrics", "tagk", "tagv") back to its
 * kind. Returns 0, or OCT_ENOTFOUND for anything else (including the meta qualifiers). */
OCT_MUST_CHECK int codec_uid_kind_from_qualifier(const char *q, size_t len, codec_uid_kind_t *kind);

#endif
