/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* modules.devname into tmpfiles.d lines (src/foyer/static-nodes.c) on arbitrary bytes: no crash, no
 * leak, and every line written is either "d /dev/DIR 0755 - - -" or "c! /dev/NAME 0600 - - - MAJ:MIN"
 * (or b!), with a path below /dev made of plain words: nothing from the input reaches the file as a
 * second word, a control character or a path outside /dev. The seeds are Debian 12's and 13's lists. */
#include <assert.h>

#include "fuzz.h"
#include "static-nodes.h"
#include "util.h"

static void check_path(const char *p, size_t len) {
        assert(len > strlen("/dev/") && strncmp(p, "/dev/", 5) == 0);
        for (size_t i = 0; i < len; i++)
                assert((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
                       strchr("._-+/", p[i]));
        assert(!memmem(p, len, "/../", 4) && !memmem(p, len, "/./", 3) && !memmem(p, len, "//", 2));
        assert(!(len >= 3 && memcmp(p + len - 3, "/..", 3) == 0) && p[len - 1] != '/');
}

static void check_line(const char *line) {
        const char *path = line + 3, *end;
        unsigned major, minor;
        int n = -1;

        if (startswith(line, "d /dev/")) {
                path = line + 2;
                end = strchr(path, ' ');
                assert(end && streq(end, " 0755 - - -"));
        } else {
                assert(startswith(line, "c! /dev/") || startswith(line, "b! /dev/"));
                end = strchr(path, ' ');
                assert(end && startswith(end, " 0600 - - - "));
                assert(sscanf(end + strlen(" 0600 - - - "), "%u:%u%n", &major, &minor, &n) == 2);
                assert(n > 0 && end[strlen(" 0600 - - - ") + n] == 0);
        }
        check_path(path, (size_t) (end - path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = NULL;

        if (!fuzz_setup(size, 65536))
                return 0;
        _cleanup_free_ char *copy = malloc(size ?: 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        if (static_nodes_tmpfiles(copy, size, &text) < 0)
                return 0;
        assert(text);
        assert(!*text || text[strlen(text) - 1] == '\n');
        for (char *line = text, *nl; *line; line = nl + 1) {
                nl = strchr(line, '\n');
                assert(nl);
                *nl = 0;
                check_line(line);
        }
        return 0;
}
