/* test_hist_input.c -- histograms as clients send them: the telnet text form
 * (codec_hist_parse_text) encoded to docs/format/histogram.md's worked example bytes, the
 * /api/histogram bucket keys, JAXB-style lenient base64, and tsd.core.histograms.config
 * (tsdb_hist_config_parse) inline and from a file, with its start-up errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/histogram.h"
#include "server/hist_int.h"
#include "testutil.h"
#include "tsdb/histogram.h"

/* docs/format/histogram.md section 3, without the id byte */
static const char k_example_hex[] = "0002000000003FC000002A3FC0000040B80000180001";

static const char *encode_text(const char *text)
{
    codec_hist_bucket_t b[16];
    codec_hist_t h;
    oct_errbuf_t eb;
    uint8_t out[256];
    size_t n;
    if (codec_hist_parse_text(text, strlen(text), b, 16, &h, &eb)) fail_msg("%s: %s", text, eb.msg);
    assert_int_equal(codec_hist_encode(&h, out, sizeof out, &n, &eb), 0);
    return tu_hex(out, n);
}

static void text_form(void **state)
{
    (void)state;
    /* 2.4's example, in its order and shuffled, keys in any case */
    assert_string_equal(encode_text("u=0:o=1:0,1.5=42:1.5,5.75=24"), k_example_hex);
    assert_string_equal(encode_text("1.5,5.75=24:O=1:0.0,1.5=42"), k_example_hex);
    assert_string_equal(encode_text("0,1.5=7:1.5,5.75=24:0,1.5=42:o=1:"), k_example_hex);
    assert_string_equal(encode_text("0,1.5f=42:1.5e0,5.75=24:o=1"), k_example_hex);

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"0,1.5=42:x", "Improperly formatted bucket: x"},
        {"0,1.5=4=2", "Improperly formatted bucket: 0,1.5=4=2"},
        {"0;1.5=42", "Improperly formatted bounds: 0;1.5=42"},
        {"0,1,2=42", "Improperly formatted bounds: 0,1,2=42"},
        {"0,a=42", "For input string: \"a\""},
        {"0,1=4x", "For input string: \"4x\""},
        {"0,1=99999999999999999999", "For input string: \"99999999999999999999\""},
        {"inf,1=1", "For input string: \"inf\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        codec_hist_bucket_t b[4];
        codec_hist_t h;
        oct_errbuf_t eb;
        assert_int_equal(codec_hist_parse_text(bad[i].in, strlen(bad[i].in), b, 4, &h, &eb),
                         OCT_EPARSE);
        assert_string_equal(eb.msg, bad[i].err);
    }
    codec_hist_bucket_t b[1];
    codec_hist_t h;
    oct_errbuf_t eb;
    assert_int_equal(codec_hist_parse_text("0,1=1:1,2=1", 11, b, 1, &h, &eb), OCT_ENOSPC);

    float lo, hi;
    assert_int_equal(codec_hist_parse_bounds("-1.5,Infinity", 13, &lo, &hi), 0);
    assert_true(lo == -1.5f && hi > 3e38f);
    assert_int_equal(codec_hist_parse_bounds("1-2", 3, &lo, &hi), OCT_EPARSE);
    assert_int_equal(codec_hist_parse_bounds("1,x", 3, &lo, &hi), OCT_ERANGE);
}

static void base64_lenient(void **state)
{
    (void)state;
    static const char in[] = "AAIAAAAAP8AAACo/wAAAQLgAABgAAQ==";
    uint8_t out[64];
    size_t n = hist_base64_decode(in, strlen(in), out);
    assert_string_equal(tu_hex(out, n), k_example_hex);
    /* characters outside the alphabet are skipped, as JAXB's parser skips them */
    static const char noisy[] = "AAIA AAAA\nP8AA*ACo/wAAAQLgAABgAAQ";
    n = hist_base64_decode(noisy, strlen(noisy), out);
    assert_string_equal(tu_hex(out, n), k_example_hex);
}

static void config(void **state)
{
    (void)state;
    tsdb_hist_config_t c;
    oct_errbuf_t eb;
    assert_int_equal(tsdb_hist_config_parse(NULL, &c, &eb), 0);
    assert_false(c.enabled);
    assert_int_equal(tsdb_hist_config_parse("", &c, &eb), 0);
    assert_false(c.enabled);
    assert_int_equal(
        tsdb_hist_config_parse("{\"net.opentsdb.core.SimpleHistogramDecoder\": 200}", &c, &eb), 0);
    assert_true(c.enabled);
    assert_int_equal(c.simple_id, 200);
    assert_int_equal(tsdb_hist_config_parse("{}", &c, &eb), 0);
    assert_true(c.enabled);
    assert_int_equal(c.simple_id, -1);

    static const struct {
        const char *in, *err;
    } bad[] = {
        {"{\"net.opentsdb.core.SimpleHistogramDecoder\": 256}",
         "tsd.core.histograms.config={\"net.opentsdb.core.SimpleHistogramDecoder\": 256}: ID for "
         "codec 'net.opentsdb.core.SimpleHistogramDecoder' must be from 0 to 255."},
        {"{\"net.opentsdb.core.SimpleHistogramDecoder\": \"0\"}",
         "tsd.core.histograms.config={\"net.opentsdb.core.SimpleHistogramDecoder\": \"0\"}: ID "
         "for codec 'net.opentsdb.core.SimpleHistogramDecoder' must be from 0 to 255."},
        {"{\"com.example.Other\": 1}",
         "tsd.core.histograms.config={\"com.example.Other\": 1}: unknown histogram codec "
         "'com.example.Other': octsdb implements net.opentsdb.core.SimpleHistogramDecoder only"},
        {"[1]", "tsd.core.histograms.config=[1]: not a JSON object of codec class names and ids"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(tsdb_hist_config_parse(bad[i].in, &c, &eb), OCT_ECONFIG);
        assert_string_equal(eb.msg, bad[i].err);
        assert_int_equal(c.simple_id, -1);
    }

    /* from a file ending in .json */
    char *dir = tu_tempdir();
    char path[1024];
    snprintf(path, sizeof path, "%s/hist.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"net.opentsdb.core.SimpleHistogramDecoder\": 3}\n", f);
    fclose(f);
    assert_int_equal(tsdb_hist_config_parse(path, &c, &eb), 0);
    assert_int_equal(c.simple_id, 3);
    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(tsdb_hist_config_parse(path, &c, &eb), OCT_ECONFIG);
    assert_non_null(strstr(eb.msg, "cannot read the file"));
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_form),
        cmocka_unit_test(base64_lenient),
        cmocka_unit_test(config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
