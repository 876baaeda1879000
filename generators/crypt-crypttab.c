/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>

#include "crypt-generator.h"
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
        unsigned n = 0;
        char *line, *next;
        int r;

        r = read_full_file(path, &text, NULL);
        if (r == -ENOENT) {
                log_debug("%s does not exist, no volumes from it.", path);
                return 0;
        }
        if (r < 0) {
                /* Like systemd: an unreadable crypttab is reported, the command line still counts. */
                log_error_errno(r, "Failed to open %s: %m", path);
                return 0;
        }

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
                if (k < 2) {
                        log_error("Failed to parse %s:%u, ignoring.", path, n);
                        continue;
                }
                if (k == ELEMENTSOF(fields) && next_field(&p))
                        log_warning("%s:%u has more than four fields, ignoring the rest of the line.", path, n);

                r = cb(&(CrypttabEntry) {
                                .name = fields[0],
                                .device = fields[1],
                                .keyspec = fields[2],
                                .options = fields[3],
                                .line = n,
                        }, data);
                if (r < 0)
                        return r;
        }
        return 0;
}
