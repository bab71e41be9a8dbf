/*
 * input.h — compressed recordings read transparently by the jfrstream CLI.
 *
 * A recording may be wrapped in gzip (1f 8b), zip (PK 03 04), an lz4 frame
 * (04 22 4d 18) or zstd frames (28 b5 2f fd, or a skippable frame first); a
 * plain JFR file starts with "FLR\0". The format is found by these magic
 * bytes, not by the file name. xz, bzip2 and 7z are recognised too, but only
 * to name them in the error message. Decompression streams: memory is a
 * few fixed buffers however large the input (a zip read from a pipe is first
 * copied to an unlinked temporary file, as zip keeps its directory at its end;
 * a zip whose directory is unreadable, e.g. truncated, is read from its first
 * local header, and reported as damaged at the end).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_CLI_INPUT_H
#define JFRSTREAM_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cli_input_format {
    CLI_INPUT_PLAIN, /* anything else: handed to the parser as it is */
    CLI_INPUT_GZIP,  /* gzip, one or more members (zlib)              */
    CLI_INPUT_ZIP,   /* zip archive: its single entry or first *.jfr  */
    CLI_INPUT_LZ4,   /* lz4 frames (liblz4)                           */
    CLI_INPUT_ZSTD,  /* zstd frames, one or more (libzstd)            */
    /* recognised, not read: cli_input_usable() names them */
    CLI_INPUT_XZ,    /* fd 37 7a 58 5a 00                             */
    CLI_INPUT_BZIP2, /* "BZh" and a block size digit                  */
    CLI_INPUT_7Z     /* 37 7a bc af 27 1c                             */
} cli_input_format;

/* Bytes of the start an input that cli_input_detect and cli_input_usable
 * look at (the longest magic, and a few more to show). */
#define CLI_INPUT_HEAD 8

/* The format whose magic bytes start head[0..n). Too few bytes for a magic:
 * plain. */
cli_input_format cli_input_detect(const uint8_t *head, size_t n);

/* "gzip", "zip", "lz4", "zstd", "xz", "bzip2", "7z" or "plain". */
const char *cli_input_format_name(cli_input_format f);

/*
 * Whether an input of format f starting with head[0..n) (n > 0; up to
 * CLI_INPUT_HEAD bytes) can be a recording. When not (a compression that is
 * not read, or plain bytes other than the start of "FLR\0"), prints
 * "jfrstream: NAME: chunk 0 at byte 0: not a JFR recording: ..." with the
 * first bytes in hex, and returns false.
 */
bool cli_input_usable(cli_input_format f, const uint8_t *head, size_t n, const char *name);

typedef struct cli_input cli_input;

/*
 * A reader of the decompressed bytes of `fd` in format f. `head` holds the
 * first n bytes already read from fd (when fd is a pipe whose start was
 * read to detect the format); fd is read from its current position after
 * them. `name` is used in messages. fd stays owned by the caller. Returns
 * NULL after printing a message (e.g. a zip archive without a usable entry).
 * CLI_INPUT_PLAIN gives a pass-through reader.
 */
cli_input *cli_input_open(cli_input_format f, int fd, const char *name,
                          const uint8_t *head, size_t n);

/*
 * Up to cap decompressed bytes into buf. Returns the count (> 0), 0 at the
 * clean end of the data, or -1 after printing "jfrstream: NAME: ..." for a
 * read error, corrupt or truncated compressed data (with the compressed and
 * decompressed offsets). Everything returned before the error is good data.
 */
long cli_input_read(cli_input *in, uint8_t *buf, size_t cap);

/* The parser gave up on the data: report the decoding error that explains
 * it, if any: one already found with the last bytes returned, or, for a
 * compressed regular file or any zip (where a read cannot block), one found
 * in the next block (zip's CRC). Returns false when an error was reported. */
bool cli_input_check(cli_input *in, uint8_t *buf, size_t cap);

/* Progress: *done of *total units (compressed bytes read of the file size,
 * or bytes of a zip entry); *total is 0 when unknown (a pipe). */
void cli_input_progress(const cli_input *in, uint64_t *done, uint64_t *total);

void cli_input_close(cli_input *in);

#endif
