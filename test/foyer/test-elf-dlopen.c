/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The .note.dlopen JSON reader: systemd's shape and the spec's single-object form are read with
 * their priorities; anything else is refused whole (-EBADMSG, nothing appended); the list for
 * libsystemd-shared before 256 applies to those names only. */

#include "elf-dlopen.h"
#include "tests.h"
#include "util.h"

static int parse(const char *json, DlopenFeature **f, size_t *n) {
        return dlopen_note_parse(json, strlen(json) + 1, f, n);    /* with the NUL, as in a note */
}

TEST(systemd_shape) {
        DlopenFeature *f = NULL;
        size_t n = 0;

        ASSERT_OK(parse("[{\"feature\":\"tpm\",\"description\":\"Support for TPM\",\"priority\":\"suggested\","
                        "\"soname\":[\"libtss2-esys.so.0\",\"libtss2-mu.so.0\"]}]", &f, &n));
        ASSERT_TRUE(n == 1);
        ASSERT_TRUE(streq(f[0].feature, "tpm"));
        ASSERT_TRUE(f[0].priority == DLOPEN_SUGGESTED);
        ASSERT_TRUE(strv_length(f[0].sonames) == 2);
        ASSERT_TRUE(streq(f[0].sonames[1], "libtss2-mu.so.0"));

        /* A second note appends; no priority means "recommended"; unknown keys of any type pass. */
        ASSERT_OK(parse(" [ {\"soname\" : \"libkmod.so.2\", \"x\": {\"a\": [1, -2.5e3, true, null, \"\\u00e9\"]}},"
                        "{\"priority\":\"required\",\"soname\":[\"liblz4.so.1\"]} ] \n", &f, &n));
        ASSERT_TRUE(n == 3);
        ASSERT_TRUE(f[1].feature == NULL);
        ASSERT_TRUE(f[1].priority == DLOPEN_RECOMMENDED);
        ASSERT_TRUE(streq(f[1].sonames[0], "libkmod.so.2"));
        ASSERT_TRUE(f[2].priority == DLOPEN_REQUIRED);

        /* The spec's first form: one object. */
        ASSERT_OK(parse("{\"soname\":\"libfoo.so.1\",\"feature\":\"foo\",\"priority\":\"recommended\"}", &f, &n));
        ASSERT_TRUE(n == 4);
        ASSERT_TRUE(streq(f[3].feature, "foo"));
        ASSERT_OK(parse("[]", &f, &n));
        ASSERT_TRUE(n == 4);
        dlopen_features_free(f, n);
}

TEST(refused) {
        static const char *const bad[] = {
                "",
                "[",
                "[{}]",                                         /* no soname */
                "[{\"soname\":[]}]",                            /* empty list */
                "[{\"soname\":[\"\"]}]",
                "[{\"soname\":[\"../../etc/shadow\"]}]",        /* not a file name */
                "[{\"soname\":[\"/usr/lib/libx.so\"]}]",
                "[{\"soname\":[\"a\\nb\"]}]",                   /* control character */
                "[{\"soname\":[\"a\tb\"]}]",                    /* raw control character */
                "[{\"soname\":[\"libx.so\"],\"priority\":\"optional\"}]",
                "[{\"soname\":[\"libx.so\"],\"priority\":\"required\",\"priority\":\"suggested\"}]",
                "[{\"soname\":[\"libx.so\"],\"soname\":[\"liby.so\"]}]",
                "[{\"soname\":[\"libx.so\"]}] x",               /* trailing garbage */
                "[{\"soname\":[\"libx.so\"]},]",
                "[{\"soname\":[\"libx.so\",]}]",
                "[{\"soname\":[\"libx.so\"],\"n\":01}]",
                "[{\"soname\":[\"libx.so\"],\"n\":tru}]",
                "[{\"soname\":[\"libx.so\"],\"s\":\"\\u0000\"}]",
                "[{\"soname\":[\"libx.so\"],\"s\":\"\\ud800\"}]",
                "[{\"soname\":[\"libx.so\"],\"s\":\"\\q\"}]",
                "[{\"soname\":[\"libx.so\"],\"feature\":1}]",
                "[{\"soname\":[\"libx.so\"]}][]",
                "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
        };
        DlopenFeature *f = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = parse(bad[i], &f, &n);

                if (r != -EBADMSG)
                        fprintf(stderr, "accepted or wrong error (%d): %s\n", r, bad[i]);
                ASSERT_TRUE(r == -EBADMSG);
                ASSERT_TRUE(n == 0 && f == NULL);
        }
        /* A NUL inside the text, before the padding. */
        ASSERT_TRUE(dlopen_note_parse("[]\0[]", 6, &f, &n) == -EBADMSG);
        /* A deep unknown value within the limit is fine. */
        ASSERT_OK(parse("[{\"soname\":\"libx.so\",\"d\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}]", &f, &n));
        ASSERT_TRUE(n == 1);
        dlopen_features_free(f, n);
}

TEST(legacy) {
        DlopenFeature *f = NULL;
        size_t n = 0;
        bool cryptsetup = false;

        ASSERT_TRUE(dlopen_legacy_features("libsystemd-shared-252.so", &f, &n) > 0);
        for (size_t i = 0; i < n; i++)
                if (streq(f[i].sonames[0], "libcryptsetup.so.12"))
                        cryptsetup = true;
        ASSERT_TRUE(cryptsetup);
        dlopen_features_free(f, n);
        f = NULL;
        n = 0;
        /* 256 and later carry notes; other libraries are not systemd's. */
        ASSERT_TRUE(dlopen_legacy_features("libsystemd-shared-257.so", &f, &n) == 0);
        ASSERT_TRUE(dlopen_legacy_features("libsystemd-shared-256.5-1.so", &f, &n) == 0);
        ASSERT_TRUE(dlopen_legacy_features("libsystemd.so.0", &f, &n) == 0);
        ASSERT_TRUE(dlopen_legacy_features("libsystemd-shared-.so", &f, &n) == 0);
        ASSERT_TRUE(n == 0 && f == NULL);
}
TEST_MAIN()
