/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <dirent.h>

#include "cmdline.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "strv.h"

#define WHITESPACE " \t\n\r"

int cmdline_extract_word(const char **p, char **ret) {
        const char *s = *p;
        char quote = 0;
        size_t n = 0;
        _cleanup_free_ char *w = NULL;

        s += strspn(s, WHITESPACE);
        if (*s == 0) {
                *p = s;
                *ret = NULL;
                return 0;
        }

        /* The word can never be longer than the rest of the line. */
        w = malloc(strlen(s) + 1);
        if (!w)
                return -ENOMEM;

        for (; *s; s++) {
                if (*s == '\\') {
                        /* Escapes are retained verbatim, a lone trailing backslash too. */
                        w[n++] = *s;
                        if (s[1] == 0) {
                                s++;
                                break;
                        }
                        s++;
                        w[n++] = *s;
                } else if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                w[n++] = *s;
                } else if (*s == '\'' || *s == '"')
                        quote = *s;
                else if (strchr(WHITESPACE, *s))
                        break;
                else
                        w[n++] = *s;
        }
        w[n] = 0;
        *p = s;
        *ret = TAKE_PTR(w);
        return 1;
}

int cmdline_split(const char *line, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *p = line;
        int r;

        for (;;) {
                char *w;

                r = cmdline_extract_word(&p, &w);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = strv_consume(&l, w);
                if (r < 0)
                        return r;
        }
        if (!l) {
                l = calloc(1, sizeof(char *));
                if (!l)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

bool in_initrd(void) {
        const char *e = secure_getenv("SYSTEMD_IN_INITRD");

        if (e) {
                int r = parse_boolean(e);
                if (r >= 0)
                        return r;
        }
        return access("/etc/initrd-release", F_OK) >= 0;
}

static int filter_conf(const struct dirent *de) {
        return de->d_name[0] != '.' && endswith(de->d_name, ".conf");
}

/* Appends the words of every *.conf in the cmdline.d directory, in C-locale order; lines starting with
 * '#' are comments. Unreadable files are logged at debug level and skipped. */
static int read_cmdline_dir(char **acc) {
        const char *dir = secure_getenv("FOYER_CMDLINE_DIR") ?: "/etc/cmdline.d";
        struct dirent **de = NULL;
        int n, r = 0;

        n = scandir(dir, &de, filter_conf, alphasort);
        if (n < 0)
                return 0;

        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *path = strjoin(dir, "/", de[i]->d_name), *text = NULL;
                char *line, *save = NULL;

                if (!path) {
                        r = -ENOMEM;
                        break;
                }
                if (read_full_file(path, &text, NULL) < 0) {
                        log_debug("Failed to read %s, ignoring.", path);
                        continue;
                }
                for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                        if (line[strspn(line, " \t")] == '#')
                                continue;
                        r = strextend_with_separator(acc, " ", line);
                        if (r < 0)
                                break;
                }
                if (r < 0)
                        break;
        }
        for (int i = 0; i < n; i++)
                free(de[i]);
        free(de);
        return r;
}

int cmdline_read(char **ret) {
        _cleanup_free_ char *acc = NULL, *kernel = NULL;
        const char *e;
        int r;

        acc = strdup("");
        if (!acc)
                return -ENOMEM;

        r = read_cmdline_dir(&acc);
        if (r < 0)
                return r;

        /* We do not read the SystemdOptions EFI variable; only its test override. */
        e = secure_getenv("SYSTEMD_EFI_OPTIONS");
        if (!isempty(e)) {
                r = strextend_with_separator(&acc, " ", e);
                if (r < 0)
                        return r;
        }

        e = secure_getenv("SYSTEMD_PROC_CMDLINE");
        if (e)
                r = strextend_with_separator(&acc, " ", e);
        else {
                r = read_full_file("/proc/cmdline", &kernel, NULL);
                if (r < 0)
                        return r;
                r = strextend_with_separator(&acc, " ", kernel);
        }
        if (r < 0)
                return r;

        *ret = TAKE_PTR(acc);
        return 0;
}

static const char *mangle_word(const char *word, CmdlineFlags flags, bool initrd) {
        const char *c = startswith(word, "rd.");

        if (c) {
                if (!initrd)
                        return NULL;
                if (flags & CMDLINE_STRIP_RD_PREFIX)
                        return c;
        } else if ((flags & CMDLINE_RD_STRICT) && initrd)
                return NULL;
        return word;
}

int cmdline_parse_given(const char *line, cmdline_parse_t parse_item, void *data, CmdlineFlags flags) {
        bool initrd = in_initrd();
        const char *p = line;
        int r;

        for (;;) {
                _cleanup_free_ char *word = NULL;
                char *key, *value;

                r = cmdline_extract_word(&p, &word);
                if (r < 0)
                        return r;
                if (r == 0)
                        return 0;

                key = (char *) mangle_word(word, flags, initrd);
                if (!key)
                        continue;
                value = strchr(key, '=');
                if (value)
                        *(value++) = 0;

                r = parse_item(key, value, data);
                if (r < 0)
                        return r;
        }
}

int cmdline_parse(cmdline_parse_t parse_item, void *data, CmdlineFlags flags) {
        _cleanup_free_ char *line = NULL;
        int r;

        r = cmdline_read(&line);
        if (r < 0)
                return r;
        return cmdline_parse_given(line, parse_item, data, flags);
}

struct get_key_data {
        const char *key;
        char *value;
        bool found;
};

static int get_key_item(const char *key, const char *value, void *data) {
        struct get_key_data *d = data;

        if (!streq(key, d->key))
                return 0;
        if (free_and_strdup(&d->value, value) < 0)
                return -ENOMEM;
        d->found = true;
        return 0;
}

int cmdline_get_key(const char *key, CmdlineFlags flags, char **ret) {
        struct get_key_data d = { .key = key };
        int r;

        r = cmdline_parse(get_key_item, &d, flags);
        if (r < 0) {
                free(d.value);
                return r;
        }
        *ret = d.value;
        return d.found;
}

bool cmdline_value_missing(const char *key, const char *value) {
        if (value)
                return false;
        log_warning("Missing argument for %s= kernel command line switch, ignoring.", key);
        return true;
}

bool cmdline_key_streq(const char *x, const char *y) {
        for (;; x++, y++) {
                bool dx = *x == '-' || *x == '_', dy = *y == '-' || *y == '_';

                if (dx && dy)
                        continue;
                if (*x != *y)
                        return false;
                if (*x == 0)
                        return true;
        }
}
