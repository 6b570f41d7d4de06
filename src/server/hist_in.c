/* hist_in.c -- histograms as clients send them (hist_int.h): base64 payloads, the text form
 * of telnet `histogram`, and the telnet command itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xmalloc.h"
#include "server/hist_int.h"
#include "server/telnet.h"
#include "tsdb/parse.h"

size_t hist_base64_decode(const char *s, size_t n, uint8_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int v;
        if (c >= 'A' && c <= 'Z')
            v = c - 'A';
        else if (c >= 'a' && c <= 'z')
            v = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            v = c - '0' + 52;
        else if (c == '+')
            v = 62;
        else if (c == '/')
            v = 63;
        else if (c == '=')
            break;
        else
            continue;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    return k;
}

int hist_value_encode(const tsdb_hist_config_t *cfg, int id, codec_hist_t *h, uint8_t **val,
                      size_t *len, oct_errbuf_t *eb)
{
    if (id != cfg->simple_id) return oct_err(eb, OCT_EINVAL, "No codec found mapped to ID %d", id);
    codec_hist_normalize(h);
    if (h->n_buckets == 0)
        return oct_err(eb, OCT_EINVAL,
                       "Histogram buckets cannot be null or empty if 'value' is empty.");
    size_t pl = codec_hist_payload_len(h);
    uint8_t *v = xmalloc(pl + 1);
    v[0] = (uint8_t)id;
    size_t n;
    int rc = codec_hist_encode(h, v + 1, pl, &n, eb);
    if (rc) {
        free(v);
        return rc;
    }
    *val = v;
    *len = n + 1;
    return 0;
}

int hist_value_from_base64(const tsdb_hist_config_t *cfg, int id, const char *b64, size_t n,
                           uint8_t **val, size_t *len, oct_errbuf_t *eb)
{
    if (id != cfg->simple_id) return oct_err(eb, OCT_EINVAL, "No codec found mapped to ID %d", id);
    uint8_t *raw = xmalloc(n * 3 / 4 + 4);
    size_t rl = hist_base64_decode(b64, n, raw);
    codec_hist_t h;
    size_t cap = 64;
    codec_hist_bucket_t *b = xmalloc(cap * sizeof *b);
    int rc = codec_hist_decode(raw, rl, b, cap, &h, eb);
    if (rc == OCT_ENOSPC) {
        cap = h.n_buckets;
        b = xrealloc(b, cap * sizeof *b);
        rc = codec_hist_decode(raw, rl, b, cap, &h, eb);
    }
    if (!rc) rc = hist_value_encode(cfg, id, &h, val, len, eb);
    free(raw);
    free(b);
    return rc;
}

/* Java's Integer.parseInt: optional sign, digits, 32-bit. */
static int parse_jint(const char *s, size_t n, int64_t *out)
{
    size_t i = (n && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (i == n || n - i > 10) return -1;
    int64_t v = 0;
    for (size_t k = i; k < n; k++) {
        if (s[k] < '0' || s[k] > '9') return -1;
        v = v * 10 + (s[k] - '0');
    }
    if (s[0] == '-') v = -v;
    if (v < INT32_MIN || v > INT32_MAX) return -1;
    *out = v;
    return 0;
}

#define TOK_MAX 256

static void reply(oct_strbuf_t *out, const char *kind, const char *msg)
{
    telnet_error_line(out, "histogram", kind, msg);
}

void hist_telnet(tsd_ctx_t *t, const char *args, size_t len, int return_errors, oct_strbuf_t *out)
{
    const char *tok[TOK_MAX];
    size_t tl[TOK_MAX], nt = 0, words = 1;
    char msg[OCT_ERRBUF_SIZE + 64];
    for (size_t i = 0; i < len;) {
        while (i < len && args[i] == ' ')
            i++;
        if (i == len) break;
        size_t j = i;
        while (j < len && args[j] != ' ')
            j++;
        if (nt < TOK_MAX) {
            tok[nt] = args + i;
            tl[nt++] = j - i;
        }
        words++;
        i = j;
    }
    if (words < 5) {
        snprintf(msg, sizeof msg, "not enough arguments (need least 5, got %zu)", words);
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        reply(out, "illegal argument", msg);
        return;
    }
    const tsdb_hist_config_t *cfg = tsdb_histograms(t->db);
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (!cfg->enabled) {
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        reply(out, "illegal argument", HIST_DISABLED_MSG);
        return;
    }
    if (nt == TOK_MAX) {
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        reply(out, "illegal argument", "too many tags");
        return;
    }
    tsdb_dp_t dp;
    memset(&dp, 0, sizeof dp);
    dp.metric = oct_slice(tok[0], tl[0]);
    int is_ms = 0;
    int64_t id = 0;
    int with_id = parse_jint(tok[2], tl[2], &id) == 0;
    size_t first_tag = with_id ? 4 : 3;
    oct_slice_t tags[2 * TOK_MAX];
    size_t ntags = 0;
    int rc = tsdb_parse_timestamp(tok[1], tl[1], 1, &dp.pt.ts_ms, &is_ms, &eb);
    for (size_t k = first_tag; !rc && k < nt; k++) {
        const char *eq = memchr(tok[k], '=', tl[k]);
        if (!eq || eq == tok[k] || eq == tok[k] + tl[k] - 1 ||
            memchr(eq + 1, '=', (size_t)(tok[k] + tl[k] - eq - 1)))
            rc = oct_err(&eb, OCT_EINVAL, "invalid tag: %.*s", (int)(tl[k] > 400 ? 400 : tl[k]),
                         tok[k]);
        else {
            tags[2 * ntags] = oct_slice(tok[k], (size_t)(eq - tok[k]));
            tags[2 * ntags + 1] = oct_slice(eq + 1, (size_t)(tok[k] + tl[k] - eq - 1));
            ntags++;
        }
    }
    if (!rc && with_id && nt < 4) rc = oct_err(&eb, OCT_EINVAL, "Need at least one tag");
    dp.ts_is_ms = (uint8_t)is_ms;
    dp.tags = tags;
    dp.n_tags = ntags;
    uint8_t *val = NULL;
    size_t vlen = 0;
    if (!rc && with_id) {
        if (id < 0 || id > 255)
            rc = oct_err(&eb, OCT_EINVAL, "No codec found mapped to ID %lld", (long long)id);
        else
            rc = hist_value_from_base64(cfg, (int)id, tok[3], tl[3], &val, &vlen, &eb);
    } else if (!rc) {
        codec_hist_bucket_t *b = xmalloc(HIST_MAX_BUCKETS * sizeof *b);
        codec_hist_t h;
        if (cfg->simple_id < 0)
            rc = oct_err(&eb, OCT_EINVAL,
                         "No codec ID assigned to class class " TSDB_HIST_SIMPLE_CLASS);
        else
            rc = codec_hist_parse_text(tok[2], tl[2], b, HIST_MAX_BUCKETS, &h, &eb);
        if (!rc) rc = hist_value_encode(cfg, cfg->simple_id, &h, &val, &vlen, &eb);
        free(b);
    }
    if (!rc) rc = tsdb_put_histogram(t->db, &dp, val, vlen, 0, &eb);
    free(val);
    if (!rc) return;
    switch (rc) {
    case OCT_ENOSUCHNAME:
        tsd_count(t, TSD_CTR_PUT_UNKNOWN_METRICS, 1);
        reply(out, "unknown metric", eb.msg);
        break;
    case OCT_EIO:
    case OCT_EEXHAUSTED:
        tsd_count(t, TSD_CTR_RPC_ERRORS_TELNET, 1);
        if (return_errors) reply(out, "HBase error", eb.msg);
        break;
    default:
        tsd_count(t, TSD_CTR_PUT_ILLEGAL_ARGUMENTS, 1);
        reply(out, "illegal argument", eb.msg);
        break;
    }
}
