/* progress.c -- the progress line of long commands and the spinner of work
 * that reports nothing until it ends (cli_int.h). A few lines of our own
 * rather than a library: one line on stderr rewritten with \r, at most a
 * few times a second, only when stderr is a terminal. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli_int.h"
#include "common/clock.h"

#define PROGRESS_PERIOD_S 0.25 /* between redraws */

static double progress_now(void)
{
    return (double)oct_clock_mono_ns() / 1e9;
}

/* n bytes as "12.3 MiB" into buf. */
static void progress_bytes(uint64_t n, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void cli_progress_init(cli_progress_t *p, const char *unit, uint64_t total_bytes, int quiet)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(2);
    p->unit = unit;
    p->total = total_bytes;
    p->t0 = progress_now();
    p->last = -1;
}

void cli_progress_update(cli_progress_t *p, uint64_t done_bytes, uint64_t count, int force)
{
    if (!p->on) return;
    double t = progress_now();
    if (!force && p->last >= 0 && t - p->last < PROGRESS_PERIOD_S) return;
    p->last = t;
    double dt = t - p->t0;
    char line[160], a[32], b[32];
    int n = 0;
    if (p->total) {
        if (done_bytes > p->total) done_bytes = p->total;
        progress_bytes(done_bytes, a, sizeof a);
        progress_bytes(p->total, b, sizeof b);
        n = snprintf(line, sizeof line, "%5.1f%% %s/%s, ",
                     100.0 * (double)done_bytes / (double)p->total, a, b);
    }
    n += snprintf(line + n, sizeof line - (size_t)n, "%" PRIu64 " %s, %.0f %s/s", count, p->unit,
                  dt > 0 ? (double)count / dt : 0.0, p->unit);
    /* ETA from the average byte rate so far; none without a total. */
    if (p->total && done_bytes > 0 && n < (int)sizeof line) {
        double eta = dt * (double)(p->total - done_bytes) / (double)done_bytes;
        unsigned s = (unsigned)(eta + 0.5);
        snprintf(line + n, sizeof line - (size_t)n, ", ETA %u:%02u:%02u", s / 3600, s / 60 % 60,
                 s % 60);
    }
    /* \033[K clears what a longer earlier line left. */
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
}

void cli_progress_break(cli_progress_t *p)
{
    if (p->on && p->drawn) fputc('\n', stderr);
    p->drawn = 0;
}

/* ---- the spinner ---- */

struct cli_spinner {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *what;
    double t0;
    int stop, held;
    unsigned frame;
};

static void spinner_elapsed(double dt, char *buf, size_t cap)
{
    unsigned s = (unsigned)dt;
    snprintf(buf, cap, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
}

/* Under s->mu. */
static void spinner_draw(struct cli_spinner *s)
{
    static const char frames[] = "|/-\\";
    char el[32];
    spinner_elapsed(progress_now() - s->t0, el, sizeof el);
    fprintf(stderr, "\r%s: working %c, %s elapsed\033[K", s->what, frames[s->frame++ % 4], el);
    fflush(stderr);
}

static void *spinner_main(void *arg)
{
    struct cli_spinner *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(PROGRESS_PERIOD_S * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        if (!s->stop && !s->held) spinner_draw(s);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

cli_spinner_t *cli_spinner_start(const char *what, int quiet)
{
    if (quiet || !isatty(2)) return NULL;
    struct cli_spinner *s = calloc(1, sizeof *s);
    if (!s) return NULL; /* no spinner is no error */
    s->what = what;
    s->t0 = progress_now();
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    spinner_draw(s);
    if (pthread_create(&s->thread, NULL, spinner_main, s)) {
        fputs("\r\033[K", stderr);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return NULL;
    }
    return s;
}

void cli_spinner_hold(cli_spinner_t *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->held = 1;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pthread_mutex_unlock(&s->mu);
}

void cli_spinner_release(cli_spinner_t *s)
{
    if (!s) return;
    fflush(stdout);
    pthread_mutex_lock(&s->mu);
    s->held = 0;
    pthread_mutex_unlock(&s->mu);
}

void cli_spinner_stop(cli_spinner_t *s, int ok)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    char el[32];
    spinner_elapsed(progress_now() - s->t0, el, sizeof el);
    fprintf(stderr, "\r%s: %s %s\033[K\n", s->what, ok ? "done in" : "failed after", el);
    fflush(stderr);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
