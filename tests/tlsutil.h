/* tlsutil.h -- certificates for the TLS tests (test_tls, test_reload,
 * test_cli_live): EC P-256 keys and X.509 v3 certificates made with
 * OpenSSL, valid from an hour ago for a day, written as PEM files. Errors
 * fail the calling cmocka test. */
#ifndef OCT_TESTS_TLSUTIL_H
#define OCT_TESTS_TLSUTIL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

/* A fresh EC P-256 key (caller frees with EVP_PKEY_free). */
EVP_PKEY *tt_key(void);

/* A certificate for pk named cn (subject CN; a leaf also gets the DNS name
 * cn), signed by issuer/ikey, or self-signed when issuer is NULL. ca != 0
 * makes a CA certificate. Caller frees with X509_free. */
X509 *tt_cert(EVP_PKEY *pk, const char *cn, long serial, X509 *issuer, EVP_PKEY *ikey, int ca);

/* Writes x and/or k (either may be NULL) to path as PEM. */
void tt_write_pem(const char *path, X509 *x, EVP_PKEY *k);

/* A self-signed leaf for cn: certificate and key written to two files. */
void tt_self_signed(const char *cert_path, const char *key_path, const char *cn);

#endif
