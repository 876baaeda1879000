/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The crypttab parser (src/shared/crypttab.c) on arbitrary files, and the key-spec splitter on every
 * KEYFILE field: no crash, lines numbered in order, fields non-empty without white space, and a split
 * key spec gives back a file name that is a prefix of the spec. */
#include <ctype.h>
#include <stdio.h>

#include "crypttab.h"
#include "fuzz-file.h"
#include "log.h"
#include "macro.h"

static void check_field(const char *f) {
        if (!f)
                return;
        if (*f == 0)
                fuzz_fail("empty field", f);
        for (const char *c = f; *c; c++)
                if (isspace((unsigned char) *c))
                        fuzz_fail("white space in a field", f);
}

static int check_entry(const CrypttabEntry *e, void *data) {
        unsigned *last = data;
        _cleanup_free_ char *file = NULL, *device = NULL;

        if (e->line <= *last)
                fuzz_fail("line numbers out of order", e->name);
        *last = e->line;
        if (!e->name != !e->device || (!e->name && (e->keyspec || e->options)))
                fuzz_fail("fields after a missing NAME or DEVICE", e->keyspec);
        check_field(e->name);
        check_field(e->device);
        check_field(e->keyspec);
        check_field(e->options);

        if (crypttab_split_keyspec(e->keyspec, &file, &device) < 0)
                return 0; /* out of memory */
        if (!e->keyspec && (file || device))
                fuzz_fail("a missing key spec split into something", NULL);
        if (e->keyspec && (!file || !startswith(e->keyspec, file)))
                fuzz_fail("key file is not a prefix of the key spec", e->keyspec);
        if (device && device[0] != '/')
                fuzz_fail("key device is not an absolute path", device);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *path;
        unsigned last = 0;

        if (!fuzz_setup(size, 65536))
                return 0;
        path = fuzz_file_path(data, size);
        if (!path)
                return 0;
        (void) crypttab_parse(path, check_entry, &last);
        return 0;
}
