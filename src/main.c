/* main.c -- the octsdb executable: everything is in the cli module. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
