/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small string, list and path helpers the builder's stages share. None of them logs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "strv.h" /* strv_length(), strv_extend(), strv_consume(), strv_contains(), strjoin() */

#define FOREACH_STRING(x, ...)                                                       \
        for (const char *const *_foreach_l = (const char *const[]) { __VA_ARGS__, NULL }, *x; \
             (x = *_foreach_l); _foreach_l++)

/* Splits on any of the separator characters, dropping empty words. */
int strv_split(const char *s, const char *separators, char ***ret);
void strv_sort(char **l);

/* Joins root and an absolute path; root may be NULL or "/" for the host. */
char *path_prefix_root(const char *root, const char *path);
/* Makes an absolute path canonical without touching the file system: collapses "//", drops "."
 * and resolves ".." lexically. Returns a new string or NULL on OOM. */
char *path_simplify_abs(const char *path);
/* Maps the legacy top-level directories onto merged /usr (/bin → /usr/bin, /lib → /usr/lib, ...)
 * and simplifies. Returns a new string or NULL on OOM. */
char *path_merge_usr(const char *path);
/* Returns a new string with the directory part of path ("/" for top-level entries). */
char *path_dirname(const char *path);
const char *path_basename(const char *path);

/* Reads a whole file into a NUL-terminated buffer. */
int read_full_file(const char *path, char **ret, size_t *ret_size);

/* Lists the regular files (or symlinks) named *suffix in dir, sorted; a missing dir yields an empty
 * list. */
int dir_list_suffix(const char *dir, const char *suffix, char ***ret);

/* Formats a mode like ls -l ("-rwxr-xr-x"); buf must hold 11 bytes. */
const char *mode_to_string(uint32_t mode, char buf[static 11]);
