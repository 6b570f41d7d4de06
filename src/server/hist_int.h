/* hist_int.h -- private to src/server: what /api/histogram (api_histogram.c) and telnet
 * `histogram` (hist_in.c) share to turn a client's histogram into a stored cell value
 * (docs/histograms.md, "Writing").
 *
 * Ownership: values are malloc'd for the caller. Errors: 2.4's texts in eb. Threads: pure
 * apart from tsdb_put_histogram. */
#ifndef OCT_SERVER_HIST_INT_H
#define OCT_SERVER_HIST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/histogram.h"
#include "common/err.h"
#include "common/strbuf.h"
#include "server/tsd.h"
#include "tsdb/histogram.h"

/* 2.4's text for a TSD without tsd.core.histograms.config. */
#define HIST_DISABLED_MSG                                                                          \
    "Histogram storage has not been enabled. Check the 'tsd.core.histograms.config' "              \
    "configuration."

/* The most buckets a client's histogram may carry in the text or JSON form. */
#define HIST_MAX_BUCKETS 4096

/* JAXB's lenient base64: characters outside the alphabet are skipped, '=' ends the data.
 * Writes at most n * 3 / 4 + 3 bytes to out; returns the count. */
size_t hist_base64_decode(const char *s, size_t n, uint8_t *out);

/* The cell value for codec id `id` and histogram h: checks the id names the simple codec
 * ("No codec found mapped to ID <id>"), normalizes and encodes h, and refuses one without
 * buckets (its payload is under 6 bytes: no reader, 2.4's included, can decode it). */
OCT_MUST_CHECK int hist_value_encode(const tsdb_hist_config_t *cfg, int id, codec_hist_t *h,
                                     uint8_t **val, size_t *len, oct_errbuf_t *eb);

/* The cell value for a base64 payload of codec `id`: decoded, checked and re-encoded as 2.4
 * does (so a value that does not decode is refused before anything is stored). */
OCT_MUST_CHECK int hist_value_from_base64(const tsdb_hist_config_t *cfg, int id, const char *b64,
                                          size_t n, uint8_t **val, size_t *len, oct_errbuf_t *eb);

/* Telnet `histogram <metric> <ts> [<codec id>] <value> <k=v> ...`: args is the line after the
 * command word. Stores the point (no reply) or appends 2.4's error line to out
 * ("histogram: illegal argument: ...", "histogram: unknown metric: ...", and storage
 * errors as "histogram: HBase error: ..." only when return_errors). */
void hist_telnet(tsd_ctx_t *t, const char *args, size_t len, int return_errors, oct_strbuf_t *out);

#endif
