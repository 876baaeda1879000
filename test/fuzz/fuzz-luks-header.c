/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LUKS header reader of host-only images (src/foyer/hostonly.c) on arbitrary data read from a
 * device, and the cipher alias maker on each cipher it finds: no crash, no read past the data, each
 * cipher a non-empty string without control characters or quotes, each alias "crypto-..." (which
 * libkmod then looks up by name, so nothing else may come out of a header); and the token type
 * reader: each type "systemd-" and more, of lower-case letters, digits and '-'. */
#include "fuzz.h"
#include "hostonly.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_strv_free_ char **ciphers = NULL, **tokens = NULL;

        if (!fuzz_setup(size, 256 * 1024))
                return 0;
        /* A copy of exactly size bytes, so that ASan sees a read past the end. */
        _cleanup_free_ char *copy = malloc(size ?: 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        if (hostonly_luks_tokens(copy, size, &tokens) >= 0)
                STRV_FOREACH(t, tokens)
                        if (strncmp(*t, "systemd-", 8) != 0 || (*t)[8] == 0 ||
                            (*t)[strspn(*t, "abcdefghijklmnopqrstuvwxyz0123456789-")] != 0)
                                fuzz_fail("a bad token type", *t);
        if (hostonly_luks_ciphers(copy, size, &ciphers) < 0)
                return 0;
        STRV_FOREACH(c, ciphers) {
                _cleanup_strv_free_ char **aliases = NULL;

                if (**c == 0 || strchr(*c, '"') || string_has_cc(*c))
                        fuzz_fail("a bad cipher", *c);
                if (hostonly_cipher_aliases(*c, &aliases) < 0)
                        return 0;
                STRV_FOREACH(a, aliases)
                        if (strncmp(*a, "crypto-", 7) != 0 || (*a)[7] == 0)
                                fuzz_fail("an alias that is not crypto-NAME", *a);
        }
        return 0;
}
