/* store_util.h -- private to src/store: what every backend does the same
 * way, so that the limits and errors of store.h are written once: the
 * argument checks (each returns 0 or OCT_EINVAL with the reason in eb), the
 * creation of the data dir, and a growable scratch buffer. */
#ifndef OCT_STORE_STORE_UTIL_H
#define OCT_STORE_STORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* The limits of store.h's "Names". */
#define STORE_PART_MAX      255
#define STORE_FAMILY_MAX    255
#define STORE_ROW_MAX       65535
#define STORE_QUALIFIER_MAX 65535

int store__check_part(oct_slice_t part, oct_errbuf_t *eb);
int store__check_row(oct_slice_t row, oct_errbuf_t *eb);
/* allow_empty: a read's family restriction may be empty (= all families). */
int store__check_family(oct_slice_t f, int allow_empty, oct_errbuf_t *eb);
int store__check_qualifier(oct_slice_t q, oct_errbuf_t *eb);
/* st is the backend's store (NULL fails). */
int store__check_table(const void *st, store_table_t t, oct_errbuf_t *eb);
int store__check_writable(int read_only, const char *dir, oct_errbuf_t *eb);
/* A mutating op's cell: the family is always required, the qualifier
 * matters only for PUT and DELETE_CELL. */
int store__check_op(const store_op_t *op, oct_errbuf_t *eb);

/* A scan's partition, family restriction and bounds. */
int store__check_scan_spec(const store_scan_spec_t *spec, oct_errbuf_t *eb);

/* 1 if the file name exists in dir (a backend's "a store was made here"
 * mark), else 0. */
int store__dir_has(const char *dir, const char *name);

/* mkdir -p; 0 or -errno. */
int store__mkdir_p(const char *dir);

/* A growable scratch buffer; {0} is empty, free(p) releases it. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} store_buf_t;

/* Room for n more bytes at p + len (len unchanged); returns p + len. */
uint8_t *store__buf_reserve(store_buf_t *b, size_t n);

#endif
