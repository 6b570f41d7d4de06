/* config_check.c -- the daemon's start-up check of a configuration (config.h,
 * oct_config_check): 2.4 plugins octsdb does not have, and unknown tsd.* keys.
 *
 * OpenTSDB 2.4 stops when an enabled plugin cannot be loaded; octsdb loads no
 * plugins, so enabling one is refused the same way, with what octsdb offers
 * instead. An unknown tsd.* key is most often a typo that would otherwise
 * silently mean "the default": it is reported with the nearest known key
 * when that one is close enough to be the intended one. */
#include "common/config.h"

#include <stdlib.h>
#include <string.h>

#include "common/config_int.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"

/* The 2.4 switches that load a plugin, and what octsdb has in its place. A
 * boolean switch refuses "true"; a list (rpc plugins) refuses any value. */
static const struct {
    const char *key;
    int is_list;
    const char *instead;
} check_plugins[] = {
    {"tsd.search.enable", 0,
     "octsdb has no search plugins; /api/search/lookup, tsmeta, tsmeta_summary, tsuids and "
     "uidmeta are built in (docs/api-search.md)"},
    {"tsd.rtpublisher.enable", 0,
     "octsdb has no real-time publisher; read new points with /api/query/last"},
    {"tsd.rpc.plugins", 1,
     "octsdb has no RPC plugins; telnet and HTTP (/api/put) are built in on one port"},
    {"tsd.http.rpc.plugins", 1, "octsdb has no HTTP RPC plugins; the HTTP API is built in"},
    {"tsd.startup.enable", 0,
     "octsdb has no start-up plugins; run such a hook beside the daemon (it logs "
     "'Ready to serve' when listening)"},
    {"tsd.core.storage_exception_handler.enable", 0,
     "octsdb has no storage-exception handler; points are kept in the write-ahead log until "
     "the store takes them (docs/reliability.md)"},
    {"tsd.uidfilter.enable", 0,
     "octsdb has no UID filter plugins; use tsd.core.auto_create_metrics, "
     "tsd.core.auto_create_tagks and tsd.core.auto_create_tagvs"},
    {"tsd.timeseriesfilter.enable", 0,
     "octsdb has no time-series filter plugins; filter in the collector"},
    {"tsd.core.meta.cache.enable", 0,
     "octsdb has no meta cache plugins; meta tracking is built in "
     "(tsd.core.meta.enable_realtime_ts)"},
};

/* Levenshtein distance of a and b, giving up (returning limit + 1) once it
 * exceeds limit: only near keys matter. */
static size_t check_distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > limit) return limit + 1;
    size_t *row = xmalloc((lb + 1) * sizeof *row);
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0], best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v) v = up + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > limit) {
            free(row);
            return limit + 1;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

const char *oct_config_suggest(const char *key)
{
    /* A third of the key's length, at most 4: "tsd.mdoe" finds tsd.mode, but
     * a plugin's own keys (tsd.search.elasticsearch.host) find nothing. */
    size_t limit = strlen(key) / 3;
    if (limit > 4) limit = 4;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < oct_config__n_keys; i++) {
        size_t d = check_distance(key, oct_config__keys[i].name, limit);
        if (d < best_d) {
            best_d = d;
            best = oct_config__keys[i].name;
        }
    }
    return best;
}

typedef struct {
    char **msgs;
    size_t n, cap;
} check_list_t;

static int check_unknown_cb(void *ctx, const char *key, const char *value)
{
    (void)value;
    check_list_t *l = ctx;
    if (strncmp(key, "tsd.", 4) || oct_config_is_known(key)) return 0;
    /* table.<name> and metric.<prefix>: names of the operator's, checked
     * (unknown ones refused) when the data dir opens (tsdb/retention.c) */
    if (strncmp(key, "tsd.storage.retention.", 22) == 0) return 0;
    oct_strbuf_t sb = {0};
    oct_strbuf_printf(&sb, "unknown configuration key '%s' is ignored", key);
    const char *near = oct_config_suggest(key);
    if (near) oct_strbuf_printf(&sb, "; did you mean '%s'?", near);
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->msgs = xrealloc(l->msgs, l->cap * sizeof *l->msgs);
    }
    l->msgs[l->n++] = xstrdup(oct_strbuf_cstr(&sb));
    oct_strbuf_free(&sb);
    return 0;
}

int oct_config_check(const oct_config_t *cfg, char ***warnings, size_t *n_warnings,
                     oct_errbuf_t *eb)
{
    *warnings = NULL;
    *n_warnings = 0;
    for (size_t i = 0; i < sizeof check_plugins / sizeof *check_plugins; i++) {
        const char *k = check_plugins[i].key;
        const char *v = oct_config_get(cfg, k);
        int on = check_plugins[i].is_list ? v && v[strspn(v, " \t,")] : oct_config_get_bool(cfg, k);
        if (on)
            return oct_err(eb, OCT_ECONFIG, "%s=%s: this OpenTSDB plugin is not available: %s", k,
                           v, check_plugins[i].instead);
    }
    check_list_t l = {0};
    (void)oct_config_foreach(cfg, check_unknown_cb, &l);
    *warnings = l.msgs;
    *n_warnings = l.n;
    return 0;
}

void oct_config_warnings_free(char **warnings, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(warnings[i]);
    free(warnings);
}
