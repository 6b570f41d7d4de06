/* test_uid.c -- the UID registry over the real RocksDB store in a temp dir:
 * assignment (also racing), exhaustion, auto-create, rename, delete, suggest,
 * fsck finding and repairing damage made on purpose, and the layout guard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"
#include "uid/uid.h"
#include "uid_fixture.h"

#define S(x) (const uint8_t *)(x), strlen(x)

static uint64_t must_create(uid_registry_t *r, codec_uid_kind_t k, const char *name)
{
    oct_errbuf_t eb;
    uint64_t id = 0;
    int rc = uid_get_or_create(r, k, S(name), &id, NULL, &eb);
    if (rc) fail_msg("create %s: %s", name, eb.msg);
    return id;
}

/* Raw cell writes, to damage the table on purpose. */
static void raw_put(fx_t *fx, const char *kind, const void *row, size_t rlen, const char *fam,
                    const char *qual, const void *val, size_t vlen)
{
    oct_errbuf_t eb;
    store_op_t op = {
        STORE_OP_PUT,
        oct_slice_str(kind),
        {oct_slice(row, rlen), oct_slice_str(fam), oct_slice_str(qual), oct_slice(val, vlen)}};
    assert_int_equal(store_write(fx->st, STORE_TABLE_UID, &op, 1, 0, &eb), 0);
}

static void raw_del(fx_t *fx, const char *kind, const void *row, size_t rlen, const char *fam,
                    const char *qual)
{
    oct_errbuf_t eb;
    store_op_t op = {STORE_OP_DELETE_CELL,
                     oct_slice_str(kind),
                     {oct_slice(row, rlen), oct_slice_str(fam), oct_slice_str(qual), {0}}};
    assert_int_equal(store_write(fx->st, STORE_TABLE_UID, &op, 1, 0, &eb), 0);
}

static void empty_store_assigns_one_per_kind(void **state)
{
    fx_t *fx = *state;
    assert_int_equal(must_create(fx->r, CODEC_UID_METRIC, "sys.cpu.0"), 1);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGK, "host"), 1);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGV, "web01"), 1);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGV, "web02"), 2);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGV, "web01"), 1); /* existing */

    /* the table holds OpenTSDB's exact cells */
    oct_errbuf_t eb;
    store_result_t res = STORE_RESULT_INIT;
    assert_int_equal(store_get_cell(fx->st, STORE_TABLE_UID, oct_slice_str("tagv"),
                                    oct_slice("\0", 1), oct_slice_str("id"), oct_slice_str("tagv"),
                                    &res, &eb),
                     1);
    assert_int_equal(res.cells[0].value.len, 8);
    assert_memory_equal(res.cells[0].value.ptr, "\0\0\0\0\0\0\0\2", 8);
    store_result_reset(&res);
    assert_int_equal(store_get_cell(fx->st, STORE_TABLE_UID, oct_slice_str("tagv"),
                                    oct_slice("\0\0\2", 3), oct_slice_str("name"),
                                    oct_slice_str("tagv"), &res, &eb),
                     1);
    assert_int_equal(res.cells[0].value.len, 5);
    assert_memory_equal(res.cells[0].value.ptr, "web02", 5);
    store_result_reset(&res);
    assert_int_equal(store_get_cell(fx->st, STORE_TABLE_UID, oct_slice_str("metrics"),
                                    oct_slice_str("sys.cpu.0"), oct_slice_str("id"),
                                    oct_slice_str("metrics"), &res, &eb),
                     1);
    assert_memory_equal(res.cells[0].value.ptr, "\0\0\1", 3);
    store_result_free(&res);

    uint8_t name[64];
    size_t len;
    uid_drop_caches(fx->r);
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_TAGV, 2, name, sizeof name, &len, &eb), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(name, "web02", 5);
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_TAGV, 3, name, sizeof name, &len, &eb),
                     OCT_ENOSUCHID);
    assert_string_equal(eb.msg, "No such unique ID for 'tagv': [0, 0, 3]");
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_TAGV, 2, name, 3, &len, &eb), OCT_ENOSPC);
    assert_int_equal(len, 5);
}

static void unknown_metric_rejected_without_auto_create(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(uid_resolve_for_write(fx->r, CODEC_UID_METRIC, S("new.metric"), &id, &eb),
                     OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'metrics': 'new.metric'");
    /* tag keys and values are auto-created by default */
    assert_int_equal(uid_resolve_for_write(fx->r, CODEC_UID_TAGK, S("dc"), &id, &eb), 0);
    assert_int_equal(id, 1);
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_METRIC, S("new.metric"), &id, &eb),
                     OCT_ENOSUCHNAME);

    fx_close(fx);
    uid_options_t o;
    uid_options_default(&o);
    o.auto_create[CODEC_UID_METRIC] = 1;
    fx_open(fx, &o);
    assert_int_equal(uid_resolve_for_write(fx->r, CODEC_UID_METRIC, S("new.metric"), &id, &eb), 0);
    assert_int_equal(id, 1);
}

static void invalid_names_get_opentsdb_errors(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t id;
    int created = 7;
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_METRIC, S("bad name"), &id, &created, &eb),
                     OCT_EBADNAME);
    assert_string_equal(eb.msg, "Invalid metric name (\"bad name\"): illegal character:  ");
    assert_int_equal(created, 0);
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S(""), &id, NULL, &eb), OCT_EBADNAME);
    /* nothing was written: the counter is still absent */
    uint64_t c = 99;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_METRIC, &c, &eb), 0);
    assert_int_equal(c, 0);
}

static void width_one_exhausts_after_255(void **state)
{
    fx_t *fx = *state;
    fx_close(fx);
    uid_options_t o;
    uid_options_default(&o);
    o.width[CODEC_UID_TAGV] = 1;
    fx_open(fx, &o);
    char name[32];
    for (int i = 1; i <= 255; i++) {
        snprintf(name, sizeof name, "v%03d", i);
        assert_int_equal(must_create(fx->r, CODEC_UID_TAGV, name), i);
    }
    oct_errbuf_t eb;
    uint64_t id;
    assert_int_equal(uid_get_or_create(fx->r, CODEC_UID_TAGV, S("one.too.many"), &id, NULL, &eb),
                     OCT_EEXHAUSTED);
    assert_string_equal(eb.msg, "All Unique IDs for tagv on 1 bytes are already assigned!");
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    assert_int_equal(c, 255);
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_TAGV, S("one.too.many"), &id, &eb),
                     OCT_ENOSUCHNAME);
    /* existing names still resolve, other kinds are independent */
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGV, "v200"), 200);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGK, "k"), 1);
}

#define RACE_THREADS 16
#define RACE_NAMES   10000

typedef struct {
    uid_registry_t *r;
    int seed;
    uint64_t *ids; /* RACE_NAMES */
    int failures;
} race_arg_t;

static void *race_worker(void *p)
{
    race_arg_t *a = p;
    char name[32];
    /* each thread walks the names in its own order */
    for (int j = 0; j < RACE_NAMES; j++) {
        int i = (int)(((long long)j * 7919 + a->seed * 104729LL) % RACE_NAMES);
        snprintf(name, sizeof name, "race.name.%05d", i);
        oct_errbuf_t eb;
        if (uid_get_or_create(a->r, CODEC_UID_TAGV, S(name), &a->ids[i], NULL, &eb)) a->failures++;
    }
    return NULL;
}

static int collect_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    uint64_t *seen = ctx; /* seen[0] = count, then id per name index */
    (void)len;
    int i = atoi((const char *)name + strlen("race.name."));
    seen[1 + i] = id;
    seen[0]++;
    return 0;
}

static void racing_writers_get_one_uid_per_name(void **state)
{
    fx_t *fx = *state;
    pthread_t th[RACE_THREADS];
    race_arg_t args[RACE_THREADS];
    for (int t = 0; t < RACE_THREADS; t++) {
        args[t] = (race_arg_t){fx->r, t + 1, calloc(RACE_NAMES, sizeof(uint64_t)), 0};
        assert_int_equal(pthread_create(&th[t], NULL, race_worker, &args[t]), 0);
    }
    for (int t = 0; t < RACE_THREADS; t++)
        pthread_join(th[t], NULL);

    /* every thread saw the same UID for every name, and UIDs are 1..N
     * exactly once: nothing leaked, nothing doubled */
    char *used = calloc(RACE_NAMES + 1, 1);
    for (int i = 0; i < RACE_NAMES; i++) {
        uint64_t id = args[0].ids[i];
        assert_true(id >= 1 && id <= RACE_NAMES);
        assert_int_equal(used[id], 0);
        used[id] = 1;
        for (int t = 1; t < RACE_THREADS; t++)
            assert_int_equal(args[t].ids[i], id);
    }
    for (int t = 0; t < RACE_THREADS; t++) {
        assert_int_equal(args[t].failures, 0);
        free(args[t].ids);
    }
    free(used);
    oct_errbuf_t eb;
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    assert_int_equal(c, RACE_NAMES);

    /* forward and reverse agree in the store itself, not just the cache */
    uid_drop_caches(fx->r);
    uint64_t *seen = calloc(RACE_NAMES + 1, sizeof(uint64_t));
    assert_int_equal(uid_foreach(fx->r, CODEC_UID_TAGV, collect_cb, seen, &eb), 0);
    assert_int_equal(seen[0], RACE_NAMES);
    for (int i = 0; i < RACE_NAMES; i += 97) {
        uint8_t name[64];
        size_t len;
        char want[32];
        snprintf(want, sizeof want, "race.name.%05d", i);
        assert_int_equal(
            uid_get_name(fx->r, CODEC_UID_TAGV, seen[1 + i], name, sizeof name, &len, &eb), 0);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(name, want, len);
    }
    free(seen);
    uid_fsck_stats_t st;
    uid_fsck_opts_t fo = {0};
    assert_int_equal(uid_fsck(fx->r, &fo, NULL, NULL, &st, &eb), 0);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.cells, 2 * RACE_NAMES + 1);
}

static void rename_moves_name_keeps_uid(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t a = must_create(fx->r, CODEC_UID_METRIC, "old.name");
    uint64_t b = must_create(fx->r, CODEC_UID_METRIC, "taken.name");
    assert_int_equal(uid_rename(fx->r, CODEC_UID_METRIC, S("old.name"), S("new.name"), &eb), 0);
    for (int pass = 0; pass < 2; pass++) { /* through the cache, then the store */
        uint64_t id;
        assert_int_equal(uid_get_id(fx->r, CODEC_UID_METRIC, S("new.name"), &id, &eb), 0);
        assert_int_equal(id, a);
        assert_int_equal(uid_get_id(fx->r, CODEC_UID_METRIC, S("old.name"), &id, &eb),
                         OCT_ENOSUCHNAME);
        uint8_t name[64];
        size_t len;
        assert_int_equal(uid_get_name(fx->r, CODEC_UID_METRIC, a, name, sizeof name, &len, &eb), 0);
        assert_int_equal(len, 8);
        assert_memory_equal(name, "new.name", 8);
        uid_drop_caches(fx->r);
    }
    assert_int_equal(uid_rename(fx->r, CODEC_UID_METRIC, S("new.name"), S("taken.name"), &eb),
                     OCT_EEXISTS);
    assert_non_null(strstr(eb.msg, "taken.name"));
    assert_non_null(strstr(eb.msg, "[0, 0, 2]"));
    assert_int_equal(uid_rename(fx->r, CODEC_UID_METRIC, S("missing"), S("x.y"), &eb),
                     OCT_ENOSUCHNAME);
    assert_string_equal(eb.msg, "No such name for 'metrics': 'missing'");
    /* the old name is free again and gets a fresh UID */
    assert_int_equal(must_create(fx->r, CODEC_UID_METRIC, "old.name"), b + 1);
    uid_fsck_stats_t st;
    uid_fsck_opts_t fo = {0};
    assert_int_equal(uid_fsck(fx->r, &fo, NULL, NULL, &st, &eb), 0);
    assert_int_equal(st.errors, 0);
}

static void delete_removes_mapping_never_reuses_uid(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t a = must_create(fx->r, CODEC_UID_TAGK, "doomed");
    uid_meta_t m = {"Doomed", "a tag key", "", 1356998400, NULL};
    assert_int_equal(uid_meta_put(fx->r, CODEC_UID_TAGK, a, &m, &eb), 0);
    store_result_t res = STORE_RESULT_INIT;
    assert_int_equal(uid_meta_get_json(fx->r, CODEC_UID_TAGK, a, &res, &eb), 1);
    const char *want = "{\"type\":\"TAGK\",\"displayName\":\"Doomed\",\"description\":\"a tag "
                       "key\",\"notes\":\"\",\"created\":1356998400,\"custom\":null}";
    assert_int_equal(res.cells[0].value.len, strlen(want));
    assert_memory_equal(res.cells[0].value.ptr, want, strlen(want));
    store_result_reset(&res);

    assert_int_equal(uid_delete(fx->r, CODEC_UID_TAGK, S("doomed"), &eb), 0);
    uint64_t id;
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_TAGK, S("doomed"), &id, &eb), OCT_ENOSUCHNAME);
    uint8_t name[16];
    size_t len;
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_TAGK, a, name, sizeof name, &len, &eb),
                     OCT_ENOSUCHID);
    assert_int_equal(uid_meta_get_json(fx->r, CODEC_UID_TAGK, a, &res, &eb), 0);
    store_result_free(&res);
    assert_int_equal(uid_delete(fx->r, CODEC_UID_TAGK, S("doomed"), &eb), OCT_ENOSUCHNAME);
    assert_int_equal(must_create(fx->r, CODEC_UID_TAGK, "doomed"), a + 1);
}

/* uid_meta_get hands back the cell uid_meta_put wrote; uid_meta_delete
 * removes it and nothing else (the mapping and another kind's meta stay). */
static void meta_get_and_delete(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    uint64_t k = must_create(fx->r, CODEC_UID_TAGK, "kept");
    uint64_t m = must_create(fx->r, CODEC_UID_METRIC, "kept");
    char *json;
    size_t len;
    assert_int_equal(uid_meta_get(fx->r, CODEC_UID_TAGK, k, &json, &len, &eb), 0);
    assert_null(json);
    uid_meta_t meta = {"K", "", "n", 1356998400, "{\"a\":\"b\"}"};
    assert_int_equal(uid_meta_put(fx->r, CODEC_UID_TAGK, k, &meta, &eb), 0);
    assert_int_equal(uid_meta_put(fx->r, CODEC_UID_METRIC, m, &meta, &eb), 0);
    assert_int_equal(uid_meta_get(fx->r, CODEC_UID_TAGK, k, &json, &len, &eb), 1);
    const char *want = "{\"type\":\"TAGK\",\"displayName\":\"K\",\"description\":\"\","
                       "\"notes\":\"n\",\"created\":1356998400,\"custom\":{\"a\":\"b\"}}";
    assert_int_equal(len, strlen(want));
    assert_string_equal(json, want);
    free(json);

    assert_int_equal(uid_meta_delete(fx->r, CODEC_UID_TAGK, k, &eb), 0);
    assert_int_equal(uid_meta_get(fx->r, CODEC_UID_TAGK, k, &json, &len, &eb), 0);
    assert_null(json);
    assert_int_equal(len, 0);
    assert_int_equal(uid_meta_delete(fx->r, CODEC_UID_TAGK, k, &eb), 0); /* again: fine */
    uint64_t id;
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_TAGK, S("kept"), &id, &eb), 0);
    assert_int_equal(id, k);
    assert_int_equal(uid_meta_get(fx->r, CODEC_UID_METRIC, m, &json, &len, &eb), 1);
    assert_non_null(strstr(json, "\"type\":\"METRIC\""));
    free(json);
}

typedef struct {
    char names[32][64];
    int n;
} names_t;

static int names_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    names_t *ns = ctx;
    (void)id;
    snprintf(ns->names[ns->n++], 64, "%.*s", (int)len, (const char *)name);
    return 0;
}

static void suggest_is_prefix_ordered_and_bounded(void **state)
{
    fx_t *fx = *state;
    const char *all[] = {"sys.cpu.user", "sys.cpu.idle", "sys.disk.read", "sysx",
                         "app.req",      "sys.cpu.0",    "édition"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        must_create(fx->r, CODEC_UID_TAGV, all[i]);
    oct_errbuf_t eb;
    names_t ns = {0};
    assert_int_equal(uid_suggest(fx->r, CODEC_UID_TAGV, S("sys.cpu"), 25, names_cb, &ns, &eb), 0);
    assert_int_equal(ns.n, 3);
    assert_string_equal(ns.names[0], "sys.cpu.0");
    assert_string_equal(ns.names[1], "sys.cpu.idle");
    assert_string_equal(ns.names[2], "sys.cpu.user");
    memset(&ns, 0, sizeof ns);
    assert_int_equal(uid_suggest(fx->r, CODEC_UID_TAGV, S("sys"), 2, names_cb, &ns, &eb), 0);
    assert_int_equal(ns.n, 2);
    assert_string_equal(ns.names[1], "sys.cpu.idle");
    memset(&ns, 0, sizeof ns);
    /* empty prefix: every name, non-ASCII ones included, never the counter */
    assert_int_equal(uid_suggest(fx->r, CODEC_UID_TAGV, S(""), 25, names_cb, &ns, &eb), 0);
    assert_int_equal(ns.n, 7);
    assert_string_equal(ns.names[0], "app.req");
    assert_string_equal(ns.names[6], "édition");
    assert_int_equal(uid_suggest(fx->r, CODEC_UID_TAGV, S("x"), 0, names_cb, &ns, &eb), OCT_EINVAL);
    assert_string_equal(eb.msg, "Count must be greater than 0");
    memset(&ns, 0, sizeof ns);
    assert_int_equal(uid_suggest(fx->r, CODEC_UID_METRIC, S("sys"), 25, names_cb, &ns, &eb), 0);
    assert_int_equal(ns.n, 0); /* kinds are separate */
}

/* The names uid_suggest gives, space-separated, in order. */
static const char *suggested(uid_registry_t *r, const char *prefix, size_t max)
{
    static char out[4096];
    names_t ns = {0};
    oct_errbuf_t eb;
    if (uid_suggest(r, CODEC_UID_TAGV, S(prefix), max, names_cb, &ns, &eb))
        fail_msg("suggest %s: %s", prefix, eb.msg);
    out[0] = '\0';
    for (int i = 0; i < ns.n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", ns.names[i]);
    return out;
}

/* Suggest answers from a list in memory: it must see what this registry and
 * another one on the same data set assign, rename and delete after the list
 * was first built, and never a leaked reverse cell. */
static void suggest_follows_assignments_renames_and_deletes(void **state)
{
    fx_t *fx = *state;
    uid_options_t o;
    uid_options_default(&o);
    uid_registry_t *r2;
    oct_errbuf_t eb;
    assert_int_equal(uid_registry_open(fx->st, &o, &r2, &eb), 0);
    must_create(fx->r, CODEC_UID_TAGV, "a1");
    must_create(fx->r, CODEC_UID_TAGV, "a2");
    assert_string_equal(suggested(r2, "a", 25), "a1 a2"); /* built */
    assert_string_equal(suggested(fx->r, "a", 25), "a1 a2");
    must_create(fx->r, CODEC_UID_TAGV, "a3");
    must_create(fx->r, CODEC_UID_TAGV, "a0");
    assert_string_equal(suggested(r2, "a", 25), "a0 a1 a2 a3");
    assert_string_equal(suggested(r2, "a", 2), "a0 a1");
    assert_string_equal(suggested(r2, "a2", 25), "a2");
    assert_string_equal(suggested(r2, "b", 25), "");
    must_create(r2, CODEC_UID_TAGV, "a4");
    assert_string_equal(suggested(fx->r, "a", 25), "a0 a1 a2 a3 a4");
    assert_int_equal(uid_rename(fx->r, CODEC_UID_TAGV, S("a1"), S("b1"), &eb), 0);
    assert_string_equal(suggested(r2, "", 25), "a0 a2 a3 a4 b1");
    assert_string_equal(suggested(fx->r, "", 25), "a0 a2 a3 a4 b1");
    assert_int_equal(uid_delete(r2, CODEC_UID_TAGV, S("a2"), &eb), 0);
    assert_string_equal(suggested(fx->r, "a", 25), "a0 a3 a4");
    assert_string_equal(suggested(r2, "a", 25), "a0 a3 a4");
    /* a reverse cell above the counter with no forward cell (OpenTSDB's
     * leak), then the counter raised past it: not a name */
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_TAGV, &c, &eb), 0);
    uint8_t idb[3] = {0, 0, (uint8_t)(c + 1)}, cb[8] = {0, 0, 0, 0, 0, 0, 0, (uint8_t)(c + 1)};
    raw_put(fx, "tagv", idb, 3, "name", "tagv", "a9", 2);
    raw_put(fx, "tagv", "\0", 1, "id", "tagv", cb, 8);
    must_create(fx->r, CODEC_UID_TAGV, "a5");
    assert_string_equal(suggested(r2, "a", 25), "a0 a3 a4 a5");
    assert_string_equal(suggested(fx->r, "a", 25), "a0 a3 a4 a5");
    uid_registry_close(r2);
}

/* Many names at once (more than a list adds one by one: it is rebuilt)
 * and a few more (added): every one, in byte order. */
static void suggest_after_a_batch_of_new_names(void **state)
{
    fx_t *fx = *state;
    enum { N = 6000 };
    static char text[N + 3][8];
    oct_slice_t names[N + 3];
    uint64_t ids[N + 3];
    oct_errbuf_t eb;
    must_create(fx->r, CODEC_UID_TAGV, "n");
    assert_string_equal(suggested(fx->r, "n", 25), "n");
    for (size_t i = 0; i < N + 3; i++) {
        /* in reverse: the UIDs' order is not the names' */
        snprintf(text[i], sizeof text[i], "n%05zu", N + 2 - i);
        names[i] = oct_slice_str(text[i]);
    }
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names, N, ids, &eb), 0);
    assert_string_equal(suggested(fx->r, "n", 3), "n n00003 n00004");
    assert_string_equal(suggested(fx->r, "n0599", 25),
                        "n05990 n05991 n05992 n05993 n05994 n05995 n05996 n05997 n05998 n05999");
    assert_string_equal(suggested(fx->r, "n0600", 25), "n06000 n06001 n06002");
    assert_int_equal(uid_resolve_batch_deferred(fx->r, CODEC_UID_TAGV, names + N, 3, ids + N, &eb),
                     0);
    assert_string_equal(suggested(fx->r, "n", 5), "n n00000 n00001 n00002 n00003");
}

static void opentsdb_leaked_reverse_rows_are_skipped(void **state)
{
    fx_t *fx = *state;
    /* OpenTSDB leaks reverse rows when TSDs race: UID 1 and 2 were taken
     * but their forward rows never written, and the counter says 1. */
    uint8_t one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    raw_put(fx, "metrics", "\0", 1, "id", "metrics", one, 8);
    raw_put(fx, "metrics", "\0\0\1", 3, "name", "metrics", "lost.a", 6);
    raw_put(fx, "metrics", "\0\0\2", 3, "name", "metrics", "lost.b", 6);
    assert_int_equal(must_create(fx->r, CODEC_UID_METRIC, "fresh"), 3);
    oct_errbuf_t eb;
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_METRIC, &c, &eb), 0);
    assert_int_equal(c, 3);
}

typedef struct {
    int by_problem[UID_FSCK_PROBLEM_COUNT];
} fsck_seen_t;

static void fsck_seen_cb(void *ctx, codec_uid_kind_t kind, uid_fsck_problem_t p, const char *msg)
{
    fsck_seen_t *s = ctx;
    (void)kind, (void)msg;
    s->by_problem[p]++;
}

static void fsck_finds_and_fixes_each_damage(void **state)
{
    fx_t *fx = *state;
    oct_errbuf_t eb;
    must_create(fx->r, CODEC_UID_METRIC, "m.ok");        /* 1 */
    must_create(fx->r, CODEC_UID_METRIC, "m.noreverse"); /* 2 */
    must_create(fx->r, CODEC_UID_METRIC, "m.twin1");     /* 3 */
    must_create(fx->r, CODEC_UID_METRIC, "m.mismatch");  /* 4 */
    /* forward without reverse */
    raw_del(fx, "metrics", "\0\0\2", 3, "name", "metrics");
    /* two names on one UID: m.twin2 -> 3 as well */
    raw_put(fx, "metrics", "m.twin2", 7, "id", "metrics", "\0\0\3", 3);
    /* reverse names a name that has no forward cell */
    raw_put(fx, "metrics", "\0\0\4", 3, "name", "metrics", "m.ghost", 7);
    /* reverse without forward, above the counter: counter behind too */
    raw_put(fx, "metrics", "\0\0\x09", 3, "name", "metrics", "m.orphan", 8);
    /* an unknown cell */
    raw_put(fx, "metrics", "m.ok", 4, "id", "bogus", "x", 1);
    /* a forward value of the wrong width (tagk partition) */
    raw_put(fx, "tagk", "k.short", 7, "id", "tagk", "\0\1", 2);

    fsck_seen_t seen = {0};
    uid_fsck_stats_t st;
    uid_fsck_opts_t fo = {0};
    assert_int_equal(uid_fsck(fx->r, &fo, fsck_seen_cb, &seen, &st, &eb), 0);
    assert_int_equal(seen.by_problem[UID_FSCK_FORWARD_NO_REVERSE], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_DUPLICATE_UID], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_REVERSE_MISMATCH], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_REVERSE_NO_FORWARD], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_COUNTER_BEHIND], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_UNKNOWN_QUALIFIER], 1);
    assert_int_equal(seen.by_problem[UID_FSCK_BAD_WIDTH], 1);
    assert_int_equal(st.errors, 7);
    assert_int_equal(st.fixed, 0);

    fo.fix = 1;
    fo.delete_unknown = 1;
    assert_int_equal(uid_fsck(fx->r, &fo, NULL, NULL, &st, &eb), 0);
    assert_int_equal(st.errors, 7);
    /* the bad-width cell is reported, not guessed at */
    assert_int_equal(st.fixed, 6);

    raw_del(fx, "tagk", "k.short", 7, "id", "tagk");
    memset(&seen, 0, sizeof seen);
    fo.fix = 0;
    assert_int_equal(uid_fsck(fx->r, &fo, fsck_seen_cb, &seen, &st, &eb), 0);
    assert_int_equal(st.errors, 0);

    uint64_t id, c;
    uint8_t name[64];
    size_t len;
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_METRIC, 2, name, sizeof name, &len, &eb), 0);
    assert_memory_equal(name, "m.noreverse", len);
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_METRIC, 4, name, sizeof name, &len, &eb), 0);
    assert_int_equal(len, 10);
    assert_memory_equal(name, "m.mismatch", len);
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_METRIC, S("fsck.m.twin1.m.twin2"), &id, &eb), 0);
    assert_int_equal(id, 3);
    assert_int_equal(uid_get_id(fx->r, CODEC_UID_METRIC, S("m.twin1"), &id, &eb), OCT_ENOSUCHNAME);
    assert_int_equal(uid_get_name(fx->r, CODEC_UID_METRIC, 9, name, sizeof name, &len, &eb),
                     OCT_ENOSUCHID);
    assert_int_equal(uid_counter(fx->r, CODEC_UID_METRIC, &c, &eb), 0);
    assert_int_equal(c, 9);
    assert_int_equal(must_create(fx->r, CODEC_UID_METRIC, "m.after"), 10);
}

static void random_metric_uids_are_distinct_and_in_range(void **state)
{
    fx_t *fx = *state;
    fx_close(fx);
    uid_options_t o;
    uid_options_default(&o);
    o.random_metrics = 1;
    o.width[CODEC_UID_METRIC] = 2;
    fx_open(fx, &o);
    uint64_t ids[200];
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "rnd.%d", i);
        ids[i] = must_create(fx->r, CODEC_UID_METRIC, name);
        assert_true(ids[i] >= 1 && ids[i] <= 0xFFFF);
        for (int j = 0; j < i; j++)
            assert_true(ids[j] != ids[i]);
    }
    oct_errbuf_t eb;
    uint64_t c;
    assert_int_equal(uid_counter(fx->r, CODEC_UID_METRIC, &c, &eb), 0);
    assert_int_equal(c, 0); /* random mode leaves the counter alone, as OpenTSDB */
    uid_fsck_stats_t st;
    uid_fsck_opts_t fo = {0};
    assert_int_equal(uid_fsck(fx->r, &fo, NULL, NULL, &st, &eb), 0);
    /* OpenTSDB's fsck would call a counter of 0 "behind"; random UIDs make
     * that expected, but we report it the same way */
    assert_int_equal(st.found[UID_FSCK_COUNTER_BEHIND], 1);
}

static void layout_guard_refuses_other_widths(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    tsdb_t *db;
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    tsdb_close(db);
    assert_int_equal(oct_config_set(cfg, "tsd.storage.uid.width.metric", "4", &eb), 0);
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), OCT_ELAYOUT);
    assert_non_null(strstr(eb.msg, "tsd.storage.uid.width.metric=3"));
    assert_non_null(strstr(eb.msg, "says 4"));
    assert_int_equal(oct_config_set(cfg, "tsd.storage.uid.width.metric", "3", &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.storage.salt.width", "1", &eb), 0);
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), OCT_ELAYOUT);
    assert_non_null(strstr(eb.msg, "tsd.storage.salt.width=0"));
    assert_int_equal(oct_config_set(cfg, "tsd.storage.salt.width", "0", &eb), 0);
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    tsdb_close(db);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(empty_store_assigns_one_per_kind, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(unknown_metric_rejected_without_auto_create, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(invalid_names_get_opentsdb_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(width_one_exhausts_after_255, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(racing_writers_get_one_uid_per_name, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(rename_moves_name_keeps_uid, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(delete_removes_mapping_never_reuses_uid, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(meta_get_and_delete, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(suggest_is_prefix_ordered_and_bounded, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(suggest_follows_assignments_renames_and_deletes, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(suggest_after_a_batch_of_new_names, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(opentsdb_leaked_reverse_rows_are_skipped, fx_setup,
                                        fx_teardown),
        cmocka_unit_test_setup_teardown(fsck_finds_and_fixes_each_damage, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(random_metric_uids_are_distinct_and_in_range, fx_setup,
                                        fx_teardown),
        cmocka_unit_test(layout_guard_refuses_other_widths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
