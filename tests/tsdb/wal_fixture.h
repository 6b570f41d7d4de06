/* wal_fixture.h -- what the write-ahead log tests share (test_wal_waiters,
 * test_wal_faults): a log in a fresh temp dir, records that check
 * themselves (a SERIES record whose id is its number and whose payload is
 * derived from it), and a replay that counts each record seen and every
 * byte that is not what was appended.
 *
 * Header-only, as cli_fixture.h: each test is its own program. */
#ifndef OCT_TESTS_TSDB_WAL_FIXTURE_H
#define OCT_TESTS_TSDB_WAL_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tsdb/wal.h"

#define WAL_FX_PAYLOAD_MAX 200
#define WAL_FX_REC_MAX     (TSDB_WAL_REC_HDR + 16 + WAL_FX_PAYLOAD_MAX)

typedef struct {
    char *dir;       /* the temp dir (malloc'd) */
    char wdir[4200]; /* its wal/ */
    tsdb_wal_opts_t o;
    unsigned *seen; /* per id: times replayed (n_ids of them) */
    size_t n_ids;
    unsigned long bad; /* replayed records not as appended */
    size_t payload;    /* bytes per record's payload */
} wal_fx_t;

static inline void wal_fx_payload(const wal_fx_t *fx, uint64_t id, uint8_t *p)
{
    for (size_t i = 0; i < fx->payload; i++)
        p[i] = (uint8_t)(id * 131 + (uint64_t)i * 7 + 1);
}

/* Record id, sealed into rec (WAL_FX_REC_MAX bytes); returns its size. */
static inline size_t wal_fx_record(const wal_fx_t *fx, uint8_t *rec, uint64_t id)
{
    uint8_t *p = rec + TSDB_WAL_REC_HDR;
    p += codec_varint_put(p, id);
    *p++ = (uint8_t)fx->payload;
    wal_fx_payload(fx, id, p);
    p += fx->payload;
    return tsdb_wal_seal(rec, TSDB_WAL_T_SERIES, (size_t)(p - rec) - TSDB_WAL_REC_HDR);
}

/* A log in a fresh temp dir with this group-commit delay; n_ids records of
 * payload bytes (<= WAL_FX_PAYLOAD_MAX) expected. Fails the test if it
 * cannot open. */
static inline tsdb_wal_t *wal_fx_open(wal_fx_t *fx, unsigned flush_interval_ms, size_t n_ids,
                                      size_t payload)
{
    memset(fx, 0, sizeof *fx);
    fx->payload = payload;
    fx->dir = tu_tempdir();
    snprintf(fx->wdir, sizeof fx->wdir, "%s/wal", fx->dir);
    fx->o = (tsdb_wal_opts_t){
        .dir = fx->wdir, .flush_interval_ms = flush_interval_ms, .segment_bytes = 64u << 20};
    fx->seen = calloc(n_ids, sizeof *fx->seen);
    fx->n_ids = n_ids;
    tsdb_wal_t *w;
    oct_errbuf_t eb;
    if (tsdb_wal_open(&fx->o, NULL, NULL, &w, NULL, &eb)) fail_msg("open: %s", eb.msg);
    return w;
}

static inline int wal_fx_rp_series(void *ctx, uint64_t seg, uint64_t id, const uint8_t *tsuid,
                                   size_t len)
{
    wal_fx_t *fx = ctx;
    (void)seg;
    uint8_t want[WAL_FX_PAYLOAD_MAX];
    if (id >= fx->n_ids || len != fx->payload) {
        fx->bad++;
        return 0;
    }
    wal_fx_payload(fx, id, want);
    if (memcmp(want, tsuid, len) != 0) fx->bad++;
    fx->seen[id]++;
    return 0;
}

/* Reopens the closed log, replaying it into fx->seen / fx->bad, and
 * closes it for good (deleting it); rec gets the recovery figures. */
static inline void wal_fx_replay(wal_fx_t *fx, tsdb_wal_recovery_t *rec)
{
    tsdb_wal_replay_t rp = {NULL, wal_fx_rp_series, NULL, NULL};
    tsdb_wal_t *w;
    oct_errbuf_t eb;
    if (tsdb_wal_open(&fx->o, &rp, fx, &w, rec, &eb)) fail_msg("reopen: %s", eb.msg);
    tsdb_wal_close(w, 1);
}

static inline void wal_fx_free(wal_fx_t *fx)
{
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx->seen);
}

#endif
