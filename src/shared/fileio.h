/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* File helpers with negative-errno returns. */

#include <stdio.h>
#include <sys/types.h>

/* Reads a whole file into a new NUL-terminated buffer (*ret_size excludes the NUL; may be NULL). The
 * buffer may hold NUL bytes of its own: binary callers use *ret_size, text callers the string. */
int read_full_file(const char *path, char **ret, size_t *ret_size);
/* The same from an open file, from its current offset on. */
int read_full_fd(int fd, char **ret, size_t *ret_size);
/* Flushes f and reports any earlier write error as a negative errno. */
int fflush_and_check(FILE *f);
/* Creates path and its missing parents with the given mode; an existing directory is fine. */
int mkdir_p(const char *path, mode_t mode);
/* Creates the missing parent directories of path. */
int mkdir_parents(const char *path, mode_t mode);
/* Writes text (plus a newline if it lacks one) to path through a temporary file and rename(), replacing
 * any existing file; a reader sees either the old or the complete new content. */
int write_string_file_atomic(const char *path, const char *text);
/* Resolves path below root (symlinks stay inside root); from the first missing component on, the rest is
 * appended verbatim (systemd's CHASE_NONEXISTENT). Returns 0 and the resolved path including the root
 * prefix in *ret, or a negative errno. */
int chase_below_root(const char *path, const char *root, char **ret);
/* Finds name in $PATH (or takes it as is if it contains '/'); returns 0 with the full path, or -ENOENT. */
int find_executable(const char *name, char **ret);
