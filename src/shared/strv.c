/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strv.h"

size_t strv_length(char * const *l) {
        size_t n = 0;

        for (; l && *l; l++)
                n++;
        return n;
}

int strv_consume(char ***l, char *s) {
        size_t n;
        char **t;

        if (!s)
                return -ENOMEM;
        n = strv_length(*l);
        t = realloc(*l, sizeof(char *) * (n + 2));
        if (!t) {
                free(s);
                return -ENOMEM;
        }
        t[n] = s;
        t[n + 1] = NULL;
        *l = t;
        return 0;
}

int strv_extend(char ***l, const char *s) {
        return strv_consume(l, strdup(s));
}

bool strv_contains(char * const *l, const char *s) {
        for (; l && *l; l++)
                if (streq(*l, s))
                        return true;
        return false;
}

char *strv_join(char * const *l, const char *sep) {
        size_t n = 1, k = strlen(sep);
        char *r, *p;

        for (char * const *i = l; i && *i; i++)
                n += strlen(*i) + k;
        r = p = malloc(n);
        if (!r)
                return NULL;
        *p = 0;
        for (char * const *i = l; i && *i; i++) {
                if (i != l)
                        p = stpcpy(p, sep);
                p = stpcpy(p, *i);
        }
        return r;
}

int strextend_with_separator(char **x, const char *sep, const char *s) {
        bool need_sep = !isempty(*x);
        size_t a = *x ? strlen(*x) : 0;
        char *r;

        r = realloc(*x, a + (need_sep ? strlen(sep) : 0) + strlen(s) + 1);
        if (!r)
                return -ENOMEM;
        r[a] = 0;
        if (need_sep)
                strcat(r, sep);
        strcat(r, s);
        *x = r;
        return 0;
}

int free_and_strdup(char **p, const char *s) {
        char *t = NULL;

        if (s) {
                t = strdup(s);
                if (!t)
                        return -ENOMEM;
        }
        free(*p);
        *p = t;
        return 0;
}

char *strjoin_real(const char *a, ...) {
        va_list ap;
        size_t n = 1;
        char *r, *p;

        va_start(ap, a);
        for (const char *s = a; s; s = va_arg(ap, const char *))
                n += strlen(s);
        va_end(ap);

        r = p = malloc(n);
        if (!r)
                return NULL;
        *p = 0;
        va_start(ap, a);
        for (const char *s = a; s; s = va_arg(ap, const char *))
                p = stpcpy(p, s);
        va_end(ap);
        return r;
}

bool string_has_cc(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

int utf8_valid_multibyte(const char *str) {
        const unsigned char *s = (const unsigned char *) str;
        uint32_t c;
        int len;

        assert(str);

        if (s[0] < 0xc0)
                return 0;
        else if (s[0] < 0xe0)
                len = 2, c = s[0] & 0x1f;
        else if (s[0] < 0xf0)
                len = 3, c = s[0] & 0x0f;
        else if (s[0] < 0xf8)
                len = 4, c = s[0] & 0x07;
        else
                return 0;

        /* A NUL is no continuation byte, so a sequence cut short stops there. */
        for (int i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) || (len == 4 && c < 0x10000))
                return 0;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        return len;
}

size_t utf8_printable_len(const char *s) {
        const unsigned char *u = (const unsigned char *) s;
        int n;

        assert(s);

        if (u[0] >= 0x20 && u[0] < 0x7f)
                return 1;
        n = utf8_valid_multibyte(s);
        /* U+0080..U+009F are C2 80..C2 9F. */
        if (n == 2 && u[0] == 0xc2 && u[1] < 0xa0)
                return 0;
        return (size_t) n;
}

bool string_is_printable(const char *s) {
        assert(s);

        while (*s) {
                size_t n = utf8_printable_len(s);

                if (n == 0)
                        return false;
                s += n;
        }
        return true;
}

char *string_escape_unprintable(const char *s, char replacement) {
        char *r, *t;

        assert(s);
        assert(replacement == 0 || (replacement >= 0x20 && replacement < 0x7f));

        r = t = malloc(strlen(s) * 4 + 1);
        if (!r)
                return NULL;
        while (*s) {
                size_t n = utf8_printable_len(s);

                if (n > 0) {
                        memcpy(t, s, n);
                        t += n;
                        s += n;
                        continue;
                }
                /* One byte at a time: a C1 control (C2 9B) shows as \xc2\x9b, a stray byte as itself. */
                if (replacement)
                        *t++ = replacement;
                else
                        t += sprintf(t, "\\x%02x", (unsigned char) *s);
                s++;
        }
        *t = '\0';
        return r;
}

int strv_split(const char *s, const char *separators, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        while (*s) {
                size_t n;

                s += strspn(s, separators);
                n = strcspn(s, separators);
                if (n == 0)
                        break;
                r = strv_consume(&l, strndup(s, n));
                if (r < 0)
                        return r;
                s += n;
        }

        *ret = TAKE_PTR(l);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

void strv_sort(char **l) {
        /* qsort()'s base is declared nonnull even for no elements (UBSan stops on it). */
        if (!l)
                return;
        qsort(l, strv_length(l), sizeof(char *), cmp_str);
}
