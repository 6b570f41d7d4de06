/* test_codec_cell.c -- codec/cell: every worked example of docs/format/cells.md section 8
 * (OpenTSDB's) byte for byte, value
 * width boundaries, float32/float64 choice, legacy fix-ups, compacted and append columns,
 * qualifier classes, and the row decoder (ordering, duplicates, skipped cells, ENOSPC).
 * Expected bytes are from those examples or hand arithmetic noted beside them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"
#include "testutil.h"

#define BASE    1356998400u /* 0x50E22700, docs/format/cells.md section 8 */
#define BASE_MS (1356998400LL * 1000)

/* Encodes one point and compares qualifier and value with hex strings. */
static void check_encode(int64_t ts_ms, int is_float, int64_t i, double f, int ms, const char *qhex,
                         const char *vhex)
{
    codec_point_t p = {.ts_ms = ts_ms, .is_float = (uint8_t)is_float};
    if (is_float)
        p.val.f = f;
    else
        p.val.i = i;
    codec_cell_buf_t c;
    oct_errbuf_t eb;
    uint8_t q[8], v[16];
    int qn = tu_unhex(qhex, q, sizeof q), vn = tu_unhex(vhex, v, sizeof v);
    assert_int_equal(codec_point_encode(&p, BASE, ms, &c, &eb), 0);
    assert_int_equal(c.qual_len, qn);
    assert_memory_equal(c.qual, q, (size_t)qn);
    assert_int_equal(c.val_len, vn);
    assert_memory_equal(c.val, v, (size_t)vn);
    /* and back */
    codec_dp_t dp;
    assert_int_equal(codec_cell_decode_single(c.qual, c.qual_len, c.val, c.val_len, &dp, &eb), 0);
    assert_int_equal(dp.offset_ms, ts_ms - BASE_MS);
    assert_int_equal(dp.is_float, is_float);
    assert_int_equal(dp.ms, ms);
    if (is_float)
        assert_memory_equal(&dp.val.f, &f, sizeof f);
    else
        assert_true(dp.val.i == i);
}

static void cell_examples_2_to_4_and_07B7(void **state)
{
    (void)state;
    /* ex. 2: +25 s, 42 -> (25<<4)|0 */
    check_encode(1356998425000LL, 0, 42, 0, 0, "0190", "2A");
    check_encode(1356998425000LL, 0, 300, 0, 0, "0191", "012C");
    /* ex. 3 */
    check_encode(1356998425000LL, 1, 0, 42.5, 0, "019B", "422A0000");
    check_encode(1356998425000LL, 1, 0, 0.1, 0, "019F", "3FB999999999999A");
    /* ex. 4: 25123 ms */
    check_encode(1356998425123LL, 0, 42, 0, 1, "F01888C0", "2A");
    /* ms precision with a whole-second offset still uses the ms form: 25000<<6 = 0x186A00 */
    check_encode(1356998425000LL, 0, 42, 0, 1, "F0186A00", "2A");
    /* the doc's "07B4" fixed: 123<<4 = 0x7B0, 8-byte int -> flags 7 */
    check_encode(BASE_MS + 123000, 0, 4294967296LL, 0, 0, "07B7", "0000000100000000");
    /* row edges: offset 0 and 3599 s (0xE0F0) and 3599999 ms (0xFDBB9FC0) */
    check_encode(BASE_MS, 0, 0, 0, 0, "0000", "00");
    check_encode(BASE_MS + 3599000, 0, -1, 0, 0, "E0F0", "FF");
    check_encode(BASE_MS + 3599999, 0, 1, 0, 1, "FDBB9FC0", "01");
}

static void cell_int_width_boundaries(void **state)
{
    (void)state;
    const struct {
        int64_t v;
        const char *q, *hex;
    } t[] = {
        {0, "0000", "00"},
        {127, "0000", "7F"},
        {128, "0001", "0080"},
        {-128, "0000", "80"},
        {-129, "0001", "FF7F"},
        {32767, "0001", "7FFF"},
        {32768, "0003", "00008000"},
        {-32768, "0001", "8000"},
        {-32769, "0003", "FFFF7FFF"},
        {2147483647LL, "0003", "7FFFFFFF"},
        {2147483648LL, "0007", "0000000080000000"},
        {-2147483648LL, "0003", "80000000"},
        {-2147483649LL, "0007", "FFFFFFFF7FFFFFFF"},
        {INT64_MAX, "0007", "7FFFFFFFFFFFFFFF"},
        {INT64_MIN, "0007", "8000000000000000"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        check_encode(BASE_MS, 0, t[i].v, 0, 0, t[i].q, t[i].hex);
}

static void cell_float_width_choice(void **state)
{
    (void)state;
    check_encode(BASE_MS, 1, 0, 1.5, 0, "000B", "3FC00000");
    check_encode(BASE_MS, 1, 0, -0.0, 0, "000B", "80000000");
    check_encode(BASE_MS, 1, 0, INFINITY, 0, "000B", "7F800000");
    check_encode(BASE_MS, 1, 0, -INFINITY, 0, "000B", "FF800000");
    check_encode(BASE_MS, 1, 0, FLT_MAX, 0, "000B", "7F7FFFFF");
    check_encode(BASE_MS, 1, 0, 1e300, 0, "000F", "7E37E43C8800759C");
    check_encode(BASE_MS, 1, 0, 16777217.0, 0, "000F", "4170000010000000"); /* 2^24 + 1 */
    check_encode(BASE_MS, 1, 0, 16777216.0, 0, "000B", "4B800000");
    check_encode(BASE_MS, 1, 0, FLT_MIN / 2, 0, "000B", "00400000"); /* subnormal fits */
    /* NaN: never equal to itself -> float64, payload bits preserved */
    uint64_t bits = 0x7FF8000000000123ull;
    double nan1;
    memcpy(&nan1, &bits, 8);
    check_encode(BASE_MS, 1, 0, nan1, 0, "000F", "7FF8000000000123");
    bits = 0xFFF0000000000001ull; /* negative signalling NaN */
    memcpy(&nan1, &bits, 8);
    check_encode(BASE_MS, 1, 0, nan1, 0, "000F", "FFF0000000000001");
}

static void cell_point_encode_errors(void **state)
{
    (void)state;
    codec_point_t p = {.ts_ms = BASE_MS + 1500, .val.i = 1};
    codec_cell_buf_t c;
    oct_errbuf_t eb;
    assert_int_equal(codec_point_encode(&p, BASE, 0, &c, &eb), OCT_ERANGE); /* fractional */
    assert_int_equal(codec_point_encode(&p, BASE, 1, &c, &eb), 0);
    p.ts_ms = BASE_MS - 1;
    assert_int_equal(codec_point_encode(&p, BASE, 1, &c, &eb), OCT_ERANGE);
    p.ts_ms = BASE_MS + 3600000;
    assert_int_equal(codec_point_encode(&p, BASE, 1, &c, &eb), OCT_ERANGE);
    uint8_t q[4];
    assert_int_equal(codec_qual_encode_s(3600, 0, q), OCT_ERANGE);
    assert_int_equal(codec_qual_encode_ms(3600000, 0, q), OCT_ERANGE);
    assert_int_equal(codec_qual_encode_s(1, 0x10, q), OCT_ERANGE);
}

/* Decodes a single cell given as hex. */
static int dec1(const char *qhex, const char *vhex, codec_dp_t *dp, oct_errbuf_t *eb)
{
    uint8_t q[16], v[16];
    int qn = tu_unhex(qhex, q, sizeof q), vn = tu_unhex(vhex, v, sizeof v);
    return codec_cell_decode_single(q, (size_t)qn, v, (size_t)vn, dp, eb);
}

static void cell_legacy_fixups(void **state)
{
    (void)state;
    codec_dp_t dp;
    oct_errbuf_t eb;
    /* float flagged 4 bytes, stored on 8 with zero high half -> float32 42.5 */
    assert_int_equal(dec1("019B", "00000000422A0000", &dp, &eb), 0);
    assert_true(dp.is_float && dp.width == 4 && dp.val.f == 42.5);
    /* non-zero high half -> corrupt, message names the qualifier */
    assert_int_equal(dec1("019B", "00000001422A0000", &dp, &eb), OCT_ECORRUPT);
    assert_non_null(strstr(eb.msg, "019B"));
    /* length bits say 1 byte, value has 2: the value wins */
    assert_int_equal(dec1("0190", "012C", &dp, &eb), 0);
    assert_true(!dp.is_float && dp.width == 2 && dp.val.i == 300);
    /* length bits say 8, value has 1 */
    assert_int_equal(dec1("0197", "FE", &dp, &eb), 0);
    assert_true(dp.val.i == -2 && dp.width == 1);
    /* float flagged 8 bytes, value on 4 */
    assert_int_equal(dec1("019F", "422A0000", &dp, &eb), 0);
    assert_true(dp.is_float && dp.val.f == 42.5);
    /* impossible lengths */
    assert_int_equal(dec1("0192", "000001", &dp, &eb), OCT_ECORRUPT);
    assert_non_null(strstr(eb.msg, "0192"));
    assert_int_equal(dec1("0190", "", &dp, &eb), OCT_ECORRUPT);
    assert_int_equal(dec1("019B", "0000", &dp, &eb), OCT_ECORRUPT);
    assert_int_equal(dec1("0190", "000000000000000000", &dp, &eb), OCT_ECORRUPT);
    assert_int_equal(dec1("01900551", "2A012C00", &dp, &eb), OCT_ECORRUPT); /* not single */
    /* seconds offsets above 3599 decode without range checks (as OpenTSDB) */
    assert_int_equal(dec1("FFF0", "01", &dp, &eb), 0);
    assert_int_equal(dp.offset_ms, 4095000);
}

static void cell_classify(void **state)
{
    (void)state;
    const struct {
        const char *hex;
        codec_qual_kind_t k;
    } t[] = {
        {"0190", CODEC_QUAL_SECONDS},       {"F01888C0", CODEC_QUAL_MS},
        {"01900551", CODEC_QUAL_COMPACTED}, {"0190F01888C0", CODEC_QUAL_COMPACTED},
        {"050000", CODEC_QUAL_APPEND},      {"052A2A", CODEC_QUAL_APPEND},
        {"010019", CODEC_QUAL_ANNOTATION},  {"01F01888C0", CODEC_QUAL_ANNOTATION},
        {"060019", CODEC_QUAL_HISTOGRAM},   {"4F", CODEC_QUAL_BLOCK},
        {"4F0102", CODEC_QUAL_BLOCK},       {"4F01020304", CODEC_QUAL_BLOCK},
        {"4F01", CODEC_QUAL_SECONDS}, /* even length: a data point, not a block */
        {"070019", CODEC_QUAL_UNKNOWN},     {"00", CODEC_QUAL_UNKNOWN},
        {"", CODEC_QUAL_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        uint8_t q[16];
        int n = tu_unhex(t[i].hex, q, sizeof q);
        assert_int_equal(codec_qual_classify(q, (size_t)n), t[i].k);
    }
    assert_string_equal(codec_qual_kind_name(CODEC_QUAL_BLOCK), "block");
}

/* Builds a cell array from "qhex:vhex" strings into caller storage. */
typedef struct {
    uint8_t q[64], v[64];
    codec_cell_t c;
} cellbuf_t;

static void mkcell(cellbuf_t *b, const char *qhex, const char *vhex)
{
    int qn = tu_unhex(qhex, b->q, sizeof b->q), vn = tu_unhex(vhex, b->v, sizeof b->v);
    assert_true(qn >= 0 && vn >= 0);
    b->c = (codec_cell_t){b->q, (size_t)qn, b->v, (size_t)vn};
}

static void cell_example_5_compacted(void **state)
{
    (void)state;
    cellbuf_t a, b, m;
    mkcell(&a, "0190", "2A");     /* +25 s, 42 */
    mkcell(&b, "0551", "012C");   /* +85 s, 300: 85<<4 | 1 = 0x551 */
    mkcell(&m, "F01888C0", "2A"); /* ex. 4 */
    codec_cell_t cells[3] = {a.c, b.c};
    uint8_t q[32], v[32], wq[32], wv[32];
    size_t ql, vl;
    oct_errbuf_t eb;
    assert_int_equal(codec_compact_build(cells, 2, q, sizeof q, &ql, v, sizeof v, &vl, &eb), 2);
    assert_int_equal(ql, tu_unhex("01900551", wq, sizeof wq));
    assert_memory_equal(q, wq, ql);
    assert_int_equal(vl, tu_unhex("2A012C00", wv, sizeof wv));
    assert_memory_equal(v, wv, vl);
    /* mixed with the ms point: sorted 25000, 25123, 85000 ms; meta 01 */
    cells[0] = a.c, cells[1] = m.c, cells[2] = b.c;
    assert_int_equal(codec_compact_build(cells, 3, q, sizeof q, &ql, v, sizeof v, &vl, &eb), 3);
    assert_int_equal(ql, tu_unhex("0190F01888C00551", wq, sizeof wq));
    assert_memory_equal(q, wq, ql);
    assert_int_equal(vl, tu_unhex("2A2A012C01", wv, sizeof wv));
    assert_memory_equal(v, wv, vl);
    /* decode it back with the iterator */
    codec_cell_iter_t it;
    codec_dp_t dp;
    assert_int_equal(codec_cell_iter_init(&it, q, ql, v, vl, &eb), CODEC_QUAL_COMPACTED);
    const uint32_t offs[] = {25000, 25123, 85000};
    const int64_t vals[] = {42, 42, 300};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(codec_cell_iter_next(&it, &dp, &eb), 1);
        assert_int_equal(dp.offset_ms, offs[i]);
        assert_true(dp.val.i == vals[i]);
        assert_int_equal(dp.ms, i == 1);
    }
    assert_int_equal(codec_cell_iter_next(&it, &dp, &eb), 0);
    /* a single cell "compacts" to itself without meta byte, fixed up */
    mkcell(&a, "0190", "012C");
    assert_int_equal(codec_compact_build(&a.c, 1, q, sizeof q, &ql, v, sizeof v, &vl, &eb), 1);
    assert_int_equal(ql, 2);
    assert_memory_equal(q, "\x01\x91", 2);
    assert_int_equal(vl, 2);
    /* errors */
    cells[0] = b.c, cells[1] = a.c;
    assert_int_equal(codec_compact_build(cells, 2, q, sizeof q, &ql, v, sizeof v, &vl, &eb),
                     OCT_EINVAL); /* not sorted */
    cells[0] = a.c, cells[1] = a.c;
    assert_int_equal(codec_compact_build(cells, 2, q, sizeof q, &ql, v, sizeof v, &vl, &eb),
                     OCT_EINVAL); /* duplicate offset */
    cells[0] = a.c, cells[1] = b.c;
    assert_int_equal(codec_compact_build(cells, 2, q, sizeof q, &ql, v, 4, &vl, &eb),
                     OCT_ENOSPC); /* 2 + 2 + meta */
    assert_int_equal(codec_compact_build(cells, 0, q, sizeof q, &ql, v, sizeof v, &vl, &eb),
                     OCT_EINVAL);
}

static void cell_compacted_corruption(void **state)
{
    (void)state;
    const struct {
        const char *q, *v;
    } bad[] = {
        {"01900551", "2A012C"},       /* no meta byte */
        {"01900551", "2A012C0000"},   /* one byte too many */
        {"01900551", "2A012C02"},     /* meta > 1 */
        {"0190F018", "2A2A00"},       /* truncated ms qualifier */
        {"01920551", "2A0000012C00"}, /* 3-byte int flags */
        {"019A0551", "2A0000012C00"}, /* float of 3 bytes */
        {"01900551", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cellbuf_t c;
        mkcell(&c, bad[i].q, bad[i].v);
        codec_cell_iter_t it;
        oct_errbuf_t eb;
        assert_int_equal(
            codec_cell_iter_init(&it, c.c.qual, c.c.qual_len, c.c.val, c.c.val_len, &eb),
            OCT_ECORRUPT);
        assert_non_null(strstr(eb.msg, bad[i].q));
        codec_point_t out[8];
        codec_row_stats_t st;
        assert_int_equal(codec_row_decode(BASE, &c.c, 1, out, 8, &st, &eb), OCT_ECORRUPT);
    }
}

static void cell_example_6_append(void **state)
{
    (void)state;
    cellbuf_t a, b;
    mkcell(&a, "0190", "2A");
    mkcell(&b, "0551", "012C");
    codec_cell_t cells[2] = {a.c, b.c};
    uint8_t v[32], w[32];
    oct_errbuf_t eb;
    int n = codec_append_build(cells, 2, v, sizeof v, &eb);
    assert_int_equal(n, tu_unhex("01902A0551012C", w, sizeof w));
    assert_memory_equal(v, w, (size_t)n);
    assert_int_equal(codec_append_build(cells, 2, v, 6, &eb), OCT_ENOSPC);
    assert_memory_equal(codec_append_qualifier, "\x05\x00\x00", 3);

    /* decode as a row: append column plus the annotation of ex. 7 */
    cellbuf_t ap, an;
    mkcell(&ap, "050000", "01902A0551012C");
    mkcell(&an, "010019", "7B7D");
    codec_cell_t row[2] = {an.c, ap.c};
    codec_point_t out[4];
    codec_row_stats_t st;
    assert_int_equal(codec_row_decode(BASE, row, 2, out, 4, &st, &eb), 2);
    assert_true(out[0].ts_ms == 1356998425000LL && out[0].val.i == 42 && !out[0].is_float);
    assert_true(out[1].ts_ms == 1356998485000LL && out[1].val.i == 300);
    assert_int_equal(st.n_annotation, 1);
    assert_int_equal(st.n_dup_identical + st.n_dup_conflict, 0);
}

static void cell_append_later_wins_and_corruption(void **state)
{
    (void)state;
    cellbuf_t ap;
    /* +85 s 300, +25 s 42, +25 s 5 (later), +25 s float 42.5 ms form at 25000 (latest) */
    mkcell(&ap, "050000", "0551012C 01902A 019005");
    codec_point_t out[8];
    codec_row_stats_t st;
    oct_errbuf_t eb;
    assert_int_equal(codec_row_decode(BASE, &ap.c, 1, out, 8, &st, &eb), 2);
    assert_true(out[0].ts_ms == BASE_MS + 25000 && out[0].val.i == 5);
    assert_true(out[1].ts_ms == BASE_MS + 85000 && out[1].val.i == 300);
    assert_int_equal(st.n_dup_conflict, 1);
    assert_true(st.first_conflict_ms == BASE_MS + 25000);

    const char *bad[] = {"01", "0190", "01912A", "F01888", "F01888C0", "01922A2A2A"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mkcell(&ap, "050000", bad[i]);
        assert_int_equal(codec_row_decode(BASE, &ap.c, 1, out, 8, &st, &eb), OCT_ECORRUPT);
        assert_non_null(strstr(eb.msg, "050000"));
    }
    /* an empty append value is an empty row */
    mkcell(&ap, "050000", "");
    assert_int_equal(codec_row_decode(BASE, &ap.c, 1, out, 8, &st, &eb), 0);
}

static void cell_row_mixture_sorted_dedup_skips(void **state)
{
    (void)state;
    cellbuf_t c[9];
    mkcell(&c[0], "0551", "012C");                  /* +85 s 300 */
    mkcell(&c[1], "01900550", "07 08 00");          /* +25 s 7, +85 s 8 (conflicts with 300) */
    mkcell(&c[2], "F0186A00", "07");                /* +25000 ms 7: identical to c[1]'s first */
    mkcell(&c[3], "4F0001", "DEADBEEF");            /* octsdb block: skipped */
    mkcell(&c[4], "060019", "01");                  /* histogram */
    mkcell(&c[5], "070019", "01");                  /* rollup/unknown */
    mkcell(&c[6], "050000", "F01888C0 2A 0000 01"); /* +25123 ms 42, +0 s 1 */
    mkcell(&c[7], "010019", "7B7D");                /* annotation */
    mkcell(&c[8], "E0FF", "400921FB54442D18");      /* +3599 s, float64 pi */
    codec_cell_t cells[9];
    for (int i = 0; i < 9; i++)
        cells[i] = c[i].c;
    codec_point_t out[16];
    codec_row_stats_t st;
    oct_errbuf_t eb;
    int n = codec_row_decode(BASE, cells, 9, out, 16, &st, &eb);
    if (n < 0) print_error("%s\n", eb.msg);
    assert_int_equal(n, 5);
    const int64_t ts[] = {0, 25000, 25123, 85000, 3599000};
    const int64_t iv[] = {1, 7, 42, 8, 0};
    for (int i = 0; i < 5; i++) {
        assert_true(out[i].ts_ms == BASE_MS + ts[i]);
        if (i < 4) {
            assert_false(out[i].is_float);
            assert_true(out[i].val.i == iv[i]);
        }
    }
    assert_true(out[4].is_float && out[4].val.f == 3.141592653589793);
    assert_int_equal(st.needed, 7);
    assert_int_equal(st.n_dup_identical, 1);
    assert_int_equal(st.n_dup_conflict, 1);
    assert_true(st.first_conflict_ms == BASE_MS + 85000);
    assert_int_equal(st.n_block, 1);
    assert_int_equal(st.n_histogram, 1);
    assert_int_equal(st.n_unknown, 1);
    assert_int_equal(st.n_annotation, 1);

    /* ENOSPC reports the raw count; a retry with that many slots succeeds */
    assert_int_equal(codec_row_decode(BASE, cells, 9, out, 6, &st, &eb), OCT_ENOSPC);
    assert_int_equal(st.needed, 7);
    assert_int_equal(codec_row_decode(BASE, cells, 9, out, 7, &st, &eb), 5);
    /* same value but a different width or type is a conflict, not identical */
    cellbuf_t x, y, z;
    mkcell(&x, "0190", "2A");
    mkcell(&y, "0191", "002A");
    mkcell(&z, "019B", "422A0000");
    codec_cell_t pair[3] = {x.c, y.c, z.c};
    assert_int_equal(codec_row_decode(BASE, pair, 2, out, 4, &st, &eb), 1);
    assert_int_equal(st.n_dup_conflict, 1);
    assert_true(out[0].val.i == 42);
    assert_int_equal(codec_row_decode(BASE, pair + 1, 2, out, 4, &st, &eb), 1);
    assert_int_equal(st.n_dup_conflict, 1);
    assert_true(out[0].is_float && out[0].val.f == 42.5); /* the later cell wins */
}

/* Random points -> encode (seconds or ms) -> shuffled cells -> row decode == sorted input. */
static void cell_row_roundtrip_random(void **state)
{
    (void)state;
    enum { N = 500 };
    static codec_point_t pts[N], out[N];
    static codec_cell_buf_t bufs[N];
    static codec_cell_t cells[N];
    static uint8_t used[3600];
    memset(used, 0, sizeof used);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    size_t n = 0;
    while (n < N) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t off_s = (uint32_t)(x % 3600);
        if (used[off_s]) continue;
        used[off_s] = 1;
        codec_point_t *p = &pts[n];
        int ms = (x >> 20) & 1;
        p->ts_ms = BASE_MS + off_s * 1000 + (ms ? (int64_t)((x >> 30) % 1000) : 0);
        p->is_float = (x >> 40) & 1;
        if (p->is_float)
            p->val.f = ((x >> 41) & 1) ? (double)(float)((int64_t)(x >> 8) % 100000) / 8
                                       : (double)(int64_t)x / 3.0;
        else
            p->val.i = (int64_t)x >> (x % 64);
        oct_errbuf_t eb;
        assert_int_equal(codec_point_encode(p, BASE, ms, &bufs[n], &eb), 0);
        cells[n] = (codec_cell_t){bufs[n].qual, bufs[n].qual_len, bufs[n].val, bufs[n].val_len};
        n++;
    }
    codec_row_stats_t st;
    oct_errbuf_t eb;
    assert_int_equal(codec_row_decode(BASE, cells, N, out, N, &st, &eb), N);
    /* reference: pick the input with the smallest ts greater than the previous (O(n^2)) */
    int64_t prev = INT64_MIN;
    for (size_t i = 0; i < N; i++) {
        size_t best = N;
        for (size_t j = 0; j < N; j++)
            if (pts[j].ts_ms > prev && (best == N || pts[j].ts_ms < pts[best].ts_ms)) best = j;
        assert_true(best < N);
        assert_true(out[i].ts_ms == pts[best].ts_ms);
        assert_int_equal(out[i].is_float, pts[best].is_float);
        assert_memory_equal(&out[i].val, &pts[best].val, 8);
        prev = pts[best].ts_ms;
    }
}

/* Arbitrary bytes must never crash the decoders (ASan/UBSan build checks the accesses). */
static void cell_decoders_survive_garbage(void **state)
{
    (void)state;
    uint64_t x = 42;
    for (int round = 0; round < 20000; round++) {
        uint8_t q[12], v[24];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t ql = x % 13, vl = (x >> 8) % 25;
        for (size_t i = 0; i < sizeof q; i++)
            q[i] = (uint8_t)(x >> (i * 5));
        for (size_t i = 0; i < sizeof v; i++)
            v[i] = (uint8_t)(x >> ((i * 3) % 60));
        if (round & 1) q[0] = (round & 2) ? 0x05 : 0xF0 | (q[0] & 0xF);
        /* exact-size heap copies so ASan sees any overread */
        uint8_t *hq = malloc(ql ? ql : 1), *hv = malloc(vl ? vl : 1);
        memcpy(hq, q, ql);
        memcpy(hv, v, vl);
        codec_cell_t c = {hq, ql, hv, vl};
        codec_point_t out[32];
        codec_row_stats_t st;
        oct_errbuf_t eb;
        int rc = codec_row_decode(BASE, &c, 1, out, 32, &st, &eb);
        assert_true(rc >= 0 || rc == OCT_ECORRUPT);
        codec_dp_t dp;
        rc = codec_cell_decode_single(hq, ql, hv, vl, &dp, &eb);
        assert_true(rc == 0 || rc == OCT_ECORRUPT);
        free(hq);
        free(hv);
    }
}

/* Found by fuzz_cell: a 2-byte qualifier at 3840 s or later starts with the
 * ms nibble 0xF, so inside a column it would be read as half of an ms
 * qualifier. Columns hold one hour: such cells are refused. */
static void compact_and_append_refuse_offsets_past_the_hour(void **state)
{
    (void)state;
    const uint8_t q_ok[2] = {0xE0, 0xF0}, q_bad[2] = {0xF0, 0x00}, v[1] = {1};
    codec_cell_t cells[2] = {{q_ok, 2, v, 1}, {q_bad, 2, v, 1}}; /* 3599 s, 3840 s */
    uint8_t q[16], val[32];
    size_t ql, vl;
    oct_errbuf_t eb;
    assert_int_equal(codec_compact_build(cells, 2, q, sizeof q, &ql, val, sizeof val, &vl, &eb),
                     OCT_ERANGE);
    assert_int_equal(codec_append_build(cells, 2, val, sizeof val, &eb), OCT_ERANGE);
    assert_int_equal(codec_compact_build(cells, 1, q, sizeof q, &ql, val, sizeof val, &vl, &eb), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cell_examples_2_to_4_and_07B7),
        cmocka_unit_test(cell_int_width_boundaries),
        cmocka_unit_test(cell_float_width_choice),
        cmocka_unit_test(cell_point_encode_errors),
        cmocka_unit_test(cell_legacy_fixups),
        cmocka_unit_test(cell_classify),
        cmocka_unit_test(cell_example_5_compacted),
        cmocka_unit_test(cell_compacted_corruption),
        cmocka_unit_test(cell_example_6_append),
        cmocka_unit_test(cell_append_later_wins_and_corruption),
        cmocka_unit_test(cell_row_mixture_sorted_dedup_skips),
        cmocka_unit_test(cell_row_roundtrip_random),
        cmocka_unit_test(cell_decoders_survive_garbage),
        cmocka_unit_test(compact_and_append_refuse_offsets_past_the_hour),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
