/* point.h -- one decoded data point, the currency between the codecs (OpenTSDB
 * cells, octsdb blocks) and the layers above. Plain value type, no ownership. */
#ifndef OCT_CODEC_POINT_H
#define OCT_CODEC_POINT_H

#include <stdint.h>

typedef struct {
    int64_t ts_ms; /* absolute Unix time in milliseconds */
    union {
        int64_t i; /* when is_float == 0 */
        double f;  /* when is_float == 1 (float32 cells are widened exactly) */
    } val;
    uint8_t is_float;
} codec_point_t;

#endif
