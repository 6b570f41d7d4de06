/* dtoa.h -- fast "shortest of %.15g..%.17g that reads back" double formatting.
 *
 * The API and CLI print doubles as the text of the loop
 *     for (p = min_prec; p <= 17; p++) { snprintf("%.*g", p, v); if (strtod() == v) break; }
 * That loop costs up to three correctly rounded conversions each way. This
 * module produces byte-identical text from one "%.16e" conversion: the
 * shorter candidates are rounded from its 17 digits (falling back to printf
 * only when the dropped digits are an exact "50...0" tie, where the 17-digit
 * text cannot tell which way the true value lies), and "reads back" is
 * checked with exact double arithmetic (Clinger's fast path) where that is
 * exact, strtod otherwise. A correctly rounded 17-digit text always reads
 * back, so p = 17 needs no check. Pure functions; thread-safe. */
#ifndef OCT_COMMON_DTOA_H
#define OCT_COMMON_DTOA_H

#include <stddef.h>

/* Enough for any output of oct_dtoa_g / oct_dtoa, NUL included. */
#define OCT_DTOA_BUF 32

/* The digits the loop above settles on for finite v, without sign: writes
 * them to dig (trailing zeros stripped, at least one digit, NUL-terminated;
 * >= 18 bytes) and returns their count; *exp10 is the decimal exponent of
 * the first digit (v == 0: "0", exponent 0) and *prec the precision p the loop
 * stopped at. These are also the digits of the same loop over "%.*e" with
 * p - 1 decimals (same rounding). min_prec is clamped to 1..17. Infinite or
 * NaN v: returns 0. */
int oct_dtoa_digits(double v, int min_prec, char *dig, int *exp10, int *prec);

/* Exactly the text of the loop above for finite v ("%g" layout: exponent form
 * "de+XX" when the exponent is < -4 or >= p, trailing zeros stripped, "-0"
 * for -0.0), into buf (>= OCT_DTOA_BUF bytes, NUL-terminated); returns its
 * length. Infinite or NaN v: writes "" and returns 0 (callers spell those). */
size_t oct_dtoa_g(double v, int min_prec, char *buf);

/* oct_dtoa_g(v, 15, buf): the API's format (Jackson-like without ".0"). */
size_t oct_dtoa(double v, char *buf);

#endif
