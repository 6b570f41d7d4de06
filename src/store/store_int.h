/* store_int.h -- private to src/store: the physical key layout of the RocksDB
 * backend (docs/format/store-keys.md). Exposed only so unit tests can check
 * the bytes against the documented vectors; nothing outside src/store and
 * its tests may include it.
 *
 *   key    = enc(partition) | enc(row) | family | 00 | qualifier
 *   enc(x) = x with every 00 replaced by 00 FF, then the terminator 00 01
 *
 * enc() preserves memcmp order (shorter prefix first) and no encoding is a
 * prefix of another, so RocksDB's bytewise order is the contract's order. */
#ifndef OCT_STORE_STORE_INT_H
#define OCT_STORE_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "common/bytes.h"

/* Bytes enc(x) takes: x.len + number of 00 bytes in x + 2. */
size_t store__enc_len(oct_slice_t x);

/* Writes enc(x) at dst (which must hold store__enc_len(x) bytes); returns
 * the end of what was written. */
uint8_t *store__enc(uint8_t *dst, oct_slice_t x);

/* Decodes one enc() from the start of p[0..n). If out is not NULL it receives
 * the raw bytes (it must hold n bytes) and *out_len their count. Returns the
 * number of encoded bytes consumed (terminator included), or -1 if p does not
 * start with a well-formed encoding. */
long store__dec(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len);

/* Length of / writer for the full key of one cell. */
size_t store__key_len(oct_slice_t part, oct_slice_t row, oct_slice_t family, oct_slice_t qualifier);
uint8_t *store__key(uint8_t *dst, oct_slice_t part, oct_slice_t row, oct_slice_t family,
                    oct_slice_t qualifier);

#endif
