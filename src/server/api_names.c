/* api_names.c -- UID names as JSON text for answers that list many series
 * (lookup, query/last, tsmeta search): see api_int.h.
 *
 * A lookup of one metric over 50,000 series names the same 8 tag keys and
 * a few hundred tag values 50,000 times; resolving and escaping each one
 * every time was most of the answer's CPU (perf: uid_cache_get_name,
 * oct_strbuf_json_string). So a call keeps a small direct-mapped memo of
 * escaped names per kind, and the last tag-key order, in its arena. */
#include <string.h>

#include "common/strbuf.h"
#include "server/api_int.h"
#include "server/tsd.h"
#include "tsdb/tsdb.h"
#include "uid/uid.h"

#define NAMES_SLOTS_BITS 10         /* per kind; a miss only costs a lookup */
#define NAMES_DIRECT_MAX (1u << 18) /* api_names_expect: 8 MB of slots at most */
#define NAMES_MAX_TAGS   64

typedef struct {
    uint64_t id1;           /* UID + 1; 0 = empty */
    const char *json, *raw; /* "name" as JSON; the name's own bytes */
    uint32_t len, raw_len;
} names_slot_t;

struct api_names {
    names_slot_t *slot[3]; /* by codec_uid_kind_t, made on first use */
    /* api_names_expect: tag values by UID, for the UIDs below n_direct */
    names_slot_t *direct;
    uint64_t n_direct;
    /* the tag-key UIDs of the last TSUID written and their name order */
    size_t order_n;
    uint64_t order_k[NAMES_MAX_TAGS];
    uint8_t order[NAMES_MAX_TAGS];
};

static struct api_names *names_of(api_call_t *c)
{
    if (!c->names) {
        c->names = json_arena_alloc(&c->arena, sizeof *c->names);
        memset(c->names, 0, sizeof *c->names);
    }
    return c->names;
}

void api_names_expect(api_call_t *c, size_t n)
{
    /* A big answer names many tag values, each maybe once (a host's): a
     * slot per UID, read in TSUID order (the UIDs mostly ascending), beats
     * a hashed memo that misses the cache on every new value. */
    struct api_names *m = names_of(c);
    uint64_t top;
    oct_errbuf_t eb;
    if (n < 4096 || m->direct || uid_counter(tsdb_uids(c->tsd->db), CODEC_UID_TAGV, &top, &eb) ||
        top >= NAMES_DIRECT_MAX)
        return;
    m->n_direct = top + 1;
    m->direct = json_arena_alloc(&c->arena, m->n_direct * sizeof *m->direct);
    memset(m->direct, 0, m->n_direct * sizeof *m->direct);
}

static names_slot_t *names_slot(api_call_t *c, codec_uid_kind_t kind, uint64_t id, oct_errbuf_t *eb,
                                int *rc)
{
    struct api_names *m = names_of(c);
    names_slot_t *sl;
    if (kind == CODEC_UID_TAGV && id < m->n_direct) {
        sl = &m->direct[id];
    } else {
        if (!m->slot[kind]) {
            size_t sz = sizeof(names_slot_t) << NAMES_SLOTS_BITS;
            m->slot[kind] = json_arena_alloc(&c->arena, sz);
            memset(m->slot[kind], 0, sz);
        }
        sl = &m->slot[kind][(id * 0x9E3779B97F4A7C15ull) >> (64 - NAMES_SLOTS_BITS)];
    }
    if (sl->id1 != id + 1) {
        uint8_t buf[UID_NAME_MAX];
        size_t bl;
        *rc = uid_get_name(tsdb_uids(c->tsd->db), kind, id, buf, sizeof buf, &bl, eb);
        if (*rc) return NULL;
        size_t plain = 0;
        while (plain < bl && buf[plain] >= 0x20 && buf[plain] != '"' && buf[plain] != '\\')
            plain++;
        char *j;
        if (plain == bl) { /* the usual case: the JSON text is the name in quotes */
            j = json_arena_alloc(&c->arena, bl + 2);
            j[0] = '"';
            memcpy(j + 1, buf, bl);
            j[bl + 1] = '"';
            *sl = (names_slot_t){id + 1, j, j + 1, (uint32_t)bl + 2, (uint32_t)bl};
        } else {
            oct_strbuf_t esc = {0};
            oct_strbuf_json_string(&esc, (const char *)buf, bl);
            j = json_arena_alloc(&c->arena, esc.len + bl);
            memcpy(j, esc.ptr, esc.len);
            memcpy(j + esc.len, buf, bl);
            *sl = (names_slot_t){id + 1, j, j + esc.len, (uint32_t)esc.len, (uint32_t)bl};
            oct_strbuf_free(&esc);
        }
    }
    return sl;
}

int api_name_json(api_call_t *c, codec_uid_kind_t kind, uint64_t id, const char **json, size_t *len,
                  oct_errbuf_t *eb)
{
    int rc = 0;
    const names_slot_t *sl = names_slot(c, kind, id, eb, &rc);
    if (!sl) return rc;
    *json = sl->json;
    *len = sl->len;
    return 0;
}

/* Tag keys sort by their raw bytes, as OpenTSDB's sorted map of names. */
static int raw_cmp(const names_slot_t *a, const names_slot_t *b)
{
    size_t n = a->raw_len < b->raw_len ? a->raw_len : b->raw_len;
    int r = memcmp(a->raw, b->raw, n);
    return r ? r : (a->raw_len > b->raw_len) - (a->raw_len < b->raw_len);
}

/* Appends the tags object of a TSUID to sb (after w's separator if w), or
 * returns an error having appended nothing. */
static int tags_append(api_call_t *c, oct_strbuf_t *sb, const uint8_t *tsuid, size_t len,
                       json_writer_t *w, oct_errbuf_t *eb)
{
    const tsdb_layout_t *l = tsdb_layout(c->tsd->db);
    unsigned mw = l->uid_width[CODEC_UID_METRIC], kw = l->uid_width[CODEC_UID_TAGK],
             vw = l->uid_width[CODEC_UID_TAGV];
    if (len < mw || (len - mw) % (kw + vw)) return oct_err(eb, OCT_ECORRUPT, "bad TSUID length");
    size_t n = (len - mw) / (kw + vw);
    if (n > NAMES_MAX_TAGS) return oct_err(eb, OCT_ECORRUPT, "a TSUID with %zu tags", n);
    names_slot_t k[NAMES_MAX_TAGS], v[NAMES_MAX_TAGS]; /* copies: a slot may be evicted */
    uint64_t kid[NAMES_MAX_TAGS];
    size_t total = 2;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *pk = tsuid + mw + i * (kw + vw);
        kid[i] = codec_uid_decode(pk, kw);
        const names_slot_t *sk = names_slot(c, CODEC_UID_TAGK, kid[i], eb, &rc);
        if (!sk) return rc;
        k[i] = *sk;
        const names_slot_t *sv =
            names_slot(c, CODEC_UID_TAGV, codec_uid_decode(pk + kw, vw), eb, &rc);
        if (!sv) return rc;
        v[i] = *sv;
        total += k[i].len + v[i].len + 2;
    }
    struct api_names *m = c->names;
    int same = m->order_n == n && (n == 0 || !memcmp(m->order_k, kid, n * sizeof *kid));
    if (!same) { /* a new set of tag keys: sort them by name (n is small) */
        for (size_t i = 0; i < n; i++) {
            size_t j = i;
            while (j > 0 && raw_cmp(&k[m->order[j - 1]], &k[i]) > 0) {
                m->order[j] = m->order[j - 1];
                j--;
            }
            m->order[j] = (uint8_t)i;
        }
        memcpy(m->order_k, kid, n * sizeof *kid);
        m->order_n = n;
    }
    if (w) json_w_raw(w, "", 0); /* the separator before the value */
    oct_strbuf_reserve(sb, total);
    char *o = sb->ptr + sb->len, *p = o;
    *p++ = '{';
    for (size_t r = 0; r < n; r++) {
        size_t i = m->order[r];
        if (r) *p++ = ',';
        memcpy(p, k[i].json, k[i].len);
        p += k[i].len;
        *p++ = ':';
        memcpy(p, v[i].json, v[i].len);
        p += v[i].len;
    }
    *p++ = '}';
    *p = '\0';
    sb->len += (size_t)(p - o);
    return 0;
}

int api_write_tsuid_tags(api_call_t *c, json_writer_t *w, const uint8_t *tsuid, size_t len,
                         oct_errbuf_t *eb)
{
    return tags_append(c, w->sb, tsuid, len, w, eb);
}

int api_append_tsuid_tags(api_call_t *c, oct_strbuf_t *sb, const uint8_t *tsuid, size_t len,
                          oct_errbuf_t *eb)
{
    return tags_append(c, sb, tsuid, len, NULL, eb);
}
