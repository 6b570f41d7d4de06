/* rollup.c -- the rollup qualifier (docs/format/rollup.md section 3). */
#include <string.h>

#include "codec/cell.h"
#include "codec/rollup.h"
#include "common/bytes.h"

int codec_rollup_encode(unsigned agg_id, uint32_t index, const codec_point_t *p,
                        uint8_t qual[CODEC_ROLLUP_QUAL_LEN], uint8_t val[8], size_t *val_len)
{
    if (agg_id > CODEC_ROLLUP_MAX_AGG_ID || index > CODEC_ROLLUP_MAX_INDEX) return OCT_ERANGE;
    unsigned w = p->is_float ? codec_value_encode_float(p->val.f, val)
                             : codec_value_encode_int(p->val.i, val);
    uint16_t low = (uint16_t)((index << 4) | codec_flags(p->is_float, w));
    qual[0] = (uint8_t)agg_id;
    oct_put_be16(qual + 1, low);
    *val_len = w;
    return 0;
}

int codec_rollup_encode_sumsq(uint32_t index, double v, uint8_t qual[CODEC_ROLLUP_QUAL_LEN],
                              uint8_t val[8])
{
    if (index > CODEC_ROLLUP_MAX_INDEX) return OCT_ERANGE;
    uint64_t bits;
    memcpy(&bits, &v, 8);
    qual[0] = CODEC_ROLLUP_SUMSQ;
    oct_put_be16(qual + 1, (uint16_t)((index << 4) | 0xF));
    oct_put_be64(val, bits);
    return 0;
}

int codec_rollup_decode(const uint8_t *q, size_t qlen, const uint8_t *v, size_t vlen,
                        unsigned *agg_id, uint32_t *index, codec_point_t *out)
{
    if (qlen != CODEC_ROLLUP_QUAL_LEN) return OCT_ECORRUPT;
    uint16_t low = oct_get_be16(q + 1);
    unsigned flags = low & 0xF;
    int is_float = (flags & CODEC_FLAG_FLOAT) != 0;
    size_t w = (size_t)(flags & CODEC_FLAGS_LEN_MASK) + 1;
    if (is_float ? (w != 4 && w != 8) || vlen != w
                 : (w != 1 && w != 2 && w != 4 && w != 8) || vlen != w)
        return OCT_ECORRUPT;
    *agg_id = q[0] & 0x7F;
    *index = low >> 4;
    out->is_float = (uint8_t)is_float;
    if (is_float && w == 4) {
        uint32_t bits = oct_get_be32(v);
        float f;
        memcpy(&f, &bits, 4);
        out->val.f = (double)f;
    } else if (is_float) {
        uint64_t bits = oct_get_be64(v);
        memcpy(&out->val.f, &bits, 8);
    } else {
        uint64_t u = oct_get_be_n(v, (unsigned)w);
        if (w < 8 && (u >> (8 * w - 1)) & 1) u |= ~(uint64_t)0 << (8 * w);
        out->val.i = (int64_t)u;
    }
    return 0;
}
