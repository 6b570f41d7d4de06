/* test_malformed.c -- a table of hand-picked bad inputs, both protocols, fed
 * to ONE live daemon: each must get its documented answer, the daemon must
 * keep serving after each, and nothing stored before must change.
 *
 * Design: the table is built at run time (some inputs are a megabyte long) as
 * rows of {protocol, bytes, expected shape}. Each row runs on a fresh
 * connection: the bytes are sent, the write side is shut (so the telnet side
 * answers and closes), and the reply is read until EOF or a short silence.
 * Expected shapes come from docs/telnet.md (`put:` lines, `unknown command`),
 * docs/http-api.md (Errors: `{"error":{"code":N,...}}`) and docs/compat.md
 * (line-length limit reply, libmicrohttpd's own pages for transport-level
 * errors, gzip/size answers). After every row a good point is put with
 * sync=true and read back through /api/query, and the daemon's pid is
 * checked. The data written before the table is read back at the end, from
 * the stopped daemon's store via tsdb_read_series, against the model kept
 * here. A mismatch does not stop the table: every wrong row is printed with
 * its input and reply, then the test fails with the count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/wait.h>
#include <zlib.h>

#include "testutil.h"
#include "tsd_client.h"
#include "api_client.h"

/* ---- the table ------------------------------------------------------- */

enum proto { TEL, HTTP };
enum expect {
    E_LINES,   /* telnet: one or more lines, each starting with want, then EOF */
    E_SILENT,  /* telnet: no reply at all, clean EOF (e.g. a good line) */
    E_ERRJSON, /* HTTP: status == code, body {"error":{"code":code,... */
    E_STATUS,  /* HTTP: status == code (libmicrohttpd's own page; compat.md) */
    E_CLOSE,   /* HTTP: closed without a byte of reply */
    E_NOREPLY, /* HTTP: nothing within the grace time (incomplete request) */
};

typedef struct {
    enum proto proto;
    enum expect expect;
    int code;         /* HTTP status for E_ERRJSON / E_STATUS */
    const char *want; /* line prefix for E_LINES */
    char name[96];
    char *bytes;
    size_t len;
    const char *skip; /* non-NULL: known defect, reason; the row is not judged */
} row_t;

static row_t *rows;
static size_t nrows, caprows;

static row_t *add_raw(enum proto p, enum expect e, int code, const char *want, const char *name,
                      const void *b, size_t n)
{
    if (nrows == caprows) {
        caprows = caprows ? caprows * 2 : 256;
        row_t *nr = realloc(rows, caprows * sizeof *rows);
        assert_non_null(nr);
        rows = nr;
    }
    row_t *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->proto = p;
    r->expect = e;
    r->code = code;
    r->want = want;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->bytes = malloc(n + 1);
    memcpy(r->bytes, b, n);
    r->bytes[n] = '\0';
    r->len = n;
    return r;
}

static row_t *add_str(enum proto p, enum expect e, int code, const char *want, const char *name,
                      const char *s)
{
    return add_raw(p, e, code, want, name, s, strlen(s));
}

/* An HTTP/1.1 request with Host, Connection: close and a correct length. */
static row_t *add_http(enum expect e, int code, const char *name, const char *method,
                       const char *target, const char *hdrs, const void *body, size_t blen)
{
    size_t cap = strlen(target) + (hdrs ? strlen(hdrs) : 0) + blen + 256;
    char *b = malloc(cap);
    int h = snprintf(b, cap,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
                     "Content-Length: %zu\r\n\r\n",
                     method, target, hdrs ? hdrs : "", blen);
    memcpy(b + h, body, blen);
    row_t *r = add_raw(HTTP, e, code, NULL, name, b, (size_t)h + blen);
    free(b);
    return r;
}

static row_t *add_put_json(const char *name, const char *body)
{
    /* Per-point failures without flags: 400 with OpenTSDB's error object (docs/http-api.md). */
    return add_http(E_ERRJSON, 400, name, "POST", "/api/put", NULL, body, strlen(body));
}

/* A point of /api/put with one field replaced by raw JSON text. */
static void add_put_field(const char *name, const char *metric, const char *ts, const char *value,
                          const char *tags)
{
    char *b = malloc(strlen(metric) + strlen(ts) + strlen(value) + strlen(tags) + 64);
    sprintf(b, "{\"metric\":%s,\"timestamp\":%s,\"value\":%s,\"tags\":%s}", metric, ts, value,
            tags);
    add_put_json(name, b);
    free(b);
}

static char *repeat(const char *unit, size_t times, const char *pre, const char *post)
{
    size_t ul = strlen(unit), pl = strlen(pre), ql = strlen(post);
    char *s = malloc(pl + ul * times + ql + 1);
    memcpy(s, pre, pl);
    for (size_t i = 0; i < times; i++)
        memcpy(s + pl + i * ul, unit, ul);
    memcpy(s + pl + ul * times, post, ql + 1);
    return s;
}

/* A literal with its length, NULs included. */
#define B(s) s, sizeof(s) - 1

#define TS       "1356998400" /* 2013-01-01T00:00:00Z */
#define PUT_ILL  "put: illegal argument: "
#define PUT_INV  "put: invalid value: "
#define UNKNOWN  "unknown command: "
#define TOO_LONG "error: line too long (over 65536 bytes), skipped"

static void build_telnet_rows(void)
{
    char line[512], name[96];

    /* Argument counts (docs/telnet.md, put errors). */
    static const char *const few[] = {"put\n", "put m6.junk\n", "put m6.junk " TS "\n",
                                      "put m6.junk " TS " 1\n", "put  \n"};
    for (size_t i = 0; i < sizeof few / sizeof *few; i++) {
        snprintf(name, sizeof name, "telnet: too few arguments #%zu", i);
        add_str(TEL, E_LINES, 0, PUT_ILL "not enough arguments", name, few[i]);
    }
    /* Trailing spaces: OpenTSDB counts the empty tokens as arguments, then
     * finds no tag among them. */
    add_str(TEL, E_LINES, 0, PUT_ILL "Need at least one tag", "telnet: no tag, trailing spaces",
            "put m6.junk " TS " 1   \n");

    /* Timestamps: <= 0 and beyond the ms range are illegal arguments; what
     * parseLong refuses is an invalid value (docs/telnet.md, Data points). */
    static const char *const ts_ill[] = {"0",
                                         "-1",
                                         "-0",
                                         "-1356998400",
                                         "-9223372036854775808",
                                         "10000000000000",
                                         "9223372036854775807"};
    for (size_t i = 0; i < sizeof ts_ill / sizeof *ts_ill; i++) {
        snprintf(line, sizeof line, "put m6.junk %s 1 host=a\n", ts_ill[i]);
        snprintf(name, sizeof name, "telnet: timestamp %s", ts_ill[i]);
        add_str(TEL, E_LINES, 0, PUT_ILL "invalid timestamp", name, line);
    }
    static const char *const ts_inv[] = {"abc",
                                         "+",
                                         "-",
                                         "9223372036854775808",
                                         "99999999999999999999",
                                         "-9223372036854775809",
                                         "1e9",
                                         "0x10",
                                         "13569984OO",
                                         "1356998400abc",
                                         "１３５６９９８４００",
                                         "1356998400\x01"};
    for (size_t i = 0; i < sizeof ts_inv / sizeof *ts_inv; i++) {
        snprintf(line, sizeof line, "put m6.junk %s 1 host=a\n", ts_inv[i]);
        snprintf(name, sizeof name, "telnet: timestamp '%s'", ts_inv[i]);
        add_str(TEL, E_LINES, 0, "put: ", name, line);
    }

    /* Values (docs/telnet.md, Data points): NaN/Inf spelled without '.', 'e' take the integer path
     * (invalid value); those that parse to +-Inf are illegal arguments. */
    static const char *const v_inv[] = {"NaN",
                                        "nan",
                                        "Infinity",
                                        "-Infinity",
                                        "inf",
                                        "-inf",
                                        "0x10",
                                        "5f",
                                        "--1",
                                        "+-1",
                                        "1_000",
                                        "9223372036854775808",
                                        "-9223372036854775809",
                                        "99999999999999999999",
                                        "abc",
                                        "\xef\xbc\x91",
                                        "1,5",
                                        "true"};
    for (size_t i = 0; i < sizeof v_inv / sizeof *v_inv; i++) {
        snprintf(line, sizeof line, "put m6.junk " TS " %s host=a\n", v_inv[i]);
        snprintf(name, sizeof name, "telnet: value '%s'", v_inv[i]);
        add_str(TEL, E_LINES, 0, PUT_INV, name, line);
    }
    static const char *const v_inf[] = {"1e500", "-1e500", "1.0e309", "1e99999999999"};
    for (size_t i = 0; i < sizeof v_inf / sizeof *v_inf; i++) {
        snprintf(line, sizeof line, "put m6.junk " TS " %s host=a\n", v_inf[i]);
        snprintf(name, sizeof name, "telnet: value %s (infinite)", v_inf[i]);
        add_str(TEL, E_LINES, 0, PUT_ILL "value is NaN or Infinite", name, line);
    }
    static const char *const v_bad[] = {"1.2.3", "1e",         "e5",   ".",   "1e5e5",
                                        "NaN.0", "Infinity.0", "1.5x", "-.e1"};
    for (size_t i = 0; i < sizeof v_bad / sizeof *v_bad; i++) {
        snprintf(line, sizeof line, "put m6.junk " TS " %s host=a\n", v_bad[i]);
        snprintf(name, sizeof name, "telnet: value '%s'", v_bad[i]);
        add_str(TEL, E_LINES, 0, "put: ", name, line);
    }

    /* Names: characters outside letters, digits and -_./ (docs/format/uid.md), invalid
     * UTF-8 (compat.md), in the metric, a tag key and a tag value. */
    static const char *const bad_names[] = {
        "m!",
        "m@x",
        "m#",
        "m$",
        "m%",
        "m&",
        "m*",
        "m(",
        "m:x",
        "m;x",
        "m,x",
        "m\"x",
        "m'x",
        "m\\x",
        "m|x",
        "m~x",
        "m\x7f",
        "m\x01",
        "m\x80",
        "m\xff",
        "m\xc3",
        "m\xc0\xaf",
        "m\xed\xa0\x80",
        "m\xf4\x90\x80\x80",
        "m\xe2\x82",
        "\xfe\xff",
        "m\xe2\x80\x8b" /* zero width space: Cf, not a letter */,
        "m\xd9\xa1" /* Arabic-Indic one: Nd */};
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
        snprintf(line, sizeof line, "put %s " TS " 1 host=a\n", bad_names[i]);
        snprintf(name, sizeof name, "telnet: metric name #%zu", i);
        add_str(TEL, E_LINES, 0, PUT_ILL, name, line);
    }
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i += 2) {
        snprintf(line, sizeof line, "put m6.junk " TS " 1 %s=a\n", bad_names[i]);
        snprintf(name, sizeof name, "telnet: tag key #%zu", i);
        add_str(TEL, E_LINES, 0, PUT_ILL, name, line);
        snprintf(line, sizeof line, "put m6.junk " TS " 1 host=%s\n", bad_names[i + 1]);
        snprintf(name, sizeof name, "telnet: tag value #%zu", i + 1);
        add_str(TEL, E_LINES, 0, PUT_ILL, name, line);
    }

    /* Tags (docs/telnet.md, Data points). */
    static const char *const bad_tags[] = {"a",     "a=",   "=b",      "=",
                                           "a=b=c", "a==b", "a=b a=c", "host=a host=b"};
    for (size_t i = 0; i < sizeof bad_tags / sizeof *bad_tags; i++) {
        snprintf(line, sizeof line, "put m6.junk " TS " 1 %s\n", bad_tags[i]);
        snprintf(name, sizeof name, "telnet: tags '%s'", bad_tags[i]);
        add_str(TEL, E_LINES, 0, PUT_ILL, name, line);
    }
    add_str(TEL, E_LINES, 0, PUT_ILL "Too many tags", "telnet: 9 tags",
            "put m6.junk " TS " 1 a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1\n");

    /* NUL bytes anywhere in a line. */
    static const struct {
        const char *b;
        size_t n;
        const char *want;
    } nul[] = {
        {B("put m6\0junk " TS " 1 host=a\n"), PUT_ILL},
        {B("put m6.junk " TS " 1 host=a\0\n"), PUT_ILL},
        {B("put m6.junk " TS " 1 ho\0st=a\n"), PUT_ILL},
        {B("put m6.junk " TS " \0 host=a\n"), "put: "},
        {B("put m6.junk 13569\0"
           "8400 1 host=a\n"),
         "put: "},
        {B("\0\n"), UNKNOWN},
        {B("\0\0\0\0\n"), UNKNOWN},
        {B("pu\0t m6.junk " TS " 1 host=a\n"), UNKNOWN},
    };
    for (size_t i = 0; i < sizeof nul / sizeof *nul; i++) {
        snprintf(name, sizeof name, "telnet: NUL byte #%zu", i);
        add_raw(TEL, E_LINES, 0, nul[i].want, name, nul[i].b, nul[i].n);
    }

    /* Garbage and binary on the telnet side: the first byte is not A-Z, so
     * each line is a command (docs/telnet.md) and an unknown one. */
    static const struct {
        const char *b;
        size_t n;
    } bin[] = {
        {B("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n")}, /* a TLS ClientHello start */
        {B("\xff\xfb\x01\xff\xfb\x03\n")},                     /* telnet IAC negotiation */
        {B("\x1b[A\n")},
        {B("\x7f"
           "ELF\x02\x01\x01\n")},
        {B("\x89PNG\r\n")},
        {B("\xef\xbb\xbfput\n")}, /* BOM + put */
        {B("\x01\x02\x03\x04\x05\x06\x07\x08\n")},
        {B("\t\n")},
        {B("put\tm6.junk\t" TS "\t1\thost=a\n")},
        {B("-\n")},
        {B("pUT m6.junk " TS " 1 host=a\n")},
        {B("puts m6.junk " TS " 1 host=a\n")},
        {B("\n")},
        {B("\r\n")},
        {B("\n\n\n\n\n\n\n\n\n\n")},
        {B("{\"metric\":\"m\"}\n")},
        {B("0\n")},
        {B("#comment\n")},
    };
    for (size_t i = 0; i < sizeof bin / sizeof *bin; i++) {
        snprintf(name, sizeof name, "telnet: garbage line #%zu", i);
        add_raw(TEL, E_LINES, 0, UNKNOWN, name, bin[i].b, bin[i].n);
    }

    /* Over-long lines: answered and skipped, the connection stays (compat.md);
     * a 1 MB metric name and 10,000 tags are over-long lines here. */
    char *s = repeat("a", 70000, "", "\n");
    add_str(TEL, E_LINES, 0, TOO_LONG, "telnet: 70,000-byte line", s);
    free(s);
    s = repeat("m", 1 << 20, "put ", " " TS " 1 host=a\n");
    add_str(TEL, E_LINES, 0, TOO_LONG, "telnet: 1 MB metric name", s);
    free(s);
    /* 10,000 distinct tags: under the line limit "Too many tags" (docs/telnet.md), with
     * longer names an over-long line. */
    static const char b62[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    s = malloc(70000 + 10000 * 16);
    char *e = s + sprintf(s, "put m6.junk " TS " 1");
    for (int i = 0; i < 10000; i++)
        e += sprintf(e, " %c%c%c=v", b62[i / 3844], b62[i / 62 % 62], b62[i % 62]);
    sprintf(e, "\n");
    add_str(TEL, E_LINES, 0, PUT_ILL "Too many tags", "telnet: 10,000 tags", s);
    e = s + sprintf(s, "put m6.junk " TS " 1");
    for (int i = 0; i < 10000; i++)
        e += sprintf(e, " key%d=value", i);
    sprintf(e, "\n");
    add_str(TEL, E_LINES, 0, TOO_LONG, "telnet: 10,000 long tags", s);
    free(s);
    s = repeat("\xff", 65537, "", "\n");
    add_str(TEL, E_LINES, 0, TOO_LONG, "telnet: 64 KiB of 0xFF", s);
    free(s);
    s = repeat("x", 65537, "put m6.junk " TS " 1 host=", ""); /* no newline, then close */
    add_str(TEL, E_LINES, 0, TOO_LONG, "telnet: over-long line, no newline, close", s);
    free(s);
    /* Under the line limit but over the name limit (4096 bytes, compat.md). */
    s = repeat("m", 4097, "put ", " " TS " 1 host=a\n");
    add_str(TEL, E_LINES, 0, PUT_ILL, "telnet: 4097-byte metric name", s);
    free(s);
    s = repeat("v", 5000, "put m6.junk " TS " 1 host=", "\n");
    add_str(TEL, E_LINES, 0, PUT_ILL, "telnet: 5000-byte tag value", s);
    free(s);

    /* A last line without a newline, then close: dropped unanswered, as
     * OpenTSDB's line decoder drops an incomplete frame at close. */
    add_str(TEL, E_SILENT, 0, NULL, "telnet: bad put, no newline", "put m6.junk -5 1 host=a");
    add_str(TEL, E_SILENT, 0, NULL, "telnet: garbage, no newline", "\x01\x02garbage");
    add_str(TEL, E_SILENT, 0, NULL, "telnet: good put, no newline", "put m6.junk " TS " 1 host=z");
    add_str(TEL, E_SILENT, 0, NULL, "telnet: nothing then close", "");
    /* Many bad lines in one write: one answer each. */
    s = repeat("put m6.junk 0 1 host=a\n", 1000, "", "");
    add_str(TEL, E_LINES, 0, PUT_ILL "invalid timestamp", "telnet: 1000 bad puts in one write", s);
    free(s);
}

/* gzip of s (deflateInit2 with the gzip wrapper). */
static size_t gz(const char *s, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (unsigned char *)(uintptr_t)s;
    z.avail_in = (uInt)strlen(s);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t n = z.total_out;
    deflateEnd(&z);
    return n;
}

static void build_http_rows(void)
{
    char name[96];
    const char *good = "{\"metric\":\"m6.junk\",\"timestamp\":" TS ",\"value\":1,\"tags\":{"
                       "\"host\":\"a\"}}";

    /* /api/put: values (docs/telnet.md, Data points; JSON NaN/Infinity tokens parse, then fail). */
    static const char *const vals[] = {
        "NaN",          "Infinity", "-Infinity", "\"NaN\"",
        "\"Infinity\"", "\"abc\"",  "\"\"",      "null",
        "true",         "[]",       "{}",        "1e500",
        "\"1e500\"",    "-1e500",   "\"0x10\"",  "99999999999999999999",
        "\"1.2.3\"",    "\"5f\""};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
        snprintf(name, sizeof name, "http put: value %s", vals[i]);
        add_put_field(name, "\"m6.junk\"", TS, vals[i], "{\"host\":\"a\"}");
    }
    static const char *const tss[] = {"-1",
                                      "0",
                                      "10000000000000000000",
                                      "-9223372036854775809",
                                      "\"abc\"",
                                      "null",
                                      "1e30",
                                      "true",
                                      "[]",
                                      "9999999999999999",
                                      "-1.5",
                                      "\"\""};
    for (size_t i = 0; i < sizeof tss / sizeof *tss; i++) {
        snprintf(name, sizeof name, "http put: timestamp %s", tss[i]);
        add_put_field(name, "\"m6.junk\"", tss[i], "1", "{\"host\":\"a\"}");
    }
    static const char *const metrics[] = {"\"\"",
                                          "\"m!\"",
                                          "\"m\\u0000x\"",
                                          "\"m\xff\"",
                                          "\"m\xc3\"",
                                          "\"\\ud800\"",
                                          "\"m\\udc00x\"",
                                          "\"m x\"",
                                          "\"m\\nx\"",
                                          "null",
                                          "[]",
                                          "{}",
                                          "\"m\xed\xa0\x80\"",
                                          "\"m\xc0\xaf\""};
    for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
        snprintf(name, sizeof name, "http put: metric #%zu", i);
        add_put_field(name, metrics[i], TS, "1", "{\"host\":\"a\"}");
    }
    static const char *const tags[] = {"{}",
                                       "null",
                                       "{\"a\":\"\"}",
                                       "{\"\":\"b\"}",
                                       "{\"a\":null}",
                                       "[]",
                                       "\"host=a\"",
                                       "{\"a!\":\"b\"}",
                                       "{\"a\":\"b\xff\"}",
                                       "{\"a\":\"\\u0000\"}",
                                       "{\"a\":\"b\",\"c\":\"d\",\"e\":\"f\",\"g\":\"h\",\"i\":"
                                       "\"j\",\"k\":\"l\",\"m\":\"n\",\"o\":\"p\",\"q\":\"r\"}"};
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        snprintf(name, sizeof name, "http put: tags #%zu", i);
        add_put_field(name, "\"m6.junk\"", TS, "1", tags[i]);
    }
    /* Not errors: like Jackson binding to String, a number where a name is
     * expected is taken as its text. */
    add_http(E_STATUS, 204, "http put: metric 1 (a number)", "POST", "/api/put", NULL,
             B("{\"metric\":1,\"timestamp\":" TS ",\"value\":1,\"tags\":{\"host\":\"a\"}}"));
    add_http(E_STATUS, 204, "http put: tag value 1 (a number)", "POST", "/api/put", NULL,
             B("{\"metric\":\"m6.junk\",\"timestamp\":" TS ",\"value\":1,\"tags\":{\"a\":1}}"));
    /* 10,000 tags and a 1 MB metric name in JSON: per-point errors. */
    char *t = malloc(10000 * 24 + 16), *p = t;
    p += sprintf(p, "{");
    for (int i = 0; i < 10000; i++)
        p += sprintf(p, "%s\"k%d\":\"v\"", i ? "," : "", i);
    sprintf(p, "}");
    add_put_field("http put: 10,000 tags", "\"m6.junk\"", TS, "1", t);
    free(t);
    char *m = repeat("m", 1 << 20, "\"", "\"");
    add_put_field("http put: 1 MB metric name", m, TS, "1", "{\"host\":\"a\"}");
    free(m);

    /* /api/put: bodies that are not a point list (docs/http-api.md, /api/put). */
    static const struct {
        const char *b;
        const char *name;
    } bodies[] = {
        {"", "empty body"},
        {"[]", "empty array"},
        {"x", "not JSON"},
        {"\"str\"", "a string"},
        {"42", "a number"},
        {"null", "null"},
        {"{", "truncated object"},
        {"[{\"metric\":", "truncated array"},
        {"{\"metric\":\"m6.junk\",\"timestamp\":" TS ",", "truncated point"},
        {"{\"metric\":\"m6.junk\"}}", "trailing brace"},
        {"[1,2,3]", "array of numbers"},
        {"{\"a\":\"\xff\xfe\"}", "invalid UTF-8 in a string"},
        {"\xef\xbb\xbf{}", "BOM first"},
        {"{\"metric\":\"m6\\q\"}", "bad escape"},
        {"{\"metric\":\"m6\\u12\"}", "short unicode escape"},
        {"{'metric':'m'}", "single quotes"},
        {"{metric:\"m\"}", "unquoted key"},
        {"{\"metric\":\"m\",}", "trailing comma"},
        {"\x01\x02\x03", "binary"},
    };
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        snprintf(name, sizeof name, "http put body: %s", bodies[i].name);
        add_put_json(name, bodies[i].b);
    }
    add_http(E_ERRJSON, 400, "http put body: NUL inside", "POST", "/api/put", NULL,
             "{\"metric\":\"m6\0junk\"}", 20);
    add_http(E_ERRJSON, 400, "http put body: NUL only", "POST", "/api/put", NULL, "\0\0\0\0", 4);
    /* Deep nesting: arrays, objects, and nesting inside a point. */
    size_t depths[] = {200, 10000, 100000};
    for (size_t i = 0; i < 3; i++) {
        char *d = malloc(depths[i] * 2 + 1);
        memset(d, '[', depths[i]);
        memset(d + depths[i], ']', depths[i]);
        snprintf(name, sizeof name, "http put: [] nested %zu deep", depths[i]);
        add_http(E_ERRJSON, 400, name, "POST", "/api/put", NULL, d, depths[i] * 2);
        free(d);
    }
    m = repeat("{\"a\":", 50000, "", "1");
    add_put_json("http put: {} nested 50000 deep, unclosed", m);
    free(m);
    m = repeat("[", 1000, "{\"metric\":\"m6.junk\",\"timestamp\":" TS ",\"value\":1,\"tags\":", "");
    add_put_json("http put: nesting inside tags", m);
    free(m);

    /* Content-Encoding (compat.md: broken data 400, unknown 415). */
    unsigned char zb[512];
    size_t zn = gz(good, zb, sizeof zb);
    add_http(E_ERRJSON, 400, "gzip: not gzip", "POST", "/api/put", "Content-Encoding: gzip\r\n",
             "abcd", 4);
    add_http(E_ERRJSON, 400, "gzip: truncated stream", "POST", "/api/put",
             "Content-Encoding: gzip\r\n", zb, zn / 2);
    add_http(E_ERRJSON, 400, "gzip: header only", "POST", "/api/put", "Content-Encoding: gzip\r\n",
             zb, 10);
    zb[zn - 5] ^= 0xff; /* corrupt the CRC */
    add_http(E_ERRJSON, 400, "gzip: bad CRC", "POST", "/api/put", "Content-Encoding: gzip\r\n", zb,
             zn);
    zb[zn - 5] ^= 0xff;
    zb[12] ^= 0x55; /* corrupt the deflate data */
    add_http(E_ERRJSON, 400, "gzip: corrupt data", "POST", "/api/put", "Content-Encoding: gzip\r\n",
             zb, zn);
    add_http(E_ERRJSON, 400, "deflate: garbage", "POST", "/api/put",
             "Content-Encoding: deflate\r\n", "\x01\x02\x03\x04", 4);
    add_http(E_ERRJSON, 400, "gzip: empty body", "POST", "/api/put", "Content-Encoding: gzip\r\n",
             "", 0);
    add_http(E_ERRJSON, 415, "encoding: br", "POST", "/api/put", "Content-Encoding: br\r\n", good,
             strlen(good));
    add_http(E_ERRJSON, 415, "encoding: garbage token", "POST", "/api/put",
             "Content-Encoding: \x01zz\r\n", good, strlen(good));

    /* Wrong methods (docs/http-api.md, Errors: 405 with the error object). */
    static const struct {
        const char *m, *t;
    } meth[] = {{"DELETE", "/api/put"},         {"GET", "/api/put"},     {"PUT", "/api/version"},
                {"PATCH", "/api/put"},          {"FOO", "/api/version"}, {"TRACE", "/api/put"},
                {"DELETE", "/api/aggregators"}, {"PUT", "/api/stats"}};
    for (size_t i = 0; i < sizeof meth / sizeof *meth; i++) {
        snprintf(name, sizeof name, "method %s %s", meth[i].m, meth[i].t);
        add_http(E_ERRJSON, 405, name, meth[i].m, meth[i].t, NULL, "", 0);
    }

    /* Routing (docs/http-api.md, Routing). */
    add_http(E_ERRJSON, 404, "route: unknown endpoint", "GET", "/api/nope", NULL, "", 0);
    add_http(E_ERRJSON, 404, "route: NUL escaped in path", "GET", "/api/%00version", NULL, "", 0);
    add_http(E_ERRJSON, 501, "route: api version 2", "GET", "/api/v2/version", NULL, "", 0);
    /* Integer.parseInt overflows: OpenTSDB's 400 for a bad version format. */
    add_http(E_ERRJSON, 400, "route: api version 99999999999", "GET", "/api/v99999999999/version",
             NULL, "", 0);
    /* 'v' not followed by a digit is no version segment: an unknown endpoint. */
    add_http(E_ERRJSON, 404, "route: api version vx", "GET", "/api/vx/version", NULL, "", 0);
    add_http(E_ERRJSON, 404, "route: invalid UTF-8 in path", "GET", "/api/\xff\xfe", NULL, "", 0);

    /* /api/query parameters (docs/http-api.md, /api/query: 400 with the error object). */
    static const char *const q[] = {
        "/api/query",
        "/api/query?start=1h-ago",
        "/api/query?m=sum:m6.keep",
        "/api/query?start=abc&m=sum:m6.keep",
        "/api/query?start=1h-ago&m=",
        "/api/query?start=1h-ago&m=nosuchagg:m6.keep",
        "/api/query?start=1h-ago&m=sum:m6.nosuch",
        "/api/query?start=1h-ago&m=sum:m6.keep{",
        "/api/query?start=1h-ago&m=sum:m6.keep{host=}",
        "/api/query?start=1h-ago&m=sum:1x-avg:m6.keep",
        "/api/query?start=1h-ago&m=sum:rate{counter,abc}:m6.keep",
        "/api/query?start=-1&m=sum:m6.keep",
        "/api/query?start=99999999999999999999&m=sum:m6.keep",
        "/api/query?start=2h-ago&end=3h-ago&m=sum:m6.keep",
        "/api/query?start=1h-ago&m=sum:m6%00keep",
        "/api/query?start=1h-ago&m=sum:m6.keep{host=regexp(%5B)}",
        "/api/query?start=1h-ago&m=sum:%ff%fe",
        "/api/query?start=1h-ago&tsuid=sum:zz",
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        snprintf(name, sizeof name, "query: %.80s", q[i] + 10);
        add_http(E_ERRJSON, 400, name, "GET", q[i], NULL, "", 0);
    }
    static const char *const qb[] = {
        "{}",
        "{\"start\":\"1h-ago\"}",
        "{\"start\":\"1h-ago\",\"queries\":[]}",
        "{\"start\":\"1h-ago\",\"queries\":[{}]}",
        "{\"start\":\"1h-ago\",\"queries\":[{\"aggregator\":\"sum\"}]}",
        "{\"start\":\"1h-ago\",\"queries\":[{\"aggregator\":\"zz\",\"metric\":\"m6.keep\"}]}",
        "{\"start\":\"1h-ago\",\"queries\":7}",
        "{\"start\":[],\"queries\":[]}",
        "[",
        "\xff"};
    for (size_t i = 0; i < sizeof qb / sizeof *qb; i++) {
        snprintf(name, sizeof name, "query body #%zu", i);
        add_http(E_ERRJSON, 400, name, "POST", "/api/query", NULL, qb[i], strlen(qb[i]));
    }
    add_http(E_ERRJSON, 400, "suggest: bad type", "GET", "/api/suggest?type=nope&q=m", NULL, "", 0);
    add_http(E_ERRJSON, 400, "suggest: no type", "GET", "/api/suggest?q=m", NULL, "", 0);
    /* /api/uid/assign answers 400 with its own {"metric":{},"metric_errors":{..}}
     * (docs/api-uid.md). */
    add_http(E_STATUS, 400, "uid assign: bad name", "GET", "/api/uid/assign?metric=a!b", NULL, "",
             0);

    /* Transport level: libmicrohttpd's own pages (compat.md). */
    char *h = repeat("a", 100000, "GET /api/version HTTP/1.1\r\nHost: x\r\nX-Big: ", "\r\n\r\n");
    add_str(HTTP, E_STATUS, 431, NULL, "huge header", h);
    free(h);
    h = repeat("X-A: b\r\n", 20000, "GET /api/version HTTP/1.1\r\nHost: x\r\n", "\r\n");
    add_str(HTTP, E_STATUS, 431, NULL, "20,000 headers", h);
    free(h);
    h = repeat("a", 100000, "GET /api/", " HTTP/1.1\r\nHost: x\r\n\r\n");
    add_str(HTTP, E_STATUS, 414, NULL, "huge URI", h);
    free(h);
    add_str(HTTP, E_STATUS, 505, NULL, "version HTTP/9.9",
            "GET /api/version HTTP/9.9\r\nHost: x\r\n\r\n");
    add_str(HTTP, E_STATUS, 505, NULL, "version HTTP/2.0",
            "GET /api/version HTTP/2.0\r\nHost: x\r\n\r\n");
    /* An unparsable Content-Length: libmicrohttpd 0.9.75 would answer it
     * itself with the header block twice; the server answers it first
     * (http_server.c, http_precheck_length) with one OpenTSDB error. */
    add_str(HTTP, E_ERRJSON, 400, NULL, "Content-Length: abc",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}");
    add_str(HTTP, E_ERRJSON, 400, NULL, "Content-Length: -1",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}");
    add_str(HTTP, E_STATUS, 400, NULL, "two different Content-Lengths",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"
            "{}x");
    add_str(HTTP, E_STATUS, 400, NULL, "bad chunk size",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    add_str(HTTP, E_STATUS, 413, NULL, "Content-Length over the body limit",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{}");
    add_str(HTTP, E_STATUS, 400, NULL, "header without colon",
            "GET /api/version HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n");
    /* Like Netty, a missing Host header is tolerated. */
    add_str(HTTP, E_STATUS, 200, NULL, "missing Host in HTTP/1.1",
            "GET /api/version HTTP/1.1\r\n\r\n");

    /* Garbage first bytes that select HTTP (A-Z, docs/telnet.md). */
    static const struct {
        const char *b;
        size_t n;
    } garbage[] = {{B("GARBAGE\r\n\r\n")},
                   {B("G\r\n\r\n")},
                   {B("GET\r\n\r\n")},
                   {B("Z\x01\x02\x03\r\n\r\n")},
                   {B("GET  HTTP/1.1\r\n\r\n")},
                   {B("GET / HTTP/1.1 extra\r\n\r\n")},
                   {B("AAAA\n\n")},
                   {B("GET /api/version\r\n\r\n")},
                   {B("POST\0/api/put HTTP/1.1\r\n\r\n")}};
    /* libmicrohttpd closes at once when the request line has no URI, and
     * answers its HTML 400 page when it has one but is malformed (compat.md). */
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
        snprintf(name, sizeof name, "garbage request #%zu", i);
        int page = i == 4 || i == 5 || i == 7 || i == 8;
        add_raw(HTTP, page ? E_STATUS : E_CLOSE, page ? 400 : 0, NULL, name, garbage[i].b,
                garbage[i].n);
    }

    /* Truncated requests: no answer until the rest or the idle timeout. */
    static const char *const trunc[] = {
        "G",
        "GET",
        "GET /api/ver",
        "GET /api/version HTTP/1.1",
        "GET /api/version HTTP/1.1\r\n",
        "GET /api/version HTTP/1.1\r\nHost: x",
        "GET /api/version HTTP/1.1\r\nHost: x\r\n",
        "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"metric\":",
        "POST /api/put HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"met"};
    for (size_t i = 0; i < sizeof trunc / sizeof *trunc; i++) {
        snprintf(name, sizeof name, "truncated request #%zu", i);
        add_str(HTTP, E_NOREPLY, 0, NULL, name, trunc[i]);
    }
    /* Content-Length shorter than the body: the rest is a second request. */
    add_str(HTTP, E_ERRJSON, 400, NULL, "Content-Length too short",
            "POST /api/put HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{\"metric\":\"m\"}");
}

/* ---- running a row --------------------------------------------------- */

static tu_tsd_t tsd;
static char *reply;
#define REPLY_CAP (4u << 20)

/* Printable form of bytes for a failure message (at most ~160 chars). */
static const char *esc(const char *b, size_t n)
{
    static char out[4][400];
    static int k;
    char *o = out[k = (k + 1) % 4];
    size_t j = 0;
    for (size_t i = 0; i < n && j < 320; i++) {
        unsigned char c = (unsigned char)b[i];
        if (c >= 32 && c < 127 && c != '\\')
            o[j++] = (char)c;
        else
            j += (size_t)sprintf(o + j, "\\x%02x", c);
    }
    if (n > 160) j += (size_t)sprintf(o + j, "...(%zu bytes)", n);
    o[j] = '\0';
    return o;
}

static size_t run_io(const row_t *r, int *eof)
{
    int fd = tu_connect(tsd.port);
    if (fd < 0) fail_msg("connect failed before row '%s'", r->name);
    /* A reply can come while we still send (a 431 closes early): ignore EPIPE. */
    size_t off = 0;
    while (off < r->len) {
        ssize_t w = send(fd, r->bytes + off, r->len - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    int grace = 20000; /* silence; a row normally ends at EOF long before */
    if (r->expect == E_NOREPLY)
        grace = 300;
    else
        shutdown(fd, SHUT_WR);
    size_t n = 0;
    *eof = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, grace) <= 0) break;
        ssize_t got = recv(fd, reply + n, REPLY_CAP - 1 - n, 0);
        if (got <= 0) {
            *eof = 1;
            break;
        }
        n += (size_t)got;
        if (n >= REPLY_CAP - 1) break;
    }
    reply[n] = '\0';
    close(fd);
    return n;
}

/* Returns NULL if the reply has the row's shape, else why not. */
static const char *judge(const row_t *r, size_t n, int eof)
{
    static char why[256];
    switch (r->expect) {
    case E_SILENT:
        if (n) return "expected no reply";
        return eof ? NULL : "connection not closed after EOF";
    case E_LINES: {
        if (!n) return "no reply";
        if (!eof) return "connection not closed after EOF";
        if (reply[n - 1] != '\n') return "reply does not end in a newline";
        for (const char *l = reply; l < reply + n;) {
            if (strncmp(l, r->want, strlen(r->want)) != 0) {
                snprintf(why, sizeof why, "a line does not start with '%s'", r->want);
                return why;
            }
            const char *nl = memchr(l, '\n', (size_t)(reply + n - l));
            l = nl + 1;
        }
        return NULL;
    }
    case E_CLOSE:
        if (n) return "expected a close without reply";
        return eof ? NULL : "connection not closed";
    case E_NOREPLY:
        return n ? "expected no reply to an incomplete request" : NULL;
    case E_ERRJSON:
    case E_STATUS: {
        int st = 0;
        if (sscanf(reply, "HTTP/1.%*d %d", &st) != 1) return "not an HTTP response";
        if (st != r->code) {
            snprintf(why, sizeof why, "status %d, expected %d", st, r->code);
            return why;
        }
        const char *body = strstr(reply, "\r\n\r\n");
        if (!body) return "no end of headers";
        if (strncmp(body + 4, "HTTP/", 5) == 0) return "the header block is sent twice";
        if (r->expect == E_STATUS) return NULL;
        char want[64];
        snprintf(want, sizeof want, "{\"error\":{\"code\":%d,\"message\":\"", r->code);
        if (strncmp(body + 4, want, strlen(want)) != 0)
            return "body is not OpenTSDB's error object with that code";
        return NULL;
    }
    }
    return "bad row";
}

/* Puts one good point with sync=true and reads it back; returns NULL or why not. */
static const char *still_serves(size_t i)
{
    static char why[256];
    int status = 0;
    if (waitpid(tsd.pid, &status, WNOHANG) == tsd.pid) {
        snprintf(why, sizeof why, "DAEMON DIED (status 0x%x)", status);
        tsd.pid = 0;
        return why;
    }
    long long ts = 1357000000LL + (long long)i;
    char body[256], target[256];
    snprintf(body, sizeof body,
             "{\"metric\":\"m6.alive\",\"timestamp\":%lld,\"value\":%zu,\"tags\":{\"host\":\"a\"}}",
             ts, i + 7);
    char *resp = NULL;
    int st = tu_http(tsd.port, "POST", "/api/put?sync=true", NULL, body, strlen(body), &resp, NULL);
    free(resp);
    if (st != 204) {
        snprintf(why, sizeof why, "good put answered %d", st);
        return why;
    }
    snprintf(target, sizeof target, "/api/query?start=%lld&end=%lld&m=sum:m6.alive", ts, ts + 1);
    resp = NULL;
    st = tu_http(tsd.port, "GET", target, NULL, NULL, 0, &resp, NULL);
    char want[64];
    snprintf(want, sizeof want, "\"%lld\":%zu}", ts, i + 7);
    int ok = st == 200 && resp && strstr(resp, want);
    if (!ok) snprintf(why, sizeof why, "read back: %d %.150s", st, resp ? resp : "");
    free(resp);
    return ok ? NULL : why;
}

/* ---- the data that must not change ---------------------------------- */

#define KEEP_SERIES 3
#define KEEP_POINTS 40
static const char *const keep_tags[KEEP_SERIES] = {"host=k0", "host=k1", "host=k2"};

/* The model: series s, point j: 2013-01-01 + 60 j s; integers for s 0,
 * float 0.5 steps for s 1, negative integers for s 2. */
static codec_point_t keep_point(int s, int j)
{
    codec_point_t p = {.ts_ms = (1356998400LL + 60LL * j) * 1000};
    if (s == 1) {
        p.is_float = 1;
        p.val.f = j + 0.5;
    } else {
        p.val.i = s == 0 ? j * 1000LL : -j - 1LL;
    }
    return p;
}

static void write_keep(void)
{
    /* Series 0 and 2 over telnet, series 1 over HTTP (sync). */
    tc_conn_t *c = tc_open(tsd.port);
    assert_non_null(c);
    for (int s = 0; s < KEEP_SERIES; s += 2)
        for (int j = 0; j < KEEP_POINTS; j++) {
            codec_point_t p = keep_point(s, j);
            char line[128];
            snprintf(line, sizeof line, "put m6.keep %lld %lld %s\n", (long long)p.ts_ms / 1000,
                     (long long)p.val.i, keep_tags[s]);
            assert_int_equal(tc_sends(c, line), 0);
        }
    shutdown(c->fd, SHUT_WR);
    while (tc_fill(c, 10000)) {
    }
    assert_int_equal(c->len, 0); /* no error line */
    tc_close(c);
    char *body = malloc(KEEP_POINTS * 128), *p = body;
    p += sprintf(p, "[");
    for (int j = 0; j < KEEP_POINTS; j++) {
        codec_point_t q = keep_point(1, j);
        p += sprintf(p,
                     "%s{\"metric\":\"m6.keep\",\"timestamp\":%lld,\"value\":%.1f,\"tags\":{"
                     "\"host\":\"k1\"}}",
                     j ? "," : "", (long long)q.ts_ms / 1000, q.val.f);
    }
    sprintf(p, "]");
    char *resp = NULL;
    assert_int_equal(
        tu_http(tsd.port, "POST", "/api/put?sync=true", NULL, body, strlen(body), &resp, NULL),
        204);
    free(resp);
    free(body);
}

static void check_keep(const char *dir)
{
    tsdb_t *db = ac_open_dir(dir);
    for (int s = 0; s < KEEP_SERIES; s++) {
        codec_point_t *pts;
        long n;
        ac_read(db, "m6.keep", &keep_tags[s], 1, &pts, &n);
        assert_int_equal(n, KEEP_POINTS);
        for (int j = 0; j < KEEP_POINTS; j++) {
            codec_point_t w = keep_point(s, j);
            assert_int_equal(pts[j].ts_ms, w.ts_ms);
            assert_int_equal(pts[j].is_float, w.is_float);
            if (w.is_float)
                assert_true(pts[j].val.f == w.val.f);
            else
                assert_int_equal(pts[j].val.i, w.val.i);
        }
        free(pts);
    }
    /* No junk series slipped into m6.keep. */
    const char *t = "host=a";
    codec_point_t *pts;
    long n;
    ac_read(db, "m6.keep", &t, 1, &pts, &n);
    assert_true(n <= 0);
    free(pts);
    tsdb_close(db);
}

/* ---- the test -------------------------------------------------------- */

static void test_malformed_table(void **state)
{
    (void)state;
    const char *const extra[] = {"--auto-metric", NULL};
    memset(&tsd, 0, sizeof tsd);
    assert_int_equal(tu_tsd_start(&tsd, extra), 0);
    write_keep();

    build_telnet_rows();
    build_http_rows();
    reply = malloc(REPLY_CAP);
    size_t bad = 0, skipped = 0, tel = 0;
    for (size_t i = 0; i < nrows; i++) {
        row_t *r = &rows[i];
        tel += r->proto == TEL;
        int eof;
        size_t n = run_io(r, &eof);
        const char *why = r->skip ? NULL : judge(r, n, eof);
        if (r->skip) {
            skipped++;
            print_message("SKIPPED row %zu '%s': %s\n", i, r->name, r->skip);
        }
        if (why) {
            bad++;
            print_message("WRONG row %zu '%s': %s\n   input: %s\n   reply: %s\n", i, r->name, why,
                          esc(r->bytes, r->len), esc(reply, n));
        }
        const char *dead = still_serves(i);
        if (dead) {
            print_message("AFTER row %zu '%s' (input %s): %s\n", i, r->name, esc(r->bytes, r->len),
                          dead);
            if (!tsd.pid) fail_msg("the daemon died; log: %s", tsd.log);
            bad++;
        }
    }
    print_message("malformed inputs: %zu (%zu telnet, %zu HTTP), wrong: %zu, skipped: %zu\n", nrows,
                  tel, nrows - tel, bad, skipped);
    assert_true(nrows >= 200);

    /* The data written first reads back the same through the HTTP API... */
    char *resp = NULL;
    int st = tu_http(tsd.port, "GET",
                     "/api/query?start=1356998000&end=1357010000&m=sum:m6.keep"
                     "{host=k0}",
                     NULL, NULL, 0, &resp, NULL);
    assert_int_equal(st, 200);
    assert_non_null(strstr(resp, "\"1356998400\":0,\"1356998460\":1000,"));
    free(resp);
    /* ... and from the store after a clean stop. */
    assert_int_equal(tu_tsd_stop(&tsd), 0);
    check_keep(tsd.dir);
    tu_tsd_destroy(&tsd);

    for (size_t i = 0; i < nrows; i++)
        free(rows[i].bytes);
    free(rows);
    free(reply);
    assert_int_equal(bad, 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
