/*
 * input.c — gzip, zip, lz4 and zstd recordings decompressed as they are read
 * (zlib, libzip, liblz4, libzstd), for the jfrstream CLI. See input.h.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "input.h"

#include "report.h"

#include <errno.h>
#include <lz4frame.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>
#include <zstd.h>

#define IN_BLOCK ((size_t)256 << 10) /* compressed bytes per read */

struct cli_input {
    cli_input_format fmt;
    int fd;
    const char *name;
    uint8_t *in;        /* compressed bytes (gzip, lz4) or head (plain) */
    size_t in_len, in_pos;
    bool in_eof;
    uint64_t in_read;   /* bytes read from fd, head included */
    uint64_t file_size; /* 0: unknown */
    uint64_t out;       /* decompressed bytes returned */
    /* gzip */
    z_stream z;
    bool z_ready, z_member_end;
    /* lz4 */
    LZ4F_dctx *lz;
    size_t lz_hint; /* 0: between frames */
    /* zstd */
    ZSTD_DStream *zs;
    size_t zs_hint; /* 0: at a frame's start (nothing left to flush) */
    /* zip */
    zip_t *za;
    zip_file_t *zf;
    uint64_t entry_size;
    bool zip_raw; /* directory unreadable: first entry from its local header */
    bool own_fd;  /* fd is ours to close (the zip fallback's) */
    /* a decoding error found with good bytes still to return: reported at
     * the next read, so that those bytes reach the parser first */
    bool failed;
    char err[256];
};

cli_input_format cli_input_detect(const uint8_t *h, size_t n) {
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
        return CLI_INPUT_GZIP;
    if (n >= 4 && memcmp(h, "PK\3\4", 4) == 0)
        return CLI_INPUT_ZIP;
    if (n >= 4 && memcmp(h, "\x04\x22\x4d\x18", 4) == 0)
        return CLI_INPUT_LZ4;
    /* a zstd frame, or a skippable frame (50..5f 2a 4d 18) before one */
    if (n >= 4 && (memcmp(h, "\x28\xb5\x2f\xfd", 4) == 0 ||
                   ((h[0] & 0xf0) == 0x50 && memcmp(h + 1, "\x2a\x4d\x18", 3) == 0)))
        return CLI_INPUT_ZSTD;
    if (n >= 6 && memcmp(h, "\xfd" "7zXZ\0", 6) == 0)
        return CLI_INPUT_XZ;
    if (n >= 4 && memcmp(h, "BZh", 3) == 0 && h[3] >= '1' && h[3] <= '9')
        return CLI_INPUT_BZIP2;
    if (n >= 6 && memcmp(h, "7z\xbc\xaf\x27\x1c", 6) == 0)
        return CLI_INPUT_7Z;
    return CLI_INPUT_PLAIN;
}

const char *cli_input_format_name(cli_input_format f) {
    switch (f) {
    case CLI_INPUT_GZIP:
        return "gzip";
    case CLI_INPUT_ZIP:
        return "zip";
    case CLI_INPUT_LZ4:
        return "lz4";
    case CLI_INPUT_ZSTD:
        return "zstd";
    case CLI_INPUT_XZ:
        return "xz";
    case CLI_INPUT_BZIP2:
        return "bzip2";
    case CLI_INPUT_7Z:
        return "7z";
    default:
        return "plain";
    }
}

bool cli_input_usable(cli_input_format f, const uint8_t *h, size_t n, const char *name) {
    bool unread = f == CLI_INPUT_XZ || f == CLI_INPUT_BZIP2 || f == CLI_INPUT_7Z;
    if (!unread && (f != CLI_INPUT_PLAIN || memcmp(h, "FLR", n < 4 ? n : 4) == 0))
        return true;
    char hex[3 * CLI_INPUT_HEAD + 1] = "";
    size_t k = 0;
    for (; k < n && k < CLI_INPUT_HEAD; k++)
        snprintf(hex + 3 * k, sizeof hex - 3 * k, "%02x ", h[k]);
    hex[k ? 3 * k - 1 : 0] = '\0';
    if (unread)
        cli_error("%s: chunk 0 at byte 0: not a JFR recording: %s-compressed (first bytes %s), "
                  "which is not read: decompress it first (%s FILE | " CLI_NAME " COMMAND -)",
                  name, cli_input_format_name(f), hex,
                  f == CLI_INPUT_XZ ? "xz -dc" : f == CLI_INPUT_BZIP2 ? "bzip2 -dc" : "7z x -so");
    else
        cli_error("%s: chunk 0 at byte 0: not a JFR recording: bad magic (first bytes %s; a "
                  "recording starts with 46 4c 52 00, \"FLR\\0\")",
                  name, hex);
    return false;
}

/* read(2) without EINTR; -1 after a message. */
static long read_some(cli_input *in, uint8_t *buf, size_t cap) {
    for (;;) {
        ssize_t n = read(in->fd, buf, cap);
        if (n >= 0) {
            in->in_read += (uint64_t)n;
            return (long)n;
        }
        if (errno != EINTR) {
            cli_error("%s: read error: %s", in->name, strerror(errno));
            return -1;
        }
    }
}

/* Next compressed block into in->in once the previous one is used up. */
static bool refill(cli_input *in) {
    if (in->in_pos < in->in_len || in->in_eof)
        return true;
    long n = read_some(in, in->in, IN_BLOCK);
    if (n < 0)
        return false;
    in->in_pos = 0;
    in->in_len = (size_t)n;
    in->in_eof = n == 0;
    return true;
}

/* Compressed offset of the next unused byte. */
static uint64_t in_offset(const cli_input *in) { return in->in_read - (in->in_len - in->in_pos); }

/* Bad compressed data after `got` good bytes of this read: those are
 * returned first, the message printed at the next read. */
static long bad_data(cli_input *in, const char *what, size_t got) {
    in->out += got;
    snprintf(in->err, sizeof in->err,
             "%s: %s data %s at compressed byte %llu (after %llu decompressed %s)", in->name,
             cli_input_format_name(in->fmt), what, (unsigned long long)in_offset(in),
             (unsigned long long)in->out, cli_noun(in->out, "byte", "bytes"));
    in->failed = true;
    if (got)
        return (long)got;
    cli_error("%s", in->err);
    return -1;
}

/* ---------------------------------------------------------------- gzip */

static long gzip_read(cli_input *in, uint8_t *buf, size_t cap) {
    for (;;) {
        if (in->zip_raw && in->z_member_end) {
            /* the entry is whole, but the archive is still damaged */
            cli_error("%s: zip archive damaged: its directory is unreadable (the first entry "
                      "ended well at compressed byte %llu, after %llu decompressed %s)",
                      in->name, (unsigned long long)in_offset(in), (unsigned long long)in->out,
                      cli_noun(in->out, "byte", "bytes"));
            return -1;
        }
        if (!refill(in))
            return -1;
        size_t avail = in->in_len - in->in_pos;
        if (in->z_member_end) {
            if (avail == 0)
                return 0; /* clean end after the last member */
            /* concatenated members (cat a.gz b.gz, pigz) */
            inflateReset(&in->z);
            in->z_member_end = false;
        }
        if (avail == 0)
            return bad_data(in, "truncated", 0);
        in->z.next_in = in->in + in->in_pos;
        in->z.avail_in = (uInt)avail;
        in->z.next_out = buf;
        in->z.avail_out = (uInt)(cap > UINT_MAX ? UINT_MAX : cap);
        uInt before = in->z.avail_out;
        int r = inflate(&in->z, Z_NO_FLUSH);
        size_t pos = in->in_pos;
        in->in_pos = in->in_len - in->z.avail_in;
        size_t got = before - in->z.avail_out;
        if (r == Z_BUF_ERROR && got == 0 && in->in_pos == pos)
            return bad_data(in, "corrupt (no progress)", 0); /* never loop */
        if (r == Z_STREAM_END)
            in->z_member_end = true;
        else if (r != Z_OK && r != Z_BUF_ERROR) {
            char what[160];
            snprintf(what, sizeof what, "corrupt (%s)", in->z.msg ? in->z.msg : zError(r));
            return bad_data(in, what, got);
        }
        if (got > 0) {
            in->out += got;
            return (long)got;
        }
    }
}

/* ----------------------------------------------------------------- lz4 */

static long lz4_read(cli_input *in, uint8_t *buf, size_t cap) {
    for (;;) {
        if (!refill(in))
            return -1;
        size_t src = in->in_len - in->in_pos, dst = cap;
        if (src == 0)
            return in->lz_hint ? bad_data(in, "truncated", 0) : 0;
        /* no more than the decoder asks for: a frame's checksum is then
         * checked in a call of its own, after its last block came out */
        if (in->lz_hint && src > in->lz_hint)
            src = in->lz_hint;
        size_t r = LZ4F_decompress(in->lz, buf, &dst, in->in + in->in_pos, &src, NULL);
        in->in_pos += src;
        if (LZ4F_isError(r)) {
            char what[160];
            snprintf(what, sizeof what, "corrupt (%s)", LZ4F_getErrorName(r));
            return bad_data(in, what, dst);
        }
        in->lz_hint = r;
        if (src == 0 && dst == 0)
            return bad_data(in, "corrupt (no progress)", 0); /* never loop */
        if (dst > 0) {
            in->out += dst;
            return (long)dst;
        }
    }
}

/* ---------------------------------------------------------------- zstd */

static long zstd_read(cli_input *in, uint8_t *buf, size_t cap) {
    for (;;) {
        if (!refill(in))
            return -1;
        size_t pos = in->in_pos, avail = in->in_len - pos;
        if (avail == 0 && in->zs_hint == 0)
            return 0; /* clean end after the last frame */
        /* called at the end of the input too: the decoder may still hold
         * output that did not fit the last buffer. It gets no more than it
         * asks for (the next block, or the 18 bytes of a frame header at
         * most): libzstd keeps no position of a call that fails, so what
         * one call decodes before an error (a whole frame in one pass,
         * when it is all in view) would be lost; one block a call, the
         * good blocks come out before a bad block or checksum */
        size_t want = in->zs_hint ? in->zs_hint : 18;
        ZSTD_inBuffer src = {in->in, pos + (avail < want ? avail : want), pos};
        ZSTD_outBuffer dst = {buf, cap, 0};
        size_t r = ZSTD_decompressStream(in->zs, &dst, &src);
        in->in_pos = src.pos;
        if (ZSTD_isError(r)) {
            char what[160];
            snprintf(what, sizeof what, "corrupt (%s)", ZSTD_getErrorName(r));
            return bad_data(in, what, dst.pos);
        }
        in->zs_hint = r; /* 0: a frame ended; the next one starts on its own */
        if (dst.pos > 0) {
            in->out += dst.pos;
            return (long)dst.pos;
        }
        if (src.pos == pos) /* never loop */
            return bad_data(in, avail ? "corrupt (no progress)" : "truncated", 0);
    }
}

/* ----------------------------------------------------------------- zip */

static bool ends_with_jfr(const char *s) {
    size_t n = strlen(s);
    return n >= 4 && strcasecmp(s + n - 4, ".jfr") == 0;
}

static unsigned le16(const uint8_t *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

/* The directory at the end is unreadable (a truncated or damaged archive):
 * read the first entry from its local header as it streams (deflate, by
 * zlib), so that the events before the damage still come out; the end of
 * the entry is then reported as an error. Takes zfd on success. */
static bool zip_local_open(cli_input *in, int zfd, const char *why) {
    in->fd = zfd;
    in->in_len = in->in_pos = 0;
    in->in_read = 0;
    in->in_eof = false;
    if (lseek(zfd, 0, SEEK_SET) != 0 || !refill(in)) {
        cli_error("%s: not a readable zip archive: %s", in->name, why);
        return false;
    }
    const uint8_t *h = in->in;
    size_t skip = in->in_len >= 30 ? 30 + le16(h + 26) + (size_t)le16(h + 28) : SIZE_MAX;
    if (skip > in->in_len || memcmp(h, "PK\3\4", 4) != 0 || le16(h + 8) != 8) {
        /* stored entries and others need the directory for their size */
        cli_error("%s: not a readable zip archive: %s", in->name, why);
        return false;
    }
    unsigned nlen = le16(h + 26);
    cli_error("%s: zip archive damaged (%s): reading its first entry '%.*s' from its local header",
              in->name, why, (int)(nlen > 200 ? 200 : nlen), (const char *)h + 30);
    if (inflateInit2(&in->z, -15) != Z_OK) { /* raw deflate */
        cli_error("%s: cannot start zlib", in->name);
        return false;
    }
    in->z_ready = in->zip_raw = in->own_fd = true;
    in->in_pos = skip;
    return true;
}

/* A regular file at offset 0 is opened in place; anything else (a pipe) is
 * copied to an unlinked temporary file first: zip's directory is at its end. */
static bool zip_open_fd(cli_input *in, const uint8_t *head, size_t n) {
    struct stat st;
    int zfd;
    if (n == 0 && fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) &&
        lseek(in->fd, 0, SEEK_CUR) == 0) {
        zfd = dup(in->fd);
    } else {
        FILE *tmp = tmpfile();
        if (!tmp) {
            cli_error("%s: cannot create a temporary file for the zip archive: %s", in->name,
                      strerror(errno));
            return false;
        }
        bool ok = fwrite(head, 1, n, tmp) == n, read_err = false;
        while (ok) {
            long k = read_some(in, in->in, IN_BLOCK);
            if (k <= 0) {
                read_err = k < 0; /* already reported */
                break;
            }
            ok = fwrite(in->in, 1, (size_t)k, tmp) == (size_t)k;
        }
        if (ok && !read_err && fflush(tmp) != 0)
            ok = false;
        if (!ok || read_err) {
            if (!read_err)
                cli_error("%s: cannot copy the zip archive to a temporary file: %s", in->name,
                          strerror(errno));
            fclose(tmp);
            return false;
        }
        zfd = dup(fileno(tmp)); /* the file lives on, unlinked, until zfd is closed */
        fclose(tmp);
        if (zfd >= 0)
            (void)lseek(zfd, 0, SEEK_SET);
    }
    if (zfd < 0) {
        cli_error("%s: %s", in->name, strerror(errno));
        return false;
    }
    int err = 0, zfd2 = dup(zfd); /* zip_fdopen takes its descriptor */
    in->za = zfd2 < 0 ? NULL : zip_fdopen(zfd2, 0, &err);
    if (!in->za) {
        if (zfd2 >= 0)
            close(zfd2);
        zip_error_t ze;
        zip_error_init_with_code(&ze, err);
        bool ok = zip_local_open(in, zfd, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        if (!ok)
            close(zfd);
        return ok;
    }
    close(zfd);
    return true;
}

static bool zip_pick(cli_input *in) {
    zip_int64_t n = zip_get_num_entries(in->za, 0), pick = -1;
    if (n == 1) {
        pick = 0;
    } else {
        for (zip_int64_t i = 0; i < n && pick < 0; i++) {
            const char *nm = zip_get_name(in->za, (zip_uint64_t)i, 0);
            if (nm && ends_with_jfr(nm))
                pick = i;
        }
    }
    if (pick < 0) {
        cli_error("%s: zip archive with %lld %s, none named *.jfr", in->name, (long long)n,
                  cli_noun((uint64_t)n, "entry", "entries"));
        return false;
    }
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(in->za, (zip_uint64_t)pick, 0, &zs) == 0 && (zs.valid & ZIP_STAT_SIZE))
        in->entry_size = zs.size;
    const char *nm = zip_get_name(in->za, (zip_uint64_t)pick, 0);
    if (n > 1) /* say which one was taken when there was a choice */
        cli_error("%s: reading zip entry '%s' (the first *.jfr of %lld entries)", in->name,
                  nm ? nm : "?", (long long)n);
    in->zf = zip_fopen_index(in->za, (zip_uint64_t)pick, 0);
    if (!in->zf) {
        cli_error("%s: zip entry '%s': %s", in->name, nm ? nm : "?", zip_strerror(in->za));
        return false;
    }
    return true;
}

static long zip_read_entry(cli_input *in, uint8_t *buf, size_t cap) {
    zip_int64_t k = zip_fread(in->zf, buf, cap);
    if (k < 0) {
        cli_error("%s: zip entry data corrupt (after %llu decompressed %s): %s", in->name,
                  (unsigned long long)in->out, cli_noun(in->out, "byte", "bytes"),
                  zip_file_strerror(in->zf));
        return -1;
    }
    in->out += (uint64_t)k;
    return (long)k;
}

/* --------------------------------------------------------------- common */

cli_input *cli_input_open(cli_input_format f, int fd, const char *name,
                          const uint8_t *head, size_t n) {
    cli_input *in = calloc(1, sizeof *in);
    size_t cap = n > IN_BLOCK ? n : IN_BLOCK;
    if (!in || !(in->in = malloc(cap))) {
        free(in);
        cli_error("out of memory");
        return NULL;
    }
    in->fmt = f;
    in->fd = fd;
    in->name = name;
    if (n)
        memcpy(in->in, head, n);
    in->in_len = n;
    in->in_read = n;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        in->file_size = (uint64_t)st.st_size;
    bool ok = true;
    switch (f) {
    case CLI_INPUT_GZIP:
        /* 15 + 16: a gzip wrapper only, its CRC and length checked */
        ok = inflateInit2(&in->z, 15 + 16) == Z_OK;
        in->z_ready = ok;
        if (!ok)
            cli_error("%s: cannot start zlib", name);
        break;
    case CLI_INPUT_LZ4:
        ok = !LZ4F_isError(LZ4F_createDecompressionContext(&in->lz, LZ4F_VERSION));
        in->lz_hint = 4; /* the magic number first */
        if (!ok)
            cli_error("%s: cannot start lz4", name);
        break;
    case CLI_INPUT_ZSTD:
        /* the default window limit (128 MiB) bounds the decoder's memory */
        in->zs = ZSTD_createDStream();
        ok = in->zs && !ZSTD_isError(ZSTD_initDStream(in->zs));
        if (!ok)
            cli_error("%s: cannot start zstd", name);
        break;
    case CLI_INPUT_ZIP:
        ok = zip_open_fd(in, head, n) && (in->zip_raw || zip_pick(in));
        if (!in->zip_raw)
            in->in_len = in->in_pos = 0;
        break;
    default:
        break;
    }
    if (!ok) {
        cli_input_close(in);
        return NULL;
    }
    return in;
}

long cli_input_read(cli_input *in, uint8_t *buf, size_t cap) {
    if (cap > (size_t)1 << 30)
        cap = (size_t)1 << 30; /* fits the return type and zlib's uInt */
    if (in->failed) {
        cli_error("%s", in->err);
        return -1;
    }
    switch (in->fmt) {
    case CLI_INPUT_GZIP:
        return gzip_read(in, buf, cap);
    case CLI_INPUT_LZ4:
        return lz4_read(in, buf, cap);
    case CLI_INPUT_ZSTD:
        return zstd_read(in, buf, cap);
    case CLI_INPUT_ZIP:
        return in->zip_raw ? gzip_read(in, buf, cap) : zip_read_entry(in, buf, cap);
    default:
        break;
    }
    /* plain: the head first, then the descriptor */
    if (in->in_pos < in->in_len) {
        size_t k = in->in_len - in->in_pos;
        if (k > cap)
            k = cap;
        memcpy(buf, in->in + in->in_pos, k);
        in->in_pos += k;
        return (long)k;
    }
    return read_some(in, buf, cap);
}

bool cli_input_check(cli_input *in, uint8_t *buf, size_t cap) {
    /* a zip is always read from a regular file (a pipe's was copied) */
    if (in->failed || in->fmt == CLI_INPUT_ZIP ||
        (in->fmt != CLI_INPUT_PLAIN && in->file_size > 0))
        return cli_input_read(in, buf, cap) >= 0;
    return true;
}

void cli_input_progress(const cli_input *in, uint64_t *done, uint64_t *total) {
    if (in->fmt == CLI_INPUT_ZIP && !in->zip_raw) {
        *done = in->out;
        *total = in->entry_size;
    } else {
        *done = in_offset(in);
        *total = in->file_size;
    }
}

void cli_input_close(cli_input *in) {
    if (!in)
        return;
    if (in->z_ready)
        inflateEnd(&in->z);
    if (in->lz)
        LZ4F_freeDecompressionContext(in->lz);
    if (in->zs)
        ZSTD_freeDStream(in->zs);
    if (in->zf)
        zip_fclose(in->zf);
    if (in->za)
        zip_discard(in->za);
    if (in->own_fd)
        close(in->fd);
    free(in->in);
    free(in);
}
