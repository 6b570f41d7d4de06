/* config.c -- configuration map, value validation, .properties parsing and CLI flags.
 *
 * The map is a sorted array of entries: lookups are binary searches, foreach is a walk in
 * key order, and an unknown key is inserted in place. A few hundred keys at most, all set
 * at startup, so the memmove on insert never matters. Every known key has an entry from
 * oct_config_new() on (value NULL when it has no default), so an entry without a key
 * definition is exactly an unknown key.
 *
 * The .properties reader follows java.util.Properties.load: it first joins natural lines
 * into logical lines (continuations, comments, blank lines), then splits each logical line
 * into key and value at the first unescaped '=', ':' or whitespace, and finally decodes the
 * escapes of each. A file is parsed and validated completely before anything is applied,
 * so a bad file leaves the configuration as it was. */
#include "common/utf8.h"
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config_int.h"
#include "common/xmalloc.h"

/* Files above this are not configuration files; refuse rather than slurp them. */
#define CONFIG_MAX_FILE_BYTES (16u << 20)

typedef struct {
    const char *key;              /* def->name (static) for known keys, else malloc'd */
    char *value;                  /* malloc'd, or NULL = unset */
    const oct_config__key_t *def; /* NULL for keys we don't know */
} config_entry_t;

struct oct_config {
    config_entry_t *ents; /* sorted by strcmp(key) */
    size_t n, cap;
    char *file;                /* path of the loaded file, malloc'd, or NULL */
    const char *const *search; /* borrowed; NULL = default list */
};

static const char *const default_paths[] = {
    "./octsdb.conf",
    "./opentsdb.conf",
    "/etc/octsdb.conf",
    "/etc/octsdb/octsdb.conf",
    "/etc/opentsdb.conf",
    "/etc/opentsdb/opentsdb.conf",
    "/opt/opentsdb/opentsdb.conf",
    NULL,
};

/* ---------------------------------------------------------------------------------------- */
/* The map                                                                                  */

/* Index of key, or -(insertion point) - 1 if absent. */
static ptrdiff_t config_find(const oct_config_t *cfg, const char *key)
{
    size_t lo = 0, hi = cfg->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(cfg->ents[mid].key, key);
        if (c == 0) return (ptrdiff_t)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(ptrdiff_t)lo - 1;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const config_entry_t *)a)->key, ((const config_entry_t *)b)->key);
}

oct_config_t *oct_config_new(void)
{
    oct_config_t *cfg = xcalloc(1, sizeof *cfg);
    cfg->cap = oct_config__n_keys + 16;
    cfg->ents = xcalloc(cfg->cap, sizeof *cfg->ents);
    for (size_t i = 0; i < oct_config__n_keys; i++) {
        const oct_config__key_t *d = &oct_config__keys[i];
        cfg->ents[i].key = d->name;
        cfg->ents[i].value = d->def ? xstrdup(d->def) : NULL;
        cfg->ents[i].def = d;
    }
    cfg->n = oct_config__n_keys;
    qsort(cfg->ents, cfg->n, sizeof *cfg->ents, entry_cmp);
    return cfg;
}

void oct_config_free(oct_config_t *cfg)
{
    if (!cfg) return;
    for (size_t i = 0; i < cfg->n; i++) {
        if (!cfg->ents[i].def) free((char *)cfg->ents[i].key);
        free(cfg->ents[i].value);
    }
    free(cfg->ents);
    free(cfg->file);
    free(cfg);
}

int oct_config_is_known(const char *key)
{
    for (size_t i = 0; i < oct_config__n_keys; i++)
        if (strcmp(oct_config__keys[i].name, key) == 0) return 1;
    return 0;
}

const char *oct_config_file(const oct_config_t *cfg)
{
    return cfg->file;
}

/* ---------------------------------------------------------------------------------------- */
/* Values                                                                                   */

/* The span of s without leading and trailing ASCII whitespace: *len bytes from the result. */
static const char *trim_span(const char *s, size_t *len)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    *len = n;
    return s;
}

/* 1 true, 0 false, -1 not a boolean. */
static int parse_bool(const char *s)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    size_t n;
    s = trim_span(s, &n);
    for (size_t i = 0; i < 4; i++) {
        if (strlen(yes[i]) == n && strncasecmp(s, yes[i], n) == 0) return 1;
        if (strlen(no[i]) == n && strncasecmp(s, no[i], n) == 0) return 0;
    }
    return -1;
}

/* Base-10 int64 of the whole trimmed string; 0 on success, -1 if not an integer or out of
 * int64 range. */
static int parse_int(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0') return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE) return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0') return -1;
    *out = (int64_t)v;
    return 0;
}

/* Checks value against key's definition. Returns 0 or OCT_ECONFIG naming key and value. */
static int config_check(const oct_config__key_t *d, const char *key, const char *value,
                        oct_errbuf_t *eb)
{
    if (!d) return 0;
    bool empty = value[0] == '\0';
    if (empty) {
        if (d->flags & OCT_CFG_NONEMPTY || (d->type != OCT_CFG_STR && d->def))
            return oct_err(eb, OCT_ECONFIG, "%s: an empty value is not allowed", key);
        return 0;
    }
    if (d->flags & OCT_CFG_OFF && (d->type != OCT_CFG_BOOL || parse_bool(value) == 1))
        return oct_err(eb, OCT_ECONFIG,
                       "%s=%.80s: octsdb does not implement this feature yet (only %s is "
                       "accepted)",
                       key, value, d->type == OCT_CFG_BOOL ? "false" : "an empty value");
    switch (d->type) {
    case OCT_CFG_STR:
        return 0;
    case OCT_CFG_BOOL:
        if (parse_bool(value) >= 0) return 0;
        return oct_err(eb, OCT_ECONFIG,
                       "%s: invalid boolean '%.80s' (expected true/false, yes/no, on/off or 1/0)",
                       key, value);
    case OCT_CFG_INT: {
        int64_t v;
        if (parse_int(value, &v) < 0)
            return oct_err(eb, OCT_ECONFIG, "%s: invalid integer '%.80s'", key, value);
        if (v < d->min || v > d->max) {
            if (d->max == INT64_MAX || d->max == INT32_MAX)
                return oct_err(eb, OCT_ECONFIG, "%s: value %lld out of range (must be >= %lld)",
                               key, (long long)v, (long long)d->min);
            return oct_err(eb, OCT_ECONFIG, "%s: value %lld out of range %lld..%lld", key,
                           (long long)v, (long long)d->min, (long long)d->max);
        }
        return 0;
    }
    case OCT_CFG_ENUM: {
        size_t n;
        const char *t = trim_span(value, &n);
        for (const char *c = d->choices; *c;) {
            size_t w = strcspn(c, " ");
            if (w == n && memcmp(c, t, n) == 0) return 0;
            c += w;
            while (*c == ' ')
                c++;
        }
        return oct_err(eb, OCT_ECONFIG, "%s: invalid value '%.80s' (expected one of: %s)", key,
                       value, d->choices);
    }
    }
    return oct_err(eb, OCT_ECONFIG, "%s: unsupported key type", key);
}

/* Stores value (already checked) under key; copies both. Values of typed keys are stored
 * trimmed, so callers may compare them as strings ("ro", not "ro "); strings are kept
 * verbatim, trailing whitespace included, as OpenTSDB keeps them. */
static void config_store(oct_config_t *cfg, const char *key, const char *value)
{
    ptrdiff_t i = config_find(cfg, key);
    if (i >= 0) {
        char *v;
        if (cfg->ents[i].def && cfg->ents[i].def->type != OCT_CFG_STR) {
            size_t n;
            const char *t = trim_span(value, &n);
            v = xmemdup(t, n + 1);
            v[n] = '\0';
        } else {
            v = xstrdup(value);
        }
        free(cfg->ents[i].value);
        cfg->ents[i].value = v;
        return;
    }
    size_t at = (size_t)(-i - 1);
    if (cfg->n == cfg->cap) {
        cfg->cap *= 2;
        cfg->ents = xrealloc(cfg->ents, cfg->cap * sizeof *cfg->ents);
    }
    memmove(&cfg->ents[at + 1], &cfg->ents[at], (cfg->n - at) * sizeof *cfg->ents);
    cfg->ents[at] = (config_entry_t){.key = xstrdup(key), .value = xstrdup(value), .def = NULL};
    cfg->n++;
}

static const oct_config__key_t *config_def(const oct_config_t *cfg, const char *key)
{
    ptrdiff_t i = config_find(cfg, key);
    return i >= 0 ? cfg->ents[i].def : NULL;
}

int oct_config_set(oct_config_t *cfg, const char *key, const char *value, oct_errbuf_t *eb)
{
    if (!key || key[0] == '\0')
        return oct_err(eb, OCT_ECONFIG, "empty configuration key (value '%.80s')",
                       value ? value : "");
    if (!value) value = "";
    int rc = config_check(config_def(cfg, key), key, value, eb);
    if (rc < 0) return rc;
    config_store(cfg, key, value);
    return 0;
}

const char *oct_config_get(const oct_config_t *cfg, const char *key)
{
    ptrdiff_t i = config_find(cfg, key);
    if (i < 0) return NULL;
    const char *v = cfg->ents[i].value;
    return v && v[0] ? v : NULL;
}

int oct_config_get_bool(const oct_config_t *cfg, const char *key)
{
    const char *v = oct_config_get(cfg, key);
    return v && parse_bool(v) == 1;
}

int64_t oct_config_get_int(const oct_config_t *cfg, const char *key)
{
    const char *v = oct_config_get(cfg, key);
    int64_t n;
    return v && parse_int(v, &n) == 0 ? n : 0;
}

double oct_config_get_double(const oct_config_t *cfg, const char *key)
{
    const char *v = oct_config_get(cfg, key);
    if (!v) return 0.0;
    char *end;
    double d = strtod(v, &end);
    if (end == v) return 0.0;
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0' ? d : 0.0;
}

int oct_config_foreach(const oct_config_t *cfg,
                       int (*cb)(void *ctx, const char *key, const char *value), void *ctx)
{
    for (size_t i = 0; i < cfg->n; i++) {
        const char *v = cfg->ents[i].value;
        if (!v || !v[0]) continue;
        int rc = cb(ctx, cfg->ents[i].key, v);
        if (rc) return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* .properties files                                                                        */

typedef struct {
    char *key, *value;
    int line;
} prop_pair_t;

typedef struct {
    prop_pair_t *v;
    size_t n, cap;
} prop_list_t;

static void prop_list_free(prop_list_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].key);
        free(l->v[i].value);
    }
    free(l->v);
}

static bool is_prop_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_u4(const char *s, size_t n, size_t at, unsigned *out)
{
    if (at + 4 > n) return -1;
    unsigned v = 0;
    for (size_t k = 0; k < 4; k++) {
        int h = hexval(s[at + k]);
        if (h < 0) return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

/* Decodes the escapes of s[0..n) (Properties.loadConvert) into a new string in *out.
 * \uXXXX becomes UTF-8 (a surrogate pair written as two escapes becomes one code point).
 * Returns 0 or -1 with a reason in *why. Output is never longer than input: an escape of
 * 6 (or 12) bytes yields at most 3 (or 4). */
static int prop_unescape(const char *s, size_t n, char **out, const char **why)
{
    char *o = xmalloc(n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        char c = s[i++];
        if (c != '\\') {
            if (c == '\0') {
                *why = "NUL byte in file";
                goto fail;
            }
            o[j++] = c;
            continue;
        }
        if (i == n) break; /* a dangling backslash stands for nothing, as in Java */
        c = s[i++];
        switch (c) {
        case 't':
            o[j++] = '\t';
            break;
        case 'n':
            o[j++] = '\n';
            break;
        case 'r':
            o[j++] = '\r';
            break;
        case 'f':
            o[j++] = '\f';
            break;
        case 'u': {
            unsigned cp;
            if (read_u4(s, n, i, &cp) < 0) {
                *why = "malformed \\uXXXX escape";
                goto fail;
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (i + 2 > n || s[i] != '\\' || s[i + 1] != 'u' || read_u4(s, n, i + 2, &lo) < 0 ||
                    lo < 0xDC00 || lo > 0xDFFF) {
                    *why = "unpaired UTF-16 surrogate in \\uXXXX escape";
                    goto fail;
                }
                i += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                *why = "unpaired UTF-16 surrogate in \\uXXXX escape";
                goto fail;
            } else if (cp == 0) {
                *why = "\\u0000 is not allowed";
                goto fail;
            }
            j += oct_utf8_put(o + j, cp);
            break;
        }
        default:
            o[j++] = c; /* \= \: \# \! \\ \<space> and any other: the character itself */
            break;
        }
    }
    o[j] = '\0';
    *out = o;
    return 0;
fail:
    free(o);
    return -1;
}

/* Splits one logical line (escapes still in place) into a key/value pair, as
 * Properties.load0 does, and appends it to l. Returns 0 or -1 with *why. */
static int prop_split(const char *s, size_t n, int line, prop_list_t *l, const char **why)
{
    size_t klen = 0, vstart = n;
    bool sep = false, bs = false;
    for (; klen < n; klen++) {
        char c = s[klen];
        if ((c == '=' || c == ':') && !bs) {
            vstart = klen + 1;
            sep = true;
            break;
        }
        if (is_prop_ws(c) && !bs) {
            vstart = klen + 1;
            break;
        }
        bs = c == '\\' ? !bs : false;
    }
    for (; vstart < n; vstart++) {
        char c = s[vstart];
        if (is_prop_ws(c)) continue;
        if (!sep && (c == '=' || c == ':')) {
            sep = true;
            continue;
        }
        break;
    }
    char *key, *value;
    if (prop_unescape(s, klen, &key, why) < 0) return -1;
    if (prop_unescape(s + vstart, n - vstart, &value, why) < 0) {
        free(key);
        return -1;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (prop_pair_t){.key = key, .value = value, .line = line};
    return 0;
}

/* Parses a whole .properties text into l. On error returns OCT_ECONFIG with
 * "<path>:<line>: <why>" in eb. */
static int prop_parse(const char *buf, size_t len, const char *path, prop_list_t *l,
                      oct_errbuf_t *eb)
{
    size_t i = 0;
    int lineno = 1;
    char *lbuf = NULL; /* the logical line being built */
    size_t ln = 0, lcap = 0;
    int rc = 0;

    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < len) {
        /* Start of a natural line that is not a continuation. */
        while (i < len && is_prop_ws(buf[i]))
            i++;
        if (i == len) break;
        if (buf[i] == '\n' || buf[i] == '\r') {
            i += buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n' ? 2 : 1;
            lineno++;
            continue;
        }
        if (buf[i] == '#' || buf[i] == '!') {
            while (i < len && buf[i] != '\n' && buf[i] != '\r')
                i++;
            continue;
        }
        int start_line = lineno;
        ln = 0;
        for (;;) {
            size_t s = i;
            while (i < len && buf[i] != '\n' && buf[i] != '\r')
                i++;
            size_t seg = i - s;
            if (ln + seg + 1 > lcap) {
                lcap = (ln + seg + 1) * 2;
                lbuf = xrealloc(lbuf, lcap);
            }
            memcpy(lbuf + ln, buf + s, seg);
            ln += seg;
            /* Count the backslashes ending this natural line: odd = continuation. */
            size_t nbs = 0;
            while (nbs < seg && buf[i - 1 - nbs] == '\\')
                nbs++;
            if (i < len) {
                i += buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n' ? 2 : 1;
                lineno++;
            }
            if (nbs % 2 == 0) break;
            ln--; /* drop the continuation backslash (also at end of file, as Java does) */
            if (i >= len) break;
            /* Continuation: skip leading whitespace; an empty line ends the logical one. */
            while (i < len && is_prop_ws(buf[i]))
                i++;
        }
        const char *why = NULL;
        if (prop_split(lbuf, ln, start_line, l, &why) < 0) {
            rc = oct_err(eb, OCT_ECONFIG, "%s:%d: %s", path, start_line, why);
            goto out;
        }
    }
out:
    free(lbuf);
    return rc;
}

/* Reads a whole file into a malloc'd buffer. Returns 0 or -errno with eb filled. */
static int slurp(const char *path, char **out, size_t *out_len, oct_errbuf_t *eb)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return oct_err(eb, -e, "cannot read config file '%s': %s", path, strerror(e));
    }
    size_t cap = 4096, n = 0;
    char *b = xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= CONFIG_MAX_FILE_BYTES) {
                fclose(f);
                free(b);
                return oct_err(eb, OCT_ECONFIG, "config file '%s' is larger than %u bytes", path,
                               CONFIG_MAX_FILE_BYTES);
            }
            cap *= 2;
            b = xrealloc(b, cap);
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        fclose(f);
        free(b);
        return oct_err(eb, -e, "cannot read config file '%s': %s", path, strerror(e));
    }
    fclose(f);
    *out = b;
    *out_len = n;
    return 0;
}

int oct_config_load_file(oct_config_t *cfg, const char *path, oct_errbuf_t *eb)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(path, &buf, &len, eb);
    if (rc < 0) return rc;
    prop_list_t l = {0};
    rc = prop_parse(buf, len, path, &l, eb);
    free(buf);
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        oct_errbuf_t sub;
        if (l.v[i].key[0] == '\0') {
            rc = oct_err(eb, OCT_ECONFIG, "%s:%d: line has no key", path, l.v[i].line);
        } else if (config_check(config_def(cfg, l.v[i].key), l.v[i].key, l.v[i].value, &sub) < 0) {
            rc = oct_err(eb, OCT_ECONFIG, "%s:%d: %s", path, l.v[i].line, sub.msg);
        }
    }
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        config_store(cfg, l.v[i].key, l.v[i].value);
    if (rc == 0) {
        free(cfg->file);
        cfg->file = xstrdup(path);
    }
    prop_list_free(&l);
    return rc;
}

const char *const *oct_config_default_paths(void)
{
    return default_paths;
}

void oct_config_set_search_paths(oct_config_t *cfg, const char *const *paths)
{
    cfg->search = paths;
}

int oct_config_load_first(oct_config_t *cfg, const char *const *paths, oct_errbuf_t *eb)
{
    for (size_t i = 0; paths[i]; i++) {
        int rc = oct_config_load_file(cfg, paths[i], eb);
        if (rc == -ENOENT || rc == -ENOTDIR || rc == -EACCES || rc == -EISDIR) continue;
        return rc;
    }
    oct_errbuf_clear(eb);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Command-line flags                                                                       */

typedef enum {
    FLAG_VALUE,  /* --flag=V / --flag V: key = V */
    FLAG_SWITCH, /* --flag: key = fixed */
    FLAG_CONFIG, /* --config=PATH */
    FLAG_SET,    /* --set KEY=VALUE */
} flag_kind_t;

typedef struct {
    const char *name;
    flag_kind_t kind;
    const char *key;
    const char *fixed; /* FLAG_SWITCH */
    const char *arg;   /* metavariable for --help */
    const char *help;
} config_flag_t;

static const config_flag_t flags[] = {
    {"--config", FLAG_CONFIG, NULL, NULL, "PATH",
     "Configuration file (default: first of ./octsdb.conf ./opentsdb.conf /etc/... /opt/...)"},
    {"--set", FLAG_SET, NULL, NULL, "KEY=VALUE", "Set any configuration key"},
    {"--datadir", FLAG_VALUE, "tsd.storage.data_dir", NULL, "DIR", "Data directory (./data)"},
    {"--table", FLAG_VALUE, "tsd.storage.hbase.data_table", NULL, "TABLE",
     "Name of the data table (tsdb)"},
    {"--uidtable", FLAG_VALUE, "tsd.storage.hbase.uid_table", NULL, "TABLE",
     "Name of the UID table (tsdb-uid)"},
    {"--zkquorum", FLAG_VALUE, "tsd.storage.hbase.zk_quorum", NULL, "SPEC",
     "Accepted for compatibility; no effect"},
    {"--zkbasedir", FLAG_VALUE, "tsd.storage.hbase.zk_basedir", NULL, "PATH",
     "Accepted for compatibility; no effect"},
    {"--port", FLAG_VALUE, "tsd.network.port", NULL, "NUM", "TCP port to listen on (4242)"},
    {"--bind", FLAG_VALUE, "tsd.network.bind", NULL, "ADDR", "Address to bind to (0.0.0.0)"},
    {"--staticroot", FLAG_VALUE, "tsd.http.staticroot", NULL, "PATH", "Web root for static files"},
    {"--ui-dir", FLAG_VALUE, "tsd.http.uiroot", NULL, "DIR",
     "Serve the web UI from DIR, not the embedded copy"},
    {"--cachedir", FLAG_VALUE, "tsd.http.cachedir", NULL, "PATH", "Directory for temporary files"},
    {"--worker-threads", FLAG_VALUE, "tsd.network.worker_threads", NULL, "NUM",
     "Number of worker threads (2 x CPUs)"},
    {"--async-io", FLAG_VALUE, "tsd.network.async_io", NULL, "true|false",
     "Use asynchronous I/O (true)"},
    {"--backlog", FLAG_VALUE, "tsd.network.backlog", NULL, "NUM", "Listen backlog (OS default)"},
    {"--max-connections", FLAG_VALUE, "tsd.core.connections.limit", NULL, "NUM",
     "Maximum open connections, 0 = no limit (0)"},
    {"--flush-interval", FLAG_VALUE, "tsd.storage.flush_interval", NULL, "MSEC",
     "Maximum time a data point is buffered (1000)"},
    {"--read-only", FLAG_SWITCH, "tsd.mode", "ro", NULL, "Refuse writes (tsd.mode=ro)"},
    {"--disable-ui", FLAG_SWITCH, "tsd.core.enable_ui", "false", NULL, "Disable the web UI"},
    {"--disable-api", FLAG_SWITCH, "tsd.core.enable_api", "false", NULL, "Disable the HTTP API"},
    {"--auto-metric", FLAG_SWITCH, "tsd.core.auto_create_metrics", "true", NULL,
     "Create metrics automatically on write"},
    {"--statswport", FLAG_SWITCH, "tsd.core.stats_with_port", "true", NULL,
     "Tag all stats with the port"},
    {"--verbose", FLAG_SWITCH, "tsd.octsdb.verbose", "true", NULL,
     "Log more than warnings and errors"},
    {"-v", FLAG_SWITCH, "tsd.octsdb.verbose", "true", NULL, "Short for --verbose"},
};

#define N_FLAGS (sizeof flags / sizeof flags[0])

/* The flag argv[*i] names, with its value in *val (NULL for switches); advances *i past what
 * it consumed. NULL if argv[*i] is not one of ours. Errors (missing value, value given to a
 * switch) return NULL with *rc set. */
static const config_flag_t *flag_next(int argc, char **argv, int *i, const char **val, int *rc,
                                      oct_errbuf_t *eb)
{
    const char *a = argv[*i];
    *val = NULL;
    *rc = 0;
    for (size_t k = 0; k < N_FLAGS; k++) {
        const config_flag_t *f = &flags[k];
        size_t n = strlen(f->name);
        if (strncmp(a, f->name, n) != 0 || (a[n] != '\0' && a[n] != '=')) continue;
        if (f->kind == FLAG_SWITCH) {
            if (a[n] == '=') {
                *rc = oct_err(eb, OCT_ECONFIG, "%s takes no value (got '%s')", f->name, a);
                return NULL;
            }
            *val = f->fixed;
            (*i)++;
            return f;
        }
        if (a[n] == '=') {
            *val = a + n + 1;
            (*i)++;
            return f;
        }
        if (*i + 1 >= argc) {
            *rc = oct_err(eb, OCT_ECONFIG, "%s requires a value (%s)", f->name, f->arg);
            return NULL;
        }
        *val = argv[*i + 1];
        *i += 2;
        return f;
    }
    (*i)++;
    return NULL;
}

/* Applies one non-config flag. */
static int flag_apply(oct_config_t *cfg, const config_flag_t *f, const char *val, oct_errbuf_t *eb)
{
    oct_errbuf_t sub;
    int rc;
    if (f->kind == FLAG_SET) {
        const char *eq = strchr(val, '=');
        if (!eq || eq == val)
            return oct_err(eb, OCT_ECONFIG, "--set expects KEY=VALUE (got '%.80s')", val);
        char *key = xmemdup(val, (size_t)(eq - val) + 1);
        key[eq - val] = '\0';
        rc = oct_config_set(cfg, key, eq + 1, &sub);
        free(key);
    } else {
        rc = oct_config_set(cfg, f->key, val, &sub);
    }
    if (rc < 0) return oct_err(eb, rc, "%s: %s", f->name, sub.msg);
    return 0;
}

int oct_config_parse_args(oct_config_t *cfg, int *argc, char **argv, oct_errbuf_t *eb)
{
    int n = *argc, rc = 0;
    const char *val, *config_path = NULL;

    /* Pass 1: find --config (last one wins) and check that every flag is well formed. */
    for (int i = 1; i < n;) {
        if (strcmp(argv[i], "--") == 0) break;
        const config_flag_t *f = flag_next(n, argv, &i, &val, &rc, eb);
        if (rc < 0) return rc;
        if (f && f->kind == FLAG_CONFIG) {
            if (val[0] == '\0') return oct_err(eb, OCT_ECONFIG, "--config: empty path");
            config_path = val;
        }
    }
    if (config_path)
        rc = oct_config_load_file(cfg, config_path, eb);
    else
        rc = oct_config_load_first(cfg, cfg->search ? cfg->search : default_paths, eb);
    if (rc < 0) return rc;

    /* Pass 2: apply the other flags in order; collect what's left. */
    char **rest = xmalloc((size_t)(n + 1) * sizeof *rest);
    int nr = 0;
    if (n > 0) rest[nr++] = argv[0];
    int i = 1;
    while (i < n) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < n)
                rest[nr++] = argv[i++];
            break;
        }
        int at = i;
        const config_flag_t *f = flag_next(n, argv, &i, &val, &rc, eb);
        if (!f) {
            rest[nr++] = argv[at];
            continue;
        }
        if (f->kind == FLAG_CONFIG) continue;
        rc = flag_apply(cfg, f, val, eb);
        if (rc < 0) goto out;
    }
    for (int k = 0; k < nr; k++)
        argv[k] = rest[k];
    if (nr < n) argv[nr] = NULL;
    *argc = nr;
    oct_errbuf_clear(eb);
out:
    free(rest);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Help                                                                                     */

static char *help_text;
static pthread_once_t help_once = PTHREAD_ONCE_INIT;

static void help_build(void)
{
    size_t cap = 256, len = 0;
    for (size_t k = 0; k < N_FLAGS; k++)
        cap += strlen(flags[k].help) + 64;
    help_text = xmalloc(cap);
    for (size_t k = 0; k < N_FLAGS; k++) {
        char left[64];
        if (flags[k].arg)
            snprintf(left, sizeof left, "%s=%s", flags[k].name, flags[k].arg);
        else
            snprintf(left, sizeof left, "%s", flags[k].name);
        len += (size_t)snprintf(help_text + len, cap - len, "  %-26s %s\n", left, flags[k].help);
    }
}

const char *oct_config_flags_help(void)
{
    pthread_once(&help_once, help_build);
    return help_text;
}
