/* benchutil.c -- see benchutil.h. */
#include "common/benchutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double bench_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int bench_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, bench_cmp_d);
    return v[n / 2];
}

void bench_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int bench_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &l) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

int bench_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

long bench_proc_status_kb(int pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long v = -1;
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, fl) && line[fl] == ':') v = strtol(line + fl + 1, NULL, 10);
    fclose(f);
    return v;
}

const char *bench_octsdb_bin(const char *argv0)
{
    const char *e = getenv("OCTSDB_BIN");
    if (e && *e) return e;
    static char path[4096];
    const char *slash = strrchr(argv0, '/');
    if (slash)
        snprintf(path, sizeof path, "%.*s/octsdb", (int)(slash - argv0), argv0);
    else
        snprintf(path, sizeof path, "./octsdb");
    return path;
}

long long bench_octsdb_points_added(int port)
{
    int fd = bench_connect(port);
    if (fd < 0) return -1;
    /* `version` answers after `stats`: its text marks the end of the reply */
    const char *req = "stats\nversion\n";
    if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
        close(fd);
        return -1;
    }
    char buf[65536];
    size_t n = 0;
    double t0 = bench_now_s();
    buf[0] = '\0';
    while (!strstr(buf, "Built on ") && n + 1 < sizeof buf && bench_now_s() - t0 < 10) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0) continue;
        ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = '\0';
    }
    close(fd);
    const char *l = strstr(buf, "tsd.datapoints.added ");
    long long ts, v;
    if (!l || sscanf(l, "tsd.datapoints.added %lld %lld", &ts, &v) != 2) return -1;
    return v;
}
