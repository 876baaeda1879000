/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The static device nodes of the image's modules, as a tmpfiles.d file written at build time.
 *
 * A module that owns a fixed device number (loop's loop-control, dm_mod's mapper/control, btrfs's
 * btrfs-control, ...) declares it, and depmod lists it in modules.devname. At boot,
 * kmod-static-nodes.service turns that list into /run/tmpfiles.d/static-nodes.conf, and
 * systemd-tmpfiles-setup-dev.service creates the nodes, so that opening one loads its module. Both
 * run before systemd-udevd.service may start. The image's list is fixed when the image is built, so
 * the builder writes the same lines into the image and leaves kmod-static-nodes.service out: under
 * TCG that service took 0.2 s of the path to udev. */

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "static-nodes.h"
#include "util.h"

#define DEVNAME_MAX 128

/* A path below /dev that tmpfiles.d takes as one word: letters, digits and "._-+", components
 * separated by single slashes, none of them "." or "..". */
static bool devname_valid(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n > DEVNAME_MAX || name[0] == '/' || name[n - 1] == '/' || strstr(name, "//"))
                return false;
        for (const char *p = name; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("._-+/", *p)))
                        return false;
        for (const char *c = name;;) {
                size_t l = strcspn(c, "/");

                if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!c[l])
                        return true;
                c += l + 1;
        }
}

/* One line of modules.devname (modified in place) into f; 0 if written, -EINVAL if the line is not
 * "MODULE DEVNAME TYPEMAJOR:MINOR" with TYPE c or b. */
static int write_node(FILE *f, char *line) {
        char *words[4] = {}, *state = NULL, type;
        unsigned major, minor;
        size_t n = 0;
        int end = -1;

        assert(f);
        assert(line);

        for (char *w = strtok_r(line, " \t\r", &state); w; w = strtok_r(NULL, " \t\r", &state)) {
                if (n == ELEMENTSOF(words))
                        return -EINVAL;
                words[n++] = w;
        }
        if (n != 3)
                return -EINVAL;
        /* Digits and the colon only after the type: %u alone would take "-1" or "+1". */
        if (strspn(words[2] + 1, "0123456789:") != strlen(words[2] + 1) ||
            sscanf(words[2], "%c%u:%u%n", &type, &major, &minor, &end) != 3 || end < 0 || words[2][end] ||
            !IN_SET(type, 'c', 'b') || !devname_valid(words[1]))
                return -EINVAL;

        const char *slash = strrchr(words[1], '/');
        if (slash)
                fprintf(f, "d /dev/%.*s 0755 - - -\n", (int) (slash - words[1]), words[1]);
        fprintf(f, "%c! /dev/%s 0600 - - - %u:%u\n", type, words[1], major, minor);
        return 0;
}

int static_nodes_tmpfiles(const char *devname, size_t size, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t text_size = 0;
        unsigned lineno = 0;
        FILE *f;

        assert(devname || size == 0);
        assert(ret);

        f = open_memstream(&text, &text_size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < size;) {
                const char *nl = memchr(devname + i, '\n', size - i);
                size_t len = (nl ? (size_t) (nl - devname) : size) - i;
                _cleanup_free_ char *line = strndup(devname + i, len);

                i += len + 1;
                lineno++;
                if (!line) {
                        fclose(f);
                        return -ENOMEM;
                }
                if (line[0] == '#' || strspn(line, " \t\r") == strlen(line))
                        continue;
                if (write_node(f, line) < 0)
                        log_warning("modules.devname, line %u: not \"MODULE DEVNAME cMAJOR:MINOR\" with a plain "
                                    "name below /dev, leaving the node out.", lineno);
        }
        if (fclose(f) != 0 || !text)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}
