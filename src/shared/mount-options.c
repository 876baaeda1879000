/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "mount-options.h"
#include "strv.h"

/* Splits at unescaped commas, keeping empty words and the text verbatim. */
static int split_options(const char *opts, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *w = opts;
        int r;

        for (;;) {
                const char *e = w;

                for (;;) {
                        e += strcspn(e, ",\\");
                        if (*e != '\\')
                                break;
                        e++;
                        if (*e)
                                e++;
                }
                r = strv_consume(&l, strndup(w, e - w));
                if (r < 0)
                        return r;
                if (!*e)
                        break;
                w = e + 1;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static char *unescape_commas(const char *s) {
        char *r = malloc(strlen(s) + 1), *t = r;

        if (!r)
                return NULL;
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] == ',')
                        s++;
                *(t++) = *s;
        }
        *t = 0;
        return r;
}

int mount_options_filter(const char *opts, const char *names, char **ret_value, char ***ret_values,
                         char **ret_filtered) {
        _cleanup_strv_free_ char **words = NULL, **values = NULL, **kept = NULL;
        _cleanup_free_ char *value = NULL;
        bool found = false;
        int r;

        if (opts) {
                r = split_options(opts, &words);
                if (r < 0)
                        return r;
        }

        for (char **w = words; w && *w; w++) {
                const char *x = NULL;

                for (const char *n = names; *n; n += strlen(n) + 1) {
                        x = startswith(*w, n);
                        if (x && (*x == '=' || (!ret_values && *x == 0)))
                                break;
                        x = NULL;
                }
                if (!x) {
                        r = strv_extend(&kept, *w);
                        if (r < 0)
                                return r;
                        continue;
                }

                found = true;
                if (ret_value) {
                        free(value);
                        value = NULL;
                        if (*x == '=' && !(value = unescape_commas(x + 1)))
                                return -ENOMEM;
                } else if (ret_values && *x == '=') {
                        r = strv_consume(&values, unescape_commas(x + 1));
                        if (r < 0)
                                return r;
                }
        }

        if (ret_filtered) {
                char *f = strv_join(kept, ",");
                if (!f)
                        return -ENOMEM;
                *ret_filtered = f;
        }
        if (ret_value)
                *ret_value = TAKE_PTR(value);
        if (ret_values)
                *ret_values = TAKE_PTR(values);
        return found;
}

bool mount_options_test(const char *opts, const char *names) {
        return mount_options_filter(opts, names, NULL, NULL, NULL) > 0;
}

bool mount_options_test_yes_no(const char *opts, const char *yes_no) {
        _cleanup_strv_free_ char **words = NULL;
        const char *no = yes_no + strlen(yes_no) + 1;
        bool result = false;

        if (!opts || split_options(opts, &words) < 0)
                return false;
        for (char **w = words; *w; w++) {
                if (streq(*w, yes_no))
                        result = true;
                else if (streq(*w, no))
                        result = false;
        }
        return result;
}
