/* parse.h -- OpenTSDB's rules for the text of a data point, shared by the
 * telnet `put` line, /api/put and `octsdb import` (docs/telnet.md, "Data points").
 * Pure functions, no allocation. Messages are OpenTSDB's, so callers can
 * prefix them ("put: invalid value: ...") as OpenTSDB does. */
#ifndef OCT_TSDB_PARSE_H
#define OCT_TSDB_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/point.h"
#include "common/err.h"

/* Tags.parseLong: optional sign, ASCII digits only, at most 19 digits,
 * overflow rejected. OCT_EPARSE with "Empty string", "Just a sign, no value:
 * <s>", "Value too long: <s>", "Invalid character '<c>' in <s>",
 * "Overflow in <s>". */
OCT_MUST_CHECK int tsdb_parse_long(const char *s, size_t n, int64_t *out, oct_errbuf_t *eb);

/* A write-path timestamp: seconds if it fits in 32 bits, else milliseconds
 * (ms above 9999999999999 rejected); <= 0 rejected ("invalid timestamp:
 * <ts>", OCT_EINVAL). With allow_dots (telnet), "1356998400.123" is ms; unlike
 * OpenTSDB, which deletes the dot ("1356998400.5" -> 13569984005), octsdb
 * reads the fraction as a decimal fraction of a second (docs/compat.md).
 * Sets *ts_ms and *is_ms. */
OCT_MUST_CHECK int tsdb_parse_timestamp(const char *s, size_t n, int allow_dots, int64_t *ts_ms,
                                        int *is_ms, oct_errbuf_t *eb);

/* A value: integer if it contains none of ". e E" (strict tsdb_parse_long),
 * otherwise a double; NaN and +-Inf rejected ("value is NaN or Infinite:
 * <v>", OCT_EINVAL); unparsable -> OCT_EPARSE. Sets pt->val and pt->is_float
 * (pt->ts_ms untouched). */
OCT_MUST_CHECK int tsdb_parse_value(const char *s, size_t n, codec_point_t *pt, oct_errbuf_t *eb);

#endif
