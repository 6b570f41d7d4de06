/* bench_search.c -- uid_suggest's hot path: a prefix query answered from the
 * kind's in-memory sorted name list (src/uid/uid_names.c) against the same
 * query read from the store's forward map (uid_foreach, the scan suggest
 * used before), over a real RocksDB store in a temp dir.
 *
 * Data set: N tag values "web-NNNNNN.prod" (the bench fleet's host names)
 * plus N/10 others ("svc-..") that the prefix must skip, assigned in one
 * batch. Figures (CPU time of this process, medians of 5 runs):
 *   - suggest "web-" with max = N (every host: /api/suggest of bench_peers);
 *   - suggest "web-0001" with max 25 (a UI's typeahead);
 *   - the forward-map scan of every name, filtered to "web-" (the old cost);
 *   - one suggest after 100 new names (the list follows the counter).
 * Each run checks the number of names it got.
 *
 * Usage: bench_search [N (default 100000)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/benchutil.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "uid/uid.h"

#define RUNS 5

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct {
    size_t n, bytes;
    const char *prefix;
    size_t plen;
} count_t;

static int count_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    count_t *c = ctx;
    (void)id;
    if (c->prefix && (len < c->plen || memcmp(name, c->prefix, c->plen))) return 0;
    c->n++;
    c->bytes += len;
    return 0;
}

static void die(const char *what, const oct_errbuf_t *eb)
{
    fprintf(stderr, "bench_search: %s: %s\n", what, eb->msg);
    exit(1);
}

/* Assigns pre + %06zu names for lo..hi-1 in one batch. */
static void assign(uid_registry_t *r, const char *pre, const char *suf, size_t lo, size_t hi)
{
    size_t n = hi - lo;
    char(*text)[32] = xmalloc(n * sizeof *text);
    oct_slice_t *names = xmalloc(n * sizeof *names);
    uint64_t *ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        snprintf(text[i], sizeof text[i], "%s%06zu%s", pre, lo + i, suf);
        names[i] = oct_slice_str(text[i]);
    }
    oct_errbuf_t eb;
    if (uid_resolve_batch_deferred(r, CODEC_UID_TAGV, names, n, ids, &eb)) die("assign", &eb);
    free(text);
    free(names);
    free(ids);
}

/* Median CPU ms of RUNS calls of suggest (or the scan when scan). */
static double measure(uid_registry_t *r, const char *prefix, size_t max, int scan, size_t want)
{
    double v[RUNS];
    for (int k = 0; k < RUNS; k++) {
        count_t c = {0};
        oct_errbuf_t eb;
        double t0 = cpu_s();
        int rc;
        if (scan) {
            c.prefix = prefix;
            c.plen = strlen(prefix);
            rc = uid_foreach(r, CODEC_UID_TAGV, count_cb, &c, &eb);
        } else {
            rc = uid_suggest(r, CODEC_UID_TAGV, (const uint8_t *)prefix, strlen(prefix), max,
                             count_cb, &c, &eb);
        }
        v[k] = (cpu_s() - t0) * 1e3;
        if (rc) die("suggest", &eb);
        if (c.n != want) {
            fprintf(stderr, "bench_search: %s got %zu names, want %zu\n", prefix, c.n, want);
            exit(1);
        }
    }
    return bench_median(v, RUNS);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
    if (n < 100) n = 100;
    char dir[] = "/tmp/bench_search.XXXXXX";
    if (!mkdtemp(dir)) return 1;
    store_options_t so = {0};
    so.dir = dir;
    store_t *st;
    uid_registry_t *r;
    oct_errbuf_t eb;
    if (store_open(&so, &st, &eb)) die("store", &eb);
    uid_options_t o;
    uid_options_default(&o);
    if (uid_registry_open(st, &o, &r, &eb)) die("registry", &eb);
    assign(r, "web-", ".prod", 0, n);
    assign(r, "svc-", "", 0, n / 10);
    double t0 = cpu_s();
    count_t c = {0};
    if (uid_suggest(r, CODEC_UID_TAGV, (const uint8_t *)"web-", 4, n, count_cb, &c, &eb))
        die("suggest", &eb);
    double first = (cpu_s() - t0) * 1e3;
    printf("bench_search: %zu tag values (+%zu others), CPU ms, medians of %d\n", n, n / 10, RUNS);
    printf("  first suggest (builds the list)      %8.2f\n", first);
    printf("  suggest web- max %-8zu            %8.2f\n", n, measure(r, "web-", n, 0, n));
    printf("  suggest web-0001 max 25              %8.3f\n",
           measure(r, "web-0001", 25, 0, n >= 125 ? 25 : n - 100)); /* 100..199 */
    printf("  forward-map scan, web- of every name %8.2f\n", measure(r, "web-", 0, 1, n));
    double add[RUNS];
    for (int k = 0; k < RUNS; k++) {
        assign(r, "web-x", "", (size_t)k * 100, (size_t)k * 100 + 100);
        c = (count_t){0};
        t0 = cpu_s();
        if (uid_suggest(r, CODEC_UID_TAGV, (const uint8_t *)"web-x", 5, n, count_cb, &c, &eb))
            die("suggest", &eb);
        add[k] = (cpu_s() - t0) * 1e3;
        if (c.n != (size_t)(k + 1) * 100) {
            fprintf(stderr, "bench_search: %zu new names seen, want %d\n", c.n, (k + 1) * 100);
            return 1;
        }
    }
    printf("  suggest after 100 new names          %8.2f\n", bench_median(add, RUNS));
    uid_registry_close(r);
    store_close(st);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) return 1;
    return 0;
}
