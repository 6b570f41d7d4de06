/* log.c -- one-line stderr log (see log.h).
 *
 * The line is formatted into a stack buffer and written with one write(2) to
 * fd 2: stdio's stderr is unbuffered and would split a line into several
 * writes, which interleave between threads. */
#include "common/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

static atomic_int oct_log_level = OCT_LOG_INFO;

static const char *const oct_log_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

void oct_log_set_level(oct_log_level_t level)
{
    atomic_store_explicit(&oct_log_level, (int)level, memory_order_relaxed);
}

oct_log_level_t oct_log_get_level(void)
{
    return (oct_log_level_t)atomic_load_explicit(&oct_log_level, memory_order_relaxed);
}

int oct_log_enabled(oct_log_level_t level)
{
    return (int)level >= atomic_load_explicit(&oct_log_level, memory_order_relaxed);
}

void oct_vlog(oct_log_level_t level, const char *component, const char *fmt, va_list ap)
{
    if (!oct_log_enabled(level)) return;
    if ((unsigned)level > OCT_LOG_ERROR) level = OCT_LOG_ERROR;
    int saved_errno = errno; /* callers may log, then look at errno */
    char line[OCT_LOG_MAX_LINE];
    int64_t now_ms = oct_clock_wall_ms();
    time_t sec = (time_t)(now_ms / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    int n = snprintf(line, sizeof line,
                     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (long)(now_ms % 1000), oct_log_names[level], component ? component : "octsdb");
    if (n < 0) n = 0;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    int m = vsnprintf(line + len, sizeof line - len, fmt, ap);
    if (m > 0) {
        size_t start = len;
        len += (size_t)m < sizeof line - len ? (size_t)m : sizeof line - len - 1;
        /* Libraries (libmicrohttpd) end their messages in a newline. */
        while (len > start &&
               (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            len--;
        for (size_t i = start; i < len; i++)
            if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
    }
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    const char *p = line;
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        len -= (size_t)w;
    }
    errno = saved_errno;
}

void oct_log(oct_log_level_t level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    oct_vlog(level, component, fmt, ap);
    va_end(ap);
}
