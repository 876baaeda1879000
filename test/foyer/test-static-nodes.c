/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The static device nodes of the image (src/foyer/static-nodes.c): modules.devname's lines become
 * the tmpfiles.d lines "kmod static-nodes --format=tmpfiles" writes (compared with bookworm's kmod
 * 30 output for the same list), and lines that are not of that form, or would put a second word or
 * a path outside /dev into the file, are left out. test-foyer-build.sh checks the file in an image. */

#include "static-nodes.h"
#include "tests.h"
#include "util.h"

static char *convert(const char *devname) {
        char *text = NULL;

        ASSERT_OK(static_nodes_tmpfiles(devname, strlen(devname), &text));
        ASSERT_TRUE(text);
        return text;
}

TEST(as_kmod_writes_them) {
        /* Bookworm's modules.devname of the image's modules, and what kmod 30 makes of it. */
        _cleanup_free_ char *text = convert("# Device nodes to trigger on-demand module loading.\n"
                                            "autofs4 autofs c10:235\n"
                                            "btrfs btrfs-control c10:234\n"
                                            "loop loop-control c10:237\n"
                                            "dm_mod mapper/control c10:236\n"
                                            "ppp_generic ppp c108:0\n"
                                            "snd_timer snd/timer c116:33\n");
        ASSERT_STREQ(text, "c! /dev/autofs 0600 - - - 10:235\n"
                           "c! /dev/btrfs-control 0600 - - - 10:234\n"
                           "c! /dev/loop-control 0600 - - - 10:237\n"
                           "d /dev/mapper 0755 - - -\n"
                           "c! /dev/mapper/control 0600 - - - 10:236\n"
                           "c! /dev/ppp 0600 - - - 108:0\n"
                           "d /dev/snd 0755 - - -\n"
                           "c! /dev/snd/timer 0600 - - - 116:33\n");
}

TEST(block_nodes_and_blanks) {
        _cleanup_free_ char *text = convert("\n  \t\nbrd ram0 b1:0\r\nfoo a/b/c c1:2");
        ASSERT_STREQ(text, "b! /dev/ram0 0600 - - - 1:0\nd /dev/a/b 0755 - - -\nc! /dev/a/b/c 0600 - - - 1:2\n");
}

TEST(nothing) {
        _cleanup_free_ char *a = convert(""), *b = convert("# Device nodes to trigger on-demand module loading.\n");

        ASSERT_STREQ(a, "");
        ASSERT_STREQ(b, "");
}

TEST(bad_lines_left_out) {
        static const char *const bad[] = {
                "loop loop-control\n",                  /* no device number */
                "loop loop-control c10:237 extra\n",    /* a fourth word */
                "loop loop-control x10:237\n",          /* neither c nor b */
                "loop loop-control c10\n",              /* no minor */
                "loop loop-control c10:237x\n",         /* trailing garbage */
                "loop loop-control c-1:237\n",          /* a sign */
                "loop loop-control c10:+237\n",
                "loop loop-control c:\n",
                "evil /etc/shadow c1:1\n",              /* an absolute path */
                "evil ../etc/shadow c1:1\n",            /* out of /dev */
                "evil a/../../etc c1:1\n",
                "evil ./x c1:1\n",
                "evil a//b c1:1\n",
                "evil a/ c1:1\n",
                "evil a\"b c1:1\n",                     /* not one tmpfiles.d word */
                "evil a\\x20b c1:1\n",
                "evil \x01 c1:1\n",
                "evil a%b c1:1\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *line = strjoin(bad[i], "fuse fuse c10:229\n"), *text = convert(line);

                /* The bad line is gone, the good one after it stays. */
                ASSERT_STREQ(text, "c! /dev/fuse 0600 - - - 10:229\n");
        }

        /* A name of 128 characters is taken, one of 129 is not. */
        char name[130];
        memset(name, 'n', sizeof(name) - 1);
        name[128] = 0;
        _cleanup_free_ char *ok_line = strjoin("m ", name, " c1:2\n"), *ok = convert(ok_line);
        ASSERT_TRUE(startswith(ok, "c! /dev/nnnn"));
        name[128] = 'n';
        name[129] = 0;
        _cleanup_free_ char *long_line = strjoin("m ", name, " c1:2\n"), *none = convert(long_line);
        ASSERT_STREQ(none, "");
}

TEST_MAIN()
