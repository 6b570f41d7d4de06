/* name.h -- validation of metric names, tag keys and tag values (OpenTSDB Tags.validateString).
 *
 * Names are UTF-8 byte strings (a deliberate deviation from OpenTSDB's Latin-1 squashing,
 * specified in docs/format/uid.md section 5): a name is valid iff it is non-empty, well-formed
 * UTF-8, and every code point is an ASCII letter/digit, one of "-_./", a Unicode letter (Lu Ll Lt
 * Lm Lo, any plane), or listed in the configured tsd.core.tag.allow_specialchars. Error texts
 * match OpenTSDB's. Pure functions, no allocation. */
#ifndef OCT_CODEC_NAME_H
#define OCT_CODEC_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Validates s[0..len) as a name; 'what' is the noun used in the error text ("metric name",
 * "tag name with value [v]", ...). 'specials' is the allow_specialchars setting as a
 * NUL-terminated UTF-8 string, or NULL for none. s == NULL is reported as "null".
 * Returns 0 or OCT_EBADNAME with one of these texts in eb:
 *   Invalid <what> ("<s>"): illegal character: <c>
 *   Invalid <what> ("<s>"): invalid UTF-8 at byte <i>
 *   Invalid <what>: empty string
 *   Invalid <what>: null
 * Bytes of <s> that are not printable UTF-8 appear as \xNN; long names are cut with "...". */
OCT_MUST_CHECK int codec_name_validate(const char *what, const char *s, size_t len,
                                       const char *specials, oct_errbuf_t *eb);

/* The three uses, with OpenTSDB's <what> strings: "metric name",
 * "tag name with value [<tagv>]" (validating tagk), "tag value with key [<tagk>]" (validating
 * tagv). Same returns as codec_name_validate. */
OCT_MUST_CHECK int codec_name_validate_metric(const char *s, size_t len, const char *specials,
                                              oct_errbuf_t *eb);
OCT_MUST_CHECK int codec_name_validate_tagk(const char *tagk, size_t klen, const char *tagv,
                                            size_t vlen, const char *specials, oct_errbuf_t *eb);
OCT_MUST_CHECK int codec_name_validate_tagv(const char *tagv, size_t vlen, const char *tagk,
                                            size_t klen, const char *specials, oct_errbuf_t *eb);

/* 1 iff code point cp is a Unicode letter (general category Lu, Ll, Lt, Lm or Lo). */
int codec_name_is_letter(uint32_t cp);

/* Decodes one UTF-8 code point from s[0..len) (len >= 1). Returns the number of bytes consumed
 * (1..4) and sets *cp, or 0 if the sequence is malformed (bad lead or continuation byte,
 * truncated, overlong, surrogate, or above U+10FFFF). */
size_t codec_utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);

/* Unicode version the letter table was generated from (e.g. "14.0.0"). */
const char *codec_name_unicode_version(void);

/* Internal: the generated table in name_letters.c. */
typedef struct {
    uint32_t lo, hi; /* inclusive */
} codec__cp_range_t;
extern const codec__cp_range_t codec__letter_ranges[];
extern const size_t codec__letter_range_count;
extern const char codec__letters_unicode_version[];

#endif
