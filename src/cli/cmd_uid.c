/* cmd_uid.c -- `octsdb uid ...` and `octsdb mkmetric`, as OpenTSDB's
 * `tsdb uid` / `tsdb mkmetric`: same sub-commands, same output lines
 * ("<kind> <name>: [0, 0, 1]"), same exit statuses (0 found, 1 not found,
 * 2 usage, 3 storage error).
 *
 * Deliberate differences (docs/compat.md): kinds are accepted as
 * metric/metrics/tagk/tagv in any case (OpenTSDB uses the word verbatim as a
 * column qualifier, so `metric` silently finds nothing); the configured UID
 * widths are used instead of --idwidth (accepted and ignored); fsck exits 1
 * when it found problems instead of the error count, which wraps at 256. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_int.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"

static void uid_usage(FILE *f)
{
    fprintf(f, "usage: octsdb uid [flags] <subcommand> args\n"
               "Sub commands:\n"
               "  grep [kind] <RE>: Finds matching IDs.\n"
               "  assign <kind> <name> [names]: Assign an ID for the given name(s).\n"
               "  rename <kind> <name> <newname>: Renames this UID.\n"
               "  delete <kind> <name>: Deletes this UID.\n"
               "  fsck [fix] [delete_unknown] [--quiet]: Checks the consistency of UIDs (a\n"
               "    spinner with the elapsed time on a terminal's stderr, unless --quiet).\n"
               "        fix            - Fix errors. By default errors are only reported.\n"
               "        delete_unknown - Remove columns with unknown qualifiers.\n"
               "                         The \"fix\" flag must be supplied as well.\n"
               "  metasync: Creates missing TSMeta/UIDMeta from the stored series (created =\n"
               "        first point, counter = points) and corrects their created time.\n"
               "  metapurge: Deletes every TSMeta and UIDMeta.\n"
               "  treesync: Runs every TSMeta through the enabled trees (needs\n"
               "        tsd.core.tree.enable_processing).\n"
               "  treepurge <id> [true]: Deletes a tree's branches, leaves, collisions and\n"
               "        not-matched records; with true also its definition and rules.\n"
               "  [kind] <name>: Lookup the ID of this name.\n"
               "  [kind] <ID>: Lookup the name of this ID.\n"
               "Example values for [kind]: metrics, tagk (tag name), tagv (tag value).\n"
               "\nFlags:\n"
               "  --ignore-case, -i  Ignore case distinctions when matching a regexp.\n"
               "  --idwidth=N        Accepted for compatibility; the configured widths apply.\n");
    cli_print_common_flags(f);
}

static const char *uid_kind_name(codec_uid_kind_t k)
{
    return codec_uid_kind_qualifier(k);
}

static int uid_parse_kind(const char *s, codec_uid_kind_t *k)
{
    oct_errbuf_t eb;
    return codec_uid_kind_parse(s, strlen(s), k, &eb) == 0;
}

/* Prints "<kind> <name>: [0, 0, 1]". */
static void uid_print(codec_uid_kind_t k, const uint8_t *name, size_t len, uint64_t id,
                      unsigned width)
{
    uint8_t b[8];
    char jb[64];
    if (codec_uid_encode(id, width, b) != 0 || codec_uid_to_javabytes(b, width, jb, sizeof jb) < 0)
        snprintf(jb, sizeof jb, "%llu", (unsigned long long)id);
    printf("%s %.*s: %s\n", uid_kind_name(k), (int)len, (const char *)name, jb);
}

static int uid_report(const char *what, int rc, const oct_errbuf_t *eb)
{
    fprintf(stderr, "octsdb uid %s: %s\n", what, eb->msg[0] ? eb->msg : oct_strerror(rc));
    if (rc == OCT_ENOSUCHNAME || rc == OCT_ENOSUCHID || rc == OCT_EBADNAME || rc == OCT_EEXISTS ||
        rc == OCT_EEXHAUSTED)
        return CLI_EXIT_NOTFOUND;
    return CLI_EXIT_STORAGE;
}

static int uid_assign_names(uid_registry_t *r, codec_uid_kind_t k, int n, char **names)
{
    int status = CLI_EXIT_OK;
    for (int i = 0; i < n; i++) {
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        uint64_t id;
        int rc =
            uid_get_or_create(r, k, (const uint8_t *)names[i], strlen(names[i]), &id, NULL, &eb);
        if (rc) {
            int st = uid_report("assign", rc, &eb);
            if (st > status) status = st;
            continue;
        }
        uid_print(k, (const uint8_t *)names[i], strlen(names[i]), id, uid_width(r, k));
    }
    return status;
}

typedef struct {
    regex_t re;
    codec_uid_kind_t kind;
    struct uid_grep_hit {
        char *name;
        size_t len;
        codec_uid_kind_t kind;
        uint64_t id;
    } * hits;
    size_t n, cap;
} uid_grep_t;

static int uid_grep_cb(void *ctx, const uint8_t *name, size_t len, uint64_t id)
{
    uid_grep_t *g = ctx;
    char *z = xmalloc(len + 1);
    memcpy(z, name, len);
    z[len] = '\0';
    if (regexec(&g->re, z, 0, NULL, 0) != 0) {
        free(z);
        return 0;
    }
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->hits = xrealloc(g->hits, g->cap * sizeof *g->hits);
    }
    g->hits[g->n++] = (struct uid_grep_hit){z, len, g->kind, id};
    return 0;
}

/* OpenTSDB prints grep hits in row order of the UID table: by name, then kind. */
static int uid_grep_hit_cmp(const void *a, const void *b)
{
    const struct uid_grep_hit *x = a, *y = b;
    int c = oct_slice_cmp(oct_slice(x->name, x->len), oct_slice(y->name, y->len));
    return c ? c : (int)x->kind - (int)y->kind;
}

static int uid_grep(uid_registry_t *r, int argc, char **argv, int icase)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "Wrong number of arguments\n");
        uid_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    uid_grep_t g = {0};
    int only = -1;
    if (argc == 3) {
        codec_uid_kind_t k;
        if (!uid_parse_kind(argv[1], &k)) {
            fprintf(stderr, "octsdb uid grep: unknown kind '%s'\n", argv[1]);
            return CLI_EXIT_USAGE;
        }
        only = (int)k;
    }
    int rerr = regcomp(&g.re, argv[argc - 1], REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    if (rerr) {
        char msg[256];
        regerror(rerr, &g.re, msg, sizeof msg);
        fprintf(stderr, "octsdb uid grep: bad regular expression '%s': %s\n", argv[argc - 1], msg);
        return CLI_EXIT_USAGE;
    }
    int status = CLI_EXIT_OK;
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        if (only >= 0 && k != only) continue;
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        g.kind = (codec_uid_kind_t)k;
        int rc = uid_foreach(r, g.kind, uid_grep_cb, &g, &eb);
        if (rc) {
            status = uid_report("grep", rc, &eb);
            break;
        }
    }
    if (g.n) qsort(g.hits, g.n, sizeof *g.hits, uid_grep_hit_cmp);
    for (size_t i = 0; i < g.n; i++) {
        if (status == CLI_EXIT_OK)
            uid_print(g.hits[i].kind, (const uint8_t *)g.hits[i].name, g.hits[i].len, g.hits[i].id,
                      uid_width(r, g.hits[i].kind));
        free(g.hits[i].name);
    }
    if (status == CLI_EXIT_OK && g.n == 0) status = CLI_EXIT_NOTFOUND;
    free(g.hits);
    regfree(&g.re);
    return status;
}

/* `uid [kind] <name>` and `uid [kind] <id>`: a numeric argument is an ID,
 * as OpenTSDB decides with Long.parseLong. */
static int uid_lookup(uid_registry_t *r, int argc, char **argv)
{
    int only = -1;
    if (argc == 2) {
        codec_uid_kind_t k;
        if (!uid_parse_kind(argv[0], &k)) {
            fprintf(stderr, "octsdb uid: unknown kind or sub-command '%s'\n", argv[0]);
            uid_usage(stderr);
            return CLI_EXIT_USAGE;
        }
        only = (int)k;
    }
    const char *arg = argv[argc - 1];
    char *end;
    int is_id = 0;
    long long v = 0;
    if (*arg) {
        v = strtoll(arg, &end, 10);
        is_id =
            *end == '\0' && (arg[0] == '-' || arg[0] == '+' || (arg[0] >= '0' && arg[0] <= '9'));
    }
    int found = 0;
    for (int k = 0; k < CODEC_UID_N_KINDS; k++) {
        if (only >= 0 && k != only) continue;
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int rc;
        if (is_id) {
            uint8_t name[UID_NAME_MAX];
            size_t len = 0;
            if (v <= 0) {
                rc = oct_err(&eb, OCT_ENOSUCHID, "No such unique ID for '%s': %lld",
                             uid_kind_name((codec_uid_kind_t)k), v);
            } else {
                rc =
                    uid_get_name(r, (codec_uid_kind_t)k, (uint64_t)v, name, sizeof name, &len, &eb);
            }
            if (rc == 0) {
                uid_print((codec_uid_kind_t)k, name, len, (uint64_t)v,
                          uid_width(r, (codec_uid_kind_t)k));
                found = 1;
                continue;
            }
        } else {
            uint64_t id;
            rc = uid_get_id(r, (codec_uid_kind_t)k, (const uint8_t *)arg, strlen(arg), &id, &eb);
            if (rc == 0) {
                uid_print((codec_uid_kind_t)k, (const uint8_t *)arg, strlen(arg), id,
                          uid_width(r, (codec_uid_kind_t)k));
                found = 1;
                continue;
            }
        }
        if (rc != OCT_ENOSUCHID && rc != OCT_ENOSUCHNAME) return uid_report("lookup", rc, &eb);
        if (only >= 0) return uid_report("lookup", rc, &eb);
    }
    return found ? CLI_EXIT_OK : CLI_EXIT_NOTFOUND;
}

/* ctx: the spinner (or NULL), cleared from the terminal around the line. */
static void uid_fsck_print(void *ctx, codec_uid_kind_t kind, uid_fsck_problem_t p, const char *msg)
{
    cli_spinner_hold(ctx);
    printf("%s: %s: %s\n", kind < CODEC_UID_N_KINDS ? uid_kind_name(kind) : "(unknown kind)",
           uid_fsck_problem_name(p), msg);
    cli_spinner_release(ctx);
}

static int uid_fsck_args(int argc, char **argv, uid_fsck_opts_t *o, int *quiet)
{
    *quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "fix"))
            o->fix = 1;
        else if (!strcmp(argv[i], "--quiet"))
            *quiet = 1;
        else if (!strcmp(argv[i], "delete_unknown"))
            o->delete_unknown = 1;
        else {
            fprintf(stderr, "octsdb uid fsck: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    return 0;
}

/* The closing lines of `uid fsck` and its exit status. */
static int uid_fsck_summary(const uid_fsck_stats_t *stp, const uid_fsck_opts_t *op)
{
    uid_fsck_stats_t st = *stp;
    uid_fsck_opts_t o = *op;
    printf("%llu KVs analyzed\n", (unsigned long long)st.cells);
    for (int p = 0; p < UID_FSCK_PROBLEM_COUNT; p++)
        if (st.found[p])
            printf("%s: %llu\n", uid_fsck_problem_name((uid_fsck_problem_t)p),
                   (unsigned long long)st.found[p]);
    if (st.errors == 0) {
        printf("No errors found.\n");
        return CLI_EXIT_OK;
    }
    printf("%llu errors found.%s\n", (unsigned long long)st.errors,
           o.fix ? "" : " Run with fix to repair.");
    if (o.fix) printf("%llu repairs made.\n", (unsigned long long)st.fixed);
    return CLI_EXIT_NOTFOUND;
}

static int uid_fsck_cmd(uid_registry_t *r, int argc, char **argv)
{
    uid_fsck_opts_t o = {0};
    int quiet;
    if (uid_fsck_args(argc, argv, &o, &quiet)) return CLI_EXIT_USAGE;
    uid_fsck_stats_t st;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    cli_spinner_t *spin = cli_spinner_start("uid fsck", quiet);
    int rc = uid_fsck(r, &o, uid_fsck_print, spin, &st, &eb);
    cli_spinner_stop(spin, rc == 0);
    if (rc) return uid_report("fsck", rc, &eb);
    return uid_fsck_summary(&st, &o);
}

static int uid_run(uid_registry_t *r, int argc, char **argv, int icase)
{
    const char *sub = argv[0];
    codec_uid_kind_t k;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (!strcmp(sub, "grep")) return uid_grep(r, argc, argv, icase);
    if (!strcmp(sub, "fsck")) return uid_fsck_cmd(r, argc, argv);
    if (!strcmp(sub, "assign")) {
        if (argc < 3) goto wrong_args;
        if (!uid_parse_kind(argv[1], &k)) goto bad_kind;
        return uid_assign_names(r, k, argc - 2, argv + 2);
    }
    if (!strcmp(sub, "rename")) {
        if (argc != 4) goto wrong_args;
        if (!uid_parse_kind(argv[1], &k)) goto bad_kind;
        int rc = uid_rename(r, k, (const uint8_t *)argv[2], strlen(argv[2]),
                            (const uint8_t *)argv[3], strlen(argv[3]), &eb);
        if (rc) return uid_report("rename", rc, &eb);
        printf("%s %s -> %s\n", uid_kind_name(k), argv[2], argv[3]);
        return CLI_EXIT_OK;
    }
    if (!strcmp(sub, "delete")) {
        if (argc != 3) goto wrong_args;
        if (!uid_parse_kind(argv[1], &k)) goto bad_kind;
        int rc = uid_delete(r, k, (const uint8_t *)argv[2], strlen(argv[2]), &eb);
        if (rc) return uid_report("delete", rc, &eb);
        fprintf(stderr, "UID %s %s deleted.\n", uid_kind_name(k), argv[2]);
        return CLI_EXIT_OK;
    }
    if (argc == 1 || argc == 2) return uid_lookup(r, argc, argv);
wrong_args:
    fprintf(stderr, "Wrong number of arguments\n");
    uid_usage(stderr);
    return CLI_EXIT_USAGE;
bad_kind:
    fprintf(stderr, "octsdb uid %s: unknown kind '%s' (use metrics, tagk or tagv)\n", sub, argv[1]);
    return CLI_EXIT_USAGE;
}

/* Removes the uid command's own flags from argv; returns -1 on a bad flag. */
static int uid_flags(int *argc, char **argv, int *icase)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--ignore-case") || !strcmp(a, "-i")) {
            *icase = 1;
        } else if (!strncmp(a, "--idwidth=", 10)) {
            /* compatibility only */
        } else if (!strcmp(a, "--idwidth")) {
            if (i + 1 >= *argc) return -1;
            i++;
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    return 0;
}

/* ---- through a running TSD (docs/cli-live.md) ------------------------------
 * assign/mkmetric, rename, delete and fsck go to the TSD that holds the data
 * dir (its UID caches and write path must see them at once); the lookups
 * and grep read the store read-only (UIDs are in the store once assigned). */

static const char *const uid_api_type[CODEC_UID_N_KINDS] = {"metric", "tagk", "tagv"};

/* Reports a failed request: 1 for the TSD's refusal (no such name, name
 * taken, bad name: what uid_report maps to 1), 3 when it could not answer. */
static int uid_live_fail(const char *what, int st, const oct_strbuf_t *resp, const oct_errbuf_t *eb)
{
    char msg[600];
    if (st < 0)
        snprintf(msg, sizeof msg, "%s", eb->msg);
    else
        cli_live_error_message(resp, msg, sizeof msg);
    fprintf(stderr, "octsdb uid %s: %s\n", what, msg);
    return st == 400 || st == 404 ? CLI_EXIT_NOTFOUND : CLI_EXIT_STORAGE;
}

/* The UID in "<hex>" or "...UID: <hex>" printed as uid_print does. */
static int uid_live_print_hex(codec_uid_kind_t k, const char *name, const json_value_t *v)
{
    if (!v || v->type != JSON_STRING) return -1;
    const char *h = v->str;
    size_t n = v->len;
    const char *tag = memmem(h, n, "UID: ", 5);
    if (tag) {
        n -= (size_t)(tag + 5 - h);
        h = tag + 5;
    } else if (n > 16) {
        return -1; /* an error message, not a UID */
    }
    uint8_t b[8];
    if (n == 0 || n % 2 || n > 16 || codec_uid_from_hex(h, n, n / 2, b, NULL) != 0) return -1;
    uid_print(k, (const uint8_t *)name, strlen(name), codec_uid_decode(b, (unsigned)(n / 2)),
              (unsigned)(n / 2));
    return 0;
}

static int uid_live_assign(cli_live_t *l, codec_uid_kind_t k, int n, char **names)
{
    int status = CLI_EXIT_OK;
    oct_strbuf_t body = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    for (int i = 0; i < n; i++) {
        json_writer_t w;
        oct_strbuf_reset(&body);
        json_w_init(&w, &body);
        json_w_obj_begin(&w);
        json_w_key(&w, uid_api_type[k]);
        json_w_arr_begin(&w);
        json_w_str(&w, names[i]);
        json_w_arr_end(&w);
        json_w_obj_end(&w);
        oct_errbuf_t eb;
        oct_errbuf_clear(&eb);
        int st = cli_live_http(l, "POST", "/api/uid/assign", body.ptr, body.len, &resp, &eb);
        json_arena_t a = JSON_ARENA_INIT;
        json_value_t *v = NULL;
        int done = 0;
        if ((st == 200 || st == 400) && json_parse(&a, resp.ptr, resp.len, 0, &v, &eb) == 0) {
            char ek[32];
            snprintf(ek, sizeof ek, "%s_errors", uid_api_type[k]);
            const json_value_t *ok = json_obj_get(json_obj_get(v, uid_api_type[k]), names[i]);
            const json_value_t *err = json_obj_get(json_obj_get(v, ek), names[i]);
            /* a name that exists is no error for the command: it prints its UID */
            if (uid_live_print_hex(k, names[i], ok ? ok : err) == 0) {
                done = 1;
            } else if (err && err->type == JSON_STRING) {
                fprintf(stderr, "octsdb uid assign: %.*s\n", (int)err->len, err->str);
                if (status < CLI_EXIT_NOTFOUND) status = CLI_EXIT_NOTFOUND;
                done = 1;
            }
        }
        json_arena_free(&a);
        if (!done) {
            int rc = uid_live_fail("assign", st, &resp, &eb);
            if (rc > status) status = rc;
        }
    }
    oct_strbuf_free(&body);
    oct_strbuf_free(&resp);
    return status;
}

/* "name" URL-encoded into sb. */
static void uid_live_urlenc(oct_strbuf_t *sb, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~')
            oct_strbuf_append(sb, s, 1);
        else
            oct_strbuf_printf(sb, "%%%02X", ch);
    }
}

static uint64_t uid_live_u64(const json_value_t *v)
{
    int64_t x;
    return v && v->type == JSON_NUMBER && json_number_i64(v, &x) == 0 && x > 0 ? (uint64_t)x : 0;
}

static int uid_live_fsck(cli_live_t *l, int argc, char **argv)
{
    uid_fsck_opts_t o = {0};
    int quiet;
    if (uid_fsck_args(argc, argv, &o, &quiet)) return CLI_EXIT_USAGE;
    char target[64];
    snprintf(target, sizeof target, "/api/octsdb/uid/fsck%s%s", o.fix ? "?fix" : "",
             o.delete_unknown ? (o.fix ? "&delete_unknown" : "?delete_unknown") : "");
    oct_strbuf_t resp = OCT_STRBUF_INIT;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    cli_spinner_t *spin = cli_spinner_start("uid fsck", quiet);
    int st = cli_live_http(l, "POST", target, NULL, 0, &resp, &eb);
    cli_spinner_stop(spin, st == 200);
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v = NULL;
    int status;
    if (st != 200 || json_parse(&a, resp.ptr, resp.len, 0, &v, &eb) != 0) {
        status = uid_live_fail("fsck", st == 200 ? -1 : st, &resp, &eb);
        if (status == CLI_EXIT_NOTFOUND) status = CLI_EXIT_STORAGE;
    } else {
        uid_fsck_stats_t fs = {0};
        const json_value_t *pr = json_obj_get(v, "problems");
        for (const json_value_t *e = pr ? pr->child : NULL; e; e = e->next) {
            const json_value_t *kd = e->child, *pn = kd ? kd->next : NULL;
            const json_value_t *m = pn ? pn->next : NULL;
            if (!m) continue;
            printf("%.*s: %.*s: %.*s\n", kd->type == JSON_STRING ? (int)kd->len : 14,
                   kd->type == JSON_STRING ? kd->str : "(unknown kind)", (int)pn->len, pn->str,
                   (int)m->len, m->str);
        }
        const json_value_t *found = json_obj_get(v, "found");
        for (int p = 0; p < UID_FSCK_PROBLEM_COUNT; p++)
            fs.found[p] =
                uid_live_u64(json_obj_get(found, uid_fsck_problem_name((uid_fsck_problem_t)p)));
        fs.cells = uid_live_u64(json_obj_get(v, "cells"));
        fs.errors = uid_live_u64(json_obj_get(v, "errors"));
        fs.fixed = uid_live_u64(json_obj_get(v, "fixed"));
        status = uid_fsck_summary(&fs, &o);
    }
    json_arena_free(&a);
    oct_strbuf_free(&resp);
    return status;
}

/* Runs argv through the TSD, or returns -1 for a sub-command that reads
 * (the caller opens the store read-only). */
static int uid_live_run(cli_live_t *l, int argc, char **argv, int mkmetric)
{
    if (mkmetric) return uid_live_assign(l, CODEC_UID_METRIC, argc, argv);
    const char *sub = argv[0];
    codec_uid_kind_t k;
    int nargs = !strcmp(sub, "rename") ? 4 : !strcmp(sub, "delete") ? 3 : 0;
    if (!strcmp(sub, "fsck")) return uid_live_fsck(l, argc, argv);
    if (strcmp(sub, "assign") && !nargs) return -1;
    if (nargs ? argc != nargs : argc < 3) {
        fprintf(stderr, "Wrong number of arguments\n");
        uid_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!uid_parse_kind(argv[1], &k)) {
        fprintf(stderr, "octsdb uid %s: unknown kind '%s' (use metrics, tagk or tagv)\n", sub,
                argv[1]);
        return CLI_EXIT_USAGE;
    }
    if (!nargs) return uid_live_assign(l, k, argc - 2, argv + 2);
    oct_strbuf_t target = OCT_STRBUF_INIT, resp = OCT_STRBUF_INIT;
    if (nargs == 4)
        oct_strbuf_printf(&target, "/api/uid/rename?%s=", uid_api_type[k]);
    else
        oct_strbuf_printf(&target, "/api/octsdb/uid/delete?type=%s&name=", uid_api_type[k]);
    uid_live_urlenc(&target, argv[2]);
    if (nargs == 4) {
        oct_strbuf_puts(&target, "&name=");
        uid_live_urlenc(&target, argv[3]);
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int st = cli_live_http(l, "POST", target.ptr, NULL, 0, &resp, &eb);
    int status = CLI_EXIT_OK;
    if (nargs == 4 && st == 200) {
        printf("%s %s -> %s\n", uid_kind_name(k), argv[2], argv[3]);
    } else if (nargs == 4 && st == 400 && strstr(resp.ptr, "\"result\"")) {
        /* rename answers {"result":"false","error":"..."} */
        json_arena_t a = JSON_ARENA_INIT;
        json_value_t *v;
        const json_value_t *e =
            json_parse(&a, resp.ptr, resp.len, 0, &v, &eb) == 0 ? json_obj_get(v, "error") : NULL;
        fprintf(stderr, "octsdb uid rename: %.*s\n", e ? (int)e->len : 0, e ? e->str : "");
        json_arena_free(&a);
        status = CLI_EXIT_NOTFOUND;
    } else if (nargs == 3 && st == 204) {
        fprintf(stderr, "UID %s %s deleted.\n", uid_kind_name(k), argv[2]);
    } else {
        status = uid_live_fail(nargs == 4 ? "rename" : "delete", st, &resp, &eb);
    }
    oct_strbuf_free(&target);
    oct_strbuf_free(&resp);
    return status;
}

static int cmd_uid_common(int argc, char **argv, int mkmetric)
{
    const char *cmd = mkmetric ? "mkmetric" : "uid";
    if (cli_wants_help(argc, argv)) {
        if (mkmetric) {
            printf("usage: octsdb mkmetric [flags] <name> [names]\n"
                   "Assigns a UID to each metric name and prints it.\n");
            cli_print_common_flags(stdout);
        } else {
            uid_usage(stdout);
        }
        return CLI_EXIT_OK;
    }
    oct_config_t *cfg;
    int st = cli_config(cmd, &argc, argv, &cfg);
    if (st) return st;
    int icase = 0;
    if (uid_flags(&argc, argv, &icase) < 0) {
        fprintf(stderr, "octsdb %s: --idwidth needs a value\n", cmd);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    if (argc < 2) {
        fprintf(stderr, "Not enough arguments\n");
        if (mkmetric)
            fprintf(stderr, "usage: octsdb mkmetric [flags] <name> [names]\n");
        else
            uid_usage(stderr);
        oct_config_free(cfg);
        return CLI_EXIT_USAGE;
    }
    tsdb_t *db;
    cli_live_t *live;
    st = cli_open_or_live(cmd, cfg, &db, &live);
    int meta = !mkmetric && (!strcmp(argv[1], "metasync") || !strcmp(argv[1], "metapurge"));
    int tree = !mkmetric && (!strcmp(argv[1], "treesync") || !strcmp(argv[1], "treepurge"));
    if (st == 0 && live && tree) {
        st = cli_uid_tree_live(live, cfg, argc - 1, argv + 1);
        cli_live_close(live);
        oct_config_free(cfg);
        return st;
    }
    if (st == 0 && live && meta) {
        /* no endpoint runs them inside the TSD yet, and a read-only open
         * would silently write nothing (docs/meta-sync.md) */
        fprintf(stderr, "octsdb %s: %s needs the data dir to itself: stop the TSD first\n", cmd,
                argv[1]);
        cli_live_close(live);
        oct_config_free(cfg);
        return CLI_EXIT_STORAGE;
    }
    if (st == 0 && live) {
        st = uid_live_run(live, argc - 1, argv + 1, mkmetric);
        cli_live_close(live);
        if (st < 0)
            st = cli_open_db(cmd, cfg, TSDB_OPEN_READONLY, &db);
        else
            db = NULL;
    }
    if (st == 0 && db) {
        uid_registry_t *r = tsdb_uids(db);
        if (mkmetric)
            st = uid_assign_names(r, CODEC_UID_METRIC, argc - 1, argv + 1);
        else if (meta)
            st = cli_uid_meta(db, argc - 1, argv + 1);
        else if (tree)
            st = cli_uid_tree(db, cfg, argc - 1, argv + 1);
        else
            st = uid_run(r, argc - 1, argv + 1, icase);
        tsdb_close(db);
    }
    oct_config_free(cfg);
    return st;
}

int cli_cmd_uid(int argc, char **argv)
{
    return cmd_uid_common(argc, argv, 0);
}

int cli_cmd_mkmetric(int argc, char **argv)
{
    return cmd_uid_common(argc, argv, 1);
}
