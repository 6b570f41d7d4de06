/* api_client.h -- helpers for the HTTP API e2e tests (test_api_*.c): one
 * request against the real daemon, and reading points back from a stopped
 * daemon's data dir through the tsdb API. Include after cmocka.h and
 * testutil.h. */
#ifndef OCT_TESTS_E2E_API_CLIENT_H
#define OCT_TESTS_E2E_API_CLIENT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/json.h"
#include "tsdb/tsdb.h"
#include "tsdb/read.h"
#include "tsdb/write.h"

/* One request; returns the status and the body in *resp (malloc'd, "" if
 * none; free it). */
static inline int ac_req(const tu_tsd_t *t, const char *method, const char *target,
                         const char *body, char **resp)
{
    char *r = NULL;
    int st = tu_http(t->port, method, target, body ? "Content-Type: application/json\r\n" : NULL,
                     body, body ? strlen(body) : 0, &r, NULL);
    if (!r) r = calloc(1, 1);
    *resp = r;
    return st;
}

/* GET target, which must answer 200 with JSON: the parsed value (in a), the text in *keep
 * (free it after the last use of the value). */
static inline json_value_t *ac_get_json(const tu_tsd_t *t, const char *target, json_arena_t *a,
                                        char **keep)
{
    char *r;
    int st = ac_req(t, "GET", target, NULL, &r);
    if (st != 200) fail_msg("GET %s: %d %s", target, st, r);
    json_value_t *v;
    oct_errbuf_t eb;
    if (json_parse(a, r, strlen(r), 0, &v, &eb))
        fail_msg("GET %s: bad JSON %s: %s", target, eb.msg, r);
    *keep = r;
    return v;
}

/* One request that must answer want_status; returns the body (free it). */
static inline char *ac_req_ok(const tu_tsd_t *t, const char *method, const char *target,
                              const char *body, int want_status)
{
    char *r;
    int st = ac_req(t, method, target, body, &r);
    if (st != want_status)
        fail_msg("%s %s: got %d <%s>, want %d", method, target, st, r, want_status);
    return r;
}

/* Asserts status and exact body. */
#define AC_EXPECT(t, method, target, body, want_status, want_body)                                 \
    do {                                                                                           \
        char *ac_r_;                                                                               \
        int ac_s_ = ac_req((t), (method), (target), (body), &ac_r_);                               \
        if (ac_s_ != (want_status) || strcmp(ac_r_, (want_body)) != 0)                             \
            fail_msg("%s %s: got %d <%s>, want %d <%s>", (method), (target), ac_s_, ac_r_,         \
                     (want_status), (want_body));                                                  \
        free(ac_r_);                                                                               \
    } while (0)

/* Starts a daemon (tu_tsd_start with extra args) into a zeroed *t and puts
 * body through POST /api/put; 0 if the put answered 204, -1 otherwise. For
 * group setups, which report failure by returning non-zero. */
static inline int ac_start_put(tu_tsd_t *t, const char *const *extra, const char *body)
{
    memset(t, 0, sizeof *t);
    if (tu_tsd_start(t, extra)) return -1;
    char *r;
    int st = ac_req(t, "POST", "/api/put", body, &r);
    free(r);
    return st == 204 ? 0 : -1;
}

/* Opens a stopped daemon's data dir. */
static inline tsdb_t *ac_open_dir(const char *dir)
{
    oct_config_t *cfg = oct_config_new();
    oct_errbuf_t eb;
    if (oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb)) fail_msg("config: %s", eb.msg);
    tsdb_t *db = NULL;
    int rc = tsdb_open(cfg, 0, &db, &eb);
    oct_config_free(cfg);
    if (rc) fail_msg("tsdb_open %s: %s", dir, eb.msg);
    return db;
}

/* The TSUID of metric + tags ("k=v" strings), widths from the layout, pairs
 * sorted by tagk UID bytes. Returns its length, or -1 if a name is unknown. */
static inline int ac_tsuid(tsdb_t *db, const char *metric, const char *const *tags, size_t n,
                           uint8_t *out)
{
    uid_registry_t *u = tsdb_uids(db);
    const tsdb_layout_t *l = tsdb_layout(db);
    unsigned mw = l->uid_width[0], kw = l->uid_width[1], vw = l->uid_width[2];
    oct_errbuf_t eb;
    uint64_t id;
    if (uid_get_id(u, CODEC_UID_METRIC, (const uint8_t *)metric, strlen(metric), &id, &eb))
        return -1;
    oct_put_be_n(out, id, mw);
    uint8_t pairs[16][16];
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(tags[i], '=');
        uint64_t k, v;
        if (uid_get_id(u, CODEC_UID_TAGK, (const uint8_t *)tags[i], (size_t)(eq - tags[i]), &k,
                       &eb) ||
            uid_get_id(u, CODEC_UID_TAGV, (const uint8_t *)eq + 1, strlen(eq + 1), &v, &eb))
            return -1;
        oct_put_be_n(pairs[i], k, kw);
        oct_put_be_n(pairs[i] + kw, v, vw);
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && memcmp(pairs[j - 1], pairs[j], kw) > 0; j--) {
            uint8_t tmp[16];
            memcpy(tmp, pairs[j], 16);
            memcpy(pairs[j], pairs[j - 1], 16);
            memcpy(pairs[j - 1], tmp, 16);
        }
    for (size_t i = 0; i < n; i++)
        memcpy(out + mw + i * (kw + vw), pairs[i], kw + vw);
    return (int)(mw + n * (kw + vw));
}

/* Points of one series in 2012-12-31..2013-01-02 (the tests' data); *n their count (-1 if the
 * series is unknown). Free *pts. */
static inline void ac_read(tsdb_t *db, const char *metric, const char *const *tags, size_t nt,
                           codec_point_t **pts, long *n)
{
    uint8_t tsuid[256];
    int tl = ac_tsuid(db, metric, tags, nt, tsuid);
    *pts = NULL;
    if (tl < 0) {
        *n = -1;
        return;
    }
    size_t cnt = 0;
    oct_errbuf_t eb;
    if (tsdb_read_series(db, tsuid, (size_t)tl, 1356912000000LL, 1357084800000LL, pts, &cnt, &eb))
        fail_msg("read %s: %s", metric, eb.msg);
    *n = (long)cnt;
}

#endif
