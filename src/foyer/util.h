/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small string, list and path helpers the builder's stages share. None of them logs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "fileio.h" /* read_full_file(), read_full_fd(), mkdir_p(), ... */
#include "path-util.h" /* path_in_root(), path_merge_usr(), ... */
#include "strv.h" /* strv_length(), strv_extend(), strv_consume(), strv_contains(), strjoin(), strv_split() */

#define FOREACH_STRING(x, ...)                                                       \
        for (const char *const *_foreach_l = (const char *const[]) { __VA_ARGS__, NULL }, *x; \
             (x = *_foreach_l); _foreach_l++)

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
