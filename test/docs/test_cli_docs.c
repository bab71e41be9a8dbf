/*
 * test_cli_docs.c — the command table of the CLI (tools/jfrstream/commands.c)
 * against its documentation, and the README as a front door:
 *
 *  - every option of every command (and every old spelling kept as an
 *    alias), unless marked hidden, is named in that command's --help
 *    (generated from the table) and in the man page, the CLI reference;
 *  - every command is in the overview (`jfrstream --help`), the man page's
 *    synopsis and README.md (as "jfrstream NAME");
 *  - every `jfrstream ...` command line in the README's code blocks names a
 *    command of the table, and each of its options is one of that command's
 *    documented options or a global option of the overview (the README
 *    shows; it need not copy every option);
 *  - README.md has at most 300 lines of at most 100 characters;
 *  - every relative link of README.md and of the other Markdown files
 *    given resolves: the file exists and, for a Markdown target, the
 *    #anchor is one of its headings (GitHub's slugs);
 *  - a guide given as GUIDE.md=CMD,CMD names every documented option of
 *    those commands (doc/live.md: listen and tail).
 *
 *   test_cli_docs doc/jfrstream.1 README.md [OTHER.md | GUIDE.md=CMD,...]...
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
#include <sys/stat.h>

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

/* The option of `c` spelled `word` (name or alias), or NULL; hidden ones
 * count only when `hidden_ok`. */
static const cli_opt *find_opt(const cli_command *c, const char *word, bool hidden_ok) {
    for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
        for (const cli_opt *o = c->opts[g]; o->name; o++)
            if ((strcmp(o->name, word) == 0 || (o->alias && strcmp(o->alias, word) == 0)) &&
                (hidden_ok || !o->hidden))
                return o;
    return NULL;
}

/* Characters of a UTF-8 line (continuation bytes not counted). */
static size_t line_chars(const char *p, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)p[i] & 0xC0) != 0x80;
    return k;
}

/* README.md: at most 300 lines of at most 100 characters. */
static void check_readme_shape(const char *readme) {
    size_t lines = 0;
    for (const char *p = readme; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        lines++;
        size_t w = line_chars(p, n);
        if (w > 100) {
            printf("FAIL: README.md:%zu: %zu characters (at most 100)\n", lines, w);
            fails++;
        }
        p += n + (nl != NULL);
    }
    if (lines > 300) {
        printf("FAIL: README.md: %zu lines (at most 300)\n", lines);
        fails++;
    }
    printf("cli-docs: README.md: %zu lines\n", lines);
}

static bool shell_sep(const char *t) {
    return !strcmp(t, "|") || !strcmp(t, "||") || !strcmp(t, "&") || !strcmp(t, "&&") ||
           !strcmp(t, ";") || t[0] == '>' || t[0] == '<' || !strcmp(t, "2>") || t[0] == '#';
}

/* One `jfrstream ...` command: the words after "jfrstream" up to a shell
 * separator. The command must exist, every option be its own (or global:
 * named in the overview). */
static void check_command_line(char **w, size_t n, const char *over, size_t lineno,
                               size_t *checked) {
    const cli_command *c = NULL;
    size_t i = 0;
    for (; i < n && !shell_sep(w[i]); i++) {
        if (w[i][0] == '-' && w[i][1])
            continue; /* a global option before the command */
        c = cli_command_find(w[i]);
        if (c || strcmp(w[i], "help") == 0)
            break;
        if (i > 0 && w[i - 1][0] == '-')
            continue; /* a global option's value */
        printf("FAIL: README.md:%zu: jfrstream %s: no such command\n", lineno, w[i]);
        fails++;
        return;
    }
    (*checked)++;
    for (size_t k = 0; k < n && !shell_sep(w[k]); k++) {
        char word[128];
        snprintf(word, sizeof word, "%s", w[k]);
        char *eq = strchr(word, '=');
        if (word[0] != '-' || !word[1] || k == i)
            continue;
        if (eq)
            *eq = '\0';
        const cli_opt *o = c ? find_opt(c, word, false) : NULL;
        if (o) {
            if (o->arg && !eq)
                k++; /* its value */
            continue;
        }
        /* a global option (its value, if any, does not start with '-') */
        if (!names(over, word, false)) {
            printf("FAIL: README.md:%zu: jfrstream %s: %s is not one of its documented "
                   "options\n",
                   lineno, c ? c->name : "", word);
            fails++;
        }
    }
}

/* Every `jfrstream` command in the README's fenced code blocks. */
static void check_readme_commands(const char *readme, const char *over) {
    bool fenced = false;
    size_t lineno = 0, checked = 0;
    char line[4096];
    size_t len = 0, first = 0;
    for (const char *p = readme; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (n >= 3 && strncmp(p, "```", 3) == 0) {
            fenced = !fenced;
        } else if (fenced) {
            if (len == 0)
                first = lineno;
            if (len + n + 2 < sizeof line) {
                memcpy(line + len, p, n);
                len += n;
            }
            line[len] = '\0';
            if (len > 0 && line[len - 1] == '\\') {
                line[--len] = ' '; /* a continuation line follows */
                len++;
            } else {
                char *w[256];
                size_t nw = 0;
                for (char *t = strtok(line, " \t"); t && nw < 256; t = strtok(NULL, " \t"))
                    w[nw++] = t;
                for (size_t k = 0; k < nw; k++)
                    if (strcmp(w[k], "jfrstream") == 0 && (k == 0 || shell_sep(w[k - 1])))
                        check_command_line(w + k + 1, nw - k - 1, over, first, &checked);
                len = 0;
            }
        }
        p += n + (nl != NULL);
    }
    printf("cli-docs: README.md: %zu jfrstream command lines checked\n", checked);
    if (checked == 0) {
        printf("FAIL: README.md: no jfrstream command in a code block\n");
        fails++;
    }
}

/* GitHub's anchor of a heading: lower case; letters, digits, '-' and '_'
 * kept, spaces made '-', the rest dropped. */
static void slug(const char *h, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch >= 'A' && ch <= 'Z')
            out[k++] = (char)(ch - 'A' + 'a');
        else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                 ch == '_' || ch >= 0x80)
            out[k++] = (char)ch;
        else if (ch == ' ')
            out[k++] = '-';
    }
    out[k] = '\0';
}

/* Whether the Markdown text has a heading whose anchor is `anchor`. */
static bool has_anchor(const char *md, const char *anchor) {
    bool fenced = false;
    for (const char *p = md; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= 3 && strncmp(p, "```", 3) == 0)
            fenced = !fenced;
        else if (!fenced && *p == '#') {
            size_t h = 0;
            while (h < n && p[h] == '#')
                h++;
            while (h < n && p[h] == ' ')
                h++;
            char s[512];
            slug(p + h, n - h, s, sizeof s);
            if (strcmp(s, anchor) == 0)
                return true;
        }
        p += n + (nl != NULL);
    }
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Every relative link `](target)` of the Markdown file `path` resolves. */
static void check_links(const char *path) {
    char *md = read_file(path);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        dir[0] = '\0';
    size_t nlinks = 0;
    for (const char *p = strstr(md, "]("); p; p = strstr(p + 2, "](")) {
        const char *t = p + 2, *end = strchr(t, ')');
        if (!end || end - t >= 512)
            continue;
        char target[512];
        snprintf(target, sizeof target, "%.*s", (int)(end - t), t);
        if (strstr(target, "://") || strncmp(target, "mailto:", 7) == 0 || strchr(target, ' '))
            continue;
        nlinks++;
        char *hash = strchr(target, '#');
        char anchor[512] = "";
        if (hash) {
            snprintf(anchor, sizeof anchor, "%s", hash + 1);
            *hash = '\0';
        }
        char full[2048];
        snprintf(full, sizeof full, "%s%s", target[0] ? dir : "", target[0] ? target : path);
        struct stat st;
        if (stat(full, &st) != 0) {
            printf("FAIL: %s: link %s: %s does not exist\n", path, target, full);
            fails++;
            continue;
        }
        if (anchor[0] && ends_with(full, ".md")) {
            char *other = read_file(full);
            if (!has_anchor(other, anchor)) {
                printf("FAIL: %s: link %s#%s: no such heading in %s\n", path, target, anchor,
                       full);
                fails++;
            }
            free(other);
        }
    }
    printf("cli-docs: %s: %zu relative links checked\n", path, nlinks);
    free(md);
}

/* The guide `path` names every documented option of the commands in
 * `cmds` (comma-separated). */
static void check_guide(const char *path, const char *cmds) {
    char *md = read_file(path);
    char list[256];
    size_t n = 0;
    snprintf(list, sizeof list, "%s", cmds);
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        const cli_command *c = cli_command_find(name);
        if (!c) {
            printf("FAIL: %s: no command %s to check\n", path, name);
            fails++;
            continue;
        }
        for (size_t g = 0; g < CLI_MAX_OPT_GROUPS && c->opts[g]; g++)
            for (const cli_opt *o = c->opts[g]; o->name; o++) {
                if (o->hidden)
                    continue;
                const char *spell[2] = {o->name, o->alias};
                for (int k = 0; k < 2 && spell[k]; k++, n++)
                    expect(names(md, spell[k], false), c->name, spell[k], path);
            }
    }
    printf("cli-docs: %s: %zu option spellings of %s checked\n", path, n, cmds);
    free(md);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MANPAGE README [MARKDOWN | GUIDE.md=CMD,...]...\n", argv[0]);
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
        snprintf(readme_use, sizeof readme_use, "jfrstream %s", c->name);
        expect(names(over, c->name, false), c->name, "the command", "jfrstream --help");
        expect(strstr(man, synopsis) != NULL, c->name, "the command", "the man page's synopsis");
        expect(names(readme, readme_use, false), c->name, "the command (as jfrstream NAME)",
               "README.md");
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
                    nopts++;
                }
            }
        free(help);
    }
    check_readme_shape(readme);
    check_readme_commands(readme, over);
    for (int i = 2; i < argc; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s", argv[i]);
        char *eq = strstr(path, ".md=");
        if (eq) {
            eq[3] = '\0';
            check_guide(path, eq + 4);
        }
        check_links(path);
    }
    printf("cli-docs: %zu commands, %zu option spellings checked: %d failures\n", ncmd, nopts,
           fails);
    free(over);
    free(man);
    free(readme);
    return fails ? 1 : 0;
}
