/*
 * secret.c — secrets from files and the environment (see secret.h).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "secret.h"
#include "report.h"
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_secret_free(char *s) {
    if (!s)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

/* Drop one trailing line break; false when another one is left. */
static bool one_line_only(char *s, size_t *n) {
    if (*n && s[*n - 1] == '\n')
        s[--*n] = '\0';
    if (*n && s[*n - 1] == '\r')
        s[--*n] = '\0';
    return strpbrk(s, "\r\n") == NULL;
}

int cli_secret_file(const char *cmd, const char *opt, const char *path, size_t max,
                    bool one_line, char **out) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_usage_error("%s: %s %s: %s", cmd, opt, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cli_usage_error("%s: %s %s: not a regular file", cmd, opt, path);
    }
    char *b = malloc(max + 2);
    if (!b) {
        close(fd);
        return cli_usage_error("%s: out of memory", cmd);
    }
    size_t n = 0;
    ssize_t r = 1;
    while (n <= max && (r = read(fd, b + n, max + 1 - n)) > 0)
        n += (size_t)r;
    int err = errno;
    close(fd);
    b[n] = '\0';
    const char *why = r < 0 ? strerror(err)
                      : n > max ? "too big"
                      : memchr(b, '\0', n) ? "holds a NUL byte"
                      : (one_line && !one_line_only(b, &n)) ? "more than one line"
                      : n == 0 ? "empty"
                               : NULL;
    if (why) {
        explicit_bzero(b, n);
        free(b);
        return cli_usage_error("%s: %s %s: %s", cmd, opt, path, why);
    }
    *out = b;
    return CLI_EXIT_OK;
}

int cli_secret_env(const char *cmd, const char *var, char **out) {
    *out = NULL;
    const char *v = getenv(var);
    if (!v)
        return CLI_EXIT_OK;
    char *b = strdup(v);
    if (!b)
        return cli_usage_error("%s: out of memory", cmd);
    size_t n = strlen(b);
    if (!one_line_only(b, &n) || n == 0) {
        cli_secret_free(b);
        return cli_usage_error("%s: the environment variable %s is %s", cmd, var,
                               n ? "more than one line" : "empty");
    }
    *out = b;
    return CLI_EXIT_OK;
}

int cli_file_readable(const char *cmd, const char *opt, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_usage_error("%s: %s %s: %s", cmd, opt, path, strerror(errno));
    close(fd);
    return CLI_EXIT_OK;
}
