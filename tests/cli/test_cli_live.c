/* test_cli_live.c -- every command beside a running TSD (docs/cli-live.md):
 * the real daemon on a free loopback port holds the data dir while a load
 * thread keeps putting points over HTTP (each batch acknowledged with
 * ?sync) and telnet; the commands say once that they work through it and
 * give what the test computes from the data it wrote, and the read-only
 * ones print exactly what they print after the TSD has stopped. At the end
 * every acknowledged load point is in the store, none twice. A rename is
 * followed at once by a put and a query under the new name. With
 * authentication on, the credentials come from a config file. fsck --fix
 * beside a TSD prints what it prints on a stopped copy of the data dir. A
 * TSD that takes only TLS is reached over TLS.
 *
 * The tests run in order over one TSD (cmocka runs them in order). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/config.h"
#include "store/store.h"
#include "testutil.h"
#include "tlsutil.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

#define BASE     1356998400 /* 2013-01-01 00:00 UTC */
#define IMP_N    300        /* points per imported series */
#define LOAD_MAX 400000     /* the load thread's points at most */

static tu_tsd_t g_tsd;
static char g_flag[4200];
static char g_notice[256]; /* "... (pid N at 127.0.0.1:P); working through it\n" */

/* Outputs of the read-only commands beside the TSD, compared after it stops. */
enum { RO_QUERY, RO_SCAN, RO_GREP, RO_FSCK, RO_LOOKUP, RO_N };
static char *g_ro_out[RO_N];
static const char *const *g_ro_argv[RO_N];

/* ---- running the binary with stdout and stderr apart ------------------ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    size_t r;
    while ((r = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += r;
        if (len + 1 == cap) b = realloc(b, cap *= 2);
    }
    b[len] = '\0';
    fclose(f);
    return b;
}

/* Runs octsdb args...; *out and *err (malloc'd) hold its stdout and stderr. */
static int run_env(char **out, char **err, const char *const *args, const char *env)
{
    const char *bin = getenv("OCTSDB_BIN");
    char po[4300], pe[4300];
    snprintf(po, sizeof po, "%s.out", g_tsd.dir);
    snprintf(pe, sizeof pe, "%s.err", g_tsd.dir);
    pid_t pid = fork();
    if (pid == 0) {
        char *av[32];
        int n = 0;
        av[n++] = (char *)bin;
        for (int i = 0; args[i] && n < 31; i++)
            av[n++] = (char *)args[i];
        av[n] = NULL;
        int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fo, 1);
        dup2(fe, 2);
        if (env)
            putenv((char *)env);
        else
            unsetenv("OCTSDB_CREDENTIALS");
        execv(bin, av);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    *out = slurp(po);
    *err = slurp(pe);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(char **out, char **err, const char *const *args)
{
    return run_env(out, err, args, NULL);
}

/* Runs a command that must work through the TSD: exit 'want', the notice
 * once on stderr. Returns stdout (malloc'd). */
static char *live(int want, const char *const *args)
{
    char *out, *err;
    int rc = run(&out, &err, args);
    if (rc != want)
        fail_msg("%s %s: exit %d, want %d; stderr <%s>", args[0], args[1], rc, want, err);
    const char *n = strstr(err, g_notice);
    if (!n || strstr(n + 1, g_notice)) fail_msg("%s: notice not once in <%s>", args[0], err);
    free(err);
    return out;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ---- the concurrent load ---------------------------------------------- */

static pthread_t g_load;
static atomic_int g_load_stop;
static long g_load_acked; /* points the TSD acknowledged (HTTP 204 with sync) */
static int g_load_failed;

/* load.h{n=<i%5>} at BASE + i seconds, value i: 100 points per POST with
 * ?sync; a 204 acknowledges them. A telnet connection interleaves puts of
 * load.t, ended by a `version` barrier (no ack per line in telnet). */
static void *load_main(void *arg)
{
    (void)arg;
    int tfd = tu_connect(g_tsd.port);
    long i = 0;
    char *body = malloc(100 * 128);
    while (!atomic_load(&g_load_stop) && i < LOAD_MAX) {
        size_t len = 0;
        len += (size_t)sprintf(body + len, "[");
        for (int k = 0; k < 100; k++, i++)
            len += (size_t)sprintf(body + len,
                                   "%s{\"metric\":\"load.h\",\"timestamp\":%ld,\"value\":%ld,"
                                   "\"tags\":{\"n\":\"%ld\"}}",
                                   k ? "," : "", BASE + i / 5, i, i % 5);
        len += (size_t)sprintf(body + len, "]");
        char *resp = NULL;
        int st = tu_http(g_tsd.port, "POST", "/api/put?sync", NULL, body, len, &resp, NULL);
        free(resp);
        if (st != 204) {
            g_load_failed = st;
            break;
        }
        g_load_acked = i;
        char line[128];
        int n = snprintf(line, sizeof line, "put load.t %ld %ld host=t\n", BASE + i / 100, i);
        if (tfd >= 0) tu_send_all(tfd, line, (size_t)n);
        struct timespec ts = {0, 5 * 1000 * 1000}; /* a steady load, not a burst */
        nanosleep(&ts, NULL);
    }
    free(body);
    if (tfd >= 0) close(tfd);
    return NULL;
}

/* ---- fixture ------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    const char *extra[] = {"--auto-metric", NULL};
    if (tu_tsd_start(&g_tsd, extra)) return -1;
    /* the record follows the listening socket by a moment */
    char rec[4300];
    snprintf(rec, sizeof rec, "%s/tsd.addr", g_tsd.dir);
    for (int i = 0; i < 200 && access(rec, F_OK) != 0; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(g_flag, sizeof g_flag, "--datadir=%s", g_tsd.dir);
    snprintf(g_notice, sizeof g_notice,
             "data dir held by the running TSD (pid %d at 127.0.0.1:%d); working through it\n",
             g_tsd.pid, g_tsd.port);
    pthread_create(&g_load, NULL, load_main, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&g_load_stop, 1);
    for (int i = 0; i < RO_N; i++)
        free(g_ro_out[i]);
    char path[4300];
    if (g_tsd.dir) {
        snprintf(path, sizeof path, "%s.out", g_tsd.dir);
        unlink(path);
        snprintf(path, sizeof path, "%s.err", g_tsd.dir);
        unlink(path);
        snprintf(path, sizeof path, "%s.imp", g_tsd.dir);
        unlink(path);
    }
    tu_tsd_destroy(&g_tsd);
    return 0;
}

/* ---- the commands ------------------------------------------------------- */

static void record_names_the_tsd(void **state)
{
    (void)state;
    char path[4300], want[256];
    snprintf(path, sizeof path, "%s/tsd.addr", g_tsd.dir);
    char *rec = slurp(path);
    snprintf(want, sizeof want,
             "version=1\npid=%d\nhost=127.0.0.1\nport=%d\nscheme=http\nauth=off\n", g_tsd.pid,
             g_tsd.port);
    if (!strstr(rec, want)) fail_msg("record <%s>, want <%s>", rec, want);
    free(rec);
}

/* mkmetric and uid assign print the UIDs; a second assign of the same name
 * prints the same UID (as locally); lookups by name and by id agree. */
static void uid_assign_lookup_rename_delete(void **state)
{
    (void)state;
    const char *mk[] = {"mkmetric", g_flag, "live.a", "live.b", NULL};
    char *out = live(0, mk);
    unsigned a, b;
    if (sscanf(out, "metrics live.a: [0, 0, %u]\nmetrics live.b: [0, 0, %u]\n", &a, &b) != 2)
        fail_msg("mkmetric printed <%s>", out);
    assert_true(b > a); /* the load's metrics may be assigned in between */
    free(out);
    const char *again[] = {"uid", g_flag, "assign", "metrics", "live.a", NULL};
    out = live(0, again);
    char want[128];
    snprintf(want, sizeof want, "metrics live.a: [0, 0, %u]\n", a);
    assert_string_equal(out, want);
    free(out);
    const char *look[] = {"uid", g_flag, "metrics", "live.a", NULL};
    out = live(0, look);
    assert_string_equal(out, want);
    free(out);

    /* rename, then at once a put and a query under the new name */
    const char *ren[] = {"uid", g_flag, "rename", "metrics", "live.b", "live.c", NULL};
    out = live(0, ren);
    assert_string_equal(out, "metrics live.b -> live.c\n");
    free(out);
    char *resp = NULL;
    const char put[] =
        "[{\"metric\":\"live.c\",\"timestamp\":1356998400,\"value\":41,\"tags\":{\"h\":\"x\"}}]";
    assert_int_equal(
        tu_http(g_tsd.port, "POST", "/api/put?sync", NULL, put, strlen(put), &resp, NULL), 204);
    free(resp);
    assert_int_equal(tu_http(g_tsd.port, "GET",
                             "/api/query?start=1356998000&end=1356999000&m=sum:live.c", NULL, NULL,
                             0, &resp, NULL),
                     200);
    if (!strstr(resp, "\"metric\":\"live.c\"") || !strstr(resp, "\"1356998400\":41"))
        fail_msg("query after rename: <%s>", resp);
    free(resp);
    /* the new name has live.b's UID; the old one is gone */
    const char *lc[] = {"uid", g_flag, "metrics", "live.c", NULL};
    out = live(0, lc);
    snprintf(want, sizeof want, "metrics live.c: [0, 0, %u]\n", b);
    assert_string_equal(out, want);
    free(out);
    const char *lb[] = {"uid", g_flag, "metrics", "live.b", NULL};
    free(live(1, lb));

    const char *del[] = {"uid", g_flag, "delete", "metrics", "live.a", NULL};
    free(live(0, del));
    free(live(1, del)); /* no such name now */
    free(live(1, look));
    const char *bad[] = {"uid", g_flag, "rename", "metrics", "nosuch", "x", NULL};
    free(live(1, bad));
}

/* The import file: imp.m{s=0,1} at BASE + 10 i, values i and 2 i, and one
 * bad line in the middle. */
static void import_streams_through_the_tsd(void **state)
{
    (void)state;
    char path[4300];
    snprintf(path, sizeof path, "%s.imp", g_tsd.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* line 1: parses, but the TSD refuses the tag value ('$') */
    fprintf(f, "imp.m %d 5 s=bad$\n", BASE);
    for (int i = 0; i < IMP_N; i++) {
        fprintf(f, "imp.m %d %d s=0\n", BASE + 10 * i, i);
        fprintf(f, "imp.m %d %d s=1\n", BASE + 10 * i, 2 * i);
        if (i == IMP_N / 2) fprintf(f, "imp.m bad 1 s=0\n");
    }
    for (int i = 0; i < 10; i++) /* for scan --delete: two series */
        fprintf(f, "del.m %d %d s=keep\ndel.m %d %d s=drop\n", BASE + i, i, BASE + i, 100 + i);
    fclose(f);
    const char *imp[] = {"import", g_flag, "--skip-errors", path, NULL};
    char *out, *err;
    assert_int_equal(run(&out, &err, imp), 0);
    char want[4400];
    snprintf(want, sizeof want, "Imported %d data points in ", 2 * IMP_N + 20);
    if (strncmp(out, want, strlen(want)) || !strstr(out, ", 2 errors\n"))
        fail_msg("import printed <%s>", out);
    /* the refused point is reported with its line, as a local import does */
    snprintf(want, sizeof want, "octsdb import: %s:1: ", path);
    if (!strstr(err, g_notice) || !strstr(err, want)) fail_msg("import stderr <%s>", err);
    free(out);
    free(err);
    /* without --skip-errors the bad line stops it: exit 1 */
    const char *strict[] = {"import", g_flag, path, NULL};
    free(live(1, strict));
}

/* query: sum over the two series = 3 i at BASE + 10 i, computed here. */
static void query_beside_the_tsd(void **state)
{
    (void)state;
    static const char *q[] = {"query", NULL, "1356998400", "1357001400", "sum", "imp.m", NULL};
    q[1] = g_flag;
    char *out = live(0, q);
    char *want = malloc(IMP_N * 64);
    size_t len = 0;
    for (int i = 0; i < IMP_N; i++)
        len += (size_t)sprintf(want + len, "imp.m %lld %d {}\n", (BASE + 10LL * i) * 1000, 3 * i);
    assert_string_equal(out, want);
    free(want);
    g_ro_out[RO_QUERY] = out;
    g_ro_argv[RO_QUERY] = q;
}

static void scan_uid_grep_fsck_beside_the_tsd(void **state)
{
    (void)state;
    static const char *scan[] = {"scan",       NULL,  "--import", "1356998400",
                                 "1357001400", "sum", "imp.m",    NULL};
    static const char *grep[] = {"uid", NULL, "grep", "metrics", "^(imp|del|live)", NULL};
    static const char *fsck[] = {"fsck", NULL, "1356998400", "1357001400", "sum", "imp.m", NULL};
    static const char *look[] = {"uid", NULL, "imp.m", NULL};
    scan[1] = grep[1] = fsck[1] = look[1] = g_flag;
    /* scan --import prints the points as imported: 2 IMP_N lines */
    char *out = live(0, scan);
    int lines = 0;
    for (const char *p = out; (p = strchr(p, '\n')); p++)
        lines++;
    assert_int_equal(lines, 2 * IMP_N);
    assert_non_null(strstr(out, "imp.m 1356998400 0 s=0\n"));
    g_ro_out[RO_SCAN] = out;
    g_ro_argv[RO_SCAN] = scan;
    out = live(0, grep);
    if (!strstr(out, "metrics imp.m: ") || !strstr(out, "metrics live.c: ") ||
        strstr(out, "live.a") || strstr(out, "live.b"))
        fail_msg("grep printed <%s>", out);
    g_ro_out[RO_GREP] = out;
    g_ro_argv[RO_GREP] = grep;
    out = live(0, fsck);
    g_ro_out[RO_FSCK] = out;
    g_ro_argv[RO_FSCK] = fsck;
    out = live(0, look);
    g_ro_out[RO_LOOKUP] = out;
    g_ro_argv[RO_LOOKUP] = look;
    const char *ufsck[] = {"uid", g_flag, "fsck", NULL};
    out = live(0, ufsck);
    if (!strstr(out, " KVs analyzed\nNo errors found.\n")) fail_msg("uid fsck: <%s>", out);
    free(out);
}

/* scan --delete prints the rows' points and deletes them in the TSD. */
static void scan_delete_and_compact_through_the_tsd(void **state)
{
    (void)state;
    const char *del[] = {"scan", g_flag,  "--delete", "1356998400", "1356998500",
                         "sum",  "del.m", "s=drop",   NULL};
    char *out = live(0, del);
    char want[1024];
    size_t len = 0;
    for (int i = 0; i < 10; i++)
        len += (size_t)sprintf(want + len, "del.m %d %d s=drop\n", BASE + i, 100 + i);
    assert_string_equal(out, want);
    free(out);
    const char *q[] = {"query", g_flag, "1356998400", "1356998500", "sum", "del.m", NULL};
    out = live(0, q);
    len = 0;
    for (int i = 0; i < 10; i++)
        len += (size_t)sprintf(want + len, "del.m %lld %d {s=keep}\n", (BASE + i) * 1000LL, i);
    assert_string_equal(out, want);
    free(out);
    const char *cmp[] = {"compact", g_flag, NULL};
    out = live(0, cmp);
    long long b = -1, a = -1;
    if (sscanf(out, "Table bytes before: %lld\nTable bytes after: %lld\n", &b, &a) != 2 || a <= 0)
        fail_msg("compact printed <%s>", out);
    free(out);
}

/* Stop the load, stop the TSD cleanly: the record is gone, every
 * acknowledged load point is there exactly once, and the read-only commands
 * print what they printed beside the TSD. */
static void after_the_stop_nothing_lost_and_same_output(void **state)
{
    (void)state;
    atomic_store(&g_load_stop, 1);
    pthread_join(g_load, NULL);
    assert_int_equal(g_load_failed, 0);
    assert_true(g_load_acked >= 100);
    print_message("load: %ld points acknowledged while the commands ran\n", g_load_acked);
    assert_int_equal(tu_tsd_stop(&g_tsd), 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/tsd.addr", g_tsd.dir);
    assert_int_equal(access(path, F_OK), -1);

    char *out, *err;
    char end[32];
    snprintf(end, sizeof end, "%d", BASE + LOAD_MAX);
    const char *scan[] = {"scan", g_flag, "--import", "1356998400", end, "sum", "load.h", NULL};
    assert_int_equal(run(&out, &err, scan), 0);
    /* every acknowledged point once: value i at BASE + i/5 with n = i%5 */
    long n = 0;
    char *seen = calloc((size_t)g_load_acked + 1, 1);
    for (char *p = out; *p;) {
        long ts, v, tag;
        if (sscanf(p, "load.h %ld %ld n=%ld", &ts, &v, &tag) != 3) fail_msg("line <%.60s>", p);
        if (v < g_load_acked) {
            if (seen[v]++) fail_msg("point %ld twice", v);
            assert_int_equal(ts, BASE + v / 5);
            assert_int_equal(tag, v % 5);
            n++;
        }
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
    assert_int_equal(n, g_load_acked);
    free(seen);
    free(out);
    free(err);
    for (int i = 0; i < RO_N; i++) {
        if (!g_ro_argv[i]) fail_msg("read-only command %d did not run beside the TSD", i);
        assert_int_equal(run(&out, &err, g_ro_argv[i]), 0);
        if (strstr(err, "working through")) fail_msg("%s: notice without a TSD", g_ro_argv[i][0]);
        if (strcmp(out, g_ro_out[i]))
            fail_msg("%s %s stopped: <%.300s>\nbeside the TSD: <%.300s>", g_ro_argv[i][0],
                     g_ro_argv[i][2], out, g_ro_out[i]);
        free(out);
        free(err);
    }
}

/* Authentication on: the command presents the credential from its config
 * file (or $OCTSDB_CREDENTIALS); without one it says which setting to make. */
static void auth_credentials_from_the_config(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    t.dir = tu_tempdir();
    char creds[4300], conf[4300], set[4400], flag[4200];
    snprintf(creds, sizeof creds, "%s.creds", t.dir);
    snprintf(conf, sizeof conf, "%s.conf", t.dir);
    /* alice:s3cret, digest sha256(salt1 || s3cret) as tests/e2e/test_auth.c */
    write_file(creds,
               "basic alice "
               "sha256:salt1:347d42a35e134d9e3658c354c6d472514e2b1a2b7fa24e7d4e119c0523505302"
               " rw\n");
    snprintf(set, sizeof set, "tsd.core.authentication.credentials_file=%s", creds);
    const char *extra[] = {"--set", "tsd.core.authentication.enable=true", "--set", set, NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    snprintf(flag, sizeof flag, "--datadir=%s", t.dir);
    char cfgarg[4400];
    snprintf(cfgarg, sizeof cfgarg, "--config=%s", conf);
    write_file(conf, "tsd.core.authentication.client = basic alice s3cret\n");
    char *out, *err;
    const char *mk[] = {"mkmetric", flag, cfgarg, "auth.m", NULL};
    int rc = run(&out, &err, mk);
    if (rc != 0 || strcmp(out, "metrics auth.m: [0, 0, 1]\n"))
        fail_msg("with credentials: exit %d <%s> <%s>", rc, out, err);
    free(out);
    free(err);
    /* without: exit 3 naming the settings */
    const char *mk2[] = {"mkmetric", flag, "auth.n", NULL};
    rc = run(&out, &err, mk2);
    if (rc != 3 || !strstr(err, "OCTSDB_CREDENTIALS") || out[0])
        fail_msg("without credentials: exit %d <%s>", rc, err);
    free(out);
    free(err);
    /* a wrong one: the TSD's 401, exit 3 */
    rc = run_env(&out, &err, mk2, "OCTSDB_CREDENTIALS=basic alice wrong");
    if (rc != 3 || out[0]) fail_msg("wrong credentials: exit %d <%s>", rc, err);
    free(out);
    free(err);
    /* the environment's token */
    rc = run_env(&out, &err, mk2, "OCTSDB_CREDENTIALS=basic alice s3cret");
    if (rc != 0 || strcmp(out, "metrics auth.n: [0, 0, 2]\n"))
        fail_msg("env credentials: exit %d <%s> <%s>", rc, out, err);
    free(out);
    free(err);
    tu_tsd_destroy(&t);
    unlink(creds);
    unlink(conf);
}

/* Damage as tests/cli/test_cli_fsck.c plants it, straight into the store of
 * a stopped data dir (UIDs of the import: f.m = 1, host = 1, a = 1). */
static void plant_damage(const char *dir)
{
    oct_errbuf_t eb;
    oct_config_t *cfg = oct_config_new();
    assert_int_equal(oct_config_set(cfg, "tsd.storage.data_dir", dir, &eb), 0);
    tsdb_t *db;
    assert_int_equal(tsdb_open(cfg, 0, &db, &eb), 0);
    const char *d[][3] = {
        {"000001 50E22700 000001 000001", "03C0", "63"}, /* a duplicate of +60 s */
        {"000001 50E22700 000001 000001", "07", "00"},   /* a 1-byte qualifier */
        {"000001 50E22700 0000", "0190", "01"},          /* a key of the wrong length */
    };
    uint8_t rows[3][32], quals[3][16], vals[3][16];
    store_op_t ops[3];
    memset(ops, 0, sizeof ops);
    for (size_t i = 0; i < 3; i++) {
        int rl = tu_unhex(d[i][0], rows[i], sizeof rows[i]);
        int ql = tu_unhex(d[i][1], quals[i], sizeof quals[i]);
        int vl = tu_unhex(d[i][2], vals[i], sizeof vals[i]);
        ops[i] = (store_op_t){STORE_OP_PUT,
                              oct_slice(rows[i], 7),
                              {oct_slice(rows[i], (size_t)rl), oct_slice_str("t"),
                               oct_slice(quals[i], (size_t)ql), oct_slice(vals[i], (size_t)vl)}};
    }
    assert_int_equal(store_write(tsdb_store(db), STORE_TABLE_DATA, ops, 3, STORE_SYNC, &eb), 0);
    tsdb_close(db);
    oct_config_free(cfg);
}

/* fsck --fix-all beside a TSD prints what it prints on a copy of the same
 * stopped data dir, and leaves the data clean. */
static void fsck_fix_beside_equals_fsck_fix_stopped(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    t.dir = tu_tempdir();
    char in[4300], copy[4300], flag[4400], cflag[4400], cmd[9000];
    snprintf(in, sizeof in, "%s.in", t.dir);
    snprintf(copy, sizeof copy, "%s.copy", t.dir);
    snprintf(flag, sizeof flag, "--datadir=%s", t.dir);
    snprintf(cflag, sizeof cflag, "--datadir=%s", copy);
    write_file(in, "f.m 1356998400 10 host=a\nf.m 1356998460 20 host=a\n");
    char *out, *err, *want;
    const char *imp[] = {"import", flag, "--auto-metric", in, NULL};
    assert_int_equal(run(&out, &err, imp), 0);
    free(out);
    free(err);
    plant_damage(t.dir);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", t.dir, copy);
    assert_int_equal(system(cmd), 0);
    const char *fix_copy[] = {"fsck", cflag, "--full-scan", "--fix-all", NULL};
    assert_int_equal(run(&want, &err, fix_copy), 1);
    free(err);
    if (!strstr(want, "Total Errors Fixed: 3\n")) fail_msg("stopped fsck --fix: <%s>", want);

    assert_int_equal(tu_tsd_start(&t, NULL), 0);
    char notice[256];
    snprintf(notice, sizeof notice, "(pid %d at 127.0.0.1:%d); working through it", t.pid, t.port);
    const char *fix[] = {"fsck", flag, "--full-scan", "--fix-all", NULL};
    assert_int_equal(run(&out, &err, fix), 1);
    if (!strstr(err, notice)) fail_msg("no notice: <%s>", err);
    assert_string_equal(out, want);
    free(out);
    free(err);
    const char *check[] = {"fsck", flag, "--full-scan", NULL};
    assert_int_equal(run(&out, &err, check), 0);
    assert_non_null(strstr(out, "Total Errors: 0\n"));
    free(out);
    free(err);
    free(want);
    tu_tsd_destroy(&t);
    tu_rmrf(copy);
    unlink(in);
}

/* A TSD that takes only TLS: the command reaches it over TLS with the
 * TSD's certificate (from its configuration) as the trust anchor; another
 * certificate is refused. */
static void tls_only_tsd_through_its_certificate(void **state)
{
    (void)state;
    tu_tsd_t t = {0};
    t.dir = tu_tempdir();
    char cert[4300], key[4300], other[4300], okey[4300], flag[4400];
    char scert[4400], skey[4400], sother[4400];
    snprintf(cert, sizeof cert, "%s.crt", t.dir);
    snprintf(key, sizeof key, "%s.key", t.dir);
    snprintf(other, sizeof other, "%s.other.crt", t.dir);
    snprintf(okey, sizeof okey, "%s.other.key", t.dir);
    tt_self_signed(cert, key, "octsdb-test");
    tt_self_signed(other, okey, "octsdb-test");
    snprintf(scert, sizeof scert, "tsd.network.tls.certificate=%s", cert);
    snprintf(skey, sizeof skey, "tsd.network.tls.key=%s", key);
    snprintf(sother, sizeof sother, "tsd.network.tls.certificate=%s", other);
    const char *extra[] = {"--set", "tsd.network.tls.enable=true",
                           "--set", "tsd.network.tls.required=true",
                           "--set", scert,
                           "--set", skey,
                           NULL};
    assert_int_equal(tu_tsd_start(&t, extra), 0);
    snprintf(flag, sizeof flag, "--datadir=%s", t.dir);
    char *out, *err;
    const char *mk[] = {"mkmetric", flag, "--set", scert, "tls.m", NULL};
    int rc = run(&out, &err, mk);
    if (rc != 0 || strcmp(out, "metrics tls.m: [0, 0, 1]\n") || !strstr(err, "working through"))
        fail_msg("over TLS: exit %d <%s> <%s>", rc, out, err);
    free(out);
    free(err);
    const char *wrong[] = {"mkmetric", flag, "--set", sother, "tls.n", NULL};
    rc = run(&out, &err, wrong);
    if (rc != 3 || out[0] || !strstr(err, "TLS with the TSD"))
        fail_msg("other cert: %d <%s>", rc, err);
    free(out);
    free(err);
    const char *none[] = {"mkmetric", flag, "tls.n", NULL};
    rc = run(&out, &err, none);
    if (rc != 3 || !strstr(err, "takes only TLS")) fail_msg("no cert: %d <%s>", rc, err);
    free(out);
    free(err);
    tu_tsd_destroy(&t);
    unlink(cert);
    unlink(key);
    unlink(other);
    unlink(okey);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_names_the_tsd),
        cmocka_unit_test(uid_assign_lookup_rename_delete),
        cmocka_unit_test(import_streams_through_the_tsd),
        cmocka_unit_test(query_beside_the_tsd),
        cmocka_unit_test(scan_uid_grep_fsck_beside_the_tsd),
        cmocka_unit_test(scan_delete_and_compact_through_the_tsd),
        cmocka_unit_test(after_the_stop_nothing_lost_and_same_output),
        cmocka_unit_test(auth_credentials_from_the_config),
        cmocka_unit_test(fsck_fix_beside_equals_fsck_fix_stopped),
        cmocka_unit_test(tls_only_tsd_through_its_certificate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
