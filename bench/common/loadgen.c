/* loadgen.c -- the benchmarks' load generator (see loadgen.h).
 *
 * Everything is generated before the clock starts, so the senders only
 * write(2) and read(2): a sender never formats a point. HTTP requests are
 * written whole and only inside the window of unanswered ones, so a system
 * that answers slowly is not buried under requests it has not read yet;
 * answers are counted by parsing just their status line and Content-Length. */
#include "common/loadgen.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/benchutil.h"

static const char *const mode_names[LOADGEN_N_MODES] = {"telnet", "json50", "json500", "json50gz",
                                                        "json500gz"};

const char *loadgen_mode_name(loadgen_mode_t m)
{
    return (unsigned)m < LOADGEN_N_MODES ? mode_names[m] : "?";
}

/* ---- building ------------------------------------------------------------ */

static void build_http(putgen_t *g, size_t n, size_t batch, int gz, loadgen_payload_t *j)
{
    putgen_buf_t body = {0}, zbody = {0};
    putgen_point_t pt;
    j->req_end = malloc((n / batch + 2) * sizeof(*j->req_end));
    if (!j->req_end) abort();
    for (size_t i = 0; i < n;) {
        body.len = 0;
        putgen_append(&body, "[", 1);
        for (size_t k = 0; k < batch && i < n; k++, i++) {
            if (k) putgen_append(&body, ",", 1);
            putgen_next(g, &pt);
            putgen_append_json(&body, &pt);
        }
        putgen_append(&body, "]", 1);
        const putgen_buf_t *b = &body;
        if (gz) {
            if (putgen_gzip(body.ptr, body.len, &zbody) < 0) abort();
            b = &zbody;
        }
        char hdr[256];
        int hl = snprintf(hdr, sizeof hdr,
                          "POST /api/put HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Content-Type: application/json\r\n%s"
                          "Content-Length: %zu\r\n\r\n",
                          gz ? "Content-Encoding: gzip\r\n" : "", b->len);
        putgen_append(&j->data, hdr, (size_t)hl);
        putgen_append(&j->data, b->ptr, b->len);
        j->req_end[j->n_req++] = j->data.len;
    }
    putgen_buf_free(&body);
    putgen_buf_free(&zbody);
}

void loadgen_build(const putgen_cfg_t *cfg, loadgen_mode_t m, size_t conns, size_t rounds,
                   size_t max_points, loadgen_payload_t *pl)
{
    size_t batch = (m == LOADGEN_JSON50 || m == LOADGEN_JSON50GZ) ? 50 : 500;
    int gz = m == LOADGEN_JSON50GZ || m == LOADGEN_JSON500GZ;
    size_t left = max_points;
    for (size_t c = 0; c < conns; c++) {
        loadgen_payload_t *j = &pl[c];
        memset(j, 0, sizeof *j);
        size_t lo = cfg->hosts * c / conns, hi = cfg->hosts * (c + 1) / conns;
        putgen_t *g = putgen_new(cfg, lo, hi);
        size_t n = putgen_series(g) * rounds;
        if (max_points) {
            if (n > left) n = left;
            left -= n;
        }
        j->points = n;
        if (m == LOADGEN_TELNET) {
            putgen_point_t pt;
            for (size_t i = 0; i < n; i++) {
                putgen_next(g, &pt);
                putgen_append_telnet(&j->data, &pt);
            }
        } else {
            build_http(g, n, batch, gz, j);
        }
        putgen_free(g);
    }
}

void loadgen_append_telnet(loadgen_payload_t *pl, const char *text, size_t len, size_t points)
{
    putgen_append(&pl->data, text, len);
    pl->points += points;
}

void loadgen_payloads_free(loadgen_payload_t *pl, size_t conns)
{
    for (size_t c = 0; c < conns; c++) {
        putgen_buf_free(&pl[c].data);
        free(pl[c].req_end);
        pl[c].req_end = NULL;
        pl[c].n_req = pl[c].points = 0;
    }
}

/* ---- sending --------------------------------------------------------------- */

static const char version_cmd[] = "version\n";

/* Telnet: writes the payload (then `version` or a shutdown of the write
 * side), reading replies all along; counts error lines, keeping the
 * partial tail of the last one. */
static void run_telnet(loadgen_conn_t *j, int fd, int timeout_ms)
{
    const char *data = j->pl->data.ptr;
    size_t len = j->pl->data.len, off = 0;
    int by_version = j->telnet_end == LOADGEN_TELNET_VERSION;
    size_t total = len + (by_version ? sizeof version_cmd - 1 : 0);
    char in[65536];
    size_t inlen = 0;
    int wr_open = 1, done = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (total == 0) { /* nothing to send (an empty slice of a subset) */
        shutdown(fd, SHUT_WR);
        wr_open = 0;
    }
    while (!done) {
        struct pollfd p = {fd, (short)(POLLIN | (off < total ? POLLOUT : 0)), 0};
        if (poll(&p, 1, timeout_ms) <= 0) {
            if (!wr_open) break; /* a peer that keeps the socket open */
            j->err = ETIMEDOUT;
            return;
        }
        if ((p.revents & POLLOUT) && off < total) {
            ssize_t w = off < len ? write(fd, data + off, len - off)
                                  : write(fd, version_cmd + (off - len), total - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                return;
            }
            if (off == total && !by_version && wr_open) {
                shutdown(fd, SHUT_WR);
                wr_open = 0;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = read(fd, in + inlen, sizeof in - 1 - inlen);
            if (r == 0) {
                if (by_version) j->err = ECONNRESET;
                break;
            }
            if (r < 0) {
                if (errno == EAGAIN) continue;
                if (!wr_open) break;
                j->err = errno;
                return;
            }
            inlen += (size_t)r;
            in[inlen] = '\0';
            char *line = in, *nl;
            while ((nl = strchr(line, '\n'))) {
                if (!by_version)
                    j->failed++;
                else if (!strncmp(line, "put:", 4))
                    j->failed++;
                else if (!strncmp(line, "Built on ", 9))
                    done = 1;
                line = nl + 1;
            }
            inlen = (size_t)(in + inlen - line);
            memmove(in, line, inlen);
            if (inlen + 1 >= sizeof in) inlen = 0; /* one absurdly long line */
        }
    }
    if (off < total && !j->err) j->err = EPIPE;
    j->ok = j->pl->points > j->failed ? j->pl->points - j->failed : 0;
}

/* One complete HTTP response at the start of buf? Returns its length (0 if
 * incomplete) and its status. */
static size_t http_response_len(const char *buf, size_t n, int *status)
{
    const char *hend = memmem(buf, n, "\r\n\r\n", 4);
    if (!hend) return 0;
    size_t hlen = (size_t)(hend - buf) + 4;
    *status = n > 12 ? atoi(buf + 9) : 0;
    size_t clen = 0;
    for (const char *p = buf; p < hend; p++) {
        if ((p == buf || p[-1] == '\n') && !strncasecmp(p, "Content-Length:", 15)) {
            clen = strtoull(p + 15, NULL, 10);
            break;
        }
    }
    return n >= hlen + clen ? hlen + clen : 0;
}

static void run_http(loadgen_conn_t *j, int fd, int timeout_ms)
{
    const loadgen_payload_t *pl = j->pl;
    size_t off = 0, answered = 0;
    size_t cap = 1 << 20;
    char *in = malloc(cap);
    if (!in) abort();
    size_t inlen = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (answered < pl->n_req) {
        size_t last =
            answered + LOADGEN_HTTP_WINDOW < pl->n_req ? answered + LOADGEN_HTTP_WINDOW : pl->n_req;
        size_t limit = pl->req_end[last - 1];
        struct pollfd p = {fd, (short)(POLLIN | (off < limit ? POLLOUT : 0)), 0};
        if (poll(&p, 1, timeout_ms) <= 0) {
            j->err = ETIMEDOUT;
            break;
        }
        if ((p.revents & POLLOUT) && off < limit) {
            ssize_t w = write(fd, pl->data.ptr + off, limit - off);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN) {
                j->err = errno;
                break;
            }
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            if (inlen + 65536 > cap) {
                char *q = realloc(in, cap *= 2);
                if (!q) abort();
                in = q;
            }
            ssize_t r = read(fd, in + inlen, cap - inlen);
            if (r == 0) {
                j->err = ECONNRESET;
                break;
            }
            if (r < 0) {
                if (errno == EAGAIN) continue;
                j->err = errno;
                break;
            }
            inlen += (size_t)r;
            size_t used = 0, l;
            int status;
            while ((l = http_response_len(in + used, inlen - used, &status)) > 0) {
                int good = j->ok_status ? status == j->ok_status : status / 100 == 2;
                if (good)
                    j->ok++;
                else {
                    if (j->failed == 0) fprintf(stderr, "HTTP %d: %.300s\n", status, in + used);
                    j->failed++;
                }
                answered++;
                used += l;
            }
            memmove(in, in + used, inlen - used);
            inlen -= used;
        }
    }
    free(in);
}

static void *conn_thread(void *arg)
{
    loadgen_conn_t *j = arg;
    int timeout_ms = j->timeout_ms > 0 ? j->timeout_ms : 60000;
    int fd = bench_connect(j->port);
    if (fd < 0) {
        j->err = errno ? errno : ECONNREFUSED;
    } else {
        if (j->http)
            run_http(j, fd, timeout_ms);
        else
            run_telnet(j, fd, timeout_ms);
        close(fd);
    }
    j->done_s = bench_now_s();
    atomic_store(&j->finished, 1);
    return NULL;
}

int loadgen_start(loadgen_conn_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c[i].ok = c[i].failed = 0;
        c[i].err = 0;
        c[i].done_s = 0;
        atomic_store(&c[i].finished, 0);
        c[i].started = pthread_create(&c[i].th, NULL, conn_thread, &c[i]) == 0;
        if (!c[i].started) {
            loadgen_totals_t t;
            loadgen_join(c, i, &t);
            return -1;
        }
    }
    return 0;
}

size_t loadgen_finished(loadgen_conn_t *c, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += (size_t)atomic_load(&c[i].finished);
    return k;
}

void loadgen_join(loadgen_conn_t *c, size_t n, loadgen_totals_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        if (c[i].started) pthread_join(c[i].th, NULL);
        c[i].started = 0;
        out->ok += c[i].ok;
        out->failed += c[i].failed;
        if (c[i].err) out->err = c[i].err;
        if (c[i].done_s > out->last_s) out->last_s = c[i].done_s;
    }
}
