/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Durable, atomic publication of the image (why this is not write_string_file_atomic() or the unit
 * writer: see src/shared/fileio.h): written to an unnamed O_TMPFILE file in the output
 * directory and given its name only when complete, so a failed build never leaves a truncated
 * initrd where a bootloader would load it, and a killed one (even by SIGKILL) leaves nothing: the
 * kernel frees an unnamed file with its last fd. Where the file system has no O_TMPFILE, a named
 * temporary file beside the output takes its place, removed on SIGINT/SIGTERM. */

#include <sys/types.h>

typedef struct OutputFile {
        char *path;             /* final name */
        char *temp_path;        /* fallback only: the named temporary file while open */
        int fd;
        int dir_fd;
        int cleanup_slot;       /* fallback only: registered for removal on a signal */
} OutputFile;

#define OUTPUT_FILE_NULL { .fd = -EBADF, .dir_fd = -EBADF, .cleanup_slot = -1 }

/* Creates the temporary file, mode 0600. Fails early (with a message naming the directory) when
 * the output directory cannot take it. */
int output_file_open(const char *path, OutputFile *ret);
/* Sets the mode, fsyncs, gives the file its name (replacing an existing file in one rename) and
 * fsyncs the directory. */
int output_file_commit(OutputFile *o, mode_t mode);
/* Removes the temporary file if it is still there and frees everything; safe to call twice. */
void output_file_done(OutputFile *o);
