/* tlsutil.c -- certificates for the TLS tests (tlsutil.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "tlsutil.h"

EVP_PKEY *tt_key(void)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    assert_non_null(k);
    return k;
}

static void tt_ext(X509 *x, X509V3_CTX *v3, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, v3, nid, value);
    assert_non_null(ext);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
}

X509 *tt_cert(EVP_PKEY *pk, const char *cn, long serial, X509 *issuer, EVP_PKEY *ikey, int ca)
{
    X509 *x = X509_new();
    assert_non_null(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, pk);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
    tt_ext(x, &v3, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (!ca) {
        char san[300];
        snprintf(san, sizeof san, "DNS:%s", cn);
        tt_ext(x, &v3, NID_subject_alt_name, san);
    }
    assert_true(X509_sign(x, issuer ? ikey : pk, EVP_sha256()) > 0);
    return x;
}

void tt_write_pem(const char *path, X509 *x, EVP_PKEY *k)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    if (x) assert_int_equal(PEM_write_X509(f, x), 1);
    if (k) assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
}

void tt_self_signed(const char *cert_path, const char *key_path, const char *cn)
{
    EVP_PKEY *k = tt_key();
    X509 *x = tt_cert(k, cn, 1, NULL, NULL, 0);
    tt_write_pem(cert_path, x, NULL);
    tt_write_pem(key_path, NULL, k);
    X509_free(x);
    EVP_PKEY_free(k);
}
