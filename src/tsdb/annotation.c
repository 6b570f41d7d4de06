/* annotation.c -- OpenTSDB's annotations as cells of the data table.
 *
 * Where a note lives (docs/format/annotations.md): family "t", row = the series'
 * row key (salted as its data) for the hour of startTime, or for a global
 * note salt(zeros) + metric(zeros) + base hour with no tags; qualifier 0x01
 * + the offset from the row's hour, 2 bytes of seconds or 4 bytes of ms,
 * no flags; value = the note's JSON in OpenTSDB's getStorageJSON order
 * (tsuid, startTime, endTime, description, notes, custom).
 *
 * The qualifier is computed exactly as OpenTSDB 2.4 does, quirk included:
 * a start time divisible by 1000 is divided by 1000 first (meant to fold a
 * ms time on a whole second onto the seconds qualifier), so a SECONDS start
 * time such as 1356998000 gets the offset (1356998 % 3600) in the right
 * hour's row. Reproducing it keeps the bytes identical, so notes written by
 * OpenTSDB are found by key here and ours by OpenTSDB. What we do not
 * reproduce is its damage: two different notes can land in one cell that
 * way, and OpenTSDB would silently merge them. Here every keyed access
 * checks the startTime inside the JSON: a get of the other note answers
 * "not found", a delete leaves it alone, and a put that would overwrite it
 * fails with OCT_EEXISTS. Range scans use the JSON's startTime, never the
 * qualifier, so quirky cells are listed at their true time.
 *
 * A start time is in ms when it does not fit in 32 bits (OpenTSDB's
 * Const.SECOND_MASK test), else in seconds.
 *
 * Threads: any number; a put is one conditional write in the row's
 * partition, so racing writers of one note never interleave. */
#include "tsdb/annotation.h"

#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"
#include "codec/rowkey.h"
#include "common/bytes.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/parts.h"
#include "tsdb/tsdb_int.h"

#define ANN_FAMILY      "t"
#define ANN_SECOND_MASK 0xFFFFFFFF00000000ull
#define ANN_MAX_KEY     512

static int ann_is_ms(int64_t t)
{
    return ((uint64_t)t & ANN_SECOND_MASK) != 0;
}

/* The start time in ms, whatever unit it was given in. */
static int64_t ann_norm_ms(int64_t t)
{
    return ann_is_ms(t) ? t : t * 1000;
}

/* Row base hour (seconds) of a start time: from the time itself, without
 * the divide-by-1000 step (OpenTSDB's getRowKey). */
static int64_t ann_base(int64_t t)
{
    int64_t s = ann_is_ms(t) ? t / 1000 : t;
    return s - s % CODEC_ROWKEY_SPAN_S;
}

/* OpenTSDB's getQualifier, quirk included (see the top of the file). */
static size_t ann_qualifier(int64_t start, uint8_t q[5])
{
    int64_t t = start;
    if (t % 1000 == 0) t /= 1000;
    q[0] = CODEC_PREFIX_ANNOTATION;
    if (ann_is_ms(t)) {
        int64_t base = t / 1000 - (t / 1000) % CODEC_ROWKEY_SPAN_S;
        oct_put_be32(q + 1, (uint32_t)(t - base * 1000));
        return 5;
    }
    int64_t base = t - t % CODEC_ROWKEY_SPAN_S;
    oct_put_be16(q + 1, (uint16_t)(t - base));
    return 3;
}

/* Row key for (tsuid, hour base_s) into key; returns its length or an error. */
static int ann_rowkey(const codec_rowkey_layout_t *rk, const uint8_t *tsuid, size_t tlen,
                      int64_t base_s, uint8_t *key, size_t cap, oct_errbuf_t *eb)
{
    if (base_s < 0 || base_s > (int64_t)UINT32_MAX)
        return oct_err(eb, OCT_ERANGE, "annotation time %lld is outside the row key's range",
                       (long long)base_s);
    if (!tsuid || tlen == 0) {
        /* global: never salted, zero metric, no tags */
        size_t plen = codec_rowkey_partition_prefix_len(rk);
        if (plen > cap) return oct_err(eb, OCT_ENOSPC, "row key too long");
        memset(key, 0, plen);
        oct_put_be32(key + plen - CODEC_ROWKEY_TS_BYTES, (uint32_t)base_s);
        return (int)plen;
    }
    return codec_rowkey_from_tsuid(rk, tsuid, tlen, base_s, key, cap, eb);
}

/* startTime of a stored note, or -1 if the JSON has none (or is not JSON). */
static int64_t ann_json_start(const char *json, size_t len)
{
    json_arena_t a = JSON_ARENA_INIT;
    json_value_t *v;
    oct_errbuf_t eb;
    int64_t st = -1;
    if (json_parse(&a, json, len, JSON_ALLOW_NONFINITE, &v, &eb) == 0) {
        json_value_t *s = json_obj_get(v, "startTime");
        int64_t x;
        if (s && s->type == JSON_NUMBER && json_number_i64(s, &x) == 0) st = x;
    }
    json_arena_free(&a);
    return st;
}

/* Is the stored note the one at start? (Same instant, in s or ms.) */
static int ann_same_start(const store_cell_t *c, int64_t start)
{
    int64_t st = ann_json_start((const char *)c->value.ptr, c->value.len);
    return st > 0 && ann_norm_ms(st) == ann_norm_ms(start);
}

typedef struct {
    codec_rowkey_layout_t rk;
    uint8_t key[ANN_MAX_KEY];
    size_t klen, plen;
    uint8_t q[5];
    size_t qlen;
} ann_loc_t;

static int ann_locate(tsdb_t *db, const uint8_t *tsuid, size_t tlen, int64_t start, ann_loc_t *l,
                      oct_errbuf_t *eb)
{
    if (start < 1) return oct_err(eb, OCT_EINVAL, "The start timestamp has not been set");
    l->rk = tsdb__rowkey_layout(db);
    int r = ann_rowkey(&l->rk, tsuid, tlen, ann_base(start), l->key, sizeof l->key, eb);
    if (r < 0) return r;
    l->klen = (size_t)r;
    l->plen = codec_rowkey_partition_prefix_len(&l->rk);
    l->qlen = ann_qualifier(start, l->q);
    return 0;
}

static int ann_get_cell(tsdb_t *db, const ann_loc_t *l, store_result_t *res, oct_errbuf_t *eb)
{
    return store_get_cell(tsdb_store(db), STORE_TABLE_DATA, oct_slice(l->key, l->plen),
                          oct_slice(l->key, l->klen), oct_slice_str(ANN_FAMILY),
                          oct_slice(l->q, l->qlen), res, eb);
}

static void ann_to_json(const tsdb_annotation_t *a, oct_strbuf_t *out)
{
    json_writer_t w;
    json_w_init(&w, out);
    json_w_obj_begin(&w);
    if (a->tsuid && a->tsuid_len) {
        char *hex = xmalloc(2 * a->tsuid_len + 1);
        if (codec_uid_to_hex(a->tsuid, a->tsuid_len, hex, 2 * a->tsuid_len + 1) < 0) hex[0] = 0;
        json_w_key(&w, "tsuid");
        json_w_str(&w, hex);
        free(hex);
    }
    json_w_key(&w, "startTime");
    json_w_int(&w, a->start_time);
    json_w_key(&w, "endTime");
    json_w_int(&w, a->end_time);
    json_w_key(&w, "description");
    json_w_str(&w, a->description ? a->description : "");
    json_w_key(&w, "notes");
    json_w_str(&w, a->notes ? a->notes : "");
    json_w_key(&w, "custom");
    if (a->custom_json)
        json_w_raw(&w, a->custom_json, strlen(a->custom_json));
    else
        json_w_null(&w);
    json_w_obj_end(&w);
}

int tsdb_annotation_put(tsdb_t *db, const tsdb_annotation_t *a, oct_errbuf_t *eb)
{
    ann_loc_t l;
    int rc = ann_locate(db, a->tsuid, a->tsuid_len, a->start_time, &l, eb);
    if (rc) return rc;
    if (a->custom_json) {
        size_t n = strlen(a->custom_json);
        size_t i = 0;
        while (i < n && (a->custom_json[i] == ' ' || a->custom_json[i] == '\t' ||
                         a->custom_json[i] == '\r' || a->custom_json[i] == '\n'))
            i++;
        if (i == n || a->custom_json[i] != '{' || json_validate(a->custom_json, n, 0, eb))
            return oct_err(eb, OCT_EINVAL, "custom must be a JSON object");
    }
    /* the index row first: a crash before the note leaves only a row that
     * points at nothing, which searches skip */
    rc = tsdb__annidx_put(db, a->tsuid, a->tsuid_len, a->start_time, eb);
    if (rc) return rc;
    oct_strbuf_t js = OCT_STRBUF_INIT;
    ann_to_json(a, &js);
    store_result_t res = STORE_RESULT_INIT;
    oct_slice_t part = oct_slice(l.key, l.plen), row = oct_slice(l.key, l.klen);
    oct_slice_t fam = oct_slice_str(ANN_FAMILY), qual = oct_slice(l.q, l.qlen);
    /* Read, check that the cell is free or holds this same note, write if
     * unchanged since the read: a few rounds at most under contention. */
    for (int round = 0;; round++) {
        store_result_reset(&res);
        rc = ann_get_cell(db, &l, &res, eb);
        if (rc < 0) break;
        store_check_t chk;
        memset(&chk, 0, sizeof chk);
        chk.cell.row = row;
        chk.cell.family = fam;
        chk.cell.qualifier = qual;
        if (rc == 0) {
            chk.kind = STORE_CHECK_ABSENT;
        } else {
            if (!ann_same_start(&res.cells[0], a->start_time)) {
                int64_t other =
                    ann_json_start((const char *)res.cells[0].value.ptr, res.cells[0].value.len);
                rc = oct_err(eb, OCT_EEXISTS,
                             "The annotation at startTime %lld shares its storage cell with the "
                             "annotation at startTime %lld (an OpenTSDB qualifier quirk); "
                             "delete that one first or pick another start time",
                             (long long)a->start_time, (long long)other);
                break;
            }
            chk.kind = STORE_CHECK_EQUALS;
            chk.cell.value = res.cells[0].value;
        }
        store_op_t op = {STORE_OP_PUT, part, {row, fam, qual, oct_slice(js.ptr, js.len)}};
        rc = store_cas(tsdb_store(db), STORE_TABLE_DATA, part, &chk, 1, &op, 1, 0, eb);
        if (rc != OCT_ECASFAIL || round >= 16) break;
    }
    store_result_free(&res);
    oct_strbuf_free(&js);
    return rc;
}

int tsdb_annotation_get(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_time,
                        char **json_out, oct_errbuf_t *eb)
{
    *json_out = NULL;
    ann_loc_t l;
    int rc = ann_locate(db, tsuid, tsuid_len, start_time, &l, eb);
    if (rc) return rc;
    store_result_t res = STORE_RESULT_INIT;
    rc = ann_get_cell(db, &l, &res, eb);
    if (rc == 1) {
        if (ann_same_start(&res.cells[0], start_time)) {
            char *s = xmalloc(res.cells[0].value.len + 1);
            memcpy(s, res.cells[0].value.ptr, res.cells[0].value.len);
            s[res.cells[0].value.len] = '\0';
            *json_out = s;
        } else {
            rc = 0; /* another note in the same cell (the qualifier quirk) */
        }
    }
    store_result_free(&res);
    return rc;
}

int tsdb_annotation_delete(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_time,
                           oct_errbuf_t *eb)
{
    ann_loc_t l;
    int rc = ann_locate(db, tsuid, tsuid_len, start_time, &l, eb);
    if (rc) return rc;
    store_result_t res = STORE_RESULT_INIT;
    oct_slice_t part = oct_slice(l.key, l.plen), row = oct_slice(l.key, l.klen);
    oct_slice_t fam = oct_slice_str(ANN_FAMILY), qual = oct_slice(l.q, l.qlen);
    for (int round = 0;; round++) {
        store_result_reset(&res);
        rc = ann_get_cell(db, &l, &res, eb);
        if (rc <= 0) break;
        if (!ann_same_start(&res.cells[0], start_time)) {
            rc = 0;
            break;
        }
        store_check_t chk = {STORE_CHECK_EQUALS, {row, fam, qual, res.cells[0].value}};
        store_op_t op = {STORE_OP_DELETE_CELL, part, {row, fam, qual, oct_slice(NULL, 0)}};
        rc = store_cas(tsdb_store(db), STORE_TABLE_DATA, part, &chk, 1, &op, 1, 0, eb);
        if (rc == 0) {
            /* the note is gone; a failed index delete leaves a row that
             * points at nothing, which searches skip: not the caller's error */
            oct_errbuf_t ieb;
            if (tsdb__annidx_delete(db, tsuid, tsuid_len, start_time, &ieb)) (void)0;
            rc = 1;
            break;
        }
        if (rc != OCT_ECASFAIL || round >= 16) break;
    }
    store_result_free(&res);
    return rc;
}

/* ---- range scan --------------------------------------------------------- */

typedef struct {
    int64_t ms;
    const char *json;
    size_t len;
} ann_hit_t;

static int ann_hit_cmp(const void *a, const void *b)
{
    const ann_hit_t *x = a, *y = b;
    return (x->ms > y->ms) - (x->ms < y->ms);
}

/* Appends to *hits the notes among cells[0..n) (whole rows of the data
 * table) whose startTime is in [start_ms, end_ms]; JSON that does not parse
 * or lacks a startTime is skipped (fsck's business, not a query's). */
static void ann_hits(const store_cell_t *cells, size_t n, int64_t start_ms, int64_t end_ms,
                     json_arena_t *arena, ann_hit_t **hits, size_t *nh, size_t *hcap)
{
    for (size_t c = 0; c < n; c++) {
        const store_cell_t *cell = &cells[c];
        if (cell->qualifier.len < 1 ||
            codec_qual_classify(cell->qualifier.ptr, cell->qualifier.len) != CODEC_QUAL_ANNOTATION)
            continue;
        json_value_t *v;
        oct_errbuf_t jeb;
        if (json_parse(arena, (const char *)cell->value.ptr, cell->value.len, JSON_ALLOW_NONFINITE,
                       &v, &jeb))
            continue;
        json_value_t *s = json_obj_get(v, "startTime");
        int64_t st;
        if (!s || s->type != JSON_NUMBER || json_number_i64(s, &st) || st < 1) continue;
        int64_t ms = ann_norm_ms(st);
        if (ms < start_ms || ms > end_ms) continue;
        if (*nh == *hcap) {
            *hcap = *hcap ? 2 * *hcap : 64;
            *hits = xrealloc(*hits, *hcap * sizeof **hits);
        }
        (*hits)[(*nh)++] = (ann_hit_t){ms, (const char *)cell->value.ptr, cell->value.len};
    }
}

int tsdb_annotation_scan_cells(const store_cell_t *cells, size_t n, int64_t start_ms,
                               int64_t end_ms, tsdb_annotation_fn cb, void *ctx)
{
    size_t nh = 0, hcap = 0, c = 0;
    /* the common case, no note at all: no arena, no allocation */
    while (c < n && (cells[c].qualifier.len < 1 ||
                     codec_qual_classify(cells[c].qualifier.ptr, cells[c].qualifier.len) !=
                         CODEC_QUAL_ANNOTATION))
        c++;
    if (c == n) return 0;
    ann_hit_t *hits = NULL;
    json_arena_t arena = JSON_ARENA_INIT;
    ann_hits(cells + c, n - c, start_ms, end_ms, &arena, &hits, &nh, &hcap);
    /* a note's row is its startTime's hour: sorting all of them gives the
     * order tsdb_annotation_scan gives */
    if (nh > 1) qsort(hits, nh, sizeof *hits, ann_hit_cmp);
    int rc = 0;
    for (size_t h = 0; h < nh && rc == 0; h++)
        rc = cb(ctx, hits[h].json, hits[h].len);
    free(hits);
    json_arena_free(&arena);
    return rc;
}

/* Rows fetched per multi-get: bounds memory on a wide range. */
#define ANN_ROWS_PER_GET 256

int tsdb_annotation_scan(tsdb_t *db, const uint8_t *tsuid, size_t tsuid_len, int64_t start_ms,
                         int64_t end_ms, tsdb_annotation_fn cb, void *ctx, oct_errbuf_t *eb)
{
    codec_rowkey_layout_t rk = tsdb__rowkey_layout(db);
    const int64_t max_ms = (int64_t)UINT32_MAX * 1000 + 999;
    if (start_ms < 0) start_ms = 0;
    if (end_ms > max_ms) end_ms = max_ms;
    if (end_ms < start_ms) return 0;
    if (!tsuid) tsuid_len = 0;
    int rc = 0;
    if (tsuid_len) {
        rc = codec_tsuid_check(&rk, tsuid, tsuid_len, eb);
        if (rc < 0) return rc;
    }
    size_t plen = codec_rowkey_partition_prefix_len(&rk);
    uint8_t k0[ANN_MAX_KEY], k1[ANN_MAX_KEY];
    int64_t b0 = codec_rowkey_base_time(start_ms / 1000);
    int64_t b1 = codec_rowkey_base_time(end_ms / 1000);
    int r0 = ann_rowkey(&rk, tsuid, tsuid_len, b0, k0, sizeof k0, eb);
    if (r0 < 0) return r0;
    int r1 = ann_rowkey(&rk, tsuid, tsuid_len, b1, k1, sizeof k1, eb);
    if (r1 < 0) return r1;
    size_t klen = (size_t)r0;

    tsdb_parts_t pl = {0};
    store_key_t *keys = NULL;
    uint8_t *rows = NULL;
    ann_hit_t *hits = NULL;
    size_t hcap = 0;
    store_result_t res = STORE_RESULT_INIT;
    json_arena_t arena = JSON_ARENA_INIT;
    /* same salt + metric (zeros for global), any hour in range */
    rc = tsdb__parts_collect(db, k0, k1, plen, &pl, eb);
    if (rc < 0) goto out;
    rc = 0;
    keys = xmalloc(ANN_ROWS_PER_GET * sizeof *keys);
    rows = xmalloc(ANN_ROWS_PER_GET * klen);
    for (size_t j = 0; j < pl.n && rc == 0;) {
        size_t nk = 0;
        for (; j < pl.n && nk < ANN_ROWS_PER_GET; j++) {
            uint8_t *row = rows + nk * klen;
            keys[nk].part = tsdb__part(&pl, j);
            memcpy(row, keys[nk].part.ptr, plen);
            memcpy(row + plen, k0 + plen, klen - plen);
            keys[nk].row = oct_slice(row, klen);
            nk++;
        }
        if (!nk) continue; /* j advanced: the loop ends */
        store_result_reset(&res);
        rc = store_multi_get(tsdb_store(db), STORE_TABLE_DATA, keys, nk, oct_slice_str(ANN_FAMILY),
                             &res, eb);
        if (rc < 0) goto out;
        rc = 0;
        size_t nh = 0;
        json_arena_reset(&arena);
        ann_hits(res.cells, res.n, start_ms, end_ms, &arena, &hits, &nh, &hcap);
        /* rows come hour by hour, so sorting one batch keeps global order */
        if (nh > 1) qsort(hits, nh, sizeof *hits, ann_hit_cmp);
        for (size_t h = 0; h < nh && rc == 0; h++)
            rc = cb(ctx, hits[h].json, hits[h].len);
    }
out:
    tsdb__parts_free(&pl);
    free(keys);
    free(rows);
    free(hits);
    store_result_free(&res);
    json_arena_free(&arena);
    return rc;
}
