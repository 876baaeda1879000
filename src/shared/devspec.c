/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>

#include "devspec.h"
#include "macro.h"
#include "strv.h"

int udev_encode_string(const char *str, char **ret) {
        const unsigned char *s = (const unsigned char *) str;
        char *r, *t;

        r = t = malloc(strlen(str) * 4 + 1);
        if (!r)
                return -ENOMEM;
        while (*s) {
                int n = utf8_valid_multibyte((const char *) s);

                if (n > 1) {
                        memcpy(t, s, n);
                        t += n;
                        s += n;
                        continue;
                }
                if ((*s < 128 && isalnum(*s)) || (*s && strchr("#+-.:=@_", *s)))
                        *(t++) = (char) *s;
                else
                        t += sprintf(t, "\\x%02x", *s);
                s++;
        }
        *t = 0;
        *ret = r;
        return 0;
}

static const struct {
        const char *tag;
        const char *dir;
} tags[] = {
        { "LABEL=", "label" },
        { "UUID=", "uuid" },
        { "PARTUUID=", "partuuid" },
        { "PARTLABEL=", "partlabel" },
        { "ID=", "id" },
};

int devspec_to_node(const char *spec, DevspecFlags flags, char **ret) {
        for (size_t i = 0; i < ELEMENTSOF(tags); i++) {
                _cleanup_free_ char *u = NULL, *enc = NULL;
                const char *v = startswith(spec, tags[i].tag);
                size_t l;
                char *r;

                if (!v || ((flags & DEVSPEC_NO_ID) && streq(tags[i].dir, "id")))
                        continue;

                l = strlen(v);
                if (l >= 2 && strchr("'\"", v[0]) && v[l - 1] == v[0])
                        u = strndup(v + 1, l - 2);
                else
                        u = strdup(v);
                if (!u || udev_encode_string(u, &enc) < 0)
                        return -ENOMEM;
                r = strjoin("/dev/disk/by-", tags[i].dir, "/", enc);
                if (!r)
                        return -ENOMEM;
                *ret = r;
                return 1;
        }

        char *r = strdup(spec);
        if (!r)
                return -ENOMEM;
        *ret = r;
        return 0;
}

bool devspec_has_unknown_tag(const char *spec, DevspecFlags flags) {
        size_t l = strspn(spec, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
        _cleanup_free_ char *n = NULL;

        if (l == 0 || spec[l] != '=')
                return false;
        if (devspec_to_node(spec, flags, &n) != 0)
                return false;
        return true;
}

/* Returns the length of the next component of *p (skipping "/" and "." components) and moves *p past
 * it; *ret points at the component. 0 at the end. */
static size_t next_component(const char **p, const char **ret) {
        for (;;) {
                size_t l;

                *p += strspn(*p, "/");
                l = strcspn(*p, "/");
                if (l == 1 && (*p)[0] == '.') {
                        *p += 1;
                        continue;
                }
                *ret = *p;
                *p += l;
                return l;
        }
}

const char *path_startswith(const char *path, const char *prefix) {
        if ((path[0] == '/') != (prefix[0] == '/'))
                return NULL;
        for (;;) {
                const char *a, *b;
                size_t r = next_component(&path, &a), k = next_component(&prefix, &b);

                if (k == 0)
                        return a;
                if (r != k || !strneq(a, b, r))
                        return NULL;
        }
}

bool path_equal(const char *a, const char *b) {
        const char *r = path_startswith(a, b);
        return r && *r == 0;
}

bool is_device_path(const char *path) {
        const char *p = path_startswith(path, "/dev/");

        if (!p)
                p = path_startswith(path, "/sys/");
        return !isempty(p);
}
