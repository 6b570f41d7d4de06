/* test_tree_rule.c -- query/tree_rule: Java's String.hashCode and branch ids
 * (the worked example of docs/format/tree.md, computed by hand), each rule
 * type, regex groups, separators with Java's split rules, display formats,
 * collapsing equal names, not-matched ids and validation texts. The
 * expected chains are worked out by hand from the rules in each test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/tree_rule.h"
#include "tsdb/tree.h"

static void tree_hash_worked_examples(void **state)
{
    (void)state;
    /* 115*31^2 + 121*31 + 115 = 110515 + 3751 + 115 = 114381 = 0x1BECD */
    assert_int_equal(tree_hash("sys", 3), 114381);
    assert_int_equal((uint32_t)tree_hash("sys", 3), 0x0001BECDu);
    /* 99*961 + 112*31 + 117 = 95139 + 3472 + 117 = 98728 = 0x181A8 */
    assert_int_equal(tree_hash("cpu", 3), 98728);
    assert_int_equal(tree_hash("", 0), 0);
    /* wraps as Java's int: "ROOTROOTROOT" overflows 32 bits; h(s+t) = h(s)*31^|t| + h(t) */
    int32_t a = tree_hash("ROOT", 4);
    uint32_t p4 = 31u * 31u * 31u * 31u;
    uint32_t want = ((uint32_t)a * p4 + (uint32_t)a) * p4 + (uint32_t)a;
    assert_int_equal((uint32_t)tree_hash("ROOTROOTROOT", 12), want);
    /* U+00E9 is one UTF-16 unit (233); U+1F600 two (0xD83D, 0xDE00) */
    assert_int_equal(tree_hash("\xc3\xa9", 2), 233);
    assert_int_equal(tree_hash("\xf0\x9f\x98\x80", 4), 0xD83D * 31 + 0xDE00);
}

static void tree_branch_ids(void **state)
{
    (void)state;
    const char *path[] = {"sys", "cpu"};
    uint8_t id[10];
    tsdb_tree_branch_id(1, path, 1, id);
    const uint8_t sys[] = {0x00, 0x01, 0x00, 0x01, 0xBE, 0xCD};
    assert_memory_equal(id, sys, 6);
    tsdb_tree_branch_id(1, path, 2, id);
    const uint8_t cpu[] = {0x00, 0x01, 0x00, 0x01, 0xBE, 0xCD, 0x00, 0x01, 0x81, 0xA8};
    assert_memory_equal(id, cpu, 10);
}

/* A rule from compact arguments; validated. */
static tree_rule_t mk(int type, int level, int order, const char *field, const char *custom,
                      const char *regex, int gidx, const char *sep, const char *fmt)
{
    tree_rule_t r;
    tree_rule_init(&r);
    r.type = type;
    r.level = level;
    r.order = order;
    r.tree_id = 1;
    r.regex_group_idx = gidx;
    tree_rule_set(&r.field, field);
    tree_rule_set(&r.custom_field, custom);
    tree_rule_set(&r.regex, regex);
    tree_rule_set(&r.separator, sep);
    tree_rule_set(&r.display_format, fmt);
    oct_errbuf_t eb;
    if (tree_rule_validate(&r, &eb)) fail_msg("rule invalid: %s", eb.msg);
    return r;
}

/* sys.cpu.0.user{host=web01,dc=lga}; the metric's custom {"owner":"ops"},
 * tag key host's {"kind":"server"}, tag value web01's {"rack":"r12"}. */
static const tree_uid_view_t tagk[] = {{"dc", NULL}, {"host", "{\"kind\":\"server\"}"}};
static const tree_uid_view_t tagv[] = {{"lga", NULL}, {"web01", "{\"rack\":\"r12\"}"}};
static const tree_series_view_t series = {
    "000001000001000001000002000002", {"sys.cpu.0.user", "{\"owner\":\"ops\"}"}, 2, tagk, tagv};

/* Runs rules and checks the chain "a/b/c" (branches) and the leaf. */
static void expect(tree_rule_t *rules, size_t n, const char *chain, const char *leaf,
                   const char *not_matched)
{
    tree_build_result_t r = {0};
    oct_errbuf_t eb;
    assert_int_equal(tree_build(rules, n, &series, TREE_BUILD_MESSAGES, &r, &eb), 0);
    char got[512] = "";
    for (size_t i = 0; i < r.n_branches; i++) {
        if (i) strcat(got, "/");
        strcat(got, r.branches[i]);
    }
    if (strcmp(got, chain)) fail_msg("chain <%s>, want <%s>", got, chain);
    if (leaf)
        assert_string_equal(r.leaf ? r.leaf : "(null)", leaf);
    else
        assert_null(r.leaf);
    if (not_matched)
        assert_string_equal(r.not_matched ? r.not_matched : "(null)", not_matched);
    else
        assert_null(r.not_matched);
    assert_true(r.n_messages > 0);
    tree_build_result_free(&r);
    for (size_t i = 0; i < n; i++)
        tree_rule_clear(&rules[i]);
}

/* 2.4's documented example: L0 TAGK host, L1 METRIC split on "\." gives
 * ROOT/web01/sys/cpu/0 with the leaf "user". */
static void tree_tagk_then_metric_split(void **state)
{
    (void)state;
    tree_rule_t r[] = {mk(TREE_RULE_TAGK, 0, 0, "host", "", "", 0, "", ""),
                       mk(TREE_RULE_METRIC, 1, 0, "", "", "", 0, "\\.", "")};
    expect(r, 2, "web01/sys/cpu/0", "user", NULL);
}

static void tree_custom_rules(void **state)
{
    (void)state;
    tree_rule_t r[] = {mk(TREE_RULE_METRIC_CUSTOM, 0, 0, "x", "owner", "", 0, "", ""),
                       mk(TREE_RULE_TAGK_CUSTOM, 1, 0, "host", "kind", "", 0, "", ""),
                       mk(TREE_RULE_TAGV_CUSTOM, 2, 0, "web01", "rack", "", 0, "", "rack-{value}"),
                       mk(TREE_RULE_METRIC, 3, 0, "", "", "", 0, "", "")};
    expect(r, 4, "ops/server/rack-r12", "sys.cpu.0.user", NULL);
}

static void tree_regex_group_and_formats(void **state)
{
    (void)state;
    /* group idx 1 = the second group: "cpu"; {ovalue} the whole metric */
    tree_rule_t r[] = {mk(TREE_RULE_METRIC, 0, 0, "", "", "^(\\w+)\\.(\\w+)\\.", 1, "", ""),
                       mk(TREE_RULE_TAGK, 1, 0, "host", "", "", 0, "", "{tag_name}:{value}"),
                       mk(TREE_RULE_METRIC, 2, 0, "", "", "", 0, "", "{ovalue}@{tsuid}")};
    expect(r, 3, "cpu/host:web01", "sys.cpu.0.user@000001000001000001000002000002", NULL);
}

/* A level whose first rule misses falls to the next order; a level with
 * no match is skipped (its last rule's id recorded) without strict match. */
static void tree_orders_and_unmatched_levels(void **state)
{
    (void)state;
    tree_rule_t r[] = {mk(TREE_RULE_TAGK, 0, 0, "rack", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 0, 1, "dc", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 1, 0, "nope", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 1, 3, "nope2", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 2, 0, "host", "", "", 0, "", ""),
                       mk(TREE_RULE_METRIC, 5, 0, "", "", "", 0, "", "")};
    expect(r, 6, "lga/web01", "sys.cpu.0.user", "[1:1:3:TAGK]");
}

/* Equal consecutive names collapse; the leaf is the last named frame. */
static void tree_collapse_and_root_leaf(void **state)
{
    (void)state;
    tree_rule_t r[] = {mk(TREE_RULE_TAGK, 0, 0, "dc", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 1, 0, "dc", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 2, 0, "host", "", "", 0, "", "")};
    expect(r, 3, "lga", "web01", NULL);
    /* one named frame: the leaf would hang on the root */
    tree_rule_t r2[] = {mk(TREE_RULE_TAGK, 0, 0, "host", "", "", 0, "", ""),
                        mk(TREE_RULE_TAGK, 1, 0, "nope", "", "", 0, "", "")};
    expect(r2, 2, "", "web01", "[1:1:0:TAGK]");
    /* nothing matches */
    tree_rule_t r3[] = {mk(TREE_RULE_TAGK, 0, 0, "nope", "", "", 0, "", "")};
    expect(r3, 1, "", NULL, "[1:0:0:TAGK]");
}

/* Java's split: "." matches every character and leaves no piece (issue
 * #584): the level does not match; a separator that never matches leaves
 * the whole value; "0" is one piece between two dots. */
static void tree_split_java_rules(void **state)
{
    (void)state;
    tree_rule_t r[] = {mk(TREE_RULE_METRIC, 0, 0, "", "", "", 0, ".", ""),
                       mk(TREE_RULE_TAGK, 1, 0, "dc", "", "", 0, "", ""),
                       mk(TREE_RULE_TAGK, 2, 0, "host", "", "", 0, "", "")};
    expect(r, 3, "lga", "web01", "[1:0:0:METRIC]");
    tree_rule_t r2[] = {mk(TREE_RULE_METRIC, 0, 0, "", "", "", 0, "/", ""),
                        mk(TREE_RULE_TAGK, 1, 0, "host", "", "", 0, "", "")};
    expect(r2, 2, "sys.cpu.0.user", "web01", NULL);
    /* split pieces get the display format each */
    tree_rule_t r3[] = {mk(TREE_RULE_METRIC, 0, 0, "", "", "", 0, "[.]", "<{value}>")};
    expect(r3, 1, "<sys>/<cpu>/<0>", "<user>", NULL);
}

static void tree_rule_validation_texts(void **state)
{
    (void)state;
    struct {
        int type;
        const char *field, *custom;
        int gidx, level;
        const char *regex, *want;
    } cases[] = {
        {TREE_RULE_UNSET, "", "", 0, 0, "", "Missing rule type"},
        {TREE_RULE_TAGK, "", "", 0, 0, "", "Missing field name required for TAGK rule"},
        {TREE_RULE_TAGV_CUSTOM, "host", "", 0, 0, "",
         "Missing custom field name required for TAGV_CUSTOM rule"},
        {TREE_RULE_METRIC, "", "", -1, 0, "", "Invalid regex group index. Cannot be less than 0"},
        {TREE_RULE_METRIC, "", "", 0, -1, "", "Negative levels are not allowed"},
        {TREE_RULE_METRIC, "", "", 0, 0, "(", "Invalid regex pattern '('"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tree_rule_t r;
        tree_rule_init(&r);
        r.type = cases[i].type;
        r.regex_group_idx = cases[i].gidx;
        r.level = cases[i].level;
        tree_rule_set(&r.field, cases[i].field);
        tree_rule_set(&r.custom_field, cases[i].custom);
        tree_rule_set(&r.regex, cases[i].regex);
        oct_errbuf_t eb;
        assert_int_equal(tree_rule_validate(&r, &eb), OCT_EINVAL);
        if (strncmp(eb.msg, cases[i].want, strlen(cases[i].want)))
            fail_msg("case %zu: <%s>, want <%s>", i, eb.msg, cases[i].want);
        tree_rule_clear(&r);
    }
    assert_int_equal(tree_rule_type_parse("tagv_Custom"), TREE_RULE_TAGV_CUSTOM);
    assert_int_equal(tree_rule_type_parse("tagv"), TREE_RULE_UNSET);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tree_hash_worked_examples),
        cmocka_unit_test(tree_branch_ids),
        cmocka_unit_test(tree_tagk_then_metric_split),
        cmocka_unit_test(tree_custom_rules),
        cmocka_unit_test(tree_regex_group_and_formats),
        cmocka_unit_test(tree_orders_and_unmatched_levels),
        cmocka_unit_test(tree_collapse_and_root_leaf),
        cmocka_unit_test(tree_split_java_rules),
        cmocka_unit_test(tree_rule_validation_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
