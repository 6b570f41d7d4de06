/* fuzz_time.c -- libFuzzer target for date strings and time zones:
 * query_parse_time (relative, absolute, numeric forms) and query_tz_get.
 *
 * Input: "<zone name>\n<date string>" (no newline: the whole input is the
 * date, in UTC). The zone name comes from the client (/api/query's
 * "timezone"), so it is fuzzed too: query_tz_get must refuse anything that
 * would leave the zoneinfo directory rather than open it. Properties: a
 * relative "<n><unit>-ago" never lies after now; a zone's offset stays
 * within +-26 h, and local->UTC of
 * the local fields of an instant is that instant, or an hour either side
 * (gaps and folds). now is fixed so runs are deterministic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "query/tz.h"

#define NOW_MS 1700000000123LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *nl = memchr(buf, '\n', size);
    const char *tzname = NULL, *date = buf;
    if (nl) {
        *nl = '\0';
        tzname = buf;
        date = nl + 1;
    }
    oct_errbuf_t eb;
    const query_tz_t *tz = NULL;
    if (tzname && query_tz_get(tzname, &tz, &eb) == 0) {
        for (int64_t t = -2000000000LL; t <= 4000000000LL; t += 1234567891LL) {
            int32_t off = query_tz_offset_at(tz, t);
            if (off < -26 * 3600 || off > 26 * 3600) abort();
            int y, mo, d, h, mi, se, wd;
            query_tz_utc_to_local(tz, t, &y, &mo, &d, &h, &mi, &se, &wd);
            int64_t back = query_tz_local_to_utc(tz, y, mo, d, h, mi, se);
            if (back < t - 7200 || back > t + 7200) abort();
        }
    }
    int64_t ms;
    if (query_parse_time(date, tz ? tzname : NULL, NOW_MS, &ms, &eb) == 0) {
        size_t n = strlen(date);
        if (n > 4 && !strcmp(date + n - 4, "-ago") && ms > NOW_MS) abort();
    }
    free(buf);
    return 0;
}
