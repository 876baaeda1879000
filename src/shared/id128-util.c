/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <string.h>

#include "id128-util.h"

bool id128_is_valid(const char *s) {
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (n != 32 && n != 36)
                return false;
        for (size_t i = 0; i < n; i++) {
                bool dash = n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);

                /* Not isxdigit(): the answer must not depend on the locale. */
                if (dash ? s[i] != '-' : !(s[i] && strchr("0123456789abcdefABCDEF", s[i])))
                        return false;
        }
        return true;
}
