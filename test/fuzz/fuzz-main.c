/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replays fuzz inputs without libFuzzer: every argument is a file or a directory of files, and each
 * file's bytes are passed to LLVMFuzzerTestOneInput() once, in name order. Built with gcc under
 * ASan+UBSan, this is the corpus test that gates CI; a crash aborts with the file named on stderr.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "fuzz.h"
#include "macro.h"

static int replay_file(const char *path) {
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        assert(path);

        r = read_full_file(path, &data, &size);
        if (r < 0) {
                fprintf(stderr, "fuzz-main: cannot read %s: %s\n", path, strerror(-r));
                return r;
        }
        fprintf(stderr, "fuzz-main: %s (%zu bytes)\n", path, size);
        (void) LLVMFuzzerTestOneInput((const uint8_t *) data, size);
        return 0;
}

static int replay_dir(const char *path, unsigned *n) {
        struct dirent **entries = NULL;
        int r = 0, k;

        assert(path);
        assert(n);

        k = scandir(path, &entries, NULL, alphasort);
        if (k < 0) {
                fprintf(stderr, "fuzz-main: cannot list %s: %m\n", path);
                return -errno;
        }
        for (int i = 0; i < k; i++) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (entries[i]->d_name[0] != '.' &&
                    asprintf(&p, "%s/%s", path, entries[i]->d_name) >= 0 &&
                    stat(p, &st) >= 0 && S_ISREG(st.st_mode)) {
                        if (replay_file(p) < 0)
                                r = -EIO;
                        else
                                (*n)++;
                }
                free(entries[i]);
        }
        free(entries);
        return r;
}

int main(int argc, char *argv[]) {
        unsigned n = 0;
        int r = 0;

        if (argc < 2) {
                fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "fuzz-main: %s: %m\n", argv[i]);
                        r = -errno;
                } else if (S_ISDIR(st.st_mode)) {
                        if (replay_dir(argv[i], &n) < 0)
                                r = -EIO;
                } else if (replay_file(argv[i]) < 0)
                        r = -EIO;
                else
                        n++;
        }
        /* An empty corpus proves nothing: fail rather than pass on zero inputs. */
        if (n == 0) {
                fprintf(stderr, "fuzz-main: no input replayed\n");
                return 1;
        }
        printf("fuzz-main: replayed %u inputs\n", n);
        return r < 0 ? 1 : 0;
}
