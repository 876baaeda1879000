/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The symbol-version table parsers on arbitrary bytes: no crash, no out-of-bounds read, no leak; on
 * success the counts and names are what the promises say. The input is
 *   [1 byte: count][2 bytes: string table size, little-endian][string table][table]
 * and both parsers read the same bytes. The seeds are real tables of bookworm's files, the section
 * after its .dynstr as objcopy --dump-section writes them: mount(8)'s and foyer-root-generator's
 * .gnu.version_r, libc's, libmount's and libblkid's .gnu.version_d, each with its entry count. */
#include <assert.h>

#include "elf-version.h"
#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ElfVersionNeed *needs = NULL;
        _cleanup_strv_free_ char **defs = NULL;
        const uint8_t *strtab, *table;
        size_t n = 0, strsz, table_size;
        uint64_t count;

        if (!fuzz_setup(size, 131072) || size < 3)
                return 0;
        count = data[0];
        strsz = MIN((size_t) (data[1] | data[2] << 8), size - 3);
        strtab = data + 3;
        table = strtab + strsz;
        table_size = size - 3 - strsz;

        /* Copies, so that ASan sees the exact ends of both. */
        _cleanup_free_ uint8_t *s = malloc(strsz ?: 1), *t = malloc(table_size ?: 1);
        if (!s || !t)
                return 0;
        memcpy(s, strtab, strsz);
        memcpy(t, table, table_size);

        if (elf_verneed_parse(t, table_size, count, s, strsz, &needs, &n) >= 0) {
                assert(n == count);
                for (size_t i = 0; i < n; i++) {
                        assert(strlen(needs[i].file) > 0);
                        assert(!strv_isempty(needs[i].versions));
                        STRV_FOREACH(v, needs[i].weak)
                                assert(strv_contains(needs[i].versions, *v));
                }
                elf_version_needs_free(needs, n);
        } else
                assert(!needs && n == 0);

        if (elf_verdef_parse(t, table_size, count, s, strsz, &defs) >= 0)
                assert(strv_length(defs) <= count);
        else
                assert(!defs);
        return 0;
}
