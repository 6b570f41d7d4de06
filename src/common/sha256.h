/* sha256.h -- SHA-256 (FIPS 180-4) and a constant-time compare, through
 * OpenSSL's libcrypto (a dependency already, for TLS), so no hand-written
 * digest code is kept.
 *
 * Used for credential digests (server/auth.c: tokens, legacy sha256
 * passwords, the verified-password memo) and the UI's ETags. All functions
 * are thread-safe; a context belongs to one thread at a time. An allocation
 * failure inside OpenSSL aborts (as xmalloc does): there is no sensible
 * digest to return. */
#ifndef OCT_COMMON_SHA256_H
#define OCT_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define OCT_SHA256_LEN 32

typedef struct {
    void *md; /* OpenSSL's EVP_MD_CTX, owned until final */
} oct_sha256_t;

void oct_sha256_init(oct_sha256_t *c);
void oct_sha256_update(oct_sha256_t *c, const void *data, size_t len);
/* Writes the digest to out and frees c's state; c is unusable until the
 * next init. */
void oct_sha256_final(oct_sha256_t *c, uint8_t out[OCT_SHA256_LEN]);

/* One-shot digest of data. */
void oct_sha256(const void *data, size_t len, uint8_t out[OCT_SHA256_LEN]);

/* 1 if a and b (n bytes each) are equal, else 0, in time that depends only
 * on n (no early exit: for comparing secrets). */
int oct_ct_equal(const void *a, const void *b, size_t n);

#endif
