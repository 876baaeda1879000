/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NULL-terminated string arrays and small string builders. All functions return a negative errno
 * on failure and leave their output parameters untouched then. */

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* Iterates s over the entries of l (which may be NULL). */
#define STRV_FOREACH(s, l) for (char * const *s = (l); (s) && *(s); (s)++)

/* Number of entries in a NULL-terminated array; NULL counts as empty. */
size_t strv_length(char * const *l);
static inline bool strv_isempty(char * const *l) {
        return !l || !*l;
}
/* Appends a copy of s to *l (which may be NULL); returns 0 or -ENOMEM. */
int strv_extend(char ***l, const char *s);
/* Appends s itself to *l, taking ownership also on failure; returns 0 or -ENOMEM. */
int strv_consume(char ***l, char *s);
/* Returns true if s is an element of l. */
bool strv_contains(char * const *l, const char *s);
/* Splits s on any of the separator characters, dropping empty words; an empty s gives an empty list. */
int strv_split(const char *s, const char *separators, char ***ret);
/* Sorts l in place by strcmp(). */
void strv_sort(char **l);
/* Joins l with sep into a new string, or NULL on OOM; an empty list gives "". */
char *strv_join(char * const *l, const char *sep);

/* Appends sep (only if *x is non-empty) and s to the heap string *x (NULL allowed); returns 0 or -ENOMEM.
 * This is systemd's strextend_with_separator() rule: "a" + "" gives "a,", "" + "b" gives "b". */
int strextend_with_separator(char **x, const char *sep, const char *s);
/* Replaces *p with a copy of s (or NULL); returns 0 or -ENOMEM. */
int free_and_strdup(char **p, const char *s);
/* Returns a new string "a" "b" ... up to the NULL sentinel, or NULL on OOM. */
char *strjoin_real(const char *a, ...) _sentinel_;
#define strjoin(a, ...) strjoin_real((a), __VA_ARGS__, NULL)

/* Whether s contains a byte < 0x20 or 0x7f. */
bool string_has_cc(const char *s);
