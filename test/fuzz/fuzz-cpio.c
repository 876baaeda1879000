/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* foyer ls on an arbitrary image in memory: uncompressed and compressed (zstd, xz, gzip, lz4)
 * cpio archives, concatenations of them, and UKIs (a PE image with an .initrd). The expanded
 * size is capped so that one input cannot take the whole time budget; memory is bounded by the
 * streaming reader whatever the cap. Also the in-memory reader cpio_parse(). */
#include <stdio.h>

#include "cpio.h"
#include "fuzz.h"
#include "log.h"
#include "ls.h"

static int check_entry(const CpioEntry *e, void *userdata) {
        size_t *n = userdata;

        /* What the reader promises: bounded, NUL-terminated names and link targets (a target may
         * hold a NUL of its own, and then reads shorter than its size). */
        if (strlen(e->name) >= CPIO_PATH_MAX || (e->link_target && strlen(e->link_target) > e->size))
                abort();
        (*n)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FILE *null = fuzz_null_stream();
        size_t consumed, n = 0;

        /* 4 MiB: enough for every seed, small enough for thousands of runs a second. */
        (void) ls_data("fuzz", data, size, null, 4U * 1024U * 1024U);
        if (cpio_parse(data, size, check_entry, &n, &consumed) >= 0 && consumed > size)
                abort();
        return 0;
}
