/* sha256.h -- SHA-256 (FIPS 180-4), small and dependency-free.
 *
 * Used to store and check credentials (server/auth.c) without linking
 * OpenSSL: only digests of tokens and passwords are kept in memory and on
 * disk. Not meant for bulk hashing speed. All functions are pure and
 * thread-safe; a context belongs to one thread at a time. */
#ifndef OCT_COMMON_SHA256_H
#define OCT_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define OCT_SHA256_LEN 32

typedef struct {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t buf[64];
    size_t n; /* bytes pending in buf */
} oct_sha256_t;

void oct_sha256_init(oct_sha256_t *c);
void oct_sha256_update(oct_sha256_t *c, const void *data, size_t len);
/* Writes the digest to out and leaves c unusable until the next init. */
void oct_sha256_final(oct_sha256_t *c, uint8_t out[OCT_SHA256_LEN]);

/* One-shot digest of data. */
void oct_sha256(const void *data, size_t len, uint8_t out[OCT_SHA256_LEN]);

/* 1 if a and b (n bytes each) are equal, else 0, in time that depends only
 * on n (no early exit: for comparing secrets). */
int oct_ct_equal(const void *a, const void *b, size_t n);

#endif
