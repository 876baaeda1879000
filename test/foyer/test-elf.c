/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Prints the shared-library closure foyer's ELF reader finds for each binary given, one
 * real path per line, so that test-elf.sh can compare it with ldd. With --dlopen it prints the
 * sonames of the binary's .note.dlopen notes instead. */

#include <limits.h>

#include "elf-file.h"
#include "manifest.h"
#include "resolve.h"
#include "util.h"

/* A .note.dlopen note in the shape systemd's ELF_NOTE_DLOPEN() macro emits, so that the reader's
 * note parsing is tested on a real linked binary even where the host's binaries carry none. */
#define DLOPEN_JSON "[{\"feature\":\"test\",\"description\":\"foyer test\",\"priority\":\"suggested\"," \
                    "\"soname\":[\"libfoyer-test-a.so.1\",\"libfoyer-test-b.so.2\"]}]"
__attribute__((used, section(".note.dlopen"), aligned(4))) static const struct {
        uint32_t n_namesz, n_descsz, n_type;
        char name[4];
        char desc[ALIGN_TO(sizeof(DLOPEN_JSON), 4)];
} dlopen_note = { 4, sizeof(DLOPEN_JSON), 0x407c0c0a, "FDO", DLOPEN_JSON };

static int print_own_dlopen(void) {
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        int r;

        r = elf_file_read("/proc/self/exe", &f);
        if (r < 0) {
                fprintf(stderr, "elf_file_read: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        STRV_FOREACH(s, f->dlopen)
                printf("%s\n", *s);
        return EXIT_SUCCESS;
}

int main(int argc, char *argv[]) {
        _cleanup_strv_free_ char **search_path = NULL;
        int r;

        if (argc == 2 && streq(argv[1], "--own-dlopen-note"))
                return print_own_dlopen();

        if (argc < 2) {
                fprintf(stderr, "Usage: %s BINARY...\n", argv[0]);
                return EXIT_FAILURE;
        }

        r = elf_search_path("/", &search_path);
        if (r < 0) {
                fprintf(stderr, "elf_search_path: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }

        for (int i = 1; i < argc; i++) {
                _cleanup_(manifest_freep) Manifest *m = NULL;
                char real_bin[PATH_MAX];

                if (!realpath(argv[i], real_bin)) {
                        fprintf(stderr, "%s: %m\n", argv[i]);
                        return EXIT_FAILURE;
                }
                r = manifest_new("/", &m);
                if (r >= 0)
                        r = manifest_add_from_root(m, argv[i], "test", NULL);
                if (r >= 0)
                        r = resolve_libraries(m, search_path, 0);     /* what ldd sees */
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
                for (size_t j = 0; j < m->n_entries; j++) {
                        char real[PATH_MAX];

                        if (m->entries[j]->type != ENTRY_FILE)
                                continue;
                        if (!realpath(m->entries[j]->source, real))
                                return EXIT_FAILURE;
                        if (streq(real, real_bin))
                                continue;
                        printf("%s\n", real);
                }
        }
        return EXIT_SUCCESS;
}
