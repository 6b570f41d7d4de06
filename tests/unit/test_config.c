/* test_config.c -- common/config: defaults, .properties parsing, validation, CLI flags.
 *
 * Expected defaults are OpenTSDB 2.4's (its Config.setDefaults, listed in docs/config.md) and
 * the deviations octsdb documents (docs/compat.md, Configuration); expected parse results are
 * worked out by hand from java.util.Properties' rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/err.h"
#include "testutil.h"

/* Writes text to dir/name; returns the malloc'd path. */
static char *write_file(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return path;
}

static int setup_dir(void **state)
{
    *state = tu_tempdir();
    return *state ? 0 : -1;
}

static int teardown_dir(void **state)
{
    tu_rmrf(*state);
    free(*state);
    return 0;
}

/* Search list that finds nothing, so parse_args never reads ./opentsdb.conf or /etc. */
static const char *const no_files[] = {"/nonexistent/octsdb-test/x.conf", NULL};

static void defaults_match_reference(void **state)
{
    (void)state;
    oct_config_t *c = oct_config_new();
    /* OpenTSDB 2.4 defaults (docs/config.md). */
    assert_string_equal(oct_config_get(c, "tsd.network.bind"), "0.0.0.0");
    assert_string_equal(oct_config_get(c, "tsd.mode"), "rw");
    assert_string_equal(oct_config_get(c, "tsd.core.auto_create_metrics"), "false");
    assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_metrics"), 0);
    assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_tagks"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_tagvs"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.core.enable_api"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.query.allow_simultaneous_duplicates"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.storage.use_max_value"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.storage.enable_appends"), 0);
    assert_string_equal(oct_config_get(c, "tsd.storage.backend"), "rocksdb");
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.data_table"), "tsdb");
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.uid_table"), "tsdb-uid");
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.meta_table"), "tsdb-meta");
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.zk_basedir"), "/hbase");
    assert_int_equal(oct_config_get_int(c, "tsd.storage.max_tags"), 8);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.salt.width"), 0);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.salt.buckets"), 20);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.uid.width.metric"), 3);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.uid.width.tagk"), 3);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.uid.width.tagv"), 3);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.compaction.flush_interval"), 10);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.compaction.max_concurrent_flushes"), 10000);
    assert_int_equal(oct_config_get_int(c, "tsd.http.request.max_chunk"), 4096);
    assert_int_equal(oct_config_get_int(c, "tsd.query.filter.expansion_limit"), 4096);
    assert_int_equal(oct_config_get_int(c, "tsd.query.multi_get.limit"), 131072);
    assert_int_equal(oct_config_get_int(c, "tsd.uid.lru.name.size"), 5000000);
    assert_int_equal(oct_config_get_int(c, "tsd.core.preload_uid_cache.max_entries"), 300000);
    assert_string_equal(oct_config_get(c, "tsd.rollups.agg_tag_key"), "_aggregate");
    assert_string_equal(oct_config_get(c, "tsd.http.request.cors_headers"),
                        "Authorization, Content-Type, Accept, Origin, User-Agent, DNT, "
                        "Cache-Control, X-Mx-ReqToken, Keep-Alive, X-Requested-With, "
                        "If-Modified-Since");
    /* octsdb's deviations and own keys. */
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 4242);
    assert_int_equal(oct_config_get_bool(c, "tsd.http.request.enable_chunked"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.http.show_stack_trace"), 0);
    assert_int_equal(oct_config_get_int(c, "tsd.http.request.max_body_size"), 64 * 1024 * 1024);
    assert_string_equal(oct_config_get(c, "tsd.storage.data_dir"), "./data");
    assert_int_equal(oct_config_get_int(c, "tsd.storage.rocksdb.block_cache_mb"), 64);
    /* No default, or an empty one: unset. */
    assert_null(oct_config_get(c, "tsd.http.staticroot"));
    assert_null(oct_config_get(c, "tsd.network.worker_threads"));
    assert_null(oct_config_get(c, "tsd.core.plugin_path"));
    assert_int_equal(oct_config_get_int(c, "tsd.network.worker_threads"), 0);
    assert_null(oct_config_get(c, "no.such.key"));
    assert_int_equal(oct_config_get_bool(c, "no.such.key"), 0);
    assert_true(oct_config_is_known("tsd.storage.salt.width"));
    assert_false(oct_config_is_known("tsd.storage.salt.widht"));
    assert_null(oct_config_file(c));
    oct_config_free(c);
    oct_config_free(NULL);
}

static void properties_syntax(void **state)
{
    const char *dir = *state;
    /* Written as the file's bytes; C escapes doubled where the file has a backslash. */
    char *path = write_file(dir, "a.conf",
                            "# comment = not.a.key\n"
                            "! bang comment\n"
                            "\n"
                            "   \t\n"
                            "key1 = value1\n"
                            "key2:value2\n"
                            "key3 value3\n"
                            "key4=   leading stripped, trailing kept   \n"
                            "   indented.key = x\n"
                            "multi = one, \\\n"
                            "        two, \\\n"
                            "    three\n"
                            "esc = tab\\there\\nnl \\u00e9 \\u20AC \\uD83D\\uDE00 back\\\\slash "
                            "\\= \\: \\#x\n"
                            "key\\ with\\ space = y\n"
                            "key\\=eq = z\n"
                            "comment.continued = a \\\n"
                            "# not a comment\n"
                            "empty.value =\n"
                            "novalue\n"
                            "colon.sep : c\n"
                            "ws.then.eq    =   d\n"
                            "double.eq = = e\n"
                            "dup = first\n"
                            "dup = second\n"
                            "\\#notcomment = h\n"
                            "even.backslashes = a\\\\\\\\\n"
                            "tsd.storage.salt.width = 1  \n"
                            "tsd.core.auto_create_metrics = YES\n"
                            "tsd.http.cachedir = /tmp/x  \n"
                            "last = end\\");
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_load_file(c, path, &eb), 0);
    assert_string_equal(oct_config_file(c), path);
    assert_null(oct_config_get(c, "#"));
    assert_null(oct_config_get(c, "comment"));
    assert_string_equal(oct_config_get(c, "key1"), "value1");
    assert_string_equal(oct_config_get(c, "key2"), "value2");
    assert_string_equal(oct_config_get(c, "key3"), "value3");
    assert_string_equal(oct_config_get(c, "key4"), "leading stripped, trailing kept   ");
    assert_string_equal(oct_config_get(c, "indented.key"), "x");
    assert_string_equal(oct_config_get(c, "multi"), "one, two, three");
    /* U+00E9 = C3 A9, U+20AC = E2 82 AC, U+1F600 (D83D DE00) = F0 9F 98 80. */
    assert_string_equal(oct_config_get(c, "esc"), "tab\there\nnl \xC3\xA9 \xE2\x82\xAC "
                                                  "\xF0\x9F\x98\x80 back\\slash = : #x");
    assert_string_equal(oct_config_get(c, "key with space"), "y");
    assert_string_equal(oct_config_get(c, "key=eq"), "z");
    assert_string_equal(oct_config_get(c, "comment.continued"), "a # not a comment");
    assert_null(oct_config_get(c, "empty.value"));
    assert_null(oct_config_get(c, "novalue"));
    assert_string_equal(oct_config_get(c, "colon.sep"), "c");
    assert_string_equal(oct_config_get(c, "ws.then.eq"), "d");
    assert_string_equal(oct_config_get(c, "double.eq"), "= e");
    assert_string_equal(oct_config_get(c, "dup"), "second");
    assert_string_equal(oct_config_get(c, "#notcomment"), "h");
    assert_string_equal(oct_config_get(c, "even.backslashes"), "a\\\\");
    /* Typed keys are trimmed; strings keep their trailing whitespace. */
    assert_string_equal(oct_config_get(c, "tsd.storage.salt.width"), "1");
    assert_int_equal(oct_config_get_int(c, "tsd.storage.salt.width"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_metrics"), 1);
    assert_string_equal(oct_config_get(c, "tsd.http.cachedir"), "/tmp/x  ");
    assert_string_equal(oct_config_get(c, "last"), "end");
    oct_config_free(c);
    free(path);
}

static void properties_crlf_and_cr(void **state)
{
    const char *dir = *state;
    char *path = write_file(dir, "crlf.conf",
                            "\xEF\xBB\xBF"
                            "# BOM then comment\r\n"
                            "a = 1\r\n"
                            "b = two \\\r\n"
                            "   parts\r\n"
                            "c = 3\rd = 4\r"
                            "e = trailing  \r\n");
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_load_file(c, path, &eb), 0);
    assert_string_equal(oct_config_get(c, "a"), "1");
    assert_string_equal(oct_config_get(c, "b"), "two parts");
    assert_string_equal(oct_config_get(c, "c"), "3");
    assert_string_equal(oct_config_get(c, "d"), "4");
    assert_string_equal(oct_config_get(c, "e"), "trailing  ");
    free(path);

    /* Line numbers count CRLF once: the bad value sits on line 3. */
    path = write_file(dir, "bad.conf", "x = 1\r\ny = 2\r\ntsd.storage.max_tags = 0\r\n");
    assert_int_equal(oct_config_load_file(c, path, &eb), OCT_ECONFIG);
    char want[512];
    snprintf(want, sizeof want, "%s:3:", path);
    assert_non_null(strstr(eb.msg, want));
    assert_non_null(strstr(eb.msg, "tsd.storage.max_tags"));
    oct_config_free(c);
    free(path);
}

static void later_files_override_and_bad_file_changes_nothing(void **state)
{
    const char *dir = *state;
    char *p1 = write_file(dir, "one.conf", "tsd.network.port = 1111\nk = one\n");
    char *p2 = write_file(dir, "two.conf", "k = two\n");
    char *p3 = write_file(dir, "three.conf",
                          "k = three\n"
                          "tsd.network.port = 2222\n"
                          "\n"
                          "tsd.core.auto_create_tagks = ture\n");
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_load_file(c, p1, &eb), 0);
    assert_int_equal(oct_config_load_file(c, p2, &eb), 0);
    assert_string_equal(oct_config_get(c, "k"), "two");
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 1111);
    assert_string_equal(oct_config_file(c), p2);

    assert_int_equal(oct_config_load_file(c, p3, &eb), OCT_ECONFIG);
    char want[512];
    snprintf(want, sizeof want, "%s:4:", p3);
    assert_non_null(strstr(eb.msg, want));
    assert_non_null(strstr(eb.msg, "tsd.core.auto_create_tagks"));
    assert_non_null(strstr(eb.msg, "ture"));
    /* All or nothing: lines 1-2 of the bad file were not applied. */
    assert_string_equal(oct_config_get(c, "k"), "two");
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 1111);
    assert_string_equal(oct_config_file(c), p2);

    char *p4 = write_file(dir, "four.conf", "ok = 1\nbad\\u12 = 2\n");
    assert_int_equal(oct_config_load_file(c, p4, &eb), OCT_ECONFIG);
    snprintf(want, sizeof want, "%s:2:", p4);
    assert_non_null(strstr(eb.msg, want));
    assert_null(oct_config_get(c, "ok"));

    char *missing = malloc(strlen(dir) + 32);
    sprintf(missing, "%s/nope.conf", dir);
    assert_int_equal(oct_config_load_file(c, missing, &eb), -ENOENT);
    assert_non_null(strstr(eb.msg, missing));
    oct_config_free(c);
    free(p1);
    free(p2);
    free(p3);
    free(p4);
    free(missing);
}

/* Sets key=value expecting OCT_ECONFIG, an error naming key and 'shown', and no change. */
static void expect_rejected(oct_config_t *c, const char *key, const char *value, const char *shown)
{
    oct_errbuf_t eb;
    const char *before = oct_config_get(c, key);
    char *saved = before ? strdup(before) : NULL;
    assert_int_equal(oct_config_set(c, key, value, &eb), OCT_ECONFIG);
    if (!strstr(eb.msg, key) || (shown && !strstr(eb.msg, shown)))
        fail_msg("error for %s=%s does not name both: %s", key, value, eb.msg);
    const char *after = oct_config_get(c, key);
    if (saved)
        assert_string_equal(after, saved);
    else
        assert_null(after);
    free(saved);
}

static void expect_accepted(oct_config_t *c, const char *key, const char *value)
{
    oct_errbuf_t eb;
    if (oct_config_set(c, key, value, &eb) != 0) fail_msg("%s=%s rejected: %s", key, value, eb.msg);
}

static void validation_names_key_and_value(void **state)
{
    (void)state;
    oct_config_t *c = oct_config_new();
    const char *widths[] = {"tsd.storage.uid.width.metric", "tsd.storage.uid.width.tagk",
                            "tsd.storage.uid.width.tagv"};
    for (size_t i = 0; i < 3; i++) {
        expect_rejected(c, widths[i], "9", "9");
        expect_rejected(c, widths[i], "0", "0");
        expect_rejected(c, widths[i], "", NULL);
        expect_rejected(c, widths[i], "3x", "3x");
        expect_accepted(c, widths[i], "8");
        assert_int_equal(oct_config_get_int(c, widths[i]), 8);
        expect_accepted(c, widths[i], " 1 ");
        assert_int_equal(oct_config_get_int(c, widths[i]), 1);
    }
    expect_rejected(c, "tsd.storage.salt.width", "9", "9");
    expect_rejected(c, "tsd.storage.salt.width", "-1", "-1");
    expect_accepted(c, "tsd.storage.salt.width", "0");
    expect_accepted(c, "tsd.storage.salt.width", "8");
    expect_rejected(c, "tsd.storage.salt.buckets", "0", "0");
    expect_accepted(c, "tsd.storage.salt.buckets", "1");
    expect_rejected(c, "tsd.storage.max_tags", "0", "0");
    expect_accepted(c, "tsd.storage.max_tags", "1");
    expect_rejected(c, "tsd.network.port", "0", "0");
    expect_rejected(c, "tsd.network.port", "65536", "65536");
    expect_rejected(c, "tsd.network.port", "42x", "42x");
    expect_rejected(c, "tsd.network.port", "99999999999999999999", "99999999999999999999");
    expect_accepted(c, "tsd.network.port", "65535");
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 65535);
    expect_accepted(c, "tsd.network.port", "1");

    expect_rejected(c, "tsd.core.auto_create_metrics", "ture", "ture");
    expect_rejected(c, "tsd.core.auto_create_metrics", "", NULL);
    expect_rejected(c, "tsd.core.auto_create_metrics", "2", "2");
    const struct {
        const char *text;
        int want;
    } bools[] = {{"true", 1},  {"TRUE", 1}, {" Yes ", 1}, {"on", 1}, {"1", 1},
                 {"false", 0}, {"No", 0},   {"OFF", 0},   {"0", 0},  {"\tfalse\t", 0}};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        expect_accepted(c, "tsd.core.auto_create_metrics", bools[i].text);
        assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_metrics"), bools[i].want);
    }

    expect_rejected(c, "tsd.mode", "rx", "rx");
    expect_rejected(c, "tsd.mode", "r", "r");
    expect_accepted(c, "tsd.mode", " ro");
    assert_string_equal(oct_config_get(c, "tsd.mode"), "ro");
    expect_accepted(c, "tsd.mode", "wo");

    expect_rejected(c, "tsd.storage.data_dir", "", NULL);
    expect_rejected(c, "tsd.storage.hbase.data_table", "", NULL);
    /* Optional keys may be emptied back to unset. */
    expect_accepted(c, "tsd.http.staticroot", "/s");
    expect_accepted(c, "tsd.http.staticroot", "");
    assert_null(oct_config_get(c, "tsd.http.staticroot"));

    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(c, "", "x", &eb), OCT_ECONFIG);
    oct_config_free(c);
}

static void unknown_keys_kept_and_getters(void **state)
{
    (void)state;
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(c, "my.plugin.setting", "anything goes ", &eb), 0);
    assert_string_equal(oct_config_get(c, "my.plugin.setting"), "anything goes ");
    assert_int_equal(oct_config_set(c, "x.double", " 2.5 ", &eb), 0);
    assert_true(oct_config_get_double(c, "x.double") == 2.5);
    assert_int_equal(oct_config_get_int(c, "x.double"), 0);
    assert_int_equal(oct_config_set(c, "x.int", "-17", &eb), 0);
    assert_int_equal(oct_config_get_int(c, "x.int"), -17);
    assert_true(oct_config_get_double(c, "x.int") == -17.0);
    assert_int_equal(oct_config_set(c, "x.bool", "whatever", &eb), 0);
    assert_int_equal(oct_config_get_bool(c, "x.bool"), 0);
    assert_true(oct_config_get_double(c, "x.bool") == 0.0);
    assert_int_equal(oct_config_set(c, "x.bool", "on", &eb), 0);
    assert_int_equal(oct_config_get_bool(c, "x.bool"), 1);
    oct_config_free(c);
}

typedef struct {
    char *keys[512];
    int n, stop_after;
} walk_t;

static int walk_cb(void *ctx, const char *key, const char *value)
{
    walk_t *w = ctx;
    assert_true(value[0] != '\0');
    if (w->n < 512) w->keys[w->n] = strdup(key);
    w->n++;
    return w->stop_after && w->n == w->stop_after ? 7 : 0;
}

static int has_key(const walk_t *w, const char *key)
{
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->keys[i], key) == 0) return 1;
    return 0;
}

static void foreach_is_sorted_and_complete(void **state)
{
    (void)state;
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    const char *added[] = {"zzz.last", "aaa.first", "tsd.m.unknown", "tsd.network.zz"};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(oct_config_set(c, added[i], "v", &eb), 0);
    assert_int_equal(oct_config_set(c, "tsd.http.staticroot", "/www", &eb), 0);
    walk_t w = {0};
    assert_int_equal(oct_config_foreach(c, walk_cb, &w), 0);
    assert_true(w.n > 60 && w.n < 512);
    for (int i = 1; i < w.n; i++)
        if (strcmp(w.keys[i - 1], w.keys[i]) >= 0)
            fail_msg("out of order: %s before %s", w.keys[i - 1], w.keys[i]);
    assert_string_equal(w.keys[0], "aaa.first");
    assert_string_equal(w.keys[w.n - 1], "zzz.last");
    for (size_t i = 0; i < 4; i++)
        assert_true(has_key(&w, added[i]));
    assert_true(has_key(&w, "tsd.http.staticroot"));
    assert_true(has_key(&w, "tsd.storage.salt.buckets"));
    assert_false(has_key(&w, "tsd.core.plugin_path")); /* default "" = unset */
    assert_false(has_key(&w, "tsd.network.worker_threads"));
    for (int i = 0; i < w.n && i < 512; i++)
        free(w.keys[i]);

    walk_t w2 = {.stop_after = 3};
    assert_int_equal(oct_config_foreach(c, walk_cb, &w2), 7);
    assert_int_equal(w2.n, 3);
    for (int i = 0; i < 3; i++)
        free(w2.keys[i]);
    oct_config_free(c);
}

static void flags_override_file_in_any_order(void **state)
{
    const char *dir = *state;
    char *conf = write_file(dir, "f.conf",
                            "tsd.network.port = 1111\n"
                            "tsd.storage.hbase.data_table = filetable\n"
                            "tsd.network.bind = 1.2.3.4\n"
                            "tsd.storage.data_dir = /from/file\n");
    char cfgflag[600];
    snprintf(cfgflag, sizeof cfgflag, "--config=%s", conf);
    char *argv[] = {"tsd",       "--port", "5555",          "pos1", cfgflag, "--table=cli",
                    "--fix",     "pos2",   "--auto-metric", "-v",   "--set", "my.key=a=b",
                    "--datadir", "/d",     "--idwidth",     "4",    NULL};
    int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_parse_args(c, &argc, argv, &eb), 0);
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 5555);
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.data_table"), "cli");
    assert_string_equal(oct_config_get(c, "tsd.network.bind"), "1.2.3.4");
    assert_string_equal(oct_config_get(c, "tsd.storage.data_dir"), "/d");
    assert_int_equal(oct_config_get_bool(c, "tsd.core.auto_create_metrics"), 1);
    assert_int_equal(oct_config_get_bool(c, "tsd.octsdb.verbose"), 1);
    assert_string_equal(oct_config_get(c, "my.key"), "a=b");
    assert_string_equal(oct_config_file(c), conf);
    assert_int_equal(argc, 6);
    const char *rest[] = {"tsd", "pos1", "--fix", "pos2", "--idwidth", "4"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(argv[i], rest[i]);
    assert_null(argv[6]);
    oct_config_free(c);

    /* --config FILE (space form) after the flags it must not override. */
    char *argv2[] = {"import",
                     "--bind=9.9.9.9",
                     "--uidtable",
                     "u",
                     "--config",
                     conf,
                     "--read-only",
                     "--disable-ui",
                     "--disable-api",
                     "--max-connections=12",
                     "--flush-interval",
                     "250",
                     "--zkquorum=zk1",
                     "--async-io",
                     "false",
                     "file.txt",
                     NULL};
    argc = (int)(sizeof argv2 / sizeof argv2[0]) - 1;
    c = oct_config_new();
    assert_int_equal(oct_config_parse_args(c, &argc, argv2, &eb), 0);
    assert_string_equal(oct_config_get(c, "tsd.network.bind"), "9.9.9.9");
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 1111);
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.uid_table"), "u");
    assert_string_equal(oct_config_get(c, "tsd.mode"), "ro");
    assert_int_equal(oct_config_get_bool(c, "tsd.core.enable_ui"), 0);
    assert_int_equal(oct_config_get_bool(c, "tsd.core.enable_api"), 0);
    assert_int_equal(oct_config_get_int(c, "tsd.core.connections.limit"), 12);
    assert_int_equal(oct_config_get_int(c, "tsd.storage.flush_interval"), 250);
    assert_string_equal(oct_config_get(c, "tsd.storage.hbase.zk_quorum"), "zk1");
    assert_int_equal(oct_config_get_bool(c, "tsd.network.async_io"), 0);
    assert_int_equal(argc, 2);
    assert_string_equal(argv2[0], "import");
    assert_string_equal(argv2[1], "file.txt");
    oct_config_free(c);
    free(conf);
}

static void flag_errors_leave_argv_alone(void **state)
{
    (void)state;
    oct_errbuf_t eb;
    struct {
        const char *args[4];
        const char *named[2];
    } cases[] = {
        {{"tsd", "x", "--port", NULL}, {"--port", NULL}},
        {{"tsd", "--read-only=yes", NULL}, {"--read-only", NULL}},
        {{"tsd", "--port=0", NULL}, {"--port", "tsd.network.port"}},
        {{"tsd", "--worker-threads", "lots", NULL}, {"--worker-threads", "lots"}},
        {{"tsd", "--set", "novalue", NULL}, {"--set", "novalue"}},
        {{"tsd", "--set=tsd.storage.max_tags=0", NULL}, {"--set", "tsd.storage.max_tags"}},
        {{"tsd", "--async-io=maybe", NULL}, {"tsd.network.async_io", "maybe"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *argv[5] = {0};
        int argc = 0;
        while (cases[k].args[argc]) {
            argv[argc] = (char *)cases[k].args[argc];
            argc++;
        }
        int argc0 = argc;
        oct_config_t *c = oct_config_new();
        oct_config_set_search_paths(c, no_files);
        int rc = oct_config_parse_args(c, &argc, argv, &eb);
        if (rc >= 0) fail_msg("case %zu accepted", k);
        for (int i = 0; i < 2; i++)
            if (cases[k].named[i] && !strstr(eb.msg, cases[k].named[i]))
                fail_msg("case %zu: '%s' not in: %s", k, cases[k].named[i], eb.msg);
        assert_int_equal(argc, argc0);
        for (int i = 0; i < argc0; i++)
            assert_string_equal(argv[i], cases[k].args[i]);
        oct_config_free(c);
    }
}

static void double_dash_ends_flags(void **state)
{
    (void)state;
    char *argv[] = {"query", "--port=1", "--", "--port=2", "x", NULL};
    int argc = 5;
    oct_config_t *c = oct_config_new();
    oct_config_set_search_paths(c, no_files);
    oct_errbuf_t eb;
    assert_int_equal(oct_config_parse_args(c, &argc, argv, &eb), 0);
    assert_int_equal(oct_config_get_int(c, "tsd.network.port"), 1);
    assert_int_equal(argc, 4);
    assert_string_equal(argv[1], "--");
    assert_string_equal(argv[2], "--port=2");
    assert_string_equal(argv[3], "x");
    assert_null(argv[4]);
    assert_null(oct_config_file(c));
    oct_config_free(c);

    /* Nothing to parse: argv untouched, argc unchanged. */
    char *argv2[] = {"version", NULL};
    argc = 1;
    c = oct_config_new();
    oct_config_set_search_paths(c, no_files);
    assert_int_equal(oct_config_parse_args(c, &argc, argv2, &eb), 0);
    assert_int_equal(argc, 1);
    assert_string_equal(argv2[0], "version");
    oct_config_free(c);
}

static void missing_config_file_is_named(void **state)
{
    const char *dir = *state;
    char path[600];
    snprintf(path, sizeof path, "%s/does-not-exist.conf", dir);
    char flag[640];
    snprintf(flag, sizeof flag, "--config=%s", path);
    char *argv[] = {"tsd", flag, NULL};
    int argc = 2;
    oct_config_t *c = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_parse_args(c, &argc, argv, &eb), -ENOENT);
    assert_non_null(strstr(eb.msg, path));
    assert_int_equal(argc, 2);
    oct_config_free(c);
}

static void search_list_first_existing_wins(void **state)
{
    const char *dir = *state;
    char *b = write_file(dir, "b.conf", "from = b\n");
    char *cc = write_file(dir, "c.conf", "from = c\n");
    char none[600];
    snprintf(none, sizeof none, "%s/a.conf", dir);
    const char *paths[] = {none, dir /* a directory: skipped */, b, cc, NULL};
    char *argv[] = {"tsd", NULL};
    int argc = 1;
    oct_config_t *c = oct_config_new();
    oct_config_set_search_paths(c, paths);
    oct_errbuf_t eb;
    assert_int_equal(oct_config_parse_args(c, &argc, argv, &eb), 0);
    assert_string_equal(oct_config_get(c, "from"), "b");
    assert_string_equal(oct_config_file(c), b);
    oct_config_free(c);

    /* An existing but invalid file is an error, not skipped. */
    char *bad = write_file(dir, "bad.conf", "tsd.storage.salt.width = 10\n");
    const char *paths2[] = {bad, b, NULL};
    c = oct_config_new();
    assert_int_equal(oct_config_load_first(c, paths2, &eb), OCT_ECONFIG);
    assert_non_null(strstr(eb.msg, "tsd.storage.salt.width"));
    assert_null(oct_config_get(c, "from"));
    /* Nothing found at all: fine, defaults stay. */
    assert_int_equal(oct_config_load_first(c, no_files, &eb), 0);
    assert_null(oct_config_file(c));
    oct_config_free(c);

    /* The default list keeps OpenTSDB's four places in OpenTSDB's order. */
    const char *const *d = oct_config_default_paths();
    const char *otsdb[] = {"./opentsdb.conf", "/etc/opentsdb.conf", "/etc/opentsdb/opentsdb.conf",
                           "/opt/opentsdb/opentsdb.conf"};
    size_t k = 0;
    for (size_t i = 0; d[i]; i++)
        if (k < 4 && strcmp(d[i], otsdb[k]) == 0) k++;
    assert_int_equal(k, 4);
    free(b);
    free(cc);
    free(bad);
}

static void help_lists_every_flag(void **state)
{
    (void)state;
    const char *h = oct_config_flags_help();
    const char *names[] = {"--config=PATH",
                           "--set=KEY=VALUE",
                           "--datadir=DIR",
                           "--table=TABLE",
                           "--uidtable=TABLE",
                           "--zkquorum=SPEC",
                           "--zkbasedir=PATH",
                           "--port=NUM",
                           "--bind=ADDR",
                           "--staticroot=PATH",
                           "--ui-dir=DIR",
                           "--cachedir=PATH",
                           "--worker-threads=NUM",
                           "--async-io=true|false",
                           "--backlog=NUM",
                           "--max-connections=NUM",
                           "--flush-interval=MSEC",
                           "--read-only",
                           "--disable-ui",
                           "--disable-api",
                           "--auto-metric",
                           "--statswport",
                           "--verbose",
                           "  -v "};
    size_t n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < n; i++)
        if (!strstr(h, names[i])) fail_msg("%s missing from help", names[i]);
    size_t lines = 0;
    for (const char *p = h; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, n);
    assert_ptr_equal(oct_config_flags_help(), h);
}

/* The start-up check: typos get the key they were meant as (edit distances
 * worked by hand), far keys get none, an enabled plugin is refused. */
static void check_warns_unknown_and_refuses_plugins(void **state)
{
    (void)state;
    /* "tsd.mdoe": swap = 2 substitutions from tsd.mode (limit 8/3 = 2) */
    assert_string_equal(oct_config_suggest("tsd.mdoe"), "tsd.mode");
    /* one letter missing */
    assert_string_equal(oct_config_suggest("tsd.network.prt"), "tsd.network.port");
    assert_string_equal(oct_config_suggest("tsd.core.auto_create_metric"),
                        "tsd.core.auto_create_metrics");
    assert_null(oct_config_suggest("tsd.search.elasticsearch.host"));
    assert_null(oct_config_suggest("tsd.x"));

    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.netwrok.port", "4242", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "hbase.zookeeper.quorum", "zk", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.search.plugin", "x.Y", &eb), 0); /* not enabled */
    char **w;
    size_t n;
    assert_int_equal(oct_config_check(cfg, &w, &n, &eb), 0);
    assert_int_equal(n, 1); /* hbase.* is not ours to judge */
    assert_string_equal(w[0], "unknown configuration key 'tsd.netwrok.port' is ignored; did you "
                              "mean 'tsd.network.port'?");
    oct_config_warnings_free(w, n);

    static const char *const plugins[][2] = {
        {"tsd.search.enable", "true"},
        {"tsd.rtpublisher.enable", "yes"},
        {"tsd.rpc.plugins", "net.opentsdb.tsd.KafkaRpcPlugin"},
        {"tsd.http.rpc.plugins", "a.B"},
        {"tsd.startup.enable", "1"},
        {"tsd.core.storage_exception_handler.enable", "true"},
        {"tsd.uidfilter.enable", "true"},
        {"tsd.timeseriesfilter.enable", "true"},
        {"tsd.core.meta.cache.enable", "true"},
    };
    for (size_t i = 0; i < sizeof plugins / sizeof *plugins; i++) {
        oct_config_t *c = oct_config_new();
        assert_int_equal(oct_config_set(c, plugins[i][0], plugins[i][1], &eb), 0);
        w = (char **)1;
        assert_int_equal(oct_config_check(c, &w, &n, &eb), OCT_ECONFIG);
        assert_null(w);
        char want[256];
        snprintf(want, sizeof want, "%s=%s: this OpenTSDB plugin is not available: ", plugins[i][0],
                 plugins[i][1]);
        if (strncmp(eb.msg, want, strlen(want))) fail_msg("%s: got '%s'", plugins[i][0], eb.msg);
        oct_config_free(c);
    }
    /* off is fine, and so is an empty plugin list */
    assert_int_equal(oct_config_set(cfg, "tsd.search.enable", "false", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.rpc.plugins", "", &eb), 0);
    assert_int_equal(oct_config_check(cfg, &w, &n, &eb), 0);
    oct_config_warnings_free(w, n);
    oct_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_match_reference),
        cmocka_unit_test_setup_teardown(properties_syntax, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(properties_crlf_and_cr, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(later_files_override_and_bad_file_changes_nothing,
                                        setup_dir, teardown_dir),
        cmocka_unit_test(validation_names_key_and_value),
        cmocka_unit_test(unknown_keys_kept_and_getters),
        cmocka_unit_test(foreach_is_sorted_and_complete),
        cmocka_unit_test_setup_teardown(flags_override_file_in_any_order, setup_dir, teardown_dir),
        cmocka_unit_test(flag_errors_leave_argv_alone),
        cmocka_unit_test(double_dash_ends_flags),
        cmocka_unit_test_setup_teardown(missing_config_file_is_named, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(search_list_first_existing_wins, setup_dir, teardown_dir),
        cmocka_unit_test(help_lists_every_flag),
        cmocka_unit_test(check_warns_unknown_and_refuses_plugins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
