/* config_int.h -- private to config.c/config_keys.c: the table of known keys. */
#ifndef OCT_COMMON_CONFIG_INT_H
#define OCT_COMMON_CONFIG_INT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    OCT_CFG_STR,  /* any text */
    OCT_CFG_BOOL, /* true/false/yes/no/on/off/1/0 */
    OCT_CFG_INT,  /* base-10 integer in [min, max] */
    OCT_CFG_ENUM, /* one of 'choices' (space-separated), exact match after trimming */
} oct_cfg_type_t;

/* Strings that must not be emptied (a table name or directory of "" is never meant). */
#define OCT_CFG_NONEMPTY 1u
/* A feature octsdb does not implement yet: only "off" is accepted (false, or an empty
 * string), so a config that turns it on stops the command instead of being ignored. */
#define OCT_CFG_OFF 2u

typedef struct {
    const char *name;
    const char *def; /* default value; NULL = unset (optional, or required by a command) */
    oct_cfg_type_t type;
    unsigned flags;
    int64_t min, max;    /* OCT_CFG_INT */
    const char *choices; /* OCT_CFG_ENUM */
} oct_config__key_t;

/* Every key octsdb knows, in no particular order (config.c sorts its own copy). */
extern const oct_config__key_t oct_config__keys[];
extern const size_t oct_config__n_keys;

#endif
