/* tsdb_fixture.h -- the fixture the query tests over the real store share:
 * a fresh data dir with a tsdb open on it (metrics auto-created), reached
 * through g_fx by the tests' put helpers, closed and removed by the teardown.
 *
 * Header-only: every test_*.c that includes it is its own program. Include after
 * cmocka. */
#ifndef OCT_TESTS_TSDB_FIXTURE_H
#define OCT_TESTS_TSDB_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "testutil.h"
#include "tsdb/tsdb.h"

typedef struct {
    char *dir; /* owned; removed by the teardown */
    tsdb_t *db;
} fx_t;

static fx_t *g_fx;

/* Opens a tsdb on a fresh temp dir and makes it g_fx (a failure fails the
 * test), with the config pairs kv[0] = kv[1], ... (NULL-terminated; NULL:
 * none) beside the fixture's own. */
static inline fx_t *tsdb_fx_open_kv(const char *const *kv)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    fx->dir = tu_tempdir();
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", fx->dir, &eb), 0);
    assert_int_equal(oct_config_set(cfg, "tsd.core.auto_create_metrics", "true", &eb), 0);
    for (size_t i = 0; kv && kv[i]; i += 2)
        assert_int_equal(oct_config_set(cfg, kv[i], kv[i + 1], &eb), 0);
    int rc = tsdb_open(cfg, 0, &fx->db, &eb);
    if (rc) fail_msg("tsdb_open: %s", eb.msg);
    oct_config_free(cfg);
    g_fx = fx;
    return fx;
}

/* Opens a tsdb on a fresh temp dir and makes it g_fx (a failure fails the test). */
static inline fx_t *tsdb_fx_open(void)
{
    return tsdb_fx_open_kv(NULL);
}

/* The UID of an existing name in g_fx (a failure fails the test). */
static inline uint64_t tsdb_fx_uid(codec_uid_kind_t kind, const char *name)
{
    uint64_t id;
    oct_errbuf_t eb;
    int rc = uid_get_id(tsdb_uids(g_fx->db), kind, (const uint8_t *)name, strlen(name), &id, &eb);
    if (rc) fail_msg("uid_get_id %s: %s", name, eb.msg);
    return id;
}

/* cmocka group teardown for a fixture left in *state by the setup. */
static inline int tsdb_fx_teardown(void **state)
{
    fx_t *fx = *state;
    tsdb_close(fx->db);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    g_fx = NULL;
    return 0;
}

#endif
