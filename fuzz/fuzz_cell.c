/* fuzz_cell.c -- libFuzzer target for OpenTSDB data cells (codec/cell.h):
 * single-point qualifiers and values, compacted and append columns, and
 * whole-row decoding.
 *
 * Input: byte 0 = base-time seed, then cells as [qlen][vlen][qual][value]
 * (at most 32 cells). Checks: every cell's iterator ends with 1* then 0 or
 * an error, never anything else; codec_row_decode yields strictly
 * increasing times within the reach of a qualifier's offset field. Round trips: a single-point cell
 * that decodes re-encodes (codec_point_encode) to a cell that decodes to the
 * same offset and value; if the cells are all single points with increasing
 * offsets, their compacted column (codec_compact_build) and their append
 * column (codec_append_build) each decode to the same points as the cells. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cell.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

#define MAX_CELLS      32
#define MAX_PTS        4096
#define OFFSET_S_BITS  4095u    /* largest 12-bit seconds offset */
#define OFFSET_MS_BITS 4194303u /* largest 22-bit ms offset */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static codec_point_t pts_a[MAX_PTS], pts_b[MAX_PTS];

static int same_point(const codec_point_t *a, const codec_point_t *b)
{
    return a->ts_ms == b->ts_ms && a->is_float == b->is_float &&
           !memcmp(&a->val, &b->val, sizeof a->val);
}

static void single_roundtrip(const codec_cell_t *c, uint32_t base_s)
{
    oct_errbuf_t eb;
    codec_dp_t dp;
    if (codec_cell_decode_single(c->qual, c->qual_len, c->val, c->val_len, &dp, &eb) != 0) return;
    /* Offsets are not range-checked on decode (cells.md section 2): a 12-bit
     * seconds or 22-bit ms offset may point past the hour; such a point
     * cannot be re-encoded in this row. */
    if (dp.ms ? dp.offset_ms > OFFSET_MS_BITS : dp.offset_ms > OFFSET_S_BITS * 1000) abort();
    if (dp.offset_ms > CODEC_MAX_OFFSET_MS) return;
    if (!dp.ms && dp.offset_ms % 1000 != 0) abort();
    codec_point_t p = {.ts_ms = (int64_t)base_s * 1000 + dp.offset_ms, .is_float = dp.is_float};
    if (dp.is_float)
        p.val.f = dp.val.f;
    else
        p.val.i = dp.val.i;
    codec_cell_buf_t cb;
    if (codec_point_encode(&p, base_s, dp.ms, &cb, &eb) != 0) abort();
    codec_dp_t dp2;
    if (codec_cell_decode_single(cb.qual, cb.qual_len, cb.val, cb.val_len, &dp2, &eb) != 0) abort();
    if (dp2.offset_ms != dp.offset_ms || dp2.is_float != dp.is_float) abort();
    if (dp.is_float ? memcmp(&dp.val.f, &dp2.val.f, 8) : dp.val.i != dp2.val.i) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint32_t base_s = 1356998400u + 3600u * data[0];
    codec_cell_t cells[MAX_CELLS];
    size_t n = 0, off = 1;
    while (n < MAX_CELLS && size - off >= 2) {
        size_t ql = data[off], vl = data[off + 1];
        off += 2;
        if (size - off < ql + vl) break;
        cells[n].qual = data + off;
        cells[n].qual_len = ql;
        cells[n].val = data + off + ql;
        cells[n].val_len = vl;
        off += ql + vl;
        n++;
    }
    oct_errbuf_t eb;
    int all_single = n > 0;
    for (size_t i = 0; i < n; i++) {
        codec_cell_iter_t it;
        FUZZ_IGNORE(codec_qual_kind_name(codec_qual_classify(cells[i].qual, cells[i].qual_len)));
        if (codec_cell_iter_init(&it, cells[i].qual, cells[i].qual_len, cells[i].val,
                                 cells[i].val_len, &eb) >= 0) {
            codec_dp_t dp;
            int r, k = 0;
            while ((r = codec_cell_iter_next(&it, &dp, &eb)) == 1)
                if (++k > 1 << 20) abort();
            if (r != 0 && r != OCT_ECORRUPT) abort();
        }
        single_roundtrip(&cells[i], base_s);
        codec_dp_t dp;
        if (codec_cell_decode_single(cells[i].qual, cells[i].qual_len, cells[i].val,
                                     cells[i].val_len, &dp, &eb) != 0)
            all_single = 0;
    }

    codec_row_stats_t st;
    int na = codec_row_decode(base_s, cells, n, pts_a, MAX_PTS, &st, &eb);
    if (na < 0) return 0;
    for (int i = 0; i < na; i++) {
        if (pts_a[i].ts_ms < (int64_t)base_s * 1000 ||
            pts_a[i].ts_ms > (int64_t)base_s * 1000 + OFFSET_MS_BITS)
            abort();
        if (i && pts_a[i].ts_ms <= pts_a[i - 1].ts_ms) abort();
    }
    if (!all_single) return 0;

    uint8_t q[MAX_CELLS * 4], v[MAX_CELLS * 8 + 1];
    size_t ql = 0, vl = 0;
    if (codec_compact_build(cells, n, q, sizeof q, &ql, v, sizeof v, &vl, &eb) == (int)n) {
        codec_cell_t cc = {q, ql, v, vl};
        int nb = codec_row_decode(base_s, &cc, 1, pts_b, MAX_PTS, &st, &eb);
        if (nb != na) abort();
        for (int i = 0; i < na; i++)
            if (!same_point(&pts_a[i], &pts_b[i])) abort();
    }
    uint8_t av[MAX_CELLS * 12];
    int al = codec_append_build(cells, n, av, sizeof av, &eb);
    if (al >= 0) {
        codec_cell_t ac = {codec_append_qualifier, 3, av, (size_t)al};
        int nb = codec_row_decode(base_s, &ac, 1, pts_b, MAX_PTS, &st, &eb);
        if (nb != na) abort();
        for (int i = 0; i < na; i++)
            if (!same_point(&pts_a[i], &pts_b[i])) abort();
    }
    return 0;
}
