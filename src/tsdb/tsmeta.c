/* tsmeta.c -- TSMeta cells in tsdb-meta (see tsmeta.h for the layout).
 *
 * The JSON is written field by field in OpenTSDB's order so that a store
 * shared with OpenTSDB tooling reads the same bytes; reading accepts any
 * order and ignores unknown fields (OpenTSDB's Jackson binding does too). */
#include "tsdb/tsmeta.h"

#include <math.h>
#include <string.h>

#include "common/bytes.h"
#include "store/store.h"
#include "tsdb/tsdb_int.h"

void tsmeta_init(tsmeta_t *m)
{
    memset(m, 0, sizeof *m);
    m->max = NAN;
    m->min = NAN;
}

static int tsmeta_check(tsdb_t *db, size_t len, oct_errbuf_t *eb)
{
    const tsdb_layout_t *l = tsdb_layout(db);
    size_t mw = l->uid_width[CODEC_UID_METRIC];
    size_t pw = l->uid_width[CODEC_UID_TAGK] + l->uid_width[CODEC_UID_TAGV];
    if (len < mw || (len - mw) % pw)
        return oct_err(eb, OCT_EPARSE, "TSUID of %zu bytes does not fit the layout", len);
    return 0;
}

static oct_slice_t tsmeta_part(tsdb_t *db, const uint8_t *tsuid)
{
    return oct_slice(tsuid, tsdb_layout(db)->uid_width[CODEC_UID_METRIC]);
}

void tsmeta_to_json(const uint8_t *tsuid, size_t len, const tsmeta_t *m, oct_strbuf_t *out)
{
    json_writer_t w;
    json_w_init(&w, out);
    json_w_obj_begin(&w);
    char hex[1024];
    json_w_key(&w, "tsuid");
    if (codec_uid_to_hex(tsuid, len, hex, sizeof hex) < 0) hex[0] = '\0';
    json_w_str(&w, hex);
    const char *sf[3] = {m->display_name, m->description, m->notes};
    const char *sk[3] = {"displayName", "description", "notes"};
    for (int i = 0; i < 3; i++) {
        json_w_key(&w, sk[i]);
        json_w_str(&w, sf[i] ? sf[i] : "");
    }
    json_w_key(&w, "created");
    json_w_int(&w, m->created);
    json_w_key(&w, "custom");
    if (m->custom_json)
        json_w_raw(&w, m->custom_json, strlen(m->custom_json));
    else
        json_w_null(&w);
    json_w_key(&w, "units");
    json_w_str(&w, m->units ? m->units : "");
    json_w_key(&w, "dataType");
    json_w_str(&w, m->data_type ? m->data_type : "");
    json_w_key(&w, "retention");
    json_w_int(&w, m->retention);
    json_w_key(&w, "max");
    json_w_double(&w, m->max);
    json_w_key(&w, "min");
    json_w_double(&w, m->min);
    json_w_obj_end(&w);
}

static const char *tm_str(json_arena_t *a, const json_value_t *o, const char *k)
{
    const json_value_t *v = json_obj_get(o, k);
    if (!v || v->type != JSON_STRING) return NULL;
    return json_arena_strndup(a, v->str, v->len);
}

static double tm_double(const json_value_t *o, const char *k)
{
    const json_value_t *v = json_obj_get(o, k);
    double d;
    if (v && v->type == JSON_NUMBER && !(v->flags & JSON_F_NONFINITE) && !json_number_double(v, &d))
        return d;
    return NAN; /* "NaN", null, absent */
}

static int64_t tm_int(const json_value_t *o, const char *k)
{
    const json_value_t *v = json_obj_get(o, k);
    int64_t i;
    if (v && !json_number_i64(v, &i)) return i;
    double d;
    if (v && v->type == JSON_NUMBER && !json_number_double(v, &d) && isfinite(d)) return (int64_t)d;
    return 0;
}

int tsmeta_from_json(const char *json, size_t n, json_arena_t *a, tsmeta_t *m, oct_errbuf_t *eb)
{
    json_value_t *o;
    int rc = json_parse(a, json, n, JSON_ALLOW_NONFINITE, &o, eb);
    if (rc) return rc;
    if (o->type != JSON_OBJECT) return oct_err(eb, OCT_EPARSE, "TSMeta is not a JSON object");
    tsmeta_init(m);
    m->display_name = tm_str(a, o, "displayName");
    m->description = tm_str(a, o, "description");
    m->notes = tm_str(a, o, "notes");
    m->units = tm_str(a, o, "units");
    m->data_type = tm_str(a, o, "dataType");
    m->created = tm_int(o, "created");
    m->retention = tm_int(o, "retention");
    m->max = tm_double(o, "max");
    m->min = tm_double(o, "min");
    const json_value_t *c = json_obj_get(o, "custom");
    if (c && c->type == JSON_OBJECT) {
        oct_strbuf_t sb = OCT_STRBUF_INIT;
        json_writer_t w;
        json_w_init(&w, &sb);
        json_w_value(&w, c);
        m->custom_json = json_arena_strndup(a, sb.ptr, sb.len);
        oct_strbuf_free(&sb);
    }
    return 0;
}

int tsmeta_get(tsdb_t *db, const uint8_t *tsuid, size_t len, json_arena_t *a, tsmeta_t *m,
               int64_t *counter, oct_errbuf_t *eb)
{
    int rc = tsmeta_check(db, len, eb);
    if (rc) return rc;
    store_result_t res = STORE_RESULT_INIT;
    rc = store_get(tsdb_store(db), STORE_TABLE_META, tsmeta_part(db, tsuid), oct_slice(tsuid, len),
                   oct_slice_str(TSMETA_FAMILY), &res, eb);
    if (rc < 0) goto out;
    int found = 0;
    if (counter) *counter = 0;
    for (size_t i = 0; i < res.n; i++) {
        const store_cell_t *cl = &res.cells[i];
        if (oct_slice_eq(cl->qualifier, oct_slice_str(TSMETA_QUAL_META))) {
            rc = tsmeta_from_json((const char *)cl->value.ptr, cl->value.len, a, m, eb);
            if (rc) goto out;
            found = 1;
        } else if (oct_slice_eq(cl->qualifier, oct_slice_str(TSMETA_QUAL_CTR)) &&
                   cl->value.len == 8 && counter) {
            *counter = (int64_t)oct_get_be64(cl->value.ptr);
        }
    }
    rc = found;
out:
    store_result_free(&res);
    return rc;
}

int tsmeta_put(tsdb_t *db, const uint8_t *tsuid, size_t len, const tsmeta_t *m, int init_counter,
               oct_errbuf_t *eb)
{
    int rc = tsmeta_check(db, len, eb);
    if (rc) return rc;
    oct_strbuf_t j = OCT_STRBUF_INIT;
    tsmeta_to_json(tsuid, len, m, &j);
    uint8_t zero[8] = {0};
    oct_slice_t part = tsmeta_part(db, tsuid), row = oct_slice(tsuid, len),
                fam = oct_slice_str(TSMETA_FAMILY);
    store_op_t ops[2] = {
        {STORE_OP_PUT, part, {row, fam, oct_slice_str(TSMETA_QUAL_META), oct_slice(j.ptr, j.len)}},
        {STORE_OP_PUT, part, {row, fam, oct_slice_str(TSMETA_QUAL_CTR), oct_slice(zero, 8)}},
    };
    rc = store_write(tsdb_store(db), STORE_TABLE_META, ops, init_counter ? 2 : 1, 0, eb);
    oct_strbuf_free(&j);
    return rc;
}

int tsmeta_delete(tsdb_t *db, const uint8_t *tsuid, size_t len, oct_errbuf_t *eb)
{
    int rc = tsmeta_check(db, len, eb);
    if (rc) return rc;
    /* Only the meta cells: the row also holds octsdb's series record
     * (name:octsdb_series, docs/format/meta.md), from which the series
     * index is rebuilt at open; deleting it would lose the series' data
     * to every query after a restart. */
    oct_slice_t part = tsmeta_part(db, tsuid), row = oct_slice(tsuid, len),
                fam = oct_slice_str(TSMETA_FAMILY);
    store_op_t ops[2] = {
        {STORE_OP_DELETE_CELL, part, {row, fam, oct_slice_str(TSMETA_QUAL_META), {0}}},
        {STORE_OP_DELETE_CELL, part, {row, fam, oct_slice_str(TSMETA_QUAL_CTR), {0}}},
    };
    return store_write(tsdb_store(db), STORE_TABLE_META, ops, 2, 0, eb);
}

int tsmeta_incr(tsdb_t *db, const uint8_t *tsuid, size_t len, int64_t delta, int64_t *out_new,
                oct_errbuf_t *eb)
{
    int rc = tsmeta_check(db, len, eb);
    if (rc) return rc;
    int64_t nv;
    rc =
        store_incr(tsdb_store(db), STORE_TABLE_META, tsmeta_part(db, tsuid), oct_slice(tsuid, len),
                   oct_slice_str(TSMETA_FAMILY), oct_slice_str(TSMETA_QUAL_CTR), delta, &nv, 0, eb);
    if (!rc && out_new) *out_new = nv;
    return rc;
}
