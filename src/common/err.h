/* err.h -- octsdb error codes and the user-facing error buffer.
 *
 * Every fallible function returns 0 on success or a negative code: either a
 * negated errno (-ENOMEM, -EIO, ...) or one of octsdb's own codes below, which
 * live in the reserved band -1000..-1999 so they never collide with errno.
 * Human-readable detail (the text a user or an HTTP client sees) goes into an
 * oct_errbuf_t that the caller supplies; functions never print. */
#ifndef OCT_COMMON_ERR_H
#define OCT_COMMON_ERR_H

#include <stddef.h>

/* XX(name, value, short description) */
#define OCT_ERR_MAP(XX)                                                                            \
    XX(ENOTFOUND, -1001, "not found")                                                              \
    XX(ECORRUPT, -1002, "corrupt data")                                                            \
    XX(ECASFAIL, -1003, "compare-and-set condition failed")                                        \
    XX(ENOSPC, -1004, "output buffer too small")                                                   \
    XX(EBADNAME, -1005, "invalid name")                                                            \
    XX(EEXISTS, -1006, "already exists")                                                           \
    XX(EEXHAUSTED, -1007, "all unique IDs of this kind are assigned")                              \
    XX(ENOSUCHNAME, -1008, "no such name")                                                         \
    XX(EPARSE, -1009, "parse error")                                                               \
    XX(ECONFIG, -1010, "bad configuration")                                                        \
    XX(EIO, -1011, "storage error")                                                                \
    XX(ELAYOUT, -1012, "data dir layout mismatch")                                                 \
    XX(EAGAIN, -1013, "incomplete input")                                                          \
    XX(ERANGE, -1014, "value out of range")                                                        \
    XX(EPARTITION, -1015, "operation spans partitions")                                            \
    XX(ELOCKED, -1016, "data dir locked by another process")                                       \
    XX(EINVAL, -1017, "invalid argument")                                                          \
    XX(ENOSUCHID, -1018, "no such unique ID")

enum {
#define OCT_ERR_ENUM(name, val, desc) OCT_##name = (val),
    OCT_ERR_MAP(OCT_ERR_ENUM)
#undef OCT_ERR_ENUM
};

/* Short static description of a code (ours or -errno). Never NULL. */
const char *oct_strerror(int code);

/* Fixed-size buffer for the detailed message of the last error. */
#define OCT_ERRBUF_SIZE 512
typedef struct {
    char msg[OCT_ERRBUF_SIZE];
} oct_errbuf_t;

/* Format into eb (if eb is not NULL) and return 'code', so callers can write
 * `return oct_err(eb, OCT_EINVAL, "bad %s", x);`. Truncates silently. */
int oct_err(oct_errbuf_t *eb, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __clang_analyzer__
/* For clang-tidy's static analyzer only: it does not step into variadic
 * functions, so it took any oct_err() result as possibly 0 and reported the
 * outputs an error path leaves unset as used on "success". This shows it the
 * contract, that the result is 'code'. Not compiled into the program. */
static inline int oct_err__code(int ignored, int code)
{
    (void)ignored;
    return code;
}
#define oct_err(eb, code, ...) oct_err__code(oct_err((eb), (code), __VA_ARGS__), (code))
#endif

static inline void oct_errbuf_clear(oct_errbuf_t *eb)
{
    if (eb) eb->msg[0] = '\0';
}

#define OCT_MUST_CHECK __attribute__((warn_unused_result))

#endif
