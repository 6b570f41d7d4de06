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
#include "wal_fixture.h"

#define N_REC    1500
#define FSIZE_KB 48

enum { NONE = 0, ACKED, FAILED, REFUSED };

static unsigned char g_state[N_REC];

static void write_errors_fail_records_then_the_log_recovers(void **state)
{
    (void)state;
    wal_fx_t fx;
    tsdb_wal_t *w = wal_fx_open(&fx, 1, N_REC, 200);
    oct_errbuf_t eb;

    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = FSIZE_KB * 1024;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

    unsigned long acked = 0, failed = 0, refused = 0, acked_after_failure = 0;
    for (uint64_t i = 0; i < N_REC; i++) {
        uint8_t rec[WAL_FX_REC_MAX];
        size_t n = wal_fx_record(&fx, rec, i);
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

    tsdb_wal_recovery_t rec;
    wal_fx_replay(&fx, &rec);
    unsigned *g_seen = fx.seen;
    unsigned long failed_present = 0;
    for (unsigned i = 0; i < N_REC; i++) {
        if (g_state[i] == ACKED && g_seen[i] != 1)
            fail_msg("acknowledged record %u replayed %u times", i, g_seen[i]);
        if (g_state[i] == REFUSED && g_seen[i]) fail_msg("refused record %u replayed", i);
        if (g_state[i] == FAILED && g_seen[i] > 1) fail_msg("failed record %u replayed twice", i);
        failed_present += g_state[i] == FAILED && g_seen[i];
    }
    assert_int_equal(fx.bad, 0);
    /* each failed write left a short record at the end of its segment */
    assert_true(rec.torn_bytes > 0);
    assert_int_equal(rec.bad_segments, 0);
    fprintf(stderr,
            "wal faults: replay %llu segments, %llu records, %llu torn bytes cut; %lu of %lu "
            "failed records present\n",
            (unsigned long long)rec.segments, (unsigned long long)rec.records,
            (unsigned long long)rec.torn_bytes, failed_present, failed);
    wal_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(write_errors_fail_records_then_the_log_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
