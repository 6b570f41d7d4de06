/* annotation_index.c -- the annotation index (docs/format/annotation-index.md)
 * and the search over it (/api/search/annotation, `octsdb search annotation`).
 *
 * The notes stay in the data table, where OpenTSDB keeps them; the index is
 * one row per note in one octsdb-sys partition, so a search reads that
 * partition and then each note by key, never the data rows. Index rows only
 * point: a row whose note is gone is skipped, so the index may lag behind a
 * delete but never invents a note. tsdb_annotation_reindex rebuilds it from
 * the data table (notes written before the index, or by OpenTSDB).
 *
 * Query grammar (docs/api-search.md): terms ANDed, '*' the only wildcard.
 * Text fields (description, notes, custom values) match case-insensitively
 * when the pattern matches the whole value or one of its whitespace-
 * separated words, as a full-text index would find a word. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"
#include "codec/uid_bytes.h"
#include "common/bytes.h"
#include "common/json.h"
#include "common/xmalloc.h"
#include "store/store.h"
#include "tsdb/annotation.h"
#include "tsdb/maint.h"
#include "tsdb/tsdb_int.h"
#include "uid/uid.h"

static const oct_slice_t IDX_PART = {(const uint8_t *)"annidx", 6};
static const oct_slice_t IDX_FAM = {(const uint8_t *)"a", 1};
static const oct_slice_t IDX_QUAL = {(const uint8_t *)"s", 1};

#define IDX_MAX_TSUID 512

static int64_t idx_ms(int64_t t)
{
    return ((uint64_t)t & 0xFFFFFFFF00000000ull) ? t : t * 1000;
}

/* The index row of a note into row[1 + len + 8]; returns its length. */
static size_t idx_row(const uint8_t *tsuid, size_t len, int64_t start, uint8_t *row)
{
    if (!tsuid) len = 0;
    row[0] = len ? 'S' : 'G';
    if (len) memcpy(row + 1, tsuid, len);
    oct_put_be64(row + 1 + len, (uint64_t)idx_ms(start));
    return 1 + len + 8;
}

int tsdb__annidx_put(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start, oct_errbuf_t *eb)
{
    if (len > IDX_MAX_TSUID) return oct_err(eb, OCT_EINVAL, "TSUID too long");
    uint8_t row[1 + IDX_MAX_TSUID + 8], val[8];
    size_t rl = idx_row(tsuid, len, start, row);
    oct_put_be64(val, (uint64_t)start);
    store_op_t op = {STORE_OP_PUT,
                     IDX_PART,
                     {oct_slice(row, rl), IDX_FAM, IDX_QUAL, oct_slice(val, sizeof val)}};
    return store_write(tsdb_store(db), STORE_TABLE_SYS, &op, 1, 0, eb);
}

int tsdb__annidx_delete(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t start,
                        oct_errbuf_t *eb)
{
    if (len > IDX_MAX_TSUID) return oct_err(eb, OCT_EINVAL, "TSUID too long");
    uint8_t row[1 + IDX_MAX_TSUID + 8];
    size_t rl = idx_row(tsuid, len, start, row);
    store_op_t op = {STORE_OP_DELETE_CELL,
                     IDX_PART,
                     {oct_slice(row, rl), IDX_FAM, IDX_QUAL, oct_slice(NULL, 0)}};
    return store_write(tsdb_store(db), STORE_TABLE_SYS, &op, 1, 0, eb);
}

/* Walks the index in row order: cb(ctx, tsuid or NULL, len, start as
 * written). Malformed rows are skipped. */
typedef int (*idx_fn)(void *ctx, const uint8_t *tsuid, size_t len, int64_t start);

static int idx_walk(tsdb_t *db, idx_fn cb, void *ctx, oct_errbuf_t *eb)
{
    store_scan_spec_t spec = {.part = IDX_PART, .family = IDX_FAM};
    store_scanner_t *sc;
    int rc = store_scan_open(tsdb_store(db), STORE_TABLE_SYS, &spec, &sc, eb);
    if (rc) return rc;
    store_result_t res = STORE_RESULT_INIT;
    while ((rc = store_scan_next(sc, &res, eb)) == 1) {
        oct_slice_t row = res.cells[0].row, v = res.cells[0].value;
        if (row.len < 9 || v.len != 8 || (row.ptr[0] == 'G') != (row.len == 9) ||
            (row.ptr[0] != 'G' && row.ptr[0] != 'S'))
            continue;
        size_t tl = row.len - 9;
        rc = cb(ctx, tl ? row.ptr + 1 : NULL, tl, (int64_t)oct_get_be64(v.ptr));
        if (rc) break;
    }
    store_result_free(&res);
    store_scan_close(sc);
    return rc;
}

/* ---- query -------------------------------------------------------------- */

enum { F_TEXT, F_DESC, F_NOTES, F_CUSTOM, F_CUSTOM_KEY, F_TSUID, F_METRIC };

typedef struct {
    int field;
    const char *key; /* F_CUSTOM_KEY */
    const char *pat;
} aterm_t;

typedef struct {
    char *buf;
    aterm_t *t;
    size_t n;
    int needs_note, needs_metric;
} aquery_t;

static int aq_parse(const char *q, aquery_t *out, oct_errbuf_t *eb)
{
    static const struct {
        const char *name;
        int field;
    } fields[] = {{"description", F_DESC},
                  {"notes", F_NOTES},
                  {"custom", F_CUSTOM},
                  {"tsuid", F_TSUID},
                  {"metric", F_METRIC}};
    memset(out, 0, sizeof *out);
    tsdb__word_t *words;
    size_t nw;
    int rc = tsdb__search_split(q, &out->buf, &words, &nw, eb);
    out->t = xcalloc(nw + 1, sizeof *out->t);
    for (size_t w = 0; !rc && w < nw; w++) {
        aterm_t *t = &out->t[out->n++];
        const char *tok = words[w].field;
        t->pat = words[w].pat;
        if (!tok) {
            t->field = F_TEXT;
        } else {
            t->field = -1;
            for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
                if (!strcmp(tok, fields[i].name)) t->field = fields[i].field;
            if (t->field < 0 && !strncmp(tok, "custom.", 7) && tok[7] && !strchr(tok, '*')) {
                t->field = F_CUSTOM_KEY;
                t->key = tok + 7;
            }
            if (t->field < 0) {
                rc = oct_err(eb, OCT_EPARSE,
                             "Unsupported annotation search field '%s' (description, notes, "
                             "custom, custom.KEY, tsuid or metric)",
                             tok);
                break;
            }
        }
        if (t->field == F_METRIC) out->needs_metric = 1;
        if (t->field != F_METRIC && t->field != F_TSUID) out->needs_note = 1;
    }
    free(words);
    return rc;
}

static void aq_free(aquery_t *q)
{
    free(q->buf);
    free(q->t);
}

/* The whole text, or one of its whitespace-separated words, matches. */
static int text_match(const char *pat, const json_value_t *v)
{
    if (!v || v->type != JSON_STRING) return 0;
    const uint8_t *s = (const uint8_t *)v->str;
    size_t n = v->len;
    if (tsdb__glob_match(pat, s, n, 1)) return 1;
    for (size_t i = 0; i < n;) {
        while (i < n && isspace(s[i]))
            i++;
        size_t j = i;
        while (j < n && !isspace(s[j]))
            j++;
        if (j > i && j - i < n && tsdb__glob_match(pat, s + i, j - i, 1)) return 1;
        i = j;
    }
    return 0;
}

static int custom_match(const aterm_t *t, const json_value_t *custom)
{
    if (!custom || custom->type != JSON_OBJECT) return 0;
    if (t->field == F_CUSTOM_KEY) return text_match(t->pat, json_obj_get(custom, t->key));
    for (const json_value_t *m = custom->child; m; m = m->next)
        if (text_match(t->pat, m)) return 1;
    return 0;
}

/* ---- search ------------------------------------------------------------- */

typedef struct {
    tsdb_t *db;
    aquery_t q;
    size_t start, limit, total, shown;
    tsdb_annotation_fn fn;
    void *ctx;
    json_arena_t arena;
    oct_errbuf_t *eb;
} asearch_t;

/* Do the terms on the series (tsuid, metric) hold? 1, 0 or an error. */
static int series_terms(asearch_t *s, const uint8_t *tsuid, size_t len)
{
    char hex[2 * IDX_MAX_TSUID + 1];
    uint8_t name[UID_NAME_MAX];
    size_t nl = 0;
    if (tsuid && codec_uid_to_hex(tsuid, len, hex, sizeof hex) < 0) return 0;
    if (tsuid && s->q.needs_metric) {
        unsigned mw = tsdb_layout(s->db)->uid_width[CODEC_UID_METRIC];
        if (len < mw) return 0;
        int rc = uid_get_name(tsdb_uids(s->db), CODEC_UID_METRIC, codec_uid_decode(tsuid, mw), name,
                              sizeof name, &nl, s->eb);
        if (rc == OCT_ENOSUCHID) return 0;
        if (rc) return rc;
    }
    for (size_t i = 0; i < s->q.n; i++) {
        const aterm_t *t = &s->q.t[i];
        if (t->field == F_TSUID &&
            (!tsuid || !tsdb__glob_match(t->pat, (const uint8_t *)hex, strlen(hex), 1)))
            return 0;
        if (t->field == F_METRIC && (!tsuid || !tsdb__glob_match(t->pat, name, nl, 0))) return 0;
    }
    return 1;
}

static int note_terms(asearch_t *s, const char *json)
{
    json_value_t *v;
    oct_errbuf_t jeb;
    json_arena_reset(&s->arena);
    if (json_parse(&s->arena, json, strlen(json), JSON_ALLOW_NONFINITE, &v, &jeb)) return 0;
    const json_value_t *d = json_obj_get(v, "description"), *n = json_obj_get(v, "notes"),
                       *c = json_obj_get(v, "custom");
    for (size_t i = 0; i < s->q.n; i++) {
        const aterm_t *t = &s->q.t[i];
        int ok = 1;
        if (t->field == F_TEXT)
            ok = text_match(t->pat, d) || text_match(t->pat, n);
        else if (t->field == F_DESC)
            ok = text_match(t->pat, d);
        else if (t->field == F_NOTES)
            ok = text_match(t->pat, n);
        else if (t->field == F_CUSTOM || t->field == F_CUSTOM_KEY)
            ok = custom_match(t, c);
        if (!ok) return 0;
    }
    return 1;
}

static int search_cb(void *ctx, const uint8_t *tsuid, size_t len, int64_t start)
{
    asearch_t *s = ctx;
    int rc = series_terms(s, tsuid, len);
    if (rc <= 0) return rc;
    char *json = NULL;
    rc = tsdb_annotation_get(s->db, tsuid, len, start, &json, s->eb);
    if (rc < 0) return rc;
    if (rc == 0) return 0; /* the note is gone: a stale index row */
    int in_page = s->total >= s->start && (!s->limit || s->shown < s->limit);
    rc = 0;
    if (!s->q.needs_note || note_terms(s, json)) {
        if (in_page) {
            rc = s->fn(s->ctx, json, strlen(json));
            s->shown++;
        }
        s->total++;
    }
    free(json);
    return rc;
}

int tsdb_annotation_search(tsdb_t *db, const char *query, size_t start, size_t limit,
                           tsdb_annotation_fn fn, void *ctx, size_t *total, oct_errbuf_t *eb)
{
    asearch_t s = {.db = db, .start = start, .limit = limit, .fn = fn, .ctx = ctx, .eb = eb};
    s.arena = (json_arena_t)JSON_ARENA_INIT;
    *total = 0;
    int rc = aq_parse(query ? query : "", &s.q, eb);
    if (!rc) rc = idx_walk(db, search_cb, &s, eb);
    *total = s.total;
    aq_free(&s.q);
    json_arena_free(&s.arena);
    return rc;
}

/* ---- rebuilding --------------------------------------------------------- */

typedef struct {
    tsdb_t *db;
    tsdb_annidx_stats_t *st;
    codec_rowkey_layout_t rk;
    json_arena_t arena;
    oct_errbuf_t *eb;
} reindex_t;

static int drop_stale_cb(void *ctx, const uint8_t *tsuid, size_t len, int64_t start)
{
    reindex_t *r = ctx;
    char *json = NULL;
    int rc = tsdb_annotation_get(r->db, tsuid, len, start, &json, r->eb);
    free(json);
    if (rc != 0) return rc < 0 ? rc : 0;
    r->st->dropped++;
    return tsdb__annidx_delete(r->db, tsuid, len, start, r->eb);
}

static int add_row_cb(void *ctx, const tsdb_row_t *row)
{
    reindex_t *r = ctx;
    size_t salt = r->rk.salt_w, mw = r->rk.metric_w;
    size_t head = salt + mw + CODEC_ROWKEY_TS_BYTES;
    if (row->key.len < head || row->key.len - head + mw > IDX_MAX_TSUID) return 0;
    uint8_t tsuid[IDX_MAX_TSUID];
    size_t tl = 0;
    int global = row->key.len == head;
    for (size_t i = 0; global && i < mw; i++)
        if (row->key.ptr[salt + i]) global = 0;
    if (!global) {
        memcpy(tsuid, row->key.ptr + salt, mw);
        memcpy(tsuid + mw, row->key.ptr + head, row->key.len - head);
        tl = mw + row->key.len - head;
    }
    for (size_t c = 0; c < row->n_cells; c++) {
        const tsdb_cell_t *cell = &row->cells[c];
        if (codec_qual_classify(cell->qualifier.ptr, cell->qualifier.len) != CODEC_QUAL_ANNOTATION)
            continue;
        json_value_t *v;
        oct_errbuf_t jeb;
        int64_t st;
        json_arena_reset(&r->arena);
        if (json_parse(&r->arena, (const char *)cell->value.ptr, cell->value.len,
                       JSON_ALLOW_NONFINITE, &v, &jeb))
            continue;
        json_value_t *s = json_obj_get(v, "startTime");
        if (!s || s->type != JSON_NUMBER || json_number_i64(s, &st) || st < 1) continue;
        r->st->notes++;
        int rc = tsdb__annidx_put(r->db, tl ? tsuid : NULL, tl, st, r->eb);
        if (rc) return rc;
    }
    return 0;
}

int tsdb_annotation_reindex(tsdb_t *db, tsdb_annidx_stats_t *st, oct_errbuf_t *eb)
{
    reindex_t r = {db, st, tsdb__rowkey_layout(db), JSON_ARENA_INIT, eb};
    memset(st, 0, sizeof *st);
    int rc = idx_walk(db, drop_stale_cb, &r, eb);
    if (!rc) {
        tsdb_rows_spec_t spec = {.every_row = 1};
        rc = tsdb_scan_rows(db, &spec, add_row_cb, &r, eb);
    }
    json_arena_free(&r.arena);
    return rc;
}
