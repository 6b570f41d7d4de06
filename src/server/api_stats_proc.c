/* api_stats_proc.c -- /api/stats/jvm: where 2.4 describes its JVM, octsdb
 * describes its process, read from /proc/self (docs/http-api.md, "Process
 * figures"). The 2.4 sections that mean something here keep their names
 * (runtime.startTime/uptime in ms, os.systemLoadAverage); memory is the
 * process's (RSS, peak RSS, virtual size, in bytes) instead of heaps and
 * pools; "process" adds threads, open files and their limit, CPU time.
 * A figure /proc does not give is left out, never written as 0. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "server/api_int.h"

/* A "Key:   N kB" line of /proc/self/status, in bytes (or the plain
 * number for Threads); -1 if absent. */
static long long proc_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t kl = strlen(key);
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            char *end;
            v = strtoll(line + kl + 1, &end, 10);
            if (strstr(end, "kB")) v *= 1024;
            break;
        }
    fclose(f);
    return v;
}

static long long open_files(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long long n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

static void put_if(json_writer_t *w, const char *key, long long v)
{
    if (v < 0) return;
    json_w_key(w, key);
    json_w_int(w, v);
}

void api_stats_jvm(api_call_t *c)
{
    int64_t now_ms = oct_clock_wall_ms();
    json_writer_t w;
    api_json_begin(c, &w);
    json_w_obj_begin(&w);

    json_w_key(&w, "runtime");
    json_w_obj_begin(&w);
    json_w_key(&w, "startTime");
    json_w_int(&w, c->tsd->started_s * 1000);
    json_w_key(&w, "uptime");
    json_w_int(&w, now_ms - c->tsd->started_s * 1000);
    json_w_key(&w, "vmName");
    json_w_str(&w, "octsdb (native process)");
    json_w_obj_end(&w);

    json_w_key(&w, "memory");
    json_w_obj_begin(&w);
    put_if(&w, "rss", proc_status("VmRSS"));
    put_if(&w, "rssPeak", proc_status("VmHWM"));
    put_if(&w, "virtual", proc_status("VmSize"));
    json_w_obj_end(&w);

    json_w_key(&w, "os");
    json_w_obj_begin(&w);
    double load[1];
    if (getloadavg(load, 1) == 1) {
        json_w_key(&w, "systemLoadAverage");
        json_w_double(&w, load[0]);
    }
    json_w_obj_end(&w);

    json_w_key(&w, "process");
    json_w_obj_begin(&w);
    json_w_key(&w, "pid");
    json_w_int(&w, (int64_t)getpid());
    put_if(&w, "threads", proc_status("Threads"));
    put_if(&w, "openFiles", open_files());
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        put_if(&w, "maxOpenFiles", (long long)rl.rlim_cur);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        json_w_key(&w, "cpuUserMs");
        json_w_int(&w, (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000);
        json_w_key(&w, "cpuSystemMs");
        json_w_int(&w, (int64_t)ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000);
    }
    json_w_obj_end(&w);

    json_w_obj_end(&w);
}
