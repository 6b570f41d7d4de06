/* pow10.h -- powers of ten as exact integers and exact doubles, for the
 * decimal codecs (the block cell's scaled integers) and the double formatter.
 * Read-only tables, safe from any thread. */
#ifndef OCT_COMMON_POW10_H
#define OCT_COMMON_POW10_H

#include <stdint.h>

#define OCT_POW10_U64_MAX 19 /* 10^19 is the largest power of ten in a uint64 */
#define OCT_POW10_F64_MAX 22 /* 10^22 is the largest one exact as a double */

/* oct_pow10_u64[k] = 10^k for k in 0..OCT_POW10_U64_MAX. */
extern const uint64_t oct_pow10_u64[OCT_POW10_U64_MAX + 1];
/* oct_pow10_f64[k] = 10^k, exactly, for k in 0..OCT_POW10_F64_MAX. */
extern const double oct_pow10_f64[OCT_POW10_F64_MAX + 1];

#endif
