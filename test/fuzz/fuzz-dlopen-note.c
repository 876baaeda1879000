/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The .note.dlopen JSON reader on arbitrary bytes: no crash, no leak, and what it accepts has the
 * documented shape (a known priority, at least one soname, each a terminated file name). */
#include <assert.h>

#include "elf-dlopen.h"
#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        DlopenFeature *f = NULL;
        size_t n = 0;

        if (dlopen_note_parse((const char *) data, size, &f, &n) < 0) {
                assert(!f && n == 0);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                assert(dlopen_priority_to_string(f[i].priority));
                assert(!strv_isempty(f[i].sonames));
                STRV_FOREACH(s, f[i].sonames)
                        assert(strlen(*s) > 0 && !strchr(*s, '/'));
        }
        dlopen_features_free(f, n);
        return 0;
}
