/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel command-line splitter and walker (src/shared/cmdline.c) on arbitrary text: no crash, the
 * walk ends, keys handed to callbacks are non-empty without white space, words never outnumber the
 * input, white space in a word without quotes is escaped, the open-quote check agrees with
 * the splitter, and the text before an open-quote word is balanced. */
#include <assert.h>
#include <stdio.h>

#include "cmdline.h"
#include "fuzz.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

#define WHITESPACE " \t\n\r"

/* Without quotes in the input, a word is non-empty and white space in it follows a backslash (an
 * escape, kept verbatim). */
static bool unquoted_word_ok(const char *w) {
        if (*w == 0)
                return false;
        for (const char *c = w; *c; c++) {
                if (*c == '\\' && c[1]) {
                        c++;
                        continue;
                }
                if (strchr(WHITESPACE, *c))
                        return false;
        }
        return true;
}

struct walk {
        const char *input;
        size_t calls, max_calls;
};

static int check_item(const char *key, const char *value, void *data) {
        struct walk *w = data;

        if (isempty(key) || key[strcspn(key, WHITESPACE)])
                fuzz_fail("callback got an empty key or one with white space", w->input);
        if (value && strlen(key) + strlen(value) + 1 > strlen(w->input))
                fuzz_fail("callback got more text than the input has", w->input);
        if (++w->calls > w->max_calls)
                fuzz_fail("walk called back more often than there are words", w->input);
        return 0;
}

/* cmdline_parse_given() once (it splits the line again), then cmdline_parse_words() on the words
 * already split for the other flag and initrd combinations. */
static void check_walk(const char *s, char * const *words) {
        static const CmdlineFlags flags[] = {
                0, CMDLINE_STRIP_RD_PREFIX, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT,
        };
        size_t n_words = strv_length(words);

        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                for (int initrd = 0; initrd < 2; initrd++) {
                        struct walk w = { .input = s, .max_calls = n_words };
                        int r;

                        setenv("SYSTEMD_IN_INITRD", initrd ? "1" : "0", 1);
                        if (i == 0 && initrd)
                                r = cmdline_parse_given(s, check_item, &w, flags[i]);
                        else
                                r = cmdline_parse_words(words, check_item, &w, flags[i]);
                        if (r < 0)
                                return; /* out of memory */
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_strv_free_ char **words = NULL, **prefix_words = NULL;
        _cleanup_free_ char *s = NULL, *prefix = NULL;
        const char *open_word = NULL;
        bool unquoted;
        int r, q;

        if (!fuzz_setup(size, 16384))
                return 0;
        s = fuzz_strndup(data, size);
        if (!s)
                return 0;

        r = cmdline_split(s, &words);
        if (r < 0)
                return 0;
        assert(r == 0 || r == 1);
        if (strv_length(words) > strlen(s) / 2 + 1)
                fuzz_fail("more words than the input can hold", s);
        unquoted = !strpbrk(s, "\"'");
        STRV_FOREACH(w, words) {
                if (strlen(*w) > strlen(s))
                        fuzz_fail("word longer than the input", s);
                if (unquoted && !unquoted_word_ok(*w))
                        fuzz_fail("unquoted white space (or an empty word) in a word", s);
        }

        q = cmdline_find_open_quote(s, &open_word);
        if (q < 0)
                return 0;
        if (q != r)
                fuzz_fail("cmdline_find_open_quote() and cmdline_split() disagree", s);
        if (q > 0) {
                if (open_word < s || open_word >= s + strlen(s))
                        fuzz_fail("open-quote word outside the input", s);
                /* Everything before the open-quote word is balanced, and it is the last word. */
                prefix = strndup(s, open_word - s);
                if (!prefix)
                        return 0;
                r = cmdline_split(prefix, &prefix_words);
                if (r < 0)
                        return 0;
                if (r != 0 || strv_length(prefix_words) + 1 != strv_length(words))
                        fuzz_fail("open quote not in the last word", s);
        }

        check_walk(s, words);
        return 0;
}
