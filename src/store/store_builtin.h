/* store_builtin.h -- private to src/store: the method tables of the backends
 * built into octsdb, listed by the registry in store.c. */
#ifndef OCT_STORE_STORE_BUILTIN_H
#define OCT_STORE_STORE_BUILTIN_H

#include "store/store_backend.h"

extern const store_methods_t store_rocksdb_methods; /* store_rocksdb.c */
extern const store_methods_t store_rados_methods;   /* store_rados.c */

#endif
