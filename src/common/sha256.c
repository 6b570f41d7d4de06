/* sha256.c -- SHA-256 and constant-time compare over OpenSSL's libcrypto.
 * Tested against FIPS 180-4's example vectors in
 * tests/unit/test_sha256_auth.c. */
#include "common/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

static void sha256_fail(const char *what)
{
    /* Only an allocation failure can get here: EVP_sha256 is always built. */
    fprintf(stderr, "octsdb: SHA-256: %s failed (out of memory)\n", what);
    abort();
}

void oct_sha256_init(oct_sha256_t *c)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) sha256_fail("init");
    c->md = md;
}

void oct_sha256_update(oct_sha256_t *c, const void *data, size_t len)
{
    if (len && EVP_DigestUpdate((EVP_MD_CTX *)c->md, data, len) != 1) sha256_fail("update");
}

void oct_sha256_final(oct_sha256_t *c, uint8_t out[OCT_SHA256_LEN])
{
    unsigned n = 0;
    if (EVP_DigestFinal_ex((EVP_MD_CTX *)c->md, out, &n) != 1 || n != OCT_SHA256_LEN)
        sha256_fail("final");
    EVP_MD_CTX_free((EVP_MD_CTX *)c->md);
    c->md = NULL;
}

void oct_sha256(const void *data, size_t len, uint8_t out[OCT_SHA256_LEN])
{
    unsigned n = 0;
    if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != OCT_SHA256_LEN)
        sha256_fail("digest");
}

int oct_ct_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}
