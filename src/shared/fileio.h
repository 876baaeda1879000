/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* File helpers with negative-errno returns. */

#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "path-util.h" /* mkdir_p(), mkdir_parents(), chase_below_root(), open_in_root() */

/* Regular files only. What foyer reads is a regular file; anything else in its place is refused
 * before it is opened for reading: a FIFO would block the open (a build that hangs forever), a
 * device node may act on being opened or never end (/dev/zero). These return -EBADFD for such a
 * file (file_type_name() names it in a message), -EISDIR for a directory, -ELOOP for a symlink not
 * followed.
 *
 * Opens an O_PATH descriptor again for flags (O_RDONLY, ...), through /proc/self/fd. */
int fd_reopen(int fd, int flags);
/* Opens what path_fd (O_PATH) holds for reading if it is a regular file; *ret_st (may be NULL) gets
 * its stat. Returns the new descriptor. */
int fd_reopen_regular(int path_fd, struct stat *ret_st);
/* The same for path relative to dir_fd (AT_FDCWD); flags may hold O_NOFOLLOW. */
int open_regular_at(int dir_fd, const char *path, int flags, struct stat *ret_st);
/* The same for path resolved inside root (open_in_root()). */
int open_regular_in_root(const char *root, const char *path, int flags, struct stat *ret_st);
/* "a FIFO", "a character device", ... for messages ("%s is %s"). */
const char *file_type_name(mode_t mode);

/* Reads a whole regular file into a new NUL-terminated buffer (*ret_size excludes the NUL; may be
 * NULL). The buffer may hold NUL bytes of its own: binary callers use *ret_size, text callers the
 * string. */
int read_full_file(const char *path, char **ret, size_t *ret_size);
/* The same for path inside root (a --root tree): see open_in_root(). */
int read_full_file_in_root(const char *root, const char *path, char **ret, size_t *ret_size);
/* Reads the file at the absolute path of the tree root (a --root tree, or "/"), resolved inside it
 * (read_full_file_in_root()); *ret NULL when there is none. Errors are logged naming the file: a
 * FIFO, socket or device node there is refused, not opened. *ret_size may be NULL. */
int read_tree_file(const char *root, const char *path, char **ret, size_t *ret_size);
/* The same from an open file, from its current offset on. */
int read_full_fd(int fd, char **ret, size_t *ret_size);
/* The same from the start of a seekable file: what a child wrote to the memfd given as its stdout. */
int read_full_fd_from_start(int fd, char **ret, size_t *ret_size);
/* Flushes f and reports any earlier write error as a negative errno. */
int fflush_and_check(FILE *f);
/* The three atomic writers differ on purpose and are not merged:
 * - write_string_file_atomic() (here): small text, replaces an existing file (rename()); the
 *   temporary file has a name while it is written, fine for data that is not secret.
 * - unit_file_open()/unit_file_commit() (unit-file.c): link semantics, an existing unit is never
 *   replaced but reported as -EEXIST, which is how generators detect conflicts.
 * - output_file_open()/output_file_commit() (src/foyer/commit.c): O_TMPFILE + linkat() and fsync, so
 *   that the image, which may carry key files, never has a name before it is complete and durable,
 *   and a SIGKILLed build leaves nothing behind. */
/* Writes text (plus a newline if it lacks one) to path through a temporary file and rename(), replacing
 * any existing file; a reader sees either the old or the complete new content. */
int write_string_file_atomic(const char *path, const char *text);
/* Writes all of data, retrying short writes and EINTR; returns 0 or a negative errno. */
int write_all(int fd, const void *data, size_t size);
/* Removes path and, if it is a directory, everything below it (up to 32 levels), without following
 * symlinks; errors are ignored. Async-signal-safe: the builder's signal handler uses it. */
void rm_rf(const char *path);
/* Finds name in $PATH (or takes it as is if it contains '/'); returns 0 with the full path, or -ENOENT. */
int find_executable(const char *name, char **ret);
