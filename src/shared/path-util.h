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
/* Resolves path inside root (NULL or "/" for the host) as the kernel would after chroot(root): all
 * symlinks, intermediate and final, absolute and relative, and "..", stay inside root. With
 * nofollow, a final symlink is not followed. Returns 0 and the host path of the object (with no
 * symlink below root) in *ret, or a negative errno as open() would (-ENOENT, -ENOTDIR, -ELOOP, ...;
 * -ENOSYS before Linux 5.6). */
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
/* Resolves path below root (symlinks stay inside root); from the first missing component on, the rest is
 * appended verbatim (systemd's CHASE_NONEXISTENT). Returns 0 and the resolved path including the root
 * prefix in *ret, or a negative errno. */
int chase_below_root(const char *path, const char *root, char **ret);
