/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every verb of the foyer command does with a usage error. */

#include <errno.h>
#include <stdio.h>

#include "macro.h"

/* The second line of every usage error, as in coreutils and systemd's tools: the first one (ours,
 * or getopt's, which names the option) says what was wrong, this one where the right spelling is.
 * verb may be NULL for the top level. Returns -EINVAL. */
static inline int usage_hint(const char *verb) {
        fprintf(stderr, "Try '%s%s%s --help'.\n", program_invocation_short_name, verb ? " " : "", strempty(verb));
        return -EINVAL;
}
