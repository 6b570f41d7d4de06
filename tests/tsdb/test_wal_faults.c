/* test_wal_faults.c -- the write-ahead log after a write error: the records
 * of the failed write are reported failed to their waiters (never
 * acknowledged), later appends go on in a fresh segment without a restart,
 * and a replay holds every acknowledged record exactly once, nothing that
 * was not appended, and cuts the torn record the failed write left.
 *
 * Design: RLIMIT_FSIZE (SIGXFSZ ignored) makes write(2) fail with EFBIG
 * once a file passes 48 KiB, which is what a full disk looks like to the
 * log: a short write, then an error. A fresh segment starts small, so the
 * log recovers by itself; with records of ~220 bytes a run crosses the
 * limit several times. Each record is a SERIES record whose id is its
 * number and whose payload is derived from it, so the replay can check
 * every byte against a model kept by the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "testutil.h"
#include "tsdb/wal.h"

#define N_REC    1500
#define PAYLOAD  200
#define FSIZE_KB 48

enum { NONE = 0, ACKED, FAILED, REFUSED };

static unsigned char g_state[N_REC];
static unsigned g_seen[N_REC];
static unsigned long g_bad;

static void payload_of(uint64_t id, uint8_t *p)
{
    for (int i = 0; i < PAYLOAD; i++)
        p[i] = (uint8_t)(id * 131 + (uint64_t)i * 7 + 1);
}

static int rp_series(void *ctx, uint64_t seg, uint64_t id, const uint8_t *tsuid, size_t len)
{
    (void)ctx, (void)seg;
    uint8_t want[PAYLOAD];
    if (id >= N_REC || len != PAYLOAD) {
        g_bad++;
        return 0;
    }
    payload_of(id, want);
    if (memcmp(want, tsuid, PAYLOAD) != 0) g_bad++;
    g_seen[id]++;
    return 0;
}

static size_t make_rec(uint8_t *rec, uint64_t id)
{
    uint8_t *p = rec + TSDB_WAL_REC_HDR;
    p += codec_varint_put(p, id);
    *p++ = PAYLOAD;
    payload_of(id, p);
    p += PAYLOAD;
    return tsdb_wal_seal(rec, TSDB_WAL_T_SERIES, (size_t)(p - rec) - TSDB_WAL_REC_HDR);
}

static void write_errors_fail_records_then_the_log_recovers(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    char wdir[4200];
    snprintf(wdir, sizeof wdir, "%s/wal", dir);
    tsdb_wal_opts_t o = {.dir = wdir, .flush_interval_ms = 1, .segment_bytes = 64u << 20};
    tsdb_wal_t *w;
    oct_errbuf_t eb;
    if (tsdb_wal_open(&o, NULL, NULL, &w, NULL, &eb)) fail_msg("open: %s", eb.msg);

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = FSIZE_KB * 1024;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

    unsigned long acked = 0, failed = 0, refused = 0, acked_after_failure = 0;
    for (uint64_t i = 0; i < N_REC; i++) {
        uint8_t rec[TSDB_WAL_REC_HDR + 16 + PAYLOAD];
        size_t n = make_rec(rec, i);
        uint64_t seg;
        if (tsdb_wal_lock(w, &seg, &eb)) {
            /* failing: refused at once, then retried by the thread */
            g_state[i] = REFUSED;
            refused++;
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        tsdb_wal_append_locked(w, rec, n);
        uint64_t seq = tsdb_wal_unlock(w);
        int rc = tsdb_wal_wait(w, seq, i % 50 == 0, 10000, &eb);
        if (rc == 0) {
            g_state[i] = ACKED;
            acked++;
            if (failed) acked_after_failure++;
        } else {
            if (rc != OCT_EIO) fail_msg("record %lu: wait %d (%s)", (unsigned long)i, rc, eb.msg);
            if (!strstr(eb.msg, "File too large")) fail_msg("error text: %s", eb.msg);
            g_state[i] = FAILED;
            failed++;
        }
    }
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    tsdb_wal_close(w, 0);
    fprintf(stderr, "wal faults: %lu acknowledged (%lu after a failure), %lu failed, %lu refused\n",
            acked, acked_after_failure, failed, refused);
    /* N_REC * ~215 bytes = ~320 KiB: the 48 KiB limit is crossed several times */
    assert_true(failed >= 3);
    assert_true(acked_after_failure > N_REC / 2);

    tsdb_wal_replay_t rp = {NULL, rp_series, NULL, NULL};
    tsdb_wal_recovery_t rec;
    if (tsdb_wal_open(&o, &rp, NULL, &w, &rec, &eb)) fail_msg("reopen: %s", eb.msg);
    tsdb_wal_close(w, 1);
    unsigned long failed_present = 0;
    for (unsigned i = 0; i < N_REC; i++) {
        if (g_state[i] == ACKED && g_seen[i] != 1)
            fail_msg("acknowledged record %u replayed %u times", i, g_seen[i]);
        if (g_state[i] == REFUSED && g_seen[i]) fail_msg("refused record %u replayed", i);
        if (g_state[i] == FAILED && g_seen[i] > 1) fail_msg("failed record %u replayed twice", i);
        failed_present += g_state[i] == FAILED && g_seen[i];
    }
    assert_int_equal(g_bad, 0);
    /* each failed write left a short record at the end of its segment */
    assert_true(rec.torn_bytes > 0);
    assert_int_equal(rec.bad_segments, 0);
    fprintf(stderr,
            "wal faults: replay %llu segments, %llu records, %llu torn bytes cut; %lu of %lu "
            "failed records present\n",
            (unsigned long long)rec.segments, (unsigned long long)rec.records,
            (unsigned long long)rec.torn_bytes, failed_present, failed);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_errors_fail_records_then_the_log_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
