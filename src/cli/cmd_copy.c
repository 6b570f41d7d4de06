/* cmd_copy.c -- `octsdb copy --from=SRC --to=DST [flags]`: copies a whole
 * data set between the embedded store and RADOS (tsdb/copy.h does the
 * work; this file parses arguments and prints). SRC and DST are a data dir
 * path or rados:POOL[/NAMESPACE]. Prints, on stdout, one line per table
 *   tsdb: 1234 cells (source 1234)
 * and "Copy complete" / "Copy incomplete" / "Count mismatch".
 * Exit status 0 done and counts equal, 1 counts differ, 2 usage, 3 storage
 * error or refusal, 4 stopped by --max-partitions (run again to continue). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "tsdb/copy.h"

enum { COPY_EXIT_MISMATCH = 1, COPY_EXIT_PARTIAL = 4 };

static void copy_usage(FILE *f)
{
    fprintf(f, "usage: octsdb copy --from=SRC --to=DST [--rados-conf=PATH] [--rados-user=NAME]\n"
               "                   [--batch=N] [--max-partitions=N] [--check] [--quiet] [flags]\n"
               "Copies a whole data set (data, annotations, UIDs with their numbers and\n"
               "counters, meta, trees, the layout record) from SRC to DST, each a data dir path\n"
               "(the embedded store) or rados:POOL[/NAMESPACE] (a Ceph RADOS pool; the namespace\n"
               "defaults to tsd.storage.rados.namespace). DST must be empty, or an unfinished\n"
               "copy of the same SRC: the copy records the last partition done in DST and a\n"
               "second run continues from there. A data dir SRC is opened read-write first (its\n"
               "write-ahead log is flushed), so its TSD must be stopped. At the end the cells\n"
               "of every table are counted on both sides.\n"
               "  --rados-conf=PATH   ceph.conf (tsd.storage.rados.conf)\n"
               "  --rados-user=NAME   client name without \"client.\" (tsd.storage.rados.user)\n"
               "  --batch=N           cells per write (default 1000)\n"
               "  --max-partitions=N  stop after N partitions (run again to continue)\n"
               "  --check             copy nothing: only count and compare both sides\n"
               "  --quiet             no progress line on a terminal\n"
               "\nExit status: 0 copied and counts equal, 1 counts differ, 2 usage, 3 storage\n"
               "error or refused, 4 stopped by --max-partitions.\n");
    cli_print_common_flags(f);
}

static void copy_progress(void *ctx, uint64_t parts, uint64_t cells)
{
    (void)parts;
    cli_progress_update(ctx, 0, cells, 0);
}

/* "--name=value" -> value, else NULL. */
static const char *flag_value(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && arg[n] == '=' ? arg + n + 1 : NULL;
}

static int parse_count(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (!*v || *end || x == 0) return -1;
    *out = x;
    return 0;
}

int cli_cmd_copy(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        copy_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("copy", &argc, argv, &cfg);
    if (rc) return rc;
    tsdb_copy_opts_t o = {.cfg = cfg};
    int quiet = 0;
    uint64_t batch = 0;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if ((v = flag_value(a, "--from")))
            o.from = v;
        else if ((v = flag_value(a, "--to")))
            o.to = v;
        else if ((v = flag_value(a, "--rados-conf")))
            rc = oct_config_set(cfg, "tsd.storage.rados.conf", v, &eb);
        else if ((v = flag_value(a, "--rados-user")))
            rc = oct_config_set(cfg, "tsd.storage.rados.user", v, &eb);
        else if ((v = flag_value(a, "--batch")))
            rc = parse_count(v, &batch);
        else if ((v = flag_value(a, "--max-partitions")))
            rc = parse_count(v, &o.max_parts);
        else if (!strcmp(a, "--check"))
            o.check_only = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else
            rc = -1;
        if (rc) {
            fprintf(stderr, "octsdb copy: bad argument '%s'%s%s\n", a, eb.msg[0] ? ": " : "",
                    eb.msg);
            break;
        }
    }
    if (!rc && (!o.from || !o.to || !*o.from || !*o.to)) {
        fprintf(stderr, "octsdb copy: --from and --to are required\n");
        rc = -1;
    }
    if (rc) {
        copy_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    o.batch = (size_t)batch;
    cli_progress_t pr;
    cli_progress_init(&pr, "cells", 0, quiet);
    o.progress = copy_progress;
    o.progress_ctx = &pr;
    tsdb_copy_stats_t st;
    rc = tsdb_copy(&o, &st, &eb);
    if (st.parts_copied) cli_progress_update(&pr, 0, st.cells_copied, 1);
    cli_progress_break(&pr);
    oct_config_free(cfg);
    if (rc < 0) {
        fprintf(stderr, "octsdb copy: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    if (st.resumed) printf("Resumed an unfinished copy\n");
    if (!o.check_only)
        printf("Copied %" PRIu64 " partitions, %" PRIu64 " cells\n", st.parts_copied,
               st.cells_copied);
    if (rc == TSDB_COPY_PARTIAL) {
        printf("Copy incomplete: stopped after %" PRIu64 " partitions; run again to continue\n",
               st.parts_copied);
        return COPY_EXIT_PARTIAL;
    }
    for (unsigned t = 0; t < TSDB_COPY_NTABLES; t++)
        printf("%s: %" PRIu64 " cells (source %" PRIu64 ")%s\n", tsdb_copy_table_name(t),
               st.dst_cells[t], st.src_cells[t],
               st.dst_cells[t] != st.src_cells[t] ? " MISMATCH" : "");
    if (rc == TSDB_COPY_MISMATCH) {
        printf("Count mismatch\n");
        fprintf(stderr, "octsdb copy: the cell counts of source and destination differ\n");
        return COPY_EXIT_MISMATCH;
    }
    printf(o.check_only ? "Counts equal\n" : "Copy complete\n");
    return CLI_EXIT_OK;
}
