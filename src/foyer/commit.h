/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Durable, atomic publication of the image (why this is not write_string_file_atomic() or the unit
 * writer: see src/shared/fileio.h): written to an unnamed O_TMPFILE file in the output
 * directory and given its name only when complete, so a failed build never leaves a truncated
 * initrd where a bootloader would load it, and a killed one (even by SIGKILL) leaves nothing: the
 * kernel frees an unnamed file with its last fd. Where the file system has no O_TMPFILE (vfat), a
 * named temporary file beside the output takes its place: one fixed name per image,
 * ".#NAME.foyer-tmp", created 0600 with O_EXCL|O_NOFOLLOW, removed on SIGINT/SIGTERM; what a
 * SIGKILL leaves there is removed by the next build of that image before it writes (builds into
 * one directory take turns, flock() on it). An image with keys is refused where that file could be
 * read by others (a FAT file system mounted without fmask=0077). */

#include <sys/types.h>

typedef struct OutputFile {
        char *path;             /* final name */
        char *temp_path;        /* fallback only: the named temporary file while open */
        int fd;
        int dir_fd;
        int cleanup_slot;       /* fallback only: registered for removal on a signal */
        mode_t mode;            /* the image's mode once published */
} OutputFile;

#define OUTPUT_FILE_NULL { .fd = -EBADF, .dir_fd = -EBADF, .cleanup_slot = -1 }

/* Checks an output path given by the user before any work is done, and returns the file to
 * replace: path itself when it does not exist or is a regular file; when it is a symlink, the
 * regular file it points to (canonical path), so that the link keeps working and the target is
 * replaced atomically in its own directory. Refused, with a message naming path: a directory, a
 * device node, a FIFO or a socket (or a symlink to one), a dangling symlink, a path ending in "/",
 * and a directory that cannot take a new file. Removes the temporary file a killed build of that
 * image left (output_file_open()), unless another foyer is writing into the directory. */
int output_path_resolve(const char *path, char **ret);

/* Creates the temporary file, mode 0600, after removing the one a killed build of path left.
 * mode is the image's once published: 0600 (no group or other bits) for an image with keys,
 * refused, with a message, where the file system would let others read the temporary file. Fails
 * early (with a message naming the directory) when the output directory cannot take it. */
int output_file_open(const char *path, mode_t mode, OutputFile *ret);
/* Sets the mode, fsyncs, gives the file its name (replacing an existing file in one rename) and
 * fsyncs the directory. */
int output_file_commit(OutputFile *o);
/* Removes the temporary file if it is still there and frees everything; safe to call twice. */
void output_file_done(OutputFile *o);
