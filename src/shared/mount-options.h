/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Comma-separated mount option strings as systemd's fstab code treats them ("\," escapes a comma). */

#include <stdbool.h>

/* Looks for the options in the NUL-separated, double-NUL-terminated list names. Returns 1 if any
 * matched, 0 if not, or -ENOMEM. Outputs are optional:
 *   ret_value:    value of the last match ("name=value"; a bare "name" gives NULL);
 *   ret_values:   every "name=value" value in order (bare names do not count then);
 *   ret_filtered: opts with all matches removed (NULL opts gives ""). */
int mount_options_filter(const char *opts, const char *names, char **ret_value, char ***ret_values,
                         char **ret_filtered);
/* Whether any of names occurs in opts (as "name" or "name=..."). */
bool mount_options_test(const char *opts, const char *names);
/* For a "yes\0no\0" pair: true if the last of the two present in opts is the first name. */
bool mount_options_test_yes_no(const char *opts, const char *yes_no);
