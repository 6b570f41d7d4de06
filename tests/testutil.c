/* testutil.c -- see testutil.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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
        if (*p >= '0' && *p <= '9')
            v = *p - '0';
        else if (*p >= 'a' && *p <= 'f')
            v = *p - 'a' + 10;
        else if (*p >= 'A' && *p <= 'F')
            v = *p - 'A' + 10;
        else
            return -1;
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
    for (i = 0; i < n && 2 * i + 2 < sizeof s; i++)
        sprintf(s + 2 * i, "%02X", buf[i]);
    s[2 * i] = '\0';
    return s;
}

/* Runs $OCTSDB_BIN argv with fd 'which' (1 or 2) captured into *out; with
 * alarm_s > 0 the child is ended by SIGALRM after that many seconds. */
static int tu_run_capture(char **out, const char *const argv[], int which, unsigned alarm_s)
{
    const char *bin = getenv("OCTSDB_BIN");
    int pfd[2];
    if (!bin || pipe(pfd) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        size_t n = 0;
        while (argv[n])
            n++;
        char **av = calloc(n + 2, sizeof *av);
        av[0] = (char *)bin;
        for (size_t i = 0; i < n; i++)
            av[i + 1] = (char *)argv[i];
        dup2(pfd[1], which);
        close(pfd[0]);
        close(pfd[1]);
        if (alarm_s) alarm(alarm_s);
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
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int tu_run_octsdb(char **out, const char *const argv[])
{
    return tu_run_capture(out, argv, 1, 0);
}

int tu_run_octsdb_stderr(char **err, const char *const argv[], unsigned timeout_s)
{
    return tu_run_capture(err, argv, 2, timeout_s);
}

/* ---- the real daemon on a loopback port ------------------------------- */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

/* A port the kernel considers free right now. */
static int tu_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

int tu_connect(int port)
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
    return fd;
}

int tu_send_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

size_t tu_recv_some(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t len = 0;
    while (len + 1 < cap) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0) break;
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0) break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    return len;
}

size_t tu_recv_until(int fd, char *buf, size_t cap, const char *needle, int timeout_ms)
{
    size_t n = 0, nl = strlen(needle);
    int two_lines = strcmp(needle, TU_VERSION_HEAD) == 0;
    buf[0] = '\0';
    for (int i = 0; i < timeout_ms / 50; i++) {
        char *hit = memmem(buf, n, needle, nl);
        if (hit) {
            char *e1 = memchr(hit, '\n', (size_t)(buf + n - hit));
            if (e1 && (!two_lines || memchr(e1 + 1, '\n', (size_t)(buf + n - e1 - 1)))) break;
        }
        n += tu_recv_some(fd, buf + n, cap - n, 50);
        if (n + 1 >= cap) break;
    }
    return n;
}

const char *tu_telnet_tx(int fd, const char **version, const char *fmt, ...)
{
    static char buf[1 << 20];
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&msg, fmt, ap);
    va_end(ap);
    assert_true(len >= 0);
    /* one write, as a client that pipelines would send it */
    char *all = malloc((size_t)len + 9);
    assert_non_null(all);
    memcpy(all, msg, (size_t)len);
    memcpy(all + len, "version\n", 9);
    free(msg);
    int rc = tu_send_all(fd, all, (size_t)len + 8);
    free(all);
    assert_int_equal(rc, 0);
    /* one byte spare: the version reply moves up by one for the NUL that
     * ends what came before it */
    size_t n = tu_recv_until(fd, buf, sizeof buf - 1, TU_VERSION_HEAD, 20000);
    char *v = memmem(buf, n, TU_VERSION_HEAD, strlen(TU_VERSION_HEAD));
    if (!v) fail_msg("no version reply; got <%s>", buf);
    memmove(v + 1, v, (size_t)(buf + n - v) + 1);
    *v = '\0';
    if (version) *version = v + 1;
    return buf;
}

void tu_tsd_print_log(const tu_tsd_t *t)
{
    FILE *f = fopen(t->log, "r");
    char line[1024];
    if (!f) return;
    fprintf(stderr, "---- %s ----\n", t->log);
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fclose(f);
}

/* Daemons started and not yet reaped. A failed cmocka assertion longjmps
 * past the test's own stop, so whatever is still listed when the program
 * exits is killed then: a failing test must not leave a TSD running. */
#define TU_MAX_LIVE 64
static pid_t tu_live[TU_MAX_LIVE];

static void tu_live_kill_all(void)
{
    for (int i = 0; i < TU_MAX_LIVE; i++)
        if (tu_live[i] > 0) {
            /* only our own unreaped child: a test may have reaped it itself
             * (then the pid may belong to someone else by now) */
            if (waitpid(tu_live[i], NULL, WNOHANG) == 0) {
                kill(tu_live[i], SIGKILL);
                waitpid(tu_live[i], NULL, 0);
            }
            tu_live[i] = 0;
        }
}

static void tu_live_set(pid_t old, pid_t pid)
{
    static int registered;
    if (!registered) {
        atexit(tu_live_kill_all);
        registered = 1;
    }
    for (int i = 0; i < TU_MAX_LIVE; i++)
        if (tu_live[i] == old) {
            tu_live[i] = pid;
            return;
        }
}

int tu_tsd_start(tu_tsd_t *t, const char *const *extra)
{
    const char *bin = getenv("OCTSDB_BIN");
    if (!bin) return -1;
    if (!t->dir) t->dir = tu_tempdir();
    snprintf(t->log, sizeof t->log, "%s.log", t->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        t->port = tu_free_port();
        char port[32], datadir[4200];
        snprintf(port, sizeof port, "--port=%d", t->port);
        snprintf(datadir, sizeof datadir, "--datadir=%s", t->dir);
        const char *argv[64] = {bin, "tsd", "--bind=127.0.0.1", port, datadir};
        int n = 5;
        for (int i = 0; extra && extra[i] && n < 62; i++)
            argv[n++] = extra[i];
        argv[n] = NULL;
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            int fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) dup2(fd, 2);
            int nul = open("/dev/null", O_RDWR);
            if (nul >= 0) {
                dup2(nul, 0);
                dup2(nul, 1);
            }
            execv(bin, (char *const *)argv);
            _exit(127);
        }
        t->pid = pid;
        tu_live_set(0, pid);
        for (int i = 0; i < 400; i++) { /* 20 s */
            int fd = tu_connect(t->port);
            if (fd >= 0) {
                close(fd);
                return 0;
            }
            int st;
            if (waitpid(pid, &st, WNOHANG) == pid) { /* died: port race or real error */
                tu_live_set(pid, 0);
                t->pid = 0;
                break;
            }
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (t->pid) {
            kill(t->pid, SIGKILL);
            waitpid(t->pid, NULL, 0);
            tu_live_set(t->pid, 0);
            t->pid = 0;
        }
    }
    tu_tsd_print_log(t);
    return -1;
}

int tu_tsd_stop(tu_tsd_t *t)
{
    if (t->pid <= 0) return -1;
    int st = 0;
    kill(t->pid, SIGTERM);
    for (int i = 0; i < 600; i++) { /* 30 s */
        if (waitpid(t->pid, &st, WNOHANG) == t->pid) {
            tu_live_set(t->pid, 0);
            t->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    tu_tsd_print_log(t);
    kill(t->pid, SIGKILL);
    waitpid(t->pid, &st, 0);
    tu_live_set(t->pid, 0);
    t->pid = 0;
    return -1;
}

void tu_tsd_kill(tu_tsd_t *t)
{
    if (t->pid <= 0) return;
    kill(t->pid, SIGKILL);
    waitpid(t->pid, NULL, 0);
    tu_live_set(t->pid, 0);
    t->pid = 0;
}

void tu_tsd_destroy(tu_tsd_t *t)
{
    if (t->pid > 0) tu_tsd_stop(t);
    if (t->dir) {
        tu_rmrf(t->dir);
        remove(t->log);
        free(t->dir);
        t->dir = NULL;
    }
}

int tu_http(int port, const char *method, const char *target, const char *headers, const void *body,
            size_t body_len, char **resp, char **hdrs)
{
    if (resp) *resp = NULL;
    if (hdrs) *hdrs = NULL;
    int fd = tu_connect(port);
    if (fd < 0) return -1;
    char head[8192];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s"
                     "Content-Length: %zu\r\n\r\n",
                     method, target, headers ? headers : "", body ? body_len : 0);
    if (tu_send_all(fd, head, (size_t)n) < 0 || (body && tu_send_all(fd, body, body_len) < 0)) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (cap - len < 4096) buf = realloc(buf, cap *= 2);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 30000) <= 0) break;
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r <= 0) break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) status = -1;
    char *sep = strstr(buf, "\r\n\r\n");
    if (sep) {
        if (hdrs) {
            *hdrs = strndup(buf, (size_t)(sep - buf) + 2);
        }
        if (resp) { /* the whole body, binary ones too (NUL-terminated besides) */
            size_t bl = len - (size_t)(sep + 4 - buf);
            *resp = malloc(bl + 1);
            memcpy(*resp, sep + 4, bl + 1);
        }
    }
    free(buf);
    return status;
}

size_t tu_split_tags(const char *s, oct_slice_t *out)
{
    size_t n = 0;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s) break;
        const char *eq = strchr(s, '='), *end = strchr(s, ' ');
        if (!end) end = s + strlen(s);
        out[2 * n] = oct_slice(s, (size_t)(eq - s));
        out[2 * n + 1] = oct_slice(eq + 1, (size_t)(end - eq - 1));
        n++;
        s = end;
    }
    return n;
}
