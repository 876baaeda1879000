/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PE reader and writer with the input as the stub: parse it, read its systemd-stub version,
 * append the sections of a UKI (with a .ucode archive), parse the result back (which must work and hold the new sections), and list it as foyer ls
 * does. */
#include <stdio.h>

#include "fuzz.h"
#include "log.h"
#include "ls.h"
#include "pe.h"

/* A minimal newc archive for .initrd, so that the listing reaches the cpio reader. */
static const char initrd[] =
        "07070100000001000041ED0000000000000000000000010000000000000000000000000000000000000000000000000000000400000000etc\0\0\0"
        "07070100000000000000000000000000000000000000010000000000000000000000000000000000000000000000000000000B00000000TRAILER!!!\0\0\0\0";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const PeAddSection add[] = {
                { ".osrel", "ID=fuzz\n", 8 },
                { ".linux", "kernel", 6 },
                { ".initrd", initrd, sizeof(initrd) - 1 },
                { ".ucode", initrd, sizeof(initrd) - 1 },
        };
        _cleanup_free_ uint8_t *out = NULL;
        const char *why = NULL;
        PeImage stub, pe;
        FILE *null = fuzz_null_stream();
        size_t n;

        if (pe_parse(data, size, &stub, &why) < 0)
                return 0;
        for (unsigned i = 0; i < stub.n_sections; i++)
                (void) pe_section_data(&stub, &stub.sections[i], &n);
        (void) pe_stub_version(&stub);
        (void) ls_data("fuzz", data, size, null, 1024U * 1024U);

        if (pe_append_sections(&stub, add, ELEMENTSOF(add), &out, &n, &why) < 0)
                return 0;
        if (pe_parse(out, n, &pe, &why) < 0) {
                fprintf(stderr, "the writer's output does not parse: %s\n", why);
                abort();
        }
        if (pe.n_sections != stub.n_sections + ELEMENTSOF(add) || !pe_find_section(&pe, ".initrd"))
                abort();
        (void) ls_data("fuzz-uki", out, n, null, 1024U * 1024U);
        return 0;
}
