/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small string, list and path helpers the builder's stages share. None of them logs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "fileio.h" /* read_full_file(), read_full_fd(), mkdir_p(), ... */
#include "strv.h" /* strv_length(), strv_extend(), strv_consume(), strv_contains(), strjoin(), strv_split() */

#define FOREACH_STRING(x, ...)                                                       \
        for (const char *const *_foreach_l = (const char *const[]) { __VA_ARGS__, NULL }, *x; \
             (x = *_foreach_l); _foreach_l++)

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

/* Lists the regular files (or symlinks) named *suffix in dir, sorted; a missing dir yields an empty
 * list. */
int dir_list_suffix(const char *dir, const char *suffix, char ***ret);

/* Formats a mode like ls -l ("-rwxr-xr-x"); buf must hold 11 bytes. */
const char *mode_to_string(uint32_t mode, char buf[static 11]);

/* Temporary files and directories that SIGINT, SIGTERM or SIGHUP must not leave behind: main()
 * installs the handler once; the handler removes what is registered (a tree: recursively) and
 * ends the program with the signal. Register right after creating, unregister right after
 * removing on the normal path. Returns the slot. */
int cleanup_on_signal_setup(void);
int cleanup_register(const char *path, bool tree);
/* A child writing into the slot's path: the handler kills and reaps it first. */
void cleanup_set_child(int slot, pid_t pid);
void cleanup_unregister(int slot);

/* $TMPDIR if it is an absolute path, /tmp otherwise. */
const char *tmp_dir(void);
