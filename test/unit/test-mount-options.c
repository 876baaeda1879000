/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "mount-options.h"
#include "strv.h"
#include "tests.h"

static void do_filter(const char *opts, const char *names, int expected_r, const char *expected_value,
                      const char *expected_filtered) {
        _cleanup_free_ char *value = NULL, *filtered = NULL;

        ASSERT_EQ(mount_options_filter(opts, names, &value, NULL, &filtered), expected_r);
        ASSERT_STREQ(value, expected_value);
        ASSERT_STREQ(filtered, expected_filtered);
}

TEST(mount_options_filter) {
        const char *dt = "comment=systemd.device-timeout\0x-systemd.device-timeout\0";

        do_filter("x-systemd.device-timeout=0,noatime,ro", dt, 1, "0", "noatime,ro");
        do_filter("a,x-systemd.device-timeout=1,b,comment=systemd.device-timeout=2", dt, 1, "2", "a,b");
        do_filter("noatime", dt, 0, NULL, "noatime");
        do_filter(NULL, dt, 0, NULL, "");
        do_filter("a,,b", dt, 0, NULL, "a,,b");          /* empty options are kept */
        do_filter("a\\,b,x-systemd.device-timeout", dt, 1, NULL, "a\\,b"); /* bare name: no value */
        do_filter("x-systemd.device-timeoutx=1", dt, 0, NULL, "x-systemd.device-timeoutx=1");
}

TEST(mount_options_filter_values) {
        _cleanup_strv_free_ char **v = NULL;
        _cleanup_free_ char *j = NULL;

        ASSERT_EQ(mount_options_filter("x-systemd.requires=a,x,x-systemd.requires,x-systemd.requires=b\\,c",
                                       "x-systemd.requires\0", NULL, &v, NULL), 1);
        j = strv_join(v, "|");
        ASSERT_STREQ(j, "a|b,c");
}

TEST(mount_options_test) {
        ASSERT_TRUE(mount_options_test("subvol=@,ro", "ro\0rw\0"));
        ASSERT_TRUE(mount_options_test("rw", "ro\0rw\0"));
        ASSERT_TRUE(!mount_options_test("noatime,rootro", "ro\0rw\0"));
        ASSERT_TRUE(!mount_options_test(NULL, "ro\0"));
        ASSERT_TRUE(mount_options_test_yes_no("auto,noauto", "noauto\0auto\0"));
        ASSERT_TRUE(!mount_options_test_yes_no("noauto,auto", "noauto\0auto\0"));
        ASSERT_TRUE(!mount_options_test_yes_no("defaults", "nofail\0fail\0"));
}

TEST_MAIN()
