/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* foyer's ELF reader on an arbitrary buffer: no crash, no misaligned access, no leak, and the
 * strings it returns are terminated. */
#include "elf-file.h"
#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;

        if (elf_file_parse(data, size, &f) < 0)
                return 0;
        if (f->interp)
                (void) strlen(f->interp);
        STRV_FOREACH(s, f->needed)
                (void) strlen(*s);
        STRV_FOREACH(s, f->dlopen)
                (void) strlen(*s);
        return 0;
}
