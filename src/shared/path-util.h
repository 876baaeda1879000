/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Path helpers for every foyer program: pure string operations first, then the ones that look at
 * or change the file system. Functions returning int give 0 or a negative errno. */

#include <stdbool.h>
#include <sys/types.h>

/* Collapses "//", drops "." components and trailing slashes, in place; returns path. A relative path
 * of only "." components becomes "."; an empty one stays empty. */
char *path_simplify(char *path);
/* Whether path has no ".." component. */
bool path_is_safe(const char *path);

/* Joins root and an absolute path; root may be NULL or "/" for the host. Only for messages and
 * for paths that are not looked up: a lookup goes through path_in_root(). */
char *path_prefix_root(const char *root, const char *path);
/* The tree a build reads (--root) is not trusted: everything in it is resolved by the kernel inside
 * it, never by string operations on host paths.
 *
 * Opens path inside root (NULL or "/" for the host) as the kernel would after chroot(root): all
 * symlinks, intermediate and final, absolute and relative, and "..", stay inside root. flags may hold
 * O_NOFOLLOW (a final symlink is not followed) and O_DIRECTORY. Returns 0 and an O_PATH descriptor in
 * *ret_fd (nothing is opened for reading: a FIFO or a device node is not touched), or a negative errno
 * as open() would (-ENOENT, -ENOTDIR, -ELOOP, ...; -ENOSYS before Linux 5.6). */
int open_in_root(const char *root, const char *path, int flags, int *ret_fd);
/* The same below an open root directory; returns the O_PATH descriptor or a negative errno. */
int openat_in_root(int root_fd, const char *path, int flags);
/* The same with any open() flags (no O_PATH added): returns the descriptor or a negative errno. */
int openat_in_root_flags(int root_fd, const char *path, int flags);
/* Opens path below dir_fd with no symlink at all on the way or at the end, no "..", no mount point:
 * for a path that was resolved before and must still be the same walk. flags may hold O_DIRECTORY.
 * Returns an O_PATH descriptor or a negative errno (-ELOOP: a symlink; -EXDEV: ".." or a mount). */
int openat_beneath(int dir_fd, const char *path, int flags);
/* Opens directory path inside root, making its missing components with mode, each made in the
 * directory resolved inside root before it. Returns 0 and an O_PATH descriptor of it. */
int mkdir_in_root(const char *root, const char *path, mode_t mode, int *ret_fd);
/* The path in this mount namespace that fd names (/proc/self/fd/N); -EXDEV if it has none. */
int fd_get_path(int fd, char **ret);
/* open_in_root(), then the path of what was opened (with no symlink below root), for callers that
 * need a path (libkmod, messages). Whoever reads from that path later must open it with
 * openat_beneath() from root, or compare it with the file resolved here: the tree may change. */
int path_in_root(const char *root, const char *path, bool nofollow, char **ret);
/* Makes an absolute path canonical without touching the file system: collapses "//", drops "."
 * and resolves ".." lexically. Returns a new string or NULL on OOM. */
char *path_simplify_abs(const char *path);
/* Maps the legacy top-level directories onto merged /usr (/bin → /usr/bin, /lib → /usr/lib, ...)
 * and simplifies. Returns a new string or NULL on OOM. */
char *path_merge_usr(const char *path);
/* Returns a new string with the directory part of path ("/" for top-level entries). */
char *path_dirname(const char *path);
const char *path_basename(const char *path);

/* Where sysfs is mounted: "/sys", or $FOYER_SYSFS if set and not empty (tests point it at a fake tree;
 * ignored in a setuid context, see secure_getenv(3)). */
const char *sysfs_dir(void);

/* Creates path and its missing parents with the given mode; an existing directory is fine. */
int mkdir_p(const char *path, mode_t mode);
/* Creates the missing parent directories of path. */
int mkdir_parents(const char *path, mode_t mode);
/* Resolves path below root (symlinks stay inside root) into a path string, for a name that need
 * not exist yet (a mount point): from the first missing component on, the rest is appended verbatim
 * (systemd's CHASE_NONEXISTENT), and -EBADSLT if that rest holds "..". Returns 0 and the resolved
 * path including the root prefix in *ret, or a negative errno. Not for opening a file of a --root
 * tree: open_in_root() is. */
int chase_below_root(const char *path, const char *root, char **ret);
