/* test_multi_tsd_data_rados.c -- three real `octsdb tsd` processes on one
 * RADOS data set (one pool + namespace, each TSD its own data dir), the
 * data side of docs/scale-out.md:
 *
 *  - points of the same series and hours spread round-robin over the three
 *    TSDs (one batch sent twice, to two TSDs, as a load balancer's retry
 *    does) are answered identically by each TSD, exactly as sent, within
 *    the visibility bound; a series written through one TSD only is found
 *    by the others' lookup and queries within the bound; after the TSDs stop (compacting the closed
 * hours) every row holds exactly one block cell, the compacted 4F 00 00, with exactly the points
 * sent, and a restarted TSD answers the same;
 *  - a TSD killed with -9 that never returns: another TSD's sweep compacts
 *    the rows only the dead one wrote into one block cell each, with
 *    exactly the acknowledged points (tsd.storage.shared.sweep_delay_ms);
 *  - `kill -9` of one TSD during a sync=true load: every acknowledged point
 *    is answered by the other two at once, exactly once with the value
 *    sent, and again by the killed one after its restart;
 *  - `kill -9` of one of the 3 OSDs (of a cluster the test starts for
 *    itself) during the same load: the load goes on, and every acknowledged
 *    point is answered by every TSD, exactly once.
 *
 * Expected answers are built from the points the test sends. Needs a
 * cluster: OCTSDB_TEST_STORE_RADOS names the config file
 * scripts/ceph-cluster.sh writes; without it the program exits 77. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/block.h"
#include "common/config.h"
#include "store/store.h"
#include "testutil.h"

#define NTSD 3
/* 2013-01-01T00:00:00Z: an hour boundary, long closed */
#define BASE_TS 1356998400LL

static const char *cluster_cfg;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* n TSDs on a fresh namespace of the cluster whose config file is
 * `cluster`, each its own data dir, with the config line extra (may be
 * NULL). Returns their config file's path (malloc'd): the cluster's, plus
 * the namespace and extra. */
static char *start_n(const char *cluster, const char *tag, tu_tsd_t *t, int n,
                     const char *extra_line)
{
    char *dir = tu_tempdir();
    char *path = malloc(strlen(dir) + 32);
    sprintf(path, "%s/octsdb.conf", dir);
    FILE *in = fopen(cluster, "r"), *out = fopen(path, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[4096];
    while (fgets(line, sizeof line, in))
        fputs(line, out);
    fprintf(out, "\ntsd.storage.rados.namespace = mtd-%s-%ld-%lld\n", tag, (long)getpid(),
            (long long)time(NULL));
    if (extra_line) fprintf(out, "%s\n", extra_line);
    fclose(in);
    fclose(out);
    free(dir);
    char arg[4200];
    snprintf(arg, sizeof arg, "--config=%s", path);
    const char *extra[] = {arg, "--auto-metric", NULL};
    for (int i = 0; i < n; i++)
        if (tu_tsd_start(&t[i], extra)) fail_msg("tsd %d did not start", i);
    return path;
}

static char *start_three(const char *cluster, const char *tag, tu_tsd_t *t)
{
    return start_n(cluster, tag, t, NTSD, NULL);
}

static int restart(tu_tsd_t *t, const char *cfg)
{
    char arg[4200];
    snprintf(arg, sizeof arg, "--config=%s", cfg);
    const char *extra[] = {arg, "--auto-metric", NULL};
    return tu_tsd_start(t, extra);
}

/* ---- points spread over three TSDs ------------------------------------ */

#define SP_SERIES 3   /* host=a, b, c */
#define SP_POINTS 240 /* per series: one every 30 s, two hours */
#define SP_BATCH  40

static long sp_value(int host, int i)
{
    return 1000L * (host + 1) + 7L * i;
}

/* JSON of points [from, to) of the flattened (point, host) sequence. */
static char *sp_body(int from, int to)
{
    size_t cap = (size_t)(to - from) * 128 + 16, len = 0;
    char *b = malloc(cap);
    len += (size_t)snprintf(b, cap, "[");
    for (int k = from; k < to; k++) {
        int i = k / SP_SERIES, h = k % SP_SERIES;
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"metric\":\"mtd.spread\",\"timestamp\":%lld,\"value\":%ld,"
                                "\"tags\":{\"host\":\"%c\"}}",
                                k > from ? "," : "", BASE_TS + 30LL * i, sp_value(h, i), 'a' + h);
    }
    snprintf(b + len, cap - len, "]");
    return b;
}

/* The longest wait (ms) the test accepts for what the design bounds by
 * tsd.storage.shared.visibility_ms (500 ms). */
static int64_t slack_ms(void)
{
    return getenv("OCT_SANITIZED") ? 15000 : 3000;
}

static void put(const tu_tsd_t *t, const char *body, int sync)
{
    char *resp = NULL;
    int st = tu_http(t->port, "POST", sync ? "/api/put?sync=true" : "/api/put",
                     "Content-Type: application/json\r\n", body, strlen(body), &resp, NULL);
    if (st != 204) {
        tu_tsd_print_log(t);
        fail_msg("put on port %d: %d %s", t->port, st, resp ? resp : "");
    }
    free(resp);
}

/* The series of host h as /api/query prints it with {host=*}. */
static char *sp_want(int h)
{
    size_t cap = (size_t)SP_POINTS * 40 + 256, len = 0;
    char *w = malloc(cap);
    len += (size_t)snprintf(w, cap,
                            "{\"metric\":\"mtd.spread\",\"tags\":{\"host\":\"%c\"},"
                            "\"aggregateTags\":[],\"dps\":{",
                            'a' + h);
    for (int i = 0; i < SP_POINTS; i++)
        len += (size_t)snprintf(w + len, cap - len, "%s\"%lld\":%ld", i ? "," : "",
                                BASE_TS + 30LL * i, sp_value(h, i));
    snprintf(w + len, cap - len, "}}");
    return w;
}

/* 1 when t answers every series exactly as sent (and nothing more). */
static int sp_answers(const tu_tsd_t *t, char **got)
{
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:mtd.spread%%7Bhost=*%%7D",
             BASE_TS, BASE_TS + 30LL * SP_POINTS);
    char *resp = NULL;
    int st = tu_http(t->port, "GET", target, NULL, NULL, 0, &resp, NULL);
    int ok = st == 200 && resp;
    size_t want_len = 2; /* the brackets */
    for (int h = 0; ok && h < SP_SERIES; h++) {
        char *w = sp_want(h);
        ok = strstr(resp, w) != NULL;
        want_len += strlen(w) + (h ? 1 : 0);
        free(w);
    }
    ok = ok && strlen(resp) == want_len;
    free(*got);
    *got = resp;
    return ok;
}

/* Every row of metric mtd.spread's partitions in the data set: counts rows,
 * cells, compacted cells and points (every cell must be a block). */
typedef struct {
    store_t *st;
    size_t rows, cells, compacted, points;
} cells_ctx_t;

static int count_part(void *ctx, oct_slice_t part)
{
    cells_ctx_t *c = ctx;
    store_scan_spec_t spec = {0};
    spec.part = part;
    store_scanner_t *sc;
    oct_errbuf_t eb;
    if (store_scan_open(c->st, STORE_TABLE_DATA, &spec, &sc, &eb)) fail_msg("scan: %s", eb.msg);
    store_result_t row = STORE_RESULT_INIT;
    int r;
    while ((r = store_scan_next(sc, &row, &eb)) == 1) {
        c->rows++;
        for (size_t i = 0; i < row.n; i++) {
            const store_cell_t *x = &row.cells[i];
            c->cells++;
            if (!codec_block_qualifier_rank(x->qualifier.ptr, x->qualifier.len, NULL))
                fail_msg("a cell that is not a block (qualifier length %zu)", x->qualifier.len);
            uint16_t seq = 1;
            if (codec_block_qualifier_parse(x->qualifier.ptr, x->qualifier.len, &seq) && seq == 0)
                c->compacted++;
            int n = codec_block_count(x->value.ptr, x->value.len);
            assert_true(n > 0);
            c->points += (size_t)n;
        }
    }
    assert_int_equal(r, 0);
    store_result_free(&row);
    store_scan_close(sc);
    return 0;
}

static void count_cells(const char *cfgpath, cells_ctx_t *c)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    if (oct_config_load_file(cfg, cfgpath, &eb)) fail_msg("config: %s", eb.msg);
    char *dir = tu_tempdir();
    store_options_t so = {0};
    so.dir = dir;
    so.backend = "rados";
    so.cfg = cfg;
    if (store_open(&so, &c->st, &eb)) fail_msg("store_open: %s", eb.msg);
    if (store_part_list(c->st, STORE_TABLE_DATA, oct_slice(NULL, 0), oct_slice(NULL, 0), count_part,
                        c, &eb))
        fail_msg("part_list: %s", eb.msg);
    store_close(c->st);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
}

static void *stop_thread(void *arg)
{
    return (void *)(intptr_t)tu_tsd_stop(arg);
}

static void spread_over_three_tsds_answers_the_same(void **state)
{
    (void)state;
    tu_tsd_t t[NTSD] = {{0}};
    /* a short sweep delay: the rows left with writer cells at the stops
     * below are compacted by the TSD restarted after them */
    char *cfg = start_n(cluster_cfg, "spread", t, NTSD, "tsd.storage.shared.sweep_delay_ms = 1000");

    int total = SP_SERIES * SP_POINTS;
    int nb = 0;
    for (int k = 0; k < total; k += SP_BATCH, nb++) {
        char *b = sp_body(k, k + SP_BATCH < total ? k + SP_BATCH : total);
        put(&t[nb % NTSD], b, 0);
        if (k == 0) /* a load balancer's retry: the same batch through two more TSDs */
            for (int r = 1; r < NTSD; r++)
                put(&t[r], b, 0);
        free(b);
    }
    /* Every TSD answers every point within the bound (500 ms by default). */
    int64_t t0 = now_ms();
    char *got = NULL;
    int done[NTSD] = {0}, n_done = 0;
    int64_t took = 0;
    while (n_done < NTSD && now_ms() - t0 < 10000) {
        for (int i = 0; i < NTSD; i++)
            if (!done[i] && sp_answers(&t[i], &got)) {
                done[i] = 1;
                n_done++;
            }
        took = now_ms() - t0;
        if (n_done < NTSD) usleep(20000);
    }
    if (n_done < NTSD) fail_msg("not every TSD answers as sent after 10 s: %s", got);
    printf("every TSD answered every point %lld ms after the last put\n", (long long)took);
    /* the bound is 500 ms; a loaded test machine gets slack (a sanitizer's
     * build more), a broken visibility (only at the hour's compaction)
     * would take minutes */
    assert_true(took < slack_ms());

    /* A series written through one TSD only is found by the others' lookup,
     * tag filters and queries within the bound (their series index learns it). */
    put(&t[0],
        "[{\"metric\":\"mtd.only\",\"timestamp\":1356998400,\"value\":41,"
        "\"tags\":{\"host\":\"z\"}},{\"metric\":\"mtd.only\",\"timestamp\":1356998401,"
        "\"value\":42,\"tags\":{\"host\":\"z\"}}]",
        0);
    t0 = now_ms();
    for (int i = 1; i < NTSD; i++) {
        int found = 0;
        while (!found && now_ms() - t0 < 10000) {
            char *lk = NULL, *qr = NULL;
            int a = tu_http(t[i].port, "GET", "/api/search/lookup?m=mtd.only%7Bhost=*%7D", NULL,
                            NULL, 0, &lk, NULL);
            int b = tu_http(t[i].port, "GET",
                            "/api/query?start=1356998400&end=1356998402&m=sum:mtd.only%7Bhost=z%7D",
                            NULL, NULL, 0, &qr, NULL);
            found = a == 200 && lk && strstr(lk, "\"totalResults\":1") &&
                    strstr(lk, "\"tags\":{\"host\":\"z\"}") && b == 200 && qr &&
                    strstr(qr, "\"dps\":{\"1356998400\":41,\"1356998401\":42}");
            free(lk);
            free(qr);
            if (!found) usleep(20000);
        }
        if (!found) fail_msg("tsd %d does not find the series written through tsd 0", i);
    }
    took = now_ms() - t0;
    printf("a series written through one TSD was found by the others after %lld ms\n",
           (long long)took);
    assert_true(took < slack_ms());

    /* Clean stops, all three at once: each writes what it holds as its
     * writer cells and compacts nothing (a CAS per row would make a stop
     * with many series take minutes); every point is in the store. */
    pthread_t th[NTSD];
    for (int i = 0; i < NTSD; i++)
        assert_int_equal(pthread_create(&th[i], NULL, stop_thread, &t[i]), 0);
    for (int i = 0; i < NTSD; i++) {
        void *st;
        pthread_join(th[i], &st);
        assert_int_equal((intptr_t)st, 0);
    }
    cells_ctx_t c = {0};
    count_cells(cfg, &c);
    printf("after the stops: %zu rows, %zu cells, %zu compacted\n", c.rows, c.cells, c.compacted);
    assert_int_equal(c.rows, SP_SERIES * 2 + 1);

    /* A TSD that comes back answers from the store alone, and its sweep
     * compacts every row (the others' cells too): one compacted cell
     * each, every point once. */
    if (restart(&t[1], cfg)) fail_msg("tsd 1 did not restart");
    if (!sp_answers(&t[1], &got)) fail_msg("after restart: %s", got);
    int64_t t1 = now_ms();
    do {
        memset(&c, 0, sizeof c);
        count_cells(cfg, &c);
        if (c.compacted == c.rows && c.cells == c.rows) break;
        usleep(200000);
    } while (now_ms() - t1 < 30000);
    printf("the restarted TSD's sweep compacted every row after %lld ms\n",
           (long long)(now_ms() - t1));
    /* 3 series x 2 hours, and mtd.only's row */
    assert_int_equal(c.rows, SP_SERIES * 2 + 1);
    assert_int_equal(c.cells, SP_SERIES * 2 + 1);
    assert_int_equal(c.compacted, SP_SERIES * 2 + 1);
    assert_int_equal(c.points, (size_t)total + 2);
    if (!sp_answers(&t[1], &got)) fail_msg("after the sweep: %s", got);
    free(got);
    for (int i = 0; i < NTSD; i++)
        tu_tsd_destroy(&t[i]);
    free(cfg);
}

/* ---- a TSD that never returns: the sweep ------------------------------- */

#define SW_SERIES 2  /* host=a, b */
#define SW_POINTS 60 /* per series: one every 90 s, over two hours */
#define SW_PUTS   3  /* point i goes in put i % 3: three cells per row */
/* a day after BASE_TS: its own hours */
#define SW_BASE (BASE_TS + 86400)

static long sw_value(int h, int i)
{
    return 500L * (h + 1) + 3L * i;
}

/* Cells in the open-rows registry (octsdb-sys "open/" partitions). */
typedef struct {
    store_t *st;
    size_t cells;
} reg_ctx_t;

static int count_reg(void *ctx, oct_slice_t part)
{
    reg_ctx_t *c = ctx;
    if (part.len != 7 || memcmp(part.ptr, "open/", 5) != 0) return 0;
    store_scan_spec_t spec = {0};
    spec.part = part;
    store_scanner_t *sc;
    oct_errbuf_t eb;
    if (store_scan_open(c->st, STORE_TABLE_SYS, &spec, &sc, &eb)) fail_msg("scan: %s", eb.msg);
    store_result_t row = STORE_RESULT_INIT;
    while (store_scan_next(sc, &row, &eb) == 1)
        c->cells += row.n;
    store_result_free(&row);
    store_scan_close(sc);
    return 0;
}

static size_t registry_cells(const char *cfgpath)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    if (oct_config_load_file(cfg, cfgpath, &eb)) fail_msg("config: %s", eb.msg);
    char *dir = tu_tempdir();
    store_options_t so = {0};
    so.dir = dir;
    so.backend = "rados";
    so.cfg = cfg;
    so.read_only = 0;
    reg_ctx_t c = {0};
    if (store_open(&so, &c.st, &eb)) fail_msg("store_open: %s", eb.msg);
    if (store_part_list(c.st, STORE_TABLE_SYS, oct_slice(NULL, 0), oct_slice(NULL, 0), count_reg,
                        &c, &eb))
        fail_msg("part_list: %s", eb.msg);
    store_close(c.st);
    oct_config_free(cfg);
    tu_rmrf(dir);
    free(dir);
    return c.cells;
}

/* TSD A takes sync=true puts of two series over two closed hours (three
 * cells of its own per row), then is killed with -9 and never comes back;
 * TSD B never receives a point of those series. B's sweep must compact
 * every row into one block cell with exactly the acknowledged points, and
 * empty the registry. */
static void sweep_compacts_a_dead_tsds_rows(void **state)
{
    (void)state;
    tu_tsd_t t[2] = {{0}};
    char *cfg = start_n(cluster_cfg, "sweep", t, 2, "tsd.storage.shared.sweep_delay_ms = 1000");
    for (int p = 0; p < SW_PUTS; p++) {
        size_t cap = 64 + (size_t)SW_SERIES * SW_POINTS * 128, len = 0;
        char *b = malloc(cap);
        len += (size_t)snprintf(b, cap, "[");
        for (int i = p; i < SW_POINTS; i += SW_PUTS)
            for (int h = 0; h < SW_SERIES; h++)
                len += (size_t)snprintf(b + len, cap - len,
                                        "%s{\"metric\":\"mtd.sweep\",\"timestamp\":%lld,"
                                        "\"value\":%ld,\"tags\":{\"host\":\"%c\"}}",
                                        len > 1 ? "," : "", SW_BASE + 90LL * i, sw_value(h, i),
                                        'a' + h);
        snprintf(b + len, cap - len, "]");
        put(&t[0], b, 1); /* acknowledged = in RADOS, as A's cells */
        free(b);
    }
    tu_tsd_kill(&t[0]);
    int64_t t0 = now_ms();
    /* what A left: its own cells, none compacted (A's compaction waits
     * for a minute without points, and A died first) -- unless B's sweep
     * was already there */
    cells_ctx_t c = {0};
    count_cells(cfg, &c);
    printf("after the kill: %zu rows, %zu cells, %zu compacted, %zu points\n", c.rows, c.cells,
           c.compacted, c.points);
    assert_int_equal(c.rows, SW_SERIES * 2);
    int done = 0;
    while (!done && now_ms() - t0 < 30000) {
        memset(&c, 0, sizeof c);
        count_cells(cfg, &c);
        done = c.cells == c.rows && c.compacted == c.rows;
        if (!done) usleep(200000);
    }
    int64_t took = now_ms() - t0;
    if (!done) {
        tu_tsd_print_log(&t[1]);
        fail_msg("after 30 s: %zu rows, %zu cells, %zu compacted", c.rows, c.cells, c.compacted);
    }
    printf("the dead TSD's rows were compacted by the other %lld ms after the kill\n",
           (long long)took);
    /* one block per series-hour, every acknowledged point once */
    assert_int_equal(c.rows, SW_SERIES * 2);
    assert_int_equal(c.points, (size_t)SW_SERIES * SW_POINTS);
    /* and the registry is empty (B's sweep deleted A's entries) */
    int64_t t1 = now_ms();
    size_t reg = registry_cells(cfg);
    while (reg && now_ms() - t1 < 5000) {
        usleep(200000);
        reg = registry_cells(cfg);
    }
    assert_int_equal(reg, 0);
    /* B answers every point with the value sent */
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:mtd.sweep%%7Bhost=*%%7D",
             SW_BASE, SW_BASE + 90LL * SW_POINTS);
    char *resp = NULL;
    assert_int_equal(tu_http(t[1].port, "GET", target, NULL, NULL, 0, &resp, NULL), 200);
    for (int h = 0; h < SW_SERIES; h++) {
        size_t cap = (size_t)SW_POINTS * 40 + 64, len = 0;
        char *w = malloc(cap);
        len += (size_t)snprintf(w, cap, "\"dps\":{");
        for (int i = 0; i < SW_POINTS; i++)
            len += (size_t)snprintf(w + len, cap - len, "%s\"%lld\":%ld", i ? "," : "",
                                    SW_BASE + 90LL * i, sw_value(h, i));
        snprintf(w + len, cap - len, "}");
        if (!strstr(resp, w)) fail_msg("series %d not as sent: %s", h, resp);
        free(w);
    }
    free(resp);
    for (int i = 0; i < 2; i++)
        tu_tsd_destroy(&t[i]);
    free(cfg);
}

/* ---- kill -9 during a sync=true load ---------------------------------- */

#define KL_BATCH 10
#define KL_MAX   4000 /* batches at most */

typedef struct {
    tu_tsd_t *t;
    pthread_t th;
    _Atomic int stop;
    unsigned char acked[KL_MAX]; /* batch b acknowledged (204) */
    int sent;
} load_t;

static long kl_value(long i)
{
    return 5 * i + 3;
}

/* Batch b: points i = b*KL_BATCH .. +KL_BATCH of series host=x, ts BASE + i. */
static char *kl_body(int b)
{
    size_t cap = KL_BATCH * 128 + 16, len = 0;
    char *s = malloc(cap);
    len += (size_t)snprintf(s, cap, "[");
    for (int k = 0; k < KL_BATCH; k++) {
        long i = (long)b * KL_BATCH + k;
        len += (size_t)snprintf(s + len, cap - len,
                                "%s{\"metric\":\"mtd.kill\",\"timestamp\":%lld,\"value\":%ld,"
                                "\"tags\":{\"host\":\"x\"}}",
                                k ? "," : "", BASE_TS + i, kl_value(i));
    }
    snprintf(s + len, cap - len, "]");
    return s;
}

static void *load_thread(void *arg)
{
    load_t *l = arg;
    for (int b = 0; b < KL_MAX && !atomic_load(&l->stop); b++) {
        char *body = kl_body(b);
        const tu_tsd_t *t = &l->t[b % NTSD];
        char *resp = NULL;
        int st = tu_http(t->port, "POST", "/api/put?sync=true",
                         "Content-Type: application/json\r\n", body, strlen(body), &resp, NULL);
        l->acked[b] = st == 204;
        l->sent = b + 1;
        free(resp);
        free(body);
    }
    return NULL;
}

/* Starts the sync load over the three TSDs t. */
static load_t *load_start(tu_tsd_t *t)
{
    load_t *l = calloc(1, sizeof *l);
    l->t = t;
    assert_int_equal(pthread_create(&l->th, NULL, load_thread, l), 0);
    return l;
}

static void load_stop(load_t *l)
{
    atomic_store(&l->stop, 1);
    pthread_join(l->th, NULL);
}

/* Checks t's answer for mtd.kill: every acked point present with its value,
 * every point present one that was sent. Returns the points answered. */
static size_t kl_check(const tu_tsd_t *t, const load_t *l)
{
    char target[256];
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:mtd.kill", BASE_TS,
             BASE_TS + (long long)KL_MAX * KL_BATCH);
    char *resp = NULL;
    int st = tu_http(t->port, "GET", target, NULL, NULL, 0, &resp, NULL);
    if (st != 200 || !resp) fail_msg("query on port %d: %d %s", t->port, st, resp ? resp : "");
    unsigned char *seen = calloc((size_t)KL_MAX * KL_BATCH, 1);
    size_t n = 0;
    const char *p = strstr(resp, "\"dps\":{");
    if (!p) fail_msg("no dps in %s", resp);
    p += 7;
    while (*p == '"') {
        long long ts;
        long v;
        int used;
        if (sscanf(p, "\"%lld\":%ld%n", &ts, &v, &used) != 2) fail_msg("bad dps at %.40s", p);
        long i = (long)(ts - BASE_TS);
        if (i < 0 || i >= (long)l->sent * KL_BATCH) fail_msg("a point never sent: %lld", ts);
        if (v != kl_value(i)) fail_msg("point %lld: %ld, sent %ld", ts, v, kl_value(i));
        if (seen[i]) fail_msg("point %lld twice", ts);
        seen[i] = 1;
        n++;
        p += used;
        if (*p == ',') p++;
    }
    for (int b = 0; b < l->sent; b++)
        for (int k = 0; l->acked[b] && k < KL_BATCH; k++)
            if (!seen[(size_t)b * KL_BATCH + (size_t)k])
                fail_msg("acknowledged point %lld missing on port %d",
                         BASE_TS + (long long)b * KL_BATCH + k, t->port);
    free(seen);
    free(resp);
    return n;
}

static void kill_one_tsd_during_sync_load_loses_nothing(void **state)
{
    (void)state;
    tu_tsd_t t[NTSD] = {{0}};
    char *cfg = start_three(cluster_cfg, "kill", t);
    load_t *l = load_start(t);
    usleep(1500 * 1000);
    tu_tsd_kill(&t[1]); /* mid-load: its sync puts in flight fail */
    usleep(1000 * 1000);
    load_stop(l);
    int acked = 0, lost_tsd = 0;
    for (int b = 0; b < l->sent; b++) {
        acked += l->acked[b];
        lost_tsd += !l->acked[b];
    }
    printf("%d sync batches sent, %d acknowledged, %d refused\n", l->sent, acked, lost_tsd);
    assert_true(acked >= 3);   /* few on a loaded machine, some hundreds when idle */
    assert_true(lost_tsd > 0); /* the kill happened mid-load */
    /* The other two answer every acknowledged point at once: it was in RADOS. */
    size_t n0 = kl_check(&t[0], l), n2 = kl_check(&t[2], l);
    assert_int_equal(n0, n2);
    /* The killed one rejoins without a manual step and answers the same. */
    if (restart(&t[1], cfg)) fail_msg("tsd 1 did not restart");
    int64_t t0 = now_ms();
    size_t n1 = kl_check(&t[1], l);
    while (n1 != n0 && now_ms() - t0 < 2 * slack_ms()) { /* its replayed log reaches the others */
        usleep(50000);
        n1 = kl_check(&t[1], l);
        n0 = kl_check(&t[0], l);
    }
    assert_int_equal(n1, n0);
    for (int i = 0; i < NTSD; i++)
        tu_tsd_destroy(&t[i]);
    free(l);
    free(cfg);
}

/* ---- kill -9 of one OSD during a sync=true load ----------------------- */

/* A cluster of this test's own (killing an OSD of the shared one would
 * disturb the other tests): scripts/ceph-cluster.sh, stopped by pid at the
 * end, also when the test fails (atexit). */
static char own_cluster[4200];
static char ceph_script[1024];

/* scripts/ceph-cluster.sh of the source tree (tests/e2e/x.c -> the tree) */
static const char *ceph_script_path(void)
{
    char src[512];
    snprintf(src, sizeof src, "%s", __FILE__);
    snprintf(ceph_script, sizeof ceph_script, "%s/scripts/ceph-cluster.sh",
             dirname(dirname(dirname(src))));
    return ceph_script;
}

static void own_cluster_stop(void)
{
    if (!own_cluster[0]) return;
    char cmd[8600];
    snprintf(cmd, sizeof cmd, "'%s' stop '%s/c' >/dev/null 2>&1", ceph_script, own_cluster);
    if (system(cmd) != 0) fprintf(stderr, "stopping the test's cluster failed\n");
    tu_rmrf(own_cluster);
    own_cluster[0] = 0;
}

static void kill_one_osd_during_sync_load_loses_nothing(void **state)
{
    (void)state;
    char *dir = tu_tempdir();
    snprintf(own_cluster, sizeof own_cluster, "%s", dir);
    free(dir);
    atexit(own_cluster_stop);
    char cmd[8600], conf[4400];
    snprintf(cmd, sizeof cmd, "'%s' start '%s/c'", ceph_script_path(), own_cluster);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    if (!fgets(conf, sizeof conf, p)) conf[0] = 0;
    int st = pclose(p);
    if (st != 0 || !conf[0]) fail_msg("the test's own cluster did not start (%d)", st);
    conf[strcspn(conf, "\n")] = 0;
    tu_tsd_t t[NTSD] = {{0}};
    char *cfg = start_three(conf, "osd", t);
    load_t *l = load_start(t);
    usleep(1500 * 1000);
    /* kill -9 one OSD, by the pid the cluster script recorded */
    char pidf[4400];
    snprintf(pidf, sizeof pidf, "%s/c/pids/osd.1.pid", own_cluster);
    FILE *f = fopen(pidf, "r");
    assert_non_null(f);
    int pid = 0;
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int sent_at_kill = l->sent;
    usleep(4000 * 1000);
    load_stop(l);
    int acked = 0, acked_after = 0;
    for (int b = 0; b < l->sent; b++) {
        acked += l->acked[b];
        acked_after += l->acked[b] && b > sent_at_kill;
    }
    printf("%d sync batches sent, %d acknowledged, %d of them after the OSD died\n", l->sent, acked,
           acked_after);
    assert_true(acked >= 3);
    assert_true(acked_after > 0); /* writes went on with two OSDs */
    /* every TSD answers every acknowledged point, exactly once */
    size_t n0 = kl_check(&t[0], l), n1 = kl_check(&t[1], l), n2 = kl_check(&t[2], l);
    assert_int_equal(n0, n1);
    assert_int_equal(n0, n2);
    for (int i = 0; i < NTSD; i++)
        tu_tsd_destroy(&t[i]);
    free(l);
    free(cfg);
    own_cluster_stop();
}

int main(void)
{
    cluster_cfg = getenv("OCTSDB_TEST_STORE_RADOS");
    if (!cluster_cfg || !*cluster_cfg) {
        printf("[  SKIPPED ] test_multi_tsd_data_rados: OCTSDB_TEST_STORE_RADOS is not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spread_over_three_tsds_answers_the_same),
        cmocka_unit_test(sweep_compacts_a_dead_tsds_rows),
        cmocka_unit_test(kill_one_tsd_during_sync_load_loses_nothing),
        cmocka_unit_test(kill_one_osd_during_sync_load_loses_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
