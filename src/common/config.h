/* config.h -- octsdb configuration: OpenTSDB's tsd.* keys, .properties files, CLI flags.
 *
 * A configuration is a map from key to string value, as in OpenTSDB's Config class. Every
 * key octsdb knows (the tsd.* keys of OpenTSDB 2.4 plus a few of our own, see config_keys.c)
 * is present from oct_config_new() on with its default; keys we don't know are accepted and
 * kept verbatim so /api/config can show them. Values of known keys are validated when set
 * (type and range), so a typo fails at startup with the key named instead of silently
 * meaning "false" or 0 later. String values are stored verbatim (trailing whitespace too, as
 * OpenTSDB does); values of typed keys (booleans, numbers, tsd.mode) are stored trimmed but
 * otherwise as given ("YES" stays "YES"). The typed getters parse on every call: read the
 * configuration once at startup, not per request.
 *
 * Precedence, lowest first: defaults, the config file, command-line flags.
 *
 * Empty values: as in OpenTSDB (hasProperty), an empty value means "unset": oct_config_get
 * returns NULL and foreach skips it. Keys that have a typed default (booleans, numbers,
 * tsd.mode) and a few essential strings (table names, data dir) cannot be emptied.
 *
 * Thread safety: none internally. Build the configuration in one thread at startup; after
 * that, concurrent readers (get*, foreach) are safe as long as nobody calls set/load. */
#ifndef OCT_COMMON_CONFIG_H
#define OCT_COMMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct oct_config oct_config_t;

/* New configuration holding every known key's default. Never NULL (aborts on OOM). */
oct_config_t *oct_config_new(void);

/* Frees cfg and every string it owns. NULL is accepted. */
void oct_config_free(oct_config_t *cfg);

/* Loads a Java .properties file: `key = value`, `key: value` or `key value`; `#` and `!`
 * comment lines; a line ending in an odd number of backslashes continues on the next line
 * (whose leading whitespace is dropped); leading whitespace of a value is stripped, trailing
 * whitespace kept (as Java does); \t \n \r \f \uXXXX escapes, and \X = X for any other X.
 * LF, CRLF and CR line ends are accepted, and a leading UTF-8 BOM is skipped. The file is
 * read as UTF-8 bytes (Java reads ISO-8859-1; \uXXXX is encoded as UTF-8).
 * Later occurrences of a key override earlier ones. Every pair is validated as by
 * oct_config_set, and the load is all-or-nothing: on any error cfg is unchanged.
 * Returns 0; -errno if the file can't be read ("cannot read config file '<path>': ...");
 * OCT_ECONFIG on a syntax or validation error, with "<path>:<line>: <key>: ..." in eb.
 * On success the path is remembered (oct_config_file). May block (file I/O). */
OCT_MUST_CHECK int oct_config_load_file(oct_config_t *cfg, const char *path, oct_errbuf_t *eb);

/* Sets key to value (both copied). Known keys are validated: booleans accept
 * true/false/yes/no/on/off/1/0 (trimmed, case-insensitive); integers are base-10 (trimmed)
 * and range-checked (e.g. tsd.storage.uid.width.* 1..8, tsd.storage.salt.width 0..8,
 * tsd.storage.salt.buckets >= 1, tsd.storage.max_tags >= 1, tsd.network.port 1..65535);
 * tsd.mode is one of rw/ro/wo. Unknown keys are stored unchecked. An empty key is refused.
 * Returns 0, or OCT_ECONFIG with an error naming the key and the bad value (cfg unchanged). */
OCT_MUST_CHECK int oct_config_set(oct_config_t *cfg, const char *key, const char *value,
                                  oct_errbuf_t *eb);

/* The value of key, or NULL if the key is unknown, unset or empty. The string is owned by
 * cfg and stays valid until the key is set again or cfg is freed. */
const char *oct_config_get(const oct_config_t *cfg, const char *key);

/* Typed getters. get_bool: 1 for true/yes/on/1 (trimmed, any case), 0 otherwise (unset
 * included). get_int: the base-10 value, 0 if unset or not an integer. get_double: the
 * value as strtod reads it, 0.0 if unset or not a number. */
int oct_config_get_bool(const oct_config_t *cfg, const char *key);
int64_t oct_config_get_int(const oct_config_t *cfg, const char *key);
double oct_config_get_double(const oct_config_t *cfg, const char *key);

/* 1 if key is one octsdb knows (has an entry in the key table), else 0. */
int oct_config_is_known(const char *key);

/* Path of the file loaded into cfg (explicitly or by the default search), or NULL if none.
 * Owned by cfg. */
const char *oct_config_file(const oct_config_t *cfg);

/* Calls cb for every key that has a non-empty value (defaults included), in ascending
 * strcmp order of the keys. A nonzero return from cb stops the walk and is returned;
 * otherwise returns 0. cb must not modify cfg. */
int oct_config_foreach(const oct_config_t *cfg,
                       int (*cb)(void *ctx, const char *key, const char *value), void *ctx);

/* Overrides the list of files oct_config_parse_args searches when no --config is given.
 * 'paths' is a NULL-terminated array, borrowed: it must outlive cfg's last parse_args.
 * NULL restores the default list (oct_config_default_paths). Meant for tests and embedding. */
void oct_config_set_search_paths(oct_config_t *cfg, const char *const *paths);

/* The default search list, NULL-terminated: octsdb's own file names before OpenTSDB's at
 * each place, so a host migrating from OpenTSDB keeps working unchanged:
 *   ./octsdb.conf ./opentsdb.conf /etc/octsdb.conf /etc/octsdb/octsdb.conf
 *   /etc/opentsdb.conf /etc/opentsdb/opentsdb.conf /opt/opentsdb/opentsdb.conf */
const char *const *oct_config_default_paths(void);

/* Loads the first of 'paths' (NULL-terminated) that exists. Files that don't exist or
 * can't be opened (ENOENT, ENOTDIR, EACCES) are skipped, as OpenTSDB does; unlike OpenTSDB,
 * a file that exists but is invalid is an error, not skipped. No file at all is not an
 * error. Returns 0 or the error of oct_config_load_file. */
OCT_MUST_CHECK int oct_config_load_first(oct_config_t *cfg, const char *const *paths,
                                         oct_errbuf_t *eb);

/* Parses the common OpenTSDB-style flags (see oct_config_flags_help) out of argv[1..*argc).
 * argv[0] (the command name) is kept. Value flags accept both `--flag=value` and
 * `--flag value`; switches (--read-only, --auto-metric, ...) take no value. Each flag is
 * applied as a config key through oct_config_set, in order, so the last one wins.
 * --config=FILE is loaded first wherever it appears (so every other flag overrides the
 * file); without --config the search list is tried (oct_config_load_first).
 * `--set key=value` sets any key. A lone `--` ends flag parsing: it and everything after
 * it are left in argv untouched. Everything not recognised (positionals, command flags and
 * their values) is left in argv[1..*argc) in the original order; if anything was removed,
 * argv[*argc] is set to NULL (that slot is inside the original array).
 * Returns 0; on error (a flag missing its value, a bad value, an unreadable --config file)
 * returns the code with the flag named in eb, and argv and *argc are left unchanged (cfg may
 * hold some of the flags already applied: callers are expected to exit). */
OCT_MUST_CHECK int oct_config_parse_args(oct_config_t *cfg, int *argc, char **argv,
                                         oct_errbuf_t *eb);

/* The daemon's start-up check (OpenTSDB 2.4 stops when an enabled plugin fails to load).
 * An enabled 2.4 plugin octsdb does not have (tsd.search.enable, tsd.rtpublisher.enable,
 * tsd.startup.enable, tsd.core.storage_exception_handler.enable, tsd.uidfilter.enable,
 * tsd.timeseriesfilter.enable, tsd.core.meta.cache.enable, a non-empty tsd.rpc.plugins or
 * tsd.http.rpc.plugins) -> OCT_ECONFIG naming the key and what octsdb offers instead.
 * Otherwise 0, with one message per unknown tsd.* key ("unknown configuration key 'k' is
 * ignored; did you mean 'tsd.x'?" when a known key is near) in *warnings (malloc'd array
 * of *n_warnings malloc'd strings, NULL when none; free with oct_config_warnings_free).
 * The caller logs them: library code does not print. */
OCT_MUST_CHECK int oct_config_check(const oct_config_t *cfg, char ***warnings, size_t *n_warnings,
                                    oct_errbuf_t *eb);
void oct_config_warnings_free(char **warnings, size_t n);

/* The known key nearest to key by edit distance if it is close enough to be a typo of it
 * (at most a third of key's length, and 4), else NULL. Static string. */
const char *oct_config_suggest(const char *key);

/* Static text for --help: one line per common flag, "  --flag=ARG  description\n". */
const char *oct_config_flags_help(void);

#endif
