/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "parse-util.h"
#include "path-util.h"
#include "strv.h"
#include "unit-name.h"

#define LETTERS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS "0123456789"
#define VALID_CHARS DIGITS LETTERS ":-_.\\"
#define VALID_CHARS_WITH_AT "@" VALID_CHARS

static const char *const unit_types[] = {
        "service", "mount", "swap", "socket", "target", "device",
        "automount", "timer", "path", "slice", "scope",
};

static char *escape_char(char c, char *t) {
        static const char hex[] = "0123456789abcdef";

        *(t++) = '\\';
        *(t++) = 'x';
        *(t++) = hex[(unsigned char) c >> 4];
        *(t++) = hex[(unsigned char) c & 15];
        return t;
}

int unit_name_escape(const char *f, char **ret) {
        char *r, *t;

        r = t = malloc(strlen(f) * 4 + 1);
        if (!r)
                return -ENOMEM;
        /* No unit name may start with a dot, as for "/.dotdir" mount points. */
        if (*f == '.')
                t = escape_char(*(f++), t);
        for (; *f; f++) {
                if (*f == '/')
                        *(t++) = '-';
                else if (*f == '-' || *f == '\\' || !strchr(VALID_CHARS, *f))
                        t = escape_char(*f, t);
                else
                        *(t++) = *f;
        }
        *t = 0;
        *ret = r;
        return 0;
}

int unit_name_unescape(const char *f, char **ret) {
        _cleanup_free_ char *r = strdup(f);
        char *t = r;

        if (!r)
                return -ENOMEM;
        for (; *f; f++) {
                if (*f == '-')
                        *(t++) = '/';
                else if (*f == '\\') {
                        int a, b;

                        /* f[2] is only read if f[1] is 'x', f[3] only if f[2] is a hex digit: no overrun. */
                        if (f[1] != 'x' || (a = unhexchar(f[2])) < 0 || (b = unhexchar(f[3])) < 0)
                                return -EINVAL;
                        /* A NUL would cut the name short without a trace. */
                        if (a == 0 && b == 0)
                                return -EINVAL;
                        *(t++) = (char) ((a << 4) | b);
                        f += 3;
                } else
                        *(t++) = *f;
        }
        *t = 0;
        *ret = TAKE_PTR(r);
        return 0;
}

int unit_name_path_escape(const char *f, char **ret) {
        _cleanup_free_ char *p = strdup(f);
        const char *s;

        if (!p)
                return -ENOMEM;
        path_simplify(p);
        if (isempty(p) || streq(p, "/") || streq(p, ".")) {
                char *r = strdup("-");
                if (!r)
                        return -ENOMEM;
                *ret = r;
                return 0;
        }
        if (!path_is_safe(p))
                return -EINVAL;
        s = p + strspn(p, "/");
        return unit_name_escape(s, ret);
}

static bool unit_type_valid(const char *t) {
        for (size_t i = 0; i < ELEMENTSOF(unit_types); i++)
                if (streq(t, unit_types[i]))
                        return true;
        return false;
}

bool unit_name_is_valid(const char *n) {
        const char *e, *at = NULL;

        if (isempty(n) || strlen(n) >= UNIT_NAME_MAX)
                return false;
        e = strrchr(n, '.');
        if (!e || e == n || !unit_type_valid(e + 1))
                return false;
        for (const char *i = n; i < e; i++) {
                if (*i == '@' && !at)
                        at = i;
                if (!strchr(VALID_CHARS_WITH_AT, *i))
                        return false;
        }
        return at != n;
}

int unit_name_build(const char *prefix, const char *escaped, const char *suffix, char **ret) {
        _cleanup_free_ char *s = NULL;

        assert(escaped);
        assert(suffix);
        assert(ret);

        s = strjoin(strempty(prefix), escaped, suffix);
        if (!s)
                return -ENOMEM;
        if (strlen(s) >= UNIT_NAME_MAX)
                return -ENAMETOOLONG;
        if (!unit_name_is_valid(s))
                return -EINVAL;
        *ret = TAKE_PTR(s);
        return 0;
}

int unit_name_from_path(const char *path, const char *suffix, char **ret) {
        _cleanup_free_ char *p = NULL;
        int r;

        assert(path);

        r = unit_name_path_escape(path, &p);
        if (r < 0)
                return r;
        return unit_name_build(NULL, p, suffix, ret);
}

int unit_name_from_path_instance(const char *prefix, const char *path, const char *suffix, char **ret) {
        _cleanup_free_ char *p = NULL, *template = NULL;
        int r;

        assert(prefix);
        assert(path);

        r = unit_name_path_escape(path, &p);
        if (r < 0)
                return r;
        template = strjoin(prefix, "@");
        if (!template)
                return -ENOMEM;
        return unit_name_build(template, p, suffix, ret);
}

int unit_name_mangle(const char *name, const char *suffix, char **ret) {
        char *s, *t;
        int r;

        assert(name);
        assert(suffix);
        assert(ret);

        if (isempty(name))
                return -EINVAL;
        if (unit_name_is_valid(name)) {
                s = strdup(name);
                if (!s)
                        return -ENOMEM;
                *ret = s;
                return 0;
        }
        if (startswith(name, "/dev/") || startswith(name, "/sys/")) {
                r = unit_name_from_path(name, ".device", ret);
                if (r != -EINVAL)
                        return r;
        }
        if (name[0] == '/') {
                r = unit_name_from_path(name, ".mount", ret);
                if (r != -EINVAL)
                        return r;
        }

        _cleanup_free_ char *escaped = t = malloc(strlen(name) * 4 + 1);
        if (!escaped)
                return -ENOMEM;
        for (const char *f = name; *f; f++) {
                if (*f == '/')
                        *(t++) = '-';
                else if (!strchr(VALID_CHARS_WITH_AT, *f))
                        t = escape_char(*f, t);
                else
                        *(t++) = *f;
        }
        *t = 0;
        /* Append the suffix unless the name already ends in a unit type. */
        t = strrchr(escaped, '.');
        return unit_name_build(NULL, escaped, !t || t == escaped || !unit_type_valid(t + 1) ? suffix : "", ret);
}

char *specifier_escape(const char *s) {
        char *r, *t;

        r = t = malloc(strlen(s) * 2 + 1);
        if (!r)
                return NULL;
        for (; *s; s++) {
                if (*s == '%')
                        *(t++) = '%';
                *(t++) = *s;
        }
        *t = 0;
        return r;
}

char *cescape(const char *s) {
        static const char *const map = "\a\b\f\n\r\t\v\\\"\'";
        static const char *const esc = "abfnrtv\\\"\'";
        char *r, *t;

        r = t = malloc(strlen(s) * 4 + 1);
        if (!r)
                return NULL;
        for (; *s; s++) {
                const char *m = strchr(map, *s);
                unsigned char c = (unsigned char) *s;

                if (m) {
                        *(t++) = '\\';
                        *(t++) = esc[m - map];
                } else if (c < ' ' || c >= 127) {
                        *(t++) = '\\';
                        *(t++) = (char) ('0' + (c >> 6));
                        *(t++) = (char) ('0' + ((c >> 3) & 7));
                        *(t++) = (char) ('0' + (c & 7));
                } else
                        *(t++) = *s;
        }
        *t = 0;
        return r;
}
