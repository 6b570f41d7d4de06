/* fuzz_wal.c -- libFuzzer target for write-ahead-log recovery
 * (tsdb_wal_open's replay of segment files, tsdb/wal.h).
 *
 * Replay reads files, so each input becomes segment 1 of a temporary WAL
 * directory (created once per process, emptied after each run) and
 * tsdb_wal_open replays it through counting callbacks, then the log is
 * closed. A random CRC-32C is beyond the fuzzer, so byte 0 bit 0 asks the
 * harness to frame the rest itself: it prepends the segment header and
 * fixes the CRC of every record whose length fits, letting the fuzzer reach
 * the SERIES and POINTS body decoders; without the bit the input is the raw
 * file (headers, torn tails, bad CRCs). Checks: replay never fails on bad
 * bytes (torn data is cut, not an error), the records seen by the
 * callbacks are at most the recovery statistics' count, every SERIES record has a
 * 1..255-byte TSUID, and after recovery the segment holds exactly the valid
 * prefix (a second open replays the same records, with no torn bytes). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "tsdb/wal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tmpfs when there is one: fsync there is free, so runs are I/O-bound no more. */
static const char *tmp_base(void)
{
    struct stat st;
    return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
               ? "/dev/shm"
               : "/tmp";
}

static char dir[64];

typedef struct {
    uint64_t series, points, records;
} counts_t;

static int cb_segment(void *ctx, uint64_t seg)
{
    (void)ctx;
    (void)seg;
    return 0;
}

static int cb_series(void *ctx, uint64_t seg, uint64_t id, const uint8_t *tsuid, size_t len)
{
    counts_t *c = ctx;
    (void)seg;
    (void)id;
    if (len == 0 || len > 255 || !tsuid) abort();
    c->series++;
    c->records++;
    return 0;
}

static int cb_points(void *ctx, uint64_t seg, const tsdb_wal_point_t *pts, size_t n)
{
    counts_t *c = ctx;
    (void)seg;
    for (size_t i = 0; i < n; i++)
        if (pts[i].flags & ~3u) abort();
    c->points += n;
    c->records++;
    return 0;
}

static void empty_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static void cleanup(void)
{
    empty_dir();
    rmdir(dir);
}

static int replay(counts_t *c, tsdb_wal_recovery_t *rec)
{
    static const tsdb_wal_replay_t rp = {cb_segment, cb_series, cb_points, NULL};
    tsdb_wal_opts_t o = {.dir = dir, .flush_interval_ms = 1, .segment_bytes = 1 << 20};
    tsdb_wal_t *w = NULL;
    oct_errbuf_t eb;
    memset(c, 0, sizeof *c);
    int rc = tsdb_wal_open(&o, &rp, c, &w, rec, &eb);
    if (rc == 0) tsdb_wal_close(w, 0);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20)) return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/oct_fuzz_wal.XXXXXX", tmp_base());
        if (!mkdtemp(dir)) abort();
        atexit(cleanup);
    }
    uint8_t *file = malloc(size + 16);
    size_t n;
    if (data[0] & 1) {
        memcpy(file, "octWAL01", 8);
        oct_put_be64(file + 8, 1);
        memcpy(file + 16, data + 1, size - 1);
        n = size + 15;
        for (size_t off = 16; n - off >= TSDB_WAL_REC_HDR;) {
            uint32_t len = oct_get_be32(file + off);
            if (len == 0 || len > TSDB_WAL_MAX_REC || n - off - 8 < len) break;
            uint32_t crc = tsdb_crc32c(0, file + off, 4);
            crc = tsdb_crc32c(crc, file + off + 8, len);
            oct_put_be32(file + off + 4, crc);
            off += 8 + (size_t)len;
        }
    } else {
        memcpy(file, data + 1, size - 1);
        n = size - 1;
    }
    char p[512];
    snprintf(p, sizeof p, "%s/%016x.wal", dir, 1u);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    if (n) fwrite(file, 1, n, f);
    fclose(f);
    free(file);

    counts_t c1, c2;
    tsdb_wal_recovery_t r1, r2;
    if (replay(&c1, &r1) != 0) abort();
    /* Unknown record types are valid but skipped (no callback). */
    if (c1.records > r1.records) abort();
    if (r1.bad_segments == 0) {
        /* Replay cut the torn tail (or removed a torn header): drop the new
         * empty segment it started and replay what is left. */
        snprintf(p, sizeof p, "%s/%016x.wal", dir, 2u);
        unlink(p);
        if (replay(&c2, &r2) != 0) abort();
        if (c2.records != c1.records || c2.points != c1.points || r2.torn_bytes != 0) abort();
    }
    empty_dir();
    return 0;
}
