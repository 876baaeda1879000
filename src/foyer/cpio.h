/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer's newc ("070701") writer and reader. The writer is deterministic: the caller feeds
 * entries in sorted order, owners are 0, the mtime is fixed and inode numbers are handed out
 * sequentially. */

#include <stdbool.h>
#include <stdint.h>

#include "compress.h"
#include "manifest.h"

typedef struct CpioWriter {
        Sink *sink;
        uint64_t mtime;
        uint32_t next_ino;
        uint64_t offset;        /* bytes written so far, for padding */
} CpioWriter;

void cpio_writer_init(CpioWriter *w, Sink *sink, uint64_t mtime);
int cpio_write_directory(CpioWriter *w, const char *name, uint32_t mode);
int cpio_write_char_device(CpioWriter *w, const char *name, uint32_t mode, unsigned major, unsigned minor);
int cpio_write_symlink(CpioWriter *w, const char *name, const char *target);
/* Writes a regular file. ino 0 allocates a fresh inode; hard links pass the inode of the first
 * name and nlink > 1, with the data (fd or buffer) on the last name only, as the kernel's
 * gen_init_cpio does. fd < 0 means data/size holds the content. */
int cpio_write_file(CpioWriter *w, const char *name, uint32_t mode, uint32_t ino, uint32_t nlink,
                    int fd, const void *data, uint64_t size);
/* Allocates an inode number (for the first name of a hard-link group). */
uint32_t cpio_next_ino(CpioWriter *w);
int cpio_write_trailer(CpioWriter *w);

/* Writes the whole manifest, sorted, and the trailer. */
int cpio_write_manifest(CpioWriter *w, Manifest *m);

typedef struct CpioEntry {
        const char *name;       /* points into the archive; NUL-terminated */
        uint32_t mode, ino, nlink;
        uint64_t mtime, size;
        uint32_t rdev_major, rdev_minor;
        const uint8_t *data;    /* the file content, or the link target (not NUL-terminated) */
} CpioEntry;

/* Parses one archive at data, calling f for each entry but the trailer. Returns the number of
 * bytes up to and including the trailer's padding to 4 bytes; -EBADMSG when the input is not
 * newc, -EPIPE when it ends before the trailer. */
int cpio_parse(const uint8_t *data, size_t size, int (*f)(const CpioEntry *e, void *userdata),
               void *userdata, size_t *ret_consumed);
