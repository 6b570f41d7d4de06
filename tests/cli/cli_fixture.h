/* cli_fixture.h -- the fixture the CLI test programs share: one fresh data
 * dir per program (cmocka group setup/teardown), the `--datadir=` flag that
 * names it, and TZ=UTC so printed times do not depend on the machine.
 *
 * Header-only: every tests/cli/test_*.c is its own program, so each gets its
 * own g_dir/g_flag. The data dir is removed by the teardown. */
#ifndef OCT_TESTS_CLI_FIXTURE_H
#define OCT_TESTS_CLI_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

static char *g_dir;       /* the program's data dir (owned; freed by teardown) */
static char g_flag[4200]; /* "--datadir=<g_dir>" */

static inline int cli_fixture_setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    g_dir = tu_tempdir();
    snprintf(g_flag, sizeof g_flag, "--datadir=%s", g_dir);
    return 0;
}

static inline int cli_fixture_teardown(void **state)
{
    (void)state;
    tu_rmrf(g_dir);
    free(g_dir);
    g_dir = NULL;
    return 0;
}

#endif
