/* cmd_passwd.c -- `octsdb passwd`: makes a line for the credentials file
 * (server/auth.h, docs/reliability.md, "Access"), so nobody hashes passwords by hand.
 *
 *   octsdb passwd [--scheme=argon2id|yescrypt] [--role=rw|ro] USER
 *       reads the password (on a terminal: asked twice, not echoed; else
 *       the first line of stdin) and prints `basic USER <hash> <role>`.
 *   octsdb passwd --token [--role=rw|ro]
 *       makes a random token: prints `token sha256:<digest> <role>` on
 *       stdout and the token itself on stderr (only its digest is stored).
 *
 * Touches no data dir. Exit status 0, or 2 (usage, unreadable password). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli/cli_int.h"
#include "server/auth.h"

static void passwd_usage(FILE *f)
{
    fprintf(f,
            "usage: octsdb passwd [--scheme=argon2id|yescrypt] [--role=rw|ro] USER\n"
            "       octsdb passwd --token [--role=rw|ro]\n"
            "Prints a line for the credentials file (tsd.core.authentication.credentials_file).\n"
            "USER: reads the password (asked twice on a terminal, else the first line of\n"
            "stdin) and prints 'basic USER <hash> ROLE' with a salted Argon2id (default) or\n"
            "yescrypt hash. --token: prints 'token sha256:<digest> ROLE' and, on stderr, the\n"
            "new random token to give the client. ROLE defaults to rw.\n"
            "\nExit status: 0, or 2 usage or no password.\n");
}

/* One line from fd 0 without its line end, into buf. Returns its length or
 * -1 (EOF before any byte, or too long). */
static long passwd_read_line(const char *prompt, char *buf, size_t cap)
{
    int tty = isatty(STDIN_FILENO);
    struct termios old, quiet;
    if (tty) {
        fputs(prompt, stderr);
        fflush(stderr);
        tcgetattr(STDIN_FILENO, &old);
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    size_t n = 0;
    int c = 0, got = 0;
    char ch;
    while (read(STDIN_FILENO, &ch, 1) == 1) {
        got = 1;
        c = (unsigned char)ch;
        if (c == '\n') break;
        if (n + 1 >= cap) {
            n = cap; /* too long */
            break;
        }
        buf[n++] = (char)c;
    }
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (!got || n >= cap) return -1;
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = 0;
    return (long)n;
}

int cli_cmd_passwd(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        passwd_usage(stdout);
        return CLI_EXIT_OK;
    }
    const char *role = "rw", *user = NULL;
    int token = 0;
    auth_hash_scheme_t scheme = AUTH_HASH_ARGON2ID;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--token")) {
            token = 1;
        } else if (!strncmp(a, "--role=", 7) && (!strcmp(a + 7, "rw") || !strcmp(a + 7, "ro"))) {
            role = a + 7;
        } else if (!strcmp(a, "--scheme=argon2id")) {
            scheme = AUTH_HASH_ARGON2ID;
        } else if (!strcmp(a, "--scheme=yescrypt")) {
            scheme = AUTH_HASH_YESCRYPT;
        } else if (a[0] != '-' && !user) {
            user = a;
        } else {
            fprintf(stderr, "octsdb passwd: unexpected argument '%s'\n", a);
            passwd_usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    if (token) {
        if (user) {
            fprintf(stderr, "octsdb passwd: --token takes no USER\n");
            return CLI_EXIT_USAGE;
        }
        char tok[AUTH_TOKEN_TEXT], dig[65];
        if (auth_make_token(tok, dig, &eb)) {
            fprintf(stderr, "octsdb passwd: %s\n", eb.msg);
            return CLI_EXIT_USAGE;
        }
        printf("token sha256:%s %s\n", dig, role);
        fflush(stdout);
        fprintf(stderr, "the token (give it to the client; only its digest is stored): %s\n", tok);
        OPENSSL_cleanse(tok, sizeof tok);
        return CLI_EXIT_OK;
    }
    /* Basic splits user:password at the first colon; the file splits on
     * white space. */
    if (!user || !*user || strpbrk(user, ": \t\r\n#")) {
        fprintf(stderr, "octsdb passwd: %s\n",
                user ? "USER may not contain ':', white space or '#', nor be empty"
                     : "USER is missing");
        return CLI_EXIT_USAGE;
    }
    char pw[1024], again[1024];
    long n = passwd_read_line("Password: ", pw, sizeof pw);
    int rc = CLI_EXIT_OK;
    if (n <= 0) {
        fprintf(stderr, "octsdb passwd: no password given (an empty one is refused)\n");
        rc = CLI_EXIT_USAGE;
    } else if (isatty(STDIN_FILENO) &&
               (passwd_read_line("Again: ", again, sizeof again) != n || strcmp(pw, again))) {
        fprintf(stderr, "octsdb passwd: the passwords differ\n");
        rc = CLI_EXIT_USAGE;
    } else {
        char hash[256];
        if (auth_hash_password(scheme, pw, (size_t)n, hash, sizeof hash, &eb)) {
            fprintf(stderr, "octsdb passwd: %s\n", eb.msg);
            rc = CLI_EXIT_USAGE;
        } else {
            printf("basic %s %s %s\n", user, hash, role);
        }
    }
    OPENSSL_cleanse(pw, sizeof pw);
    OPENSSL_cleanse(again, sizeof again);
    return rc;
}
