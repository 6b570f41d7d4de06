/* testutil.h -- helpers shared by the cmocka test programs: temp dirs that
 * clean themselves up, hex conversion for byte-vector assertions, and running
 * the real octsdb binary. cmocka must be included before this header. */
#ifndef OCT_TESTUTIL_H
#define OCT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path.
 * tu_rmrf() removes it recursively. */
char *tu_tempdir(void);
void tu_rmrf(const char *path);

/* Parses "00 00 01 50E2" (spaces ignored) into out; returns bytes written or -1. */
int tu_unhex(const char *hex, uint8_t *out, size_t cap);
/* Upper-case hex of buf into a static thread-local string (for messages). */
const char *tu_hex(const uint8_t *buf, size_t n);

/* Runs the octsdb binary ($OCTSDB_BIN) with argv (NULL-terminated, without
 * argv[0]); captures stdout into *out (malloc'd, NUL-terminated). Returns the
 * exit status, or -1 if it could not run. */
int tu_run_octsdb(char **out, const char *const argv[]);

#endif
