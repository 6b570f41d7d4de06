/* testutil.c -- see testutil.h. */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *tu_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/octsdb-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpl)) return NULL;
    return strdup(tmpl);
}

static int tu_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

void tu_rmrf(const char *path)
{
    if (path) nftw(path, tu_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int tu_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (const char *p = hex; *p; p++) {
        int v;
        if (*p == ' ' || *p == ':') continue;
        if (*p >= '0' && *p <= '9') v = *p - '0';
        else if (*p >= 'a' && *p <= 'f') v = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F') v = *p - 'A' + 10;
        else return -1;
        if (hi < 0) {
            hi = v;
        } else {
            if (n >= cap) return -1;
            out[n++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    return hi < 0 ? (int)n : -1;
}

const char *tu_hex(const uint8_t *buf, size_t n)
{
    static _Thread_local char s[4096];
    size_t i;
    for (i = 0; i < n && 2 * i + 2 < sizeof s; i++) sprintf(s + 2 * i, "%02X", buf[i]);
    s[2 * i] = '\0';
    return s;
}

int tu_run_octsdb(char **out, const char *const argv[])
{
    const char *bin = getenv("OCTSDB_BIN");
    int pfd[2];
    if (!bin || pipe(pfd) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        size_t n = 0;
        while (argv[n]) n++;
        char **av = calloc(n + 2, sizeof *av);
        av[0] = (char *)bin;
        for (size_t i = 0; i < n; i++) av[i + 1] = (char *)argv[i];
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execv(bin, av);
        _exit(127);
    }
    close(pfd[1]);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(pfd[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 2) buf = realloc(buf, cap *= 2);
    }
    close(pfd[0]);
    buf[len] = '\0';
    int st;
    waitpid(pid, &st, 0);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
