/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The words foyer build and the generators both read (luks-uuid.h, id128-util.h, keymap-name.h): one
 * table per grammar, each row fed to every function of it. The generators' golden and differential
 * tests (test/generators) check the same rules against systemd's own generators at boot. */

#include "id128-util.h"
#include "keymap-name.h"
#include "luks-uuid.h"
#include "tests.h"

#define U36 "3f5ad593-4546-4a94-a374-bcfb68aa11f7"
#define U32 "3f5ad59345464a94a374bcfb68aa11f7"

static const struct {
        const char *value;
        bool id128;                     /* id128_is_valid(value) */
        const char *skipped;            /* luks_uuid_skip_prefix(value) (NULL: value itself) */
        int word_r;                     /* luks_uuid_split_word(value) */
        const char *word_uuid, *word;
        int prefix_r;                   /* luks_uuid_split_prefix(value) */
        const char *prefix_uuid, *rest;
} luks_table[] = {
        /* value                           id128  skipped      word: r uuid  word        prefix: r uuid rest */
        { U36,                             true,  NULL,        0, NULL, NULL,            0, NULL, NULL },
        { U32,                             true,  NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "3F5AD593-4546-4A94-A374-BCFB68AA11F7", true, NULL,  0, NULL, NULL,            0, NULL, NULL },
        { "3F5ad593-4546-4a94-A374-bcfb68aa11f7", true, NULL,  0, NULL, NULL,            0, NULL, NULL },
        { "luks-" U36,                     false, U36,         0, NULL, NULL,            0, NULL, NULL },
        { "luks-luks-" U36,                false, "luks-" U36, 0, NULL, NULL,            0, NULL, NULL },
        { "LUKS-" U36,                     false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "luks-",                         false, "",          0, NULL, NULL,            0, NULL, NULL },
        /* dashes elsewhere, too few or too many, or a digit short or long */
        { "3f5ad5934-546-4a94-a374-bcfb68aa11f7", false, NULL, 0, NULL, NULL,            0, NULL, NULL },
        { "3f5ad593-45464a94-a374-bcfb68aa11f7", false, NULL,  0, NULL, NULL,            0, NULL, NULL },
        { "3f5ad593-4546-4a94-a374-bcfb68aa11f7-", false, NULL, 0, NULL, NULL,           0, NULL, NULL },
        { "-3f5ad593-4546-4a94-a374-bcfb68aa11f", false, NULL, 0, NULL, NULL,            0, NULL, NULL },
        { "3f5ad593-4546-4a94-a374-bcfb68aa11f",  false, NULL, 0, NULL, NULL,            0, NULL, NULL },
        { U32 "0",                         false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "3f5ad59345464a94a374bcfb68aa11fg", false, NULL,     0, NULL, NULL,            0, NULL, NULL },
        { "{" U36 "}",                     false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { " " U36,                         false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "",                              false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        /* UUID=WORD and UUID=REST */
        { U36 "=root",                     false, NULL,        1, U36, "root",           1, U36, "root" },
        { U32 "=discard,tpm2-device=auto", false, NULL,        1, U32, "discard,tpm2-device=auto", 1, U32, "discard,tpm2-device=auto" },
        { U36 "=/key:UUID=abc",            false, NULL,        1, U36, "/key:UUID=abc",  1, U36, "/key:UUID=abc" },
        { U36 "=  spaced word",            false, NULL,        1, U36, "spaced",         1, U36, "  spaced word" },
        { U36 "=",                         false, NULL,        0, NULL, NULL,            1, U36, "" },
        { U36 "= ",                        false, NULL,        0, NULL, NULL,            1, U36, " " },
        { "abc=x",                         false, NULL,        1, "abc", "x",            1, "abc", "x" },
        { "-=x",                           false, NULL,        1, "-", "x",              1, "-", "x" },
        { "=x",                            false, NULL,        0, NULL, NULL,            1, "", "x" },
        { "=",                             false, NULL,        0, NULL, NULL,            1, "", "" },
        /* letters beyond f: a UUID for luks.key= and luks.data=, not for luks.name= and luks.options= */
        { "xyz=x",                         false, NULL,        0, NULL, NULL,            1, "xyz", "x" },
        { "luks-" U36 "=/key",             false, U36 "=/key", 0, NULL, NULL,            1, "luks-" U36, "/key" },
        { "tpm2-device=auto",              false, NULL,        0, NULL, NULL,            1, "tpm2-device", "auto" },
        { "fido2-device=auto",             false, NULL,        0, NULL, NULL,            1, "fido2-device", "auto" },
        /* anything else before the '=' ends the UUID */
        { "foo.bar=/key",                  false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "dir/" U36 "=/key",              false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "/etc/keys/root.key",            false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "/etc/keys/a=b",                 false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "discard,header=/h",             false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { U36 ",x=y",                      false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { U36 "_=x",                       false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "ab\x01" "cd=x",                 false, NULL,        0, NULL, NULL,            0, NULL, NULL },
        { "\xc3\xa4=x",                    false, NULL,        0, NULL, NULL,            0, NULL, NULL },
};

TEST(luks_uuid_table) {
        for (size_t i = 0; i < ELEMENTSOF(luks_table); i++) {
                const char *v = luks_table[i].value, *rest = NULL;
                _cleanup_free_ char *u = NULL, *w = NULL, *p = NULL;

                fprintf(stderr, "  row %zu\n", i);
                ASSERT_EQ(id128_is_valid(v), luks_table[i].id128);
                ASSERT_STREQ(luks_uuid_skip_prefix(v), luks_table[i].skipped ?: v);
                ASSERT_EQ(luks_uuid_split_word(v, &u, &w), luks_table[i].word_r);
                ASSERT_STREQ(u, luks_table[i].word_uuid);
                ASSERT_STREQ(w, luks_table[i].word);
                ASSERT_EQ(luks_uuid_split_prefix(v, &p, &rest), luks_table[i].prefix_r);
                ASSERT_STREQ(p, luks_table[i].prefix_uuid);
                ASSERT_STREQ(rest, luks_table[i].rest);
        }
}

TEST(id128_is_valid_null) {
        ASSERT_TRUE(!id128_is_valid(NULL));
}

static const struct {
        const char *name;
        bool valid;
} keymap_table[] = {
        { "de",                         true },
        { "de-nodeadkeys",              true },
        { "us-intl+alt",                true },
        { "fr_CH-latin1",               true },
        { "de.map",                     true },
        { "de..x",                      true },         /* a dot inside is a file name still */
        { "9",                          true },
        { "_x",                         true },
        { "+x",                         true },
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true },  /* 64 */
        { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false }, /* 65 */
        { "",                           false },
        { ".",                          false },
        { "..",                         false },
        { ".de",                        false },
        { "-q",                         false },        /* would be an option of loadkeys */
        { "de/nodeadkeys",              false },
        { "../../etc/shadow",           false },
        { "/de",                        false },
        { "de ",                        false },
        { "de nodeadkeys",              false },
        { "de\tx",                      false },
        { "de\nExecStart=/bin/sh",      false },
        { "de\x1b",                     false },
        { "de\x7f",                     false },
        { "de'",                        false },
        { "de\"",                       false },
        { "de\\x2f",                    false },
        { "de%n",                       false },
        { "de$x",                       false },
        { "de;x",                       false },
        { "de:x",                       false },
        { "de,x",                       false },
        { "de=x",                       false },
        { "d\xc3\xa4",                  false },        /* ä in UTF-8 */
        { "d\xe4",                      false },        /* ä in Latin-1 */
};

TEST(keymap_name_table) {
        for (size_t i = 0; i < ELEMENTSOF(keymap_table); i++) {
                fprintf(stderr, "  row %zu\n", i);
                ASSERT_EQ(keymap_name_is_valid(keymap_table[i].name), keymap_table[i].valid);
        }
        ASSERT_TRUE(!keymap_name_is_valid(NULL));
}

TEST_MAIN();
