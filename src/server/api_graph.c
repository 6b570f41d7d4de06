/* api_graph.c -- /q?...&png: the graph drawn by gnuplot, as OpenTSDB 2.4's GraphHandler
 * draws it (docs/http-api.md, "Legacy routes"): one data file per output series, a gnuplot
 * script with 2.4's settings and the request's gnuplot options, gnuplot run in a fresh temp dir,
 * the PNG answered. Without a gnuplot on PATH the answer is 501 naming the Debian package.
 *
 * The options are checked against what each may be, the whole value (2.4 only looks for a
 * matching substring, so any text reaches its script: compat.md), because every one of them is
 * pasted into a program gnuplot runs. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "exec/exec.h"
#include "server/api_int.h"

#define GRAPH_TIMEOUT_MS 30000

/* gnuplot's path on PATH into buf, or 0. */
static int graph_find_gnuplot(char *buf, size_t cap)
{
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n && (size_t)snprintf(buf, cap, "%.*s/gnuplot", (int)n, p) < cap &&
            access(buf, X_OK) == 0)
            return 1;
        p += n + (e != NULL);
    }
    return 0;
}

/* Does the whole of s match the extended regex re? */
static int graph_matches(const char *re, const char *s)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB)) return 0;
    int ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

/* The options of 2.4's setPlotParams: query-string name, gnuplot setting, whole-value pattern
 * (NULL: a flag without value), whether the value is written quoted, 2.4's complaint. */
static const struct {
    const char *param, *setting, *re;
    int quoted;
    const char *msg;
} graph_opts[] = {
    {"yrange", "yrange",
     "^\\[-?[0-9]+(\\.[0-9]*)?([eE]-?[0-9]+)?:(-?[0-9]+(\\.[0-9]*)?([eE]-?[0-9]+)?)?\\]$", 0,
     "'yrange' was invalid. Must be in the format [min:max]."},
    {"y2range", "y2range",
     "^\\[-?[0-9]+(\\.[0-9]*)?([eE]-?[0-9]+)?:(-?[0-9]+(\\.[0-9]*)?([eE]-?[0-9]+)?)?\\]$", 0,
     "'y2range' was invalid. Must be in the format [min:max]."},
    {"ylabel", "ylabel", "^[a-zA-Z0-9 _-]+$", 1,
     "'ylabel' was invalid. Must satisfy the pattern [a-zA-Z0-9 \\-_]"},
    {"y2label", "y2label", "^[a-zA-Z0-9 _-]+$", 1,
     "'y2label' was invalid. Must satisfy the pattern [a-zA-Z0-9 \\-_]"},
    {"yformat", "format y", "^(%[a-zA-Z.0-9]+[:/]? ?)+$", 1,
     "'yformat' was invalid. Must satisfy the pattern (%[a-zA-Z])+[:\\/]?\\s?"},
    {"y2format", "format y2", "^(%[a-zA-Z.0-9]+[:/]? ?)+$", 1,
     "'y2format' was invalid. Must satisfy the pattern (%[a-zA-Z])+[:\\/]?\\s?"},
    {"xformat", "format x", "^(%[a-zA-Z]+[:/]? ?)+$", 1,
     "'xformat' was invalid. Must satisfy the pattern (%[a-zA-Z])+[:\\/]?\\s?"},
    {"ylog", "logscale y", NULL, 0, NULL},
    {"y2log", "logscale y2", NULL, 0, NULL},
    {"key", "key", "^((out|left|top|center|right|horiz|box|bottom) ?)*$", 0,
     "'key' was invalid. Must satisfy the pattern "
     "(out|left|top|center|right|horiz|box|bottom)?\\s?"},
    {"title", "title", "^[a-zA-Z0-9 _-]+$", 1,
     "'title' was invalid. Must satisfy the pattern [a-zA-Z0-9 \\-_]"},
};

typedef struct {
    char *dir;
    oct_strbuf_t plot; /* the "plot ..." line being built */
    size_t n_series;
    char **opts; /* per sub-query "o=" */
    size_t n_opts;
    const char *smooth;
    int failed;
} graph_t;

static int graph_series(void *ctx, const exec_result_t *r)
{
    graph_t *g = ctx;
    char path[512];
    snprintf(path, sizeof path, "%s/%zu.dat", g->dir, g->n_series);
    FILE *f = fopen(path, "w");
    if (!f) {
        g->failed = errno;
        return 1;
    }
    for (size_t i = 0; i < r->n_dps; i++) {
        const query_dp_t *d = &r->dps[i];
        if (d->is_null) continue;
        if (d->is_int)
            fprintf(f, "%lld %lld\n", (long long)(d->ts_ms / 1000), (long long)d->v.i);
        else if (!isnan(d->v.f))
            fprintf(f, "%lld %.17g\n", (long long)(d->ts_ms / 1000), d->v.f);
    }
    if (fclose(f)) g->failed = EIO;
    /* title: the metric and its tags as Java prints a map, "m{host=a, dc=x}" */
    oct_strbuf_printf(&g->plot, "%s \"%zu.dat\" using 1:2", g->n_series ? "," : "", g->n_series);
    if (g->smooth) oct_strbuf_printf(&g->plot, " smooth %s", g->smooth);
    oct_strbuf_puts(&g->plot, " title \"");
    oct_strbuf_t t = OCT_STRBUF_INIT;
    oct_strbuf_puts(&t, r->metric);
    oct_strbuf_puts(&t, "{");
    for (size_t i = 0; i < r->n_tags; i++)
        oct_strbuf_printf(&t, "%s%s=%s", i ? ", " : "", r->tagk[i], r->tagv[i]);
    oct_strbuf_puts(&t, "}");
    for (size_t i = 0; i < t.len; i++) { /* names hold no quotes; keep gnuplot's string whole */
        char ch = t.ptr[i];
        if (ch == '"' || ch == '\\' || ch == '\n') ch = '_';
        oct_strbuf_append(&g->plot, &ch, 1);
    }
    oct_strbuf_free(&t);
    oct_strbuf_puts(&g->plot, "\"");
    size_t idx = (size_t)r->sub->index;
    if (idx < g->n_opts && g->opts[idx][0]) oct_strbuf_printf(&g->plot, " %s", g->opts[idx]);
    g->n_series++;
    return 0;
}

static const char *graph_xformat(int64_t span_s)
{
    return span_s < 2100      ? "%H:%M:%S"
           : span_s < 86400   ? "%H:%M"
           : span_s < 604800  ? "%a %H:%M"
           : span_s < 1209600 ? "%a %d %H:%M"
           : span_s < 7776000 ? "%b %d"
                              : "%Y/%m/%d";
}

static void graph_rmrf(const char *dir, size_t n_series)
{
    char path[512];
    for (size_t i = 0; i < n_series; i++) {
        snprintf(path, sizeof path, "%s/%zu.dat", dir, i);
        unlink(path);
    }
    const char *names[] = {"graph.gnuplot", "graph.png", "gnuplot.err"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Runs gnuplot on the script in dir; 0, or -1 with the reason in msg. */
static int graph_run(const char *gnuplot, const char *dir, char *msg, size_t cap)
{
    pid_t pid = fork();
    if (pid < 0) return snprintf(msg, cap, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        if (chdir(dir)) _exit(126);
        int fd = open("gnuplot.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        close_range(3, ~0u, 0); /* not the TSD's sockets and files */
        execl(gnuplot, "gnuplot", "graph.gnuplot", (char *)NULL);
        _exit(127);
    }
    int64_t until = oct_clock_mono_ns() / 1000000 + GRAPH_TIMEOUT_MS;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return snprintf(msg, cap, "waitpid: %s", strerror(errno)), -1;
        if (oct_clock_mono_ns() / 1000000 > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return snprintf(msg, cap, "gnuplot did not finish in %d ms", GRAPH_TIMEOUT_MS), -1;
        }
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char path[512], err[256] = "";
    snprintf(path, sizeof path, "%s/gnuplot.err", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = '\0';
        fclose(f);
    }
    snprintf(msg, cap, "gnuplot failed (status %d): %s",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
    return -1;
}

int api_graph_png(api_call_t *c, query_t *q)
{
    char gnuplot[512];
    if (!graph_find_gnuplot(gnuplot, sizeof gnuplot)) {
        http_error(c->resp, 501, "Graphs need gnuplot, which is not installed",
                   "Install Debian's gnuplot-nox (apt-get install gnuplot-nox), or use /q with "
                   "ascii or json, or /api/query");
        return -1;
    }
    /* wxh: 2.4's rules and messages */
    int width = 1024, height = 768;
    char v[256];
    if (http_param(c->req, "wxh", v, sizeof v) && v[0]) {
        if (!graph_matches("^[0-9]+x[0-9]+$", v)) {
            http_error(c->resp, 400, "'wxh' was invalid. Must satisfy the pattern ^\\d+x\\d+$", v);
            return -1;
        }
        if (strlen(v) < 7) {
            http_error(c->resp, 400, "Parameter wxh too short", v);
            return -1;
        }
        long w = strtol(v, NULL, 10), h = strtol(strchr(v, 'x') + 1, NULL, 10);
        if (w < 1 || h < 1 || w > 32767 || h > 32767) {
            http_error(c->resp, 400, "Invalid wxh parameter", v);
            return -1;
        }
        width = (int)w;
        height = (int)h;
    }
    oct_strbuf_t sets = OCT_STRBUF_INIT;
    int have_key = 0;
    for (size_t i = 0; i < sizeof graph_opts / sizeof *graph_opts; i++) {
        if (!http_param(c->req, graph_opts[i].param, v, sizeof v)) continue;
        if (graph_opts[i].re && !graph_matches(graph_opts[i].re, v)) {
            http_error(c->resp, 400, graph_opts[i].msg, v);
            oct_strbuf_free(&sets);
            return -1;
        }
        if (!strcmp(graph_opts[i].param, "key")) have_key = 1;
        if (!graph_opts[i].re)
            oct_strbuf_printf(&sets, "set %s\n", graph_opts[i].setting);
        else
            oct_strbuf_printf(&sets, graph_opts[i].quoted ? "set %s \"%s\"\n" : "set %s %s\n",
                              graph_opts[i].setting, v);
    }
    if (api_flag(c, "nokey")) { /* after key, overriding it, as in 2.4 */
        oct_strbuf_puts(&sets, "unset key\n");
        have_key = 1;
    }
    char smooth[32] = "", style[32] = "", bg[16] = "", fg[16] = "";
    static const struct {
        const char *param, *re, *msg;
    } words[] = {
        {"smooth",
         "^(unique|frequency|fnormal|cumulative|cnormal|bins|csplines|acsplines|mcsplines|bezier|"
         "sbezier|unwrap|zsort)$",
         "'smooth' was invalid. Must satisfy the pattern unique|frequency|fnormal|cumulative|"
         "cnormal|bins|csplines|acsplines|mcsplines|bezier|sbezier|unwrap|zsort"},
        {"style", "^(linespoint|points|circles|dots)$",
         "'style' was invalid. Must satisfy the pattern (linespoint|points|circles|dots)"},
        {"bgcolor", "^[xX][a-fA-F0-9]{6}$",
         "'bgcolor' was invalid. Must be a hex value e.g. 'xFFFFFF'"},
        {"fgcolor", "^[xX][a-fA-F0-9]{6}$",
         "'fgcolor' was invalid. Must be a hex value e.g. 'xFFFFFF'"},
    };
    char *outs[4] = {smooth, style, bg, fg};
    const size_t caps[4] = {sizeof smooth, sizeof style, sizeof bg, sizeof fg};
    for (size_t i = 0; i < 4; i++) {
        if (!http_param(c->req, words[i].param, v, sizeof v)) continue;
        size_t vl = strlen(v);
        if (!graph_matches(words[i].re, v) || vl >= caps[i]) {
            http_error(c->resp, 400, words[i].msg, v);
            oct_strbuf_free(&sets);
            return -1;
        }
        memcpy(outs[i], v, vl + 1);
    }
    /* o=: one per m=, in order; 2.4 passes it to the plot line (axis x1y2 for the right axis) */
    api_strlist_t o = {NULL, 0, &c->arena};
    http_param_each(c->req, "o", api_strlist_collect, &o);
    for (size_t i = 0; i < o.n; i++)
        if (o.v[i][0] && !graph_matches("^axis x1y[12]$", o.v[i])) {
            http_error(c->resp, 400, "Invalid o parameter: only \"axis x1y1\" or \"axis x1y2\"",
                       o.v[i]);
            oct_strbuf_free(&sets);
            free(o.v);
            return -1;
        }

    const char *tmpdir = getenv("TMPDIR");
    char dirbuf[512];
    snprintf(dirbuf, sizeof dirbuf, "%s/octsdb-graph-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *dir = mkdtemp(dirbuf);
    if (!dir) {
        http_error(c->resp, 500, "Unable to make a directory for the graph", strerror(errno));
        oct_strbuf_free(&sets);
        free(o.v);
        return -1;
    }
    graph_t g = {.dir = dir, .opts = o.v, .n_opts = o.n, .smooth = smooth[0] ? smooth : NULL};
    exec_opts_t eo;
    exec_opts_from_config(&eo, c->tsd->cfg);
    oct_errbuf_t eb;
    int rc = exec_query(c->tsd->db, q, &eo, graph_series, &g, NULL, &eb);
    int ret = -1;
    if (rc || g.failed) {
        if (rc)
            api_query_error(c, rc, eb.msg);
        else
            http_error(c->resp, 500, "Unable to write the graph's data", strerror(g.failed));
        goto out;
    }
    int64_t start_s = q->start_ms / 1000, end_s = q->end_ms / 1000;
    oct_strbuf_t s = OCT_STRBUF_INIT;
    oct_strbuf_printf(&s, "set term png small size %d,%d", width, height);
    /* 2.4 appends "xRRGGBB" colours to the terminal line, which gnuplot 5 refuses as obsolete:
     * the background goes to the terminal, the foreground to the border and the tics */
    if (bg[0]) oct_strbuf_printf(&s, " background \"#%s\"", bg + 1);
    oct_strbuf_printf(&s,
                      "\nset xdata time\nset timefmt \"%%s\"\n"
                      "if (GPVAL_VERSION < 4.6) set xtics rotate; else set xtics rotate right\n"
                      "set output \"graph.png\"\nset xrange [\"%lld\":\"%lld\"]\n",
                      (long long)start_s, (long long)end_s);
    if (!http_param(c->req, "xformat", v, sizeof v))
        oct_strbuf_printf(&s, "set format x \"%s\"\n", graph_xformat(end_s - start_s));
    if (g.n_series) {
        oct_strbuf_printf(&s, "set grid\nset style data %s\n", style[0] ? style : "linespoint");
        if (!have_key) oct_strbuf_puts(&s, "set key right box\n");
    } else {
        oct_strbuf_puts(&s, "unset key\nset label \"No data\" at graph 0.5,0.9 center\n");
    }
    if (fg[0])
        oct_strbuf_printf(&s, "set border lc rgb \"#%s\"\nset tics textcolor rgb \"#%s\"\n", fg + 1,
                          fg + 1);
    oct_strbuf_append(&s, sets.ptr, sets.len);
    for (size_t i = 0; i < o.n; i++)
        if (strstr(o.v[i], "x1y2")) {
            oct_strbuf_puts(&s, "set y2tics border\n");
            break;
        }
    if (g.n_series)
        oct_strbuf_printf(&s, "plot %.*s\n", (int)g.plot.len, g.plot.ptr);
    else /* gnuplot draws nothing without a plot command: an empty function keeps the frame */
        oct_strbuf_puts(&s, "set yrange [0:1]\nplot 2 notitle\n");
    char path[600];
    snprintf(path, sizeof path, "%s/graph.gnuplot", dir);
    FILE *f = fopen(path, "w");
    int wrote = f && fwrite(s.ptr, 1, s.len, f) == s.len;
    if (f && fclose(f)) wrote = 0;
    oct_strbuf_free(&s);
    if (!wrote) {
        http_error(c->resp, 500, "Unable to write the gnuplot script", strerror(errno));
        goto out;
    }
    char msg[512];
    if (graph_run(gnuplot, dir, msg, sizeof msg)) {
        oct_log_warn("graph", "%s", msg);
        http_error(c->resp, 500, "Gnuplot failed", msg);
        goto out;
    }
    oct_strbuf_reset(&c->resp->body);
    if (api_static_load(dir, "graph.png", &c->resp->body)) {
        http_error(c->resp, 500, "Gnuplot wrote no graph", NULL);
        goto out;
    }
    c->resp->status = 200;
    c->resp->content_type = "image/png";
    ret = 0;
out:
    graph_rmrf(dir, g.n_series);
    oct_strbuf_free(&g.plot);
    oct_strbuf_free(&sets);
    free(o.v);
    return ret;
}
