/* tsdproc.c -- see tsdproc.h. */
#include "common/tsdproc.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/benchutil.h"

void tsdproc_print_log(const tsdproc_t *d)
{
    FILE *f = fopen(d->log, "r");
    if (!f) return;
    char line[1024];
    fprintf(stderr, "--- daemon log (%s) ---\n", d->log);
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

int tsdproc_start(tsdproc_t *d, const char *bin, const char *prefix, const char *const *extra)
{
    memset(d, 0, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "/tmp/%s.XXXXXX", prefix);
    if (!mkdtemp(d->dir)) return -1;
    snprintf(d->log, sizeof d->log, "%s.log", d->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        d->port = bench_free_port();
        char port[32], datadir[300];
        snprintf(port, sizeof port, "--port=%d", d->port);
        snprintf(datadir, sizeof datadir, "--datadir=%s", d->dir);
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) dup2(fd, 2);
            int nul = open("/dev/null", O_RDWR);
            if (nul >= 0) {
                dup2(nul, 0);
                dup2(nul, 1);
            }
            const char *argv[64] = {bin, "tsd", "--bind=127.0.0.1", port, datadir, "--auto-metric"};
            int n = 6;
            for (int i = 0; extra && extra[i] && n < 63; i++)
                argv[n++] = extra[i];
            argv[n] = NULL;
            execv(bin, (char *const *)argv);
            _exit(127);
        }
        d->pid = pid;
        for (int i = 0; i < 400; i++) {
            int fd = bench_connect(d->port);
            if (fd >= 0) {
                close(fd);
                d->rss_start_kb = bench_proc_status_kb(d->pid, "VmRSS");
                return 0;
            }
            if (waitpid(pid, NULL, WNOHANG) == pid) {
                d->pid = 0;
                break;
            }
            bench_sleep_ms(50);
        }
        if (d->pid) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
            d->pid = 0;
        }
    }
    tsdproc_print_log(d);
    return -1;
}

void tsdproc_stop(tsdproc_t *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        int st;
        for (int i = 0; i < 600 && waitpid(d->pid, &st, WNOHANG) != d->pid; i++)
            bench_sleep_ms(50);
        if (kill(d->pid, 0) == 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
        }
        d->pid = 0;
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", d->dir, d->log);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", d->dir);
}

int tsdproc_sync_put(int port)
{
    int fd = bench_connect(port);
    if (fd < 0) return -1;
    const char *body = "{\"metric\":\"bench.sync\",\"timestamp\":1700000000,\"value\":1,"
                       "\"tags\":{\"host\":\"bench\"}}";
    char req[512];
    int n = snprintf(req, sizeof req,
                     "POST /api/put?sync=true&sync_timeout=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\nConnection: close\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(body), body);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[4096];
    size_t got = 0;
    while (got + 1 < sizeof buf) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 60000) <= 0) break;
        ssize_t r = read(fd, buf + got, sizeof buf - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n")) break;
    }
    close(fd);
    if (got < 12) return -1;
    buf[got] = '\0';
    return atoi(buf + 9);
}
