/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel command line as generators see it: words from /etc/cmdline.d/\*.conf (defaults stored by
 * "foyer build --cmdline"), then $SYSTEMD_EFI_OPTIONS, then /proc/cmdline (or $SYSTEMD_PROC_CMDLINE),
 * each source split on its own with systemd's rules, and filtered with the "rd." rule. */

#include <stdbool.h>

typedef enum CmdlineFlags {
        /* 0: "rd.x" words are dropped outside the initrd and delivered as "rd.x" inside it. */
        CMDLINE_STRIP_RD_PREFIX = 1 << 0, /* inside the initrd "rd.x" is delivered as "x" */
        CMDLINE_RD_STRICT = 1 << 1,       /* inside the initrd words without "rd." are dropped */
} CmdlineFlags;

/* Called once per word with the key (before the first '=') and the value (after it, NULL if the word has
 * no '='). A negative return stops the walk and is returned by cmdline_parse(). */
typedef int (*cmdline_parse_t)(const char *key, const char *value, void *data);

/* Positive results of cmdline_extract_word(). */
enum {
        CMDLINE_WORD = 1,            /* a word */
        CMDLINE_WORD_OPEN_QUOTE = 2, /* a word that ran to the end of the input inside a quote */
};

/* The one splitter, used at boot and by the builder's check. Extracts the next word from *p with
 * systemd's rules (whitespace separated, quotes removed anywhere in a word, backslash escapes (and a
 * trailing backslash) kept verbatim, an unterminated quote ends at the end of the input); returns
 * CMDLINE_WORD or CMDLINE_WORD_OPEN_QUOTE and a new string in *ret, 0 at the end (with *ret = NULL), or
 * -ENOMEM. */
int cmdline_extract_word(const char **p, char **ret);
/* Splits one source of the command line into a new NULL-terminated array; returns 0, 1 if the source
 * ends inside a quote (the quote then ends there), or -ENOMEM. */
int cmdline_split(const char *line, char ***ret);
/* Returns 1 with *ret_word pointing into line at the word whose quote is never closed, 0 if every quote
 * is closed, or -ENOMEM. */
int cmdline_find_open_quote(const char *line, const char **ret_word);

/* Reads the effective command line into a new array: every source above (each cmdline.d file on its
 * own) is split on its own, so a quote left open in one source can never reach into the next; such a
 * source is named in a warning. */
int cmdline_read_words(char ***ret);
/* Walks the given words, calling parse_item for every word that survives the "rd." rule. */
int cmdline_parse_words(char * const *words, cmdline_parse_t parse_item, void *data, CmdlineFlags flags);
/* Splits line (as one source) and walks its words. */
int cmdline_parse_given(const char *line, cmdline_parse_t parse_item, void *data, CmdlineFlags flags);
/* Walks the effective command line (see cmdline_read_words()). */
int cmdline_parse(cmdline_parse_t parse_item, void *data, CmdlineFlags flags);
/* Looks up the last value of key (after the "rd." rule); returns 1 with a copy in *ret (NULL for a bare
 * word), 0 if absent, or a negative errno. */
int cmdline_get_key(const char *key, CmdlineFlags flags, char **ret);

/* Compares command-line keys treating '-' and '_' as equal (systemd's proc_cmdline_key_streq(), used for
 * keys like systemd.debug_shell and systemd.gpt_auto). */
bool cmdline_key_streq(const char *x, const char *y);

/* True if a key that needs a value came without one; then logs the standard warning. */
bool cmdline_value_missing(const char *key, const char *value);

/* $SYSTEMD_IN_INITRD as a boolean if set, else whether /etc/initrd-release exists. */
bool in_initrd(void);
