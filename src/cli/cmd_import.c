/* cmd_import.c -- `octsdb import FILE...`, as OpenTSDB's `tsdb import`
 * (TextImporter): lines `metric timestamp value tagk=tagv ...` (no `put`
 * word), plain or gzip, `-` for stdin.
 *
 * Design: files are read through zlib's gz* functions, which decompress
 * gzip input (recognised by its magic bytes, whatever the file name) and
 * pass anything else through unchanged. A large buffer is filled, every
 * complete line in it is parsed in place (no copies: the point's slices
 * point into the buffer) into a batch, and the batch goes to tsdb_put_batch
 * before the buffer is refilled. At the end tsdb_flush writes every series
 * to the store as block cells, so the data is on disk when the command
 * returns. On a terminal a progress line (cli_progress_t) follows the
 * input bytes read, for a percentage and an ETA; --quiet turns it off.
 *
 * Errors: without --skip-errors the first bad line stops the import (as
 * OpenTSDB, whose exception ends the program with status 1); the points
 * before it stay imported. A point the database rejects (unknown metric
 * without --auto-metric, too many tags...) is found only when its batch is
 * written, so points after it in the same batch may have been imported.
 * With --skip-errors every bad line is reported and skipped. A storage
 * error ends the import with status 2, as OpenTSDB.
 *
 * Differences (docs/compat.md): non-integer values are kept as doubles
 * (OpenTSDB parses them as float32 and loses precision); timestamps need
 * not increase per series (OpenTSDB's batch import requires it unless
 * tsd.core.bulk.allow_out_of_order_timestamps); empty lines are skipped.
 *
 * Beside a running TSD the batches go to its /api/put (live_put below,
 * docs/cli-live.md); parsing, messages and exit statuses are the same. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/cli_int.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "tsdb/parse.h"
#include "tsdb/write.h"

#define IMPORT_BUF          (4u << 20) /* bytes read at a time */
#define IMPORT_BATCH        8192       /* points per tsdb_put_batch */
#define IMPORT_EXIT_BADLINE 1
#define IMPORT_EXIT_STORAGE 2

typedef struct {
    tsdb_t *db;
    int skip_errors;
    const char *path;
    gzFile gz;           /* the file being read, for its offset */
    uint64_t bytes_done; /* input bytes of the files already read */
    uint64_t consumed;   /* bytes of the current file's text handed to parse_line */
    cli_progress_t prog; /* by input bytes; counts points */
    /* the batch: points, their tags, their line numbers */
    tsdb_dp_t *dps;
    size_t *tag0;
    uint64_t *lineno;
    size_t n;
    oct_slice_t *tags;
    size_t n_tags, tags_cap;
    /* totals */
    uint64_t points, errors;
    int fatal; /* 0, IMPORT_EXIT_BADLINE or IMPORT_EXIT_STORAGE */
    double t0;
    /* through a running TSD (docs/cli-live.md): the batch goes to /api/put */
    cli_live_t *live;
    int auto_metric; /* --auto-metric: assign unknown metrics first */
    char **metrics;  /* open-addressing set of metrics known to exist */
    size_t n_metrics, metrics_cap;
    oct_strbuf_t body, resp;
} import_t;

static double now_s(void)
{
    return (double)oct_clock_mono_ns() / 1e9;
}

static void import_error(import_t *im, uint64_t lineno, const char *msg, size_t len,
                         const char *line, size_t line_len)
{
    im->errors++;
    cli_progress_break(&im->prog);
    if (line)
        fprintf(stderr, "octsdb import: %s:%" PRIu64 ": %.*s (line: %.*s)\n", im->path, lineno,
                (int)len, msg, (int)(line_len > 200 ? 200 : line_len), line);
    else
        fprintf(stderr, "octsdb import: %s:%" PRIu64 ": %.*s\n", im->path, lineno, (int)len, msg);
}

static void on_reject(void *ctx, size_t index, int rc, const char *msg)
{
    import_t *im = ctx;
    if (im->fatal) return; /* stopping: report the first one only */
    import_error(im, im->lineno[index], msg, strlen(msg), NULL, 0);
    if (rc == OCT_EIO)
        im->fatal = IMPORT_EXIT_STORAGE;
    else if (!im->skip_errors)
        im->fatal = IMPORT_EXIT_BADLINE;
}

static void progress(import_t *im, int force)
{
    /* A plain file: the bytes parsed (its reads run 4 MiB ahead). A gzip'ed
     * one: the compressed bytes read, the only measure of its total. */
    off_t off = !im->gz ? 0 : gzdirect(im->gz) ? (off_t)im->consumed : gzoffset(im->gz);
    cli_progress_update(&im->prog, im->bytes_done + (off > 0 ? (uint64_t)off : 0), im->points,
                        force);
}

/* ---- through a running TSD ----------------------------------------------
 * A batch becomes one POST /api/put?details&sync: answered once the TSD's
 * log holds it on disk, so exit 0 means stored as it does locally. The
 * details list the rejected points in input order, each matched to the next
 * point of the batch with its metric and timestamp for its line number. */

static uint64_t live_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

/* With --auto-metric: 1 if the metric was seen (or is now assigned), 0 if
 * the TSD refused it (the point is sent anyway and rejected with its line). */
static void live_auto_metric(import_t *im, oct_slice_t m)
{
    if (im->n_metrics * 2 >= im->metrics_cap) {
        size_t cap = im->metrics_cap ? im->metrics_cap * 2 : 1024;
        char **nt = xcalloc(cap, sizeof *nt);
        for (size_t i = 0; i < im->metrics_cap; i++) {
            if (!im->metrics[i]) continue;
            size_t j = live_hash(im->metrics[i], strlen(im->metrics[i])) & (cap - 1);
            while (nt[j])
                j = (j + 1) & (cap - 1);
            nt[j] = im->metrics[i];
        }
        free(im->metrics);
        im->metrics = nt;
        im->metrics_cap = cap;
    }
    size_t j = live_hash((const char *)m.ptr, m.len) & (im->metrics_cap - 1);
    for (; im->metrics[j]; j = (j + 1) & (im->metrics_cap - 1))
        if (strlen(im->metrics[j]) == m.len && !memcmp(im->metrics[j], m.ptr, m.len)) return;
    char *name = xmalloc(m.len + 1);
    memcpy(name, m.ptr, m.len);
    name[m.len] = '\0';
    im->metrics[j] = name;
    im->n_metrics++;
    /* 200 (assigned) or 400 "already exists": either way it exists now */
    json_writer_t w;
    oct_strbuf_reset(&im->body);
    json_w_init(&w, &im->body);
    json_w_obj_begin(&w);
    json_w_key(&w, "metric");
    json_w_arr_begin(&w);
    json_w_str(&w, name);
    json_w_arr_end(&w);
    json_w_obj_end(&w);
    oct_errbuf_t eb;
    int st = cli_live_http(im->live, "POST", "/api/uid/assign", im->body.ptr, im->body.len,
                           &im->resp, &eb);
    (void)st; /* a refusal shows as the point's rejection */
}

static long live_put(import_t *im, oct_errbuf_t *eb)
{
    json_writer_t w;
    if (im->auto_metric)
        for (size_t i = 0; i < im->n; i++)
            live_auto_metric(im, im->dps[i].metric);
    oct_strbuf_reset(&im->body);
    json_w_init(&w, &im->body);
    json_w_arr_begin(&w);
    for (size_t i = 0; i < im->n; i++) {
        const tsdb_dp_t *dp = &im->dps[i];
        json_w_obj_begin(&w);
        json_w_key(&w, "metric");
        json_w_strn(&w, (const char *)dp->metric.ptr, dp->metric.len);
        json_w_key(&w, "timestamp");
        json_w_int(&w, dp->ts_is_ms ? dp->pt.ts_ms : dp->pt.ts_ms / 1000);
        json_w_key(&w, "value");
        if (dp->pt.is_float)
            json_w_double(&w, dp->pt.val.f);
        else
            json_w_int(&w, dp->pt.val.i);
        json_w_key(&w, "tags");
        json_w_obj_begin(&w);
        for (size_t t = 0; t < dp->n_tags; t++) {
            json_w_keyn(&w, (const char *)dp->tags[2 * t].ptr, dp->tags[2 * t].len);
            json_w_strn(&w, (const char *)dp->tags[2 * t + 1].ptr, dp->tags[2 * t + 1].len);
        }
        json_w_obj_end(&w);
        json_w_obj_end(&w);
    }
    json_w_arr_end(&w);
    int st = cli_live_http(im->live, "POST", "/api/put?details&sync", im->body.ptr, im->body.len,
                           &im->resp, eb);
    if (st < 0) return st;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    const json_value_t *ok = NULL, *errs = NULL;
    if ((st == 200 || st == 204 || st == 400) && im->resp.len &&
        json_parse(&a, im->resp.ptr, im->resp.len, JSON_ALLOW_NONFINITE, &v, eb) == 0) {
        ok = json_obj_get(v, "success");
        errs = json_obj_get(v, "errors");
    }
    int64_t n_ok = -1;
    if (st == 204) {
        n_ok = (int64_t)im->n;
    } else if (!ok || ok->type != JSON_NUMBER || json_number_i64(ok, &n_ok) != 0) {
        char msg[600];
        cli_live_error_message(&im->resp, msg, sizeof msg);
        json_arena_free(&a);
        return oct_err(eb, OCT_EIO, "the TSD refused the batch (HTTP %d): %s", st, msg);
    }
    size_t cur = 0;
    for (const json_value_t *e = errs ? errs->child : NULL; e; e = e->next) {
        const json_value_t *dp = json_obj_get(e, "datapoint"), *msg = json_obj_get(e, "error");
        const json_value_t *m = dp ? json_obj_get(dp, "metric") : NULL;
        const json_value_t *ts = dp ? json_obj_get(dp, "timestamp") : NULL;
        int64_t t = 0;
        if (ts && ts->type == JSON_NUMBER && json_number_i64(ts, &t) != 0) t = 0;
        size_t i = cur;
        for (; i < im->n; i++) {
            const tsdb_dp_t *p = &im->dps[i];
            if (m && m->type == JSON_STRING && m->len == p->metric.len &&
                !memcmp(m->str, p->metric.ptr, m->len) &&
                t == (p->ts_is_ms ? p->pt.ts_ms : p->pt.ts_ms / 1000))
                break;
        }
        if (i == im->n) i = cur < im->n ? cur : im->n - 1; /* unmatched: report at the cursor */
        char text[OCT_ERRBUF_SIZE];
        snprintf(text, sizeof text, "%.*s", msg && msg->type == JSON_STRING ? (int)msg->len : 0,
                 msg && msg->type == JSON_STRING ? msg->str : "");
        on_reject(im, i, OCT_EINVAL, text);
        cur = i + 1;
    }
    json_arena_free(&a);
    return (long)n_ok;
}

static int batch_flush(import_t *im)
{
    if (!im->n) return 0;
    for (size_t i = 0; i < im->n; i++)
        im->dps[i].tags = im->tags + im->tag0[i];
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    long acc = im->live ? live_put(im, &eb)
                        : tsdb_put_batch(im->db, im->dps, im->n, on_reject, im, NULL, &eb);
    if (acc < 0) {
        cli_progress_break(&im->prog);
        fprintf(stderr, "octsdb import: %s: %s\n", im->path,
                eb.msg[0] ? eb.msg : oct_strerror((int)acc));
        im->fatal = IMPORT_EXIT_STORAGE;
    } else {
        im->points += (uint64_t)acc;
    }
    im->n = 0;
    im->n_tags = 0;
    progress(im, 0);
    return im->fatal;
}

/* Parses one line (without its newline) into the batch. Returns 0 or stops. */
static int parse_line(import_t *im, char *line, size_t len, uint64_t lineno)
{
    if (len && line[len - 1] == '\r') len--;
    if (len == 0) return 0;
    /* words split on single spaces, as Tags.splitString: metric, ts, value */
    const char *w[3];
    size_t wl[3];
    size_t p = 0;
    for (int k = 0; k < 3; k++) {
        if (p > len || (k > 0 && p == len)) {
            import_error(im, lineno, "not enough arguments (need metric, timestamp and value)", 55,
                         line, len);
            return im->skip_errors ? 0 : (im->fatal = IMPORT_EXIT_BADLINE);
        }
        size_t e = p;
        while (e < len && line[e] != ' ')
            e++;
        w[k] = line + p;
        wl[k] = e - p;
        p = e + 1;
    }
    char msg[OCT_ERRBUF_SIZE + 64];
    oct_errbuf_t eb;
    if (wl[0] == 0) {
        import_error(im, lineno, "invalid metric: ", 16, line, len);
        return im->skip_errors ? 0 : (im->fatal = IMPORT_EXIT_BADLINE);
    }
    tsdb_dp_t *dp = &im->dps[im->n];
    memset(dp, 0, sizeof *dp);
    int is_ms = 0;
    int rc = tsdb_parse_timestamp(w[1], wl[1], 0, &dp->pt.ts_ms, &is_ms, &eb);
    if (rc) {
        int n = snprintf(msg, sizeof msg, "invalid timestamp: %s", eb.msg);
        import_error(im, lineno, msg, (size_t)n, line, len);
        return im->skip_errors ? 0 : (im->fatal = IMPORT_EXIT_BADLINE);
    }
    if (wl[2] == 0 || tsdb_parse_value(w[2], wl[2], &dp->pt, &eb) != 0) {
        int n = snprintf(msg, sizeof msg, "invalid value: %s", wl[2] ? eb.msg : "");
        import_error(im, lineno, msg, (size_t)n, line, len);
        return im->skip_errors ? 0 : (im->fatal = IMPORT_EXIT_BADLINE);
    }
    size_t t0 = im->n_tags;
    while (p < len) {
        size_t e = p;
        while (e < len && line[e] != ' ')
            e++;
        if (e > p) {
            const char *t = line + p, *eq = memchr(t, '=', e - p);
            if (!eq || eq == t || eq == line + e - 1 ||
                memchr(eq + 1, '=', (size_t)(line + e - eq - 1))) {
                int n = snprintf(msg, sizeof msg, "invalid tag: %.*s", (int)(e - p), t);
                im->n_tags = t0;
                import_error(im, lineno, msg, (size_t)n, line, len);
                return im->skip_errors ? 0 : (im->fatal = IMPORT_EXIT_BADLINE);
            }
            if (im->n_tags + 2 > im->tags_cap) {
                im->tags_cap = im->tags_cap * 2 + 64;
                im->tags = xrealloc(im->tags, im->tags_cap * sizeof *im->tags);
            }
            im->tags[im->n_tags++] = oct_slice(t, (size_t)(eq - t));
            im->tags[im->n_tags++] = oct_slice(eq + 1, (size_t)(line + e - eq - 1));
        }
        p = e + 1;
    }
    dp->metric = oct_slice(w[0], wl[0]);
    dp->n_tags = (im->n_tags - t0) / 2;
    dp->ts_is_ms = (uint8_t)is_ms;
    im->tag0[im->n] = t0;
    im->lineno[im->n] = lineno;
    im->n++;
    if (im->n == IMPORT_BATCH) return batch_flush(im);
    return 0;
}

static int import_file(import_t *im, const char *path, char **bufp, size_t *capp)
{
    im->path = path;
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
    if (fd < 0) {
        fprintf(stderr, "octsdb import: %s: %s\n", path, strerror(errno));
        return IMPORT_EXIT_BADLINE;
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        fprintf(stderr, "octsdb import: %s: cannot open\n", path);
        return IMPORT_EXIT_BADLINE;
    }
    gzbuffer(gz, 256 * 1024);
    im->gz = gz;
    im->consumed = 0;
    size_t have = 0;
    uint64_t lineno = 0;
    int rc = 0;
    for (;;) {
        if (have == *capp) { /* a line longer than the buffer */
            *capp *= 2;
            *bufp = xrealloc(*bufp, *capp);
        }
        size_t want = *capp - have;
        if (want > INT32_MAX) want = INT32_MAX;
        int got = gzread(gz, *bufp + have, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *m = gzerror(gz, &zerr);
            fprintf(stderr, "octsdb import: %s: %s\n", path, zerr == Z_ERRNO ? strerror(errno) : m);
            rc = IMPORT_EXIT_BADLINE;
            break;
        }
        have += (size_t)got;
        int eof = got == 0;
        char *buf = *bufp, *p = buf, *end = buf + have;
        for (;;) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) {
                if (eof && p < end) { /* last line without a newline */
                    im->consumed += (uint64_t)(end - p);
                    rc = parse_line(im, p, (size_t)(end - p), ++lineno);
                    p = end;
                }
                break;
            }
            im->consumed += (uint64_t)(nl + 1 - p);
            rc = parse_line(im, p, (size_t)(nl - p), ++lineno);
            p = nl + 1;
            if (rc) break;
        }
        /* the batch points into the buffer: write it before moving anything
         * (after a bad line too: the lines before it are imported) */
        if (rc != IMPORT_EXIT_STORAGE) {
            int frc = batch_flush(im);
            if (!rc) rc = frc;
        }
        if (rc || im->fatal) {
            rc = rc ? rc : im->fatal;
            break;
        }
        have = (size_t)(end - p);
        memmove(buf, p, have);
        if (eof) break;
    }
    if (!rc && im->fatal) rc = im->fatal;
    if (rc) {
        im->n = 0;
        im->n_tags = 0;
    }
    off_t off = gzoffset(gz);
    im->bytes_done += off > 0 ? (uint64_t)off : 0;
    im->gz = NULL;
    gzclose(gz);
    return rc;
}

static void import_usage(FILE *f)
{
    fprintf(f, "usage: octsdb import [flags] path [more paths]\n"
               "Imports data points from files of lines `metric timestamp value tagk=tagv ...`.\n"
               "Files may be gzip'ed; `-` reads standard input.\n"
               "\nFlags:\n"
               "  --skip-errors  Report bad lines and go on instead of stopping at the first.\n"
               "  --auto-metric  Create metrics that have no UID yet.\n"
               "  --quiet        No progress line (it is drawn on stderr only when that is\n"
               "                 a terminal: percentage, points, rate and ETA).\n"
               "\nExit status: 0 done, 1 a bad line (without --skip-errors) or an unreadable\n"
               "file, 2 a storage error or bad usage.\n");
    cli_print_common_flags(f);
}

int cli_cmd_import(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        import_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("import", &argc, argv, &cfg);
    if (rc) return rc;
    import_t im = {0};
    int quiet = 0;
    char **files = xmalloc((size_t)argc * sizeof(char *));
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--skip-errors")) {
            im.skip_errors = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            fprintf(stderr, "octsdb import: unknown flag %s\n", argv[i]);
            nfiles = -1;
            break;
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles <= 0) {
        if (nfiles == 0) fprintf(stderr, "octsdb import: no file given\n");
        import_usage(stderr);
        free(files);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    rc = cli_open_or_live("import", cfg, &db, &im.live);
    if (rc) {
        free(files);
        oct_config_free(cfg);
        return IMPORT_EXIT_STORAGE;
    }
    im.db = db;
    im.auto_metric = oct_config_get_bool(cfg, "tsd.core.auto_create_metrics");
    /* The progress total: the sizes of the files, if all are regular files
     * (gzip'ed ones by their compressed size, as they are read). */
    uint64_t total = 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        if (strcmp(files[i], "-") && stat(files[i], &st) == 0 && S_ISREG(st.st_mode)) {
            total += (uint64_t)st.st_size;
        } else {
            total = 0;
            break;
        }
    }
    cli_progress_init(&im.prog, "points", total, quiet);
    im.dps = xmalloc(IMPORT_BATCH * sizeof *im.dps);
    im.tag0 = xmalloc(IMPORT_BATCH * sizeof *im.tag0);
    im.lineno = xmalloc(IMPORT_BATCH * sizeof *im.lineno);
    size_t cap = IMPORT_BUF;
    char *buf = xmalloc(cap);
    im.t0 = now_s();
    int status = 0;
    for (int i = 0; i < nfiles && !status; i++)
        status = import_file(&im, files[i], &buf, &cap);
    if (status != IMPORT_EXIT_STORAGE && im.live) {
        if (cli_live_flush("import", im.live)) status = IMPORT_EXIT_STORAGE;
    } else if (status != IMPORT_EXIT_STORAGE) {
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int frc = tsdb_flush(db, &eb);
        if (frc) {
            fprintf(stderr, "octsdb import: flush: %s\n", eb.msg[0] ? eb.msg : oct_strerror(frc));
            status = IMPORT_EXIT_STORAGE;
        }
    }
    progress(&im, 1);
    cli_progress_break(&im.prog);
    double dt = now_s() - im.t0;
    printf("Imported %" PRIu64 " data points in %.3fs (%.1f points/s), %" PRIu64 " errors\n",
           im.points, dt, dt > 0 ? (double)im.points / dt : 0.0, im.errors);
    fflush(stdout);
    if (db) tsdb_close(db);
    cli_live_close(im.live);
    for (size_t i = 0; i < im.metrics_cap; i++)
        free(im.metrics[i]);
    free(im.metrics);
    oct_strbuf_free(&im.body);
    oct_strbuf_free(&im.resp);
    free(buf);
    free(im.dps);
    free(im.tag0);
    free(im.lineno);
    free(im.tags);
    free(files);
    oct_config_free(cfg);
    return status;
}
