/* tsd_addr.h -- the record a running TSD keeps in its data dir of where it
 * listens (DATADIR/tsd.addr, docs/format/tsd-addr.md), so that commands
 * that find the data dir locked can do their work through the TSD.
 *
 * Errors are returned (codes in eb), never printed. The functions touch
 * only the record file; any thread, but one writer per data dir (the TSD). */
#ifndef OCT_SERVER_TSD_ADDR_H
#define OCT_SERVER_TSD_ADDR_H

#include "common/err.h"

#define TSD_ADDR_FILE "tsd.addr"

typedef struct {
    long pid;
    char host[256]; /* as bound; "0.0.0.0"/"::" are mapped by tsd_addr_connect_host */
    int port;
    int https; /* the TSD takes only TLS */
    int auth;  /* requests need credentials */
} tsd_addr_t;

/* Writes the record into dir atomically (temporary file, fsync, rename).
 * Returns 0 or -errno with the reason in eb. */
OCT_MUST_CHECK int tsd_addr_write(const char *dir, const tsd_addr_t *a, oct_errbuf_t *eb);

/* Reads the record of dir. Returns 0, OCT_ENOTFOUND (no record), OCT_EPARSE
 * (not a version-1 record, reason in eb) or -errno. */
OCT_MUST_CHECK int tsd_addr_read(const char *dir, tsd_addr_t *out, oct_errbuf_t *eb);

/* Removes the record of dir if it names process pid (a newer TSD's record
 * is left alone). */
void tsd_addr_remove(const char *dir, long pid);

/* 1 if the process the record names exists, else 0 (a stale record). */
int tsd_addr_alive(const tsd_addr_t *a);

/* The host to connect to: the loopback address for a wildcard bind. */
const char *tsd_addr_connect_host(const tsd_addr_t *a);

#endif
