/* test_sha256_auth.c -- SHA-256 against FIPS 180-4's examples and values
 * from coreutils' sha256sum, and the credentials file and Authorization
 * header parsing of server/auth.h (digests and base64 texts worked out with
 * sha256sum and base64, not with the code under test). The slow password
 * hashes were made with other tools: Debian's `argon2` (the reference
 * implementation's CLI: `echo -n c4rol-pw | argon2 carolsalt1234567 -id -t 1
 * -k 8192 -p 1 -l 32 -e`) and `mkpasswd -m yescrypt|bcrypt|sha512crypt|
 * md5crypt` (package whois); what auth_hash_password makes is checked with
 * libargon2's and libcrypt's own verify calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <argon2.h>
#include <crypt.h>
#include <openssl/evp.h>

#include "common/sha256.h"
#include "server/auth.h"

static void hex_of(const uint8_t *d, char *out)
{
    for (int i = 0; i < OCT_SHA256_LEN; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void check(const void *data, size_t n, const char *want)
{
    uint8_t d[OCT_SHA256_LEN];
    char hex[2 * OCT_SHA256_LEN + 1];
    oct_sha256(data, n, d);
    hex_of(d, hex);
    assert_string_equal(hex, want);
}

static void sha256_vectors(void **state)
{
    (void)state;
    check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check(m448, strlen(m448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* padding boundaries: 55, 56, 63 and 64 bytes */
    char x[64];
    memset(x, 'x', sizeof x);
    check(x, 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
    check(x, 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
    check(x, 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2");
    check(x, 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
    /* one million 'a' fed in uneven pieces */
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    oct_sha256_t c;
    oct_sha256_init(&c);
    size_t off = 0, step = 1;
    while (off < 1000000) {
        size_t k = step < 1000000 - off ? step : 1000000 - off;
        oct_sha256_update(&c, a + off, k);
        off += k;
        step = step * 3 % 997 + 1;
    }
    uint8_t d[OCT_SHA256_LEN];
    char hex[2 * OCT_SHA256_LEN + 1];
    oct_sha256_final(&c, d);
    hex_of(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
    assert_int_equal(oct_ct_equal("abcd", "abcd", 4), 1);
    assert_int_equal(oct_ct_equal("abcd", "abce", 4), 0);
    assert_int_equal(oct_ct_equal("xbcd", "abcd", 4), 0);
}

/* rw-token-123 (rw), ro-token-456 (ro, upper-case hex and sha256: prefix),
 * alice/s3cret (rw, salted "salt1"), bob/pw (ro). */
static const char creds[] =
    "# octsdb credentials\n"
    "\n"
    "token 67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a63 rw\n"
    "  token sha256:C7CD1AD27B484EF7A21922FB31F179F4448C9B8DD9CA622C6A63C250DEF477B9 ro\r\n"
    "basic alice sha256:salt1:347d42a35e134d9e3658c354c6d472514e2b1a2b7fa24e7d4e119c0523505302 rw\n"
    "basic bob 30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ro";

static void credentials_and_headers(void **state)
{
    (void)state;
    auth_t *a = NULL;
    oct_errbuf_t eb;
    assert_int_equal(auth_parse(creds, strlen(creds), &a, &eb), 0);
    assert_int_equal(auth_count(a), 4);

    assert_int_equal(auth_check_token(a, "rw-token-123", 12), AUTH_ROLE_RW);
    assert_int_equal(auth_check_token(a, "ro-token-456", 12), AUTH_ROLE_RO);
    assert_int_equal(auth_check_token(a, "rw-token-12", 11), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_token(a, "", 0), AUTH_ROLE_NONE);
    /* a password is not a token, and a token not a password */
    assert_int_equal(auth_check_token(a, "pw", 2), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_basic(a, "alice", 5, "s3cret", 6), AUTH_ROLE_RW);
    assert_int_equal(auth_check_basic(a, "bob", 3, "pw", 2), AUTH_ROLE_RO);
    assert_int_equal(auth_check_basic(a, "bob", 3, "s3cret", 6), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_basic(a, "alice", 5, "pw", 2), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_basic(a, "alic", 4, "s3cret", 6), AUTH_ROLE_NONE);

    assert_int_equal(auth_check_header(a, "Bearer rw-token-123"), AUTH_ROLE_RW);
    assert_int_equal(auth_check_header(a, "bearer   ro-token-456 "), AUTH_ROLE_RO);
    assert_int_equal(auth_check_header(a, "Basic YWxpY2U6czNjcmV0"),
                     AUTH_ROLE_RW);                                         /* alice:s3cret */
    assert_int_equal(auth_check_header(a, "Basic Ym9iOnB3"), AUTH_ROLE_RO); /* bob:pw */
    assert_int_equal(auth_check_header(a, "Basic Ym9iOnB3=="), AUTH_ROLE_RO);
    assert_int_equal(auth_check_header(a, "Basic Ym9iOnB4"), AUTH_ROLE_NONE); /* bob:px */
    assert_int_equal(auth_check_header(a, "Basic !!!!"), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_header(a, "Basic cnctdG9rZW4tMTIz"), AUTH_ROLE_NONE); /* no ':' */
    assert_int_equal(auth_check_header(a, "Digest rw-token-123"), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_header(a, "rw-token-123"), AUTH_ROLE_NONE);
    assert_int_equal(auth_check_header(a, NULL), AUTH_ROLE_NONE);
    auth_free(a);

    /* telnet gate */
    assert_int_equal(auth_parse(creds, strlen(creds), &a, &eb), 0);
    auth_role_t role = AUTH_ROLE_NONE;
    unsigned fails = 0;
    oct_strbuf_t out = OCT_STRBUF_INIT;
    assert_int_equal(auth_telnet_line(a, &role, &fails, "version", 7, "", 0, &out),
                     AUTH_TELNET_PASS);
    assert_int_equal(auth_telnet_line(a, &role, &fails, "stats", 5, "", 0, &out), AUTH_TELNET_DONE);
    assert_int_equal(auth_telnet_line(a, &role, &fails, "auth", 4, " bob pw", 7, &out),
                     AUTH_TELNET_DONE);
    assert_int_equal(role, AUTH_ROLE_RO);
    assert_int_equal(auth_telnet_line(a, &role, &fails, "put", 3, " m 1 1 a=b", 10, &out),
                     AUTH_TELNET_DONE);
    assert_int_equal(auth_telnet_line(a, &role, &fails, "stats", 5, "", 0, &out), AUTH_TELNET_PASS);
    assert_string_equal(oct_strbuf_cstr(&out),
                        "stats: authentication required: auth <token> | auth <user> <password>\n"
                        "auth: ok ro\n"
                        "put: permission denied: read-only credential\n");
    oct_strbuf_reset(&out);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(auth_telnet_line(a, &role, &fails, "auth", 4, " nope", 5, &out),
                         i < 3 ? AUTH_TELNET_DONE : AUTH_TELNET_CLOSE);
    assert_int_equal(role, AUTH_ROLE_NONE);
    oct_strbuf_free(&out);
    auth_free(a);

    /* bad files name the line */
    const char *bad[] = {
        "token abc rw\n",
        "token 67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a63 admin\n",
        "\nbasic bob 30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4\n",
        "password x y rw\n",
        "token 67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a6Z rw\n",
        "token sha256::67f3a957ea29834e0514449954ce01f8faaf6781f7ac134eca047919ac684a63 rw\n",
    };
    const char *line[] = {"line 1:", "line 1:", "line 2:", "line 1:", "line 1:", "line 1:"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        a = NULL;
        assert_int_equal(auth_parse(bad[i], strlen(bad[i]), &a, &eb), OCT_ECONFIG);
        assert_null(a);
        assert_non_null(strstr(eb.msg, line[i]));
    }
    /* an empty file is valid and grants nothing */
    assert_int_equal(auth_parse("", 0, &a, &eb), 0);
    assert_int_equal(auth_count(a), 0);
    assert_int_equal(auth_check_token(a, "rw-token-123", 12), AUTH_ROLE_NONE);
    auth_free(a);
}

static const char slow_creds[] =
    "basic carol $argon2id$v=19$m=8192,t=1,p=1$Y2Fyb2xzYWx0MTIzNDU2Nw$"
    "r2Y29nxbfeIapu11nUOGWcwWJMomGAJRe/ufeCiwNyA rw\n"
    "basic dave $y$j9T$sgQ8cSzun90elP9HRv4U7/$vjM5DLqoSOGGdtlgx17BCNd9C8oqF28PhkKfpBPDbID ro\n"
    "basic erin $2b$05$O1XlWU3mJ2AHxQbfTyjOquSgN3ldKhW.OUaESOmXeWuGvEdz.hf1. rw\n"
    "basic frank "
    "$6$55Om9TeN/EqbLBGd$mkl4IW6fdu.Px13Jl8RlU5fDGGYuiuZDOWJxc0y/fbklhuLli2anjZJFqhenVHA."
    "oSJFvSNhMICpv232U9Nr00 ro\n"
    "basic gina $argon2i$v=19$m=4096,t=1,p=1$Z2luYXNhbHQxMjM0NTY3OA$"
    "Wabc/N70gcUUPTwc9X1qUsmxnXrFucBZ2guYwvKBBg4 rw\n"
    /* the SHA-256 forms still work beside them: bob/pw */
    "basic bob 30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ro\n";

static auth_role_t basic(const auth_t *a, const char *u, const char *p)
{
    return auth_check_basic(a, u, strlen(u), p, strlen(p));
}

static void slow_password_hashes(void **state)
{
    (void)state;
    auth_t *a = NULL;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    assert_int_equal(auth_parse(slow_creds, strlen(slow_creds), &a, &eb), 0);
    assert_int_equal(auth_count(a), 6);
    for (int round = 0; round < 2; round++) { /* the second round answers from the memo */
        assert_int_equal(basic(a, "carol", "c4rol-pw"), AUTH_ROLE_RW);
        assert_int_equal(basic(a, "dave", "d4ve-pw"), AUTH_ROLE_RO);
        assert_int_equal(basic(a, "erin", "er1n-pw"), AUTH_ROLE_RW);
        assert_int_equal(basic(a, "frank", "fr4nk-pw"), AUTH_ROLE_RO);
        assert_int_equal(basic(a, "gina", "g1na-pw"), AUTH_ROLE_RW);
        assert_int_equal(basic(a, "bob", "pw"), AUTH_ROLE_RO);
        /* wrong passwords, someone else's password, unknown users */
        assert_int_equal(basic(a, "carol", "c4rol-pW"), AUTH_ROLE_NONE);
        assert_int_equal(basic(a, "carol", "c4rol-pw "), AUTH_ROLE_NONE);
        assert_int_equal(basic(a, "carol", "d4ve-pw"), AUTH_ROLE_NONE);
        assert_int_equal(basic(a, "dave", ""), AUTH_ROLE_NONE);
        assert_int_equal(basic(a, "zed", "c4rol-pw"), AUTH_ROLE_NONE);
    }
    /* a NUL inside the password never matches (crypt and argon2 stop there) */
    assert_int_equal(auth_check_basic(a, "dave", 4, "d4ve-pw\0x", 9), AUTH_ROLE_NONE);
    /* and the whole Authorization header: "carol:c4rol-pw" in base64 */
    assert_int_equal(auth_check_header(a, "Basic Y2Fyb2w6YzRyb2wtcHc="), AUTH_ROLE_RW);
    auth_free(a);

    struct {
        const char *line, *msg;
    } bad[] = {
        {"basic x $1$bI70Yfi/$Pc.ezvHyDfT9tuuzfgX/p. rw\n", "line 1: unsupported password hash"},
        {"basic x $argon2id$v=19$m=8192,t=1,p=1$Y2Fyb2xzYWx0MTIzNDU2Nw rw\n",
         "line 1: malformed Argon2 hash"},
        {"basic x $y$j9T$ rw\n", "line 1: malformed or unsupported crypt(3) hash"},
        {"token $y$j9T$sgQ8cSzun90elP9HRv4U7/$vjM5DLqoSOGGdtlgx17BCNd9C8oqF28PhkKfpBPDbID rw\n",
         "line 1: token digests are SHA-256"},
        {"basic x $y$j9T$sgQ8cSzun90elP9HRv4U7/$vjM5DLqoSOGGdtlgx17BCNd9C8oqF28PhkKfpBPDbID "
         "admin\n",
         "line 1: expected 'token <sha256> <ro|rw>'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        oct_errbuf_clear(&eb);
        a = NULL;
        assert_int_equal(auth_parse(bad[i].line, strlen(bad[i].line), &a, &eb), OCT_ECONFIG);
        assert_null(a);
        if (strncmp(eb.msg, bad[i].msg, strlen(bad[i].msg)))
            fail_msg("%s: got '%s'", bad[i].msg, eb.msg);
    }
}

static void making_credentials(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    char h[256];
    assert_int_equal(auth_hash_password(AUTH_HASH_ARGON2ID, "s3cret pw", 9, h, sizeof h, &eb), 0);
    assert_true(!strncmp(h, "$argon2id$v=19$m=19456,t=2,p=1$", 31));
    assert_int_equal(argon2id_verify(h, "s3cret pw", 9), ARGON2_OK);
    assert_int_not_equal(argon2id_verify(h, "s3cret pW", 9), ARGON2_OK);
    char h2[256];
    assert_int_equal(auth_hash_password(AUTH_HASH_ARGON2ID, "s3cret pw", 9, h2, sizeof h2, &eb), 0);
    assert_string_not_equal(h, h2); /* a fresh salt each time */

    assert_int_equal(auth_hash_password(AUTH_HASH_YESCRYPT, "s3cret pw", 9, h, sizeof h, &eb), 0);
    assert_true(!strncmp(h, "$y$", 3));
    struct crypt_data *cd = calloc(1, sizeof *cd);
    assert_string_equal(crypt_r("s3cret pw", h, cd), h);
    assert_string_not_equal(crypt_r("s3cret pW", h, cd), h);
    free(cd);
    assert_int_equal(auth_hash_password(AUTH_HASH_YESCRYPT, "a\0b", 3, h, sizeof h, &eb),
                     OCT_EINVAL);

    /* what octsdb passwd writes is accepted by the parser and the check */
    char line[400], tok[AUTH_TOKEN_TEXT], dig[65];
    assert_int_equal(auth_hash_password(AUTH_HASH_ARGON2ID, "pw1", 3, h, sizeof h, &eb), 0);
    assert_int_equal(auth_make_token(tok, dig, &eb), 0);
    assert_int_equal(strlen(tok), 64);
    uint8_t d[32];
    unsigned dn = 0;
    assert_int_equal(EVP_Digest(tok, 64, d, &dn, EVP_sha256(), NULL), 1);
    char dhex[65];
    for (int i = 0; i < 32; i++)
        sprintf(dhex + 2 * i, "%02x", d[i]);
    assert_string_equal(dig, dhex);
    snprintf(line, sizeof line, "basic ivy %s ro\ntoken sha256:%s rw\n", h, dig);
    auth_t *a = NULL;
    assert_int_equal(auth_parse(line, strlen(line), &a, &eb), 0);
    assert_int_equal(basic(a, "ivy", "pw1"), AUTH_ROLE_RO);
    assert_int_equal(auth_check_token(a, tok, 64), AUTH_ROLE_RW);
    auth_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_vectors),
        cmocka_unit_test(credentials_and_headers),
        cmocka_unit_test(slow_password_hashes),
        cmocka_unit_test(making_credentials),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
