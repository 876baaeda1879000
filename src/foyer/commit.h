/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Durable, atomic publication of the image: written to a temporary file beside the output and
 * renamed over it only when complete, so a failed build never leaves a truncated initrd where a
 * bootloader would load it. */

#include <sys/types.h>

typedef struct OutputFile {
        char *path;             /* final name */
        char *temp_path;        /* while open; unlinked by output_file_done() unless committed */
        int fd;
} OutputFile;

/* Creates the temporary file. Fails early (with a message naming the directory) when the output
 * directory cannot take it. */
int output_file_open(const char *path, OutputFile *ret);
/* Sets the mode, fsyncs, renames into place and fsyncs the directory. */
int output_file_commit(OutputFile *o, mode_t mode);
/* Removes the temporary file if it is still there and frees everything; safe to call twice. */
void output_file_done(OutputFile *o);
