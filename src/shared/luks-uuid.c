/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "luks-uuid.h"
#include "macro.h"

/* Spelled out rather than isxdigit()/isalnum(): the answer must not depend on the locale. */
#define HEX_DIGITS_AND_DASH "0123456789abcdefABCDEF-"
#define ALNUM_AND_DASH "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"
#define SPACE " \t\n\v\f\r"

const char *luks_uuid_skip_prefix(const char *value) {
        assert(value);

        return startswith(value, LUKS_UUID_NAME_PREFIX) ?: value;
}

int luks_uuid_split_word(const char *value, char **ret_uuid, char **ret_word) {
        _cleanup_free_ char *uuid = NULL, *word = NULL;
        size_t n, k;
        const char *rest;

        assert(value);
        assert(ret_uuid);
        assert(ret_word);

        n = strspn(value, HEX_DIGITS_AND_DASH);
        if (n == 0 || value[n] != '=')
                return 0;
        /* As %ms: leading whitespace skipped, the word ends at the next. */
        rest = value + n + 1;
        rest += strspn(rest, SPACE);
        k = strcspn(rest, SPACE);
        if (k == 0)
                return 0;
        uuid = strndup(value, n);
        word = strndup(rest, k);
        if (!uuid || !word)
                return -ENOMEM;
        *ret_uuid = TAKE_PTR(uuid);
        *ret_word = TAKE_PTR(word);
        return 1;
}

int luks_uuid_split_prefix(const char *value, char **ret_uuid, const char **ret_rest) {
        size_t n;
        char *uuid;

        assert(value);
        assert(ret_uuid);
        assert(ret_rest);

        n = strspn(value, ALNUM_AND_DASH);
        if (value[n] != '=')
                return 0;
        uuid = strndup(value, n);
        if (!uuid)
                return -ENOMEM;
        *ret_uuid = uuid;
        *ret_rest = value + n + 1;
        return 1;
}
