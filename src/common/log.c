/* log.c -- one-line stderr log (see log.h).
 *
 * The line is formatted into a stack buffer and written with one write(2) to
 * fd 2: stdio's stderr is unbuffered and would split a line into several
 * writes, which interleave between threads. */
#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

static atomic_int oct_log_level = OCT_LOG_INFO;

static const char *const oct_log_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

/* The ring of recent lines (log.h, OCT_LOG_RING): slot i of 'ring' holds the
 * line number ring_next - n + i mod OCT_LOG_RING. Lines are short and rare
 * enough that one mutex costs nothing next to the write(2). */
typedef struct {
    int64_t ts_ms;
    oct_log_level_t level;
    char thread[16];
    char component[32];
    char msg[OCT_LOG_MAX_LINE];
} oct_log_slot_t;

static oct_log_slot_t oct_log_ring[OCT_LOG_RING];
static size_t oct_log_ring_next, oct_log_ring_n;
static pthread_mutex_t oct_log_ring_mu = PTHREAD_MUTEX_INITIALIZER;

static void oct_log_remember(int64_t ts_ms, oct_log_level_t level, const char *component,
                             const char *msg, size_t len)
{
    pthread_mutex_lock(&oct_log_ring_mu);
    oct_log_slot_t *s = &oct_log_ring[oct_log_ring_next];
    s->ts_ms = ts_ms;
    s->level = level;
    if (pthread_getname_np(pthread_self(), s->thread, sizeof s->thread) != 0) s->thread[0] = '\0';
    snprintf(s->component, sizeof s->component, "%s", component);
    if (len >= sizeof s->msg) len = sizeof s->msg - 1;
    memcpy(s->msg, msg, len);
    s->msg[len] = '\0';
    oct_log_ring_next = (oct_log_ring_next + 1) % OCT_LOG_RING;
    if (oct_log_ring_n < OCT_LOG_RING) oct_log_ring_n++;
    pthread_mutex_unlock(&oct_log_ring_mu);
}

size_t oct_log_recent(int (*cb)(void *ctx, const oct_log_entry_t *e), void *ctx)
{
    pthread_mutex_lock(&oct_log_ring_mu);
    size_t i = 0;
    while (i < oct_log_ring_n) {
        const oct_log_slot_t *s =
            &oct_log_ring[(oct_log_ring_next + OCT_LOG_RING - 1 - i) % OCT_LOG_RING];
        oct_log_entry_t e = {s->ts_ms,  s->level,     oct_log_names[s->level],
                             s->thread, s->component, s->msg};
        i++;
        if (cb(ctx, &e)) break;
    }
    pthread_mutex_unlock(&oct_log_ring_mu);
    return i;
}

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
    if (len >= (size_t)n)
        oct_log_remember(now_ms, level, component ? component : "octsdb", line + n,
                         len - (size_t)n);
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
