/* fuzz_uid.c -- libFuzzer target for UID text forms (codec/uid_bytes.h):
 * hex UIDs/TSUIDs, Java byte lists and kind names.
 *
 * The first byte picks the width (1..16) for hex parsing; the rest is the
 * text. Round trips: from_hex -> to_hex -> from_hex gives the same bytes
 * (and to_hex is upper case, 2 characters a byte); from_javabytes ->
 * to_javabytes -> from_javabytes gives the same bytes; a width-w UID decodes
 * to an id that encodes back to the same bytes when within codec_uid_max. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/uid_bytes.h"

/* Discards a result on purpose (a cast to void does not silence GCC's
 * warn_unused_result). */
#define FUZZ_IGNORE(x)                                                                             \
    do {                                                                                           \
        if (x) {                                                                                   \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    size_t width = 1 + data[0] % 16;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    oct_errbuf_t eb;

    uint8_t b[16], b2[16];
    if (codec_uid_from_hex(s, n, width, b, &eb) == 0) {
        char hex[40];
        int k = codec_uid_to_hex(b, width, hex, sizeof hex);
        if (k != (int)(2 * width)) abort();
        if (codec_uid_from_hex(hex, (size_t)k, width, b2, &eb) != 0) abort();
        if (memcmp(b, b2, width) != 0) abort();
        if (width <= CODEC_UID_MAX_WIDTH) {
            uint64_t id = codec_uid_decode(b, (unsigned)width);
            uint8_t e[8];
            if (id <= codec_uid_max((unsigned)width)) {
                if (codec_uid_encode(id, (unsigned)width, e) != 0) abort();
                if (memcmp(e, b, width) != 0) abort();
            } else if (codec_uid_encode(id, (unsigned)width, e) != OCT_ERANGE) {
                abort();
            }
        }
    }

    uint8_t jb[64], jb2[64];
    int m = codec_uid_from_javabytes(s, n, jb, sizeof jb, &eb);
    if (m >= 0) {
        char txt[64 * 6 + 4];
        int k = codec_uid_to_javabytes(jb, (size_t)m, txt, sizeof txt);
        if (k < 0) abort();
        int m2 = codec_uid_from_javabytes(txt, (size_t)k, jb2, sizeof jb2, &eb);
        if (m2 != m || memcmp(jb, jb2, (size_t)m) != 0) abort();
    }

    codec_uid_kind_t kind;
    if (codec_uid_kind_parse(s, n, &kind, &eb) == 0 && !codec_uid_kind_qualifier(kind)) abort();
    FUZZ_IGNORE(codec_uid_kind_from_qualifier(s, n, &kind));
    return 0;
}
