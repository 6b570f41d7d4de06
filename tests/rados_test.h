/* rados_test.h -- shared by the tests that need a Ceph cluster and run
 * several store handles on one RADOS namespace (test_store_watch_rados,
 * test_uid_watch_rados, test_multi_tsd_uid_rados): the cluster's config
 * (OCTSDB_TEST_STORE_RADOS, the file scripts/ceph-cluster.sh writes; without
 * it the program exits 77, which ctest shows as skipped), a namespace of the
 * test's own, and a store opened on it. Include after cmocka.h and
 * testutil.h. */
#ifndef OCT_TESTS_RADOS_TEST_H
#define OCT_TESTS_RADOS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "store/store.h"

/* The cluster's config file; exits 77 (skipped) when there is none. */
static inline const char *rt_cfg_path_or_skip(void)
{
    const char *p = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!p || !*p) {
        printf("[  SKIPPED ] OCTSDB_TEST_STORE_RADOS is not set (needs a Ceph cluster)\n");
        exit(77);
    }
    return p;
}

/* A fresh namespace name "<tag>-<pid>-<ms>" into ns. */
static inline void rt_namespace(const char *tag, char *ns, size_t cap)
{
    snprintf(ns, cap, "%s-%d-%lld", tag, (int)getpid(), (long long)oct_clock_wall_ms());
}

/* The cluster's config with tsd.storage.rados.namespace = ns (if not NULL). */
static inline oct_config_t *rt_config(const char *path, const char *ns)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    if (oct_config_load_file(cfg, path, &eb)) fail_msg("%s: %s", path, eb.msg);
    if (ns && oct_config_set(cfg, "tsd.storage.rados.namespace", ns, &eb)) fail_msg("%s", eb.msg);
    return cfg;
}

/* A rados store in dir with cfg; fails the test if it does not open. */
static inline store_t *rt_open(const char *dir, const oct_config_t *cfg, int read_only)
{
    oct_errbuf_t eb;
    store_options_t o;
    memset(&o, 0, sizeof o);
    o.dir = dir;
    o.backend = "rados";
    o.cfg = cfg;
    o.read_only = read_only;
    store_t *st = NULL;
    if (store_open(&o, &st, &eb)) fail_msg("store_open %s: %s", dir, eb.msg);
    return st;
}

#endif
