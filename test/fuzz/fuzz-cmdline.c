/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel command-line splitter and walker (src/shared/cmdline.c) on arbitrary text: no crash, the
 * walk ends, keys handed to callbacks are non-empty without white space, words never outnumber the
 * input, a word without quotes or backslashes has no white space, the open-quote check agrees with
 * the splitter, and the text before an open-quote word is balanced. */
#include <assert.h>
#include <stdio.h>

#include "cmdline.h"
#include "fuzz.h"
#include "log.h"
#include "macro.h"
#include "strv.h"

#define WHITESPACE " \t\n\r"

static void fail(const char *what, const char *s) {
        fprintf(stderr, "%s: \"%s\"\n", what, s);
        abort();
}

struct walk {
        const char *input;
        size_t calls, max_calls;
        bool rd_only;
};

static int check_item(const char *key, const char *value, void *data) {
        struct walk *w = data;

        if (isempty(key) || key[strcspn(key, WHITESPACE)])
                fail("callback got an empty key or one with white space", w->input);
        if (value && strlen(key) + strlen(value) + 1 > strlen(w->input))
                fail("callback got more text than the input has", w->input);
        if (++w->calls > w->max_calls)
                fail("walk called back more often than there are words", w->input);
        return 0;
}

static void check_walk(const char *s, size_t n_words) {
        static const CmdlineFlags flags[] = {
                0, CMDLINE_STRIP_RD_PREFIX, CMDLINE_STRIP_RD_PREFIX | CMDLINE_RD_STRICT,
        };

        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                for (int initrd = 0; initrd < 2; initrd++) {
                        struct walk w = { .input = s, .max_calls = n_words };

                        setenv("SYSTEMD_IN_INITRD", initrd ? "1" : "0", 1);
                        if (cmdline_parse_given(s, check_item, &w, flags[i]) < 0)
                                return; /* out of memory */
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_strv_free_ char **words = NULL, **prefix_words = NULL;
        _cleanup_free_ char *s = NULL, *prefix = NULL;
        const char *open_word = NULL;
        bool plain;
        int r, q;

        if (size > 16384)
                return 0;
        log_set_max_level(LOG_CRIT);
        s = fuzz_strndup(data, size);
        if (!s)
                return 0;

        r = cmdline_split(s, &words);
        if (r < 0)
                return 0;
        assert(r == 0 || r == 1);
        if (strv_length(words) > strlen(s) / 2 + 1)
                fail("more words than the input can hold", s);
        plain = !strpbrk(s, "\"'\\");
        STRV_FOREACH(w, words) {
                if (strlen(*w) > strlen(s))
                        fail("word longer than the input", s);
                if (plain && (isempty(*w) || (*w)[strcspn(*w, WHITESPACE)]))
                        fail("unquoted white space (or an empty word) in a word", s);
        }

        q = cmdline_find_open_quote(s, &open_word);
        if (q < 0)
                return 0;
        if (q != r)
                fail("cmdline_find_open_quote() and cmdline_split() disagree", s);
        if (q > 0) {
                if (open_word < s || open_word >= s + strlen(s))
                        fail("open-quote word outside the input", s);
                /* Everything before the open-quote word is balanced, and it is the last word. */
                prefix = strndup(s, open_word - s);
                if (!prefix)
                        return 0;
                r = cmdline_split(prefix, &prefix_words);
                if (r < 0)
                        return 0;
                if (r != 0 || strv_length(prefix_words) + 1 != strv_length(words))
                        fail("open quote not in the last word", s);
        }

        check_walk(s, strv_length(words));
        return 0;
}
