/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Key files are entries marked secret: that flag, not the wording of the reason, is what makes the
 * image 0600 (plan_key_files(), used by foyer build and foyer uki) and the key file 0400. */

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "plan.h"
#include "tests.h"
#include "util.h"

TEST(reason_does_not_make_a_secret) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        _cleanup_strv_free_ char **keys = NULL;

        ASSERT_OK(manifest_new(NULL, &m));
        /* Worded like a key file, but nothing marked it. */
        ASSERT_OK(manifest_add_data(m, "/etc/key file.conf", 0644, "x", 1, "key file.conf (configuration)"));
        ASSERT_OK(plan_key_files(m, &keys));
        ASSERT_TRUE(!keys);
        ASSERT_EQ(manifest_find(m, "/etc/key file.conf")->mode, 0644u);
}

TEST(flag_makes_a_secret) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        _cleanup_strv_free_ char **keys = NULL;
        Entry *e;

        ASSERT_OK(manifest_new(NULL, &m));
        ASSERT_OK(manifest_add_data(m, "/etc/other", 0644, "y", 1, "--add-file"));
        ASSERT_OK(manifest_add_data(m, "/etc/luks/root.bin", 0644, "x", 1, "--add-file"));
        e = manifest_find(m, "/etc/luks/root.bin");
        manifest_mark_secret(e);
        ASSERT_TRUE(e->secret);
        ASSERT_EQ(e->mode, 0400u);
        ASSERT_STREQ(e->reason, "--add-file");
        ASSERT_OK(plan_key_files(m, &keys));
        ASSERT_TRUE(keys && keys[0] && !keys[1]);
        ASSERT_STREQ(keys[0], "/etc/luks/root.bin");
}

TEST(plan_crypt_keys_marks) {
        _cleanup_(manifest_freep) Manifest *m = NULL;
        _cleanup_strv_free_ char **keys = NULL;
        char src[] = "/tmp/test-plan-secret-XXXXXX";
        BuildConfig c;
        int fd;

        fd = mkstemp(src);
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(write(fd, "secret", 6) == 6);
        close(fd);

        build_config_init(&c);
        {
                _cleanup_free_ char *spec = strjoin(src, ":/etc/luks.key");
                ASSERT_TRUE(spec);
                ASSERT_OK(strv_extend(&c.add_key_files, spec));
        }
        /* Named on the command line, and already worded "key file" by whoever added it: it is
         * still marked (before the flag, the wording made it skip the 0400). */
        c.cmdline = strdup("rd.luks.key=/etc/lookalike");
        ASSERT_TRUE(c.cmdline);

        ASSERT_OK(manifest_new(NULL, &m));
        ASSERT_OK(manifest_add_data(m, "/etc/lookalike", 0644, "k", 1, "key file lookalike"));
        ASSERT_OK(manifest_add_data(m, "/etc/cryptsetup-keys.d/home.key", 0644, "k", 1, "--add-file"));
        ASSERT_OK(manifest_add_data(m, "/etc/plain", 0644, "p", 1, "--add-file"));
        ASSERT_OK(plan_crypt_keys(m, &c));

        ASSERT_OK(plan_key_files(m, &keys));
        ASSERT_TRUE(keys);
        ASSERT_EQ(strv_length(keys), 3u);
        ASSERT_STREQ(keys[0], "/etc/cryptsetup-keys.d/home.key");
        ASSERT_STREQ(keys[1], "/etc/lookalike");
        ASSERT_STREQ(keys[2], "/etc/luks.key");
        ASSERT_EQ(manifest_find(m, "/etc/luks.key")->mode, 0400u);
        ASSERT_EQ(manifest_find(m, "/etc/lookalike")->mode, 0400u);
        ASSERT_EQ(manifest_find(m, "/etc/cryptsetup-keys.d/home.key")->mode, 0400u);
        ASSERT_EQ(manifest_find(m, "/etc/plain")->mode, 0644u);
        ASSERT_TRUE(!manifest_find(m, "/etc/plain")->secret);

        build_config_done(&c);
        unlink(src);
}

TEST_MAIN()
