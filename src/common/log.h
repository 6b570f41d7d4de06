/* log.h -- the daemon's log: one line per event on stderr,
 *
 *     2026-11-22T10:30:00.123Z INFO tsd: Ready to serve on 0.0.0.0:4242
 *
 * UTC timestamp with milliseconds, level, component, message. Each line is
 * written with a single write(2), so lines from different threads never
 * interleave; a message longer than OCT_LOG_MAX_LINE is truncated, and
 * newlines inside it are replaced by spaces so that one event stays one line.
 *
 * Only the daemon (and tools that run for a long time) log; library code
 * reports errors through return codes and oct_errbuf_t instead (err.h).
 *
 * Threads: every function is safe to call from any thread. The level is
 * meant to be set once at startup. */
#ifndef OCT_COMMON_LOG_H
#define OCT_COMMON_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    OCT_LOG_DEBUG = 0,
    OCT_LOG_INFO,
    OCT_LOG_WARN,
    OCT_LOG_ERROR,
} oct_log_level_t;

#define OCT_LOG_MAX_LINE 2048

/* Messages below 'level' are dropped. The default is OCT_LOG_INFO. */
void oct_log_set_level(oct_log_level_t level);
oct_log_level_t oct_log_get_level(void);

/* 1 if a message at 'level' would be written (to skip building costly ones). */
int oct_log_enabled(oct_log_level_t level);

/* Writes one line: "<time> <LEVEL> <component>: <message>\n". component is
 * a short static name ("tsd", "http", "wal", ...). */
void oct_log(oct_log_level_t level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void oct_vlog(oct_log_level_t level, const char *component, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* The most recent lines are also kept in memory (OpenTSDB's /logs reads its
 * logger's cyclic buffer the same way): the last OCT_LOG_RING lines that
 * passed the level, each with its own copy of the text. */
#define OCT_LOG_RING 1024

typedef struct {
    int64_t ts_ms; /* Unix ms */
    oct_log_level_t level;
    const char *level_name; /* "DEBUG", "INFO", "WARN", "ERROR" */
    const char *thread;     /* the thread's name (pthread_getname_np) */
    const char *component;
    const char *msg; /* without time, level and component; no newline */
} oct_log_entry_t;

/* Calls cb for each remembered line, newest first, until cb returns nonzero.
 * The entry is valid during the call only. Holds the log's lock throughout:
 * cb must not log. Returns the number of lines visited. */
size_t oct_log_recent(int (*cb)(void *ctx, const oct_log_entry_t *e), void *ctx);

/* Shorthands: oct_log_info("tsd", "Ready to serve on %s", addr). */
#define oct_log_debug(comp, ...)                                                                   \
    do {                                                                                           \
        if (oct_log_enabled(OCT_LOG_DEBUG)) oct_log(OCT_LOG_DEBUG, (comp), __VA_ARGS__);           \
    } while (0)
#define oct_log_info(comp, ...)  oct_log(OCT_LOG_INFO, (comp), __VA_ARGS__)
#define oct_log_warn(comp, ...)  oct_log(OCT_LOG_WARN, (comp), __VA_ARGS__)
#define oct_log_error(comp, ...) oct_log(OCT_LOG_ERROR, (comp), __VA_ARGS__)

#endif
