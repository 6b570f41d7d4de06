/* gen_conf.c -- prints the example octsdb.conf: every key of the key table
 * (src/common/config_keys.c), commented out, with its type, range and default.
 *
 * Built and run by packaging/CMakeLists.txt, so the example installed by
 * `make install` and the .deb is made from the same table the daemon
 * validates against and cannot drift from it. It reads the table through
 * common's private header, as tests do: the table is not part of config.h's
 * contract, and only this build tool needs its types and ranges. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/config_int.h"

/* The section of a key: its first two dot-separated parts ("tsd.network"). */
static size_t gen_section_len(const char *name)
{
    const char *dot = strchr(name, '.');
    if (dot) dot = strchr(dot + 1, '.');
    return dot ? (size_t)(dot - name) : strlen(name);
}

static void gen_describe(const oct_config__key_t *k)
{
    switch (k->type) {
    case OCT_CFG_BOOL:
        printf("# boolean (true/false)");
        break;
    case OCT_CFG_INT:
        printf("# integer, %" PRId64 "..%" PRId64, k->min, k->max);
        break;
    case OCT_CFG_ENUM:
        printf("# one of: %s", k->choices);
        break;
    case OCT_CFG_STR:
        printf("# text%s", (k->flags & OCT_CFG_NONEMPTY) ? ", not empty" : "");
        break;
    }
    printf("%s\n", k->def ? "" : "; unset by default");
}

/* gen_conf VERSION OUT: writes the example to OUT. */
int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_conf VERSION OUT\n");
        return 2;
    }
    const char *version = argv[1];
    if (!freopen(argv[2], "w", stdout)) {
        perror(argv[2]);
        return 1;
    }
    printf("# octsdb.conf -- example configuration for octsdb %s.\n"
           "#\n"
           "# Generated from the daemon's own table of keys (src/common/config_keys.c);\n"
           "# every key octsdb knows is listed, commented out, with its default.\n"
           "# Uncomment a line to change it. Syntax: Java .properties (`key = value`).\n"
           "# Precedence, lowest first: defaults, this file, command-line flags; the\n"
           "# systemd unit passes --datadir=/var/lib/octsdb, which overrides\n"
           "# tsd.storage.data_dir. `octsdb tsd --help` lists the flags; docs/service.md\n"
           "# and the OpenTSDB 2.4 documentation describe the keys.\n",
           version);
    const char *section = "";
    size_t section_len = 0;
    for (size_t i = 0; i < oct_config__n_keys; i++) {
        const oct_config__key_t *k = &oct_config__keys[i];
        size_t len = gen_section_len(k->name);
        if (len != section_len || strncmp(k->name, section, len) != 0) {
            section = k->name;
            section_len = len;
            printf("\n## %.*s\n", (int)len, section);
        }
        gen_describe(k);
        printf("#%s =%s%s\n", k->name, k->def ? " " : "", k->def ? k->def : "");
    }
    return fclose(stdout) ? 1 : 0;
}
