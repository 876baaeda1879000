/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Unit names as systemd 252 forms them, and the escapes used inside unit files. Every function returns 0
 * (or 1 where noted) with a new string in *ret, or a negative errno and leaves *ret untouched. */

#include <stdbool.h>

#include "path-util.h" /* path_simplify(), path_is_safe() */

#define UNIT_NAME_MAX 256

/* Escapes s like "systemd-escape" (no path logic): '/' becomes '-', a leading '.' and every byte outside
 * [A-Za-z0-9:_.] (including '-' and '\') becomes \xNN. */
int unit_name_escape(const char *s, char **ret);
/* Undoes unit_name_escape() like "systemd-escape --unescape": '-' becomes '/', \xNN the byte (hex digits
 * in either case). A '\' not followed by "x" and two hex digits, or an escaped NUL, gives -EINVAL. */
int unit_name_unescape(const char *s, char **ret);
/* Escapes a path like "systemd-escape --path": simplified, "/" gives "-", ".." refused (-EINVAL). */
int unit_name_path_escape(const char *path, char **ret);
/* The one place unit names are put together: prefix (may be NULL) + escaped + suffix, where escaped is
 * the output of one of the escapes above. Names of UNIT_NAME_MAX bytes or more give -ENAMETOOLONG
 * (systemd would hash them; foyer refuses), other invalid names -EINVAL. */
int unit_name_build(const char *prefix, const char *escaped, const char *suffix, char **ret);
/* unit_name_path_escape() plus suffix (".mount", ".device"), through unit_name_build(). */
int unit_name_from_path(const char *path, const char *suffix, char **ret);
/* "prefix@<escaped path>suffix", e.g. systemd-fsck@dev-sda2.service, through unit_name_build(). */
int unit_name_from_path_instance(const char *prefix, const char *path, const char *suffix, char **ret);
/* Whether s is a valid plain, instance or template unit name with a known type suffix. */
bool unit_name_is_valid(const char *s);
/* Turns a user-supplied dependency (unit name, device path, mount path or bare word) into a unit name
 * as systemd's unit_name_mangle_with_suffix() does; bare words get suffix appended. */
int unit_name_mangle(const char *name, const char *suffix, char **ret);

/* Doubles every '%' so the value survives unit-file specifier expansion. */
char *specifier_escape(const char *s);
/* C-escapes s as systemd's cescape(): \a\b\f\n\r\t\v \\ \" \' and octal \ooo for other control/8-bit bytes. */
char *cescape(const char *s);
