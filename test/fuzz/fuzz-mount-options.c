/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mount option lookups (src/shared/mount-options.c) on arbitrary option strings. The input is
 * "NAME\nOPTIONS" (or only OPTIONS, then NAME is "x-systemd.requires"): no crash; filter and test agree;
 * what the filter keeps no longer matches and is stable when filtered again; the values and the kept
 * words together are never longer than the input; yes/no lookups are consistent. */
#include <stdio.h>

#include "fuzz.h"
#include "macro.h"
#include "mount-options.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = NULL, *names = NULL, *value = NULL, *filtered = NULL, *refiltered = NULL,
                            *yes_no = NULL;
        _cleanup_strv_free_ char **values = NULL;
        const char *opts, *name = "x-systemd.requires";
        size_t name_len;
        char *nl;
        int r;

        if (!fuzz_setup(size, 16384))
                return 0;
        s = fuzz_strndup(data, size);
        if (!s)
                return 0;
        opts = s;
        nl = strchr(s, '\n');
        if (nl && nl != s) {
                *nl = 0;
                name = s;
                opts = nl + 1;
        }

        /* names as a NUL-separated, double-NUL-terminated list of one entry */
        name_len = strlen(name);
        names = calloc(name_len + 2, 1);
        if (!names)
                return 0;
        memcpy(names, name, name_len);

        r = mount_options_filter(opts, names, &value, NULL, &filtered);
        if (r < 0)
                return 0;
        if ((r > 0) != mount_options_test(opts, names))
                fuzz_fail("filter and test disagree", opts);
        if (r == 0 && (value || !streq(filtered, opts)))
                fuzz_fail("no match, yet a value or changed options", opts);
        if (strlen(filtered) > strlen(opts) || (value && strlen(value) >= strlen(opts)))
                fuzz_fail("output longer than the input", opts);

        r = mount_options_filter(filtered, names, NULL, NULL, &refiltered);
        if (r < 0)
                return 0;
        if (r != 0 || !streq(filtered, refiltered))
                fuzz_fail("what the filter kept still matches", opts);

        r = mount_options_filter(opts, names, NULL, &values, NULL);
        if (r < 0)
                return 0;
        if (r == 0 && !strv_isempty(values))
                fuzz_fail("values without a match", opts);
        STRV_FOREACH(v, values)
                if (strlen(*v) >= strlen(opts))
                        fuzz_fail("value longer than the options", opts);

        (void) mount_options_filter(NULL, names, NULL, NULL, NULL);

        /* "NAME\0no-NAME\0": the last one present wins, so both orders cannot be true at once unless
         * the two names are the same word. */
        yes_no = calloc(2 * name_len + 5, 1);
        if (!yes_no)
                return 0;
        memcpy(yes_no, name, name_len);
        memcpy(yes_no + name_len + 1, "no-", 3);
        memcpy(yes_no + name_len + 4, name, name_len);
        if (mount_options_test_yes_no(opts, yes_no) && !mount_options_test(opts, names))
                fuzz_fail("yes/no found the name where test did not", opts);
        return 0;
}
