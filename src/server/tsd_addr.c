/* tsd_addr.c -- DATADIR/tsd.addr, the running TSD's address record
 * (docs/format/tsd-addr.md). */
#include "server/tsd_addr.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tsd_addr_path(char *out, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int tsd_addr_write(const char *dir, const tsd_addr_t *a, oct_errbuf_t *eb)
{
    char tmp[4096], dst[4096], text[512];
    if (tsd_addr_path(tmp, sizeof tmp, dir, TSD_ADDR_FILE ".tmp") ||
        tsd_addr_path(dst, sizeof dst, dir, TSD_ADDR_FILE))
        return oct_err(eb, -ENAMETOOLONG, "data dir path too long");
    int n = snprintf(text, sizeof text,
                     "# octsdb TSD address (docs/format/tsd-addr.md)\n"
                     "version=1\npid=%ld\nhost=%s\nport=%d\nscheme=%s\nauth=%s\n",
                     a->pid, a->host, a->port, a->https ? "https" : "http", a->auth ? "on" : "off");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return oct_err(eb, -errno, "%s: %s", tmp, strerror(errno));
    int rc = 0;
    if (write(fd, text, (size_t)n) != n || fsync(fd) != 0)
        rc = oct_err(eb, errno ? -errno : -EIO, "%s: %s", tmp, strerror(errno ? errno : EIO));
    close(fd);
    if (!rc && rename(tmp, dst) != 0) rc = oct_err(eb, -errno, "%s: %s", dst, strerror(errno));
    if (rc) unlink(tmp);
    return rc;
}

int tsd_addr_read(const char *dir, tsd_addr_t *out, oct_errbuf_t *eb)
{
    char path[4096], text[2048];
    if (tsd_addr_path(path, sizeof path, dir, TSD_ADDR_FILE))
        return oct_err(eb, -ENAMETOOLONG, "data dir path too long");
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT) return OCT_ENOTFOUND;
        return oct_err(eb, -errno, "%s: %s", path, strerror(errno));
    }
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    memset(out, 0, sizeof *out);
    int version = 0, have = 0; /* bits: pid, host, port */
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (line[0] == '#' || !line[0]) continue;
        char *eq = strchr(line, '=');
        if (!eq) return oct_err(eb, OCT_EPARSE, "%s: bad line '%s'", path, line);
        *eq = '\0';
        const char *k = line, *v = eq + 1;
        if (!version) {
            if (strcmp(k, "version") || strcmp(v, "1"))
                return oct_err(eb, OCT_EPARSE, "%s: not a version 1 record", path);
            version = 1;
        } else if (!strcmp(k, "pid")) {
            out->pid = strtol(v, NULL, 10);
            have |= out->pid > 0 ? 1 : 0;
        } else if (!strcmp(k, "host")) {
            snprintf(out->host, sizeof out->host, "%s", v);
            have |= v[0] ? 2 : 0;
        } else if (!strcmp(k, "port")) {
            long p = strtol(v, NULL, 10);
            out->port = (int)p;
            have |= p > 0 && p < 65536 ? 4 : 0;
        } else if (!strcmp(k, "scheme")) {
            out->https = !strcmp(v, "https");
        } else if (!strcmp(k, "auth")) {
            out->auth = !strcmp(v, "on");
        }
    }
    if (have != 7) return oct_err(eb, OCT_EPARSE, "%s: pid, host or port missing", path);
    return 0;
}

void tsd_addr_remove(const char *dir, long pid)
{
    tsd_addr_t a = {0};
    oct_errbuf_t eb;
    char path[4096];
    if (tsd_addr_read(dir, &a, &eb) == 0 && a.pid == pid &&
        tsd_addr_path(path, sizeof path, dir, TSD_ADDR_FILE) == 0)
        unlink(path);
}

int tsd_addr_alive(const tsd_addr_t *a)
{
    return a->pid > 0 && (kill((pid_t)a->pid, 0) == 0 || errno == EPERM);
}

const char *tsd_addr_connect_host(const tsd_addr_t *a)
{
    if (!strcmp(a->host, "0.0.0.0") || !a->host[0]) return "127.0.0.1";
    if (!strcmp(a->host, "::") || !strcmp(a->host, "[::]")) return "::1";
    return a->host;
}
