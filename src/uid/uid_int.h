/* uid_int.h -- internal to the uid module: what uid_meta.c needs of the
 * registry. Nothing outside src/uid may include it. */
#ifndef OCT_UID_UID_INT_H
#define OCT_UID_UID_INT_H

#include "store/store.h"
#include "uid/uid.h"

/* The store the registry was opened on (borrowed). */
store_t *uid__store(uid_registry_t *r);

#endif
