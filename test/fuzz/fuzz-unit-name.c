/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit-name escaping (src/shared/unit-name.c) on arbitrary strings: no crash, and escaping is
 * undone by unescaping, and what the escapers return is a valid unit name. */
#include <stdio.h>

#include "fuzz.h"
#include "macro.h"
#include "unit-name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *escaped = NULL, *unescaped = NULL, *path_escaped = NULL,
                            *from_path = NULL, *instance = NULL, *mangled = NULL, *c = NULL,
                            *spec = NULL, *simplified = NULL;

        if (!fuzz_setup(size, 4096))
                return 0;
        s = fuzz_strndup(data, size);
        if (!s)
                return 0;

        if (unit_name_escape(s, &escaped) >= 0) {
                if (unit_name_unescape(escaped, &unescaped) < 0 || !streq(unescaped, s)) {
                        fprintf(stderr, "escape/unescape round trip lost \"%s\"\n", s);
                        abort();
                }
        }
        (void) unit_name_path_escape(s, &path_escaped);
        if (unit_name_from_path(s, ".mount", &from_path) >= 0 && !unit_name_is_valid(from_path)) {
                fprintf(stderr, "unit_name_from_path gave an invalid name \"%s\"\n", from_path);
                abort();
        }
        (void) unit_name_from_path_instance("systemd-fsck", s, ".service", &instance);
        (void) unit_name_mangle(s, ".device", &mangled);
        c = cescape(s);
        spec = specifier_escape(s);
        simplified = strdup(s);
        if (simplified)
                (void) path_simplify(simplified);
        (void) unit_name_is_valid(s);
        (void) path_is_safe(s);
        return 0;
}
