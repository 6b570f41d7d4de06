/* uid_meta.c -- UIDMeta cells (see uid.h): JSON in name:<kind>_meta of the
 * UID's reverse row, as OpenTSDB stores it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/xmalloc.h"
#include "uid/uid.h"
#include "uid/uid_int.h"

static const char *const uid_meta_type_names[CODEC_UID_N_KINDS] = {"METRIC", "TAGK", "TAGV"};

/* The cell's coordinates: partition, row (idb, filled here), qualifier. */
static oct_slice_t meta_row(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, uint8_t *idb)
{
    unsigned w = uid_width(r, kind);
    oct_put_be_n(idb, id, w);
    return oct_slice(idb, w);
}

int uid_meta_put(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, const uid_meta_t *meta,
                 oct_errbuf_t *eb)
{
    uint8_t name[UID_NAME_MAX];
    size_t nlen;
    int rc = uid_get_name(r, kind, id, name, sizeof name, &nlen, eb);
    if (rc) return rc;
    oct_strbuf_t j = OCT_STRBUF_INIT;
    const char *fields[3] = {meta->display_name, meta->description, meta->notes};
    const char *keys[3] = {"displayName", "description", "notes"};
    oct_strbuf_printf(&j, "{\"type\":\"%s\"", uid_meta_type_names[kind]);
    for (int i = 0; i < 3; i++) {
        oct_strbuf_printf(&j, ",\"%s\":", keys[i]);
        const char *v = fields[i] ? fields[i] : "";
        oct_strbuf_json_string(&j, v, strlen(v));
    }
    oct_strbuf_printf(&j, ",\"created\":%lld,\"custom\":%s}", (long long)meta->created,
                      meta->custom_json ? meta->custom_json : "null");
    uint8_t idb[8];
    store_op_t op = {STORE_OP_PUT,
                     oct_slice_str(codec_uid_kind_qualifier(kind)),
                     {meta_row(r, kind, id, idb), UID_FAM_NAME,
                      oct_slice_str(codec_uid_kind_meta_qualifier(kind)), oct_slice(j.ptr, j.len)}};
    rc = store_write(uid__store(r), STORE_TABLE_UID, &op, 1, 0, eb);
    oct_strbuf_free(&j);
    return rc;
}

int uid_meta_get_json(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, store_result_t *out,
                      oct_errbuf_t *eb)
{
    uint8_t idb[8];
    return store_get_cell(uid__store(r), STORE_TABLE_UID,
                          oct_slice_str(codec_uid_kind_qualifier(kind)), meta_row(r, kind, id, idb),
                          UID_FAM_NAME, oct_slice_str(codec_uid_kind_meta_qualifier(kind)), out,
                          eb);
}

int uid_meta_get(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, char **json, size_t *len,
                 oct_errbuf_t *eb)
{
    *json = NULL;
    *len = 0;
    store_result_t res = STORE_RESULT_INIT;
    int rc = uid_meta_get_json(r, kind, id, &res, eb);
    if (rc == 1 && res.n) {
        *len = res.cells[0].value.len;
        *json = xmalloc(*len + 1);
        memcpy(*json, res.cells[0].value.ptr, *len);
        (*json)[*len] = '\0';
    } else if (rc == 1) {
        rc = 0;
    }
    store_result_free(&res);
    return rc;
}

int uid_meta_delete(uid_registry_t *r, codec_uid_kind_t kind, uint64_t id, oct_errbuf_t *eb)
{
    uint8_t idb[8];
    store_op_t op = {STORE_OP_DELETE_CELL,
                     oct_slice_str(codec_uid_kind_qualifier(kind)),
                     {meta_row(r, kind, id, idb),
                      UID_FAM_NAME,
                      oct_slice_str(codec_uid_kind_meta_qualifier(kind)),
                      {0}}};
    return store_write(uid__store(r), STORE_TABLE_UID, &op, 1, 0, eb);
}
