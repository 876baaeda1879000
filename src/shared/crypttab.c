/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>

#include "crypttab.h"
#include "devspec.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"

/* Cuts the next whitespace-separated field out of *p (NUL-terminating it in place), or returns NULL. */
static char *next_field(char **p) {
        char *s = *p, *e;

        while (isspace((unsigned char) *s))
                s++;
        if (!*s)
                return NULL;
        for (e = s; *e && !isspace((unsigned char) *e); e++)
                ;
        *p = *e ? e + 1 : e;
        *e = 0;
        return s;
}

int crypttab_parse(const char *path, crypttab_entry_t cb, void *data) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file(path, &text, NULL);
        if (r < 0)
                return r;
        return crypttab_parse_buffer(text, cb, data);
}

int crypttab_parse_buffer(char *text, crypttab_entry_t cb, void *data) {
        unsigned n = 0;
        char *line, *next;
        int r;

        assert(text);

        for (line = text; line; line = next) {
                char *fields[4] = {}, *p = line;
                size_t k = 0;

                next = strchr(line, '\n');
                if (next)
                        *(next++) = 0;
                n++;

                while (isspace((unsigned char) *p))
                        p++;
                if (*p == 0 || *p == '#')
                        continue;

                while (k < ELEMENTSOF(fields) && (fields[k] = next_field(&p)))
                        k++;

                r = cb(&(CrypttabEntry) {
                                .name = k >= 2 ? fields[0] : NULL,
                                .device = k >= 2 ? fields[1] : NULL,
                                .keyspec = fields[2],
                                .options = fields[3],
                                .line = n,
                                .extra_fields = k == ELEMENTSOF(fields) && next_field(&p),
                        }, data);
                if (r < 0)
                        return r;
        }
        return 0;
}

int crypttab_split_keyspec(const char *spec, char **ret_file, char **ret_device) {
        _cleanup_free_ char *file = NULL, *device = NULL;
        const char *c;

        if (!spec) {
                *ret_file = *ret_device = NULL;
                return 0;
        }

        /* "FILE:DEVICE" only if DEVICE looks like a device: a colon may as well be part of the file name. */
        c = strrchr(spec, ':');
        if (c) {
                if (devspec_to_node(c + 1, DEVSPEC_NO_ID, &device) < 0)
                        return -ENOMEM;
                if (device[0] == '/')
                        file = strndup(spec, c - spec);
                else {
                        log_debug("\"%s\" does not look like a device, taking \"%s\" as a file name.", c + 1, spec);
                        free(device);
                        device = NULL;
                        c = NULL;
                }
        }
        if (!c)
                file = strdup(spec);
        if (!file)
                return -ENOMEM;

        *ret_file = TAKE_PTR(file);
        *ret_device = TAKE_PTR(device);
        return 0;
}
