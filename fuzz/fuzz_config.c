/* fuzz_config.c -- libFuzzer target for the .properties config file parser
 * (oct_config_load_file in common/config.h).
 *
 * The loader reads a path, so each input is written to one temporary file
 * (created once per process, rewritten each run). Properties: the load is
 * all-or-nothing (a failed load leaves every key as in a fresh config); a
 * successful load, written back as a properties file with every special
 * character escaped, loads again to exactly the same key/value set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/strbuf.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tmpfs when there is one: fsync there is free, so runs are I/O-bound no more. */
static const char *tmp_base(void)
{
    struct stat st;
    return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
               ? "/dev/shm"
               : "/tmp";
}

static char path[64];

static void cleanup(void)
{
    unlink(path);
}

static int dump_cb(void *ctx, const char *key, const char *value)
{
    oct_strbuf_t *sb = ctx;
    oct_strbuf_append(sb, key, strlen(key) + 1);
    oct_strbuf_append(sb, value, strlen(value) + 1);
    return 0;
}

static void escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        case ' ':
        case '=':
        case ':':
        case '#':
        case '!':
        case '\\':
            fputc('\\', f);
            fputc(*s, f);
            break;
        default:
            fputc(*s, f);
            break;
        }
    }
}

static int write_back(void *ctx, const char *key, const char *value)
{
    FILE *f = ctx;
    escape(f, key);
    fputc('=', f);
    escape(f, value);
    fputc('\n', f);
    return 0;
}

static int write_file(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof path, "%s/oct_fuzz_config.XXXXXX", tmp_base());
        int fd = mkstemp(path);
        if (fd < 0) abort();
        close(fd);
        atexit(cleanup);
    }
    if (write_file(data, size)) return 0;
    oct_errbuf_t eb;
    oct_config_t *fresh = oct_config_new(), *cfg = oct_config_new();
    oct_strbuf_t d0 = OCT_STRBUF_INIT, d1 = OCT_STRBUF_INIT, d2 = OCT_STRBUF_INIT;
    FUZZ_IGNORE(oct_config_foreach(fresh, dump_cb, &d0));
    int rc = oct_config_load_file(cfg, path, &eb);
    FUZZ_IGNORE(oct_config_foreach(cfg, dump_cb, &d1));
    if (rc != 0) {
        if (d0.len != d1.len || (d0.len && memcmp(d0.ptr, d1.ptr, d0.len))) abort();
    } else {
        FILE *f = fopen(path, "wb");
        if (f) {
            FUZZ_IGNORE(oct_config_foreach(cfg, write_back, f));
            fclose(f);
            oct_config_t *again = oct_config_new();
            if (oct_config_load_file(again, path, &eb) != 0) abort();
            FUZZ_IGNORE(oct_config_foreach(again, dump_cb, &d2));
            if (d1.len != d2.len || (d1.len && memcmp(d1.ptr, d2.ptr, d1.len))) abort();
            oct_config_free(again);
        }
    }
    oct_strbuf_free(&d0);
    oct_strbuf_free(&d1);
    oct_strbuf_free(&d2);
    oct_config_free(fresh);
    oct_config_free(cfg);
    return 0;
}
