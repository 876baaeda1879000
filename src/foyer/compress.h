/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Compressing sinks: the cpio writer streams into one of these, and it writes to a file
 * descriptor. All produce formats the kernel's initramfs unpacker reads. */

#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef enum Compression {
        COMPRESSION_NONE,
        COMPRESSION_ZSTD,
        COMPRESSION_XZ,
        COMPRESSION_GZIP,
        COMPRESSION_LZ4,
        _COMPRESSION_MAX,
        _COMPRESSION_INVALID = -EINVAL,
} Compression;

const char *compression_to_string(Compression c);
Compression compression_from_string(const char *s);

typedef struct Sink Sink;

/* Returns a new sink writing c-compressed data to fd (not owned). level < 0 picks foyer's default
 * for the format. Release with sink_free() after sink_finish(). */
int sink_new(Compression c, int level, int fd, Sink **ret);
int sink_write(Sink *s, const void *data, size_t size);
/* Flushes the compressor's last frame and checks every write. */
int sink_finish(Sink *s);
Sink *sink_free(Sink *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sink *, sink_free);
/* Bytes accepted so far (uncompressed). */
uint64_t sink_bytes_in(const Sink *s);

/* Decompression for foyer ls. decompress_detect() finds the format at data by its magic
 * (COMPRESSION_NONE for a newc archive). decompress_foreach() decodes one stream of type c and
 * passes the output to f in pieces of bounded size, so memory use does not depend on how far the
 * input expands; an error from f stops it and is returned. ret_consumed is how many input bytes
 * the stream took. -EBADMSG for corrupt, -EPIPE for truncated input, -ENOMEM when a header asks
 * for more memory than foyer allows (an xz dictionary over 128 MiB, a zstd window over
 * libzstd's limit). */
int decompress_detect(const uint8_t *data, size_t size, Compression *ret_type);
int decompress_foreach(Compression c, const uint8_t *data, size_t size,
                       int (*f)(const void *chunk, size_t n, void *userdata), void *userdata,
                       size_t *ret_consumed);
