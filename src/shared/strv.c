/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdarg.h>
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
