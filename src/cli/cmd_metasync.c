/* cmd_metasync.c -- `octsdb uid metasync` and `octsdb uid metapurge`
 * (tsdb/metasync.h; docs/meta-sync.md): a progress line on a terminal
 * while series are read, then one summary line on stdout. They open the
 * data dir themselves, so they refuse to run beside a TSD (its lock). */
#include <stdio.h>
#include <string.h>

#include "cli/cli_int.h"
#include "tsdb/metasync.h"

static void sync_progress(void *ctx, const tsdb_metasync_stats_t *st)
{
    cli_progress_update(ctx, 0, st->series, 0);
}

int cli_uid_meta(tsdb_t *db, int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "octsdb uid %s: takes no arguments\n", argv[0]);
        return CLI_EXIT_USAGE;
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc;
    if (!strcmp(argv[0], "metasync")) {
        cli_progress_t p;
        cli_progress_init(&p, "series", 0, 0);
        tsdb_metasync_stats_t st;
        rc = tsdb_metasync(db, sync_progress, &p, &st, &eb);
        cli_progress_update(&p, 0, st.series, 1);
        cli_progress_break(&p);
        if (!rc)
            printf("metasync: %llu series, %llu points; TSMeta %llu created, %llu fixed; "
                   "%llu counters set; UIDMeta %llu created, %llu fixed\n",
                   (unsigned long long)st.series, (unsigned long long)st.points,
                   (unsigned long long)st.tsmeta_created, (unsigned long long)st.tsmeta_fixed,
                   (unsigned long long)st.counters_set, (unsigned long long)st.uidmeta_created,
                   (unsigned long long)st.uidmeta_fixed);
    } else {
        tsdb_metapurge_stats_t st;
        rc = tsdb_metapurge(db, &st, &eb);
        if (!rc)
            printf("metapurge: TSMeta of %llu series, %llu UIDMeta deleted\n",
                   (unsigned long long)st.tsmeta, (unsigned long long)st.uidmeta);
    }
    if (rc) {
        fprintf(stderr, "octsdb uid %s: %s\n", argv[0], eb.msg[0] ? eb.msg : oct_strerror(rc));
        return CLI_EXIT_STORAGE;
    }
    return CLI_EXIT_OK;
}
