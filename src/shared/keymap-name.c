/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>

#include "keymap-name.h"

bool keymap_name_is_valid(const char *name) {
        size_t n;

        if (!name || name[0] == '.' || name[0] == '-')
                return false;
        n = strlen(name);
        if (n == 0 || n > KEYMAP_NAME_MAX)
                return false;
        /* Spelled out rather than isalnum(): the answer must not depend on the locale. */
        return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+") == n;
}
