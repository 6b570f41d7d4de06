/* err.c -- error code descriptions and the formatted error buffer. */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* err.h's analyzer-only model of oct_err must not rename the definition. */
#undef oct_err

const char *oct_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define OCT_ERR_CASE(name, val, desc)                                                              \
    case val:                                                                                      \
        return desc;
        OCT_ERR_MAP(OCT_ERR_CASE)
#undef OCT_ERR_CASE
    default:
        break;
    }
    if (code < 0 && code > -1000) return strerror(-code);
    return "unknown error";
}

int oct_err(oct_errbuf_t *eb, int code, const char *fmt, ...)
{
    if (eb) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(eb->msg, sizeof eb->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
