/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* foyer's newc ("070701") writer and reader. The writer is deterministic: cpio_write_manifest()
 * writes the entries in an order of their kinds, sizes and paths (cpio.c, PackGroup), owners are
 * 0, the mtime is the one given to cpio_writer_init() and inode numbers are handed out sequentially
 * from 1. */

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
 * gen_init_cpio does. fd < 0 means data/size holds the content; otherwise size bytes are read
 * from fd, and -EPIPE is returned if it has fewer (the size is already in the header). */
int cpio_write_file(CpioWriter *w, const char *name, uint32_t mode, uint32_t ino, uint32_t nlink,
                    int fd, const void *data, uint64_t size);
/* Allocates an inode number (for the first name of a hard-link group). */
uint32_t cpio_next_ino(CpioWriter *w);
/* Writes the "TRAILER!!!" entry and pads the archive to a multiple of 512 bytes. */
int cpio_write_trailer(CpioWriter *w);

/* Writes the whole manifest, directories, symlinks and devices first, and the trailer. */
int cpio_write_manifest(CpioWriter *w, Manifest *m);

/* The reader bounds what it keeps: a name or a symlink target that does not fit in this many bytes
 * with its terminating NUL is refused as malformed (the kernel refuses names over PATH_MAX too);
 * file data is skipped, never kept. */
#define CPIO_PATH_MAX 4096U

typedef struct CpioEntry {
        const char *name;       /* NUL-terminated, at most CPIO_PATH_MAX bytes with the NUL */
        uint32_t mode, ino, nlink;
        uint32_t uid, gid;
        uint64_t mtime, size;
        uint32_t rdev_major, rdev_minor;
        const char *link_target; /* symlinks: the target, NUL-terminated (size bytes before the NUL); else NULL */
} CpioEntry;

typedef enum CpioReaderState {
        CPIO_READ_HEADER,
        CPIO_READ_NAME,
        CPIO_READ_NAME_PAD,
        CPIO_READ_DATA,
        CPIO_READ_DATA_PAD,
        CPIO_READ_TRAILER_PAD,
        CPIO_READ_BETWEEN,      /* zeros after a trailer, before the next archive (multi mode) */
        CPIO_READ_DONE,
} CpioReaderState;

/* A streaming newc reader: fed the archive in pieces of any size, it keeps one header, one name
 * and one symlink target, so memory use does not depend on the input. */
typedef struct CpioReader {
        int (*f)(const CpioEntry *e, void *userdata);
        /* Optional: the data of each regular file, in pieces, before f is called for it. */
        int (*data_f)(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata);
        void *userdata;
        bool multi;             /* after a trailer: skip zeros and read the next archive */
        CpioReaderState state;
        uint64_t offset;        /* within the current archive, for the 4-byte padding */
        uint64_t archive_start; /* where the current archive starts in the whole input */
        uint64_t total;         /* bytes consumed */
        uint64_t need;          /* bytes left in this state */
        size_t fill;            /* bytes collected into the header, name or target */
        bool trailer;
        CpioEntry entry;
        uint8_t header[110];
        char name[CPIO_PATH_MAX + 1];
        char target[CPIO_PATH_MAX + 1];
} CpioReader;

/* f is called for each entry but the trailers. multi reads concatenated archives with zero
 * padding between them (what one decompressed stream holds); otherwise the reader stops after
 * the first trailer and its padding. */
void cpio_reader_init(CpioReader *r, bool multi, int (*f)(const CpioEntry *e, void *userdata), void *userdata);
/* Also passes the data of each regular file to data_f, a piece at a time (of whatever size the
 * input came in), with e->name set; f follows once the data is complete. Nothing is kept. */
void cpio_reader_set_data_callback(CpioReader *r,
                                   int (*data_f)(const CpioEntry *e, const uint8_t *chunk, size_t n, void *userdata));
/* Consumes input. Returns 0 and the number of bytes taken in *ret_used (less than size only once the
 * single archive is complete), -EBADMSG when the input is not newc or an entry is out of bounds, or
 * f's or data_f's error. */
int cpio_reader_feed(CpioReader *r, const uint8_t *data, size_t size, size_t *ret_used);
/* At the end of the input: 0 when no archive is open, -EPIPE when one ends before its trailer. */
int cpio_reader_finish(const CpioReader *r);

/* Parses one archive held in memory with the reader above. Returns 0 and in *ret_consumed the
 * number of bytes up to and including the trailer's padding to 4 bytes (the padding may be cut off
 * by the end of the input); -EBADMSG when the input is not newc, -EPIPE when it ends before the
 * trailer, -ENOMEM, or f's error. */
int cpio_parse(const uint8_t *data, size_t size, int (*f)(const CpioEntry *e, void *userdata),
               void *userdata, size_t *ret_consumed);
