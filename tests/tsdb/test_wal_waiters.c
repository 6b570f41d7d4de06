/* test_wal_waiters.c -- tsdb_wal_wait wakes each waiter when its own
 * records are written (synced), never before, with many waiters at
 * different positions, some giving up on a short timeout and waiting again.
 *
 * Design: the group-commit delay is 10 s, so a record reaches the file only
 * because a waiter asked for it (the wait times out at 5 s otherwise). The
 * log has one segment, whose size on disk is the log position (positions
 * count from the segment's first byte), so "written up to seq" is checked
 * against stat(2), independently of the log's own counters. Every record is
 * a SERIES record carrying its number (wal_fx_record); the replay after close must hold
 * each one exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "wal_fixture.h"

#define N_THR 8
#define N_PER 400

static char g_seg[4300]; /* the one segment file */

typedef struct {
    tsdb_wal_t *w;
    const wal_fx_t *fx;
    int t;
    unsigned long early, timeouts;
    char err[640];
} worker_t;

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) ? -1 : (long long)sb.st_size;
}

static void *worker(void *arg)
{
    worker_t *k = arg;
    oct_errbuf_t eb;
    for (int i = 0; i < N_PER && !k->err[0]; i++) {
        uint64_t id = (uint64_t)k->t * N_PER + (uint64_t)i;
        uint8_t rec[WAL_FX_REC_MAX];
        size_t n = wal_fx_record(k->fx, rec, id);
        uint64_t seg;
        if (tsdb_wal_lock(k->w, &seg, &eb)) {
            snprintf(k->err, sizeof k->err, "lock: %s", eb.msg);
            break;
        }
        tsdb_wal_append_locked(k->w, rec, n);
        uint64_t seq = tsdb_wal_unlock(k->w);
        int fsync = i % 7 == 0;
        /* Every third wait first tries with no time at all: it times out,
         * or finds its records already written, and waits again. */
        int rc = i % 3 == 0 ? tsdb_wal_wait(k->w, seq, fsync, 0, &eb) : OCT_EAGAIN;
        if (rc == OCT_EAGAIN) {
            if (i % 3 == 0) k->timeouts++;
            rc = tsdb_wal_wait(k->w, seq, fsync, 5000, &eb);
        }
        if (rc) {
            snprintf(k->err, sizeof k->err, "record %llu: wait %d: %s", (unsigned long long)id, rc,
                     eb.msg);
            break;
        }
        if (file_size(g_seg) < (long long)seq) k->early++;
    }
    return NULL;
}

static void each_waiter_wakes_when_its_records_are_written(void **state)
{
    (void)state;
    wal_fx_t fx;
    tsdb_wal_t *w = wal_fx_open(&fx, 10000, N_THR * N_PER, 40);
    snprintf(g_seg, sizeof g_seg, "%s/%016llx.wal", fx.wdir,
             (unsigned long long)tsdb_wal_current_segment(w));

    worker_t k[N_THR];
    pthread_t th[N_THR];
    memset(k, 0, sizeof k);
    for (int t = 0; t < N_THR; t++) {
        k[t].w = w;
        k[t].fx = &fx;
        k[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, worker, &k[t]), 0);
    }
    unsigned long early = 0, timeouts = 0;
    for (int t = 0; t < N_THR; t++) {
        pthread_join(th[t], NULL);
        if (k[t].err[0]) fail_msg("thread %d: %s", t, k[t].err);
        early += k[t].early;
        timeouts += k[t].timeouts;
    }
    uint64_t bytes, syncs;
    tsdb_wal_counters(w, &bytes, &syncs);
    tsdb_wal_close(w, 0);
    fprintf(stderr, "wal waiters: %d records, %llu syncs, %lu zero-time waits timed out\n",
            N_THR * N_PER, (unsigned long long)syncs, timeouts);
    assert_int_equal(early, 0);
    /* a sync waiter was answered: at least one fdatasync happened */
    assert_true(syncs >= 1);

    tsdb_wal_recovery_t rec;
    wal_fx_replay(&fx, &rec);
    assert_int_equal(fx.bad, 0);
    assert_int_equal(rec.torn_bytes, 0);
    for (unsigned i = 0; i < N_THR * N_PER; i++)
        if (fx.seen[i] != 1) fail_msg("record %u replayed %u times", i, fx.seen[i]);
    wal_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_waiter_wakes_when_its_records_are_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
