/* test_codec_histogram.c -- codec/histogram: OpenTSDB 2.4's simple histogram bytes against
 * the worked example of docs/format/histogram.md section 3 (its hex and its base64, decoded here by
 * hand), the varint examples there and at the 8/9-byte edge, Java's bucket order (-0.0, NaN),
 * duplicate bounds, the qualifiers, every error path, and random round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "testutil.h"

/* docs/format/histogram.md section 3: u=0:o=1:0,1.5=42:1.5,5.75=24 with codec id 0 (23 bytes). */
static const char k_example_hex[] = "00 0002 00000000 3FC00000 2A 3FC00000 40B80000 18 00 01";
static const char k_example_b64[] = "AAIAAAAAP8AAACo/wAAAQLgAABgAAQ==";

/* A plain base64 decoder (RFC 4648 alphabet, '=' padding), independent of the code under test. */
static size_t b64_decode(const char *s, uint8_t *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(abc, *s);
        assert_non_null(p);
        acc = acc << 6 | (uint32_t)(p - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return n;
}

static void worked_example(void **state)
{
    (void)state;
    uint8_t want[32];
    int wn = tu_unhex(k_example_hex, want, sizeof want);
    assert_int_equal(wn, 23);
    /* the base64 form is the same payload without the id byte */
    uint8_t b64[32];
    assert_int_equal(b64_decode(k_example_b64, b64), 22);
    assert_memory_equal(b64, want + 1, 22);

    /* written out of order, with [1.5,5.75) twice: the last count stays */
    codec_hist_bucket_t b[3] = {{1.5f, 5.75f, 7}, {0.0f, 1.5f, 42}, {1.5f, 5.75f, 24}};
    codec_hist_t h = {b, 3, 0, 1};
    codec_hist_normalize(&h);
    assert_int_equal(h.n_buckets, 2);
    uint8_t out[32];
    size_t len = 0;
    oct_errbuf_t eb;
    assert_int_equal(codec_hist_payload_len(&h), 22);
    assert_int_equal(codec_hist_encode(&h, out, sizeof out, &len, &eb), 0);
    assert_int_equal(len, 22);
    assert_memory_equal(out, want + 1, 22);

    /* and back, through the cell value */
    codec_hist_bucket_t d[4];
    codec_hist_t g;
    uint8_t id = 9;
    assert_int_equal(codec_hist_decode_value(want, 23, 0, &id, d, 4, &g, &eb), 0);
    assert_int_equal(id, 0);
    assert_int_equal(g.n_buckets, 2);
    assert_true(g.buckets == d);
    assert_true(d[0].lo == 0.0f && d[0].hi == 1.5f && d[0].n == 42);
    assert_true(d[1].lo == 1.5f && d[1].hi == 5.75f && d[1].n == 24);
    assert_true(g.underflow == 0 && g.overflow == 1);
    /* any id is read when none is asked for; a different one is refused when it is */
    assert_int_equal(codec_hist_decode_value(want, 23, -1, &id, d, 4, &g, &eb), 0);
    assert_int_equal(codec_hist_decode_value(want, 23, 1, &id, d, 4, &g, &eb), OCT_ECORRUPT);
    assert_string_equal(eb.msg, "Data ID 0 did not match the codec ID 1");
}

static void check_varint(uint64_t v, const char *hex)
{
    uint8_t want[16], got[CODEC_HIST_VARINT_MAX];
    int wn = tu_unhex(hex, want, sizeof want);
    size_t n = codec_hist_varint_put(v, got);
    assert_int_equal(n, wn);
    assert_memory_equal(got, want, n);
    uint64_t back = 0;
    assert_int_equal(codec_hist_varint_get(got, n, &back), n);
    assert_true(back == v);
    /* cut short: incomplete */
    assert_int_equal(codec_hist_varint_get(got, n - 1, &back), 0);
}

static void varints(void **state)
{
    (void)state;
    check_varint(0, "00");
    check_varint(127, "7F");                            /* reference */
    check_varint(128, "80 01");                         /* reference */
    check_varint(300, "AC 02");                         /* reference: 300 = 0b10_0101100 */
    check_varint((1ull << 56) - 1, "FFFFFFFFFFFFFF7F"); /* 8 bytes, 56 bits */
    check_varint(1ull << 56, "8080808080808080 01");    /* the ninth byte, whole */
    check_varint(UINT64_MAX, "FFFFFFFFFFFFFFFF FF");    /* a Java long of -1 */
    check_varint(0x8000000000000000ull, "8080808080808080 80");
}

/* Java's Float.compare order: numbers, -0.0 before 0.0, NaN last; then by upper bound. */
static void bucket_order(void **state)
{
    (void)state;
    codec_hist_bucket_t b[6] = {
        {NAN, 1.0f, 1},   {0.0f, 2.0f, 2}, {-0.0f, 2.0f, 3}, {0.0f, 1.0f, 4},
        {-5.0f, 0.0f, 5}, {NAN, 1.0f, 6}, /* the same NaN pair again: the last one stays */
    };
    codec_hist_t h = {b, 6, 0, 0};
    codec_hist_normalize(&h);
    assert_int_equal(h.n_buckets, 5);
    static const uint64_t want_n[] = {5, 3, 4, 2, 6};
    for (size_t i = 0; i < 5; i++)
        assert_true(b[i].n == want_n[i]);
    assert_true(signbit(b[1].lo));
    assert_true(isnan(b[4].lo));
}

static void errors(void **state)
{
    (void)state;
    uint8_t ex[32];
    tu_unhex(k_example_hex, ex, sizeof ex);
    const uint8_t *p = ex + 1; /* the 22-byte payload */
    codec_hist_bucket_t d[4];
    codec_hist_t g;
    oct_errbuf_t eb;
    assert_int_equal(codec_hist_decode(p, 5, d, 4, &g, &eb), OCT_ECORRUPT);
    assert_string_equal(eb.msg, "Byte array shorter than 6 bytes detected: 5 bytes");
    /* every cut of the payload past 6 bytes ends inside something */
    for (size_t n = 6; n < 22; n++) {
        assert_int_equal(codec_hist_decode(p, n, d, 4, &g, &eb), OCT_ECORRUPT);
        assert_int_equal(g.n_buckets, 0);
    }
    /* trailing bytes are ignored */
    uint8_t longer[24];
    memcpy(longer, p, 22);
    longer[22] = longer[23] = 0xAB;
    assert_int_equal(codec_hist_decode(longer, 24, d, 4, &g, &eb), 0);
    assert_true(g.overflow == 1);
    /* room for one bucket only */
    assert_int_equal(codec_hist_decode(p, 22, d, 1, &g, &eb), OCT_ENOSPC);
    assert_int_equal(g.n_buckets, 2);
    /* a negative count */
    static const uint8_t neg[] = {0xFF, 0xFF, 0, 0, 0, 0};
    assert_int_equal(codec_hist_decode(neg, sizeof neg, d, 4, &g, &eb), OCT_ECORRUPT);
    /* the empty histogram is 4 bytes, so 2.4 cannot read it back: 6 bytes are required */
    codec_hist_t e = {d, 0, 0, 0};
    uint8_t out[8];
    size_t len;
    assert_int_equal(codec_hist_encode(&e, out, sizeof out, &len, &eb), 0);
    assert_int_equal(len, 4);
    assert_int_equal(codec_hist_decode(out, len, d, 4, &g, &eb), OCT_ECORRUPT);
    /* an empty cell; encode into too small a buffer; too many buckets */
    uint8_t id;
    assert_int_equal(codec_hist_decode_value(ex, 0, -1, &id, d, 4, &g, &eb), OCT_ECORRUPT);
    codec_hist_bucket_t b[2] = {{0, 1, 1}, {1, 2, 300}};
    codec_hist_t h = {b, 2, 0, 0};
    assert_int_equal(codec_hist_payload_len(&h), 2 + 9 + 10 + 2);
    assert_int_equal(codec_hist_encode(&h, out, sizeof out, &len, &eb), OCT_ENOSPC);
    h.n_buckets = CODEC_HIST_MAX_BUCKETS + 1;
    assert_int_equal(codec_hist_encode(&h, out, sizeof out, &len, &eb), OCT_ERANGE);
}

static void check_qual(uint32_t off_ms, int ms, const char *hex)
{
    uint8_t q[5], want[8];
    int wn = tu_unhex(hex, want, sizeof want);
    assert_int_equal(codec_hist_qualifier(off_ms, ms, q), wn);
    assert_memory_equal(q, want, (size_t)wn);
    uint32_t back;
    int back_ms;
    assert_int_equal(codec_hist_qualifier_parse(q, (size_t)wn, &back, &back_ms), 0);
    assert_int_equal(back, off_ms);
    assert_int_equal(back_ms, ms);
}

static void qualifiers(void **state)
{
    (void)state;
    check_qual(0, 0, "06 0000");
    check_qual(3599000, 0, "06 0E0F"); /* 3599 s: no flag bits */
    check_qual(1500, 1, "06 000005DC");
    check_qual(3599999, 1, "06 0036EE7F");
    check_qual(2000, 1, "06 000007D0"); /* ms precision even on a whole second */
    uint8_t q[5];
    assert_int_equal(codec_hist_qualifier(1500, 0, q), OCT_ERANGE);    /* not whole seconds */
    assert_int_equal(codec_hist_qualifier(3600000, 1, q), OCT_ERANGE); /* past the hour */
    uint32_t off;
    int ms;
    static const uint8_t bad_prefix[] = {0x05, 0, 0}, bad_len[] = {0x06, 0, 0, 0},
                         past[] = {0x06, 0x0E, 0x10}; /* 3600 s */
    assert_int_equal(codec_hist_qualifier_parse(bad_prefix, 3, &off, &ms), OCT_ECORRUPT);
    assert_int_equal(codec_hist_qualifier_parse(bad_len, 4, &off, &ms), OCT_ECORRUPT);
    assert_int_equal(codec_hist_qualifier_parse(past, 3, &off, &ms), OCT_ECORRUPT);
}

/* Random histograms: encode, decode, same buckets; the length is what payload_len says. */
static void round_trips(void **state)
{
    (void)state;
    srand(12);
    static codec_hist_bucket_t b[300], d[300];
    static uint8_t buf[300 * 17 + 32];
    oct_errbuf_t eb;
    for (int it = 0; it < 200; it++) {
        size_t nb = (size_t)(rand() % 300);
        for (size_t i = 0; i < nb; i++) {
            b[i].lo = (float)i * 0.5f;
            b[i].hi = b[i].lo + 0.5f;
            uint64_t r = (uint64_t)rand() << 33 ^ (uint64_t)rand() << 11 ^ (uint64_t)rand();
            b[i].n = r >> (rand() % 64);
        }
        codec_hist_t h = {b, nb, (uint64_t)rand(), (uint64_t)rand() << 20};
        size_t len;
        assert_int_equal(codec_hist_encode(&h, buf, sizeof buf, &len, &eb), 0);
        assert_int_equal(len, codec_hist_payload_len(&h));
        codec_hist_t g;
        assert_int_equal(codec_hist_decode(buf, len, d, 300, &g, &eb), 0);
        assert_int_equal(g.n_buckets, nb);
        for (size_t i = 0; i < nb; i++)
            assert_true(d[i].lo == b[i].lo && d[i].hi == b[i].hi && d[i].n == b[i].n);
        assert_true(g.underflow == h.underflow && g.overflow == h.overflow);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worked_example), cmocka_unit_test(varints),
        cmocka_unit_test(bucket_order),   cmocka_unit_test(errors),
        cmocka_unit_test(qualifiers),     cmocka_unit_test(round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
