/*
 * test_cli_docs.c — the command table of the CLI (tools/jfrstream/commands.c)
 * against its documentation: every option of every command (and every old
 * spelling kept as an alias), unless marked hidden, must be named in that
 * command's --help (generated from the table), in the man page and in
 * README.md; every command must be in the overview (`jfrstream --help`),
 * the man page's synopsis and README.md.
 *
 *   test_cli_docs doc/jfrstream.1 README.md
 *
 * An option is "named" where it stands as a word: not inside a longer
 * option (--idle in --idle-timeout does not count). In the man page a '-'
 * is written "\-".
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "commands.h"
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static char *slurp(FILE *f) {
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    for (;;) {
        n += fread(s + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *t = realloc(s, cap * 2);
        if (!t) {
            free(s);
            return NULL;
        }
        s = t;
        cap *= 2;
    }
    s[n] = '\0';
    return s;
}

/* All of `f`, which is closed; out of memory ends the test. */
static char *slurp_close(FILE *f) {
    char *s = slurp(f);
    fclose(f);
    if (!s) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return s;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    return slurp_close(f);
}

/* The text a FILE* function writes. */
static char *capture(void (*fn)(const cli_command *, FILE *), const cli_command *c) {
    FILE *f = tmpfile();
    if (!f) {
        perror("tmpfile");
        exit(1);
    }
    fn(c, f);
    rewind(f);
    return slurp_close(f);
}

static void overview(const cli_command *c, FILE *f) {
    (void)c;
    cli_overview(f);
}

static bool word_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_';
}

/* `word` in `text` as a word; man: with each '-' written "\-". */
static bool names(const char *text, const char *word, bool man) {
    char w[128];
    size_t n = 0;
    for (const char *p = word; *p && n + 2 < sizeof w; p++) {
        if (man && *p == '-')
            w[n++] = '\\';
        w[n++] = *p;
    }
    w[n] = '\0';
    for (const char *p = strstr(text, w); p; p = strstr(p + 1, w)) {
        const char *end = p + n;
        bool before = p > text && (word_char(p[-1]) || (man && p[-1] == '-'));
        bool after = word_char(*end) || (man && end[0] == '\\' && end[1] == '-');
        if (!before && !after)
            return true;
    }
    return false;
}

static void expect(bool ok, const char *cmd, const char *what, const char *where) {
    if (!ok) {
        printf("FAIL: %s: %s is not named in %s\n", cmd, what, where);
        fails++;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s MANPAGE README\n", argv[0]);
        return 2;
    }
    char *man = read_file(argv[1]);
    char *readme = read_file(argv[2]);
    char *over = capture(overview, NULL);
    size_t ncmd, nopts = 0;
    const cli_command *cmds = cli_commands(&ncmd);
    for (size_t i = 0; i < ncmd; i++) {
        const cli_command *c = &cmds[i];
        char *help = capture(cli_command_help, c);
        char synopsis[64], readme_use[64];
        snprintf(synopsis, sizeof synopsis, "\n.B %s\n", c->name);
        snprintf(readme_use, sizeof readme_use, "jfrstream %s ", c->name);
        expect(names(over, c->name, false), c->name, "the command", "jfrstream --help");
        expect(strstr(man, synopsis) != NULL, c->name, "the command", "the man page's synopsis");
        expect(strstr(readme, readme_use) != NULL || names(readme, c->name, false), c->name,
               "the command", "README.md");
        for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
            for (const cli_opt *o = c->opts[g]; o->name; o++) {
                if (o->hidden)
                    continue;
                const char *spell[2] = {o->name, o->alias};
                for (int k = 0; k < 2 && spell[k]; k++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s%s", spell[k], k ? " (alias)" : "");
                    expect(names(help, spell[k], false), c->name, what, "its --help");
                    expect(names(man, spell[k], true), c->name, what, "the man page");
                    expect(names(readme, spell[k], false), c->name, what, "README.md");
                    nopts++;
                }
            }
        free(help);
    }
    printf("cli-docs: %zu commands, %zu option spellings checked: %d failures\n", ncmd, nopts,
           fails);
    free(over);
    free(man);
    free(readme);
    return fails ? 1 : 0;
}
