/*
 * fuzz_replay_main.c — main() for the fuzz targets built without libFuzzer
 * (any compiler): runs LLVMFuzzerTestOneInput over every file named on the
 * command line, and over every regular file of every directory named (in
 * name order). Used by the `robust` test suite to replay the committed
 * corpora (seeds and regression inputs) through each target.
 *
 *   fuzz_whole-replay test/fuzz/corpus/fuzz_whole [more files or dirs]
 *
 * Exit status: 0 when every input ran (a failed check aborts the process,
 * after "replaying FILE" names the input), 1 when a file cannot be read or a
 * directory holds no input.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        free(buf);
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    fprintf(stderr, "replaying %s (%zu bytes)\n", path, len);
    /* an exact-size copy, so that ASan sees reads past the input */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open directory %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(names, cap * sizeof *nv);
            if (!nv)
                break;
            names = nv;
        }
        size_t l = strlen(dir) + strlen(de->d_name) + 2;
        names[nn] = malloc(l);
        if (!names[nn])
            break;
        snprintf(names[nn], l, "%s/%s", dir, de->d_name);
        nn++;
    }
    closedir(d);
    if (nn)
        qsort(names, nn, sizeof *names, cmp_names);
    int ran = 0, rc = 0;
    for (size_t i = 0; i < nn; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(names[i]) < 0)
                rc = -1;
            else
                ran++;
        }
        free(names[i]);
    }
    free(names);
    if (!ran) {
        fprintf(stderr, "no input in %s\n", dir);
        return -1;
    }
    return rc < 0 ? -1 : ran;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = 0, total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "cannot stat %s\n", argv[i]);
            rc = 1;
            continue;
        }
        int n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : (run_file(argv[i]) == 0 ? 1 : -1);
        if (n < 0)
            rc = 1;
        else
            total += n;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%d inputs replayed in %.2f s%s\n", total, secs, rc ? " (with read errors)" : "");
    return rc;
}
