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

/* The length of the valid multi-byte UTF-8 sequence at s (shortest form, no surrogate, at most
 * U+10FFFF), else 0 (an ASCII byte, a stray or invalid byte, a sequence cut short by the NUL). */
int utf8_valid_multibyte(const char *s);
/* The length of the character at s if it may reach a terminal, a log or an SVG as it is: printable
 * ASCII, or a valid multi-byte UTF-8 sequence (above) that is not a C1 control (U+0080..U+009F, which
 * terminals obey like ESC sequences). 0 for anything else: a C0 control, DEL, a C1 control, a byte
 * that starts no valid sequence (a raw 0x9b is CSI on some terminals), and the NUL at the end. */
size_t utf8_printable_len(const char *s);
/* Whether every character of s passes utf8_printable_len(). */
bool string_is_printable(const char *s);
/* A copy of s with every byte that is not part of a printable character (utf8_printable_len()) written
 * as "\xNN", or, if replacement is not 0, replaced by that (ASCII, printable) character; the rest (a
 * backslash too, so that systemd's escaped unit names read the same) is kept. NULL on OOM. This is the
 * one place strings from the journal, units, the command line or a file are made safe to print. */
char *string_escape_unprintable(const char *s, char replacement);
