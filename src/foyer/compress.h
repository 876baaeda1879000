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

/* Decompression for foyer ls: detects the format at data by its magic. On success returns the
 * decompressed bytes in ret (NULL and 0 for COMPRESSION_NONE) and how many input bytes the
 * compressed stream took in ret_consumed. -EBADMSG for corrupt, -EPIPE for truncated input. */
int decompress_detect(const uint8_t *data, size_t size, Compression *ret_type);
int decompress_stream(Compression c, const uint8_t *data, size_t size, uint8_t **ret, size_t *ret_size,
                      size_t *ret_consumed);
