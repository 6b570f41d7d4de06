/* cmd_search.c -- `octsdb search TYPE [QUERY...] [--limit=N] [--start=N]`:
 * the HTTP API's plugin-free search (tsdb/search.h: same grammar, same
 * order, same paging) on the command line. The QUERY words are joined with
 * spaces. One line per result:
 *   tsuids           <TSUID hex>
 *   tsmeta_summary   <TSUID hex> <metric> <tagk>=<tagv> ... (tags by name)
 *   uidmeta          <metric|tagk|tagv> <UID hex> <name>
 *   annotation       <TSUID hex or -> <startTime> <endTime> <description>
 * `search annotation --reindex` rebuilds the annotation index instead
 * (tsdb_annotation_reindex; refused beside a TSD).
 * then, on stderr, "<shown> of <total> results". Works while a TSD runs
 * (the data dir is then opened read-only with its series index).
 * Exit status 0 (something printed), 1 nothing matched, 2 usage or a query
 * the grammar refuses, 3 storage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "codec/uid_bytes.h"
#include "common/bytes.h"
#include "common/strbuf.h"
#include "common/json.h"
#include "tsdb/annotation.h"
#include "tsdb/search.h"
#include "uid/uid.h"

static void search_usage(FILE *f)
{
    fprintf(f, "usage: octsdb search tsuids|tsmeta_summary|uidmeta|annotation [QUERY...]"
               " [--limit=N] [--start=N]\n"
               "       octsdb search annotation --reindex\n"
               "Searches the series index (tsuids, tsmeta_summary) or the UID names (uidmeta)\n"
               "as /api/search does. QUERY: terms that must all hold, e.g. 'sys.cpu.*'\n"
               "'host:web*' 'dc:east' 'tagk:iface' 'tagv:eth0' (series), 'name:web*'\n"
               "'type:tagv' (uidmeta), 'deploy*' 'custom.owner:bob' 'metric:sys.*'\n"
               "(annotation); '*' is the only wildcard. --limit=0 (the default) prints\n"
               "every match. --reindex indexes the annotations already in the data table\n"
               "(written before the index existed, or by OpenTSDB); not beside a TSD.\n"
               "\nExit status: 0 found, 1 nothing found, 2 usage, 3 storage error.\n");
    cli_print_common_flags(f);
}

typedef struct {
    tsdb_t *db;
    int summary;
    size_t shown;
    oct_strbuf_t line;
    oct_errbuf_t *eb;
} search_out_t;

typedef struct {
    const uint8_t *k, *v;
    size_t kl, vl;
} pair_t;

static int pair_cmp(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    return oct_slice_cmp(oct_slice(x->k, x->kl), oct_slice(y->k, y->kl));
}

static int series_line(void *ctx, const uint8_t *tsuid, size_t len)
{
    search_out_t *o = ctx;
    char hex[2 * 8 * 64 + 1];
    if (codec_uid_to_hex(tsuid, len, hex, sizeof hex) < 0) return OCT_EINVAL;
    oct_strbuf_reset(&o->line);
    oct_strbuf_puts(&o->line, hex);
    if (o->summary) {
        const tsdb_layout_t *l = tsdb_layout(o->db);
        unsigned mw = l->uid_width[0], kw = l->uid_width[1], vw = l->uid_width[2];
        uid_registry_t *u = tsdb_uids(o->db);
        size_t np = (len - mw) / (kw + vw);
        /* names of the metric and of each pair, kept until printed */
        uint8_t(*names)[UID_NAME_MAX] = malloc((1 + 2 * np) * sizeof *names);
        size_t *lens = malloc((1 + 2 * np) * sizeof *lens);
        pair_t *pairs = malloc((np ? np : 1) * sizeof *pairs);
        int rc = uid_get_name(u, CODEC_UID_METRIC, codec_uid_decode(tsuid, mw), names[0],
                              UID_NAME_MAX, &lens[0], o->eb);
        for (size_t i = 0; !rc && i < np; i++) {
            const uint8_t *p = tsuid + mw + i * (kw + vw);
            rc = uid_get_name(u, CODEC_UID_TAGK, codec_uid_decode(p, kw), names[1 + 2 * i],
                              UID_NAME_MAX, &lens[1 + 2 * i], o->eb);
            if (!rc)
                rc = uid_get_name(u, CODEC_UID_TAGV, codec_uid_decode(p + kw, vw), names[2 + 2 * i],
                                  UID_NAME_MAX, &lens[2 + 2 * i], o->eb);
            pairs[i] =
                (pair_t){names[1 + 2 * i], names[2 + 2 * i], lens[1 + 2 * i], lens[2 + 2 * i]};
        }
        if (!rc) {
            qsort(pairs, np, sizeof *pairs, pair_cmp);
            oct_strbuf_printf(&o->line, " %.*s", (int)lens[0], (const char *)names[0]);
            for (size_t i = 0; i < np; i++)
                oct_strbuf_printf(&o->line, " %.*s=%.*s", (int)pairs[i].kl,
                                  (const char *)pairs[i].k, (int)pairs[i].vl,
                                  (const char *)pairs[i].v);
        }
        free(names);
        free(lens);
        free(pairs);
        if (rc) return rc;
    }
    printf("%s\n", oct_strbuf_cstr(&o->line));
    o->shown++;
    return 0;
}

/* annotation: <tsuid|-> <startTime> <endTime> <description> */
static int note_line(void *ctx, const char *json, size_t len)
{
    search_out_t *o = ctx;
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t jeb;
    if (json_parse(&a, json, len, JSON_ALLOW_NONFINITE, &v, &jeb)) {
        json_arena_free(&a);
        return OCT_ECORRUPT;
    }
    const json_value_t *t = json_obj_get(v, "tsuid"), *d = json_obj_get(v, "description");
    const json_value_t *st = json_obj_get(v, "startTime"), *en = json_obj_get(v, "endTime");
    printf("%.*s %.*s %.*s %.*s\n", t && t->type == JSON_STRING ? (int)t->len : 1,
           t && t->type == JSON_STRING ? t->str : "-", st ? (int)st->len : 1, st ? st->str : "0",
           en ? (int)en->len : 1, en ? en->str : "0", d && d->type == JSON_STRING ? (int)d->len : 0,
           d && d->type == JSON_STRING ? d->str : "");
    json_arena_free(&a);
    o->shown++;
    return 0;
}

static int uid_line(void *ctx, codec_uid_kind_t kind, uint64_t id, const uint8_t *name, size_t len)
{
    static const char *const kinds[] = {"metric", "tagk", "tagv"};
    search_out_t *o = ctx;
    uint8_t raw[CODEC_UID_MAX_WIDTH];
    unsigned w = tsdb_layout(o->db)->uid_width[kind];
    char hex[2 * CODEC_UID_MAX_WIDTH + 1];
    if (codec_uid_encode(id, w, raw) || codec_uid_to_hex(raw, w, hex, sizeof hex) < 0)
        return OCT_EINVAL;
    printf("%s %s %.*s\n", kinds[kind], hex, (int)len, (const char *)name);
    o->shown++;
    return 0;
}

/* "--name=N" -> *out; 1 if argument matched, -1 if malformed, 0 otherwise. */
static int num_flag(const char *arg, const char *name, size_t *out)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) || arg[n] != '=') return 0;
    char *end;
    long v = strtol(arg + n + 1, &end, 10);
    if (!arg[n + 1] || *end || v < 0) return -1;
    *out = (size_t)v;
    return 1;
}

int cli_cmd_search(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        search_usage(stdout);
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int rc = cli_config("search", &argc, argv, &cfg);
    if (rc) return rc;
    size_t limit = 0, start = 0;
    int reindex = 0;
    const char *type = NULL;
    oct_strbuf_t q = OCT_STRBUF_INIT;
    int status = CLI_EXIT_OK;
    for (int i = 1; i < argc && status == CLI_EXIT_OK; i++) {
        int f = num_flag(argv[i], "--limit", &limit);
        if (!f) f = num_flag(argv[i], "--start", &start);
        if (!f && !strcmp(argv[i], "--reindex")) f = reindex = 1;
        if (f < 0 || (!f && argv[i][0] == '-' && argv[i][1] == '-')) {
            fprintf(stderr, "octsdb search: bad flag '%s'\n", argv[i]);
            status = CLI_EXIT_USAGE;
        } else if (!f && !type) {
            type = argv[i];
        } else if (!f) {
            if (q.len) oct_strbuf_puts(&q, " ");
            oct_strbuf_puts(&q, argv[i]);
        }
    }
    int series = type && (!strcmp(type, "tsuids") || !strcmp(type, "tsmeta_summary"));
    int notes = type && !strcmp(type, "annotation");
    if (status == CLI_EXIT_OK && !series && !notes && !(type && !strcmp(type, "uidmeta"))) {
        fprintf(stderr, "octsdb search: %s%s\n", type ? "unknown type: " : "missing type",
                type ? type : "");
        status = CLI_EXIT_USAGE;
    }
    if (status == CLI_EXIT_OK && reindex && (!notes || q.len)) {
        fprintf(stderr, "octsdb search: --reindex goes with 'annotation' and no query\n");
        status = CLI_EXIT_USAGE;
    }
    if (status != CLI_EXIT_OK) search_usage(stderr);
    tsdb_t *db = NULL;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (status == CLI_EXIT_OK) {
        /* a running TSD holds the lock: read its dir with the index loaded */
        rc = tsdb_open(cfg, 0, &db, &eb);
        if (rc == OCT_ELOCKED && reindex) {
            snprintf(eb.msg, sizeof eb.msg,
                     "--reindex needs the data dir to itself: a TSD holds "
                     "it (stop it, or let its puts index new notes)");
        } else if (rc == OCT_ELOCKED) {
            oct_errbuf_clear(&eb);
            rc = tsdb_open(cfg, TSDB_OPEN_READONLY | TSDB_OPEN_INDEX, &db, &eb);
        }
        if (rc) {
            fprintf(stderr, "octsdb search: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
            status = CLI_EXIT_STORAGE;
            db = NULL;
        }
    }
    if (status == CLI_EXIT_OK && reindex) {
        tsdb_annidx_stats_t st;
        rc = tsdb_annotation_reindex(db, &st, &eb);
        if (rc) {
            fprintf(stderr, "octsdb search: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
            status = CLI_EXIT_STORAGE;
        } else {
            printf("indexed %llu annotations, dropped %llu stale index rows\n",
                   (unsigned long long)st.notes, (unsigned long long)st.dropped);
        }
    } else if (status == CLI_EXIT_OK) {
        search_out_t o = {db, series && !strcmp(type, "tsmeta_summary"), 0, OCT_STRBUF_INIT, &eb};
        size_t total = 0;
        const char *qs = q.len ? oct_strbuf_cstr(&q) : "";
        if (notes)
            rc = tsdb_annotation_search(db, qs, start, limit, note_line, &o, &total, &eb);
        else if (series)
            rc = tsdb_search_series(db, qs, start, limit, series_line, &o, &total, &eb);
        else
            rc = tsdb_search_uids(db, qs, start, limit, uid_line, &o, &total, &eb);
        fflush(stdout);
        if (rc) {
            fprintf(stderr, "octsdb search: %s\n", eb.msg[0] ? eb.msg : oct_strerror(rc));
            status = rc == OCT_EPARSE ? CLI_EXIT_USAGE : CLI_EXIT_STORAGE;
        } else {
            fprintf(stderr, "%zu of %zu results\n", o.shown, total);
            if (!o.shown) status = CLI_EXIT_NOTFOUND;
        }
        oct_strbuf_free(&o.line);
    }
    if (db) tsdb_close(db);
    oct_strbuf_free(&q);
    oct_config_free(cfg);
    return status;
}
