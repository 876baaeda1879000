/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <dirent.h>

#include "cmdline.h"
#include "fileio.h"
#include "foyer-contract.h"
#include "log.h"
#include "parse-util.h"
#include "strv.h"

#define WHITESPACE " \t\n\r"

/* Scans one word starting at s with systemd's rules, copying its text to out if non-NULL. Returns where
 * the word ends, and its length and whether a quote is still open there in *ret_n and *ret_quote. */
static const char *scan_word(const char *s, char *out, size_t *ret_n, char *ret_quote) {
        char quote = 0;
        size_t n = 0;

#define EMIT(c) do { if (out) out[n] = (c); n++; } while (0)
        for (; *s; s++) {
                if (*s == '\\') {
                        /* Escapes are retained verbatim, a lone trailing backslash too. */
                        EMIT(*s);
                        if (s[1] == 0) {
                                s++;
                                break;
                        }
                        s++;
                        EMIT(*s);
                } else if (quote) {
                        if (*s == quote)
                                quote = 0;
                        else
                                EMIT(*s);
                } else if (*s == '\'' || *s == '"')
                        quote = *s;
                else if (strchr(WHITESPACE, *s))
                        break;
                else
                        EMIT(*s);
        }
#undef EMIT
        *ret_n = n;
        *ret_quote = quote;
        return s;
}

int cmdline_extract_word(const char **p, char **ret) {
        const char *s, *end;
        char quote;
        size_t n;
        char *w;

        assert(p);
        assert(*p);
        assert(ret);

        s = *p + strspn(*p, WHITESPACE);
        if (*s == 0) {
                *p = s;
                *ret = NULL;
                return 0;
        }

        /* Measure first, then copy: allocating for the rest of the line instead would make splitting a
         * long line of short words quadratic. */
        (void) scan_word(s, NULL, &n, &quote);
        w = malloc(n + 1);
        if (!w)
                return -ENOMEM;
        end = scan_word(s, w, &n, &quote);
        w[n] = 0;

        *p = end;
        *ret = w;
        /* A quote still open here ends with the input: the caller decides whether that is an error. */
        return quote ? CMDLINE_WORD_OPEN_QUOTE : CMDLINE_WORD;
}

int cmdline_split(const char *line, char ***ret) {
        _cleanup_strv_free_ char **l = NULL;
        const char *p = line;
        bool open_quote = false;
        int r;

        assert(line);
        assert(ret);

        for (;;) {
                char *w;

                r = cmdline_extract_word(&p, &w);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (r == CMDLINE_WORD_OPEN_QUOTE)
                        open_quote = true;
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
        return open_quote;
}

int cmdline_find_open_quote(const char *line, const char **ret_word) {
        const char *p = line;
        int r;

        assert(line);
        assert(ret_word);

        for (;;) {
                _cleanup_free_ char *w = NULL;
                const char *start = p + strspn(p, WHITESPACE);

                r = cmdline_extract_word(&p, &w);
                if (r <= 0)
                        return r;
                if (r == CMDLINE_WORD_OPEN_QUOTE) {
                        *ret_word = start;
                        return 1;
                }
        }
}

bool in_initrd(void) {
        const char *e = secure_getenv("SYSTEMD_IN_INITRD");

        if (e) {
                int r = parse_boolean(e);
                if (r >= 0)
                        return r;
        }
        return access(FOYER_INITRD_RELEASE, F_OK) >= 0;
}

static int filter_conf(const struct dirent *de) {
        return de->d_name[0] != '.' && endswith(de->d_name, ".conf");
}

/* Splits one source on its own and appends its words to *words. Splitting the sources one by one is
 * what keeps a quote left open in one of them (say a stored default rd.luks.options="discard) from
 * swallowing the next source's words, root= included: the quote ends where its source ends. */
static int append_source(char ***words, const char *source, const char *text) {
        _cleanup_strv_free_ char **l = NULL;
        int r;

        assert(words);
        assert(source);
        assert(text);

        r = cmdline_split(text, &l);
        if (r < 0)
                return r;
        if (r > 0)
                log_warning("%s: unbalanced quote on the kernel command line, it ends where this source ends.",
                            source);
        STRV_FOREACH(w, l) {
                r = strv_extend(words, *w);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The text of one cmdline.d file: its lines joined by spaces, without the comment lines (first
 * non-blank character '#'). */
static int read_conf_file(const char *path, char **ret) {
        _cleanup_free_ char *text = NULL, *joined = NULL;
        char *line, *save = NULL;
        int r;

        assert(path);
        assert(ret);

        r = read_full_file(path, &text, NULL);
        if (r < 0)
                return r;
        joined = strdup("");
        if (!joined)
                return -ENOMEM;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (line[strspn(line, " \t")] == '#')
                        continue;
                r = strextend_with_separator(&joined, " ", line);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(joined);
        return 0;
}

/* Appends the words of every *.conf in the cmdline.d directory, in C-locale order, each file a source
 * of its own. Unreadable files are logged at debug level and skipped. */
static int read_cmdline_dir(char ***words) {
        const char *dir = secure_getenv("FOYER_CMDLINE_DIR") ?: FOYER_CMDLINE_DIR;
        struct dirent **de = NULL;
        int n, r = 0;

        assert(words);

        n = scandir(dir, &de, filter_conf, alphasort);
        if (n < 0)
                return 0;

        for (int i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *path = strjoin(dir, "/", de[i]->d_name), *text = NULL;

                if (!path) {
                        r = -ENOMEM;
                        break;
                }
                r = read_conf_file(path, &text);
                if (r == -ENOMEM)
                        break;
                if (r < 0) {
                        log_debug("Failed to read %s, ignoring.", path);
                        r = 0;
                        continue;
                }
                r = append_source(words, path, text);
        }
        for (int i = 0; i < n; i++)
                free(de[i]);
        free(de);
        return r;
}

int cmdline_read_words(char ***ret) {
        _cleanup_strv_free_ char **words = NULL;
        _cleanup_free_ char *kernel = NULL;
        const char *e;
        int r;

        assert(ret);

        words = calloc(1, sizeof(char *));
        if (!words)
                return -ENOMEM;

        r = read_cmdline_dir(&words);
        if (r < 0)
                return r;

        /* We do not read the SystemdOptions EFI variable; only its test override. */
        e = secure_getenv("SYSTEMD_EFI_OPTIONS");
        if (!isempty(e)) {
                r = append_source(&words, "$SYSTEMD_EFI_OPTIONS", e);
                if (r < 0)
                        return r;
        }

        e = secure_getenv("SYSTEMD_PROC_CMDLINE");
        if (e)
                r = append_source(&words, "$SYSTEMD_PROC_CMDLINE", e);
        else {
                r = read_full_file("/proc/cmdline", &kernel, NULL);
                if (r < 0)
                        return r;
                r = append_source(&words, "/proc/cmdline", kernel);
        }
        if (r < 0)
                return r;

        *ret = TAKE_PTR(words);
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

int cmdline_parse_words(char * const *words, cmdline_parse_t parse_item, void *data, CmdlineFlags flags) {
        bool initrd = in_initrd();
        int r;

        assert(parse_item);

        STRV_FOREACH(w, words) {
                _cleanup_free_ char *word = strdup(*w);
                char *key, *value;

                if (!word)
                        return -ENOMEM;
                key = (char *) mangle_word(word, flags, initrd);
                if (!key)
                        continue;
                value = strchr(key, '=');
                if (value)
                        *(value++) = 0;
                /* No parameter has an empty key or one with white space (quoted, as in "a b"=c), so
                 * no callback can mean such a word: skipping it keeps every callback's keys plain. */
                if (isempty(key) || key[strcspn(key, WHITESPACE)]) {
                        log_debug("Ignoring kernel command line word with an empty or quoted key: %s", *w);
                        continue;
                }

                r = parse_item(key, value, data);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cmdline_parse_given(const char *line, cmdline_parse_t parse_item, void *data, CmdlineFlags flags) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        assert(line);

        r = cmdline_split(line, &words);
        if (r < 0)
                return r;
        return cmdline_parse_words(words, parse_item, data, flags);
}

int cmdline_parse(cmdline_parse_t parse_item, void *data, CmdlineFlags flags) {
        _cleanup_strv_free_ char **words = NULL;
        int r;

        r = cmdline_read_words(&words);
        if (r < 0)
                return r;
        return cmdline_parse_words(words, parse_item, data, flags);
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
