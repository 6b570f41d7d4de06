/* test_crash_loop.c -- crash consistency: a mixed load against the real
 * daemon is cut by SIGKILL at seeded random moments, 20 times in a row, and
 * after every restart the data dir must hold every acknowledged point exactly
 * once and nothing that was never sent.
 *
 * Design: two writer threads each alternate a telnet chunk (puts, then
 * `version` so the chunk is known taken) and an /api/put?sync=true batch, and
 * a third thread runs /api/query calls. Series keep appearing (new metrics and
 * tag values), so UID assignment is cut by the kill too. Every point is
 * (series s, index j) at BASE_TS + 10 s * j with the integer value val(s, j),
 * so any stored point can be checked against what was sent without keeping
 * values. A point is "acknowledged" when its sync batch answered 204; a telnet
 * chunk has no answer of its own, so it counts as acknowledged once a sync
 * batch sent after its `version` reply answered 204 (the sync write waits for
 * the log up to its own sequence number, which is after the chunk's). After
 * the kill the daemon restarts on the same dir (recovery), stops cleanly, and
 * the dir is read through tsdb_open + tsdb_read_series: acknowledged points
 * present exactly once, every present point one that was sent with its exact
 * value, `octsdb uid fsck` and `octsdb fsck --full-scan` clean, and the UID
 * counters never lower than after the previous cycle. A point seen once is
 * treated as acknowledged from then on (it must never disappear). The seed is
 * OCT_CRASH_SEED (default fixed) and is printed so a failure can be replayed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "api_client.h"

#define BASE_TS    1356998400LL /* 2013-01-01T00:00:00Z */
#define STEP_S     10           /* seconds between a series' points: 8192 points = 22.8 hours */
#define CYCLES     20
#define WRITERS    2
#define MAX_SERIES 48 /* per writer and protocol */
#define MAX_J      8192
#define TEL_CHUNK  24
#define SYNC_BATCH 12

enum { ST_UNSENT = 0, ST_SENT = 1, ST_ACKED = 2 };
enum { P_SYNC = 0, P_TEL = 1 };

typedef struct {
    int next; /* points 0..next-1 were sent (or are in flight) */
    uint8_t st[MAX_J];
} series_t;

/* Test-wide model: survives the cycles. */
static series_t g_series[WRITERS][2][MAX_SERIES];
static int g_nseries[WRITERS][2];

static long long val_of(int w, int p, int s, int j)
{
    return ((long long)((w * 2 + p) * MAX_SERIES + s)) * 100000 + j;
}

static void metric_of(int p, int s, char *out, size_t cap)
{
    snprintf(out, cap, "crash.%s.%d", p == P_SYNC ? "sync" : "tel", s % 6);
}

static void host_of(int w, int s, char *out, size_t cap)
{
    snprintf(out, cap, "host=w%ds%d", w, s);
}

static atomic_long g_sync_acks; /* sync batches acknowledged in this cycle */
static atomic_int g_killing;    /* the kill is under way: writers' errors are expected */

typedef struct {
    int port, w;
    unsigned seed;
    atomic_int *stop;
    long sync_acked, tel_acked; /* figures */
} writer_t;

/* A series to write to: sometimes a new one, else a random existing one with room. */
static int pick_series(writer_t *wr, int p)
{
    int *n = &g_nseries[wr->w][p];
    if (*n < MAX_SERIES && (*n == 0 || rand_r(&wr->seed) % 5 == 0)) return (*n)++;
    for (int tries = 0; tries < 8; tries++) {
        int s = (int)(rand_r(&wr->seed) % (unsigned)*n);
        if (g_series[wr->w][p][s].next < MAX_J - SYNC_BATCH - TEL_CHUNK) return s;
    }
    return -1;
}

/* Reads until the `version` reply arrives, 10 s at most. Returns 0 if it
 * came and no error line ("put: ...") preceded it, -2 after an error line. */
static int await_version(int fd)
{
    char buf[8192];
    tu_recv_until(fd, buf, sizeof buf, TU_VERSION_HEAD, 10000);
    if (strstr(buf, "put:")) return -2;
    return strstr(buf, TU_VERSION_HEAD) ? 0 : -1;
}

typedef struct {
    int16_t s, j;
} ref_t;

/* A writer that gives up before the kill says why (a cycle without acks then
 * has its cause in the log). */
#define WRITER_STOPPED(wr, why)                                                                    \
    do {                                                                                           \
        if (!atomic_load(&g_killing)) fprintf(stderr, "writer %d: %s\n", (wr)->w, (why));          \
    } while (0)

static void *writer_main(void *arg)
{
    writer_t *wr = arg;
    int fd = tu_connect(wr->port);
    if (fd < 0) return NULL;
    char *buf = malloc(1 << 16);
    ref_t taken[4096]; /* telnet points taken, waiting for a sync ack */
    int ntaken = 0;
    while (!atomic_load(wr->stop)) {
        /* telnet chunk */
        ref_t chunk[TEL_CHUNK];
        int nc = 0;
        size_t len = 0;
        char metric[64], host[64];
        while (nc < TEL_CHUNK) {
            int s = pick_series(wr, P_TEL);
            if (s < 0) break;
            series_t *se = &g_series[wr->w][P_TEL][s];
            metric_of(P_TEL, s, metric, sizeof metric);
            host_of(wr->w, s, host, sizeof host);
            int k = 1 + (int)(rand_r(&wr->seed) % 8);
            for (int i = 0; i < k && nc < TEL_CHUNK; i++) {
                int j = se->next++;
                se->st[j] = ST_SENT;
                chunk[nc++] = (ref_t){(int16_t)s, (int16_t)j};
                len += (size_t)snprintf(buf + len, 4096, "put %s %lld %lld %s\n", metric,
                                        BASE_TS + (long long)j * STEP_S, val_of(wr->w, P_TEL, s, j),
                                        host);
            }
        }
        if (nc == 0) break; /* the model is full */
        len += (size_t)snprintf(buf + len, 64, "version\n");
        if (tu_send_all(fd, buf, len) < 0) {
            WRITER_STOPPED(wr, "telnet send failed");
            break;
        }
        int vr = await_version(fd);
        if (vr == -2) {
            fprintf(stderr, "telnet put rejected\n");
            break;
        }
        if (vr < 0) {
            WRITER_STOPPED(wr, "no telnet `version` reply");
            break;
        }
        if (ntaken + nc <= (int)(sizeof taken / sizeof taken[0])) {
            memcpy(taken + ntaken, chunk, (size_t)nc * sizeof chunk[0]);
            ntaken += nc;
        }

        /* sync batch */
        ref_t batch[SYNC_BATCH];
        int nb = 0;
        len = 0;
        buf[len++] = '[';
        while (nb < SYNC_BATCH) {
            int s = pick_series(wr, P_SYNC);
            if (s < 0) break;
            series_t *se = &g_series[wr->w][P_SYNC][s];
            metric_of(P_SYNC, s, metric, sizeof metric);
            int k = 1 + (int)(rand_r(&wr->seed) % 6);
            for (int i = 0; i < k && nb < SYNC_BATCH; i++) {
                int j = se->next++;
                se->st[j] = ST_SENT;
                batch[nb++] = (ref_t){(int16_t)s, (int16_t)j};
                len += (size_t)snprintf(buf + len, 4096,
                                        "%s{\"metric\":\"%s\",\"timestamp\":%lld,\"value\":%lld,"
                                        "\"tags\":{\"host\":\"w%ds%d\"}}",
                                        nb > 1 ? "," : "", metric, BASE_TS + (long long)j * STEP_S,
                                        val_of(wr->w, P_SYNC, s, j), wr->w, s);
            }
        }
        if (nb == 0) break;
        buf[len++] = ']';
        char *resp = NULL;
        int st = tu_http(wr->port, "POST", "/api/put?sync=true",
                         "Content-Type: application/json\r\n", buf, len, &resp, NULL);
        free(resp);
        if (st != 204) { /* killed under us (or a failure the checks will show) */
            if (!atomic_load(&g_killing))
                fprintf(stderr, "writer %d: sync put answered %d\n", wr->w, st);
            break;
        }
        for (int i = 0; i < nb; i++)
            g_series[wr->w][P_SYNC][batch[i].s].st[batch[i].j] = ST_ACKED;
        for (int i = 0; i < ntaken; i++)
            g_series[wr->w][P_TEL][taken[i].s].st[taken[i].j] = ST_ACKED;
        wr->sync_acked += nb;
        atomic_fetch_add(&g_sync_acks, 1);
        wr->tel_acked += ntaken;
        ntaken = 0;
        /* a short pause keeps the model from filling up before the 20th kill */
        struct timespec pause = {0, 2 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    free(buf);
    close(fd);
    return NULL;
}

typedef struct {
    int port;
    atomic_int *stop;
    long answered, bad;
} querier_t;

static void *query_main(void *arg)
{
    querier_t *q = arg;
    int i = 0;
    while (!atomic_load(q->stop)) {
        char target[256];
        snprintf(target, sizeof target,
                 "/api/query?start=1356998400&end=1357084800&m=sum:crash.%s.%d",
                 i % 2 ? "tel" : "sync", i % 6);
        i++;
        char *resp = NULL;
        int st = tu_http(q->port, "GET", target, NULL, NULL, 0, &resp, NULL);
        free(resp);
        if (st < 0) break;          /* killed */
        if (st == 200 || st == 400) /* 400: metric not created yet */
            q->answered++;
        else
            q->bad++;
    }
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Output line "NAME: N" of `octsdb fsck`, or -1. */
static long fsck_counter(const char *out, const char *name)
{
    char pat[128];
    snprintf(pat, sizeof pat, "%s: ", name);
    const char *p = strstr(out, pat);
    return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

typedef struct {
    long present, acked, unacked_present, unacked_lost;
} verify_t;

/* Checks the stopped daemon's dir against the model; see the file comment. */
static void verify_dir(const char *dir, int cycle, uint64_t counters[3], verify_t *v)
{
    tsdb_t *db = ac_open_dir(dir);
    for (int w = 0; w < WRITERS; w++)
        for (int p = 0; p < 2; p++)
            for (int s = 0; s < g_nseries[w][p]; s++) {
                series_t *se = &g_series[w][p][s];
                char metric[64], tag[64];
                metric_of(p, s, metric, sizeof metric);
                host_of(w, s, tag, sizeof tag);
                const char *tags[] = {tag};
                uint8_t tsuid[256];
                int tl = ac_tsuid(db, metric, tags, 1, tsuid);
                codec_point_t *pts = NULL;
                size_t n = 0;
                if (tl >= 0) {
                    oct_errbuf_t eb;
                    if (tsdb_read_series(db, tsuid, (size_t)tl, 0, INT64_MAX, &pts, &n, &eb))
                        fail_msg("cycle %d: read %s{%s}: %s", cycle, metric, tag, eb.msg);
                }
                uint8_t seen[MAX_J] = {0};
                for (size_t i = 0; i < n; i++) {
                    long long off = pts[i].ts_ms - BASE_TS * 1000;
                    long long j = off / (STEP_S * 1000);
                    if (off < 0 || off % (STEP_S * 1000) != 0 || j >= se->next ||
                        se->st[j] == ST_UNSENT)
                        fail_msg("cycle %d: %s{%s}: point at %lld ms was never sent", cycle, metric,
                                 tag, (long long)pts[i].ts_ms);
                    if (pts[i].is_float || pts[i].val.i != val_of(w, p, s, (int)j))
                        fail_msg("cycle %d: %s{%s} j=%lld: value %lld (float %d), sent %lld", cycle,
                                 metric, tag, j, (long long)pts[i].val.i, pts[i].is_float,
                                 val_of(w, p, s, (int)j));
                    if (seen[j]++)
                        fail_msg("cycle %d: %s{%s} j=%lld present twice", cycle, metric, tag, j);
                }
                free(pts);
                for (int j = 0; j < se->next; j++) {
                    if (se->st[j] == ST_ACKED && !seen[j])
                        fail_msg("cycle %d: %s{%s} j=%d acknowledged but lost", cycle, metric, tag,
                                 j);
                    if (se->st[j] == ST_SENT) {
                        if (seen[j]) {
                            v->unacked_present++;
                            se->st[j] = ST_ACKED; /* durable now: must stay */
                        } else {
                            v->unacked_lost++;
                        }
                    } else if (se->st[j] == ST_ACKED) {
                        v->acked++;
                    }
                }
                v->present += (long)n;
            }
    uid_registry_t *u = tsdb_uids(db);
    for (int k = 0; k < 3; k++) {
        uint64_t c;
        oct_errbuf_t eb;
        assert_int_equal(uid_counter(u, (codec_uid_kind_t)k, &c, &eb), 0);
        if (c < counters[k])
            fail_msg("cycle %d: UID counter %d went back from %llu to %llu", cycle, k,
                     (unsigned long long)counters[k], (unsigned long long)c);
        counters[k] = c;
    }
    tsdb_close(db);

    char flag[4200];
    snprintf(flag, sizeof flag, "--datadir=%s", dir);
    char *out = NULL;
    const char *ufsck[] = {"uid", flag, "fsck", NULL};
    int rc = tu_run_octsdb(&out, ufsck);
    if (rc != 0 || !out || !strstr(out, "No errors found."))
        fail_msg("cycle %d: uid fsck exit %d:\n%s", cycle, rc, out ? out : "");
    free(out);
    out = NULL;
    const char *fsck[] = {"fsck", flag, "--full-scan", NULL};
    rc = tu_run_octsdb(&out, fsck);
    if (rc != 0 || !out || fsck_counter(out, "Total Errors") != 0)
        fail_msg("cycle %d: fsck exit %d:\n%s", cycle, rc, out ? out : "");
    free(out);
}

static void twenty_kills_lose_nothing(void **state)
{
    (void)state;
    const char *env = getenv("OCT_CRASH_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 0) : 0x5eedu;
    fprintf(stderr, "crash loop seed %u (OCT_CRASH_SEED)\n", seed);
    tu_tsd_t t = {0};
    const char *extra[] = {"--auto-metric", NULL};
    uint64_t counters[3] = {0, 0, 0};
    verify_t v = {0};
    long sync_acked = 0, tel_acked = 0, queries = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        assert_int_equal(tu_tsd_start(&t, extra), 0);
        atomic_int stop = 0;
        atomic_store(&g_sync_acks, 0);
        atomic_store(&g_killing, 0);
        writer_t wr[WRITERS];
        pthread_t th[WRITERS + 1];
        for (int w = 0; w < WRITERS; w++) {
            wr[w] = (writer_t){.port = t.port,
                               .w = w,
                               .seed = seed * 31u + (unsigned)(cycle * 7 + w),
                               .stop = &stop};
            assert_int_equal(pthread_create(&th[w], NULL, writer_main, &wr[w]), 0);
        }
        querier_t q = {.port = t.port, .stop = &stop};
        assert_int_equal(pthread_create(&th[WRITERS], NULL, query_main, &q), 0);
        /* the load is running once a sync batch was acknowledged (a busy CI
         * box may take a while); then 0.2 .. 1.4 s more before the kill */
        /* (sanitized builds run the daemon 5-15x slower: give them a minute) */
        int wait_loops = getenv("OCT_SANITIZED") ? 6000 : 1000;
        for (int i = 0; i < wait_loops && atomic_load(&g_sync_acks) == 0; i++)
            sleep_ms(10);
        unsigned ks = seed + (unsigned)cycle * 1000003u;
        sleep_ms(200 + (long)(rand_r(&ks) % 1200));
        atomic_store(&g_killing, 1);
        tu_tsd_kill(&t);
        atomic_store(&stop, 1);
        for (int i = 0; i <= WRITERS; i++)
            pthread_join(th[i], NULL);
        for (int w = 0; w < WRITERS; w++) {
            sync_acked += wr[w].sync_acked;
            tel_acked += wr[w].tel_acked;
        }
        queries += q.answered;
        assert_int_equal(q.bad, 0);
        /* every cycle carried load: the kill cut a running write stream */
        if (wr[0].sync_acked + wr[1].sync_acked == 0) {
            tu_tsd_print_log(&t);
            fail_msg("cycle %d: no sync put was acknowledged", cycle);
        }

        /* restart (recovery after the kill), then a clean stop to read the dir */
        assert_int_equal(tu_tsd_start(&t, extra), 0);
        assert_int_equal(tu_tsd_stop(&t), 0);
        verify_dir(t.dir, cycle, counters, &v);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr,
            "crash loop: %d kills survived in %.1f s; acknowledged points sync %ld telnet %ld; "
            "queries answered %ld; unacknowledged points found stored %ld, absent %ld; "
            "points lost: 0; UID counters metrics %llu tagk %llu tagv %llu\n",
            CYCLES, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
            sync_acked, tel_acked, queries, v.unacked_present, v.unacked_lost,
            (unsigned long long)counters[0], (unsigned long long)counters[1],
            (unsigned long long)counters[2]);
    /* the load was real: points were acknowledged in most cycles */
    assert_true(sync_acked >= CYCLES * SYNC_BATCH);
    assert_true(tel_acked >= CYCLES * TEL_CHUNK);
    tu_tsd_destroy(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(twenty_kills_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
